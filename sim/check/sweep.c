/* sweep.c - the checker's per-key sweeps over a stream of sections.
 *
 * Per key, two sweeps (checker.h, "Ordering"): one on the witness sequence
 * over the sections that carry one, one on time over all of them that
 * counts only pairs with a side lacking a sequence (on a key where every
 * section has one it finds nothing, so it is run everywhere: a stream
 * cannot know the key's last section). Each sweep holds the sections
 * still inside in two min-heaps keyed by their exit, the exclusive ones
 * and the shared ones (shared and permits); an entrant is judged only
 * against the heaps its mode conflicts with, so walking them costs exactly
 * the pairs found. Only the listing is capped; the counts are exact.
 *
 * A heap's sections are also kept in buckets of one owner each (and of one
 * kind: with a sequence or without), so an entrant skips its own owner's
 * re-entries, and on time every section the sequence judged, a bucket at a
 * time: a holder re-entering a key a million times costs a million steps,
 * not a million squared.
 *
 * Sections wait to be judged in two queues per key: on time a FIFO in
 * entry order (the stream brings entries in time order), on the sequence a
 * min-heap on the entry step. A queue's head is judged once it is closed
 * and nothing can still come before it (sweep.h); a section the sweeps no
 * longer need goes back to the pool. Slots are indices, since the pool
 * moves when it grows.
 */
#include "sim/check/sweep.h"

#include <stdlib.h>
#include <string.h>

#include "sim/check/groups.h"
#include "sim/check/listing.h"
#include "sim/record/grow.h"

struct item {
    uint64_t entry, exit;
    uint32_t slot;
};

/* A slot with the values it sorts by, so qsort needs no context. */
enum { RANKS = 5 };
struct ranked {
    uint64_t rank[RANKS];
    uint32_t slot;
};

enum { HEAP_EXCL = 0, HEAP_SHARED, HEAPS };

/* One sweep's sections inside, by exit. */
struct inside {
    struct item *h[HEAPS];
    size_t n[HEAPS], cap[HEAPS];
    size_t shared_unseq;        /* of HEAP_SHARED, the sections lacking a sequence */
    uint32_t buckets[HEAPS][2]; /* per heap and [has_seq]: its owners' buckets, 0: none */
    uint8_t sid;                /* 0: the time sweep, 1: the sequence sweep */
};

/* The sections of one owner in one heap of one sweep of a key, of one kind
 * (has_seq): a list through the sections' member links. */
struct bucket {
    uint32_t key, owner;
    uint8_t tag;         /* sweep, heap and kind: which list of struct inside */
    uint32_t first;      /* its first section's slot */
    uint32_t prev, next; /* the other buckets of its list; 0: none (buckets count from 1) */
};

/* The buckets by (key, owner, tag): open addressing, linear probing. */
struct bucket_index {
    uint32_t *tab; /* bucket numbers, 0: empty */
    size_t cap, n;
    struct bucket *b; /* b[0] unused */
    size_t n_b, cap_b;
    uint32_t free_b; /* a free bucket, chained through next */
};

struct cs {
    struct section s;
    uint64_t id;
    uint32_t link;  /* the caller's, or the free list's */
    uint32_t group; /* its violations' group, when it is a stale holder (groups.h) */
    uint32_t bucket[2], mprev[2], mnext[2]; /* per sweep: its owner's bucket, and the list */
    uint8_t refs;                           /* the time sweep's, and the sequence sweep's */
    bool closed;
    bool occupied; /* entered while a conflicting set was inside (checker.h) */
    bool counted;  /* a permit entry judged by its count on the sequence */
    bool seq_done; /* judged on the sequence, or never will be */
};

struct key_state {
    uint32_t *tq; /* ring: sections waiting for the time sweep, in entry order */
    size_t tq_head, tq_n, tq_cap;
    struct item *sq; /* min-heap on (seq_from, id): waiting for the sequence sweep */
    size_t sq_n, sq_cap;
    struct inside on_time, on_seq;
    uint64_t next_seq; /* every step of the witness below it seen */
    uint64_t *seen;    /* min-heap: steps seen above next_seq */
    size_t seen_n, seen_cap;
    bool blocked;  /* in the list of keys waiting for time */
    bool seq_only; /* every section has a sequence: no time sweep (sweep_seq_only) */
};

