/* availability.c - per fault window: failed, ambiguous and granted
 * acquisitions, the longest wait with no grant, the recovery time.
 *
 * One pass over the history. A "no grant" stretch starts when a client
 * begins waiting while none is (or at a grant, if others still wait) and
 * ends at the next grant or when nobody waits any more; each stretch is
 * clipped to every fault window it meets.
 */
#include "sim/check/availability.h"

#include <stdlib.h>
#include <string.h>

#include "sim/scenario/scenario.h"

static uint64_t clip_len(uint64_t a, uint64_t b, const struct fault_span *f)
{
    uint64_t lo = a > f->from_ns ? a : f->from_ns;
    uint64_t hi = b < f->to_ns ? b : f->to_ns;
    return hi > lo ? hi - lo : 0;
}

static void close_stretch(const struct fault_span *spans, size_t n, struct fault_availability *out,
                          uint64_t from, uint64_t to)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t len = clip_len(from, to, &spans[i]);
        if (len > out[i].longest_no_grant_ns)
            out[i].longest_no_grant_ns = len;
    }
}

/* A grant inside a window counts there; a failed or ambiguous acquire
 * counts in every window its attempt (invoke_ns to its end) overlapped,
 * since a request sent during a fault may only time out seconds after it.
 * A grant after a window's recovery point ends its recovery. */
static void count_completion(const struct history_event *e, uint64_t invoke_ns,
                             const struct fault_span *spans, size_t n,
                             struct fault_availability *out)
{
    for (size_t i = 0; i < n; i++) {
        const struct fault_span *f = &spans[i];
        bool inside = e->t_ns >= f->from_ns && e->t_ns <= f->to_ns;
        bool overlapped = e->t_ns >= f->from_ns && invoke_ns <= f->to_ns;
        if (inside && e->type == HT_OK) {
            out[i].granted++;
            out[i].granted_within += invoke_ns >= f->from_ns;
        } else if (overlapped && e->type == HT_FAIL)
            out[i].failed++;
        else if (overlapped && e->type == HT_INFO)
            out[i].ambiguous++;
        if (e->type == HT_OK && out[i].recovery_ns == AVAIL_NEVER &&
            out[i].recovery_from_ns != AVAIL_NEVER && e->t_ns >= out[i].recovery_from_ns)
            out[i].recovery_ns = e->t_ns - out[i].recovery_from_ns;
    }
}

void availability_compute(const struct history *h, const struct fault_span *spans, size_t n,
                          struct fault_availability *out)
{
    memset(out, 0, n * sizeof(*out));
    for (size_t i = 0; i < n; i++) {
        bool from_start = fault_recovers_from_start(spans[i].type);
        out[i].recovery_ns = AVAIL_NEVER;
        out[i].recovery_from_ns = from_start ? spans[i].from_ns : spans[i].to_ns;
    }
    /* each client's pending invoke (one acquire at a time per client) */
    uint32_t procs = 0;
    for (size_t k = 0; k < h->n; k++)
        if (h->ev[k].f == HF_ACQUIRE && h->ev[k].client >= procs)
            procs = h->ev[k].client + 1;
    uint64_t *invoked = calloc(procs ? procs : 1, sizeof(*invoked));
    uint64_t waiting = 0, stretch_from = 0;
    for (size_t k = 0; k < h->n; k++) {
        const struct history_event *e = &h->ev[k];
        if (e->f != HF_ACQUIRE)
            continue;
        if (e->type == HT_INVOKE) {
            if (invoked)
                invoked[e->client] = e->t_ns;
            if (waiting++ == 0)
                stretch_from = e->t_ns;
            continue;
        }
        /* out of memory: count by the completion alone */
        count_completion(e, invoked && invoked[e->client] ? invoked[e->client] : e->t_ns, spans, n,
                         out);
        if (waiting == 0)
            continue; /* a history cut before its invokes */
        waiting--;
        if (e->type == HT_OK || waiting == 0) {
            close_stretch(spans, n, out, stretch_from, e->t_ns);
            stretch_from = e->t_ns; /* the others wait on from here */
        }
    }
    if (waiting > 0)
        close_stretch(spans, n, out, stretch_from, h->end_mono_ns);
    free(invoked);
}
