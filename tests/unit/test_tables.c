/* test_tables.c - compare's and matrix's terminal tables (reports/compare.c,
 * reports/matrix.c, reports/text_table.c) on their widest cases, built by
 * hand: every algorithm of the registry side by side, and the matrix's
 * longest row and algorithm names with ten seeds. By default every line
 * but the End line (one line for a script's grep, however long) keeps
 * within 120 columns, each row's figures on its line and what has no room
 * beside them on the lines under it; --wide keeps the one-line layout,
 * its head line exactly as before. Nothing runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "reports/compare.h"
#include "reports/matrix.h"
#include "reports/text_table.h"
#include "sim/scenario/scenario.h"
#include "tests/lib/capture.h"

/* The widest line of text but those that begin with skip; their count. */
static size_t widest(const char *text, const char *skip, size_t *lines)
{
    size_t most = 0;
    *lines = 0;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        if (strncmp(p, skip, strlen(skip)) != 0 && n > most)
            most = n;
        if (n > TEXT_TABLE_WIDTH && strncmp(p, skip, strlen(skip)) != 0)
            print_message("over %d columns (%zu): %.*s\n", TEXT_TABLE_WIDTH, n, (int)n, p);
        ++*lines;
        p += n + (p[n] == '\n');
    }
    return most;
}

/* The line of text that begins with prefix, copied into out. */
static const char *line_of(const char *text, const char *prefix, char *out, size_t len)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, prefix, strlen(prefix)) == 0) {
            snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
            return out;
        }
    snprintf(out, len, "(no line begins with \"%s\")", prefix);
    return out;
}

/* --- compare ----------------------------------------------------------------- */

static const char *const invariants =
    "ok no_oversell, ok stock_accounting, ok stock_never_negative, ok committed_writes_applied";

/* Row i of every algorithm: the figures as wide as a 2-core machine gives
 * them (a 1 s tail of four digits, tens of thousands of failures). */
static void compare_row_of(struct compare_row *row, const char *name, size_t i)
{
    snprintf(row->algorithm, sizeof(row->algorithm), "%s", name);
    snprintf(row->verdict, sizeof(row->verdict), "safe");
    snprintf(row->run_dir, sizeof(row->run_dir), "runs/flash_sale-compare-20261203-071500/%s",
             name);
    row->ran = row->has_latency = row->invariants_hold = true;
    row->ttl_ms = 10000;
    row->lease_ms = i == 5 ? 0 : 10000;
    row->n_seeds = 1;
    row->seeds[0] = (struct compare_seed){.seed = 1, .ran = true, .complete = true};
    memcpy(row->seeds[0].run_dir, row->run_dir, sizeof(row->run_dir));
    row->seeds[0].safety.safe = row->safety.safe = true;
    row->qps = 12345.6 - 100.0 * (double)i;
    const double ms[REPORT_N_PERCENTILES] = {91.327, 200.5, 722.943, 1048.575, 10050.217};
    memcpy(row->acquire_ms, ms, sizeof(ms));
    row->fairness = (struct report_fairness){.clients = 32, .max = 23900, .min = 100};
    row->busy = 123456;
    row->stuck_lock_ms = 12345.0;
    snprintf(row->invariants, sizeof(row->invariants), "%s", invariants);
}

