/* test_scorecard.c - the scorecard's renderers (reports/scorecard*.c) on
 * scorecards built by hand, with the exact text expected: each cell's
 * word and figure, the answer line, CSV lines, JUnit's outcomes and
 * escaping, the terminal grid within 120 columns for 11 classes and long
 * labels, the files written with links relative to the scorecard's
 * folder. Nothing runs.
 *
 *   test_scorecard               the tests
 *   test_scorecard --write DIR   the sample scorecard into DIR, every
 *                                seed's folder with an empty report.html
 *                                (tests/pages/check_scorecard.py reads it)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "algorithms/lock.h"
#include "reports/scorecard.h"
#include "tests/lib/capture.h"
#include "tests/lib/scratch.h"

/* --- a scorecard by hand --------------------------------------------------- */

enum {
    K_NONE,
    K_PAUSE_PAST,
    K_PAUSE_IN,
    K_CRASH,
    K_WAITER,
    K_RESTART,
    K_SRV_PAUSE,
    K_LEADER,
    K_LATENCY,
    K_CUT_OFF,
    K_CLOCK,
    N_CLASSES
};

static const char *const classes[N_CLASSES][4] = {
    {"none", "no fault", "none", "default"},
    {"holder_paused_past_lease", "holder paused past its lease", "pause>L", "default"},
    {"holder_paused_inside_lease", "holder paused inside its lease", "pause<L", "default"},
    {"holder_crashed", "holder crashed", "crash", "default"},
    {"waiter_paused", "next waiter paused before its grant", "waiter", "default"},
    {"server_restarted", "lock server killed and restarted with its data", "restart", "default"},
    {"server_paused", "lock server paused", "srvstop", "default"},
    {"leader_lost", "leader or master lost", "leader", "replicated"},
    {"latency_100ms", "100 ms latency", "lat100", "default"},
    {"holder_cut_off", "holder cut off past its lease", "cutoff", "default"},
    {"clock_jump", "clocks jumped forward", "clock+", "default"},
};

static void add_classes(struct scorecard *sc, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        struct scorecard_class *c = &sc->classes[k];
        snprintf(c->name, sizeof(c->name), "%s", classes[k][0]);
        snprintf(c->title, sizeof(c->title), "%s", classes[k][1]);
        snprintf(c->short_, sizeof(c->short_), "%s", classes[k][2]);
        snprintf(c->layout, sizeof(c->layout), "%s", classes[k][3]);
        snprintf(c->strikes, sizeof(c->strikes), "%s", k ? "the holder" : "nothing");
        snprintf(c->size, sizeof(c->size), "%s", k ? "2.5 leases" : "-");
    }
    sc->n_classes = n;
}

static void head(struct scorecard *sc, const char *out)
{
    memset(sc, 0, sizeof(*sc));
    snprintf(sc->suite, sizeof(sc->suite), "quick");
    snprintf(sc->suite_path, sizeof(sc->suite_path), "scenarios/scorecard/quick.json");
    snprintf(sc->description, sizeof(sc->description), "every lock, the faults that matter");
    snprintf(sc->scenario, sizeof(sc->scenario), "flash_sale");
    snprintf(sc->scenario_path, sizeof(sc->scenario_path), "scenarios/flash_sale.json");
    snprintf(sc->out_dir, sizeof(sc->out_dir), "%s", out);
    sc->ttl_ms = 500;
    sc->seeds = 3;
    sc->first_seed = 1;
    sc->complete = true;
    sc->elapsed_s = 540.2;
}

static struct scorecard_row *add_row(struct scorecard *sc, const char *label, const char *algo,
                                     bool fencing)
{
    struct scorecard_row *row = &sc->rows[sc->n_rows++];
    snprintf(row->label, sizeof(row->label), "%s", label);
    snprintf(row->algorithm, sizeof(row->algorithm), "%s", algo);
    row->fencing = fencing;
    return row;
}

/* "redis + fencing" -> "redis-fencing": the row's folder. */
static void slug(const char *label, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = label; *p && n + 1 < len; p++)
        if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
            out[n++] = *p;
        else if (n && out[n - 1] != '-')
            out[n++] = '-';
    while (n && out[n - 1] == '-')
        n--;
    out[n] = '\0';
}

/* Every cell of a row that ran: three safe seeds with figures that grow
 * by seed, so the worst seed's is the third's. */
static void ran_all(const struct scorecard *sc, struct scorecard_row *row, double lease_ms,
                    const char *layout)
{
    char s[80];
    slug(row->label, s, sizeof(s));
    for (size_t k = 0; k < sc->n_classes; k++) {
        struct scorecard_cell *c = &row->cells[k];
        c->state = CELL_RAN;
        c->lease_ms = lease_ms;
        snprintf(c->layout, sizeof(c->layout), "%s", layout);
        snprintf(c->scenario, sizeof(c->scenario), "%.300s/%s/%s/scenario.json", sc->out_dir, s,
                 sc->classes[k].name);
        snprintf(c->command, sizeof(c->command), "locklab run %.300s/%s/%s/scenario.json --seed 1",
                 sc->out_dir, s, sc->classes[k].name);
        c->n_runs = sc->seeds;
        for (size_t i = 0; i < sc->seeds; i++) {
            struct scorecard_run *x = &c->runs[i];
            x->seed = sc->first_seed + i;
            snprintf(x->run_dir, sizeof(x->run_dir), "%.300s/%s/%s/seed-%zu", sc->out_dir, s,
                     sc->classes[k].name, i + 1);
            x->ran = x->complete = x->safe = x->invariants_hold = true;
            x->acquired = 1000;
            x->qps = 200;
            x->p50_ms = 1;
            x->p99_ms = 2 + 0.1 * (double)i;
            x->fairness = 1.2;
            x->stuck_ms = 20;
            x->has_window = k != K_NONE;
            x->window_granted = 50;
            x->window_p99_ms = 10 + (double)i;
            x->longest_no_grant_ms = 100 + 10 * (double)i;
            x->recovery_ms = 5;
        }
    }
}

