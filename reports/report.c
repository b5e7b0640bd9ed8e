/* report.c - what the renderers share. */
#include "reports/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/hgrm.h"
#include "reports/hlog.h"
#include "sim/record/hiccup.h"
#include "sim/record/histogram.h"
#include "sim/record/intervals.h"
#include "sim/scenario/scenario.h"
#include "sim/workloads/workload.h"

static const char *const op_names[OP_COUNT] = {
    [OP_ACQUIRE] = "acquire", [OP_ACQUIRE_FAILED] = "acquire_failed",
    [OP_RELEASE] = "release", [OP_HOLD] = "hold",
    [OP_STEP] = "step",
};

static const char *const effect_names[EFFECT_COUNT] = {
    [EFFECT_APPLIED] = "applied",
    [EFFECT_NONE] = "none",
    [EFFECT_FENCED] = "fenced",
    [EFFECT_CRASHED] = "crashed",
};

const double report_percentiles[REPORT_N_PERCENTILES] = {50, 90, 99, 99.9, 100};

const char *report_op_name(int op)
{
    return op >= 0 && op < OP_COUNT ? op_names[op] : "?";
}

const char *report_effect_name(int effect)
{
    if (effect == EFFECT_OPEN)
        return "open"; /* never released before the history ended */
    return effect >= 0 && effect < EFFECT_COUNT ? effect_names[effect] : "?";
}

const char *report_seconds(uint64_t ms, char *buf, size_t len)
{
    return figure_seconds(ms, buf, len);
}

const char *report_token(uint64_t token, char *buf, size_t len)
{
    if (token == 0)
        snprintf(buf, len, "-"); /* tokens start at 1: 0 is a grant without one */
    else
        snprintf(buf, len, "%" PRIu64, token);
    return buf;
}

double report_rel_s(const struct run_result *r, uint64_t mono_ns)
{
    return ((double)mono_ns - (double)r->t0_mono_ns) / 1e9;
}

uint64_t report_ambiguous(const struct run_result *r, int errors, int no_effect)
{
    return r->stat[errors] - r->stat[no_effect];
}

const char *report_op_counts(const struct run_result *r, char *buf, size_t len)
{
    snprintf(buf, len,
             "acquire: %" PRIu64 " ok, %" PRIu64 " busy, %" PRIu64 " no effect, %" PRIu64
             " ambiguous;  release: %" PRIu64 " ok, %" PRIu64 " lost, %" PRIu64
             " no effect, %" PRIu64 " ambiguous;  renew: %" PRIu64 " ok, %" PRIu64 " lost, %" PRIu64
             " no effect, %" PRIu64 " ambiguous",
             r->stat[ST_ACQUIRE_OK], r->stat[ST_ACQUIRE_BUSY], r->stat[ST_ACQUIRE_NO_EFFECT],
             report_ambiguous(r, ST_ACQUIRE_ERR, ST_ACQUIRE_NO_EFFECT), r->stat[ST_RELEASE_OK],
             r->stat[ST_RELEASE_LOST], r->stat[ST_RELEASE_NO_EFFECT],
             report_ambiguous(r, ST_RELEASE_ERR, ST_RELEASE_NO_EFFECT), r->stat[ST_RENEW_OK],
             r->stat[ST_RENEW_LOST], r->stat[ST_RENEW_NO_EFFECT],
             report_ambiguous(r, ST_RENEW_ERR, ST_RENEW_NO_EFFECT));
    size_t used = strlen(buf);
    /* the guards in front of the lock, when the scenario has them */
    if (r->scn->limit_rate > 0 && used < len)
        used += (size_t)snprintf(buf + used, len - used,
                                 ";  token bucket (%g/s): %" PRIu64 " acquires refused unsent",
                                 r->scn->limit_rate, r->stat[ST_ACQUIRE_LIMITED]);
    if ((r->stat[ST_BREAKER_OPENED] || r->stat[ST_DEGRADED_STEPS]) && used < len)
        snprintf(buf + used, len - used,
                 ";  breaker: opened %" PRIu64 " time%s, %" PRIu64
                 " purchases degraded (no lock), %" PRIu64 " orders by them",
                 r->stat[ST_BREAKER_OPENED], r->stat[ST_BREAKER_OPENED] == 1 ? "" : "s",
                 r->stat[ST_DEGRADED_STEPS], r->stat[ST_DEGRADED_ORDERS]);
    return buf;
}

