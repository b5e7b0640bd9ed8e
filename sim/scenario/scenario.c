/* scenario.c - load and validate a scenario file (see scenario.h and
 * docs/scenario.md).
 *
 * Each JSON object of the format is a table of fields; one walker checks an
 * object against its table: first every key it holds must be known, then the
 * fields are visited in table order, so the first error reported does not
 * depend on how the file orders its keys. Errors carry the JSON path of what
 * is being checked; json_locate finds it in the raw text, because jansson
 * only knows positions while it parses.
 */
#include "sim/scenario/scenario.h"
#include "sim/faults/fault.h"

#include "algorithms/lock.h"
#include "sim/scenario/json_locate.h"
#include "sim/scenario/scenario_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- field parsers ----------------------------------------------------- */

static void *field_at(void *base, const struct field *f)
{
    return (char *)base + f->offset;
}

static int get_int(struct ctx *c, json_t *v, const struct field *f, long long *out)
{
    if (!json_is_integer(v))
        return scn_type_error(c, v, "an integer");
    long long x = json_integer_value(v);
    if (x < f->min && f->max == NO_MAX)
        return scn_fail(c, "expected an integer >= %lld", f->min);
    if (x < f->min || x > f->max)
        return scn_fail(c, "%lld is out of range (%lld..%lld)", x, f->min, f->max);
    *out = x;
    return 0;
}

static int parse_u32(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    long long x = 0;
    if (get_int(c, v, f, &x) < 0)
        return -1;
    *(uint32_t *)field_at(base, f) = (uint32_t)x;
    return 0;
}

static int parse_u64(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    long long x = 0;
    if (get_int(c, v, f, &x) < 0)
        return -1;
    *(uint64_t *)field_at(base, f) = (uint64_t)x;
    return 0;
}

static int parse_i64(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    long long x = 0;
    if (get_int(c, v, f, &x) < 0)
        return -1;
    *(int64_t *)field_at(base, f) = x;
    return 0;
}

static int parse_bool(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    if (!json_is_boolean(v))
        return scn_type_error(c, v, "a boolean");
    *(bool *)field_at(base, f) = json_is_true(v);
    return 0;
}

/* Every enum of scenario.h has the size of an int, so one parser can store
 * them all. */
