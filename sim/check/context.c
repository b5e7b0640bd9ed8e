/* context.c - the sections around the drawn groups of violations, rebuilt
 * from a stream of history events (context.h).
 *
 * Only the windows' keys are followed: pairing is per process and key
 * (pairing.h), so a section on any other key cannot change one on these.
 * Every acquire ok still counts, on every key, so each section gets the
 * id the one-pass checker named it by (its order of entry).
 */
#include "sim/check/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/check/asks.h"
#include "sim/check/groups.h"
#include "sim/check/pairing.h"
#include "sim/record/grow.h"
#include "sim/record/history_reader.h"

#define NONE UINT32_MAX

struct held {
    struct section s;
    uint64_t id;
    uint32_t next; /* the process's next older open section, or the free list's next */
};

struct kept {
    struct section s;
    uint64_t id;
    bool by_seq;  /* its key is sorted by the witness's sequence (checker.c) */
    bool of_pair; /* a listed pair's own copy, not rebuilt here */
};

struct context_key {
    uint32_t key;
    bool partial_seq;  /* a section of the key lacks a sequence: sorted by time */
    size_t w_lo, w_hi; /* its windows, in x->win */
};

struct context {
    struct context_window *win; /* sorted by key */
    size_t n_win;
    struct context_key *keys; /* the windows' keys, sorted */
    size_t n_keys;
    uint32_t *open; /* per process: its newest open section on a followed key */
    size_t n_procs;
    struct held *pool;
    size_t n_pool, cap_pool;
    uint32_t free_head;
    size_t n_open;
    struct kept *kept;
    size_t n_kept, cap_kept;
    size_t peak;
    uint64_t next_id, now;
    struct asks asks;
};

struct context_window context_window_of(const struct section *a, const struct section *b,
                                        uint64_t t0_ns)
{
    uint64_t from = a->from_ns < b->from_ns ? a->from_ns : b->from_ns;
    uint64_t to = a->to_ns > b->to_ns ? a->to_ns : b->to_ns;
    uint64_t pad = (to - from) / 4 > 50000000ULL ? (to - from) / 4 : 50000000ULL;
    struct context_window w = {
        .key = a->key, .w0_ns = from > pad ? from - pad : 0, .w1_ns = to + pad};
    if (w.w0_ns < t0_ns)
        w.w0_ns = t0_ns;
    w.early_ns = w.w0_ns > 60000000000ULL ? w.w0_ns - 60000000000ULL : 0;
    return w;
}

struct context_window context_window_of_group(const struct violation_group *g, uint64_t t0_ns)
{
    struct section stale = g->stale, to = g->stale;
    uint64_t end = g->reach_ns > g->stale.to_ns ? g->reach_ns : g->stale.to_ns;
    if (end > g->first_ns && end - g->first_ns > CONTEXT_GROUP_SPAN_NS)
        end = g->first_ns + CONTEXT_GROUP_SPAN_NS;
    stale.to_ns = stale.to_ns < end ? stale.to_ns : end;
    to.from_ns = g->first_ns;
    to.to_ns = end;
    return context_window_of(&stale, &to, t0_ns);
}

static int cmp_window(const void *pa, const void *pb)
{
    const struct context_window *a = pa, *b = pb;
    return (a->key > b->key) - (a->key < b->key);
}

static int cmp_key(const void *pk, const void *pe)
{
    uint32_t k = *(const uint32_t *)pk, e = ((const struct context_key *)pe)->key;
    return (k > e) - (k < e);
}

static struct context_key *key_of(const struct context *x, uint32_t key)
{
    return x->n_keys ? bsearch(&key, x->keys, x->n_keys, sizeof(*x->keys), cmp_key) : NULL;
}

void context_free(struct context *x)
{
    if (x == NULL)
        return;
    free(x->win);
    free(x->keys);
    free(x->open);
    asks_free(&x->asks);
    free(x->pool);
    free(x->kept);
    free(x);
}