const char *report_fault_plan(const struct fault_spec *f, char *buf, size_t len)
{
    return fault_plan(f, buf, len);
}

const char *report_fault_done(const struct run_result *r, const struct fault_record *x, char *buf,
                              size_t len)
{
    bool holder = fault_on_holder(&x->spec), waiter = fault_on_waiter(&x->spec);
    if (!x->fired)
        snprintf(buf, len, "never fired%s",
                 holder   ? " (no holder after its time)"
                 : waiter ? " (no client waited inside acquire after its time)"
                          : " (the run ended first)");
    else if (fault_on_client(x->spec.kind))
        snprintf(buf, len, "client %" PRIu32 " %s %s", x->client,
                 waiter ? "waiting for" : "holding",
                 x->key < r->hist.n_keys ? r->hist.keys[x->key] : "?");
    else
        snprintf(buf, len, "%s%s%s%s%s", x->detail[0] ? x->detail : "nothing done",
                 x->end_detail[0] ? "; then " : "", x->end_detail, x->error[0] ? "; failed: " : "",
                 x->error);
    return buf;
}

const char *report_availability(const struct fault_availability *a, uint32_t type, char *buf,
                                size_t len)
{
    char rec[64];
    if (a->recovery_ns == AVAIL_NEVER)
        snprintf(rec, sizeof(rec), "no acquisition after its %s",
                 fault_recovers_from_start(type) ? "start" : "end");
    else
        snprintf(rec, sizeof(rec), "recovered %.3f s after its %s", (double)a->recovery_ns / 1e9,
                 fault_recovers_from_start(type) ? "start" : "end");
    snprintf(buf, len,
             "%" PRIu64 " granted (%" PRIu64 " begun during it), %" PRIu64 " failed, %" PRIu64
             " ambiguous; longest no grant %.3f s; %s",
             a->granted, a->granted_within, a->failed, a->ambiguous,
             (double)a->longest_no_grant_ns / 1e9, rec);
    return buf;
}

json_t *report_availability_json(const struct fault_availability *a)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:f, s:o}", "granted", (json_int_t)a->granted,
                     "granted_within", (json_int_t)a->granted_within, "failed",
                     (json_int_t)a->failed, "ambiguous", (json_int_t)a->ambiguous,
                     "longest_no_grant_ms", (double)a->longest_no_grant_ns / 1e6, "recovery_ms",
                     a->recovery_ns == AVAIL_NEVER ? json_null()
                                                   : json_real((double)a->recovery_ns / 1e6));
}

void report_fault_cost_add(struct fault_cost *x, const struct fault_availability *a)
{
    double no_grant_ms = (double)a->longest_no_grant_ns / 1e6;
    x->windows++;
    x->granted += a->granted;
    x->granted_within += a->granted_within;
    x->failed += a->failed;
    x->ambiguous += a->ambiguous;
    if (no_grant_ms > x->longest_no_grant_ms)
        x->longest_no_grant_ms = no_grant_ms;
    if (a->recovery_ns == AVAIL_NEVER)
        x->recovered = false;
    else if ((double)a->recovery_ns / 1e6 > x->recovery_ms)
        x->recovery_ms = (double)a->recovery_ns / 1e6;
}

const char *report_checker(const struct check_result *c, char *buf, size_t len)
{
    int at = snprintf(
        buf, len, "%" PRIu64 " sections, %" PRIu64 " violation%s (%" PRIu64 " overlapping pair%s",
        c->sections, c->violations, c->violations == 1 ? "" : "s", c->overlaps,
        c->overlaps == 1 ? "" : "s");
    if (at > 0 && (size_t)at < len)
        snprintf(buf + at, len - (size_t)at,
                 c->fenced_pairs ? ", %" PRIu64 " of them made safe by fencing)" : ")",
                 c->fenced_pairs);
    return buf;
}

uint64_t report_stuck_floor_ns(const struct run_result *r)
{
    return r->scn ? (uint64_t)r->scn->retry_max_ms * 1000000u : 0;
}

/* The keys with a stretch past the floor: a prefix, as r->stuck is
 * longest first. */
static size_t stuck_keys(const struct run_result *r)
{
    size_t n = 0;
    while (n < r->n_stuck && r->stuck[n].longest_ns > report_stuck_floor_ns(r))
        n++;
    return n;
}

