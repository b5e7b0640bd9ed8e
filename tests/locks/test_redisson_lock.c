/* test_redisson_lock.c - redisson (RLock) and redisson-fenced (RFencedLock)
 * against a real redis-server, read as Redisson's own source describes
 * them (RedissonLock, RedissonBaseLock, RedissonFencedLock,
 * renewal/LockTask): the hash named as the lock with one field
 * "<client id>:<thread id>" counting re-entries, the unlock message "0" on
 * redisson_lock__channel:{<name>} that wakes a waiter, the holder's PTTL
 * that bounds a wait when nobody publishes, the unlock latch that makes a
 * retried unlock answer as the first did, the watchdog that never brings a
 * lost lock back (Redisson #7272), the fencing counter
 * redisson_lock_token:{<name>}, and WAIT short of its replicas undoing
 * the grant (NoSyncedSlavesException).
 *
 * The server is started by locklab's own cluster code on a free loopback
 * port and stopped by PID at the end. The test looks at the keys with a
 * hiredis connection of its own, and listens on the lock's channel with
 * one more.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <hiredis/hiredis.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "algorithms/lock.h"
#include "algorithms/redisson_wire.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "tests/lib/lock_config.h"
#include "tests/lib/lock_settings.h"

static struct cluster cluster;
static struct lock_config cfg;
static int key_counter;

static void client_open(struct lock_client *c, const char *algo, const struct lock_config *conf,
                        const char *owner)
{
    memset(c, 0, sizeof(*c));
    c->ops = lock_find(algo);
    assert_non_null(c->ops);
    c->cfg = conf;
    c->rng = 88172645463325252ULL;
    snprintf(c->owner, sizeof(c->owner), "%s", owner);
    c->owner_len = strlen(owner);
    assert_int_equal(c->ops->connect(c), 0);
}

static void client_close(struct lock_client *c)
{
    c->ops->disconnect(c);
}

/* A lock name no other test uses. */
static void new_key(char *key, size_t len, const char *what)
{
    snprintf(key, len, "rtest:%s:%d", what, key_counter++);
}

static enum lock_result take(struct lock_client *c, const char *key, uint32_t ttl, uint32_t wait,
                             struct lock_grant *g)
{
    return c->ops->acquire(c, key, strlen(key), ttl, wait, g);
}

/* The test's own view of the server. */
static redisContext *view;

static redisReply *cmd(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(view, fmt, ap);
    va_end(ap);
    assert_non_null(r);
    return r;
}

static long long integer(const char *fmt, const char *arg)
{
    redisReply *r = cmd(fmt, arg);
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* HGETALL key is exactly {field: value}. */
static void assert_hash_is(const char *key, const char *field, const char *value)
{
    redisReply *r = cmd("HGETALL %s", key);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 2);
    assert_string_equal(r->element[0]->str, field);
    assert_string_equal(r->element[1]->str, value);
    freeReplyObject(r);
}

/* How many keys match pattern. */
static size_t keys_matching(const char *pattern)
{
    redisReply *r = cmd("KEYS %s", pattern);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    size_t n = r->elements;
    freeReplyObject(r);
    return n;
}

/* How many times the server has run command name (INFO commandstats). */
static long long calls_of(const char *name)
{
    redisReply *r = cmd("INFO commandstats");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    char needle[64];
    snprintf(needle, sizeof(needle), "cmdstat_%s:calls=", name);
    const char *at = strstr(r->str, needle);
    long long n = at ? atoll(at + strlen(needle)) : 0;
    freeReplyObject(r);
    return n;
}

/* After a release, the lock sends the latch's DEL without waiting for its
 * reply; the client's next call reads past that reply, so once it is back
 * the DEL has run. A renew of a name nobody holds is such a call. */
static void settle(struct lock_client *c)
{
    struct lock_grant g = {.key = "rtest:nothing", .key_len = 13, .ttl_ms = 1000};
    assert_int_equal(c->ops->renew(c, &g), LOCK_LOST);
}

