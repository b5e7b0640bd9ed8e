/* test_scenario.c - the scenario format, case by case (docs/scenario.md).
 *
 * Most inputs are written inline, with ' standing for " so they stay
 * readable, into t.json in a fresh temporary folder; errors are compared
 * with the folder stripped: "t.json:1:13: clients: ...". Files under
 * tests/fixtures/ are the examples docs/scenario.md shows; they are found
 * through LOCKLAB_SOURCE_DIR.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sim/scenario/json_locate.h"
#include "sim/scenario/scenario.h"
#include "tests/lib/scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WL "'workload': {'type': 'flash_sale'}"

struct env {
    char dir[256]; /* this run's temporary folder */
    char src[1024];
};

static int group_setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    const char *tmp = getenv("TMPDIR"), *src = getenv("LOCKLAB_SOURCE_DIR");

    if (!e)
        return -1;
    snprintf(e->dir, sizeof(e->dir), "%s/locklab-scenario-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    snprintf(e->src, sizeof(e->src), "%s", src && *src ? src : ".");
    if (!mkdtemp(e->dir)) {
        free(e);
        return -1;
    }
    *state = e;
    return 0;
}

static int group_teardown(void **state)
{
    struct env *e = *state;
    if (e == NULL) /* group_setup failed: no folder */
        return 0;
    scratch_remove("test_scenario", e->dir);
    free(e);
    *state = NULL;
    return 0;
}

/* Write json to name in the test folder; with quotes, ' becomes ". */
static void write_json(const struct env *e, const char *name, const char *json, bool quotes,
                       char *path, size_t len)
{
    snprintf(path, len, "%s/%s", e->dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (const char *p = json; *p; p++)
        fputc(quotes && *p == '\'' ? '"' : *p, f);
    assert_int_equal(fclose(f), 0);
}

/* Strip the temporary folder or the source folder from a message. */
static void relative(const struct env *e, char *err)
{
    const char *roots[] = {e->dir, e->src};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(roots[i]);
        if (strncmp(err, roots[i], n) == 0 && err[n] == '/') {
            memmove(err, err + n + 1, strlen(err + n + 1) + 1);
            return;
        }
    }
}

/* Load json written into t.json: whole (every check) with finish, else
 * as written (scenario_read: each value, not the checks of the whole). */
static int run_json(void **state, const char *json, bool quotes, bool finish, struct scenario *s,
                    char *err)
{
    const struct env *e = *state;
    char path[512];

    write_json(e, "t.json", json, quotes, path, sizeof(path));
    int rc = finish ? scenario_load(path, s, err) : scenario_read(path, s, err);
    relative(e, err);
    unlink(path);
    return rc;
}

static void load_ok(void **state, const char *json, struct scenario *s)
{
    char err[SCENARIO_ERR_MAX];
    int rc = run_json(state, json, true, true, s, err);
    if (rc != 0)
        print_error("input: %s\nerror: %s\n", json, err);
    assert_int_equal(rc, 0);
    assert_string_equal(err, "");
}

struct bad_case {
    const char *json; /* ' for " */
    const char *err;
};

static void check_bad(void **state, const struct bad_case *cases, size_t n, bool finish)
{
    for (size_t i = 0; i < n; i++) {
        struct scenario s;
        char err[SCENARIO_ERR_MAX];
        int rc = run_json(state, cases[i].json, true, finish, &s, err);
        if (rc != -1 || strcmp(err, cases[i].err) != 0)
            print_error("input: %s\n", cases[i].json);
        assert_int_equal(rc, -1);
        assert_string_equal(err, cases[i].err);
    }
}

#define CHECK_LOAD(cases)   check_bad(state, cases, sizeof(cases) / sizeof(cases[0]), false)
#define CHECK_FINISH(cases) check_bad(state, cases, sizeof(cases) / sizeof(cases[0]), true)

static void fixture_path(void **state, const char *name, char *path, size_t len)
{
    const struct env *e = *state;
    snprintf(path, len, "%s/tests/fixtures/%s", e->src, name);
}

/* ---- good scenarios -------------------------------------------------- */

static void test_good_full(void **state)
{
    struct scenario s;
    char path[1100], err[SCENARIO_ERR_MAX];

    fixture_path(state, "good_full.json", path, sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_string_equal(s.path, path);
    assert_string_equal(s.name, "flash-sale.pause");
    assert_string_equal(s.description,
                        "A holder pauses past its TTL; fencing keeps the stock right.");
    assert_int_equal(s.clients, 32);
    assert_int_equal(s.duration_ms, 20500);
    assert_int_equal(s.requests, 100000);
    assert_int_equal(s.seed, 42);
    assert_string_equal(s.algorithm, "redis");
    assert_int_equal(s.ttl_ms, 3000);
    assert_int_equal(s.wait_ms, 2000);
    assert_true(s.watchdog);
    assert_int_equal(s.renew_ms, 1000);
    assert_int_equal(s.retry_min_ms, 2);
    assert_int_equal(s.retry_max_ms, 20);
    assert_int_equal(s.workload, WORKLOAD_FLASH_SALE);
    assert_int_equal(s.flash_sale.items, 5);
    assert_int_equal(s.flash_sale.stock, 250);
    assert_int_equal(s.flash_sale.critical_ms, 3);
    assert_int_equal(s.flash_sale.skew, SKEW_HOT);
    assert_true(s.flash_sale.hot_fraction == 0.75);
    assert_int_equal(s.flash_sale.hot_items, 2);
    assert_true(s.fencing);
    assert_int_equal(s.n_faults, 2);
    assert_string_equal(fault_type_name(s.faults[0].kind), "client_pause");
    assert_int_equal(s.faults[0].at_ms, 5000);
    assert_int_equal(s.faults[0].duration_ms, 4000);
    assert_int_equal(s.faults[0].target, FAULT_TARGET_HOLDER);
    assert_string_equal(fault_type_name(s.faults[1].kind), "client_crash");
    assert_int_equal(s.faults[1].at_ms, 12000);
    assert_int_equal(s.faults[1].duration_ms, 0);
    assert_int_equal(s.faults[1].target, 7);
    assert_int_equal(s.expect.violations.op, EXPECT_EQ);
    assert_int_equal(s.expect.violations.value, 0);
    assert_int_equal(s.expect.rejected_accesses.op, EXPECT_GT);
    assert_int_equal(s.expect.rejected_accesses.value, 0);
    assert_int_equal(s.expect.invariants, EXPECT_INV_HOLD);
}

static void assert_defaults(const struct scenario *s)
{
    assert_int_equal(s->clients, 16);
    assert_int_equal(s->duration_ms, 10000);
    assert_int_equal(s->requests, 0);
    assert_int_equal(s->seed, 1);
    assert_string_equal(s->description, "");
    assert_string_equal(s->algorithm, "redis");
    assert_int_equal(s->ttl_ms, 10000);
    assert_int_equal(s->wait_ms, 5000);
    assert_false(s->watchdog);
    assert_int_equal(s->renew_ms, 0);
    assert_int_equal(s->retry_min_ms, 1);
    assert_int_equal(s->retry_max_ms, 50);
    assert_int_equal(s->workload, WORKLOAD_FLASH_SALE);
    assert_int_equal(s->flash_sale.items, 10);
    assert_int_equal(s->flash_sale.stock, 1000);
    assert_int_equal(s->flash_sale.critical_ms, 1);
    assert_int_equal(s->flash_sale.skew, SKEW_UNIFORM);
    assert_true(s->flash_sale.hot_fraction == 0.9);
    assert_int_equal(s->flash_sale.hot_items, 1);
    assert_false(s->fencing);
    assert_int_equal(s->n_faults, 0);
    assert_int_equal(s->expect.rejected_accesses.op, EXPECT_UNSET);
}

static void test_minimal_defaults(void **state)
{
    struct scenario s;

    load_ok(state, "{" WL "}", &s);
    assert_defaults(&s);
    assert_string_equal(s.name, "t"); /* from t.json */
    /* a scenario that expects nothing expects safety */
    assert_int_equal(s.expect.violations.op, EXPECT_EQ);
    assert_int_equal(s.expect.violations.value, 0);
    assert_int_equal(s.expect.invariants, EXPECT_INV_HOLD);
}

static void test_per_client_skew(void **state)
{
    struct scenario s;

    load_ok(state,
            "{'clients': 50, 'workload': {'type': 'flash_sale', 'items': 50,"
            " 'skew': 'per_client'}}",
            &s);
    assert_int_equal(s.flash_sale.skew, SKEW_PER_CLIENT);
    assert_int_equal(s.flash_sale.items, 50);
}

static void test_scenario_defaults(void **state)
{
    struct scenario s;

    (void)state;
    memset(&s, 0x5A, sizeof(s));
    scenario_defaults(&s);
    assert_defaults(&s);
    assert_string_equal(s.path, "");
    assert_string_equal(s.name, "scenario");
    assert_int_equal(s.expect.violations.op, EXPECT_UNSET);
    assert_int_equal(s.expect.invariants, EXPECT_INV_UNSET);
}

static void test_expect_defaults(void **state)
{
    struct scenario s;

    /* an explicit violations expectation leaves invariants alone */
    load_ok(state, "{'expect': {'violations': '>0'}, " WL "}", &s);
    assert_int_equal(s.expect.violations.op, EXPECT_GT);
    assert_int_equal(s.expect.invariants, EXPECT_INV_UNSET);

    load_ok(state, "{'expect': {'violations': '>0', 'invariants': 'broken'}, " WL "}", &s);
    assert_int_equal(s.expect.invariants, EXPECT_INV_BROKEN);

    load_ok(state, "{'expect': {'invariants': 'broken'}, " WL "}", &s);
    assert_int_equal(s.expect.violations.op, EXPECT_EQ);
    assert_int_equal(s.expect.violations.value, 0);
    assert_int_equal(s.expect.invariants, EXPECT_INV_BROKEN);

    load_ok(state, "{'expect': {'rejected_accesses': '>= 3', 'violations': 2}, " WL "}", &s);
    assert_int_equal(s.expect.rejected_accesses.op, EXPECT_GE);
    assert_int_equal(s.expect.rejected_accesses.value, 3);
    assert_int_equal(s.expect.violations.op, EXPECT_EQ);
    assert_int_equal(s.expect.violations.value, 2);
    assert_int_equal(s.expect.invariants, EXPECT_INV_UNSET);

    /* a scenario that expects nothing expects safety */
    load_ok(state, "{" WL "}", &s);
    assert_int_equal(s.expect.violations.op, EXPECT_EQ);
    assert_int_equal(s.expect.invariants, EXPECT_INV_HOLD);
}

static void test_bounds_accepted(void **state)
{
    struct scenario s;

    load_ok(state,
            "{'name': 'a', 'clients': 1, 'duration_s': 0.001, 'requests': 0, 'seed': 0,"
            " 'lock': {'ttl_ms': 1, 'wait_ms': 0, 'renew_ms': 0, 'retry_min_ms': 1,"
            " 'retry_max_ms': 1},"
            " 'workload': {'type': 'flash_sale', 'items': 1, 'stock': 0, 'critical_ms': 0,"
            " 'hot_fraction': 1e-9, 'hot_items': 1},"
            " 'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'client:0'}],"
            " 'expect': {'violations': 0, 'rejected_accesses': '0'}}",
            &s);
    assert_int_equal(s.clients, 1);
    assert_int_equal(s.duration_ms, 1);
    assert_int_equal(s.ttl_ms, 1);
    assert_int_equal(s.flash_sale.stock, 0);
    assert_int_equal(s.faults[0].target, 0);

    load_ok(state,
            "{'name': '123456789012345678901234567890123456789012345678901234567890123',"
            " 'clients': 4096, 'duration_s': 86400, 'requests': 9223372036854775807,"
            " 'seed': 9223372036854775807,"
            " 'lock': {'ttl_ms': 86400000, 'wait_ms': 86400000, 'watchdog': true,"
            " 'renew_ms': 86399999,"
            " 'retry_min_ms': 60000, 'retry_max_ms': 60000},"
            " 'workload': {'type': 'flash_sale', 'items': 1000000, 'stock': 9000000000000,"
            " 'critical_ms': 600000, 'skew': 'uniform', 'hot_fraction': 1, 'hot_items': 1000000},"
            " 'faults': [{'at_ms': 86399999, 'type': 'client_pause', 'duration_ms': 86400000,"
            " 'target': 'client:4095'}]}",
            &s);
    assert_int_equal(strlen(s.name), 63);
    assert_int_equal(s.clients, 4096);
    assert_int_equal(s.duration_ms, 86400000);
    assert_int_equal(s.requests, INT64_MAX);
    assert_int_equal(s.seed, INT64_MAX);
    assert_int_equal(s.renew_ms, 86399999);
    /* each item may hold 10^15, but all of them together must fit 64 bits */
    assert_int_equal(s.flash_sale.stock, 9000000000000LL);
    assert_true(s.flash_sale.hot_fraction == 1.0);
    assert_int_equal(s.faults[0].duration_ms, 86400000);
    assert_int_equal(s.faults[0].target, 4095);

    load_ok(state, "{'workload': {'type': 'flash_sale', 'items': 9000, 'stock': 1000000000000000}}",
            &s);
    assert_int_equal(s.flash_sale.stock, 1000000000000000LL);

    /* duration_s rounds to the nearest millisecond; a number key takes integers */
    load_ok(state, "{'duration_s': 1.0005, " WL "}", &s);
    assert_int_equal(s.duration_ms, 1001);
    load_ok(state, "{'duration_s': 2, " WL "}", &s);
    assert_int_equal(s.duration_ms, 2000);
}

static void test_default_name(void **state)
{
    static const struct {
        const char *file, *name;
    } cases[] = {
        {"my scenario!.json", "my_scenario_"},
        {"redis.pause-1.json", "redis.pause-1"},
        {"no_suffix", "no_suffix"},
        {".json", "scenario"},
        /* one '_' a character, not a byte */
        {"\xc3\xbc"
         "n\xc3\xaf c\xc3\xb8"
         "d\xc3\xa9.json",
         "_n__c_d_"},
        {"1234567890123456789012345678901234567890123456789012345678901234567890.json",
         "123456789012345678901234567890123456789012345678901234567890123"},
    };
    const struct env *e = *state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct scenario s;
        char path[512], err[SCENARIO_ERR_MAX];
        write_json(e, cases[i].file, "{" WL "}", true, path, sizeof(path));
        assert_int_equal(scenario_load(path, &s, err), 0);
        assert_string_equal(s.name, cases[i].name);
        unlink(path);
    }
}

