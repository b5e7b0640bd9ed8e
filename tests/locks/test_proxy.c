/* test_proxy.c - locklab's TCP proxy between hiredis and a real
 * redis-server: each toxic does what Toxiproxy's does, on the stream, the
 * endpoint and the group it names, and nothing once it is removed.
 *
 * Times are asserted only as lower bounds (a toxic of 100 ms cannot answer
 * in less), and as loose upper bounds where the point is that a toxic has
 * gone; the machine is shared, so no test depends on being fast.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "sim/proxy/proxy.h"

static struct cluster cluster;
static struct proxy *px;

#define GROUPS 2

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static redisContext *dial(size_t group, uint32_t timeout_ms)
{
    struct lock_endpoint ep = proxy_address(px, 0, group);
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    redisContext *c = redisConnectWithTimeout(ep.host, ep.port, tv);
    assert_non_null(c);
    if (c->err == 0)
        redisSetTimeout(c, tv);
    return c;
}

/* PING's round trip in ms, or -1 when no PONG came. */
static int64_t ping_ms(redisContext *c)
{
    uint64_t t = now_ms();
    redisReply *r = redisCommand(c, "PING");
    bool pong = r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0;
    if (r)
        freeReplyObject(r);
    return pong ? (int64_t)(now_ms() - t) : -1;
}

static struct toxic toxic(const char *kind, unsigned stream)
{
    return (struct toxic){.kind = toxic_kind_find(kind),
                          .stream = stream,
                          .toxicity = 1.0,
                          .endpoints = 1,
                          .group = -1};
}

/* One of t's parameters, by its key in a scenario file. */
static void set(struct toxic *t, const char *key, long long v)
{
    const struct setting_key *k = toxic_param(t->kind, key);
    assert_non_null(k);
    setting_set_int(k, &t->params, v);
}

