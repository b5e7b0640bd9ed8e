/* collect.c - runner_collect (runner.h): once the worker threads are
 * joined, their tallies (histograms, timelines), the clients' counters and
 * history buffers merged into one run_result, and the history checked (sections, faults, the
 * witness, the workload's invariants). Nothing here runs while a client
 * does, so nothing here needs a mutex.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/check/check_pass.h"
#include "sim/check/context.h"
#include "sim/check/result.h"
#include "sim/engine/client.h"
#include "sim/engine/record.h"
#include "sim/engine/resource.h"
#include "sim/engine/runner.h"
#include "sim/engine/runner_state.h"
#include "sim/engine/tally.h"
#include "sim/faults/nemesis.h"
#include "sim/record/hiccup.h"
#include "sim/record/histogram.h"
#include "sim/record/history.h"
#include "sim/record/latency_timeline.h"
#include "sim/workloads/workload.h"

/* Open loop: how many steps client cl's schedule had before the end (and
 * within its share of the request quota). */
static uint64_t steps_due(const struct client *cl)
{
    const struct scenario *s = cl->run->scn;
    double span = (double)(cl->run->deadline_ns - cl->run->t0_ns) / 1e9 * s->rate;
    uint64_t k = span > cl->id ? (uint64_t)((span - cl->id) / s->clients) : 0;
    while (k > 0 && step_due(cl, k - 1) >= cl->run->deadline_ns)
        k--;
    while (step_due(cl, k) < cl->run->deadline_ns)
        k++;
    if (s->requests && request_share(s, cl->id) < k)
        k = request_share(s, cl->id);
    return k;
}

static void merge_load(struct runner *r, struct run_result *res)
{
    res->load.rate = r->run.scn->rate;
    if (res->load.rate <= 0)
        return;
    for (uint32_t i = 0; i < r->n; i++) {
        const struct client *cl = &r->clients[i];
        res->load.steps_due += steps_due(cl);
        res->load.started += cl->next_step;
        res->load.lag_sum_ns += cl->lag_sum_ns;
        if (cl->lag_max_ns > res->load.lag_max_ns)
            res->load.lag_max_ns = cl->lag_max_ns;
    }
}

/* Each thread's seconds sealed and its interval log handed to the result:
 * the per-second figures are merged from those when they are written. */
static int merge_intervals(struct runner *r, struct run_result *res)
{
    res->intervals = calloc(r->n_threads ? r->n_threads : 1, sizeof(*res->intervals));
    if (res->intervals == NULL)
        return -1;
    for (uint32_t t = 0; t < r->n_threads; t++) {
        tally_finish(&r->tallies[t]);
        res->intervals[t] = r->tallies[t].log;
        memset(&r->tallies[t].log, 0, sizeof(r->tallies[t].log));
    }
    res->n_intervals = r->n_threads;
    return 0;
}

static int merge_measurements(struct runner *r, struct run_result *res)
{
    merge_load(r, res);
    if (merge_intervals(r, res) < 0)
        return -1;
    res->grants = calloc(r->n ? r->n : 1, sizeof(*res->grants));
    if (res->grants == NULL)
        return -1;
    res->n_grants = r->n;
    for (uint32_t i = 0; i < r->n; i++)
        res->grants[i] = client_stat(&r->clients[i], ST_ACQUIRE_OK);
    for (int k = 0; k < OP_COUNT; k++) {
        res->ops[k] = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS);
        if (res->ops[k] == NULL)
            return -1;
    }
    res->tl_len = r->tl_len;
    res->tl_ok = calloc(r->tl_len, sizeof(*res->tl_ok));
    res->tl_fail = calloc(r->tl_len, sizeof(*res->tl_fail));
    if (res->tl_ok == NULL || res->tl_fail == NULL)
        return -1;
    for (uint32_t t = 0; t < r->n_threads; t++) {
        const struct tally *ty = &r->tallies[t];
        for (int k = 0; k < OP_COUNT; k++)
            histogram_merge(res->ops[k], ty->h[k]);
        for (size_t s = 0; s < r->tl_len; s++) {
            res->tl_ok[s] += ty->tl_ok[s];
            res->tl_fail[s] += ty->tl_fail[s];
        }
    }
    for (uint32_t i = 0; i < r->n; i++) {
        const struct client *cl = &r->clients[i];
        for (int k = 0; k < ST_COUNT; k++)
            res->stat[k] += client_stat(cl, (enum stat_kind)k);
        /* Counted by the algorithm, wherever it (re)connected: inside a call,
         * a node redialled, a session that dropped. */
        res->stat[ST_CONNECT_ERR] += cl->lc.connect_failures;
        res->connects_refused += cl->lc.connect_refused;
        res->stat[ST_WOKEN_NOTICE] += cl->lc.woken_by_notice;
        res->stat[ST_WOKEN_TIMER] += cl->lc.woken_by_timer;
        if (cl->last_error[0] && !res->sample_error[0])
            snprintf(res->sample_error, sizeof(res->sample_error), "client %" PRIu32 ": %s", cl->id,
                     cl->last_error);
    }
    /* Trim the timeline to the seconds the run actually lasted. */
    size_t used = (size_t)ceil(res->elapsed_s);
    if (used < res->tl_len)
        res->tl_len = used ? used : 1;
    return 0;
}

