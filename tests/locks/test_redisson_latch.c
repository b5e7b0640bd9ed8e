/* test_redisson_latch.c - redisson-latch against a real redis-server, case
 * by case as RedissonCountDownLatch's source describes it, and the flaw
 * of redisson-latch-naive beside it:
 *
 * - trySetCount sets the count once, publishing 1, and leaves an existing
 *   one alone;
 * - await while the count is above zero waits its time out and says so;
 * - countDown to zero deletes the key and publishes 0, both on Redisson's
 *   names, which a plain subscriber sees;
 * - a waiter blocked in await is woken by the zero message (another
 *   client's countDown, locklab's or one a plain client sends on
 *   Redisson's names), not by its timer;
 * - a latch that does not exist reads 0 and passes at once, and a
 *   countDown of it leaves nothing behind and publishes nothing;
 * - delete removes a latch whatever its count, publishing 1;
 * - redisson-latch-naive passes when its wait runs out, count or not.
 *
 * The server is started by locklab's cluster code on a free loopback port
 * and stopped by its PID at the end; every wait is bounded.
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

#include "algorithms/lock.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "tests/lib/lock_config.h"

#define POLL_MS     10
#define POLL_ROUNDS 300 /* 3 s for a waiter to subscribe */

static struct cluster cluster;
static struct lock_config cfg;

static void client_open(struct lock_client *c, const char *algorithm, const char *owner)
{
    memset(c, 0, sizeof(*c));
    c->ops = lock_find(algorithm);
    assert_non_null(c->ops);
    assert_non_null(c->ops->latch);
    c->cfg = &cfg;
    c->rng = 88172645463325252ULL;
    snprintf(c->owner, sizeof(c->owner), "%s", owner);
    c->owner_len = strlen(owner);
    assert_int_equal(c->ops->connect(c), 0);
}

static redisContext *dial(void)
{
    redisContext *ctx = redisConnect("127.0.0.1", cluster.srv[0].port);
    assert_true(ctx && !ctx->err);
    struct timeval tv = {.tv_sec = 5};
    redisSetTimeout(ctx, tv);
    return ctx;
}

static long long raw_int(const char *fmt, const char *key)
{
    redisContext *ctx = dial();
    redisReply *r = redisCommand(ctx, fmt, key);
    redisFree(ctx);
    assert_non_null(r);
    long long v = r->type == REDIS_REPLY_STRING    ? strtoll(r->str, NULL, 10)
                  : r->type == REDIS_REPLY_INTEGER ? r->integer
                  : r->type == REDIS_REPLY_NIL     ? -1000
                                                   : -9999;
    freeReplyObject(r);
    return v;
}

static enum lock_result set_count(struct lock_client *c, const char *key, uint32_t n)
{
    return c->ops->latch->set_count(c, key, strlen(key), n);
}

static enum lock_result count_down(struct lock_client *c, const char *key)
{
    return c->ops->latch->count_down(c, key, strlen(key));
}

static enum lock_result await_for(struct lock_client *c, const char *key, uint32_t ms)
{
    return c->ops->latch->await(c, key, strlen(key), ms);
}

/* A plain subscriber of the latch's channel, as Redisson names it. */
static redisContext *subscriber(const char *key)
{
    redisContext *ctx = dial();
    redisReply *r = redisCommand(ctx, "SUBSCRIBE redisson_countdownlatch__channel__{%s}", key);
    assert_non_null(r);
    freeReplyObject(r);
    return ctx;
}

/* The next message on ctx's channel: its text into out. */
static void next_message(redisContext *ctx, char *out, size_t len)
{
    redisReply *r = NULL;
    assert_int_equal(redisGetReply(ctx, (void **)&r), REDIS_OK);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 3);
    assert_string_equal(r->element[0]->str, "message");
    snprintf(out, len, "%s", r->element[2]->str);
    freeReplyObject(r);
}

/* (1) trySetCount sets once (publishing 1), then leaves the count be. */
static void set_count_once(void **state)
{
    (void)state;
    struct lock_client a;
    char msg[16];
    client_open(&a, "redisson-latch", "a");
    redisContext *sub = subscriber("latch:1");
    assert_int_equal(set_count(&a, "latch:1", 3), LOCK_OK);
    next_message(sub, msg, sizeof(msg));
    assert_string_equal(msg, "1");
    assert_int_equal(set_count(&a, "latch:1", 5), LOCK_BUSY);
    assert_int_equal(raw_int("GET %s", "latch:1"), 3);
    redisFree(sub);
    a.ops->disconnect(&a);
}

