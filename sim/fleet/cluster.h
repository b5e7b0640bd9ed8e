/* cluster.h - lock servers that locklab starts and stops itself.
 *
 * Managed servers run from the distribution's binaries, on free loopback
 * ports, in a temporary folder. Every one is stopped by its PID on every
 * kind of exit: normally, on Ctrl-C/SIGTERM, and, through
 * PR_SET_PDEATHSIG, when locklab itself dies.
 */
#ifndef LOCKLAB_CLUSTER_H
#define LOCKLAB_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* The file in a run's folder its owner keeps locked (cluster.c). */
#define CLUSTER_OWNER_FILE "owner.lock"

#define CLUSTER_MAX_SERVERS 16 /* a Redis Cluster of 5 x 2, room for more */
/* The most clients a run connects to one server, which each is started to
 * admit: at least a scenario's most (SCENARIO_MAX_CLIENTS, fleet.c). */
#define CLUSTER_MAX_CLIENTS 100000

struct server_kind;
struct fleet_host;

struct managed_server {
    const struct server_kind *kind; /* sim/fleet/server_kind.h */
    /* NULL: it runs on this machine; else on that host (remote.h), its
     * pid that host's, never one to signal here */
    struct fleet_host *host;
    pid_t pid;                    /* 0 once stopped */
    unsigned long long pid_start; /* on a host: the kernel's start time of pid there */
    int port;                     /* where clients connect */
    /* where it listens, at port: 127.0.0.1, or its host's address */
    char addr[64];
    int peer_port, election_port; /* a ZooKeeper ensemble member's quorum ports */
    char dir[256];
    bool aof; /* in its kind's durable mode (Redis: AOF, fsync always): a kill keeps its data */
    int replica_of; /* Redis: started as a replica of 127.0.0.1:replica_of (0: a master) */
    /* Redis under libfaketime: LD_PRELOAD for it ("" = the real clock), and
     * the offset it has been given so far (its file, dir/faketime). */
    char preload[384];
    uint64_t clock_ahead_ms;
    /* Set by a fault (control.c): down or stopped on purpose, not dead.
     * Read and written under cluster_lock(). */
    bool killed;
    bool paused;
};

struct cluster {
    char root[192]; /* the temporary folder, removed on stop */
    int root_lock;  /* while root[0]: its owner file, locked (cluster.c) */
    /* The run's shared folder (cluster_shared_dir), "" until one is
     * needed; its owner file, locked, while shared[0]. */
    char shared[96];
    int shared_lock;
    pid_t janitor; /* its keeper if this process dies (janitor.h); 0: none */
    /* Told, under cluster_lock(), when a fault started a server again: the
     * signal handler kills servers by the pids it was last told. */
    void (*pids_changed)(const struct cluster *c);
    bool keep_data; /* set before starting: servers run in their kind's durable mode */
    /* set before starting: servers whose clock can move run under this
     * LD_PRELOAD (the faketime shim, then libfaketime); "" = not */
    char clock_preload[384];
    /* netfilter.h's table of this run may exist: removed at the stop */
    bool netfilter;
    /* The hosts its servers may be placed on (remote.h), connected, the
     * caller's; none: every server runs on this machine. Each gets the
     * run's folder at the same path, removed at the stop. */
    struct fleet_host *hosts;
    size_t n_hosts;
    struct managed_server srv[CLUSTER_MAX_SERVERS];
    size_t n;
};

/* Remove dir and everything in it (symbolic links as links). */
void cluster_remove_tree(const char *dir);

/* The next slot of c, of kind, with its own folder <root>/<kind>-<i>
 * (the run folder made and owned first); NULL with err set. */
struct managed_server *cluster_add_server(struct cluster *c, const struct server_kind *kind,
                                          char *err, size_t errlen);
/* cluster_add_server for a kind that runs as another user (PostgreSQL and
 * pgbouncer run as postgres): its folder <shared>/<kind>-<i> in the run's
 * shared folder, and <root>/<kind>-<i> a link to it, where its log is
 * looked for as every server's is. */
