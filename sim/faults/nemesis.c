/* nemesis.c - the timeline's records, and the claims of client faults. */
#include "sim/faults/nemesis.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/faults/nemesis_state.h"
#include "sim/fleet/server_kind.h"

struct nemesis *nemesis_new(const struct fault_spec *faults, size_t count, uint64_t seed)
{
    struct nemesis *n = calloc(1, sizeof(*n));
    if (n == NULL)
        return NULL;
    n->n = count;
    for (size_t i = 0; i < n->n; i++) {
        struct fault_record *r = &n->rec[i];
        r->spec = faults[i];
        n->notes[i * NOTES_PER_FAULT + NOTE_SERVERS] = r->servers;
        n->notes[i * NOTES_PER_FAULT + NOTE_START] = r->detail;
        n->notes[i * NOTES_PER_FAULT + NOTE_END] = r->end_detail;
    }
    /* Its own stream of choices, repeatable from the seed alone. */
    n->rng = (seed ^ 0x6e656d6573697321ULL) * 0x9e3779b97f4a7c15ULL | 1;
    atomic_init(&n->pending, 0);
    atomic_init(&n->active, 0);
    atomic_init(&n->quit, 0);
    n->hist = history_buf_new();
    if (n->hist == NULL) {
        free(n);
        return NULL;
    }
    return n;
}

void nemesis_free(struct nemesis *n)
{
    if (n == NULL)
        return;
    nemesis_finish(n);
    for (size_t i = 0; i < n->n; i++)
        nemesis_truth_done(n, i); /* a fault struck at 0 ms by a run whose thread never began */
    history_buf_free(n->hist);
    for (size_t i = 0; i < SCENARIO_MAX_FAULTS; i++)
        free(n->net_groups[i]);
    free(n->waiters);
    free(n);
}

void nemesis_set_proxy(struct nemesis *n, struct proxy *p, const struct server_kind *kind,
                       size_t clients)
{
    n->proxy = p;
    n->net_kind = kind;
    n->net_n = 0;
    n->net_clients = (uint32_t)clients;
    for (size_t e = 0; p && e < proxy_endpoints(p); e++)
        n->net_up[n->net_n++] = proxy_upstream(p, e);
}

/* The pooler in front of the lock's servers (pgbouncer before PostgreSQL:
 * its kind's pooler), as one more node after them, for the pooler target. */
static void add_pooler(struct nemesis *n)
{
    struct fault_nodes *nd = &n->nodes;
    if (nd->cl == NULL || nd->n == 0 || nd->n >= LOCK_ENDPOINT_MAX)
        return;
    const struct server_kind *kind = nd->cl->srv[nd->node[0].idx].kind;
    const struct server_kind *pooler = kind->pooler ? server_kind_find(kind->pooler) : NULL;
    for (size_t j = 0; pooler && j < nd->cl->n; j++)
        if (nd->cl->srv[j].kind == pooler) {
            struct fault_node *p = &nd->node[nd->n];
            snprintf(p->name, sizeof(p->name), "%s-1", pooler->node_prefix);
            p->idx = j;
            n->pooler = 1u << nd->n++;
            return;
        }
}

/* What a kill or a restart the file left "data" out of brings back: what
 * its servers' kind keeps (on disk: kept; Redis without AOF: lost), so
 * that the record and report.json say it. A pooler keeps none. */
static void resolve_data(struct nemesis *n)
{
    if (n->nodes.cl == NULL || n->lock_nodes == 0)
        return;
    const struct server_kind *kind = n->nodes.cl->srv[n->nodes.node[0].idx].kind;
    for (size_t i = 0; i < n->n; i++) {
        struct fault_spec *f = &n->rec[i].spec;
        if (!fault_kind_of(f)->takes_data || f->data != DATA_UNSET || f->pick == PICK_POOLER)
            continue;
        f->data = kind->keeps_data ? DATA_KEPT : kind->forget_data ? DATA_LOST : DATA_UNSET;
    }
}

void nemesis_set_nodes(struct nemesis *n, const struct fault_nodes *nodes)
{
    n->nodes = *nodes;
    n->lock_nodes = nodes->n;
    n->pooler = 0;
    add_pooler(n);
    resolve_data(n);
}

