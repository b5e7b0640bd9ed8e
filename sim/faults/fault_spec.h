/* fault_spec.h - a fault of a scenario's timeline as plain data, and what
 * may be asked of its kind without seeing the nemesis.
 *
 * A fault's kind is its index in the fault registry (fault.h, registry.c);
 * the queries below read the registry, so that the stages that must not
 * see the nemesis (the parser, the checker, the reports) ask a kind what
 * it is instead of naming it. The words a spec's values are written with
 * (its data, method, stream) are here too, for the parser that reads them
 * and the kinds and reports that write them back.
 */
#ifndef LOCKLAB_FAULT_SPEC_H
#define LOCKLAB_FAULT_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/settings.h"
#include "sim/record/figures.h"

#define SCENARIO_MAX_FAULTS 64 /* a scenario's timeline holds at most these */

struct json_t;
size_t fault_kind_count(void);
const char *fault_type_name(unsigned kind); /* "client_pause"; "unknown" past the end */
int fault_kind_index(const char *name);     /* -1 when no kind has that name */
/* Process faults act on the servers a run uses; network faults go through
 * the proxy, touching connections; client faults strike a client. */
bool fault_on_servers(unsigned kind);
bool fault_on_network(unsigned kind);
bool fault_on_client(unsigned kind);
/* Is its recovery counted from its start (a kill: the grants that follow
 * it are the ones the survivors make), not from its end? */
bool fault_recovers_from_start(unsigned kind);
/* The class of its band on the report's charts: "client", "clock", ... */
const char *fault_band(unsigned kind);
/* Does a client fault kill its holder (else the holder stalls)? */
bool fault_kills_holder(unsigned kind);
/* Does it hold its client's connections at the proxy while it lasts? */
bool fault_holds_connections(unsigned kind);
/* Does it split the clients too (a partition): some reach only the
 * servers it cuts off, the rest all but those, through the proxy? */
bool fault_splits_clients(unsigned kind);

#define FAULT_TARGET_HOLDER (-1) /* whichever client next holds a lock */
#define FAULT_TARGET_WAITER (-2) /* the client waiting longest inside acquire (client_pause) */

/* Whose connections a network fault touches. */
enum net_scope {
    NET_NODES = 0,   /* every client's, to the servers pick names */
    NET_HOLDER,      /* the next holder's, to every server (target "holder") */
    NET_CLIENT,      /* client target's, to every server ("client:K") */
    NET_CLIENTS,     /* n_clients clients chosen by the seed ("clients:N") */
    NET_REPLICATION, /* the replicas' link to the master ("replication") */
};

/* Toxiproxy's stream: which way the bytes go. */
enum { STREAM_UPSTREAM = 1, STREAM_DOWNSTREAM = 2, STREAM_BOTH_WAYS = 3 };

/* The first n servers (or endpoints) as a bit set: bit k is server k. */
static inline uint32_t servers_mask(size_t n)
{
    return n >= 32 ? UINT32_MAX : (1u << n) - 1;
}

/* Which servers a process fault strikes, in Jepsen's words. */
enum node_pick {
    PICK_NODE = 0,        /* one by name: node (redis-2, zk-1) */
    PICK_ONE,             /* one, chosen by the run's seed */
    PICK_MINORITY,        /* a majority less one, chosen by the seed */
    PICK_MAJORITY,        /* n/2 + 1, chosen by the seed */
    PICK_ALL,             /* every server of the lock ("all", "servers") */
    PICK_PRIMARIES,       /* the ones that lead: every Redis master, ZooKeeper's leader */
    PICK_HOLDER_MAJORITY, /* Redlock: the nodes holding the votes of key's current holder */
    /* Roles, which the server kind says it has (server_kind.h): */
    PICK_LEADER,   /* the one that leads now: the master the sentinels name, an
                      ensemble's leader, a server alone ("leader", "master") */
    PICK_FOLLOWER, /* one that follows it, chosen by the seed ("follower", "replica") */
    PICK_POOLER,   /* the pooler in front of the servers (pgbouncer before PostgreSQL) */
};

/* A role target that names no kind ("leader"); "zk-leader" names its
 * kind in node_kind. */
#define FAULT_ANY_KIND  0xff
#define PICK_IS_ROLE(p) ((p) == PICK_LEADER || (p) == PICK_FOLLOWER || (p) == PICK_POOLER)

/* How a clock jump is made. */
/* How a cluster_failover asks a replica to take over (CLUSTER FAILOVER's
 * option): with its master's handshake, without it, or without the
 * other masters' votes either. */
enum failover_mode {
    FAILOVER_MANUAL = 0, /* the default: the master stops writes until the replica has caught up */
    FAILOVER_FORCE,      /* FORCE: no handshake with the master, an election */
    FAILOVER_TAKEOVER,   /* TAKEOVER: no election either, a new epoch of its own */
};

