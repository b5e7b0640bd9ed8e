/* test_redlock.c - Redlock against five real redis-servers, read as its
 * public description: a majority grants the lock with a validity below the
 * ttl, two nodes down still grant it, three down make every acquire fail
 * cleanly within its wait, and a failed round leaves nothing behind.
 * Release and extend keep lock.h's promise: with too many nodes silent
 * (SIGSTOPped) the outcome is unknown, LOCK_ERR, never a guessed LOST; LOST
 * only when the nodes that answered "not ours" make a quorum impossible. A
 * lost node counts in connect_failures.
 *
 * Servers are started by locklab's cluster code on free loopback ports and
 * stopped by PID; a paused node is continued by the test's teardown, pass
 * or fail; the node-down tests run last on purpose.
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
#include <unistd.h>

#include "algorithms/lock.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "tests/lib/lock_settings.h"

static struct cluster cluster;
static struct lock_config cfg;
/* For the tests that count answers or expect every node's vote: a node
 * timeout no live node misses on a loaded machine (ctest -j), so only the
 * paused ones are silent. cfg's 50 ms is for the node-down tests. */
static struct lock_config patient;

static void open_client_with(struct lock_client *c, const char *owner,
                             const struct lock_config *conf)
{
    memset(c, 0, sizeof(*c));
    c->ops = lock_find("redlock");
    assert_non_null(c->ops);
    c->cfg = conf;
    c->rng = 88172645463325252ULL;
    snprintf(c->owner, sizeof(c->owner), "%s", owner);
    c->owner_len = strlen(owner);
    assert_int_equal(c->ops->connect(c), 0);
}

