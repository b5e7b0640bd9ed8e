/* test_redis_lock.c - the Redis locks against a real redis-server, read as
 * their public descriptions: acquire, a second acquire is busy, release by
 * a non-owner fails, expiry frees the lock, the watchdog extends it, tokens
 * grow; and redis-naive's deliberate bug, shown for what it is. A release
 * or renew whose answer does not come back (server paused or killed) is
 * LOCK_ERR, never LOST, and failed connects count in connect_failures.
 * Every wait goes through the seam an engine gives (lock.h).
 *
 * The server is started by locklab's own cluster code on a free loopback
 * port and stopped by PID at the end; the tests that pause or kill a server
 * start one of their own, continued and stopped by their teardown.
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

#include "algorithms/lock.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "tests/lib/lock_config.h"

static struct cluster cluster;
static struct lock_config cfg, cfg_token;
static int key_counter;
/* A server a test may pause or kill, and clients aimed at it. */
static struct cluster own;
static struct lock_config own_cfg;

struct pair {
    struct lock_client a, b;
    char key[64];
};

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

/* Two clients of one algorithm on a key no other test uses. */
static struct pair *pair_open(const char *algo, const struct lock_config *conf)
{
    struct pair *p = calloc(1, sizeof(*p));
    assert_non_null(p);
    client_open(&p->a, algo, conf, "owner-a");
    client_open(&p->b, algo, conf, "owner-b");
    snprintf(p->key, sizeof(p->key), "test:%s:%d", algo, key_counter++);
    return p;
}

static void pair_close(struct pair *p)
{
    p->a.ops->disconnect(&p->a);
    p->b.ops->disconnect(&p->b);
    free(p);
}

static enum lock_result take(struct lock_client *c, const char *key, uint32_t ttl, uint32_t wait,
                             struct lock_grant *g)
{
    return c->ops->acquire(c, key, strlen(key), ttl, wait, g);
}

static redisReply *raw(const char *fmt, const char *arg)
{
    redisContext *ctx = redisConnect("127.0.0.1", cluster.srv[0].port);
    assert_true(ctx && !ctx->err);
    redisReply *r = redisCommand(ctx, fmt, arg);
    redisFree(ctx);
    return r;
}

/* Start `own` and aim own_cfg at it, with a short io timeout: a paused
 * server costs each call that much. */
static void own_start(void)
{
    char err[256];
    if (cluster_start(&own, "redis", 1, err, sizeof(err)) < 0)
        fail_msg("cannot start redis-server: %s", err);
    own_cfg = cfg;
    own_cfg.endpoints[0].port = own.srv[0].port;
    own_cfg.connect_timeout_ms = 300;
    own_cfg.io_timeout_ms = 300;
}

/* Per-test teardown, pass or fail: continue `own` if paused, stop it. */
static int own_stop(void **state)
{
    (void)state;
    if (own.n > 0 && own.srv[0].pid > 0)
        kill(own.srv[0].pid, SIGCONT);
    cluster_stop(&own, NULL);
    return 0;
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
    cfg_token = cfg;
    cfg_token.want_token = true;
    signal(SIGPIPE,
           SIG_IGN); /* as the engine does: a write into a killed server must not kill us */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cluster_stop(&cluster, NULL);
    return 0;
}

static void redis_acquire_then_second_is_busy(void **state)
{
    (void)state;
    struct pair *p = pair_open("redis", &cfg);
    struct lock_grant ga, gb;
    assert_int_equal(take(&p->a, p->key, 10000, 0, &ga), LOCK_OK);
    assert_int_equal(ga.token, 0);
    assert_true(ga.validity_ms > 9000 && ga.validity_ms <= 10000);
    assert_int_equal(take(&p->b, p->key, 10000, 0, &gb), LOCK_BUSY);
    redisReply *r = raw("GET %s", p->key);
    assert_string_equal(r->str, "owner-a");
    freeReplyObject(r);
    pair_close(p);
}

