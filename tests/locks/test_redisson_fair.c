/* test_redisson_fair.c - redisson-fair (Redisson's RFairLock) against a
 * real redis-server: waiters get the lock in the order they asked for it,
 * each woken by a message on its own channel; a waiter that vanishes
 * holds the line up until its deadline and no longer; one whose wait runs
 * out leaves the line and moves those behind it up by its slot; a slot is
 * the wait asked for, or lock.redisson.fair_wait_ms for a wait of 0;
 * re-entries count in the hash. The queue and deadlines are read from the
 * server itself, by Redisson's key names.
 *
 * The server is started by locklab's cluster code on a free loopback port
 * and stopped by its PID at the end. Waiters run in threads of their own,
 * each with its own client; every wait is bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "algorithms/lock.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "tests/lib/lock_config.h"
#include "tests/lib/lock_settings.h"

#define LEASE_MS    30000
#define FAIR_WAIT   1500 /* lock.redisson.fair_wait_ms in these tests */
#define POLL_MS     10
#define POLL_ROUNDS 500 /* 5 s for a waiter to show up in the queue */

static struct cluster cluster;
static struct lock_config cfg;
static int key_counter;

struct waiter {
    struct lock_client c;
    struct lock_config cfg; /* its own, for its cancel flag */
    atomic_int cancel;
    char owner[16];
    const char *key;
    uint32_t wait_ms;
    uint32_t hold_ms;
    pthread_t thread;
    /* out */
    enum lock_result res;
    uint64_t granted_wall_ms;
    atomic_int *next_slot; /* grant order: the n-th grant writes its id to order[n] */
    int *order;
    int id;
};

static uint64_t wall_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void client_open(struct lock_client *c, const struct lock_config *conf, const char *owner)
{
    memset(c, 0, sizeof(*c));
    c->ops = lock_find("redisson-fair");
    assert_non_null(c->ops);
    c->cfg = conf;
    c->rng = 88172645463325252ULL;
    snprintf(c->owner, sizeof(c->owner), "%s", owner);
    c->owner_len = strlen(owner);
    assert_int_equal(c->ops->connect(c), 0);
}

static void next_key(char *key, size_t len)
{
    snprintf(key, len, "fair:%d", key_counter++);
}

static enum lock_result take_for(struct lock_client *c, const char *key, uint32_t lease,
                                 uint32_t wait, struct lock_grant *g)
{
    return c->ops->acquire(c, key, strlen(key), lease, wait, g);
}

static enum lock_result take(struct lock_client *c, const char *key, uint32_t wait,
                             struct lock_grant *g)
{
    return take_for(c, key, LEASE_MS, wait, g);
}

static redisContext *raw_conn(void)
{
    redisContext *ctx = redisConnect("127.0.0.1", cluster.srv[0].port);
    assert_true(ctx && !ctx->err);
    struct timeval tv = {.tv_sec = 5};
    redisSetTimeout(ctx, tv);
    return ctx;
}

static redisReply *raw(const char *fmt, ...)
{
    redisContext *ctx = raw_conn();
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(ctx, fmt, ap);
    va_end(ap);
    redisFree(ctx);
    assert_non_null(r);
    return r;
}

/* The queue of key, as "a:1,b:1" (fields joined by commas). */
static void queue_of(const char *key, char *out, size_t len)
{
    redisReply *r = raw("LRANGE redisson_lock_queue:{%s} 0 -1", key);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < r->elements && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? "," : "", r->element[i]->str);
    freeReplyObject(r);
}

/* A waiter's deadline in the zset, -1 when it has none. */
static long long deadline_of(const char *key, const char *field)
{
    redisReply *r = raw("ZSCORE redisson_lock_timeout:{%s} %s", key, field);
    long long d = r->type == REDIS_REPLY_STRING ? strtoll(r->str, NULL, 10) : -1;
    freeReplyObject(r);
    return d;
}

/* Wait (bounded) until the queue of key reads want. */
static void await_queue(const char *key, const char *want)
{
    char q[256] = "";
    for (int i = 0; i < POLL_ROUNDS; i++) {
        queue_of(key, q, sizeof(q));
        if (strcmp(q, want) == 0)
            return;
        lock_sleep_ms(POLL_MS);
    }
    fail_msg("queue of %s is \"%s\", not \"%s\"", key, q, want);
}