struct context *context_begin(const struct run_result *r, size_t windows)
{
    struct context *x = calloc(1, sizeof(*x));
    const struct violation_groups *gs = &r->check.groups;
    size_t drawn[CHECK_MAX_GROUPS];
    size_t n = groups_drawn(gs, windows, drawn);
    if (x == NULL || (n && (x->win = malloc(n * sizeof(*x->win))) == NULL) ||
        (n && (x->keys = malloc(n * sizeof(*x->keys))) == NULL)) {
        context_free(x);
        return NULL;
    }
    x->free_head = NONE;
    /* the ones report.html draws (html.c) */
    for (size_t i = 0; i < n; i++)
        x->win[x->n_win++] = context_window_of_group(&gs->list[drawn[i]], r->t0_mono_ns);
    if (x->n_win > 1)
        qsort(x->win, x->n_win, sizeof(*x->win), cmp_window);
    for (size_t i = 0; i < x->n_win; i++) {
        if (x->n_keys && x->keys[x->n_keys - 1].key == x->win[i].key) {
            x->keys[x->n_keys - 1].w_hi = i + 1;
            continue;
        }
        x->keys[x->n_keys++] = (struct context_key){.key = x->win[i].key, .w_lo = i, .w_hi = i + 1};
    }
    return x;
}

static size_t held_now(const struct context *x)
{
    return x->n_open + x->n_kept;
}

static int keep(struct context *x, const struct section *s, uint64_t id, bool of_pair)
{
    if (array_grow(&x->kept, &x->cap_kept, x->n_kept + 1, sizeof(*x->kept)) < 0)
        return -1;
    x->kept[x->n_kept++] = (struct kept){.s = *s, .id = id, .of_pair = of_pair};
    if (held_now(x) > x->peak)
        x->peak = held_now(x);
    return 0;
}

/* The process's chain head, the table grown to hold it; NULL out of memory. */
static uint32_t *proc_head(struct context *x, uint32_t client)
{
    if (client >= x->n_procs) {
        size_t cap = x->n_procs;
        if (array_grow(&x->open, &cap, (size_t)client + 1, sizeof(*x->open)) < 0)
            return NULL;
        for (size_t i = x->n_procs; i < cap; i++)
            x->open[i] = NONE;
        x->n_procs = cap;
    }
    return &x->open[client];
}

/* The link that points at the process's open section on key, or NULL. */
static uint32_t *find_open(struct context *x, uint32_t *head, uint32_t key)
{
    for (uint32_t *at = head; *at != NONE; at = &x->pool[*at].next)
        if (x->pool[*at].s.key == key)
            return at;
    return NULL;
}

/* Close the section *at points at (pairing.h's rule), unlink it, and keep
 * it when it falls in a window of its key. */
static int close_section(struct context *x, uint32_t *at, uint64_t t, uint64_t seq_to,
                         uint8_t effect)
{
    uint32_t i = *at;
    struct held *h = &x->pool[i];
    section_close(&h->s, t, seq_to, effect);
    *at = h->next;
    h->next = x->free_head;
    x->free_head = i;
    x->n_open--;
    struct context_key *k = key_of(x, h->s.key);
    k->partial_seq = k->partial_seq || !h->s.has_seq;
    for (size_t w = k->w_lo; w < k->w_hi; w++)
        if (context_in_window(&x->win[w], &h->s))
            return keep(x, &h->s, h->id, false);
    return 0;
}

