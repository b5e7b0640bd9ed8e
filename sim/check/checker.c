/* checker.c - offline mutual exclusion: overlapping sections of different
 * owners on the same key.
 *
 * A sweep per key: sections in entry order, a min-heap of the ones still
 * inside keyed by their exit. Every section left in the heap when a new
 * one enters overlaps it, so walking the heap costs exactly the pairs
 * found: O(n log n + overlapping pairs). Only the listing is capped; the
 * counts are exact even when an unsafe run has millions of overlaps.
 *
 * Order: a key whose sections all carry witness sequence numbers is swept
 * on the sequence. A key where some lack them (a section still open when
 * the history ended, or a foreign file) is swept twice: the pairs whose both
 * sides carry a sequence on the sequence, every other pair on time. One
 * sweep in a mixed order would compare sequence numbers with nanoseconds.
 */
#include "sim/check/checker.h"

#include <stdlib.h>
#include <string.h>

/* One section in the order of a sweep: its entry and exit in the sweep's
 * unit (sequence or ns) and its index in the sorted sections array. */
struct item {
    uint64_t entry, exit;
    size_t idx;
};

struct sweep {
    const struct section *s;
    const struct fault_span *faults;
    size_t nf;
    uint64_t lookback_ns;
    struct check_result *out;
    struct item *heap;
    size_t hn;
    size_t list_cap;  /* allocated entries of out->list */
    size_t *pick;     /* listed candidates found at one entry */
    bool *occupied;   /* entered while another section on its key was inside */
    bool mixed;       /* count only pairs with a side lacking a sequence */
    bool writes_only; /* optimistic concurrency: only two writes at once are a violation */
};

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

static int cmp_section(const void *pa, const void *pb)
{
    const struct section *a = pa, *b = pb;
    int c = cmp_u64(a->key, b->key);
    c = c ? c : cmp_u64(a->from_ns, b->from_ns);
    c = c ? c : cmp_u64(a->to_ns, b->to_ns);
    c = c ? c : cmp_u64(a->client, b->client);
    return c ? c : cmp_u64(a->owner, b->owner);
}

static int cmp_section_seq(const void *pa, const void *pb)
{
    const struct section *a = pa, *b = pb;
    int c = cmp_u64(a->seq_from, b->seq_from);
    c = c ? c : cmp_u64(a->seq_to, b->seq_to);
    return c ? c : cmp_section(pa, pb);
}

static int cmp_item(const void *pa, const void *pb)
{
    const struct item *a = pa, *b = pb;
    int c = cmp_u64(a->entry, b->entry);
    c = c ? c : cmp_u64(a->exit, b->exit);
    return c ? c : cmp_u64(a->idx, b->idx);
}

static int cmp_size(const void *pa, const void *pb)
{
    return cmp_u64(*(const size_t *)pa, *(const size_t *)pb);
}

/* ---- the open set: a min-heap on exit ----------------------------------- */

static void heap_swap(struct item *h, size_t i, size_t j)
{
    struct item t = h[i];
    h[i] = h[j];
    h[j] = t;
}

