/* targets.c - which servers a process fault strikes: by name, or chosen
 * from the run's seed among the servers no running fault holds (Jepsen's
 * one, minority, majority, all), or the ones that lead (primaries: every
 * Redis master; ZooKeeper's leader, asked with srvr), or for Redlock the
 * nodes that hold the votes of a key's current holder (holder-majority:
 * the value a quorum of nodes agrees on, read with GET). */
#include <stdio.h>
#include <string.h>

#include "algorithms/lock.h"
#include "sim/faults/nemesis_state.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/redis_server.h"
#include "sim/fleet/sentinel_server.h"
#include "sim/fleet/server_kind.h"

uint64_t nemesis_random(struct nemesis *n)
{
    /* xorshift64*: enough for picking servers and clients, and repeatable */
    n->rng ^= n->rng >> 12;
    n->rng ^= n->rng << 25;
    n->rng ^= n->rng >> 27;
    return n->rng * 0x2545F4914F6CDD1DULL;
}

static bool leads(const struct nemesis *n, size_t k)
{
    const struct managed_server *s = &n->nodes.cl->srv[n->nodes.node[k].idx];
    return s->kind->leads == NULL || s->kind->leads(s->port); /* NULL: each one leads */
}

/* The value node k holds under key ("" when none or it does not answer). */
static void value_on(const struct nemesis *n, size_t k, const char *key, char *out, size_t len)
{
    char cmd[96], reply[160];
    const struct managed_server *s = &n->nodes.cl->srv[n->nodes.node[k].idx];
    out[0] = '\0';
    snprintf(cmd, sizeof(cmd), "GET %s", key);
    /* "$12\r\nowner-value\r\n"; "$-1" when the key is not there */
    if (redis_server_reply(s->port, cmd, reply, sizeof(reply)) < 0 || reply[0] != '$' ||
        reply[1] == '-')
        return;
    const char *v = strstr(reply, "\r\n");
    if (v)
        snprintf(out, len, "%.*s", (int)strcspn(v + 2, "\r"), v + 2);
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
        int port = sentinel_server_master(n->nodes.sentinel_port[s]);
        for (size_t k = 0; port > 0 && k < n->nodes.n; k++)
            if (n->nodes.cl->srv[n->nodes.node[k].idx].port == port)
                return 1u << k;
    }
    return 0;
}

uint32_t nemesis_pick(struct nemesis *n, size_t i, char *why, size_t len)
{
    const struct fault_spec *f = &n->rec[i].spec;
    size_t want = fault_node_count(f, n->nodes.n);
    uint32_t set = 0;
    why[0] = '\0';
    if (fault_kind_of(f)->pick)
        return fault_kind_of(f)->pick(n, i, why, len);
    if (f->pick == PICK_NODE) {
        if (f->node >= 1 && f->node <= n->nodes.n)
            set = 1u << (f->node - 1);
    } else if (f->pick == PICK_PRIMARIES) {
        for (size_t k = 0; k < n->nodes.n; k++)
            if (!(n->busy & (1u << k)) && leads(n, k))
                set |= 1u << k;
        want = (size_t)__builtin_popcount(set);
    } else if (PICK_IS_LEADER(f->pick) || PICK_IS_FOLLOWER(f->pick)) {
        uint32_t lead = 0;
        for (size_t k = 0; k < n->nodes.n; k++)
            if (leads(n, k))
                lead |= 1u << k;
        uint32_t from = PICK_IS_LEADER(f->pick) ? lead : servers_mask(n->nodes.n) & ~lead;
        set = nemesis_some(n, from & ~n->busy, 1);
    } else if (f->pick == PICK_HOLDER_MAJORITY) {
        uint32_t votes = holder_votes(n, f->key);
        if (votes == 0)
            return 0; /* nobody holds it yet: the caller asks again */
        set = nemesis_some(n, votes & ~n->busy, f->count);
    } else {
        set = nemesis_some(n, servers_mask(n->nodes.n) & ~n->busy, want);
    }
    size_t got = (size_t)__builtin_popcount(set);
    if (got < want || got == 0)
        snprintf(why, len, "%s: %zu of %zu servers free", f->target_text, got, want ? want : 1);
    return set;
}