_Static_assert(sizeof(enum workload_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(enum skew_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(enum fault_data) == sizeof(int), "enum size");
_Static_assert(sizeof(enum expect_invariants) == sizeof(int), "enum size");

static int match_name(struct ctx *c, json_t *v, const struct names *nm, int *out)
{
    if (!json_is_string(v))
        return scn_type_error(c, v, "a string");
    for (size_t i = 0; i < nm->n; i++) {
        if (strcmp(json_string_value(v), nm->list[i]) == 0) {
            *out = nm->first + (int)i;
            return 0;
        }
    }
    return scn_unknown_name(c, nm, json_string_value(v));
}

static int parse_enum(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    int x;
    if (match_name(c, v, f->names, &x) < 0)
        return -1;
    memcpy(field_at(base, f), &x, sizeof(x));
    return 0;
}

static const char name_chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-";

static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n < sizeof(((struct scenario *)0)->name) && strspn(s, name_chars) == n;
}

static int parse_name(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    if (!json_is_string(v))
        return scn_type_error(c, v, "a string");
    if (!valid_name(json_string_value(v)))
        return scn_fail(c, "%s is not a valid name (1 to 63 of A-Z a-z 0-9 _ . -)",
                        scn_quote(json_string_value(v)).s);
    strcpy(field_at(base, f), json_string_value(v));
    return 0;
}

static int parse_text(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    if (!json_is_string(v))
        return scn_type_error(c, v, "a string");
    size_t n = json_string_length(v);
    if (n > (size_t)f->max)
        return scn_fail(c, "too long (%zu bytes, at most %lld)", n, f->max);
    memcpy(field_at(base, f), json_string_value(v), n + 1);
    return 0;
}

static int parse_algorithm(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct scenario *s = base;

    (void)f;
    if (!json_is_string(v))
        return scn_type_error(c, v, "a string");
    /* Known or not is for scenario_finish (--algorithm may override it);
     * a name too long to keep cannot be known. */
    if (json_string_length(v) >= sizeof(s->algorithm))
        return scn_unknown_algorithm(c, json_string_value(v), NULL);
    strcpy(s->algorithm, json_string_value(v));
    return 0;
}

/* A number in (0, max]; integers are numbers too. */
static int get_positive(struct ctx *c, json_t *v, double max, double *out)
{
    if (!json_is_number(v))
        return scn_type_error(c, v, "a number");
    double x = json_number_value(v);
    if (!(x > 0 && x <= max))
        return scn_fail(c, "%g is out of range (> 0 and <= %g)", x, max);
    *out = x;
    return 0;
}

int scenario_duration_ms(double seconds, uint64_t *ms, char *why, size_t len)
{
    if (!(seconds > 0 && seconds <= MS_MAX / 1000)) {
        snprintf(why, len, "%.10g is out of range (> 0 and <= %d)", seconds, MS_MAX / 1000);
        return -1;
    }
    long long whole = llround(seconds * 1000);
    if (whole < 1) {
        snprintf(why, len, "%.10g is shorter than 1 ms", seconds);
        return -1;
    }
    *ms = (uint64_t)whole;
    return 0;
}

static int parse_duration(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct scenario *s = base;
    char why[96];

    (void)f;
    if (!json_is_number(v))
        return scn_type_error(c, v, "a number");
    if (scenario_duration_ms(json_number_value(v), &s->duration_ms, why, sizeof(why)) < 0)
        return scn_fail(c, "%s", why);
    return 0;
}

/* A number in (0, f->max]: a fraction, a rate. */
static int parse_positive(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    double x = 0;
    if (get_positive(c, v, (double)f->max, &x) < 0)
        return -1;
    *(double *)field_at(base, f) = x;
    return 0;
}

static int parse_hot_items(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    const struct scenario *s = base;
    struct field bounded = *f;

    /* items is read first (table order), so the bound is the file's */
    bounded.max = s->flash_sale.items;
    return parse_u32(c, v, &bounded, base);
}

static int walk_object(struct ctx *c, json_t *obj, const struct table *t, void *base);

/* Sentinels vote on a failover: one, or three for a majority of two. */
static int parse_sentinels(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    if (parse_u32(c, v, f, base) < 0)
        return -1;
    if (*(uint32_t *)field_at(base, f) != 2)
        return 0;
    return scn_fail(c, "2 sentinels cannot outvote one that is wrong: 0, 1 or 3");
}

static int parse_ensemble(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    if (parse_u32(c, v, f, base) < 0)
        return -1;
    if (*(uint32_t *)field_at(base, f) == 2)
        return scn_fail(c, "2 is not an ensemble locklab runs (1: standalone, or 3)");
    return 0;
}

static int parse_servers(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct server_list *l = field_at(base, f);
    char why[160];
    if (!json_is_array(v))
        return scn_type_error(c, v, "an array of \"host:port\" strings");
    if (json_array_size(v) > LOCK_ENDPOINT_MAX)
        return scn_fail(c, "too many servers (at most %d)", LOCK_ENDPOINT_MAX);
    l->n = 0;
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *el = json_array_get(v, i);
        scn_push_index(c, i);
        int rc = json_is_string(el)
                     ? endpoint_parse(json_string_value(el), &l->ep[i], why, sizeof(why))
                     : scn_type_error(c, el, "a \"host:port\" string");
        if (rc < 0 && json_is_string(el))
            scn_fail(c, "%s", why);
        scn_pop(c);
        if (rc < 0)
            return -1;
        l->n++;
    }
    return 0;
}