static void redis_release_by_non_owner_is_lost(void **state)
{
    (void)state;
    struct pair *p = pair_open("redis", &cfg);
    struct lock_grant ga, gb;
    assert_int_equal(take(&p->a, p->key, 10000, 0, &ga), LOCK_OK);
    /* b presents a's grant: compare-and-delete must refuse, the key stays. */
    assert_int_equal(p->b.ops->release(&p->b, &ga), LOCK_LOST);
    assert_int_equal(take(&p->b, p->key, 10000, 0, &gb), LOCK_BUSY);
    assert_int_equal(p->a.ops->release(&p->a, &ga), LOCK_OK);
    assert_int_equal(take(&p->b, p->key, 10000, 0, &gb), LOCK_OK);
    /* a's second release comes too late: the lock is b's now. */
    assert_int_equal(p->a.ops->release(&p->a, &ga), LOCK_LOST);
    assert_int_equal(p->b.ops->release(&p->b, &gb), LOCK_OK);
    pair_close(p);
}

static void redis_expiry_frees_the_lock(void **state)
{
    (void)state;
    struct pair *p = pair_open("redis", &cfg);
    struct lock_grant ga, gb;
    assert_int_equal(take(&p->a, p->key, 100, 0, &ga), LOCK_OK);
    assert_int_equal(take(&p->b, p->key, 10000, 0, &gb), LOCK_BUSY);
    lock_sleep_ms(150);
    assert_int_equal(take(&p->b, p->key, 10000, 0, &gb), LOCK_OK);
    assert_int_equal(p->a.ops->release(&p->a, &ga), LOCK_LOST);
    pair_close(p);
}

static void redis_wait_gets_the_lock_when_it_expires(void **state)
{
    (void)state;
    struct pair *p = pair_open("redis", &cfg);
    struct lock_grant ga, gb;
    assert_int_equal(take(&p->a, p->key, 200, 0, &ga), LOCK_OK);
    uint64_t t = lock_now_ms();
    assert_int_equal(take(&p->b, p->key, 10000, 3000, &gb), LOCK_OK);
    uint64_t waited = lock_now_ms() - t;
    assert_true(waited >= 150 && waited < 3000);
    pair_close(p);
}

static void redis_wait_elapses_busy(void **state)
{
    (void)state;
    struct pair *p = pair_open("redis", &cfg);
    struct lock_grant ga, gb;
    assert_int_equal(take(&p->a, p->key, 10000, 0, &ga), LOCK_OK);
    uint64_t t = lock_now_ms();
    assert_int_equal(take(&p->b, p->key, 10000, 150, &gb), LOCK_BUSY);
    uint64_t waited = lock_now_ms() - t;
    assert_true(waited >= 150 && waited < 2000);
    pair_close(p);
}

static void redis_tokens_grow_per_key(void **state)
{
    (void)state;
    struct pair *p = pair_open("redis", &cfg_token);
    struct lock_grant g;
    uint64_t last = 0;
    for (int i = 0; i < 5; i++) {
        struct lock_client *c = i % 2 ? &p->b : &p->a;
        assert_int_equal(take(c, p->key, 10000, 0, &g), LOCK_OK);
        assert_int_equal(g.token, last + 1);
        last = g.token;
        assert_int_equal(c->ops->release(c, &g), LOCK_OK);
    }
    /* A busy attempt takes no token. */
    assert_int_equal(take(&p->a, p->key, 10000, 0, &g), LOCK_OK);
    struct lock_grant gb;
    assert_int_equal(take(&p->b, p->key, 10000, 0, &gb), LOCK_BUSY);
    assert_int_equal(p->a.ops->release(&p->a, &g), LOCK_OK);
    assert_int_equal(take(&p->b, p->key, 10000, 0, &gb), LOCK_OK);
    assert_int_equal(gb.token, g.token + 1);
    pair_close(p);
}

static void redis_renew_keeps_it_and_fails_once_lost(void **state)
{
    (void)state;
    struct pair *p = pair_open("redis", &cfg);
    struct lock_grant ga, gb;
    /* Renewed every third of the ttl, as a watchdog does: room for a
     * loaded machine's late wake-ups. */
    assert_int_equal(take(&p->a, p->key, 600, 0, &ga), LOCK_OK);
    for (int i = 0; i < 4; i++) {
        lock_sleep_ms(200);
        assert_int_equal(p->a.ops->renew(&p->a, &ga), LOCK_OK);
    }
    /* 800 ms in, past the first ttl: still a's. */
    assert_int_equal(take(&p->b, p->key, 10000, 0, &gb), LOCK_BUSY);
    lock_sleep_ms(700);
    assert_int_equal(take(&p->b, p->key, 10000, 0, &gb), LOCK_OK);
    assert_int_equal(p->a.ops->renew(&p->a, &ga), LOCK_LOST);
    pair_close(p);
}