static int setup(void **state)
{
    (void)state;
    char err[256];
    if (cluster_start(&cluster, "redis", 1, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    struct lock_endpoint up = {.host = "127.0.0.1", .port = cluster.srv[0].port};
    px = proxy_new(&up, 1, 1, GROUPS, 42, err, sizeof(err));
    if (px == NULL || proxy_start(px, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    proxy_free(px);
    cluster_stop(&cluster, NULL);
    return 0;
}

static void passes_bytes_both_ways_without_toxics(void **state)
{
    (void)state;
    redisContext *c = dial(0, 2000);
    assert_int_equal(c->err, 0);
    static char big[200000];
    memset(big, 'x', sizeof(big) - 1);
    redisReply *r = redisCommand(c, "SET proxy:big %s", big);
    assert_non_null(r);
    freeReplyObject(r);
    r = redisCommand(c, "GET proxy:big");
    assert_non_null(r);
    assert_int_equal(r->len, sizeof(big) - 1);
    assert_memory_equal(r->str, big, sizeof(big) - 1);
    freeReplyObject(r);
    assert_true(ping_ms(c) >= 0);
    redisFree(c);
    struct proxy_stats st;
    proxy_stats(px, &st);
    assert_true(st.bytes_up > sizeof(big));
    assert_true(st.bytes_down > sizeof(big));
}

static void latency_delays_each_way_then_goes(void **state)
{
    (void)state;
    redisContext *c = dial(0, 3000);
    assert_true(ping_ms(c) >= 0); /* accepted by the proxy, not still in its backlog */
    struct toxic t = toxic("latency", STREAM_BOTH);
    set(&t, "latency", 100);
    uint64_t links = 0;
    assert_int_equal(proxy_toxic_add(px, 0, &t, &links), 0);
    assert_int_equal(links, 1);
    assert_true(ping_ms(c) >= 200); /* 100 ms up, 100 ms down */
    proxy_toxic_remove(px, 0);
    int64_t after = ping_ms(c);
    assert_true(after >= 0 && after < 100);
    redisFree(c);
}

static void black_hole_swallows_one_group_only(void **state)
{
    (void)state;
    redisContext *held = dial(1, 300), *free_ = dial(0, 2000);
    struct toxic t = toxic("timeout", STREAM_DOWN);
    t.group = 1;
    assert_int_equal(proxy_toxic_add(px, 3, &t, NULL), 0);
    assert_true(ping_ms(free_) >= 0);
    assert_int_equal(ping_ms(held), -1); /* the reply is gone, the request went */
    proxy_toxic_remove(px, 3);
    redisFree(held);
    held = dial(1, 2000);
    assert_true(ping_ms(held) >= 0); /* a new connection passes again */
    redisFree(held);
    redisFree(free_);
}

static void hold_delivers_when_it_ends(void **state)
{
    (void)state;
    redisContext *c = dial(1, 3000);
    struct toxic t = toxic("hold", STREAM_BOTH);
    t.group = 1;
    assert_int_equal(proxy_toxic_add(px, 5, &t, NULL), 0);
    redisAppendCommand(c, "PING");
    int done = 0;
    redisBufferWrite(c, &done);
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 300000000};
    nanosleep(&pause, NULL);
    uint64_t t0 = now_ms();
    proxy_toxic_remove(px, 5);
    void *reply = NULL;
    assert_int_equal(redisGetReply(c, &reply), REDIS_OK); /* nothing lost */
    assert_string_equal(((redisReply *)reply)->str, "PONG");
    assert_true(now_ms() - t0 < 1000);
    freeReplyObject(reply);
    redisFree(c);
}

static void reset_peer_resets(void **state)
{
    (void)state;
    redisContext *c = dial(0, 2000);
    struct toxic t = toxic("reset_peer", STREAM_BOTH);
    set(&t, "timeout", 50);
    assert_int_equal(proxy_toxic_add(px, 7, &t, NULL), 0);
    struct timespec wait = {.tv_sec = 0, .tv_nsec = 200000000};
    nanosleep(&wait, NULL);
    assert_int_equal(ping_ms(c), -1);
    assert_non_null(strstr(c->errstr, "reset"));
    proxy_toxic_remove(px, 7);
    redisFree(c);
}

static void limit_data_closes_after_its_bytes(void **state)
{
    (void)state;
    redisContext *c = dial(0, 2000);
    struct toxic t = toxic("limit_data", STREAM_DOWN);
    set(&t, "bytes", 7 + 7); /* two "+PONG\r\n" */
    assert_int_equal(proxy_toxic_add(px, 9, &t, NULL), 0);
    assert_true(ping_ms(c) >= 0);
    assert_true(ping_ms(c) >= 0);
    assert_int_equal(ping_ms(c), -1);
    proxy_toxic_remove(px, 9);
    redisFree(c);
}

/* Toxiproxy's limit_data with 0 bytes closes at the first byte. */
static void limit_data_of_zero_lets_nothing_through(void **state)
{
    (void)state;
    redisContext *c = dial(0, 2000);
    assert_true(ping_ms(c) >= 0);
    struct toxic t = toxic("limit_data", STREAM_UP);
    set(&t, "bytes", 0);
    assert_int_equal(proxy_toxic_add(px, 10, &t, NULL), 0);
    assert_int_equal(ping_ms(c), -1);
    proxy_toxic_remove(px, 10);
    redisFree(c);
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* A reply its client does not read, while some toxic is in force
 * elsewhere: the proxy waits for the socket to drain (EPOLLOUT), it does
 * not spin. Over one idle second this process may use a small share of a
 * core, never most of it. */
static void a_full_client_does_not_spin_the_loop(void **state)
{
    (void)state;
    redisContext *c = dial(0, 5000);
    static char big[32000000];
    memset(big, 'z', sizeof(big) - 1);
    redisReply *r = redisCommand(c, "SET proxy:huge %s", big);
    assert_non_null(r);
    freeReplyObject(r);
    struct toxic t = toxic("latency", STREAM_BOTH);
    set(&t, "latency", 1);
    t.group = 1; /* not this client's group: only to make the loop keep time */
    assert_int_equal(proxy_toxic_add(px, 12, &t, NULL), 0);
    redisAppendCommand(c, "GET proxy:huge");
    int done = 0;
    redisBufferWrite(c, &done);
    double before = cpu_s();
    struct timespec second = {.tv_sec = 1, .tv_nsec = 0};
    nanosleep(&second, NULL);
    double used = cpu_s() - before;
    void *reply = NULL;
    assert_int_equal(redisGetReply(c, &reply), REDIS_OK);
    assert_int_equal(((redisReply *)reply)->len, sizeof(big) - 1);
    freeReplyObject(reply);
    proxy_toxic_remove(px, 12);
    redisFree(c);
    if (used > 0.5)
        fail_msg("the proxy used %.2f s of CPU in an idle second", used);
}

static void down_refuses_then_listens_again(void **state)
{
    (void)state;
    redisContext *open_ = dial(0, 2000);
    assert_true(ping_ms(open_) >= 0); /* accepted by the proxy, not still in its backlog */
    struct toxic t = toxic("down", STREAM_BOTH);
    uint64_t links = 0;
    assert_int_equal(proxy_toxic_add(px, 11, &t, &links), 0);
    assert_true(links >= 1);
    assert_int_equal(ping_ms(open_), -1); /* dropped */
    redisContext *c = dial(0, 2000);
    assert_int_not_equal(c->err, 0);
    assert_non_null(strstr(c->errstr, "refused"));
    redisFree(c);
    proxy_toxic_remove(px, 11);
    c = dial(0, 2000);
    assert_int_equal(c->err, 0);
    assert_true(ping_ms(c) >= 0);
    redisFree(c);
    redisFree(open_);
}

static void bandwidth_and_slicer_shape_a_reply(void **state)
{
    (void)state;
    redisContext *c = dial(0, 5000);
    static char val[50000];
    memset(val, 'y', sizeof(val) - 1);
    redisReply *r = redisCommand(c, "SET proxy:val %s", val);
    freeReplyObject(r);
    struct toxic bw = toxic("bandwidth", STREAM_DOWN);
    set(&bw, "rate", 100); /* 50 KB in about 0.5 s */
    struct toxic sl = toxic("slicer", STREAM_DOWN);
    set(&sl, "average_size", 64);
    set(&sl, "size_variation", 32);
    set(&sl, "delay", 10);
    assert_int_equal(proxy_toxic_add(px, 13, &bw, NULL), 0);
    assert_int_equal(proxy_toxic_add(px, 14, &sl, NULL), 0);
    uint64_t t0 = now_ms();
    r = redisCommand(c, "GET proxy:val");
    uint64_t took = now_ms() - t0;
    assert_non_null(r);
    assert_int_equal(r->len, sizeof(val) - 1);
    assert_memory_equal(r->str, val, sizeof(val) - 1);
    freeReplyObject(r);
    assert_true(took >= 450);
    proxy_toxic_remove(px, 13);
    proxy_toxic_remove(px, 14);
    redisFree(c);
}

static void toxicity_zero_touches_no_connection(void **state)
{
    (void)state;
    redisContext *c = dial(0, 300);
    struct toxic t = toxic("timeout", STREAM_BOTH);
    t.toxicity = 0.0;
    uint64_t links = 99;
    assert_int_equal(proxy_toxic_add(px, 15, &t, &links), 0);
    assert_int_equal(links, 0);
    assert_true(ping_ms(c) >= 0);
    assert_int_equal(proxy_toxic_add(px, 15, &t, NULL), -1); /* the id is taken */
    proxy_toxic_remove(px, 15);
    redisFree(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(passes_bytes_both_ways_without_toxics),
        cmocka_unit_test(latency_delays_each_way_then_goes),
        cmocka_unit_test(black_hole_swallows_one_group_only),
        cmocka_unit_test(hold_delivers_when_it_ends),
        cmocka_unit_test(reset_peer_resets),
        cmocka_unit_test(limit_data_closes_after_its_bytes),
        cmocka_unit_test(limit_data_of_zero_lets_nothing_through),
        cmocka_unit_test(a_full_client_does_not_spin_the_loop),
        cmocka_unit_test(down_refuses_then_listens_again),
        cmocka_unit_test(bandwidth_and_slicer_shape_a_reply),
        cmocka_unit_test(toxicity_zero_touches_no_connection),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
