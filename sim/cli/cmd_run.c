/* cmd_run.c - `locklab run`: one scenario, one algorithm, its servers
 * started (or named), the clients run and watched, the reports written. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "reports/report.h"
#include "sim/cli/cli.h"
#include "sim/cli/signals.h"
#include "sim/engine/runner.h"
#include "sim/fleet/server_kind.h"
#include "sim/proxy/proxy.h"
#include "sim/record/history.h"

enum live_mode { LIVE_NONE, LIVE_LINE, LIVE_LOG };

/* On a terminal one line redrawn each second; in a log (CI, a pipe) a
 * plain line every 10 s, so a long run shows it is alive. */
static void show_progress(struct runner *r, enum live_mode live, int tick)
{
    static uint64_t last_steps;
    static double last_t;
    struct progress p;
    if (live == LIVE_NONE || (live == LIVE_LOG && tick % 100 != 0))
        return;
    runner_progress(r, &p);
    if (p.elapsed_s < last_t)
        last_t = 0, last_steps = 0; /* a new run of a comparison */
    double dt = p.elapsed_s - last_t;
    fprintf(stderr,
            "%s[%6.1fs] %8.0f steps/s  acquire p99 ~%.3f ms  acquired %-9" PRIu64
            " failed %-7" PRIu64 " concurrent entries %-5" PRIu64 " clients %-4" PRIu32 "%s",
            live == LIVE_LINE ? "\r" : "", p.elapsed_s,
            dt > 0 ? (double)(p.steps - last_steps) / dt : 0.0, (double)p.acquire_p99_us / 1000.0,
            p.acquired, p.failed, p.witness, p.running, live == LIVE_LINE ? "\033[K" : "\n");
    last_steps = p.steps;
    last_t = p.elapsed_s;
}

/* Wait for the clients, watching the servers and the clock. */
static void watch_run(struct runner *r, struct fleet *f, struct run_result *res,
                      enum live_mode live)
{
    for (int n = 1; !runner_wait(r, 100); n++) {
        if (n % 10 == 0)
            show_progress(r, live, n);
        int dead = fleet_dead(f);
        if (dead >= 0 && res->incomplete_reason[0] == '\0') {
            snprintf(res->incomplete_reason, sizeof(res->incomplete_reason),
                     "%s on port %d exited unexpectedly", f->cl.srv[dead].kind->name,
                     f->cl.srv[dead].port);
            runner_stop(r, 1);
        }
    }
    if (live == LIVE_LINE)
        fprintf(stderr, "\r\033[K");
}

/* Every file of the run's record; 0, or -1 with why set ("cannot write
 * PATH: REASON"). */
static int write_reports(struct run_result *res, char *why, size_t len)
{
    char path[700];
    const char *dir = res->run_dir;
    errno = 0; /* jansson does not always set it: never blame a stale error */
    snprintf(path, sizeof(path), "%s/history.jsonl", dir);
    FILE *f = fopen(path, "w");
    int rc = f ? history_write_jsonl(&res->hist, f) : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    if (rc < 0)
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

static int finish_run(struct runner *r, struct proxy *px, struct run_result *res,
                      const struct run_opts *o)
{
    char reason[sizeof(res->incomplete_reason)];
    snprintf(reason, sizeof(reason), "%s", res->incomplete_reason);
    if (runner_collect(r, res) < 0) {
        fprintf(stderr, "locklab: out of memory collecting the results\n");
        return EXIT_ENV;
    }
    if (px)
        proxy_stats(px, &res->proxy);
    if (reason[0]) {
        res->complete = false;
        snprintf(res->incomplete_reason, sizeof(res->incomplete_reason), "%s", reason);
    }
    result_judge(res);
    char why[800];
    if (write_reports(res, why, sizeof(why)) < 0)
        record_lost(res, why);
    if (!o->quiet && !o->brief)
        report_terminal(stdout, res, o->max_violations);
    else if (!o->silent)
        report_brief(stdout, res);
    if (fflush(stdout) != 0 && res->complete) /* the verdict itself was lost */
        return EXIT_ENV;
    if (!res->complete)
        return signals_received() ? EXIT_INTERRUPTED : EXIT_ENV;
    return res->passed ? EXIT_PASS : EXIT_FAILED;
}

/* A proxy needs a listener per server and client, and two descriptors per
 * connection: lift the soft limit on open files to the hard one. */
static void room_for(size_t fds)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < fds + 256) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* The proxy, when a fault needs one or --proxy asks: listening before any
 * client connects. 0 with *px NULL when none is needed. */
