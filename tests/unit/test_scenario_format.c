/* test_scenario_format.c - the scenario format and its fields, case by case
 * (docs/scenario.md): a good file read whole, the defaults, files that
 * cannot be read or parsed, duplicate keys, wrong types, unknown keys and
 * values.
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

#include "tests/lib/scenario_env.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
    assert_string_equal(s.workload->name, "flash_sale");
    assert_int_equal(wl_int(&s, "items"), 5);
    assert_int_equal(wl_int(&s, "stock"), 250);
    assert_int_equal(wl_int(&s, "critical_ms"), 3);
    assert_string_equal(wl_choice(&s, "skew"), "hot");
    assert_true(wl_number(&s, "hot_fraction") == 0.75);
    assert_int_equal(wl_int(&s, "hot_items"), 2);
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
    assert_int_equal(s->permits, 1); /* one holder a key: a mutex */
    assert_string_equal(s->workload->name, "flash_sale");
    assert_int_equal(wl_int(s, "items"), 10);
    assert_int_equal(wl_int(s, "stock"), 1000);
    assert_int_equal(wl_int(s, "critical_ms"), 1);
    assert_string_equal(wl_choice(s, "skew"), "uniform");
    assert_true(wl_number(s, "hot_fraction") == 0.9);
    assert_int_equal(wl_int(s, "hot_items"), 1);
    assert_int_equal(wl_int(s, "segments"), 1); /* one key an item, as before segments */
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
    assert_string_equal(wl_choice(&s, "skew"), "per_client");
    assert_int_equal(wl_int(&s, "items"), 50);
}

