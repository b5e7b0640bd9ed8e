/* test_scenario_faults.c - the faults of a scenario, case by case
 * (docs/scenario.md): the keys each fault type takes and their ranges, the
 * targets it may aim at among the clients and the servers the algorithm
 * uses, its windows inside the run, its own expectations, the clock jump,
 * and Redis's replicas and sentinels that failover and replication need.
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

#include "sim/fleet/server_kind.h"
#include "tests/lib/scenario_env.h"

#include <stdio.h>
#include <string.h>

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
         "such as \"redis-2\" or \"zk-1\", or one of: one, minority, majority, all, servers, "
         "primaries, holder-majority, leader, master, follower, replica, pooler, zk-leader, "
         "zk-follower, etcd-leader, etcd-follower)"},
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
         "\"holder\", \"waiter\" or \"client:N\")"},
        {"{'faults': [{'at_ms': 0, 'type': 'client_crash', 'target': 'waiter'}], " WL "}",
         "t.json:1:60: faults[0].target: a client_crash strikes a holder (\"holder\", "
         "\"client:N\"); \"waiter\" is client_pause's"},
        {"{'faults': [{'at_ms': 0, 'type': 'latency', 'target': 'waiter', 'latency': 5}], " WL "}",
         "t.json:1:55: faults[0].target: unknown target \"waiter\" for a latency (expected a "
         "server such as \"redis-2\", one of: one, minority, majority, all, servers, primaries, "
         "leader, master, follower, replica, zk-leader, zk-follower, etcd-leader, etcd-follower; "
         "or clients: \"holder\", \"client:K\", \"clients:N\"; or \"replication\")"},
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
         "'one', 'data': 'lost'}], " WL "}",
         "t.json:1:103: faults[0].data: zookeeper keeps its data on disk through a kill (\"lost\" "
         "applies to redis, redis-cluster)"},
        {"{'duration_s': 2, 'faults': [{'at_ms': 1000, 'type': 'pause', 'target': 'one', "
         "'duration_ms': 1500}], " WL "}",
         "t.json:1:95: faults[0].duration_ms: the pause would end at 2500 ms, past the end of the "
         "run (2000 ms)"},
        {"{'duration_s': 2, 'faults': [{'at_ms': 1000, 'type': 'kill', 'target': 'one', "
         "'restart_after_ms': 1500}], " WL "}",
         "t.json:1:99: faults[0].restart_after_ms: the kill would end at 2500 ms, past the end of "
         "the run (2000 ms)"},
        /* a failover takes no duration_ms: its restart_after_ms is the one blamed */
        {"{'duration_s': 2, 'lock': {'redis': {'sentinels': 1}}, 'faults': [{'at_ms': 1000, "
         "'type': 'failover', 'restart_after_ms': 1500}], " WL "}",
         "t.json:1:123: faults[0].restart_after_ms: the failover would end at 2500 ms, past the "
         "end of the run (2000 ms)"},
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
        /* Redlock's five each lead: its primaries are all of them */
        {"{'lock': {'algorithm': 'redlock'}, 'faults': [{'at_ms': 0, 'type': 'kill', 'target': "
         "'primaries', 'restart_after_ms': 1000}, {'at_ms': 500, 'type': 'pause', 'target': "
         "'one', 'duration_ms': 100}], " WL "}",
         "t.json:1:168: faults[1].target: one together with faults[0] (kill primaries from 0 "
         "to 1000 ms) needs 6 of 5 servers"},
        {"{'servers': {'redis': ['127.0.0.1:6379']}, 'faults': [{'at_ms': 0, 'type': 'kill', "
         "'target': 'one'}], " WL "}",
         "t.json:1:76: faults[0].type: a kill needs servers locklab manages; algorithm redis runs "
         "on external redis servers (--redis or \"servers\")"},
        {"{'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'zk-leader'}], " WL "}",
         "t.json:1:52: faults[0].target: zk-leader names a zookeeper server; redis uses redis "
         "servers"},
        {"{'lock': {'algorithm': 'zookeeper'}, 'faults': [{'at_ms': 0, 'type': 'pause', "
         "'target': 'zk-follower', 'duration_ms': 5}], " WL "}",
         "t.json:1:89: faults[0].target: a standalone ZooKeeper has no follower "
         "(lock.zookeeper.ensemble: 3)"},
    };
    CHECK_LOAD(load);
    CHECK_FINISH(finish);
}

/* The primaries of an ensemble or of a master with replicas are the one
 * that leads: a follower is left to strike beside them (it was counted
 * as every server: "needs 4 of 3 servers"). */
