/* json_report.c - report.json, for tools. Format: docs/report-json.md;
 * JSON Schema: docs/schema/report.schema.json (tests/runs/test_schemas.sh).
 * Times are in milliseconds (latencies) or seconds since the run's start
 * line (events); counts are integers. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <time.h>

#include "reports/report.h"
#include "reports/violation_groups.h"
#include "sim/check/context.h"
#include "sim/record/histogram.h"
#include "sim/scenario/scenario.h"

/* /2: checker.fenced became fenced_pairs, checker.fenced_accesses became
 * rejected_accesses, and so did the expectation's name in expect[].what.
 * /3: counters.*_unsent became *_no_effect (refused ones were sent too),
 * the old names kept beside them until /4. */
#define SCHEMA "locklab.report/3"

static json_t *op_stats(const struct run_result *r, const struct histogram *h)
{
    uint64_t n = (uint64_t)h->total_count;
    json_t *o = json_pack("{s:I, s:f}", "count", (json_int_t)n, "qps", result_qps(r, n));
    if (n == 0)
        return o;
    static const struct {
        const char *name;
        double p;
    } pts[] = {
        {"p50_ms", 50}, {"p90_ms", 90}, {"p99_ms", 99}, {"p999_ms", 99.9}, {"p9999_ms", 99.99}};
    json_object_set_new(o, "mean_ms", json_real(histogram_mean(h) / 1000.0));
    json_object_set_new(o, "stddev_ms", json_real(histogram_stddev(h) / 1000.0));
    json_object_set_new(o, "min_ms", json_real((double)h->min / 1000.0));
    for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++)
        json_object_set_new(o, pts[i].name,
                            json_real((double)histogram_percentile(h, pts[i].p) / 1000.0));
    json_object_set_new(o, "max_ms", json_real((double)h->max / 1000.0));
    /* the chosen ones (--percentiles), keyed as memtier's JSON keys them */
    const double *pct;
    size_t n_pct = report_chosen_percentiles(r, &pct);
    json_t *chosen = json_object();
    for (size_t i = 0; i < n_pct; i++) {
        char key[40];
        json_object_set_new(chosen, report_percentile_key(pct[i], key, sizeof(key)),
                            json_real((double)histogram_percentile(h, pct[i]) / 1000.0));
    }
    json_object_set_new(o, "percentiles", chosen);
    return o;
}

static json_t *section_json(const struct run_result *r, const struct section *s)
{
    return json_pack("{s:i, s:s, s:I, s:f, s:f, s:s}", "client", s->client, "owner",
                     s->owner < r->hist.n_owners ? r->hist.owners[s->owner] : "?", "token",
                     (json_int_t)s->token, "from_s", report_rel_s(r, s->from_ns), "to_s",
                     report_rel_s(r, s->to_ns), "effect", report_effect_name(s->effect));
}

static json_t *checker_json(const struct run_result *r)
{
    const struct check_result *c = &r->check;
    json_t *listed = json_array();
    for (size_t i = 0; i < c->n_list; i++) {
        const struct violation *v = &c->list[i];
        const struct section *a = violation_first(r, v), *b = violation_second(r, v);
        json_t *faults = report_fault_spans_json(r, v->faults, v->n_faults);
        json_t *one = json_pack("{s:s, s:b, s:f, s:o, s:o, s:o, s:f}", "key", r->hist.keys[a->key],
                                "fenced", v->fenced, "overlap_ms", (double)v->overlap_ns / 1e6, "a",
                                section_json(r, a), "b", section_json(r, b), "faults", faults,
                                "host_stall_ms", (double)v->stall_ns / 1e6);
        if (v->stall_ns)
            json_object_set_new(one, "host_stall_at_s",
                                json_real(report_rel_s(r, v->stall_from_ns)));
        json_array_append_new(listed, one);
    }
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:I, s:I, s:I, s:o}", "sections",
                     (json_int_t)c->sections, "overlaps", (json_int_t)c->overlaps, "fenced_pairs",
                     (json_int_t)c->fenced_pairs, "violations", (json_int_t)c->violations,
                     "concurrent_entries", (json_int_t)c->concurrent_entries,
                     "witness_concurrent_entries", (json_int_t)r->witness_concurrent,
                     "witness_agrees", r->witness_agrees, "rejected_accesses",
                     (json_int_t)r->rejected_accesses, "history_events",
                     (json_int_t)r->history_events, "history_dropped", (json_int_t)r->hist.dropped,
                     "lost_at_release", (json_int_t)r->lost_at_release, "listed", listed);
}

