/* test_scenario_whole.c - the checks of the whole scenario, once every
 * value is read (an algorithm that cannot do what is asked, a fault past
 * the end of the run, ...), the defaults resolved per algorithm, the
 * command line's values in place of the file's, the examples
 * docs/scenario.md shows (files under tests/fixtures/, found through
 * LOCKLAB_SOURCE_DIR), and json_locate, which finds the line and column a
 * message points at.
 *
 * Inputs are written inline, with ' standing for " so they stay readable,
 * into t.json in a fresh temporary folder (tests/lib/scenario_env.h);
 * errors are compared with the folder stripped: "t.json:1:13: clients: ...".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sim/scenario/json_locate.h"
#include "sim/workloads/workload.h"
#include "tests/lib/scenario_env.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- the checks of the whole ----------------------------------------- */

/* The loader's message for an algorithm no lock has, after where (its
 * file and place): every lock of the registry listed. */
static const char *unknown_algorithm(char *buf, size_t len, const char *where, const char *name)
{
    return message(buf, len, "%slock.algorithm: unknown algorithm \"%s\" (known: %s)", where, name,
                   known_names(KNOWN_ALGORITHMS));
}

static void test_finish_errors(void **state)
{
    static const struct bad_case cases[] = {
        {"{'lock': {'algorithm': 'redis_naive'}, " WL "}",
         "t.json:1:24: lock.algorithm: unknown algorithm \"redis_naive\" (did you mean "
         "\"redis-naive\"?)"},
        {"{'lock': {'algorithm': 'redis-naive'}, 'fencing': true, " WL "}",
         "t.json:1:51: fencing: algorithm \"redis-naive\" gives no fencing tokens"},
        {"{'lock': {'algorithm': 'redis-naive', 'watchdog': true}, " WL "}",
         "t.json:1:51: lock.watchdog: algorithm \"redis-naive\" cannot renew a lock"},
        {"{'lock': {'ttl_ms': 3000, 'renew_ms': 3000}, " WL "}",
         "t.json:1:39: lock.renew_ms: 3000 must be less than ttl_ms (3000)"},
        {"{'lock': {'algorithm': 'redis', 'permits': 3}, " WL "}",
         "t.json:1:44: lock.permits: 3 permits, but algorithm \"redis\" grants no permits (it is "
         "no semaphore)"},
        {"{'lock': {'algorithm': 'zookeeper'}, 'workload': {'type': 'flash_sale', 'nested': "
         "true}}",
         "t.json:1:83: workload.nested: the purchase re-enters its lock; algorithm \"zookeeper\" "
         "is not reentrant (it would wait for itself)"},
        {"{'lock': {'algorithm': 'redisson-semaphore'}, " WL "}",
         "t.json:1:68: workload.type: flash_sale needs exclusive sections; redisson-semaphore "
         "grants none"},
        {"{'duration_s': 2, 'faults': [{'at_ms': 2000, 'type': 'client_crash'}], " WL "}",
         "t.json:1:40: faults[0].at_ms: 2000 is past the end of the run (2000 ms)"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'client:4'}],"
         " 'clients': 4, " WL "}",
         "t.json:1:60: faults[0].target: client 4 does not exist (4 clients, numbered 0..3)"},
        {"{'workload': {'type': 'flash_sale', 'items': 10000, 'stock': 1000000000000000}}",
         "t.json:1:62: workload.stock: 1000000000000000 per item times 10000 items is more "
         "stock than 64 bits can count"},
    };
    CHECK_FINISH(cases);

    char want[SCENARIO_ERR_MAX];
    const struct bad_case unknown[] = {
        {"{'lock': {'algorithm': 'chubby'}, " WL "}",
         unknown_algorithm(want, sizeof(want), "t.json:1:24: ", "chubby")},
    };
    CHECK_FINISH(unknown);
}

/* Values from the command line are judged too, but the file is pointed at
 * only when it holds the value blamed. */
/* Every default that depends on the algorithm, resolved once with a note
 * saying so: what the run uses, the header prints and report.json keeps. */