/* Every algorithm of the registry, one unsafe, two NOT RUN. */
static struct comparison *every_lock(struct scenario *s)
{
    struct comparison *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    scenario_defaults(s);
    snprintf(s->name, sizeof(s->name), "flash_sale");
    s->clients = 32;
    s->seed = 1;
    c->scn = s;
    c->seeds = 1;
    c->complete = true;
    snprintf(c->out_dir, sizeof(c->out_dir), "runs/flash_sale-compare-20261203-071500");
    assert_true(lock_count() <= COMPARE_MAX);
    for (size_t i = 0; i < lock_count(); i++) {
        struct compare_row *row = &c->rows[c->n++];
        const char *name = lock_at(i)->name;
        bool latch = lock_at(i)->latch != NULL;
        if (strstr(name, "semaphore") == NULL && !latch) {
            compare_row_of(row, name, i);
            continue;
        }
        snprintf(row->algorithm, sizeof(row->algorithm), "%s", name);
        snprintf(row->verdict, sizeof(row->verdict), "NOT RUN");
        if (latch)
            snprintf(row->note, sizeof(row->note),
                     "%s is a latch, not a lock; flash_sale needs exclusive sections", name);
        else
            snprintf(row->note, sizeof(row->note),
                     "flash_sale needs exclusive sections; %s grants none", name);
    }
    struct compare_row *bad = &c->rows[1];
    snprintf(bad->verdict, sizeof(bad->verdict), "UNSAFE");
    bad->violations = 916;
    bad->seeds[0].safety = (struct report_safety){.violations = 916, .invariants_broken = 2};
    bad->safety = bad->seeds[0].safety;
    return c;
}

static char *compare_text(const struct comparison *c, bool wide)
{
    struct capture out;
    compare_terminal(capture_open(&out), c, wide);
    return capture_text(&out);
}

static void compare_every_lock_within_120_columns(void **state)
{
    (void)state;
    struct scenario *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    struct comparison *c = every_lock(s);
    char *t = compare_text(c, false), l[2048];
    size_t lines;
    assert_true(widest(t, "End of compare:", &lines) <= TEXT_TABLE_WIDTH);
    /* the figures on the row, each column as wide as its widest cell; the
     * safety and the invariants under it, their heads under the head */
    assert_non_null(strstr(
        t, "\nalgorithm                ttl ms lease ms     qps p50 ms  p99 ms p99.9 ms    max ms "
           "max/min failed stuck s violations\n"
           "    safety; invariants\n"
           "redis                     10000    10000 12345.6 91.327 722.943 1048.575 10050.217 "
           " 239.00 123456  12.345          0\n"
           "    safe; ok no_oversell, ok stock_accounting, ok stock_never_negative, ok "
           "committed_writes_applied\n"
           "redis-naive               10000    10000 12245.6 91.327 722.943 1048.575 10050.217 "
           " 239.00 123456  12.345        916\n"
           "    UNSAFE: 916 violations, 2 invariants broken; ok no_oversell, ok stock_accounting, "
           "ok stock_never_negative, ok\n"
           "      committed_writes_applied\n"));
    assert_string_equal(line_of(t, "postgres-advisory", l, sizeof(l)),
                        "postgres-advisory         10000     none 11845.6 91.327 722.943 1048.575 "
                        "10050.217  239.00 123456  12.345          0");
    /* a row that did not run: its figures "-", the reason under it */
    assert_non_null(strstr(t, "\nredisson-semaphore-naive      -        -       -      -       - "
                              "       -         -       -      -       -          -\n"
                              "    NOT RUN\n"
                              "    flash_sale needs exclusive sections; redisson-semaphore-naive "
                              "grants none\n"));
    /* the legend and where the reports are, wrapped */
    assert_non_null(strstr(t, "\n(lease: what the lock's grants really ran on, none for a lock "
                              "without one; qps: locks acquired per second; latency:\n"
                              " successful acquires; "));
    assert_string_equal(line_of(t, "reports in", l, sizeof(l)),
                        "reports in runs/flash_sale-compare-20261203-071500/: compare.html, "
                        "compare.md, compare.json; per algorithm: <algorithm>/");
    assert_string_equal(
        line_of(t, "End of compare:", l, sizeof(l)),
        "End of compare: PASS; expectation (written for ): not judged; UNSAFE: "
        "redis-naive; safe: redis, "
        "redlock, zookeeper, etcd, postgres-advisory, postgres-row, "
        "postgres-optimistic, redisson, redisson-fenced, redisson-fair, "
        "redisson-rw, redisson-multi, redisson-rw-naive, redis-cluster, redisson-cluster, "
        "mysql-named, mysql-row, mysql-optimistic; NOT RUN: "
        "redisson-semaphore, redisson-semaphore-naive, redisson-latch, redisson-latch-naive");
    free(t);
    free(c);
    free(s);
}

