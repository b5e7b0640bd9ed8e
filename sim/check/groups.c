/* groups.c - the violations grouped by their stale holder, as the sweeps
 * find them (groups.h).
 *
 * A group stays open while its holder is in the sweeps (a pair can only
 * name a section still inside); once it leaves, the group is complete and
 * goes to a min-heap of the kept ones, the group with the fewest pairs on
 * top, so that a run with 10^5 violations among 10^4 holders keeps the
 * CHECK_MAX_GROUPS that explain the most of them and counts the rest.
 */
#include "sim/check/groups.h"

#include <stdlib.h>
#include <string.h>

#include "sim/check/stale_grants.h"
#include "sim/faults/fault_spec.h"
#include "sim/record/grow.h"

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

/* The order the holders entered, as a page lists them: by time, then key,
 * client and owner, so that a stream and a whole history agree. */
static int cmp_stale(const struct violation_group *x, const struct violation_group *y)
{
    const struct section *a = &x->stale, *b = &y->stale;
    int c = cmp_u64(a->from_ns, b->from_ns);
    c = c ? c : cmp_u64(a->key, b->key);
    c = c ? c : cmp_u64(a->client, b->client);
    c = c ? c : cmp_u64(a->owner, b->owner);
    return c ? c : cmp_u64(a->to_ns, b->to_ns);
}

/* x is worth less than y: fewer pairs, or as many and a later holder. */
static bool worse(const struct violation_group *x, const struct violation_group *y)
{
    return x->pairs != y->pairs ? x->pairs < y->pairs : cmp_stale(x, y) > 0;
}

void groups_begin(struct group_track *t, struct violation_groups *out, bool writes_only)
{
    memset(t, 0, sizeof(*t));
    memset(out, 0, sizeof(*out));
    out->writes_only = writes_only;
    t->out = out;
}

static void add_holder(struct violation_group *g, uint32_t client)
{
    uint32_t n = g->n_holders;
    for (uint32_t i = 0; i < n; i++)
        if (g->holders[i] == client)
            return;
    if (n == GROUP_MAX_HOLDERS) {
        g->more_holders = true;
        if (client > g->holders[n - 1])
            return;
        n--; /* the highest makes room */
    }
    uint32_t at = n;
    while (at > 0 && g->holders[at - 1] > client) {
        g->holders[at] = g->holders[at - 1];
        at--;
    }
    g->holders[at] = client;
    g->n_holders = n + 1;
}

int groups_pair(struct group_track *t, uint32_t *h, const struct section *a,
                const struct section *b)
{
    if (*h == GROUP_NONE) {
        uint32_t i;
        if (t->n_free > 0) {
            i = t->free[--t->n_free];
        } else {
            if (t->n_open >= GROUP_NONE ||
                array_grow(&t->open, &t->cap_open, t->n_open + 1, sizeof(*t->open)) < 0)
                return -1;
            i = (uint32_t)t->n_open++;
        }
        t->open[i] = (struct violation_group){.stale = *a, .first_ns = UINT64_MAX};
        t->out->groups++;
        t->live++;
        *h = i;
    }
    struct violation_group *g = &t->open[*h];
    uint64_t lo = a->from_ns > b->from_ns ? a->from_ns : b->from_ns;
    uint64_t hi = a->to_ns < b->to_ns ? a->to_ns : b->to_ns;
    hi = hi > lo ? hi : lo; /* overlapping in sequence only: no common nanosecond */
    g->pairs++;
    g->first_ns = lo < g->first_ns ? lo : g->first_ns;
    g->last_ns = hi > g->last_ns ? hi : g->last_ns;
    g->reach_ns = b->to_ns > g->reach_ns ? b->to_ns : g->reach_ns;
    add_holder(g, b->client);
    return 0;
}

static void sift_down(struct violation_group *k, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && worse(&k[l], &k[m]))
            m = l;
        if (l + 1 < n && worse(&k[l + 1], &k[m]))
            m = l + 1;
        if (m == i)
            return;
        struct violation_group x = k[i];
        k[i] = k[m];
        k[m] = x;
        i = m;
    }
}