static void test_segments(void **state)
{
    struct scenario s;

    load_ok(state, "{'workload': {'type': 'flash_sale', 'items': 4, 'segments': 16}}", &s);
    assert_int_equal(wl_int(&s, "items"), 4);
    assert_int_equal(wl_int(&s, "segments"), 16);
    /* the bounds: 1024 segments, and a million keys in all */
    load_ok(state, "{'workload': {'type': 'flash_sale', 'items': 976, 'segments': 1024}}", &s);
    assert_int_equal(wl_int(&s, "segments"), 1024);
    load_ok(state, "{'workload': {'type': 'flash_sale', 'items': 1000000, 'segments': 1}}", &s);
    assert_int_equal(wl_int(&s, "segments"), 1);
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
    assert_int_equal(wl_int(&s, "stock"), 0);
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
    assert_int_equal(wl_int(&s, "stock"), 9000000000000LL);
    assert_true(wl_number(&s, "hot_fraction") == 1.0);
    assert_int_equal(s.faults[0].duration_ms, 86400000);
    assert_int_equal(s.faults[0].target, 4095);

    load_ok(state, "{'workload': {'type': 'flash_sale', 'items': 9000, 'stock': 1000000000000000}}",
            &s);
    assert_int_equal(wl_int(&s, "stock"), 1000000000000000LL);

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
    char err[SCENARIO_ERR_MAX], want[SCENARIO_ERR_MAX];

    (void)state;
    assert_int_equal(scenario_load_text("mem.json", text, strlen(text) - 9, NULL, &s, err), 0);
    assert_int_equal(s.clients, 7);
    assert_string_equal(s.name, "mem");
    assert_string_equal(s.path, "mem.json");
    assert_int_equal(scenario_load_text("mem.json", text, strlen(text), NULL, &s, err), -1);
    assert_string_equal(err, "mem.json:1:59: syntax: end of file expected near 'trailing'");
    assert_int_equal(scenario_load_text("", algo, strlen(algo), NULL, &s, err), -1);
    assert_string_equal(err, message(want, sizeof(want),
                                     "lock.algorithm: unknown algorithm \"chubby\" (known: %s)",
                                     known_names(KNOWN_ALGORITHMS)));
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
        {"{'workload': {'type': 'flash_sale', 'segments': '16'}}",
         "t.json:1:49: workload.segments: expected an integer, got string"},
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
         "renew_ms, retry_min_ms, retry_max_ms, permits, rate_limit, redlock, zookeeper, redis, postgres, "
         "etcd, redisson, redis_cluster, mysql)"},
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
        {"{'workload': {'type': 'flash_sale', 'skew': 'hott'}}",
         "t.json:1:45: workload.skew: unknown skew \"hott\" (did you mean \"hot\"?)"},
        {"{'workload': {'type': 'flash_sale', 'skew': 'per-client'}}",
         "t.json:1:45: workload.skew: unknown skew \"per-client\" (did you mean "
         "\"per_client\"?)"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_pase'}], " WL "}",
         "t.json:1:34: faults[0].type: unknown fault type \"client_pase\" (did you mean "
         "\"client_pause\"?)"},
        {"{'expect': {'invariants': 'ok'}, " WL "}",
         "t.json:1:27: expect.invariants: unknown value \"ok\" (known: hold, broken)"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'holdr'}], " WL "}",
         "t.json:1:60: faults[0].target: unknown target \"holdr\" for a client_crash (expected "
         "\"holder\", \"waiter\" or \"client:N\")"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'client:-1'}], " WL "}",
         "t.json:1:60: faults[0].target: unknown target \"client:-1\" for a client_crash (expected "
         "\"holder\", \"waiter\" or \"client:N\")"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'client:'}], " WL "}",
         "t.json:1:60: faults[0].target: unknown target \"client:\" for a client_crash (expected "
         "\"holder\", \"waiter\" or \"client:N\")"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'client:1x'}], " WL "}",
         "t.json:1:60: faults[0].target: unknown target \"client:1x\" for a client_crash (expected "
         "\"holder\", \"waiter\" or \"client:N\")"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'client:2147483648'}], " WL
         "}",
         "t.json:1:60: faults[0].target: unknown target \"client:2147483648\" for a client_crash "
         "(expected "
         "\"holder\", \"waiter\" or \"client:N\")"},
        {"{'expect': {'violations': 'x'}, " WL "}",
         "t.json:1:27: expect.violations: cannot read \"x\" as a count (write 0, \">0\", \">= "
         "3\", \"<5\")"},
        {"{'expect': {'rejected_accesses': '>>1'}, " WL "}",
         "t.json:1:34: expect.rejected_accesses: cannot read \">>1\" as a count (write 0, \">0\", "
         "\">= 3\", \"<5\")"},
    };
    CHECK_LOAD(cases);

    /* an unknown name of a kind: every name of its registry */
    char workloads[SCENARIO_ERR_MAX], faults[SCENARIO_ERR_MAX], long_name[SCENARIO_ERR_MAX];
    const struct bad_case known[] = {
        {"{'workload': {'type': 'cache_warmup'}}",
         message(workloads, sizeof(workloads),
                 "t.json:1:23: workload.type: unknown workload \"cache_warmup\" (known: %s)",
                 known_names(KNOWN_WORKLOADS))},
        {"{'faults': [{'at_ms': 0, 'type': 'split_brain'}], " WL "}",
         message(faults, sizeof(faults),
                 "t.json:1:34: faults[0].type: unknown fault type \"split_brain\" (known: %s)",
                 known_names(KNOWN_FAULTS))},
        /* too long to be any algorithm's name: no need to wait for the checks of the whole */
        {"{'lock': {'algorithm': 'redis-with-a-name-far-too-long-to-keep-around'}, " WL "}",
         message(long_name, sizeof(long_name),
                 "t.json:1:24: lock.algorithm: unknown algorithm "
                 "\"redis-with-a-name-far-too-long-to-keep-a...\" (known: %s)",
                 known_names(KNOWN_ALGORITHMS))},
    };
    CHECK_LOAD(known);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_full),
        cmocka_unit_test(test_minimal_defaults),
        cmocka_unit_test(test_per_client_skew),
        cmocka_unit_test(test_segments),
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
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