struct sweep {
    struct cs *pool;
    size_t n_pool, cap_pool, held, held_peak;
    uint32_t free_head;
    struct key_state *keys;
    size_t n_keys;
    uint32_t *blocked;
    size_t n_blocked, cap_blocked;
    uint64_t now;
    struct ranked *pick, *run;
    size_t cap_pick, cap_run;
    uint32_t *spare; /* the blocked list being walked */
    size_t cap_spare;
    struct listing listed;
    struct group_track groups;
    struct bucket_index bx;
    bool writes_only;
    struct check_result *out;
};

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* ---- the pool ------------------------------------------------------------ */

static void unref(struct sweep *w, uint32_t slot)
{
    struct cs *c = &w->pool[slot];
    if (--c->refs > 0)
        return;
    groups_leave(&w->groups, &c->group); /* no later entrant can pair with it now */
    c->link = w->free_head;
    w->free_head = slot;
    w->held--;
}

static struct key_state *key_at(struct sweep *w, uint32_t key)
{
    if (key >= w->n_keys) {
        size_t cap = w->n_keys;
        if (array_grow(&w->keys, &cap, (size_t)key + 1, sizeof(*w->keys)) < 0)
            return NULL;
        memset(&w->keys[w->n_keys], 0, (cap - w->n_keys) * sizeof(*w->keys));
        for (size_t k = w->n_keys; k < cap; k++)
            w->keys[k].on_seq.sid = 1;
        w->n_keys = cap;
    }
    return &w->keys[key];
}

/* ---- heaps --------------------------------------------------------------- */

static bool item_before(const struct item *a, const struct item *b, bool by_entry)
{
    if (by_entry)
        return a->entry != b->entry ? a->entry < b->entry : a->exit < b->exit;
    return a->exit < b->exit;
}

static void heap_up(struct item *h, size_t i, bool by_entry)
{
    while (i > 0 && item_before(&h[i], &h[(i - 1) / 2], by_entry)) {
        struct item t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static void heap_down(struct item *h, size_t n, bool by_entry)
{
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && item_before(&h[l], &h[m], by_entry))
            m = l;
        if (l + 1 < n && item_before(&h[l + 1], &h[m], by_entry))
            m = l + 1;
        if (m == i)
            return;
        struct item t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* ---- owners' buckets ------------------------------------------------------ */

static uint8_t bucket_tag(const struct inside *in, int k, bool has_seq)
{
    return (uint8_t)(in->sid << 2 | (unsigned)k << 1 | has_seq);
}

static size_t bucket_home(const struct bucket_index *x, uint32_t key, uint32_t owner, uint8_t tag)
{
    uint64_t h = ((uint64_t)key << 32 | owner) * 0x9e3779b97f4a7c15ULL;
    h ^= (h >> 29) + tag * 0xbf58476d1ce4e5b9ULL;
    return (size_t)(h ^ h >> 32) & (x->cap - 1);
}

/* Where (key, owner, tag) is in the table, or the empty place it would go. */
static size_t bucket_find(const struct bucket_index *x, uint32_t key, uint32_t owner, uint8_t tag)
{
    size_t i = bucket_home(x, key, owner, tag);
    for (; x->tab[i]; i = (i + 1) & (x->cap - 1)) {
        const struct bucket *b = &x->b[x->tab[i]];
        if (b->key == key && b->owner == owner && b->tag == tag)
            break;
    }
    return i;
}

static int bucket_rehash(struct bucket_index *x)
{
    size_t cap = x->cap ? 2 * x->cap : 64;
    uint32_t *old = x->tab;
    size_t old_cap = x->cap;
    x->tab = calloc(cap, sizeof(*x->tab));
    if (x->tab == NULL) {
        x->tab = old;
        return -1;
    }
    x->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i]) {
            const struct bucket *b = &x->b[old[i]];
            x->tab[bucket_find(x, b->key, b->owner, b->tag)] = old[i];
        }
    free(old);
    return 0;
}

