/* scenario_faults.c - what the fault timeline needs from the whole: each
 * fault inside the run, its target among the servers the algorithm uses
 * (and managed by locklab, for a process fault), no two faults asking the
 * same server to be in two states at once.
 *
 * Random targets ("one", "majority") are picked at run time among the
 * servers no other process fault holds, so two of them contradict only
 * when together they need more servers than the run has.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "algorithms/lock.h"
#include "sim/faults/fault.h"
#include "sim/fleet/server_kind.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_parse.h"

size_t scenario_servers(const struct scenario *s, const struct lock_ops *ops)
{
    const struct lock_family *f = lock_family_with(ops->family, FAMILY_HOOK(servers));
    return f ? f->servers(scenario_settings(s, f)) : 1;
}

/* The family whose servers ops votes across (lock_family.quorum); NULL
 * when they are one service. */
static const struct lock_family *voters(const struct lock_ops *ops)
{
    return lock_family_with(ops->family, FAMILY_HOOK(quorum));
}

/* The families whose locks vote across independent nodes ("redlock"). */
static const char *voting_families(void)
{
    static _Thread_local char out[128];
    out[0] = '\0';
    for (size_t i = 0; i < lock_family_count(); i++)
        if (lock_family_at(i)->quorum)
            snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", out[0] ? ", " : "",
                     lock_family_at(i)->key);
    return out;
}

/* Why a replication fault has no link to strike: the kinds whose followers
 * locklab runs through its proxy (a topology of their own), in why. */
static void replication_misfit(char *why, size_t len)
{
    int n = snprintf(why, len, "replication is the link of the");
    for (size_t i = 0, k = 0; i < server_kind_count() && n > 0 && (size_t)n < len; i++) {
        const struct server_kind *sk = server_kind_at(i);
        if (sk->start_topology && (sk->roles & SERVER_ROLE_BIT(SERVER_ROLE_FOLLOWER)) &&
            sk->follower_word && sk->followers_setting)
            n += snprintf(why + n, len - (size_t)n, "%s %ss locklab runs for a %s %s (%s)",
                          k++ ? " or" : "", sk->follower_word, sk->name,
                          sk->leader_word ? sk->leader_word : "leader", sk->followers_setting);
    }
}

/* What s's families lay out around the lock's servers. */
static struct family_layout layout_of(const struct scenario *s)
{
    struct family_layout l;
    scenario_layout(s, &l);
    return l;
}

/* The servers ops runs on: their kind (NULL for one the fleet lacks). */
static const struct server_kind *kind_of(const struct lock_ops *ops)
{
    return server_kind_find(ops->server);
}

static const char *node_prefix(const struct lock_ops *ops)
{
    return kind_of(ops) ? kind_of(ops)->node_prefix : ops->server;
}

/* Why client k is not one of s's, in why; false when it is. */
static bool no_such_client(const struct scenario *s, int32_t k, char *why, size_t len)
{
    if ((uint32_t)k < s->clients)
        return false;
    snprintf(why, len, "client %d does not exist (%u clients, numbered 0..%u)", (int)k,
             (unsigned)s->clients, (unsigned)s->clients - 1);
    return true;
}

/* Why ops's servers, as s lays them out (n of them), play no role as f
 * names it, in why; 0 when they do. The kind says which roles it has; the
 * layout whether there are several to lead and follow, or a pooler. */
static int role_misfit(const struct scenario *s, const struct fault_spec *f,
                       const struct lock_ops *ops, size_t n, char *why, size_t len)
{
    const struct server_kind *k = kind_of(ops);
    struct family_layout layout = layout_of(s);
    enum server_role role = scn_pick_role(f->pick);
    if (f->node_kind != FAULT_ANY_KIND && f->node_kind != server_kind_index(ops->server))
        snprintf(why, len, "%s names a %s server; %s uses %s servers", f->target_text,
                 server_kind_at(f->node_kind)->name, ops->name, ops->server);
    else if (role == SERVER_ROLE_POOLER && (k == NULL || !k->pooled || !k->pooled(&layout)))
        snprintf(why, len, "%s has no pooler in front of its %s server%s%s%s%s", ops->name,
                 ops->server, k && k->pooler_setting ? " (" : "",
                 k && k->pooler_setting ? k->pooler_setting : "", k && k->pooler_setting ? ")" : "",
                 k && k->pooler ? "" : " (none is run for it)");
    else if (role != SERVER_ROLE_POOLER && voters(ops))
        snprintf(why, len, "%s's %zu %s nodes are independent: none %s", ops->name, n, ops->server,
                 role == SERVER_ROLE_LEADER ? "leads" : "follows another");
    else if (k == NULL || !(k->roles & SERVER_ROLE_BIT(role)) ||
             (role == SERVER_ROLE_FOLLOWER && n < 2))
        snprintf(why, len, "%s has no %s (%s)", k && k->lone ? k->lone : ops->server,
                 role == SERVER_ROLE_LEADER ? "leader"
                 : k && k->follower_word    ? k->follower_word
                                            : "follower",
                 k && k->followers_setting ? k->followers_setting : "locklab runs it alone");
    else
        return 0;
    return -1;
}

