/* failover.c - the fault kind that kills the Redis master of the moment
 * (sentinel says which) and ends once sentinel has promoted a replica;
 * restart_after_ms brings the old master back, empty, and sentinel makes
 * it a replica. Redisson's #3636 and Kleppmann's lost-lock-on-failover.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "sim/faults/fault.h"
#include "sim/faults/nemesis_state.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "sim/record/clock.h"

#define PROMOTION_POLL_NS 10000000ull /* how often a failover asks sentinel for the master */

static int check(struct fault_check *fc)
{
    static const char *const refused[] = {"target", "duration_ms", "data",  "key",
                                          "count",  "jump_ms",     "method"};
    static const char *const why[] = {"it strikes the master sentinel names",
                                      "it ends when sentinel has promoted a replica",
                                      "the old master comes back empty, a replica",
                                      "only a holder-majority target has one",
                                      "only a holder-majority target has one",
                                      "only a clock_jump moves a clock",
                                      "only a clock_jump has one"};
    if (fault_check_no_toxic_keys(fc) < 0 || fault_check_no_mode(fc) < 0 ||
        fault_check_no_side_clients(fc) < 0)
        return -1;
    for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++)
        if (fault_refuse(fc, refused[k], why[k]) < 0)
            return -1;
    struct fault_spec *f = fault_checked(fc);
    f->pick = PICK_PRIMARIES;
    snprintf(f->target_text, sizeof(f->target_text), "the master");
    return 0;
}

static int misfit(const struct fault_fit *fit, const struct fault_spec *f, const char **key,
                  char *why, size_t len)
{
    (void)f;
    /* sentinels promote a replica of a kind they can find the master of */
    const struct server_kind *kind = server_kind_find(fit->ops->server);
    if (fit->promotes && kind && kind->found_by)
        return 0;
    *key = "type";
    snprintf(why, len,
             "a failover needs sentinels to promote a replica (lock.redis.sentinels: 1 or 3, "
             "the redis algorithm)");
    return -1;
}

/* It strikes the master the first sentinel that answers names. */
static uint32_t pick(struct nemesis *n, size_t i, char *why, size_t len)
{
    (void)i;
    uint32_t set = nemesis_master(n);
    if (set == 0)
        snprintf(why, len, "no sentinel named a master");
    return set & ~n->busy;
}

static void strike(struct nemesis *n, size_t i, size_t k)
{
    nemesis_strike(n, i, k, SIGKILL);
}

static uint64_t end_due(const struct nemesis *n, size_t i)
{
    (void)n, (void)i;
    return PROMOTION_POLL_NS; /* look for the promotion */
}

/* Its next step, when its end is due: until sentinel names a new master,
 * look again shortly; then, with a restart, wait for it (the old master
 * comes back empty and sentinel makes it a replica), else end. */
static bool ready_to_end(struct nemesis *n, size_t i)
{
    struct fault_record *r = &n->rec[i];
    uint64_t now = clock_mono_ns();
    if (n->struck[i] == 0)
        return true; /* it killed nothing: no promotion of its doing to wait for */
    if (r->promoted_ns == 0) {
        uint32_t master = nemesis_master(n);
        if (master == 0 || (master & n->struck[i])) {
            n->end_due_ns[i] = now + PROMOTION_POLL_NS;
            return false;
        }
        r->promoted_ns = now;
        for (size_t k = 0; k < n->nodes.n; k++)
            if (master & (1u << k))
                nemesis_add_text(r->detail, sizeof(r->detail),
                                 "sentinel promoted %s (port %d) after %.3f s",
                                 n->nodes.node[k].name, nemesis_server(n, k)->port,
                                 (double)(now - r->start_ns) / 1e9);
    }
    uint64_t back = r->start_ns + r->spec.restart_after_ms * 1000000u;
    if (r->spec.restart_after_ms && back > now) {
        n->end_due_ns[i] = back;
        return false;
    }
    return true;
}

/* Without a restart the old master stays down until the run ends: the
 * fleet is stopped, never healed, after it. */
static void end(struct nemesis *n, size_t i, bool healed)
{
    struct fault_record *r = &n->rec[i];
    if (r->spec.restart_after_ms || healed)
        nemesis_restart_all(n, i);
    if (r->promoted_ns == 0)
        nemesis_add_text(r->error, sizeof(r->error),
                         "sentinel promoted no replica before the run ended");
}

static void plan(const struct fault_spec *f, char *buf, size_t len)
{
    if (f->restart_after_ms) {
        char b[32];
        snprintf(buf, len, "failover: kill the master, back after %s s as a replica",
                 figure_seconds(f->restart_after_ms, b, sizeof(b)));
    } else
        snprintf(buf, len, "failover: kill the master, down until the run ends");
}

static void settings(const struct fault_spec *f, json_t *o)
{
    json_object_set_new(o, "target", json_string(f->target_text));
    json_object_set_new(o, "restart_after_ms", json_integer((json_int_t)f->restart_after_ms));
}

const struct fault_kind fault_failover = {
    .name = "failover",
    .number = 6,
    .summary = "kill the Redis master (lock.redis.sentinels); sentinel promotes a "
               "replica and the clients follow; restart_after_ms brings the old master "
               "back, empty, as a replica",
    .family = FAULT_FAMILY_SERVERS,
    .window = WINDOW_RESTART,
    .band = "process",
    .check = check,
    .takes_restart = true,
    .misfit = misfit,
    .pick = pick,
    .strike = strike,
    .silences = true,
    .end_due = end_due,
    .ready_to_end = ready_to_end,
    .end = end,
    .ends_on_event = true,
    .awaits_promotion = true,
    .plan = plan,
    .settings = settings,
};
