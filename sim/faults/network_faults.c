/* network_faults.c - the nemesis's network faults: each one a toxic of the
 * proxy, put in force at its time and taken away at its end.
 *
 * Whose traffic: every client's to the servers the target picks (by name,
 * or from the seed), or the connections of one client ("client:K"), of N
 * clients chosen by the seed ("clients:N"), or of the next holder
 * ("holder"). A holder's fault is started by the holder's own thread the
 * moment it has the lock, so the toxic is in force before its next
 * request; the nemesis's thread ends it. A paused client's connections are
 * held for the length of its pause (nemesis_hold_client).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/faults/nemesis_state.h"
#include "sim/fleet/server_kind.h"
#include "sim/record/clock.h"

/* The proxy fault f acts through: the replicas' own for their link. */
struct proxy *nemesis_net_proxy(const struct nemesis *n, const struct fault_spec *f)
{
    return f->scope == NET_REPLICATION ? n->nodes.repl : n->proxy;
}

bool nemesis_has_network_faults(const struct nemesis *n)
{
    for (size_t i = 0; i < n->n; i++)
        if (fault_on_network(n->rec[i].spec.kind) &&
            (nemesis_net_proxy(n, &n->rec[i].spec) || nemesis_host_cut(n, &n->rec[i].spec)))
            return true;
    return false;
}

/* The endpoints fault i touches. Network faults do not take servers away,
 * so they pick among all of them, busy or not. */
static uint32_t pick_endpoints(struct nemesis *n, const struct fault_spec *f)
{
    size_t m = n->net_n;
    switch (f->pick) {
    case PICK_NODE:
        return f->node >= 1 && f->node <= m ? 1u << (f->node - 1) : 0;
    case PICK_PRIMARIES:
    case PICK_LEADER:
    case PICK_FOLLOWER: {
        int ports[LOCK_ENDPOINT_MAX];
        for (size_t e = 0; e < m; e++)
            ports[e] = n->net_up[e].port;
        uint32_t set = nemesis_leading(n, n->net_kind, ports, m, 0);
        if (f->pick == PICK_PRIMARIES)
            return set;
        return nemesis_some(n, f->pick == PICK_LEADER ? set : servers_mask(m) & ~set, 1);
    }
    case PICK_ALL:
        return servers_mask(m);
    default:
        return nemesis_some(n, servers_mask(m), fault_node_count(f, m));
    }
}

/* clients:N: N of the run's clients, chosen by the seed (a partial shuffle). */
static void pick_clients(struct nemesis *n, size_t i, uint32_t count)
{
    uint32_t m = n->net_clients;
    uint32_t *order = malloc(m * sizeof(*order));
    uint8_t *set = calloc(m, 1);
    if (order == NULL || set == NULL) {
        free(order);
        free(set);
        return;
    }
    for (uint32_t k = 0; k < m; k++)
        order[k] = k;
    for (uint32_t k = 0; k < count && k < m; k++) {
        uint32_t j = k + (uint32_t)(nemesis_random(n) % (m - k));
        uint32_t t = order[k];
        order[k] = order[j];
        order[j] = t;
        set[order[k]] = 1;
    }
    free(order);
    free(n->net_groups[i]);
    n->net_groups[i] = set;
}

static struct toxic toxic_of(const struct fault_spec *f, uint32_t endpoints)
{
    return (struct toxic){
        .kind = fault_kind_of(f)->toxic,
        .params = f->toxic, /* the toxic's own struct, as the parser read it */
        .stream = f->stream,
        .toxicity = f->toxicity,
        .endpoints = endpoints,
        .group = -1,
    };
}

static void name_endpoints(const struct nemesis *n, uint32_t set, char *out, size_t len)
{
    const char *prefix = n->net_kind->node_prefix;
    size_t used = 0;
    out[0] = '\0';
    for (size_t e = 0; e < n->net_n && used + 12 < len; e++)
        if (set & (1u << e))
            used += (size_t)snprintf(out + used, len - used, "%s%s-%zu", used ? "," : "", prefix,
                                     e + 1);
}

static void whose(const struct nemesis *n, size_t i, int32_t client, char *out, size_t len)
{
    const struct fault_spec *f = &n->rec[i].spec;
    if (f->scope == NET_NODES)
        snprintf(out, len, "every client's");
    else if (f->scope == NET_REPLICATION)
        snprintf(out, len, "the replicas'");
    else if (f->scope == NET_CLIENTS)
        snprintf(out, len, "%u clients'", (unsigned)f->n_clients);
    else
        snprintf(out, len, "client %d's", (int)client);
}

void nemesis_fault_event(struct nemesis *n, size_t i, uint64_t t, int end, uint32_t client,
                         struct history_event *e)
{
    nemesis_mark(n, i, !end);
    *e = (struct history_event){
        .t_ns = t,
        .seq = i * NOTES_PER_FAULT + (end ? NOTE_END : NOTE_START),
        .client = client,
        .key = (uint32_t)i,
        .owner = (uint32_t)(i * NOTES_PER_FAULT + NOTE_SERVERS),
        .type = HT_INFO,
        .f = HF_FAULT,
        .arg = (uint8_t)n->rec[i].spec.kind,
        .arg2 = (uint8_t)end,
    };
}

/* The client a fault's events name: the one it struck, or none. */
static uint32_t event_client(const struct fault_record *r)
{
    return r->spec.scope == NET_HOLDER || r->spec.scope == NET_CLIENT ? r->client : HISTORY_SERVERS;
}