static json_t *server_fault_json(const struct fault_record *x, json_t *o)
{
    json_object_set_new(o, "servers", json_string(x->servers));
    json_object_set_new(o, "detail", json_string(x->detail));
    json_object_set_new(o, "end_detail", json_string(x->end_detail));
    json_object_set_new(o, "healed_at_end", json_boolean(x->healed));
    json_object_set_new(o, "error", x->error[0] ? json_string(x->error) : json_null());
    return o;
}

static json_t *faults_json(const struct run_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->n_faults; i++) {
        const struct fault_record *x = &r->faults[i];
        json_t *o = report_fault_spec_json(&x->spec);
        json_object_set_new(o, "family", json_string(fault_band(x->spec.kind)));
        json_object_set_new(o, "fired", json_boolean(x->fired));
        if (x->fired) {
            if (fault_on_servers(x->spec.kind) || fault_on_network(x->spec.kind)) {
                server_fault_json(x, o);
                if (fault_on_network(x->spec.kind) && x->spec.scope != NET_NODES &&
                    x->spec.scope != NET_CLIENTS)
                    json_object_set_new(o, "client", json_integer(x->client));
            } else {
                json_object_set_new(o, "client", json_integer(x->client));
                json_object_set_new(
                    o, "key", json_string(x->key < r->hist.n_keys ? r->hist.keys[x->key] : "?"));
            }
            json_object_set_new(o, "start_s", json_real(report_rel_s(r, x->start_ns)));
            json_object_set_new(o, "end_s",
                                x->ended ? json_real(report_rel_s(r, x->end_ns)) : json_null());
            const struct fault_availability *av = result_fault_availability(r, i);
            json_object_set_new(o, "availability", av ? report_availability_json(av) : json_null());
        }
        json_array_append_new(a, o);
    }
    return a;
}

/* The acquires granted, by the second each began (latency_timeline.h):
 * what the latency chart draws. */
static void begun_json(json_t *tl, const struct run_result *r)
{
    json_t *cnt = json_array(), *p50 = json_array(), *p99 = json_array(), *max = json_array();
    for (size_t s = 0; s < r->tl_len; s++) {
        const struct latency_second *l = &r->tl_begun[s];
        json_array_append_new(cnt, json_integer((json_int_t)l->count));
        json_array_append_new(p50, l->count ? json_real(l->p50_ms) : json_null());
        json_array_append_new(p99, l->count ? json_real(l->p99_ms) : json_null());
        json_array_append_new(max, l->count ? json_real(l->max_ms) : json_null());
    }
    json_object_set_new(tl, "begun_count", cnt);
    json_object_set_new(tl, "begun_p50_ms", p50);
    json_object_set_new(tl, "begun_p99_ms", p99);
    json_object_set_new(tl, "begun_max_ms", max);
}

