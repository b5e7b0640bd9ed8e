/* test_redisson_review.c - the Redisson family's pub/sub wait against a
 * real redis-server, where a review found it wrong: what a waiter does
 * with the pub/sub connection it keeps between waits once the server has
 * closed it (a restart, the server's idle timeout), and once the
 * sentinels name another master; and what an acquire reports when the
 * WAIT after its won try cannot be sent.
 *
 * The server is started by locklab's own cluster code on a free loopback
 * port and stopped by PID at the end. The test closes the clients'
 * connections from the server's side with CLIENT KILL on a connection of
 * its own, as a restart would close them. Two servers run; a sentinel
 * started by the failover test names the first as master, then the
 * second (SENTINEL REMOVE and MONITOR: what a failover tells the clients,
 * without waiting for one).
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

#include "algorithms/lock.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/sentinel_server.h"
#include "sim/fleet/server_kind.h"
#include "tests/lib/lock_config.h"
#include "tests/lib/lock_settings.h"

#define LEASE_MS 30000

static struct cluster cluster;
static struct lock_config cfg;
static int key_counter;
static redisContext *view; /* the test's own connection */

static void client_open(struct lock_client *c, const char *algo, const char *owner,
                        const struct lock_config *conf)
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
        client_open(&holder, algos[i], "holder", &cfg);
        client_open(&waiter, algos[i], "waiter", &cfg);
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

/* Every connection to the server on port whose last command was cmd,
 * closed from the server. How many. */
static long long kill_by_last_command(int port, const char *cmd)
{
    redisContext *ctx = redisConnect("127.0.0.1", port);
    assert_true(ctx && !ctx->err);
    redisReply *list = redisCommand(ctx, "CLIENT LIST");
    assert_non_null(list);
    assert_int_equal(list->type, REDIS_REPLY_STRING);
    char want[64];
    snprintf(want, sizeof(want), " cmd=%s ", cmd);
    long long n = 0;
    for (char *line = list->str; line && *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        if (strstr(line, want) && strncmp(line, "id=", 3) == 0) {
            redisReply *k = redisCommand(ctx, "CLIENT KILL ID %lld", atoll(line + 3));
            assert_non_null(k);
            n += k->type == REDIS_REPLY_INTEGER ? k->integer : 0;
            freeReplyObject(k);
        }
        line = end ? end + 1 : NULL;
    }
    freeReplyObject(list);
    redisFree(ctx);
    return n;
}

static void sentinel_names(int sentinel, int master_port)
{
    redisContext *ctx = redisConnect("127.0.0.1", sentinel);
    assert_true(ctx && !ctx->err);
    redisReply *r = redisCommand(ctx, "SENTINEL REMOVE mymaster");
    assert_non_null(r);
    freeReplyObject(r);
    r = redisCommand(ctx, "SENTINEL MONITOR mymaster 127.0.0.1 %d 1", master_port);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    redisFree(ctx);
    assert_int_equal(sentinel_server_master(sentinel), master_port);
}

/* Behind sentinels, the command connection follows the master they name
 * after a failover; the pub/sub connection kept from an earlier wait must
 * follow it too. Left on the old master (alive, or paused), it listens
 * where no unlock is published: the waiter sleeps to the end of its wait
 * while the lock stands free. */
static void sub_connection_follows_the_master(void **state)
{
    (void)state;
    char err[256];
    size_t at = cluster.n;
    assert_int_equal(
        sentinel_server_start(&cluster, 1, cluster.srv[0].port, 0, 10000, err, sizeof(err)), 0);
    int sentinel = cluster.srv[at].port;
    struct lock_config scfg = cfg;
    scfg.n_sentinels = 1;
    snprintf(scfg.sentinels[0].host, sizeof(scfg.sentinels[0].host), "127.0.0.1");
    scfg.sentinels[0].port = sentinel;
    snprintf(scfg.master_name, sizeof(scfg.master_name), "mymaster");

    static const char *const algos[] = {"redisson", "redisson-fair", "redisson-rw"};
    for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
        sentinel_names(sentinel, cluster.srv[0].port);
        char key[64];
        new_key(key, sizeof(key), "failover");
        struct lock_client old_holder, holder, waiter;
        struct lock_grant go = {0}, gh = {0}, gw = {0};
        client_open(&old_holder, algos[i], "old-holder", &scfg);
        client_open(&waiter, algos[i], "waiter", &scfg);
        /* A wait on the first master: the waiter's pub/sub connection is
         * dialled there, and kept. */
        assert_int_equal(take(&old_holder, key, 0, &go), LOCK_OK);
        assert_int_equal(take(&waiter, key, 100, &gw), LOCK_BUSY);

        /* The failover: the sentinel names the second server, and the
         * waiter's command connection breaks (its pub/sub one does not). */
        sentinel_names(sentinel, cluster.srv[1].port);
        assert_true(kill_by_last_command(cluster.srv[0].port, "evalsha") >= 1);
        lock_sleep_ms(100);

        client_open(&holder, algos[i], "holder", &scfg);
        assert_int_equal(take(&holder, key, 0, &gh), LOCK_OK); /* on the new master */
        struct late_release l = {.c = &holder, .g = &gh, .after_ms = 300};
        pthread_t t;
        uint64_t notices = waiter.woken_by_notice;
        uint64_t t0 = lock_now_ms();
        assert_int_equal(pthread_create(&t, NULL, release_later, &l), 0);
        enum lock_result res = take(&waiter, key, 4000, &gw);
        uint64_t took = lock_now_ms() - t0;
        assert_int_equal(pthread_join(t, NULL), 0);
        assert_int_equal(l.res, LOCK_OK);
        assert_int_equal(res, LOCK_OK);
        if (waiter.woken_by_notice == notices)
            fail_msg("%s: the waiter slept %llu ms to the end of its wait; the unlock "
                     "message on the new master never reached it",
                     algos[i], (unsigned long long)took);
        assert_true(took < 3000);
        assert_int_equal(waiter.ops->release(&waiter, &gw), LOCK_OK);
        old_holder.ops->disconnect(&old_holder);
        holder.ops->disconnect(&holder);
        waiter.ops->disconnect(&waiter);
    }
}