/* Seed i of cell k made unsafe: v violations, and why. */
static void unsafe_seed(struct scorecard_row *row, size_t k, size_t i, uint64_t v, const char *why)
{
    struct scorecard_cell *c = &row->cells[k];
    c->runs[i].safe = false;
    c->runs[i].invariants_hold = false;
    c->runs[i].violations = v;
    snprintf(c->runs[i].why, sizeof(c->runs[i].why), "%s", why);
    snprintf(c->runs[i].broken, sizeof(c->runs[i].broken), "no_oversell");
    c->n_unsafe++;
}

static void figures(struct scorecard_row *row, size_t k, double p99, double wp99, double gap)
{
    for (size_t i = 0; i < row->cells[k].n_runs; i++) {
        struct scorecard_run *x = &row->cells[k].runs[i];
        x->p99_ms = p99 * (1 + 0.01 * (double)i);
        x->window_p99_ms = wp99 * (1 + 0.01 * (double)i);
        x->longest_no_grant_ms = gap;
    }
}

static void not_applicable(struct scorecard_row *row, size_t k, const char *why)
{
    struct scorecard_cell *c = &row->cells[k];
    memset(c, 0, sizeof(*c));
    c->state = CELL_NA;
    snprintf(c->na_why, sizeof(c->na_why), "%s", why);
}

static const char *const pause_why =
    "client 3's lease expired while paused 1.250 s; client 7 got the lock & both wrote "
    "<stock:4> \"twice\"";

/* Six locks, eleven classes, three seeds: every kind of cell. */
static void sample(struct scorecard *sc, const char *out)
{
    head(sc, out);
    add_classes(sc, N_CLASSES);

    struct scorecard_row *redis = add_row(sc, "redis", "redis", false);
    ran_all(sc, redis, 500, "1 redis");
    figures(redis, K_NONE, 2.1, 0, 0);
    unsafe_seed(redis, K_PAUSE_PAST, 0, 12, pause_why);
    unsafe_seed(redis, K_PAUSE_PAST, 1, 20, pause_why);
    unsafe_seed(redis, K_PAUSE_PAST, 2, 9, pause_why);
    snprintf(redis->cells[K_PAUSE_PAST].known, sizeof(redis->cells[0].known),
             "06_redis_pause_unfenced");
    snprintf(redis->cells[K_PAUSE_PAST].known_source, sizeof(redis->cells[0].known_source),
             "Kleppmann 2016 (published: unsafe)");
    figures(redis, K_CRASH, 3, 480, 620);
    unsafe_seed(redis, K_LEADER, 1, 3, "the replica was promoted without the lock key");
    for (size_t k = 0; k < N_CLASSES; k++)
        if (k == K_LEADER)
            snprintf(redis->cells[k].layout, sizeof(redis->cells[k].layout),
                     "1 master, 1 replica, 3 sentinels");

    struct scorecard_row *fenced = add_row(sc, "redis + fencing", "redis", true);
    ran_all(sc, fenced, 500, "1 redis");
    figures(fenced, K_NONE, 2.4, 0, 0);
    figures(fenced, K_CRASH, 3, 470, 610);
    not_applicable(fenced, K_LEADER, "redis + fencing keeps its fence on one master");

    struct scorecard_row *etcd =
        add_row(sc, "etcd (clientv3 3.4, no re-check)", "etcd", false); /* 32 characters */
    ran_all(sc, etcd, 1000, "1 etcd member");
    figures(etcd, K_NONE, 3.5, 0, 0);
    figures(etcd, K_LATENCY, 104, 103, 300);
    for (size_t k = 0; k < N_CLASSES; k++)
        if (k == K_LEADER)
            snprintf(etcd->cells[k].layout, sizeof(etcd->cells[k].layout), "3 etcd members");
    /* safe in every seed where a published finding says unsafe */
    snprintf(etcd->cells[K_RESTART].known, sizeof(etcd->cells[0].known), "21_restart_empty");
    snprintf(etcd->cells[K_RESTART].known_source, sizeof(etcd->cells[0].known_source),
             "Kleppmann 2016 (published: unsafe)");
    etcd->cells[K_RESTART].known_unsafe = true;

    struct scorecard_row *zk = add_row(sc, "zookeeper", "zookeeper", false);
    ran_all(sc, zk, 500, "1 zookeeper");
    figures(zk, K_NONE, 1.2, 0, 0);
    struct scorecard_run *lost = &zk->cells[K_RESTART].runs[1];
    lost->complete = false;
    snprintf(lost->why, sizeof(lost->why), "zookeeper-1 did not come back within 10 s");
    zk->cells[K_RESTART].n_incomplete = 1;

    struct scorecard_row *redlock = add_row(sc, "redlock", "redlock", false);
    snprintf(redlock->not_run, sizeof(redlock->not_run),
             "redlock gives no fencing tokens, and flash_sale's fence needs them");

    struct scorecard_row *pg = add_row(sc, "postgres-advisory", "postgres-advisory", false);
    ran_all(sc, pg, 0, "1 postgres");
    figures(pg, K_NONE, 0.8, 0, 0);
    pg->cells[K_SRV_PAUSE].runs[2].recovery_ms = -1; /* never granted again */
    not_applicable(pg, K_CLOCK, "postgres-advisory has no lease for a clock to shorten");

    sc->complete = false; /* zookeeper's restart could not be judged */
}