/* A new bucket in the table, its fields set by the caller; 0 out of memory. */
static uint32_t bucket_add(struct bucket_index *x, uint32_t key, uint32_t owner, uint8_t tag)
{
    if (2 * (x->n + 1) > x->cap && bucket_rehash(x) < 0)
        return 0;
    uint32_t id = x->free_b;
    if (id) {
        x->free_b = x->b[id].next;
    } else {
        if (x->n_b + 1 >= UINT32_MAX || array_grow(&x->b, &x->cap_b, x->n_b + 2, sizeof(*x->b)) < 0)
            return 0;
        id = (uint32_t)++x->n_b;
    }
    x->b[id] = (struct bucket){.key = key, .owner = owner, .tag = tag};
    x->tab[bucket_find(x, key, owner, tag)] = id;
    x->n++;
    return id;
}

/* Take bucket id out of the table (backward shift: no tombstones). */
static void bucket_remove(struct bucket_index *x, uint32_t id)
{
    const struct bucket *b = &x->b[id];
    size_t i = bucket_find(x, b->key, b->owner, b->tag);
    x->tab[i] = 0;
    for (size_t j = (i + 1) & (x->cap - 1); x->tab[j]; j = (j + 1) & (x->cap - 1)) {
        const struct bucket *c = &x->b[x->tab[j]];
        size_t home = bucket_home(x, c->key, c->owner, c->tag);
        /* it stays unless its home lies cyclically outside (i, j] */
        if (((j - home) & (x->cap - 1)) < ((j - i) & (x->cap - 1)))
            continue;
        x->tab[i] = x->tab[j];
        x->tab[j] = 0;
        i = j;
    }
    x->b[id].next = x->free_b;
    x->free_b = id;
    x->n--;
}

/* Section slot, now in heap k of in, joins its owner's bucket. */
static int bucket_join(struct sweep *w, struct inside *in, int k, uint32_t slot)
{
    struct bucket_index *x = &w->bx;
    struct cs *c = &w->pool[slot];
    uint8_t tag = bucket_tag(in, k, c->s.has_seq);
    uint32_t *list = &in->buckets[k][c->s.has_seq];
    uint32_t id = x->cap ? x->tab[bucket_find(x, c->s.key, c->s.owner, tag)] : 0;
    if (id == 0) {
        if ((id = bucket_add(x, c->s.key, c->s.owner, tag)) == 0)
            return -1;
        struct bucket *b = &x->b[id];
        b->first = SWEEP_NONE;
        b->next = *list;
        if (*list)
            x->b[*list].prev = id;
        *list = id;
    }
    struct bucket *b = &x->b[id];
    uint8_t s = in->sid;
    c->bucket[s] = id;
    c->mprev[s] = SWEEP_NONE;
    c->mnext[s] = b->first;
    if (b->first != SWEEP_NONE)
        w->pool[b->first].mprev[s] = slot;
    b->first = slot;
    return 0;
}

/* Section slot leaves heap k of in, and its bucket; an empty bucket goes. */
static void bucket_leave(struct sweep *w, struct inside *in, int k, uint32_t slot)
{
    struct bucket_index *x = &w->bx;
    struct cs *c = &w->pool[slot];
    uint8_t s = in->sid;
    uint32_t id = c->bucket[s];
    struct bucket *b = &x->b[id];
    if (c->mprev[s] != SWEEP_NONE)
        w->pool[c->mprev[s]].mnext[s] = c->mnext[s];
    else
        b->first = c->mnext[s];
    if (c->mnext[s] != SWEEP_NONE)
        w->pool[c->mnext[s]].mprev[s] = c->mprev[s];
    if (b->first != SWEEP_NONE)
        return;
    if (b->prev)
        x->b[b->prev].next = b->next;
    else
        in->buckets[k][c->s.has_seq] = b->next;
    if (b->next)
        x->b[b->next].prev = b->prev;
    bucket_remove(x, id);
}