double report_stuck_ms(const struct run_result *r)
{
    return stuck_keys(r) ? (double)r->stuck[0].longest_ns / 1e6 : 0;
}

const char *report_stuck(const struct run_result *r, char *buf, size_t len)
{
    size_t n = stuck_keys(r);
    if (n == 0)
        return NULL;
    const struct stuck_key *k = &r->stuck[0];
    int at =
        snprintf(buf, len, "longest %.3f s on %s from %.3f s (%zu key%s had waiters and no holder",
                 (double)k->longest_ns / 1e9, k->key < r->hist.n_keys ? r->hist.keys[k->key] : "?",
                 report_rel_s(r, k->longest_from_ns), n, n == 1 ? "" : "s");
    if (at > 0 && (size_t)at < len && report_stuck_floor_ns(r) > 0)
        snprintf(buf + at, len - (size_t)at, " longer than the %.0f ms retry back-off)",
                 (double)report_stuck_floor_ns(r) / 1e6);
    else if (at > 0 && (size_t)at < len)
        snprintf(buf + at, len - (size_t)at, ")");
    return buf;
}

json_t *report_stuck_json(const struct run_result *r)
{
    json_t *keys = json_array();
    for (size_t i = 0; i < r->n_stuck && i < 10; i++) {
        const struct stuck_key *k = &r->stuck[i];
        json_array_append_new(keys, json_pack("{s:s, s:f, s:f, s:f, s:I}", "key",
                                              k->key < r->hist.n_keys ? r->hist.keys[k->key] : "?",
                                              "longest_ms", (double)k->longest_ns / 1e6, "from_s",
                                              report_rel_s(r, k->longest_from_ns), "total_ms",
                                              (double)k->total_ns / 1e6, "stretches",
                                              (json_int_t)k->stretches));
    }
    return json_pack("{s:f, s:I, s:f, s:f, s:I, s:o}", "longest_ms",
                     r->n_stuck ? (double)r->stuck[0].longest_ns / 1e6 : 0.0, "keys",
                     (json_int_t)r->n_stuck, "floor_ms", (double)report_stuck_floor_ns(r) / 1e6,
                     "stuck_ms", report_stuck_ms(r), "stuck_keys", (json_int_t)stuck_keys(r),
                     "longest", keys);
}

static uint64_t stall_len(const struct host_stall *s)
{
    return s->to_ns - s->from_ns;
}

/* The time the testbed stood still, in all. */
static uint64_t stalled_ns(const struct run_result *r)
{
    uint64_t total = 0;
    for (size_t i = 0; i < r->n_stalls; i++)
        total += stall_len(&r->stalls[i]);
    return total;
}

/* The longest of the stalls, at most k of them, longest first: picked
 * one at a time, as k is small and a run has few stalls. */
static size_t longest_stalls(const struct run_result *r, size_t *pick, size_t k)
{
    size_t n = 0;
    for (; n < k; n++) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < r->n_stalls; i++) {
            bool taken = false;
            for (size_t j = 0; j < n; j++)
                taken = taken || pick[j] == i;
            if (!taken &&
                (best == SIZE_MAX || stall_len(&r->stalls[i]) > stall_len(&r->stalls[best])))
                best = i;
        }
        if (best == SIZE_MAX)
            break;
        pick[n] = best;
    }
    return n;
}

const char *report_host(const struct run_result *r, char *buf, size_t len)
{
    if (!r->hist.metered)
        return NULL;
    size_t used = 0, top = 0;
    if (longest_stalls(r, &top, 1) == 0)
        report_append(buf, len, &used, "no stall of %d ms or more", HICCUP_FLOOR_MS);
    else
        report_append(buf, len, &used,
                      "%zu stall%s of %d ms or more, longest %.3f s at %.3f s, %.3f s in all",
                      r->n_stalls, r->n_stalls == 1 ? "" : "s", HICCUP_FLOOR_MS,
                      (double)stall_len(&r->stalls[top]) / 1e9,
                      report_rel_s(r, r->stalls[top].from_ns), (double)stalled_ns(r) / 1e9);
    if (r->hist.slack_ms)
        report_append(buf, len, &used, "; the lock rides out a holder's stall of %.3f s",
                      (double)r->hist.slack_ms / 1e3);
    else
        report_append(buf, len, &used, "; the lock's lease does not outlast its hold");
    return buf;
}

