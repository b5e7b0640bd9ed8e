/* test_redisson_naive.c - the two unsafe baselines of the shared modes
 * against a real redis-server, each flaw shown at the lock level with no
 * luck involved, beside the Redisson lock it imitates refusing the same
 * sequence:
 *
 * - redisson-rw-naive grants a writer while a reader holds (redisson-rw
 *   keeps it out), yet keeps readers out while its writer holds;
 * - redisson-semaphore-naive grants N+1 permits of N: CLIENT PAUSE WRITE
 *   lets every client's GET through and holds each DECRBY until all of
 *   them have read the same count, the interleaving that breaks it.
 *   redisson-semaphore's check and decrement are one script, held whole
 *   by the same pause, and it grants N.
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

#define LEASE_MS    30000
#define PERMITS     2
#define POLL_MS     10
#define POLL_ROUNDS 500 /* 5 s for the clients to reach the paused server */
#define PAUSE_MS    10000

static struct cluster cluster;
static struct lock_config cfg;

static void client_open(struct lock_client *c, const char *algorithm, const char *owner)
{
    memset(c, 0, sizeof(*c));
    c->ops = lock_find(algorithm);
    assert_non_null(c->ops);
    c->cfg = &cfg;
    c->rng = 88172645463325252ULL;
    snprintf(c->owner, sizeof(c->owner), "%s", owner);
    c->owner_len = strlen(owner);
    assert_int_equal(c->ops->connect(c), 0);
}

static enum lock_result take(struct lock_client *c, const char *key, enum lock_mode mode,
                             struct lock_grant *g)
{
    memset(g, 0, sizeof(*g));
    g->mode = (uint8_t)mode;
    return c->ops->acquire(c, key, strlen(key), LEASE_MS, 0, g);
}

static redisReply *raw(const char *fmt, ...)
{
    redisContext *ctx = redisConnect("127.0.0.1", cluster.srv[0].port);
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

static long long raw_int(const char *fmt, const char *key)
{
    redisReply *r = raw(fmt, key);
    long long v = r->type == REDIS_REPLY_STRING    ? strtoll(r->str, NULL, 10)
                  : r->type == REDIS_REPLY_INTEGER ? r->integer
                                                   : -9999;
    freeReplyObject(r);
    return v;
}

/* A writer and a reader of one key, in the algorithm given; the writer
 * asks (wait 0) while the reader holds: its answer. */
static enum lock_result writer_beside_reader(const char *algorithm, const char *key)
{
    struct lock_client reader, writer;
    struct lock_grant gr, gw;
    client_open(&reader, algorithm, "reader");
    client_open(&writer, algorithm, "writer");
    assert_int_equal(take(&reader, key, LOCK_MODE_SHARED, &gr), LOCK_OK);
    enum lock_result res = take(&writer, key, LOCK_MODE_EXCLUSIVE, &gw);
    if (res == LOCK_OK) {
        /* Its flaw is in the write script alone: while the writer holds,
         * another reader is kept out. */
        struct lock_client late;
        struct lock_grant gl;
        client_open(&late, algorithm, "late");
        assert_int_equal(take(&late, key, LOCK_MODE_SHARED, &gl), LOCK_BUSY);
        late.ops->disconnect(&late);
        redisReply *r = raw("HGET %s mode", key);
        assert_string_equal(r->str, "write");
        freeReplyObject(r);
        assert_int_equal(writer.ops->release(&writer, &gw), LOCK_OK);
        /* The reader is still in: the hash goes back to read mode. */
        r = raw("HGET %s mode", key);
        assert_string_equal(r->str, "read");
        freeReplyObject(r);
    }
    assert_int_equal(reader.ops->release(&reader, &gr), LOCK_OK);
    assert_int_equal(raw_int("EXISTS %s", key), 0);
    reader.ops->disconnect(&reader);
    writer.ops->disconnect(&writer);
    return res;
}

/* (1) redisson-rw-naive lets the writer in beside the reader. */
static void rw_naive_grants_writer_beside_reader(void **state)
{
    (void)state;
    assert_int_equal(writer_beside_reader("redisson-rw-naive", "rwn:1"), LOCK_OK);
}

/* (2) The same sequence on redisson-rw: the writer is refused. */
static void rw_refuses_writer_beside_reader(void **state)
{
    (void)state;
    assert_int_equal(writer_beside_reader("redisson-rw", "rw:1"), LOCK_BUSY);
}

/* (3) Readers of redisson-rw-naive share, and its writers exclude each
 * other: the lock is right everywhere but (1). */
static void rw_naive_readers_share_writers_exclude(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant ga, gb;
    client_open(&a, "redisson-rw-naive", "a");
    client_open(&b, "redisson-rw-naive", "b");
    assert_int_equal(take(&a, "rwn:2", LOCK_MODE_SHARED, &ga), LOCK_OK);
    assert_int_equal(take(&b, "rwn:2", LOCK_MODE_SHARED, &gb), LOCK_OK);
    assert_int_equal(raw_int("HGET %s a:1", "rwn:2"), 1);
    assert_int_equal(raw_int("HGET %s b:1", "rwn:2"), 1);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    assert_int_equal(take(&a, "rwn:3", LOCK_MODE_EXCLUSIVE, &ga), LOCK_OK);
    assert_int_equal(take(&b, "rwn:3", LOCK_MODE_EXCLUSIVE, &gb), LOCK_BUSY);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &ga), LOCK_LOST); /* b never held it */
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