static void bucket_index_free(struct bucket_index *x)
{
    free(x->tab);
    free(x->b);
}

static int inside_push(struct sweep *w, struct inside *in, int k, struct item it)
{
    if (array_grow(&in->h[k], &in->cap[k], in->n[k] + 1, sizeof(struct item)) < 0)
        return -1;
    if (bucket_join(w, in, k, it.slot) < 0)
        return -1;
    in->h[k][in->n[k]] = it;
    heap_up(in->h[k], in->n[k]++, false);
    if (k == HEAP_SHARED && !w->pool[it.slot].s.has_seq)
        in->shared_unseq++;
    return 0;
}

static void inside_pop(struct sweep *w, struct inside *in, int k)
{
    uint32_t slot = in->h[k][0].slot;
    if (k == HEAP_SHARED && !w->pool[slot].s.has_seq)
        in->shared_unseq--;
    bucket_leave(w, in, k, slot);
    in->h[k][0] = in->h[k][--in->n[k]];
    heap_down(in->h[k], in->n[k], false);
    unref(w, slot);
}

static void inside_free(struct sweep *w, struct inside *in)
{
    for (int k = 0; k < HEAPS; k++) {
        while (in->n[k] > 0)
            inside_pop(w, in, k);
        free(in->h[k]);
        in->h[k] = NULL;
        in->cap[k] = 0;
    }
}

/* ---- pairs (checker.h's rules) -------------------------------------------- */

static bool wrote(const struct section *s)
{
    return s->effect == EFFECT_APPLIED || s->effect == EFFECT_OPEN;
}

static bool pair_safe(const struct sweep *w, const struct section *x, const struct section *y)
{
    if (x->effect == EFFECT_FENCED || y->effect == EFFECT_FENCED)
        return true;
    return w->writes_only && !(wrote(x) && wrote(y));
}

static uint8_t mode_of(const struct section *x)
{
    return x->mode < LOCK_MODE_COUNT ? x->mode : LOCK_MODE_EXCLUSIVE;
}

static int list_pair(struct sweep *w, uint32_t a, uint32_t b)
{
    struct violation v = {.a = (size_t)w->pool[a].id,
                          .b = (size_t)w->pool[b].id,
                          .sa = w->pool[a].s,
                          .sb = w->pool[b].s};
    v.fenced = pair_safe(w, &v.sa, &v.sb);
    return listing_offer(&w->listed, w->out, &v);
}

static int found(struct sweep *w, size_t *n_pick, const struct section *sx, uint32_t y)
{
    bool safe = pair_safe(w, sx, &w->pool[y].s);
    w->out->overlaps++;
    w->out->fenced_pairs += safe;
    if (!safe && groups_pair(&w->groups, &w->pool[y].group, &w->pool[y].s, sx) < 0)
        return -1;
    if (!listing_wants(&w->listed, w->out, sx->key))
        return 0;
    if (array_grow(&w->pick, &w->cap_pick, *n_pick + 1, sizeof(*w->pick)) < 0)
        return -1;
    w->pick[(*n_pick)++] = (struct ranked){.rank = {w->pool[y].id}, .slot = y};
    return 0;
}

/* Every section of heap k of another owner conflicts with x; with mixed,
 * only the pairs with a side lacking a sequence. Its own owner's bucket,
 * and the buckets judged on the sequence, are passed whole. 1: some, 0:
 * none, -1. */
static int walk(struct sweep *w, const struct inside *in, int k, const struct section *sx,
                bool mixed, size_t *n_pick)
{
    int any = 0;
    uint8_t s = in->sid;
    for (int kind = 0; kind < 2; kind++) {
        if (kind && mixed && sx->has_seq)
            continue; /* judged on the sequence */
        for (uint32_t b = in->buckets[k][kind]; b; b = w->bx.b[b].next) {
            if (w->bx.b[b].owner == sx->owner)
                continue; /* re-entry by the same owner */
            for (uint32_t y = w->bx.b[b].first; y != SWEEP_NONE; y = w->pool[y].mnext[s]) {
                any = 1;
                if (found(w, n_pick, sx, y) < 0)
                    return -1;
            }
        }
    }
    return any;
}

