/* test_redisson_review.c - the Redisson family's pub/sub wait against a
 * real redis-server, where a review found it wrong: what a waiter does
 * with the pub/sub connection it keeps between waits once the server has
 * closed it (a restart, the server's idle timeout).
 *
 * The server is started by locklab's own cluster code on a free loopback
 * port and stopped by PID at the end. The test closes the clients'
 * connections from the server's side with CLIENT KILL on a connection of
 * its own, as a restart would close them.
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

#include "algorithms/lock.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"

#define LEASE_MS 30000

static struct cluster cluster;
static struct lock_config cfg;
static int key_counter;
static redisContext *view; /* the test's own connection */

static void client_open(struct lock_client *c, const char *algo, const char *owner)
{
    memset(c, 0, sizeof(*c));
    c->ops = lock_find(algo);
    assert_non_null(c->ops);
    c->cfg = &cfg;
    c->rng = 88172645463325252ULL;
    snprintf(c->owner, sizeof(c->owner), "%s", owner);
    c->owner_len = strlen(owner);
    assert_int_equal(c->ops->connect(c), 0);
}

static void new_key(char *key, size_t len, const char *what)
{
    snprintf(key, len, "review:%s:%d", what, key_counter++);
}

static enum lock_result take(struct lock_client *c, const char *key, uint32_t wait,
                             struct lock_grant *g)
{
    return c->ops->acquire(c, key, strlen(key), LEASE_MS, wait, g);
}

/* Close every client connection but the test's own, from the server. */
static void kill_client_connections(void)
{
    redisReply *r = redisCommand(view, "CLIENT KILL TYPE normal SKIPME yes");
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    assert_true(r->integer >= 1);
    freeReplyObject(r);
    lock_sleep_ms(100); /* the FINs reach the clients' sockets */
}

struct late_release {
    struct lock_client *c;
    struct lock_grant *g;
    uint32_t after_ms;
    enum lock_result res;
};

static void *release_later(void *arg)
{
    struct late_release *l = arg;
    lock_sleep_ms(l->after_ms);
    l->res = l->c->ops->release(l->c, l->g);
    return NULL;
}

/* A waiter keeps its pub/sub connection between waits. The server closes
 * it while it sits idle; the next contended acquire must still wait, and
 * be woken by the holder's unlock message, not fail on the dead socket. */
static void sub_connection_closed_while_idle_is_redialled(void **state)
{
    (void)state;
    static const char *const algos[] = {"redisson", "redisson-fair", "redisson-rw"};
    for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
        char key[64];
        new_key(key, sizeof(key), "idle-sub");
        struct lock_client holder, waiter;
        struct lock_grant gh = {0}, gw = {0};
        client_open(&holder, algos[i], "holder");
        client_open(&waiter, algos[i], "waiter");
        assert_int_equal(take(&holder, key, 0, &gh), LOCK_OK);
        /* A wait that runs out: the waiter dials its pub/sub connection,
         * subscribes, and leaves the channel at the end. */
        assert_int_equal(take(&waiter, key, 100, &gw), LOCK_BUSY);

        kill_client_connections();

        struct late_release l = {.c = &holder, .g = &gh, .after_ms = 300};
        pthread_t t;
        uint64_t notices = waiter.woken_by_notice;
        assert_int_equal(pthread_create(&t, NULL, release_later, &l), 0);
        enum lock_result res = take(&waiter, key, 5000, &gw);
        assert_int_equal(pthread_join(t, NULL), 0);
        assert_int_equal(l.res, LOCK_OK);
        if (res != LOCK_OK)
            fail_msg("%s: the acquire after the server closed the idle pub/sub connection: "
                     "result %d, %s",
                     algos[i], (int)res, waiter.errstr);
        assert_true(waiter.woken_by_notice > notices);
        assert_int_equal(waiter.ops->release(&waiter, &gw), LOCK_OK);
        holder.ops->disconnect(&holder);
        waiter.ops->disconnect(&waiter);
    }
}

static int setup(void **state)
{
    (void)state;
    char err[256];
    if (cluster_start(&cluster, "redis", 1, err, sizeof(err)) < 0) {
        fprintf(stderr, "cannot start redis-server: %s\n", err);
        return -1;
    }
    snprintf(cfg.endpoints[0].host, sizeof(cfg.endpoints[0].host), "127.0.0.1");
    cfg.endpoints[0].port = cluster.srv[0].port;
    cfg.n_endpoints = 1;
    cfg.connect_timeout_ms = 2000;
    cfg.io_timeout_ms = 2000;
    cfg.retry_min_ms = 1;
    cfg.retry_max_ms = 20;
    cfg.fair_wait_ms = 5000;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sub_connection_closed_while_idle_is_redialled),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