/* ---- files and syntax ------------------------------------------------ */

static void test_file_errors(void **state)
{
    const struct env *e = *state;
    struct scenario s;
    char path[512], err[SCENARIO_ERR_MAX];

    snprintf(path, sizeof(path), "%s/missing.json", e->dir);
    assert_int_equal(scenario_load(path, &s, err), -1);
    relative(e, err);
    assert_string_equal(err, "missing.json: cannot open: No such file or directory");

    assert_int_equal(scenario_load(e->dir, &s, err), -1);
    assert_true(strncmp(err, e->dir, strlen(e->dir)) == 0);
    assert_string_equal(err + strlen(e->dir), ": cannot read: Is a directory");

    /* the message stays on one line whatever the file is called */
    snprintf(path, sizeof(path), "%s/two\nlines.json", e->dir);
    assert_int_equal(scenario_load(path, &s, err), -1);
    relative(e, err);
    assert_string_equal(err, "two?lines.json: cannot open: No such file or directory");
}

/* From memory: what the file would give; len bounds the text (nothing
 * after it is read); named "", messages name no file. */
static void test_load_text(void **state)
{
    static const char text[] =
        "{\"clients\": 7, \"workload\": {\"type\": \"flash_sale\"}} trailing";
    static const char algo[] =
        "{\"lock\": {\"algorithm\": \"chubby\"}, \"workload\": {\"type\": \"flash_sale\"}}";
    struct scenario s;
    char err[SCENARIO_ERR_MAX];

    (void)state;
    assert_int_equal(scenario_load_text("mem.json", text, strlen(text) - 9, NULL, &s, err), 0);
    assert_int_equal(s.clients, 7);
    assert_string_equal(s.name, "mem");
    assert_string_equal(s.path, "mem.json");
    assert_int_equal(scenario_load_text("mem.json", text, strlen(text), NULL, &s, err), -1);
    assert_string_equal(err, "mem.json:1:59: syntax: end of file expected near 'trailing'");
    assert_int_equal(scenario_load_text("", algo, strlen(algo), NULL, &s, err), -1);
    assert_string_equal(err, "lock.algorithm: unknown algorithm \"chubby\" (known: redis, "
                             "redis-naive, redlock, zookeeper)");
}

static void test_long_message_cut_on_character(void **state)
{
    struct scenario s;
    char path[800], err[SCENARIO_ERR_MAX];

    (void)state;
    /* 300 two-byte characters: the 511-byte message would end inside one */
    for (size_t i = 0; i < 300; i++)
        memcpy(path + 2 * i, "\xc3\xa9", 2);
    path[600] = '\0';
    assert_int_equal(scenario_load(path, &s, err), -1);
    assert_int_equal(strlen(err), 510);
    assert_memory_equal(err + 508, "\xc3\xa9", 2);
}

static void test_syntax_errors(void **state)
{
    static const struct bad_case cases[] = {
        {"{'clients': 4,}", "t.json:1:15: syntax: string or '}' expected near '}'"},
        {"{\n  'clients': 4\n  'seed': 1\n}", "t.json:3:8: syntax: '}' expected near '\"seed\"'"},
        /* jansson's column 0; columns count from 1 */
        {"", "t.json:1:1: syntax: '[' or '{' expected near end of file"},
        {"{'clients': 4", "t.json:1:13: syntax: '}' expected near end of file"},
        {"{'clients': 01}", "t.json:1:13: syntax: invalid token near '0'"},
        {"{} x", "t.json:1:4: syntax: end of file expected near 'x'"},
        {"{'seed': 99999999999999999999}",
         "t.json:1:10: seed: 99999999999999999999 is out of range (integers go from "
         "-9223372036854775808 to 9223372036854775807)"},
        {"{'name': 'a\nb'}", "t.json:1:11: syntax: unexpected newline near '\"a'"},
        {"'flash_sale'", "t.json:1:12: syntax: '[' or '{' expected near '\"flash_sale\"'"},
        {"[" WL "]", "t.json:1:12: syntax: ']' expected near ':'"},
        {"[1, 2]", "t.json:1:1: expected an object, got array"},
    };
    CHECK_LOAD(cases);
}

static void test_duplicate_keys(void **state)
{
    static const struct bad_case cases[] = {
        {"{'clients': 1, 'clients': 2, " WL "}", "t.json:1:16: clients: duplicate key"},
        {"{'lock': {'ttl_ms': 1, 'ttl_ms': 2}, " WL "}", "t.json:1:24: lock.ttl_ms: duplicate key"},
        {"{'faults': [{'at_ms': 0, 'at_ms': 1}], " WL "}",
         "t.json:1:26: faults[0].at_ms: duplicate key"},
        {"{\n  'x': {'y': [{}, {'z': 1,\n  'z': 2}]}}", "t.json:3:3: x.y[1].z: duplicate key"},
        /* jansson decodes keys before comparing them, and so does the path */
        {"{'seed': 1, 's\\u0065ed': 2}", "t.json:1:13: seed: duplicate key"},
    };
    CHECK_LOAD(cases);
}