static int keep(struct group_track *t, const struct violation_group *g)
{
    if (t->n_kept < CHECK_MAX_GROUPS) {
        if (array_grow(&t->kept, &t->cap_kept, t->n_kept + 1, sizeof(*t->kept)) < 0)
            return -1;
        size_t i = t->n_kept++;
        t->kept[i] = *g;
        for (; i > 0 && worse(&t->kept[i], &t->kept[(i - 1) / 2]); i = (i - 1) / 2) {
            struct violation_group x = t->kept[i];
            t->kept[i] = t->kept[(i - 1) / 2];
            t->kept[(i - 1) / 2] = x;
        }
        return 0;
    }
    if (!worse(&t->kept[0], g)) {
        t->out->other_pairs += g->pairs;
        return 0;
    }
    t->out->other_pairs += t->kept[0].pairs;
    t->kept[0] = *g;
    sift_down(t->kept, t->n_kept, 0);
    return 0;
}

void groups_leave(struct group_track *t, uint32_t *h)
{
    if (*h == GROUP_NONE)
        return;
    uint32_t i = *h;
    *h = GROUP_NONE;
    t->live--;
    if (keep(t, &t->open[i]) < 0 ||
        array_grow(&t->free, &t->cap_free, t->n_free + 1, sizeof(*t->free)) < 0) {
        t->failed = true;
        return;
    }
    t->free[t->n_free++] = i;
}

static int by_stale(const void *a, const void *b)
{
    return cmp_stale(a, b);
}

int groups_finish(struct group_track *t)
{
    struct violation_groups *out = t->out;
    if (t->failed || t->live != 0) { /* live: a holder never left the sweeps, never */
        groups_free(t);
        free(out->list);
        memset(out, 0, sizeof(*out));
        return -1;
    }
    if (t->n_kept > 1)
        qsort(t->kept, t->n_kept, sizeof(*t->kept), by_stale);
    out->list = t->kept;
    out->n_list = t->n_kept;
    out->other_groups = out->groups - t->n_kept;
    t->kept = NULL;
    t->n_kept = 0;
    groups_free(t);
    return 0;
}

void groups_free(struct group_track *t)
{
    free(t->open);
    free(t->free);
    free(t->kept);
    struct violation_groups *out = t->out;
    memset(t, 0, sizeof(*t));
    t->out = out;
}

struct section groups_later(const struct violation_group *g)
{
    struct section s = g->stale;
    s.from_ns = g->first_ns;
    s.to_ns = g->last_ns;
    return s;
}

static uint8_t mode_of(const struct section *x)
{
    return x->mode < LOCK_MODE_COUNT ? x->mode : LOCK_MODE_EXCLUSIVE;
}

static bool wrote(const struct section *s)
{
    return s->effect == EFFECT_APPLIED || s->effect == EFFECT_OPEN;
}

/* Where a section leaves in time: an open one never does (checker.h). */
static uint64_t exit_ns(const struct section *s)
{
    return s->effect == EFFECT_OPEN ? UINT64_MAX : s->to_ns;
}

bool groups_pairs_with(const struct violation_groups *gs, const struct violation_group *g,
                       const struct section *s)
{
    const struct section *a = &g->stale;
    if (s->key != a->key || s->owner == a->owner)
        return false;
    if (mode_of(a) != LOCK_MODE_EXCLUSIVE && mode_of(s) != LOCK_MODE_EXCLUSIVE)
        return false;
    if (a->effect == EFFECT_FENCED || s->effect == EFFECT_FENCED)
        return false;
    if (gs->writes_only && !(wrote(a) && wrote(s)))
        return false;
    if (a->has_seq && s->has_seq)
        return s->seq_from > a->seq_from && s->seq_from < a->seq_to;
    /* entries tying in time are taken in the sweep's order: the earlier exit first */
    bool after = s->from_ns > a->from_ns ||
                 (s->from_ns == a->from_ns &&
                  (exit_ns(s) > exit_ns(a) || (exit_ns(s) == exit_ns(a) && s->client > a->client)));
    return after && s->from_ns < exit_ns(a);
}

struct rank {
    uint64_t pairs;
    size_t at;
};

