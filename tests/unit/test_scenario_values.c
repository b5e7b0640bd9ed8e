/* test_scenario_values.c - the values a scenario's keys take, case by case
 * (docs/scenario.md): each key's range, the keys that must be there, the
 * settings of each workload and algorithm, the server lists, and the
 * expectations' counts ("0", ">0", ">= 3").
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

#include "sim/faults/fault.h"
#include "tests/lib/scenario_env.h"

#include <stdio.h>
#include <string.h>

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
        {"{'clients': 0, " WL "}", "t.json:1:13: clients: 0 is out of range (1..100000)"},
        {"{'clients': 100001, " WL "}", "t.json:1:13: clients: 100001 is out of range (1..100000)"},
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
         "t.json:1:61: clients: 0 is out of range (1..100000)"},
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
        {"{'lock': {'permits': 0}, " WL "}",
         "t.json:1:22: lock.permits: 0 is out of range (1..100000)"},
        {"{'lock': {'permits': 100001}, " WL "}",
         "t.json:1:22: lock.permits: 100001 is out of range (1..100000)"},
        {"{'lock': {'permits': 'two'}, " WL "}",
         "t.json:1:22: lock.permits: expected an integer, got string"},
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
        {"{'workload': {'type': 'flash_sale', 'segments': 0}}",
         "t.json:1:49: workload.segments: 0 is out of range (1..1024)"},
        {"{'workload': {'type': 'flash_sale', 'segments': 1025}}",
         "t.json:1:49: workload.segments: 1025 is out of range (1..1024)"},
        {"{'workload': {'type': 'flash_sale', 'items': 977, 'segments': 1024}}",
         "t.json:1:63: workload.segments: 977 items x 1024 segments are 1000448 lock keys (at "
         "most 1000000)"},
        {"{'workload': {'type': 'order_ids', 'sequences': 0}}",
         "t.json:1:49: workload.sequences: 0 is out of range (1..1000)"},
        {"{'workload': {'type': 'order_ids', 'sequences': 1001}}",
         "t.json:1:49: workload.sequences: 1001 is out of range (1..1000)"},
        {"{'workload': {'type': 'order_ids', 'items': 3}}",
         "t.json:1:36: workload.items: unknown key (known: type, sequences, critical_ms)"},
        {"{'workload': {'type': 'read_mostly', 'write_fraction': 0}}",
         "t.json:1:56: workload.write_fraction: 0 is out of range (> 0 and <= 1)"},
        {"{'workload': {'type': 'read_mostly', 'write_fraction': 1.01}}",
         "t.json:1:56: workload.write_fraction: 1.01 is out of range (> 0 and <= 1)"},
        {"{'workload': {'type': 'read_mostly', 'keys': 0}}",
         "t.json:1:46: workload.keys: 0 is out of range (1..100000)"},
        {"{'workload': {'type': 'read_mostly', 'sequences': 2}}",
         "t.json:1:38: workload.sequences: unknown key (known: type, keys, critical_ms, "
         "write_fraction)"},
        {"{'workload': {'type': 'pool', 'pools': 0}}",
         "t.json:1:40: workload.pools: 0 is out of range (1..1000)"},
        {"{'workload': {'type': 'pool', 'pools': 1001}}",
         "t.json:1:40: workload.pools: 1001 is out of range (1..1000)"},
        {"{'workload': {'type': 'pool', 'permits': 4}}",
         "t.json:1:31: workload.permits: unknown key (known: type, pools, critical_ms)"},
    };
    CHECK_LOAD(cases);
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
    assert_string_equal(s.workload->name, "scheduled_tasks");
    assert_int_equal(wl_int(&s, "tasks"), 5);
    assert_int_equal(wl_int(&s, "period_ms"), 2000);
    assert_int_equal(wl_int(&s, "run_ms"), 100);
    assert_int_equal(wl_int(&s, "jitter_ms"), 30);
    assert_int_equal(wl_int(&s, "hold_min_ms"), 200);
    assert_int_equal(SETTINGS_OF(&s, redlock, redlock_spec)->nodes, 7);
    assert_int_equal(SETTINGS_OF(&s, redlock, redlock_spec)->node_timeout_ms, 20);
    assert_int_equal(SETTINGS_OF(&s, redlock, redlock_spec)->quorum, 5);
    assert_int_equal(SETTINGS_OF(&s, zookeeper, zookeeper_spec)->ensemble, 3);
    assert_int_equal(SETTINGS_OF(&s, zookeeper, zookeeper_spec)->session_timeout_ms, 4000);
    assert_int_equal((*scenario_external(&s, "redis")).n, 2);
    assert_string_equal((*scenario_external(&s, "redis")).ep[1].host, "db.example");
    assert_int_equal((*scenario_external(&s, "redis")).ep[1].port, 7002);
    assert_int_equal((*scenario_external(&s, "zookeeper")).ep[0].port, 7181);

    load_ok(state,
            "{'workload': {'type': 'cache_rebuild', 'keys': 8, 'period_ms': 500,"
            " 'load_ms': 20, 'read_ms': 0}}",
            &s);
    assert_string_equal(s.workload->name, "cache_rebuild");
    assert_int_equal(wl_int(&s, "keys"), 8);
    assert_int_equal(wl_int(&s, "period_ms"), 500);
    assert_int_equal(wl_int(&s, "load_ms"), 20);
    assert_int_equal(wl_int(&s, "read_ms"), 0);

    load_ok(state, "{'workload': {'type': 'order_ids', 'sequences': 3, 'critical_ms': 7}}", &s);
    assert_string_equal(s.workload->name, "order_ids");
    assert_int_equal(wl_int(&s, "sequences"), 3);
    assert_int_equal(wl_int(&s, "critical_ms"), 7);
    load_ok(state, "{'workload': {'type': 'order_ids'}}", &s);
    assert_int_equal(wl_int(&s, "sequences"), 1);
    assert_int_equal(wl_int(&s, "critical_ms"), 1);

    load_ok(state,
            "{'workload': {'type': 'read_mostly', 'keys': 6, 'critical_ms': 9,"
            " 'write_fraction': 0.25}}",
            &s);
    assert_string_equal(s.workload->name, "read_mostly");
    assert_int_equal(wl_int(&s, "keys"), 6);
    assert_int_equal(wl_int(&s, "critical_ms"), 9);
    assert_true(wl_number(&s, "write_fraction") == 0.25);
    load_ok(state, "{'workload': {'type': 'read_mostly'}}", &s);
    assert_int_equal(wl_int(&s, "keys"), 4);
    assert_int_equal(wl_int(&s, "critical_ms"), 5);
    assert_true(wl_number(&s, "write_fraction") == 0.05);

    load_ok(state,
            "{'lock': {'algorithm': 'redisson-semaphore', 'permits': 3},"
            " 'workload': {'type': 'pool', 'pools': 2, 'critical_ms': 3}}",
            &s);
    assert_string_equal(s.workload->name, "pool");
    assert_int_equal(wl_int(&s, "pools"), 2);
    assert_int_equal(wl_int(&s, "critical_ms"), 3);
    assert_int_equal(s.permits, 3);

    /* the hold may last the whole period (it counts from the acquisition);
     * 0, the default, stays 0: to the end of the task's period */
    load_ok(state,
            "{'duration_s': 10, 'workload': {'type': 'scheduled_tasks', 'tasks': 4,"
            " 'period_ms': 1000, 'hold_min_ms': 1000}}",
            &s);
    assert_int_equal(wl_int(&s, "hold_min_ms"), 1000);
    load_ok(state, "{'duration_s': 10, 'workload': {'type': 'scheduled_tasks'}}", &s);
    assert_int_equal(wl_int(&s, "hold_min_ms"), 0);
    assert_int_equal(wl_int(&s, "period_ms"), 1000);
    assert_int_equal(wl_int(&s, "tasks"), 4);

    load_ok(state,
            "{'workload': {'type': 'cache_rebuild', 'keys': 8, 'period_ms': 500,"
            " 'load_ms': 20, 'read_ms': 0}}",
            &s);
    /* defaults */
    assert_int_equal(SETTINGS_OF(&s, redlock, redlock_spec)->nodes, 5);
    assert_int_equal(SETTINGS_OF(&s, redlock, redlock_spec)->node_timeout_ms, 50);
    assert_int_equal(SETTINGS_OF(&s, zookeeper, zookeeper_spec)->ensemble, 1);
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
        {"{'servers': {'redis': '127.0.0.1:1'}, " WL "}",
         "t.json:1:23: servers.redis: expected an array of \"host:port\" strings, got string"},
    };
    CHECK_LOAD(cases);

    /* a kind the fleet has not: every kind a scenario names */
    char want[SCENARIO_ERR_MAX];
    const struct bad_case unknown[] = {
        {"{'servers': {'consul': []}, " WL "}",
         message(want, sizeof(want), "t.json:1:14: servers.consul: unknown key (known: %s)",
                 known_names(KNOWN_SERVERS))},
    };
    CHECK_LOAD(unknown);
}

