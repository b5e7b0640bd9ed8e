/* cmd_run.c - `locklab run`: one scenario, one algorithm, run by the
 * engine (engine.h); here the face of a run, which compare and matrix
 * share: the header and the live line while it runs, Ctrl-C, then the
 * reports written, the summary and the exit code. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/csv.h"
#include "reports/report.h"
#include "sim/cli/cli.h"
#include "sim/cli/metrics_http.h"
#include "sim/cli/signals.h"
#include "sim/engine/engine.h"
#include "sim/engine/live.h"
#include "sim/record/history.h"
#include "sim/record/history_bin.h"
#include "sim/record/history_reader.h"
#include "sim/record/journal.h"

enum live_mode { LIVE_LINE, LIVE_LOG };

/* What the terminal shows of one run while it runs. */
struct face {
    uint64_t last_steps; /* at the last live line: the rate is over the time since */
    double last_t;
    FILE *human;                  /* stdout, or stderr when stdout is --csv's or --json -'s */
    struct metrics_http *metrics; /* --metrics: it follows the runner too; NULL: none */
};

static void face_start(void *ctx, const struct scenario *s, const struct run_result *res)
{
    struct face *fc = ctx;
    report_header(fc->human, s, res->servers, res->n_servers);
    fflush(fc->human); /* a log shows what runs while it runs */
}

const char *face_text(const struct progress *p, double steps_per_s, char *buf, size_t len)
{
    char p99[40] = "-";      /* no grant in the last second */
    if (p->acquire_p99_us) { /* coarse (live.h): shown with the digits it has */
        char ms[32];
        snprintf(p99, sizeof(p99), "~%s ms", live_ms_text(p->acquire_p99_us, ms, sizeof(ms)));
    }
    snprintf(buf, len,
             "[%6.1fs] %8.0f steps/s  acquire p99 %s  acquired %-9" PRIu64 " failed %-7" PRIu64
             " concurrent entries %-5" PRIu64 " clients running %" PRIu32 "/%" PRIu32,
             p->elapsed_s, steps_per_s, p99, p->acquired, p->failed, p->witness, p->running,
             p->clients);
    return buf;
}

/* On a terminal one line redrawn each second; in a log (CI, a pipe) a
 * plain line every 10 s, so a long run shows it is alive. */
static void face_line(struct face *fc, const struct progress *p, enum live_mode live)
{
    double dt = p->elapsed_s - fc->last_t;
    char line[256];
    face_text(p, dt > 0 ? (double)(p->steps - fc->last_steps) / dt : 0.0, line, sizeof(line));
    fprintf(stderr, "%s%s%s", live == LIVE_LINE ? "\r" : "", line,
            live == LIVE_LINE ? "\033[K" : "\n");
    fc->last_steps = p->steps;
    fc->last_t = p->elapsed_s;
}

static void face_tick_line(void *ctx, const struct progress *p)
{
    face_line(ctx, p, LIVE_LINE);
}

static void face_tick_log(void *ctx, const struct progress *p)
{
    face_line(ctx, p, LIVE_LOG);
}

static void face_end_line(void *ctx)
{
    (void)ctx;
    fprintf(stderr, "\r\033[K");
}

static void face_runner(void *ctx, struct runner *r)
{
    struct face *fc = ctx;
    signals_publish_runner(r);
    metrics_http_follow(fc->metrics, r);
}

static int face_interrupted(void *ctx)
{
    (void)ctx;
    return signals_received();
}

/* The hooks that show a run the way o asks: the header and the live line
 * unless quiet, and the Ctrl-C wiring always. */
static void face_progress(struct face *fc, const struct run_opts *o, struct run_progress *pg)
{
    *fc = (struct face){.human = o->to_stderr ? stderr : stdout, .metrics = o->metrics_srv};
    *pg = (struct run_progress){.ctx = fc,
                                .servers_up = signals_publish_servers,
                                .servers_down = signals_forget_servers,
                                .runner = face_runner,
                                .interrupted = face_interrupted};
    if (o->quiet)
        return;
    pg->start = face_start; /* compare's runs too: each algorithm's settings differ */
    enum live_mode live = isatty(STDERR_FILENO) ? LIVE_LINE : LIVE_LOG;
    pg->tick = live == LIVE_LINE ? face_tick_line : face_tick_log;
    pg->tick_s = live == LIVE_LINE ? 1 : 10;
    if (live == LIVE_LINE)
        pg->end = face_end_line;
}

