/* redis_cluster_server.c - the server kind "redis-cluster": a Redis
 * Cluster of redis-servers on loopback ports, each started as the kind
 * "redis" starts one (redis_server_args) with cluster mode on, its bus on
 * a free port of its own, its nodes.conf in its folder (a node killed
 * and started again rejoins as itself).
 *
 * The cluster is joined the way redis-cli --cluster create does it, by
 * the commands themselves, so the layout is locklab's to choose and the
 * same every time: every node MEETs the first; once each knows them all,
 * the masters take equal ranges of the 16384 slots (ADDSLOTSRANGE) in
 * order, and replica j of master i (the nodes after the masters, in
 * order) REPLICATEs it. Ready is when every node says cluster_state:ok
 * with all 16384 slots assigned, every replica's link is up, and every
 * node sees each replica as one (gossip brings a REPLICATE to the others
 * a moment later).
 *
 * N servers: up to 5, N masters alone; 6, 8 or 10, N / 2 masters with one
 * replica each (3 x 1 is the default a user asks for with 6); 9, 12 or 15,
 * N / 3 masters with two each. A cluster
 * needs three masters: fewer cannot elect a replica in a master's place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fleet/cluster.h"
#include "sim/fleet/netfilter.h"
#include "sim/fleet/redis_server.h"
#include "sim/fleet/server_kind.h"
#include "sim/fleet/spawn.h"

extern const struct server_kind server_redis_cluster;

#define CLUSTER_SLOTS 16384
/* How long a master may stay unreachable before its replica is promoted
 * (cluster-node-timeout): short, so a failover lands inside a run. */
#define NODE_TIMEOUT_MS 2000
#define JOIN_WAIT_MS    20000

static void command(struct spawn *sp, const struct managed_server *s)
{
    redis_server_args(sp, s);
    spawn_arg(sp, "--cluster-enabled");
    spawn_arg(sp, "yes");
    spawn_arg(sp, "--cluster-config-file");
    spawn_arg(sp, "%s/nodes.conf", s->dir);
    spawn_arg(sp, "--cluster-port");
    spawn_arg(sp, "%d", s->peer_port);
    spawn_arg(sp, "--cluster-node-timeout");
    spawn_arg(sp, "%d", NODE_TIMEOUT_MS);
    /* Its bus and replication links leave from an address of its own, so
     * a partition's rules can tell its packets from its peers'
     * (netfilter.h); it announces 127.0.0.1, where it listens: a peer
     * learning its address from a packet's source would dial the wrong
     * one. */
    char source[24];
    netfilter_source(s, source, sizeof(source));
    spawn_arg(sp, "--bind-source-addr");
    spawn_arg(sp, "%s", source);
    spawn_arg(sp, "--cluster-announce-ip");
    spawn_arg(sp, "%s", s->addr);
    /* protected mode lets in 127.0.0.1 and ::1 alone, not a peer from
     * 127.77.x.y; it listens on 127.0.0.1 only, so no one else reaches it */
    spawn_arg(sp, "--protected-mode");
    spawn_arg(sp, "no");
}

/* How many of n servers are masters: n alone up to 5, half of 6, 8 and
 * 10 (a replica each), a third of 9, 12 and 15 (two each). */
static size_t masters_of(size_t n)
{
    return n <= 5 ? n : n % 2 == 0 && n / 2 <= 5 ? n / 2 : n / 3;
}

/* Poll until every node's CLUSTER INFO holds want; 0, or -1. */
static int all_say(struct managed_server **s, size_t n, const char *command, const char *want)
{
    for (size_t i = 0; i < n; i++)
        if (redis_server_wait_reply(s[i]->port, command, want, 0) < 0)
            return -1;
    return 0;
}

/* Every node knows every other: CLUSTER INFO's cluster_known_nodes. */
static int known_by_all(struct managed_server **s, size_t n)
{
    char want[48];
    snprintf(want, sizeof(want), "cluster_known_nodes:%zu\r", n);
    return all_say(s, n, "CLUSTER INFO", want);
}

static int meet_all(struct managed_server **s, size_t n)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "CLUSTER MEET %s %d %d", s[0]->addr, s[0]->port, s[0]->peer_port);
    for (size_t i = 1; i < n; i++)
        if (redis_server_command(s[i]->port, cmd, "+OK") < 0)
            return -1;
    return known_by_all(s, n);
}

/* Master i of m takes its share of the slots, in order. */
static int add_slots(struct managed_server **s, size_t m)
{
    for (size_t i = 0; i < m; i++) {
        char cmd[64];
        snprintf(cmd, sizeof(cmd), "CLUSTER ADDSLOTSRANGE %zu %zu", i * CLUSTER_SLOTS / m,
                 (i + 1) * CLUSTER_SLOTS / m - 1);
        if (redis_server_command(s[i]->port, cmd, "+OK") < 0)
            return -1;
    }
    return 0;
}

/* Replica j (node m + j) follows master j % m; it must know that master as
 * one before REPLICATE takes it, so it is asked until it does. */
static int add_replicas(struct managed_server **s, size_t n, size_t m)
{
    for (size_t j = 0; m + j < n; j++) {
        char id[41], cmd[80];
        if (redis_server_node_id(s[j % m]->port, id) < 0)
            return -1;
        snprintf(cmd, sizeof(cmd), "CLUSTER REPLICATE %s", id);
        int ok = -1;
        for (int waited = 0; ok < 0 && waited < JOIN_WAIT_MS; waited += 50) {
            ok = redis_server_command(s[m + j]->port, cmd, "+OK");
            if (ok < 0)
                spawn_sleep_ms(50);
        }
        if (ok < 0 || redis_server_wait_reply(s[m + j]->port, "INFO replication",
                                              "master_link_status:up", 0) < 0)
            return -1;
    }
    return 0;
}

