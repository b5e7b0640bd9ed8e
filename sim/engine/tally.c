/* tally.c - a thread's measurements, and the sealer that seals their
 * seconds off the thread (tally.h). */
#include "sim/engine/tally.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000ULL

int tally_init(struct tally *t, size_t timeline_len)
{
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < OP_COUNT; i++) {
        t->h[i] = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS);
        t->open[i] = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS);
        if (t->h[i] == NULL || t->open[i] == NULL)
            return -1;
    }
    t->tl_len = timeline_len;
    t->tl_ok = calloc(timeline_len, sizeof(*t->tl_ok));
    t->tl_fail = calloc(timeline_len, sizeof(*t->tl_fail));
    return t->tl_ok && t->tl_fail ? 0 : -1;
}

void tally_destroy(struct tally *t)
{
    for (int i = 0; i < OP_COUNT; i++) {
        histogram_free(t->h[i]);
        histogram_free(t->open[i]);
        histogram_free(t->spare[i]);
    }
    free(t->tl_ok);
    free(t->tl_fail);
    intervals_log_free(&t->log);
    memset(t, 0, sizeof(*t));
}

/* A second's set into the log and the whole-run histograms, and emptied.
 * A second the log could not take (out of memory) is still in the whole
 * run. */
static void seal(struct tally *t, uint32_t second, struct histogram **set)
{
    for (int op = 0; op < OP_COUNT; op++) {
        (void)intervals_seal(&t->log, second, op, set[op]);
        histogram_move(t->h[op], set[op]);
    }
}

/* The handed set sealed, by the sealer or by the tally's own thread; false
 * when the other one holds it (busy) or there is none. */
static bool claim_and_seal(struct tally *t, bool by_sealer)
{
    int full = TALLY_SLOT_FULL;
    if (!atomic_compare_exchange_strong_explicit(&t->slot, &full, TALLY_SLOT_BUSY,
                                                 memory_order_acquire, memory_order_relaxed))
        return false;
    seal(t, t->spare_second, t->spare);
    t->sealed_off += by_sealer; /* before the release: the tally's thread reads it after */
    atomic_store_explicit(&t->slot, TALLY_SLOT_FREE, memory_order_release);
    return true;
}

/* On the tally's thread: the slot free again. A set the sealer has not
 * taken yet is sealed here (it is the earlier second: the log stays in
 * order); one it is sealing is a few microseconds from free. */
static void slot_settle(struct tally *t)
{
    while (atomic_load_explicit(&t->slot, memory_order_acquire) != TALLY_SLOT_FREE)
        if (!claim_and_seal(t, false))
            sched_yield();
}

static void sealer_poke(struct tally_sealer *s);

/* The open second handed to the sealer, the spare set open in its place. */
static void hand_over(struct tally *t)
{
    slot_settle(t);
    for (int op = 0; op < OP_COUNT; op++) {
        struct histogram *h = t->open[op];
        t->open[op] = t->spare[op];
        t->spare[op] = h;
    }
    t->spare_second = t->open_second;
    atomic_store_explicit(&t->slot, TALLY_SLOT_FULL, memory_order_release);
    sealer_poke(t->sealer);
}

void tally_turn(struct tally *t, uint64_t t0_ns, uint64_t end_ns)
{
    /* A sample from before the start line (none is taken there) counts in
     * second 0, as the old history-built intervals never did. */
    uint64_t s = end_ns > t0_ns ? (end_ns - t0_ns) / NS_PER_S : 0;
    if (t->is_open && s <= t->open_second) {
        /* Older than the open second: cannot happen while every sample is
         * recorded right after its clock reading. Should one come, it goes
         * into the open second, so the seconds still add up to the whole
         * run, and is counted (interval_log.late). */
        if (s < t->open_second)
            t->log.late++;
        return;
    }
    if (t->is_open && t->sealer)
        hand_over(t);
    else if (t->is_open)
        seal(t, t->open_second, t->open);
    t->is_open = true;
    t->open_second = (uint32_t)s;
    t->open_from_ns = t0_ns + s * NS_PER_S;
}

void tally_step(struct tally *t, uint64_t t0_ns, uint64_t end_ns, uint64_t ns, int ok)
{
    tally_record(t, t0_ns, OP_STEP, end_ns, ns);
    uint64_t sec = end_ns > t0_ns ? (end_ns - t0_ns) / NS_PER_S : 0;
    size_t at = sec < t->tl_len ? (size_t)sec : t->tl_len - 1;
    if (ok)
        t->tl_ok[at]++;
    else
        t->tl_fail[at]++;
}

void tally_finish(struct tally *t)
{
    slot_settle(t);
    if (t->is_open)
        seal(t, t->open_second, t->open);
    t->is_open = false;
    t->open_from_ns = 0;
}

/* ---- the sealer --------------------------------------------------------- */

struct tally_sealer {
    struct tally *tallies;
    size_t n;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool pending, stop;
};

/* Once a second per tally: a mutex the sealer holds only to sleep. */
static void sealer_poke(struct tally_sealer *s)
{
    pthread_mutex_lock(&s->mu);
    s->pending = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void *sealer_main(void *arg)
{
    struct tally_sealer *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        while (!s->pending && !s->stop)
            pthread_cond_wait(&s->cv, &s->mu);
        s->pending = false;
        pthread_mutex_unlock(&s->mu);
        for (size_t i = 0; i < s->n; i++)
            if (s->tallies[i].sealer == s)
                (void)claim_and_seal(&s->tallies[i], true);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

struct tally_sealer *tally_sealer_start(struct tally *tallies, size_t n)
{
    struct tally_sealer *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->tallies = tallies;
    s->n = n;
    for (size_t i = 0; i < n; i++) {
        struct tally *t = &tallies[i];
        bool ok = true;
        for (int op = 0; op < OP_COUNT; op++)
            if (t->spare[op] == NULL &&
                (t->spare[op] = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS)) ==
                    NULL)
                ok = false;
        atomic_store_explicit(&t->slot, TALLY_SLOT_FREE, memory_order_relaxed);
        t->sealer = ok ? s : NULL; /* without a whole spare set it seals on its own */
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->thread, NULL, sealer_main, s) == 0) {
        pthread_setname_np(s->thread, "locklab-sealer");
        return s;
    }
    for (size_t i = 0; i < n; i++)
        tallies[i].sealer = NULL;
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return NULL;
}

void tally_sealer_stop(struct tally_sealer *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    for (size_t i = 0; i < s->n; i++)
        if (s->tallies[i].sealer == s)
            s->tallies[i].sealer = NULL; /* a set still handed over: tally_finish seals it */
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
