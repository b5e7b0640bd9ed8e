/* settle.h - between two algorithms of a comparison, wait (bounded) until
 * the managed servers stop working off what the last one left them: a
 * server still busy takes the cores the next run's clients and servers
 * need (a 10,000-client etcd run left etcd answering its backlog, and the
 * ZooKeeper run after it could get no sessions).
 *
 * A server is quiet when its CPU time (its own and its live children's:
 * PostgreSQL works in its backends) grew by less than SETTLE_BUSY_PCT of
 * one core between two samples SETTLE_SAMPLE_MS apart; the fleet has
 * settled when every server was quiet over the same two samples. The rule
 * (settle_begin / settle_sample) is pure, fed CPU times and clock times,
 * so it is tested with exact values; fleet_settle feeds it from /proc.
 */
#ifndef LOCKLAB_SETTLE_H
#define LOCKLAB_SETTLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/fleet/cluster.h"

#define SETTLE_BUSY_PCT  5     /* of one core, between two samples */
#define SETTLE_SAMPLE_MS 500   /* between two samples */
#define SETTLE_MAX_MS    15000 /* the most a comparison waits: the next run goes on */

enum settle_state {
    SETTLE_BUSY = 0, /* some server is still working: sample again */
    SETTLE_QUIET,    /* every server was quiet over the last two samples */
    SETTLE_BOUND,    /* max_ms passed with some server still busy */
};

struct settle {
    size_t n;
    uint64_t start_ms, max_ms, last_ms;
    uint64_t last_cpu_ms[CLUSTER_MAX_SERVERS];
    bool busy[CLUSTER_MAX_SERVERS];         /* in the last window */
    bool ever_busy[CLUSTER_MAX_SERVERS];    /* in any window: the ones waited for */
    uint64_t busy_pct[CLUSTER_MAX_SERVERS]; /* of one core, in its last window */
};

/* Start with n servers' CPU times (ms) at now_ms; wait at most max_ms. */
void settle_begin(struct settle *s, size_t n, const uint64_t *cpu_ms, uint64_t now_ms,
                  uint64_t max_ms);
/* The next sample: what the fleet is now. A clock that did not move keeps
 * the servers as they were (SETTLE_BUSY, unless the bound passed). */
enum settle_state settle_sample(struct settle *s, const uint64_t *cpu_ms, uint64_t now_ms);

/* What a settle came to, for the message compare prints. */
struct settle_report {
    enum settle_state state;
    size_t n_watched; /* managed servers running: 0 (all external) waits for none */
    uint64_t waited_ms;
    size_t n_busy;   /* servers that were busy in some window */
    char busy[256];  /* "etcd pid 123, zookeeper pid 456" */
    char still[256]; /* at the bound: "etcd pid 123 (37 % of a core)" */
};

/* Utime + stime of pid and of its live children, in ms; -1 when pid is
 * gone. */
int64_t settle_cpu_ms(int pid);
/* The same for pids[0..n), into ms[0..n), in one pass over /proc. */
void settle_cpu_ms_each(const int *pids, size_t n, int64_t *ms);

/* Wait until every running managed server of cl is quiet, or max_ms, or
 * stop (NULL: never) says non-zero (a Ctrl-C: SETTLE_BUSY, the wait cut
 * short). A server stopped or paused by a fault is not waited for. */
void fleet_settle(const struct cluster *cl, uint64_t max_ms, int (*stop)(void),
                  struct settle_report *r);

#endif
