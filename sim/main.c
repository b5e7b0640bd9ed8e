/* main.c - the command line: run, check, list. The only file that prints
 * errors and chooses exit codes.
 *
 * Exit status: 0 expectations met, 1 expectation failed (or, for check,
 * violations found), 2 bad usage or scenario, 3 environment (a server would
 * not start, a client could not connect, a report could not be written),
 * 130 interrupted (a partial report marked incomplete is still written).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checker.h"
#include "cluster.h"
#include "history.h"
#include "lock.h"
#include "report.h"
#include "runner.h"
#include "scenario.h"
#include "signals.h"

enum { EXIT_PASS = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_ENV = 3, EXIT_INTERRUPTED = 130 };

struct run_opts {
    const char *scenario;
    const char *algorithm;
    const char *out;
    const char *redis; /* HOST:PORT of an existing server instead of a managed one */
    long clients;      /* -1 = from the scenario */
    double duration;   /* seconds; < 0 = from the scenario */
    long long requests;
    long long seed;
    int quiet;
    int max_violations;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: locklab run SCENARIO [--algorithm NAME] [--clients N] [--duration S]\n"
               "                            [--requests N] [--seed N] [--out DIR] [--quiet]\n"
               "                            [--show-violations N] [--redis HOST:PORT]\n"
               "       locklab check RUN_DIR/history.jsonl [--expect EXPR] [--show-violations N]\n"
               "       locklab list\n"
               "       locklab --help | --version\n"
               "exit: 0 expectations met, 1 not met, 2 bad usage or scenario, 3 environment,\n"
               "      130 interrupted (partial report written, marked incomplete)\n");
}

__attribute__((format(printf, 1, 2))) static int bad_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "locklab: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see locklab --help)\n");
    va_end(ap);
    return EXIT_USAGE;
}