/* --- capture -------------------------------------------------------------- */

/* What the terminal and --csv show of s (the caller frees it). */
static char *terminal_of(const struct scorecard *s)
{
    struct capture cap;
    scorecard_terminal(capture_open(&cap), s, false);
    return capture_text(&cap);
}

static char *csv_of(const struct scorecard *s)
{
    struct capture cap;
    scorecard_csv(capture_open(&cap), s);
    return capture_text(&cap);
}

/* The line of text that begins with prefix, copied into out. */
static const char *line_of(const char *text, const char *prefix, char *out, size_t len)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, prefix, strlen(prefix)) == 0) {
            size_t n = strcspn(p, "\n");
            snprintf(out, len, "%.*s", (int)n, p);
            return out;
        }
    snprintf(out, len, "(no line begins with \"%s\")", prefix);
    return out;
}

/* The line that begins with prefix and the lines wrapped under it (four
 * columns further in), joined by one space; each line at most 120. */
static const char *wrapped_of(const char *text, const char *prefix, char *out, size_t len)
{
    line_of(text, prefix, out, len);
    const char *p = strstr(text, out);
    if (p == NULL || strncmp(out, prefix, strlen(prefix)) != 0)
        return out;
    size_t indent = strspn(prefix, " ") + 4, used = strlen(out);
    assert_true(used <= 120);
    for (p = strchr(p, '\n'); p && strspn(p + 1, " ") == indent; p = strchr(p + 1, '\n')) {
        size_t n = strcspn(p + 1, "\n");
        assert_true(n <= 120);
        used +=
            (size_t)snprintf(out + used, len - used, " %.*s", (int)(n - indent), p + 1 + indent);
    }
    return out;
}

static struct scorecard sc; /* ~2 MB: not on the stack */

/* --- the tests -------------------------------------------------------------- */

static void cell_words_and_figures(void **state)
{
    (void)state;
    sample(&sc, "/tmp/sc");
    char w[32], fig[32];
    const struct scorecard_row *redis = &sc.rows[0];
    struct {
        const struct scorecard_cell *c;
        size_t k;
        const char *word, *grid, *figure, *verdict;
    } want[] = {
        {&redis->cells[K_NONE], K_NONE, "safe", "safe", "2.1ms", "safe"},
        {&redis->cells[K_PAUSE_PAST], K_PAUSE_PAST, "UNSAFE", "UNSAFE", "41v", "unsafe"},
        {&redis->cells[K_PAUSE_IN], K_PAUSE_IN, "safe", "safe", "12ms", "safe"},
        /* 620 ms with no grant, past the 500 ms lease: availability is the cost */
        {&redis->cells[K_CRASH], K_CRASH, "safe", "stuck", "620ms", "safe"},
        {&redis->cells[K_LEADER], K_LEADER, "UNSAFE 1/3", "UNSAFE", "1 of 3", "mixed"},
        {&sc.rows[1].cells[K_LEADER], K_LEADER, "n/a", "n/a", "", "na"},
        {&sc.rows[3].cells[K_RESTART], K_RESTART, "INCOMPLETE", "INCOMP", "1 of 3", "incomplete"},
        {&sc.rows[4].cells[K_NONE], K_NONE, "NOT RUN", "NOT RUN", "", "not_run"},
        {&sc.rows[5].cells[K_SRV_PAUSE], K_SRV_PAUSE, "safe", "stuck", "never", "safe"},
        /* no lease: the ttl is the yardstick, and 120 ms is within it */
        {&sc.rows[5].cells[K_CRASH], K_CRASH, "safe", "safe", "12ms", "safe"},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        assert_string_equal(scorecard_cell_word(want[i].c, w, sizeof(w)), want[i].word);
        assert_string_equal(scorecard_grid_word(&sc, want[i].c, want[i].k), want[i].grid);
        assert_string_equal(scorecard_grid_figure(&sc, want[i].c, want[i].k, fig, sizeof(fig)),
                            want[i].figure);
        assert_string_equal(scorecard_verdict_name(scorecard_cell_verdict(want[i].c)),
                            want[i].verdict);
    }
    /* an UNSAFE seed in a run cut short is UNSAFE, not INCOMPLETE */
    struct scorecard_cell c = sc.rows[3].cells[K_RESTART];
    c.runs[1].safe = false;
    c.runs[1].violations = 2;
    c.n_unsafe = 1;
    assert_string_equal(scorecard_cell_word(&c, w, sizeof(w)), "UNSAFE 1/3");
    /* unsafe with no violation: an invariant broke */
    c = redis->cells[K_PAUSE_PAST];
    for (size_t i = 0; i < c.n_runs; i++)
        c.runs[i].violations = 0;
    assert_string_equal(scorecard_grid_figure(&sc, &c, K_PAUSE_PAST, fig, sizeof(fig)), "inv");
    assert_int_equal(scorecard_baseline(&sc), K_NONE);
}