/* Why f's target names no server ops uses, in why (its target's fault, for
 * process and network faults alike); 0 when it names some. */
static int node_misfit(const struct scenario *s, const struct fault_spec *f,
                       const struct lock_ops *ops, char *why, size_t len)
{
    size_t n = scenario_servers(s, ops);
    const char *kind = ops->server;
    if (PICK_IS_ROLE(f->pick))
        return role_misfit(s, f, ops, n, why, len);
    if (f->pick == PICK_NODE && f->node_kind != server_kind_index(kind))
        snprintf(why, len, "%s names a %s server; %s uses %s servers", f->target_text,
                 server_kind_at(f->node_kind)->name, ops->name, kind);
    else if (f->pick == PICK_NODE && f->node > n && n == 1)
        snprintf(why, len, "%s does not exist: %s uses one %s server, %s-1", f->target_text,
                 ops->name, kind, node_prefix(ops));
    else if (f->pick == PICK_NODE && f->node > n)
        snprintf(why, len, "%s does not exist: %s uses %zu %s servers (%s-1..%s-%zu)",
                 f->target_text, ops->name, n, kind, node_prefix(ops), node_prefix(ops), n);
    else if (fault_node_count(f, n) == 0)
        snprintf(why, len, "the %s of %zu server is no server", f->target_text, n);
    else
        return 0;
    return -1;
}

/* Why a process fault cannot strike ops's servers, in why; 0 if it can.
 * *key is the fault's key to blame. */
static int misfit(const struct scenario *s, const struct fault_spec *f, const struct lock_ops *ops,
                  const char **key, char *why, size_t len)
{
    size_t n = scenario_servers(s, ops);
    const char *kind = ops->server;
    *key = "target";
    if (scenario_external_for(s, ops)) {
        *key = "type";
        snprintf(why, len,
                 "a %s needs servers locklab manages; algorithm %s runs on external %s servers "
                 "(--%s or \"servers\")",
                 fault_type_name(f->kind), ops->name, kind, kind);
    } else if (node_misfit(s, f, ops, why, len) < 0) {
        /* its target names no server the algorithm uses */
    } else if (f->pick == PICK_HOLDER_MAJORITY && !voters(ops)) {
        snprintf(why, len, "holder-majority needs independent nodes (%s); %s has one service",
                 voting_families(), ops->name);
    } else if (f->pick == PICK_HOLDER_MAJORITY && f->count > n / 2 + 1) {
        *key = "count";
        snprintf(why, len, "%u is more than a holder's majority of %zu nodes (%zu)",
                 (unsigned)f->count, n, n / 2 + 1);
    } else {
        const struct fault_kind *k = fault_kind_of(f);
        return k->misfit ? k->misfit(&(struct fault_fit){.ops = ops,
                                                         .promotes = layout_of(s).finders > 0},
                                     f, key, why, len)
                         : 0;
    }
    return -1;
}

static int network_misfit(const struct scenario *s, const struct fault_spec *f,
                          const struct lock_ops *ops, char *why, size_t len);

int scenario_fault_misfit(const struct scenario *s, const struct lock_ops *ops, char *why,
                          size_t len)
{
    const char *key;
    for (size_t i = 0; i < s->n_faults; i++) {
        char one[200];
        if (fault_on_network(s->faults[i].kind) &&
            network_misfit(s, &s->faults[i], ops, one, sizeof(one)) < 0) {
            snprintf(why, len, "faults[%zu].target: %s", i, one);
            return (int)i;
        }
        if (!fault_on_servers(s->faults[i].kind))
            continue;
        if (misfit(s, &s->faults[i], ops, &key, one, sizeof(one)) < 0) {
            snprintf(why, len, "faults[%zu].%s: %s", i, key, one);
            return (int)i;
        }
    }
    return -1;
}

static bool windows_overlap(const struct scenario *s, const struct fault_spec *a,
                            const struct fault_spec *b)
{
    /* a restart holds its server until it answers: at least a moment */
    uint64_t a_end = fault_end_ms(a, s->duration_ms), b_end = fault_end_ms(b, s->duration_ms);
    if (a_end == a->at_ms)
        a_end++;
    if (b_end == b->at_ms)
        b_end++;
    return a->at_ms < b_end && b->at_ms < a_end;
}

