/* scenario_finish.c - what only the whole can tell, once every value is in
 * place, the command line's included and each already checked on its own
 * (the algorithm can do what is asked, a scheduled task fits its period;
 * the faults in scenario_faults.c), then the defaults resolved
 * (scenario_resolve.c).
 *
 * Each check names the value it blames; the message points into the file
 * when the file holds that value, and names only the key when the command
 * line put it there (scenario_error.c knows which from the load's ctx).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "algorithms/lock.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_parse.h"
#include "sim/workloads/workload.h"

/* x as the file may have written it: an integer when it is whole. */
static json_t *number_json(double x)
{
    return x == (double)(long long)x ? json_integer((json_int_t)x) : json_real(x);
}

bool scenario_reenters(const struct scenario *s)
{
    return s->workload->reenters && s->workload->reenters(scenario_workload(s));
}

/* The workload's own check of the whole, said where it blames. */
static int finish_workload(struct ctx *c, const struct scenario *s)
{
    const char *blame[2] = {NULL, NULL};
    char why[SETTING_WHY_MAX];
    struct workload_run run;

    scenario_workload_run(s, &run);
    if (!s->workload->check ||
        s->workload->check(scenario_workload(s), &run, blame, why, sizeof(why)) == 0)
        return 0;
    for (size_t i = 0; i < 2 && blame[i]; i++)
        scn_push_key(c, blame[i]);
    return scn_fail(c, "%s", why);
}

unsigned scenario_lacks(const struct scenario *s, const struct lock_ops *ops)
{
    struct family_layout l;
    scenario_layout(s, &l);
    bool topology = l.followers > 0 || l.finders > 0 || scenario_names_finders(s);
    return (s->fencing && !ops->gives_token ? LACKS_TOKEN : 0u) |
           (s->watchdog && !ops->renew ? LACKS_RENEW : 0u) |
           (ops->optimistic && s->workload->needs_exclusion ? LACKS_EXCLUSION : 0u) |
           (topology && !scenario_follows_topology(s, ops) ? LACKS_REPLICAS : 0u) |
           (s->permits > 1 && !lock_grants_mode(ops, LOCK_MODE_PERMIT) ? LACKS_PERMITS : 0u) |
           (!lock_grants_mode(ops, s->workload->lock_mode) ? LACKS_MODE : 0u) |
           (scenario_reenters(s) && !ops->reentrant ? LACKS_REENTRY : 0u) |
           (s->workload->latch != (ops->latch != NULL) ? LACKS_LATCH : 0u);
}

void scenario_latch_misfit(const struct scenario *s, const struct lock_ops *ops, char *why,
                           size_t len)
{
    if (ops->latch)
        snprintf(why, len, "%s is a latch, not a lock; %s needs %s sections", ops->name,
                 s->workload->name, lock_mode_name(s->workload->lock_mode));
    else
        snprintf(why, len, "%s runs a countdown latch; %s is a lock, not a latch",
                 s->workload->name, ops->name);
}

/* Followers or finders asked of a lock that follows none: blamed on the
 * family that asks them. */
static int lacks_topology(struct ctx *c, const struct scenario *s, const struct lock_ops *ops)
{
    const struct lock_family *f = scenario_topology_family(s);
    scn_push_key(c, "lock");
    if (f)
        scn_push_key(c, f->key);
    return scn_fail(c, "%s; %s runs its own servers", f ? f->layout_words : "a topology",
                    ops->name);
}

/* Each family's layout against the external servers named for ops. */
static int layout_misfit(struct ctx *c, const struct scenario *s, const struct lock_ops *ops)
{
    size_t finders = scenario_finders(s, ops)->n, named = scenario_external(s, ops->server)->n;
    for (size_t i = 0; i < lock_family_count(); i++) {
        const struct lock_family *f = lock_family_at(i);
        const char *const *blame;
        char why[200];
        if (!f->layout_misfit || f->layout_misfit(scenario_settings(s, f), finders, named, &blame,
                                                  why, sizeof(why)) == 0)
            continue;
        while (*blame)
            scn_push_key(c, *blame++);
        return scn_fail(c, "%s", why);
    }
    return 0;
}

/* The workloads that take a rate (open loop), as the registry lists them. */
static const char *paced_workloads(void)
{
    static _Thread_local char out[256];
    out[0] = '\0';
    for (size_t i = 0; i < workload_count(); i++)
        if (!workload_at(i)->refuses_rate)
            snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", out[0] ? ", " : "",
                     workload_at(i)->name);
    return out;
}

/* What the file and the command line decide together; each check names the
 * value it blames, so a message can point into the file when it came from
 * there. */
