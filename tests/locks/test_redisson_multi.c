/* test_redisson_multi.c - redisson-multi (Redisson's MultiLock) against
 * three real, independent redis-servers: a key's RLock lives on one master
 * alone; acquire_all takes every member's hash, each on its own master,
 * on the lease asked for; with one member held by another client it fails
 * within its wait and leaves the member it had taken unlocked again (all
 * or none); a wait that outlasts the holder gets both; re-entries count
 * on each member; with a master killed it fails and holds nothing on the
 * others. Where a key lives is read off the servers (HGETALL on each), not
 * computed here.
 *
 * The servers are started by locklab's cluster code on free loopback
 * ports and stopped by their PIDs at the end (the killed one by its PID in
 * its test). Contenders run in threads of their own, each with its own
 * client; every wait and poll is bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "algorithms/lock.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"

#define MASTERS     3
#define LEASE_MS    30000
#define POLL_MS     5
#define POLL_ROUNDS 600 /* 3 s for a member to show up held */
#define MAX_PROBES  64  /* keys tried to find ones on other masters */

static struct cluster cluster;
static struct lock_config cfg;

static void client_open(struct lock_client *c, const char *owner)
{
    memset(c, 0, sizeof(*c));
    c->ops = lock_find("redisson-multi");
    assert_non_null(c->ops);
    assert_non_null(c->ops->acquire_all);
    c->cfg = &cfg;
    c->rng = 88172645463325252ULL;
    snprintf(c->owner, sizeof(c->owner), "%s", owner);
    c->owner_len = strlen(owner);
    assert_int_equal(c->ops->connect(c), 0);
}

static redisReply *raw(size_t master, const char *fmt, ...)
{
    redisContext *ctx = redisConnect("127.0.0.1", cluster.srv[master].port);
    assert_true(ctx && !ctx->err);
    struct timeval tv = {.tv_sec = 5};
    redisSetTimeout(ctx, tv);
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(ctx, fmt, ap);
    va_end(ap);
    redisFree(ctx);
    assert_non_null(r);
    return r;
}

/* owner's hold count in key's hash on master (HGETALL: the hash must
 * have that field alone, or be absent: 0). */
static long long holds(size_t master, const char *key, const char *owner)
{
    redisReply *r = raw(master, "HGETALL %s", key);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    long long n = 0;
    if (r->elements > 0) {
        char field[80];
        snprintf(field, sizeof(field), "%s:1", owner);
        assert_int_equal(r->elements, 2);
        assert_string_equal(r->element[0]->str, field);
        n = strtoll(r->element[1]->str, NULL, 10);
        assert_true(n > 0);
    }
    freeReplyObject(r);
    return n;
}

static long long pttl(size_t master, const char *key)
{
    redisReply *r = raw(master, "PTTL %s", key);
    long long t = r->integer;
    freeReplyObject(r);
    return t;
}

/* The one master that holds key's hash for owner; fails when none or
 * several do. */
static size_t holder_master(const char *key, const char *owner)
{
    size_t at = MASTERS, found = 0;
    for (size_t i = 0; i < MASTERS; i++)
        if (holds(i, key, owner) > 0)
            at = i, found++;
    if (found != 1)
        fail_msg("%s is held on %zu masters, not one", key, found);
    return at;
}

/* Where a single acquire of key puts its RLock, read off the servers. */
static size_t placement(struct lock_client *c, const char *key)
{
    struct lock_grant g = {.mode = LOCK_MODE_EXCLUSIVE};
    assert_int_equal(c->ops->acquire(c, key, strlen(key), LEASE_MS, 0, &g), LOCK_OK);
    size_t at = holder_master(key, c->owner);
    assert_int_equal(c->ops->release(c, &g), LOCK_OK);
    for (size_t i = 0; i < MASTERS; i++)
        assert_int_equal(holds(i, key, c->owner), 0);
    return at;
}

/* Two fresh keys (prefix:0, prefix:k) whose RLocks live on different
 * masters, and those masters. */
static void two_keys(const char *prefix, char k1[32], char k2[32], size_t *m1, size_t *m2)
{
    struct lock_client c;
    client_open(&c, "probe");
    snprintf(k1, 32, "%s:0", prefix);
    *m1 = placement(&c, k1);
    for (int i = 1; i < MAX_PROBES; i++) {
        snprintf(k2, 32, "%s:%d", prefix, i);
        *m2 = placement(&c, k2);
        if (*m2 != *m1) {
            c.ops->disconnect(&c);
            return;
        }
    }
    fail_msg("%d keys all on master %zu", MAX_PROBES, *m1);
}

