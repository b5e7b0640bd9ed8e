/* cmd_compare.c - `locklab compare`: one scenario with several algorithms,
 * one after another on one fleet, then one table side by side.
 *
 * Everything is validated before anything starts: each algorithm must be
 * able to run the scenario as written (fencing needs tokens, a watchdog
 * needs renew). Between two algorithms the managed Redis servers are
 * emptied, so what one left behind cannot slow or block the next, and
 * every managed server is given (at most SETTLE_MAX_MS) to go quiet: one
 * still working off the last run's backlog takes the cores the next
 * run's clients and servers need, whether the next uses it or not (a
 * 10,000-client etcd run left etcd busy, and the ZooKeeper run after it
 * could get no sessions), so all of them settle, not only the next's.
 *
 * The scenario's expect is written for its own lock (lock.algorithm):
 * only that lock's runs are judged by it, and only its missing it makes
 * the comparison FAIL (exit 1). Every other lock runs as a scenario that
 * expects nothing: safety (no violation, every invariant held), which is
 * what its row and its run folder's verdict then say.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/compare.h"
#include "reports/csv.h"
#include "sim/cli/cli.h"
#include "sim/cli/metrics_http.h"
#include "sim/cli/signals.h"
#include "sim/engine/engine.h"
#include "sim/fleet/settle.h"
#include "sim/workloads/workload.h"

struct plan {
    int own; /* the index of the lock the scenario's expect is written for; -1: not compared */
    const struct lock_ops *ops[COMPARE_MAX];
    struct scenario scn[COMPARE_MAX];
    char skip[COMPARE_MAX][256]; /* why ops[i] cannot run the scenario; "" = it can */
    size_t n;
    const struct lock_ops *run[COMPARE_MAX]; /* the ones that can, for the fleet */
    size_t n_run;
};

/* The scenario as the comparison shows it: its own lock's, with its
 * expect, when that one runs; else the first that runs. */
static const struct scenario *first_runnable(const struct plan *p)
{
    if (p->own >= 0 && !p->skip[p->own][0])
        return &p->scn[p->own];
    for (size_t i = 0; i < p->n; i++)
        if (!p->skip[i][0])
            return &p->scn[i];
    return NULL;
}

/* What a scenario that states no expect expects (scn_finish's default):
 * no violation, every invariant held; the faults' own expectations are
 * about the scenario's lock too, so none. */
static void judge_by_safety(struct scenario *s)
{
    s->expect.violations = (struct expect_num){EXPECT_EQ, 0};
    s->expect.invariants = EXPECT_INV_HOLD;
    s->expect.rejected_accesses = (struct expect_num){0};
    for (size_t i = 0; i < s->n_faults; i++)
        s->faults[i].expect = (struct fault_expect){0};
}

static int parse_algorithms(const char *list, struct plan *p)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", list);
    p->n = 0;
    for (char *save = NULL, *name = strtok_r(buf, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        const struct lock_ops *ops = lock_find(name);
        if (ops == NULL)
            return unknown_algorithm("--algorithms", name);
        for (size_t i = 0; i < p->n; i++)
            if (p->ops[i] == ops)
                return bad_usage("--algorithms: \"%s\" is named twice", name);
        if (p->n == COMPARE_MAX)
            return bad_usage("--algorithms: at most %d", COMPARE_MAX);
        p->ops[p->n++] = ops;
    }
    if (p->n == 0)
        return bad_usage("--algorithms: expected names like %s, got \"%s\"", COMPARE_ALGORITHMS,
                         list);
    return 0;
}

/* What the scenario asks that an algorithm lacks, in why; 0 if none. A
 * comparison runs the others and lists this one as NOT RUN. */