/* The result's history: its start and end fields; its names come with its
 * events from the journal (check_journal), where they are. */
static void collect_history(struct runner *r, struct run_result *res)
{
    memset(&res->hist, 0, sizeof(res->hist));
    res->hist.start_mono_ns = res->t0_mono_ns;
    res->hist.start_wall_ns = res->t0_wall_ns;
    res->hist.end_mono_ns = res->end_mono_ns;
    snprintf(res->hist.scenario, sizeof(res->hist.scenario), "%s", r->run.scn->name);
    snprintf(res->hist.algorithm, sizeof(res->hist.algorithm), "%s", r->run.ops->name);
    res->hist.clients = r->n;
    res->hist.seed = r->run.scn->seed;
    res->hist.ttl_ms = record_lease_ms(r);
    res->hist.slack_ms = record_slack_ms(r);
    res->hist.metered = r->meter_ran;
    if (r->run.wl->ops->latch_settings) /* the judge's settings, for check */
        r->run.wl->ops->latch_settings(r->run.wl->settings, &res->hist.latch);
    for (uint32_t i = 0; i < r->n; i++)
        res->hist.dropped += history_buf_dropped(r->clients[i].hist);
    res->hist.dropped += history_buf_dropped(nemesis_history(r->run.nem));
    if (r->stall_log)
        res->hist.dropped += history_buf_dropped(r->stall_log);
}

/* Optimistic concurrency: every write that committed was applied. One the
 * store refused means two commits went through from one version: the
 * compare-and-set failed, which the business figures alone cannot show
 * (the refused write changes nothing). */
static void add_commit_invariant(const struct runner *r, struct run_result *res)
{
    if (!r->run.ops->optimistic || res->n_inv >= WORKLOAD_MAX_INVARIANTS)
        return;
    uint64_t lost = resource_lost_commits(r->run.wl->res);
    struct invariant *inv = &res->inv[res->n_inv++];
    *inv = (struct invariant){.name = "committed_writes_applied", .holds = lost == 0};
    snprintf(inv->detail, sizeof(inv->detail),
             "%" PRIu64 " writes committed but not applied (two commits from one version)", lost);
}

/* The check's one pass over the history also bins each acquire's latency
 * by the second it began (latency_timeline.h): the events are read there
 * anyway, so the clients' hot path records nothing more for it. */
struct check_feed {
    struct check_pass *p;
    struct begun_timeline *begun; /* NULL: out of memory, the chart falls back to by grant */
};

static int feed_check(void *ctx, const struct history_event *e)
{
    struct check_feed *cf = ctx;
    if (cf->begun)
        begun_event(cf->begun, e);
    return check_pass_event(cf->p, e) == 0 ? 0 : -1;
}

/* The by-begin timeline, once every event was read. */
static int finish_begun(struct run_result *res, struct begun_timeline *b)
{
    if (b == NULL)
        return 0;
    res->tl_begun = calloc(res->tl_len, sizeof(*res->tl_begun));
    if (res->tl_begun != NULL)
        begun_finish(b, res->tl_begun, res->tl_len);
    begun_free(b);
    return res->tl_begun ? 0 : -1;
}

static int feed_context(void *ctx, const struct history_event *e)
{
    return context_event(ctx, e) == 0 ? 0 : -1;
}

/* The sections the reports show around the listed violations: a second
 * pass, on their keys only (context.h). */
static int add_context(struct run_result *res, char *err, size_t errlen)
{
    if (res->check.n_list == 0)
        return 0;
    struct context *x = context_begin(res, CONTEXT_WINDOWS);
    if (x == NULL)
        return -1;
    if (journal_replay(res->journal, feed_context, x, NULL, err, errlen) != 0) {
        context_free(x);
        return -1;
    }
    return context_end(x, res->end_mono_ns, res);
}