/* A permit entering while N or more shared holds are inside: one pair
 * with the one that leaves first. On time, only when it was not judged on
 * the sequence already. */
static int over_permits(struct sweep *w, const struct inside *in, uint32_t x, bool mixed,
                        size_t *n_pick)
{
    struct cs *cx = &w->pool[x];
    uint32_t n = cx->s.permits ? cx->s.permits : 1;
    if (in->n[HEAP_SHARED] < n)
        return 0;
    if (mixed && cx->s.has_seq && (in->shared_unseq == 0 || cx->counted))
        return 0;
    if (!mixed)
        cx->counted = true;
    if (found(w, n_pick, &cx->s, in->h[HEAP_SHARED][0].slot) < 0)
        return -1;
    return 1;
}

static int cmp_ranked(const void *pa, const void *pb)
{
    const struct ranked *a = pa, *b = pb;
    for (size_t i = 0; i < RANKS; i++)
        if (a->rank[i] != b->rank[i])
            return a->rank[i] < b->rank[i] ? -1 : 1;
    return 0;
}

/* x enters sweep `in` (its reference moves into the heaps): judged against
 * what is still inside that its mode conflicts with. */
static int enter(struct sweep *w, struct inside *in, struct item x, bool mixed)
{
    for (int k = 0; k < HEAPS; k++)
        while (in->n[k] > 0 && in->h[k][0].exit <= x.entry) /* touching is not overlapping */
            inside_pop(w, in, k);
    struct section sx = w->pool[x.slot].s;
    uint8_t mode = mode_of(&sx);
    size_t n_pick = 0;
    int any = walk(w, in, HEAP_EXCL, &sx, mixed, &n_pick); /* every mode conflicts with a writer */
    int more = 0;
    if (any >= 0 && mode == LOCK_MODE_EXCLUSIVE)
        more = walk(w, in, HEAP_SHARED, &sx, mixed, &n_pick);
    else if (any >= 0 && mode == LOCK_MODE_PERMIT)
        more = over_permits(w, in, x.slot, mixed, &n_pick);
    if (any < 0 || more < 0)
        return -1;
    w->pool[x.slot].occupied |= any || more;
    /* The heaps are in no useful order: list the earliest holders first. */
    if (n_pick > 1)
        qsort(w->pick, n_pick, sizeof(*w->pick), cmp_ranked);
    for (size_t i = 0; i < n_pick; i++)
        if (list_pair(w, w->pick[i].slot, x.slot) < 0)
            return -1;
    return inside_push(w, in, mode == LOCK_MODE_EXCLUSIVE ? HEAP_EXCL : HEAP_SHARED, x);
}

/* ---- the queues ------------------------------------------------------------ */

static int tq_push(struct key_state *ks, uint32_t slot)
{
    if (ks->tq_n == ks->tq_cap) {
        size_t cap = ks->tq_cap ? 2 * ks->tq_cap : 16;
        uint32_t *q = malloc(cap * sizeof(*q));
        if (q == NULL)
            return -1;
        for (size_t i = 0; i < ks->tq_n; i++)
            q[i] = ks->tq[(ks->tq_head + i) & (ks->tq_cap - 1)];
        free(ks->tq);
        ks->tq = q;
        ks->tq_cap = cap;
        ks->tq_head = 0;
    }
    ks->tq[(ks->tq_head + ks->tq_n++) & (ks->tq_cap - 1)] = slot;
    return 0;
}

static uint32_t tq_at(const struct key_state *ks, size_t i)
{
    return ks->tq[(ks->tq_head + i) & (ks->tq_cap - 1)];
}

/* An entry tying others in time, ranked as checker_run orders them (exit,
 * then the sorted array's order: to_ns, client, owner), then by id. */