static int unsupported(const struct scenario *s, const struct lock_ops *ops, char *why, size_t len)
{
    unsigned lacks = scenario_lacks(s, ops);
    if (lacks & LACKS_TOKEN)
        snprintf(why, len, "the scenario checks fencing tokens (\"fencing\": true); %s gives none",
                 ops->name);
    else if (lacks & LACKS_RENEW)
        snprintf(why, len, "the scenario needs a watchdog (lock.watchdog); %s cannot renew a lock",
                 ops->name);
    else if (lacks & LACKS_REENTRY)
        snprintf(why, len, "the scenario re-enters its lock (workload.%s); %s is not reentrant",
                 s->workload->reentry_key, ops->name);
    else if (lacks & LACKS_LATCH)
        scenario_latch_misfit(s, ops, why, len);
    else if (lacks & LACKS_MODE)
        snprintf(why, len, "%s needs %s sections; %s grants none", s->workload->name,
                 lock_mode_name(s->workload->lock_mode), ops->name);
    else if (lacks & LACKS_PERMITS)
        snprintf(why, len, "the scenario asks %u permits a key (lock.permits); %s is no semaphore",
                 (unsigned)s->permits, ops->name);
    else if (lacks & LACKS_EXCLUSION)
        snprintf(why, len,
                 "%s is not a lock: a refused write cannot undo %s; %s needs mutual "
                 "exclusion",
                 ops->name, s->workload->needs_exclusion, s->workload->name);
    else if (scenario_fault_misfit(s, ops, why, len) < 0)
        return 0;
    return -1;
}

/* The scenario as each algorithm will run it, each validated; the ones
 * that cannot run it are marked, and at least one must be able to. */
static int plan_scenarios(const struct run_opts *o, struct plan *p, struct comparison *c)
{
    char err[SCENARIO_ERR_MAX];
    struct scenario *raw = calloc(1, sizeof(*raw)); /* as written, before any algorithm's */
    int rc = EXIT_PASS;
    if (raw == NULL) {
        fprintf(stderr, "locklab: out of memory\n");
        rc = EXIT_ENV;
    } else {
        rc = read_scenario(o, raw); /* o's algorithm is NULL: compare takes --algorithms */
    }
    struct run_opts one = *o;
    p->n_run = 0;
    p->own = -1;
    if (rc == 0)
        compare_expect_of(c, raw);
    for (size_t i = 0; i < p->n && rc == 0; i++) {
        p->skip[i][0] = '\0';
        bool own = strcmp(p->ops[i]->name, raw->algorithm) == 0;
        p->own = own ? (int)i : p->own;
        if (unsupported(raw, p->ops[i], p->skip[i], sizeof(p->skip[i])) < 0)
            continue;
        one.algorithm = p->ops[i]->name;
        rc = load_scenario(&one, &p->scn[i]);
        if (rc == 0 && !own)
            judge_by_safety(&p->scn[i]);
        if (rc == 0)
            p->run[p->n_run++] = p->ops[i];
    }
    free(raw);
    if (rc)
        return rc;
    if (p->n_run == 0)
        return bad_usage("compare: none of the algorithms can run %s (%s)", o->scenario,
                         p->skip[0]);
    if (fleet_check(first_runnable(p), p->run, p->n_run, err, sizeof(err)) < 0)
        return bad_usage("%s", err);
    return 0;
}

static void not_run(struct comparison *c, const struct lock_ops *ops, bool own, const char *why)
{
    struct compare_row *row = &c->rows[c->n++];
    memset(row, 0, sizeof(*row));
    snprintf(row->algorithm, sizeof(row->algorithm), "%s", ops->name);
    snprintf(row->verdict, sizeof(row->verdict), "NOT RUN");
    snprintf(row->note, sizeof(row->note), "%s", why);
    row->scenario_lock = own;
}

static void add_servers(struct comparison *c, const struct run_result *res)
{
    for (size_t i = 0; i < res->n_servers; i++) {
        bool seen = false;
        for (size_t j = 0; j < c->n_servers; j++)
            seen = seen || strcmp(c->servers[j], res->servers[i]) == 0;
        if (!seen && c->n_servers < sizeof(c->servers) / sizeof(c->servers[0]))
            snprintf(c->servers[c->n_servers++], sizeof(c->servers[0]), "%s", res->servers[i]);
    }
    report_meta_merge(c->versions, &c->n_versions, sizeof(c->versions) / sizeof(c->versions[0]),
                      res->versions, res->n_servers, true);
    c->has_proxy = c->has_proxy || res->has_proxy;
}