static int parse_object(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    if (!json_is_object(v))
        return scn_type_error(c, v, "an object");
    return walk_object(c, v, f->sub, base);
}

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
    if (numbered(t, "client:", '0', INT32_MAX, &k)) {
        fs->target = (int32_t)k;
        return 0;
    }
    return scn_fail(c, "unknown target %s for a %s (expected \"holder\" or \"client:N\")",
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

/* in the order of enum node_pick from PICK_ONE */
static const char *const pick_list[] = {"one",       "minority",        "majority",  "all",
                                        "primaries", "holder-majority", "zk-leader", "zk-follower"};

/* "redis-2", "zk-1": a server by kind and 1-based number. */
static bool node_name(const char *t, struct fault_spec *fs)
{
    static const struct {
        const char *prefix;
        enum lock_server kind;
    } kinds[] = {{"redis-", LOCK_SERVER_REDIS}, {"zk-", LOCK_SERVER_ZOOKEEPER}};
    for (size_t k = 0; k < N_OF(kinds); k++) {
        size_t n = strlen(kinds[k].prefix);
        if (strncmp(t, kinds[k].prefix, n) != 0 || t[n] < '1' || t[n] > '9')
            continue;
        char *end;
        unsigned long x = strtoul(t + n, &end, 10);
        if (*end != '\0' || x > LOCK_ENDPOINT_MAX)
            return false;
        fs->pick = PICK_NODE;
        fs->node_kind = kinds[k].kind;
        fs->node = (uint32_t)x;
        return true;
    }
    return false;
}

static int server_target(struct ctx *c, const char *t, struct fault_spec *fs)
{
    for (size_t i = 0; i < N_OF(pick_list); i++)
        if (strcmp(t, pick_list[i]) == 0) {
            fs->pick = (enum node_pick)(PICK_ONE + (int)i);
            return 0;
        }
    if (node_name(t, fs))
        return 0;
    return scn_fail(
        c,
        "unknown target %s for a %s (expected a server such as \"redis-2\" or "
        "\"zk-1\", or one of: one, minority, majority, all, primaries, holder-majority, zk-leader, "
        "zk-follower)",
        scn_quote(t).s, fault_type_name(fs->kind));
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
    for (size_t i = 0; i < N_OF(pick_list); i++) /* holder-majority is Redlock's votes */
        if (PICK_ONE + (int)i != PICK_HOLDER_MAJORITY && strcmp(t, pick_list[i]) == 0) {
            fs->pick = (enum node_pick)(PICK_ONE + (int)i);
            return 0;
        }
    if (node_name(t, fs))
        return 0;
    return scn_fail(c,
                    "unknown target %s for a %s (expected a server such as \"redis-2\", one of: "
                    "one, minority, majority, all, primaries, zk-leader, zk-follower; or clients: "
                    "\"holder\", "
                    "\"client:K\", \"clients:N\"; or \"replication\")",
                    scn_quote(t).s, fault_type_name(fs->kind));
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

static int parse_expect(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct expect_num *e = field_at(base, f);

    if (json_is_integer(v)) {
        if (json_integer_value(v) < 0)
            return scn_fail(c, "expected an integer >= 0");
        e->op = EXPECT_EQ;
        e->value = (uint64_t)json_integer_value(v);
        return 0;
    }
    if (!json_is_string(v))
        return scn_type_error(c, v, "an integer or a string");
    if (expect_parse(json_string_value(v), e) < 0)
        return scn_fail(c, "cannot read %s as a count (write 0, \">0\", \">= 3\", \"<5\")",
                        scn_quote(json_string_value(v)).s);
    return 0;
}

/* ---- the format ------------------------------------------------------ */

static const char *const workload_list[] = {"flash_sale", "cache_rebuild", "scheduled_tasks"};
static const char *const skew_list[] = {"uniform", "hot", "per_client"};
static const char *const method_list[] = {"auto", "faketime", "ttl"};
static const char *const stream_list[] = {"upstream", "downstream", "both"};
static const char *const data_list[] = {"lost", "kept"};
static const char *const invariants_list[] = {"hold", "broken"};

static const struct names workload_names = {"workload", workload_list, N_OF(workload_list), 0};
static const struct names skew_names = {"skew", skew_list, N_OF(skew_list), SKEW_UNIFORM};
static const struct names data_names = {"data", data_list, N_OF(data_list), DATA_LOST};
static const struct names method_names = {"method", method_list, N_OF(method_list), CLOCK_AUTO};
static const struct names stream_names = {"stream", stream_list, N_OF(stream_list),
                                          STREAM_UPSTREAM};
static const struct names invariants_names = {"value", invariants_list, N_OF(invariants_list),
                                              EXPECT_INV_HOLD};

#define SC(m) offsetof(struct scenario, m)
#define FS(m) offsetof(struct fault_spec, m)

static int lock_after(struct ctx *c, json_t *obj, void *base);
static int redis_after(struct ctx *c, json_t *obj, void *base);
static int fault_after(struct ctx *c, json_t *obj, void *base);

static const struct field redlock_fields[] = {
    {.key = "nodes", .parse = parse_u32, .offset = SC(redlock.nodes), .min = 1, .max = 8},
    {.key = "node_timeout_ms",
     .parse = parse_u32,
     .offset = SC(redlock.node_timeout_ms),
     .min = 1,
     .max = 60000},
    {.key = "quorum", .parse = parse_u32, .offset = SC(redlock.quorum), .max = 8},
};
static const struct table redlock_table = {redlock_fields, N_OF(redlock_fields), NULL};

/* ZooKeeper with tickTime 500 grants sessions of 2 to 20 ticks only. */
static const struct field zookeeper_fields[] = {
    {.key = "ensemble",
     .parse = parse_ensemble,
     .offset = SC(zookeeper.ensemble),
     .min = 1,
     .max = 3},
    {.key = "session_timeout_ms",
     .parse = parse_u32,
     .offset = SC(zookeeper.session_timeout_ms),
     .min = 1000,
     .max = 10000},
};
static const struct table zookeeper_table = {zookeeper_fields, N_OF(zookeeper_fields), NULL};

static const struct field redis_fields[] = {
    {.key = "replicas", .parse = parse_u32, .offset = SC(redis.replicas), .max = 2},
    {.key = "sentinels", .parse = parse_sentinels, .offset = SC(redis.sentinels), .max = 3},
    {.key = "wait_replicas", .parse = parse_u32, .offset = SC(redis.wait_replicas), .max = 2},
    {.key = "wait_timeout_ms",
     .parse = parse_u32,
     .offset = SC(redis.wait_timeout_ms),
     .min = 1,
     .max = 60000},
};
static const struct table redis_table = {redis_fields, N_OF(redis_fields), redis_after};

static const struct field lock_fields[] = {
    {.key = "algorithm", .parse = parse_algorithm},
    {.key = "ttl_ms", .parse = parse_u32, .offset = SC(ttl_ms), .min = 1, .max = MS_MAX},
    {.key = "wait_ms", .parse = parse_u32, .offset = SC(wait_ms), .max = MS_MAX},
    {.key = "watchdog", .parse = parse_bool, .offset = SC(watchdog)},
    {.key = "renew_ms", .parse = parse_u32, .offset = SC(renew_ms), .max = MS_MAX},
    {.key = "retry_min_ms", .parse = parse_u32, .offset = SC(retry_min_ms), .min = 1, .max = 60000},
    {.key = "retry_max_ms", .parse = parse_u32, .offset = SC(retry_max_ms), .min = 1, .max = 60000},
    {.key = "redlock", .parse = parse_object, .sub = &redlock_table},
    {.key = "zookeeper", .parse = parse_object, .sub = &zookeeper_table},
    {.key = "redis", .parse = parse_object, .sub = &redis_table},
};
static const struct table lock_table = {lock_fields, N_OF(lock_fields), lock_after};

static const struct field flash_sale_fields[] = {
    {.key = "type",
     .parse = parse_enum,
     .offset = SC(workload),
     .names = &workload_names,
     .required = true},
    {.key = "items", .parse = parse_u32, .offset = SC(flash_sale.items), .min = 1, .max = 1000000},
    {.key = "stock", .parse = parse_i64, .offset = SC(flash_sale.stock), .max = 1000000000000000LL},
    {.key = "critical_ms", .parse = parse_u32, .offset = SC(flash_sale.critical_ms), .max = 600000},
    {.key = "skew", .parse = parse_enum, .offset = SC(flash_sale.skew), .names = &skew_names},
    {.key = "hot_fraction",
     .parse = parse_positive,
     .offset = SC(flash_sale.hot_fraction),
     .max = 1},
    {.key = "hot_items", .parse = parse_hot_items, .offset = SC(flash_sale.hot_items), .min = 1},
};

static const struct field cache_rebuild_fields[] = {
    {.key = "type",
     .parse = parse_enum,
     .offset = SC(workload),
     .names = &workload_names,
     .required = true},
    {.key = "keys", .parse = parse_u32, .offset = SC(cache_rebuild.keys), .min = 1, .max = 100000},
    {.key = "period_ms",
     .parse = parse_u32,
     .offset = SC(cache_rebuild.period_ms),
     .min = 10,
     .max = MS_MAX},
    {.key = "load_ms", .parse = parse_u32, .offset = SC(cache_rebuild.load_ms), .max = 600000},
    {.key = "read_ms", .parse = parse_u32, .offset = SC(cache_rebuild.read_ms), .max = 600000},
};

static const struct field scheduled_tasks_fields[] = {
    {.key = "type",
     .parse = parse_enum,
     .offset = SC(workload),
     .names = &workload_names,
     .required = true},
    {.key = "tasks",
     .parse = parse_u32,
     .offset = SC(scheduled_tasks.tasks),
     .min = 1,
     .max = 1000},
    {.key = "period_ms",
     .parse = parse_u32,
     .offset = SC(scheduled_tasks.period_ms),
     .min = 10,
     .max = MS_MAX},
    {.key = "run_ms", .parse = parse_u32, .offset = SC(scheduled_tasks.run_ms), .max = MS_MAX},
    {.key = "jitter_ms",
     .parse = parse_u32,
     .offset = SC(scheduled_tasks.jitter_ms),
     .max = MS_MAX},
    {.key = "hold_min_ms",
     .parse = parse_u32,
     .offset = SC(scheduled_tasks.hold_min_ms),
     .max = MS_MAX},
};

/* A new workload kind adds its name to workload_list and its table here;
 * every table starts with "type". */
static const struct table workload_tables[] = {
    [WORKLOAD_FLASH_SALE] = {flash_sale_fields, N_OF(flash_sale_fields), NULL},
    [WORKLOAD_CACHE_REBUILD] = {cache_rebuild_fields, N_OF(cache_rebuild_fields), NULL},
    [WORKLOAD_SCHEDULED_TASKS] = {scheduled_tasks_fields, N_OF(scheduled_tasks_fields), NULL},
};
_Static_assert(N_OF(workload_tables) == N_OF(workload_list), "a table for every workload");

static int parse_workload(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct scenario *s = base;
    int kind;

    (void)f;
    if (!json_is_object(v))
        return scn_type_error(c, v, "an object");
    json_t *type = json_object_get(v, "type");
    /* the type decides which keys are known, so it is checked first */
    if (!type)
        return scn_fail(c, "missing required key \"type\"");
    scn_push_key(c, "type");
    int rc = match_name(c, type, &workload_names, &kind);
    scn_pop(c);
    if (rc < 0)
        return -1;
    s->workload = (enum workload_kind)kind;
    return walk_object(c, v, &workload_tables[kind], base);
}

/* The kinds' names, read from the fault registry. */
static int parse_kind(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    const char *list[256];
    size_t n = fault_kind_total();
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
    /* network faults: Toxiproxy's attributes, under its names */
    {.key = "stream", .parse = parse_stream, .offset = FS(stream), .names = &stream_names},
    {.key = "toxicity", .parse = parse_toxicity},
    {.key = "latency", .parse = parse_u32, .offset = FS(latency_ms), .max = MS_MAX},
    {.key = "jitter", .parse = parse_u32, .offset = FS(jitter_ms), .max = MS_MAX},
    {.key = "rate", .parse = parse_u32, .offset = FS(rate_kbs), .min = 1, .max = 10000000},
    {.key = "timeout", .parse = parse_u32, .offset = FS(timeout_ms), .max = MS_MAX},
    {.key = "bytes", .parse = parse_u64, .offset = FS(bytes), .max = 1LL << 40},
    {.key = "average_size",
     .parse = parse_u32,
     .offset = FS(average_size),
     .min = 1,
     .max = 1 << 20},
    {.key = "size_variation", .parse = parse_u32, .offset = FS(size_variation), .max = 1 << 20},
    {.key = "delay", .parse = parse_u32, .offset = FS(delay_us), .max = 1000000},
    {.key = "expect", .parse = parse_object, .sub = &fault_expect_table},
};
static const struct table fault_table = {fault_fields, N_OF(fault_fields), fault_after};

static int parse_faults(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct scenario *s = base;
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

static const struct field expect_fields[] = {
    {.key = "violations", .parse = parse_expect, .offset = SC(expect.violations)},
    /* the old key "fenced" is refused with this name (scenario_error.c) */
    {.key = "rejected_accesses", .parse = parse_expect, .offset = SC(expect.rejected_accesses)},
    {.key = "invariants",
     .parse = parse_enum,
     .offset = SC(expect.invariants),
     .names = &invariants_names},
};
static const struct table expect_table = {expect_fields, N_OF(expect_fields), NULL};

static const struct field servers_fields[] = {
    {.key = "redis", .parse = parse_servers, .offset = SC(servers[LOCK_SERVER_REDIS])},
    {.key = "zookeeper", .parse = parse_servers, .offset = SC(servers[LOCK_SERVER_ZOOKEEPER])},
    {.key = "sentinel", .parse = parse_servers, .offset = SC(sentinels)},
};
static const struct table servers_table = {servers_fields, N_OF(servers_fields), NULL};

static const struct field top_fields[] = {
    {.key = "name", .parse = parse_name, .offset = SC(name)},
    {.key = "description", .parse = parse_text, .offset = SC(description), .max = 255},
    {.key = "clients",
     .parse = parse_u32,
     .offset = SC(clients),
     .min = 1,
     .max = SCENARIO_MAX_CLIENTS},
    {.key = "duration_s", .parse = parse_duration},
    {.key = "requests", .parse = parse_u64, .offset = SC(requests), .max = NO_MAX},
    {.key = "rate", .parse = parse_positive, .offset = SC(rate), .max = SCENARIO_MAX_RATE},
    {.key = "seed", .parse = parse_u64, .offset = SC(seed), .max = NO_MAX},
    {.key = "lock", .parse = parse_object, .sub = &lock_table},
    {.key = "workload", .parse = parse_workload, .required = true},
    {.key = "fencing", .parse = parse_bool, .offset = SC(fencing)},
    {.key = "faults", .parse = parse_faults},
    {.key = "expect", .parse = parse_object, .sub = &expect_table},
    {.key = "servers", .parse = parse_object, .sub = &servers_table},
};
static const struct table top_table = {top_fields, N_OF(top_fields), NULL};

static bool known_key(const struct table *t, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->fields[i].key, key) == 0)
            return true;
    return false;
}

static int walk_object(struct ctx *c, json_t *obj, const struct table *t, void *base)
{
    /* keys in file order: jansson keeps objects in insertion order */
    for (void *it = json_object_iter(obj); it; it = json_object_iter_next(obj, it))
        if (!known_key(t, json_object_iter_key(it)))
            return scn_unknown_key(c, t, json_object_iter_key(it));
    for (size_t i = 0; i < t->n; i++) {
        const struct field *f = &t->fields[i];
        json_t *v = json_object_get(obj, f->key);
        if (!v) {
            if (f->required)
                return scn_fail(c, "missing required key \"%s\"", f->key);
            continue;
        }
        scn_push_key(c, f->key);
        int rc = f->parse(c, v, f, base);
        scn_pop(c);
        if (rc < 0)
            return -1;
    }
    return t->after ? t->after(c, obj, base) : 0;
}

/* Replicas are what a failover promotes and WAIT counts. */
static int redis_after(struct ctx *c, json_t *obj, void *base)
{
    struct scenario *s = base;
    bool given = json_object_get(obj, "replicas") != NULL;
    if (s->redis.sentinels > 0 && !given)
        s->redis.replicas = 1;
    if (s->redis.sentinels > 0 && s->redis.replicas == 0) {
        scn_push_key(c, "replicas");
        return scn_fail(c, "0 leaves the sentinels nobody to promote (1 or 2)");
    }
    if (s->redis.wait_replicas > s->redis.replicas) {
        scn_push_key(c, "wait_replicas");
        return scn_fail(c, "%" PRIu32 " is more than the %" PRIu32 " replica%s",
                        s->redis.wait_replicas, s->redis.replicas,
                        s->redis.replicas == 1 ? "" : "s");
    }
    return 0;
}

static int lock_after(struct ctx *c, json_t *obj, void *base)
{
    const struct scenario *s = base;
    int rc = 0;

    if (s->retry_max_ms >= s->retry_min_ms)
        return 0;
    /* blame what the file wrote: the maximum if given, else the minimum */
    if (json_object_get(obj, "retry_max_ms")) {
        scn_push_key(c, "retry_max_ms");
        rc = scn_fail(c, "%" PRIu32 " is less than retry_min_ms (%" PRIu32 ")", s->retry_max_ms,
                      s->retry_min_ms);
    } else {
        scn_push_key(c, "retry_min_ms");
        rc = scn_fail(c, "%" PRIu32 " is more than retry_max_ms (%" PRIu32 " by default)",
                      s->retry_min_ms, s->retry_max_ms);
    }
    scn_pop(c);
    return rc;
}

/* ---- a fault kind's check of its keys (sim/faults/fault.h) ----------- */

struct fault_check {
    struct ctx *c;
    json_t *obj;
    struct fault_spec *fs;
};

bool fault_has(const struct fault_check *fc, const char *key)
{
    return json_object_get(fc->obj, key) != NULL;
}

struct fault_spec *fault_checked(struct fault_check *fc)
{
    return fc->fs;
}

int fault_refuse(struct fault_check *fc, const char *key, const char *why)
{
    if (!fault_has(fc, key))
        return 0;
    return fault_blame(fc, key, "a %s takes no %s (%s)", fault_type_name(fc->fs->kind), key, why);
}

int fault_require(struct fault_check *fc, const char *key, const char *what)
{
    if (fault_has(fc, key))
        return 0;
    return scn_fail(fc->c, "missing required key \"%s\" (%s)", key, what);
}

int fault_needs(struct fault_check *fc, const char *key, const char *what)
{
    return scn_fail(fc->c, "missing required key \"%s\" (a %s needs one: %s)", key,
                    fault_type_name(fc->fs->kind), what);
}

int fault_blame(struct fault_check *fc, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    scn_push_key(fc->c, key);
    scn_vfail(fc->c, fmt, ap);
    scn_pop(fc->c);
    va_end(ap);
    return -1;
}

int fault_fail(struct fault_check *fc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    scn_vfail(fc->c, fmt, ap);
    va_end(ap);
    return -1;
}

/* What the kind takes and refuses, checked by the kind itself. */
static int fault_after(struct ctx *c, json_t *obj, void *base)
{
    struct fault_check fc = {c, obj, base};
    return fault_kind_of(fc.fs)->check(&fc);
}

/* ---- the API --------------------------------------------------------- */

void scenario_defaults(struct scenario *s)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "scenario");
    s->clients = 16;
    s->duration_ms = 10000;
    s->seed = 1;
    snprintf(s->algorithm, sizeof(s->algorithm), "redis");
    s->ttl_ms = 10000;
    s->wait_ms = 5000;
    s->retry_min_ms = 1;
    s->retry_max_ms = 50;
    s->redis.wait_timeout_ms = 1000;
    s->workload = WORKLOAD_FLASH_SALE;
    s->flash_sale = (struct flash_sale_spec){
        .items = 10,
        .stock = 1000,
        .critical_ms = 1,
        .skew = SKEW_UNIFORM,
        .hot_fraction = 0.9,
        .hot_items = 1,
    };
    s->cache_rebuild = (struct cache_rebuild_spec){
        .keys = 4,
        .period_ms = 1000,
        .load_ms = 50,
        .read_ms = 5,
    };
    s->scheduled_tasks = (struct scheduled_tasks_spec){
        .tasks = 4,
        .period_ms = 1000,
        .run_ms = 50,
        .jitter_ms = 20,
        .hold_min_ms = 0,
    };
    s->redlock = (struct redlock_spec){.nodes = 5, .node_timeout_ms = 50, .quorum = 0};
    s->zookeeper = (struct zookeeper_spec){.ensemble = 1, .session_timeout_ms = 0};
}

