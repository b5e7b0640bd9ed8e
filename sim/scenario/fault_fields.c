/* fault_fields.c - a scenario's "faults": each fault object's keys read
 * into a fault_spec (its kind from the fault registry, its target among
 * clients, servers or traffic, Toxiproxy's attributes, its toxic's
 * parameters by the keys each toxic declares, its expectations),
 * then handed to its kind's check (sim/faults/fault.h), which knows what
 * it takes and refuses. Also what the rest of locklab asks of a parsed
 * timeline: which faults need the proxy, the data kept, the stream names.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "sim/faults/fault.h"
#include "sim/fleet/server_kind.h"
#include "sim/proxy/toxic_kind.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_parse.h"

#define FS(m) offsetof(struct fault_spec, m)

static int fault_after(struct ctx *c, json_t *obj, void *base);

/* "prefix" followed by a decimal number from lowest to max, nothing else:
 * "client:3" (lowest 0), "clients:4" (lowest 1). */
static bool numbered(const char *t, const char *prefix, char lowest, unsigned long max,
                     unsigned long *out)
{
    size_t len = strlen(prefix);
    if (strncmp(t, prefix, len) != 0 || t[len] < lowest || t[len] > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long n = strtoul(t + len, &end, 10);
    if (*end != '\0' || errno != 0 || n > max)
        return false;
    *out = n;
    return true;
}

static int client_target(struct ctx *c, const char *t, struct fault_spec *fs)
{
    unsigned long k;
    if (strcmp(t, "holder") == 0) {
        fs->target = FAULT_TARGET_HOLDER;
        return 0;
    }
    if (strcmp(t, "waiter") == 0) {
        fs->target = FAULT_TARGET_WAITER; /* client_crash refuses it in its check */
        return 0;
    }
    if (numbered(t, "client:", '0', INT32_MAX, &k)) {
        fs->target = (int32_t)k;
        return 0;
    }
    return scn_fail(c,
                    "unknown target %s for a %s (expected \"holder\", \"waiter\" or "
                    "\"client:N\")",
                    scn_quote(t).s, fault_type_name(fs->kind));
}

/* "clients:N": N clients, chosen by the seed. */
static bool clients_count(const char *t, struct fault_spec *fs)
{
    unsigned long n;
    if (!numbered(t, "clients:", '1', SCENARIO_MAX_CLIENTS, &n))
        return false;
    fs->n_clients = (uint32_t)n;
    return true;
}

/* The targets that pick servers by count or by role, in the order the
 * messages list them; a network fault takes all but holder-majority
 * (Redlock's votes) and pooler (the proxy fronts what clients reach). */
static const struct {
    const char *name;
    enum node_pick pick;
} picks[] = {
    {"one", PICK_ONE},
    {"minority", PICK_MINORITY},
    {"majority", PICK_MAJORITY},
    {"all", PICK_ALL},
    {"servers", PICK_ALL},
    {"primaries", PICK_PRIMARIES},
    {"holder-majority", PICK_HOLDER_MAJORITY},
    {"leader", PICK_LEADER},
    {"master", PICK_LEADER},
    {"follower", PICK_FOLLOWER},
    {"replica", PICK_FOLLOWER},
    {"pooler", PICK_POOLER},
};

static bool network_takes(enum node_pick p)
{
    return p != PICK_HOLDER_MAJORITY && p != PICK_POOLER;
}

/* The roles an ensemble's members play, spelled with its node prefix:
 * "zk-leader", "etcd-follower" (each kind of one service that has it). */
static const char *const own_roles[] = {
    [SERVER_ROLE_LEADER] = "leader", [SERVER_ROLE_FOLLOWER] = "follower"};

static bool own_role(const char *t, struct fault_spec *fs)
{
    for (size_t k = 0; k < server_kind_count(); k++) {
        const struct server_kind *kind = server_kind_at(k);
        size_t n = strlen(kind->node_prefix);
        if (!kind->one_service || strncmp(t, kind->node_prefix, n) != 0 || t[n] != '-')
            continue;
        for (size_t r = 0; r < N_OF(own_roles); r++)
            if ((kind->roles & SERVER_ROLE_BIT(r)) && strcmp(t + n + 1, own_roles[r]) == 0) {
                fs->pick = r == SERVER_ROLE_LEADER ? PICK_LEADER : PICK_FOLLOWER;
                fs->node_kind = (uint8_t)k;
                return true;
            }
    }
    return false;
}

enum server_role scn_pick_role(enum node_pick p)
{
    return p == PICK_LEADER     ? SERVER_ROLE_LEADER
           : p == PICK_FOLLOWER ? SERVER_ROLE_FOLLOWER
                                : SERVER_ROLE_POOLER;
}

/* A role is a target only while some kind offers it: the kinds, not this
 * table, say which roles there are. */
static bool offered(enum node_pick p)
{
    if (!PICK_IS_ROLE(p))
        return true;
    for (size_t k = 0; k < server_kind_count(); k++)
        if (server_kind_at(k)->roles & SERVER_ROLE_BIT(scn_pick_role(p)))
            return true;
    return false;
}

static bool takes(enum node_pick p, bool network)
{
    return offered(p) && (!network || network_takes(p));
}

/* A count or a role by its name; false when t is none. */
static bool named_pick(const char *t, bool network, struct fault_spec *fs)
{
    for (size_t i = 0; i < N_OF(picks); i++)
        if (takes(picks[i].pick, network) && strcmp(t, picks[i].name) == 0) {
            fs->pick = picks[i].pick;
            fs->node_kind = FAULT_ANY_KIND;
            return true;
        }
    return own_role(t, fs);
}

/* "one, minority, ..., zk-leader, zk-follower, ...": what named_pick takes. */
const char *fault_target_names(bool network, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_OF(picks) && used < len; i++)
        if (takes(picks[i].pick, network))
            used +=
                (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", picks[i].name);
    for (size_t k = 0; k < server_kind_count() && used < len; k++) {
        const struct server_kind *kind = server_kind_at(k);
        for (size_t r = 0; r < N_OF(own_roles) && used < len && kind->one_service; r++)
            if (kind->roles & SERVER_ROLE_BIT(r))
                used += (size_t)snprintf(buf + used, len - used, ", %s-%s", kind->node_prefix,
                                         own_roles[r]);
    }
    return buf;
}

/* "redis-2", "zk-1": a server by its kind's node prefix and 1-based
 * number; the kinds a lock runs on (those the fleet starts alone). */
static bool node_name(const char *t, struct fault_spec *fs)
{
    for (size_t k = 0; k < server_kind_count(); k++) {
        const struct server_kind *kind = server_kind_at(k);
        size_t n = strlen(kind->node_prefix);
        if (kind->start == NULL || strncmp(t, kind->node_prefix, n) != 0 || t[n] != '-' ||
            t[n + 1] < '1' || t[n + 1] > '9')
            continue;
        n++;
        char *end;
        unsigned long x = strtoul(t + n, &end, 10);
        if (*end != '\0' || x > LOCK_ENDPOINT_MAX)
            return false;
        fs->pick = PICK_NODE;
        fs->node_kind = (uint8_t)k;
        fs->node = (uint32_t)x;
        return true;
    }
    return false;
}

static int server_target(struct ctx *c, const char *t, struct fault_spec *fs)
{
    char names[400];
    if (named_pick(t, false, fs) || node_name(t, fs))
        return 0;
    return scn_fail(c,
                    "unknown target %s for a %s (expected a server such as \"redis-2\" or "
                    "\"zk-1\", or one of: %s)",
                    scn_quote(t).s, fault_type_name(fs->kind),
                    fault_target_names(false, names, sizeof(names)));
}

/* A network fault touches some clients' connections, or every client's
 * connections to some servers. */
static int network_target(struct ctx *c, const char *t, struct fault_spec *fs)
{
    if (strcmp(t, "holder") == 0 || strncmp(t, "client:", 7) == 0) {
        if (client_target(c, t, fs) < 0)
            return -1;
        fs->scope = fs->target == FAULT_TARGET_HOLDER ? NET_HOLDER : NET_CLIENT;
        fs->pick = PICK_ALL;
        return 0;
    }
    if (clients_count(t, fs)) {
        fs->scope = NET_CLIENTS;
        fs->pick = PICK_ALL;
        return 0;
    }
    if (strcmp(t, "replication") == 0) {
        fs->scope = NET_REPLICATION;
        fs->pick = PICK_ALL;
        return 0;
    }
    char names[400];
    if (named_pick(t, true, fs) || node_name(t, fs))
        return 0;
    return scn_fail(c,
                    "unknown target %s for a %s (expected a server such as \"redis-2\", one of: "
                    "%s; or clients: \"holder\", \"client:K\", \"clients:N\"; or "
                    "\"replication\")",
                    scn_quote(t).s, fault_type_name(fs->kind),
                    fault_target_names(true, names, sizeof(names)));
}

static int parse_target(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct fault_spec *fs = base;

    (void)f;
    if (!json_is_string(v))
        return scn_type_error(c, v, "a string");
    const char *t = json_string_value(v);
    /* the type is read first (table order): it says which targets mean something */
    int rc = fault_on_network(fs->kind)   ? network_target(c, t, fs)
             : fault_on_servers(fs->kind) ? server_target(c, t, fs)
                                          : client_target(c, t, fs);
    if (rc == 0)
        snprintf(fs->target_text, sizeof(fs->target_text), "%.*s", (int)sizeof(fs->target_text) - 1,
                 t);
    return rc;
}

/* "upstream" = 1, "downstream" = 2, "both" = 3: the STREAM_* bits */
static int parse_stream(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    int x;
    if (match_name(c, v, f->names, &x) < 0)
        return -1;
    *(unsigned *)field_at(base, f) = (unsigned)x;
    return 0;
}

static int parse_toxicity(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct fault_spec *fs = base;

    (void)f;
    if (!json_is_number(v))
        return scn_type_error(c, v, "a number");
    double x = json_number_value(v);
    if (!(x >= 0 && x <= 1))
        return scn_fail(c, "%.10g is out of range (0..1: the share of connections it touches)", x);
    fs->toxicity = x;
    fs->toxicity_set = true;
    return 0;
}

static const struct names data_names = {"data", fault_data_words, N_OF(fault_data_words),
                                        DATA_LOST};

static const struct names method_names = {"method", clock_method_words, N_OF(clock_method_words),
                                          CLOCK_AUTO};

static const struct names mode_names = {"mode", failover_mode_words, N_OF(failover_mode_words),
                                        FAILOVER_MANUAL};

static const struct names stream_names = {"stream", fault_stream_words, N_OF(fault_stream_words),
                                          STREAM_UPSTREAM};

/* The kinds' names, read from the fault registry. */
static int parse_kind(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    const char *list[256];
    size_t n = fault_kind_count();
    for (size_t i = 0; i < n && i < N_OF(list); i++)
        list[i] = fault_type_name((unsigned)i);
    const struct names kinds = {"fault type", list, n < N_OF(list) ? n : N_OF(list), 0};
    int x;
    (void)f;
    if (match_name(c, v, &kinds, &x) < 0)
        return -1;
    ((struct fault_spec *)base)->kind = (uint8_t)x;
    return 0;
}

static const struct field fault_expect_fields[] = {
    {.key = "acquired", .parse = parse_expect, .offset = FS(expect.acquired)},
    {.key = "failed", .parse = parse_expect, .offset = FS(expect.failed)},
    {.key = "recovery_ms", .parse = parse_expect, .offset = FS(expect.recovery_ms)},
};

static const struct table fault_expect_table = {fault_expect_fields, N_OF(fault_expect_fields),
                                                NULL};

static const struct field fault_fields[] = {
    {.key = "at_ms", .parse = parse_u64, .offset = FS(at_ms), .max = NO_MAX, .required = true},
    {.key = "type", .parse = parse_kind, .required = true},
    {.key = "duration_ms", .parse = parse_u64, .offset = FS(duration_ms), .max = MS_MAX},
    {.key = "target", .parse = parse_target},
    {.key = "restart_after_ms",
     .parse = parse_u64,
     .offset = FS(restart_after_ms),
     .min = 1,
     .max = MS_MAX},
    {.key = "data", .parse = parse_enum, .offset = FS(data), .names = &data_names},
    {.key = "key", .parse = parse_text, .offset = FS(key), .max = 63},
    {.key = "count", .parse = parse_u32, .offset = FS(count), .min = 1, .max = LOCK_ENDPOINT_MAX},
    {.key = "jump_ms", .parse = parse_u64, .offset = FS(jump_ms), .min = 1, .max = MS_MAX},
    {.key = "method", .parse = parse_enum, .offset = FS(method), .names = &method_names},
    {.key = "mode", .parse = parse_enum, .offset = FS(mode), .names = &mode_names},
    {.key = "side_clients",
     .parse = parse_u32,
     .offset = FS(side_clients),
     .min = 1,
     .max = SCENARIO_MAX_CLIENTS},
    /* network faults: Toxiproxy's attributes, under its names */
    {.key = "stream", .parse = parse_stream, .offset = FS(stream), .names = &stream_names},
    {.key = "toxicity", .parse = parse_toxicity},
    /* then each toxic's parameters (fault_table_of), then: */
};

static const struct field expect_field = {
    .key = "expect", .parse = parse_object, .sub = &fault_expect_table};

/* A toxic's parameter, read as the fault's own toxic reads it, or when it
 * has no such key as the first toxic that has one does: a key the kind
 * does not take is still blamed for its type and bounds first, as every
 * key is, then refused by the kind's check. */
static int parse_toxic_param(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    const struct setting_key *own = toxic_param(fault_kind_of(base)->toxic, f->key);
    struct field g = setting_field(own ? own : f->setting, FS(toxic));
    g.required = false; /* the kind's check asks for it, saying what it is */
    return g.parse(c, v, &g, base);
}

#define FAULT_FIELDS_MAX (N_OF(fault_fields) + TOXIC_PARAMS_MAX + 1)

/* The keys of a fault object, in the order they are read: the common
 * ones, every toxic's (sim/proxy's registry), its expectations. */
static struct table fault_table_of(struct field *out)
{
    const struct setting_key *params[TOXIC_PARAMS_MAX];
    size_t n = 0, np = toxic_params_all(params, TOXIC_PARAMS_MAX);
    for (size_t i = 0; i < N_OF(fault_fields); i++)
        out[n++] = fault_fields[i];
    for (size_t i = 0; i < np; i++)
        out[n++] =
            (struct field){.key = params[i]->key, .parse = parse_toxic_param, .setting = params[i]};
    out[n++] = expect_field;
    return (struct table){out, n, fault_after};
}

int parse_faults(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct scenario *s = base;
    struct field fields[FAULT_FIELDS_MAX];
    const struct table fault_table = fault_table_of(fields);
    int rc = 0;

    (void)f;
    if (!json_is_array(v))
        return scn_type_error(c, v, "an array");
    size_t n = json_array_size(v);
    for (size_t i = 0; i < n && rc == 0; i++) {
        json_t *el = json_array_get(v, i);
        scn_push_index(c, i);
        if (i >= SCENARIO_MAX_FAULTS)
            rc = scn_fail(c, "too many faults (at most %d)", SCENARIO_MAX_FAULTS);
        else if (!json_is_object(el))
            rc = scn_type_error(c, el, "an object");
        else {
            s->faults[i] = (struct fault_spec){
                .target = FAULT_TARGET_HOLDER, .stream = STREAM_DOWNSTREAM, .toxicity = 1.0};
            rc = walk_object(c, el, &fault_table, &s->faults[i]);
        }
        scn_pop(c);
    }
    if (rc == 0)
        s->n_faults = n;
    return rc;
}

/* The parser's side of a kind's check: its located error, on key (NULL:
 * the fault object itself). */
__attribute__((format(printf, 3, 0))) static void blame(void *ctx, const char *key, const char *fmt,
                                                        va_list ap)
{
    struct ctx *c = ctx;
    if (key)
        scn_push_key(c, key);
    scn_vfail(c, fmt, ap);
    if (key)
        scn_pop(c);
}

/* What the kind takes and refuses, checked by the kind itself. */
static int fault_after(struct ctx *c, json_t *obj, void *base)
{
    struct fault_check fc = {.obj = obj, .fs = base, .ctx = c, .blame = blame};
    return fault_kind_of(fc.fs)->check(&fc);
}

uint64_t scenario_longest_fault_ms(const struct scenario *s)
{
    uint64_t longest = 0;
    for (size_t i = 0; i < s->n_faults; i++)
        if (s->faults[i].duration_ms > longest)
            longest = s->faults[i].duration_ms;
    return longest;
}

bool scenario_keeps_data(const struct scenario *s)
{
    for (size_t i = 0; i < s->n_faults; i++)
        if (fault_on_servers(s->faults[i].kind) && s->faults[i].data == DATA_KEPT)
            return true;
    return false;
}

bool scenario_has_server_faults(const struct scenario *s)
{
    for (size_t i = 0; i < s->n_faults; i++)
        if (fault_on_servers(s->faults[i].kind))
            return true;
    return false;
}

bool scenario_needs_proxy(const struct scenario *s)
{
    for (size_t i = 0; i < s->n_faults; i++)
        if ((fault_on_network(s->faults[i].kind) && s->faults[i].scope != NET_REPLICATION) ||
            fault_holds_connections(s->faults[i].kind) || fault_splits_clients(s->faults[i].kind))
            return true; /* the replication link has the fleet's own proxy */
    return false;
}

bool scenario_proxy_per_client(const struct scenario *s)
{
    for (size_t i = 0; i < s->n_faults; i++) {
        const struct fault_spec *f = &s->faults[i];
        if (fault_holds_connections(f->kind) ||
            (fault_splits_clients(f->kind) && f->side_clients > 0) ||
            (fault_on_network(f->kind) && f->scope != NET_NODES && f->scope != NET_REPLICATION))
            return true;
    }
    return false;
}

uint32_t scenario_proxied_endpoints(const struct scenario *s, size_t n)
{
    uint32_t set = 0;
    for (size_t i = 0; i < s->n_faults; i++) {
        const struct fault_spec *f = &s->faults[i];
        if (fault_on_network(f->kind) && f->scope == NET_REPLICATION)
            continue; /* the fleet's own proxy */
        if (fault_holds_connections(f->kind) || fault_splits_clients(f->kind) ||
            (fault_on_network(f->kind) && f->pick != PICK_NODE))
            return servers_mask(n); /* a paused client's every connection; a node the seed picks */
        if (fault_on_network(f->kind) && f->node >= 1 && f->node <= n)
            set |= 1u << (f->node - 1);
    }
    return set;
}