static void heap_push(struct sweep *w, struct item it)
{
    size_t i = w->hn++;
    w->heap[i] = it;
    while (i > 0 && w->heap[(i - 1) / 2].exit > w->heap[i].exit) {
        heap_swap(w->heap, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_pop(struct sweep *w)
{
    struct item *h = w->heap;
    size_t n = --w->hn, i = 0;
    h[0] = h[n];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && h[l].exit < h[m].exit)
            m = l;
        if (l + 1 < n && h[l + 1].exit < h[m].exit)
            m = l + 1;
        if (m == i)
            return;
        heap_swap(h, i, m);
        i = m;
    }
}

/* ---- pairs -------------------------------------------------------------- */

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* Fault spans on while the earlier holder held, up to the end of the
 * overlap (a fault that struck it while it held, such as its renewals
 * lost, shows only later), or ended within the lookback before the
 * overlap (the cause is often a fault that ended just before,
 * such as a server restarted empty); when the two only overlap in
 * sequence (no common nanosecond), the moment the later one entered. */
static void attach_faults(const struct sweep *w, struct violation *v)
{
    const struct section *a = &w->s[v->a], *b = &w->s[v->b];
    const struct section *first = a->from_ns <= b->from_ns ? a : b;
    uint64_t lo = max_u64(a->from_ns, b->from_ns);
    uint64_t hi = max_u64(lo, min_u64(a->to_ns, b->to_ns));
    v->overlap_ns = hi - lo;
    v->n_faults = 0;
    for (size_t i = 0; i < w->nf && v->n_faults < CHECK_MAX_FAULTS_PER_VIOLATION; i++) {
        const struct fault_span *f = &w->faults[i];
        bool near = f->to_ns >= lo || lo - f->to_ns <= w->lookback_ns;
        bool on_first = f->from_ns <= first->to_ns && f->to_ns >= first->from_ns;
        if (f->from_ns <= hi && (near || on_first))
            v->faults[v->n_faults++] = i;
    }
}

/* Wrote, or may have: a section that never ended counts as one. */
static bool wrote(const struct section *s)
{
    return s->effect == EFFECT_APPLIED || s->effect == EFFECT_OPEN;
}

/* Is an overlap of x and y safe? One side fenced: its write was refused.
 * Under optimistic concurrency (writes_only), which promises no
 * exclusion, any overlap in which at most one side wrote. */
static bool pair_safe(const struct sweep *w, const struct section *x, const struct section *y)
{
    if (x->effect == EFFECT_FENCED || y->effect == EFFECT_FENCED)
        return true;
    return w->writes_only && !(wrote(x) && wrote(y));
}

static int list_pair(struct sweep *w, size_t a, size_t b)
{
    struct check_result *r = w->out;
    if (r->n_list == r->cap)
        return 0;
    if (r->n_list == w->list_cap) {
        size_t want = w->list_cap ? 2 * w->list_cap : 64;
        want = want < r->cap ? want : r->cap;
        struct violation *l = realloc(r->list, want * sizeof(*l));
        if (l == NULL)
            return -1;
        r->list = l;
        w->list_cap = want;
    }
    struct violation *v = &r->list[r->n_list++];
    memset(v, 0, sizeof(*v));
    v->a = a;
    v->b = b;
    v->fenced = pair_safe(w, &w->s[a], &w->s[b]);
    attach_faults(w, v);
    return 0;
}

/* Section x enters: count it against everything still inside. */
static int enter(struct sweep *w, const struct item *x)
{
    const struct section *s = w->s, *sx = &s[x->idx];
    size_t n_pick = 0;
    while (w->hn > 0 && w->heap[0].exit <= x->entry) /* touching is not overlapping */
        heap_pop(w);
    for (size_t i = 0; i < w->hn; i++) {
        const struct section *sy = &s[w->heap[i].idx];
        if (w->mixed && sx->has_seq && sy->has_seq)
            continue;
        w->occupied[x->idx] = true;
        if (sy->owner == sx->owner)
            continue; /* re-entry by the same owner */
        w->out->overlaps++;
        w->out->fenced_pairs += pair_safe(w, sx, sy);
        if (w->out->n_list < w->out->cap)
            w->pick[n_pick++] = w->heap[i].idx;
    }
    /* The heap is in no useful order: list the earliest holders first. */
    qsort(w->pick, n_pick, sizeof(*w->pick), cmp_size);
    for (size_t i = 0; i < n_pick; i++)
        if (list_pair(w, w->pick[i], x->idx) < 0)
            return -1;
    heap_push(w, *x);
    return 0;
}

static int sweep(struct sweep *w, const struct item *it, size_t m, bool mixed)
{
    w->hn = 0;
    w->mixed = mixed;
    for (size_t i = 0; i < m; i++)
        if (enter(w, &it[i]) < 0)
            return -1;
    return 0;
}

/* Sections [lo, hi) share a key and are sorted by time. */
static int check_key(struct sweep *w, struct section *s, size_t lo, size_t hi, struct item *it)
{
    size_t with_seq = 0;
    for (size_t i = lo; i < hi; i++)
        with_seq += s[i].has_seq;
    if (with_seq == hi - lo) {
        qsort(&s[lo], hi - lo, sizeof(*s), cmp_section_seq);
        for (size_t i = lo; i < hi; i++)
            it[i - lo] = (struct item){s[i].seq_from, s[i].seq_to, i};
        return sweep(w, it, hi - lo, false);
    }
    size_t m = 0;
    for (size_t i = lo; i < hi; i++)
        if (s[i].has_seq)
            it[m++] = (struct item){s[i].seq_from, s[i].seq_to, i};
    qsort(it, m, sizeof(*it), cmp_item);
    if (sweep(w, it, m, false) < 0)
        return -1;
    for (size_t i = lo; i < hi; i++)
        it[i - lo] =
            (struct item){s[i].from_ns, s[i].effect == EFFECT_OPEN ? UINT64_MAX : s[i].to_ns, i};
    return sweep(w, it, hi - lo, with_seq > 0);
}

int checker_run(struct section *sections, size_t n, const struct fault_span *faults, size_t nf,
                uint64_t lookback_ns, size_t max_listed, bool writes_only, struct check_result *out)
{
    memset(out, 0, sizeof(*out));
    out->sections = n;
    out->cap = max_listed;
    if (n > 1)
        qsort(sections, n, sizeof(*sections), cmp_section);
    size_t one = n ? n : 1;
    struct sweep w = {.s = sections,
                      .faults = faults,
                      .nf = nf,
                      .lookback_ns = lookback_ns,
                      .out = out,
                      .writes_only = writes_only};
    struct item *it = malloc(one * sizeof(*it));
    w.heap = malloc(one * sizeof(*w.heap));
    w.pick = malloc(one * sizeof(*w.pick));
    w.occupied = calloc(one, sizeof(*w.occupied));
    int rc = it && w.heap && w.pick && w.occupied ? 0 : -1;
    for (size_t lo = 0, hi; rc == 0 && lo < n; lo = hi) {
        for (hi = lo + 1; hi < n && sections[hi].key == sections[lo].key; hi++)
            ;
        rc = check_key(&w, sections, lo, hi, it);
    }
    for (size_t i = 0; i < n; i++)
        out->concurrent_entries += w.occupied && w.occupied[i];
    out->violations = out->overlaps - out->fenced_pairs;
    free(it);
    free(w.heap);
    free(w.pick);
    free(w.occupied);
    if (rc < 0)
        checker_result_free(out);
    return rc;
}

/* The first of the sorted stalls that ends after t. */
static size_t first_ending_after(const struct host_stall *st, size_t n, uint64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st[mid].to_ns > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void checker_attach_stalls(struct check_result *r, const struct section *sections,
                           const struct host_stall *stalls, size_t n, uint64_t lease_ns)
{
    for (size_t i = 0; i < r->n_list; i++) {
        struct violation *v = &r->list[i];
        const struct section *a = &sections[v->a], *b = &sections[v->b];
        uint64_t held = min_u64(a->from_ns, b->from_ns), entered = max_u64(a->from_ns, b->from_ns);
        v->stall_ns = 0;
        v->stall_from_ns = 0;
        for (size_t k = first_ending_after(stalls, n, held); k < n && stalls[k].from_ns < entered;
             k++) {
            /* only what the earlier holder lived, and only a stall its
             * lease could not outlast to the later one's entry */
            uint64_t from = max_u64(stalls[k].from_ns, held);
            uint64_t to = min_u64(stalls[k].to_ns, entered);
            if (stalls[k].to_ns + lease_ns < entered || to - from <= v->stall_ns)
                continue;
            v->stall_ns = to - from;
            v->stall_from_ns = from;
        }
    }
}

void checker_result_free(struct check_result *r)
{
    free(r->list);
    memset(r, 0, sizeof(*r));
}