/* The file's base name without ".json", made into a valid name. */
static void default_name(struct scenario *s, const char *path)
{
    const char *base = strrchr(path, '/');
    size_t n;

    base = base ? base + 1 : path;
    n = strlen(base);
    if (n >= 5 && strcmp(base + n - 5, ".json") == 0)
        n -= 5;
    size_t out = 0;
    for (size_t i = 0; i < n && out + 1 < sizeof(s->name); i++) {
        unsigned char b = (unsigned char)base[i];
        if ((b & 0xC0) == 0x80)
            continue; /* the rest of a UTF-8 character: one '_' a character */
        s->name[out++] = strchr(name_chars, b) ? (char)b : '_';
    }
    s->name[out] = '\0';
    if (out == 0)
        snprintf(s->name, sizeof(s->name), "scenario");
}

/* jansson refuses an integer beyond 64 bits as a syntax error, naming
 * neither the key nor where the number starts: blame the key, at the
 * number, as any other value out of range. 0 if the number is not found. */
static int number_overflow(struct ctx *c, const json_error_t *je)
{
    char path[256], why[160];
    struct json_pos pos;
    size_t end = je->position > 0 ? (size_t)je->position : 0, start;
    if (end > c->len)
        return 0;
    while (end > 0 && !strchr("0123456789", c->text[end - 1]))
        end--; /* jansson may stop past the number */
    for (start = end; start > 0 && strchr("0123456789-+.eE", c->text[start - 1]); start--)
        ;
    if (start == end || json_path_at(c->text, c->len, start, path, sizeof(path), &pos) < 0)
        return 0;
    int n = (int)(end - start > 40 ? 40 : end - start);
    if (memchr(c->text + start, '.', (size_t)n) || memchr(c->text + start, 'e', (size_t)n) ||
        memchr(c->text + start, 'E', (size_t)n))
        snprintf(why, sizeof(why), "%.*s is out of range (too large for a number)", n,
                 c->text + start);
    else
        snprintf(why, sizeof(why), "%.*s is out of range (integers go from %lld to %lld)", n,
                 c->text + start, (long long)INT64_MIN, (long long)INT64_MAX);
    scn_emit(c->err, c->file, &pos, path, why);
    return -1;
}

