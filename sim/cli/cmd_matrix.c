/* cmd_matrix.c - `locklab matrix [DIR]`: every scenario of a folder (one
 * known result each: a lock, a fault, what must come of it), run with N
 * seeds on servers started afresh for each run, then one table: expected
 * against observed, with the availability figures.
 *
 * Every scenario is validated before anything starts. Each run gets its
 * own fleet: a fault changes what the servers hold (a restarted Redis, a
 * ZooKeeper session left to expire), and a row must not inherit that from
 * the seed before.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "reports/csv.h"
#include "reports/matrix.h"
#include "sim/cli/cli.h"
#include "sim/cli/metrics_http.h"
#include "sim/cli/signals.h"
#include "sim/engine/engine.h"

#define MATRIX_DIR "scenarios/matrix"

struct matrix_opts {
    const char *dir;
    const char *out;
    const char *only; /* rows whose name contains this */
    int plan;         /* --plan: the rows it would run, and nothing run */
    long long seeds;
    int quiet;
    int csv;             /* --csv: the table as CSV on stdout */
    int wide;            /* --wide: one line per row, however long */
    const char *json_to; /* --json FILE ("-": stdout): matrix.json's copy */
    int to_stderr;       /* stdout is the tool's: lines for a person go to stderr */
    double percentiles[RESULT_MAX_PERCENTILES];
    size_t n_percentiles;
    struct run_opts live; /* --metrics, --metrics-linger: each run served in turn */
};

/* The endpoint every run of the matrix is served on; NULL: none. */
static struct metrics_http *matrix_metrics;

struct plan {
    struct scenario scn[MATRIX_MAX_ROWS];
    size_t n;
};

static int parse_opts(int argc, char **argv, struct matrix_opts *o)
{
    static const struct option longs[] = {{"seeds", required_argument, 0, 'S'},
                                          {"out", required_argument, 0, 'o'},
                                          {"only", required_argument, 0, 'O'},
                                          {"plan", no_argument, 0, 'p'},
                                          {"quiet", no_argument, 0, 'q'},
                                          {"csv", no_argument, 0, 'C'},
                                          {"wide", no_argument, 0, 'W'},
                                          {"json", required_argument, 0, 'J'},
                                          {"percentiles", required_argument, 0, 'P'},
                                          {"metrics", required_argument, 0, 'M'},
                                          {"metrics-linger", required_argument, 0, 'L'},
                                          {0, 0, 0, 0}};
    *o = (struct matrix_opts){.dir = MATRIX_DIR, .seeds = 1};
    run_opts_init(&o->live);
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:q", longs, NULL)) != -1) {
        if (c == 'S' && parse_long(optarg, 1, MATRIX_MAX_SEEDS, &o->seeds) < 0)
            return bad_usage("--seeds: expected an integer in 1..%d, got \"%s\"", MATRIX_MAX_SEEDS,
                             optarg);
        else if (c == 'o')
            o->out = optarg;
        else if (c == 'O')
            o->only = optarg;
        else if (c == 'p')
            o->plan = 1;
        else if (c == 'q')
            o->quiet = 1;
        else if (c == 'C')
            o->csv = 1;
        else if (c == 'W')
            o->wide = 1;
        else if (c == 'J')
            o->json_to = optarg;
        else if (c == 'P' && parse_percentiles_opt(optarg, o->percentiles, &o->n_percentiles))
            return EXIT_USAGE;
        else if ((c == 'M' || c == 'L') && metrics_option(c == 'L', optarg, &o->live))
            return EXIT_USAGE;
        else if (c == '?' || c == ':')
            return bad_usage("matrix: unknown or incomplete option \"%s\"", argv[optind - 1]);
    }
    if (o->live.metrics_linger >= 0 && o->live.metrics == NULL)
        return bad_usage("%s", "matrix: --metrics-linger needs --metrics HOST:PORT");
    if (optind < argc - 1)
        return bad_usage("%s", "matrix: at most one folder of scenarios");
    if (optind == argc - 1)
        o->dir = argv[optind];
    o->to_stderr = o->csv || (o->json_to && strcmp(o->json_to, "-") == 0);
    return check_stdout_taken(o->csv, o->json_to);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The folder's *.json files, sorted, as full paths into names. */