static void set_grants(struct lock_grant g[2], const char *k1, const char *k2)
{
    memset(g, 0, 2 * sizeof(*g));
    g[0].key = k1, g[0].key_len = strlen(k1);
    g[1].key = k2, g[1].key_len = strlen(k2);
}

/* A client taking two keys at once in a thread of its own. */
struct taker {
    struct lock_client c;
    struct lock_grant g[2];
    uint32_t wait_ms;
    pthread_t thread;
    enum lock_result res; /* out */
    uint64_t took_ms;
};

static void *taker_main(void *arg)
{
    struct taker *t = arg;
    uint64_t t0 = lock_now_ms();
    t->res = t->c.ops->acquire_all(&t->c, t->g, 2, LEASE_MS, t->wait_ms);
    t->took_ms = lock_now_ms() - t0;
    return NULL;
}

static void taker_start(struct taker *t, const char *owner, const char *k1, const char *k2,
                        uint32_t wait_ms)
{
    client_open(&t->c, owner);
    set_grants(t->g, k1, k2);
    t->wait_ms = wait_ms;
    assert_int_equal(pthread_create(&t->thread, NULL, taker_main, t), 0);
}

/* Poll until owner holds key on master. */
static void await_held(size_t master, const char *key, const char *owner)
{
    for (int i = 0; i < POLL_ROUNDS; i++) {
        if (holds(master, key, owner) > 0)
            return;
        lock_sleep_ms(POLL_MS);
    }
    fail_msg("%s never held by %s on master %zu", key, owner, master);
}

/* (1) Two keys on two masters: acquire_all puts each hash on its own
 * master alone, on the lease asked for (not the 2 x wait the members are
 * taken on), and release unlocks each. */
static void acquire_all_takes_every_member(void **state)
{
    (void)state;
    char k1[32], k2[32];
    size_t m1, m2;
    two_keys("all", k1, k2, &m1, &m2);
    struct lock_client a;
    client_open(&a, "a");
    struct lock_grant g[2];
    set_grants(g, k1, k2);
    assert_int_equal(a.ops->acquire_all(&a, g, 2, LEASE_MS, 1000), LOCK_OK);
    assert_int_equal(holder_master(k1, "a"), m1);
    assert_int_equal(holder_master(k2, "a"), m2);
    assert_int_equal(holds(m1, k1, "a"), 1);
    assert_int_equal(holds(m2, k2, "a"), 1);
    /* Taken on 2 x 1000 ms, then PEXPIREd to the lease. */
    assert_true(pttl(m1, k1) > 2000 && pttl(m1, k1) <= LEASE_MS);
    assert_true(pttl(m2, k2) > 2000 && pttl(m2, k2) <= LEASE_MS);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(g[i].ttl_ms, LEASE_MS);
        assert_true(g[i].validity_ms > 2000 && g[i].validity_ms <= LEASE_MS);
        assert_int_equal(a.ops->renew(&a, &g[i]), LOCK_OK);
        assert_int_equal(a.ops->release(&a, &g[i]), LOCK_OK);
    }
    assert_int_equal(holds(m1, k1, "a"), 0);
    assert_int_equal(holds(m2, k2, "a"), 0);
    /* Given back: renewing and releasing again find nothing of ours. */
    assert_int_equal(a.ops->renew(&a, &g[0]), LOCK_LOST);
    assert_int_equal(a.ops->release(&a, &g[1]), LOCK_LOST);
    a.ops->disconnect(&a);
}

/* (2) With the second key held by another client, acquire_all with a
 * short wait takes the first member, waits for the second, and fails:
 * the first is unlocked again (all or none). */