static void test_primaries_hold_the_leader(void **state)
{
    static const char *const layouts[] = {
        "'zookeeper': {'ensemble': 3}, 'algorithm': 'zookeeper'",
        "'redis': {'replicas': 2, 'sentinels': 3}",
    };
    for (size_t i = 0; i < 2; i++) {
        char json[600];
        snprintf(json, sizeof(json),
                 "{'lock': {%s}, 'faults': [{'at_ms': 1000, 'type': 'kill', 'target': "
                 "'primaries', 'restart_after_ms': 2000}, {'at_ms': 1500, 'type': 'pause', "
                 "'target': 'follower', 'duration_ms': 1000}], " WL "}",
                 layouts[i]);
        struct scenario s;
        load_ok(state, json, &s);
        assert_int_equal(s.n_faults, 2);
    }
}

/* A Redis Cluster's primaries are its masters, 3 of the 6 nodes of 3 x 1
 * (they were counted as all 6: "minority ... needs 9 of 6 servers"). */
#define CLUSTER_PRIMARIES(other)                                                                   \
    "{'lock': {'algorithm': 'redis-cluster'}, 'faults': [{'at_ms': 1000, 'type': 'pause', "        \
    "'target': 'primaries', 'duration_ms': 1000}, {'at_ms': 1500, 'type': 'pause', 'target': "     \
    "'" other "', 'duration_ms': 1000}], " WL "}"
static void test_cluster_primaries_are_its_masters(void **state)
{
    struct scenario s;
    load_ok(state, CLUSTER_PRIMARIES("minority"), &s);
    assert_int_equal(s.n_faults, 2);
    static const struct bad_case finish[] = {
        {CLUSTER_PRIMARIES("majority"),
         "t.json:1:174: faults[1].target: majority together with faults[0] (pause primaries from "
         "1000 to 2000 ms) needs 7 of 6 servers"},
    };
    CHECK_FINISH(finish);
}

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

/* A pause of a waiter: client_pause's third target, the nemesis's to play
 * (no holder claims it); its plan names whom it picks. */