/* (2) Above zero, await waits its time out and does not pass. */
static void await_times_out_above_zero(void **state)
{
    (void)state;
    struct lock_client a;
    client_open(&a, "redisson-latch", "a");
    assert_int_equal(set_count(&a, "latch:2", 2), LOCK_OK);
    assert_int_equal(await_for(&a, "latch:2", 0), LOCK_BUSY);
    uint64_t t0 = lock_now_ms();
    assert_int_equal(await_for(&a, "latch:2", 150), LOCK_BUSY);
    assert_true(lock_now_ms() - t0 >= 150);
    assert_int_equal(raw_int("GET %s", "latch:2"), 2);
    a.ops->disconnect(&a);
}

/* (3) countDown to zero: 2, 1, then the key gone and 0 published. */
static void count_down_to_zero_deletes_and_publishes(void **state)
{
    (void)state;
    struct lock_client a;
    char msg[16];
    client_open(&a, "redisson-latch", "a");
    assert_int_equal(set_count(&a, "latch:3", 2), LOCK_OK);
    redisContext *sub = subscriber("latch:3");
    assert_int_equal(count_down(&a, "latch:3"), LOCK_OK);
    assert_int_equal(raw_int("GET %s", "latch:3"), 1);
    assert_int_equal(count_down(&a, "latch:3"), LOCK_OK);
    assert_int_equal(raw_int("EXISTS %s", "latch:3"), 0);
    next_message(sub, msg, sizeof(msg));
    assert_string_equal(msg, "0");
    assert_int_equal(await_for(&a, "latch:3", 0), LOCK_OK);
    redisFree(sub);
    a.ops->disconnect(&a);
}

struct waiter {
    struct lock_client c;
    const char *key;
    pthread_t thread;
    enum lock_result res;
};

static void *waiter_main(void *arg)
{
    struct waiter *w = arg;
    w->res = await_for(&w->c, w->key, 5000);
    return NULL;
}

static long long subscribers(const char *key)
{
    redisContext *ctx = dial();
    redisReply *r = redisCommand(ctx, "PUBSUB NUMSUB redisson_countdownlatch__channel__{%s}", key);
    redisFree(ctx);
    assert_non_null(r);
    long long n = r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? r->element[1]->integer : -1;
    freeReplyObject(r);
    return n;
}

/* (4) A waiter blocked in await is woken by another client's last
 * countDown: the zero message, long before its 5 s are out. */
static void await_woken_by_zero_message(void **state)
{
    (void)state;
    struct waiter w = {.key = "latch:4"};
    struct lock_client party;
    client_open(&party, "redisson-latch", "party");
    client_open(&w.c, "redisson-latch", "waiter");
    assert_int_equal(set_count(&party, w.key, 1), LOCK_OK);
    assert_int_equal(pthread_create(&w.thread, NULL, waiter_main, &w), 0);
    for (int i = 0; i < POLL_ROUNDS && subscribers(w.key) < 1; i++)
        lock_sleep_ms(POLL_MS);
    assert_int_equal(subscribers(w.key), 1);
    uint64_t t0 = lock_now_ms();
    assert_int_equal(count_down(&party, w.key), LOCK_OK);
    assert_int_equal(pthread_join(w.thread, NULL), 0);
    assert_int_equal(w.res, LOCK_OK);
    assert_true(lock_now_ms() - t0 < 1000);
    assert_int_equal(w.c.woken_by_notice, 1);
    assert_int_equal(w.c.woken_by_timer, 0);
    assert_int_equal(subscribers(w.key), 0); /* it unsubscribed */
    w.c.ops->disconnect(&w.c);
    party.ops->disconnect(&party);
}

/* A countDown as RedissonCountDownLatch.countDownAsync describes it, in
 * this test's own words and not locklab's script: DECR KEYS[1], DEL it at
 * or below 0, and at exactly 0 publish ARGV[1] with the command ARGV[2]
 * on KEYS[2]. */
#define FOREIGN_COUNT_DOWN                                                                         \
    "local c = redis.call('decr', KEYS[1]); "                                                      \
    "if c < 1 then redis.call('del', KEYS[1]); end; "                                              \
    "if c == 0 then redis.call(ARGV[2], KEYS[2], ARGV[1]); end; "                                  \
    "return nil"

/* (4b) The same wake-up with the last countDown sent by a plain client
 * on Redisson's names and messages: locklab's waiter hears a zero it did
 * not publish. */