/* Lines of a CLUSTER NODES reply whose flags say slave. */
static size_t replicas_in(const char *nodes)
{
    size_t count = 0;
    const char *body = nodes[0] == '$' ? strstr(nodes, "\r\n") : NULL; /* past "$<len>" */
    for (const char *line = body ? body + 2 : nodes; line && *line; line = strchr(line, '\n')) {
        line += *line == '\n';
        /* id, address, then the flags: "myself,slave", "slave", "master" */
        const char *flags = strchr(line, ' ');
        flags = flags ? strchr(flags + 1, ' ') : NULL;
        if (flags &&
            (strncmp(flags + 1, "slave", 5) == 0 || strncmp(flags + 1, "myself,slave", 12) == 0))
            count++;
    }
    return count;
}

/* Every node sees every replica as one: a REPLICATE reaches the others by
 * gossip, and a master that still takes a replica for a master of no
 * slots will not vote for it when its own master fails. 0, or -1. */
static int replicas_seen(struct managed_server **s, size_t n, size_t replicas)
{
    static char nodes[16384];
    for (size_t i = 0; i < n; i++) {
        int waited = 0;
        while (redis_server_reply(s[i]->port, "CLUSTER NODES", nodes, sizeof(nodes)) <= 0 ||
               replicas_in(nodes) != replicas) {
            if ((waited += 50) > JOIN_WAIT_MS)
                return -1;
            spawn_sleep_ms(50);
        }
    }
    return 0;
}

static int join(struct managed_server **s, size_t n, char *err, size_t errlen)
{
    size_t m = masters_of(n);
    const char *failed = NULL;
    if (meet_all(s, n) < 0)
        failed = "to meet";
    else if (add_slots(s, m) < 0)
        failed = "to take the slots";
    else if (add_replicas(s, n, m) < 0 || replicas_seen(s, n, n - m) < 0)
        failed = "to replicate";
    else if (all_say(s, n, "CLUSTER INFO", "cluster_slots_assigned:16384\r") < 0 ||
             all_say(s, n, "CLUSTER INFO", "cluster_state:ok\r") < 0)
        failed = "to cover every slot";
    if (failed == NULL)
        return 0;
    snprintf(err, errlen, "the Redis Cluster of %zu nodes (%zu masters) failed %s within %d ms", n,
             m, failed, REDIS_LINK_WAIT_MS);
    return -1;
}

static int start(struct cluster *c, size_t count, char *err, size_t errlen)
{
    struct managed_server *s[CLUSTER_MAX_SERVERS];
    if (count < 3 || count > CLUSTER_MAX_SERVERS ||
        !(server_redis_cluster.cluster_counts & (1u << count))) {
        snprintf(err, errlen,
                 "a Redis Cluster of %zu nodes: locklab runs 3 to 5 masters, 6, 8 or 10 nodes "
                 "as masters with one replica each, or 9, 12 or 15 with two",
                 count);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        s[i] = cluster_add_server(c, &server_redis_cluster, err, errlen);
        if (s[i] == NULL)
            goto fail;
        s[i]->peer_port = cluster_free_port();
        if (s[i]->peer_port <= 0 || s[i]->peer_port == s[i]->port) {
            snprintf(err, errlen, "no free loopback port for a cluster bus");
            goto fail;
        }
        if (cluster_start_server(s[i], err, errlen) < 0)
            goto fail;
    }
    if (join(s, count, err, errlen) == 0)
        return 0;
fail:
    cluster_stop(c, NULL);
    return -1;
}

/* A replica takes no writes: FLUSHALL on the masters empties both. */
static int reset(const struct managed_server *s, char *err, size_t errlen)
{
    if (!redis_server_leads(s->port) || redis_server_command(s->port, "FLUSHALL", "+OK") == 0)
        return 0;
    snprintf(err, errlen, "redis-cluster node on port %d did not answer FLUSHALL", s->port);
    return -1;
}

const struct server_kind server_redis_cluster = {
    .name = "redis-cluster",
    .node_prefix = "rc",
    .log = "redis.log",
    .ready_base_ms = 10000, /* a node serves as a single Redis does; the join waits apart */
    .ready_poll_ms = 5,
    .ready_sign = "PING to answer PONG",
    .command = command,
    .answers = redis_server_answers,
    .version = redis_server_version,
    .leads = redis_server_leads,
    .roles = SERVER_ROLE_BIT(SERVER_ROLE_LEADER) | SERVER_ROLE_BIT(SERVER_ROLE_FOLLOWER),
    .leader_word = "master",
    .follower_word = "replica",
    .lone = "a Redis Cluster of masters alone",
    .followers_setting = NULL,
    .start = start,
    .forget_data = redis_server_forget_data,
    .reset = reset,
    .durable_mode = "AOF fsync always",
    .clock_movable = true,
    .read_key = redis_server_read_key,
    .shorten_ttls = redis_server_shorten_ttls,
    .cluster_note = "masters first, then one replica of each in the same order; clients follow "
                    "CLUSTER SLOTS and MOVED",
    .cluster_nodes = 0,       /* opt-in (--redis-cluster-nodes 6: 3 masters x 1 replica) */
    .cluster_counts = 0x9778, /* 3, 4, 5, 6, 8, 9, 10, 12, 15 */
    .cluster_counts_text = "3, 4, 5, 6, 8, 9, 10, 12 or 15",
    .option_arg = "H:P[,...]",
    .option_help = "use this Redis Cluster (any of its nodes) instead of starting one",
    .host_needs = {"redis-server", "redis-cli", NULL},
    .host_packages = "redis-server redis-tools",
    .not_on_hosts = "its nodes send from loopback addresses of their own (the partition's rules)",
};
