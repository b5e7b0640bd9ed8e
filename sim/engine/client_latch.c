/* client_latch.c - a latch's calls from a workload's step (workload_calls'
 * latch_set, latch_down, latch_await), on the run's struct latch_ops.
 *
 * A latch has no sections, so nothing here enters the witness or writes
 * a section into the history: the latch workload judges its own
 * invariant from the times these hand back. A pass counts as an acquire
 * (its latency from the await's start: the figures a lock's grants have),
 * a wait that ran out as a busy acquire, an error as an acquire error;
 * trySetCount, delete and countDown count as releases, their latency as
 * one.
 */
#include "sim/engine/client.h"
#include "sim/engine/client_log.h"
#include "sim/engine/run_ctx.h"
#include "sim/faults/nemesis.h"
#include "sim/record/clock.h"
#include "sim/workloads/workload.h"

static const struct latch_ops *latch_of(const struct client *cl)
{
    return cl->run->ops->latch;
}

/* An error of a latch call: kept as the client's last, and counted. */
static void latch_error(struct client *cl, enum stat_kind k)
{
    cl_note_error(cl);
    client_bump_release(cl, k);
}

/* A set or a count-down: one round trip, measured as a release. */
static void latch_sent(struct client *cl, enum lock_result r, uint64_t from)
{
    uint64_t t = clock_mono_ns();
    if (r == LOCK_ERR) {
        latch_error(cl, ST_RELEASE_ERR);
        return;
    }
    cl_record_us(cl, OP_RELEASE, t, t - from);
    client_bump(cl, ST_RELEASE_OK);
}

int client_latch_set(struct client *cl, uint32_t key, uint32_t count)
{
    struct workload *w = cl->run->wl;
    uint64_t from = clock_mono_ns();
    enum lock_result r = latch_of(cl)->set_count(&cl->lc, w->keys[key], w->key_lens[key], count);
    latch_sent(cl, r, from);
    return r == LOCK_OK ? 1 : r == LOCK_BUSY ? 0 : -1;
}

bool client_latch_delete(struct client *cl, uint32_t key)
{
    struct workload *w = cl->run->wl;
    uint64_t from = clock_mono_ns();
    enum lock_result r = latch_of(cl)->remove(&cl->lc, w->keys[key], w->key_lens[key]);
    latch_sent(cl, r, from);
    return r != LOCK_ERR;
}

bool client_latch_down(struct client *cl, uint32_t key, uint64_t *sent_ns, uint64_t *acked_ns)
{
    struct workload *w = cl->run->wl;
    *sent_ns = clock_mono_ns();
    enum lock_result r = latch_of(cl)->count_down(&cl->lc, w->keys[key], w->key_lens[key]);
    *acked_ns = clock_mono_ns();
    latch_sent(cl, r, *sent_ns);
    return r == LOCK_OK;
}

/* The nemesis's pauses of waiters pick a waiter from its slot: an await
 * is a wait as an acquire's is. */
static void mark_waiting(struct client *cl, uint32_t key, uint64_t since)
{
    if (cl->waiter == NULL)
        return;
    atomic_store_explicit(&cl->waiter->key, key, memory_order_relaxed);
    atomic_store_explicit(&cl->waiter->waiting_since, since, memory_order_release);
}

int client_latch_await(struct client *cl, uint32_t key, uint32_t wait_ms, uint64_t *resumed_ns)
{
    struct workload *w = cl->run->wl;
    uint64_t from = clock_mono_ns(), resumed = cl->resumed_ns;
    mark_waiting(cl, key, from);
    enum lock_result r = latch_of(cl)->await(&cl->lc, w->keys[key], w->key_lens[key], wait_ms);
    mark_waiting(cl, key, 0);
    uint64_t t = clock_mono_ns();
    *resumed_ns = cl->resumed_ns != resumed ? cl->resumed_ns : 0;
    if (r == LOCK_ERR) {
        latch_error(cl, ST_ACQUIRE_ERR);
        return -1;
    }
    cl_record_us(cl, r == LOCK_OK ? OP_ACQUIRE : OP_ACQUIRE_FAILED, t, t - from);
    client_bump(cl, r == LOCK_OK ? ST_ACQUIRE_OK : ST_ACQUIRE_BUSY);
    return r == LOCK_OK;
}