/* ---- wrong types ----------------------------------------------------- */

static void test_wrong_types(void **state)
{
    static const struct bad_case cases[] = {
        {"{'name': 5, " WL "}", "t.json:1:10: name: expected a string, got integer"},
        {"{'description': [], " WL "}", "t.json:1:17: description: expected a string, got array"},
        {"{'clients': '16', " WL "}", "t.json:1:13: clients: expected an integer, got string"},
        {"{'clients': 16.0, " WL "}", "t.json:1:13: clients: expected an integer, got number"},
        {"{'duration_s': '10', " WL "}", "t.json:1:16: duration_s: expected a number, got string"},
        {"{'requests': 1.5, " WL "}", "t.json:1:14: requests: expected an integer, got number"},
        {"{'seed': true, " WL "}", "t.json:1:10: seed: expected an integer, got boolean"},
        {"{'lock': [], " WL "}", "t.json:1:10: lock: expected an object, got array"},
        {"{'lock': {'algorithm': 1}, " WL "}",
         "t.json:1:24: lock.algorithm: expected a string, got integer"},
        {"{'lock': {'ttl_ms': '3000'}, " WL "}",
         "t.json:1:21: lock.ttl_ms: expected an integer, got string"},
        {"{'lock': {'wait_ms': null}, " WL "}",
         "t.json:1:22: lock.wait_ms: expected an integer, got null"},
        {"{'lock': {'watchdog': 'yes'}, " WL "}",
         "t.json:1:23: lock.watchdog: expected a boolean, got string"},
        {"{'lock': {'renew_ms': 1e3}, " WL "}",
         "t.json:1:23: lock.renew_ms: expected an integer, got number"},
        {"{'lock': {'retry_min_ms': false}, " WL "}",
         "t.json:1:27: lock.retry_min_ms: expected an integer, got boolean"},
        {"{'lock': {'retry_max_ms': {}}, " WL "}",
         "t.json:1:27: lock.retry_max_ms: expected an integer, got object"},
        {"{'workload': 'flash_sale'}", "t.json:1:14: workload: expected an object, got string"},
        {"{'workload': {'type': 1}}", "t.json:1:23: workload.type: expected a string, got integer"},
        {"{'workload': {'type': 'flash_sale', 'items': '5'}}",
         "t.json:1:46: workload.items: expected an integer, got string"},
        {"{'workload': {'type': 'flash_sale', 'stock': 1.5}}",
         "t.json:1:46: workload.stock: expected an integer, got number"},
        {"{'workload': {'type': 'flash_sale', 'critical_ms': true}}",
         "t.json:1:52: workload.critical_ms: expected an integer, got boolean"},
        {"{'workload': {'type': 'flash_sale', 'skew': 1}}",
         "t.json:1:45: workload.skew: expected a string, got integer"},
        {"{'workload': {'type': 'flash_sale', 'hot_fraction': '0.9'}}",
         "t.json:1:53: workload.hot_fraction: expected a number, got string"},
        {"{'workload': {'type': 'flash_sale', 'hot_items': 1.0}}",
         "t.json:1:50: workload.hot_items: expected an integer, got number"},
        {"{'fencing': 1, " WL "}", "t.json:1:13: fencing: expected a boolean, got integer"},
        {"{'faults': {}, " WL "}", "t.json:1:12: faults: expected an array, got object"},
        {"{'faults': [5], " WL "}", "t.json:1:13: faults[0]: expected an object, got integer"},
        {"{'faults': [{'at_ms': '0', 'type': 'client_crash'}], " WL "}",
         "t.json:1:23: faults[0].at_ms: expected an integer, got string"},
        {"{'faults': [{'at_ms': 0, 'type': 3}], " WL "}",
         "t.json:1:34: faults[0].type: expected a string, got integer"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'duration_ms': '1'}], " WL "}",
         "t.json:1:65: faults[0].duration_ms: expected an integer, got string"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 3}], " WL "}",
         "t.json:1:60: faults[0].target: expected a string, got integer"},
        {"{'expect': 0, " WL "}", "t.json:1:12: expect: expected an object, got integer"},
        {"{'expect': {'violations': true}, " WL "}",
         "t.json:1:27: expect.violations: expected an integer or a string, got boolean"},
        {"{'expect': {'rejected_accesses': 1.5}, " WL "}",
         "t.json:1:34: expect.rejected_accesses: expected an integer or a string, got number"},
        {"{'expect': {'invariants': false}, " WL "}",
         "t.json:1:27: expect.invariants: expected a string, got boolean"},
    };
    CHECK_LOAD(cases);
}

/* ---- unknown keys and values ----------------------------------------- */

static void test_unknown_keys(void **state)
{
    static const struct bad_case cases[] = {
        {"{'clinets': 8, " WL "}", "t.json:1:2: clinets: unknown key (did you mean \"clients\"?)"},
        {"{'Seed': 8, " WL "}", "t.json:1:2: Seed: unknown key (did you mean \"seed\"?)"},
        {"{'zzz': 1, " WL "}",
         "t.json:1:2: zzz: unknown key (known: name, description, clients, duration_s, requests, "
         "rate, seed, lock, workload, fencing, faults, expect, servers)"},
        {"{'lock': {'tll_ms': 5}, " WL "}",
         "t.json:1:11: lock.tll_ms: unknown key (did you mean \"ttl_ms\"?)"},
        {"{'lock': {'ttl': 5}, " WL "}",
         "t.json:1:11: lock.ttl: unknown key (known: algorithm, ttl_ms, wait_ms, watchdog, "
         "renew_ms, retry_min_ms, retry_max_ms, redlock, zookeeper, redis)"},
        {"{'workload': {'type': 'flash_sale', 'critcal_ms': 5}}",
         "t.json:1:37: workload.critcal_ms: unknown key (did you mean \"critical_ms\"?)"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'durration_ms': 5}], " WL "}",
         "t.json:1:50: faults[0].durration_ms: unknown key (did you mean \"duration_ms\"?)"},
        {"{'expect': {'violation': 0}, " WL "}",
         "t.json:1:13: expect.violation: unknown key (did you mean \"violations\"?)"},
        {"{'expect': {'rejected': 0}, " WL "}",
         "t.json:1:13: expect.rejected: unknown key (known: violations, rejected_accesses, "
         "invariants)"},
        /* the old name of rejected_accesses is refused, saying what to write
         * instead, wherever it stands among the keys */
        {"{'expect': {'fenced': '>0'}, " WL "}",
         "t.json:1:13: expect.fenced: no longer accepted: write \"rejected_accesses\" (the same "
         "count: reads and writes the store rejected for a stale token)"},
        {"{'expect': {'violations': 0, 'fenced': 1}, " WL "}",
         "t.json:1:30: expect.fenced: no longer accepted: write \"rejected_accesses\" (the same "
         "count: reads and writes the store rejected for a stale token)"},
        /* only in expect: elsewhere it is an unknown key like any other */
        {"{'fenced': true, " WL "}",
         "t.json:1:2: fenced: unknown key (known: name, description, "
         "clients, duration_s, requests, "
         "rate, seed, lock, workload, fencing, faults, expect, servers)"},
        /* keys of an object are checked before its values, its own before its
         * children's, and in the file's order */
        {"{'lock': {'a': 1}, 'clientz': 1, " WL "}",
         "t.json:1:20: clientz: unknown key (did you mean \"clients\"?)"},
        {"{'clients': 'x', 'sed': 1, " WL "}",
         "t.json:1:18: sed: unknown key (did you mean \"seed\"?)"},
        /* a key that would break the line is escaped */
        {"{'a\\nb': 1}",
         "t.json:1:2: a\\u000ab: unknown key (known: name, description, clients, duration_s, "
         "requests, rate, seed, lock, workload, fencing, faults, expect, servers)"},
    };
    CHECK_LOAD(cases);
}