static void await_woken_by_redissons_count_down(void **state)
{
    (void)state;
    struct waiter w = {.key = "latch:4b"};
    struct lock_client setter;
    client_open(&setter, "redisson-latch", "setter");
    client_open(&w.c, "redisson-latch", "waiter");
    assert_int_equal(set_count(&setter, w.key, 1), LOCK_OK);
    assert_int_equal(pthread_create(&w.thread, NULL, waiter_main, &w), 0);
    for (int i = 0; i < POLL_ROUNDS && subscribers(w.key) < 1; i++)
        lock_sleep_ms(POLL_MS);
    assert_int_equal(subscribers(w.key), 1);
    redisContext *ctx = dial();
    redisReply *r =
        redisCommand(ctx, "EVAL %s 2 %s redisson_countdownlatch__channel__{%s} 0 publish",
                     FOREIGN_COUNT_DOWN, w.key, w.key);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    redisFree(ctx);
    assert_int_equal(pthread_join(w.thread, NULL), 0);
    assert_int_equal(w.res, LOCK_OK);
    assert_int_equal(w.c.woken_by_notice, 1);
    assert_int_equal(raw_int("EXISTS %s", w.key), 0);
    w.c.ops->disconnect(&w.c);
    setter.ops->disconnect(&setter);
}

/* (5) A latch that does not exist reads 0: await passes at once (as
 * Redisson's getCount does; a Redis restarted empty opens every latch),
 * and a countDown of it leaves no key and publishes nothing. */
static void missing_latch_is_open(void **state)
{
    (void)state;
    struct lock_client a;
    client_open(&a, "redisson-latch", "a");
    assert_int_equal(await_for(&a, "latch:5", 5000), LOCK_OK);
    assert_int_equal(a.woken_by_notice + a.woken_by_timer, 0);
    redisContext *sub = subscriber("latch:5");
    assert_int_equal(count_down(&a, "latch:5"), LOCK_OK);
    assert_int_equal(raw_int("EXISTS %s", "latch:5"), 0);
    /* the DECR made -1, deleted with no message: a PING comes back first */
    redisReply *r = redisCommand(sub, "PING");
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_string_equal(r->element[0]->str, "pong");
    freeReplyObject(r);
    redisFree(sub);
    a.ops->disconnect(&a);
}

/* (6) delete: the latch gone whatever its count, the new-count message
 * published; a second delete finds none. */
static void delete_removes_a_set_latch(void **state)
{
    (void)state;
    struct lock_client a;
    char msg[16];
    client_open(&a, "redisson-latch", "a");
    assert_int_equal(set_count(&a, "latch:7", 4), LOCK_OK);
    redisContext *sub = subscriber("latch:7");
    assert_int_equal(a.ops->latch->remove(&a, "latch:7", 7), LOCK_OK);
    assert_int_equal(raw_int("EXISTS %s", "latch:7"), 0);
    next_message(sub, msg, sizeof(msg));
    assert_string_equal(msg, "1");
    assert_int_equal(a.ops->latch->remove(&a, "latch:7", 7), LOCK_BUSY);
    assert_int_equal(set_count(&a, "latch:7", 2), LOCK_OK);
    redisFree(sub);
    a.ops->disconnect(&a);
}

/* (7) redisson-latch-naive on the same names: its wait runs out and it
 * passes, the count still 1. */
static void naive_passes_when_its_wait_runs_out(void **state)
{
    (void)state;
    struct lock_client a;
    client_open(&a, "redisson-latch-naive", "a");
    assert_int_equal(set_count(&a, "latch:6", 1), LOCK_OK);
    uint64_t t0 = lock_now_ms();
    assert_int_equal(await_for(&a, "latch:6", 100), LOCK_OK);
    assert_true(lock_now_ms() - t0 >= 100);
    assert_int_equal(raw_int("GET %s", "latch:6"), 1);
    a.ops->disconnect(&a);
}

static int setup(void **state)
{
    (void)state;
    char err[256];
    if (cluster_start(&cluster, "redis", 1, err, sizeof(err)) < 0) {
        fprintf(stderr, "cannot start redis-server: %s\n", err);
        return -1;
    }
    lock_config_one(&cfg, cluster.srv[0].port);
    signal(SIGPIPE, SIG_IGN);
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
        cmocka_unit_test(set_count_once),
        cmocka_unit_test(await_times_out_above_zero),
        cmocka_unit_test(count_down_to_zero_deletes_and_publishes),
        cmocka_unit_test(await_woken_by_zero_message),
        cmocka_unit_test(await_woken_by_redissons_count_down),
        cmocka_unit_test(missing_latch_is_open),
        cmocka_unit_test(delete_removes_a_set_latch),
        cmocka_unit_test(naive_passes_when_its_wait_runs_out),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