static struct ranked tie_rank(const struct cs *c, uint32_t slot)
{
    uint64_t exit = c->s.effect == EFFECT_OPEN ? UINT64_MAX : c->s.to_ns;
    return (struct ranked){.rank = {exit, c->s.to_ns, c->s.client, c->s.owner, c->id},
                           .slot = slot};
}

/* The sequence sweep: heads whose every lower step is seen, once closed. */
static int judge_on_seq(struct sweep *w, struct key_state *ks, bool final)
{
    while (ks->sq_n > 0) {
        struct item top = ks->sq[0];
        struct cs *c = &w->pool[top.slot];
        if ((!final && top.entry >= ks->next_seq) || !c->closed)
            return 0;
        ks->sq[0] = ks->sq[--ks->sq_n];
        heap_down(ks->sq, ks->sq_n, true);
        c->seq_done = true;
        if (!c->s.has_seq) {
            unref(w, top.slot);
            continue;
        }
        struct item x = {c->s.seq_from, c->s.seq_to, top.slot};
        if (enter(w, &ks->on_seq, x, false) < 0)
            return -1;
        if (ks->seq_only)
            w->out->concurrent_entries += w->pool[x.slot].occupied;
    }
    return 0;
}

/* The time sweep: entries the stream has passed, a tie at a time, once all
 * of the tie closed and were judged on the sequence. */
static int judge_on_time(struct sweep *w, uint32_t key, struct key_state *ks, bool final)
{
    while (ks->tq_n > 0) {
        uint64_t from = w->pool[tq_at(ks, 0)].s.from_ns;
        if (!final && from >= w->now) {
            if (!ks->blocked) {
                if (array_grow(&w->blocked, &w->cap_blocked, w->n_blocked + 1,
                               sizeof(*w->blocked)) < 0)
                    return -1;
                w->blocked[w->n_blocked++] = key;
                ks->blocked = true;
            }
            return 0;
        }
        size_t m = 0;
        for (; m < ks->tq_n; m++) {
            const struct cs *c = &w->pool[tq_at(ks, m)];
            if (c->s.from_ns != from)
                break;
            if (!c->closed || !c->seq_done)
                return 0;
        }
        if (array_grow(&w->run, &w->cap_run, m, sizeof(*w->run)) < 0)
            return -1;
        for (size_t i = 0; i < m; i++)
            w->run[i] = tie_rank(&w->pool[tq_at(ks, i)], tq_at(ks, i));
        ks->tq_head = (ks->tq_head + m) & (ks->tq_cap - 1);
        ks->tq_n -= m;
        if (m > 1)
            qsort(w->run, m, sizeof(*w->run), cmp_ranked);
        for (size_t i = 0; i < m; i++) {
            struct item x = {from, w->run[i].rank[0], w->run[i].slot};
            if (enter(w, &ks->on_time, x, true) < 0)
                return -1;
            w->out->concurrent_entries += w->pool[x.slot].occupied;
        }
    }
    return 0;
}

static int judge(struct sweep *w, uint32_t key, bool final)
{
    struct key_state *ks = &w->keys[key];
    if (judge_on_seq(w, ks, final) < 0)
        return -1;
    return judge_on_time(w, key, ks, final);
}

/* ---- the interface ----------------------------------------------------------- */

struct sweep *sweep_new(size_t max_listed, bool writes_only, struct check_result *out)
{
    memset(out, 0, sizeof(*out));
    out->cap = max_listed;
    struct sweep *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return NULL;
    w->free_head = SWEEP_NONE;
    w->writes_only = writes_only;
    w->out = out;
    groups_begin(&w->groups, &out->groups, writes_only);
    return w;
}