static void milliseconds_read_at_a_glance(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(scorecard_ms(0.25, false, b, sizeof(b)), "0.25 ms");
    assert_string_equal(scorecard_ms(2.14, false, b, sizeof(b)), "2.1 ms");
    assert_string_equal(scorecard_ms(9.96, true, b, sizeof(b)), "10ms");
    assert_string_equal(scorecard_ms(340, true, b, sizeof(b)), "340ms");
    assert_string_equal(scorecard_ms(999.4, false, b, sizeof(b)), "999 ms");
    assert_string_equal(scorecard_ms(1234, true, b, sizeof(b)), "1.2s");
    assert_string_equal(scorecard_ms(12345, false, b, sizeof(b)), "12 s");
    assert_string_equal(scorecard_ms(-1, false, b, sizeof(b)), "-");
}

static const char *const sample_answer =
    "safe in every class, by no-fault P99: postgres-advisory 0.82 ms (worst: lock server paused, "
    "never recovered), redis + fencing 2.4 ms (worst: holder crashed, no grant for 610 ms), "
    "etcd (clientv3 3.4, no re-check) 3.6 ms (worst: 100 ms latency, P99 105 ms); UNSAFE "
    "somewhere: redis; not judged in every class: zookeeper; not run: redlock.";

static void the_answer_from_the_measured_cells(void **state)
{
    (void)state;
    sample(&sc, "/tmp/sc");
    char buf[2048];
    assert_string_equal(scorecard_answer(&sc, buf, sizeof(buf)), sample_answer);
    struct scorecard_pick p[SCORECARD_MAX_ROWS];
    assert_int_equal(scorecard_picks(&sc, p, SCORECARD_MAX_ROWS), 3);
    assert_int_equal(p[0].row, 5);
    assert_int_equal(p[0].cost.kind, COST_NEVER);
    assert_int_equal(p[1].worst, K_CRASH);
    assert_int_equal(p[1].cost.kind, COST_STRETCH);
    assert_int_equal(p[2].cost.kind, COST_P99);

    /* nothing safe everywhere: said so, with who broke */
    struct scorecard_row *fenced = &sc.rows[1];
    unsafe_seed(fenced, K_CLOCK, 0, 1, "clock");
    unsafe_seed(&sc.rows[2], K_CUT_OFF, 2, 4, "cut off");
    unsafe_seed(&sc.rows[5], K_WAITER, 0, 2, "waiter");
    assert_string_equal(scorecard_answer(&sc, buf, sizeof(buf)),
                        "no lock stayed safe in every class; UNSAFE somewhere: redis, redis + "
                        "fencing, etcd (clientv3 3.4, no re-check), postgres-advisory; not "
                        "judged in every class: zookeeper; not run: redlock.");
}

static void require_safe_names_rows(void **state)
{
    (void)state;
    sample(&sc, "/tmp/sc");
    char buf[256];
    snprintf(sc.require_safe, sizeof(sc.require_safe), "redis + fencing,zookeeper");
    assert_string_equal(scorecard_required_unsafe(&sc, buf, sizeof(buf)), "");
    /* "redis" is a label: it names that row, not the fenced one */
    snprintf(sc.require_safe, sizeof(sc.require_safe), "redis");
    assert_string_equal(scorecard_required_unsafe(&sc, buf, sizeof(buf)), "redis");
    /* "etcd" is no label: every row of the algorithm */
    unsafe_seed(&sc.rows[2], K_CUT_OFF, 2, 4, "cut off");
    snprintf(sc.require_safe, sizeof(sc.require_safe), "etcd,redis + fencing");
    assert_string_equal(scorecard_required_unsafe(&sc, buf, sizeof(buf)),
                        "etcd (clientv3 3.4, no re-check)");
    sc.complete = true;
    assert_string_equal(scorecard_verdict(&sc), "FAIL");
    sc.complete = false;
    assert_string_equal(scorecard_verdict(&sc), "INCOMPLETE");
    char end[800];
    assert_string_equal(scorecard_end_text(&sc, end, sizeof(end)),
                        "INCOMPLETE (some cells could not be judged) - required safe but UNSAFE "
                        "somewhere: etcd (clientv3 3.4, no re-check); 2 of 6 locks safe in every "
                        "class (11 classes, 3 seeds each), 540 s; UNSAFE in 3 of 53 cells that "
                        "ran, 2 n/a");
}

static void csv_one_line_per_cell_and_seed(void **state)
{
    (void)state;
    sample(&sc, "/tmp/sc");
    char *t = csv_of(&sc), l[1024];
    size_t lines = 0;
    for (const char *p = t; *p; p++)
        lines += *p == '\n';
    /* 5 rows that run x 11 cells x 3 seeds, less 2 n/a cells, + 2 n/a + 11 NOT RUN + the header */
    assert_int_equal(lines, 5 * 11 * 3 - 2 * 3 + 2 + 11 + 1);
    assert_string_equal(line_of(t, "row,", l, sizeof(l)),
                        "row,algorithm,fencing,class,seed,verdict,violations,p99_ms,window_p99_ms,"
                        "failed,longest_no_grant_ms,recovery_ms,stuck_ms,lease_ms,run_dir,why");
    assert_string_equal(line_of(t, "redis,redis,false,none,1,", l, sizeof(l)),
                        "redis,redis,false,none,1,safe,0,2.100,,0,,,20.000,500.000,"
                        "/tmp/sc/redis/none/seed-1,");
    assert_string_equal(
        line_of(t, "redis,redis,false,holder_paused_past_lease,2,", l, sizeof(l)),
        "redis,redis,false,holder_paused_past_lease,2,UNSAFE,20,2.100,11.000,0,110.000,5.000,"
        "20.000,500.000,/tmp/sc/redis/holder_paused_past_lease/seed-2,\"client 3's lease expired "
        "while paused 1.250 s; client 7 got the lock & both wrote <stock:4> \"\"twice\"\"\"");
    assert_string_equal(line_of(t, "redis + fencing,redis,true,leader_lost,", l, sizeof(l)),
                        "redis + fencing,redis,true,leader_lost,,n/a,,,,,,,,,,redis + fencing "
                        "keeps its fence on one master");
    assert_string_equal(line_of(t, "redlock,redlock,false,none,", l, sizeof(l)),
                        "redlock,redlock,false,none,,NOT RUN,,,,,,,,,,\"redlock gives no fencing "
                        "tokens, and flash_sale's fence needs them\"");
    assert_string_equal(
        line_of(t, "postgres-advisory,postgres-advisory,false,server_paused,3,", l, sizeof(l)),
        "postgres-advisory,postgres-advisory,false,server_paused,3,safe,0,2.200,12.000,0,120.000,"
        "never,20.000,0.000,/tmp/sc/postgres-advisory/server_paused/seed-3,");
    assert_string_equal(line_of(t, "zookeeper,zookeeper,false,server_restarted,2,", l, sizeof(l)),
                        "zookeeper,zookeeper,false,server_restarted,2,INCOMPLETE,0,2.100,11.000,0,"
                        "110.000,5.000,20.000,500.000,/tmp/sc/zookeeper/server_restarted/seed-2,"
                        "zookeeper-1 did not come back within 10 s");
    free(t);
}