static void *waiter_main(void *arg)
{
    struct waiter *w = arg;
    struct lock_grant g;
    w->res = take(&w->c, w->key, w->wait_ms, &g);
    if (w->res != LOCK_OK)
        return NULL;
    w->granted_wall_ms = wall_now_ms();
    if (w->order)
        w->order[atomic_fetch_add(w->next_slot, 1)] = w->id;
    lock_sleep_ms(w->hold_ms);
    w->c.ops->release(&w->c, &g);
    return NULL;
}

static void waiter_start(struct waiter *w, int id, const char *key, uint32_t wait_ms)
{
    w->cfg = cfg;
    atomic_init(&w->cancel, 0);
    w->cfg.cancel = &w->cancel;
    snprintf(w->owner, sizeof(w->owner), "w%d", id);
    client_open(&w->c, &w->cfg, w->owner);
    w->id = id;
    w->key = key;
    w->wait_ms = wait_ms;
    assert_int_equal(pthread_create(&w->thread, NULL, waiter_main, w), 0);
}

static void waiter_join(struct waiter *w)
{
    assert_int_equal(pthread_join(w->thread, NULL), 0);
    w->c.ops->disconnect(&w->c);
}

/* (1) A holder, then four waiters queued one after another: they get the
 * lock in that order, each woken by the message on its own channel. */
static void grants_follow_request_order(void **state)
{
    (void)state;
    char key[32], want[256] = "";
    next_key(key, sizeof(key));
    struct lock_client h;
    struct lock_grant gh;
    client_open(&h, &cfg, "holder");
    assert_int_equal(take(&h, key, 0, &gh), LOCK_OK);

    struct waiter *w = calloc(4, sizeof(*w));
    assert_non_null(w);
    atomic_int next = 0;
    int order[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++) {
        w[i].order = order;
        w[i].next_slot = &next;
        w[i].hold_ms = 20;
        waiter_start(&w[i], i, key, 20000);
        size_t n = strlen(want);
        snprintf(want + n, sizeof(want) - n, "%sw%d:1", i ? "," : "", i);
        await_queue(key, want);
    }
    assert_int_equal(h.ops->release(&h, &gh), LOCK_OK);
    for (int i = 0; i < 4; i++)
        waiter_join(&w[i]);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(w[i].res, LOCK_OK);
        assert_int_equal(order[i], i);
    }
    /* Everyone served: the line and its deadlines are gone. */
    redisReply *r =
        raw("EXISTS %s redisson_lock_queue:{%s} redisson_lock_timeout:{%s}", key, key, key);
    assert_int_equal(r->integer, 0);
    freeReplyObject(r);
    free(w);
    h.ops->disconnect(&h);
}

/* (2) A queued waiter that vanishes without leaving the line (stopped
 * mid-wait, as an interrupted thread is): after the holder's unlock the
 * lock stays free until the vanished waiter's deadline, then the next in
 * line gets it, which no message told it. */
static void vanished_waiter_stalls_until_its_deadline(void **state)
{
    (void)state;
    char key[32];
    next_key(key, sizeof(key));
    struct lock_client h;
    struct lock_grant gh;
    client_open(&h, &cfg, "holder");
    /* A short lease: the first waiter's deadline is it plus its slot. */
    assert_int_equal(take_for(&h, key, 1000, 0, &gh), LOCK_OK);

    struct waiter *w = calloc(2, sizeof(*w));
    assert_non_null(w);
    waiter_start(&w[0], 0, key, 1500);
    await_queue(key, "w0:1");
    long long d0 = deadline_of(key, "w0:1");
    waiter_start(&w[1], 1, key, 10000);
    await_queue(key, "w0:1,w1:1");
    /* Queued behind w0: w0's deadline plus its own slot. */
    assert_int_equal(deadline_of(key, "w1:1"), d0 + 10000);

    atomic_store(&w[0].cancel, 1);
    waiter_join(&w[0]);
    assert_int_equal(w[0].res, LOCK_BUSY);
    await_queue(key, "w0:1,w1:1"); /* it left its place behind */

    uint64_t released = wall_now_ms();
    assert_true((long long)released < d0);
    assert_int_equal(h.ops->release(&h, &gh), LOCK_OK);
    waiter_join(&w[1]);
    assert_int_equal(w[1].res, LOCK_OK);
    /* Not before w0's deadline; soon after it (w1 asks every 1..20 ms). */
    assert_true((long long)w[1].granted_wall_ms >= d0);
    assert_true((long long)w[1].granted_wall_ms < d0 + 1000);
    assert_true(w[1].c.woken_by_timer > 0);
    free(w);
    h.ops->disconnect(&h);
}

