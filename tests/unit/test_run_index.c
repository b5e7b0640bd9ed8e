/* test_run_index.c - runs over time (reports/history.h) from
 * report.json files written by hand into a temporary folder, with exact
 * expected values: a series in time order whatever its folders' names;
 * the rule at its edges (p99 exactly 1.5x the median is not flagged, the
 * median of an even count is the mean of the middle two, an INCOMPLETE run
 * is neither flagged for its figures nor counted in a later baseline, a
 * run UNSAFE after a safe one is flagged whatever its figures); runs
 * inside compare and matrix folders found, links and dot folders not
 * followed, nothing deeper than HISTORY_MAX_DEPTH; unreadable files
 * skipped with why; a DIR that is no folder refused. The series key: the
 * canonical text of a key object and its FNV-1a 64 (worked out apart in
 * Python), runs apart from their ports and pids on one series, a rate, a
 * server's version or an older report.json's missing parts each a series
 * of its own, said in words.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/history.h"
#include "reports/history_key.h"
#include "tests/lib/scratch.h"

static char root[256];

static int make_root(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "%s/locklab-history-index-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(root) ? 0 : -1;
}

static int remove_root(void **state)
{
    (void)state;
    scratch_remove("test_run_index", root);
    return 0;
}

/* mkdir -p of root/rel */
static void folder(const char *rel)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    mkdir(path, 0755);
}