struct taker {
    struct lock_client c;
    const char *key;
    pthread_t thread;
    struct lock_grant g;
    enum lock_result res;
};

static void *taker_main(void *arg)
{
    struct taker *t = arg;
    t->res = take(&t->c, t->key, LOCK_MODE_PERMIT, &t->g);
    return NULL;
}

/* Clients whose last command is cmd and who are blocked (flags b): the
 * ones the pause holds. */
static int held_at(const char *cmd)
{
    redisReply *r = raw("CLIENT LIST");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    char at[48];
    snprintf(at, sizeof(at), " cmd=%s ", cmd);
    int n = 0;
    for (char *line = strtok(r->str, "\n"); line; line = strtok(NULL, "\n"))
        if (strstr(line, " flags=b ") && strstr(line, at))
            n++;
    freeReplyObject(r);
    return n;
}

/* PERMITS + 1 clients of the algorithm ask for a permit of a counter at
 * PERMITS while the server holds every write: once all of them are held
 * at cmd, the writes go on. How many were granted; *left the counter
 * after. Each client first takes and gives back a permit, so a counter
 * set up by the lock itself is there before the pause. */
static int race_for_permits(const char *algorithm, const char *key, const char *cmd,
                            long long *left)
{
    struct taker t[PERMITS + 1];
    for (int i = 0; i <= PERMITS; i++) {
        char owner[16];
        snprintf(owner, sizeof(owner), "p%d", i);
        client_open(&t[i].c, algorithm, owner);
        t[i].key = key;
        assert_int_equal(take(&t[i].c, key, LOCK_MODE_PERMIT, &t[i].g), LOCK_OK);
        assert_int_equal(t[i].c.ops->release(&t[i].c, &t[i].g), LOCK_OK);
    }
    assert_int_equal(raw_int("GET %s", key), PERMITS);

    redisReply *r = raw("CLIENT PAUSE %d WRITE", PAUSE_MS);
    assert_int_equal(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    for (int i = 0; i <= PERMITS; i++)
        assert_int_equal(pthread_create(&t[i].thread, NULL, taker_main, &t[i]), 0);
    int held = 0;
    for (int i = 0; i < POLL_ROUNDS && held < PERMITS + 1; i++) {
        held = held_at(cmd);
        if (held < PERMITS + 1)
            lock_sleep_ms(POLL_MS);
    }
    freeReplyObject(raw("CLIENT UNPAUSE"));
    int granted = 0;
    for (int i = 0; i <= PERMITS; i++) {
        assert_int_equal(pthread_join(t[i].thread, NULL), 0);
        assert_true(t[i].res == LOCK_OK || t[i].res == LOCK_BUSY);
        granted += t[i].res == LOCK_OK;
    }
    assert_int_equal(held, PERMITS + 1);
    *left = raw_int("GET %s", key);
    for (int i = 0; i <= PERMITS; i++) {
        if (t[i].res == LOCK_OK)
            assert_int_equal(t[i].c.ops->release(&t[i].c, &t[i].g), LOCK_OK);
        t[i].c.ops->disconnect(&t[i].c);
    }
    assert_int_equal(raw_int("GET %s", key), PERMITS);
    return granted;
}

/* (4) redisson-semaphore-naive: every client read PERMITS before any
 * DECRBY ran, so all PERMITS + 1 hold, and the counter is below zero. */
static void semaphore_naive_grants_one_too_many(void **state)
{
    (void)state;
    long long left;
    assert_int_equal(race_for_permits("redisson-semaphore-naive", "semn:1", "decrby", &left),
                     PERMITS + 1);
    assert_int_equal(left, -1);
}

/* (5) redisson-semaphore under the same pause: each check-and-take is
 * one script, run one after another once the pause ends; PERMITS hold. */
static void semaphore_grants_permits(void **state)
{
    (void)state;
    long long left;
    assert_int_equal(race_for_permits("redisson-semaphore", "sem:1", "evalsha", &left), PERMITS);
    assert_int_equal(left, 0);
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
    /* Above the wait for the pause to hold every client, so a paused
     * DECRBY is answered, not timed out. */
    cfg.io_timeout_ms = PAUSE_MS;
    cfg.permits = PERMITS;
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
        cmocka_unit_test(rw_naive_grants_writer_beside_reader),
        cmocka_unit_test(rw_refuses_writer_beside_reader),
        cmocka_unit_test(rw_naive_readers_share_writers_exclude),
        cmocka_unit_test(semaphore_naive_grants_one_too_many),
        cmocka_unit_test(semaphore_grants_permits),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