static void test_resolved_defaults(void **state)
{
    const struct env *e = *state;
    struct scenario s;
    char path[1100], err[SCENARIO_ERR_MAX];

    write_json(e, "t.json",
               "{'lock': {'algorithm': 'zookeeper', 'ttl_ms': 300, 'renew_ms': 50}, " WL "}", true,
               path, sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_int_equal(SETTINGS_OF(&s, zookeeper, zookeeper_spec)->session_timeout_ms, 1000);
    assert_int_equal(s.renew_ms, 0);
    assert_int_equal(s.n_resolved, 1); /* renew_ms is unused with the watchdog off: 0 */
    assert_string_equal(s.resolved[0],
                        "lock.zookeeper.session_timeout_ms: 1000, ttl_ms 300 clamped into the "
                        "1000..10000 ms ZooKeeper grants (tickTime 500)");

    write_json(e, "t.json",
               "{'lock': {'algorithm': 'redlock', 'ttl_ms': 900, 'watchdog': true}, " WL "}", true,
               path, sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_int_equal(s.renew_ms, 300);
    assert_int_equal(SETTINGS_OF(&s, redlock, redlock_spec)->quorum, 3);
    assert_int_equal(s.n_resolved, 2);
    assert_string_equal(s.resolved[0],
                        "lock.renew_ms: 300 = ttl_ms / 3 (Redisson's watchdog period)");
    assert_string_equal(s.resolved[1], "lock.redlock.quorum: 3 = a majority of 5 nodes");

    /* values the file gives are kept as written, and leave no note */
    write_json(e, "t.json",
               "{'lock': {'algorithm': 'redlock', 'watchdog': true, 'renew_ms': 7,"
               " 'redlock': {'quorum': 4}}, " WL "}",
               true, path, sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_int_equal(s.renew_ms, 7);
    assert_int_equal(SETTINGS_OF(&s, redlock, redlock_spec)->quorum, 4);
    assert_int_equal(s.n_resolved, 0);

    /* read_mostly's readers take the mode the lock grants them */
    write_json(e, "t.json",
               "{'lock': {'algorithm': 'redisson-rw'}, 'workload': {'type': 'read_mostly'}}", true,
               path, sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_int_equal(s.n_resolved, 1);
    assert_string_equal(s.resolved[0],
                        "workload readers: shared (redisson-rw's read lock), writers exclusive");
    write_json(e, "t.json",
               "{'lock': {'algorithm': 'redisson'}, 'workload': {'type': 'read_mostly'}}", true,
               path, sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_int_equal(s.n_resolved, 1);
    assert_string_equal(s.resolved[0], "workload readers: exclusive, as writers are: redisson "
                                       "grants no shared mode (readers wait for each other)");
}

/* etcd's lease is whole seconds, at least the shortest etcd grants: 1 s
 * on the managed members (--election-timeout 500), 2 s on an external
 * etcd taken at etcd's defaults. The lease that runs is resolved and
 * always noted with what it rests on; lock.etcd as written. */
static void test_resolved_etcd_lease(void **state)
{
    const struct env *e = *state;
    struct scenario s;
    char path[1100], err[SCENARIO_ERR_MAX];
    const struct lock_ops *etcd = lock_find("etcd");

    write_json(e, "t.json", "{'lock': {'algorithm': 'etcd', 'ttl_ms': 500}, " WL "}", true, path,
               sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_int_equal(SETTINGS_OF(&s, etcd, etcd_spec)->lease_ms, 1000);
    assert_int_equal(scenario_lease_ms(&s, etcd), 1000);
    assert_int_equal(SETTINGS_OF(&s, etcd, etcd_spec)->nodes, 1);
    assert_true(SETTINGS_OF(&s, etcd, etcd_spec)->recheck);
    assert_int_equal(s.n_resolved, 2);
    assert_string_equal(s.resolved[0],
                        "etcd lease: 1 s, ttl_ms 500 raised to the shortest granted (the managed "
                        "etcd, --election-timeout 500: whole seconds from 1 s)");
    /* kept alive at a third of the lease etcd grants, not of the ttl asked */
    assert_int_equal(s.renew_ms, 333);
    assert_string_equal(s.resolved[1],
                        "lock.renew_ms: 333 = the etcd lease / 3 (the lease's keep-alive period)");

    /* the scorecard's standard lease: granted as asked */
    write_json(e, "t.json", "{'lock': {'algorithm': 'etcd', 'ttl_ms': 1000}, " WL "}", true, path,
               sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_int_equal(scenario_lease_ms(&s, etcd), 1000);
    assert_string_equal(s.resolved[0], "etcd lease: 1 s = ttl_ms (the managed etcd, "
                                       "--election-timeout 500: whole seconds from 1 s)");

    write_json(e, "t.json",
               "{'lock': {'algorithm': 'etcd', 'ttl_ms': 2500,"
               " 'etcd': {'nodes': 3, 'recheck': false}}, " WL "}",
               true, path, sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_int_equal(SETTINGS_OF(&s, etcd, etcd_spec)->lease_ms, 3000);
    assert_int_equal(SETTINGS_OF(&s, etcd, etcd_spec)->nodes, 3);
    assert_false(SETTINGS_OF(&s, etcd, etcd_spec)->recheck);
    assert_int_equal(s.n_resolved, 2);
    assert_string_equal(s.resolved[0],
                        "etcd lease: 3 s = ttl_ms 2500 rounded up to whole seconds (the managed "
                        "etcd, --election-timeout 500: whole seconds from 1 s)");
    assert_int_equal(s.renew_ms, 1000);

    write_json(e, "t.json", "{'lock': {'algorithm': 'etcd', 'ttl_ms': 4000}, " WL "}", true, path,
               sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_int_equal(SETTINGS_OF(&s, etcd, etcd_spec)->lease_ms, 4000);
    assert_int_equal(s.n_resolved, 2); /* the lease, and the keep-alive's period */
    assert_int_equal(s.renew_ms, 1333);

    /* an etcd of the user's own: etcd's default election timeout grants 2 s */
    write_json(e, "t.json",
               "{'lock': {'algorithm': 'etcd', 'ttl_ms': 1000},"
               " 'servers': {'etcd': ['127.0.0.1:2379']}, " WL "}",
               true, path, sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_int_equal(SETTINGS_OF(&s, etcd, etcd_spec)->lease_ms, 2000);
    assert_int_equal(scenario_lease_ms(&s, etcd), 2000);
    assert_string_equal(s.resolved[0],
                        "etcd lease: 2 s, ttl_ms 1000 raised to the shortest granted (an external "
                        "etcd, taken at etcd's default --election-timeout 1000: whole seconds "
                        "from 2 s)");
    /* the longest note fits */
    write_json(e, "t.json",
               "{'lock': {'algorithm': 'etcd', 'ttl_ms': 86399001},"
               " 'servers': {'etcd': ['127.0.0.1:2379']}, " WL "}",
               true, path, sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_string_equal(s.resolved[0],
                        "etcd lease: 86400 s = ttl_ms 86399001 rounded up to whole seconds (an "
                        "external etcd, taken at etcd's default --election-timeout 1000: whole "
                        "seconds from 2 s)");

    write_json(e, "t.json", "{'lock': {'etcd': {'nodes': 2}}, " WL "}", true, path, sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), -1);
}

/* --duration replaced the file's duration_s: the file holds no value to
 * point at, the message says which key without a position; the file's own
 * value is pointed at. */
static void test_duration_blame(void **state)
{
    const struct env *e = *state;
    struct scenario s;
    struct scenario_overrides ov;
    char path[1100], err[SCENARIO_ERR_MAX];

    write_json(e, "t.json", "{'duration_s': 10, 'workload': {'type': 'scheduled_tasks'}}", true,
               path, sizeof(path));
    scenario_no_overrides(&ov);
    ov.duration_ms = 1500;
    assert_int_equal(scenario_load_with(path, &ov, &s, err), -1);
    relative(e, err);
    assert_string_equal(err, "t.json: duration_s: 1500 ms holds no whole period of 1000 ms after "
                             "the first (at least twice the period)");
    uint64_t ms = 0;
    char why[96];
    assert_int_equal(scenario_duration_ms(0.0001, &ms, why, sizeof(why)), -1);
    assert_string_equal(why, "0.0001 is shorter than 1 ms");
    assert_int_equal(scenario_duration_ms(0, &ms, why, sizeof(why)), -1);
    assert_string_equal(why, "0 is out of range (> 0 and <= 86400)");
    assert_int_equal(scenario_duration_ms(0.0015, &ms, why, sizeof(why)), 0);
    assert_int_equal(ms, 2);
}

/* The command line's values replace the file's before anything is checked:
 * a message points into the file only at a value the file gave. */
static void test_finish_after_overrides(void **state)
{
    const struct env *e = *state;
    struct scenario s;
    struct scenario_overrides ov;
    char path[1100], err[SCENARIO_ERR_MAX], want[SCENARIO_ERR_MAX];

    write_json(e, "t.json", "{'lock': {'algorithm': 'redis'}, 'fencing': true, " WL "}", true, path,
               sizeof(path));
    scenario_no_overrides(&ov);
    ov.algorithm = "consul";
    assert_int_equal(scenario_load_with(path, &ov, &s, err), -1);
    relative(e, err);
    assert_string_equal(err, unknown_algorithm(want, sizeof(want), "t.json: ", "consul"));

    /* fencing was the file's wish, so it is pointed at */
    ov.algorithm = "redis-naive";
    assert_int_equal(scenario_load_with(path, &ov, &s, err), -1);
    relative(e, err);
    assert_string_equal(err,
                        "t.json:1:45: fencing: algorithm \"redis-naive\" gives no fencing tokens");
    unlink(path);

    /* a file's value the command line replaces is not checked */
    write_json(e, "t.json", "{'clients': 0, 'duration_s': 'x', " WL "}", true, path, sizeof(path));
    scenario_no_overrides(&ov);
    ov.clients = 8;
    ov.duration_ms = 2000;
    assert_int_equal(scenario_load_with(path, &ov, &s, err), 0);
    assert_int_equal(s.clients, 8);
    assert_int_equal(s.duration_ms, 2000);
    unlink(path);

    /* --clients 4 with a fault aimed at client 7 of the file */
    fixture_path(state, "good_full.json", path, sizeof(path));
    scenario_no_overrides(&ov);
    ov.clients = 4;
    assert_int_equal(scenario_load_with(path, &ov, &s, err), -1);
    relative(e, err);
    assert_string_equal(err, "tests/fixtures/good_full.json:29:60: faults[1].target: client 7 "
                             "does not exist (4 clients, numbered 0..3)");

    /* --duration 10 with faults at 5 s and 12 s */
    ov.clients = 32;
    ov.duration_ms = 10000;
    assert_int_equal(scenario_load_with(path, &ov, &s, err), -1);
    relative(e, err);
    assert_string_equal(err, "tests/fixtures/good_full.json:29:19: faults[1].at_ms: 12000 is "
                             "past the end of the run (10000 ms)");

    /* no file at all */
    static const char text[] = "{\"workload\": {\"type\": \"flash_sale\"}}";
    scenario_no_overrides(&ov);
    ov.algorithm = "nope";
    assert_int_equal(scenario_load_text("", text, strlen(text), &ov, &s, err), -1);
    assert_string_equal(err, unknown_algorithm(want, sizeof(want), "", "nope"));
    ov.algorithm = "redis";
    assert_int_equal(scenario_load_text("", text, strlen(text), &ov, &s, err), 0);
}

static void test_new_finish_errors(void **state)
{
    static const struct bad_case cases[] = {
        {"{'lock': {'redlock': {'nodes': 3, 'quorum': 4}}, " WL "}",
         "t.json:1:45: lock.redlock.quorum: 4 votes cannot be had from 3 nodes"},
        {"{'duration_s': 10, 'workload': {'type': 'scheduled_tasks', 'tasks': 4, 'period_ms': 1000,"
         " 'run_ms': 250}}",
         "t.json:1:101: workload.run_ms: 250 must be less than period_ms / tasks (250 ms)"},
        /* a default blamed is not in the file: the object that lacks it is
         * pointed at, and the message says so */
        {"{'duration_s': 10, 'workload': {'type': 'scheduled_tasks', 'tasks': 20, 'period_ms': "
         "1000}}",
         "t.json:1:32: workload.run_ms: 50 must be less than period_ms / tasks (50 ms); not in the "
         "file: the default"},
        /* the hold counts from the acquisition and may last the whole period */
        {"{'duration_s': 10, 'workload': {'type': 'scheduled_tasks', 'period_ms': 1000,"
         " 'hold_min_ms': 1001}}",
         "t.json:1:94: workload.hold_min_ms: 1001 must be at most period_ms (1000 ms)"},
        {"{'duration_s': 1, 'workload': {'type': 'scheduled_tasks', 'period_ms': 1000}}",
         "t.json:1:16: duration_s: 1000 ms holds no whole period of 1000 ms after the first (at "
         "least twice the period)"},
    };
    CHECK_FINISH(cases);
    /* open loop paces flash sales and cache rebuilds; tasks keep their
     * timetable, and the message names every workload that takes a rate */
    char paced[256] = "", want[512];
    for (size_t i = 0; i < workload_count(); i++)
        if (!workload_at(i)->refuses_rate)
            snprintf(paced + strlen(paced), sizeof(paced) - strlen(paced), "%s%s",
                     paced[0] ? ", " : "", workload_at(i)->name);
    assert_non_null(strstr(paced, "flash_sale, cache_rebuild"));
    const struct bad_case timetable[] = {
        {"{'duration_s': 10, 'rate': 50, 'workload': {'type': 'scheduled_tasks'}}",
         message(want, sizeof(want),
                 "t.json:1:28: rate: scheduled_tasks fires on its own timetable; open loop is "
                 "for %s",
                 paced)},
    };
    CHECK_FINISH(timetable);
    /* a workload whose sections a lock cannot grant; the workload is the
     * reason even where permits are asked too */
    static const struct bad_case modes[] = {
        {"{'lock': {'algorithm': 'redis', 'permits': 4}, 'workload': {'type': 'pool'}}",
         "t.json:1:69: workload.type: pool needs permit sections; redis grants none"},
        {"{'lock': {'algorithm': 'redisson-rw'}, 'workload': {'type': 'pool'}}",
         "t.json:1:61: workload.type: pool needs permit sections; redisson-rw grants none"},
        {"{'lock': {'algorithm': 'redisson-semaphore'}, 'workload': {'type': 'read_mostly'}}",
         "t.json:1:68: workload.type: read_mostly needs exclusive sections; redisson-semaphore "
         "grants none"},
        {"{'lock': {'algorithm': 'postgres-optimistic'}, 'workload': {'type': 'read_mostly'}}",
         "t.json:1:69: workload.type: postgres-optimistic is optimistic concurrency, not a lock: "
         "a refused write cannot undo a torn read; read_mostly needs mutual exclusion"},
    };
    CHECK_FINISH(modes);
    static const struct bad_case few[] = {
        {"{'duration_s': 10, 'rate': 0.05, " WL "}",
         "t.json:1:28: rate: 0.05 steps/s makes less than one step in the 10 s run"},
    };
    CHECK_FINISH(few);
    static const struct bad_case load[] = {
        {"{'rate': 0, " WL "}", "t.json:1:10: rate: 0 is out of range (> 0 and <= 1e+06)"},
        {"{'rate': '5', " WL "}", "t.json:1:10: rate: expected a number, got string"},
    };
    CHECK_LOAD(load);
}

/* ---- the documented examples ----------------------------------------- */

/* The fixture file refused with exactly want; with finish, by the checks
 * of the whole (each of its values is fine). */
static void check_fixture(void **state, const char *file, bool finish, const char *want)
{
    const struct env *e = *state;
    struct scenario s;
    char path[1100], err[SCENARIO_ERR_MAX];
    fixture_path(state, file, path, sizeof(path));
    if (finish && scenario_read(path, NULL, &s, err) != 0)
        fail_msg("%s: failed before the checks of the whole: %s", file, err);
    int rc = scenario_load(path, &s, err);
    relative(e, err);
    assert_int_equal(rc, -1);
    assert_string_equal(err, want);
}

static void test_doc_examples(void **state)
{
    static const struct {
        const char *file;
        bool finish;
        const char *err;
    } cases[] = {
        {"bad_syntax.json", false,
         "tests/fixtures/bad_syntax.json:3:39: syntax: string or '}' expected near '}'"},
        {"bad_type.json", false,
         "tests/fixtures/bad_type.json:2:16: clients: expected an integer, got string"},
        {"bad_range.json", false,
         "tests/fixtures/bad_range.json:7:19: faults[2].at_ms: expected an integer >= 0"},
        {"bad_unknown_key.json", false,
         "tests/fixtures/bad_unknown_key.json:4:9: workload.critcal_ms: unknown key (did you "
         "mean \"critical_ms\"?)"},
        {"bad_unknown_value.json", false,
         "tests/fixtures/bad_unknown_value.json:2:26: workload.type: unknown workload "
         "\"flash-sale\" (did you mean \"flash_sale\"?)"},
        {"bad_duplicate.json", false,
         "tests/fixtures/bad_duplicate.json:5:9: lock.ttl_ms: duplicate key"},
        {"bad_missing.json", false,
         "tests/fixtures/bad_missing.json:3:17: workload: missing required key \"type\""},
        {"bad_fencing.json", true,
         "tests/fixtures/bad_fencing.json:4:16: fencing: algorithm \"redis-naive\" gives no "
         "fencing tokens"},
        {"bad_fault_late.json", true,
         "tests/fixtures/bad_fault_late.json:6:19: faults[1].at_ms: 25000 is past the end of "
         "the run (20000 ms)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check_fixture(state, cases[i].file, cases[i].finish, cases[i].err);
    char want[SCENARIO_ERR_MAX];
    check_fixture(state, "bad_algorithm.json", true,
                  unknown_algorithm(want, sizeof(want),
                                    "tests/fixtures/bad_algorithm.json:2:27: ", "chubby"));

    struct scenario s;
    char path[1100], err[SCENARIO_ERR_MAX];
    fixture_path(state, "good_minimal.json", path, sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_string_equal(s.name, "good_minimal");
}

/* ---- json_locate ----------------------------------------------------- */

static const char locate_text[] = "{\n"
                                  "  \"a\": {\"b\": [10, {\"c\": \"x\"}, [1, 2]]},\n"
                                  "  \"k\\u00e9y\": 1,\n"
                                  "  \"\xc3\xa9\": {\"z\": true},\n"
                                  "  \"esc\\\"q\": null,\n"
                                  "  \"x.y\": 5\n"
                                  "}";

static void assert_at(const char *path, bool at_key, int line, int column)
{
    struct json_pos pos = {0, 0};
    int rc = json_locate(locate_text, strlen(locate_text), path, at_key, &pos);
    if (rc != 0 || pos.line != line || pos.column != column)
        print_error("%s%s: rc %d at %d:%d\n", path, at_key ? " (key)" : "", rc, pos.line,
                    pos.column);
    assert_int_equal(rc, 0);
    assert_int_equal(pos.line, line);
    assert_int_equal(pos.column, column);
}

static void test_json_locate(void **state)
{
    static const char *const absent[] = {
        "a.b[3]",
        "a.c",
        "a.b.c",
        "a[0]",
        "b",
        "a.b[1].c.d",
        "x.y",
        /* malformed paths */
        "a..b",
        "a[",
        "a[x]",
        "a[1",
        ".a",
        "a.",
        "a[]",
        "a.[0]",
    };
    struct json_pos pos;

    (void)state;
    assert_at("", false, 1, 1);
    assert_at("a", false, 2, 8);
    assert_at("a", true, 2, 3);
    assert_at("a.b", false, 2, 14);
    assert_at("a.b[0]", false, 2, 15);
    assert_at("a.b[1]", false, 2, 19);
    assert_at("a.b[1].c", false, 2, 25);
    assert_at("a.b[1].c", true, 2, 20);
    assert_at("a.b[2]", false, 2, 31);
    assert_at("a.b[2][1]", false, 2, 35);
    assert_at("a.b[2][1]", true, 2, 35);   /* an element has no key */
    assert_at("k\xc3\xa9y", false, 3, 15); /* keys compare decoded */
    assert_at("\xc3\xa9.z", false, 4, 14); /* columns count characters, as jansson's do */
    assert_at("esc\"q", false, 5, 13);
    for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
        if (json_locate(locate_text, strlen(locate_text), absent[i], false, &pos) != -1)
            print_error("found %s\n", absent[i]);
        assert_int_equal(json_locate(locate_text, strlen(locate_text), absent[i], false, &pos), -1);
    }

    /* a key with a dot needs the step form */
    struct json_step steps[] = {{.key = "x.y", .key_len = 3}};
    assert_int_equal(json_locate_steps(locate_text, strlen(locate_text), steps, 1, false, &pos), 0);
    assert_int_equal(pos.line, 6);
    assert_int_equal(pos.column, 10);
    struct json_step nested[] = {{.key = "a", .key_len = 1},
                                 {.key = "b", .key_len = 1},
                                 {.key = NULL, .index = 2},
                                 {.key = NULL, .index = 0}};
    assert_int_equal(json_locate_steps(locate_text, strlen(locate_text), nested, 4, false, &pos),
                     0);
    assert_int_equal(pos.column, 32);
}

static void test_json_locate_edges(void **state)
{
    static const char crlf[] = "{\r\n\t\"a\":\t1}";
    static const char pair[] = "{\"\\ud83d\\ude00\": [ 7 ]}";
    static const char cut[] = "{\"a\": {\"b\": ";
    static const char dup[] = "{\"a\": 1, \"a\": 2}";
    struct json_pos pos;

    (void)state;
    assert_int_equal(json_locate(crlf, strlen(crlf), "a", false, &pos), 0);
    assert_int_equal(pos.line, 2);
    assert_int_equal(pos.column, 7);
    assert_int_equal(json_locate(pair, strlen(pair), "\xf0\x9f\x98\x80[0]", false, &pos), 0);
    assert_int_equal(pos.column, 20);
    assert_int_equal(json_locate(cut, strlen(cut), "a.b", false, &pos), -1);
    assert_int_equal(json_locate(cut, strlen(cut), "a.c", false, &pos), -1);
    assert_int_equal(json_locate(dup, strlen(dup), "a", true, &pos), 0);
    assert_int_equal(pos.column, 2); /* the first one */
    assert_int_equal(json_locate("", 0, "", false, &pos), -1);
    assert_int_equal(json_locate("  ", 2, "a", false, &pos), -1);
    /* the length is honoured: nothing past it is read */
    assert_int_equal(json_locate("{\"a\": 1}", 5, "a", false, &pos), -1);
}

static void assert_path_at(const char *text, size_t at, const char *path, int line, int column)
{
    char got[64];
    struct json_pos pos = {0, 0};
    int rc = json_path_at(text, strlen(text), at, got, sizeof(got), &pos);
    if (rc != 0 || strcmp(got, path) != 0 || pos.line != line || pos.column != column)
        print_error("offset %zu: rc %d, \"%s\" at %d:%d\n", at, rc, rc ? "" : got, pos.line,
                    pos.column);
    assert_int_equal(rc, 0);
    assert_string_equal(got, path);
    assert_int_equal(pos.line, line);
    assert_int_equal(pos.column, column);
}

static void test_json_path_at(void **state)
{
    const char *t = locate_text;
    const char *line2 = strchr(t, '\n') + 1; /* byte offsets on line 2 are col - 1 */
    size_t l2 = (size_t)(line2 - t);
    char small[4];
    struct json_pos pos;

    (void)state;
    assert_path_at(t, 0, "", 1, 1);
    assert_path_at(t, l2 + 25, "a.b[1].c", 2, 25); /* inside "x" */
    assert_path_at(t, l2 + 14, "a.b[0]", 2, 15);   /* the 0 of 10 */
    assert_path_at(t, l2 + 17, "a.b", 2, 14);      /* the space after "10," */
    assert_path_at(t, l2 + 9, "a.b", 2, 9);        /* the key "b" */
    assert_path_at(t, l2 + 11, "a.b", 2, 9);       /* its colon */
    assert_path_at(t, l2 + 34, "a.b[2][1]", 2, 35);
    assert_path_at(t, l2 + 37, "a", 2, 8); /* the } closing "a" */
    assert_path_at(t, l2 + 3, "a", 2, 3);  /* inside the key "a" */
    assert_path_at(t, (size_t)(strstr(t, "u00e9") - t), "k\xc3\xa9y", 3, 3);
    assert_path_at(t, strlen(t) - 1, "", 1, 1);

    assert_int_equal(json_path_at(t, strlen(t), strlen(t), small, sizeof(small), &pos), -1);
    assert_int_equal(json_path_at("  {}", 4, 0, small, sizeof(small), &pos), -1);
    assert_int_equal(json_path_at("{\"a\": [", 7, 6, small, sizeof(small), &pos), -1);
    assert_int_equal(json_path_at(t, strlen(t), l2 + 25, small, sizeof(small), &pos), 0);
    assert_string_equal(small, "a.b"); /* cut to fit */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finish_errors),          cmocka_unit_test(test_resolved_defaults),
        cmocka_unit_test(test_resolved_etcd_lease),    cmocka_unit_test(test_duration_blame),
        cmocka_unit_test(test_finish_after_overrides), cmocka_unit_test(test_new_finish_errors),
        cmocka_unit_test(test_doc_examples),           cmocka_unit_test(test_json_locate),
        cmocka_unit_test(test_json_locate_edges),      cmocka_unit_test(test_json_path_at),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
