/* seam.c - the engine's seam (seam.h): the worker's wait and sleep, or the
 * blocking fallback, obeying the pause of a waiter.
 *
 * Only a client with a waiter slot (some fault of the run targets a
 * waiter) goes through the pause's check; the others' locks call the
 * worker (or the fallback) directly, as cheap as before.
 *
 * The nemesis holds a paused client's traffic at the proxy from the moment
 * it pauses it, so nothing reaches the servers from it nor comes back,
 * whatever the client is doing; the client itself stops at its next wait
 * or sleep (a sleep looks every PAUSE_LOOK_NS), or as its current wait
 * returns. A pause does not count against a wait it stopped: a stopped
 * process's answer lands in its socket buffer meanwhile and is read as it
 * resumes, where here it comes through the proxy only then, so the wait's
 * deadline moves on by the pause's length.
 */
#include "sim/engine/seam.h"

#include <poll.h>
#include <stdatomic.h>

#include "sim/engine/client.h"
#include "sim/engine/run_ctx.h"
#include "sim/engine/worker.h"
#include "sim/faults/nemesis.h"

#define PAUSE_LOOK_NS (5ULL * 1000000ULL) /* how soon a sleeping client sees its pause */
#define PAUSE_END_NS  (100ULL * 1000ULL)  /* how soon it sees the nemesis end it, once due */

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* The client's own wait and sleep: its worker's, or, outside a runner,
 * its thread's. */
static int base_wait(struct client *cl, struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    if (cl->worker)
        return worker_wait(cl->worker, fds, n, deadline_ns);
    return lock_blocking_seam.wait(NULL, fds, n, deadline_ns);
}

static void base_sleep(struct client *cl, uint64_t until_ns, const atomic_int *cancel)
{
    if (cl->worker)
        worker_sleep(cl->worker, until_ns, cancel);
    else
        lock_blocking_seam.sleep(NULL, until_ns, cancel);
}

/* Stop while a pause holds the client (not past a Ctrl-C); the length of
 * the pause it sat out, 0 when none held it. */
static uint64_t sit_out(struct client *cl)
{
    struct nemesis_waiter *w = cl->waiter;
    if (atomic_load_explicit(&w->paused_until, memory_order_acquire) == 0)
        return 0;
    uint64_t len = atomic_load_explicit(&w->pause_ns, memory_order_relaxed), until;
    const atomic_int *stop = &cl->run->interrupted;
    /* Until the nemesis has ended it, not merely until its time: the end
     * it logs (and the traffic it lets go) then comes before anything the
     * client does next. */
    while ((until = atomic_load_explicit(&w->paused_until, memory_order_acquire)) != 0 &&
           !atomic_load_explicit(stop, memory_order_relaxed)) {
        uint64_t now = lock_now_ns();
        uint64_t look = now >= until ? now + PAUSE_END_NS : min_u64(until, now + PAUSE_LOOK_NS);
        base_sleep(cl, look, stop);
    }
    cl->resumed_ns = lock_now_ns();
    return len;
}

static uint64_t later(uint64_t deadline_ns, uint64_t by_ns)
{
    return deadline_ns == LOCK_FOREVER || by_ns == 0 ? deadline_ns : deadline_ns + by_ns;
}

static int pausable_wait(void *ctx, struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    struct client *cl = ctx;
    deadline_ns = later(deadline_ns, sit_out(cl));
    int rc = base_wait(cl, fds, n, deadline_ns);
    uint64_t paused = sit_out(cl); /* it began while the client waited */
    if (paused && rc == 0)
        rc = base_wait(cl, fds, n, later(deadline_ns, paused));
    return rc;
}

static void pausable_sleep(void *ctx, uint64_t until_ns, const atomic_int *cancel)
{
    struct client *cl = ctx;
    for (;;) {
        sit_out(cl);
        uint64_t now = lock_now_ns();
        if (now >= until_ns || (cancel && atomic_load_explicit(cancel, memory_order_relaxed)))
            return;
        base_sleep(cl, min_u64(until_ns, now + PAUSE_LOOK_NS), cancel);
    }
}

const struct lock_seam *client_seam(struct client *cl)
{
    if (cl->waiter)
        cl->seam = (struct lock_seam){.wait = pausable_wait, .sleep = pausable_sleep, .ctx = cl};
    else if (cl->worker) /* the only task left on it blocks its thread (worker.c alone()) */
        cl->seam = worker_seam(cl->worker);
    else
        return NULL;
    return &cl->seam;
}