static void test_waiter_pause(void **state)
{
    struct scenario s;
    load_ok(state,
            "{'faults': [{'at_ms': 100, 'type': 'client_pause', 'target': 'waiter', "
            "'duration_ms': 2000}], " WL "}",
            &s);
    assert_int_equal(s.faults[0].target, FAULT_TARGET_WAITER);
    assert_true(fault_on_waiter(&s.faults[0]));
    assert_false(fault_on_holder(&s.faults[0]));
    char plan[160];
    assert_string_equal(fault_plan(&s.faults[0], plan, sizeof(plan)),
                        "client_pause the longest waiter inside acquire, for 2 s");
    load_ok(state, "{'faults': [{'at_ms': 100, 'type': 'client_pause', 'duration_ms': 5}], " WL "}",
            &s);
    assert_false(fault_on_waiter(&s.faults[0]));
    assert_true(fault_on_holder(&s.faults[0]));
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
    assert_int_equal(SETTINGS_OF(&s, redis, redis_spec)->sentinels, 1);
    assert_int_equal(SETTINGS_OF(&s, redis, redis_spec)->replicas,
                     1); /* a sentinel needs someone to promote */
    assert_int_equal(SETTINGS_OF(&s, redis, redis_spec)->wait_timeout_ms, 1000);
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
         "t.json:1:44: lock.redis: replicas and sentinels are the topology of a lock on one Redis "
         "master (redis, the Redisson locks); redlock runs its own servers"},
        {"{'faults': [{'at_ms': 0, 'type': 'failover'}], " WL "}",
         "t.json:1:34: faults[0].type: a failover needs sentinels to promote a replica "
         "(lock.redis.sentinels: 1 or 3, the redis algorithm)"},
        {"{'lock': {'algorithm': 'redis-cluster'}, 'faults': [{'at_ms': 0, 'type': "
         "'slot_migrate', 'target': 'rc-2', 'duration_ms': 5}], " WL "}",
         "t.json:1:53: faults[0]: missing required key \"key\" (a slot_migrate needs one: the "
         "key whose slot it moves)"},
        {"{'faults': [{'at_ms': 0, 'type': 'pause', 'target': 'one', 'duration_ms': 5, "
         "'mode': 'force'}], " WL "}",
         "t.json:1:86: faults[0].mode: a pause takes no mode (only a cluster_failover has one)"},
        {"{'lock': {'algorithm': 'redis-cluster'}, 'faults': [{'at_ms': 0, 'type': "
         "'cluster_failover', 'target': 'replica', 'mode': 'soft'}], " WL "}",
         "t.json:1:123: faults[0].mode: unknown mode \"soft\" (known: manual, force, takeover)"},
        {"{'lock': {'algorithm': 'redis-cluster'}, 'faults': [{'at_ms': 0, 'type': "
         "'cluster_failover', 'target': 'replica', 'duration_ms': 5}], " WL "}",
         "t.json:1:130: faults[0].duration_ms: a cluster_failover takes no duration_ms (it ends "
         "when the replica is a master)"},
        {"{'lock': {'algorithm': 'zookeeper'}, 'faults': [{'at_ms': 0, 'type': 'replica_cut', "
         "'target': 'one', 'duration_ms': 5}], " WL "}",
         "t.json:1:70: faults[0].type: a replica_cut cuts a Redis replica off its master; "
         "zookeeper runs on zookeeper servers"},
        {"{'faults': [{'at_ms': 0, 'type': 'timeout', 'target': 'replication'}], " WL "}",
         "t.json:1:55: faults[0].target: replication is the link of the replicas locklab runs for "
         "a redis master (lock.redis.sentinels: 1)"},
        /* a failover holds the master it kills and needs a replica left to
         * promote: two at once need three servers; it takes no target, so
         * its type is pointed at */
        {"{'lock': {'redis': {'sentinels': 1}}, 'faults': [{'at_ms': 0, 'type': 'failover', "
         "'restart_after_ms': 1000}, {'at_ms': 500, 'type': 'failover'}], " WL "}",
         "t.json:1:133: faults[1].type: with faults[0] (failover the master from 0 to 1000 ms) "
         "still on, this failover needs 3 servers, 2 to strike and a replica to promote; the run "
         "has 2"},
        {"{'lock': {'redis': {'sentinels': 1}}, 'faults': [{'at_ms': 0, 'type': 'kill', 'target': "
         "'redis-2', 'restart_after_ms': 1000}, {'at_ms': 500, 'type': 'failover'}], " WL "}",
         "t.json:1:150: faults[1].type: with faults[0] (kill redis-2 from 0 to 1000 ms) still on, "
         "this failover needs 3 servers, 2 to strike and a replica to promote; the run has 2"},
        {"{'lock': {'redis': {'sentinels': 1}}, 'faults': [{'at_ms': 0, 'type': 'failover', "
         "'restart_after_ms': 1000}, {'at_ms': 500, 'type': 'pause', 'target': 'one', "
         "'duration_ms': 100}], " WL "}",
         "t.json:1:152: faults[1].target: with faults[0] (failover the master from 0 to 1000 ms) "
         "still on, this pause needs 3 servers, 2 to strike and a replica to promote; the run has "
         "2"},
    };
    CHECK_FINISH(finish);
    /* two replicas: one for each failover to promote; and one after the
     * other's end, on a master and one replica */
    load_ok(state,
            "{'lock': {'redis': {'sentinels': 1, 'replicas': 2}}, 'faults': [{'at_ms': 0, 'type': "
            "'failover', 'restart_after_ms': 1000}, {'at_ms': 500, 'type': 'failover'}], " WL "}",
            &s);
    assert_int_equal(s.n_faults, 2);
    load_ok(state,
            "{'lock': {'redis': {'sentinels': 1}}, 'faults': [{'at_ms': 0, 'type': 'failover', "
            "'restart_after_ms': 500}, {'at_ms': 500, 'type': 'failover'}], " WL "}",
            &s);
    assert_int_equal(s.faults[1].at_ms, 500);
}

/* Network faults: Toxiproxy's attributes, each on the types that take it,
 * in range; targets that exist; no two toxics of one type on the same
 * traffic at once. */
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
         "(expected a server such as \"redis-2\", one of: one, minority, majority, all, servers, "
         "primaries, leader, master, follower, replica, zk-leader, zk-follower, etcd-leader, "
         "etcd-follower; or clients: \"holder\", \"client:K\", \"clients:N\"; or "
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

/* Targets by role: each kind says which it has, the layout whether there
 * are several to lead and follow or a pooler in front; a role the layout
 * lacks is refused with the reason (the scorecard's n/a). */