static void test_unknown_values(void **state)
{
    static const struct bad_case cases[] = {
        {"{'workload': {'type': 'flash-sale'}}",
         "t.json:1:23: workload.type: unknown workload \"flash-sale\" (did you mean "
         "\"flash_sale\"?)"},
        {"{'workload': {'type': 'cache_warmup'}}",
         "t.json:1:23: workload.type: unknown workload \"cache_warmup\" (known: flash_sale, "
         "cache_rebuild, scheduled_tasks)"},
        {"{'workload': {'type': 'flash_sale', 'skew': 'hott'}}",
         "t.json:1:45: workload.skew: unknown skew \"hott\" (did you mean \"hot\"?)"},
        {"{'workload': {'type': 'flash_sale', 'skew': 'per-client'}}",
         "t.json:1:45: workload.skew: unknown skew \"per-client\" (did you mean "
         "\"per_client\"?)"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_pase'}], " WL "}",
         "t.json:1:34: faults[0].type: unknown fault type \"client_pase\" (did you mean "
         "\"client_pause\"?)"},
        {"{'faults': [{'at_ms': 0, 'type': 'partition'}], " WL "}",
         "t.json:1:34: faults[0].type: unknown fault type \"partition\" (known: client_pause, "
         "client_crash, kill, pause, restart, clock_jump, failover, latency, bandwidth, timeout, "
         "reset_peer, "
         "limit_data, slicer, down)"},
        {"{'expect': {'invariants': 'ok'}, " WL "}",
         "t.json:1:27: expect.invariants: unknown value \"ok\" (known: hold, broken)"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'holdr'}], " WL "}",
         "t.json:1:60: faults[0].target: unknown target \"holdr\" for a client_crash (expected "
         "\"holder\" or \"client:N\")"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'client:-1'}], " WL "}",
         "t.json:1:60: faults[0].target: unknown target \"client:-1\" for a client_crash (expected "
         "\"holder\" or \"client:N\")"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'client:'}], " WL "}",
         "t.json:1:60: faults[0].target: unknown target \"client:\" for a client_crash (expected "
         "\"holder\" or \"client:N\")"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'client:1x'}], " WL "}",
         "t.json:1:60: faults[0].target: unknown target \"client:1x\" for a client_crash (expected "
         "\"holder\" or \"client:N\")"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'client:2147483648'}], " WL
         "}",
         "t.json:1:60: faults[0].target: unknown target \"client:2147483648\" for a client_crash "
         "(expected "
         "\"holder\" or \"client:N\")"},
        /* too long to be any algorithm's name: no need to wait for the checks of the whole */
        {"{'lock': {'algorithm': 'redis-with-a-name-far-too-long-to-keep-around'}, " WL "}",
         "t.json:1:24: lock.algorithm: unknown algorithm "
         "\"redis-with-a-name-far-too-long-to-keep-a...\" (known: redis, redis-naive, redlock, "
         "zookeeper)"},
        {"{'expect': {'violations': 'x'}, " WL "}",
         "t.json:1:27: expect.violations: cannot read \"x\" as a count (write 0, \">0\", \">= "
         "3\", \"<5\")"},
        {"{'expect': {'rejected_accesses': '>>1'}, " WL "}",
         "t.json:1:34: expect.rejected_accesses: cannot read \">>1\" as a count (write 0, \">0\", "
         "\">= 3\", \"<5\")"},
    };
    CHECK_LOAD(cases);
}

/* ---- ranges ---------------------------------------------------------- */

static void test_out_of_range_top(void **state)
{
    static const struct bad_case cases[] = {
        {"{'name': '', " WL "}",
         "t.json:1:10: name: \"\" is not a valid name (1 to 63 of A-Z a-z 0-9 _ . -)"},
        {"{'name': 'two words', " WL "}",
         "t.json:1:10: name: \"two words\" is not a valid name (1 to 63 of A-Z a-z 0-9 _ . -)"},
        {"{'name': '1234567890123456789012345678901234567890123456789012345678901234', " WL "}",
         "t.json:1:10: name: \"1234567890123456789012345678901234567890...\" is not a valid name "
         "(1 to 63 of A-Z a-z 0-9 _ . -)"},
        {"{'clients': 0, " WL "}", "t.json:1:13: clients: 0 is out of range (1..4096)"},
        {"{'clients': 4097, " WL "}", "t.json:1:13: clients: 4097 is out of range (1..4096)"},
        {"{'duration_s': 0, " WL "}",
         "t.json:1:16: duration_s: 0 is out of range (> 0 and <= 86400)"},
        {"{'duration_s': -1, " WL "}",
         "t.json:1:16: duration_s: -1 is out of range (> 0 and <= 86400)"},
        {"{'duration_s': 86400.5, " WL "}",
         "t.json:1:16: duration_s: 86400.5 is out of range (> 0 and <= 86400)"},
        {"{'duration_s': 0.0004, " WL "}", "t.json:1:16: duration_s: 0.0004 is shorter than 1 ms"},
        {"{'requests': -1, " WL "}", "t.json:1:14: requests: expected an integer >= 0"},
        {"{'seed': -1, " WL "}", "t.json:1:10: seed: expected an integer >= 0"},
        /* the first error in table order, not in file order */
        {"{'workload': {'type': 'flash_sale', 'items': 0}, 'clients': 0}",
         "t.json:1:61: clients: 0 is out of range (1..4096)"},
    };
    CHECK_LOAD(cases);

    /* description: 255 bytes pass, 256 do not */
    char json[400], desc[257];
    struct scenario s;
    memset(desc, 'd', 256);
    desc[255] = '\0';
    snprintf(json, sizeof(json), "{'description': '%s', " WL "}", desc);
    load_ok(state, json, &s);
    assert_int_equal(strlen(s.description), 255);
    desc[255] = 'd';
    desc[256] = '\0';
    snprintf(json, sizeof(json), "{'description': '%s', " WL "}", desc);
    const struct bad_case too_long[] = {
        {json, "t.json:1:17: description: too long (256 bytes, at most 255)"},
    };
    CHECK_LOAD(too_long);
}

static void test_out_of_range_lock(void **state)
{
    static const struct bad_case cases[] = {
        {"{'lock': {'ttl_ms': 0}, " WL "}",
         "t.json:1:21: lock.ttl_ms: 0 is out of range (1..86400000)"},
        {"{'lock': {'ttl_ms': 86400001}, " WL "}",
         "t.json:1:21: lock.ttl_ms: 86400001 is out of range (1..86400000)"},
        {"{'lock': {'wait_ms': -1}, " WL "}",
         "t.json:1:22: lock.wait_ms: -1 is out of range (0..86400000)"},
        {"{'lock': {'wait_ms': 86400001}, " WL "}",
         "t.json:1:22: lock.wait_ms: 86400001 is out of range (0..86400000)"},
        {"{'lock': {'renew_ms': -1}, " WL "}",
         "t.json:1:23: lock.renew_ms: -1 is out of range (0..86400000)"},
        {"{'lock': {'renew_ms': 86400001}, " WL "}",
         "t.json:1:23: lock.renew_ms: 86400001 is out of range (0..86400000)"},
        {"{'lock': {'retry_min_ms': 0}, " WL "}",
         "t.json:1:27: lock.retry_min_ms: 0 is out of range (1..60000)"},
        {"{'lock': {'retry_min_ms': 60001}, " WL "}",
         "t.json:1:27: lock.retry_min_ms: 60001 is out of range (1..60000)"},
        {"{'lock': {'retry_max_ms': 0}, " WL "}",
         "t.json:1:27: lock.retry_max_ms: 0 is out of range (1..60000)"},
        {"{'lock': {'retry_max_ms': 60001}, " WL "}",
         "t.json:1:27: lock.retry_max_ms: 60001 is out of range (1..60000)"},
        {"{'lock': {'retry_min_ms': 10, 'retry_max_ms': 5}, " WL "}",
         "t.json:1:47: lock.retry_max_ms: 5 is less than retry_min_ms (10)"},
        {"{'lock': {'retry_min_ms': 100}, " WL "}",
         "t.json:1:27: lock.retry_min_ms: 100 is more than retry_max_ms (50 by default)"},
    };
    CHECK_LOAD(cases);
}

static void test_out_of_range_workload(void **state)
{
    static const struct bad_case cases[] = {
        {"{'workload': {'type': 'flash_sale', 'items': 0}}",
         "t.json:1:46: workload.items: 0 is out of range (1..1000000)"},
        {"{'workload': {'type': 'flash_sale', 'items': 1000001}}",
         "t.json:1:46: workload.items: 1000001 is out of range (1..1000000)"},
        {"{'workload': {'type': 'flash_sale', 'stock': -1}}",
         "t.json:1:46: workload.stock: -1 is out of range (0..1000000000000000)"},
        {"{'workload': {'type': 'flash_sale', 'stock': 1000000000000001}}",
         "t.json:1:46: workload.stock: 1000000000000001 is out of range (0..1000000000000000)"},
        {"{'workload': {'type': 'flash_sale', 'critical_ms': -1}}",
         "t.json:1:52: workload.critical_ms: -1 is out of range (0..600000)"},
        {"{'workload': {'type': 'flash_sale', 'critical_ms': 600001}}",
         "t.json:1:52: workload.critical_ms: 600001 is out of range (0..600000)"},
        {"{'workload': {'type': 'flash_sale', 'hot_fraction': 0}}",
         "t.json:1:53: workload.hot_fraction: 0 is out of range (> 0 and <= 1)"},
        {"{'workload': {'type': 'flash_sale', 'hot_fraction': 1.5}}",
         "t.json:1:53: workload.hot_fraction: 1.5 is out of range (> 0 and <= 1)"},
        {"{'workload': {'type': 'flash_sale', 'hot_items': 0}}",
         "t.json:1:50: workload.hot_items: 0 is out of range (1..10)"},
        {"{'workload': {'type': 'flash_sale', 'items': 3, 'hot_items': 4}}",
         "t.json:1:62: workload.hot_items: 4 is out of range (1..3)"},
    };
    CHECK_LOAD(cases);
}

static void test_out_of_range_faults(void **state)
{
    static const struct bad_case cases[] = {
        {"{'faults': [{'at_ms': -1, 'type': 'client_crash'}], " WL "}",
         "t.json:1:23: faults[0].at_ms: expected an integer >= 0"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'duration_ms': -1}], " WL "}",
         "t.json:1:65: faults[0].duration_ms: -1 is out of range (0..86400000)"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'duration_ms': 86400001}], " WL "}",
         "t.json:1:65: faults[0].duration_ms: 86400001 is out of range (0..86400000)"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_pause', 'duration_ms': 0}], " WL "}",
         "t.json:1:65: faults[0].duration_ms: 0 is out of range for a client_pause (1..86400000)"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_pause'}], " WL "}",
         "t.json:1:13: faults[0]: missing required key \"duration_ms\" (a client_pause needs one)"},
        {"{'expect': {'violations': -1}, " WL "}",
         "t.json:1:27: expect.violations: expected an integer >= 0"},
    };
    CHECK_LOAD(cases);

    /* 65 faults, one a line: the 65th is on line 66 */
    char json[4096] = "{" WL ", 'faults': [\n";
    for (int i = 0; i < SCENARIO_MAX_FAULTS + 1; i++)
        strcat(json, i ? ",\n    {'at_ms': 0, 'type': 'client_crash'}"
                       : "    {'at_ms': 0, 'type': 'client_crash'}");
    strcat(json, "]}");
    const struct bad_case too_many[] = {
        {json, "t.json:66:5: faults[64]: too many faults (at most 64)"},
    };
    CHECK_LOAD(too_many);
    json[strlen(json) - strlen(",\n    {'at_ms': 0, 'type': 'client_crash'}]}")] = '\0';
    strcat(json, "]}");
    struct scenario s;
    load_ok(state, json, &s);
    assert_int_equal(s.n_faults, SCENARIO_MAX_FAULTS);
}