json_t *report_host_json(const struct run_result *r)
{
    size_t pick[10] = {0};
    size_t n = longest_stalls(r, pick, 10);
    json_t *longest = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct host_stall *s = &r->stalls[pick[i]];
        json_array_append_new(longest, json_pack("{s:f, s:f}", "at_s", report_rel_s(r, s->from_ns),
                                                 "ms", (double)stall_len(s) / 1e6));
    }
    return json_pack("{s:b, s:i, s:i, s:i, s:I, s:f, s:f, s:o}", "metered", r->hist.metered,
                     "period_ms", HICCUP_PERIOD_MS, "floor_ms", HICCUP_FLOOR_MS, "slack_ms",
                     (int)r->hist.slack_ms, "stalls", (json_int_t)r->n_stalls, "longest_ms",
                     n ? (double)stall_len(&r->stalls[pick[0]]) / 1e6 : 0.0, "stalled_ms",
                     (double)stalled_ns(r) / 1e6, "longest", longest);
}

const char *report_span_name(const struct run_result *r, const struct fault_span *f, char *buf,
                             size_t len)
{
    const char *name = fault_type_name(f->type);
    if (f->client >= 0)
        snprintf(buf, len, "%s (client %d)", name, f->client);
    else if (f->servers < r->hist.n_notes)
        snprintf(buf, len, "%s %s", name, r->hist.notes[f->servers]);
    else
        snprintf(buf, len, "%s", name);
    return buf;
}

void report_append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
    if (*used >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, len - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used += (size_t)n < len - *used ? (size_t)n : len - *used - 1;
}

void report_violation_faults(const struct run_result *r, const struct violation *v, char *buf,
                             size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < v->n_faults && i < CHECK_MAX_FAULTS_PER_VIOLATION; i++) {
        char one[96];
        report_append(buf, len, &used, "%s%s", i ? ", " : "",
                      report_span_name(r, &r->spans[v->faults[i]], one, sizeof(one)));
    }
    /* a stall the lock is built to ride out explains nothing: left unsaid */
    if (result_stall_past_slack(r, v->stall_ns))
        report_append(buf, len, &used, "%shost stall %.0f ms at %.3f s", used ? ", " : "",
                      (double)v->stall_ns / 1e6, report_rel_s(r, v->stall_from_ns));
}

const char *report_verdict(const struct run_result *r)
{
    return !r->complete ? "INCOMPLETE" : r->passed ? "PASS" : "FAIL";
}

const char *report_failure(const struct run_result *r, char *buf, size_t len)
{
    if (r->passed)
        return NULL;
    if (!r->witness_agrees) {
        snprintf(buf, len,
                 "the online witness saw %llu concurrent entries, the checker %llu (testbed bug)",
                 (unsigned long long)r->witness_concurrent,
                 (unsigned long long)r->check.concurrent_entries);
        return buf;
    }
    if (r->hist.dropped) {
        snprintf(buf, len, "%llu history events were lost (out of memory): no verdict",
                 (unsigned long long)r->hist.dropped);
        return buf;
    }
    for (size_t i = 0; i < r->n_expects; i++) {
        const struct expect_record *e = &r->expects[i];
        if (!e->met) {
            snprintf(buf, len, "%s: expected %s, got %s", e->what, e->want, e->got);
            return buf;
        }
    }
    snprintf(buf, len, "unknown");
    return buf;
}

int report_hgrm_files(const char *dir, const struct run_result *r)
{
    for (int k = 0; k < OP_COUNT; k++) {
        /* Empty ones too: a reused --out folder must not keep a stale file. */
        char path[640];
        snprintf(path, sizeof(path), "%s/%s.hgrm", dir, report_op_name(k));
        FILE *f = fopen(path, "w");
        if (f == NULL)
            return -1;
        int rc = hgrm_write(f, r->ops[k], 1000.0, 5);
        if (fclose(f) != 0 || rc < 0)
            return -1;
    }
    return 0;
}

