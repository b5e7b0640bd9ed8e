/* client.h - one virtual client: a coroutine's (or a thread's) lock, its measurements and its
 * share of the history, and the calls a workload's critical section makes.
 *
 * Everything here is written by the client itself only (its coroutine, or
 * its thread). The live progress display reads the counters with relaxed
 * atomic loads; the runner reads the rest once the client has ended.
 */
#ifndef LOCKLAB_CLIENT_H
#define LOCKLAB_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "sim/check/checker.h"
#include "sim/record/measures.h"

struct run_ctx;
struct nemesis_waiter;
struct tally;
struct worker;
struct task;
struct history_buf;

/* A lock kept after its work is done, released at until_ns (ShedLock's
 * lockAtLeastFor): its critical section stays open meanwhile. */
struct parked_lock {
    uint32_t key;
    uint8_t effect; /* what the section did, recorded when it is released */
    struct lock_grant grant;
    uint64_t from_ns, until_ns, next_renew_ns;
};

/* A section a newer one nests in (the client took another lock, or the
 * same one again, while inside it): kept while the inner one runs, the
 * current one again once that is released. */
#define CLIENT_MAX_NESTED 4
struct outer_hold {
    uint32_t key;
    bool reentry; /* it re-entered a key an outer section holds */
    struct lock_grant grant;
    uint64_t from_ns, next_renew_ns;
};

/* Where an optimistic section's commit stands (client_commit). */
enum client_commit_state {
    COMMIT_NONE = 0, /* none made: the section ends at client_unlock */
    COMMIT_MADE,     /* it went through: client_unlock ends it once the write is applied */
    COMMIT_FAILED,   /* a conflict or no answer: the section is over */
};

struct client {
    uint32_t id;
    uint16_t incarnation; /* bumped when the client restarts after a crash */
    bool connected;
    bool holding;
    bool limited;   /* its last acquire was refused by the run's token bucket */
    uint8_t commit; /* enum client_commit_state: an optimistic section's commit */
    struct run_ctx *run;
    const struct lock_config *cfg; /* its own, through the proxy; NULL: run->cfg */
    struct lock_client lc;
    struct lock_seam seam;         /* how its lock waits (seam.c) */
    struct nemesis_waiter *waiter; /* its slot for the pauses of waiters; NULL: none */
    struct lock_grant grant;
    uint32_t key;     /* held key */
    uint64_t from_ns; /* when the current section began */
    uint64_t next_renew_ns;
    bool reentry; /* the current section re-enters a key an outer one holds: the witness
                     counts the holder once, so this one neither enters nor leaves it */
    struct outer_hold outer[CLIENT_MAX_NESTED]; /* the sections it nests in, innermost last */
    uint8_t n_outer;
    int fault;           /* index of the fault this holder claimed, or -1 */
    uint64_t steps_left; /* request quota; UINT64_MAX when unlimited */
    uint64_t left_ns;    /* when it left its loop */
    bool cut_short;      /* it left because the run was stopped, not because it was done */
    uint64_t rng;
    /* open loop: when the step at hand was due (its first acquire counts its
     * latency from there, then clears it); the next step's number; how late
     * steps started */
    uint64_t due_ns;
    uint64_t next_step;
    uint64_t lag_max_ns, lag_sum_ns;
    struct parked_lock *parked; /* locks kept until a time, while the client moves on */
    size_t n_parked, cap_parked;
    struct tally *tally; /* its thread's measurements, shared with the clients beside it */
    struct history_buf *hist;
    _Atomic uint64_t stat[ST_COUNT];
    char last_error[LOCK_ERRSTR_MAX];
    struct worker *worker; /* the worker it runs on as a coroutine; NULL: outside a runner */
    struct task *task;
    bool started_ok;     /* connected by the start line */
    uint64_t resumed_ns; /* when the last pause of waiters its seam sat out ended; 0 none */
};

/* Set up / tear down a client (not its connection); it measures into
 * tally, and runs on worker (NULL: a client set up outside a runner, as a
 * unit test's, which blocks its thread in a wait). */
int client_init(struct client *cl, struct run_ctx *run, uint32_t id, struct tally *tally,
                struct worker *worker);
void client_destroy(struct client *cl);

/* Connect as the current incarnation. 0, or -1 with cl->last_error set. */
int client_connect(struct client *cl);

/* --- what a workload's step calls -------------------------------------- */

/* Take the lock on key (the workload's key id). true when held: the
 * critical section has begun. Taken while inside another section, the new
 * one nests in it (a re-entry when it is the same key: a reentrant lock
 * only), and client_unlock of the inner one makes the outer current
 * again. */
bool client_lock(struct client *cl, uint32_t key);
/* The same with the workload's own wait (scheduled tasks try with 0). */
bool client_lock_wait(struct client *cl, uint32_t key, uint32_t wait_ms);
/* The same in a mode (client_lock and client_lock_wait ask exclusive): a
 * read lock, a write lock, a semaphore's permit. The mode goes to the lock
 * (lock_grant.mode), the witness and the history. A mode the run's lock
 * cannot grant (lock_grants_mode) is refused: false, an acquire error,
 * nothing sent. A client holds one key at a time. */