/* A subscriber of the test's own on the lock's channel. */
static redisContext *listen_on(const char *key)
{
    redisContext *s = redisConnect("127.0.0.1", cluster.srv[0].port);
    assert_true(s && !s->err);
    redisReply *r = redisCommand(s, "SUBSCRIBE redisson_lock__channel:{%s}", key);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    freeReplyObject(r);
    return s;
}

/* The next message's payload within ms, or NULL (and the context is then
 * unusable: hiredis keeps a timed-out read as an error). */
static char *next_message(redisContext *s, int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    redisSetTimeout(s, tv);
    void *reply = NULL;
    if (redisGetReply(s, &reply) != REDIS_OK || reply == NULL)
        return NULL;
    redisReply *r = reply;
    char *payload = NULL;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
        strcmp(r->element[0]->str, "message") == 0)
        payload = strdup(r->element[2]->str);
    freeReplyObject(r);
    assert_non_null(payload);
    return payload;
}

static void assert_message(redisContext *s, const char *want)
{
    char *m = next_message(s, 2000);
    assert_non_null(m);
    assert_string_equal(m, want);
    free(m);
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
    signal(SIGPIPE, SIG_IGN); /* as the engine does */
    view = redisConnect("127.0.0.1", cluster.srv[0].port);
    if (view == NULL || view->err) {
        fprintf(stderr, "cannot connect to redis-server\n");
        cluster_stop(&cluster, NULL);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    redisFree(view);
    cluster_stop(&cluster, NULL);
    return 0;
}

/* RedissonLock's tryLockInnerAsync and unlockInnerAsync, read off the
 * hash: one field "<client id>:1" counting re-entries, a lease reset by
 * each re-entry, the unlock message only when the count reaches zero,
 * nil (not ours) once the hash is gone. */
static void hash_counts_reentries(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant g1, g2;
    char key[64];
    new_key(key, sizeof(key), "layout");
    client_open(&a, "redisson", &cfg, "owner-a");
    redisContext *sub = listen_on(key);

    assert_int_equal(take(&a, key, 10000, 0, &g1), LOCK_OK);
    assert_int_equal(g1.token, 0);
    assert_hash_is(key, "owner-a:1", "1");
    long long pttl = integer("PTTL %s", key);
    assert_true(pttl > 9000 && pttl <= 10000);

    lock_sleep_ms(300);
    long long aged = integer("PTTL %s", key);
    assert_true(aged <= 9700);
    assert_int_equal(take(&a, key, 10000, 0, &g2), LOCK_OK);
    assert_hash_is(key, "owner-a:1", "2");
    pttl = integer("PTTL %s", key);
    assert_true(pttl > aged && pttl <= 10000);

    assert_int_equal(a.ops->release(&a, &g2), LOCK_OK);
    assert_hash_is(key, "owner-a:1", "1");
    assert_null(next_message(sub, 150)); /* one hold left: nothing to tell waiters */
    redisFree(sub);
    sub = listen_on(key);

    assert_int_equal(a.ops->release(&a, &g1), LOCK_OK);
    assert_int_equal(integer("EXISTS %s", key), 0);
    assert_message(sub, "0");
    assert_int_equal(a.ops->release(&a, &g1), LOCK_LOST);

    settle(&a);
    char pattern[128];
    snprintf(pattern, sizeof(pattern), "redisson_unlock_latch:{%s}:*", key);
    assert_int_equal(keys_matching(pattern), 0);
    redisFree(sub);
    client_close(&a);
}

/* Another client: busy while held (wait 0), and its release of our lock is
 * nil, not ours, leaving the hash as it was. */
static void other_client_is_busy_and_cannot_release(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant ga, gb;
    char key[64];
    new_key(key, sizeof(key), "other");
    client_open(&a, "redisson", &cfg, "owner-a");
    client_open(&b, "redisson", &cfg, "owner-b");
    assert_int_equal(take(&a, key, 10000, 0, &ga), LOCK_OK);
    assert_int_equal(take(&b, key, 10000, 0, &gb), LOCK_BUSY);
    assert_int_equal(b.woken_by_notice + b.woken_by_timer, 0); /* no wait at all */
    assert_int_equal(b.ops->release(&b, &ga), LOCK_LOST);
    assert_hash_is(key, "owner-a:1", "1");
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_int_equal(take(&b, key, 10000, 0, &gb), LOCK_OK);
    assert_hash_is(key, "owner-b:1", "1");
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    client_close(&a);
    client_close(&b);
}

struct waiter {
    struct lock_client c;
    const char *key;
    uint32_t wait_ms;
    struct lock_grant g;
    enum lock_result res;
    uint64_t done_ms;
    pthread_t th;
};

static void *waiter_main(void *arg)
{
    struct waiter *w = arg;
    w->res = take(&w->c, w->key, 10000, w->wait_ms, &w->g);
    w->done_ms = lock_now_ms();
    return NULL;
}

/* Wait, bounded, until the server has run EVALSHA `target` times. */
static void await_calls(long long target)
{
    long long n = 0;
    for (int i = 0; i < 500 && (n = calls_of("evalsha")) < target; i++)
        lock_sleep_ms(10);
    assert_true(n >= target);
}

/* A waiter sleeps on the channel, not on a timer: A holds for 10 s, B
 * waits up to 3 s and is woken by A's unlock message ~200 ms in. */
static void waiter_wakes_on_the_unlock_message(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant ga;
    char key[64];
    new_key(key, sizeof(key), "notice");
    client_open(&a, "redisson", &cfg, "owner-a");
    struct waiter *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    client_open(&w->c, "redisson", &cfg, "owner-b");
    w->key = key;
    w->wait_ms = 3000;
    redisContext *sub = listen_on(key);

    assert_int_equal(take(&a, key, 10000, 0, &ga), LOCK_OK);
    long long before = calls_of("evalsha");
    uint64_t t0 = lock_now_ms();
    assert_int_equal(pthread_create(&w->th, NULL, waiter_main, w), 0);
    /* B tries, subscribes, tries again (Redisson's order): after its second
     * try it can only be waiting for a message. */
    await_calls(before + 2);
    lock_sleep_ms(200);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    uint64_t released = lock_now_ms();
    assert_int_equal(pthread_join(w->th, NULL), 0);

    assert_int_equal(w->res, LOCK_OK);
    assert_true(w->done_ms >= released);
    assert_true(w->done_ms - t0 < 2500); /* well before A's 10 s ttl and B's 3 s wait */
    assert_int_equal(w->c.woken_by_notice, 1);
    assert_int_equal(w->c.woken_by_timer, 0);
    assert_hash_is(key, "owner-b:1", "1");
    assert_message(sub, "0");

    assert_int_equal(w->c.ops->release(&w->c, &w->g), LOCK_OK);
    assert_message(sub, "0");
    redisFree(sub);
    client_close(&a);
    client_close(&w->c);
    free(w);
}

/* A holder that dies publishes nothing: the waiter's timer, set to the
 * holder's PTTL, wakes it once the hash has expired, not before. While
 * the hash lives, the waiter has tried twice (before and after it
 * subscribed) and no more: it sleeps, it does not poll. In the hash's
 * last millisecond Redis still has the key but answers PTTL 0 (a key
 * expires once the clock is past its time), so the waiter may try again
 * at once a few times then, as Redisson's tryAcquire(0) does: the count
 * of timer wake-ups is at least one, not exactly one. */
static void waiter_of_a_dead_holder_wakes_at_its_ttl(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant ga;
    char key[64];
    new_key(key, sizeof(key), "dead");
    client_open(&a, "redisson", &cfg, "owner-a");
    struct waiter *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    client_open(&w->c, "redisson", &cfg, "owner-b");
    w->key = key;
    w->wait_ms = 4000;

    uint64_t t0 = lock_now_ms();
    assert_int_equal(take(&a, key, 1500, 0, &ga), LOCK_OK);
    a.ops->crash(&a);
    assert_null(a.impl);
    long long before = calls_of("evalsha");
    assert_int_equal(pthread_create(&w->th, NULL, waiter_main, w), 0);
    await_calls(before + 2);
    lock_sleep_ms(500);
    long long tries = calls_of("evalsha") - before;
    /* Read after the count: the hash was still there when it was taken. */
    assert_true(integer("PTTL %s", key) > 0);
    assert_int_equal(tries, 2);
    assert_int_equal(pthread_join(w->th, NULL), 0);

    assert_int_equal(w->res, LOCK_OK);
    assert_true(w->done_ms - t0 >= 1500); /* the hash lived its 1500 ms from a set after t0 */
    assert_true(w->done_ms - t0 < 3500);  /* and the waiter did not sleep out its wait */
    assert_int_equal(w->c.woken_by_notice, 0);
    assert_true(w->c.woken_by_timer >= 1);
    assert_hash_is(key, "owner-b:1", "1");
    assert_int_equal(w->c.ops->release(&w->c, &w->g), LOCK_OK);
    client_close(&w->c);
    free(w);
}

/* A seam that, while it has answers to lose, makes a wait for a reply find
 * nothing after the reply came: the answer is lost though the script ran. */
struct losing_seam {
    struct lock_seam seam;
    unsigned to_lose; /* answers still to lose */
    unsigned lost;
};

static int losing_wait(void *ctx, struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    struct losing_seam *s = ctx;
    int rc = lock_blocking_seam.wait(NULL, fds, n, deadline_ns);
    if (s->to_lose > 0 && n == 1 && fds[0].events == POLLIN && rc == 1) {
        s->to_lose--;
        s->lost++;
        fds[0].revents = 0;
        return 0; /* as if the io timeout had passed first */
    }
    return rc;
}

static void blocking_sleep(void *ctx, uint64_t until_ns, const atomic_int *cancel)
{
    (void)ctx;
    lock_blocking_seam.sleep(NULL, until_ns, cancel);
}

/* An unlock whose answer is lost is not sent again (Redisson runs it "no
 * retry"): LOCK_ERR, ambiguous, with the script run once and one hold
 * fewer on the server. Its latch stays until its lifetime ends and holds
 * the answer, so a re-run of that unlock (Redisson's synced eval re-runs
 * one when the replicas it counted changed) answers it again and
 * touches nothing. */
static void lost_unlock_answer_is_not_sent_again(void **state)
{
    (void)state;
    struct losing_seam seam = {.seam = {.wait = losing_wait, .sleep = blocking_sleep}};
    seam.seam.ctx = &seam;
    struct lock_client a;
    memset(&a, 0, sizeof(a));
    a.ops = lock_find("redisson");
    a.cfg = &cfg;
    a.rng = 7;
    a.seam = &seam.seam;
    snprintf(a.owner, sizeof(a.owner), "owner-latch");
    a.owner_len = strlen(a.owner);
    assert_int_equal(a.ops->connect(&a), 0);
    struct lock_grant g1, g2;
    char key[64], pattern[128], channel[128];
    new_key(key, sizeof(key), "latch");
    snprintf(pattern, sizeof(pattern), "redisson_unlock_latch:{%s}:*", key);
    snprintf(channel, sizeof(channel), "redisson_lock__channel:{%s}", key);
    redisContext *sub = listen_on(key);

    assert_int_equal(take(&a, key, 10000, 0, &g1), LOCK_OK);
    assert_int_equal(take(&a, key, 10000, 0, &g2), LOCK_OK);
    assert_hash_is(key, "owner-latch:1", "2");

    long long before = calls_of("evalsha");
    seam.to_lose++;
    assert_int_equal(a.ops->release(&a, &g2), LOCK_ERR);
    assert_int_not_equal(a.err, LOCK_ERR_UNSENT); /* sent: the outcome is unknown */
    assert_int_equal(seam.lost, 1);
    assert_int_equal(calls_of("evalsha") - before, 1); /* run once, not sent again */
    assert_true(a.connect_failures >= 1);              /* the out-of-step connection went */
    assert_hash_is(key, "owner-latch:1", "1");         /* one hold fewer */

    /* The latch it left answers a re-run of that unlock: 0, nothing touched. */
    redisReply *latch = cmd("KEYS %s", pattern);
    assert_int_equal(latch->type, REDIS_REPLY_ARRAY);
    assert_int_equal(latch->elements, 1);
    redisReply *again = cmd("EVAL %s 3 %s %s %s 0 10000 owner-latch:1 publish 10000",
                            rsn_lock_unlock_script, key, channel, latch->element[0]->str);
    assert_int_equal(again->type, REDIS_REPLY_INTEGER);
    assert_int_equal(again->integer, 0);
    freeReplyObject(again);
    freeReplyObject(latch);
    assert_hash_is(key, "owner-latch:1", "1");

    /* The last hold: freed, "0" published once, its own latch deleted. */
    assert_int_equal(a.ops->release(&a, &g1), LOCK_OK);
    assert_int_equal(integer("EXISTS %s", key), 0);
    assert_message(sub, "0");
    assert_null(next_message(sub, 200));
    settle(&a);
    assert_int_equal(keys_matching(pattern), 1); /* the lost one's, until its lifetime ends */
    redisFree(sub);
    client_close(&a);
}

/* LockTask's renewal: PEXPIRE back to the lease while our field is there;
 * once the hash is gone, LOST, and the key stays gone (Redisson #7272: a
 * renewal must never bring a lock back). */
static void renew_extends_and_never_recreates(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant g;
    char key[64];
    new_key(key, sizeof(key), "renew");
    client_open(&a, "redisson", &cfg, "owner-a");
    assert_int_equal(take(&a, key, 2000, 0, &g), LOCK_OK);
    lock_sleep_ms(400);
    long long aged = integer("PTTL %s", key);
    assert_true(aged > 0 && aged <= 1600);
    assert_int_equal(a.ops->renew(&a, &g), LOCK_OK);
    long long pttl = integer("PTTL %s", key);
    assert_true(pttl > 1600 && pttl <= 2000);
    assert_hash_is(key, "owner-a:1", "1");

    assert_int_equal(integer("DEL %s", key), 1);
    assert_int_equal(a.ops->renew(&a, &g), LOCK_LOST);
    assert_int_equal(integer("EXISTS %s", key), 0);
    assert_int_equal(a.ops->release(&a, &g), LOCK_LOST);
    client_close(&a);
}

/* RedissonFencedLock: every grant INCRs redisson_lock_token:{<name>} and
 * hands out its value; re-entries too. */
static void fenced_tokens_follow_the_counter(void **state)
{
    (void)state;
    struct lock_client a, b;
    char key[64], counter[128];
    new_key(key, sizeof(key), "fenced");
    snprintf(counter, sizeof(counter), "redisson_lock_token:{%s}", key);
    client_open(&a, "redisson-fenced", &cfg, "owner-a");
    client_open(&b, "redisson-fenced", &cfg, "owner-b");
    assert_true(a.ops->gives_token);
    uint64_t last = 0;
    for (int i = 0; i < 4; i++) {
        struct lock_client *c = i % 2 ? &b : &a;
        struct lock_grant g, busy;
        assert_int_equal(take(c, key, 10000, 0, &g), LOCK_OK);
        assert_true(g.token > last);
        last = g.token;
        redisReply *r = cmd("GET %s", counter);
        assert_int_equal(r->type, REDIS_REPLY_STRING);
        assert_int_equal(strtoull(r->str, NULL, 10), g.token);
        freeReplyObject(r);
        struct lock_client *other = c == &a ? &b : &a;
        assert_int_equal(take(other, key, 10000, 0, &busy), LOCK_BUSY);
        assert_int_equal(c->ops->release(c, &g), LOCK_OK);
    }
    assert_int_equal(last, 4); /* a busy try took no token */
    struct lock_grant g1, g2;
    assert_int_equal(take(&a, key, 10000, 0, &g1), LOCK_OK);
    assert_int_equal(take(&a, key, 10000, 0, &g2), LOCK_OK);
    assert_int_equal(g1.token, 5);
    assert_int_equal(g2.token, 6);
    assert_hash_is(key, "owner-a:1", "2");
    assert_int_equal(a.ops->release(&a, &g2), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &g1), LOCK_OK);
    assert_int_equal(integer("EXISTS %s", key), 0);
    client_close(&a);
    client_close(&b);
}