/* history.jsonl, from the history.llh just finished: the same bytes
 * `locklab show --history` gives later, in the reader's memory. */
static int export_jsonl(const char *llh, const char *path)
{
    char err[600];
    struct history_reader *rd = history_reader_open(llh, err, sizeof(err));
    if (rd == NULL)
        return -1;
    FILE *f = fopen(path, "w");
    int rc = f ? history_reader_to_jsonl(rd, f) : -1;
    if (rc == -1 && f)
        errno = EIO; /* its own file, just written: not read back whole */
    if (f && fclose(f) != 0)
        rc = -1;
    history_reader_close(rd);
    return rc < 0 ? -1 : 0;
}

/* Every file of the run's record; 0, or -1 with why set ("cannot write
 * PATH: REASON"). The history in its compact form, history.llh, and as
 * JSON lines only when asked (`locklab history export` gives the same
 * bytes from history.llh later). */
static int write_reports(struct run_result *res, bool jsonl, char *why, size_t len)
{
    char path[700];
    const char *dir = res->run_dir;
    errno = 0; /* jansson does not always set it: never blame a stale error */
    char llh[700];
    snprintf(llh, sizeof(llh), "%s/history.llh", dir);
    snprintf(path, sizeof(path), "%s", llh);
    struct journal *j = res->journal;
    res->journal = NULL;
    if (j == NULL || journal_finish(j, &res->hist) < 0) {
        journal_free(j);
        goto fail;
    }
    journal_free(j);
    snprintf(path, sizeof(path), "%s/history.jsonl", dir);
    if (jsonl && export_jsonl(llh, path) < 0)
        goto fail;
    snprintf(path, sizeof(path), "%s/report.json", dir);
    if (report_json(path, res) < 0)
        goto fail;
    snprintf(path, sizeof(path), "%s/report.md", dir);
    if (report_markdown(path, res) < 0)
        goto fail;
    snprintf(path, sizeof(path), "%s/report.html", dir);
    if (report_html(path, res) < 0)
        goto fail;
    if (report_hgrm_files(dir, res) < 0) {
        snprintf(path, sizeof(path), "%s/*.hgrm", dir);
        goto fail;
    }
    if (report_hlog_files(dir, res) < 0) {
        snprintf(path, sizeof(path), "%s/*.hlog", dir);
        goto fail;
    }
    return 0;
fail:
    snprintf(why, len, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
    return -1;
}

/* A run whose record could not be written has no verdict: what was not
 * kept cannot be checked again, and a later file may be what failed after
 * the reports said PASS. Each report that states a verdict is written
 * again saying so or, if even that fails (a full disk), removed, so no
 * file says PASS. */
static void record_lost(struct run_result *res, const char *why)
{
    static const struct {
        const char *name;
        int (*write)(const char *path, const struct run_result *r);
    } verdicts[] = {
        {"report.json", report_json}, {"report.md", report_markdown}, {"report.html", report_html}};
    fprintf(stderr, "locklab: %s\n", why);
    if (res->complete) {
        res->complete = false;
        snprintf(res->incomplete_reason, sizeof(res->incomplete_reason),
                 "the run's record could not be written (%.*s)",
                 (int)sizeof(res->incomplete_reason) - 48, why);
    }
    for (size_t i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++) {
        char path[700];
        snprintf(path, sizeof(path), "%s/%s", res->run_dir, verdicts[i].name);
        if (verdicts[i].write(path, res) < 0)
            unlink(path);
    }
}

int run_and_report(const struct run_request *req, const struct run_opts *o, struct run_result *res,
                   enum engine_status *status, char *err, size_t errlen)
{
    struct face fc;
    struct run_progress pg;
    face_progress(&fc, o, &pg);
    res->meta = run_meta_current();
    enum engine_status st = engine_run(req, res, &pg, err, errlen);
    if (status)
        *status = st;
    if (st != ENGINE_RAN) {
        fprintf(stderr, "locklab: %s\n", err);
        return st == ENGINE_STOPPED ? EXIT_INTERRUPTED : EXIT_ENV;
    }
    memcpy(res->percentiles, o->percentiles, sizeof(res->percentiles));
    res->n_percentiles = o->n_percentiles;
    char why[800];
    if (write_reports(res, o->history_jsonl != 0, why, sizeof(why)) < 0)
        record_lost(res, why);
    FILE *human = o->to_stderr ? stderr : stdout;
    if (!o->quiet && !o->brief)
        report_terminal(human, res, o->max_violations);
    else if (!o->silent)
        report_brief(human, res);
    int out_rc = 0;
    if (o->csv)
        report_csv(stdout, res);
    if (o->json_to) {
        char path[700];
        snprintf(path, sizeof(path), "%s/report.json", res->run_dir);
        out_rc = copy_json_out(path, o->json_to);
    }
    if ((fflush(stdout) != 0 || out_rc) && res->complete) /* the verdict itself was lost */
        return EXIT_ENV;
    if (!res->complete)
        return signals_received() ? EXIT_INTERRUPTED : EXIT_ENV;
    return res->passed ? EXIT_PASS : EXIT_FAILED;
}

struct grid_seed *grid_seed_run(const struct scenario *scn, uint64_t seed, const char *run_dir,
                                const struct run_opts *ro)
{
    struct grid_seed *g = calloc(1, sizeof(*g));
    if (g == NULL) {
        fprintf(stderr, "locklab: out of memory\n");
        return NULL;
    }
    g->scn = *scn;
    g->scn.seed = seed;
    g->rc = EXIT_ENV;
    snprintf(g->res.run_dir, sizeof(g->res.run_dir), "%s", run_dir);
    if (mkdir(g->res.run_dir, 0755) < 0) {
        snprintf(g->why, sizeof(g->why), "cannot create %.200s: %s", g->res.run_dir,
                 strerror(errno));
        fprintf(stderr, "locklab: %s\n", g->why);
        return g;
    }
    struct run_request req = {.scn = &g->scn}; /* its own fleet, started and stopped by the run */
    enum engine_status st;
    char err[512];
    g->rc = run_and_report(&req, ro, &g->res, &st, err, sizeof(err));
    g->ran = g->res.history_events > 0 || g->res.elapsed_s > 0;
    if (!g->ran)
        snprintf(g->why, sizeof(g->why), "%.300s",
                 st == ENGINE_NO_SERVERS ? err : "its clients could not start or connect");
    return g;
}

void grid_seed_free(struct grid_seed *g)
{
    if (g)
        result_free(&g->res);
    free(g);
}

/* The run of s as o asks, into res; its exit code. */
static int run_planned(const struct run_opts *o, const struct scenario *s, struct run_result *res)
{
    bool created;
    int rc =
        make_run_dir(o->out, s->name, s->algorithm, res->run_dir, sizeof(res->run_dir), &created);
    if (rc)
        return rc;
    struct run_request req = {.scn = s, .proxy_all = o->proxy};
    char err[512];
    rc = run_and_report(&req, o, res, NULL, err, sizeof(err));
    /* nothing ran (the servers or the clients would not start): leave no
     * empty run folder behind */
    if (rc == EXIT_ENV && res->history_events == 0 && created)
        rmdir(res->run_dir);
    else
        runs_latest_link(res->run_dir);
    return rc;
}

int metrics_listen(struct run_opts *o)
{
    char err[400];
    if (o->metrics == NULL)
        return 0;
    if ((o->metrics_srv = metrics_http_start(o->metrics, err, sizeof(err))) == NULL) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_ENV;
    }
    if (!o->quiet)
        fprintf(stderr, "locklab: metrics on http://%s/metrics\n", o->metrics);
    return 0;
}

int cmd_run(int argc, char **argv)
{
    static struct run_hosts hosts;
    struct run_opts o;
    const struct lock_ops *ops = NULL;
    struct scenario *s = calloc(1, sizeof(*s));
    struct run_result *res = calloc(1, sizeof(*res));
    int rc = EXIT_ENV;
    if (s == NULL || res == NULL)
        fprintf(stderr, "locklab: out of memory\n");
    else if ((rc = plan_one_run(argc, argv, RUN_OPTS_RUN, &o, s, &ops)) == 0 &&
             (rc = hosts_up(&o, &hosts)) == 0 && (rc = metrics_listen(&o)) == 0) {
        rc = run_planned(&o, s, res);
        metrics_http_stop(o.metrics_srv, o.metrics_linger); /* the reports are written */
    }
    hosts_down(&hosts);
    if (res)
        result_free(res);
    free(res);
    free(s);
    return rc;
}