/* Put fault i in force on client's traffic (-1: as its scope says). */
static void net_strike(struct nemesis *n, size_t i, int32_t client)
{
    struct fault_record *r = &n->rec[i];
    const struct fault_spec *f = &r->spec;
    struct proxy *px = nemesis_net_proxy(n, f);
    bool repl = f->scope == NET_REPLICATION;
    uint32_t eps = repl ? 1u : pick_endpoints(n, f); /* the replicas': to the master */
    struct toxic t = toxic_of(f, eps);
    if (f->scope == NET_CLIENT)
        client = f->target;
    if (client >= 0)
        t.group = client;
    if (f->scope == NET_CLIENTS) {
        pick_clients(n, i, f->n_clients);
        t.groups = n->net_groups[i];
    }
    char what[96], who[48], via[48] = "";
    fault_kind_of(f)->toxic_text(f, what, sizeof(what));
    whose(n, i, client, who, sizeof(who));
    char servers[sizeof(r->servers)];
    if (repl)
        snprintf(servers, sizeof(servers), "replication");
    else
        name_endpoints(n, eps, servers, sizeof(servers));
    memcpy(r->servers, servers, sizeof(servers));
    for (size_t e = 0; e < proxy_endpoints(px); e++)
        if (eps & (1u << e)) {
            struct lock_endpoint ep = proxy_address(px, e, client >= 0 ? (size_t)client : 0);
            snprintf(via, sizeof(via), " via proxy 127.0.0.1:%d", ep.port);
            break;
        }
    r->client = client >= 0 ? (uint32_t)client : 0;
    r->fired = true;
    r->start_ns = clock_mono_ns();
    uint64_t links = 0;
    if (proxy_toxic_add(px, (int)i, &t, &links) < 0)
        snprintf(r->error, sizeof(r->error), "the proxy refused the toxic");
    snprintf(r->detail, sizeof(r->detail),
             "%s%s%s on %s traffic to %s%s; %" PRIu64 " open connection%s", what,
             fault_kind_of(f)->has_stream ? " " : "",
             fault_kind_of(f)->has_stream ? fault_stream_name(f->stream) : "", who,
             repl ? "the master (their replication link)" : servers,
             __builtin_popcount(eps) == 1 ? via : "", links, links == 1 ? "" : "s");
}

void nemesis_net_start(struct nemesis *n, size_t i)
{
    if (nemesis_host_cut(n, &n->rec[i].spec))
        nemesis_host_cut_start(n, i);
    else
        net_strike(n, i, -1);
    struct history_event e;
    nemesis_fault_event(n, i, n->rec[i].start_ns, 0, event_client(&n->rec[i]), &e);
    history_append(n->hist, &e);
    const struct fault_spec *f = &n->rec[i].spec;
    n->end_due_ns[i] = f->duration_ms ? n->rec[i].start_ns + f->duration_ms * 1000000u : 0;
}

void nemesis_net_end(struct nemesis *n, size_t i, bool healed)
{
    struct fault_record *r = &n->rec[i];
    if (nemesis_host_cut(n, &r->spec)) {
        nemesis_host_cut_end(n, i, healed);
        struct history_event e;
        nemesis_fault_event(n, i, r->end_ns, 1, event_client(r), &e);
        history_append(n->hist, &e);
        return;
    }
    uint64_t t = clock_mono_ns();
    struct proxy *px = nemesis_net_proxy(n, &r->spec);
    proxy_toxic_remove(px, (int)i);
    struct proxy_stats st;
    proxy_stats(px, &st);
    snprintf(r->end_detail, sizeof(r->end_detail),
             "toxic removed%s; it touched %" PRIu64 " connection%s",
             healed ? " at the end of the run" : "", st.toxic_links[i],
             st.toxic_links[i] == 1 ? "" : "s");
    r->healed = healed;
    r->ended = true;
    r->end_ns = t;
    struct history_event e;
    nemesis_fault_event(n, i, t, 1, event_client(r), &e);
    history_append(n->hist, &e);
}

bool nemesis_net_claimed(struct nemesis *n, int idx, uint32_t client, uint32_t key,
                         struct history_event *start)
{
    if (n->proxy == NULL)
        return false;
    net_strike(n, (size_t)idx, (int32_t)client);
    n->rec[idx].key = key;
    nemesis_fault_event(n, (size_t)idx, n->rec[idx].start_ns, 0, client, start);
    /* the nemesis's thread sees it from here on, and ends it */
    atomic_store_explicit(&n->net_fired[idx], n->rec[idx].start_ns, memory_order_release);
    return true;
}

uint64_t nemesis_net_fired(struct nemesis *n, size_t i)
{
    return atomic_load_explicit(&n->net_fired[i], memory_order_acquire);
}

void nemesis_hold_client(struct nemesis *n, int idx, uint32_t client, bool on)
{
    if (n->proxy == NULL || proxy_groups(n->proxy) <= client)
        return;
    if (!on) {
        proxy_toxic_remove(n->proxy, idx);
        return;
    }
    struct toxic t = {.kind = &toxic_hold,
                      .stream = STREAM_BOTH,
                      .toxicity = 1.0,
                      .endpoints = servers_mask(n->net_n),
                      .group = (int32_t)client};
    if (proxy_toxic_add(n->proxy, idx, &t, NULL) < 0) /* the pause would leak traffic */
        snprintf(n->rec[idx].error, sizeof(n->rec[idx].error),
                 "the proxy refused to hold client %" PRIu32 "'s traffic", client);
}
