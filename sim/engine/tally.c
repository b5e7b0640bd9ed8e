/* tally.c - a thread's measurements (tally.h). */
#include "sim/engine/tally.h"

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
    }
    free(t->tl_ok);
    free(t->tl_fail);
    intervals_log_free(&t->log);
    memset(t, 0, sizeof(*t));
}

/* The open second into the log and the whole-run histograms. A second the
 * log could not take (out of memory) is still in the whole run. */
static void seal(struct tally *t)
{
    for (int op = 0; op < OP_COUNT; op++) {
        (void)intervals_seal(&t->log, t->open_second, op, t->open[op]);
        histogram_move(t->h[op], t->open[op]);
    }
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
    if (t->is_open)
        seal(t);
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
    if (t->is_open)
        seal(t);
    t->is_open = false;
    t->open_from_ns = 0;
}