static int list_files(const char *dir, char names[][512], size_t *n)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return bad_usage("matrix: cannot read the folder %s", dir);
    char *found[MATRIX_MAX_ROWS + 1] = {NULL};
    size_t k = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.')
            continue;
        if (k == MATRIX_MAX_ROWS) {
            closedir(d);
            for (size_t i = 0; i < k; i++)
                free(found[i]);
            return bad_usage("matrix: %s holds more than %d scenarios", dir, MATRIX_MAX_ROWS);
        }
        found[k++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(found, k, sizeof(found[0]), by_name);
    for (size_t i = 0; i < k; i++) {
        snprintf(names[i], 512, "%.300s/%.200s", dir, found[i] ? found[i] : "");
        free(found[i]);
    }
    *n = k;
    if (k == 0)
        return bad_usage("matrix: %s holds no scenario (*.json)", dir);
    return 0;
}

/* Every row's scenario, loaded and checked: a bad one stops the matrix
 * before any server starts. files: room for MATRIX_MAX_ROWS names. */
static int plan_files(const struct matrix_opts *o, char files[][512], struct plan *p,
                      struct matrix *m)
{
    size_t n;
    int rc = list_files(o->dir, files, &n);
    p->n = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        /* a row runs as its file says: no option replaces its values (the
         * rate's -1 too: 0 would force closed loop on an open-loop row) */
        struct run_opts ro;
        run_opts_init(&ro);
        ro.scenario = files[i];
        struct scenario *s = &p->scn[p->n];
        rc = load_scenario(&ro, s);
        if (rc)
            break;
        const struct lock_ops *ops = lock_find(s->algorithm);
        char err[512];
        if (fleet_check(s, &ops, 1, err, sizeof(err)) < 0)
            return bad_usage("%s", err);
        if (o->only && strstr(s->name, o->only) == NULL)
            continue;
        struct matrix_row *row = &m->rows[p->n++];
        snprintf(row->file, sizeof(row->file), "%s", files[i]);
        snprintf(row->name, sizeof(row->name), "%s", s->name);
        snprintf(row->algorithm, sizeof(row->algorithm), "%s", s->algorithm);
        snprintf(row->fault, sizeof(row->fault), "%s", s->description);
        matrix_expected(s, row->expected, sizeof(row->expected));
    }
    if (rc == 0 && p->n == 0)
        return bad_usage("matrix: no scenario of %s is named like \"%s\"", o->dir, o->only);
    m->n = p->n;
    return rc;
}

static int plan_rows(const struct matrix_opts *o, struct plan *p, struct matrix *m)
{
    char(*files)[512] = calloc(MATRIX_MAX_ROWS, sizeof(*files));
    if (files == NULL) {
        fprintf(stderr, "locklab: out of memory\n");
        return EXIT_ENV;
    }
    int rc = plan_files(o, files, p, m);
    free(files);
    return rc;
}

/* One seed of a row into mr, in its own folder OUT/<row>/seed-<n>; the
 * servers it ran on into m's. */
static int run_seed(const struct scenario *row_scn, uint64_t seed, struct matrix_run *mr,
                    struct matrix *m, const struct matrix_opts *o)
{
    mr->seed = seed;
    snprintf(mr->verdict, sizeof(mr->verdict), "NOT RUN");
    char dir[600];
    snprintf(dir, sizeof(dir), "%.400s/%s", m->out_dir, row_scn->name);
    mkdir(dir, 0755); /* the row's folder: made by its first seed */
    snprintf(dir, sizeof(dir), "%.400s/%s/seed-%llu", m->out_dir, row_scn->name,
             (unsigned long long)seed);
    struct run_opts ro = {
        .quiet = 1, .silent = o->quiet, .max_violations = 10, .to_stderr = o->to_stderr};
    memcpy(ro.percentiles, o->percentiles, sizeof(ro.percentiles));
    ro.n_percentiles = o->n_percentiles;
    ro.metrics_srv = matrix_metrics;
    struct grid_seed *g = grid_seed_run(row_scn, seed, dir, &ro);
    if (g == NULL) {
        snprintf(mr->failure, sizeof(mr->failure), "out of memory");
        return EXIT_ENV;
    }
    if (g->ran)
        matrix_run_fill(mr, &g->res);
    else
        snprintf(mr->failure, sizeof(mr->failure), "%s", g->why);
    report_meta_merge(m->versions, &m->n_versions, sizeof(m->versions) / sizeof(m->versions[0]),
                      g->res.versions, g->res.n_servers, false);
    m->has_proxy = m->has_proxy || g->res.has_proxy;
    int rc = g->rc;
    grid_seed_free(g);
    return rc;
}

