/* settings.c - a scenario's effective settings, as the run header, `locklab
 * show` and report.json give them. They read the values scenario_resolve
 * left in the scenario, never a default of their own, so what is shown is
 * what runs. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "reports/report.h"
#include "sim/scenario/scenario.h"
#include "sim/workloads/workload.h"

static const struct lock_ops *ops_of(const struct scenario *s)
{
    return lock_find(s->algorithm); /* never NULL after scenario_load */
}

/* Does the header (and report.json) show fam's settings under s, run by
 * ops: the lock's own family's, or what the family says always shows. */
static bool family_shown(const struct scenario *s, const struct lock_ops *ops,
                         const struct lock_family *fam)
{
    bool own = false;
    for (const struct lock_family *f = ops ? ops->family : NULL; f; f = f->base)
        own = own || f == fam;
    return fam->shown ? fam->shown(scenario_settings(s, fam), own) : own;
}

static void print_lock(FILE *f, const struct scenario *s)
{
    const struct lock_ops *ops = ops_of(s);
    /* a lease the lock keeps alive is no watchdog the user asked for */
    char renew[64] = "watchdog=off";
    if (s->watchdog)
        snprintf(renew, sizeof(renew), "watchdog=on renew=%" PRIu32 "ms", s->renew_ms);
    else if (scenario_renews(s, ops))
        snprintf(renew, sizeof(renew), "lease kept alive renew=%" PRIu32 "ms", s->renew_ms);
    char permits[32] = "", bucket[64] = "";
    if (s->permits > 1)
        snprintf(permits, sizeof(permits), " permits=%" PRIu32, s->permits);
    if (s->limit_rate > 0)
        snprintf(bucket, sizeof(bucket), " rate_limit=%g/s burst=%" PRIu32, s->limit_rate,
                 scenario_limit_burst(s));
    fprintf(f,
            "  lock: ttl=%" PRIu32 "ms wait=%" PRIu32 "ms %s fencing=%s retry=%" PRIu32 "..%" PRIu32
            "ms%s%s\n",
            s->ttl_ms, s->wait_ms, renew, s->fencing ? "on" : "off", s->retry_min_ms,
            s->retry_max_ms, permits, bucket);
    for (size_t i = 0; i < lock_family_count(); i++) {
        const struct lock_family *fam = lock_family_line_at(i);
        if (fam->describe && family_shown(s, ops, fam)) {
            char line[200];
            fam->describe(scenario_settings(s, fam), line, sizeof(line));
            fprintf(f, "  %s\n", line);
        }
    }
}

void report_settings(FILE *f, const struct scenario *s)
{
    char wl[200];
    print_lock(f, s);
    fprintf(f, "  workload: %s\n", report_workload(s, wl, sizeof(wl)));
    for (size_t i = 0; i < s->n_resolved; i++)
        fprintf(f, "  default: %s\n", s->resolved[i]);
}

void report_expectation(FILE *f, const struct scenario *s)
{
    char buf[32];
    fprintf(f, "violations %s", expect_format(&s->expect.violations, buf, sizeof(buf)));
    if (s->expect.invariants != EXPECT_INV_UNSET)
        fprintf(f, ", invariants %s", s->expect.invariants == EXPECT_INV_HOLD ? "hold" : "broken");
    if (s->expect.rejected_accesses.op != EXPECT_UNSET)
        fprintf(f, ", rejected_accesses %s",
                expect_format(&s->expect.rejected_accesses, buf, sizeof(buf)));
}

/* One key of a plug-in's settings, by its type, as the file would write it. */
static json_t *setting_json(const struct setting_key *k, const void *settings)
{
    long long v = setting_int(k, settings);
    double x;
    switch (k->type) {
    case SETTING_U32:
    case SETTING_U64:
    case SETTING_I64:
        return json_integer((json_int_t)v);
    case SETTING_BOOL:
        return json_boolean(v);
    case SETTING_CHOICE:
        return json_string(v >= 0 && (size_t)v < k->n_names ? k->names[v] : "?");
    case SETTING_NUMBER:
        return memcpy(&x, (const char *)settings + k->offset, sizeof(x)), json_real(x);
    }
    return json_null();
}

