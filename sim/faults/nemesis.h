/* nemesis.h - the fault timeline.
 *
 * Process faults (kill, pause, restart) are played by the nemesis's own
 * thread (server_faults.c): at each fault's time it picks its servers
 * (by name, or at random from the run's seed among the servers no other
 * fault holds), acts on their processes, and logs the start and the end
 * as `info` events of the process "nemesis" with what it did. When the
 * run ends (its time is up, or it is stopped) every server still down or
 * stopped is brought back, so a comparison's next algorithm and the
 * shutdown find the fleet whole.
 *
 * Client faults (client_pause, client_crash) strike a lock holder, so the
 * holder's own thread carries them out: when a client has just taken a lock
 * it asks whether a fault is due and aimed at it (any holder, or this
 * client), and claims it atomically so it fires exactly once. The hot path
 * costs one relaxed atomic load while no fault is pending. A pause aimed at
 * a waiter is the thread's to play instead (client_faults.c): a client
 * inside acquire is inside the lock's code, and only stops at its seam.
 */
#ifndef LOCKLAB_NEMESIS_H
#define LOCKLAB_NEMESIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>

#include "sim/faults/fault_record.h"
#include "sim/faults/fault_spec.h"
#include "sim/fleet/cluster.h"
#include "sim/record/history.h"

struct nemesis;
struct proxy;

/* The servers a run's process faults may strike, in the order they are
 * named: redis-1.. or zk-1.., each a managed server of cl. */
struct fault_node {
    char name[32];
    size_t idx; /* in cl->srv */
};

struct fault_nodes {
    struct cluster *cl; /* NULL: none are managed */
    struct fault_node node[LOCK_ENDPOINT_MAX];
    size_t n;
    size_t quorum; /* Redlock: the votes that make a holder (holder-majority) */
    /* why a clock_jump that wanted libfaketime shortens ttls instead ("") */
    char no_faketime[160];
    /* the Redis topology: the sentinels a failover asks, and the proxy the
     * replicas replicate through (NULL: none) */
    int sentinel_port[LOCK_ENDPOINT_MAX];
    size_t n_sentinels;
    struct proxy *repl;
};

/* Can f be a cut of a replica's link on its host (host_cut.c)? 0, or -1
 * with the one line that says why not. */
int nemesis_host_cut_fits(const struct fault_spec *f, char *err, size_t errlen);

struct nemesis *nemesis_new(const struct fault_spec *faults, size_t n, uint64_t seed);
void nemesis_free(struct nemesis *n); /* accepts NULL; stops the thread first */
/* The servers process faults strike; before nemesis_start. */
void nemesis_set_nodes(struct nemesis *n, const struct fault_nodes *nodes);
/* Arm the timeline at t0_ns; with process faults, start the thread that
 * plays them until deadline_ns or until *stop is set; those due at 0 ms
 * are started before it returns, so before the clients begin. -1 (errno
 * set) when the thread cannot start. */
int nemesis_start(struct nemesis *n, uint64_t t0_ns, uint64_t deadline_ns, const atomic_int *stop);
/* Bring back what is still down or stopped and end the thread; safe to
 * call more than once. */
void nemesis_finish(struct nemesis *n);
/* The proxy network faults go through, the kind and number of endpoints
 * it fronts and the run's clients (its groups); before nemesis_start. */
struct proxy;
struct server_kind;
void nemesis_set_proxy(struct nemesis *n, struct proxy *p, const struct server_kind *kind,
                       size_t clients);
/* A holder has claimed network fault idx: put it in force on its
 * connections now (from the holder's thread); the event to log in *start.
 * false when there is no proxy. */
bool nemesis_net_claimed(struct nemesis *n, int idx, uint32_t client, uint32_t key,
                         struct history_event *start);
/* A client pause holds the client's connections at the proxy (on) and lets
 * them go (off); no-op without a proxy. */
void nemesis_hold_client(struct nemesis *n, int idx, uint32_t client, bool on);
/* The history event of fault i's start (end 0) or end (end 1), its notes
 * named, for client (HISTORY_SERVERS: none). Made as the fault starts or
 * ends, so fault i is marked on or off from then (nemesis_active). */
void nemesis_fault_event(struct nemesis *n, size_t i, uint64_t t, int end, uint32_t client,
                         struct history_event *e);
/* The faults whose windows are on now, bit i for fault i; read from any
 * thread while the run goes (the metrics endpoint). */
uint64_t nemesis_active(const struct nemesis *n);

/* The nemesis's own events and the notes they name (history_names.notes);
 * valid until nemesis_free. */
struct history_buf *nemesis_history(const struct nemesis *n);
size_t nemesis_notes(const struct nemesis *n, const char *const **notes);

/* A fault due at now_ns for this client, claimed; or -1. */
int nemesis_claim(struct nemesis *n, uint32_t client, uint64_t now_ns);
/* Give back a claimed fault that could not be carried out. */
void nemesis_unclaim(struct nemesis *n, int idx);
const struct fault_spec *nemesis_spec(const struct nemesis *n, int idx);
/* Called by the client that claimed idx (and only it). */
void nemesis_fired(struct nemesis *n, int idx, uint32_t client, uint32_t key, uint64_t start_ns);
void nemesis_ended(struct nemesis *n, int idx, uint64_t end_ns);

/* A client's part in the pauses of waiters (client_pause, target
 * "waiter"). The client writes key and waiting_since around each acquire
 * (0: not inside one); the nemesis's thread picks the longest waiter from
 * them and sets paused_until (CLOCK_MONOTONIC; 0: not paused) and pause_ns
 * (the pause's length), which the client's seam obeys. One cache line
 * each: every client writes its own on every acquire. */
struct nemesis_waiter {
    _Atomic uint32_t key;
    _Atomic uint64_t waiting_since;
    _Atomic uint64_t paused_until;
    _Atomic uint64_t pause_ns;
} __attribute__((aligned(64)));
/* Slots for clients clients when some fault targets a waiter (none
 * otherwise); before nemesis_start. -1 out of memory. */
int nemesis_waiters_new(struct nemesis *n, uint32_t clients);
/* The client's slot; NULL when no fault targets a waiter. */
struct nemesis_waiter *nemesis_waiter_slot(struct nemesis *n, uint32_t client);

/* After all clients are joined: what happened to each fault, in order. */
size_t nemesis_report(const struct nemesis *n, struct fault_record *out, size_t max);

#endif
