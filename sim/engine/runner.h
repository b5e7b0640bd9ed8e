/* runner.h - the virtual clients of one run: start, watch, stop, collect. */
#ifndef LOCKLAB_RUNNER_H
#define LOCKLAB_RUNNER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "sim/check/result.h"
#include "sim/scenario/scenario.h"

struct runner;

struct progress {
    double elapsed_s;
    uint64_t steps, acquired, failed;
    uint64_t witness;        /* concurrent entries seen so far */
    uint64_t acquire_p99_us; /* over the last whole second, coarse (live.h); 0 if none */
    uint32_t running;        /* clients still in their loop */
    uint32_t clients;        /* the run's clients: the rest have ended their loop */
};

/* Build the run: workload, resource, clients. NULL with err set. */
struct runner *runner_new(const struct scenario *s, const struct lock_ops *ops,
                          const struct lock_config *cfg, char *err, size_t errlen);
/* Start the threads and connect every client. -1 with err set (and
 * everything already started stopped again) when a client cannot connect. */
int runner_start(struct runner *r, char *err, size_t errlen);
/* Open the start line: the clock starts, the clients begin. */
void runner_go(struct runner *r);
/* The file the run's history streams into (journal.h), the runner's from
 * now on (runner_collect hands it to the result); before runner_go. Without
 * one the history goes to an unnamed temporary file. */
struct journal;
void runner_record_to(struct runner *r, struct journal *j);
/* The managed servers the scenario's process faults strike; before runner_go. */
struct fault_nodes;
void runner_set_fault_nodes(struct runner *r, const struct fault_nodes *nodes);
/* Clients reach the servers through p (NULL: directly), each by its
 * group's listeners; network faults go to p. After lock_config.cancel is
 * set (the clients' configs are copies), before runner_start. -1 out of
 * memory, with err set. */
struct proxy;
int runner_set_proxy(struct runner *r, struct proxy *p, char *err, size_t errlen);
/* The flag lock_config.cancel should point at: set when the run is stopped. */
const atomic_int *runner_cancel_flag(const struct runner *r);
/* Ask the clients to finish their step and leave (async-signal-safe). */
void runner_stop(struct runner *r, int interrupted);
/* Wait up to timeout_ms for every client to leave its loop; true when all have. */
int runner_wait(struct runner *r, uint32_t timeout_ms);
void runner_progress(struct runner *r, struct progress *p);
/* Join the threads and fill res (which then owns what it points to). */
int runner_collect(struct runner *r, struct run_result *res);
void runner_free(struct runner *r); /* accepts NULL */

#endif