static int parse_long(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* ---- run -------------------------------------------------------------- */

static int parse_run_opts(int argc, char **argv, struct run_opts *o)
{
    static const struct option longs[] = {
        {"algorithm", required_argument, 0, 'a'}, {"clients", required_argument, 0, 'c'},
        {"duration", required_argument, 0, 'd'},  {"requests", required_argument, 0, 'n'},
        {"seed", required_argument, 0, 's'},      {"out", required_argument, 0, 'o'},
        {"quiet", no_argument, 0, 'q'},           {"show-violations", required_argument, 0, 'V'},
        {"redis", required_argument, 0, 'r'},     {0, 0, 0, 0}};
    *o = (struct run_opts){
        .clients = -1, .duration = -1, .requests = -1, .seed = -1, .max_violations = 10};
    int c;
    long long v;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "a:c:d:n:s:o:qr:", longs, NULL)) != -1) {
        switch (c) {
        case 'a':
            o->algorithm = optarg;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 'r':
            o->redis = optarg;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'c':
            if (parse_long(optarg, 1, SCENARIO_MAX_CLIENTS, &v) < 0)
                return bad_usage("--clients: expected an integer in 1..4096, got \"%s\"", optarg);
            o->clients = (long)v;
            break;
        case 'd': {
            char *end;
            o->duration = strtod(optarg, &end);
            if (end == optarg || *end || !(o->duration > 0 && o->duration <= 86400))
                return bad_usage("--duration: expected seconds in (0, 86400], got \"%s\"", optarg);
            break;
        }
        case 'n':
            if (parse_long(optarg, 0, INT64_MAX, &v) < 0)
                return bad_usage("--requests: expected an integer >= 0, got \"%s\"", optarg);
            o->requests = v;
            break;
        case 's':
            if (parse_long(optarg, 0, INT64_MAX, &v) < 0)
                return bad_usage("--seed: expected an integer >= 0, got \"%s\"", optarg);
            o->seed = v;
            break;
        case 'V':
            if (parse_long(optarg, 0, 100000, &v) < 0)
                return bad_usage("--show-violations: expected an integer >= 0, got \"%s\"", optarg);
            o->max_violations = (int)v;
            break;
        default:
            return bad_usage("run: unknown or incomplete option \"%s\"", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return bad_usage("%s", optind >= argc ? "run: which scenario? give one SCENARIO file"
                                              : "run: exactly one SCENARIO file, please");
    o->scenario = argv[optind];
    return 0;
}

/* "host:port" into ep; -1 when it is not one. */
static int parse_endpoint(const char *text, struct lock_endpoint *ep)
{
    const char *colon = strrchr(text, ':');
    long long port;
    if (colon == NULL || colon == text || (size_t)(colon - text) >= sizeof(ep->host) ||
        parse_long(colon + 1, 1, 65535, &port) < 0)
        return -1;
    memcpy(ep->host, text, (size_t)(colon - text));
    ep->host[colon - text] = '\0';
    ep->port = (int)port;
    return 0;
}

/* --algorithm names nothing known: say the likeliest meant, or all. */
static int unknown_algorithm(const char *name)
{
    const char *known[16];
    size_t n = 0;
    for (; n < lock_count() && n < 16; n++)
        known[n] = lock_at(n)->name;
    const char *near = suggest_closest(name, known, n);
    if (near) {
        fprintf(stderr, "locklab: --algorithm: unknown algorithm \"%s\" (did you mean \"%s\"?)\n",
                name, near);
        return EXIT_USAGE;
    }
    char names[256];
    fprintf(stderr, "locklab: --algorithm: unknown algorithm \"%s\" (known: %s)\n", name,
            lock_names(names, sizeof(names)));
    return EXIT_USAGE;
}

static int load_scenario(const struct run_opts *o, struct scenario *s)
{
    char err[SCENARIO_ERR_MAX];
    if (scenario_load(o->scenario, s, err) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_USAGE;
    }
    if (o->algorithm) {
        if (lock_find(o->algorithm) == NULL)
            return unknown_algorithm(o->algorithm);
        snprintf(s->algorithm, sizeof(s->algorithm), "%s", o->algorithm);
    }
    if (o->clients > 0)
        s->clients = (uint32_t)o->clients;
    if (o->duration > 0) {
        long long ms = llround(o->duration * 1000.0);
        s->duration_ms = ms > 0 ? (uint64_t)ms : 1;
    }
    if (o->requests >= 0)
        s->requests = (uint64_t)o->requests;
    if (o->seed >= 0)
        s->seed = (uint64_t)o->seed;
    if (scenario_finish(s, err) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_USAGE;
    }
    return 0;
}

static int make_run_dir(const struct run_opts *o, const struct scenario *s, char *dir, size_t len)
{
    if (o->out) {
        snprintf(dir, len, "%s", o->out);
    } else {
        char stamp[32];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
        mkdir("runs", 0755);
        snprintf(dir, len, "runs/%s-%s-%s", s->name, s->algorithm, stamp);
    }
    /* Never mix two runs' files: a taken default name gets a suffix. */
    if (mkdir(dir, 0755) == 0)
        return 0;
    if (errno == EEXIST && o->out) {
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
    }
    size_t base = strlen(dir);
    for (int i = 2; errno == EEXIST && i < 100 && !o->out; i++) {
        snprintf(dir + base, len - base, "-%d", i);
        if (mkdir(dir, 0755) == 0)
            return 0;
    }
    fprintf(stderr, "locklab: cannot create the run folder %s: %s\n", dir, strerror(errno));
    return -1;
}

static void show_progress(struct runner *r, int live)
{
    static uint64_t last_steps;
    static double last_t;
    struct progress p;
    if (!live)
        return;
    runner_progress(r, &p);
    double dt = p.elapsed_s - last_t;
    fprintf(stderr,
            "\r[%6.1fs] %8.0f steps/s  acquire p99 ~%.3f ms  acquired %-9" PRIu64
            " failed %-7" PRIu64 " concurrent entries %-5" PRIu64 " clients %-4" PRIu32 "\033[K",
            p.elapsed_s, dt > 0 ? (double)(p.steps - last_steps) / dt : 0.0,
            (double)p.acquire_p99_us / 1000.0, p.acquired, p.failed, p.witness, p.running);
    last_steps = p.steps;
    last_t = p.elapsed_s;
}

/* Wait for the clients, watching the servers and the clock. */
static void watch_run(struct runner *r, struct cluster *cl, struct run_result *res, int live)
{
    for (int n = 1; !runner_wait(r, 100); n++) {
        if (n % 10 == 0)
            show_progress(r, live);
        for (size_t i = 0; i < cl->n; i++) {
            if (!cluster_alive(cl, i) && res->incomplete_reason[0] == '\0') {
                snprintf(res->incomplete_reason, sizeof(res->incomplete_reason),
                         "%s on port %d exited unexpectedly", cl->srv[i].kind, cl->srv[i].port);
                runner_stop(r, 1);
            }
        }
    }
    if (live)
        fprintf(stderr, "\r\033[K");
}

static int write_reports(struct run_result *res)
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
    if (report_hgrm_files(dir, res) < 0) {
        snprintf(path, sizeof(path), "%s/*.hgrm", dir);
        goto fail;
    }
    return 0;
fail:
    fprintf(stderr, "locklab: cannot write %s: %s\n", path, strerror(errno ? errno : EIO));
    return -1;
}

static int start_clients(struct runner *r, struct cluster *cl)
{
    char err[512];
    if (runner_start(r, err, sizeof(err)) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        signals_forget_servers();
        cluster_stop(cl, NULL);
        return -1;
    }
    return 0;
}

static void describe_servers(const struct cluster *cl, struct run_result *res)
{
    for (size_t i = 0; i < cl->n && i < RESULT_MAX_SERVERS; i++)
        snprintf(res->servers[res->n_servers++], sizeof(res->servers[0]),
                 "%s 127.0.0.1:%d (managed, pid %d)", cl->srv[i].kind, cl->srv[i].port,
                 (int)cl->srv[i].pid);
}

static int finish_run(struct runner *r, struct cluster *cl, struct run_result *res,
                      const struct run_opts *o)
{
    char reason[sizeof(res->incomplete_reason)];
    snprintf(reason, sizeof(reason), "%s", res->incomplete_reason);
    if (runner_collect(r, res) < 0) {
        fprintf(stderr, "locklab: out of memory collecting the results\n");
        signals_forget_servers();
        cluster_stop(cl, NULL);
        return EXIT_ENV;
    }
    if (reason[0]) {
        res->complete = false;
        snprintf(res->incomplete_reason, sizeof(res->incomplete_reason), "%s", reason);
    }
    result_judge(res);
    char logs[600];
    snprintf(logs, sizeof(logs), "%s/servers", res->run_dir);
    signals_forget_servers();
    cluster_stop(cl, logs);
    int wrote = write_reports(res);
    if (!o->quiet)
        report_terminal(stdout, res, o->max_violations);
    else
        printf("End of run: %s  %s/\n",
               !res->complete ? "INCOMPLETE"
               : res->passed  ? "PASS"
                              : "FAIL",
               res->run_dir);
    fflush(stdout);
    if (wrote < 0)
        return EXIT_ENV;
    if (!res->complete)
        return signals_received() ? EXIT_INTERRUPTED : EXIT_ENV;
    return res->passed ? EXIT_PASS : EXIT_FAILED;
}

static int cmd_run(int argc, char **argv)
{
    struct run_opts o;
    static struct scenario s;
    if (parse_run_opts(argc, argv, &o) != 0)
        return EXIT_USAGE;
    static struct lock_config cfg;
    if (o.redis && parse_endpoint(o.redis, &cfg.endpoints[0]) < 0)
        return bad_usage("--redis: expected HOST:PORT, got \"%s\"", o.redis);
    int rc = load_scenario(&o, &s);
    if (rc)
        return rc;
    static struct run_result res;
    res.complete = true;
    if (make_run_dir(&o, &s, res.run_dir, sizeof(res.run_dir)) < 0)
        return EXIT_ENV;

    static struct cluster cl;
    char err[512];
    if (o.redis) {
        snprintf(res.servers[res.n_servers++], sizeof(res.servers[0]), "redis %s (external)",
                 o.redis);
    } else if (cluster_start_redis(&cl, 1, err, sizeof(err)) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        rmdir(res.run_dir); /* nothing ran: leave no empty run folder behind */
        return EXIT_ENV;
    } else {
        snprintf(cfg.endpoints[0].host, sizeof(cfg.endpoints[0].host), "127.0.0.1");
        cfg.endpoints[0].port = cl.srv[0].port;
    }
    signals_publish_servers(&cl);
    cfg.n_endpoints = 1;
    cfg.connect_timeout_ms = 2000;
    cfg.io_timeout_ms = 5000;
    cfg.retry_min_ms = s.retry_min_ms;
    cfg.retry_max_ms = s.retry_max_ms;
    cfg.want_token = s.fencing;
    describe_servers(&cl, &res);

    struct runner *r = runner_new(&s, lock_find(s.algorithm), &cfg, err, sizeof(err));
    if (r == NULL) {
        fprintf(stderr, "locklab: %s\n", err);
        signals_forget_servers();
        cluster_stop(&cl, NULL);
        rmdir(res.run_dir);
        return EXIT_ENV;
    }
    cfg.cancel = runner_cancel_flag(r); /* before any client reads cfg */
    if (start_clients(r, &cl) < 0) {
        runner_free(r);
        rmdir(res.run_dir);
        return EXIT_ENV;
    }
    signals_publish_runner(r);
    if (signals_received())
        runner_stop(r, 1); /* Ctrl-C while the servers were starting */
    runner_go(r);
    int live = !o.quiet && isatty(STDERR_FILENO);
    watch_run(r, &cl, &res, live);
    rc = finish_run(r, &cl, &res, &o);
    signals_publish_runner(NULL);
    runner_free(r);
    result_free(&res);
    return rc;
}

/* ---- check ------------------------------------------------------------ */

static int cmd_check(int argc, char **argv)
{
    struct expect_num want = {.op = EXPECT_EQ, .value = 0};
    long long show = 10;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) {
            if (expect_parse(argv[++i], &want) < 0)
                return bad_usage("--expect: expected e.g. 0, \">0\", \"<=3\", got \"%s\"", argv[i]);
        } else if (strcmp(argv[i], "--show-violations") == 0 && i + 1 < argc) {
            if (parse_long(argv[++i], 0, 100000, &show) < 0)
                return bad_usage("--show-violations: expected an integer >= 0, got \"%s\"",
                                 argv[i]);
        } else if (argv[i][0] == '-' || path) {
            return bad_usage("check: unexpected argument \"%s\"", argv[i]);
        } else {
            path = argv[i];
        }
    }
    if (path == NULL)
        return bad_usage("%s", "check: which history? give RUN_DIR/history.jsonl");
    char file[600];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(file, sizeof(file), "%s/history.jsonl", path);
    else
        snprintf(file, sizeof(file), "%s", path);

    static struct run_result res;
    char err[512];
    if (history_read_jsonl(file, &res.hist, err, sizeof(err)) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_USAGE;
    }
    res.t0_mono_ns = res.hist.start_mono_ns;
    if (history_sections(&res.hist, &res.sections, &res.n_sections, &res.spans, &res.n_spans) < 0 ||
        checker_run(res.sections, res.n_sections, res.spans, res.n_spans, 1000, &res.check) < 0) {
        fprintf(stderr, "locklab: out of memory checking %s\n", file);
        result_free(&res);
        return EXIT_ENV;
    }
    const struct check_result *c = &res.check;
    printf("%s: scenario %s, algorithm %s, %" PRIu32 " clients%s\n", file, res.hist.scenario,
           res.hist.algorithm, res.hist.clients, res.hist.complete ? "" : " (INCOMPLETE run)");
    printf("checker: %" PRIu64 " sections, %" PRIu64 " overlapping pairs (%" PRIu64
           " fenced), %" PRIu64 " violations, %" PRIu64 " concurrent entries\n",
           c->sections, c->overlaps, c->fenced, c->violations, c->concurrent_entries);
    report_violations(stdout, &res, (int)show);
    char w[24];
    int met = expect_met(&want, c->violations);
    printf("End of check: %s - violations expected %s, got %" PRIu64 "\n", met ? "PASS" : "FAIL",
           expect_format(&want, w, sizeof(w)), c->violations);
    result_free(&res);
    return met ? EXIT_PASS : EXIT_FAILED;
}

/* ---- list ------------------------------------------------------------- */

static int cmd_list(void)
{
    printf("algorithms:\n");
    for (size_t i = 0; i < lock_count(); i++) {
        const struct lock_ops *op = lock_at(i);
        printf("  %-12s %s%s%s\n", op->name, op->summary, op->gives_token ? " [token]" : "",
               op->renew ? " [watchdog]" : "");
    }
    printf("workloads:\n  %-12s %s\n", workload_name(WORKLOAD_FLASH_SALE),
           "inventory under a flash sale: orders never exceed stock");
    printf("faults:\n");
    for (int t = 0; t < FAULT_TYPE_COUNT; t++)
        printf("  %s\n", fault_type_name((enum fault_type)t));
    return EXIT_PASS;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return EXIT_PASS;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("locklab %s\n", LOCKLAB_VERSION);
        return EXIT_PASS;
    }
    if (strcmp(cmd, "list") == 0)
        return cmd_list();
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0) {
        signals_start();
        return cmd_run(argc - 1, argv + 1);
    }
    return bad_usage("unknown command \"%s\"", cmd);
}
