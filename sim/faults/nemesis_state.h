/* nemesis_state.h - the nemesis's insides, shared by its files in
 * sim/faults/ and no one else. */
#ifndef LOCKLAB_NEMESIS_STATE_H
#define LOCKLAB_NEMESIS_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "sim/faults/fault.h"
#include "sim/faults/nemesis.h"
#include "sim/proxy/proxy.h"

/* Each fault's three notes in the history: its servers, what its start
 * did, what its end did. */
enum { NOTE_SERVERS, NOTE_START, NOTE_END, NOTES_PER_FAULT };

/* One struck server asked, from a thread of its own, whether it still
 * answers (fault_truth.c). */
struct truth_probe;

struct nemesis {
    struct fault_record rec[SCENARIO_MAX_FAULTS];
    uint64_t due_ns[SCENARIO_MAX_FAULTS];
    size_t n;
    _Atomic uint64_t pending; /* bit i: client fault i not yet claimed */
    _Atomic uint64_t active;  /* bit i: fault i's window is on (nemesis_active) */

    /* process faults, played by the thread */
    uint64_t end_due_ns[SCENARIO_MAX_FAULTS]; /* 0: ends with the run or on its own */
    uint32_t struck[SCENARIO_MAX_FAULTS];     /* bit k: it holds nodes.node[k] */
    uint32_t busy;                            /* bit k: some running fault holds node k */
    /* the lock's servers, nodes.node[0..lock_nodes), then the pooler in
     * front of them when there is one (its bit; 0: none) */
    struct fault_nodes nodes;
    size_t lock_nodes;
    uint32_t pooler;
    struct truth_probe *probe[SCENARIO_MAX_FAULTS][LOCK_ENDPOINT_MAX]; /* NULL: none asks */
    /* the processes of each server a fault is about to strike, read just
     * before its start (NULL: none read) */
    struct cluster_proc *tree[LOCK_ENDPOINT_MAX];
    size_t tree_n[LOCK_ENDPOINT_MAX];
    uint64_t first_signal_ns; /* of the strike under way: before its first signal (0: none) */
    uint64_t last_moved_ns;   /* of the strike under way: its last server seen stopped or gone */
    uint64_t rng;
    struct history_buf *hist;
    const char *notes[SCENARIO_MAX_FAULTS * NOTES_PER_FAULT];
    uint64_t deadline_ns;
    const atomic_int *stop;
    atomic_int quit;
    pthread_t thread;
    bool running;

    /* network faults, through the proxy */
    struct proxy *proxy;                            /* NULL: none */
    const struct server_kind *net_kind;             /* of the servers behind it */
    struct lock_endpoint net_up[LOCK_ENDPOINT_MAX]; /* the servers behind it */
    size_t net_n;
    uint32_t net_clients;
    _Atomic uint64_t net_fired[SCENARIO_MAX_FAULTS]; /* holder faults: when its holder started it */
    uint8_t *net_groups[SCENARIO_MAX_FAULTS];        /* clients:N: the clients it chose */

    /* waiter pauses: one slot per client (NULL: no fault targets a waiter) */
    struct nemesis_waiter *waiters;
    uint32_t n_waiters;
};