static int syntax_error(struct ctx *c, const json_error_t *je)
{
    char path[256];
    struct json_pos pos;

    /* jansson stops just after a duplicate key; name its path instead */
    if (json_error_code(je) == json_error_duplicate_key && je->position > 0 &&
        json_path_at(c->text, c->len, (size_t)je->position - 1, path, sizeof(path), &pos) == 0) {
        scn_emit(c->err, c->file, &pos, path, "duplicate key");
        return -1;
    }
    if (json_error_code(je) == json_error_numeric_overflow && number_overflow(c, je) < 0)
        return -1;
    pos = (struct json_pos){je->line, je->column};
    scn_emit(c->err, c->file, &pos, "syntax", je->text);
    return -1;
}

int scenario_load_text(const char *name, const char *text, size_t len, struct scenario *s,
                       char err[SCENARIO_ERR_MAX])
{
    struct ctx c = {.file = name, .text = text, .len = len, .err = err};
    json_error_t je;
    int rc;

    scenario_defaults(s);
    snprintf(s->path, sizeof(s->path), "%s", name);
    err[0] = '\0';
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        rc = syntax_error(&c, &je);
    else if (!json_is_object(root))
        rc = scn_type_error(&c, root, "an object");
    else
        rc = walk_object(&c, root, &top_table, s);
    if (rc == 0 && !json_object_get(root, "name"))
        default_name(s, name);
    json_decref(root);
    return rc;
}

