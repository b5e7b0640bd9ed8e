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
#include "algorithms/redis.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_parse.h"

/* x as the file may have written it: an integer when it is whole. */
/* lock.redis, the topology the checks of the whole weigh against the
 * lock and the servers named. */
static const struct redis_spec *redis_of(const struct scenario *s)
{
    return scenario_settings(s, &redis_family);
}

static json_t *number_json(double x)
{
    return x == (double)(long long)x ? json_integer((json_int_t)x) : json_real(x);
}

/* A task's run must fit in its slot of the period (tasks fire one after
 * another, period/tasks apart), and the run must see a whole period. */
static int finish_tasks(struct ctx *c, const struct scenario *s)
{
    const struct scheduled_tasks_spec *t = &s->scheduled_tasks;
    uint32_t slot = t->period_ms / t->tasks;
    scn_push_key(c, "workload");
    if (slot == 0) {
        scn_push_key(c, "tasks");
        return scn_fail_if_file(c, json_integer(t->tasks),
                                "%" PRIu32 " tasks do not fit in a %" PRIu32 " ms period", t->tasks,
                                t->period_ms);
    }
    if (t->run_ms >= slot) {
        scn_push_key(c, "run_ms");
        return scn_fail_if_file(c, json_integer(t->run_ms),
                                "%" PRIu32 " must be less than period_ms / tasks (%" PRIu32 " ms)",
                                t->run_ms, slot);
    }
    /* The hold is counted from the acquisition and the next period has a
     * key of its own: a hold past the period protects nothing more. */
    if (t->hold_min_ms > t->period_ms) {
        scn_push_key(c, "hold_min_ms");
        return scn_fail_if_file(c, json_integer(t->hold_min_ms),
                                "%" PRIu32 " must be at most period_ms (%" PRIu32 " ms)",
                                t->hold_min_ms, t->period_ms);
    }
    scn_pop(c);
    if (s->duration_ms < 2ULL * t->period_ms) {
        char why[160];
        snprintf(why, sizeof(why),
                 "%" PRIu64 " ms holds no whole period of %" PRIu32
                 " ms after the first (at least twice the period)",
                 s->duration_ms, t->period_ms);
        scn_push_key(c, "duration_s");
        return scn_fail(c, "%s", why);
    }
    return 0;
}

const char *workload_needs_exclusion(enum workload_kind w)
{
    switch (w) {
    case WORKLOAD_CACHE_REBUILD:
        return "a database load";
    case WORKLOAD_SCHEDULED_TASKS:
        return "a task's run";
    case WORKLOAD_BANK_TRANSFER:
        return "a transfer's debit and credit, written as one";
    case WORKLOAD_READ_MOSTLY:
        /* a reader writes nothing a conflict could refuse: its torn read
         * has already happened */
        return "a torn read";
    case WORKLOAD_FLASH_SALE:
    case WORKLOAD_ORDER_IDS:
    case WORKLOAD_POOL:
        break;
    }
    return NULL;
}

bool scenario_reenters(const struct scenario *s)
{
    return s->workload == WORKLOAD_FLASH_SALE && s->flash_sale.nested;
}

int workload_lock_mode(enum workload_kind w)
{
    /* read_mostly's readers ask shared where the lock grants it and
     * exclusive elsewhere, and its writers always exclusive: what it needs
     * of every lock is exclusive. A pool is a semaphore's alone. */
    return w == WORKLOAD_POOL ? LOCK_MODE_PERMIT : LOCK_MODE_EXCLUSIVE;
}