/* --wide: one line per algorithm, its head exactly as before. */
static void compare_wide_keeps_one_line(void **state)
{
    (void)state;
    struct scenario *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    struct comparison *c = every_lock(s);
    char *t = compare_text(c, true), l[2048];
    assert_string_equal(line_of(t, "algorithm", l, sizeof(l)),
                        "algorithm                ttl ms lease ms       qps    p50 ms    p99 ms  "
                        "p99.9 ms    max ms  max/min    failed  stuck s violations  safety       "
                        "                                invariants");
    char want[512];
    snprintf(want, sizeof(want),
             "redis-naive               10000    10000   12245.6    91.327   722.943  1048.575 "
             "10050.217   239.00    123456   12.345        916  UNSAFE: 916 violations, 2 "
             "invariants broken  %s",
             invariants);
    assert_string_equal(line_of(t, "redis-naive ", l, sizeof(l)), want);
    assert_null(strstr(t, "\n    safety"));
    free(t);
    free(c);
    free(s);
}

/* Two seeds: the banner says what the figures are on a line of its own
 * when it has no room, and the seeds are listed under each row. */
static void compare_seeds_within_120_columns(void **state)
{
    (void)state;
    struct scenario *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    struct comparison *c = every_lock(s);
    snprintf(s->name, sizeof(s->name), "flash_sale_pause_fenced_watchdog_long");
    c->seeds = 2;
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].ran) {
            c->rows[i].seeds[1] = c->rows[i].seeds[0];
            c->rows[i].seeds[1].seed = 2;
            /* by hand: snprintf from one member of *c into another trips
             * -Wrestrict in the sanitizer builds */
            char *dir = c->rows[i].seeds[1].run_dir;
            size_t len = strnlen(c->rows[i].run_dir, sizeof(c->rows[i].seeds[1].run_dir) - 8);
            memmove(dir, c->rows[i].run_dir, len);
            memcpy(dir + len, "/seed-2", 8);
            c->rows[i].n_seeds = 2;
        }
    char *t = compare_text(c, false);
    size_t lines;
    assert_true(widest(t, "End of compare:", &lines) <= TEXT_TABLE_WIDTH);
    assert_non_null(strstr(t, "\nlocklab compare  scenario=flash_sale_pause_fenced_watchdog_long  "
                              "workload=flash_sale  clients=32  seed=1\n"
                              "seeds=2 (figures: seed 1's run; safety: every seed's)\n"));
    assert_non_null(strstr(t, "\nredis-naive               10000    10000 12245.6 91.327 722.943 "
                              "1048.575 10050.217  239.00 123456  12.345        916\n"
                              "    UNSAFE in 2 of 2 seeds; ok no_oversell, ok stock_accounting, ok "
                              "stock_never_negative, ok committed_writes_applied\n"
                              "    seed 1: UNSAFE: 916 violations, 2 invariants broken; stuck "
                              "0.000 s;\n"
                              "      runs/flash_sale-compare-20261203-071500/redis-naive/\n"
                              "    seed 2: UNSAFE: 916 violations, 2 invariants broken; stuck "
                              "0.000 s;\n"
                              "      runs/flash_sale-compare-20261203-071500/redis-naive/seed-2/\n"
                              "redlock "));
    free(t);
    free(c);
    free(s);
}

/* --- matrix ------------------------------------------------------------------- */

#define SEEDS 10