static void test_missing_required(void **state)
{
    static const struct bad_case cases[] = {
        {"{}", "t.json:1:1: missing required key \"workload\""},
        {"{'clients': 8, 'workload': {}}", "t.json:1:28: workload: missing required key \"type\""},
        {"{'faults': [{'type': 'client_crash'}], " WL "}",
         "t.json:1:13: faults[0]: missing required key \"at_ms\""},
        {"{'faults': [{'at_ms': 0}], " WL "}",
         "t.json:1:13: faults[0]: missing required key \"type\""},
    };
    CHECK_LOAD(cases);
}

/* ---- the checks of the whole ----------------------------------------- */

static void test_finish_errors(void **state)
{
    static const struct bad_case cases[] = {
        {"{'lock': {'algorithm': 'chubby'}, " WL "}",
         "t.json:1:24: lock.algorithm: unknown algorithm \"chubby\" (known: redis, "
         "redis-naive, redlock, zookeeper)"},
        {"{'lock': {'algorithm': 'redis_naive'}, " WL "}",
         "t.json:1:24: lock.algorithm: unknown algorithm \"redis_naive\" (did you mean "
         "\"redis-naive\"?)"},
        {"{'lock': {'algorithm': 'redis-naive'}, 'fencing': true, " WL "}",
         "t.json:1:51: fencing: algorithm \"redis-naive\" gives no fencing tokens"},
        {"{'lock': {'algorithm': 'redis-naive', 'watchdog': true}, " WL "}",
         "t.json:1:51: lock.watchdog: algorithm \"redis-naive\" cannot renew a lock"},
        {"{'lock': {'ttl_ms': 3000, 'renew_ms': 3000}, " WL "}",
         "t.json:1:39: lock.renew_ms: 3000 must be less than ttl_ms (3000)"},
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
    assert_int_equal(s.zookeeper.session_timeout_ms, 1000);
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
    assert_int_equal(s.redlock.quorum, 3);
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
    assert_int_equal(s.redlock.quorum, 4);
    assert_int_equal(s.n_resolved, 0);
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
    char path[1100], err[SCENARIO_ERR_MAX];

    write_json(e, "t.json", "{'lock': {'algorithm': 'redis'}, 'fencing': true, " WL "}", true, path,
               sizeof(path));
    scenario_no_overrides(&ov);
    ov.algorithm = "etcd";
    assert_int_equal(scenario_load_with(path, &ov, &s, err), -1);
    relative(e, err);
    assert_string_equal(err, "t.json: lock.algorithm: unknown algorithm \"etcd\" (known: redis, "
                             "redis-naive, redlock, zookeeper)");

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
    assert_string_equal(err, "lock.algorithm: unknown algorithm \"nope\" (known: redis, "
                             "redis-naive, redlock, zookeeper)");
    ov.algorithm = "redis";
    assert_int_equal(scenario_load_text("", text, strlen(text), &ov, &s, err), 0);
}

/* ---- the documented examples ----------------------------------------- */

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
        {"bad_algorithm.json", true,
         "tests/fixtures/bad_algorithm.json:2:27: lock.algorithm: unknown algorithm "
         "\"chubby\" (known: redis, redis-naive, redlock, zookeeper)"},
        {"bad_fencing.json", true,
         "tests/fixtures/bad_fencing.json:4:16: fencing: algorithm \"redis-naive\" gives no "
         "fencing tokens"},
        {"bad_fault_late.json", true,
         "tests/fixtures/bad_fault_late.json:6:19: faults[1].at_ms: 25000 is past the end of "
         "the run (20000 ms)"},
    };
    const struct env *e = *state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct scenario s;
        char path[1100], err[SCENARIO_ERR_MAX];
        fixture_path(state, cases[i].file, path, sizeof(path));
        /* finish: each value is fine, the checks of the whole refuse it */
        if (cases[i].finish && scenario_read(path, &s, err) != 0)
            fail_msg("%s: failed before the checks of the whole: %s", cases[i].file, err);
        int rc = scenario_load(path, &s, err);
        relative(e, err);
        assert_int_equal(rc, -1);
        assert_string_equal(err, cases[i].err);
    }

    struct scenario s;
    char path[1100], err[SCENARIO_ERR_MAX];
    fixture_path(state, "good_minimal.json", path, sizeof(path));
    assert_int_equal(scenario_load(path, &s, err), 0);
    assert_string_equal(s.name, "good_minimal");
}

/* ---- expectations ---------------------------------------------------- */

static void test_expect_parse(void **state)
{
    static const struct {
        const char *text;
        int rc;
        enum expect_op op;
        uint64_t value;
    } cases[] = {
        {"0", 0, EXPECT_EQ, 0},
        {">0", 0, EXPECT_GT, 0},
        {">= 3", 0, EXPECT_GE, 3},
        {"  <=  7", 0, EXPECT_LE, 7},
        {"<5", 0, EXPECT_LT, 5},
        {"==0", 0, EXPECT_EQ, 0},
        {" == 12", 0, EXPECT_EQ, 12},
        {"007", 0, EXPECT_EQ, 7},
        {"18446744073709551615", 0, EXPECT_EQ, UINT64_MAX},
        {"", -1, 0, 0},
        {" ", -1, 0, 0},
        {">", -1, 0, 0},
        {"=0", -1, 0, 0},
        {"=>1", -1, 0, 0},
        {"> -1", -1, 0, 0},
        {"-1", -1, 0, 0},
        {"+1", -1, 0, 0},
        {"1 ", -1, 0, 0},
        {"1x", -1, 0, 0},
        {"1.0", -1, 0, 0},
        {"0x10", -1, 0, 0},
        {">>1", -1, 0, 0},
        {"!=1", -1, 0, 0},
        {"\t1", -1, 0, 0},
        {"18446744073709551616", -1, 0, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct expect_num e = {EXPECT_LE, 99};
        int rc = expect_parse(cases[i].text, &e);
        if (rc != cases[i].rc)
            print_error("expect_parse(\"%s\")\n", cases[i].text);
        assert_int_equal(rc, cases[i].rc);
        if (rc == 0) {
            assert_int_equal(e.op, cases[i].op);
            assert_int_equal(e.value, cases[i].value);
        } else {
            assert_int_equal(e.op, EXPECT_LE); /* untouched on failure */
            assert_int_equal(e.value, 99);
        }
    }
    struct expect_num e;
    assert_int_equal(expect_parse(NULL, &e), -1);
}

static void test_expect_format(void **state)
{
    static const struct {
        struct expect_num e;
        const char *text;
    } cases[] = {
        {{EXPECT_EQ, 0}, "0"},
        {{EXPECT_GT, 0}, ">0"},
        {{EXPECT_GE, 3}, ">=3"},
        {{EXPECT_LT, 5}, "<5"},
        {{EXPECT_LE, 7}, "<=7"},
        {{EXPECT_UNSET, 0}, "any"},
        {{EXPECT_EQ, UINT64_MAX}, "18446744073709551615"},
    };
    char buf[32];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_ptr_equal(expect_format(&cases[i].e, buf, sizeof(buf)), buf);
        assert_string_equal(buf, cases[i].text);
        /* what it writes, expect_parse reads back */
        struct expect_num back;
        if (cases[i].e.op != EXPECT_UNSET) {
            assert_int_equal(expect_parse(buf, &back), 0);
            assert_int_equal(back.op, cases[i].e.op);
            assert_int_equal(back.value, cases[i].e.value);
        }
    }
    struct expect_num ge = {EXPECT_GE, 100};
    assert_string_equal(expect_format(&ge, buf, 3), ">=");
}