/* The grid's lines: from the head "lock" to the blank line after it. */
static void grid_lines(const char *t, size_t *n, size_t *widest, char *first_two, size_t len)
{
    const char *p = strstr(t, "\nlock ");
    assert_non_null(p);
    p++;
    *n = *widest = 0;
    size_t used = 0;
    for (; *p && *p != '\n'; p = strchr(p, '\n') + 1) {
        size_t w = strcspn(p, "\n");
        *widest = w > *widest ? w : *widest;
        if (*n < 3 && used + w + 1 < len) {
            memcpy(first_two + used, p, w + 1);
            used += w + 1;
        }
        ++*n;
    }
    first_two[used] = '\0';
}

static void terminal_grid_within_120_columns(void **state)
{
    (void)state;
    sample(&sc, "/tmp/sc");
    /* a 28-character label: the grid holds it on its row */
    snprintf(sc.rows[3].label, sizeof(sc.rows[3].label), "zookeeper (curator, 28 char)");
    char *t = terminal_of(&sc), top[1024], l[2048];
    size_t n, widest;
    grid_lines(t, &n, &widest, top, sizeof(top));
    assert_true(widest <= 120);
    /* the head, then two lines per row (a word line, a figure line), the
     * row that does not run in one; the 32-character label fits exactly */
    assert_int_equal(n, 1 + 5 * 2 + 1);
    /* each column as wide as its head, word or figure; one space between */
    assert_string_equal(top, "lock                             none   pause>L pause<L crash waiter "
                             "restart srvstop leader lat100 cutoff clock+\n"
                             "redis                            safe   UNSAFE  safe    stuck safe   "
                             "safe    safe    UNSAFE safe   safe   safe\n"
                             "                                 2.1ms  41v     12ms    620ms 12ms   "
                             "12ms    12ms    1 of 3 12ms   12ms   12ms\n");
    assert_non_null(strstr(t, "\netcd (clientv3 3.4, no re-check) safe   safe    "));
    assert_non_null(strstr(t, "\nzookeeper (curator, 28 char)     safe   safe    safe    safe  "
                              "safe   INCOMP  safe "));
    assert_non_null(strstr(t, "\nredlock                          NOT RUN (below)\n"));
    /* the legend wraps within the width too */
    const char *legend = strstr(t, "\nColumns:");
    assert_non_null(legend);
    for (const char *p = legend + 1; strncmp(p, "\n", 1) != 0; p = strchr(p, '\n') + 1)
        assert_true(strcspn(p, "\n") <= 120);
    assert_string_equal(line_of(t, "locklab scorecard", l, sizeof(l)),
                        "locklab scorecard  suite=quick  scenario=flash_sale  ttl=500ms  seeds=3 "
                        "(from 1)  locks=6  classes=11");
    assert_string_equal(wrapped_of(t, "  redis / holder paused past its lease:", l, sizeof(l)),
                        "  redis / holder paused past its lease: UNSAFE in every seed, 41 "
                        "violations - client 3's lease expired while paused 1.250 s; client 7 got "
                        "the lock & both wrote <stock:4> \"twice\"");
    assert_string_equal(wrapped_of(t, "    known result:", l, sizeof(l)),
                        "    known result: 06_redis_pause_unfenced - Kleppmann 2016 (published: "
                        "unsafe)");
    assert_string_equal(wrapped_of(t, "  redis / leader or master lost:", l, sizeof(l)),
                        "  redis / leader or master lost: UNSAFE in 1 of 3 seeds - the replica "
                        "was promoted without the lock key");
    assert_string_equal(wrapped_of(t, "    seed 2: UNSAFE", l, sizeof(l)),
                        "    seed 2: UNSAFE, 3 violations - the replica was promoted without the "
                        "lock key /tmp/sc/redis/leader_lost/seed-2/");
    assert_string_equal(wrapped_of(t, "  redis + fencing / leader", l, sizeof(l)),
                        "  redis + fencing / leader or master lost: n/a - redis + fencing keeps "
                        "its fence on one master");
    assert_string_equal(wrapped_of(t, "  redlock:", l, sizeof(l)),
                        "  redlock: NOT RUN - redlock gives no fencing tokens, and flash_sale's "
                        "fence needs them");
    assert_string_equal(
        wrapped_of(t, "  zookeeper (curator, 28 char) / lock server killed", l, sizeof(l)),
        "  zookeeper (curator, 28 char) / lock server killed and restarted with "
        "its data: INCOMPLETE in 1 of 3 seeds - zookeeper-1 did not come back "
        "within 10 s");
    /* wrapped at 120 columns, the rest indented */
    assert_non_null(strstr(t, "\nLeases: 500 ms asked of every lock; these had another: etcd "
                              "(clientv3 3.4, no re-check): 1.0 s; postgres-advisory: no\n    "
                              "lease.\n"));
    assert_string_equal(line_of(t, "  redis:", l, sizeof(l)),
                        "  redis: 1 redis; 1 master, 1 replica, 3 sentinels (leader)");
    assert_string_equal(line_of(t, "  etcd (clientv3 3.4, no re-check):", l, sizeof(l)),
                        "  etcd (clientv3 3.4, no re-check): 1 etcd member; 3 etcd members "
                        "(leader)");
    /* a safe cell a published finding calls unsafe, under a heading of its own */
    assert_non_null(strstr(t, "\nPublished results this suite did not reproduce:\n  etcd "));
    assert_string_equal(
        wrapped_of(t, "  etcd (clientv3 3.4, no re-check) / lock server", l, sizeof(l)),
        "  etcd (clientv3 3.4, no re-check) / lock server killed and "
        "restarted with its data: safe in every seed, though known result "
        "21_restart_empty - Kleppmann 2016 (published: unsafe); this class's "
        "shape did not reproduce it: `locklab matrix --only 21_restart_empty` "
        "runs its own scenario");
    char want[1024];
    const char *zk = strstr(sample_answer, "zookeeper;");
    snprintf(want, sizeof(want), "Answer: %.*szookeeper (curator, 28 char)%s",
             (int)(zk - sample_answer), sample_answer, zk + strlen("zookeeper"));
    assert_string_equal(line_of(t, "Answer:", l, sizeof(l)), want);
    assert_string_equal(line_of(t, "End of scorecard:", l, sizeof(l)),
                        "End of scorecard: INCOMPLETE (some cells could not be judged) - 3 of 6 "
                        "locks safe in every class (11 classes, 3 seeds each), 540 s; UNSAFE in 2 "
                        "of 53 cells that ran, 2 n/a  /tmp/sc/");
    /* the end line is the last */
    size_t tl = strlen(t), ll = strlen(l);
    assert_true(tl > ll + 1 && t[tl - ll - 2] == '\n' && strncmp(t + tl - ll - 1, l, ll) == 0 &&
                t[tl - 1] == '\n');
    free(t);
}

