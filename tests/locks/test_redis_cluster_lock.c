/* test_redis_cluster_lock.c - the redis-cluster lock against a real Redis
 * Cluster of 3 masters and 3 replicas, started through locklab's fleet:
 * every slot computed as the server computes it (CLUSTER KEYSLOT, hash
 * tags and all); a client seeded with one replica alone finds each key's
 * master; a second client waits and is granted at the release; the key
 * and its fencing counter sit on the master of the key's slot, the
 * counter in its hash tag; a slot moved under a client's map is followed
 * (MOVED, the map asked again), a slot being migrated is asked of its new
 * master (ASK, then ASKING); a master stopped past cluster-node-timeout is
 * replaced by its replica, and the client is granted on the new master.
 * The nodes are stopped by PID at the end (a stopped one continued first).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/redis_cluster_wire.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/redis_server.h"
#include "sim/fleet/server_kind.h"

#define TTL_MS   30000
#define NODES    6
#define MASTERS  3
#define POLL_MAX 200 /* of 100 ms: 20 s */

static struct cluster fleet;
static struct lock_config cfg, cfg_plain;
static pid_t stopped;

static int setup(void **state)
{
    (void)state;
    char err[256];
    if (cluster_start(&fleet, "redis-cluster", NODES, err, sizeof(err)) < 0) {
        fprintf(stderr, "cannot start a Redis Cluster: %s\n", err);
        return -1;
    }
    /* one replica alone: the client learns the masters from it */
    snprintf(cfg.endpoints[0].host, sizeof(cfg.endpoints[0].host), "127.0.0.1");
    cfg.endpoints[0].port = fleet.srv[MASTERS].port;
    cfg.n_endpoints = 1;
    cfg.connect_timeout_ms = 2000;
    cfg.io_timeout_ms = 3000;
    cfg.retry_min_ms = 1;
    cfg.retry_max_ms = 50;
    cfg.want_token = true;
    cfg_plain = cfg;
    cfg_plain.want_token = false;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (stopped)
        kill(stopped, SIGCONT);
    cluster_stop(&fleet, NULL);
    return 0;
}

static void client_open_with(struct lock_client *c, const struct lock_config *conf)
{
    memset(c, 0, sizeof(*c));
    c->ops = lock_find("redis-cluster");
    assert_non_null(c->ops);
    c->cfg = conf;
    c->rng = 88172645463325252ULL;
    c->owner_len = (size_t)snprintf(c->owner, sizeof(c->owner), "owner-%p", (void *)c);
    assert_int_equal(c->ops->connect(c), 0);
}

static void client_open(struct lock_client *c)
{
    client_open_with(c, &cfg);
}

/* The lock's client state begins with its cluster_wire (redis_cluster.c). */
static struct cluster_wire *wire_of(struct lock_client *c)
{
    return c->impl;
}

static void reply_of(int port, const char *command, char *out, size_t len)
{
    assert_true(redis_server_reply(port, command, out, len) > 0);
}

/* The slot the server gives key. */
static uint16_t server_slot(const char *key)
{
    char cmd[160], reply[64];
    snprintf(cmd, sizeof(cmd), "CLUSTER KEYSLOT %s", key);
    reply_of(fleet.srv[0].port, cmd, reply, sizeof(reply));
    assert_true(reply[0] == ':');
    return (uint16_t)atoi(reply + 1);
}