static void test_role_targets(void **state)
{
    struct scenario s;
    load_ok(state,
            "{'lock': {'algorithm': 'zookeeper', 'zookeeper': {'ensemble': 3}}, 'faults': "
            "[{'at_ms': 0, 'type': 'kill', 'target': 'leader', 'restart_after_ms': 5}, {'at_ms': "
            "0, 'type': 'pause', 'target': 'follower', 'duration_ms': 5}, {'at_ms': 10, 'type': "
            "'kill', 'target': 'zk-leader', 'restart_after_ms': 5}, {'at_ms': 20, 'type': "
            "'pause', 'target': 'servers', 'duration_ms': 5}], " WL "}",
            &s);
    assert_int_equal(s.faults[0].pick, PICK_LEADER);
    assert_int_equal(s.faults[0].node_kind, FAULT_ANY_KIND);
    assert_int_equal(s.faults[1].pick, PICK_FOLLOWER);
    assert_int_equal(s.faults[2].pick, PICK_LEADER);
    assert_int_equal(s.faults[2].node_kind, server_kind_index("zookeeper"));
    assert_int_equal(s.faults[3].pick, PICK_ALL);
    assert_string_equal(s.faults[3].target_text, "servers");
    load_ok(state,
            "{'lock': {'redis': {'sentinels': 1}}, 'faults': [{'at_ms': 0, 'type': 'kill', "
            "'target': 'master'}, {'at_ms': 0, 'type': 'pause', 'target': 'replica', "
            "'duration_ms': 5}], " WL "}",
            &s);
    assert_int_equal(s.faults[0].pick, PICK_LEADER);
    assert_int_equal(s.faults[1].pick, PICK_FOLLOWER);
    load_ok(state,
            "{'lock': {'algorithm': 'postgres-advisory', 'postgres': {'pooler': 'transaction'}}, "
            "'faults': [{'at_ms': 0, 'type': 'pause', 'target': 'pooler', 'duration_ms': 5}, "
            "{'at_ms': 0, 'type': 'kill', 'target': 'leader', 'data': 'kept'}], " WL "}",
            &s);
    assert_int_equal(s.faults[0].pick, PICK_POOLER);
    assert_int_equal(s.faults[1].pick, PICK_LEADER);

    static const struct bad_case finish[] = {
        {"{'lock': {'algorithm': 'redlock'}, 'faults': [{'at_ms': 0, 'type': 'kill', 'target': "
         "'leader'}], " WL "}",
         "t.json:1:86: faults[0].target: redlock's 5 redis nodes are independent: none leads"},
        {"{'lock': {'algorithm': 'redlock'}, 'faults': [{'at_ms': 0, 'type': 'pause', 'target': "
         "'follower', 'duration_ms': 5}], " WL "}",
         "t.json:1:87: faults[0].target: redlock's 5 redis nodes are independent: none follows "
         "another"},
        {"{'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'replica'}], " WL "}",
         "t.json:1:52: faults[0].target: a single redis has no replica (lock.redis.sentinels: 1)"},
        {"{'lock': {'algorithm': 'postgres-advisory'}, 'faults': [{'at_ms': 0, 'type': 'kill', "
         "'target': 'follower'}], " WL "}",
         "t.json:1:96: faults[0].target: a single PostgreSQL has no replica (locklab runs it "
         "alone)"},
        {"{'lock': {'algorithm': 'postgres-advisory'}, 'faults': [{'at_ms': 0, 'type': 'pause', "
         "'target': 'pooler', 'duration_ms': 5}], " WL "}",
         "t.json:1:97: faults[0].target: postgres-advisory has no pooler in front of its postgres "
         "server "
         "(lock.postgres.pooler: \"transaction\" or \"session\")"},
        {"{'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'pooler'}], " WL "}",
         "t.json:1:52: faults[0].target: redis has no pooler in front of its redis server (none is "
         "run for it)"},
        {"{'lock': {'algorithm': 'etcd'}, 'faults': [{'at_ms': 0, 'type': 'kill', 'target': "
         "'etcd-follower'}], " WL "}",
         "t.json:1:83: faults[0].target: a single etcd has no follower (lock.etcd.nodes: 3)"},
        {"{'lock': {'algorithm': 'zookeeper'}, 'faults': [{'at_ms': 0, 'type': 'kill', 'target': "
         "'etcd-leader'}], " WL "}",
         "t.json:1:88: faults[0].target: etcd-leader names a etcd server; zookeeper uses zookeeper "
         "servers"},
        {"{'lock': {'algorithm': 'postgres-row'}, 'faults': [{'at_ms': 0, 'type': 'kill', "
         "'target': 'leader', 'data': 'lost'}], " WL "}",
         "t.json:1:109: faults[0].data: postgres keeps its data on disk through a kill (\"lost\" "
         "applies to redis, redis-cluster)"},
        {"{'lock': {'algorithm': 'postgres-advisory', 'postgres': {'pooler': 'session'}}, "
         "'faults': [{'at_ms': 0, 'type': 'kill', 'target': 'pooler', 'data': 'kept'}], " WL "}",
         "t.json:1:149: faults[0].data: a pooler keeps no data: a kill of it loses none"},
    };
    CHECK_FINISH(finish);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_out_of_range_faults),
        cmocka_unit_test(test_process_fault_errors),
        cmocka_unit_test(test_network_fault_errors),
        cmocka_unit_test(test_fault_expect),
        cmocka_unit_test(test_primaries_hold_the_leader),
        cmocka_unit_test(test_cluster_primaries_are_its_masters),
        cmocka_unit_test(test_clock_jump),
        cmocka_unit_test(test_waiter_pause),
        cmocka_unit_test(test_redis_topology),
        cmocka_unit_test(test_role_targets),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