/* What the wait before algorithm next came to, on stderr. */
static void say_settled(const struct settle_report *r, const char *next)
{
    double s = (double)r->waited_ms / 1000.0;
    if (r->n_watched == 0)
        return; /* external servers only: nothing of theirs can be watched */
    if (r->state == SETTLE_BOUND)
        fprintf(stderr,
                "locklab: before %s: waited %.1f s, the bound, for the servers to settle; still "
                "busy: %s; %s runs anyway\n",
                next, s, r->still, next);
    else if (r->state == SETTLE_QUIET && r->n_busy > 0)
        fprintf(stderr,
                "locklab: before %s: waited %.1f s for %s to settle (under %d %% of a core)\n",
                next, s, r->busy, SETTLE_BUSY_PCT);
    else if (r->state == SETTLE_QUIET)
        fprintf(stderr, "locklab: before %s: the servers were quiet (%.1f s)\n", next, s);
}

/* One run of a comparison: algorithm i of the plan on its seed-th seed
 * (from 0), the k-th run of all (from 1). */
struct turn {
    size_t i, seed, k, total;
};

static bool is_own(const struct plan *p, size_t i)
{
    return p->own == (int)i;
}

/* The run's folder: OUT/<name>/, or OUT/<name>/seed-<S>/ with seeds. */
static int turn_dir(const struct plan *p, const struct turn *t, const struct comparison *c,
                    uint64_t seed, char *dir, size_t len, bool *created)
{
    char want[sizeof(((struct run_result *)0)->run_dir)], parent[sizeof(want)];
    snprintf(parent, sizeof(parent), "%.*s/%s", (int)sizeof(parent) - 60, c->out_dir,
             p->ops[t->i]->name);
    if (c->seeds == 1)
        return make_run_dir(parent, c->scn->name, p->ops[t->i]->name, dir, len, created);
    bool made;
    int rc = make_run_dir(parent, c->scn->name, p->ops[t->i]->name, want, sizeof(want), &made);
    snprintf(want, sizeof(want), "%.*s/seed-%" PRIu64, (int)sizeof(want) - 30, parent, seed);
    return rc ? rc : make_run_dir(want, c->scn->name, p->ops[t->i]->name, dir, len, created);
}

/* A turn that did not run: its row NOT RUN (its first seed), or the seed
 * marked so. */
static void turn_not_run(const struct plan *p, const struct turn *t, struct comparison *c,
                         uint64_t seed, const char *why)
{
    if (t->seed == 0) {
        not_run(c, p->ops[t->i], is_own(p, t->i), why);
        return;
    }
    compare_seed_not_run(&c->rows[c->n - 1], seed, why);
    compare_row_judge(&c->rows[c->n - 1]);
}

/* What a finished run adds: its row (its first seed), or a seed of it. */
static void turn_ran(const struct plan *p, const struct turn *t, struct comparison *c,
                     const struct run_result *res)
{
    if (t->seed == 0) {
        struct compare_row *row = &c->rows[c->n++];
        row->scenario_lock = is_own(p, t->i);
        compare_row_fill(row, res);
    } else {
        compare_seed_add(&c->rows[c->n - 1], res);
        compare_row_judge(&c->rows[c->n - 1]);
    }
    add_servers(c, res);
}

/* Run turn t into its folder and res (zeroed); returns the run's exit
 * code. */
