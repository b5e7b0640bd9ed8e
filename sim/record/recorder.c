/* recorder.c - the recorder thread (recorder.h).
 *
 * Each round it reads every appender's floor first and then takes what
 * they published: whatever an appender publishes after its floor was read
 * is no earlier than that floor. What it took is sorted into a run; the
 * runs, each in order, are merged through a heap, and every event earlier
 * than the least floor goes to the sink. The rest waits for a later round.
 */
#include "sim/record/recorder.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUND_NS   (10 * 1000000L) /* between rounds: a run's events wait about this long */
#define TAKE_BATCH 1024

/* An event and where it came from: the buffer, and the order taken, which
 * within one buffer is the order appended. */
struct rec_ev {
    struct history_event e;
    uint32_t src;
    uint64_t order;
};

struct run {
    struct rec_ev *ev;
    size_t n, pos;
};

struct recorder {
    struct history_buf *const *bufs;
    size_t n_bufs;
    recorder_sink sink;
    void *ctx;
    pthread_t thread;
    atomic_bool stop;
    struct run *heap; /* runs not yet emptied, a min-heap by their next event */
    size_t n_runs, cap_runs;
    struct history_event take[TAKE_BATCH];
    uint64_t order, out_to; /* everything earlier than out_to has gone out */
    uint64_t held;
    struct recorder_stats st;
    bool failed; /* could not hold what it took: the rest is dropped */
};

static int ev_cmp(const struct rec_ev *a, const struct rec_ev *b)
{
    if (a->e.t_ns != b->e.t_ns)
        return a->e.t_ns < b->e.t_ns ? -1 : 1;
    if (a->e.client != b->e.client)
        return a->e.client < b->e.client ? -1 : 1;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static int ev_qcmp(const void *a, const void *b)
{
    return ev_cmp(a, b);
}

static bool run_less(const struct run *a, const struct run *b)
{
    return ev_cmp(&a->ev[a->pos], &b->ev[b->pos]) < 0;
}

static void swap_runs(struct run *a, struct run *b)
{
    struct run t = *a;
    *a = *b;
    *b = t;
}

static void sift_down(struct recorder *r, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < r->n_runs && run_less(&r->heap[l], &r->heap[m]))
            m = l;
        if (l + 1 < r->n_runs && run_less(&r->heap[l + 1], &r->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        swap_runs(&r->heap[i], &r->heap[m]);
        i = m;
    }
}

static int push_run(struct recorder *r, struct rec_ev *ev, size_t n)
{
    if (r->n_runs == r->cap_runs) {
        size_t cap = r->cap_runs ? 2 * r->cap_runs : 64;
        struct run *h = realloc(r->heap, cap * sizeof(*h));
        if (h == NULL)
            return -1;
        r->heap = h;
        r->cap_runs = cap;
    }
    size_t i = r->n_runs++;
    r->heap[i] = (struct run){.ev = ev, .n = n};
    while (i > 0 && run_less(&r->heap[i], &r->heap[(i - 1) / 2])) {
        swap_runs(&r->heap[i], &r->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    return 0;
}

/* What every buffer published since the last round, as one sorted run. */
static int take_all(struct recorder *r)
{
    size_t n = 0, cap = 0;
    struct rec_ev *run = NULL;
    for (size_t i = 0; i < r->n_bufs; i++) {
        size_t k;
        while ((k = history_buf_take(r->bufs[i], r->take, TAKE_BATCH)) > 0) {
            if (n + k > cap) {
                size_t c = cap ? 2 * cap : 4096;
                while (c < n + k)
                    c *= 2;
                struct rec_ev *p = r->failed ? NULL : realloc(run, c * sizeof(*p));
                if (p == NULL) {
                    r->failed = true; /* taken all the same: the appenders must not grow */
                    r->st.late += k;
                    continue;
                }
                run = p;
                cap = c;
            }
            for (size_t j = 0; j < k; j++) {
                if (r->take[j].t_ns < r->out_to) { /* its place has gone out */
                    r->st.late++;
                    continue;
                }
                run[n++] =
                    (struct rec_ev){.e = r->take[j], .src = (uint32_t)i, .order = r->order++};
            }
        }
    }
    if (n == 0) {
        free(run);
        return 0;
    }
    qsort(run, n, sizeof(*run), ev_qcmp);
    if (push_run(r, run, n) < 0) {
        free(run);
        r->failed = true;
        r->st.late += n;
        return -1;
    }
    r->held += n;
    if (r->held > r->st.pending_peak)
        r->st.pending_peak = r->held;
    return 0;
}

/* Every held event earlier than until, in order, to the sink. */
static void emit_before(struct recorder *r, uint64_t until)
{
    while (r->n_runs > 0) {
        struct run *top = &r->heap[0];
        struct rec_ev *x = &top->ev[top->pos];
        if (x->e.t_ns >= until)
            break;
        if (r->st.sink_error == 0)
            r->st.sink_error = r->sink(r->ctx, &x->e);
        r->st.events++;
        r->held--;
        if (++top->pos == top->n) {
            free(top->ev);
            r->heap[0] = r->heap[--r->n_runs];
        }
        sift_down(r, 0);
    }
    if (until > r->out_to)
        r->out_to = until;
}

/* The least floor, read before anything is taken (recorder.c's header). */
static uint64_t least_floor(const struct recorder *r)
{
    uint64_t w = UINT64_MAX;
    for (size_t i = 0; i < r->n_bufs; i++) {
        uint64_t f = history_buf_floor_of(r->bufs[i]);
        if (f < w)
            w = f;
    }
    return w;
}

static void round_once(struct recorder *r, bool last)
{
    uint64_t until = last ? UINT64_MAX : least_floor(r);
    take_all(r);
    emit_before(r, until);
}

static void *recorder_main(void *arg)
{
    struct recorder *r = arg;
    while (!atomic_load_explicit(&r->stop, memory_order_acquire)) {
        round_once(r, false);
        struct timespec ts = {.tv_sec = 0, .tv_nsec = ROUND_NS};
        nanosleep(&ts, NULL);
    }
    round_once(r, true);
    return NULL;
}

struct recorder *recorder_start(struct history_buf *const *bufs, size_t n, recorder_sink sink,
                                void *ctx)
{
    struct recorder *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    r->bufs = bufs;
    r->n_bufs = n;
    r->sink = sink;
    r->ctx = ctx;
    atomic_init(&r->stop, false);
    int rc = pthread_create(&r->thread, NULL, recorder_main, r);
    if (rc != 0) {
        free(r);
        errno = rc;
        return NULL;
    }
    pthread_setname_np(r->thread, "locklab-record");
    return r;
}

void recorder_stop(struct recorder *r, struct recorder_stats *stats)
{
    if (r == NULL)
        return;
    atomic_store_explicit(&r->stop, true, memory_order_release);
    pthread_join(r->thread, NULL);
    if (stats)
        *stats = r->st;
    for (size_t i = 0; i < r->n_runs; i++)
        free(r->heap[i].ev);
    free(r->heap);
    free(r);
}