static void test_expect_met(void **state)
{
    static const struct {
        struct expect_num e;
        uint64_t got;
        bool met;
    } cases[] = {
        {{EXPECT_EQ, 0}, 0, true},     {{EXPECT_EQ, 0}, 1, false},
        {{EXPECT_GT, 0}, 0, false},    {{EXPECT_GT, 0}, 1, true},
        {{EXPECT_GE, 3}, 2, false},    {{EXPECT_GE, 3}, 3, true},
        {{EXPECT_LT, 5}, 4, true},     {{EXPECT_LT, 5}, 5, false},
        {{EXPECT_LE, 7}, 7, true},     {{EXPECT_LE, 7}, 8, false},
        {{EXPECT_UNSET, 0}, 12, true}, {{EXPECT_EQ, UINT64_MAX}, UINT64_MAX, true},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (expect_met(&cases[i].e, cases[i].got) != cases[i].met)
            print_error("case %zu\n", i);
        assert_int_equal(expect_met(&cases[i].e, cases[i].got), cases[i].met);
    }
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(fault_type_name(0), "client_pause"); /* the registry's order */
    assert_string_equal(fault_type_name(1), "client_crash");
    assert_string_equal(fault_type_name((unsigned)fault_kind_total()), "unknown");
    assert_string_equal(workload_name(WORKLOAD_FLASH_SALE), "flash_sale");
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

/* ---- the issue-3 keys: workloads, per-algorithm settings, servers ---- */

static void test_new_workloads_and_settings(void **state)
{
    struct scenario s;

    load_ok(state,
            "{'duration_s': 10, 'lock': {'algorithm': 'redlock', 'redlock': {'nodes': 7,"
            " 'node_timeout_ms': 20, 'quorum': 5}, 'zookeeper': {'ensemble': 3,"
            " 'session_timeout_ms': 4000}},"
            " 'workload': {'type': 'scheduled_tasks', 'tasks': 5, 'period_ms': 2000, 'run_ms': 100,"
            " 'jitter_ms': 30, 'hold_min_ms': 200},"
            " 'servers': {'redis': ['127.0.0.1:7001', 'db.example:7002'],"
            " 'zookeeper': ['127.0.0.1:7181']}}",
            &s);
    assert_int_equal(s.workload, WORKLOAD_SCHEDULED_TASKS);
    assert_int_equal(s.scheduled_tasks.tasks, 5);
    assert_int_equal(s.scheduled_tasks.period_ms, 2000);
    assert_int_equal(s.scheduled_tasks.run_ms, 100);
    assert_int_equal(s.scheduled_tasks.jitter_ms, 30);
    assert_int_equal(s.scheduled_tasks.hold_min_ms, 200);
    assert_int_equal(s.redlock.nodes, 7);
    assert_int_equal(s.redlock.node_timeout_ms, 20);
    assert_int_equal(s.redlock.quorum, 5);
    assert_int_equal(s.zookeeper.ensemble, 3);
    assert_int_equal(s.zookeeper.session_timeout_ms, 4000);
    assert_int_equal((*scenario_external(&s, "redis")).n, 2);
    assert_string_equal((*scenario_external(&s, "redis")).ep[1].host, "db.example");
    assert_int_equal((*scenario_external(&s, "redis")).ep[1].port, 7002);
    assert_int_equal((*scenario_external(&s, "zookeeper")).ep[0].port, 7181);

    load_ok(state,
            "{'workload': {'type': 'cache_rebuild', 'keys': 8, 'period_ms': 500,"
            " 'load_ms': 20, 'read_ms': 0}}",
            &s);
    assert_int_equal(s.workload, WORKLOAD_CACHE_REBUILD);
    assert_int_equal(s.cache_rebuild.keys, 8);
    assert_int_equal(s.cache_rebuild.period_ms, 500);
    assert_int_equal(s.cache_rebuild.load_ms, 20);
    assert_int_equal(s.cache_rebuild.read_ms, 0);

    /* the hold may last the whole period (it counts from the acquisition);
     * 0, the default, stays 0: to the end of the task's period */
    load_ok(state,
            "{'duration_s': 10, 'workload': {'type': 'scheduled_tasks', 'tasks': 4,"
            " 'period_ms': 1000, 'hold_min_ms': 1000}}",
            &s);
    assert_int_equal(s.scheduled_tasks.hold_min_ms, 1000);
    load_ok(state, "{'duration_s': 10, 'workload': {'type': 'scheduled_tasks'}}", &s);
    assert_int_equal(s.scheduled_tasks.hold_min_ms, 0);
    assert_int_equal(s.scheduled_tasks.period_ms, 1000);
    assert_int_equal(s.scheduled_tasks.tasks, 4);

    load_ok(state,
            "{'workload': {'type': 'cache_rebuild', 'keys': 8, 'period_ms': 500,"
            " 'load_ms': 20, 'read_ms': 0}}",
            &s);
    /* defaults */
    assert_int_equal(s.redlock.nodes, 5);
    assert_int_equal(s.redlock.node_timeout_ms, 50);
    assert_int_equal(s.zookeeper.ensemble, 1);
    assert_int_equal((*scenario_external(&s, "redis")).n, 0);
}

static void test_new_keys_errors(void **state)
{
    static const struct bad_case cases[] = {
        {"{'workload': {'type': 'cache_rebuild', 'period_ms': 5}}",
         "t.json:1:53: workload.period_ms: 5 is out of range (10..86400000)"},
        {"{'workload': {'type': 'cache_rebuild', 'item': 5}}",
         "t.json:1:40: workload.item: unknown key (known: type, keys, period_ms, load_ms, "
         "read_ms)"},
        {"{'lock': {'zookeeper': {'ensemble': 2}}, " WL "}",
         "t.json:1:37: lock.zookeeper.ensemble: 2 is not an ensemble locklab runs (1: standalone, "
         "or 3)"},
        {"{'lock': {'zookeeper': {'session_timeout_ms': 30000}}, " WL "}",
         "t.json:1:47: lock.zookeeper.session_timeout_ms: 30000 is out of range (1000..10000)"},
        {"{'servers': {'redis': ['127.0.0.1']}, " WL "}",
         "t.json:1:24: servers.redis[0]: expected HOST:PORT (host up to 63 characters), got "
         "\"127.0.0.1\""},
        {"{'servers': {'redis': ['127.0.0.1:70000']}, " WL "}",
         "t.json:1:24: servers.redis[0]: \"127.0.0.1:70000\": port must be 1..65535"},
        {"{'servers': {'etcd': []}, " WL "}",
         "t.json:1:14: servers.etcd: unknown key (known: redis, zookeeper, sentinel)"},
        {"{'servers': {'redis': '127.0.0.1:1'}, " WL "}",
         "t.json:1:23: servers.redis: expected an array of \"host:port\" strings, got string"},
    };
    CHECK_LOAD(cases);
}

static void test_new_finish_errors(void **state)
{
    static const struct bad_case cases[] = {
        {"{'lock': {'redlock': {'nodes': 3, 'quorum': 4}}, " WL "}",
         "t.json:1:45: lock.redlock.quorum: 4 votes cannot be had from 3 nodes"},
        {"{'duration_s': 10, 'workload': {'type': 'scheduled_tasks', 'tasks': 4, 'period_ms': 1000,"
         " 'run_ms': 250}}",
         "t.json:1:101: workload.run_ms: 250 must be less than period_ms / tasks (250 ms)"},
        /* the hold counts from the acquisition and may last the whole period */
        {"{'duration_s': 10, 'workload': {'type': 'scheduled_tasks', 'period_ms': 1000,"
         " 'hold_min_ms': 1001}}",
         "t.json:1:94: workload.hold_min_ms: 1001 must be at most period_ms (1000 ms)"},
        {"{'duration_s': 1, 'workload': {'type': 'scheduled_tasks', 'period_ms': 1000}}",
         "t.json:1:16: duration_s: 1000 ms holds no whole period of 1000 ms after the first (at "
         "least twice the period)"},
        /* open loop paces flash sales and cache rebuilds; tasks keep their timetable */
        {"{'duration_s': 10, 'rate': 50, 'workload': {'type': 'scheduled_tasks'}}",
         "t.json:1:28: rate: scheduled_tasks fires on its own timetable; open loop is for "
         "flash_sale and cache_rebuild"},
    };
    CHECK_FINISH(cases);
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

/* Process faults: keys each type takes, targets among the servers the
 * algorithm uses, windows inside the run, no server asked twice at once. */
static void test_process_fault_errors(void **state)
{
    static const struct bad_case load[] = {
        {"{'faults': [{'at_ms': 0, 'type': 'kill'}], " WL "}",
         "t.json:1:13: faults[0]: missing required key \"target\" (a kill names its servers: "
         "\"redis-2\", \"one\", \"majority\", ...)"},
        {"{'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'node-3'}], " WL "}",
         "t.json:1:52: faults[0].target: unknown target \"node-3\" for a kill (expected a server "
         "such as \"redis-2\" or \"zk-1\", or one of: one, minority, majority, all, primaries, "
         "holder-majority, zk-leader, zk-follower)"},
        {"{'faults': [{'at_ms': 0, 'type': 'pause', 'target': 'one'}], " WL "}",
         "t.json:1:13: faults[0]: missing required key \"duration_ms\" (a pause needs one)"},
        {"{'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'one', 'duration_ms': 5}], " WL "}",
         "t.json:1:74: faults[0].duration_ms: a kill takes no duration_ms (it lasts until "
         "restart_after_ms)"},
        {"{'faults': [{'at_ms': 0, 'type': 'pause', 'target': 'one', 'duration_ms': 5, 'data': "
         "'kept'}], " WL "}",
         "t.json:1:86: faults[0].data: a pause takes no data (only a kill or a restart loses "
         "data)"},
        {"{'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'one', 'restart_after_ms': 0}], " WL
         "}",
         "t.json:1:79: faults[0].restart_after_ms: 0 is out of range (1..86400000)"},
        {"{'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'one', 'data': 'gone'}], " WL "}",
         "t.json:1:67: faults[0].data: unknown data \"gone\" (known: lost, kept)"},
        {"{'faults': [{'at_ms': 0, 'type': 'restart', 'target': 'one', 'restart_after_ms': 5}], " WL
         "}",
         "t.json:1:82: faults[0].restart_after_ms: a restart takes no restart_after_ms (only a "
         "kill or a failover waits to restart)"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'one'}], " WL "}",
         "t.json:1:60: faults[0].target: unknown target \"one\" for a client_crash (expected "
         "\"holder\" or \"client:N\")"},
    };
    static const struct bad_case finish[] = {
        {"{'lock': {'algorithm': 'redlock'}, 'faults': [{'at_ms': 0, 'type': 'kill', 'target': "
         "'redis-6'}], " WL "}",
         "t.json:1:86: faults[0].target: redis-6 does not exist: redlock uses 5 redis servers "
         "(redis-1..redis-5)"},
        {"{'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'zk-1'}], " WL "}",
         "t.json:1:52: faults[0].target: zk-1 names a zookeeper server; redis uses redis servers"},
        {"{'faults': [{'at_ms': 0, 'type': 'pause', 'target': 'minority', 'duration_ms': 10}], " WL
         "}",
         "t.json:1:53: faults[0].target: the minority of 1 server is no server"},
        {"{'lock': {'algorithm': 'zookeeper'}, 'faults': [{'at_ms': 0, 'type': 'kill', 'target': "
         "'one', 'data': 'kept'}], " WL "}",
         "t.json:1:103: faults[0].data: applies to Redis; ZooKeeper keeps its data in its "
         "transaction log"},
        {"{'duration_s': 2, 'faults': [{'at_ms': 1000, 'type': 'pause', 'target': 'one', "
         "'duration_ms': 1500}], " WL "}",
         "t.json:1:95: faults[0].duration_ms: the pause would end at 2500 ms, past the end of the "
         "run (2000 ms)"},
        {"{'duration_s': 2, 'faults': [{'at_ms': 1000, 'type': 'kill', 'target': 'one', "
         "'restart_after_ms': 1500}], " WL "}",
         "t.json:1:99: faults[0].restart_after_ms: the kill would end at 2500 ms, past the end of "
         "the run (2000 ms)"},
        {"{'lock': {'algorithm': 'redlock'}, 'faults': [{'at_ms': 0, 'type': 'kill', 'target': "
         "'redis-2'}, {'at_ms': 500, 'type': 'pause', 'target': 'redis-2', 'duration_ms': "
         "100}], " WL "}",
         "t.json:1:140: faults[1].target: redis-2 is already under faults[0] (kill redis-2 from 0 "
         "to 10000 ms)"},
        {"{'lock': {'algorithm': 'redlock'}, 'faults': [{'at_ms': 0, 'type': 'kill', 'target': "
         "'majority', 'restart_after_ms': 1000}, {'at_ms': 500, 'type': 'pause', 'target': "
         "'majority', 'duration_ms': 100}], " WL "}",
         "t.json:1:167: faults[1].target: majority together with faults[0] (kill majority from 0 "
         "to 1000 ms) needs 6 of 5 servers"},
        {"{'servers': {'redis': ['127.0.0.1:6379']}, 'faults': [{'at_ms': 0, 'type': 'kill', "
         "'target': 'one'}], " WL "}",
         "t.json:1:76: faults[0].type: a kill needs servers locklab manages; redis's redis servers "
         "are external (--redis or \"servers\")"},
        {"{'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'zk-leader'}], " WL "}",
         "t.json:1:52: faults[0].target: zk-leader names ZooKeeper's servers; redis uses redis "
         "servers"},
        {"{'lock': {'algorithm': 'zookeeper'}, 'faults': [{'at_ms': 0, 'type': 'pause', "
         "'target': 'zk-follower', 'duration_ms': 5}], " WL "}",
         "t.json:1:89: faults[0].target: a standalone ZooKeeper has no follower "
         "(lock.zookeeper.ensemble: 3)"},
    };
    CHECK_LOAD(load);
    CHECK_FINISH(finish);
}