int scenario_load(const char *path, struct scenario *s, char err[SCENARIO_ERR_MAX])
{
    char *text, why[128];
    size_t len;

    if (scn_read_file(path, &text, &len, why, sizeof(why)) < 0) {
        scenario_defaults(s);
        snprintf(s->path, sizeof(s->path), "%s", path);
        scn_emit(err, path[0] ? path : "\"\" (an empty file name)", NULL, "", why);
        return -1;
    }
    int rc = scenario_load_text(path, text, len, s, err);
    free(text);
    return rc;
}

uint64_t scenario_longest_fault_ms(const struct scenario *s)
{
    uint64_t longest = 0;
    for (size_t i = 0; i < s->n_faults; i++)
        if (s->faults[i].duration_ms > longest)
            longest = s->faults[i].duration_ms;
    return longest;
}

const char *const fault_expect_names[FAULT_EXPECTS] = {"acquired", "failed", "recovery_ms"};

const struct expect_num *fault_expect_at(const struct fault_expect *x, size_t k)
{
    const struct expect_num *all[FAULT_EXPECTS] = {&x->acquired, &x->failed, &x->recovery_ms};
    return all[k];
}

const char *clock_method_name(enum clock_method m)
{
    return m < N_OF(method_list) ? method_list[m] : "?";
}