int sweep_open(struct sweep *w, uint64_t id, const struct section *s, bool may_seq, uint32_t *slot)
{
    struct key_state *ks = key_at(w, s->key);
    if (ks == NULL)
        return -1;
    uint32_t i = w->free_head;
    if (i == SWEEP_NONE) {
        if (w->n_pool >= SWEEP_NONE ||
            array_grow(&w->pool, &w->cap_pool, w->n_pool + 1, sizeof(*w->pool)) < 0)
            return -1;
        i = (uint32_t)w->n_pool++;
    } else {
        w->free_head = w->pool[i].link;
    }
    struct cs *c = &w->pool[i];
    memset(c, 0, sizeof(*c));
    c->s = *s;
    c->id = id;
    c->link = SWEEP_NONE;
    c->group = GROUP_NONE;
    c->refs = 1;
    c->seq_done = !may_seq;
    if (may_seq) {
        if (array_grow(&ks->sq, &ks->sq_cap, ks->sq_n + 1, sizeof(*ks->sq)) < 0)
            return -1;
        ks->sq[ks->sq_n] = (struct item){s->seq_from, id, i};
        heap_up(ks->sq, ks->sq_n++, true);
        c->refs++;
    }
    if (ks->seq_only)
        c->refs--;
    else if (tq_push(ks, i) < 0)
        return -1;
    w->out->sections++;
    if (++w->held > w->held_peak)
        w->held_peak = w->held;
    *slot = i;
    return 0;
}

void sweep_close(struct sweep *w, uint32_t slot, uint64_t to_ns, bool has_seq, uint64_t seq_to,
                 uint8_t effect)
{
    struct section *s = &w->pool[slot].s;
    s->to_ns = to_ns;
    s->has_seq = has_seq;
    s->seq_to = has_seq ? seq_to : 0;
    if (!has_seq)
        s->seq_from = 0; /* history_sections' form of a section without one */
    s->effect = effect;
    w->pool[slot].closed = true;
}

const struct section *sweep_section(const struct sweep *w, uint32_t slot)
{
    return &w->pool[slot].s;
}

uint32_t *sweep_link(struct sweep *w, uint32_t slot)
{
    return &w->pool[slot].link;
}

int sweep_seq(struct sweep *w, uint32_t key, uint64_t seq)
{
    struct key_state *ks = key_at(w, key);
    if (ks == NULL)
        return -1;
    if (seq < ks->next_seq)
        return 0; /* a step seen twice: the reader refuses such a file */
    if (seq > ks->next_seq) {
        if (array_grow(&ks->seen, &ks->seen_cap, ks->seen_n + 1, sizeof(*ks->seen)) < 0)
            return -1;
        size_t i = ks->seen_n++;
        ks->seen[i] = seq;
        for (; i > 0 && ks->seen[(i - 1) / 2] > ks->seen[i]; i = (i - 1) / 2) {
            uint64_t t = ks->seen[i];
            ks->seen[i] = ks->seen[(i - 1) / 2];
            ks->seen[(i - 1) / 2] = t;
        }
        return 0;
    }
    ks->next_seq++;
    while (ks->seen_n > 0 && ks->seen[0] <= ks->next_seq) {
        ks->next_seq = max_u64(ks->next_seq, ks->seen[0] + 1);
        ks->seen[0] = ks->seen[--ks->seen_n];
        for (size_t i = 0;;) {
            size_t l = 2 * i + 1, m = i;
            if (l < ks->seen_n && ks->seen[l] < ks->seen[m])
                m = l;
            if (l + 1 < ks->seen_n && ks->seen[l + 1] < ks->seen[m])
                m = l + 1;
            if (m == i)
                break;
            uint64_t t = ks->seen[i];
            ks->seen[i] = ks->seen[m];
            ks->seen[m] = t;
            i = m;
        }
    }
    return 0;
}

int sweep_time(struct sweep *w, uint64_t t)
{
    if (t <= w->now)
        return 0;
    w->now = t;
    /* judging may block a key again: walk the list as it was */
    size_t n = w->n_blocked;
    if (n == 0)
        return 0;
    if (array_grow(&w->spare, &w->cap_spare, n, sizeof(*w->spare)) < 0)
        return -1;
    memcpy(w->spare, w->blocked, n * sizeof(*w->spare));
    w->n_blocked = 0;
    for (size_t i = 0; i < n; i++)
        w->keys[w->spare[i]].blocked = false;
    for (size_t i = 0; i < n; i++)
        if (judge(w, w->spare[i], false) < 0)
            return -1;
    return 0;
}

