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
    size_t shared_unseq; /* of HEAP_SHARED, the sections lacking a sequence */
};

struct cs {
    struct section s;
    uint64_t id;
    uint32_t link;  /* the caller's, or the free list's */
    uint32_t group; /* its violations' group, when it is a stale holder (groups.h) */
    uint8_t refs;   /* the time sweep's, and the sequence sweep's */
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

static int inside_push(struct sweep *w, struct inside *in, int k, struct item it)
{
    if (array_grow(&in->h[k], &in->cap[k], in->n[k] + 1, sizeof(struct item)) < 0)
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
 * only the pairs with a side lacking a sequence. 1: some, 0: none, -1. */
static int walk(struct sweep *w, const struct inside *in, int k, const struct section *sx,
                bool mixed, size_t *n_pick)
{
    int any = 0;
    for (size_t i = 0; i < in->n[k]; i++) {
        uint32_t y = in->h[k][i].slot;
        const struct section *sy = &w->pool[y].s;
        if (mixed && sx->has_seq && sy->has_seq)
            continue; /* judged on the sequence */
        if (sy->owner == sx->owner)
            continue; /* re-entry by the same owner */
        any = 1;
        if (found(w, n_pick, sx, y) < 0)
            return -1;
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