static void open_client(struct lock_client *c, const char *owner)
{
    open_client_with(c, owner, &cfg);
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

/* Another client's view: the key is gone from node i (expired, evicted,
 * a restart without persistence). */
static void node_del(size_t i, const char *key)
{
    redisContext *ctx = redisConnect("127.0.0.1", cluster.srv[i].port);
    assert_true(ctx && !ctx->err);
    redisReply *r = redisCommand(ctx, "DEL %s", key);
    assert_non_null(r);
    assert_int_equal(r->integer, 1);
    freeReplyObject(r);
    redisFree(ctx);
}

/* Nodes this test paused; resume_nodes continues every one of them. */
static pid_t paused[5];
static size_t n_paused;

static void pause_node(size_t i)
{
    assert_true(cluster.srv[i].pid > 0 && n_paused < 5);
    paused[n_paused++] = cluster.srv[i].pid; /* first: the teardown must see it */
    assert_int_equal(kill(cluster.srv[i].pid, SIGSTOP), 0);
}

static void resume_nodes(void)
{
    for (size_t i = 0; i < n_paused; i++)
        kill(paused[i], SIGCONT);
    n_paused = 0;
}

/* Per-test teardown: a paused node is continued even when the test failed
 * half-way, or the tests after it would run against a frozen node. */
static int resume_after(void **state)
{
    (void)state;
    resume_nodes();
    return 0;
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
    open_client_with(&a, "owner-a", &patient);
    open_client_with(&b, "owner-b", &patient);
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
    open_client_with(&a, "owner-a", &patient);
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
    open_client_with(&a, "owner-a", &patient);
    assert_int_equal(take(&a, "rl:4", 300, 0, &g), LOCK_OK);
    lock_sleep_ms(500);
    assert_int_equal(a.ops->release(&a, &g), LOCK_LOST);
    /* Renewed half-way through a 4 s ttl, released 3 s later: past the
     * first ttl, inside the extended one. A late sleep (a loaded host)
     * has 2 s before the renewal and 1 s before the release to spare; an
     * early one cannot happen. */
    assert_int_equal(take(&a, "rl:5", 4000, 0, &g), LOCK_OK);
    lock_sleep_ms(2000);
    assert_int_equal(a.ops->renew(&a, &g), LOCK_OK);
    lock_sleep_ms(3000);
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    a.ops->disconnect(&a);
}

/* Stateless per grant: one client holds many keys on all five nodes and
 * gives them back in any order. */
static void one_client_holds_many_locks(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant g[20], gb;
    char keys[20][32];
    open_client_with(&a, "owner-a", &patient);
    open_client_with(&b, "owner-b", &patient);
    for (int i = 0; i < 20; i++) {
        snprintf(keys[i], sizeof(keys[i]), "rl:many:%d", i);
        assert_int_equal(take(&a, keys[i], 10000, 0, &g[i]), LOCK_OK);
    }
    for (int k = 0; k < 20; k++) {
        int i = (7 * k + 3) % 20; /* every key once, not in the order taken */
        assert_int_equal(take(&b, keys[i], 10000, 0, &gb), LOCK_BUSY);
        assert_int_equal(a.ops->release(&a, &g[i]), LOCK_OK);
        assert_int_equal(take(&b, keys[i], 10000, 0, &gb), LOCK_OK);
    }
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static void stop_node(size_t i)
{
    if (cluster.srv[i].pid <= 0)
        return; /* already stopped: never kill(0), the whole process group */
    kill(cluster.srv[i].pid, SIGKILL);
    waitpid(cluster.srv[i].pid, NULL, 0);
    cluster.srv[i].pid = 0;
}

/* 3 of 5 nodes silent during the release: 2 confirmed, and the 3 may or
 * may not have deleted the key. LOST would be a guess, and a wrong one:
 * once continued, the paused nodes run the release they had queued. */
static void release_with_three_silent_nodes_is_unknown(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant g;
    char v[64];
    open_client_with(&a, "owner-a", &patient);
    assert_int_equal(take(&a, "rl:silent3", 10000, 0, &g), LOCK_OK);
    for (size_t i = 2; i < 5; i++)
        pause_node(i);
    enum lock_result r = a.ops->release(&a, &g);
    resume_nodes();
    assert_int_equal(r, LOCK_ERR);
    assert_int_equal(a.err, LOCK_ERR_TIMEOUT);
    assert_non_null(strstr(a.errstr, "outcome unknown"));
    assert_non_null(strstr(a.errstr, "2 of 5 nodes confirmed, 3 did not answer (quorum 3)"));
    /* The nodes that were silent did release: bounded wait for them. */
    for (size_t i = 2; i < 5; i++) {
        node_get(i, "rl:silent3", v, sizeof(v));
        for (int k = 0; k < 200 && v[0] != '\0'; k++) {
            lock_sleep_ms(10);
            node_get(i, "rl:silent3", v, sizeof(v));
        }
        assert_string_equal(v, "");
    }
    a.ops->disconnect(&a);
}

static void release_with_one_silent_node_is_ok(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant g;
    open_client_with(&a, "owner-a", &patient);
    assert_int_equal(take(&a, "rl:silent1", 10000, 0, &g), LOCK_OK);
    pause_node(4);
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK); /* 4 of 5 confirmed */
    resume_nodes();
    a.ops->disconnect(&a);
}

/* LOST needs the nodes' word: enough definite "not ours" answers that no
 * quorum is possible, however the silent nodes went. */
static void release_where_a_majority_lost_the_key_is_lost(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant g;
    open_client_with(&a, "owner-a", &patient);
    /* all five answer: 2 yes, 3 definite no */
    assert_int_equal(take(&a, "rl:gone3", 10000, 0, &g), LOCK_OK);
    for (size_t i = 0; i < 3; i++)
        node_del(i, "rl:gone3");
    assert_int_equal(a.ops->release(&a, &g), LOCK_LOST);
    /* 1 yes, 3 no, 1 silent: even a yes from the silent one makes 2 < 3 */
    assert_int_equal(take(&a, "rl:gone3b", 10000, 0, &g), LOCK_OK);
    for (size_t i = 0; i < 3; i++)
        node_del(i, "rl:gone3b");
    pause_node(4);
    assert_int_equal(a.ops->release(&a, &g), LOCK_LOST);
    resume_nodes();
    /* 2 yes, 2 no, 1 silent: the silent one decides, so nobody knows */
    assert_int_equal(take(&a, "rl:gone2", 10000, 0, &g), LOCK_OK);
    for (size_t i = 0; i < 2; i++)
        node_del(i, "rl:gone2");
    pause_node(4);
    assert_int_equal(a.ops->release(&a, &g), LOCK_ERR);
    resume_nodes();
    assert_non_null(strstr(a.errstr, "2 of 5 nodes confirmed, 1 did not answer"));
    a.ops->disconnect(&a);
}

static void extend_with_three_silent_nodes_is_unknown(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant g;
    open_client_with(&a, "owner-a", &patient);
    assert_int_equal(take(&a, "rl:ext3", 10000, 0, &g), LOCK_OK);
    for (size_t i = 2; i < 5; i++)
        pause_node(i);
    enum lock_result r = a.ops->renew(&a, &g);
    resume_nodes();
    assert_int_equal(r, LOCK_ERR);
    assert_non_null(strstr(a.errstr, "extend: 2 of 5 nodes confirmed"));
    assert_non_null(strstr(a.errstr, "outcome unknown"));
    /* It was never lost: continued, every node still has our value. */
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    a.ops->disconnect(&a);
}

/* A node killed under a connected client: the round finds the connection
 * lost, the next client finds the node refusing; both count it, and the
 * other four still make a quorum. */
static void killed_node_counts_and_quorum_still_grants(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant g;
    open_client_with(&a, "owner-a", &patient);
    assert_int_equal(a.connect_failures, 0);
    stop_node(0);
    assert_int_equal(take(&a, "rl:kill1", 10000, 0, &g), LOCK_OK);
    assert_true(a.connect_failures >= 1);
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    open_client_with(&b, "owner-b", &patient);
    assert_true(b.connect_failures >= 1);
    assert_true(b.connect_refused >= 1); /* node 0 refuses: gone, not slow */
    assert_int_equal(take(&b, "rl:kill1", 10000, 0, &g), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &g), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
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

/* Every live node silent for one round (a loaded host, a GC-like stall):
 * a round nobody answered is a failed round, retried while the wait
 * lasts, not the end of the acquire. 2 of 5 can vote here, so BUSY. */
static void live_nodes_silent_for_a_moment_is_busy_not_error(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant g;
    open_client(&a, "owner-a");
    pause_node(2);
    pause_node(3);
    pause_node(4);
    pid_t waker = fork();
    assert_true(waker >= 0);
    if (waker == 0) {
        /* After the first round's 50 ms, while the release redials the
         * silent nodes one after the other (50 ms each, until 200 ms): so
         * one of those dials finds its node awake. At 200 ms it raced the
         * last dial's end, and lost once socket timeouts stopped being
         * rounded up to the kernel's ticks. */
        usleep(125 * 1000);
        kill(cluster.srv[3].pid, SIGCONT);
        kill(cluster.srv[4].pid, SIGCONT);
        _exit(0);
    }
    uint64_t t0 = lock_now_ms();
    enum lock_result r = take(&a, "rl:silent", 10000, 1500, &g);
    uint64_t took = lock_now_ms() - t0;
    waitpid(waker, NULL, 0);
    assert_int_equal(r, LOCK_BUSY);
    assert_true(took >= 1500);
    if (took > 5000)
        fail_msg("acquire took %llu ms with a 1500 ms wait", (unsigned long long)took);
    a.ops->disconnect(&a);
}

static int setup(void **state)
{
    char err[512];
    (void)state;
    if (cluster_start(&cluster, "redis", 5, err, sizeof(err)) < 0) {
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
    CFG_SETTINGS(cfg, redlock, redlock_spec)->node_timeout_ms = 50;
    cfg.retry_min_ms = 1;
    cfg.retry_max_ms = 20;
    patient = cfg;
    CFG_SETTINGS(patient, redlock, redlock_spec)->node_timeout_ms = 250;
    signal(SIGPIPE, SIG_IGN); /* as the engine does: a write into a killed node must not kill us */
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
        cmocka_unit_test(one_client_holds_many_locks),
        cmocka_unit_test_teardown(release_with_three_silent_nodes_is_unknown, resume_after),
        cmocka_unit_test_teardown(release_with_one_silent_node_is_ok, resume_after),
        cmocka_unit_test_teardown(release_where_a_majority_lost_the_key_is_lost, resume_after),
        cmocka_unit_test_teardown(extend_with_three_silent_nodes_is_unknown, resume_after),
        cmocka_unit_test(killed_node_counts_and_quorum_still_grants),
        cmocka_unit_test(two_of_five_down_still_grants),
        cmocka_unit_test(three_of_five_down_fails_within_wait),
        cmocka_unit_test_teardown(live_nodes_silent_for_a_moment_is_busy_not_error, resume_after),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