int sweep_seq_only(struct sweep *w, uint32_t key)
{
    struct key_state *ks = key_at(w, key);
    if (ks == NULL)
        return -1;
    ks->seq_only = true;
    return 0;
}

int sweep_poll(struct sweep *w, uint32_t key)
{
    return key < w->n_keys ? judge(w, key, false) : 0;
}

int sweep_flush_key(struct sweep *w, uint32_t key)
{
    if (key >= w->n_keys)
        return 0;
    if (judge(w, key, true) < 0)
        return -1;
    struct key_state *ks = &w->keys[key];
    inside_free(w, &ks->on_seq);
    inside_free(w, &ks->on_time);
    return 0;
}

size_t sweep_held(const struct sweep *w)
{
    return w->held;
}

size_t sweep_held_peak(const struct sweep *w)
{
    return w->held_peak;
}

/* Fault spans on while the earlier holder held, up to the end of the
 * overlap (a fault that struck it while it held, such as its renewals
 * lost, shows only later), or ended within the lookback before the
 * overlap (the cause is often a fault that ended just before, such as a
 * server restarted empty); when the two only overlap in sequence (no
 * common nanosecond), the moment the later one entered. */
static size_t faults_near(const struct section *a, const struct section *b,
                          const struct fault_span *faults, size_t nf, uint64_t lookback_ns,
                          size_t out[CHECK_MAX_FAULTS_PER_VIOLATION], uint64_t *overlap_ns)
{
    const struct section *first = a->from_ns <= b->from_ns ? a : b;
    uint64_t lo = max_u64(a->from_ns, b->from_ns);
    uint64_t hi = max_u64(lo, min_u64(a->to_ns, b->to_ns));
    size_t n = 0;
    *overlap_ns = hi - lo;
    for (size_t i = 0; i < nf && n < CHECK_MAX_FAULTS_PER_VIOLATION; i++) {
        const struct fault_span *f = &faults[i];
        bool near = f->to_ns >= lo || lo - f->to_ns <= lookback_ns;
        bool on_first = f->from_ns <= first->to_ns && f->to_ns >= first->from_ns;
        if (f->from_ns <= hi && (near || on_first))
            out[n++] = i;
    }
    return n;
}

int sweep_finish(struct sweep *w, const struct fault_span *faults, size_t nf, uint64_t lookback_ns,
                 int rc)
{
    struct check_result *out = w->out;
    for (size_t k = 0; rc == 0 && k < w->n_keys; k++)
        rc = judge(w, (uint32_t)k, true);
    for (size_t k = 0; k < w->n_keys; k++) {
        struct key_state *ks = &w->keys[k];
        inside_free(w, &ks->on_seq);
        inside_free(w, &ks->on_time);
        free(ks->tq);
        free(ks->sq);
        free(ks->seen);
    }
    free(w->keys);
    free(w->pool);
    free(w->blocked);
    free(w->pick);
    free(w->run);
    free(w->spare);
    bucket_index_free(&w->bx);
    if (rc == 0)
        rc = listing_finish(&w->listed, out);
    if (rc == 0)
        rc = groups_finish(&w->groups);
    listing_free(&w->listed);
    groups_free(&w->groups);
    free(w);
    if (rc < 0) {
        checker_result_free(out);
        return -1;
    }
    for (size_t i = 0; i < out->n_list; i++) {
        struct violation *v = &out->list[i];
        v->n_faults =
            faults_near(&v->sa, &v->sb, faults, nf, lookback_ns, v->faults, &v->overlap_ns);
    }
    /* a group's faults by the same rule, its later side the span of its overlaps */
    for (size_t i = 0; i < out->groups.n_list; i++) {
        struct violation_group *g = &out->groups.list[i];
        struct section later = groups_later(g);
        uint64_t span;
        g->n_faults = faults_near(&g->stale, &later, faults, nf, lookback_ns, g->faults, &span);
    }
    out->violations = out->overlaps - out->fenced_pairs;
    return 0;
}