/* Every lock's family, and the family it leans on, has its place in the
 * registry (where a scenario keeps its settings) and its line, once each,
 * and fits the room a scenario keeps for it. */
static void test_lock_families(void **state)
{
    (void)state;
    assert_true(lock_family_count() <= LOCK_FAMILIES_MAX);
    for (size_t i = 0; i < lock_count(); i++)
        for (const struct lock_family *f = lock_at(i)->family; f; f = f->base)
            assert_true(lock_family_index(f) < lock_family_count());
    for (size_t i = 0; i < lock_family_count(); i++) {
        const struct lock_family *f = lock_family_at(i);
        size_t lines = 0;
        assert_int_equal(lock_family_index(f), i);
        assert_true(f->size <= SETTINGS_BYTES_MAX && f->table && f->table->n > 0);
        for (size_t j = 0; j < lock_family_count(); j++)
            lines += lock_family_line_at(j) == f;
        assert_int_equal(lines, 1);
    }
}

/* lock.redisson.fair_wait_ms: RFairLock's threadWaitTime, Redisson's
 * 5 min unless the file says. */
static void test_redisson_settings(void **state)
{
    struct scenario s;
    load_ok(state, "{'lock': {'algorithm': 'redisson-fair'}, " WL "}", &s);
    assert_int_equal(SETTINGS_OF(&s, redisson, redisson_spec)->fair_wait_ms, 300000);
    load_ok(state,
            "{'lock': {'algorithm': 'redisson-fair', 'redisson': {'fair_wait_ms': 1500}}, " WL "}",
            &s);
    assert_int_equal(SETTINGS_OF(&s, redisson, redisson_spec)->fair_wait_ms, 1500);
    load_ok(state, "{'lock': {'redisson': {'fair_wait_ms': 3600000}}, " WL "}", &s);
    assert_int_equal(SETTINGS_OF(&s, redisson, redisson_spec)->fair_wait_ms, 3600000);

    static const struct bad_case cases[] = {
        {"{'lock': {'redisson': {'fair_wait_ms': 0}}, " WL "}",
         "t.json:1:40: lock.redisson.fair_wait_ms: 0 is out of range (1..3600000)"},
        {"{'lock': {'redisson': {'fair_wait_ms': 3600001}}, " WL "}",
         "t.json:1:40: lock.redisson.fair_wait_ms: 3600001 is out of range (1..3600000)"},
        {"{'lock': {'redisson': {'fair_wait_ms': -5}}, " WL "}",
         "t.json:1:40: lock.redisson.fair_wait_ms: -5 is out of range (1..3600000)"},
        {"{'lock': {'redisson': {'fair_wait_ms': '5'}}, " WL "}",
         "t.json:1:40: lock.redisson.fair_wait_ms: expected an integer, got string"},
        {"{'lock': {'redisson': {'fair_wait': 5}}, " WL "}",
         "t.json:1:24: lock.redisson.fair_wait: unknown key (did you mean \"fair_wait_ms\"?)"},
        {"{'lock': {'redisson': 5}, " WL "}",
         "t.json:1:23: lock.redisson: expected an object, got integer"},
    };
    CHECK_LOAD(cases);
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

/* Every number from 0 has exactly one kind: no gap (a history's number
 * that names nothing) and no two kinds sharing one (the second could not
 * be read back). */
static void test_fault_numbers(void **state)
{
    (void)state;
    assert_int_equal(fault_kind_count(), fault_kind_declared());
    for (size_t i = 0; i < fault_kind_count(); i++) {
        assert_non_null(fault_kind_at(i));
        assert_int_equal(fault_kind_at(i)->number, i);
        assert_int_equal(fault_kind_index(fault_kind_at(i)->name), (int)i);
    }
    assert_string_equal(fault_type_name(6), "failover"); /* the history files' numbers */
    assert_string_equal(fault_type_name(7), "latency");
    assert_string_equal(fault_type_name(13), "down");
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(fault_type_name(0), "client_pause"); /* the registry's order */
    assert_string_equal(fault_type_name(1), "client_crash");
    assert_string_equal(fault_type_name((unsigned)fault_kind_count()), "unknown");
    assert_string_equal(workload_at(0)->name, "flash_sale"); /* the default */
    assert_null(workload_find("flash_sal"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_out_of_range_top),
        cmocka_unit_test(test_out_of_range_lock),
        cmocka_unit_test(test_out_of_range_workload),
        cmocka_unit_test(test_missing_required),
        cmocka_unit_test(test_new_workloads_and_settings),
        cmocka_unit_test(test_new_keys_errors),
        cmocka_unit_test(test_redisson_settings),
        cmocka_unit_test(test_endpoints_parse),
        cmocka_unit_test(test_expect_parse),
        cmocka_unit_test(test_expect_format),
        cmocka_unit_test(test_expect_met),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_fault_numbers),
        cmocka_unit_test(test_lock_families),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
