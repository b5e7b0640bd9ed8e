/* stuck.c - per key, the stretches with waiters and no holder.
 *
 * Every wait (an acquire's invoke to its completion) and every section
 * (grant to release or crash, as history_sections rebuilds them) is two
 * steps on its key's count of waiters or holders. The stream keeps per
 * key the two counts and the stretch under way, per client its wait and
 * the keys it holds. A section still open at the end, or a wait, lasts to
 * the end.
 *
 * The steps of one instant are taken together, in a fixed order: the
 * grants, then the waits that end, then those that begin, then the
 * releases. So a grant and the end of its wait open no stretch between
 * them, and a key that one waiter leaves as another comes splits its
 * stretch there, as the whole-history sweep (steps sorted by key, time,
 * holders first) always did. A wait that begins and ends in one instant
 * changes nothing.
 */
#include "sim/check/stuck.h"
#include "sim/record/grow.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { D_GRANT = 0, D_WAIT_END, D_WAIT_BEGIN, D_RELEASE, D_PHASES };

struct key_state {
    int64_t waiters, holders;
    uint64_t from; /* the stretch under way began */
    bool stuck, touched;
    uint64_t d[D_PHASES]; /* this instant's steps */
    struct stuck_key k;
};

/* A run of holds of one owner on one key, re-entered one on another: a
 * holder re-entering a million times keeps one. */
struct hold {
    uint32_t key, owner;
    uint32_t n;
};

struct proc {
    uint64_t since; /* its pending acquire's invoke + 1; 0: none */
    uint32_t wait_key;
    struct hold *holds; /* newest last */
    uint32_t n_holds, cap_holds;
};

struct stuck {
    struct key_state *keys;
    size_t n_keys;
    struct proc *procs;
    size_t n_procs;
    uint32_t *touched; /* keys with steps this instant */
    size_t n_touched, cap_touched;
    uint64_t now;
};

static void close_stretch(struct stuck_key *k, uint64_t from, uint64_t to)
{
    if (to <= from)
        return;
    uint64_t len = to - from;
    k->total_ns += len;
    k->stretches++;
    if (len > k->longest_ns) {
        k->longest_ns = len;
        k->longest_from_ns = from;
    }
}

static void eval(struct key_state *ks, uint64_t t)
{
    bool is = ks->waiters > 0 && ks->holders == 0;
    if (is && !ks->stuck)
        ks->from = t;
    else if (ks->stuck && !is)
        close_stretch(&ks->k, ks->from, t);
    ks->stuck = is;
}

/* The instant has passed: each key's steps, phase by phase. */
static void flush(struct stuck *s)
{
    for (size_t i = 0; i < s->n_touched; i++) {
        struct key_state *ks = &s->keys[s->touched[i]];
        const int64_t sign[D_PHASES] = {1, -1, 1, -1};
        for (int p = 0; p < D_PHASES; p++) {
            if (ks->d[p] == 0)
                continue;
            int64_t *count = p == D_GRANT || p == D_RELEASE ? &ks->holders : &ks->waiters;
            *count += sign[p] * (int64_t)ks->d[p];
            eval(ks, s->now);
        }
        memset(ks->d, 0, sizeof(ks->d));
        ks->touched = false;
    }
    s->n_touched = 0;
}

static int steps(struct stuck *s, uint32_t key, int phase, uint32_t n)
{
    if (key >= s->n_keys) {
        size_t cap = s->n_keys;
        if (array_grow(&s->keys, &cap, (size_t)key + 1, sizeof(*s->keys)) < 0)
            return -1;
        memset(&s->keys[s->n_keys], 0, (cap - s->n_keys) * sizeof(*s->keys));
        for (size_t k = s->n_keys; k < cap; k++)
            s->keys[k].k.key = (uint32_t)k;
        s->n_keys = cap;
    }
    struct key_state *ks = &s->keys[key];
    if (!ks->touched) {
        if (array_grow(&s->touched, &s->cap_touched, s->n_touched + 1, sizeof(*s->touched)) < 0)
            return -1;
        s->touched[s->n_touched++] = key;
        ks->touched = true;
    }
    ks->d[phase] += n;
    return 0;
}

static int step(struct stuck *s, uint32_t key, int phase)
{
    return steps(s, key, phase, 1);
}

/* A wait ends now; one begun this very instant is taken back instead. */
static int wait_ends(struct stuck *s, struct proc *p)
{
    int rc = 0;
    if (p->since - 1 == s->now)
        s->keys[p->wait_key].d[D_WAIT_BEGIN]--;
    else
        rc = step(s, p->wait_key, D_WAIT_END);
    p->since = 0;
    return rc;
}

/* The newest of p's holds on key, or -1. */
static long find_hold(const struct proc *p, uint32_t key)
{
    for (long i = (long)p->n_holds - 1; i >= 0; i--)
        if (p->holds[i].key == key)
            return i;
    return -1;
}

/* The newest hold of run i leaves; all of them when all. */
static int drop_hold(struct stuck *s, struct proc *p, long i, bool all)
{
    uint32_t key = p->holds[i].key, n = all ? p->holds[i].n : 1;
    if ((p->holds[i].n -= n) > 0)
        return steps(s, key, D_RELEASE, n);
    memmove(&p->holds[i], &p->holds[i + 1], (p->n_holds - (size_t)i - 1) * sizeof(*p->holds));
    p->n_holds--;
    return steps(s, key, D_RELEASE, n);
}