/* Heads of 7 characters make the widest grid 11 classes can have: a
 * 32-character label still fits; a longer one goes on a line of its own,
 * its cells under it. */
static void terminal_long_labels_on_their_own_line(void **state)
{
    (void)state;
    sample(&sc, "/tmp/sc");
    for (size_t k = 0; k < sc.n_classes; k++)
        snprintf(sc.classes[k].short_, sizeof(sc.classes[k].short_), "class-%zu", k % 10);
    char *t = terminal_of(&sc), top[1024];
    size_t n, widest;
    grid_lines(t, &n, &widest, top, sizeof(top));
    assert_int_equal(widest, 120);
    free(t);

    snprintf(sc.rows[2].label, sizeof(sc.rows[2].label), "etcd (clientv3 3.4, no re-check, 40 ch)");
    t = terminal_of(&sc);
    grid_lines(t, &n, &widest, top, sizeof(top));
    assert_true(widest <= 120);
    assert_int_equal(n, 1 + 5 * 2 + 1 + 1);
    assert_non_null(strstr(t, "\netcd (clientv3 3.4, no re-check, 40 ch)\n"
                              "                                 safe    safe    "));
    free(t);
}

static void terminal_one_line_when_it_fits(void **state)
{
    (void)state;
    head(&sc, "runs/x");
    add_classes(&sc, 3);
    sc.seeds = 1;
    struct scorecard_row *row = add_row(&sc, "redis", "redis", false);
    ran_all(&sc, row, 500, "1 redis");
    unsafe_seed(row, K_PAUSE_PAST, 0, 7, "stale");
    char *t = terminal_of(&sc), top[512];
    size_t n, widest;
    grid_lines(t, &n, &widest, top, sizeof(top));
    assert_int_equal(n, 2);
    assert_string_equal(top, "lock   none        pause>L    pause<L\n"
                             "redis  safe 2.0ms  UNSAFE 7v  safe 10ms\n");
    assert_non_null(strstr(t, "\nLeases: 500 ms asked of every lock; every lock had it.\n"));
    free(t);
}

/* Where the registry has the lock called name. */
static size_t lock_index(const char *name)
{
    for (size_t i = 0; i < lock_count(); i++)
        if (strcmp(lock_at(i)->name, name) == 0)
            return i;
    fail_msg("no lock %s", name);
    return 0;
}

/* Every lock of the registry through eleven classes: the grid keeps
 * within 120 columns, each figure under its word; --wide keeps each
 * cell on one line, its head exactly as before. */