static int by_pairs(const void *pa, const void *pb)
{
    const struct rank *a = pa, *b = pb;
    int c = cmp_u64(b->pairs, a->pairs);
    return c ? c : cmp_u64(a->at, b->at);
}

static int by_at(const void *pa, const void *pb)
{
    return cmp_u64(*(const size_t *)pa, *(const size_t *)pb);
}

size_t groups_drawn(const struct violation_groups *gs, size_t max, size_t *idx)
{
    struct rank r[CHECK_MAX_GROUPS] = {{0}};
    size_t n = 0;
    for (; n < gs->n_list && n < CHECK_MAX_GROUPS; n++)
        r[n] = (struct rank){gs->list[n].pairs, n};
    qsort(r, n, sizeof(*r), by_pairs);
    n = n < max ? n : max;
    for (size_t i = 0; i < n; i++)
        idx[i] = r[i].at;
    qsort(idx, n, sizeof(*idx), by_at);
    return n;
}

const char *const group_blame_names[BLAME_KINDS] = {
    "not_known", "outlived", "lost", "late_holder", "late_entrant", "session_ended", "session_lost",
};

static bool among_holders(const struct violation_group *g, uint32_t client)
{
    for (uint32_t i = 0; i < g->n_holders; i++)
        if (g->holders[i] == client)
            return true;
    return g->more_holders; /* one of those not named, perhaps */
}

/* The late grant of g's key that entered at entered_ns, its client the
 * holder's (holder) or one that overlapped it, and lapsed before it. */
static const struct late_grant *lapsed_at(const struct violation_group *g,
                                          const struct blame_facts *f, uint64_t entered_ns,
                                          bool holder)
{
    for (size_t i = 0; i < f->n_late; i++) {
        const struct late_grant *l = &f->late[i];
        if (l->key != g->stale.key || l->entered_ns != entered_ns ||
            !late_grant_lapsed(l, f->lease_ns))
            continue;
        if (holder ? l->client == g->stale.client
                   : l->client != g->stale.client && among_holders(g, l->client))
            return l;
    }
    return NULL;
}

/* A fault that began while g's holder held, before the first other holder
 * entered, and can end a session: one on the servers, or on the holder's
 * own connection. SIZE_MAX: none. */
static size_t session_ender(const struct violation_group *g, const struct blame_facts *f)
{
    for (size_t i = 0; i < f->n_spans; i++) {
        const struct fault_span *s = &f->spans[i];
        bool mine = fault_on_network(s->type) && s->client == (int32_t)g->stale.client;
        if (s->from_ns >= g->stale.from_ns && s->from_ns <= g->first_ns &&
            (fault_on_servers(s->type) || mine))
            return i;
    }
    return SIZE_MAX;
}

struct group_blame groups_blame(const struct violation_group *g, const struct blame_facts *f)
{
    struct group_blame b = {.why = BLAME_NOT_KNOWN, .span = SIZE_MAX};
    if (f->leaseless) {
        b.span = session_ender(g, f);
        b.why = b.span != SIZE_MAX ? BLAME_SESSION_ENDED : BLAME_SESSION_LOST;
        return b;
    }
    if (f->lease_ns == 0)
        return b;
    b.lease_end_ns = g->stale.from_ns + f->lease_ns;
    if ((b.late = lapsed_at(g, f, g->stale.from_ns, true)) != NULL) {
        b.why = BLAME_LATE_HOLDER;
        b.lease_end_ns = b.late->stop_from_ns + f->lease_ns;
    } else if ((b.late = lapsed_at(g, f, g->first_ns, false)) != NULL) {
        b.why = BLAME_LATE_ENTRANT;
    } else {
        /* The lease began between the ask and the entry: a grant that came
         * before the ask's end could only have been lost; one after it may
         * have found the lease run out. */
        uint64_t asked = g->stale.asked_ns && g->stale.asked_ns <= g->stale.from_ns
                             ? g->stale.asked_ns
                             : g->stale.from_ns;
        b.lease_end_min_ns = asked + f->lease_ns;
        b.why = b.lease_end_min_ns <= g->first_ns ? BLAME_OUTLIVED : BLAME_LOST;
    }
    return b;
}