static void redis_crash_leaves_the_lock_to_expire(void **state)
{
    (void)state;
    struct pair *p = pair_open("redis", &cfg);
    struct lock_grant ga, gb;
    assert_int_equal(take(&p->a, p->key, 300, 0, &ga), LOCK_OK);
    p->a.ops->crash(&p->a);
    assert_null(p->a.impl);
    assert_int_equal(take(&p->b, p->key, 10000, 0, &gb), LOCK_BUSY);
    lock_sleep_ms(350);
    assert_int_equal(take(&p->b, p->key, 10000, 0, &gb), LOCK_OK);
    p->b.ops->disconnect(&p->b);
    free(p);
}

static void redis_release_survives_script_flush(void **state)
{
    (void)state;
    struct pair *p = pair_open("redis", &cfg);
    struct lock_grant ga;
    assert_int_equal(take(&p->a, p->key, 10000, 0, &ga), LOCK_OK);
    freeReplyObject(raw("SCRIPT FLUSH%s", ""));
    /* EVALSHA answers NOSCRIPT; the client must fall back to EVAL. */
    assert_int_equal(p->a.ops->release(&p->a, &ga), LOCK_OK);
    redisReply *r = raw("EXISTS %s", p->key);
    assert_int_equal(r->integer, 0);
    freeReplyObject(r);
    pair_close(p);
}

/* No per-grant state on the client: one holds many keys at once and gives
 * them back in any order (a scheduled-tasks instance keeps its task locks). */
static void redis_one_client_holds_many_locks(void **state)
{
    (void)state;
    struct pair *p = pair_open("redis", &cfg);
    char keys[20][80];
    struct lock_grant g[20], gb;
    for (int i = 0; i < 20; i++) {
        snprintf(keys[i], sizeof(keys[i]), "%s:%d", p->key, i);
        assert_int_equal(take(&p->a, keys[i], 10000, 0, &g[i]), LOCK_OK);
    }
    for (int k = 0; k < 20; k++) {
        int i = (7 * k + 3) % 20; /* every key once, not in the order taken */
        assert_int_equal(take(&p->b, keys[i], 10000, 0, &gb), LOCK_BUSY);
        assert_int_equal(p->a.ops->release(&p->a, &g[i]), LOCK_OK);
        assert_int_equal(take(&p->b, keys[i], 10000, 0, &gb), LOCK_OK);
    }
    pair_close(p);
}

static void connect_to_closed_port_is_an_io_error(void **state)
{
    (void)state;
    struct lock_config bad = cfg;
    bad.endpoints[0].port = 1; /* nothing listens on port 1 */
    struct lock_client c = {.ops = lock_find("redis"), .cfg = &bad, .rng = 1};
    assert_int_equal(c.ops->connect(&c), -1);
    assert_int_equal(c.err, LOCK_ERR_IO);
    assert_non_null(strstr(c.errstr, "127.0.0.1:1"));
    assert_int_equal(c.connect_failures, 1);
    c.ops->disconnect(&c);
}

/* An engine's seam that counts what passes through it and hands it on to
 * the blocking one; with none_ready, no socket is ever ready before its
 * deadline, as in a loop whose timers always fire first. */
struct counted_seam {
    struct lock_seam seam;
    unsigned waits, sleeps;
    bool none_ready;
};
static struct counted_seam counted;

static int counted_wait(void *ctx, struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    struct counted_seam *s = ctx;
    s->waits++;
    return s->none_ready ? 0 : lock_blocking_seam.wait(NULL, fds, n, deadline_ns);
}

static void counted_sleep(void *ctx, uint64_t until_ns, const atomic_int *cancel)
{
    struct counted_seam *s = ctx;
    s->sleeps++;
    lock_blocking_seam.sleep(NULL, until_ns, cancel);
}

static void seam_client_open(struct lock_client *c, struct counted_seam *s, const char *owner)
{
    *c = (struct lock_client){.ops = lock_find("redis"), .cfg = &cfg, .rng = 1, .seam = &s->seam};
    snprintf(c->owner, sizeof(c->owner), "%s", owner);
    c->owner_len = strlen(owner);
}