static json_t *results_json(const struct run_result *r)
{
    json_t *inv = json_array(), *exp = json_array(), *ok = json_array(), *fail = json_array();
    json_t *p50 = json_array(), *p99 = json_array(), *max = json_array(), *cnt = json_array();
    for (size_t i = 0; i < r->n_inv; i++)
        json_array_append_new(inv, json_pack("{s:s, s:b, s:b, s:s}", "name", r->inv[i].name,
                                             "holds", r->inv[i].holds, "advisory",
                                             r->inv[i].advisory, "detail", r->inv[i].detail));
    for (size_t i = 0; i < r->n_expects; i++)
        json_array_append_new(exp, json_pack("{s:s, s:s, s:s, s:b}", "what", r->expects[i].what,
                                             "want", r->expects[i].want, "got", r->expects[i].got,
                                             "met", r->expects[i].met));
    for (size_t s = 0; s < r->tl_len; s++) {
        json_array_append_new(ok, json_integer(r->tl_ok[s]));
        json_array_append_new(fail, json_integer(r->tl_fail[s]));
        const struct latency_second *l = &r->tl_latency[s];
        json_array_append_new(cnt, json_integer((json_int_t)l->count));
        /* null where no acquire was granted that second */
        json_array_append_new(p50, l->count ? json_real(l->p50_ms) : json_null());
        json_array_append_new(p99, l->count ? json_real(l->p99_ms) : json_null());
        json_array_append_new(max, l->count ? json_real(l->max_ms) : json_null());
    }
    json_t *o = json_pack("{s:o, s:b, s:o, s:{s:o, s:o, s:o, s:o, s:o, s:o}}", "invariants", inv,
                          "invariants_hold", r->invariants_hold, "expect", exp, "timeline", "ok",
                          ok, "failed", fail, "acquire_count", cnt, "acquire_p50_ms", p50,
                          "acquire_p99_ms", p99, "acquire_max_ms", max);
    if (o != NULL && r->tl_begun != NULL)
        begun_json(json_object_get(o, "timeline"), r);
    return o;
}

static json_t *counters_json(const struct run_result *r)
{
    static const char *const names[ST_COUNT] = {
        "steps",           "acquire_ok",        "acquire_busy",      "acquire_errors",
        "release_ok",      "release_lost",      "release_errors",    "renew_ok",
        "renew_lost",      "renew_errors",      "crashes",           "pauses",
        "connect_errors",  "acquire_no_effect", "release_no_effect", "renew_no_effect",
        "woken_by_notice", "woken_by_timer",    "acquire_limited",   "breaker_opened",
        "degraded_steps",  "degraded_orders"};
    json_t *o = json_object();
    for (int k = 0; k < ST_COUNT; k++)
        json_object_set_new(o, names[k], json_integer((json_int_t)r->stat[k]));
    /* *_errors = *_no_effect (surely not in effect) + *_ambiguous (sent, no answer) */
    json_object_set_new(
        o, "acquire_ambiguous",
        json_integer((json_int_t)report_ambiguous(r, ST_ACQUIRE_ERR, ST_ACQUIRE_NO_EFFECT)));
    json_object_set_new(
        o, "release_ambiguous",
        json_integer((json_int_t)report_ambiguous(r, ST_RELEASE_ERR, ST_RELEASE_NO_EFFECT)));
    json_object_set_new(
        o, "renew_ambiguous",
        json_integer((json_int_t)report_ambiguous(r, ST_RENEW_ERR, ST_RENEW_NO_EFFECT)));
    /* the /2 names of *_no_effect, kept beside them for one version: gone in /4 */
    json_object_set_new(o, "acquire_unsent",
                        json_integer((json_int_t)r->stat[ST_ACQUIRE_NO_EFFECT]));
    json_object_set_new(o, "release_unsent",
                        json_integer((json_int_t)r->stat[ST_RELEASE_NO_EFFECT]));
    json_object_set_new(o, "renew_unsent", json_integer((json_int_t)r->stat[ST_RENEW_NO_EFFECT]));
    return o;
}

static void iso_time(uint64_t wall_ns, char *buf, size_t len)
{
    time_t t = (time_t)(wall_ns / 1000000000u);
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03uZ", (unsigned)(wall_ns / 1000000u % 1000u));
}

/* Per server: its address, and whether its traffic went through the proxy. */
static json_t *endpoints_json(const struct run_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->n_servers; i++)
        json_array_append_new(a, json_pack("{s:s, s:b, s:I}", "server", r->servers[i], "proxied",
                                           r->proxied[i], "listeners",
                                           (json_int_t)(r->proxied[i] ? r->proxy_listeners : 0)));
    return a;
}

