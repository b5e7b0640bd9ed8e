/* coro.h - a coroutine: a stack of its own and a switch to and from it,
 * for virtual clients that are not OS threads (worker.c runs thousands of
 * them on one thread each).
 *
 * Why coroutines and not state machines: every lock file reads as its
 * public description, a blocking sequence of requests (Redisson's tryLock
 * loop, etcd's Mutex, libpq's round trips), and waits only through the
 * seam (lock.h). A coroutine keeps that code as it is; only the seam's two
 * calls change. A state machine per lock would rewrite each of them.
 *
 * The switch saves the callee-saved registers and the stack pointer
 * (x86-64 System V: some 20 instructions, no system call); elsewhere it
 * falls back to ucontext. Stacks are mmap'ed and cost only the pages a
 * client touches. Sanitizer builds tell ASan and TSan about each switch,
 * so both follow a client across its stacks.
 */
#ifndef LOCKLAB_CORO_H
#define LOCKLAB_CORO_H

#include <stdbool.h>
#include <stddef.h>

struct coro {
    void *sp;  /* saved stack pointer while switched out */
    void *map; /* the mapping, guard page included */
    size_t map_size;
    void *stack; /* the usable part */
    size_t size;
    void (*fn)(void *);
    void *arg;
    bool done;              /* fn returned: never switch to it again */
    struct coro_home *home; /* the thread that resumes it */
    void *san;              /* TSan's fiber, when built with it */
    void *fake;             /* ASan's fake stack while switched out */
    void *ucp;              /* the ucontext fallback's context */
};

/* The thread's own context, which runs the scheduler: the place every
 * coroutine switches back to. One per OS thread that runs coroutines. */
struct coro_home {
    struct coro self;
    struct coro *current; /* the coroutine running now; NULL: the home itself */
    const void *bottom;   /* its stack, for ASan */
    size_t size;
};

/* Stack room every coroutine reserves (virtual; only touched pages are
 * resident): hiredis's read alone keeps a 16 KiB buffer on the stack. */
#define CORO_STACK_SIZE (256u * 1024u)

/* Prepare home for the calling thread. */
void coro_home_init(struct coro_home *home);
/* A coroutine that will run fn(arg) on its first switch. guard: put an
 * inaccessible page below the stack (a mapping of its own, which a
 * process has only so many of: vm.max_map_count). 0, or -1 (errno). */
int coro_new(struct coro *co, void (*fn)(void *), void *arg, bool guard);
void coro_free(struct coro *co); /* accepts a zeroed one */
/* From home, run co until it yields or returns. */
void coro_resume(struct coro_home *home, struct coro *co);
/* From the running coroutine, back to home. */
void coro_yield(struct coro_home *home);

#endif