static void slots_as_the_server_computes_them(void **state)
{
    (void)state;
    static const char *const keys[] = {
        "foo",
        "123456789",
        "lock:stock:0",
        "{user1000}.following",
        "{user1000}.followers",
        "foo{}{bar}",
        "foo{{bar}}zap",
        "foo{bar}{zap}",
        "{lock:a}:fence",
        "x{",
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        assert_int_equal(cw_key_slot(keys[i], strlen(keys[i])), server_slot(keys[i]));
    assert_int_equal(cw_key_slot("123456789", 9), 0x31c3 % CW_SLOTS); /* CRC16's check value */
}

/* The port of the master that serves slot now (CLUSTER NODES' ranges). */
static int master_of(uint16_t slot)
{
    static char nodes[8192];
    for (size_t i = 0; i < fleet.n; i++) {
        if (fleet.srv[i].pid == 0 || fleet.srv[i].pid == stopped)
            continue;
        if (redis_server_reply(fleet.srv[i].port, "CLUSTER NODES", nodes, sizeof(nodes)) <= 0)
            continue;
        for (char *line = strtok(nodes, "\n"); line; line = strtok(NULL, "\n")) {
            if (!strstr(line, "master") || strstr(line, "fail"))
                continue;
            int port = atoi(strchr(line, ':') + 1);
            /* after "connected": its ranges, "lo-hi" or "n" (or "[...]" in a move) */
            const char *r = strstr(line, "connected");
            for (r = r ? r + strlen("connected") : NULL; r && *r == ' '; r = strchr(r, ' ')) {
                int lo, hi;
                r++;
                int got = *r == '[' ? 0 : sscanf(r, "%d-%d", &lo, &hi);
                if (got == 1)
                    hi = lo;
                if (got >= 1 && slot >= lo && slot <= hi)
                    return port;
            }
        }
        break;
    }
    fail_msg("no master serves slot %u", (unsigned)slot);
    return -1;
}

static void value_on(int port, const char *key, char *out, size_t len)
{
    assert_int_equal(redis_server_read_key(port, key, out, len), 0);
}

static void held_on_its_master_and_handed_over(void **state)
{
    (void)state;
    struct lock_client a, b;
    client_open(&a);
    client_open(&b);
    /* keys on each master's third */
    static const char *const keys[] = {"lock:stock:0", "lock:stock:1", "lock:stock:2",
                                       "lock:stock:3", "lock:stock:4"};
    bool seen[MASTERS] = {false};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *key = keys[i];
        uint16_t slot = cw_key_slot(key, strlen(key));
        seen[slot * MASTERS / CW_SLOTS] = true;
        struct lock_grant g, h;
        assert_int_equal(a.ops->acquire(&a, key, strlen(key), TTL_MS, 0, &g), LOCK_OK);
        assert_int_equal(b.ops->acquire(&b, key, strlen(key), TTL_MS, 0, &h), LOCK_BUSY);
        int port = master_of(slot);
        char v[128], fence[160], fv[32];
        value_on(port, key, v, sizeof(v));
        assert_string_equal(v, a.owner);
        snprintf(fence, sizeof(fence), "{%s}:fence", key);
        value_on(port, fence, fv, sizeof(fv));
        assert_int_equal(strtoull(fv, NULL, 10), g.token);
        assert_true(g.token > 0);
        assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
        assert_int_equal(b.ops->acquire(&b, key, strlen(key), TTL_MS, 1000, &h), LOCK_OK);
        assert_true(h.token == g.token + 1);                 /* the counter of the key's slot */
        assert_int_equal(a.ops->release(&a, &h), LOCK_LOST); /* not a's any more */
        assert_int_equal(b.ops->release(&b, &h), LOCK_OK);
    }
    for (int m = 0; m < MASTERS; m++)
        assert_true(seen[m]);
    assert_int_equal(wire_of(&a)->moved + wire_of(&a)->asked, 0);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static void node_id(int port, char id[41])
{
    char reply[128];
    reply_of(port, "CLUSTER MYID", reply, sizeof(reply));
    assert_memory_equal(reply, "$40\r\n", 5);
    memcpy(id, reply + 5, 40);
    id[40] = '\0';
}

/* Every master told that slot is now id's (CLUSTER SETSLOT ... NODE). */
static void assign_slot(uint16_t slot, const char *id)
{
    char cmd[128], reply[64];
    snprintf(cmd, sizeof(cmd), "CLUSTER SETSLOT %u NODE %s", (unsigned)slot, id);
    for (size_t i = 0; i < MASTERS; i++) {
        reply_of(fleet.srv[i].port, cmd, reply, sizeof(reply));
        assert_memory_equal(reply, "+OK", 3);
    }
}

/* A key of no key's slot yet, on master `from`: the test moves its slot. */
static const char *key_on(int from, char *buf, size_t len)
{
    for (int i = 0; i < 1000; i++) {
        snprintf(buf, len, "lock:moved:%d", i);
        if (master_of(cw_key_slot(buf, strlen(buf))) == fleet.srv[from].port)
            return buf;
    }
    fail_msg("no key of lock:moved:0..999 on node %d", from + 1);
    return buf;
}

static void moved_and_ask_followed(void **state)
{
    (void)state;
    struct lock_client a;
    client_open(&a);
    char key[64], id1[41], id2[41], cmd[128], reply[64];
    key_on(0, key, sizeof(key));
    uint16_t slot = cw_key_slot(key, strlen(key));
    node_id(fleet.srv[0].port, id1);
    node_id(fleet.srv[1].port, id2);
    /* MOVED: the slot (empty) now node 2's; a's map still says node 1 */
    assign_slot(slot, id2);
    struct lock_grant g;
    assert_int_equal(a.ops->acquire(&a, key, strlen(key), TTL_MS, 1000, &g), LOCK_OK);
    assert_true(wire_of(&a)->moved >= 1);
    char v[128];
    value_on(fleet.srv[1].port, key, v, sizeof(v));
    assert_string_equal(v, a.owner);
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    /* ASK: node 2 migrating it back to node 1; the key (gone now) is asked
     * of node 1 with ASKING first */
    snprintf(cmd, sizeof(cmd), "CLUSTER SETSLOT %u IMPORTING %s", (unsigned)slot, id2);
    reply_of(fleet.srv[0].port, cmd, reply, sizeof(reply));
    assert_memory_equal(reply, "+OK", 3);
    snprintf(cmd, sizeof(cmd), "CLUSTER SETSLOT %u MIGRATING %s", (unsigned)slot, id1);
    reply_of(fleet.srv[1].port, cmd, reply, sizeof(reply));
    assert_memory_equal(reply, "+OK", 3);
    /* unfenced, the SET alone: node 2 has no such key, so ASK, and node 1
     * takes it with ASKING first */
    struct lock_client b;
    client_open_with(&b, &cfg_plain);
    uint64_t before = g.token;
    struct lock_grant h;
    assert_int_equal(b.ops->acquire(&b, key, strlen(key), TTL_MS, 1000, &h), LOCK_OK);
    assert_int_equal(wire_of(&b)->asked, 1);
    /* fenced, the script's two keys: the counter on node 2, the key on
     * node 1, so both answer TRYAGAIN (Redis serves a multi-key command on
     * a slot on the move only where all its keys are), retried until the
     * wait runs out */
    assert_int_equal(a.ops->acquire(&a, key, strlen(key), TTL_MS, 300, &g), LOCK_ERR);
    assert_non_null(strstr(a.errstr, "TRYAGAIN"));
    /* the counter moved, the move done (as a reshard does it): served */
    snprintf(cmd, sizeof(cmd), "MIGRATE 127.0.0.1 %d \"\" 0 5000 KEYS {%s}:fence",
             fleet.srv[0].port, key);
    reply_of(fleet.srv[1].port, cmd, reply, sizeof(reply));
    assert_memory_equal(reply, "+OK", 3);
    assign_slot(slot, id1);
    value_on(fleet.srv[0].port, key, v, sizeof(v));
    assert_string_equal(v, b.owner);
    assert_int_equal(b.ops->release(&b, &h), LOCK_OK);
    assert_int_equal(a.ops->acquire(&a, key, strlen(key), TTL_MS, 1000, &g), LOCK_OK);
    assert_int_equal(g.token, before + 1); /* the counter came along */
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    b.ops->disconnect(&b);
    a.ops->disconnect(&a);
}

static void failover_to_the_replica(void **state)
{
    (void)state;
    struct lock_client a;
    client_open(&a);
    char key[64];
    key_on(2, key, sizeof(key));
    struct lock_grant g;
    assert_int_equal(a.ops->acquire(&a, key, strlen(key), TTL_MS, 1000, &g), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    /* master 3 stopped: its replica (node 6) is promoted after 2 s */
    stopped = fleet.srv[2].pid;
    assert_int_equal(kill(stopped, SIGSTOP), 0);
    int replica = fleet.srv[MASTERS + 2].port;
    int tries = 0;
    while (!redis_server_leads(replica) && ++tries < POLL_MAX)
        lock_sleep_ms(100);
    assert_true(redis_server_leads(replica));
    /* the client's map still names the stopped master: its first try may
     * find no answer (LOCK_ERR), the next asks the map again */
    enum lock_result rc = LOCK_ERR;
    for (tries = 0; rc != LOCK_OK && tries < 10; tries++)
        rc = a.ops->acquire(&a, key, strlen(key), TTL_MS, 1000, &g);
    assert_int_equal(rc, LOCK_OK);
    char v[128];
    value_on(replica, key, v, sizeof(v));
    assert_string_equal(v, a.owner);
    assert_true(wire_of(&a)->refreshed >= 2);
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    kill(stopped, SIGCONT);
    stopped = 0;
    a.ops->disconnect(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slots_as_the_server_computes_them),
        cmocka_unit_test(held_on_its_master_and_handed_over),
        cmocka_unit_test(moved_and_ask_followed),
        cmocka_unit_test(failover_to_the_replica),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