static int run_rows(const struct plan *p, const struct matrix_opts *o, struct matrix *m)
{
    int rc = EXIT_PASS;
    size_t total = p->n * m->seeds, k = 0;
    for (size_t i = 0; i < p->n; i++) {
        struct matrix_row *row = &m->rows[i];
        row->runs = calloc(m->seeds, sizeof(*row->runs));
        if (row->runs == NULL) {
            fprintf(stderr, "locklab: out of memory\n");
            return EXIT_ENV;
        }
        for (size_t j = 0; j < m->seeds; j++) {
            if (signals_received()) {
                m->complete = false;
                m->cut_short = true;
                return exit_worse(rc, EXIT_INTERRUPTED);
            }
            uint64_t seed = p->scn[i].seed + j;
            if (!o->quiet) {
                FILE *human = o->to_stderr ? stderr : stdout;
                fprintf(human, "== [%zu/%zu] %s (%s), seed %llu\n", ++k, total, row->name,
                        row->algorithm, (unsigned long long)seed);
                fflush(human);
            }
            int one = run_seed(&p->scn[i], seed, &row->runs[j], m, o);
            row->n_runs++;
            row->matched += row->runs[j].matched;
            if (one == EXIT_ENV || one == EXIT_INTERRUPTED)
                m->complete = false;
            m->cut_short = m->cut_short || one == EXIT_INTERRUPTED;
            rc = exit_worse(rc, one);
        }
    }
    return rc;
}

static int write_matrix(const struct matrix *m)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/matrix.md", m->out_dir);
    int rc = matrix_markdown(path, m);
    if (rc == 0) {
        snprintf(path, sizeof(path), "%s/matrix.json", m->out_dir);
        rc = matrix_json(path, m);
    }
    if (rc == 0) {
        snprintf(path, sizeof(path), "%s/matrix.html", m->out_dir);
        rc = matrix_html(path, m);
    }
    if (rc < 0)
        fprintf(stderr, "locklab: cannot write %s\n", path);
    return rc;
}

/* --plan: each row --only selects, its lock and what it expects, as
 * `locklab list scenarios` describes a scenario; nothing is started. */
static void print_plan(const struct plan *p, const struct matrix_opts *o)
{
    int width = 0;
    for (size_t i = 0; i < p->n; i++)
        width = (int)strlen(p->scn[i].name) > width ? (int)strlen(p->scn[i].name) : width;
    printf("%zu row%s of %s, %lld seed%s each:\n", p->n, p->n == 1 ? "" : "s", o->dir, o->seeds,
           o->seeds == 1 ? "" : "s");
    for (size_t i = 0; i < p->n; i++) {
        printf("  %-*s  %s; expects ", width, p->scn[i].name, p->scn[i].algorithm);
        report_expectation(stdout, &p->scn[i]);
        printf("\n");
    }
}

/* The matrix o asks, planned into p and run into m (both zeroed); its
 * exit code. */
static int matrix(const struct matrix_opts *o, struct plan *p, struct matrix *m)
{
    int rc = plan_rows(o, p, m);
    if (rc)
        return rc;
    if (o->plan) {
        print_plan(p, o);
        return 0;
    }
    snprintf(m->dir, sizeof(m->dir), "%s", o->dir);
    m->seeds = (size_t)o->seeds;
    memcpy(m->percentiles, o->percentiles, sizeof(m->percentiles));
    m->n_percentiles = o->n_percentiles;
    m->complete = true;
    struct run_opts live = o->live;
    if ((rc = metrics_listen(&live)) != 0)
        return rc;
    matrix_metrics = live.metrics_srv;
    bool created;
    rc = make_run_dir(o->out, "known-results", "matrix", m->out_dir, sizeof(m->out_dir), &created);
    if (rc) {
        metrics_http_stop(live.metrics_srv, 0);
        return rc;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = run_rows(p, o, m);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    m->elapsed_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (write_matrix(m) < 0)
        rc = exit_worse(rc, EXIT_ENV);
    else
        runs_latest_link(m->out_dir);
    matrix_terminal(o->to_stderr ? stderr : stdout, m, o->wide);
    if (o->csv)
        matrix_csv(stdout, m);
    rc = finish_outputs(rc, m->out_dir, "matrix.json", o->json_to);
    metrics_http_stop(live.metrics_srv, live.metrics_linger); /* the reports are written */
    matrix_metrics = NULL;
    return rc;
}

int cmd_matrix(int argc, char **argv)
{
    struct matrix_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc;
    struct plan *p = calloc(1, sizeof(*p));
    struct matrix *m = calloc(1, sizeof(*m));
    if (m)
        m->meta = run_meta_current();
    if (p == NULL || m == NULL) {
        fprintf(stderr, "locklab: out of memory\n");
        rc = EXIT_ENV;
    } else {
        rc = matrix(&o, p, m);
    }
    for (size_t i = 0; m && i < m->n; i++)
        free(m->rows[i].runs);
    free(m);
    free(p);
    return rc;
}