static int acquire_event(struct stuck *s, struct proc *p, const struct history_event *e)
{
    if (e->type == HT_INVOKE) {
        /* an invoke with one pending: the earlier wait has ended by now */
        if (p->since && wait_ends(s, p) < 0)
            return -1;
        p->since = e->t_ns + 1;
        p->wait_key = e->key;
        return step(s, e->key, D_WAIT_BEGIN);
    }
    if (p->since && wait_ends(s, p) < 0)
        return -1;
    if (e->type != HT_OK)
        return 0;
    /* history_sections' rule: another owner's section on the key (a new
     * life of the process) has ended; the same owner's nests */
    long i = find_hold(p, e->key);
    if (i >= 0 && p->holds[i].owner != e->owner && drop_hold(s, p, i, false) < 0)
        return -1;
    struct hold *last = p->n_holds ? &p->holds[p->n_holds - 1] : NULL;
    if (last && last->key == e->key && last->owner == e->owner && last->n < UINT32_MAX) {
        last->n++;
        return step(s, e->key, D_GRANT);
    }
    size_t cap = p->cap_holds;
    if (array_grow(&p->holds, &cap, (size_t)p->n_holds + 1, sizeof(*p->holds)) < 0)
        return -1;
    p->cap_holds = (uint32_t)cap;
    p->holds[p->n_holds++] = (struct hold){e->key, e->owner, 1};
    return step(s, e->key, D_GRANT);
}

struct stuck *stuck_begin(void)
{
    return calloc(1, sizeof(struct stuck));
}

int stuck_event(struct stuck *s, const struct history_event *e)
{
    bool release = e->f == HF_RELEASE && e->type == HT_INVOKE;
    if (e->f != HF_ACQUIRE && !release && e->f != HF_CRASH)
        return 0;
    if (e->t_ns > s->now) {
        flush(s);
        s->now = e->t_ns;
    }
    if (e->client >= s->n_procs) {
        size_t cap = s->n_procs;
        if (e->client >= HISTORY_MAX_CLIENTS ||
            array_grow(&s->procs, &cap, (size_t)e->client + 1, sizeof(*s->procs)) < 0)
            return -1;
        memset(&s->procs[s->n_procs], 0, (cap - s->n_procs) * sizeof(*s->procs));
        s->n_procs = cap;
    }
    struct proc *p = &s->procs[e->client];
    if (e->f == HF_ACQUIRE)
        return acquire_event(s, p, e);
    long i = find_hold(p, e->key);
    if (i < 0)
        return 0;
    if (drop_hold(s, p, i, !release) < 0)
        return -1;
    /* a holder that dies leaves every hold it had re-entered, too */
    while (!release && (i = find_hold(p, e->key)) >= 0)
        if (drop_hold(s, p, i, true) < 0)
            return -1;
    return 0;
}

static int by_longest(const void *a, const void *b)
{
    const struct stuck_key *x = a, *y = b;
    if (x->longest_ns != y->longest_ns)
        return (x->longest_ns < y->longest_ns) - (x->longest_ns > y->longest_ns);
    return (x->key > y->key) - (x->key < y->key);
}

static void stuck_free(struct stuck *s)
{
    for (size_t i = 0; i < s->n_procs; i++)
        free(s->procs[i].holds);
    free(s->procs);
    free(s->keys);
    free(s->touched);
    free(s);
}

int stuck_end(struct stuck *s, uint64_t end_ns, struct stuck_key **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    int rc = 0;
    /* what is still awaited or held lasts to the end (to the last event,
     * should a file's end line come before it) */
    if (end_ns > s->now) {
        flush(s);
        s->now = end_ns;
    }
    for (size_t c = 0; rc == 0 && c < s->n_procs; c++) {
        struct proc *p = &s->procs[c];
        if (p->since)
            rc = wait_ends(s, p);
        for (uint32_t i = 0; rc == 0 && i < p->n_holds; i++)
            rc = steps(s, p->holds[i].key, D_RELEASE, p->holds[i].n);
    }
    flush(s);
    struct stuck_key *keys = malloc((s->n_keys ? s->n_keys : 1) * sizeof(*keys));
    if (rc < 0 || keys == NULL) {
        free(keys);
        stuck_free(s);
        return -1;
    }
    size_t n = 0;
    for (size_t k = 0; k < s->n_keys; k++)
        if (s->keys[k].k.stretches)
            keys[n++] = s->keys[k].k;
    qsort(keys, n, sizeof(*keys), by_longest);
    *out = keys;
    *n_out = n;
    stuck_free(s);
    return 0;
}

int stuck_compute(const struct history *h, struct stuck_key **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    struct stuck *s = stuck_begin();
    if (s == NULL)
        return -1;
    for (size_t k = 0; k < h->n; k++)
        if (stuck_event(s, &h->ev[k]) < 0) {
            stuck_free(s);
            return -1;
        }
    return stuck_end(s, h->end_mono_ns, out, n_out);
}
