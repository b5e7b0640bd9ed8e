/* partition.c - the fault kind that splits the network in two for
 * duration_ms: the target servers (and side_clients of the clients, chosen
 * by the seed) on one side, every other server and client on the other,
 * as a switch failing between two racks would. Nothing crosses: the
 * servers' own links (a Redis Cluster's bus and its replication streams)
 * are dropped by nftables rules of the run's table (netfilter.h), matched
 * on the loopback address each node dials from; the clients' links by the
 * proxy, each client's through listeners of its own, so one on the cut
 * side reaches only the servers cut off and the rest reach all but those.
 *
 * Packets are dropped, not refused, as in a real partition: connections
 * stay open and go quiet, and each side learns of it only by its own
 * timeouts (a Redis Cluster's cluster-node-timeout: the majority then
 * promotes a replica, the master cut off stops taking writes). At the end
 * the table goes and the toxic with it; the links carry on.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/faults/fault.h"
#include "sim/faults/nemesis_state.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/netfilter.h"
#include "sim/proxy/proxy.h"
#include "sim/record/clock.h"
#include "sim/record/figures.h"

#define RULES_MAX 16384

static int check(struct fault_check *fc)
{
    if (fault_check_no_toxic_keys(fc) < 0 || fault_check_servers(fc) < 0 ||
        fault_check_no_data(fc) < 0 || fault_check_no_restart(fc) < 0 ||
        fault_check_no_clock_keys(fc) < 0 || fault_check_no_mode(fc) < 0 ||
        fault_check_holder_majority(fc) < 0)
        return -1;
    return fault_check_needs_duration(fc);
}

/* The drops that keep a's packets from b's ports and b's from a's, both
 * ways of every connection (its replies are matched by their source). */
static size_t cut_pair(const struct managed_server *a, const struct managed_server *b, char *out,
                       size_t len)
{
    char sa[24], sb[24];
    netfilter_source(a, sa, sizeof(sa));
    netfilter_source(b, sb, sizeof(sb));
    return (size_t)snprintf(out, len,
                            "    ip saddr %s tcp dport { %d, %d } drop\n"
                            "    ip daddr %s tcp sport { %d, %d } drop\n"
                            "    ip saddr %s tcp dport { %d, %d } drop\n"
                            "    ip daddr %s tcp sport { %d, %d } drop\n",
                            sa, b->port, b->peer_port, sa, b->port, b->peer_port, sb, a->port,
                            a->peer_port, sb, a->port, a->peer_port);
}

/* Every struck node cut from every node not struck; how many pairs. */
static size_t server_rules(struct nemesis *n, size_t i, char *rules, size_t len)
{
    size_t used = 0, pairs = 0;
    rules[0] = '\0';
    for (size_t a = 0; a < n->nodes.n; a++) {
        if (!(n->struck[i] & (1u << a)))
            continue;
        for (size_t b = 0; b < n->nodes.n && used < len; b++)
            if (!(n->struck[i] & (1u << b))) {
                used +=
                    cut_pair(nemesis_server(n, a), nemesis_server(n, b), rules + used, len - used);
                pairs++;
            }
    }
    return used < len ? pairs : 0;
}

/* The proxy's endpoints of the struck servers, by port. */
static uint32_t struck_endpoints(struct nemesis *n, size_t i)
{
    uint32_t set = 0;
    for (size_t k = 0; k < n->nodes.n; k++)
        if (n->struck[i] & (1u << k))
            for (size_t e = 0; e < n->net_n; e++)
                if (n->net_up[e].port == nemesis_server(n, k)->port)
                    set |= 1u << e;
    return set;
}

/* The clients' half: a black hole (Toxiproxy's timeout 0) both ways, on
 * the struck servers for the far side and on the others for this one. */