static int finish_checks(struct ctx *c, const struct scenario *s)
{
    const struct lock_ops *ops;

    /* the file's algorithm (--algorithm was checked as it was read) */
    scn_push_key(c, "lock");
    scn_push_key(c, "algorithm");
    ops = lock_find(s->algorithm);
    if (!ops)
        return scn_unknown_algorithm(c, s->algorithm, json_string(s->algorithm));
    scn_pop(c);
    if (scenario_lacks(s, ops) & LACKS_RENEW) {
        scn_push_key(c, "watchdog");
        return scn_fail_if_file(c, json_true(), "algorithm \"%s\" cannot renew a lock", ops->name);
    }
    if (s->watchdog && s->ttl_ms < 2) {
        scn_push_key(c, "ttl_ms");
        return scn_fail_if_file(c, json_integer(s->ttl_ms),
                                "%" PRIu32 " leaves the watchdog no time to renew (at least 2 ms)",
                                s->ttl_ms);
    }
    if (s->renew_ms != 0 && s->renew_ms >= s->ttl_ms) {
        scn_push_key(c, "renew_ms");
        return scn_fail_if_file(c, json_integer(s->renew_ms),
                                "%" PRIu32 " must be less than ttl_ms (%" PRIu32 ")", s->renew_ms,
                                s->ttl_ms);
    }
    /* a pool on a lock that is no semaphore: the workload is the reason
     * (LACKS_MODE below), not its permits */
    if ((scenario_lacks(s, ops) & (LACKS_PERMITS | LACKS_MODE)) == LACKS_PERMITS) {
        scn_push_key(c, "permits");
        return scn_fail_if_file(c, json_integer(s->permits),
                                "%" PRIu32 " permits, but algorithm \"%s\" grants no permits (it "
                                "is no semaphore)",
                                s->permits, ops->name);
    }
    scn_pop(c);
    if (scenario_lacks(s, ops) & LACKS_REENTRY) {
        scn_push_key(c, "workload");
        scn_push_key(c, s->workload->reentry_key);
        return scn_fail_if_file(c, json_true(),
                                "%s re-enters its lock; algorithm \"%s\" is not "
                                "reentrant (it would wait for itself)",
                                s->workload->reentry_by, ops->name);
    }
    if (scenario_lacks(s, ops) & LACKS_LATCH) {
        char why[160];
        scenario_latch_misfit(s, ops, why, sizeof(why));
        scn_push_key(c, "workload");
        scn_push_key(c, "type");
        return scn_fail_if_file(c, json_string(s->workload->name), "%s", why);
    }
    if (scenario_lacks(s, ops) & LACKS_MODE) {
        scn_push_key(c, "workload");
        scn_push_key(c, "type");
        return scn_fail_if_file(c, json_string(s->workload->name),
                                "%s needs %s sections; %s grants none", s->workload->name,
                                lock_mode_name(s->workload->lock_mode), ops->name);
    }
    if (scenario_lacks(s, ops) & LACKS_EXCLUSION) {
        scn_push_key(c, "workload");
        scn_push_key(c, "type");
        return scn_fail_if_file(c, json_string(s->workload->name),
                                "%s is optimistic concurrency, not a lock: a refused write cannot "
                                "undo %s; %s needs mutual exclusion",
                                ops->name, s->workload->needs_exclusion, s->workload->name);
    }
    if (scenario_lacks(s, ops) & LACKS_REPLICAS)
        return lacks_topology(c, s, ops);
    if (layout_misfit(c, s, ops) < 0)
        return -1;
    if (scenario_lacks(s, ops) & LACKS_TOKEN) {
        scn_push_key(c, "fencing");
        return scn_fail_if_file(c, json_true(), "algorithm \"%s\" gives no fencing tokens",
                                ops->name);
    }
    if (s->workload->refuses_rate && s->rate > 0) {
        scn_push_key(c, "rate");
        return scn_fail_if_file(c, number_json(s->rate), "%s; open loop is for %s",
                                s->workload->refuses_rate, paced_workloads());
    }
    if (s->rate > 0 && s->rate * (double)s->duration_ms / 1000.0 < 1.0) {
        scn_push_key(c, "rate");
        return scn_fail_if_file(c, number_json(s->rate),
                                "%g steps/s makes less than one step in the %g s run", s->rate,
                                (double)s->duration_ms / 1000.0);
    }
    if (finish_workload(c, s) < 0)
        return -1;
    return scenario_finish_faults(c, s, ops);
}

int scn_finish(struct ctx *c, struct scenario *s)
{
    if (finish_checks(c, s) < 0)
        return -1;
    scenario_resolve(s, lock_find(s->algorithm));
    /* a scenario that expects nothing expects safety */
    if (s->expect.violations.op == EXPECT_UNSET) {
        s->expect.violations = (struct expect_num){EXPECT_EQ, 0};
        if (s->expect.invariants == EXPECT_INV_UNSET)
            s->expect.invariants = EXPECT_INV_HOLD;
    }
    return 0;
}