/* Fault i's window is on (or off) from now: nemesis_active's bit. */
void nemesis_mark(struct nemesis *n, size_t i, bool on);
/* server_faults.c */
bool nemesis_has_server_faults(const struct nemesis *n);
/* For the server fault kinds' strikes and ends: */
/* Append to a record's text, "; " between parts. */
void nemesis_add_text(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Node k's managed server, and its pid now. */
struct managed_server *nemesis_server(struct nemesis *n, size_t k);
pid_t nemesis_pid(struct nemesis *n, size_t k);
/* "WHAT of NODE failed: err" into fault i's error. */
void nemesis_failed_to(struct nemesis *n, size_t i, const char *what, size_t k, const char *err);
/* Node k struck by sig (SIGKILL, SIGSTOP) on every process of it
 * (cluster_strike), recorded as "SIGSTOP pg-1 (postmaster P and 9
 * children: ...)" or "SIGKILL redis-2 (pid P)", or as its failure: a
 * process left running is the fault's error. */
void nemesis_strike(struct nemesis *n, size_t i, size_t k, int sig);
/* fault_truth.c: after fault i struck its servers (a kill, a pause), ask
 * each whether it still answers, and wait a little for them; look again
 * before it ends; let the askers go once it has ended (never waited for:
 * a question to a port whose listener accepts nobody can hang for
 * minutes). An answer is the fault's error. */
void nemesis_truth_ask(struct nemesis *n, size_t i);
void nemesis_truth_look(struct nemesis *n, size_t i);
void nemesis_truth_done(struct nemesis *n, size_t i);
/* Node k struck by act, recorded as "WHAT NODE (pid P)" or as its failure. */
void nemesis_signal(struct nemesis *n, size_t i, size_t k, const char *what,
                    int (*act)(struct cluster *c, size_t idx, char *err, size_t errlen));
/* The paused servers of fault i continued. */
void nemesis_resume_all(struct nemesis *n, size_t i);
/* The servers fault i took down, started again on their ports: all of
 * them before any is waited for, since a ZooKeeper member serves only once
 * a quorum of them is back. */
void nemesis_restart_all(struct nemesis *n, size_t i);
/* Start the process faults due at 0 ms, in the caller's thread, before any
 * client runs (holder-majority excepted: it waits for a holder). */
void nemesis_start_at_zero(struct nemesis *n);
void *nemesis_main(void *arg);
/* network_faults.c */
bool nemesis_has_network_faults(const struct nemesis *n);
/* A replica's link cut on its host (host_cut.c): does f act so here (the
 * replicas on hosts, no relay on their link), and its start and end. */
bool nemesis_host_cut(const struct nemesis *n, const struct fault_spec *f);
void nemesis_host_cut_start(struct nemesis *n, size_t i);
void nemesis_host_cut_end(struct nemesis *n, size_t i, bool healed);
/* The proxy a network fault acts through (NULL: none): the run's, or for
 * the replication link the fleet's. */
struct proxy *nemesis_net_proxy(const struct nemesis *n, const struct fault_spec *f);
void nemesis_net_start(struct nemesis *n, size_t i);
void nemesis_net_end(struct nemesis *n, size_t i, bool healed);
/* When fault i's holder put it in force (0: not yet); holder faults only. */
uint64_t nemesis_net_fired(struct nemesis *n, size_t i);
/* client_faults.c: the pauses of waiters, played by the thread: one
 * started (or, when nobody waits yet, its due time moved a little on),
 * one ended (healed: by the end of the run). */
bool nemesis_has_waiter_faults(const struct nemesis *n);
void nemesis_waiter_start(struct nemesis *n, size_t i);
void nemesis_waiter_end(struct nemesis *n, size_t i, bool healed);
/* targets.c: the next of the nemesis's own seeded choices */
uint64_t nemesis_random(struct nemesis *n);
/* count of the servers in the bit set from, in a seeded random order (all
 * of them when count is 0), as a bit set. */
uint32_t nemesis_some(struct nemesis *n, uint32_t from, size_t count);
/* targets.c: which of ports[0..m) (servers of kind) lead now, bit e for
 * ports[e], those in skip left out (a stopped server would keep the
 * question waiting): the master the sentinels name when the run has
 * sentinels and kind is theirs to find, else as kind says (no leads: each
 * one does). */
struct server_kind;
uint32_t nemesis_leading(const struct nemesis *n, const struct server_kind *kind, const int *ports,
                         size_t m, uint32_t skip);
/* targets.c: the master the first sentinel that answers names, as a bit of
 * nodes.node[] (0: none answered, or it names no node of the run). */
uint32_t nemesis_master(const struct nemesis *n);
/* targets.c: the nodes fault i strikes now, as a bit set of nodes.node[];
 * a shortfall (fewer free servers than it asks) is written into why. */
uint32_t nemesis_pick(struct nemesis *n, size_t i, char *why, size_t len);

#endif