static void one_member_held_gives_none(void **state)
{
    (void)state;
    char k1[32], k2[32];
    size_t m1, m2;
    two_keys("none", k1, k2, &m1, &m2);
    struct lock_client h;
    struct lock_grant gh = {.mode = LOCK_MODE_EXCLUSIVE};
    client_open(&h, "h");
    assert_int_equal(h.ops->acquire(&h, k2, strlen(k2), LEASE_MS, 0, &gh), LOCK_OK);

    struct taker t;
    taker_start(&t, "a", k1, k2, 400);
    await_held(m1, k1, "a"); /* the first member is really taken meanwhile */
    assert_int_equal(pthread_join(t.thread, NULL), 0);
    assert_int_equal(t.res, LOCK_BUSY);
    assert_true(t.took_ms >= 400);
    if (t.took_ms > 3000)
        fail_msg("acquire_all took %llu ms with a 400 ms wait", (unsigned long long)t.took_ms);
    assert_int_equal(holds(m1, k1, "a"), 0);
    redisReply *r = raw(m1, "EXISTS %s", k1);
    assert_int_equal(r->integer, 0);
    freeReplyObject(r);
    assert_int_equal(holds(m2, k2, "h"), 1); /* the holder's untouched */

    /* A wait of 0 tries each once and gives up at once. */
    struct lock_grant g[2];
    set_grants(g, k1, k2);
    assert_int_equal(t.c.ops->acquire_all(&t.c, g, 2, LEASE_MS, 0), LOCK_BUSY);
    assert_int_equal(holds(m1, k1, "a"), 0);
    t.c.ops->disconnect(&t.c);
    assert_int_equal(h.ops->release(&h, &gh), LOCK_OK);
    h.ops->disconnect(&h);
}

/* (3) A wait that outlasts the holder: the unlock message wakes the
 * waiter on the second member and acquire_all gets both. */
static void wait_outlasting_the_holder_gets_both(void **state)
{
    (void)state;
    char k1[32], k2[32];
    size_t m1, m2;
    two_keys("wait", k1, k2, &m1, &m2);
    struct lock_client h;
    struct lock_grant gh = {.mode = LOCK_MODE_EXCLUSIVE};
    client_open(&h, "h");
    assert_int_equal(h.ops->acquire(&h, k2, strlen(k2), LEASE_MS, 0, &gh), LOCK_OK);

    struct taker t;
    taker_start(&t, "a", k1, k2, 5000);
    await_held(m1, k1, "a");
    lock_sleep_ms(300);
    assert_int_equal(h.ops->release(&h, &gh), LOCK_OK);
    assert_int_equal(pthread_join(t.thread, NULL), 0);
    assert_int_equal(t.res, LOCK_OK);
    assert_true(t.took_ms >= 300 && t.took_ms < 5000);
    assert_true(t.c.woken_by_notice >= 1);
    assert_int_equal(holds(m1, k1, "a"), 1);
    assert_int_equal(holds(m2, k2, "a"), 1);
    for (int i = 0; i < 2; i++)
        assert_int_equal(t.c.ops->release(&t.c, &t.g[i]), LOCK_OK);
    assert_int_equal(holds(m1, k1, "a"), 0);
    assert_int_equal(holds(m2, k2, "a"), 0);
    t.c.ops->disconnect(&t.c);
    h.ops->disconnect(&h);
}

/* (4) Re-entry: each acquire_all and acquire of a held key counts one
 * more on its member; only the last release frees it. */
static void reentry_counts_on_each_member(void **state)
{
    (void)state;
    char k1[32], k2[32];
    size_t m1, m2;
    two_keys("again", k1, k2, &m1, &m2);
    struct lock_client a;
    client_open(&a, "a");
    struct lock_grant g[2], h[2], one = {.mode = LOCK_MODE_EXCLUSIVE};
    set_grants(g, k1, k2);
    set_grants(h, k1, k2);
    assert_int_equal(a.ops->acquire_all(&a, g, 2, LEASE_MS, 0), LOCK_OK);
    assert_int_equal(a.ops->acquire_all(&a, h, 2, LEASE_MS, 0), LOCK_OK);
    assert_int_equal(a.ops->acquire(&a, k1, strlen(k1), LEASE_MS, 0, &one), LOCK_OK);
    assert_int_equal(holds(m1, k1, "a"), 3);
    assert_int_equal(holds(m2, k2, "a"), 2);
    /* Another client gets neither while any hold is left. */
    struct lock_client b;
    client_open(&b, "b");
    struct lock_grant gb[2];
    set_grants(gb, k1, k2);
    assert_int_equal(a.ops->release(&a, &one), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &h[0]), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &h[1]), LOCK_OK);
    assert_int_equal(holds(m1, k1, "a"), 1);
    assert_int_equal(holds(m2, k2, "a"), 1);
    assert_int_equal(b.ops->acquire_all(&b, gb, 2, LEASE_MS, 0), LOCK_BUSY);
    assert_int_equal(a.ops->release(&a, &g[0]), LOCK_OK);
    assert_int_equal(holds(m1, k1, "a"), 0);
    /* k1 free, k2 still held: b takes k1 and gives it back */
    assert_int_equal(b.ops->acquire_all(&b, gb, 2, LEASE_MS, 0), LOCK_BUSY);
    assert_int_equal(holds(m1, k1, "b"), 0);
    assert_int_equal(a.ops->release(&a, &g[1]), LOCK_OK);
    assert_int_equal(b.ops->acquire_all(&b, gb, 2, LEASE_MS, 0), LOCK_OK);
    assert_int_equal(holds(m1, k1, "b"), 1);
    assert_int_equal(holds(m2, k2, "b"), 1);
    for (int i = 0; i < 2; i++)
        assert_int_equal(b.ops->release(&b, &gb[i]), LOCK_OK);
    b.ops->disconnect(&b);
    a.ops->disconnect(&a);
}

