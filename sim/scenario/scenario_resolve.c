/* scenario_resolve.c - every default and clamp a run depends on, resolved
 * once, after validation, into the scenario itself.
 *
 * The run, its header, report.json and `locklab show` all read the values
 * from here, so what a user is shown is what ran. Each value locklab chose
 * rather than read leaves a one-line note saying so and why.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim/fleet/etcd_server.h"
#include "sim/scenario/scenario.h"
#include "sim/workloads/workload.h"

/* ZooKeeper with tickTime 500 (SETUP.md) grants sessions of 2 to 20
 * ticks and silently moves anything else inside: clamp it here so the
 * session that runs is the one reported. */
#define ZK_SESSION_MIN_MS 1000
#define ZK_SESSION_MAX_MS 10000

__attribute__((format(printf, 2, 3))) static void note(struct scenario *s, const char *fmt, ...)
{
    if (s->n_resolved >= SCENARIO_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->resolved[s->n_resolved++], sizeof(s->resolved[0]), fmt, ap);
    va_end(ap);
}

bool scenario_renews(const struct scenario *s, const struct lock_ops *ops)
{
    return ops != NULL && ops->renew != NULL && (s->watchdog || ops->keeps_lease_alive);
}

/* The renewal period: the watchdog's when the scenario asks for one, or
 * the lease's keep-alive when the lock keeps its lease alive by itself
 * (etcd's Session renews at a third of the lease's TTL, as Redisson's
 * watchdog does at a third of its lease). */
static void resolve_renew(struct scenario *s, const struct lock_ops *ops)
{
    if (!scenario_renews(s, ops)) {
        s->renew_ms = 0; /* nothing renews: the header says watchdog=off */
        return;
    }
    if (s->renew_ms)
        return;
    /* never 0, so a tiny ttl cannot make the renewals spin (scenario_finish
     * wants ttl_ms >= 2 of a watchdog) */
    const char *why = s->watchdog ? "Redisson's watchdog period" : "the lease's keep-alive period";
    if (!s->watchdog && strcmp(ops->server, "etcd") == 0) {
        /* etcd's lease is whole seconds: its client keeps it alive at a third of that */
        s->renew_ms = s->etcd.lease_ms / 3;
        note(s, "lock.renew_ms: %" PRIu32 " = the etcd lease / 3 (%s)", s->renew_ms, why);
        return;
    }
    s->renew_ms = s->ttl_ms / 3;
    if (s->renew_ms)
        note(s, "lock.renew_ms: %" PRIu32 " = ttl_ms / 3 (%s)", s->renew_ms, why);
    else
        note(s, "lock.renew_ms: 1, as ttl_ms / 3 is under 1 ms"), s->renew_ms = 1;
}

static void resolve_redlock(struct scenario *s)
{
    if (s->redlock.quorum)
        return;
    s->redlock.quorum = s->redlock.nodes / 2 + 1;
    note(s, "lock.redlock.quorum: %" PRIu32 " = a majority of %" PRIu32 " nodes", s->redlock.quorum,
         s->redlock.nodes);
}

static void resolve_zookeeper(struct scenario *s, const struct lock_ops *ops)
{
    size_t named = scenario_external(s, ops->server)->n;
    if (named && named != s->zookeeper.ensemble) {
        /* one service: the client gets every server named, whatever the file said */
        s->zookeeper.ensemble = (uint32_t)named;
        note(s, "lock.zookeeper.ensemble: %zu = the external servers named", named);
    }
    uint32_t ms = s->zookeeper.session_timeout_ms;
    if (ms)
        return; /* the file's value is checked to lie inside the range */
    ms = s->ttl_ms < ZK_SESSION_MIN_MS   ? ZK_SESSION_MIN_MS
         : s->ttl_ms > ZK_SESSION_MAX_MS ? ZK_SESSION_MAX_MS
                                         : s->ttl_ms;
    s->zookeeper.session_timeout_ms = ms;
    if (ms == s->ttl_ms)
        note(s,
             "lock.zookeeper.session_timeout_ms: %" PRIu32 " = ttl_ms (the session plays the ttl)",
             ms);
    else
        note(s,
             "lock.zookeeper.session_timeout_ms: %" PRIu32 ", ttl_ms %" PRIu32
             " clamped into the %d..%d ms ZooKeeper grants (tickTime 500)",
             ms, s->ttl_ms, ZK_SESSION_MIN_MS, ZK_SESSION_MAX_MS);
}