static int open_section(struct context *x, uint32_t *head, const struct history_event *e,
                        uint64_t id)
{
    /* re-entry nests; another owner on a key still held left it unseen (pairing.h) */
    uint32_t *at = find_open(x, head, e->key);
    if (at && x->pool[*at].s.owner != e->owner &&
        close_section(x, at, e->t_ns, HISTORY_NO_SEQ, EFFECT_CRASHED) < 0)
        return -1;
    uint32_t i = x->free_head;
    if (i == NONE) {
        if (x->n_pool >= NONE ||
            array_grow(&x->pool, &x->cap_pool, x->n_pool + 1, sizeof(*x->pool)) < 0)
            return -1;
        i = (uint32_t)x->n_pool++;
    } else {
        x->free_head = x->pool[i].next;
    }
    x->pool[i] = (struct held){
        .s = section_of_acquire(e, asks_asked_ns(&x->asks, e)), .id = id, .next = *head};
    *head = i;
    x->n_open++;
    if (held_now(x) > x->peak)
        x->peak = held_now(x);
    return 0;
}

int context_event(struct context *x, const struct history_event *e)
{
    if (e->t_ns < x->now)
        return -2;
    /* time moves as the checker's does (check_stream.c), so the two
     * refuse the same files */
    if (e->f == HF_FAULT) {
        x->now = e->t_ns;
        return 0;
    }
    enum section_step step = section_step_of(e);
    if (step == STEP_NONE)
        return asks_event(&x->asks, e);
    if (e->client >= HISTORY_MAX_CLIENTS)
        return -2;
    x->now = e->t_ns;
    /* the one-pass checker's name for it, whatever its key */
    uint64_t id = step == STEP_OPEN ? x->next_id++ : 0;
    if (key_of(x, e->key) == NULL)
        return 0;
    uint32_t *head = proc_head(x, e->client);
    if (head == NULL)
        return -1;
    if (step == STEP_OPEN)
        return open_section(x, head, e, id);
    uint32_t *at = find_open(x, head, e->key);
    if (at == NULL)
        return 0; /* a release of nothing this process holds on that key */
    if (close_section(x, at, e->t_ns, e->seq, section_step_effect(step, e)) < 0)
        return -1;
    /* A holder that dies leaves every hold it had re-entered, too. */
    while (step == STEP_CRASH && (at = find_open(x, head, e->key)) != NULL)
        if (close_section(x, at, e->t_ns, e->seq, EFFECT_CRASHED) < 0)
            return -1;
    return 0;
}