/* (3) Re-entry: the field counts 2, then 1, then the hash is gone. */
static void reentry_counts_in_the_hash(void **state)
{
    (void)state;
    char key[32];
    next_key(key, sizeof(key));
    struct lock_client h, other;
    struct lock_grant g1, g2, go;
    client_open(&h, &cfg, "holder");
    client_open(&other, &cfg, "other");
    assert_int_equal(take(&h, key, 0, &g1), LOCK_OK);
    assert_int_equal(take(&h, key, 0, &g2), LOCK_OK);
    redisReply *r = raw("HGET %s holder:1", key);
    assert_string_equal(r->str, "2");
    freeReplyObject(r);
    assert_int_equal(h.ops->release(&h, &g2), LOCK_OK);
    r = raw("HGET %s holder:1", key);
    assert_string_equal(r->str, "1");
    freeReplyObject(r);
    assert_int_equal(take(&other, key, 0, &go), LOCK_BUSY);
    assert_int_equal(h.ops->release(&h, &g1), LOCK_OK);
    r = raw("EXISTS %s", key);
    assert_int_equal(r->integer, 0);
    freeReplyObject(r);
    assert_int_equal(take(&other, key, 0, &go), LOCK_OK);
    assert_int_equal(other.ops->release(&other, &go), LOCK_OK);
    h.ops->disconnect(&h);
    other.ops->disconnect(&other);
}

/* Read pushes on a subscriber until a message arrives on one of its
 * channels or the 5 s timeout: the channel's name, "" for none. */
static void next_message(redisContext *sub, char *channel, size_t len)
{
    channel[0] = '\0';
    for (int i = 0; i < 8; i++) {
        void *rep = NULL;
        if (redisGetReply(sub, &rep) != REDIS_OK || rep == NULL)
            return;
        redisReply *r = rep;
        bool msg = r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
                   strcmp(r->element[0]->str, "message") == 0;
        if (msg)
            snprintf(channel, len, "%s", r->element[1]->str);
        freeReplyObject(r);
        if (msg)
            return;
    }
}

/* Wait (bounded) until a waiter besides the test listens on channel. */
static void await_subscribed(const char *channel)
{
    long long n = 0;
    for (int i = 0; i < POLL_ROUNDS && n < 2; i++) {
        redisReply *r = raw("PUBSUB NUMSUB %s", channel);
        n = r->elements == 2 ? r->element[1]->integer : 0;
        freeReplyObject(r);
        if (n < 2)
            lock_sleep_ms(POLL_MS);
    }
    assert_int_equal(n, 2);
}

/* (4) The unlock wakes the head alone, by a message on its own channel:
 * none goes to RLock's channel of the name, and the waiter wakes by
 * notice, never by its timer. */
static void waiter_wakes_on_its_own_channel(void **state)
{
    (void)state;
    char key[32], own[128], shared[128], got[128];
    next_key(key, sizeof(key));
    snprintf(own, sizeof(own), "redisson_lock__channel:{%s}:w0:1", key);
    snprintf(shared, sizeof(shared), "redisson_lock__channel:{%s}", key);
    redisContext *sub = raw_conn();
    redisReply *r = redisCommand(sub, "SUBSCRIBE %s %s", shared, own);
    assert_non_null(r);
    freeReplyObject(r);
    void *conf = NULL; /* the second subscription's confirmation */
    assert_int_equal(redisGetReply(sub, &conf), REDIS_OK);
    freeReplyObject(conf);

    struct lock_client h;
    struct lock_grant gh;
    client_open(&h, &cfg, "holder");
    assert_int_equal(take(&h, key, 0, &gh), LOCK_OK);
    struct waiter w = {.hold_ms = 0};
    waiter_start(&w, 0, key, 10000);
    await_queue(key, "w0:1");
    await_subscribed(own);
    /* Past its try after subscribing (one round trip), into its wait. */
    lock_sleep_ms(100);
    assert_int_equal(h.ops->release(&h, &gh), LOCK_OK);
    waiter_join(&w);
    assert_int_equal(w.res, LOCK_OK);
    assert_true(w.c.woken_by_notice > 0);
    assert_int_equal(w.c.woken_by_timer, 0);
    next_message(sub, got, sizeof(got));
    assert_string_equal(got, own);
    redisFree(sub);
    h.ops->disconnect(&h);
}

/* A waiter whose wait runs out leaves the line (acquireFailed) and those
 * behind it move up by its slot, exactly. */