/* (5) The master of the second key killed (by its PID): acquire_all fails
 * within its wait and the first member is not left held; keys on the
 * live masters are still had, and a new client still connects. */
static void master_down_gives_none(void **state)
{
    (void)state;
    char k1[32], k2[32];
    size_t m1, m2;
    two_keys("down", k1, k2, &m1, &m2);
    struct lock_client a;
    client_open(&a, "a");
    assert_true(cluster.srv[m2].pid > 0);
    assert_int_equal(kill(cluster.srv[m2].pid, SIGKILL), 0);
    assert_int_equal(waitpid(cluster.srv[m2].pid, NULL, 0), cluster.srv[m2].pid);
    cluster.srv[m2].pid = 0;

    struct lock_grant g[2];
    set_grants(g, k1, k2);
    uint64_t t0 = lock_now_ms();
    enum lock_result r = a.ops->acquire_all(&a, g, 2, LEASE_MS, 500);
    uint64_t took = lock_now_ms() - t0;
    assert_int_not_equal(r, LOCK_OK);
    if (took > 5000)
        fail_msg("acquire_all took %llu ms with a 500 ms wait", (unsigned long long)took);
    assert_int_equal(holds(m1, k1, "a"), 0);
    redisReply *gone = raw(m1, "EXISTS %s", k1);
    assert_int_equal(gone->integer, 0);
    freeReplyObject(gone);
    assert_true(a.connect_failures >= 1);

    struct lock_client b;
    client_open(&b, "b");
    struct lock_grant one = {.mode = LOCK_MODE_EXCLUSIVE};
    assert_int_equal(b.ops->acquire(&b, k1, strlen(k1), LEASE_MS, 0, &one), LOCK_OK);
    assert_int_equal(holds(m1, k1, "b"), 1);
    assert_int_equal(b.ops->release(&b, &one), LOCK_OK);
    struct lock_grant lone = {.mode = LOCK_MODE_EXCLUSIVE};
    assert_int_not_equal(b.ops->acquire(&b, k2, strlen(k2), LEASE_MS, 0, &lone), LOCK_OK);
    b.ops->disconnect(&b);
    a.ops->disconnect(&a);
}

static int setup(void **state)
{
    char err[512];
    (void)state;
    if (cluster_start(&cluster, "redis", MASTERS, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    for (size_t i = 0; i < MASTERS; i++) {
        snprintf(cfg.endpoints[i].host, sizeof(cfg.endpoints[i].host), "127.0.0.1");
        cfg.endpoints[i].port = cluster.srv[i].port;
    }
    cfg.n_endpoints = MASTERS;
    cfg.connect_timeout_ms = 1000;
    cfg.io_timeout_ms = 1000;
    cfg.retry_min_ms = 5;
    cfg.retry_max_ms = 50;
    signal(SIGPIPE,
           SIG_IGN); /* as the engine does: a write into a killed master must not kill us */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cluster_stop(&cluster, NULL);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(acquire_all_takes_every_member),
        cmocka_unit_test(one_member_held_gives_none),
        cmocka_unit_test(wait_outlasting_the_holder_gets_both),
        cmocka_unit_test(reentry_counts_on_each_member),
        cmocka_unit_test(master_down_gives_none), /* last: it kills a master */
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