/* What the seam of c has counted so far. */
static unsigned waits_of(const struct lock_client *c)
{
    return ((const struct counted_seam *)c->seam->ctx)->waits;
}

static unsigned sleeps_of(const struct lock_client *c)
{
    return ((const struct counted_seam *)c->seam->ctx)->sleeps;
}

/* lock.h's seam: the connect, every answer and the back-off of a busy
 * acquire wait through the engine's functions; and when those never find
 * the socket ready, the client cannot even connect, so nothing it does
 * waits beside them. */
static void redis_waits_only_through_the_seam(void **state)
{
    (void)state;
    counted = (struct counted_seam){
        .seam = {.wait = counted_wait, .sleep = counted_sleep, .ctx = &counted}};
    struct lock_client a, b;
    struct lock_grant ga, gb;
    seam_client_open(&a, &counted, "owner-seam-a");
    seam_client_open(&b, &counted, "owner-seam-b");
    assert_int_equal(a.ops->connect(&a), 0);
    assert_true(waits_of(&a) >= 4); /* the connect, then each of the 3 scripts' loading */
    assert_int_equal(b.ops->connect(&b), 0);
    unsigned before = waits_of(&a);
    assert_int_equal(take(&a, "test:seam", 10000, 0, &ga), LOCK_OK);
    assert_true(waits_of(&a) > before);
    assert_int_equal(sleeps_of(&a), 0);
    assert_int_equal(take(&b, "test:seam", 10000, 30, &gb), LOCK_BUSY);
    assert_true(sleeps_of(&b) > 0);
    before = waits_of(&a);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_true(waits_of(&a) > before);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);

    counted.none_ready = true;
    seam_client_open(&a, &counted, "owner-seam-c");
    assert_int_equal(a.ops->connect(&a), -1);
    assert_int_equal(a.err, LOCK_ERR_IO);
    assert_non_null(strstr(a.errstr, "timed out"));
    assert_int_equal(a.connect_refused, 0);
    a.ops->disconnect(&a);
}

static int own_exists(const char *key)
{
    redisContext *ctx = redisConnect("127.0.0.1", own.srv[0].port);
    assert_true(ctx && !ctx->err);
    redisReply *r = redisCommand(ctx, "EXISTS %s", key);
    assert_non_null(r);
    int n = (int)r->integer;
    freeReplyObject(r);
    redisFree(ctx);
    return n;
}

/* The server paused past the io timeout: the release and the renew got no
 * answer, so they are unknown, not LOST; once continued, the server runs
 * the release it had queued, which is why LOST would have been a lie. */
static void redis_unanswered_release_and_renew_are_unknown(void **state)
{
    (void)state;
    own_start();
    struct lock_client a, n;
    struct lock_grant ga, gn;
    client_open(&a, "redis", &own_cfg, "owner-a");
    client_open(&n, "redis-naive", &own_cfg, "owner-n");
    pid_t pid = own.srv[0].pid;

    assert_int_equal(take(&a, "own:1", 10000, 0, &ga), LOCK_OK);
    assert_int_equal(kill(pid, SIGSTOP), 0);
    enum lock_result r = a.ops->release(&a, &ga);
    assert_int_equal(kill(pid, SIGCONT), 0);
    assert_int_equal(r, LOCK_ERR);
    assert_int_equal(a.err, LOCK_ERR_TIMEOUT);
    assert_true(a.connect_failures >= 1); /* the timed-out connection was dropped */
    int left = 1;
    for (int i = 0; i < 200 && (left = own_exists("own:1")) != 0; i++)
        lock_sleep_ms(10);
    assert_int_equal(left, 0);

    assert_int_equal(take(&a, "own:2", 10000, 0, &ga), LOCK_OK);
    assert_int_equal(kill(pid, SIGSTOP), 0);
    r = a.ops->renew(&a, &ga);
    assert_int_equal(kill(pid, SIGCONT), 0);
    assert_int_equal(r, LOCK_ERR);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK); /* it was ours all along */
    assert_int_equal(a.connect_refused, 0);             /* slow, not gone */

    /* The naive lock calls any DEL released, but not one that got no answer. */
    assert_int_equal(take(&n, "own:3", 10000, 0, &gn), LOCK_OK);
    assert_int_equal(kill(pid, SIGSTOP), 0);
    r = n.ops->release(&n, &gn);
    assert_int_equal(kill(pid, SIGCONT), 0);
    assert_int_equal(r, LOCK_ERR);
    a.ops->disconnect(&a);
    n.ops->disconnect(&n);
}