/* RLock and RFencedLock on one name share the hash, so each excludes the
 * other, and either one's unlock wakes the other's waiter. */
static void rlock_and_fenced_lock_exclude_each_other(void **state)
{
    (void)state;
    struct lock_client plain, fenced;
    struct lock_grant gp, gf;
    char key[64];
    new_key(key, sizeof(key), "mixed");
    client_open(&plain, "redisson", &cfg, "owner-p");
    client_open(&fenced, "redisson-fenced", &cfg, "owner-f");

    assert_int_equal(take(&plain, key, 10000, 0, &gp), LOCK_OK);
    assert_int_equal(take(&fenced, key, 10000, 0, &gf), LOCK_BUSY);
    assert_int_equal(plain.ops->release(&plain, &gp), LOCK_OK);
    assert_int_equal(take(&fenced, key, 10000, 0, &gf), LOCK_OK);
    assert_true(gf.token > 0);
    assert_hash_is(key, "owner-f:1", "1");
    assert_int_equal(take(&plain, key, 10000, 0, &gp), LOCK_BUSY);
    assert_int_equal(plain.ops->release(&plain, &gf), LOCK_LOST);
    assert_int_equal(fenced.ops->release(&fenced, &gf), LOCK_OK);
    assert_int_equal(integer("EXISTS %s", key), 0);
    client_close(&plain);
    client_close(&fenced);
}