int report_close(FILE *f)
{
    int failed = ferror(f);
    if (fclose(f) != 0 || failed) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

struct hlog_ctx {
    FILE *f;
    double elapsed_s;
};

static int hlog_second(void *arg, uint32_t second, const struct histogram *h)
{
    const struct hlog_ctx *c = arg;
    return hlog_interval(c->f, h, second, c->elapsed_s);
}

int report_hlog_files(const char *dir, const struct run_result *r)
{
    for (int k = 0; k < OP_COUNT; k++) {
        char path[640];
        snprintf(path, sizeof(path), "%s/%s.hlog", dir, report_op_name(k));
        struct hlog_ctx c = {fopen(path, "w"), r->elapsed_s};
        if (c.f == NULL)
            return -1;
        int rc = hlog_begin(c.f, r->t0_wall_ns);
        errno = 0;
        if (rc == 0 && intervals_each(r->intervals, r->n_intervals, k, (uint32_t)r->tl_len,
                                      hlog_second, &c) != 0) {
            rc = -1;
            if (errno == 0)
                errno = ENOMEM;
        }
        if (report_close(c.f) < 0)
            rc = -1;
        if (rc < 0)
            return -1;
    }
    return 0;
}

const char *report_invariant_mark(const struct invariant *inv)
{
    return inv->holds ? "ok" : inv->advisory ? "~" : "!!!";
}

const char *report_workload(const struct scenario *s, char *buf, size_t len)
{
    struct workload_run run;
    scenario_workload_run(s, &run);
    s->workload->describe(scenario_workload(s), &run, buf, len);
    return buf;
}

static double mean_lag_s(const struct load_record *l)
{
    return l->started ? (double)l->lag_sum_ns / (double)l->started / 1e9 : 0.0;
}

const char *report_load(const struct run_result *r, char *buf, size_t len)
{
    const struct load_record *l = &r->load;
    if (l->rate <= 0) {
        snprintf(buf, len,
                 "closed loop: each client began its next step as soon as the last ended, so a "
                 "stall delayed the steps behind it instead of showing in their latency");
        return buf;
    }
    snprintf(buf, len,
             "open loop at %g steps/s: %" PRIu64 " of %" PRIu64
             " due steps began, up to %.3f s behind schedule (mean %.3f s); latency counts from "
             "each step's due time",
             l->rate, l->started, l->steps_due, (double)l->lag_max_ns / 1e9, mean_lag_s(l));
    return buf;
}

json_t *report_load_json(const struct run_result *r)
{
    const struct load_record *l = &r->load;
    if (l->rate <= 0)
        return json_pack("{s:s}", "mode", "closed");
    return json_pack("{s:s, s:f, s:I, s:I, s:I, s:f, s:f}", "mode", "open", "rate", l->rate,
                     "steps_due", (json_int_t)l->steps_due, "steps_started", (json_int_t)l->started,
                     "steps_missed",
                     (json_int_t)(l->steps_due > l->started ? l->steps_due - l->started : 0),
                     "max_lag_ms", (double)l->lag_max_ns / 1e6, "mean_lag_ms", mean_lag_s(l) * 1e3);
}

/* The grants of each client: the run's counters, or (a result read from
 * a history) the acquire ok lines. */
static void count_grants(const struct run_result *r, uint64_t *per, uint32_t n)
{
    if (r->grants && r->n_grants == n) {
        memcpy(per, r->grants, n * sizeof(*per));
        return;
    }
    for (size_t k = 0; k < r->hist.n; k++) {
        const struct history_event *e = &r->hist.ev[k];
        if (e->f == HF_ACQUIRE && e->type == HT_OK && e->client < n)
            per[e->client]++;
    }
}

uint64_t *report_fairness(const struct run_result *r, struct report_fairness *out)
{
    *out = (struct report_fairness){.clients = r->hist.clients, .min = UINT64_MAX};
    uint32_t n = r->hist.clients;
    uint64_t *per = n ? calloc(n, sizeof(*per)) : NULL;
    if (per == NULL) {
        *out = (struct report_fairness){0};
        return NULL;
    }
    count_grants(r, per, n);
    for (uint32_t i = 0; i < n; i++) {
        out->total += per[i];
        if (per[i] > out->max || i == 0)
            out->max = per[i], out->at_max = i;
        if (per[i] < out->min)
            out->min = per[i], out->at_min = i;
    }
    return per;
}

const char *report_fairness_ratio(const struct report_fairness *fr, char *buf, size_t len)
{
    if (fr->clients == 0)
        snprintf(buf, len, "-");
    else if (fr->min == 0)
        snprintf(buf, len, "inf");
    else
        snprintf(buf, len, "%.2f", (double)fr->max / (double)fr->min);
    return buf;
}