/* The server killed under a connected client: both acquires fail as
 * errors, the lost connection and the refused reconnect are counted, and
 * the release of a grant from before is unknown, not LOST. */
static void redis_killed_server_is_an_error_and_counted(void **state)
{
    (void)state;
    own_start();
    struct lock_client a;
    struct lock_grant g, g2;
    client_open(&a, "redis", &own_cfg, "owner-a");
    assert_int_equal(a.connect_failures, 0);
    assert_int_equal(take(&a, "own:k", 10000, 0, &g), LOCK_OK);
    kill(own.srv[0].pid, SIGKILL);
    waitpid(own.srv[0].pid, NULL, 0);
    own.srv[0].pid = 0;
    assert_int_equal(take(&a, "own:k2", 10000, 0, &g2), LOCK_ERR);
    assert_int_equal(take(&a, "own:k2", 10000, 0, &g2), LOCK_ERR);
    /* the reconnect was refused: the SET never left, a failure for sure */
    assert_int_equal(a.err, LOCK_ERR_UNSENT);
    assert_true(a.connect_failures >= 1);
    assert_true(a.connect_refused >= 1); /* nobody listening: a server gone */
    uint64_t before = a.connect_failures;
    assert_int_equal(a.ops->release(&a, &g), LOCK_ERR);
    assert_int_equal(a.connect_failures, before + 1); /* one refused reconnect, counted once */
    a.ops->disconnect(&a);
}

static void naive_sets_expiry_and_gives_no_token(void **state)
{
    (void)state;
    struct pair *p = pair_open("redis-naive", &cfg);
    struct lock_grant ga, gb;
    assert_false(p->a.ops->gives_token);
    assert_null(p->a.ops->renew);
    assert_int_equal(take(&p->a, p->key, 5000, 0, &ga), LOCK_OK);
    assert_int_equal(take(&p->b, p->key, 5000, 0, &gb), LOCK_BUSY);
    redisReply *r = raw("PTTL %s", p->key);
    assert_true(r->integer > 0 && r->integer <= 5000);
    freeReplyObject(r);
    pair_close(p);
}

static void naive_release_deletes_someone_elses_lock(void **state)
{
    (void)state;
    struct pair *p = pair_open("redis-naive", &cfg);
    struct lock_grant ga, gb;
    assert_int_equal(take(&p->a, p->key, 100, 0, &ga), LOCK_OK);
    lock_sleep_ms(150); /* a's lock expired while a was still working */
    assert_int_equal(take(&p->b, p->key, 10000, 0, &gb), LOCK_OK);
    /* The bug on purpose: a's plain DEL removes b's lock and calls it released. */
    assert_int_equal(p->a.ops->release(&p->a, &ga), LOCK_OK);
    redisReply *r = raw("EXISTS %s", p->key);
    assert_int_equal(r->integer, 0);
    freeReplyObject(r);
    assert_int_equal(take(&p->a, p->key, 10000, 0, &ga), LOCK_OK); /* while b still "holds" it */
    pair_close(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(redis_acquire_then_second_is_busy),
        cmocka_unit_test(redis_release_by_non_owner_is_lost),
        cmocka_unit_test(redis_expiry_frees_the_lock),
        cmocka_unit_test(redis_wait_gets_the_lock_when_it_expires),
        cmocka_unit_test(redis_wait_elapses_busy),
        cmocka_unit_test(redis_tokens_grow_per_key),
        cmocka_unit_test(redis_renew_keeps_it_and_fails_once_lost),
        cmocka_unit_test(redis_crash_leaves_the_lock_to_expire),
        cmocka_unit_test(redis_release_survives_script_flush),
        cmocka_unit_test(redis_one_client_holds_many_locks),
        cmocka_unit_test(connect_to_closed_port_is_an_io_error),
        cmocka_unit_test(redis_waits_only_through_the_seam),
        cmocka_unit_test_teardown(redis_unanswered_release_and_renew_are_unknown, own_stop),
        cmocka_unit_test_teardown(redis_killed_server_is_an_error_and_counted, own_stop),
        cmocka_unit_test(naive_sets_expiry_and_gives_no_token),
        cmocka_unit_test(naive_release_deletes_someone_elses_lock),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
