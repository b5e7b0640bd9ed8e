/* targets.c - which servers a process fault strikes: by name, or chosen
 * from the run's seed among the servers no running fault holds (Jepsen's
 * one, minority, majority, all), or the ones that lead (primaries: every
 * Redis master; ZooKeeper's leader, asked with srvr). */
#include <stdio.h>
#include <string.h>

#include "cluster.h"
#include "nemesis_state.h"

static uint64_t next_random(uint64_t *x)
{
    /* xorshift64*: enough for picking servers, and repeatable */
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545F4914F6CDD1DULL;
}

static bool leads(const struct nemesis *n, size_t k)
{
    const struct managed_server *s = &n->nodes.cl->srv[n->nodes.node[k].idx];
    if (strcmp(s->kind, "zookeeper") != 0)
        return true; /* every Redis of a run is a master */
    char reply[512];
    return cluster_ask(s->port, "srvr", reply, sizeof(reply)) > 0 &&
           (strstr(reply, "Mode: leader") || strstr(reply, "Mode: standalone"));
}

/* count of the free nodes, in a seeded random order. */
static uint32_t random_free(struct nemesis *n, size_t count)
{
    size_t order[LOCK_ENDPOINT_MAX], m = 0;
    for (size_t k = 0; k < n->nodes.n; k++)
        if (!(n->busy & (1u << k)))
            order[m++] = k;
    for (size_t k = m; k > 1; k--) { /* Fisher-Yates */
        size_t j = (size_t)(next_random(&n->rng) % k);
        size_t t = order[k - 1];
        order[k - 1] = order[j];
        order[j] = t;
    }
    uint32_t set = 0;
    for (size_t k = 0; k < count && k < m; k++)
        set |= 1u << order[k];
    return set;
}

uint32_t nemesis_pick(struct nemesis *n, size_t i, char *why, size_t len)
{
    const struct fault_spec *f = &n->rec[i].spec;
    size_t want = fault_node_count(f, n->nodes.n);
    uint32_t set = 0;
    why[0] = '\0';
    if (f->pick == PICK_NODE) {
        if (f->node >= 1 && f->node <= n->nodes.n)
            set = 1u << (f->node - 1);
    } else if (f->pick == PICK_PRIMARIES) {
        for (size_t k = 0; k < n->nodes.n; k++)
            if (!(n->busy & (1u << k)) && leads(n, k))
                set |= 1u << k;
        want = (size_t)__builtin_popcount(set);
    } else {
        set = random_free(n, want);
    }
    size_t got = (size_t)__builtin_popcount(set);
    if (got < want || got == 0)
        snprintf(why, len, "%s: %zu of %zu servers free", f->target_text, got, want ? want : 1);
    return set;
}
