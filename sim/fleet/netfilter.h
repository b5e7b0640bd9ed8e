/* netfilter.h - a run's own nftables table on this machine, for the
 * faults that cut links between servers rather than between clients and
 * servers (a Redis Cluster node partitioned from its peers): its nodes'
 * bus and replication links never pass the proxy, so the cut is made
 * where the packets are, as Jepsen's partition does with iptables on each
 * node.
 *
 * Servers listen on 127.0.0.1 as always; a server kind that takes part
 * dials its peers from a loopback address of its own (netfilter_source),
 * so a rule can say whose packets it drops. Every rule is in one table
 * named after the run's folder (netfilter_table): removing it removes
 * them all, and the janitor removes it when locklab dies. */
#ifndef LOCKLAB_NETFILTER_H
#define LOCKLAB_NETFILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/fleet/cluster.h"

/* The loopback address server s dials its peers from (inside 127/8, which
 * Linux routes to lo as a whole): unique while s's peer port is bound. */
void netfilter_source(const struct managed_server *s, char *out, size_t len);
/* The run's table: "locklab_" and the run folder's name, for root. */
void netfilter_table(const char *root, char *out, size_t len);
/* The run's table holding rules (nft statements, one a line, in an output
 * chain), replacing what it held. 0, or -1 with err set (no nft, not
 * root, a rule refused). */
int netfilter_set(struct cluster *c, const char *rules, char *err, size_t errlen);
/* The run's table gone; 0 also when there was none. */
int netfilter_clear(const char *root);
/* Does the run's table exist now (a fault's truth)? */
bool netfilter_present(const struct cluster *c);

#endif