static void gave_up_waiter_moves_the_line_up(void **state)
{
    (void)state;
    char key[32];
    next_key(key, sizeof(key));
    struct lock_client h;
    struct lock_grant gh;
    client_open(&h, &cfg, "holder");
    assert_int_equal(take(&h, key, 0, &gh), LOCK_OK);
    struct waiter *w = calloc(2, sizeof(*w));
    assert_non_null(w);
    waiter_start(&w[0], 0, key, 1000);
    await_queue(key, "w0:1");
    long long d0 = deadline_of(key, "w0:1");
    waiter_start(&w[1], 1, key, 10000);
    await_queue(key, "w0:1,w1:1");
    long long d1 = deadline_of(key, "w1:1");
    assert_int_equal(d1, d0 + 10000);
    waiter_join(&w[0]);
    assert_int_equal(w[0].res, LOCK_BUSY);
    await_queue(key, "w1:1");
    assert_int_equal(deadline_of(key, "w0:1"), -1);
    assert_int_equal(deadline_of(key, "w1:1"), d1 - 1000);
    assert_int_equal(h.ops->release(&h, &gh), LOCK_OK);
    waiter_join(&w[1]);
    assert_int_equal(w[1].res, LOCK_OK);
    free(w);
    h.ops->disconnect(&h);
}

/* Does a MONITOR line show an EVALSHA whose args hold field then slot? */
static bool evalsha_with(const char *line, const char *field_slot)
{
    return strstr(line, "\"EVALSHA\"") != NULL && strstr(line, field_slot) != NULL;
}

/* The slot a waiter takes in line is what goes on the wire: its wait, or
 * fair_wait_ms (Redisson's threadWaitTime) for a wait of 0, in both the
 * acquire and the acquireFailed that follows. */
static void slot_is_the_wait_or_fair_wait(void **state)
{
    (void)state;
    char key[32];
    next_key(key, sizeof(key));
    struct lock_client h, x;
    struct lock_grant gh, gx;
    client_open(&h, &cfg, "holder");
    client_open(&x, &cfg, "x");
    assert_int_equal(take(&h, key, 0, &gh), LOCK_OK);
    redisContext *mon = raw_conn();
    redisReply *r = redisCommand(mon, "MONITOR");
    assert_non_null(r);
    freeReplyObject(r);

    assert_int_equal(take(&x, key, 0, &gx), LOCK_BUSY);
    assert_int_equal(take(&x, key, 300, &gx), LOCK_BUSY);
    char q[64];
    queue_of(key, q, sizeof(q));
    assert_string_equal(q, ""); /* both left the line */

    /* x's scripts: acquire + acquireFailed with slot 1500, then acquire
     * (twice: before and after subscribing, and again after each wait)
     * and acquireFailed with slot 300. */
    int fair = 0, waited = 0;
    char want_fair[32], want_wait[32];
    snprintf(want_fair, sizeof(want_fair), "\"x:1\" \"%d\"", FAIR_WAIT);
    snprintf(want_wait, sizeof(want_wait), "\"x:1\" \"300\"");
    assert_int_equal(h.ops->release(&h, &gh), LOCK_OK); /* a last command to read up to */
    for (int i = 0; i < 200; i++) {
        void *rep = NULL;
        if (redisGetReply(mon, &rep) != REDIS_OK || rep == NULL)
            break;
        redisReply *line = rep;
        bool end = line->type == REDIS_REPLY_STATUS && strstr(line->str, "holder:1") &&
                   strstr(line->str, "\"EVALSHA\"");
        if (line->type == REDIS_REPLY_STATUS) {
            fair += evalsha_with(line->str, want_fair);
            waited += evalsha_with(line->str, want_wait);
        }
        freeReplyObject(line);
        if (end)
            break;
    }
    redisFree(mon);
    assert_int_equal(fair, 2);
    assert_true(waited >= 3); /* at least: try, try after subscribing, acquireFailed */
    h.ops->disconnect(&h);
    x.ops->disconnect(&x);
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
    CFG_SETTINGS(cfg, redisson, redisson_spec)->fair_wait_ms = FAIR_WAIT;
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
        cmocka_unit_test(grants_follow_request_order),
        cmocka_unit_test(vanished_waiter_stalls_until_its_deadline),
        cmocka_unit_test(reentry_counts_in_the_hash),
        cmocka_unit_test(waiter_wakes_on_its_own_channel),
        cmocka_unit_test(gave_up_waiter_moves_the_line_up),
        cmocka_unit_test(slot_is_the_wait_or_fair_wait),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
