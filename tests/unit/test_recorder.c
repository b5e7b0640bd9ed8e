/* test_recorder.c - the recorder (sim/record/recorder.h): events leave in
 * the history's order as the appenders' floors allow, never before; one
 * that comes after its time has gone out is counted late, not written out
 * of order; a buffer drained while it fills loses nothing.
 *
 * The recorder's thread runs on its own clock, so the tests wait for what
 * it must do (bounded: 5 s) and assert what it may never do at any time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "sim/record/history.h"
#include "sim/record/recorder.h"

#define WAIT_NS (5ULL * 1000000000ULL)

struct seen {
    pthread_mutex_t mu;
    struct history_event ev[64];
    size_t n;
};

/* A recorder_sink, which may change the event: e cannot be const. */
/* cppcheck-suppress constParameter */
static int keep(void *ctx, struct history_event *e)
{
    struct seen *s = ctx;
    pthread_mutex_lock(&s->mu);
    if (s->n < 64)
        s->ev[s->n++] = *e;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static size_t seen_n(struct seen *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->n;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Wait (at most WAIT_NS) until the sink has n events. */
static void wait_for(struct seen *s, size_t n)
{
    uint64_t until = now_ns() + WAIT_NS;
    while (seen_n(s) < n && now_ns() < until) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 2000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(seen_n(s), n);
}

/* Long enough for several rounds: what the sink has not got by then, the
 * recorder held back. */
static void some_rounds(void)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 60000000};
    nanosleep(&ts, NULL);
}

static void add(struct history_buf *b, uint64_t t, uint32_t client, uint8_t arg)
{
    struct history_event e = {.t_ns = t, .client = client, .arg = arg, .type = HT_INFO};
    assert_int_equal(history_append(b, &e), 0);
}

/* A recorder over n new buffers (1 or 2) whose sink keeps the events in
 * s; each buffer first promises floor (0: no promise). */
struct rig {
    struct seen s;
    struct history_buf *b[2];
    size_t n;
    struct recorder *r;
};

static void rig_start(struct rig *g, size_t n, uint64_t floor)
{
    g->s.n = 0;
    pthread_mutex_init(&g->s.mu, NULL);
    g->n = n;
    for (size_t i = 0; i < n; i++) {
        g->b[i] = history_buf_new();
        if (floor)
            history_buf_floor(g->b[i], floor);
    }
    g->r = recorder_start(g->b, n, keep, &g->s);
    assert_non_null(g->r);
}

/* Stops the recorder (its figures in st) and frees the buffers; what the
 * sink kept stays in g->s. */
static void rig_stop(struct rig *g, struct recorder_stats *st)
{
    recorder_stop(g->r, st);
    for (size_t i = 0; i < g->n; i++)
        history_buf_free(g->b[i]);
    pthread_mutex_destroy(&g->s.mu);
}

/* The first n events carry the args want, in that order. */
static void assert_args(const struct history_event *ev, const uint8_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_int_equal(ev[i].arg, want[i]);
}

static void test_order_waits_for_every_floor(void **state)
{
    (void)state;
    struct rig g;
    rig_start(&g, 2, 100);
    struct history_buf **b = g.b;
    /* appended out of its own order, but never under its floor */
    add(b[0], 150, 0, 1);
    add(b[0], 120, 0, 2);
    add(b[1], 120, 1, 3);
    add(b[1], 110, 1, 4);
    some_rounds();
    assert_int_equal(seen_n(&g.s), 0); /* nothing is under both floors (100) */
    history_buf_floor(b[0], 130);
    some_rounds();
    assert_int_equal(seen_n(&g.s), 0); /* b[1] still promises only 100 */
    history_buf_floor(b[1], 125);
    wait_for(&g.s, 3); /* under 125: 110, and the two at 120 (client 0 first) */
    some_rounds();
    assert_int_equal(seen_n(&g.s), 3);
    history_buf_close(b[1]);
    wait_for(&g.s, 3);
    history_buf_close(b[0]);
    wait_for(&g.s, 4);
    struct recorder_stats st;
    rig_stop(&g, &st);
    assert_int_equal(st.events, 4);
    assert_int_equal(st.late, 0);
    assert_int_equal(st.sink_error, 0);
    assert_args(g.s.ev, (const uint8_t[]){4, 2, 3, 1}, 4);
}