/* checkLockSyncedSlaves: WAIT for one replica on a lone server gets none,
 * so the grant is undone (the hash unlocked) and the acquire refused. */
static void wait_short_of_replicas_undoes_the_grant(void **state)
{
    (void)state;
    struct lock_config wcfg = cfg;
    CFG_SETTINGS(wcfg, redis, redis_spec)->wait_replicas = 1;
    CFG_SETTINGS(wcfg, redis, redis_spec)->wait_timeout_ms = 100;
    const char *algos[2] = {"redisson", "redisson-fenced"};
    for (int i = 0; i < 2; i++) {
        struct lock_client a, b;
        struct lock_grant g;
        char key[64], pattern[128];
        new_key(key, sizeof(key), "wait");
        snprintf(pattern, sizeof(pattern), "redisson_unlock_latch:{%s}:*", key);
        client_open(&a, algos[i], &wcfg, "owner-a");
        redisContext *sub = listen_on(key);
        uint64_t t0 = lock_now_ms();
        assert_int_equal(take(&a, key, 10000, 0, &g), LOCK_ERR);
        assert_true(lock_now_ms() - t0 >= 100); /* WAIT waited out its timeout */
        assert_int_equal(a.err, LOCK_ERR_REFUSED);
        assert_non_null(strstr(a.errstr, "WAIT"));
        assert_int_equal(integer("EXISTS %s", key), 0);
        assert_message(sub, "0"); /* the undo is an unlock: waiters hear of it */
        settle(&a);
        assert_int_equal(keys_matching(pattern), 0);
        /* Nothing is left that keeps anyone out. */
        client_open(&b, "redisson", &cfg, "owner-b");
        assert_int_equal(take(&b, key, 10000, 0, &g), LOCK_OK);
        assert_int_equal(b.ops->release(&b, &g), LOCK_OK);
        redisFree(sub);
        client_close(&a);
        client_close(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hash_counts_reentries),
        cmocka_unit_test(other_client_is_busy_and_cannot_release),
        cmocka_unit_test(waiter_wakes_on_the_unlock_message),
        cmocka_unit_test(waiter_of_a_dead_holder_wakes_at_its_ttl),
        cmocka_unit_test(lost_unlock_answer_is_not_sent_again),
        cmocka_unit_test(renew_extends_and_never_recreates),
        cmocka_unit_test(fenced_tokens_follow_the_counter),
        cmocka_unit_test(rlock_and_fenced_lock_exclude_each_other),
        cmocka_unit_test(wait_short_of_replicas_undoes_the_grant),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