/* The run's verdict comes from its history file, read back as `locklab
 * check` reads it, in one pass: memory bounded by the keys and the open
 * sections, whatever the run's length; its names are the file's. A file
 * that could not be written or read back cannot be judged. */
static int check_journal(struct runner *r, struct run_result *res)
{
    char err[512] = "";
    int werr = res->journal ? journal_error(res->journal) : EIO;
    struct check_pass *p = NULL;
    if (werr == 0) {
        p = check_pass_begin((uint64_t)record_lease_ms(r) * 1000000u, r->run.ops->optimistic);
        if (p == NULL)
            return -1;
        struct check_feed cf = {p, begun_new(r->run.t0_ns, res->tl_len, r->n)};
        if (journal_replay(res->journal, feed_check, &cf, &res->hist, err, sizeof(err)) == 0) {
            int rc = check_pass_end(p, res->end_mono_ns, res);
            if (finish_begun(res, cf.begun) < 0 || rc < 0)
                return -1;
            return add_context(res, err, sizeof(err)) < 0 ? -1 : 0;
        }
        begun_free(cf.begun);
        check_pass_free(p);
        werr = journal_error(res->journal); /* its last bytes, flushed to be read back */
    }
    res->complete = false;
    if (werr) /* as cmd_run says it of any file of the record */
        snprintf(res->incomplete_reason, sizeof(res->incomplete_reason),
                 "the run's record could not be written (cannot write %.400s: %s)",
                 res->journal && journal_path(res->journal)[0] ? journal_path(res->journal)
                                                               : "its history",
                 strerror(werr));
    else
        snprintf(res->incomplete_reason, sizeof(res->incomplete_reason),
                 "the run's history could not be read back: %.560s",
                 err[0] ? err : "its events came out of order");
    return 0;
}

/* A client fault names its key by the workload's id; the reports look keys
 * up in the history read back, whose ids follow first use. The same name,
 * found there (UINT32_MAX, printed "?", if the history never used it). */
static void history_keys_of_faults(const struct runner *r, struct run_result *res)
{
    const struct workload *wl = r->run.wl;
    for (size_t i = 0; i < res->n_faults; i++) {
        struct fault_record *x = &res->faults[i];
        if (!x->fired || !fault_on_client(x->spec.kind))
            continue;
        uint32_t id = UINT32_MAX;
        for (size_t k = 0; x->key < wl->n_keys && k < res->hist.n_keys && id == UINT32_MAX; k++)
            if (strcmp(res->hist.keys[k], wl->keys[x->key]) == 0)
                id = (uint32_t)k;
        x->key = id;
    }
}

static int check_safety(struct runner *r, struct run_result *res)
{
    if (check_journal(r, res) < 0)
        return -1;
    struct resource *rs = r->run.wl->res;
    res->witness_concurrent = resource_concurrent_entries(rs);
    res->witness_agrees = res->witness_concurrent == res->check.concurrent_entries;
    res->rejected_accesses = resource_rejected(rs);
    res->n_inv = r->run.wl->ops->invariants(r->run.wl, res->inv, WORKLOAD_MAX_INVARIANTS);
    add_commit_invariant(r, res);
    res->invariants_hold = true;
    for (size_t i = 0; i < res->n_inv; i++)
        if (!res->inv[i].advisory)
            res->invariants_hold = res->invariants_hold && res->inv[i].holds;
    res->n_faults = nemesis_report(r->run.nem, res->faults, SCENARIO_MAX_FAULTS);
    history_keys_of_faults(r, res);
    return 0;
}

/* Every client connected at the start line; a connect refused after it (or
 * a ZooKeeper connection that dropped) means a server went away: an
 * external one, which no PID watch can see. Unless a fault of the
 * scenario explains it (a process fault; a network fault or a client
 * pause, whose held connections a ZooKeeper client drops), nothing does: the run did not test the
 * lock it names, and must not pass. A slow server is not a lost one: a Redlock node dropped for
 * answering late counts in connect_errors only. */
static void lost_servers(struct run_result *res)
{
    /* these faults explain refusals and drops: that is what they do */
    if (res->connects_refused == 0 || !res->complete || scenario_has_server_faults(res->scn) ||
        scenario_needs_proxy(res->scn))
        return;
    res->complete = false;
    snprintf(res->incomplete_reason, sizeof(res->incomplete_reason),
             "lost contact with the servers: %" PRIu64 " connects refused or dropped during the "
             "run (%s)",
             res->connects_refused, res->sample_error[0] ? res->sample_error : "no error text");
}