unsigned scenario_lacks(const struct scenario *s, const struct lock_ops *ops)
{
    bool topology =
        redis_of(s)->replicas > 0 || redis_of(s)->sentinels > 0 || scenario_names_finders(s);
    return (s->fencing && !ops->gives_token ? LACKS_TOKEN : 0u) |
           (s->watchdog && !ops->renew ? LACKS_RENEW : 0u) |
           (ops->optimistic && workload_needs_exclusion(s->workload) ? LACKS_EXCLUSION : 0u) |
           (topology && !ops->follows_sentinels ? LACKS_REPLICAS : 0u) |
           (s->permits > 1 && !lock_grants_mode(ops, LOCK_MODE_PERMIT) ? LACKS_PERMITS : 0u) |
           (!lock_grants_mode(ops, (enum lock_mode)workload_lock_mode(s->workload)) ? LACKS_MODE
                                                                                    : 0u) |
           (scenario_reenters(s) && !ops->reentrant ? LACKS_REENTRY : 0u);
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
        scn_push_key(c, "nested");
        return scn_fail_if_file(c, json_true(),
                                "the purchase re-enters its lock; algorithm \"%s\" is not "
                                "reentrant (it would wait for itself)",
                                ops->name);
    }
    if (scenario_lacks(s, ops) & LACKS_MODE) {
        scn_push_key(c, "workload");
        scn_push_key(c, "type");
        return scn_fail_if_file(c, json_string(workload_name(s->workload)),
                                "%s needs %s sections; %s grants none", workload_name(s->workload),
                                lock_mode_name(workload_lock_mode(s->workload)), ops->name);
    }
    if (scenario_lacks(s, ops) & LACKS_EXCLUSION) {
        scn_push_key(c, "workload");
        scn_push_key(c, "type");
        return scn_fail_if_file(c, json_string(workload_name(s->workload)),
                                "%s is optimistic concurrency, not a lock: a refused write cannot "
                                "undo %s; %s needs mutual exclusion",
                                ops->name, workload_needs_exclusion(s->workload),
                                workload_name(s->workload));
    }
    if (scenario_lacks(s, ops) & LACKS_REPLICAS) {
        scn_push_key(c, "lock");
        scn_push_key(c, "redis");
        return scn_fail(c,
                        "replicas and sentinels are the topology of a lock on one Redis master "
                        "(redis, the Redisson locks); %s runs its "
                        "own servers",
                        ops->name);
    }
    if (scenario_finders(s, ops)->n > 0 &&
        (redis_of(s)->sentinels > 0 || redis_of(s)->replicas > 0 ||
         scenario_external(s, ops->server)->n > 0)) {
        scn_push_key(c, "servers");
        scn_push_key(c, "sentinel");
        return scn_fail(
            c, "external sentinels (--sentinel, servers.sentinel) name the master: leave out "
               "lock.redis.replicas, lock.redis.sentinels and servers.redis");
    }
    if (redis_of(s)->sentinels > 0 && scenario_external(s, ops->server)->n > 0) {
        scn_push_key(c, "lock");
        scn_push_key(c, "redis");
        scn_push_key(c, "sentinels");
        return scn_fail(c, "locklab starts the sentinels with the servers it manages; with "
                           "external Redis servers leave them out");
    }
    if (scenario_lacks(s, ops) & LACKS_TOKEN) {
        scn_push_key(c, "fencing");
        return scn_fail_if_file(c, json_true(), "algorithm \"%s\" gives no fencing tokens",
                                ops->name);
    }
    if (s->workload == WORKLOAD_SCHEDULED_TASKS && s->rate > 0) {
        scn_push_key(c, "rate");
        return scn_fail_if_file(c, number_json(s->rate),
                                "scheduled_tasks fires on its own timetable; open loop is for "
                                "flash_sale, cache_rebuild, order_ids, read_mostly and pool");
    }
    if (s->rate > 0 && s->rate * (double)s->duration_ms / 1000.0 < 1.0) {
        scn_push_key(c, "rate");
        return scn_fail_if_file(c, number_json(s->rate),
                                "%g steps/s makes less than one step in the %g s run", s->rate,
                                (double)s->duration_ms / 1000.0);
    }
    if (s->workload == WORKLOAD_SCHEDULED_TASKS && finish_tasks(c, s) < 0)
        return -1;
    /* The invariants add up every item's stock in 64 bits. */
    if (s->workload == WORKLOAD_FLASH_SALE && s->flash_sale.stock > 0 &&
        s->flash_sale.items > INT64_MAX / s->flash_sale.stock) {
        scn_push_key(c, "workload");
        scn_push_key(c, "stock");
        return scn_fail_if_file(c, json_integer(s->flash_sale.stock),
                                "%" PRId64 " per item times %" PRIu32
                                " items is more stock than 64 bits can count",
                                s->flash_sale.stock, s->flash_sale.items);
    }
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