/* How many of the n servers lead: as many as the family says (a Redis
 * Cluster's masters), else one in an ensemble or a master with its
 * replicas, and each of servers alone (Redlock's, say). */
static size_t leading(const struct scenario *s, const struct lock_ops *ops, size_t n)
{
    const struct server_kind *k = kind_of(ops);
    if (ops->family && ops->family->leaders)
        return ops->family->leaders(scenario_settings(s, ops->family));
    return (k && k->one_service) || layout_of(s).followers > 0 ? 1 : n;
}

/* The servers f holds while it lasts: a failover the one master it kills,
 * the primaries those that lead, else as many as its target names. */
static size_t held(const struct scenario *s, const struct lock_ops *ops, const struct fault_spec *f,
                   size_t n)
{
    if (fault_kind_of(f)->awaits_promotion)
        return 1;
    return f->pick == PICK_PRIMARIES ? leading(s, ops, n) : fault_node_count(f, n);
}

/* Faults at once that leave nothing to promote: the servers they strike
 * and one more. */
static int no_replica_left(struct ctx *c, const struct lock_ops *ops, const struct fault_spec *b,
                           const char *shown, size_t busy, size_t n)
{
    const struct server_kind *k = kind_of(ops);
    return scn_fail(c,
                    "with %s still on, this %s needs %zu servers, %zu to strike and a %s to "
                    "promote; the run has %zu",
                    shown, fault_type_name(b->kind), busy + 1, busy,
                    k && k->follower_word ? k->follower_word : "follower", n);
}

/* Fault j against the process faults before it that are still on when it
 * starts: the same named server, or more servers than there are (and one
 * more for a failover to promote). A failover takes no target: its type
 * is blamed. */
static int contradiction(struct ctx *c, const struct scenario *s, const struct lock_ops *ops,
                         size_t j, size_t n)
{
    const struct fault_spec *b = &s->faults[j];
    size_t busy = held(s, ops, b, n);
    bool promote = fault_kind_of(b)->awaits_promotion;
    for (size_t i = 0; i < s->n_faults; i++) {
        const struct fault_spec *a = &s->faults[i];
        if (i == j || !fault_on_servers(a->kind) || !windows_overlap(s, a, b) ||
            (a->at_ms > b->at_ms || (a->at_ms == b->at_ms && i > j)))
            continue;
        busy += held(s, ops, a, n);
        promote = promote || fault_kind_of(a)->awaits_promotion;
        bool same = (a->pick == PICK_NODE && b->pick == PICK_NODE && a->node == b->node) ||
                    (a->pick == PICK_POOLER && b->pick == PICK_POOLER);
        if (same || busy + promote > n) {
            scn_push_key(c, fault_kind_of(b)->pick ? "type" : "target");
            char shown[80];
            snprintf(shown, sizeof(shown), "faults[%zu] (%s %s from %" PRIu64 " to %" PRIu64 " ms)",
                     i, fault_type_name(a->kind), a->target_text, a->at_ms,
                     fault_end_ms(a, s->duration_ms));
            if (same)
                return scn_fail(c, "%s is already under %s", b->target_text, shown);
            if (promote)
                return no_replica_left(c, ops, b, shown, busy, n);
            return scn_fail(c, "%s together with %s needs %zu of %zu servers", b->target_text,
                            shown, busy, n);
        }
    }
    return 0;
}

/* Where a fault ends past the run, the key that made it so. */
static int ends_in_run(struct ctx *c, const struct scenario *s, const struct fault_spec *f)
{
    uint64_t end = fault_end_ms(f, s->duration_ms);
    if (end <= s->duration_ms)
        return 0;
    scn_push_key(c, fault_recovers_from_start(f->kind) ? "restart_after_ms" : "duration_ms");
    return scn_fail(c,
                    "the %s would end at %" PRIu64 " ms, past the end of the run (%" PRIu64 " ms)",
                    fault_type_name(f->kind), end, s->duration_ms);
}

/* Two toxics of one type on the same traffic at once: Toxiproxy refuses a
 * second toxic of a name already in force, and so does this. */
