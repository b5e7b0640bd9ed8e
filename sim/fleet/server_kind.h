/* server_kind.h - the kinds of server the fleet runs: one ops table per
 * kind, one file each (redis_server.c, sentinel_server.c,
 * zookeeper_server.c), registered in kinds.c, the way algorithms/lock.h
 * registers locks and sim/faults/fault.h fault kinds.
 *
 * A kind's file says how one of its servers starts (its command line and
 * configuration), when it serves, whether it leads, what its data is and
 * how a run's share of them is started; cluster.c, spawn.c and control.c
 * do the rest (folders, ports, processes, faults) the same for every kind.
 * Locks name the kind they run on (lock_ops.server); fault targets and
 * reports name a kind's servers by its node prefix ("zk-1").
 */
#ifndef LOCKLAB_SERVER_KIND_H
#define LOCKLAB_SERVER_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "algorithms/lock_family.h"

struct cluster;
struct managed_server;
struct proxy;
struct spawn;
struct server_version;

/* What a kind's own topology (start_topology) needs of the run, and
 * where it puts what it started: the fleet fills one from the scenario. */
struct topology {
    struct family_layout layout;   /* every family's, as the scenario sets them */
    uint64_t seed;                 /* the run's, for the proxy on a replica's link */
    uint64_t duration_ms;          /* the run's length */
    uint32_t clients;              /* how many clients it runs */
    struct cluster *cl;            /* the run's managed servers, started into */
    struct server_list *endpoints; /* the kind's endpoints, filled */
    struct server_list *finders;   /* those that find its leader (sentinels), filled */
    struct proxy **link;           /* the proxy its followers replicate through */
};

/* The roles a run's servers of a kind play, for the fault targets that
 * name a role rather than a server ("leader", "follower", "pooler"): one
 * suite of faults then fits every family. */
enum server_role {
    SERVER_ROLE_LEADER,   /* the one that leads now; a server alone leads */
    SERVER_ROLE_FOLLOWER, /* one that follows the leader: a replica, a follower */
    SERVER_ROLE_POOLER,   /* the connection pooler in front of it */
    SERVER_ROLES
};
#define SERVER_ROLE_BIT(r) (1u << (r))

