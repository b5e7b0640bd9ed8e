/* targets.c - which servers a process fault strikes: by name, or chosen
 * from the run's seed among the servers no running fault holds (Jepsen's
 * one, minority, majority, all), or the ones that lead (primaries: every
 * Redis master; ZooKeeper's leader, asked with srvr), or by role (the
 * leader: the master the sentinels name, else the one its kind says leads;
 * a follower; the pooler in front), or for Redlock the nodes that hold the
 * votes of a key's current holder (holder-majority: the value a quorum of
 * nodes agrees on, read with GET). */
#include <stdio.h>
#include <string.h>

#include "algorithms/lock.h"
#include "sim/faults/nemesis_state.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"

uint64_t nemesis_random(struct nemesis *n)
{
    /* xorshift64*: enough for picking servers and clients, and repeatable */
    n->rng ^= n->rng >> 12;
    n->rng ^= n->rng << 25;
    n->rng ^= n->rng >> 27;
    return n->rng * 0x2545F4914F6CDD1DULL;
}

/* The kind of the lock's servers (none without servers). */
static const struct server_kind *lock_kind(const struct nemesis *n)
{
    return n->nodes.n ? n->nodes.cl->srv[n->nodes.node[0].idx].kind : NULL;
}

/* The port of the master finder s of kind names (the redis lock's
 * sentinels); 0 when it names none. */
static int named_master(const struct nemesis *n, const struct server_kind *kind, size_t s)
{
    const struct server_kind *finder = kind ? server_kind_find(kind->found_by) : NULL;
    int port = finder && finder->names_master ? finder->names_master(n->nodes.sentinel_port[s]) : 0;
    return port > 0 ? port : 0;
}

/* The port of the master the first of kind's finders that answers names; 0. */
static int finders_master(const struct nemesis *n, const struct server_kind *kind)
{
    int port = 0;
    for (size_t s = 0; s < n->nodes.n_sentinels && port == 0; s++)
        port = named_master(n, kind, s);
    return port;
}

uint32_t nemesis_leading(const struct nemesis *n, const struct server_kind *kind, const int *ports,
                         size_t m, uint32_t skip)
{
    uint32_t set = 0;
    /* sentinels name the master their clients follow: theirs is the word */
    int master = n->nodes.n_sentinels > 0 && kind->found_by ? finders_master(n, kind) : 0;
    for (size_t e = 0; e < m; e++) {
        if (skip & (1u << e))
            continue;
        bool lead = n->nodes.n_sentinels > 0 && kind->found_by ? ports[e] == master
                    : kind->leads                              ? kind->leads(ports[e])
                                                               : true; /* NULL: each one leads */
        if (lead)
            set |= 1u << e;
    }
    return set;
}

/* The lock's servers that lead now, among those no fault holds. */
static uint32_t leading_nodes(const struct nemesis *n)
{
    int ports[LOCK_ENDPOINT_MAX];
    for (size_t k = 0; k < n->lock_nodes; k++)
        ports[k] = n->nodes.cl->srv[n->nodes.node[k].idx].port;
    if (n->lock_nodes == 0)
        return 0;
    const struct server_kind *kind = n->nodes.cl->srv[n->nodes.node[0].idx].kind;
    return nemesis_leading(n, kind, ports, n->lock_nodes, n->busy);
}

/* The value node k holds under key ("" when none or it does not answer). */
static void value_on(const struct nemesis *n, size_t k, const char *key, char *out, size_t len)
{
    const struct managed_server *s = &n->nodes.cl->srv[n->nodes.node[k].idx];
    out[0] = '\0';
    if (s->kind->read_key)
        s->kind->read_key(s->port, key, out, len);
}

/* The nodes holding the value a quorum of nodes agrees on: the current
 * holder's votes; 0 while nobody holds key. */
static uint32_t holder_votes(const struct nemesis *n, const char *key)
{
    char val[LOCK_ENDPOINT_MAX][LOCK_OWNER_MAX + 8];
    for (size_t k = 0; k < n->nodes.n; k++)
        value_on(n, k, key, val[k], sizeof(val[k]));
    for (size_t k = 0; k < n->nodes.n; k++) {
        uint32_t set = 0;
        for (size_t j = 0; j < n->nodes.n && val[k][0]; j++)
            if (strcmp(val[j], val[k]) == 0)
                set |= 1u << j;
        if ((size_t)__builtin_popcount(set) >= n->nodes.quorum)
            return set;
    }
    return 0;
}

uint32_t nemesis_some(struct nemesis *n, uint32_t from, size_t count)
{
    size_t order[LOCK_ENDPOINT_MAX], m = 0;
    for (size_t k = 0; k < LOCK_ENDPOINT_MAX; k++)
        if (from & (1u << k))
            order[m++] = k;
    for (size_t k = m; k > 1; k--) { /* Fisher-Yates */
        size_t j = (size_t)(nemesis_random(n) % k);
        size_t t = order[k - 1];
        order[k - 1] = order[j];
        order[j] = t;
    }
    uint32_t set = 0;
    for (size_t k = 0; k < m && (count == 0 || k < count); k++)
        set |= 1u << order[k];
    return set;
}

uint32_t nemesis_master(const struct nemesis *n)
{
    for (size_t s = 0; s < n->nodes.n_sentinels; s++) {
        int port = named_master(n, lock_kind(n), s);
        for (size_t k = 0; port > 0 && k < n->nodes.n; k++)
            if (n->nodes.cl->srv[n->nodes.node[k].idx].port == port)
                return 1u << k;
    }
    return 0;
}

uint32_t nemesis_pick(struct nemesis *n, size_t i, char *why, size_t len)
{
    const struct fault_spec *f = &n->rec[i].spec;
    size_t want = fault_node_count(f, n->lock_nodes);
    uint32_t set = 0, idle = servers_mask(n->lock_nodes) & ~n->busy;
    why[0] = '\0';
    if (fault_kind_of(f)->pick)
        return fault_kind_of(f)->pick(n, i, why, len);
    if (f->pick == PICK_NODE) {
        if (f->node >= 1 && f->node <= n->lock_nodes)
            set = 1u << (f->node - 1);
    } else if (f->pick == PICK_PRIMARIES) {
        set = leading_nodes(n);
        want = (size_t)__builtin_popcount(set);
    } else if (f->pick == PICK_LEADER || f->pick == PICK_FOLLOWER) {
        uint32_t lead = leading_nodes(n);
        set = nemesis_some(n, (f->pick == PICK_LEADER ? lead : ~lead) & idle, 1);
    } else if (f->pick == PICK_POOLER) {
        set = n->pooler & ~n->busy;
        want = 1;
    } else if (f->pick == PICK_HOLDER_MAJORITY) {
        uint32_t votes = holder_votes(n, f->key);
        if (votes == 0)
            return 0; /* nobody holds it yet: the caller asks again */
        set = nemesis_some(n, votes & ~n->busy, f->count);
    } else {
        set = nemesis_some(n, idle, want);
    }
    size_t got = (size_t)__builtin_popcount(set);
    if (got < want || got == 0)
        snprintf(why, len, "%s: %zu of %zu servers free", f->target_text, got, want ? want : 1);
    return set;
}