size_t context_held_peak(const struct context *x)
{
    return x->peak;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

/* By id, the rebuilt section before a pair's copy of it. */
static int cmp_kept_id(const void *pa, const void *pb)
{
    const struct kept *a = pa, *b = pb;
    int c = cmp_u64(a->id, b->id);
    return c ? c : (a->of_pair > b->of_pair) - (a->of_pair < b->of_pair);
}

/* checker.c's order: by key, then entry (by the witness's sequence on a
 * key all of whose sections carry one, else by time). Ties, which that
 * sort leaves as they fall, by id. */
static int cmp_kept_order(const void *pa, const void *pb)
{
    const struct kept *a = pa, *b = pb;
    const struct section *x = &a->s, *y = &b->s;
    int c = cmp_u64(x->key, y->key);
    if (c == 0 && a->by_seq) {
        c = cmp_u64(x->seq_from, y->seq_from);
        c = c ? c : cmp_u64(x->seq_to, y->seq_to);
    }
    c = c ? c : cmp_u64(x->from_ns, y->from_ns);
    c = c ? c : cmp_u64(x->to_ns, y->to_ns);
    c = c ? c : cmp_u64(x->client, y->client);
    c = c ? c : cmp_u64(x->owner, y->owner);
    return c ? c : cmp_u64(a->id, b->id);
}

struct id_at {
    uint64_t id;
    size_t at;
};

static int cmp_id_at(const void *pa, const void *pb)
{
    return cmp_u64(((const struct id_at *)pa)->id, ((const struct id_at *)pb)->id);
}

static size_t index_of(const struct id_at *map, size_t n, uint64_t id)
{
    const struct id_at *m = bsearch(&(struct id_at){.id = id}, map, n, sizeof(*map), cmp_id_at);
    return m ? m->at : 0; /* every pair's two were kept: never */
}

/* The kept sections, each once, in checker.c's order, into r; the pairs'
 * a and b remapped. 0, or -1 out of memory. */
static int settle(struct context *x, struct run_result *r)
{
    struct check_result *c = &r->check;
    for (size_t i = 0; i < c->n_list; i++)
        if (keep(x, &c->list[i].sa, c->list[i].a, true) < 0 ||
            keep(x, &c->list[i].sb, c->list[i].b, true) < 0)
            return -1;
    size_t n = 0;
    if (x->n_kept > 1)
        qsort(x->kept, x->n_kept, sizeof(*x->kept), cmp_kept_id);
    for (size_t i = 0; i < x->n_kept; i++)
        if (n == 0 || x->kept[n - 1].id != x->kept[i].id)
            x->kept[n++] = x->kept[i];
    for (size_t i = 0; i < n; i++) {
        const struct context_key *k = key_of(x, x->kept[i].s.key);
        x->kept[i].by_seq = k && !k->partial_seq; /* a key with no window is not drawn */
    }
    if (n > 1)
        qsort(x->kept, n, sizeof(*x->kept), cmp_kept_order);
    struct section *s = malloc((n ? n : 1) * sizeof(*s));
    struct id_at *map = malloc((n ? n : 1) * sizeof(*map));
    if (s == NULL || map == NULL) {
        free(s);
        free(map);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        s[i] = x->kept[i].s;
        map[i] = (struct id_at){x->kept[i].id, i};
    }
    if (n > 1)
        qsort(map, n, sizeof(*map), cmp_id_at);
    for (size_t i = 0; i < c->n_list; i++) {
        c->list[i].a = index_of(map, n, c->list[i].a);
        c->list[i].b = index_of(map, n, c->list[i].b);
    }
    free(map);
    r->sections = s;
    r->n_sections = n;
    return 0;
}

int context_end(struct context *x, uint64_t end_ns, struct run_result *r)
{
    /* Sections nobody released stay open, to the end of the history, as
     * the checker leaves them (checker.h). */
    int rc = 0;
    for (size_t p = 0; rc == 0 && p < x->n_procs; p++)
        while (rc == 0 && x->open[p] != NONE)
            rc = close_section(x, &x->open[p], end_ns, HISTORY_NO_SEQ, EFFECT_OPEN);
    if (rc == 0)
        rc = settle(x, r);
    context_free(x);
    return rc;
}

/* The run's ids for a file's names: a history file numbers its keys and
 * owners in the order it first needs them (history_bin.c), the run in its
 * own. Only the windows' keys are followed, so only theirs, and the owners
 * of their sections, are looked up. */
struct named {
    const char *name;
    uint32_t id;
};

struct renumber {
    const struct history *run;
    const struct context *x;
    struct named *owners;  /* the run's owners, sorted by name */
    uint32_t *key, *owner; /* file id -> run id (NONE: a key not followed) */
    size_t n_key, cap_key, n_owner, cap_owner;
};

static int cmp_named(const void *pa, const void *pb)
{
    return strcmp(((const struct named *)pa)->name, ((const struct named *)pb)->name);
}

static int renumber_begin(struct renumber *m, const struct history *run, const struct context *x)
{
    *m = (struct renumber){.run = run, .x = x};
    if (run->n_owners == 0)
        return 0;
    m->owners = malloc(run->n_owners * sizeof(*m->owners));
    if (m->owners == NULL)
        return -1;
    for (size_t i = 0; i < run->n_owners; i++)
        m->owners[i] = (struct named){run->owners[i], (uint32_t)i};
    qsort(m->owners, run->n_owners, sizeof(*m->owners), cmp_named);
    return 0;
}

static void renumber_free(struct renumber *m)
{
    free(m->owners);
    free(m->key);
    free(m->owner);
}

/* The run's key for the file's key id: a window's, or NONE. */
static uint32_t run_key(const struct context *x, const struct history *run, const char *name)
{
    for (size_t i = 0; i < x->n_keys; i++)
        if (x->keys[i].key < run->n_keys && strcmp(run->keys[x->keys[i].key], name) == 0)
            return x->keys[i].key;
    return NONE;
}

static uint32_t run_owner(const struct renumber *m, const char *name)
{
    const struct named *n = m->run->n_owners
                                ? bsearch(&(struct named){.name = name}, m->owners,
                                          m->run->n_owners, sizeof(*m->owners), cmp_named)
                                : NULL;
    return n ? n->id : NONE;
}

/* e's key and owner in the run's ids. 0; -1 out of memory; -2 an owner of a
 * followed key the run never named (err says). */
static int renumber(struct renumber *m, const struct history *file, struct history_event *e,
                    char *err, size_t errlen)
{
    if (section_step_of(e) == STEP_NONE)
        return 0;
    if (e->key >= m->n_key) {
        size_t from = m->n_key;
        if (array_grow(&m->key, &m->cap_key, (size_t)e->key + 1, sizeof(*m->key)) < 0)
            return -1;
        for (size_t i = from; i <= e->key; i++)
            m->key[i] = run_key(m->x, m->run, file->keys[i]);
        m->n_key = (size_t)e->key + 1;
    }
    e->key = m->key[e->key];
    if (e->key == NONE)
        return 0;
    if (e->owner >= m->n_owner) {
        size_t from = m->n_owner;
        if (array_grow(&m->owner, &m->cap_owner, (size_t)e->owner + 1, sizeof(*m->owner)) < 0)
            return -1;
        for (size_t i = from; i <= e->owner; i++)
            m->owner[i] = NONE; /* looked up when first needed */
        m->n_owner = (size_t)e->owner + 1;
    }
    uint32_t fo = e->owner;
    if (m->owner[fo] == NONE && (m->owner[fo] = run_owner(m, file->owners[fo])) == NONE) {
        snprintf(err, errlen, "owner \"%s\" is not one of the run's", file->owners[fo]);
        return -2;
    }
    e->owner = m->owner[fo];
    return 0;
}

int context_from_file(const char *path, struct run_result *r, size_t windows, char *err,
                      size_t errlen)
{
    struct history_reader *rd = history_reader_open(path, err, errlen);
    if (rd == NULL)
        return -2;
    struct renumber m;
    struct context *x = context_begin(r, windows);
    if (x == NULL || renumber_begin(&m, &r->hist, x) < 0) {
        if (x)
            renumber_free(&m);
        context_free(x);
        history_reader_close(rd);
        snprintf(err, errlen, "out of memory rebuilding the violations' context from %s", path);
        return -1;
    }
    struct history_event e;
    int got = 0, rc = 0;
    char why[256] = "";
    while (rc == 0 && (got = history_reader_next(rd, &e)) == 1) {
        rc = renumber(&m, history_reader_header(rd), &e, why, sizeof(why));
        if (rc == 0)
            rc = context_event(x, &e);
        else if (rc == -2)
            snprintf(err, errlen, "%s: %s", path, why);
    }
    if (rc == 0 && got < 0) {
        snprintf(err, errlen, "%s", history_reader_error(rd));
        rc = -2;
    } else if (rc == -2 && why[0] == '\0') {
        snprintf(err, errlen, "%s: events out of time order, or a process numbered past %u", path,
                 (unsigned)HISTORY_MAX_CLIENTS);
    } else if (rc == 0) {
        rc = context_end(x, history_reader_header(rd)->end_mono_ns, r);
        x = NULL;
    }
    if (rc == -1)
        snprintf(err, errlen, "out of memory rebuilding the violations' context from %s", path);
    renumber_free(&m);
    context_free(x);
    history_reader_close(rd);
    return rc;
}