struct managed_server *cluster_add_shared_server(struct cluster *c, const struct server_kind *kind,
                                                 char *err, size_t errlen);
/* The run's shared folder, made on the first call: what a server running
 * as another user must reach, outside the user's TMPDIR (which may be
 * private, mode 0700, as mktemp -d makes it). One per run,
 * /var/tmp/locklab-<uid>/<16 hex digits of the run folder's name>, mode
 * 0711 as the folder of the user's that holds them; removed with the run
 * folder, by its janitor too, and swept when its owner is gone. Its path
 * into dir; 0, or -1 with err set. */
int cluster_shared_dir(struct cluster *c, char *dir, size_t len, char *err, size_t errlen);
/* The path the shared folder of the run folder root has (made or not). */
void cluster_shared_path(const char *root, char *buf, size_t len);
/* Take dir (a run's folder or shared folder) and remove it when no live
 * run owns it any more (its owner file's lock is free). */
void cluster_remove_if_orphaned(const char *dir);
/* A loopback port for a server: free now, below the kernel's ephemeral
 * range, never given before by this process; -1 with errno set. */
int cluster_free_port(void);
/* The address the managed server with this port (its client port or a
 * peer port) listens at, noted by spawn_start: a port names one server
 * in this process, since cluster_free_port gives each once. 127.0.0.1
 * for a port no server started with. */
const char *cluster_port_addr(int port);
/* Where clients reach s. */
struct lock_endpoint server_endpoint(const struct managed_server *s);
void cluster_note_ports(const struct managed_server *s);
/* A configuration file of a server, in its folder, for writing. */
FILE *cluster_server_file(const char *dir, const char *name);
/* Start s on a free port and wait until it serves; another port when the
 * one picked was taken meanwhile. 0, or -1 with err set, s stopped. */
int cluster_start_server(struct managed_server *s, char *err, size_t errlen);
/* Stop every server (SIGTERM, then SIGKILL), copy their logs into
 * logs_dir when it is not NULL (each as <its name>.log:
 * cluster_server_name), and remove the temporary folder. */
void cluster_stop(struct cluster *c, const char *logs_dir);
/* A server's name as faults, reports and its kept log name it: its kind's
 * node_prefix and its number among the servers of that kind, from 1
 * ("redis-1", "pg-1", "zk-2", "sentinel-1"), into buf. */
const char *cluster_node_name(const struct server_kind *kind, size_t nth, char *buf, size_t len);
/* That name of server i of c. The fleet hands a lock its kind's servers
 * in c's order, so the redis-2 a fault strikes is this redis-2. */
const char *cluster_server_name(const struct cluster *c, size_t i, char *buf, size_t len);
/* Copy the log of server i (its slot) of kind, in the managed folder root,
 * into logs_dir as <name>.log (name: cluster_node_name's, as cluster_stop
 * gives it); also for a dead cluster whose folder is left (cluster down
 * after its supervisor was killed). 0, or -1. */
int cluster_keep_log(const char *root, const struct server_kind *kind, size_t i, const char *name,
                     const char *logs_dir);
/* Is server i still alive? (reaps it if not) A server a fault took down
 * counts as alive: it is down on purpose. */
int cluster_alive(struct cluster *c, size_t i);
/* One process of a server's tree: its pid and the kernel's start time
 * of it, which tells it from a later process given the same pid. */
struct cluster_proc {
    pid_t pid;
    unsigned long long start; /* clock ticks since boot (/proc/<pid>/stat) */
};
/* Room for a server's every process: PostgreSQL's backend per client
 * (up to CLUSTER_MAX_CLIENTS) and its auxiliary processes. */
#define CLUSTER_MAX_PROCESSES 8192
/* The processes of server i now, its own first (spawn_processes), into
 * tree (room for max): read before a strike, so that the strike itself is
 * a few signals in a row. How many; 0 when it is not running. */
