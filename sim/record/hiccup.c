/* hiccup.c - the host stall meter (hiccup.h).
 *
 * Each round reads the clock, sleeps until one period later and reads it
 * again; the time past the wake-up it asked for is time the process could
 * not run. The stall is logged from the asked wake-up to the late one: a
 * lower bound, as the thread may have been stopped a little earlier. */
#include "sim/record/hiccup.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "sim/record/clock.h"

#define NS_PER_MS 1000000ULL

struct hiccup {
    pthread_t thread;
    atomic_bool stop;
    struct history_buf *buf;
};

static void sleep_until_ns(uint64_t t)
{
    struct timespec ts = {.tv_sec = (time_t)(t / 1000000000u), .tv_nsec = (long)(t % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void *meter(void *arg)
{
    struct hiccup *h = arg;
    while (!atomic_load_explicit(&h->stop, memory_order_relaxed)) {
        uint64_t now = clock_mono_ns(), want = now + HICCUP_PERIOD_MS * NS_PER_MS;
        history_buf_floor(h->buf, now); /* a stall it logs begins at want */
        sleep_until_ns(want);
        uint64_t woke = clock_mono_ns();
        if (woke - want < HICCUP_FLOOR_MS * NS_PER_MS)
            continue;
        struct history_event e = {.t_ns = want,
                                  .end_ns = woke,
                                  .client = HISTORY_HOST,
                                  .key = UINT32_MAX,
                                  .owner = UINT32_MAX,
                                  .type = HT_INFO,
                                  .f = HF_STALL};
        history_append(h->buf, &e); /* a drop is counted by the buffer */
    }
    return NULL;
}

struct hiccup *hiccup_start(struct history_buf *buf)
{
    struct hiccup *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return NULL;
    h->buf = buf;
    atomic_init(&h->stop, false);
    if (pthread_create(&h->thread, NULL, meter, h) != 0) {
        free(h);
        return NULL;
    }
    pthread_setname_np(h->thread, "locklab-stalls");
    return h;
}

void hiccup_stop(struct hiccup *h)
{
    if (h == NULL)
        return;
    atomic_store(&h->stop, true);
    pthread_join(h->thread, NULL);
    history_buf_close(h->buf);
    free(h);
}