static json_t *proxy_json(const struct run_result *r)
{
    if (!r->has_proxy)
        return json_null();
    const struct proxy_stats *p = &r->proxy;
    return json_pack("{s:I, s:I, s:I, s:I, s:I}", "connections", (json_int_t)p->connections,
                     "refused", (json_int_t)p->refused, "bytes_up", (json_int_t)p->bytes_up,
                     "bytes_down", (json_int_t)p->bytes_down, "bytes_dropped",
                     (json_int_t)p->bytes_dropped);
}

/* The figures a tool reads first (`locklab run --json - | jq .summary`),
 * each also in its own place below. */
static json_t *summary_json(const struct run_result *r, const struct report_safety *safety)
{
    const struct histogram *h = r->ops[OP_ACQUIRE];
    uint64_t n = (uint64_t)h->total_count;
    double ms[RESULT_MAX_PERCENTILES];
    report_chosen_ms(r, h, ms);
    json_t *o =
        json_pack("{s:s, s:b, s:I, s:f, s:I, s:I, s:f, s:o}", "verdict", report_verdict(r), "safe",
                  safety->safe, "violations", (json_int_t)r->check.violations, "elapsed_s",
                  r->elapsed_s, "steps", (json_int_t)r->stat[ST_STEPS], "acquired", (json_int_t)n,
                  "acquire_per_second", result_qps(r, n), "acquire_ms",
                  report_percentiles_json(r->percentiles, r->n_percentiles, ms, n > 0));
    /* the CSV's verdict columns (reports/csv.c), so the summary too stands alone */
    json_object_set_new(o, "invariants_hold", json_boolean(r->invariants_hold));
    json_object_set_new(o, "scenario", json_string(r->scn->name));
    json_object_set_new(o, "algorithm", json_string(r->algorithm));
    return o;
}

int report_json(const char *path, const struct run_result *r)
{
    char when[40], why[256];
    iso_time(r->t0_wall_ns, when, sizeof(when));
    const char *fail = report_failure(r, why, sizeof(why));
    json_t *ops = json_object(), *servers = json_array();
    for (int k = 0; k < OP_COUNT; k++)
        json_object_set_new(ops, report_op_name(k), op_stats(r, r->ops[k]));
    for (size_t i = 0; i < r->n_servers; i++)
        json_array_append_new(servers, json_string(r->servers[i]));
    struct report_safety safety = report_safety_of(r);
    json_t *root = json_pack(
        "{s:s, s:s, s:b, s:o, s:s, s:o, s:o, s:o, s:s, s:s, s:I, s:I, s:f, s:o, s:o, s:o, s:o, "
        "s:o}",
        "schema", SCHEMA, "locklab", LOCKLAB_VERSION, "complete", r->complete, "incomplete_reason",
        r->complete ? json_null() : json_string(r->incomplete_reason), "verdict", report_verdict(r),
        "failure", fail ? json_string(fail) : json_null(), "safety", report_safety_json(&safety),
        "scenario", report_scenario_json(r->scn), "algorithm", r->algorithm, "started_at", when,
        "start_mono_ns", (json_int_t)r->t0_mono_ns, "start_wall_ns", (json_int_t)r->t0_wall_ns,
        "elapsed_s", r->elapsed_s, "servers", servers, "operations", ops, "counters",
        counters_json(r), "checker", checker_json(r), "faults", faults_json(r));
    if (root == NULL) {
        errno = ENOMEM;
        return -1;
    }
    json_object_set_new(root, "summary", summary_json(r, &safety));
    json_object_set_new(
        root, "meta",
        report_meta_json(r->meta, r->t0_wall_ns, r->versions, r->n_servers, r->has_proxy));
    json_object_set_new(root, "load", report_load_json(r));
    json_object_set_new(root, "endpoints", endpoints_json(r));
    json_object_set_new(root, "proxy", proxy_json(r));
    json_object_set_new(root, "stuck_locks", report_stuck_json(r));
    json_object_set_new(root, "host", report_host_json(r));
    json_object_set_new(root, "violation_groups", report_groups_json(r, CONTEXT_WINDOWS));
    json_object_update_new(root, results_json(r));
    if (r->sample_error[0])
        json_object_set_new(root, "last_error", json_string(r->sample_error));
    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return rc == 0 ? 0 : -1;
}
