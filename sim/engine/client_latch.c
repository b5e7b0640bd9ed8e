/* client_latch.c - a latch's calls from a workload's step (workload_calls'
 * latch_set, latch_delete, latch_down, latch_await), on the run's struct
 * latch_ops.
 *
 * A latch has no sections, so nothing here enters the witness. Each call
 * writes its invoke and its result into the history (docs/history.md,
 * "latches"), an await's result with what the waiter saw of its round
 * (the countDowns sent and unanswered, the zero), which the workload
 * judges from and `locklab check` judges again from the line. A pass
 * counts as an acquire (its latency from the await's start: the figures a
 * lock's grants have), a wait that ran out as a busy acquire, an error as
 * an acquire error; trySetCount, delete and countDown count as releases,
 * their latency as one.
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

/* One latch line of this client's on key. */
static void log_latch(struct client *cl, uint32_t key, const struct history_event *x)
{
    struct history_event e = *x;
    e.client = cl->id;
    e.key = key;
    e.owner = cl_owner_id(cl);
    history_append(cl->hist, &e);
}

static void log_invoke(struct client *cl, uint32_t key, uint8_t f, uint64_t t, uint32_t count)
{
    log_latch(cl, key,
              &(struct history_event){.t_ns = t, .type = HT_INVOKE, .f = f, .permits = count});
}

/* An error's line: a failure when it surely took no effect (its request
 * never left, or was refused), else unknown (info), as Jepsen has it. */
static struct history_event error_line(const struct client *cl, uint8_t f, uint64_t t)
{
    bool none = cl->lc.err == LOCK_ERR_UNSENT || cl->lc.err == LOCK_ERR_REFUSED;
    return (struct history_event){
        .t_ns = t,
        .type = none ? HT_FAIL : HT_INFO,
        .f = f,
        .arg = !none                           ? HE_ERROR
               : cl->lc.err == LOCK_ERR_UNSENT ? HE_UNSENT
                                               : HE_REFUSED,
    };
}

/* A set, a delete or a count-down came back at t: one round trip,
 * measured as a release, its line ok (answered) or as its error says. */
static void latch_sent(struct client *cl, uint32_t key, uint8_t f, enum lock_result r,
                       uint64_t from, uint64_t t)
{
    if (r == LOCK_ERR) {
        struct history_event e = error_line(cl, f, t);
        log_latch(cl, key, &e);
        cl_note_error(cl);
        client_bump_release(cl, ST_RELEASE_ERR);
        return;
    }
    /* a trySetCount that found the latch set did not set it */
    bool busy = f == HF_SET_COUNT && r == LOCK_BUSY;
    log_latch(
        cl, key,
        &(struct history_event){
            .t_ns = t, .type = busy ? HT_FAIL : HT_OK, .f = f, .arg = busy ? HE_BUSY : HE_NONE});
    cl_record_us(cl, OP_RELEASE, t, t - from);
    client_bump(cl, ST_RELEASE_OK);
}

int client_latch_set(struct client *cl, uint32_t key, uint32_t count)
{
    struct workload *w = cl->run->wl;
    uint64_t from = clock_mono_ns();
    log_invoke(cl, key, HF_SET_COUNT, from, count);
    enum lock_result r = latch_of(cl)->set_count(&cl->lc, w->keys[key], w->key_lens[key], count);
    latch_sent(cl, key, HF_SET_COUNT, r, from, clock_mono_ns());
    return r == LOCK_OK ? 1 : r == LOCK_BUSY ? 0 : -1;
}

bool client_latch_delete(struct client *cl, uint32_t key)
{
    struct workload *w = cl->run->wl;
    uint64_t from = clock_mono_ns();
    log_invoke(cl, key, HF_LATCH_DELETE, from, 0);
    enum lock_result r = latch_of(cl)->remove(&cl->lc, w->keys[key], w->key_lens[key]);
    latch_sent(cl, key, HF_LATCH_DELETE, r, from, clock_mono_ns());
    return r != LOCK_ERR;
}

bool client_latch_down(struct client *cl, uint32_t key, struct latch_count *count,
                       uint64_t *acked_ns)
{
    struct workload *w = cl->run->wl;
    uint64_t from = clock_mono_ns();
    log_invoke(cl, key, HF_COUNT_DOWN, from, 0);
    /* counted after its invoke's time, before it leaves: a waiter that saw
     * it sees its invoke earlier in the history, and a pass it makes sees it */
    atomic_fetch_add(&count->sent, 1);
    enum lock_result r = latch_of(cl)->count_down(&cl->lc, w->keys[key], w->key_lens[key]);
    *acked_ns = clock_mono_ns();
    latch_sent(cl, key, HF_COUNT_DOWN, r, from, *acked_ns);
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

int client_latch_await(struct client *cl, uint32_t key, uint32_t wait_ms,
                       const struct latch_count *count, struct latch_seen *seen)
{
    struct workload *w = cl->run->wl;
    uint64_t from = clock_mono_ns(), resumed = cl->resumed_ns;
    log_invoke(cl, key, HF_AWAIT, from, 0);
    mark_waiting(cl, key, from);
    enum lock_result r = latch_of(cl)->await(&cl->lc, w->keys[key], w->key_lens[key], wait_ms);
    mark_waiting(cl, key, 0);
    /* what the waiter saw, then the time of its line: every countDown it
     * saw sent or answered has its line earlier in the history */
    *seen = (struct latch_seen){
        .invoked_ns = from,
        .resumed_ns = cl->resumed_ns != resumed ? cl->resumed_ns : 0,
        .zero_ns = atomic_load(&count->zero_at),
        .sent = atomic_load(&count->sent),
        .unanswered = atomic_load(&count->failed),
    };
    uint64_t t = seen->at_ns = clock_mono_ns();
    struct history_event e = r == LOCK_ERR
                                 ? error_line(cl, HF_AWAIT, t)
                                 : (struct history_event){.t_ns = t,
                                                          .type = r == LOCK_OK ? HT_OK : HT_FAIL,
                                                          .f = HF_AWAIT,
                                                          .arg = r == LOCK_OK ? HE_NONE : HE_BUSY};
    e.zero_ns = seen->zero_ns;
    e.resumed_ns = seen->resumed_ns;
    /* the workload's parties are at most 1000: never cut */
    e.unanswered = (uint16_t)(seen->unanswered < HISTORY_MAX_LATCH_COUNT ? seen->unanswered
                                                                         : HISTORY_MAX_LATCH_COUNT);
    e.permits = seen->sent;
    log_latch(cl, key, &e);
    if (r == LOCK_ERR) {
        cl_note_error(cl);
        client_bump_release(cl, ST_ACQUIRE_ERR);
        return -1;
    }
    cl_record_us(cl, r == LOCK_OK ? OP_ACQUIRE : OP_ACQUIRE_FAILED, t, t - from);
    client_bump(cl, r == LOCK_OK ? ST_ACQUIRE_OK : ST_ACQUIRE_BUSY);
    return r == LOCK_OK;
}