/* Network faults: Toxiproxy's attributes, each on the types that take it,
 * in range; targets that exist; no two toxics of one type on the same
 * traffic at once. */
/* A fault's own expectations: read as counts, kept apart per fault. */
static void test_fault_expect(void **state)
{
    struct scenario s;
    load_ok(state,
            "{'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'one', 'expect': {'acquired': "
            "'>0', 'recovery_ms': '<5000'}}, {'at_ms': 10, 'type': 'client_pause', "
            "'duration_ms': 5, 'expect': {'failed': 0}}], " WL "}",
            &s);
    assert_int_equal(s.faults[0].expect.acquired.op, EXPECT_GT);
    assert_int_equal(s.faults[0].expect.acquired.value, 0);
    assert_int_equal(s.faults[0].expect.recovery_ms.op, EXPECT_LT);
    assert_int_equal(s.faults[0].expect.recovery_ms.value, 5000);
    assert_int_equal(s.faults[0].expect.failed.op, EXPECT_UNSET);
    assert_int_equal(s.faults[1].expect.failed.op, EXPECT_EQ);
    assert_int_equal(s.faults[1].expect.acquired.op, EXPECT_UNSET);
    static const struct bad_case bad[] = {
        {"{'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'one', 'expect': {'aquired': 0}}], " WL
         "}",
         "t.json:1:70: faults[0].expect.aquired: unknown key (did you mean \"acquired\"?)"},
        {"{'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'one', 'expect': {'failed': "
         "'x'}}], " WL "}",
         "t.json:1:80: faults[0].expect.failed: cannot read \"x\" as a count (write 0, \">0\", "
         "\">= 3\", \"<5\")"},
    };
    CHECK_LOAD(bad);
}

/* A clock jump: an instant with a size, Redis only. */
static void test_clock_jump(void **state)
{
    struct scenario s;
    load_ok(state,
            "{'faults': [{'at_ms': 5, 'type': 'clock_jump', 'target': 'redis-1', 'jump_ms': 2500, "
            "'method': 'ttl'}], " WL "}",
            &s);
    assert_string_equal(fault_type_name(s.faults[0].kind), "clock_jump");
    assert_int_equal(s.faults[0].jump_ms, 2500);
    assert_int_equal(s.faults[0].method, CLOCK_TTL);
    assert_false(scenario_fakes_time(&s));
    assert_int_equal(fault_end_ms(&s.faults[0], s.duration_ms), 5);
    load_ok(state,
            "{'faults': [{'at_ms': 5, 'type': 'clock_jump', 'target': 'one', 'jump_ms': 1}], " WL
            "}",
            &s);
    assert_int_equal(s.faults[0].method, CLOCK_AUTO);
    assert_true(scenario_fakes_time(&s));
    static const struct bad_case load[] = {
        {"{'faults': [{'at_ms': 0, 'type': 'clock_jump', 'target': 'one'}], " WL "}",
         "t.json:1:13: faults[0]: missing required key \"jump_ms\" (how far forward the clock "
         "moves, in ms)"},
        {"{'faults': [{'at_ms': 0, 'type': 'clock_jump', 'target': 'one', 'jump_ms': 5, "
         "'duration_ms': 5}], " WL "}",
         "t.json:1:94: faults[0].duration_ms: a clock_jump takes no duration_ms (a jump is an "
         "instant; the keys it shortens stay short)"},
        {"{'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'one', 'jump_ms': 5}], " WL "}",
         "t.json:1:70: faults[0].jump_ms: a kill takes no jump_ms (only a clock_jump moves a "
         "clock)"},
        {"{'faults': [{'at_ms': 0, 'type': 'clock_jump', 'target': 'one', 'jump_ms': 5, "
         "'method': 'system'}], " WL "}",
         "t.json:1:89: faults[0].method: unknown method \"system\" (known: auto, faketime, ttl)"},
    };
    CHECK_LOAD(load);
    static const struct bad_case finish[] = {
        {"{'lock': {'algorithm': 'zookeeper'}, 'faults': [{'at_ms': 0, 'type': 'clock_jump', "
         "'target': 'one', 'jump_ms': 5}], " WL "}",
         "t.json:1:70: faults[0].type: a clock_jump moves a Redis server's clock (its keys expire "
         "by it); zookeeper uses zookeeper servers"},
    };
    CHECK_FINISH(finish);
}

/* lock.redis: a master with replicas and sentinels, the failover fault and
 * the replication link as a network target. */
static void test_redis_topology(void **state)
{
    struct scenario s;
    load_ok(state, "{'lock': {'redis': {'sentinels': 1}}, " WL "}", &s);
    assert_int_equal(s.redis.sentinels, 1);
    assert_int_equal(s.redis.replicas, 1); /* a sentinel needs someone to promote */
    assert_int_equal(s.redis.wait_timeout_ms, 1000);
    load_ok(state,
            "{'lock': {'redis': {'sentinels': 3, 'replicas': 2, 'wait_replicas': 2}}, 'faults': "
            "[{'at_ms': 0, 'type': 'timeout', 'target': 'replication'}, {'at_ms': 5, 'type': "
            "'failover', 'restart_after_ms': 100}], " WL "}",
            &s);
    assert_int_equal(s.faults[0].scope, NET_REPLICATION);
    assert_false(scenario_needs_proxy(&s)); /* the link has the fleet's own proxy */
    assert_string_equal(fault_type_name(s.faults[1].kind), "failover");
    assert_int_equal(s.faults[1].restart_after_ms, 100);
    static const struct bad_case load[] = {
        {"{'lock': {'redis': {'sentinels': 2}}, " WL "}",
         "t.json:1:34: lock.redis.sentinels: 2 sentinels cannot outvote one that is wrong: 0, 1 or "
         "3"},
        {"{'lock': {'redis': {'sentinels': 1, 'replicas': 0}}, " WL "}",
         "t.json:1:49: lock.redis.replicas: 0 leaves the sentinels nobody to promote (1 or 2)"},
        {"{'lock': {'redis': {'replicas': 1, 'wait_replicas': 2}}, " WL "}",
         "t.json:1:53: lock.redis.wait_replicas: 2 is more than the 1 replica"},
        {"{'faults': [{'at_ms': 0, 'type': 'failover', 'target': 'redis-1'}], " WL "}",
         "t.json:1:56: faults[0].target: a failover takes no target (it strikes the master "
         "sentinel names)"},
    };
    CHECK_LOAD(load);
    static const struct bad_case finish[] = {
        {"{'lock': {'algorithm': 'redlock', 'redis': {'sentinels': 1}}, " WL "}",
         "t.json:1:44: lock.redis: replicas and sentinels are the redis algorithm's topology; "
         "redlock runs its own servers"},
        {"{'faults': [{'at_ms': 0, 'type': 'failover'}], " WL "}",
         "t.json:1:34: faults[0].type: a failover needs sentinels to promote a replica "
         "(lock.redis.sentinels: 1 or 3, the redis algorithm)"},
        {"{'faults': [{'at_ms': 0, 'type': 'timeout', 'target': 'replication'}], " WL "}",
         "t.json:1:55: faults[0].target: replication is the link of the replicas locklab runs for "
         "the redis algorithm (lock.redis.replicas)"},
    };
    CHECK_FINISH(finish);
}

