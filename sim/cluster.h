/* cluster.h - lock servers that locklab starts and stops itself.
 *
 * Managed servers run from the distribution's binaries, on free loopback
 * ports, in a temporary folder. Every one is stopped by its PID on every
 * kind of exit: normally, on Ctrl-C/SIGTERM, and, through
 * PR_SET_PDEATHSIG, when locklab itself dies.
 */
#ifndef LOCKLAB_CLUSTER_H
#define LOCKLAB_CLUSTER_H

#include <stddef.h>
#include <sys/types.h>

#define CLUSTER_MAX_SERVERS 12 /* 5 Redis masters, 3 ZooKeepers, room for replicas */

struct managed_server {
    char kind[16];                /* "redis", "zookeeper" */
    pid_t pid;                    /* 0 once stopped */
    int port;                     /* where clients connect */
    int peer_port, election_port; /* a ZooKeeper ensemble member's quorum ports */
    char dir[256];
    char log[16]; /* its log file in dir */
};

struct cluster {
    char root[192]; /* the temporary folder, removed on stop */
    struct managed_server srv[CLUSTER_MAX_SERVERS];
    size_t n;
};

/* Start count redis-servers and wait until each answers PING.
 * 0, or -1 with err set and nothing left running. */
int cluster_start_redis(struct cluster *c, size_t count, char *err, size_t errlen);
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
/* Is server i still alive? (reaps it if not) */
int cluster_alive(struct cluster *c, size_t i);
/* The kernel's start time of a live pid (clock ticks since boot); 0 when
 * it is gone or a zombie, 1 when it lives but /proc cannot tell. With the
 * pid it names one process, even after the pid is reused. */
unsigned long long cluster_process_start(pid_t pid);

#endif
