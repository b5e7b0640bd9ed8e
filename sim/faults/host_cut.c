/* host_cut.c - a network fault on a Redis replica's link when the servers
 * run on other hosts (remote.h). Here that link runs through a relay of
 * locklab's, whose toxic cuts it; on hosts the replicas dial their master
 * directly, so the cut is made where the packets are, as Jepsen's
 * partition does with iptables on each node: nftables rules in the run's
 * table on the replica's host, dropping what goes to the master's port
 * (upstream) and what comes back from it (downstream). A drop is
 * Toxiproxy's timeout of 0 ms, a black hole: the connection stays open
 * and nothing passes; the other toxics are refused on hosts before the
 * run starts (nemesis_host_cut_fits). The table's presence after it is
 * set is the fault's truth; it goes at the fault's end, at the stop, and
 * with the janitor. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/faults/nemesis_state.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/netfilter.h"
#include "sim/fleet/remote.h"
#include "sim/fleet/server_kind.h"
#include "sim/proxy/toxic_kind.h"
#include "sim/record/clock.h"

bool nemesis_host_cut(const struct nemesis *n, const struct fault_spec *f)
{
    if (f->scope != NET_REPLICATION || n->nodes.repl != NULL || n->nodes.cl == NULL)
        return false;
    for (size_t i = 0; i < n->nodes.cl->n; i++)
        if (n->nodes.cl->srv[i].replica_of && n->nodes.cl->srv[i].host)
            return true;
    return false;
}

int nemesis_host_cut_fits(const struct fault_spec *f, char *err, size_t errlen)
{
    const struct toxic_kind *k = fault_kind_of(f)->toxic;
    uint32_t after;
    bool reset;
    if (k && strcmp(k->name, "timeout") == 0 && !k->ends(&f->toxic, &after, &reset) &&
        f->toxicity >= 1.0)
        return 0;
    snprintf(err, errlen,
             "on hosts a replica's link is cut by nftables on its host: a black hole (timeout, "
             "timeout_ms 0, toxicity 1) only; the other toxics need the relay locklab puts on "
             "that link on this machine");
    return -1;
}

/* The chains of the cut for replica s: its packets to the master's port,
 * and the master's to it, as the fault's stream says. */
static void chains(const struct managed_server *s, unsigned stream, char *out, size_t len)
{
    const char *master = cluster_port_addr(s->replica_of);
    size_t o = 0;
    out[0] = '\0';
    if (stream == 0 || stream & STREAM_UPSTREAM)
        o += (size_t)snprintf(out + o, len - o,
                              "  chain up {\n    type filter hook output priority 0; policy "
                              "accept;\n    ip daddr %s tcp dport %d drop\n  }\n",
                              master, s->replica_of);
    if ((stream == 0 || stream & STREAM_DOWNSTREAM) && o < len)
        snprintf(out + o, len - o,
                 "  chain down {\n    type filter hook input priority 0; policy accept;\n    ip "
                 "saddr %s tcp sport %d drop\n  }\n",
                 master, s->replica_of);
}

/* Every replica's host given the cut (on) or rid of it; what was done
 * into the record. */
static void apply(struct nemesis *n, size_t i, bool on)
{
    struct fault_record *r = &n->rec[i];
    struct cluster *c = n->nodes.cl;
    char table[128], rules[1024], err[300], name[32];
    netfilter_table(c->root, table, sizeof(table));
    unsigned stream = r->spec.stream ? r->spec.stream : STREAM_DOWNSTREAM;
    for (size_t k = 0; k < c->n; k++) {
        const struct managed_server *s = &c->srv[k];
        if (!s->replica_of || s->host == NULL)
            continue;
        chains(s, stream, rules, sizeof(rules));
        cluster_lock();
        c->netfilter = true; /* the stop looks, whatever nft made of it */
        cluster_unlock();
        cluster_server_name(c, k, name, sizeof(name));
        if (remote_nft(s->host, table, on ? rules : NULL, err, sizeof(err)) < 0) {
            nemesis_add_text(r->error, sizeof(r->error), "%s the cut of %s's link: %s",
                             on ? "could not make" : "could not remove", name, err);
            continue;
        }
        _Static_assert(sizeof(r->detail) == sizeof(r->end_detail), "one size for both texts");
        nemesis_add_text(on ? r->detail : r->end_detail, sizeof(r->detail),
                         on ? "nftables table %s on host %s drops %s's packets %s its master %s:%d"
                            : "table %s removed on host %s (%s's link)",
                         table, s->host->name, name,
                         stream == STREAM_BOTH_WAYS  ? "to and from"
                         : stream == STREAM_UPSTREAM ? "to"
                                                     : "from",
                         cluster_port_addr(s->replica_of), s->replica_of);
    }
}

void nemesis_host_cut_start(struct nemesis *n, size_t i)
{
    struct fault_record *r = &n->rec[i];
    snprintf(r->servers, sizeof(r->servers), "replication");
    r->fired = true;
    r->start_ns = clock_mono_ns();
    apply(n, i, true);
}

void nemesis_host_cut_end(struct nemesis *n, size_t i, bool healed)
{
    apply(n, i, false);
    n->rec[i].healed = healed;
    n->rec[i].ended = true;
    n->rec[i].end_ns = clock_mono_ns();
}