static struct matrix *widest_matrix(void)
{
    struct matrix *m = calloc(1, sizeof(*m));
    assert_non_null(m);
    static const char *const rows[][3] = {
        {"postgres_advisory_transaction_pooling", "postgres-advisory",
         "violations >0; invariants broken"},
        {"redisson_sentinel_cut_failover_wait", "redisson",
         "violations 0; invariants hold; faults[0].acquired 0"},
        {"redisson_semaphore_naive", "redisson-semaphore-naive",
         "violations >0; invariants broken; faults[0].acquired >0; faults[0].recovery_ms <2000"},
    };
    snprintf(m->dir, sizeof(m->dir), "scenarios/matrix");
    snprintf(m->out_dir, sizeof(m->out_dir), "runs/known-results-matrix-20261203-071500");
    m->seeds = SEEDS;
    m->complete = true;
    m->elapsed_s = 912;
    for (size_t i = 0; i < 3; i++) {
        struct matrix_row *row = &m->rows[m->n++];
        snprintf(row->name, sizeof(row->name), "%s", rows[i][0]);
        snprintf(row->algorithm, sizeof(row->algorithm), "%s", rows[i][1]);
        snprintf(row->expected, sizeof(row->expected), "%s", rows[i][2]);
        row->runs = calloc(SEEDS, sizeof(*row->runs));
        assert_non_null(row->runs);
        row->n_runs = SEEDS;
        for (size_t k = 0; k < SEEDS; k++) {
            struct matrix_run *r = &row->runs[k];
            r->seed = 1 + k;
            r->ran = r->matched = r->recovered = true;
            snprintf(r->verdict, sizeof(r->verdict), "PASS");
            snprintf(r->run_dir, sizeof(r->run_dir), "%.300s/%.60s/seed-%zu", m->out_dir, row->name,
                     k + 1);
            r->violations = i == 1 ? 0 : 1234 + k;
            r->safety = (struct report_safety){.safe = i == 1, .violations = r->violations};
            r->failed = 65321;
            r->fault_runs = 1;
            r->recovery_ms = 12345;
            r->stuck_ms = 31400;
        }
        row->matched = SEEDS;
    }
    /* a seed that missed: its why under the row */
    struct matrix_run *miss = &m->rows[1].runs[3];
    miss->matched = false;
    snprintf(miss->verdict, sizeof(miss->verdict), "FAIL");
    snprintf(miss->failure, sizeof(miss->failure),
             "faults[0].acquired: expected 0, got 12 (the promoted master granted the lock the "
             "old master's holder still had)");
    m->rows[1].matched = SEEDS - 1;
    return m;
}

static void matrix_free(struct matrix *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->rows[i].runs);
    free(m);
}

static char *matrix_text(const struct matrix *m, bool wide)
{
    struct capture out;
    matrix_terminal(capture_open(&out), m, wide);
    return capture_text(&out);
}

static void matrix_widest_rows_within_120_columns(void **state)
{
    (void)state;
    struct matrix *m = widest_matrix();
    char *t = matrix_text(m, false);
    size_t lines;
    assert_true(widest(t, "End of matrix:", &lines) <= TEXT_TABLE_WIDTH);
    /* the figures beside the names; the violations of ten seeds and the
     * expectation have no room there, each on a line under the row */
    assert_non_null(strstr(
        t, "\nrow                                   algorithm                match safety seeds "
           "failed recovery    stuck\n"
           "    violations\n"
           "    expected\n"
           "postgres_advisory_transaction_pooling postgres-advisory        yes   UNSAFE 10/10 "
           "653210 12345 ms 31400 ms\n"
           "    1234, 1235, 1236, 1237, 1238, 1239, 1240, 1241, 1242, 1243\n"
           "    violations >0; invariants broken\n"));
    assert_non_null(strstr(
        t, "\nredisson_sentinel_cut_failover_wait   redisson                 NO    safe   9/10  "
           "653210 12345 ms 31400 ms\n"
           "    0, 0, 0, 0, 0, 0, 0, 0, 0, 0\n"
           "    violations 0; invariants hold; faults[0].acquired 0\n"
           "    seed 4: FAIL (safe) - faults[0].acquired: expected 0, got 12 (the promoted master "
           "granted the lock the old master's\n"
           "      holder still had) "
           "runs/known-results-matrix-20261203-071500/redisson_sentinel_cut_failover_wait/seed-4/\n"
           "redisson_semaphore_naive"));
    free(t);
    matrix_free(m);
}