size_t cluster_processes(struct cluster *c, size_t i, struct cluster_proc *tree, size_t max);

/* SIGKILL pid and every process under it, the tree read first: once a
 * server dies its children are given to init and found no more (a paused
 * PostgreSQL's backends, each in a session of its own, stay stopped for
 * good). For the ways out that cannot stop servers cleanly: a second
 * Ctrl-C, the janitor. How many it reached. */
size_t cluster_kill_tree(pid_t pid);

/* What a signal to every process of one server reached (cluster_strike). */
#define CLUSTER_STRUCK_LISTED 24
struct cluster_struck {
    pid_t pid;                          /* the server's own process */
    size_t children;                    /* its descendants, signalled with it */
    pid_t child[CLUSTER_STRUCK_LISTED]; /* the first of them, for the record */
    size_t unmoved;                     /* of all, those not stopped (or not gone) in time */
    pid_t unmoved_pid;                  /* one of those */
    unsigned waited_ms;                 /* how long they were given */
    uint64_t first_ns;                  /* CLOCK_MONOTONIC before its first signal */
    uint64_t moved_ns; /* every process seen stopped or gone, or given up on; 0: SIGCONT */
};
/* sig (SIGKILL, SIGSTOP or SIGCONT) to server i and every process under
 * it (PostgreSQL's postmaster and its backends), under cluster_lock():
 * those of tree[0..n) first (cluster_processes, read a moment before;
 * NULL: read now), then, the server stopped so that it forks nothing
 * more, any child it made since; a kill reaps it. A kill and a pause then
 * give the processes up to CLUSTER_STRIKE_WAIT_MS to be gone or stopped,
 * and count those that were not (st->unmoved: the fault did not happen as
 * its class means). st may be NULL. 0, or -1 with err set. */
#define CLUSTER_STRIKE_WAIT_MS 200
int cluster_strike(struct cluster *c, size_t i, int sig, const struct cluster_proc *tree, size_t n,
                   struct cluster_struck *st, char *err, size_t errlen);
/* Faults on one managed server (control.c), each under cluster_lock().
 * kill: SIGKILL and reap. pause/resume: SIGSTOP/SIGCONT. stop: SIGTERM
 * (a clean shutdown). Each returns 0, or -1 with err set. The first three
 * are cluster_strike's, on every process of the server. */
int cluster_kill(struct cluster *c, size_t i, char *err, size_t errlen);
int cluster_pause(struct cluster *c, size_t i, char *err, size_t errlen);
int cluster_resume(struct cluster *c, size_t i, char *err, size_t errlen);
int cluster_stop_one(struct cluster *c, size_t i, char *err, size_t errlen);
/* A killed or stopped server started again on its port, its data files
 * removed first unless keep_data, in two steps, so that servers that must
 * come back together (a ZooKeeper quorum) are all started before any is
 * waited for: start each, then wait for each until it serves, starting
 * being how many were started at once. Each 0, or -1 with err set. */
int cluster_revive_start(struct cluster *c, size_t i, bool keep_data, char *err, size_t errlen);
int cluster_revive_wait(struct cluster *c, size_t i, size_t starting, char *err, size_t errlen);
/* Move server i's clock forward by ms (it runs under libfaketime): its
 * offset file rewritten, read by the server at its next time call. 0, or
 * -1 with err set. */
int cluster_clock_jump(struct cluster *c, size_t i, uint64_t ms, char *err, size_t errlen);
/* Every server a fault left down or stopped, continued or started again
 * (data lost unless it ran with AOF); how many were healed. */
size_t cluster_heal(struct cluster *c);
/* The lock for pid, killed and paused: the nemesis changes them while
 * the main thread watches for dead servers. */
void cluster_lock(void);
void cluster_unlock(void);

/* The kernel's start time of a live pid (clock ticks since boot); 0 when
 * it is gone or a zombie, 1 when it lives but /proc cannot tell. With the
 * pid it names one process, even after the pid is reused. */
unsigned long long cluster_process_start(pid_t pid);

#endif