static int same_toxic(struct ctx *c, const struct scenario *s, size_t j)
{
    const struct fault_spec *b = &s->faults[j];
    for (size_t i = 0; i < j; i++) {
        const struct fault_spec *a = &s->faults[i];
        bool same_traffic = a->scope == NET_NODES && b->scope == NET_NODES &&
                            (a->pick == PICK_ALL || b->pick == PICK_ALL ||
                             (a->pick == PICK_NODE && b->pick == PICK_NODE && a->node == b->node));
        if (a->kind != b->kind || !same_traffic || !(a->stream & b->stream) ||
            !windows_overlap(s, a, b))
            continue;
        scn_push_key(c, "target");
        return scn_fail(c,
                        "%s is already under faults[%zu] (%s %s from %" PRIu64 " to %" PRIu64
                        " ms): one %s at a time on the same traffic",
                        b->target_text, i, fault_type_name(a->kind), a->target_text, a->at_ms,
                        fault_end_ms(a, s->duration_ms), fault_type_name(a->kind));
    }
    return 0;
}

/* Why a network fault cannot touch ops's servers, in why; 0 if it can.
 * External servers are fine: the proxy fronts them as well. */
static int network_misfit(const struct scenario *s, const struct fault_spec *f,
                          const struct lock_ops *ops, char *why, size_t len)
{
    if (f->scope == NET_CLIENT && no_such_client(s, f->target, why, len))
        return -1;
    if (f->scope == NET_CLIENTS && f->n_clients > s->clients) {
        snprintf(why, len, "%s: the run has %u clients", f->target_text, (unsigned)s->clients);
        return -1;
    }
    if (f->scope == NET_NODES && scenario_finders(s, ops)->n > 0) {
        snprintf(why, len,
                 "with external sentinels the master is theirs to name: aim at clients "
                 "(\"holder\", \"client:K\", \"clients:N\")");
        return -1;
    }
    if (f->scope == NET_REPLICATION) {
        /* a kind with a topology of its own (Redis's replicas) replicates */
        if (layout_of(s).followers > 0 && kind_of(ops) && kind_of(ops)->start_topology &&
            scenario_external(s, ops->server)->n == 0)
            return 0;
        replication_misfit(why, len);
        return -1;
    }
    return node_misfit(s, f, ops, why, len);
}

/* A network fault: inside the run, on servers the algorithm uses (managed
 * or external), on clients that exist, not doubling another. */
static int check_network(struct ctx *c, const struct scenario *s, const struct lock_ops *ops,
                         size_t i)
{
    const struct fault_spec *fs = &s->faults[i];
    if (ends_in_run(c, s, fs) < 0)
        return -1;
    char why[200];
    if (network_misfit(s, fs, ops, why, sizeof(why)) < 0) {
        scn_push_key(c, "target");
        return scn_fail(c, "%s", why);
    }
    return same_toxic(c, s, i);
}

static int check_one(struct ctx *c, const struct scenario *s, const struct lock_ops *ops, size_t i)
{
    const struct fault_spec *fs = &s->faults[i];
    if (fs->at_ms >= s->duration_ms) {
        scn_push_key(c, "at_ms");
        return scn_fail(c, "%" PRIu64 " is past the end of the run (%" PRIu64 " ms)", fs->at_ms,
                        s->duration_ms);
    }
    if (fault_on_network(fs->kind))
        return check_network(c, s, ops, i);
    char why[200];
    if (!fault_on_servers(fs->kind)) {
        if (fs->target < 0 || !no_such_client(s, fs->target, why, sizeof(why))) /* holder, waiter */
            return 0;
        scn_push_key(c, "target");
        return scn_fail(c, "%s", why);
    }
    if (ends_in_run(c, s, fs) < 0)
        return -1;
    if (fs->side_clients > s->clients) {
        scn_push_key(c, "side_clients");
        return scn_fail(c, "%u is more than the run's %u clients", (unsigned)fs->side_clients,
                        (unsigned)s->clients);
    }
    const char *key;
    if (misfit(s, fs, ops, &key, why, sizeof(why)) < 0) {
        scn_push_key(c, key);
        return scn_fail(c, "%s", why);
    }
    return contradiction(c, s, ops, i, scenario_servers(s, ops));
}

int scenario_finish_faults(struct ctx *c, const struct scenario *s, const struct lock_ops *ops)
{
    scn_push_key(c, "faults");
    for (size_t i = 0; i < s->n_faults; i++) {
        scn_push_index(c, i);
        if (check_one(c, s, ops, i) < 0)
            return -1;
        scn_pop(c);
    }
    scn_pop(c);
    return 0;
}

bool scenario_fakes_time(const struct scenario *s)
{
    for (size_t i = 0; i < s->n_faults; i++) {
        const struct fault_kind *k = fault_kind_of(&s->faults[i]);
        if (k->fakes_time && k->fakes_time(&s->faults[i]))
            return true;
    }
    return false;
}