static void file(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

struct run {
    const char *scenario, *algorithm;
    int second; /* started at 2026-11-26T10:00:SS */
    const char *verdict;
    double qps, p99; /* p99 < 0: nothing acquired */
    int violations;  /* > 0: UNSAFE */
};

/* The keys the index reads of a report.json, as json_report.c writes them. */
static void report(const char *rel, const struct run *r)
{
    char dir[256], text[2048], acquire[160];
    snprintf(dir, sizeof(dir), "%s", rel);
    folder(dir);
    if (r->p99 < 0)
        snprintf(acquire, sizeof(acquire), "{\"count\": 0, \"qps\": 0.0}");
    else
        snprintf(acquire, sizeof(acquire),
                 "{\"count\": 10, \"qps\": %.17g, \"p50_ms\": 0.5, \"p99_ms\": %.17g}", r->qps,
                 r->p99);
    snprintf(text, sizeof(text),
             "{\"schema\": \"locklab.report/2\", \"complete\": %s, \"verdict\": \"%s\",\n"
             " \"safety\": {\"safe\": %s, \"text\": \"%s\"},\n"
             " \"scenario\": {\"name\": \"%s\"}, \"algorithm\": \"%s\",\n"
             " \"started_at\": \"2026-11-26T10:00:%02d.000Z\", \"start_wall_ns\": %d000000000,\n"
             " \"operations\": {\"acquire\": %s}, \"checker\": {\"violations\": %d}}\n",
             strcmp(r->verdict, "INCOMPLETE") ? "true" : "false", r->verdict,
             r->violations ? "false" : "true", r->violations ? "UNSAFE: 2 violations" : "safe",
             r->scenario, r->algorithm, r->second, 1795000000 + r->second, acquire, r->violations);
    char path[300];
    snprintf(path, sizeof(path), "%s/report.json", rel);
    file(path, text);
}

static const struct history_run *run_named(const struct history_index *idx, const char *folder)
{
    char want[512];
    snprintf(want, sizeof(want), "%s/%s", root, folder);
    for (size_t i = 0; i < idx->n_runs; i++)
        if (strcmp(idx->runs[i].folder, want) == 0)
            return &idx->runs[i];
    fail_msg("no run in %s", want);
    return NULL;
}

/* Folder names in another order than time: the series goes by
 * start_wall_ns. */
static void the_rule_over_one_series(void **state)
{
    (void)state;
    static const struct {
        const char *folder;
        struct run r;
    } runs[] = {
        {"e", {"sale", "redis", 5, "PASS", 80, 4.0, 0}},
        {"d", {"sale", "redis", 4, "INCOMPLETE", 1, 100.0, 2}},
        {"c", {"sale", "redis", 3, "PASS", 60, 4.5, 0}},
        {"b", {"sale", "redis", 2, "PASS", 90, 4.0, 0}},
        {"a", {"sale", "redis", 1, "PASS", 100, 2.0, 0}},
    };
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
        report(runs[i].folder, &runs[i].r);
    struct history_index idx;
    char err[256];
    assert_int_equal(history_index_build(root, &idx, err, sizeof(err)), 0);
    assert_int_equal(idx.n_runs, 5);
    assert_int_equal(idx.n_series, 1);
    assert_int_equal(idx.series[0].first, 0);
    assert_int_equal(idx.series[0].n, 5);
    assert_int_equal(idx.n_skipped, 0);
    const char *order = "abcde";
    for (size_t i = 0; i < 5; i++)
        assert_ptr_equal(&idx.runs[i], run_named(&idx, (char[]){order[i], '\0'}));
    const struct history_run *a = &idx.runs[0], *b = &idx.runs[1], *c = &idx.runs[2],
                             *d = &idx.runs[3], *e = &idx.runs[4];
    /* the first: nothing to hold it to */
    assert_int_equal(a->flags, 0);
    assert_int_equal(a->earlier, 0);
    assert_true(isnan(a->base_p99_ms) && isnan(a->base_qps));
    /* 4.0 > 1.5 x 2.0 */
    assert_int_equal(b->flags, HISTORY_P99);
    assert_true(b->base_p99_ms == 2.0 && b->base_qps == 100);
    /* the median of 2.0 and 4.0 is 3.0: 4.5 is not more than 1.5 x 3.0;
     * 60 is under 2/3 of the median QPS 95 */
    assert_int_equal(c->flags, HISTORY_QPS);
    assert_true(c->base_p99_ms == 3.0 && c->base_qps == 95);
    assert_int_equal(c->earlier, 2);
    /* INCOMPLETE: its p99 and QPS are partial, not judged; UNSAFE after
     * a safe run, flagged */
    assert_int_equal(d->flags, HISTORY_SAFETY);
    assert_false(d->complete);
    assert_false(d->safe);
    assert_int_equal(d->violations, 2);
    /* d is no part of e's baseline: a, b, c */
    assert_int_equal(e->earlier, 3);
    assert_true(e->base_p99_ms == 4.0 && e->base_qps == 90);
    assert_int_equal(e->flags, 0); /* safe again: no flag for that */
    assert_int_equal(idx.regressions, 3);
    char buf[96];
    assert_string_equal(history_flag_text(b, buf, sizeof(buf)), "p99 2.0x");
    assert_string_equal(history_flag_text(c, buf, sizeof(buf)), "qps 0.63x");
    assert_string_equal(history_flag_text(d, buf, sizeof(buf)), "UNSAFE");
    assert_string_equal(history_flag_text(e, buf, sizeof(buf)), "");
    assert_string_equal(a->started_at, "2026-11-26T10:00:01.000Z");
    assert_true(a->start_ns == 1795000001000000000ull);
    history_index_free(&idx);
}

/* A run that acquired nothing has no p99: not in a baseline, and its QPS
 * of 0 is under 2/3 of anything. */
static void a_run_that_acquired_nothing(void **state)
{
    (void)state;
    static const struct run first = {"sale", "zookeeper", 1, "PASS", 50, 1.0, 0},
                            none = {"sale", "zookeeper", 2, "PASS", 0, -1, 0},
                            third = {"sale", "zookeeper", 3, "PASS", 50, 1.0, 0};
    report("1", &first);
    report("2", &none);
    report("3", &third);
    struct history_index idx;
    char err[256];
    assert_int_equal(history_index_build(root, &idx, err, sizeof(err)), 0);
    assert_int_equal(idx.n_runs, 3);
    assert_int_equal(idx.runs[1].flags, HISTORY_QPS);
    assert_true(isnan(idx.runs[1].p99_ms) && isnan(idx.runs[1].p50_ms));
    assert_int_equal(idx.runs[2].earlier, 1); /* the run with no p99 left out */
    assert_int_equal(idx.runs[2].flags, 0);
    history_index_free(&idx);
}

/* Compare and matrix folders hold runs; runs/latest and a dot folder are
 * not followed; a run deeper than HISTORY_MAX_DEPTH is not found; two
 * series, by scenario then algorithm. */
static void where_runs_are_found(void **state)
{
    (void)state;
    static const struct run redis = {"sale", "redis", 1, "PASS", 10, 1, 0},
                            zk = {"sale", "zookeeper", 2, "FAIL", 10, 1, 3},
                            row = {"matrix_row", "redlock", 3, "PASS", 10, 1, 0};
    report("sale-compare/redis", &redis);
    report("sale-compare/zookeeper", &zk);
    report("known-results-matrix/matrix_row/seed-1", &row);
    report(".kept/x", &redis);
    report("1/2/3/4/5", &redis);
    file("sale-compare/compare.json", "{}");
    char link[512];
    snprintf(link, sizeof(link), "%s/latest", root);
    assert_int_equal(symlink("sale-compare", link), 0);
    struct history_index idx;
    char err[256];
    assert_int_equal(history_index_build(root, &idx, err, sizeof(err)), 0);
    assert_int_equal(idx.n_runs, 3);
    assert_int_equal(idx.n_series, 3);
    assert_string_equal(idx.runs[0].scenario, "matrix_row");
    assert_string_equal(idx.runs[1].algorithm, "redis");
    assert_string_equal(idx.runs[2].algorithm, "zookeeper");
    assert_false(idx.runs[2].safe);
    assert_int_equal(idx.runs[2].flags, 0); /* the first of its series */
    run_named(&idx, "sale-compare/zookeeper");
    run_named(&idx, "known-results-matrix/matrix_row/seed-1");
    history_index_free(&idx);
    /* a run folder given as DIR is a run */
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/sale-compare/redis", root);
    assert_int_equal(history_index_build(dir, &idx, err, sizeof(err)), 0);
    assert_int_equal(idx.n_runs, 1);
    assert_string_equal(idx.runs[0].folder, dir);
    history_index_free(&idx);
}

static void unreadable_reports_are_skipped(void **state)
{
    (void)state;
    static const struct run ok = {"sale", "redis", 1, "PASS", 10, 1, 0};
    report("good", &ok);
    folder("cut");
    file("cut/report.json", "{\"schema\": \"locklab.report/2\",");
    folder("other");
    file("other/report.json", "{\"schema\": \"locklab.compare/2\"}");
    folder("old");
    file("old/report.json", "{\"schema\": \"locklab.report/2\", \"scenario\": {\"name\": \"x\"}, "
                            "\"algorithm\": \"redis\", \"started_at\": \"t\", "
                            "\"start_wall_ns\": 1.5}");
    struct history_index idx;
    char err[256];
    assert_int_equal(history_index_build(root, &idx, err, sizeof(err)), 0);
    assert_int_equal(idx.n_runs, 1);
    assert_int_equal(idx.n_skipped, 3);
    char want[512];
    /* in the order the folders were searched: by name */
    snprintf(want, sizeof(want), "%s/cut/report.json", root);
    assert_string_equal(idx.skipped[0].path, want);
    assert_string_equal(idx.skipped[0].why,
                        "not JSON: string or '}' expected near end of file (line 1)");
    assert_string_equal(idx.skipped[1].why, "start_wall_ns is missing or not an integer");
    assert_string_equal(idx.skipped[2].why, "schema is not locklab.report/*: not a run's report");
    history_index_free(&idx);
}

/* A report.json with settings: a rate, a server at a port with a pid,
 * its version (NULL: no meta, no endpoints, as an older locklab wrote). */
struct keyed {
    const char *folder;
    int second;
    double rate;
    int port, pid;
    const char *version;
};

static void keyed_report(const struct keyed *k)
{
    char text[2048], meta[512], server[128];
    snprintf(server, sizeof(server), "redis 127.0.0.1:%d (managed, pid %d, master)", k->port,
             k->pid);
    if (k->version)
        snprintf(
            meta, sizeof(meta),
            ",\n \"endpoints\": [{\"server\": \"%s\", \"proxied\": false, \"listeners\": 0}],\n"
            " \"meta\": {\"locklab\": {\"version\": \"0.%d\"}, \"servers\": [{\"kind\": \"redis\", "
            "\"address\": \"127.0.0.1:%d\", \"version\": \"%s\"}, {\"kind\": \"proxy\", "
            "\"address\": null, \"version\": \"0.1.0\"}]}",
            server, k->second, k->port, k->version);
    else
        meta[0] = '\0';
    folder(k->folder);
    snprintf(text, sizeof(text),
             "{\"schema\": \"locklab.report/3\", \"complete\": true, \"verdict\": \"PASS\",\n"
             " \"safety\": {\"safe\": true, \"text\": \"safe\"},\n"
             " \"scenario\": {\"name\": \"sale\", \"file\": \"/x/%s.json\", \"description\": "
             "\"d%d\", \"clients\": 32, \"rate\": %.1f, \"workload\": {\"hot_fraction\": "
             "0.90000000000000002, \"skew\": \"hot\"}, \"defaults\": [\"%d\"]},\n"
             " \"algorithm\": \"redis\", \"servers\": [\"%s\"],\n"
             " \"started_at\": \"2026-11-26T10:00:%02d.000Z\", \"start_wall_ns\": %d000000000,\n"
             " \"operations\": {\"acquire\": {\"count\": 10, \"qps\": 100, \"p50_ms\": 0.5, "
             "\"p99_ms\": 1}}, \"checker\": {\"violations\": 0}%s}\n",
             k->folder, k->second, k->rate, k->second, server, k->second, 1795000000 + k->second,
             meta);
    char path[300];
    snprintf(path, sizeof(path), "%s/report.json", k->folder);
    file(path, text);
}

static void key_hex(uint64_t key, char *buf, size_t len)
{
    snprintf(buf, len, "%016llx", (unsigned long long)key);
}

/* The key of a run of folder a: its canonical text and hash, exactly. */
static void the_key_of_a_run(void **state)
{
    (void)state;
    keyed_report(&(struct keyed){"a", 1, 0, 41001, 101, "7.0.15"});
    char path[512];
    snprintf(path, sizeof(path), "%s/a/report.json", root);
    json_t *rep = json_load_file(path, 0, NULL);
    assert_non_null(rep);
    json_t *key = history_key_object(rep);
    char *text = history_canonical_json(key);
    assert_string_equal(text, "{\"algorithm\":\"redis\",\"scenario\":{\"clients\":32,\"rate\":0.0,"
                              "\"workload\":{\"hot_fraction\":0.9,\"skew\":\"hot\"}},\"servers\":"
                              "[{\"kind\":\"redis\",\"layout\":\"managed, master\",\"proxied\":"
                              "false,\"version\":\"7.0.15\"}]}");
    /* FNV-1a 64 of that text, worked out in Python */
    assert_true(history_fnv1a64(text, strlen(text)) == 0x7ceacad3d1abe860ull);
    assert_true(history_fnv1a64("", 0) == 0xcbf29ce484222325ull);
    free(text);
    json_decref(key);
    json_decref(rep);
}

/* Ports, pids, file, description and locklab's version aside, a run goes
 * on its series; a rate, a server's version, an older report.json's
 * missing parts each start one, in the order they began. */
static void series_split_by_settings(void **state)
{
    (void)state;
    static const struct keyed runs[] = {
        {"a", 1, 0, 41001, 101, "7.0.15"},   {"b", 2, 0, 41002, 102, "7.0.15"},
        {"c", 3, 500, 41003, 103, "7.0.15"}, {"d", 4, 0, 41004, 104, "7.2.4"},
        {"e", 5, 0, 41005, 105, NULL},       {"f", 6, 0, 41006, 106, "7.0.15"},
    };
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
        keyed_report(&runs[i]);
    struct history_index idx;
    char err[256], a[24], buf[320];
    assert_int_equal(history_index_build(root, &idx, err, sizeof(err)), 0);
    assert_int_equal(idx.n_runs, 6);
    assert_int_equal(idx.n_series, 4);
    /* a, b and f: one series, first as it began first */
    assert_int_equal(idx.series[0].n, 3);
    assert_ptr_equal(&idx.runs[0], run_named(&idx, "a"));
    assert_ptr_equal(&idx.runs[1], run_named(&idx, "b"));
    assert_ptr_equal(&idx.runs[2], run_named(&idx, "f"));
    assert_ptr_equal(&idx.runs[3], run_named(&idx, "c"));
    assert_ptr_equal(&idx.runs[4], run_named(&idx, "d"));
    assert_ptr_equal(&idx.runs[5], run_named(&idx, "e"));
    key_hex(idx.runs[0].key, a, sizeof(a));
    assert_string_equal(a, "7ceacad3d1abe860");
    assert_true(idx.series[0].after == SIZE_MAX);
    assert_string_equal(history_series_text(&idx, 0, 0, buf, sizeof(buf)), "new series");
    assert_string_equal(history_series_text(&idx, 0, 1, buf, sizeof(buf)), "");
    assert_int_equal(idx.series[1].after, 0);
    assert_string_equal(idx.series[1].differs, "rate 0.0 -> 500.0");
    assert_string_equal(history_series_text(&idx, 1, 0, buf, sizeof(buf)),
                        "new series: rate 0.0 -> 500.0 (vs 7ceacad3)");
    /* held beside the series it differs least from: a's, not c's */
    assert_int_equal(idx.series[2].after, 0);
    assert_string_equal(idx.series[2].differs, "servers[0].version 7.0.15 -> 7.2.4");
    /* an older report.json: no meta, no endpoints; null in the key; two
     * differences from a's and from d's: the later, d's */
    assert_int_equal(idx.series[3].after, 2);
    assert_string_equal(idx.series[3].differs,
                        "servers[0].version 7.2.4 -> null, servers[0].proxied false -> null");
    assert_int_equal(idx.regressions, 0);
    history_index_free(&idx);
}

static void a_dir_that_is_no_folder(void **state)
{
    (void)state;
    struct history_index idx;
    char err[600], dir[512];
    snprintf(dir, sizeof(dir), "%s/nowhere", root);
    assert_int_equal(history_index_build(dir, &idx, err, sizeof(err)), -1);
    char want[600];
    snprintf(want, sizeof(want), "%s: No such file or directory", dir);
    assert_string_equal(err, want);
    file("plain", "x");
    snprintf(dir, sizeof(dir), "%s/plain", root);
    assert_int_equal(history_index_build(dir, &idx, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "%s: not a folder", dir);
    assert_string_equal(err, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_rule_over_one_series, make_root, remove_root),
        cmocka_unit_test_setup_teardown(a_run_that_acquired_nothing, make_root, remove_root),
        cmocka_unit_test_setup_teardown(where_runs_are_found, make_root, remove_root),
        cmocka_unit_test_setup_teardown(unreadable_reports_are_skipped, make_root, remove_root),
        cmocka_unit_test_setup_teardown(a_dir_that_is_no_folder, make_root, remove_root),
        cmocka_unit_test_setup_teardown(the_key_of_a_run, make_root, remove_root),
        cmocka_unit_test_setup_teardown(series_split_by_settings, make_root, remove_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