/* A seam that, once armed, lets the first reply through and then has the
 * server close the client's connection and turn new ones away (maxclients
 * reached), as a server killed right after it answered: the answer is
 * read, the next request cannot be sent anywhere. */
struct closing_seam {
    struct lock_seam seam;
    int armed;
};

static void server_cmd(const char *command)
{
    redisReply *r = redisCommand(view, command);
    assert_non_null(r);
    assert_true(r->type != REDIS_REPLY_ERROR);
    freeReplyObject(r);
}

static int closing_wait(void *ctx, struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    struct closing_seam *s = ctx;
    int rc = lock_blocking_seam.wait(NULL, fds, n, deadline_ns);
    if (s->armed && n == 1 && fds[0].events == POLLIN && rc == 1) {
        s->armed = 0;
        /* The answer came slowly (a latency toxic): the next call looks
         * at the idle connection before using it. */
        lock_sleep_ms(60);
        server_cmd("CONFIG SET maxclients 1"); /* the test's own connection is the one */
        server_cmd("CLIENT KILL TYPE normal SKIPME yes");
        lock_sleep_ms(20);
    }
    return rc;
}

static void closing_sleep(void *ctx, uint64_t until_ns, const atomic_int *cancel)
{
    (void)ctx;
    lock_blocking_seam.sleep(NULL, until_ns, cancel);
}

/* With wait_replicas, the won try is followed by WAIT. When the WAIT
 * cannot be sent (the connection went, no other could be had), the lock
 * is already taken on the server: the acquire is an error whose outcome
 * is unknown, never "unsent" (surely not in effect), which the history
 * would record as an acquire that did not happen. */
static void wait_unsent_after_a_won_try_is_unknown(void **state)
{
    (void)state;
    struct lock_config wcfg = cfg;
    CFG_SETTINGS(wcfg, redis, redis_spec)->wait_replicas = 1;
    CFG_SETTINGS(wcfg, redis, redis_spec)->wait_timeout_ms = 100;
    static const char *const algos[] = {"redisson", "redisson-fenced", "redisson-fair"};
    for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
        char key[64];
        new_key(key, sizeof(key), "wait-unsent");
        struct closing_seam seam = {.seam = {.wait = closing_wait, .sleep = closing_sleep}};
        seam.seam.ctx = &seam;
        struct lock_client a;
        struct lock_grant g = {0};
        client_open(&a, algos[i], "taker", &wcfg);
        a.seam = &seam.seam;
        seam.armed = 1;
        enum lock_result res = take(&a, key, 0, &g);
        server_cmd("CONFIG SET maxclients 10000");
        assert_int_equal(seam.armed, 0);
        assert_int_equal(res, LOCK_ERR);
        redisReply *h = redisCommand(view, "HGET %s taker:1", key);
        assert_non_null(h);
        assert_int_equal(h->type, REDIS_REPLY_STRING); /* the lock is ours on the server */
        assert_string_equal(h->str, "1");
        freeReplyObject(h);
        if (a.err == LOCK_ERR_UNSENT || a.err == LOCK_ERR_REFUSED)
            fail_msg("%s: an acquire whose lock stands on the server reported as surely not "
                     "in effect (err %d: %s)",
                     algos[i], a.err, a.errstr);
        a.ops->disconnect(&a);
    }
}

static int setup(void **state)
{
    (void)state;
    char err[256];
    if (cluster_start(&cluster, "redis", 2, err, sizeof(err)) < 0) {
        fprintf(stderr, "cannot start redis-server: %s\n", err);
        return -1;
    }
    lock_config_one(&cfg, cluster.srv[0].port);
    CFG_SETTINGS(cfg, redisson, redisson_spec)->fair_wait_ms = 5000;
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
        cmocka_unit_test(sub_connection_follows_the_master),
        cmocka_unit_test(wait_unsent_after_a_won_try_is_unknown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