/* Ties in time go by client, then buffer, then the order appended: what
 * history_merge gives. */
static void test_ties_as_the_merge_orders_them(void **state)
{
    (void)state;
    struct rig g;
    rig_start(&g, 2, 0);
    add(g.b[1], 50, 7, 1); /* the nemesis's buffer, naming client 7 */
    add(g.b[0], 50, 7, 2);
    add(g.b[0], 50, 7, 3);
    add(g.b[1], 50, 3, 4);
    history_buf_close(g.b[0]);
    history_buf_close(g.b[1]);
    wait_for(&g.s, 4);
    struct recorder_stats st;
    rig_stop(&g, &st);
    const uint8_t want[] = {4, 2, 3, 1};
    assert_args(g.s.ev, want, 4);
    struct history_buf *m[2] = {history_buf_new(), history_buf_new()};
    add(m[1], 50, 7, 1);
    add(m[0], 50, 7, 2);
    add(m[0], 50, 7, 3);
    add(m[1], 50, 3, 4);
    struct history h;
    assert_int_equal(history_merge(&h, m, 2, &(struct history_names){0}), 0);
    assert_args(h.ev, want, 4);
    history_free(&h);
    history_buf_free(m[0]);
    history_buf_free(m[1]);
}

/* An appender that breaks its promise: its event is counted, not written
 * behind one that has gone out. */
static void test_a_late_event_is_counted_not_written(void **state)
{
    (void)state;
    struct rig g;
    rig_start(&g, 1, 0);
    add(g.b[0], 200, 0, 1);
    history_buf_floor(g.b[0], 300);
    wait_for(&g.s, 1);
    add(g.b[0], 250, 0, 2); /* under the floor it gave */
    add(g.b[0], 400, 0, 3);
    history_buf_close(g.b[0]);
    wait_for(&g.s, 2);
    struct recorder_stats st;
    rig_stop(&g, &st);
    assert_int_equal(st.events, 2);
    assert_int_equal(st.late, 1);
    assert_args(g.s.ev, (const uint8_t[]){1, 3}, 2);
}

/* Thousands of events through a buffer drained while it fills (its chunks
 * taken, handed back and filled again): all arrive, in order. */
struct producer {
    struct history_buf *b;
    uint32_t n;
};

static void *produce(void *arg)
{
    struct producer *p = arg;
    for (uint32_t i = 0; i < p->n; i++) {
        struct history_event e = {.t_ns = 1000 + i, .seq = i, .type = HT_INFO};
        history_append(p->b, &e);
        history_buf_floor(p->b, 1001 + i);
        if (i % 512 == 0) {
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 1000000};
            nanosleep(&ts, NULL);
        }
    }
    history_buf_close(p->b);
    return NULL;
}

struct counter {
    uint64_t n, next_seq, out_of_order;
};

static int count(void *ctx, struct history_event *e)
{
    struct counter *c = ctx;
    c->out_of_order += e->seq != c->next_seq;
    c->next_seq = e->seq + 1;
    c->n++;
    return 0;
}

static void test_a_stream_in_order(void **state)
{
    (void)state;
    struct counter c = {0};
    struct history_buf *b[1] = {history_buf_new()};
    struct recorder *r = recorder_start(b, 1, count, &c);
    assert_non_null(r);
    struct producer p = {.b = b[0], .n = 50000};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, produce, &p), 0);
    pthread_join(t, NULL);
    struct recorder_stats st;
    recorder_stop(r, &st);
    assert_int_equal(c.n, 50000);
    assert_int_equal(c.out_of_order, 0);
    assert_int_equal(st.late, 0);
    assert_int_equal(history_buf_len(b[0]), 50000);
    history_buf_free(b[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_waits_for_every_floor),
        cmocka_unit_test(test_ties_as_the_merge_orders_them),
        cmocka_unit_test(test_a_late_event_is_counted_not_written),
        cmocka_unit_test(test_a_stream_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