static int run_into(struct plan *p, const struct turn *t, struct fleet *f, const struct run_opts *o,
                    struct comparison *c, struct run_result *res, struct scenario *scn)
{
    char err[256];
    bool created;
    const char *name = p->ops[t->i]->name;
    if (turn_dir(p, t, c, scn->seed, res->run_dir, sizeof(res->run_dir), &created)) {
        turn_not_run(p, t, c, scn->seed, "its run folder could not be made");
        return EXIT_ENV;
    }
    if (t->k > 1) {
        struct settle_report settled;
        fleet_settle(&f->cl, SETTLE_MAX_MS, signals_received, &settled);
        if (!o->quiet)
            say_settled(&settled, name);
    }
    if (t->k > 1 && fleet_reset(f, err, sizeof(err)) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        turn_not_run(p, t, c, scn->seed, err);
        return EXIT_ENV;
    }
    FILE *human = o->to_stderr ? stderr : stdout;
    if (!o->quiet && c->seeds > 1)
        fprintf(human, "== %s seed %" PRIu64 " (%zu of %zu)\n", name, scn->seed, t->k, t->total);
    else if (!o->quiet)
        fprintf(human, "== %s (%zu of %zu)\n", name, t->k, t->total);
    fflush(human);
    struct run_request req = {.scn = scn, .fleet = f, .proxy_all = o->proxy};
    char why[512];
    int rc = run_and_report(&req, o, res, NULL, why, sizeof(why));
    if (res->history_events > 0 || res->elapsed_s > 0) {
        turn_ran(p, t, c, res);
    } else {
        turn_not_run(p, t, c, scn->seed,
                     "its clients could not start or connect (the error is on stderr)");
        if (created)
            rmdir(res->run_dir); /* nothing ran: no empty folder to wonder about */
    }
    return rc;
}

static int run_one(struct plan *p, const struct turn *t, struct fleet *f, const struct run_opts *o,
                   struct comparison *c)
{
    struct run_result *res = calloc(1, sizeof(*res));
    struct scenario *scn = malloc(sizeof(*scn)); /* this seed's */
    int rc = EXIT_ENV;
    if (res == NULL || scn == NULL) {
        fprintf(stderr, "locklab: out of memory\n");
        turn_not_run(p, t, c, p->scn[t->i].seed + t->seed, "out of memory");
    } else {
        *scn = p->scn[t->i];
        scn->seed += t->seed;
        rc = run_into(p, t, f, o, c, res, scn);
        result_free(res);
    }
    free(scn);
    free(res);
    /* another lock's run that was unsafe is its row's news, not a failed
     * expectation: the comparison's exit says only the scenario's lock's */
    return rc == EXIT_FAILED && !is_own(p, t->i) ? EXIT_PASS : rc;
}

static int write_comparison(const struct comparison *c)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/compare.md", c->out_dir);
    int rc = compare_markdown(path, c);
    if (rc == 0) {
        snprintf(path, sizeof(path), "%s/compare.json", c->out_dir);
        rc = compare_json(path, c);
    }
    if (rc == 0) {
        snprintf(path, sizeof(path), "%s/compare.html", c->out_dir);
        rc = compare_html(path, c);
    }
    if (rc < 0)
        fprintf(stderr, "locklab: cannot write %s\n", path);
    return rc;
}

static int run_plan(struct plan *p, struct fleet *f, const struct run_opts *o, struct comparison *c)
{
    int rc = EXIT_PASS;
    struct run_opts each = *o;
    each.brief = 1;
    each.csv = 0; /* the comparison's, not each run's */
    each.json_to = NULL;
    struct turn t = {.total = p->n_run * c->seeds};
    for (t.i = 0; t.i < p->n; t.i++) {
        if (p->skip[t.i][0]) {
            not_run(c, p->ops[t.i], is_own(p, t.i), p->skip[t.i]);
            continue;
        }
        size_t rows = c->n;
        for (t.seed = 0; t.seed < c->seeds; t.seed++) {
            if (t.seed > 0 && (c->n == rows || !c->rows[c->n - 1].ran))
                break; /* its first seed did not run: its row says why */
            if (signals_received() || fleet_dead(f) >= 0) {
                turn_not_run(p, &t, c, p->scn[t.i].seed + t.seed,
                             signals_received() ? "interrupted" : "a managed server died");
                c->complete = false;
                rc = exit_worse(rc, signals_received() ? EXIT_INTERRUPTED : EXIT_ENV);
                continue;
            }
            t.k++;
            int one = run_one(p, &t, f, &each, c);
            if (one == EXIT_INTERRUPTED || one == EXIT_ENV)
                c->complete = false;
            rc = exit_worse(rc, one);
        }
    }
    return rc;
}