/* The lock families' objects report.json gives, in the order of the keys
 * under "lock": each shown and reported one, every key of its table. */
static json_t *algorithm_json(const struct scenario *s, json_t *lock)
{
    const struct lock_ops *ops = ops_of(s);
    for (size_t i = 0; i < lock_family_count(); i++) {
        const struct lock_family *fam = lock_family_at(i);
        if (!fam->reported || !family_shown(s, ops, fam))
            continue;
        json_t *obj = json_object();
        for (size_t k = 0; obj && k < fam->table->n; k++)
            json_object_set_new(obj, fam->table->keys[k].key,
                                setting_json(&fam->table->keys[k], scenario_settings(s, fam)));
        json_object_set_new(lock, fam->key, obj);
    }
    return lock;
}

static json_t *report_lock_json(const struct scenario *s)
{
    json_t *lock =
        json_pack("{s:s, s:i, s:i, s:b, s:b, s:i, s:i, s:i}", "algorithm", s->algorithm, "ttl_ms",
                  s->ttl_ms, "wait_ms", s->wait_ms, "watchdog", s->watchdog, "lease_kept_alive",
                  !s->watchdog && scenario_renews(s, ops_of(s)), "renew_ms", s->renew_ms,
                  "retry_min_ms", s->retry_min_ms, "retry_max_ms", s->retry_max_ms);
    if (lock && s->permits > 1)
        json_object_set_new(lock, "permits", json_integer(s->permits));
    if (lock && s->limit_rate > 0) /* the burst the bucket really kept */
        json_object_set_new(
            lock, "rate_limit",
            json_pack("{s:f, s:i}", "rate", s->limit_rate, "burst", (int)scenario_limit_burst(s)));
    return lock ? algorithm_json(s, lock) : NULL;
}

/* The workload's type, then its own keys in its table's order. */
static json_t *workload_json(const struct scenario *s)
{
    const struct setting_table *t = &s->workload->keys;
    json_t *o = json_pack("{s:s}", "type", s->workload->name);
    for (size_t i = 0; o && i < t->n; i++)
        json_object_set_new(o, t->keys[i].key, setting_json(&t->keys[i], scenario_workload(s)));
    return o;
}

/* The fault's own expectations, in the short form; NULL when it states none. */
static json_t *fault_expect_json(const struct fault_expect *x)
{
    json_t *o = NULL;
    for (size_t k = 0; k < FAULT_EXPECTS; k++) {
        const struct expect_num *e = fault_expect_at(x, k);
        char buf[32];
        if (e->op == EXPECT_UNSET)
            continue;
        if (o == NULL)
            o = json_object();
        json_object_set_new(o, fault_expect_names[k],
                            json_string(expect_format(e, buf, sizeof(buf))));
    }
    return o;
}

json_t *report_fault_spec_json(const struct fault_spec *f)
{
    json_t *o = json_pack("{s:s, s:I, s:I}", "type", fault_type_name(f->kind), "at_ms",
                          (json_int_t)f->at_ms, "duration_ms", (json_int_t)f->duration_ms);
    json_t *x = fault_expect_json(&f->expect);
    if (x)
        json_object_set_new(o, "expect", x);
    fault_settings(f, o);
    return o;
}

json_t *report_scenario_json(const struct scenario *s)
{
    json_t *faults = json_array();
    for (size_t i = 0; i < s->n_faults; i++)
        json_array_append_new(faults, report_fault_spec_json(&s->faults[i]));
    json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:I, s:I, s:f, s:I, s:b, s:o, s:o, s:o}", "name",
                          s->name, "file", s->path, "description", s->description, "clients",
                          s->clients, "duration_ms", (json_int_t)s->duration_ms, "requests",
                          (json_int_t)s->requests, "rate", s->rate /* 0: closed loop */, "seed",
                          (json_int_t)s->seed, "fencing", s->fencing, "lock", report_lock_json(s),
                          "workload", workload_json(s), "faults", faults);
    json_t *notes = json_array();
    for (size_t i = 0; i < s->n_resolved; i++)
        json_array_append_new(notes, json_string(s->resolved[i]));
    json_object_set_new(o, "defaults", notes);
    return o;
}