struct server_kind {
    const char *name;        /* "redis": its folders <name>-<slot>, what locks name */
    const char *node_prefix; /* its servers in fault targets, reports, kept logs: "zk" in "zk-1" */
    const char *log;         /* the file it logs to, in its folder */
    uint32_t ready_base_ms;  /* how long it may take to serve on an idle machine (SETUP.md) */
    uint32_t ready_poll_ms;  /* how often it is asked meanwhile */
    const char *ready_sign;  /* what it answers once it serves, for an error message */
    /* Its servers are members of one service (an ensemble), which a
     * client reaches through any of them; else each is a server alone. */
    bool one_service;
    /* Started only as a part of another kind's topology (pgbouncer in
     * front of PostgreSQL): users name none, so it has no command-line
     * option and no "servers" key. */
    bool internal;
    /* The command line (and environment) that starts s, into sp. */
    void (*command)(struct spawn *sp, const struct managed_server *s);
    /* Does the one on a loopback port serve? */
    bool (*answers)(int port);
    /* Optional: the one at host:port asked its version, once it serves
     * (the fleet asks each endpoint once): the number as it
     * gives it into v->version, what it said into v->answer; 0, or -1
     * with v->why set. Never fails a run. NULL: it is not asked. */
    int (*version)(const char *host, int port, struct server_version *v);
    /* Optional: does the one on port lead now? NULL: each of them does. */
    bool (*leads)(int port);
    /* The roles its servers can play (SERVER_ROLE_BIT of each): a kind
     * without one makes a fault aimed at it a misfit, with the words
     * below. A leader is the one that leads when there are several, else
     * the one; followers need more than one server in the lock's layout;
     * a pooler needs pooled. */
    unsigned roles;
    /* What its leader and its followers are called ("master", "replica";
     * NULL leader_word: "leader"), what one of them alone is called ("a standalone ZooKeeper") and
     * the setting that gives it followers ("lock.zookeeper.ensemble: 3"; NULL: none does). */
    const char *leader_word;
    const char *follower_word;
    const char *lone;
    const char *followers_setting;
    /* SERVER_ROLE_POOLER: the kind of its pooler ("pgbouncer"), whether a
     * scenario puts one in front of it and the setting that does. */
    const char *pooler;
    bool (*pooled)(const struct family_layout *l);
    const char *pooler_setting;
    /* What its main process is called when it has children of its own
     * (PostgreSQL's "postmaster"); NULL: "pid". A pause or a kill strikes
     * the process and every one of its descendants. */
    const char *main_process;
    /* Optional: start count of them and wait until they serve: what a
     * lock of this kind runs on. 0, or -1 with err set, none left. */
    int (*start)(struct cluster *c, size_t count, char *err, size_t errlen);
    /* Optional: a run's share started its own way when the scenario
     * gives the kind a topology (the redis lock's replicas and sentinels):
     * 1 when it started it, 0 when the scenario asks none (then start
     * does), -1 with err set. */
    int (*start_topology)(const struct topology *t, char *err, size_t errlen);
    /* Optional: its data files removed, as a crash with no disk leaves
     * them (a kill or restart with data lost, the default for it unless
     * the run keeps its durable_mode). NULL: nothing of it to lose. */
    void (*forget_data)(const struct managed_server *s);
    /* Its data is on disk and comes back through a kill or a restart
     * (PostgreSQL, etcd, ZooKeeper): a kill's data defaults to kept. */
    bool keeps_data;
    /* Optional: emptied between two runs of a comparison on one fleet. */
    int (*reset)(const struct managed_server *s, char *err, size_t errlen);
    /* Optional: what a run's locks made on an external server of this
     * kind at host:port removed once the run ends (the MySQL locks'
     * tables). Never fails a run. */
    void (*leave)(const char *host, int port);
    /* Optional: the mode in which it keeps its data through a kill, as
     * reports name it ("AOF fsync always"); NULL: it has none to choose. */
    const char *durable_mode;
    /* The signal that stops it cleanly and soon; 0: SIGTERM. (SIGTERM
     * asks PostgreSQL for a smart shutdown, which waits for every client
     * to leave; SIGINT is its fast one.) */
    int stop_signal;
    /* Its clock can be moved (it runs under the cluster's clock_preload). */
    bool clock_movable;
    /* Optional: the kind whose servers, when a scenario names them, name
     * this kind's master to its clients (Redis's sentinels): its servers
     * are then theirs, external. */
    const char *found_by;
    /* Optional, for a kind that finds another's master (found_by names
     * it): the port of the master the one on port names; 0 when it names
     * none or does not answer. */
    int (*names_master)(int port);
    /* For a kind that finds another's master: the name it watches it
     * under, which the lock asks it for ("mymaster"). */
    const char *finds_as;
    /* Optional: the value the one on port holds under key ("" for none),
     * for holder-majority (the nodes holding the current holder's votes);
     * 0, or -1 when it does not answer. */
    int (*read_key)(int port, const char *key, char *out, size_t len);
    /* Optional: every key's remaining ttl on the one on port shortened by
     * ms, a clock jump played without libfaketime (clock_jump's method
     * ttl): how many keys it changed, or -1 when it does not answer. */
    long (*shorten_ttls)(int port, uint64_t ms);
    /* Optional: the short letter of its command-line option (--redis is
     * also -r); 0: the long option alone. */
    char option_letter;
    /* Optional: a line `locklab cluster up` adds under its hint when the
     * cluster runs servers of this kind (how the locks share them). */
    const char *cluster_note;
    /* Its option's value and what it does, for the help of run, compare
     * and show (a kind not internal has both). */
    const char *option_arg;
    const char *option_help;
    /* `locklab cluster up` (kinds with a start): how many it starts
     * unless --<name>-nodes says, the counts that option takes (bit n:
     * n servers) and those counts as its message writes them. */
    uint32_t cluster_nodes;
    uint32_t cluster_counts;
    const char *cluster_counts_text;
    /* What a host must have to run one (commands on its PATH, or files
     * by their path), NULL-ended, as Debian's packages install them, and
     * those packages: what `locklab hosts` looks for and names. */
    const char *host_needs[4];
    const char *host_packages;
    /* Placed on other hosts too (remote.h): all it needs before its start
     * is its folder's files. false: why not yet, as a refusal says it. */
    bool on_hosts;
    const char *not_on_hosts;
};

/* The registry. */
size_t server_kind_count(void);
const struct server_kind *server_kind_at(size_t i);
/* NULL when no kind has that name. */
const struct server_kind *server_kind_find(const char *name);
/* Its index in the registry, or -1. */
int server_kind_index(const char *name);
/* A kind's servers started for a run (its start), by the kind's name.
 * 0, or -1 with err set. */
int cluster_start(struct cluster *c, const char *kind, size_t count, char *err, size_t errlen);

/* A socket connected to host:port within 2 s, or -1 with why (cut to
 * whylen): a listener that accepts nobody, its backlog full, would
 * otherwise hold a blocking connect for minutes. */
int server_dial(const char *host, int port, char *why, size_t whylen);
/* For a kind's version: */
/* One question to host:port over TCP, its answer into reply (cut to len,
 * '\0'-ended) until the server closes, 2 s pass, or until (when not NULL)
 * has come with the rest of its line. The bytes read, or -1 with why
 * (cut to whylen) when it could not connect or send. */
int server_ask(const char *host, int port, const char *question, const char *until, char *reply,
               size_t len, char *why, size_t whylen);
/* The value of field in reply (up to any of stop, or the line's end) as
 * v->version, the field and value as v->answer; 0, or -1 with v->why set
 * naming what came instead. */
int server_version_field(const char *reply, const char *field, const char *stop,
                         struct server_version *v);

#endif