/* One seed: the figures fit beside the names, the expectation under. */
static void matrix_one_seed_figures_on_the_row(void **state)
{
    (void)state;
    struct matrix *m = widest_matrix();
    for (size_t i = 0; i < m->n; i++) {
        m->rows[i].n_runs = 1;
        m->rows[i].matched = 1;
    }
    m->seeds = 1;
    char *t = matrix_text(m, false), l[1024];
    size_t lines;
    assert_true(widest(t, "End of matrix:", &lines) <= TEXT_TABLE_WIDTH);
    assert_string_equal(line_of(t, "row ", l, sizeof(l)),
                        "row                                   algorithm                match "
                        "safety seeds violations failed recovery    stuck");
    assert_string_equal(line_of(t, "redisson_semaphore_naive", l, sizeof(l)),
                        "redisson_semaphore_naive              redisson-semaphore-naive yes   "
                        "UNSAFE 1/1   1234        65321 12345 ms 31400 ms");
    assert_non_null(strstr(t, "\n    expected\n"));
    assert_non_null(strstr(t, "\n    violations >0; invariants broken; faults[0].acquired >0; "
                              "faults[0].recovery_ms <2000\n"));
    free(t);
    matrix_free(m);
}

static void matrix_wide_keeps_one_line(void **state)
{
    (void)state;
    struct matrix *m = widest_matrix();
    char *t = matrix_text(m, true), l[1024];
    assert_string_equal(line_of(t, "row ", l, sizeof(l)),
                        "row                                   algorithm                match      "
                        "safety      seeds  violations           failed    recovery   stuck     "
                        "expected");
    assert_string_equal(line_of(t, "redisson_semaphore_naive", l, sizeof(l)),
                        "redisson_semaphore_naive              redisson-semaphore-naive yes        "
                        "UNSAFE      10/10  1234, 1235, 1236, 1237, 1238, 1239, 1240, 1241, 1242, "
                        "1243 653210    12345 ms   31400 ms  violations >0; invariants broken; "
                        "faults[0].acquired >0; faults[0].recovery_ms <2000");
    free(t);
    matrix_free(m);
}

/* --- the layout alone ----------------------------------------------------------- */

/* A cell wider than a line, alone on its own: wrapped at its spaces. */
static void a_cell_wider_than_a_line_is_wrapped(void **state)
{
    (void)state;
    struct text_table *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    text_table_column(t, "name", true, 0);
    text_table_column(t, "n", false, 1);
    text_table_column(t, "words", true, 2);
    size_t r = text_table_row(t);
    text_table_cell(t, r, 0, "a");
    text_table_cell(t, r, 1, "%d", 42);
    char words[400] = "";
    for (int i = 0; i < 30; i++)
        strcat(words, i ? " word-of-8" : "word-of-8");
    text_table_cell(t, r, 2, "%s", words);
    text_table_layout(t);
    struct capture out;
    FILE *f = capture_open(&out);
    text_table_print_head(f, t);
    text_table_print_row(f, t, r);
    char *text = capture_text(&out);
    assert_string_equal(text, "name  n\n"
                              "    words\n"
                              "a    42\n"
                              "    word-of-8 word-of-8 word-of-8 word-of-8 word-of-8 word-of-8 "
                              "word-of-8 word-of-8 word-of-8 word-of-8 word-of-8\n"
                              "      word-of-8 word-of-8 word-of-8 word-of-8 word-of-8 word-of-8 "
                              "word-of-8 word-of-8 word-of-8 word-of-8 word-of-8\n"
                              "      word-of-8 word-of-8 word-of-8 word-of-8 word-of-8 word-of-8 "
                              "word-of-8 word-of-8\n");
    free(text);
    text_table_free(t);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compare_every_lock_within_120_columns),
        cmocka_unit_test(compare_wide_keeps_one_line),
        cmocka_unit_test(compare_seeds_within_120_columns),
        cmocka_unit_test(matrix_widest_rows_within_120_columns),
        cmocka_unit_test(matrix_one_seed_figures_on_the_row),
        cmocka_unit_test(matrix_wide_keeps_one_line),
        cmocka_unit_test(a_cell_wider_than_a_line_is_wrapped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