static void terminal_every_lock_within_120_columns(void **state)
{
    (void)state;
    head(&sc, "runs/x");
    add_classes(&sc, N_CLASSES);
    assert_true(lock_count() >= 16);
    for (size_t i = 0; i < lock_count(); i++) {
        struct scorecard_row *row = add_row(&sc, lock_at(i)->name, lock_at(i)->name, false);
        ran_all(&sc, row, 500, "1 redis");
    }
    unsafe_seed(&sc.rows[lock_index("redisson-semaphore-naive")], K_PAUSE_PAST, 0, 1234, "stale");
    char *t = terminal_of(&sc), top[1024];
    size_t n, widest;
    grid_lines(t, &n, &widest, top, sizeof(top));
    assert_true(widest <= 120);
    assert_int_equal(n, 1 + lock_count() * 2);
    assert_string_equal(top, "lock                     none  pause>L pause<L crash waiter restart "
                             "srvstop leader lat100 cutoff clock+\n"
                             "redis                    safe  safe    safe    safe  safe   safe    "
                             "safe    safe   safe   safe   safe\n"
                             "                         2.2ms 12ms    12ms    12ms  12ms   12ms    "
                             "12ms    12ms   12ms   12ms   12ms\n");
    assert_non_null(strstr(t, "\nredisson-semaphore-naive safe  UNSAFE  safe    safe  safe   "
                              "safe    safe    safe   safe   safe   safe\n"
                              "                         2.2ms 1 of 3  12ms    12ms  12ms   "
                              "12ms    12ms    12ms   12ms   12ms   12ms\n"));
    free(t);

    struct capture cap;
    scorecard_terminal(capture_open(&cap), &sc, true);
    t = capture_text(&cap);
    grid_lines(t, &n, &widest, top, sizeof(top));
    assert_int_equal(n, 1 + lock_count());
    assert_int_equal(widest, 150);
    assert_string_equal(
        top, "lock                      none        pause>L        pause<L    crash      "
             "waiter     restart    srvstop    leader     lat100     cutoff     "
             "clock+\n"
             "redis                     safe 2.2ms  safe 12ms      safe 12ms  safe 12ms  "
             "safe 12ms  safe 12ms  safe 12ms  safe 12ms  safe 12ms  safe 12ms  "
             "safe 12ms\n"
             "redis-naive               safe 2.2ms  safe 12ms      safe 12ms  safe 12ms  "
             "safe 12ms  safe 12ms  safe 12ms  safe 12ms  safe 12ms  safe 12ms  "
             "safe 12ms\n");
    free(t);
}

/* Ctrl-C after the first cell: the cells never reached are NOT RUN, one
 * line says why for all, and the scorecard is INCOMPLETE. */
static void a_scorecard_cut_short(void **state)
{
    (void)state;
    head(&sc, "runs/x");
    add_classes(&sc, 3);
    sc.seeds = 1;
    struct scorecard_row *row = add_row(&sc, "redis", "redis", false);
    ran_all(&sc, row, 500, "1 redis");
    add_row(&sc, "zookeeper", "zookeeper", false);
    for (size_t k = 1; k < 3; k++)
        row->cells[k].n_runs = 0; /* planned, never reached */
    for (size_t k = 0; k < 3; k++) {
        sc.rows[1].cells[k].state = CELL_RAN;
        sc.rows[1].cells[k].lease_ms = 500;
    }
    sc.cut_short = true;
    sc.complete = false;
    char w[32], l[600], buf[800];
    assert_string_equal(scorecard_cell_word(&row->cells[1], w, sizeof(w)), "NOT RUN");
    assert_string_equal(scorecard_answer(&sc, buf, sizeof(buf)),
                        "no lock stayed safe in every class; not judged in every class: redis; "
                        "not run: zookeeper.");
    char *t = terminal_of(&sc);
    assert_string_equal(line_of(t, "  5 cells", l, sizeof(l)),
                        "  5 cells NOT RUN: the scorecard was cut short before them");
    assert_null(strstr(t, "redis / holder"));
    assert_string_equal(line_of(t, "End of", l, sizeof(l)),
                        "End of scorecard: INCOMPLETE (cut short) - 0 of 2 locks safe in every "
                        "class (3 classes, 1 seed each), 540 s; UNSAFE in 0 of 1 cells that ran  "
                        "runs/x/");
    free(t);
    t = csv_of(&sc);
    assert_string_equal(line_of(t, "zookeeper,zookeeper,false,none,", l, sizeof(l)),
                        "zookeeper,zookeeper,false,none,,NOT RUN,,,,,,,,500.000,,the scorecard "
                        "was cut short");
    free(t);
}

static char root[256];

static int make_root(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "%s/locklab-scorecard-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(root) ? 0 : -1;
}

static int remove_root(void **state)
{
    (void)state;
    scratch_remove("test_scorecard", root);
    return 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *text = NULL;
    size_t cap = 0;
    ssize_t n = getdelim(&text, &cap, '\0', f);
    fclose(f);
    assert_true(n > 0);
    return text;
}

/* Every file written; links relative to the scorecard's folder. */
static int write_all(const struct scorecard *s, const char *junit)
{
    char path[700];
    const char *names[] = {"scorecard.md", "scorecard.json", "scorecard.html"};
    int (*const write[])(const char *, const struct scorecard *) = {scorecard_markdown,
                                                                    scorecard_json, scorecard_html};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/%s", s->out_dir, names[i]);
        if (write[i](path, s) < 0)
            return -1;
    }
    return scorecard_junit(junit, s);
}

