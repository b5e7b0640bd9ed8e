/* engine.h - one run as one call: the servers (started, or named by the
 * scenario or the command line), the proxy in front of them, the clients,
 * the nemesis, then the result collected and judged. The face (sim/cli)
 * hears of the run while it runs through a struct run_progress, and
 * renders the result once the call returns: the engine prints nothing and
 * chooses no exit code.
 *
 * Implemented in run.c. Its neighbour run_ctx.h is another thing: what every
 * client of a run shares while the run is under way (the clients, the
 * workloads and their tests include it); this header is the call that
 * makes such a run, and only the face includes it.
 */
#ifndef LOCKLAB_ENGINE_H
#define LOCKLAB_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

#include "algorithms/lock.h"
#include "sim/check/result.h"
#include "sim/engine/fleet.h"
#include "sim/engine/runner.h"
#include "sim/scenario/scenario.h"

/* What the face hears of a run, and how it asks for a stop. Every member
 * may be NULL (tick_s 0: no ticks). Called on the thread that called
 * engine_run, except servers_up when a fault restarts a server (the
 * nemesis's thread then). */
struct run_progress {
    void *ctx; /* handed back to every call that takes one */
    /* The managed servers are up, or a fault restarted one (new PIDs);
     * and they are about to be stopped: a face that kills them on a
     * second Ctrl-C follows them. It becomes the cluster's pids_changed,
     * hence no ctx. */
    void (*servers_up)(const struct cluster *c);
    void (*servers_down)(void);
    /* The runner a stop request (runner_stop) should reach, given before
     * any client connects; NULL before it is freed. */
    void (*runner)(void *ctx, struct runner *r);
    /* Nonzero once the user asked to stop: the start line is then crossed
     * with the run stopped, and a run that could not start says so. */
    int (*interrupted)(void *ctx);
    /* The run's settings and servers are known (res->servers); no client
     * has started yet. */
    void (*start)(void *ctx, const struct scenario *s, const struct run_result *res);
    /* Every tick_s seconds while the clients run: the figures so far. */
    unsigned tick_s;
    void (*tick)(void *ctx, const struct progress *p);
    /* Every client has left; the result is not collected yet. */
    void (*end)(void *ctx);
};

struct run_request {
    const struct scenario *scn; /* validated (scenario_load); its algorithm runs */
    /* Up, and shared by several runs (a comparison's: engine_fleet_up);
     * NULL: the run starts the scenario's own and stops it at its end,
     * the servers' logs into res->run_dir/servers when it recorded any. */
    struct fleet *fleet;
    bool proxy_all; /* every endpoint through the proxy, faults or not (--proxy) */
};

enum engine_status {
    ENGINE_RAN,        /* res holds the judged result, complete or not */
    ENGINE_NO_SERVERS, /* the managed servers would not start */
    ENGINE_NO_CLIENTS, /* the clients could not be set up, or connect */
    ENGINE_STOPPED,    /* as NO_CLIENTS, but the user had asked to stop */
    ENGINE_NO_MEMORY,  /* the result could not be collected */
};

/* One run of req->scn into res, which the caller zeroed (run_dir set:
 * the folder exists). Returns how it went; err holds one sentence unless
 * ENGINE_RAN. Whatever the status, res is the caller's, freed with
 * result_free. progress may be NULL. */
enum engine_status engine_run(const struct run_request *req, struct run_result *res,
                              const struct run_progress *progress, char *err, size_t errlen);

/* The managed servers every algorithm of ops[0..n) needs under s, started,
 * and the external ones adopted, for runs that share them. NULL with err
 * set, nothing left running. progress may be NULL (only servers_up is
 * called). */
struct fleet *engine_fleet_up(const struct scenario *s, const struct lock_ops *const *ops, size_t n,
                              const struct run_progress *progress, char *err, size_t errlen);
/* Stop them (their logs into logs_dir unless NULL) and free f; accepts
 * NULL. progress: its servers_down is called first. */
void engine_fleet_down(struct fleet *f, const char *logs_dir, const struct run_progress *progress);

#endif
