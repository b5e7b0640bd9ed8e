/* test_redlock.c - Redlock against five real redis-servers, read as its
 * public description: a majority grants the lock with a validity below the
 * ttl, two nodes down still grant it, three down make every acquire fail
 * cleanly within its wait, and a failed round leaves nothing behind.
 *
 * Servers are started by locklab's cluster code on free loopback ports and
 * stopped by PID; the node-down tests run last on purpose.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cluster.h"
#include "lock.h"

static struct cluster cluster;
static struct lock_config cfg;

static void open_client(struct lock_client *c, const char *owner)
{
    memset(c, 0, sizeof(*c));
    c->ops = lock_find("redlock");
    assert_non_null(c->ops);
    c->cfg = &cfg;
    c->rng = 88172645463325252ULL;
    snprintf(c->owner, sizeof(c->owner), "%s", owner);
    c->owner_len = strlen(owner);
    assert_int_equal(c->ops->connect(c), 0);
}

/* GET key on node i with a fresh connection; "" when absent. */
static void node_get(size_t i, const char *key, char *out, size_t len)
{
    redisContext *ctx = redisConnect("127.0.0.1", cluster.srv[i].port);
    assert_true(ctx && !ctx->err);
    redisReply *r = redisCommand(ctx, "GET %s", key);
    assert_non_null(r);
    snprintf(out, len, "%s", r->type == REDIS_REPLY_STRING ? r->str : "");
    freeReplyObject(r);
    redisFree(ctx);
}

static void node_set(size_t i, const char *key, const char *value)
{
    redisContext *ctx = redisConnect("127.0.0.1", cluster.srv[i].port);
    assert_true(ctx && !ctx->err);
    freeReplyObject(redisCommand(ctx, "SET %s %s PX 10000", key, value));
    redisFree(ctx);
}

static enum lock_result take(struct lock_client *c, const char *key, uint32_t ttl, uint32_t wait,
                             struct lock_grant *g)
{
    return c->ops->acquire(c, key, strlen(key), ttl, wait, g);
}

static void majority_grants_then_releases_everywhere(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant g, gb;
    char v[64];
    open_client(&a, "owner-a");
    open_client(&b, "owner-b");
    assert_int_equal(take(&a, "rl:1", 10000, 0, &g), LOCK_OK);
    for (size_t i = 0; i < 5; i++) {
        node_get(i, "rl:1", v, sizeof(v));
        assert_string_equal(v, "owner-a");
    }
    /* validity = ttl - elapsed - drift, drift = ttl/100 + 2 = 102 ms */
    assert_true(g.validity_ms > 0 && g.validity_ms <= 10000 - 102);
    assert_int_equal(g.token, 0); /* Redlock has no fencing token */
    assert_int_equal(take(&b, "rl:1", 10000, 100, &gb), LOCK_BUSY);
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    for (size_t i = 0; i < 5; i++) {
        node_get(i, "rl:1", v, sizeof(v));
        assert_string_equal(v, "");
    }
    assert_int_equal(take(&b, "rl:1", 10000, 0, &gb), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static void two_foreign_nodes_still_lose_to_a_majority(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant g;
    char v[64];
    open_client(&a, "owner-a");
    node_set(0, "rl:2", "other");
    node_set(1, "rl:2", "other");
    assert_int_equal(take(&a, "rl:2", 10000, 0, &g), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    /* three foreign votes: busy, and our two yes-votes are taken back */
    node_set(0, "rl:3", "other");
    node_set(1, "rl:3", "other");
    node_set(2, "rl:3", "other");
    assert_int_equal(take(&a, "rl:3", 10000, 0, &g), LOCK_BUSY);
    node_get(3, "rl:3", v, sizeof(v));
    assert_string_equal(v, "");
    node_get(4, "rl:3", v, sizeof(v));
    assert_string_equal(v, "");
    a.ops->disconnect(&a);
}

static void expired_lock_is_lost_and_extend_extends(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant g;
    open_client(&a, "owner-a");
    assert_int_equal(take(&a, "rl:4", 60, 0, &g), LOCK_OK);
    lock_sleep_ms(200);
    assert_int_equal(a.ops->release(&a, &g), LOCK_LOST);
    assert_int_equal(take(&a, "rl:5", 300, 0, &g), LOCK_OK);
    lock_sleep_ms(150);
    assert_int_equal(a.ops->renew(&a, &g), LOCK_OK);
    lock_sleep_ms(200); /* past the first ttl, inside the extended one */
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    a.ops->disconnect(&a);
}

static void stop_node(size_t i)
{
    kill(cluster.srv[i].pid, SIGKILL);
    waitpid(cluster.srv[i].pid, NULL, 0);
    cluster.srv[i].pid = 0;
}

static void two_of_five_down_still_grants(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant g;
    open_client(&a, "owner-a");
    stop_node(0);
    kill(cluster.srv[1].pid, SIGSTOP); /* paused: a node timeout, not a refusal */
    for (int i = 0; i < 5; i++) {
        char key[32];
        snprintf(key, sizeof(key), "rl:down2:%d", i);
        assert_int_equal(take(&a, key, 10000, 1000, &g), LOCK_OK);
        assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    }
    kill(cluster.srv[1].pid, SIGCONT);
    a.ops->disconnect(&a);
}

static void three_of_five_down_fails_within_wait(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant g;
    char v[64];
    open_client(&a, "owner-a");
    stop_node(1);
    kill(cluster.srv[2].pid, SIGSTOP);
    for (int i = 0; i < 3; i++) {
        uint64_t t0 = lock_now_ms();
        enum lock_result r = take(&a, "rl:down3", 10000, 300, &g);
        uint64_t took = lock_now_ms() - t0;
        assert_int_equal(r, LOCK_BUSY);
        /* no hang: the wait plus one round's node timeout, with room for a loaded machine */
        if (took > 3000)
            fail_msg("acquire took %llu ms with a 300 ms wait", (unsigned long long)took);
    }
    /* failed rounds take their votes back on the nodes that are up */
    node_get(3, "rl:down3", v, sizeof(v));
    assert_string_equal(v, "");
    node_get(4, "rl:down3", v, sizeof(v));
    assert_string_equal(v, "");
    kill(cluster.srv[2].pid, SIGCONT);
    a.ops->disconnect(&a);
}

static int setup(void **state)
{
    char err[512];
    (void)state;
    if (cluster_start_redis(&cluster, 5, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    for (size_t i = 0; i < 5; i++) {
        snprintf(cfg.endpoints[i].host, sizeof(cfg.endpoints[i].host), "127.0.0.1");
        cfg.endpoints[i].port = cluster.srv[i].port;
    }
    cfg.n_endpoints = 5;
    cfg.connect_timeout_ms = 1000;
    cfg.io_timeout_ms = 1000;
    cfg.node_timeout_ms = 50;
    cfg.retry_min_ms = 1;
    cfg.retry_max_ms = 20;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < cluster.n; i++)
        if (cluster.srv[i].pid > 0)
            kill(cluster.srv[i].pid, SIGCONT);
    cluster_stop(&cluster, NULL);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(majority_grants_then_releases_everywhere),
        cmocka_unit_test(two_foreign_nodes_still_lose_to_a_majority),
        cmocka_unit_test(expired_lock_is_lost_and_extend_extends),
        cmocka_unit_test(two_of_five_down_still_grants),
        cmocka_unit_test(three_of_five_down_fails_within_wait),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