bool client_lock_mode(struct client *cl, uint32_t key, enum lock_mode mode, uint32_t wait_ms);
/* Take every one of keys[0..n) in mode, nested in that order (the
 * workload orders them, as a bank orders accounts, so two clients cannot
 * wait for each other): all at once through the lock's acquire_all
 * (Redisson's MultiLock), else one by one, giving back what it took when
 * one fails. true when all are held; each is then released by its own
 * client_unlock, the last taken first. */
bool client_lock_all(struct client *cl, const uint32_t *keys, size_t n, enum lock_mode mode);
/* Put the lock library's link changes (ZooKeeper's connecting, connected,
 * expired) into the history; done before each acquire and release. */
void client_log_links(struct client *cl);
/* The client's promise to the history's recorder (history_buf_floor):
 * nothing it logs from now on is earlier than t, a time it read with
 * nothing of its own logged at an earlier one still to come. Its library's
 * link reports go into the history first. */
void cl_floor(struct client *cl, uint64_t t);
/* Spend ms inside the critical section, renewing every renew_ms when the
 * run renews (a watchdog, or a lease the lock keeps alive), and suffering any fault this holder
 * claimed. false when the client crashed: the section is over and the step must end. */
bool client_hold(struct client *cl, uint32_t ms);
/* Before the section writes: true when it may. An optimistic lock
 * (lock_ops.optimistic) commits here, a compare-and-set of the version
 * the section read, which ends the section: false is a conflict (or no
 * answer), and the section must not write. Any other lock: true, nothing
 * done. client_unlock follows either way. */
bool client_commit(struct client *cl);
/* Leave the critical section, recording what it did, and release. */
void client_unlock(struct client *cl, enum section_effect effect);
/* The work is done, but keep the lock until until_ns (ShedLock's
 * lockAtLeastFor): the section stays open and the client moves on; the
 * release happens in its idle waits and lock calls once until_ns has come,
 * or when it leaves its loop. Now or earlier: released at once. */
void client_unlock_at(struct client *cl, enum section_effect effect, uint64_t until_ns);
/* Release the kept locks whose time has come (all of them when all is
 * true: the client is leaving), renewing the others as a held lock is. */
void client_service_parked(struct client *cl, bool all);
/* The client has left its loop: keep its kept locks to their time, as a
 * lock store keeps lock_until when an instance shuts down, but no longer
 * than the run (or Ctrl-C); then release the rest. */
void client_finish_parked(struct client *cl);
uint64_t client_token(const struct client *cl);
/* The token of the section the client holds on key (the current one or
 * one it is nested in); 0 when it holds none there. */
uint64_t client_token_of(const struct client *cl, uint32_t key);
/* Outside any section, wait until t (CLOCK_MONOTONIC ns): think time, a
 * scheduler's next firing. false, early, when the run ends first. */
bool client_idle_until(struct client *cl, uint64_t t_ns);
uint64_t client_random(struct client *cl, uint64_t n);
/* After a conflict (client_commit false), may the step try again? Within
 * lock.wait_ms of since_ns, after a back-off of retry_min_ms..retry_max_ms:
 * true, the back-off slept; false when the wait is spent or the run over. */
bool client_retry(struct client *cl, uint64_t since_ns);

/* A latch's calls (client_latch.c), as workload_calls' latch_set,
 * latch_delete, latch_down and latch_await say. */
struct latch_count;
struct latch_seen;
int client_latch_set(struct client *cl, uint32_t key, uint32_t count);
bool client_latch_delete(struct client *cl, uint32_t key);
bool client_latch_down(struct client *cl, uint32_t key, struct latch_count *count,
                       uint64_t *acked_ns);
int client_latch_await(struct client *cl, uint32_t key, uint32_t wait_ms,
                       const struct latch_count *count, struct latch_seen *seen);

/* Owner value of a client life: "<run id>:<client>:<incarnation>". */
void client_owner_name(char *buf, size_t len, const char *run_id, uint32_t client,
                       uint16_t incarnation);

/* Count one more k. Only the client's own thread writes its counters, so a
 * plain load and store do: no locked instruction on the hot path. */
static inline void client_bump(struct client *cl, enum stat_kind k)
{
    uint64_t v = atomic_load_explicit(&cl->stat[k], memory_order_relaxed);
    atomic_store_explicit(&cl->stat[k], v + 1, memory_order_relaxed);
}

/* The same, published after every write the client made before it: a
 * reader that loads k with acquire ordering sees them (an error's no-effect
 * count before the error, for the live figures). A release store costs x86
 * no instruction more. */
static inline void client_bump_release(struct client *cl, enum stat_kind k)
{
    uint64_t v = atomic_load_explicit(&cl->stat[k], memory_order_relaxed);
    atomic_store_explicit(&cl->stat[k], v + 1, memory_order_release);
}

static inline uint64_t client_stat(const struct client *cl, enum stat_kind k)
{
    return atomic_load_explicit(&cl->stat[k], memory_order_relaxed);
}

/* The table of the calls above a workload's step makes (client_calls.c). */
extern const struct workload_calls client_calls;

#endif
