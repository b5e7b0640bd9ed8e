/* availability.c - per fault window: failed, ambiguous and granted
 * acquisitions, the longest no grant, the recovery time.
 *
 * One pass over the history. A "no grant" stretch starts when a client
 * begins waiting while none is (or at a grant, if others still wait) and
 * ends at the next grant or when nobody waits any more; each stretch is
 * clipped to every fault window it meets.
 *
 * A completion counts in every window that covers its instant, and a
 * fault may start at that very nanosecond on a later line: the acquire
 * events of one instant wait until the stream has passed it, so every
 * window that opens at or before them is known when they are counted.
 */
#include "sim/check/availability.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sim/check/spans.h"
#include "sim/faults/fault_spec.h"
#include "sim/record/grow.h"

struct availability {
    struct span_track spans;
    struct fault_availability *out; /* out[i] for spans.fs[i] */
    size_t cap_out;
    uint64_t *invoked; /* per client: its pending invoke (one acquire at a time) */
    size_t n_invoked;
    uint64_t waiting, stretch_from;
    struct history_event *now; /* the acquire events of the current instant */
    size_t n_now, cap_now;
};

static uint64_t clip_len(uint64_t a, uint64_t b, const struct fault_span *f)
{
    uint64_t lo = a > f->from_ns ? a : f->from_ns;
    uint64_t hi = b < f->to_ns ? b : f->to_ns;
    return hi > lo ? hi - lo : 0;
}

static void close_stretch(struct availability *a, uint64_t from, uint64_t to)
{
    for (size_t i = 0; i < a->spans.n; i++) {
        uint64_t len = clip_len(from, to, &a->spans.fs[i]);
        if (len > a->out[i].longest_no_grant_ns)
            a->out[i].longest_no_grant_ns = len;
    }
}

/* A grant inside a window counts there; a failed or ambiguous acquire
 * counts in every window its attempt (invoke_ns to its end) overlapped,
 * since a request sent during a fault may only time out seconds after it.
 * A grant after a window's recovery point ends its recovery. A window
 * still on has to_ns UINT64_MAX: its end is later than this instant. */
static void count_completion(struct availability *a, const struct history_event *e,
                             uint64_t invoke_ns)
{
    for (size_t i = 0; i < a->spans.n; i++) {
        const struct fault_span *f = &a->spans.fs[i];
        struct fault_availability *o = &a->out[i];
        bool inside = e->t_ns >= f->from_ns && e->t_ns <= f->to_ns;
        bool overlapped = e->t_ns >= f->from_ns && invoke_ns <= f->to_ns;
        if (inside && e->type == HT_OK) {
            o->granted++;
            o->granted_within += invoke_ns >= f->from_ns;
        } else if (overlapped && e->type == HT_FAIL)
            o->failed++;
        else if (overlapped && e->type == HT_INFO)
            o->ambiguous++;
        if (e->type == HT_OK && o->recovery_ns == AVAIL_NEVER &&
            o->recovery_from_ns != AVAIL_NEVER && e->t_ns >= o->recovery_from_ns)
            o->recovery_ns = e->t_ns - o->recovery_from_ns;
    }
}

static int acquire_event(struct availability *a, const struct history_event *e)
{
    if (e->type == HT_INVOKE) {
        if (e->client >= a->n_invoked) {
            size_t cap = a->n_invoked;
            if (e->client >= HISTORY_MAX_CLIENTS ||
                array_grow(&a->invoked, &cap, (size_t)e->client + 1, sizeof(*a->invoked)) < 0)
                return -1;
            memset(&a->invoked[a->n_invoked], 0, (cap - a->n_invoked) * sizeof(*a->invoked));
            a->n_invoked = cap;
        }
        a->invoked[e->client] = e->t_ns;
        if (a->waiting++ == 0)
            a->stretch_from = e->t_ns;
        return 0;
    }
    uint64_t inv = e->client < a->n_invoked ? a->invoked[e->client] : 0;
    count_completion(a, e, inv ? inv : e->t_ns);
    if (a->waiting == 0)
        return 0; /* a history cut before its invokes */
    a->waiting--;
    if (e->type == HT_OK || a->waiting == 0) {
        close_stretch(a, a->stretch_from, e->t_ns);
        a->stretch_from = e->t_ns; /* the others wait on from here */
    }
    return 0;
}

/* The instant has passed: its acquire events, in their order. */
static int flush(struct availability *a)
{
    for (size_t i = 0; i < a->n_now; i++)
        if (acquire_event(a, &a->now[i]) < 0)
            return -1;
    a->n_now = 0;
    return 0;
}

struct availability *availability_begin(void)
{
    return calloc(1, sizeof(struct availability));
}

int availability_event(struct availability *a, const struct history_event *e)
{
    if (a->n_now > 0 && e->t_ns > a->now[0].t_ns && flush(a) < 0)
        return -1;
    if (e->f == HF_FAULT) {
        size_t k = span_track_event(&a->spans, e);
        if (k == SPAN_OOM)
            return -1;
        if (k == SIZE_MAX)
            return 0;
        if (array_grow(&a->out, &a->cap_out, a->spans.n, sizeof(*a->out)) < 0)
            return -1;
        const struct fault_span *f = &a->spans.fs[k];
        bool from_start = fault_recovers_from_start(f->type);
        if (e->arg2 == 0)
            a->out[k] = (struct fault_availability){.recovery_ns = AVAIL_NEVER,
                                                    .recovery_from_ns =
                                                        from_start ? f->from_ns : AVAIL_NEVER};
        else if (!from_start)
            a->out[k].recovery_from_ns = f->to_ns;
        return 0;
    }
    if (e->f != HF_ACQUIRE)
        return 0;
    if (array_grow(&a->now, &a->cap_now, a->n_now + 1, sizeof(*a->now)) < 0)
        return -1;
    a->now[a->n_now++] = *e;
    return 0;
}

static void availability_free(struct availability *a)
{
    span_track_free(&a->spans);
    free(a->out);
    free(a->invoked);
    free(a->now);
    free(a);
}

int availability_end(struct availability *a, uint64_t end_ns, struct fault_availability **out,
                     size_t *n)
{
    *out = NULL;
    *n = 0;
    if (flush(a) < 0) {
        availability_free(a);
        return -1;
    }
    if (a->waiting > 0)
        close_stretch(a, a->stretch_from, end_ns);
    *n = a->spans.n;
    *out = a->out;
    a->out = NULL;
    availability_free(a);
    return 0;
}

int availability_compute(const struct history *h, size_t n, struct fault_availability *out)
{
    struct availability *a = availability_begin();
    if (a == NULL)
        return -1;
    for (size_t k = 0; k < h->n; k++)
        if (availability_event(a, &h->ev[k]) < 0) {
            availability_free(a);
            return -1;
        }
    struct fault_availability *got;
    size_t m;
    if (availability_end(a, h->end_mono_ns, &got, &m) < 0)
        return -1;
    memset(out, 0, n * sizeof(*out));
    if (got) /* none when the history has no fault */
        memcpy(out, got, (m < n ? m : n) * sizeof(*out));
    free(got);
    return 0;
}