static void test_network_fault_errors(void **state)
{
    static const struct bad_case load[] = {
        {"{'faults': [{'at_ms': 0, 'type': 'latency', 'latency': 50}], " WL "}",
         "t.json:1:13: faults[0]: missing required key \"target\" (a latency names whose traffic: "
         "\"all\", \"redis-2\", \"holder\", \"client:3\", ...)"},
        {"{'faults': [{'at_ms': 0, 'type': 'latency', 'target': 'all'}], " WL "}",
         "t.json:1:13: faults[0]: missing required key \"latency\" (a latency needs one: ms added "
         "to each chunk)"},
        {"{'faults': [{'at_ms': 0, 'type': 'latency', 'target': 'all', 'latency': 5, 'rate': "
         "3}], " WL "}",
         "t.json:1:84: faults[0].rate: a latency takes no rate (see docs/scenario.md for each "
         "network fault's keys)"},
        {"{'faults': [{'at_ms': 0, 'type': 'timeout', 'target': 'all', 'toxicity': 1.5}], " WL "}",
         "t.json:1:74: faults[0].toxicity: 1.5 is out of range (0..1: the share of connections it "
         "touches)"},
        {"{'faults': [{'at_ms': 0, 'type': 'timeout', 'target': 'all', 'stream': 'sideways'}], " WL
         "}",
         "t.json:1:72: faults[0].stream: unknown stream \"sideways\" (known: upstream, downstream, "
         "both)"},
        {"{'faults': [{'at_ms': 0, 'type': 'bandwidth', 'target': 'all', 'rate': 0}], " WL "}",
         "t.json:1:72: faults[0].rate: 0 is out of range (1..10000000)"},
        {"{'faults': [{'at_ms': 0, 'type': 'slicer', 'target': 'all', 'average_size': 8, "
         "'size_variation': 8}], " WL "}",
         "t.json:1:98: faults[0].size_variation: 8 is not less than average_size (8)"},
        {"{'faults': [{'at_ms': 0, 'type': 'down', 'target': 'all', 'stream': 'upstream'}], " WL
         "}",
         "t.json:1:69: faults[0].stream: a down takes no stream (see docs/scenario.md for each "
         "network fault's keys)"},
        {"{'faults': [{'at_ms': 0, 'type': 'timeout', 'target': 'holder-majority'}], " WL "}",
         "t.json:1:55: faults[0].target: unknown target \"holder-majority\" for a timeout "
         "(expected a server such as \"redis-2\", one of: one, minority, majority, all, primaries, "
         "zk-leader, zk-follower; or clients: \"holder\", \"client:K\", \"clients:N\"; or "
         "\"replication\")"},
        {"{'faults': [{'at_ms': 0, 'type': 'timeout', 'target': 'all', 'duration_ms': 0}], " WL "}",
         "t.json:1:77: faults[0].duration_ms: 0 is out of range for a timeout (1..86400000; leave "
         "it out for the rest of the run)"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_pause', 'duration_ms': 5, 'latency': 5}], " WL
         "}",
         "t.json:1:79: faults[0].latency: a client_pause takes no latency (only network faults "
         "take Toxiproxy's attributes)"},
        {"{'faults': [{'at_ms': 0, 'type': 'latency', 'target': 'all', 'latency': 86400001}], " WL
         "}",
         "t.json:1:73: faults[0].latency: 86400001 is out of range (0..86400000)"},
    };
    static const struct bad_case finish[] = {
        {"{'faults': [{'at_ms': 0, 'type': 'timeout', 'target': 'redis-2'}], " WL "}",
         "t.json:1:55: faults[0].target: redis-2 does not exist: redis uses one redis server, "
         "redis-1"},
        {"{'clients': 4, 'faults': [{'at_ms': 0, 'type': 'timeout', 'target': 'client:4'}], " WL
         "}",
         "t.json:1:69: faults[0].target: client 4 does not exist (4 clients, numbered 0..3)"},
        {"{'clients': 4, 'faults': [{'at_ms': 0, 'type': 'timeout', 'target': 'clients:5'}], " WL
         "}",
         "t.json:1:69: faults[0].target: clients:5: the run has 4 clients"},
        {"{'duration_s': 2, 'faults': [{'at_ms': 1000, 'type': 'timeout', 'target': 'all', "
         "'duration_ms': 1500}], " WL "}",
         "t.json:1:97: faults[0].duration_ms: the timeout would end at 2500 ms, past the end of "
         "the run (2000 ms)"},
        {"{'faults': [{'at_ms': 0, 'type': 'latency', 'target': 'all', 'latency': 5, 'stream': "
         "'both'}, {'at_ms': 500, 'type': 'latency', 'target': 'redis-1', 'latency': 9}], " WL "}",
         "t.json:1:139: faults[1].target: redis-1 is already under faults[0] (latency all from 0 "
         "to 10000 ms): one latency at a time on the same traffic"},
    };
    CHECK_LOAD(load);
    CHECK_FINISH(finish);
}

static void test_endpoints_parse(void **state)
{
    (void)state;
    struct server_list l;
    char err[256] = "";

    assert_int_equal(endpoints_parse("127.0.0.1:7001,db.example:65535", &l, err, sizeof(err)), 0);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.ep[0].host, "127.0.0.1");
    assert_int_equal(l.ep[0].port, 7001);
    assert_string_equal(l.ep[1].host, "db.example");
    assert_int_equal(l.ep[1].port, 65535);

    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"127.0.0.1:x", "\"127.0.0.1:x\": port must be 1..65535"},
        {"127.0.0.1:0", "\"127.0.0.1:0\": port must be 1..65535"},
        {"127.0.0.1:7001,127.0.0.1:", "\"127.0.0.1:\": port must be 1..65535"},
        {":7001", "expected HOST:PORT (host up to 63 characters), got \":7001\""},
        {"", "expected HOST:PORT[,HOST:PORT...], got \"\""},
        {",", "an empty item in \",\""},
        {"127.0.0.1:1,", "an empty item in \"127.0.0.1:1,\""},
        {"a:1,,b:2", "an empty item in \"a:1,,b:2\""},
        {"[::1]:6379", "\"[::1]:6379\": IPv6 addresses are not supported, use 127.0.0.1 or a name"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(endpoints_parse(cases[i].text, &l, err, sizeof(err)), -1);
        assert_string_equal(err, cases[i].msg);
    }

    char many[LOCK_ENDPOINT_MAX * 16 + 32] = "";
    for (int i = 0; i <= LOCK_ENDPOINT_MAX; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "%sh:%d", i ? "," : "",
                 7001 + i);
    assert_int_equal(endpoints_parse(many, &l, err, sizeof(err)), -1);
    assert_string_equal(err, "at most 16 servers");

    /* a list too long for the parser's buffer is refused rather than cut mid-port */
    char longest[2048];
    memset(longest, 'h', sizeof(longest));
    memcpy(longest + 1500, ":7001", sizeof(":7001"));
    assert_int_equal(endpoints_parse(longest, &l, err, sizeof(err)), -1);
    assert_string_equal(err, "server list longer than 1151 characters");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_full),
        cmocka_unit_test(test_minimal_defaults),
        cmocka_unit_test(test_per_client_skew),
        cmocka_unit_test(test_scenario_defaults),
        cmocka_unit_test(test_expect_defaults),
        cmocka_unit_test(test_bounds_accepted),
        cmocka_unit_test(test_default_name),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_load_text),
        cmocka_unit_test(test_long_message_cut_on_character),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_unknown_keys),
        cmocka_unit_test(test_unknown_values),
        cmocka_unit_test(test_out_of_range_top),
        cmocka_unit_test(test_out_of_range_lock),
        cmocka_unit_test(test_out_of_range_workload),
        cmocka_unit_test(test_out_of_range_faults),
        cmocka_unit_test(test_missing_required),
        cmocka_unit_test(test_finish_errors),
        cmocka_unit_test(test_resolved_defaults),
        cmocka_unit_test(test_duration_blame),
        cmocka_unit_test(test_finish_after_overrides),
        cmocka_unit_test(test_new_workloads_and_settings),
        cmocka_unit_test(test_new_keys_errors),
        cmocka_unit_test(test_new_finish_errors),
        cmocka_unit_test(test_process_fault_errors),
        cmocka_unit_test(test_network_fault_errors),
        cmocka_unit_test(test_fault_expect),
        cmocka_unit_test(test_clock_jump),
        cmocka_unit_test(test_redis_topology),
        cmocka_unit_test(test_endpoints_parse),
        cmocka_unit_test(test_doc_examples),
        cmocka_unit_test(test_expect_parse),
        cmocka_unit_test(test_expect_format),
        cmocka_unit_test(test_expect_met),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_json_locate),
        cmocka_unit_test(test_json_locate_edges),
        cmocka_unit_test(test_json_path_at),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