static void files_link_runs_relative_to_the_scorecard(void **state)
{
    (void)state;
    sample(&sc, root);
    char junit[400], path[400];
    snprintf(junit, sizeof(junit), "%s/junit.xml", root);
    assert_int_equal(write_all(&sc, junit), 0);

    snprintf(path, sizeof(path), "%s/scorecard.json", root);
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "schema")), "locklab.scorecard/1");
    json_t *cell = json_array_get(
        json_object_get(json_array_get(json_object_get(j, "rows"), 0), "cells"), K_LEADER);
    assert_string_equal(json_string_value(json_object_get(cell, "verdict")), "mixed");
    assert_string_equal(json_string_value(json_object_get(cell, "report")),
                        "redis/leader_lost/seed-1/report.html");
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(cell, "runs"), 1), "run_dir")),
                        "redis/leader_lost/seed-2");
    assert_string_equal(json_string_value(json_object_get(cell, "scenario")),
                        "redis/leader_lost/scenario.json");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "answer"), "text")),
                        sample_answer);
    json_decref(j);

    snprintf(path, sizeof(path), "%s/scorecard.html", root);
    char *html = slurp(path);
    assert_non_null(strstr(html, "<td class=\"cell v-mixed\" data-verdict=\"mixed\" "
                                 "data-row=\"redis\" data-class=\"leader_lost\""));
    assert_non_null(strstr(html, "<a href=\"redis/leader_lost/seed-1/report.html\">"
                                 "<b>UNSAFE</b><span>in 1 of 3 seeds</span>"));
    char want[1200];
    snprintf(want, sizeof(want), "<p class=\"answer\" data-figure=\"answer\">Answer: %s</p>",
             sample_answer);
    assert_non_null(strstr(html, want));
    free(html);

    char *xml = slurp(junit);
    assert_non_null(strstr(xml, "<testsuites name=\"locklab scorecard quick on flash_sale\" "
                                "tests=\"66\" failures=\"2\" errors=\"1\" skipped=\"13\""));
    assert_non_null(strstr(xml, "<failure message=\"UNSAFE: client 3&apos;s lease expired while "
                                "paused 1.250 s; client 7 got the lock &amp; both wrote "
                                "&lt;stock:4&gt; &quot;twice&quot;\" type=\"UNSAFE\"/>"));
    assert_non_null(strstr(xml, "<failure message=\"UNSAFE in 1 of 3 seeds: the replica was "
                                "promoted without the lock key\" type=\"UNSAFE\"/>"));
    assert_non_null(strstr(xml, "<error message=\"INCOMPLETE: zookeeper-1 did not come back "
                                "within 10 s\"/>"));
    assert_non_null(strstr(xml, "<skipped message=\"n/a: postgres-advisory has no lease for a "
                                "clock to shorten\"/>"));
    assert_non_null(strstr(xml, "<skipped message=\"NOT RUN: redlock gives no fencing tokens, "
                                "and flash_sale&apos;s fence needs them\"/>"));
    assert_non_null(strstr(xml, "<testcase classname=\"scorecard.etcd (clientv3 3_4, no "
                                "re-check)\" name=\"none\">"));
    free(xml);

    snprintf(path, sizeof(path), "%s/scorecard.md", root);
    char *md = slurp(path);
    assert_non_null(
        strstr(md, "| redis | [safe 2.1ms](redis/none/seed-1/report.html) | "
                   "[**UNSAFE** 41v](redis/holder_paused_past_lease/seed-1/report.html) |"));
    assert_non_null(strstr(md, "[**UNSAFE** in 1 of 3](redis/leader_lost/seed-1/report.html) |"));
    snprintf(want, sizeof(want), "\n**Answer:** %s\n", sample_answer);
    assert_non_null(strstr(md, want));
    free(md);
}

/* --- the sample on disk, for tests/pages/check_scorecard.py ------------- */

static int mkdirs(const char *path)
{
    char p[700];
    snprintf(p, sizeof(p), "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) < 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

static int write_sample(const char *dir, int argc, char **argv)
{
    static struct run_meta meta;
    run_meta_init(&meta, argc, argv);
    sample(&sc, dir);
    sc.meta = &meta;
    for (size_t r = 0; r < sc.n_rows; r++)
        for (size_t k = 0; k < sc.n_classes; k++)
            for (size_t i = 0; i < sc.rows[r].cells[k].n_runs; i++) {
                char path[700];
                const char *run = sc.rows[r].cells[k].runs[i].run_dir;
                snprintf(path, sizeof(path), "%s/report.html", run);
                FILE *f = mkdirs(run) == 0 ? fopen(path, "w") : NULL;
                if (f == NULL || fclose(f) != 0) {
                    fprintf(stderr, "test_scorecard: cannot write %s: %s\n", path, strerror(errno));
                    return 1;
                }
            }
    char junit[700];
    snprintf(junit, sizeof(junit), "%s/junit.xml", dir);
    if (write_all(&sc, junit) < 0) {
        fprintf(stderr, "test_scorecard: cannot write into %s: %s\n", dir, strerror(errno));
        return 1;
    }
    scorecard_terminal(stdout, &sc, false);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write") == 0)
        return write_sample(argv[2], argc, argv);
    if (argc != 1) {
        fprintf(stderr, "usage: test_scorecard [--write DIR]\n");
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cell_words_and_figures),
        cmocka_unit_test(milliseconds_read_at_a_glance),
        cmocka_unit_test(the_answer_from_the_measured_cells),
        cmocka_unit_test(require_safe_names_rows),
        cmocka_unit_test(csv_one_line_per_cell_and_seed),
        cmocka_unit_test(terminal_grid_within_120_columns),
        cmocka_unit_test(terminal_long_labels_on_their_own_line),
        cmocka_unit_test(terminal_one_line_when_it_fits),
        cmocka_unit_test(terminal_every_lock_within_120_columns),
        cmocka_unit_test(a_scorecard_cut_short),
        cmocka_unit_test_setup_teardown(files_link_runs_relative_to_the_scorecard, make_root,
                                        remove_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