static void cut_clients(struct nemesis *n, size_t i)
{
    struct fault_record *r = &n->rec[i];
    if (n->proxy == NULL) {
        nemesis_add_text(r->error, sizeof(r->error), "no proxy in front of the clients");
        return;
    }
    uint32_t cut = struck_endpoints(n, i);
    struct toxic t = {.kind = toxic_kind_find("timeout"),
                      .stream = STREAM_BOTH,
                      .toxicity = 1.0,
                      .endpoints = cut,
                      .group = -1,
                      .other_endpoints = servers_mask(n->net_n) & ~cut};
    uint32_t side = r->spec.side_clients < n->net_clients ? r->spec.side_clients : n->net_clients;
    if (side > 0) {
        /* the first ones, not the seed's: which clients stand where is the
         * scenario's shape (with "rate", when each of them asks) */
        free(n->net_groups[i]);
        n->net_groups[i] = malloc(n->net_clients);
        if (n->net_groups[i] == NULL) {
            nemesis_add_text(r->error, sizeof(r->error), "out of memory splitting the clients");
            return;
        }
        for (uint32_t c = 0; c < n->net_clients; c++)
            n->net_groups[i][c] = c < side ? TOXIC_OTHER_SIDE : 1;
        t.groups = n->net_groups[i];
    }
    uint64_t links = 0;
    if (t.kind == NULL || proxy_toxic_add(n->proxy, (int)i, &t, &links) < 0) {
        nemesis_add_text(r->error, sizeof(r->error), "the proxy refused the clients' cut");
        return;
    }
    if (side == 1)
        nemesis_add_text(r->detail, sizeof(r->detail), "client 0 reaches only it");
    else if (side > 1)
        nemesis_add_text(r->detail, sizeof(r->detail), "clients 0..%u reach only it",
                         (unsigned)(side - 1));
    nemesis_add_text(r->detail, sizeof(r->detail),
                     "%u client%s every server but it (%" PRIu64 " open connection%s cut)",
                     (unsigned)(n->net_clients - side), n->net_clients - side == 1 ? "" : "s",
                     links, links == 1 ? "" : "s");
}

/* All of it at the first struck server: the cut is one, between sides. */
static void strike(struct nemesis *n, size_t i, size_t k)
{
    struct fault_record *r = &n->rec[i];
    if (k != (size_t)__builtin_ctz(n->struck[i]))
        return;
    char *rules = malloc(RULES_MAX), err[256];
    size_t pairs = rules ? server_rules(n, i, rules, RULES_MAX) : 0;
    if (pairs == 0) {
        nemesis_add_text(r->error, sizeof(r->error), "no server left on the other side to cut");
        free(rules);
        return;
    }
    n->first_signal_ns = clock_mono_ns();
    if (netfilter_set(n->nodes.cl, rules, err, sizeof(err)) < 0) {
        nemesis_add_text(r->error, sizeof(r->error), "%s", err);
        free(rules);
        return;
    }
    free(rules);
    char table[128];
    netfilter_table(n->nodes.cl->root, table, sizeof(table));
    if (!netfilter_present(n->nodes.cl)) /* its truth: the rules are there */
        nemesis_add_text(r->error, sizeof(r->error), "nft table inet %s missing after it was set",
                         table);
    nemesis_add_text(r->detail, sizeof(r->detail),
                     "nft table inet %s drops the links of %zu server pair%s (bus and replication)",
                     table, pairs, pairs == 1 ? "" : "s");
    cut_clients(n, i);
}

static uint64_t end_due(const struct nemesis *n, size_t i)
{
    return n->rec[i].spec.duration_ms * 1000000u;
}

static void end(struct nemesis *n, size_t i, bool healed)
{
    struct fault_record *r = &n->rec[i];
    if (n->proxy)
        proxy_toxic_remove(n->proxy, (int)i);
    int rc = netfilter_clear(n->nodes.cl->root);
    if (rc == 0)
        n->nodes.cl->netfilter = false;
    else
        nemesis_add_text(r->error, sizeof(r->error), "the nft table could not be removed");
    nemesis_add_text(r->end_detail, sizeof(r->end_detail), "healed%s: rules and toxic removed",
                     healed ? " at the end of the run" : "");
}

static void plan(const struct fault_spec *f, char *buf, size_t len)
{
    char b[32];
    snprintf(buf, len, "partition %s from the rest for %s s, %u client%s on its side",
             f->target_text, figure_seconds(f->duration_ms, b, sizeof(b)),
             (unsigned)f->side_clients, f->side_clients == 1 ? "" : "s");
}

static void settings(const struct fault_spec *f, json_t *o)
{
    json_object_set_new(o, "target", json_string(f->target_text));
    json_object_set_new(o, "side_clients", json_integer(f->side_clients));
}

const struct fault_kind fault_partition = {
    .name = "partition",
    .number = 17,
    .summary = "split the network for duration_ms: the target servers and side_clients of the "
               "clients on one side, the rest on the other; the servers' own links dropped by "
               "nftables rules, the clients' by the proxy (a black hole both ways)",
    .family = FAULT_FAMILY_SERVERS,
    .window = WINDOW_DURATION,
    .band = "network",
    .check = check,
    .misfit = fault_misfit_cluster,
    .splits_clients = true,
    .strike = strike,
    .end_due = end_due,
    .end = end,
    .plan = plan,
    .settings = settings,
};