/* etcd leases are whole seconds, and etcd grants none under 3/2 of its
 * election timeout (etcd_server.h): the lease that runs is the ttl rounded
 * up to them, and at least that floor. The managed members' is locklab's
 * to set; an etcd of the user's own is taken at etcd's defaults, and one
 * that grants longer than the resolved lease fails the run (etcd.c) rather
 * than run on a lease the report does not show. Said every time, with
 * what it rests on. */
static void resolve_etcd(struct scenario *s, const struct lock_ops *ops)
{
    size_t named = scenario_external(s, ops->server)->n;
    if (named && named != s->etcd.nodes) {
        s->etcd.nodes = (uint32_t)named;
        note(s, "lock.etcd.nodes: %zu = the external servers named", named);
    }
    uint32_t election = named ? ETCD_DEFAULT_ELECTION_TIMEOUT_MS : ETCD_ELECTION_TIMEOUT_MS;
    uint32_t floor_s = named ? etcd_lease_floor_s(election, ETCD_DEFAULT_HEARTBEAT_MS)
                             : etcd_lease_floor_s(election, ETCD_HEARTBEAT_MS);
    char rests[96];
    snprintf(rests, sizeof(rests),
             "%s --election-timeout %" PRIu32 ": whole seconds from %" PRIu32 " s",
             named ? "an external etcd, taken at etcd's default" : "the managed etcd,", election,
             floor_s);
    uint32_t secs = (uint32_t)(((uint64_t)s->ttl_ms + 999) / 1000);
    if (secs < floor_s)
        secs = floor_s;
    s->etcd.lease_ms = secs * 1000;
    if (s->ttl_ms < floor_s * 1000)
        note(s, "etcd lease: %" PRIu32 " s, ttl_ms %" PRIu32 " raised to the shortest granted (%s)",
             secs, s->ttl_ms, rests);
    else if (s->etcd.lease_ms != s->ttl_ms)
        note(s, "etcd lease: %" PRIu32 " s = ttl_ms %" PRIu32 " rounded up to whole seconds (%s)",
             secs, s->ttl_ms, rests);
    else
        note(s, "etcd lease: %" PRIu32 " s = ttl_ms (%s)", secs, rests);
}

static void resolve_workload(struct scenario *s, const struct lock_ops *ops)
{
    char line[sizeof(s->resolved[0])];
    if (s->workload->resolve && s->workload->resolve(scenario_workload(s), ops, line, sizeof(line)))
        note(s, "%s", line);
}

void scenario_resolve(struct scenario *s, const struct lock_ops *ops)
{
    s->n_resolved = 0;
    if (strcmp(ops->server, "etcd") == 0)
        resolve_etcd(s, ops); /* first: the lease sets the keep-alive's period */
    resolve_renew(s, ops);
    if (ops->independent_nodes)
        resolve_redlock(s);
    if (ops->session_lease)
        resolve_zookeeper(s, ops);
    resolve_workload(s, ops);
}

uint32_t scenario_lease_ms(const struct scenario *s, const struct lock_ops *ops)
{
    if (ops->leaseless)
        return 0;
    if (ops->session_lease)
        return s->zookeeper.session_timeout_ms;
    if (s->etcd.lease_ms && strcmp(ops->server, "etcd") == 0)
        return s->etcd.lease_ms;
    return s->ttl_ms;
}

uint32_t scenario_hold_ms(const struct scenario *s)
{
    return workload_hold_ms(s->workload, scenario_workload(s));
}