static int start_proxy(const struct scenario *s, const struct lock_config *cfg,
                       const struct run_opts *o, struct run_result *res, struct proxy **px,
                       char *err, size_t errlen)
{
    *px = NULL;
    if (!o->proxy && !scenario_needs_proxy(s))
        return 0;
    size_t n = cfg->n_endpoints;
    uint32_t covered = o->proxy ? servers_mask(n) : scenario_proxied_endpoints(s, n);
    size_t groups = scenario_proxy_per_client(s) ? s->clients : 1;
    room_for(n * groups * 3 + (size_t)s->clients * n * 2);
    *px = proxy_new(cfg->endpoints, n, covered, groups, s->seed, err, errlen);
    if (*px == NULL || proxy_start(*px, err, errlen) < 0)
        return -1;
    res->has_proxy = true;
    res->proxy_listeners = groups;
    for (size_t e = 0; e < n && e < RESULT_MAX_SERVERS; e++)
        res->proxied[e] = proxy_covers(*px, e);
    return 0;
}

int run_on_fleet(const struct scenario *s, struct fleet *f, const struct run_opts *o,
                 struct run_result *res)
{
    static struct lock_config cfg;
    const struct lock_ops *ops = lock_find(s->algorithm);
    char err[512];

    fleet_config(f, ops, s, &cfg); /* every field, the others zero */
    res->complete = true;
    fleet_describe(f, ops, s, res);
    if (!o->quiet) { /* compare's runs too: each algorithm's settings differ */
        report_header(stdout, s, res->servers, res->n_servers);
        fflush(stdout); /* a log shows what runs while it runs */
    }
    struct runner *r = runner_new(s, ops, &cfg, err, sizeof(err));
    if (r == NULL) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_ENV;
    }
    cfg.cancel = runner_cancel_flag(r); /* before any client reads cfg */
    struct fault_nodes nodes;
    fleet_fault_nodes(f, ops, s, &nodes);
    runner_set_fault_nodes(r, &nodes);
    struct proxy *px = NULL;
    /* published before the clients connect: a Ctrl-C stops their tries */
    signals_publish_runner(r);
    if (start_proxy(s, &cfg, o, res, &px, err, sizeof(err)) < 0 ||
        runner_set_proxy(r, px, err, sizeof(err)) < 0 || runner_start(r, err, sizeof(err)) < 0) {
        signals_publish_runner(NULL);
        fprintf(stderr, "locklab: %s\n", err);
        runner_free(r);
        proxy_free(px);
        return signals_received() ? EXIT_INTERRUPTED : EXIT_ENV;
    }
    if (signals_received())
        runner_stop(r, 1); /* Ctrl-C while the servers were starting */
    runner_go(r);
    enum live_mode live = o->quiet ? LIVE_NONE : isatty(STDERR_FILENO) ? LIVE_LINE : LIVE_LOG;
    watch_run(r, f, res, live);
    int rc = finish_run(r, px, res, o);
    signals_publish_runner(NULL);
    runner_free(r);
    proxy_free(px); /* after the clients: their connections run through it */
    return rc;
}

int cmd_run(int argc, char **argv)
{
    struct run_opts o;
    static struct scenario s;
    static struct fleet f;
    static struct run_result res;
    char err[512];

    const struct lock_ops *ops = NULL;
    int rc = plan_one_run(argc, argv, RUN_OPTS_RUN, &o, &s, &ops);
    if (rc)
        return rc;
    bool created;
    rc = make_run_dir(o.out, s.name, s.algorithm, res.run_dir, sizeof(res.run_dir), &created);
    if (rc)
        return rc;
    if (fleet_up(&f, &s, &ops, 1, err, sizeof(err)) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        if (created)
            rmdir(res.run_dir); /* nothing ran: leave no empty run folder behind */
        return EXIT_ENV;
    }
    signals_publish_servers(&f.cl);
    f.cl.pids_changed = signals_publish_servers; /* a fault restarted one */
    rc = run_on_fleet(&s, &f, &o, &res);
    char logs[600];
    snprintf(logs, sizeof(logs), "%s/servers", res.run_dir);
    signals_forget_servers();
    fleet_down(&f, res.hist.n ? logs : NULL);
    if (rc == EXIT_ENV && res.hist.n == 0 && created)
        rmdir(res.run_dir);
    result_free(&res);
    return rc;
}
