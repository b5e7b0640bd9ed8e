/* worker.h - one OS thread running many coroutines on one epoll loop: the
 * engine's way to run thousands of virtual clients on a few cores.
 *
 * A coroutine waits only through worker_wait and worker_sleep (the seam's
 * two calls, seam.c), which park it and run the others meanwhile; it is
 * resumed when a socket it waits on is ready, its deadline passes, or
 * (sleeping with a cancel flag) the flag is set and worker_poke called.
 * Everything but worker_poke runs on the worker's own thread.
 *
 * Readiness is epoll's, one-shot: each wait arms its sockets again (one
 * epoll_ctl a socket, for all its entries in the array), and a socket left
 * armed by an earlier wait that ended otherwise is ignored when it fires,
 * so no coroutine is woken for a wait it no longer makes. Deadlines are an
 * indexed heap (one entry per parked coroutine at most) and epoll_pwait2's
 * nanosecond timeout; every socket ready is collected before a deadline
 * wakes anyone, as poll(2) would.
 */
#ifndef LOCKLAB_WORKER_H
#define LOCKLAB_WORKER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "sim/engine/coro.h"

struct pollfd;
struct worker;

/* One coroutine of a worker. */
struct task {
    struct coro co;
    struct worker *w;
    uint32_t idx;  /* in the worker's table */
    uint8_t state; /* enum task_state (worker.c) */
    /* the wait it is parked in */
    struct pollfd *fds;
    size_t n_fds;
    int ready;
    int want; /* entries ready before it wakes (wait_all); 0: any one */
    uint64_t deadline_ns;
    size_t heap_at; /* its place in the deadline heap, SIZE_MAX: none */
    const atomic_int *cancel;
    struct task *next; /* in the run queue */
    void (*fn)(void *);
    void *arg;
};

/* A worker for up to max_tasks coroutines; NULL with errno set. */
struct worker *worker_new(uint32_t max_tasks);
void worker_free(struct worker *w); /* accepts NULL; its tasks must have ended or never run */
/* Add a coroutine that runs fn(arg) once the worker runs; NULL (errno)
 * when it cannot. guard: a guard page below its stack (coro.h). */
struct task *worker_spawn(struct worker *w, void (*fn)(void *), void *arg, bool guard);
/* Run the tasks on the calling thread until every one has ended or parked
 * for good (worker_park). Returns how many are parked. */
uint32_t worker_run(struct worker *w);
/* The task running now on this thread, NULL outside any. */
struct task *worker_self(void);
/* From a task: park until worker_unpark. */
void worker_park(struct worker *w);
/* Make a parked task runnable (the worker's thread, outside worker_run). */
void worker_unpark(struct worker *w, struct task *t);
/* The seam's calls, from a task (lock.h's struct lock_seam). */
int worker_wait(struct worker *w, struct pollfd *fds, size_t n, uint64_t deadline_ns);
int worker_wait_all(struct worker *w, struct pollfd *fds, size_t n, uint64_t deadline_ns);
void worker_sleep(struct worker *w, uint64_t until_ns, const atomic_int *cancel);
/* The same as a lock's seam, its ctx the worker: a lock calls them with
 * no step between. */
struct lock_seam worker_seam(struct worker *w);
/* From any thread, also a signal handler: a cancel flag was set; sleepers
 * that watch one look at it. */
void worker_poke(struct worker *w);

#endif