/* Can --out take each of an algorithm's runs? 0, or the usage error. */
static int check_outs(const char *out, const char *name, const struct comparison *c)
{
    int rc = check_out_dir(out, name);
    for (size_t k = 0; k < c->seeds && c->seeds > 1 && rc == 0; k++) {
        char sub[80];
        snprintf(sub, sizeof(sub), "%s/seed-%" PRIu64, name, c->scn->seed + k);
        rc = check_out_dir(out, sub);
    }
    return rc;
}

/* The comparison o asks, planned into p (zeroed), run and shown through c
 * (zeroed); its exit code. */
static int compare(const struct run_opts *o, struct plan *p, struct comparison *c)
{
    char err[512];
    int rc = parse_algorithms(o->algorithms ? o->algorithms : COMPARE_ALGORITHMS, p);
    if (rc == 0)
        rc = plan_scenarios(o, p, c);
    if (rc)
        return rc;
    c->scn = first_runnable(p);
    c->seeds = o->seeds ? o->seeds : 1;
    c->complete = true;
    memcpy(c->percentiles, o->percentiles, sizeof(c->percentiles));
    c->n_percentiles = o->n_percentiles;
    for (size_t i = 0; i < p->n_run && o->out && rc == 0; i++)
        rc = check_outs(o->out, p->run[i]->name, c); /* before anything starts */
    struct run_opts with = *o;                       /* with its metrics endpoint, when asked */
    if (rc == 0)
        rc = metrics_listen(&with);
    bool created;
    if (rc == 0)
        rc =
            make_run_dir(o->out, c->scn->name, "compare", c->out_dir, sizeof(c->out_dir), &created);
    if (rc) {
        metrics_http_stop(with.metrics_srv, 0);
        return rc;
    }
    /* one fleet for every run; a second Ctrl-C kills its servers */
    const struct run_progress servers = {.servers_up = signals_publish_servers,
                                         .servers_down = signals_forget_servers};
    struct fleet *f = engine_fleet_up(c->scn, p->run, p->n_run, &servers, err, sizeof(err));
    if (f == NULL) {
        fprintf(stderr, "locklab: %s\n", err);
        metrics_http_stop(with.metrics_srv, 0);
        return EXIT_ENV;
    }
    rc = run_plan(p, f, &with, c);
    char logs[600];
    snprintf(logs, sizeof(logs), "%s/servers", c->out_dir);
    engine_fleet_down(f, logs, &servers);
    if (write_comparison(c) < 0)
        rc = exit_worse(rc, EXIT_ENV);
    else
        runs_latest_link(c->out_dir);
    FILE *human = o->to_stderr ? stderr : stdout;
    if (!o->quiet) {
        compare_terminal(human, c, o->wide);
    } else {
        char verdict[600];
        fprintf(human, "End of compare: %s  %s/\n", compare_verdict(c, verdict, sizeof(verdict)),
                c->out_dir);
    }
    if (o->csv)
        compare_csv(stdout, c);
    rc = finish_outputs(rc, c->out_dir, "compare.json", o->json_to);
    metrics_http_stop(with.metrics_srv, with.metrics_linger); /* the reports are written */
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    struct run_opts o;
    int rc = parse_run_opts(argc, argv, &o, RUN_OPTS_COMPARE);
    if (rc)
        return rc;
    struct plan *p = calloc(1, sizeof(*p));
    struct comparison *c = calloc(1, sizeof(*c));
    if (c)
        c->meta = run_meta_current();
    if (p == NULL || c == NULL) {
        fprintf(stderr, "locklab: out of memory\n");
        rc = EXIT_ENV;
    } else {
        rc = compare(&o, p, c);
        compare_free(c); /* the rows' series and settings */
    }
    free(c);
    free(p);
    return rc;
}
