/* checker.c - offline mutual exclusion: overlapping sections of different
 * owners in conflicting modes on the same key.
 *
 * A sweep per key: sections in entry order, and the ones still inside in
 * two min-heaps keyed by their exit, the exclusive ones and the shared
 * ones (shared and permits). An entrant is judged only against the heaps
 * its mode conflicts with, so walking them costs exactly the pairs found,
 * and a permit's count is a heap's size: O(n log n + conflicting pairs),
 * however many readers overlap. Only the listing is capped; the counts are
 * exact even when an unsafe run has millions of overlaps.
 *
 * Order: a key whose sections all carry witness sequence numbers is swept
 * on the sequence. A key where some lack them (a section still open when
 * the history ended, or a foreign file) is swept twice: the pairs whose both
 * sides carry a sequence on the sequence, every other pair on time. One
 * sweep in a mixed order would compare sequence numbers with nanoseconds.
 * A permit entry is judged by its count once: on the sequence when it and
 * all it found inside carry one, else on time.
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

/* The heaps of sections inside: exclusive ones, and shared ones (shared
 * and permits, which a permit entrant counts). */
enum { HEAP_EXCL = 0, HEAP_SHARED, HEAPS };

struct sweep {
    const struct section *s;
    const struct fault_span *faults;
    size_t nf;
    uint64_t lookback_ns;
    struct check_result *out;
    struct item *heap[HEAPS];
    size_t hn[HEAPS];
    size_t shared_unseq; /* of HEAP_SHARED, the sections lacking a sequence */
    size_t list_cap;     /* allocated entries of out->list */
    size_t *pick;        /* listed candidates found at one entry */
    bool *occupied;      /* entered while a conflicting set was inside (checker.h) */
    bool *counted;       /* a permit entry judged by its count on the sequence */
    bool mixed;          /* count only pairs with a side lacking a sequence */
    bool writes_only;    /* optimistic concurrency: only two writes at once are a violation */
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

static void heap_push(struct sweep *w, int k, struct item it)
{
    struct item *h = w->heap[k];
    size_t i = w->hn[k]++;
    h[i] = it;
    while (i > 0 && h[(i - 1) / 2].exit > h[i].exit) {
        heap_swap(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    if (k == HEAP_SHARED && !w->s[it.idx].has_seq)
        w->shared_unseq++;
}

static void heap_pop(struct sweep *w, int k)
{
    struct item *h = w->heap[k];
    if (k == HEAP_SHARED && !w->s[h[0].idx].has_seq)
        w->shared_unseq--;
    size_t n = --w->hn[k], i = 0;
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

static uint8_t mode_of(const struct section *x)
{
    return x->mode < LOCK_MODE_COUNT ? x->mode : LOCK_MODE_EXCLUSIVE;
}

/* One conflicting pair found at an entry: counted, and kept for listing. */
static void found(struct sweep *w, size_t *n_pick, const struct section *sx, size_t y)
{
    w->out->overlaps++;
    w->out->fenced_pairs += pair_safe(w, sx, &w->s[y]);
    if (w->out->n_list < w->out->cap)
        w->pick[(*n_pick)++] = y;
}

/* Every section of heap k of another owner conflicts with x. */
static bool walk(struct sweep *w, int k, const struct section *sx, size_t *n_pick)
{
    bool any = false;
    for (size_t i = 0; i < w->hn[k]; i++) {
        size_t y = w->heap[k][i].idx;
        const struct section *sy = &w->s[y];
        if (w->mixed && sx->has_seq && sy->has_seq)
            continue; /* judged on the sequence */
        if (sy->owner == sx->owner)
            continue; /* re-entry by the same owner */
        any = true;
        found(w, n_pick, sx, y);
    }
    return any;
}

/* A permit entering while N or more shared holds are inside: one pair
 * with the one that leaves first. In the mixed sweep, only when it was not
 * judged on the sequence already. */
static bool over_permits(struct sweep *w, size_t x, size_t *n_pick)
{
    const struct section *sx = &w->s[x];
    uint32_t n = sx->permits ? sx->permits : 1;
    if (w->hn[HEAP_SHARED] < n)
        return false;
    if (w->mixed && sx->has_seq && (w->shared_unseq == 0 || w->counted[x]))
        return false;
    if (!w->mixed)
        w->counted[x] = true;
    found(w, n_pick, sx, w->heap[HEAP_SHARED][0].idx);
    return true;
}

/* Section x enters: judge it against what is still inside that its mode
 * conflicts with. */
static int enter(struct sweep *w, const struct item *x)
{
    const struct section *sx = &w->s[x->idx];
    uint8_t mode = mode_of(sx);
    size_t n_pick = 0;
    for (int k = 0; k < HEAPS; k++)
        while (w->hn[k] > 0 && w->heap[k][0].exit <= x->entry) /* touching is not overlapping */
            heap_pop(w, k);
    bool any = walk(w, HEAP_EXCL, sx, &n_pick); /* every mode conflicts with a writer */
    if (mode == LOCK_MODE_EXCLUSIVE)
        any |= walk(w, HEAP_SHARED, sx, &n_pick);
    else if (mode == LOCK_MODE_PERMIT)
        any |= over_permits(w, x->idx, &n_pick);
    w->occupied[x->idx] |= any;
    /* The heaps are in no useful order: list the earliest holders first. */
    qsort(w->pick, n_pick, sizeof(*w->pick), cmp_size);
    for (size_t i = 0; i < n_pick; i++)
        if (list_pair(w, w->pick[i], x->idx) < 0)
            return -1;
    heap_push(w, mode == LOCK_MODE_EXCLUSIVE ? HEAP_EXCL : HEAP_SHARED, *x);
    return 0;
}

static int sweep(struct sweep *w, const struct item *it, size_t m, bool mixed)
{
    w->hn[HEAP_EXCL] = w->hn[HEAP_SHARED] = 0;
    w->shared_unseq = 0;
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
    w.heap[HEAP_EXCL] = malloc(one * sizeof(*it));
    w.heap[HEAP_SHARED] = malloc(one * sizeof(*it));
    w.pick = malloc(one * sizeof(*w.pick));
    w.occupied = calloc(one, sizeof(*w.occupied));
    w.counted = calloc(one, sizeof(*w.counted));
    int rc = it && w.heap[HEAP_EXCL] && w.heap[HEAP_SHARED] && w.pick && w.occupied && w.counted
                 ? 0
                 : -1;
    for (size_t lo = 0, hi; rc == 0 && lo < n; lo = hi) {
        for (hi = lo + 1; hi < n && sections[hi].key == sections[lo].key; hi++)
            ;
        rc = check_key(&w, sections, lo, hi, it);
    }
    for (size_t i = 0; i < n; i++)
        out->concurrent_entries += w.occupied && w.occupied[i];
    out->violations = out->overlaps - out->fenced_pairs;
    free(it);
    free(w.heap[HEAP_EXCL]);
    free(w.heap[HEAP_SHARED]);
    free(w.pick);
    free(w.occupied);
    free(w.counted);
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
