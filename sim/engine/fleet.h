/* fleet.h - the servers a run or a comparison needs: managed ones locklab
 * starts itself (the default), or external ones that a scenario's
 * "servers" or the command line names (docker-compose, a deployment).
 *
 * Each algorithm says which kind of server it talks to and whether its
 * endpoints are independent nodes (lock.h); the fleet holds enough of each
 * kind for every algorithm it serves: one Redis for `redis`, N masters for
 * `redlock` (its first master doubles as the single Redis), a standalone
 * or 3-node ZooKeeper for `zookeeper`.
 */
#ifndef LOCKLAB_FLEET_H
#define LOCKLAB_FLEET_H

#include <stdbool.h>
#include <stddef.h>

#include "algorithms/lock.h"
#include "sim/check/result.h"
#include "sim/faults/nemesis.h"
#include "sim/fleet/cluster.h"
#include "sim/record/run_meta.h"
#include "sim/scenario/scenario.h"

#define FLEET_KNOWN_VERSIONS 32

struct fleet {
    struct cluster cl; /* the managed servers */
    /* by the server kind's index in the registry (kinds.c) */
    struct server_list ep[SCENARIO_SERVER_KINDS];
    bool external[SCENARIO_SERVER_KINDS];
    /* a clock_jump asked for libfaketime and it cannot be had: why (its
     * jumps fall back to shortening the keys' ttl); "" otherwise */
    char no_faketime[160];
    /* the redis lock's topology: the proxy its replicas replicate through
     * (NULL: no replicas), and its sentinels */
    struct proxy *repl;
    struct server_list sentinels;
    /* each endpoint's version, asked once however many runs use it */
    struct server_version known[FLEET_KNOWN_VERSIONS];
    size_t n_known;
};

/* Check that external servers suffice for every algorithm of ops[0..n)
 * (a usage error: returns -1 with err set, nothing started). */
int fleet_check(const struct scenario *s, const struct lock_ops *const *ops, size_t n, char *err,
                size_t errlen);

/* Start the managed servers that ops[0..n) need and adopt the external
 * ones. 0, or -1 with err set and nothing left running. */
int fleet_up(struct fleet *f, const struct scenario *s, const struct lock_ops *const *ops, size_t n,
             char *err, size_t errlen);

/* The endpoints, timeouts and settings one algorithm's clients use. */
void fleet_config(const struct fleet *f, const struct lock_ops *ops, const struct scenario *s,
                  struct lock_config *cfg);

/* The servers ops uses under s, named as process faults name them
 * (redis-1.., zk-1..), each with its managed server; nodes->cl is NULL
 * when they are external. */
void fleet_fault_nodes(struct fleet *f, const struct lock_ops *ops, const struct scenario *s,
                       struct fault_nodes *nodes);

/* res->servers: what ops used, managed or external, and res->versions:
 * each one's version as it answers (asked once per fleet: version.c). */
void fleet_describe(struct fleet *f, const struct lock_ops *ops, const struct scenario *s,
                    struct run_result *res);

/* Empty the managed Redis servers between two algorithms of a comparison,
 * so keys one left behind (a crashed holder's lock) cannot block the next.
 * External servers are never touched. 0, or -1 with err set. */
int fleet_reset(struct fleet *f, char *err, size_t errlen);

/* The server of kind at host:port asked its version (its kind's
 * version), or the answer it gave this fleet before; never fails: an
 * unknown version says why. */
void fleet_version(struct fleet *f, const char *kind, const char *host, int port,
                   struct server_version *v);
/* Index of a managed server that died, or -1. */
int fleet_dead(struct fleet *f);

void fleet_down(struct fleet *f, const char *logs_dir);

/* Every fleet this process starts from now on places its servers on
 * these hosts (connected; the caller's until the process ends), one per
 * host for each kind as Jepsen places them; n 0: on this machine. */
struct fleet_host;
void fleet_use_hosts(struct fleet_host *hosts, size_t n);

#endif