/* A run in which no acquire ever succeeded, and every one that failed
 * never reached a server or got no answer, never tested the lock: a
 * server killed at the start line, or too slow to answer any client
 * (etcd's gateway at 10,000 lease grants at once), would otherwise leave a
 * clean, empty history, safe by default. It cannot pass. A lock that
 * refused every grant (WAIT short of its replicas, the server saying no)
 * was tested: it chose not to grant. */
static void never_granted(struct run_result *res)
{
    uint64_t errors = res->stat[ST_ACQUIRE_ERR];
    if (!res->complete || res->stat[ST_ACQUIRE_OK] > 0 || errors == 0 ||
        res->unreached_acquires != errors)
        return;
    res->complete = false;
    snprintf(res->incomplete_reason, sizeof(res->incomplete_reason),
             "no lock was ever granted: %" PRIu64 " acquires ended in errors (%s)", errors,
             res->sample_error[0] ? res->sample_error : "no error text");
}

/* More acquires that never reached a server (no connection to send them
 * on) or got no answer than granted ones, with no fault of the scenario to
 * explain it: the servers could not take the clients (etcd's listener at
 * 10,000 connections at once), and the figures describe that, not the
 * lock. */
static void servers_overwhelmed(struct run_result *res)
{
    uint64_t unsent = res->unreached_acquires, ok = res->stat[ST_ACQUIRE_OK];
    if (!res->complete || unsent <= ok || scenario_has_server_faults(res->scn) ||
        scenario_needs_proxy(res->scn))
        return;
    res->complete = false;
    snprintf(res->incomplete_reason, sizeof(res->incomplete_reason),
             "the servers could not take the clients: %" PRIu64
             " acquires never reached them or got no answer, for %" PRIu64 " granted (%s)",
             unsent, ok, res->sample_error[0] ? res->sample_error : "no error text");
}

/* The last client to leave its loop ends the run: the watcher's polling
 * must not stretch the elapsed time every rate is divided by. */
static uint64_t last_exit(const struct runner *r)
{
    uint64_t end = r->run.t0_ns;
    for (uint32_t i = 0; i < r->n; i++)
        if (r->clients[i].left_ns > end)
            end = r->clients[i].left_ns;
    return end;
}

static bool any_cut_short(const struct runner *r)
{
    for (uint32_t i = 0; i < r->n; i++)
        if (r->clients[i].cut_short)
            return true;
    return false;
}

int runner_collect(struct runner *r, struct run_result *res)
{
    runner_join(r);
    hiccup_stop(r->meter);
    r->meter = NULL;
    nemesis_finish(r->run.nem); /* every server back before anything reads the results */
    history_buf_close(nemesis_history(r->run.nem));
    res->end_mono_ns = last_exit(r);
    res->t0_mono_ns = r->run.t0_ns;
    res->t0_wall_ns = r->t0_wall_ns;
    res->complete = true;
    res->elapsed_s = (double)(res->end_mono_ns - r->run.t0_ns) / 1e9;
    res->scn = r->run.scn;
    res->algorithm = r->run.ops->name;
    if (any_cut_short(r)) {
        res->complete = false;
        snprintf(res->incomplete_reason, sizeof(res->incomplete_reason), "interrupted after %.1f s",
                 res->elapsed_s);
    }
    if (r->nemesis_failed) {
        res->complete = false;
        snprintf(res->incomplete_reason, sizeof(res->incomplete_reason),
                 "the nemesis thread could not start: no fault was played");
    }
    if (r->record_error[0]) {
        res->complete = false;
        snprintf(res->incomplete_reason, sizeof(res->incomplete_reason),
                 "the history could not be kept: %s", r->record_error);
    }
    if (merge_measurements(r, res) < 0)
        return -1;
    collect_history(r, res);
    record_stop(r, res);
    if (check_safety(r, res) < 0)
        return -1;
    lost_servers(res);
    servers_overwhelmed(res);
    never_granted(res);
    res->tl_latency = calloc(res->tl_len, sizeof(*res->tl_latency));
    if (res->tl_latency == NULL ||
        latency_timeline(res->intervals, res->n_intervals, res->tl_latency, res->tl_len) < 0)
        return -1;
    return 0;
}