int nemesis_start(struct nemesis *n, uint64_t t0_ns, uint64_t deadline_ns, const atomic_int *stop)
{
    uint64_t clients = 0;
    for (size_t i = 0; i < n->n; i++) {
        const struct fault_spec *f = &n->rec[i].spec;
        n->due_ns[i] = t0_ns + f->at_ms * 1000000u;
        /* a holder's faults are claimed by the holder */
        if (fault_on_holder(f))
            clients |= 1ULL << i;
    }
    atomic_store(&n->pending, clients);
    n->deadline_ns = deadline_ns;
    n->stop = stop;
    if (!nemesis_has_server_faults(n) && !nemesis_has_network_faults(n) &&
        !nemesis_has_waiter_faults(n)) {
        history_buf_close(n->hist); /* no thread: nothing will come from it */
        return 0;
    }
    /* "at_ms": 0 means from the start: in place before any client asks */
    nemesis_start_at_zero(n);
    int rc = pthread_create(&n->thread, NULL, nemesis_main, n);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    pthread_setname_np(n->thread, "locklab-nemesis");
    n->running = true;
    return 0;
}

void nemesis_finish(struct nemesis *n)
{
    if (n->running) {
        atomic_store(&n->quit, 1);
        pthread_join(n->thread, NULL);
        n->running = false;
    }
    /* a holder that started a network fault as the thread was leaving */
    for (size_t i = 0; i < n->n; i++)
        if (fault_on_network(n->rec[i].spec.kind) &&
            (nemesis_net_proxy(n, &n->rec[i].spec) || nemesis_host_cut(n, &n->rec[i].spec)) &&
            n->rec[i].fired && !n->rec[i].ended)
            nemesis_net_end(n, i, true);
}

struct history_buf *nemesis_history(const struct nemesis *n)
{
    return n->hist;
}

size_t nemesis_notes(const struct nemesis *n, const char *const **notes)
{
    *notes = n->notes;
    return n->n * NOTES_PER_FAULT;
}

int nemesis_claim(struct nemesis *n, uint32_t client, uint64_t now_ns)
{
    uint64_t p = atomic_load_explicit(&n->pending, memory_order_relaxed);
    while (p) {
        int i = __builtin_ctzll(p);
        p &= p - 1;
        const struct fault_spec *f = &n->rec[i].spec;
        if (now_ns < n->due_ns[i])
            continue;
        if (f->target != FAULT_TARGET_HOLDER && (uint32_t)f->target != client)
            continue;
        uint64_t bit = 1ULL << i;
        if (atomic_fetch_and(&n->pending, ~bit) & bit)
            return i;
    }
    return -1;
}

void nemesis_unclaim(struct nemesis *n, int idx)
{
    atomic_fetch_or(&n->pending, 1ULL << idx);
}

const struct fault_spec *nemesis_spec(const struct nemesis *n, int idx)
{
    return &n->rec[idx].spec;
}

void nemesis_fired(struct nemesis *n, int idx, uint32_t client, uint32_t key, uint64_t start_ns)
{
    struct fault_record *r = &n->rec[idx];
    r->fired = true;
    r->client = client;
    r->key = key;
    r->start_ns = start_ns;
    nemesis_mark(n, (size_t)idx, true);
}

void nemesis_ended(struct nemesis *n, int idx, uint64_t end_ns)
{
    n->rec[idx].ended = true;
    n->rec[idx].end_ns = end_ns;
    nemesis_mark(n, (size_t)idx, false);
}

void nemesis_mark(struct nemesis *n, size_t i, bool on)
{
    if (on)
        atomic_fetch_or(&n->active, 1ULL << i);
    else
        atomic_fetch_and(&n->active, ~(1ULL << i));
}

uint64_t nemesis_active(const struct nemesis *n)
{
    return atomic_load(&n->active);
}

size_t nemesis_report(const struct nemesis *n, struct fault_record *out, size_t max)
{
    size_t k = n->n < max ? n->n : max;
    for (size_t i = 0; i < k; i++)
        out[i] = n->rec[i];
    return k;
}
