/* listing.c - the first max_listed overlaps in (key, judging) order,
 * kept in bounded memory however many the checker counts (listing.h).
 *
 * Until the list is full, pairs are appended; once full, it becomes a
 * max-heap on (key, judging order) and a pair that sorts before its top
 * replaces it. The whole-history checker offers the pairs in that very
 * order, so for it the heap only ever refuses.
 */
#include "sim/check/listing.h"

#include <stdlib.h>
#include <string.h>

static bool rank_before(const struct listing_rank *a, const struct listing_rank *b)
{
    return a->key != b->key ? a->key < b->key : a->n < b->n;
}

static void swap_at(struct listing *l, struct check_result *out, size_t i, size_t j)
{
    struct listing_rank r = l->rank[i];
    l->rank[i] = l->rank[j];
    l->rank[j] = r;
    struct violation v = out->list[i];
    out->list[i] = out->list[j];
    out->list[j] = v;
}

static void sift_down(struct listing *l, struct check_result *out, size_t i)
{
    size_t n = out->n_list;
    for (;;) {
        size_t c = 2 * i + 1, m = i;
        if (c < n && rank_before(&l->rank[m], &l->rank[c]))
            m = c;
        if (c + 1 < n && rank_before(&l->rank[m], &l->rank[c + 1]))
            m = c + 1;
        if (m == i)
            return;
        swap_at(l, out, i, m);
        i = m;
    }
}

bool listing_wants(const struct listing *l, const struct check_result *out, uint32_t key)
{
    if (out->n_list < out->cap)
        return true;
    /* a later pair on the top's key sorts after it */
    return out->cap > 0 && key < l->rank[0].key;
}

static int grow(struct listing *l, struct check_result *out)
{
    size_t want = l->cap ? 2 * l->cap : 64;
    want = want < out->cap ? want : out->cap;
    struct violation *v = realloc(out->list, want * sizeof(*v));
    if (v == NULL)
        return -1;
    out->list = v;
    struct listing_rank *r = realloc(l->rank, want * sizeof(*r));
    if (r == NULL)
        return -1;
    l->rank = r;
    l->cap = want;
    return 0;
}

int listing_offer(struct listing *l, struct check_result *out, const struct violation *v)
{
    struct listing_rank r = {.key = v->sb.key, .n = l->judged++};
    if (out->n_list < out->cap) {
        if (out->n_list == l->cap && grow(l, out) < 0)
            return -1;
        l->rank[out->n_list] = r;
        out->list[out->n_list++] = *v;
        if (out->n_list == out->cap) /* full: a max-heap from now on */
            for (size_t i = out->n_list / 2; i-- > 0;)
                sift_down(l, out, i);
        return 0;
    }
    if (out->cap == 0 || !rank_before(&r, &l->rank[0]))
        return 0;
    l->rank[0] = r;
    out->list[0] = *v;
    sift_down(l, out, 0);
    return 0;
}

struct order {
    struct listing_rank r;
    size_t at;
};

static int by_rank(const void *pa, const void *pb)
{
    const struct order *a = pa, *b = pb;
    return rank_before(&a->r, &b->r) ? -1 : rank_before(&b->r, &a->r) ? 1 : 0;
}

int listing_finish(struct listing *l, struct check_result *out)
{
    size_t n = out->n_list;
    int rc = 0;
    if (n > 1) { /* a stream offers the keys interleaved, and a full list is a heap */
        struct order *o = malloc(n * sizeof(*o));
        struct violation *v = malloc(n * sizeof(*v));
        if (o == NULL || v == NULL) {
            rc = -1;
        } else {
            for (size_t i = 0; i < n; i++)
                o[i] = (struct order){l->rank[i], i};
            qsort(o, n, sizeof(*o), by_rank);
            for (size_t i = 0; i < n; i++)
                v[i] = out->list[o[i].at];
            memcpy(out->list, v, n * sizeof(*v));
        }
        free(o);
        free(v);
    }
    listing_free(l);
    return rc;
}

void listing_free(struct listing *l)
{
    free(l->rank);
    *l = (struct listing){0};
}
