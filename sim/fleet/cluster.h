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
#include <sys/types.h>

#define CLUSTER_MAX_SERVERS 12 /* 5 Redis masters, 3 ZooKeepers, room for replicas */

struct managed_server {
    char kind[16];                /* "redis", "zookeeper", "sentinel" */
    pid_t pid;                    /* 0 once stopped */
    int port;                     /* where clients connect */
    int peer_port, election_port; /* a ZooKeeper ensemble member's quorum ports */
    char dir[256];
    char log[16];   /* its log file in dir */
    bool aof;       /* Redis: AOF with appendfsync always, so a kill keeps its data */
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
    /* Told, under cluster_lock(), when a fault started a server again: the
     * signal handler kills servers by the pids it was last told. */
    void (*pids_changed)(const struct cluster *c);
    bool redis_aof; /* set before starting: Redis servers run with AOF (data: kept) */
    /* set before starting: Redis servers run under this LD_PRELOAD (the
     * faketime shim, then libfaketime), their clocks movable; "" = not */
    char redis_preload[384];
    struct managed_server srv[CLUSTER_MAX_SERVERS];
    size_t n;
};

/* Start count redis-servers and wait until each answers PING.
 * 0, or -1 with err set and nothing left running. */
int cluster_start_redis(struct cluster *c, size_t count, char *err, size_t errlen);
/* Start a Redis replica of 127.0.0.1:from (the master, or a proxy in front
 * of it) and wait until its link to the master is up. 0, or -1 with err
 * set and the replica stopped. */
int cluster_start_replica(struct cluster *c, int from, char *err, size_t errlen);
/* Start count redis-sentinels watching the master on master_port as
 * "mymaster" (a quorum of count/2 + 1; down after 500 ms; failover-timeout
 * failover_ms), and wait until each knows the replicas and the other
 * sentinels. 0, or -1 with err set and the sentinels stopped. */
int cluster_start_sentinels(struct cluster *c, size_t count, int master_port, size_t replicas,
                            uint64_t failover_ms, char *err, size_t errlen);
/* The master a sentinel on port names for "mymaster": its port, or -1. */
int cluster_sentinel_master(int port);
/* Start a ZooKeeper of ensemble 1 (standalone) or 3 members, all on
 * loopback, and wait until each serves (srvr reports a Mode). 0, or -1
 * with err set and nothing of it left running. */
int cluster_start_zookeeper(struct cluster *c, size_t ensemble, char *err, size_t errlen);
/* Send a ZooKeeper four-letter word to a loopback port and read the whole
 * answer into reply (NUL-terminated). Returns its length, -1 on error. */
int cluster_ask(int port, const char *word, char *reply, size_t len);
/* Send one inline Redis command to a loopback port: 0 when the reply
 * starts with want ("+PONG"), -1 otherwise. */
int cluster_redis_command(int port, const char *command, const char *want);
/* Send one inline Redis command to a loopback port and read its first
 * answer (one read, NUL-terminated). Its length, or -1. */
int cluster_redis_reply(int port, const char *command, char *reply, size_t len);
/* Does the server of kind ("redis", "zookeeper") on a loopback port serve?
 * Redis: PING answers PONG; ZooKeeper: srvr reports a Mode. 1 or 0. */
int cluster_answers(const char *kind, int port);
/* Stop every server (SIGTERM, then SIGKILL), copy their logs into
 * logs_dir when it is not NULL, and remove the temporary folder. */
void cluster_stop(struct cluster *c, const char *logs_dir);
/* Copy the log of server i of kind, in the managed folder root, into
 * logs_dir as <kind>-<i>.log, the name cluster_stop gives it; also for a
 * dead cluster whose folder is left (cluster down after its supervisor
 * was killed). 0, or -1. */
int cluster_keep_log(const char *root, const char *kind, size_t i, const char *logs_dir);
/* Is server i still alive? (reaps it if not) A server a fault took down
 * counts as alive: it is down on purpose. */
int cluster_alive(struct cluster *c, size_t i);
/* Faults on one managed server (control.c), each under cluster_lock().
 * kill: SIGKILL and reap. pause/resume: SIGSTOP/SIGCONT. stop: SIGTERM
 * (a clean shutdown). revive: start a killed or stopped one again on its
 * port, its data files removed first unless keep_data, and wait until it
 * serves. Each returns 0, or -1 with err set. */
int cluster_kill(struct cluster *c, size_t i, char *err, size_t errlen);
int cluster_pause(struct cluster *c, size_t i, char *err, size_t errlen);
int cluster_resume(struct cluster *c, size_t i, char *err, size_t errlen);
int cluster_stop_one(struct cluster *c, size_t i, char *err, size_t errlen);
int cluster_revive(struct cluster *c, size_t i, bool keep_data, char *err, size_t errlen);
/* cluster_revive in two steps, for servers that must come back together
 * (a ZooKeeper quorum): start each, then wait for each, starting being how
 * many were started at once. Each 0, or -1 with err set. */
int cluster_revive_start(struct cluster *c, size_t i, bool keep_data, char *err, size_t errlen);
int cluster_revive_wait(struct cluster *c, size_t i, size_t starting, char *err, size_t errlen);
/* Move server i's clock forward by ms (it runs under libfaketime): its
 * offset file rewritten, read by the server at its next time call. 0, or
 * -1 with err set. */
int cluster_clock_jump(struct cluster *c, size_t i, uint64_t ms, char *err, size_t errlen);
/* Shorten the remaining ttl of every key on the Redis at port by ms (what
 * a forward jump of its clock does to them); keys with less left are
 * deleted. The number of keys touched, or -1. */
long cluster_shorten_ttls(int port, uint64_t ms);
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
