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

#include "sim/scenario/scenario.h"
#include "sim/workloads/workload.h"

__attribute__((format(printf, 2, 3))) static void note(struct scenario *s, const char *fmt, ...)
{
    if (s->n_resolved >= SCENARIO_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->resolved[s->n_resolved++], sizeof(s->resolved[0]), fmt, ap);
    va_end(ap);
}

uint32_t scenario_limit_burst(const struct scenario *s)
{
    uint32_t whole = (uint32_t)s->limit_rate;
    return s->limit_burst ? s->limit_burst : whole + (s->limit_rate > whole);
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
    const struct lock_family *kept = lock_family_with(ops->family, FAMILY_HOOK(lease_ms));
    if (!s->watchdog && kept && kept->kept_lease) {
        /* a lease of its own (etcd's whole seconds): its client keeps it alive at a third */
        s->renew_ms = scenario_lease_ms(s, ops) / 3;
        note(s, "lock.renew_ms: %" PRIu32 " = %s / 3 (%s)", s->renew_ms, kept->kept_lease, why);
        return;
    }
    s->renew_ms = s->ttl_ms / 3;
    if (s->renew_ms)
        note(s, "lock.renew_ms: %" PRIu32 " = ttl_ms / 3 (%s)", s->renew_ms, why);
    else
        note(s, "lock.renew_ms: 1, as ttl_ms / 3 is under 1 ms"), s->renew_ms = 1;
}

/* A family's note, into the scenario's. */
static void family_noted(void *ctx, const char *line)
{
    note(ctx, "%s", line);
}

static void resolve_workload(struct scenario *s, const struct lock_ops *ops)
{
    char line[sizeof(s->resolved[0])];
    if (s->workload->resolve && s->workload->resolve(scenario_workload(s), ops, line, sizeof(line)))
        note(s, "%s", line);
}

/* The defaults ops's families resolve, through the hook at offset (a
 * resolve_lease or a resolve), the family's own before its base's. */
static void resolve_families(struct scenario *s, const struct lock_ops *ops, size_t hook)
{
    const struct family_scene sc = {.ttl_ms = s->ttl_ms,
                                    .wait_ms = s->wait_ms,
                                    .named = scenario_external(s, ops->server)->n,
                                    .note = family_noted,
                                    .ctx = s};
    for (const struct lock_family *f = ops->family; f; f = f->base) {
        void (*resolve)(void *, const struct family_scene *);
        memcpy(&resolve, (const char *)f + hook, sizeof(resolve));
        if (resolve)
            resolve(scenario_settings_mut(s, f), &sc);
    }
}

void scenario_resolve(struct scenario *s, const struct lock_ops *ops)
{
    s->n_resolved = 0;
    /* first: the lease sets the keep-alive's period */
    resolve_families(s, ops, FAMILY_HOOK(resolve_lease));
    resolve_renew(s, ops);
    resolve_families(s, ops, FAMILY_HOOK(resolve));
    resolve_workload(s, ops);
}

uint32_t scenario_lease_ms(const struct scenario *s, const struct lock_ops *ops)
{
    if (ops->leaseless)
        return 0;
    const struct lock_family *f = lock_family_with(ops->family, FAMILY_HOOK(lease_ms));
    return f ? f->lease_ms(scenario_settings(s, f), s->ttl_ms) : s->ttl_ms;
}

uint32_t scenario_hold_ms(const struct scenario *s)
{
    return workload_hold_ms(s->workload, scenario_workload(s));
}