size_t fault_node_count(const struct fault_spec *f, size_t n)
{
    switch (f->pick) {
    case PICK_NODE:
    case PICK_ONE:
    case PICK_ZK_LEADER:
    case PICK_ZK_FOLLOWER:
        return 1;
    case PICK_MINORITY:
        return n / 2;
    case PICK_MAJORITY:
        return n / 2 + 1;
    case PICK_ALL:
    case PICK_PRIMARIES:
        return n;
    case PICK_HOLDER_MAJORITY:
        return f->count ? f->count : n / 2 + 1;
    }
    return n;
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
            fault_holds_connections(s->faults[i].kind))
            return true; /* the replication link has the fleet's own proxy */
    return false;
}

bool scenario_proxy_per_client(const struct scenario *s)
{
    for (size_t i = 0; i < s->n_faults; i++) {
        const struct fault_spec *f = &s->faults[i];
        if (fault_holds_connections(f->kind) ||
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
        if (fault_holds_connections(f->kind) || (fault_on_network(f->kind) && f->pick != PICK_NODE))
            return servers_mask(n); /* a paused client's every connection; a node the seed picks */
        if (fault_on_network(f->kind) && f->node >= 1 && f->node <= n)
            set |= 1u << (f->node - 1);
    }
    return set;
}

const char *fault_stream_name(unsigned stream)
{
    return stream == STREAM_UPSTREAM    ? "upstream"
           : stream == STREAM_BOTH_WAYS ? "both"
                                        : "downstream";
}

const char *fault_data_name(enum fault_data d)
{
    return d == DATA_KEPT ? "kept" : "lost";
}

const char *workload_name(enum workload_kind w)
{
    return (unsigned)w < N_OF(workload_list) ? workload_list[w] : "unknown";
}
