/* checker.c - offline mutual exclusion over a whole history: the
 * stream's sweeps (sweep.c) fed one key at a time.
 *
 * The sections are sorted by (key, entry) as callers have always had
 * them (a key whose sections all carry witness sequence numbers, by
 * sequence, and swept on it alone), each one's index in that array its
 * id; a key's sections are opened in that order and closed, then the key
 * is judged whole and forgotten before the next. So the counts are the stream's, and the
 * listing is the one a stream of that key alone would give.
 */
#include "sim/check/checker.h"

#include <stdlib.h>
#include <string.h>

#include "sim/check/sweep.h"

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
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

static int feed(struct sweep *w, const struct section *s, size_t i)
{
    uint32_t slot;
    if (sweep_open(w, i, &s[i], s[i].has_seq, &slot) < 0)
        return -1;
    sweep_close(w, slot, s[i].to_ns, s[i].has_seq, s[i].seq_to, s[i].effect);
    return 0;
}

/* Sections [lo, hi) share a key and are sorted by time (by sequence
 * when all carry one: then the key is swept on it alone), opened in that
 * order, judged. */
static int check_key(struct sweep *w, struct section *s, size_t lo, size_t hi)
{
    size_t with_seq = 0;
    for (size_t i = lo; i < hi; i++)
        with_seq += s[i].has_seq;
    if (with_seq == hi - lo) {
        qsort(&s[lo], hi - lo, sizeof(*s), cmp_section_seq);
        if (sweep_seq_only(w, s[lo].key) < 0)
            return -1;
    }
    for (size_t i = lo; i < hi; i++)
        if (feed(w, s, i) < 0)
            return -1;
    return sweep_flush_key(w, s[lo].key);
}

int checker_run(struct section *sections, size_t n, const struct fault_span *faults, size_t nf,
                uint64_t lookback_ns, size_t max_listed, bool writes_only, struct check_result *out)
{
    struct sweep *w = sweep_new(max_listed, writes_only, out);
    if (w == NULL)
        return -1;
    if (n > 1)
        qsort(sections, n, sizeof(*sections), cmp_section);
    int rc = 0;
    for (size_t lo = 0, hi; rc == 0 && lo < n; lo = hi) {
        for (hi = lo + 1; hi < n && sections[hi].key == sections[lo].key; hi++)
            ;
        rc = check_key(w, sections, lo, hi);
    }
    return sweep_finish(w, faults, nf, lookback_ns, rc);
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

/* The longest stall the earlier holder lived from held to entered that its
 * lease could not outlast: its length into *ns, its start into *from. */
static void stall_between(const struct host_stall *stalls, size_t n, uint64_t lease_ns,
                          uint64_t held, uint64_t entered, uint64_t *ns, uint64_t *at)
{
    *ns = 0;
    *at = 0;
    for (size_t k = first_ending_after(stalls, n, held); k < n && stalls[k].from_ns < entered;
         k++) {
        /* only what the earlier holder lived, and only a stall its
         * lease could not outlast to the later one's entry */
        uint64_t from = max_u64(stalls[k].from_ns, held);
        uint64_t to = min_u64(stalls[k].to_ns, entered);
        if (stalls[k].to_ns + lease_ns < entered || to - from <= *ns)
            continue;
        *ns = to - from;
        *at = from;
    }
}

void checker_attach_stalls(struct check_result *r, const struct section *sections,
                           const struct host_stall *stalls, size_t n, uint64_t lease_ns)
{
    for (size_t i = 0; i < r->n_list; i++) {
        struct violation *v = &r->list[i];
        const struct section *a = sections ? &sections[v->a] : &v->sa;
        const struct section *b = sections ? &sections[v->b] : &v->sb;
        stall_between(stalls, n, lease_ns, min_u64(a->from_ns, b->from_ns),
                      max_u64(a->from_ns, b->from_ns), &v->stall_ns, &v->stall_from_ns);
    }
    /* a group's: what its holder lived before the first other holder entered */
    for (size_t i = 0; i < r->groups.n_list; i++) {
        struct violation_group *g = &r->groups.list[i];
        stall_between(stalls, n, lease_ns, min_u64(g->stale.from_ns, g->first_ns),
                      max_u64(g->stale.from_ns, g->first_ns), &g->stall_ns, &g->stall_from_ns);
    }
}

void checker_result_free(struct check_result *r)
{
    free(r->list);
    free(r->groups.list);
    memset(r, 0, sizeof(*r));
}
