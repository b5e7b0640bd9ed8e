/* cmd_scorecard.c - `locklab scorecard`: every lock through one fault
 * suite on one business scenario, then one grid and the answer to "which
 * lock should we use?".
 *
 * Every cell is planned and validated before anything starts
 * (scorecard_plan.c). Each seed of each cell runs on servers started
 * afresh, as a matrix row does: a fault changes what the servers hold. A
 * cell is judged by what happened in it, never by an expectation; the
 * exit code says whether every cell could be judged (0, or 3), or, with
 * --require-safe, whether a named lock stayed safe everywhere (1 if not).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "reports/report.h"
#include "reports/scorecard.h"
#include "sim/cli/cli.h"
#include "sim/cli/scorecard_plan.h"
#include "sim/cli/signals.h"
#include "sim/engine/engine.h"

static int parse_opts(int argc, char **argv, struct sc_opts *o)
{
    static const struct option longs[] = {{"suite", required_argument, 0, 'S'},
                                          {"scenario", required_argument, 0, 's'},
                                          {"algorithms", required_argument, 0, 'A'},
                                          {"classes", required_argument, 0, 'K'},
                                          {"only", required_argument, 0, 'O'},
                                          {"seeds", required_argument, 0, 'N'},
                                          {"duration", required_argument, 0, 'd'},
                                          {"require-safe", required_argument, 0, 'R'},
                                          {"no-fenced-rows", no_argument, 0, 'F'},
                                          {"plan", no_argument, 0, 'P'},
                                          {"out", required_argument, 0, 'o'},
                                          {"quiet", no_argument, 0, 'q'},
                                          {"csv", no_argument, 0, 'C'},
                                          {"wide", no_argument, 0, 'W'},
                                          {"json", required_argument, 0, 'J'},
                                          {"junit", required_argument, 0, 'U'},
                                          {0, 0, 0, 0}};
    *o = (struct sc_opts){0};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "A:d:o:q", longs, NULL)) != -1) {
        if (c == 'N' && parse_long(optarg, 1, SCORECARD_MAX_SEEDS, &o->seeds) < 0)
            return bad_usage("--seeds: expected an integer in 1..%d, got \"%s\"",
                             SCORECARD_MAX_SEEDS, optarg);
        else if (c == 'd' && parse_duration_opt(optarg, &o->duration_ms))
            return EXIT_USAGE;
        else if (c == 'S')
            o->suite = optarg;
        else if (c == 's')
            o->scenario = optarg;
        else if (c == 'A')
            o->algorithms = optarg;
        else if (c == 'K')
            o->classes = optarg;
        else if (c == 'O')
            o->only = optarg;
        else if (c == 'R')
            o->require_safe = optarg;
        else if (c == 'F')
            o->no_fenced_rows = true;
        else if (c == 'P')
            o->dry_run = true;
        else if (c == 'o')
            o->out = optarg;
        else if (c == 'q')
            o->quiet = 1;
        else if (c == 'C')
            o->csv = 1;
        else if (c == 'W')
            o->wide = 1;
        else if (c == 'J')
            o->json_to = optarg;
        else if (c == 'U')
            o->junit = optarg;
        else if (c == '?' || c == ':')
            return bad_usage("scorecard: unknown or incomplete option \"%s\"", argv[optind - 1]);
    }
    if (optind < argc)
        return bad_usage("scorecard: unexpected argument \"%s\" (the scenario is --scenario FILE)",
                         argv[optind]);
    if (o->only && (o->algorithms || o->classes))
        return bad_usage("%s", "scorecard: --only LOCK/CLASS names its cell; leave out "
                               "--algorithms and --classes");
    o->to_stderr = o->csv || (o->json_to && strcmp(o->json_to, "-") == 0);
    return check_stdout_taken(o->csv, o->json_to);
}

/* Every lock --require-safe names must be a row of the grid. */
static int check_required(const struct sc_opts *o, struct scorecard *sc)
{
    if (o->require_safe == NULL)
        return 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", o->require_safe);
    snprintf(sc->require_safe, sizeof(sc->require_safe), "%s", o->require_safe);
    for (char *save = NULL, *n = strtok_r(buf, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
        bool found = false;
        for (size_t r = 0; r < sc->n_rows && !found; r++)
            found = strcmp(sc->rows[r].label, n) == 0 || strcmp(sc->rows[r].algorithm, n) == 0;
        if (!found)
            return bad_usage("--require-safe: \"%s\" is no row of this scorecard", n);
    }
    return 0;
}

/* The command that reproduces seed of a cell, its scenario in cell_dir. */
static void reproduce(struct scorecard_cell *cell, const char *cell_dir, uint64_t seed)
{
    snprintf(cell->command, sizeof(cell->command), "locklab run %.500s/scenario.json --seed %llu",
             cell_dir, (unsigned long long)seed);
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    bool ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* The cell's folder, its scenario.json written. */
static int make_cell_dir(const struct sc_plan *p, size_t r, size_t c, const char *out_dir,
                         struct scorecard_cell *cell, char *dir, size_t len)
{
    char slug[64], path[700];
    snprintf(dir, len, "%.400s/%s", out_dir, suite_lock_slug(&p->locks[r], slug, sizeof(slug)));
    mkdir(dir, 0755);
    snprintf(dir + strlen(dir), len - strlen(dir), "/%s", p->suite.classes[p->cls[c]].name);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return -1;
    snprintf(path, sizeof(path), "%.480s/scenario.json", dir);
    snprintf(cell->scenario, sizeof(cell->scenario), "%.511s", path);
    return p->text[r][c] ? write_text(path, p->text[r][c]) : 0;
}

/* A seed's line: judged by what happened, not by an expectation. */
static void say_seed(const struct sc_opts *o, const struct run_result *res)
{
    if (o->quiet)
        return;
    char safety[160];
    struct report_safety sf = report_safety_of(res);
    FILE *human = o->to_stderr ? stderr : stdout;
    if (!res->complete)
        fprintf(human, "   INCOMPLETE (%s): %s  %s/\n",
                report_safety_text(&sf, safety, sizeof(safety)), res->incomplete_reason,
                res->run_dir);
    else
        fprintf(human, "   %s  %s/\n", report_safety_text(&sf, safety, sizeof(safety)),
                res->run_dir);
}

static int run_seed(const struct scenario *cell_scn, uint64_t seed, const char *cell_dir,
                    const struct sc_opts *o, struct scorecard_run *out)
{
    out->seed = seed;
    snprintf(out->run_dir, sizeof(out->run_dir), "%.400s/seed-%llu", cell_dir,
             (unsigned long long)seed); /* ran or not */
    struct run_opts ro = {.quiet = 1, .silent = 1, .max_violations = 10, .to_stderr = o->to_stderr};
    struct grid_seed *g = grid_seed_run(cell_scn, seed, out->run_dir, &ro);
    if (g == NULL) {
        snprintf(out->why, sizeof(out->why), "out of memory");
        return EXIT_ENV;
    }
    if (g->ran) {
        scorecard_run_fill(out, &g->res);
        say_seed(o, &g->res);
    } else
        snprintf(out->why, sizeof(out->why), "%s", g->why);
    int rc = g->rc;
    grid_seed_free(g);
    return rc;
}

/* The known results of the cell's class that speak of its row. */
static void attach_known(const struct sc_plan *p, size_t r, size_t c, struct scorecard_cell *cell)
{
    const struct suite_class *k = &p->suite.classes[p->cls[c]];
    const struct suite_lock *l = &p->locks[r];
    for (size_t i = 0; i < k->n_known; i++) {
        struct suite_lock kl;
        char why[200];
        if (suite_lock_parse(k->known[i].row, &kl, why, sizeof(why)) < 0 || kl.ops != l->ops ||
            kl.fencing != l->fencing || (strchr(k->known[i].row, '@') && kl.mode != l->mode))
            continue;
        snprintf(cell->known, sizeof(cell->known), "%s", k->known[i].result);
        snprintf(cell->known_source, sizeof(cell->known_source), "%s (published: %s)",
                 k->known[i].source, k->known[i].unsafe ? "unsafe" : "safe");
        cell->known_unsafe = k->known[i].unsafe;
        return;
    }
}

static int run_cell(const struct sc_plan *p, size_t r, size_t c, const struct sc_opts *o,
                    struct scorecard *sc, size_t *k, size_t total)
{
    struct scorecard_cell *cell = &sc->rows[r].cells[c];
    char dir[600];
    if (make_cell_dir(p, r, c, sc->out_dir, cell, dir, sizeof(dir)) < 0) {
        fprintf(stderr, "locklab: cannot write %s/scenario.json: %s\n", dir, strerror(errno));
        return EXIT_ENV;
    }
    attach_known(p, r, c, cell);
    if (cell->state != CELL_RAN)
        return 0;
    reproduce(cell, dir, sc->first_seed);
    int rc = EXIT_PASS;
    FILE *human = o->to_stderr ? stderr : stdout;
    for (size_t s = 0; s < sc->seeds; s++) {
        if (signals_received()) {
            sc->cut_short = true;
            return exit_worse(rc, EXIT_INTERRUPTED);
        }
        uint64_t seed = sc->first_seed + s;
        if (!o->quiet)
            fprintf(human, "== [%zu/%zu] %s / %s, seed %llu\n", ++*k, total, sc->rows[r].label,
                    sc->classes[c].title, (unsigned long long)seed);
        fflush(human);
        struct scorecard_run *run = &cell->runs[cell->n_runs++];
        int one = run_seed(p->scn[r][c], seed, dir, o, run);
        cell->n_unsafe += run->ran && !run->safe;
        cell->n_incomplete += !run->ran || !run->complete;
        /* a run is judged here, not by an expectation: only what kept it
         * from being judged counts against the exit code */
        rc = exit_worse(rc, one == EXIT_FAILED ? EXIT_PASS : one);
    }
    return rc;
}

static int run_grid(const struct sc_plan *p, const struct sc_opts *o, struct scorecard *sc)
{
    size_t total = 0, k = 0;
    for (size_t r = 0; r < sc->n_rows; r++)
        for (size_t c = 0; c < sc->n_classes; c++)
            total += sc->rows[r].cells[c].state == CELL_RAN ? sc->seeds : 0;
    int rc = EXIT_PASS;
    for (size_t r = 0; r < sc->n_rows && !sc->cut_short; r++)
        for (size_t c = 0; c < sc->n_classes && !sc->cut_short; c++)
            rc = exit_worse(rc, run_cell(p, r, c, o, sc, &k, total));
    for (size_t r = 0; r < sc->n_rows; r++)
        for (size_t c = 0; c < sc->n_classes; c++)
            if (sc->rows[r].cells[c].n_incomplete ||
                (sc->rows[r].cells[c].state == CELL_RAN && sc->rows[r].cells[c].n_runs < sc->seeds))
                sc->complete = false;
    return rc;
}

static int write_outputs(const struct scorecard *sc, const struct sc_opts *o)
{
    char path[700];
    int rc = 0;
    snprintf(path, sizeof(path), "%s/scorecard.md", sc->out_dir);
    rc = scorecard_markdown(path, sc);
    if (rc == 0) {
        snprintf(path, sizeof(path), "%s/scorecard.json", sc->out_dir);
        rc = scorecard_json(path, sc);
    }
    if (rc == 0) {
        snprintf(path, sizeof(path), "%s/scorecard.html", sc->out_dir);
        rc = scorecard_html(path, sc);
    }
    if (rc == 0 && o->junit) {
        snprintf(path, sizeof(path), "%s", o->junit);
        rc = scorecard_junit(path, sc);
    }
    if (rc < 0)
        fprintf(stderr, "locklab: cannot write %s: %s\n", path, strerror(errno));
    return rc < 0 ? EXIT_ENV : 0;
}

/* --plan: each cell as it would run (its lease, layout and faults) or
 * why it would not; nothing starts. */
static void print_plan(const struct sc_plan *p, const struct scorecard *sc)
{
    printf("scorecard %s: %s, ttl %u ms, %zu seed%s a cell, %zu rows x %zu classes\n", sc->suite,
           sc->scenario_path, sc->ttl_ms, sc->seeds, sc->seeds == 1 ? "" : "s", sc->n_rows,
           sc->n_classes);
    for (size_t r = 0; r < sc->n_rows; r++) {
        const struct scorecard_row *row = &sc->rows[r];
        printf("%s%s%s\n", row->label, row->mode[0] ? ": " : "", row->mode);
        if (row->not_run[0]) {
            printf("  NOT RUN: %s\n", row->not_run);
            continue;
        }
        for (size_t c = 0; c < sc->n_classes; c++) {
            const struct scorecard_cell *cell = &row->cells[c];
            const struct scenario *s = p->scn[r][c];
            if (cell->state != CELL_RAN) {
                printf("  %-28s n/a: %s\n", sc->classes[c].name, cell->na_why);
                continue;
            }
            char plan[200], lease[32];
            snprintf(lease, sizeof(lease), cell->lease_ms ? "%.0f ms" : "none", cell->lease_ms);
            printf("  %-28s lease %s, %s, %.1f s", sc->classes[c].name, lease, cell->layout,
                   (double)s->duration_ms / 1000.0);
            for (size_t i = 0; i < s->n_faults; i++)
                printf("%s%s", i ? "; " : ": ", fault_plan(&s->faults[i], plan, sizeof(plan)));
            printf("\n");
        }
    }
}

static int scorecard(const struct sc_opts *o, struct sc_plan *p, struct scorecard *sc)
{
    int rc = scorecard_plan(o, p, sc);
    if (rc == 0 && o->dry_run) {
        print_plan(p, sc);
        return EXIT_PASS;
    }
    if (rc == 0)
        rc = check_required(o, sc);
    if (rc == 0 && o->out)
        rc = check_out_dir(o->out, NULL);
    bool created;
    char what[96];
    snprintf(what, sizeof(what), "scorecard-%s", sc->suite);
    if (rc == 0)
        rc = make_run_dir(o->out, sc->scenario, what, sc->out_dir, sizeof(sc->out_dir), &created);
    if (rc)
        return rc;
    sc->complete = true;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = run_grid(p, o, sc);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    sc->elapsed_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (sc->cut_short)
        sc->complete = false;
    int written = write_outputs(sc, o);
    rc = exit_worse(rc, written);
    if (written == 0) /* as matrix and compare: the folder is whole, whatever its cells said */
        runs_latest_link(sc->out_dir);
    scorecard_terminal(o->to_stderr ? stderr : stdout, sc, o->wide);
    if (o->csv)
        scorecard_csv(stdout, sc);
    char unsafe[256];
    if (rc == EXIT_PASS && scorecard_required_unsafe(sc, unsafe, sizeof(unsafe))[0])
        rc = EXIT_FAILED;
    if (rc == EXIT_PASS && !sc->complete)
        rc = EXIT_ENV; /* a cell that could not be judged is no PASS */
    return finish_outputs(rc, sc->out_dir, "scorecard.json", o->json_to);
}

int cmd_scorecard(int argc, char **argv)
{
    struct sc_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc;
    struct sc_plan *p = calloc(1, sizeof(*p));
    struct scorecard *sc = calloc(1, sizeof(*sc));
    if (sc)
        sc->meta = run_meta_current();
    if (p == NULL || sc == NULL) {
        fprintf(stderr, "locklab: out of memory\n");
        rc = EXIT_ENV;
    } else {
        rc = scorecard(&o, p, sc);
        scorecard_plan_free(p);
    }
    free(sc);
    free(p);
    return rc;
}