enum clock_method {
    CLOCK_AUTO = 0, /* the default: libfaketime where it works, else the ttl */
    CLOCK_FAKETIME, /* the server runs under libfaketime; its offset file is rewritten */
    CLOCK_TTL,      /* every key's remaining ttl shortened by the jump (PEXPIRE) */
};

/* What a killed or restarted server finds on its disk. */
enum fault_data {
    DATA_UNSET = 0, /* the default: its kind's (server_kind.h: kept where it is on disk,
                       PostgreSQL, etcd, ZooKeeper; lost for Redis without AOF) */
    DATA_LOST,      /* no persistence: it comes back empty (Kleppmann's case) */
    DATA_KEPT,      /* AOF with appendfsync always (antirez's mitigation) */
};

/* What a fault's window must show (its "expect" object): liveness a
 * known result states beside safety ("acquisitions continue", "none while
 * the majority is paused"). */
struct fault_expect {
    struct expect_num acquired;    /* acquires both begun and granted inside the window */
    struct expect_num failed;      /* acquires that failed, tried during it */
    struct expect_num recovery_ms; /* from its end (start, for a kill) to the next grant */
};

/* The expectations a fault can state, by their keys in the file: the k-th
 * is fault_expect_at(x, k). One list for whoever writes them back. */
#define FAULT_EXPECTS 3
extern const char *const fault_expect_names[FAULT_EXPECTS];
const struct expect_num *fault_expect_at(const struct fault_expect *x, size_t k);

struct fault_spec {
    uint8_t kind;         /* index in the fault registry */
    uint64_t at_ms;       /* from the start of the run */
    uint64_t duration_ms; /* pause length; for client_crash the restart delay */
    int32_t target;       /* client faults: client number, FAULT_TARGET_HOLDER or _WAITER */
    /* process faults */
    enum node_pick pick;
    uint8_t node_kind;         /* PICK_NODE, a role: the server kind its name says (fleet registry),
                                  or FAULT_ANY_KIND for a role that names none */
    uint32_t node;             /* PICK_NODE: 1-based, as in "redis-2" */
    uint64_t restart_after_ms; /* kill: 0 = stays down until the run ends */
    enum fault_data data;
    char key[64];             /* holder-majority: the lock key whose holder it looks for */
    uint32_t count;           /* holder-majority: strike this many of those nodes (0 = all) */
    uint64_t jump_ms;         /* clock_jump: how far forward */
    enum clock_method method; /* clock_jump */
    enum failover_mode mode;  /* cluster_failover */
    uint32_t side_clients;    /* partition: clients on the cut-off servers' side */
    char target_text[24];     /* as written, for messages and reports */
    /* network faults: whose traffic, and Toxiproxy's parameters */
    enum net_scope scope;
    uint32_t n_clients; /* NET_CLIENTS */
    unsigned stream;    /* STREAM_*; 0 in the file = downstream, Toxiproxy's default */
    double toxicity;    /* 0..1; the file's default 1 */
    bool toxicity_set;  /* the file gave one (1 otherwise) */
    /* the toxic's own parameters, its struct as the proxy takes it
     * (sim/proxy/toxic_kind.h: read and written through its keys) */
    struct settings_store toxic;
    struct fault_expect expect;
};

/* Faults a lock holder carries out on itself when it has just taken a
 * lock: a client fault, or a network fault aimed at the holder. */
bool fault_on_holder(const struct fault_spec *f);
/* A client pause aimed at a client waiting inside acquire: the nemesis's
 * thread picks the waiter and starts and ends the pause. */
bool fault_on_waiter(const struct fault_spec *f);
/* The plan line of f: "kill redis-1, back after 2 s" (`show`, reports). */
const char *fault_plan(const struct fault_spec *f, char *buf, size_t len);
/* f's own keys into o, report.json's object of the fault. */
void fault_settings(const struct fault_spec *f, struct json_t *o);

const char *fault_data_name(enum fault_data d); /* "lost", "kept" */
/* When f's effect ends, in ms from the start (its window): a pause after
 * its duration, a kill at its restart (the run's end without one), a
 * restart and a client fault as they end on their own (at_ms + duration). */
uint64_t fault_end_ms(const struct fault_spec *f, uint64_t run_ms);
/* How many servers f strikes among n (PICK_NODE, a leader, a follower:
 * 1; a pooler: 0, it stands in front of them). */
size_t fault_node_count(const struct fault_spec *f, size_t n);
const char *fault_stream_name(unsigned stream);     /* "downstream" */
const char *clock_method_name(enum clock_method m); /* "faketime", "ttl" */

/* The words of a spec's enumerated values, by value. */
extern const char *const clock_method_words[3];  /* enum clock_method */
extern const char *const failover_mode_words[3]; /* enum failover_mode */
extern const char *const fault_stream_words[3];  /* STREAM_* - 1 */
extern const char *const fault_data_words[2];    /* enum fault_data - 1 */

#endif
