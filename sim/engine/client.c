/* client.c - a virtual client's lock calls, measured and recorded.
 *
 * Order of events in a critical section, and why:
 *   acquire returns -> witness enter -> read the clock (section begins)
 *   ... read, hold, write ...
 *   read the clock (section ends) -> witness leave -> release
 * Reading the clock inside the witness's window keeps every time interval
 * within the interval the witness saw, so the time-based and the
 * sequence-based views of an overlap can only differ by the nanoseconds
 * between the two.
 *
 * The watchdog runs on the client's own timeline: it renews while the
 * holder spends its critical section, and a client pause (a stop-the-world
 * GC pause) stops it with everything else, as it stops Redisson's timer.
 * A lock whose grants ride on a lease it keeps alive (etcd's Session,
 * lock_ops.keeps_lease_alive) is renewed the same way, watchdog or not:
 * the Session's keep-alive goroutine stops in a pause just as well.
 */
#include "sim/engine/client.h"
#include "sim/engine/limiter.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/client_log.h"
#include "sim/engine/resource.h"
#include "sim/engine/run_ctx.h"
#include "sim/engine/seam.h"
#include "sim/engine/tally.h"
#include "sim/faults/nemesis.h"
#include "sim/record/clock.h"
#include "sim/record/history.h"
#include "sim/workloads/workload.h"

#define NS_PER_MS 1000000ULL
#define NS_PER_US 1000ULL
#define SLICE_NS  (50 * NS_PER_MS) /* long sleeps wake this often to see Ctrl-C */

/* The renewal period, as scenario_resolve set it (never 0 when renewing). */
uint64_t cl_renew_period_ns(const struct scenario *s)
{
    return (uint64_t)(s->renew_ms ? s->renew_ms : 1) * NS_PER_MS;
}

void cl_record_us(struct client *cl, enum op_kind op, uint64_t end_ns, uint64_t ns)
{
    tally_record(cl->tally, cl->run->t0_ns, op, end_ns, ns);
}

uint32_t cl_owner_id(const struct client *cl)
{
    return cl->id + cl->run->scn->clients * (uint32_t)cl->incarnation;
}

/* One history event of this client's, on the key it is working on. The
 * event is built here so each call site states only what differs. */
void cl_log_key(struct client *cl, uint32_t key, uint64_t t, uint8_t type, uint8_t f, uint8_t arg,
                uint8_t arg2, uint64_t seq, uint64_t token)
{
    struct history_event e = {
        .t_ns = t,
        .token = token,
        .seq = seq,
        .client = cl->id,
        .key = key,
        .owner = cl_owner_id(cl),
        .type = type,
        .f = f,
        .arg = arg,
        .arg2 = arg2,
    };
    history_append(cl->hist, &e);
}

void cl_log_full(struct client *cl, uint64_t t, uint8_t type, uint8_t f, uint8_t arg, uint8_t arg2,
                 uint64_t seq, uint64_t token)
{
    cl_log_key(cl, cl->key, t, type, f, arg, arg2, seq, token);
}

void cl_log_event(struct client *cl, uint64_t t, uint8_t type, uint8_t f, uint8_t arg)
{
    cl_log_full(cl, t, type, f, arg, 0, 0, 0);
}

/* An operation that ended in an error: a failure when it surely took no
 * effect (its request never left, or was refused: counted in no_effect
 * too), else unknown (info), as Jepsen has it. */
void cl_log_error(struct client *cl, uint32_t key, uint64_t t, uint8_t f, enum stat_kind no_effect)
{
    if (cl->lc.err == LOCK_ERR_UNSENT || cl->lc.err == LOCK_ERR_REFUSED) {
        client_bump(cl, no_effect); /* surely not in effect, either way */
        cl_log_key(cl, key, t, HT_FAIL, f, cl->lc.err == LOCK_ERR_UNSENT ? HE_UNSENT : HE_REFUSED,
                   0, 0, 0);
    } else {
        cl_log_key(cl, key, t, HT_INFO, f, HE_ERROR, 0, 0, 0);
    }
}

void cl_log_fault(struct client *cl, uint64_t t, int idx, int end)
{
    struct history_event e = {
        .t_ns = t,
        .seq = HISTORY_NO_NOTE,
        .client = cl->id,
        .key = (uint32_t)idx, /* a fault event's key is the fault's index */
        .owner = HISTORY_NO_NOTE,
        .type = HT_INFO,
        .f = HF_FAULT,
        .arg = nemesis_spec(cl->run->nem, idx)->kind,
        .arg2 = (uint8_t)end,
    };
    history_append(cl->hist, &e);
}

void client_owner_name(char *buf, size_t len, const char *run_id, uint32_t client,
                       uint16_t incarnation)
{
    snprintf(buf, len, "%s:%" PRIu32 ":%u", run_id, client, (unsigned)incarnation);
}

int client_init(struct client *cl, struct run_ctx *run, uint32_t id, struct tally *tally,
                struct worker *worker)
{
    memset(cl, 0, sizeof(*cl));
    cl->id = id;
    cl->run = run;
    cl->fault = -1;
    cl->tally = tally;
    cl->worker = worker;
    /* splitmix64 of (seed, id): independent, reproducible streams. */
    uint64_t z = run->scn->seed + 0x9e3779b97f4a7c15ULL * (id + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    cl->rng = (z ^ (z >> 31)) | 1;
    cl->lc.rng = cl->rng * 0x2545F4914F6CDD1DULL | 1;
    cl->lc.seam = client_seam(cl); /* even before it connects: a coroutine never blocks */
    cl->hist = history_buf_new();
    if (cl->hist == NULL)
        return -1;
    for (int i = 0; i < ST_COUNT; i++)
        atomic_init(&cl->stat[i], 0);
    return 0;
}

void client_destroy(struct client *cl)
{
    if (cl->connected && cl->run->ops->disconnect)
        cl->run->ops->disconnect(&cl->lc);
    cl->connected = false;
    history_buf_free(cl->hist);
    free(cl->parked);
    cl->parked = NULL;
    cl->n_parked = cl->cap_parked = 0;
    cl->hist = NULL;
}

int client_connect(struct client *cl)
{
    struct lock_client *lc = &cl->lc;
    uint64_t rng = lc->rng, failures = lc->connect_failures, refused = lc->connect_refused;
    uint64_t notice = lc->woken_by_notice, timer = lc->woken_by_timer;
    memset(lc, 0, sizeof(*lc));
    lc->ops = cl->run->ops;
    lc->cfg = cl->cfg ? cl->cfg : cl->run->cfg;
    lc->rng = rng;
    lc->seam = client_seam(cl);
    lc->connect_failures = failures; /* a run's count, not a connection's */
    lc->connect_refused = refused;
    lc->woken_by_notice = notice; /* a run's counts too */
    lc->woken_by_timer = timer;
    client_owner_name(lc->owner, sizeof(lc->owner), cl->run->run_id, cl->id, cl->incarnation);
    lc->owner_len = strlen(lc->owner);
    if (lc->ops->connect(lc) < 0) {
        if (lc->connect_failures == failures)
            lc->connect_failures++; /* the algorithm did not count this one itself */
        snprintf(cl->last_error, sizeof(cl->last_error), "%s", lc->errstr);
        lc->ops->disconnect(lc);
        return -1;
    }
    cl->connected = true;
    return 0;
}

uint64_t client_random(struct client *cl, uint64_t n)
{
    return lock_random_from(&cl->rng, n);
}

uint64_t client_token(const struct client *cl)
{
    return cl->grant.token;
}

void cl_note_error(struct client *cl)
{
    snprintf(cl->last_error, sizeof(cl->last_error), "%s", cl->lc.errstr);
}

static void log_link(struct client *cl, uint64_t t, uint8_t state)
{
    cl_log_key(cl, UINT32_MAX, t, HT_INFO, HF_LINK, state, 0, 0, 0); /* a link event has no key */
}

/* The link changes the lock's library reported since the last look, as
 * info events at the times it reported them (the merge sorts them in).
 * Every client opens its session before the start line, and no event may
 * precede that line (docs/history.md): what was reported before the start
 * is logged at the start, the last of it only, as the link's state when
 * the run began. */
void client_log_links(struct client *cl)
{
    if (cl->run->ops->links == NULL || !cl->connected)
        return;
    struct lock_link_event ev[8];
    size_t n;
    uint64_t t0 = cl->run->t0_ns;
    int early = -1; /* the state last reported before the start, not yet logged */
    while ((n = cl->run->ops->links(&cl->lc, ev, 8)) > 0)
        for (size_t i = 0; i < n; i++) {
            if (ev[i].t_ns < t0) {
                early = ev[i].state;
                continue;
            }
            if (early >= 0)
                log_link(cl, t0, (uint8_t)early);
            early = -1;
            log_link(cl, ev[i].t_ns, ev[i].state);
        }
    if (early >= 0)
        log_link(cl, t0, (uint8_t)early);
}

void cl_floor(struct client *cl, uint64_t t)
{
    /* a library's reports wait in it while its client is not connected */
    if (cl->run->ops->links && !cl->connected)
        return;
    client_log_links(cl);
    history_buf_floor(cl->hist, t);
}

bool client_lock(struct client *cl, uint32_t key)
{
    return client_lock_wait(cl, key, cl->run->scn->wait_ms);
}

bool client_lock_wait(struct client *cl, uint32_t key, uint32_t wait_ms)
{
    return client_lock_mode(cl, key, LOCK_MODE_EXCLUSIVE, wait_ms);
}

/* An acquire's invoke or ok, with the mode asked and, for a permit, the
 * key's permits (the history's "mode" and "permits"). */
static void log_acquire(struct client *cl, uint64_t t, uint8_t type, uint64_t seq, uint64_t token,
                        enum lock_mode mode)
{
    struct history_event e = {
        .t_ns = t,
        .token = token,
        .seq = seq,
        .client = cl->id,
        .key = cl->key,
        .owner = cl_owner_id(cl),
        .type = type,
        .f = HF_ACQUIRE,
        .mode = (uint8_t)mode,
        .permits = mode == LOCK_MODE_PERMIT ? cl->lc.cfg->permits : 0,
    };
    history_append(cl->hist, &e);
}

/* Can the client ask for mode on key now? A workload asking what the lock
 * cannot give (a mode, a re-entry, a nesting too deep) is the engine's
 * bug: refused before anything is sent or recorded. */
bool cl_may_ask(struct client *cl, uint32_t key, enum lock_mode mode)
{
    const struct lock_ops *ops = cl->run->ops;
    const char *why = NULL;
    if (!lock_grants_mode(ops, mode))
        why = "grants no such mode";
    else if (cl->holding && (cl->n_outer == CLIENT_MAX_NESTED || cl->commit != COMMIT_NONE))
        why = "cannot nest sections that deep";
    else if (cl->holding && (cl->key == key || cl_holds_key(cl, key)) && !ops->reentrant)
        why = "is not reentrant";
    if (why == NULL)
        return true;
    snprintf(cl->last_error, sizeof(cl->last_error), "%s %s (%s, key %" PRIu32 ")", ops->name, why,
             history_mode_names[mode < LOCK_MODE_COUNT ? mode : LOCK_MODE_EXCLUSIVE], key);
    client_bump(cl, ST_ACQUIRE_ERR);
    return false;
}

/* Before an acquire of key: the step's latency counts from when it was
 * due (open loop) or from now; the invoke is logged, and the waiter slot
 * says what the client waits for. Returns where the latency counts from. */
uint64_t cl_acquire_begins(struct client *cl, uint32_t key, enum lock_mode mode)
{
    cl->key = key;
    uint64_t t_inv = clock_mono_ns();
    /* In open loop the step's first acquire is late by as much as the
     * step: its users were waiting since it was due (wrk2's correction). */
    uint64_t due = cl->due_ns, from = due ? due : t_inv;
    cl->due_ns = 0;
    log_acquire(cl, t_inv, HT_INVOKE, 0, due, mode); /* token holds due_ns */
    if (cl->waiter) { /* the nemesis may pick it as a waiter meanwhile */
        atomic_store_explicit(&cl->waiter->key, key, memory_order_relaxed);
        atomic_store_explicit(&cl->waiter->waiting_since, t_inv, memory_order_release);
    }
    return from;
}

void cl_acquire_failed(struct client *cl, enum lock_result r, uint64_t from)
{
    uint64_t t = clock_mono_ns();
    cl_record_us(cl, OP_ACQUIRE_FAILED, t, t - from);
    if (r == LOCK_BUSY) {
        client_bump(cl, ST_ACQUIRE_BUSY);
        cl_log_event(cl, t, HT_FAIL, HF_ACQUIRE, HE_BUSY);
        return;
    }
    cl_note_error(cl);
    cl_log_error(cl, cl->key, t, HF_ACQUIRE, ST_ACQUIRE_NO_EFFECT);
    /* after its no-effect count: the live figures (metrics.c) load the errors
     * first, and so never take an error for ambiguous that was not */
    client_bump_release(cl, ST_ACQUIRE_ERR);
}

/* The lock on cl->key is ours: the section begins. A re-entry is the same
 * holder inside already, so the witness is not entered twice and its
 * lines carry no sequence. */
void cl_section_begins(struct client *cl, enum lock_mode mode, bool reentry, uint64_t from)
{
    struct run_ctx *run = cl->run;
    uint64_t seq = HISTORY_NO_SEQ;
    if (!reentry)
        resource_enter(run->wl->res, cl->key, mode, &seq);
    uint64_t t = clock_mono_ns();
    cl_record_us(cl, OP_ACQUIRE, t, t - from);
    live_record(&cl->tally->live, (t - run->t0_ns) / 1000000000u, (t - from) / NS_PER_US);
    client_bump(cl, ST_ACQUIRE_OK);
    log_acquire(cl, t, HT_OK, seq, cl->grant.token, mode);
    cl->holding = true;
    cl->reentry = reentry;
    cl->from_ns = t;
    cl->next_renew_ns = t + cl_renew_period_ns(run->scn);
    if (cl->fault < 0) /* an outer section's claim stays the client's */
        cl->fault = nemesis_claim(run->nem, cl->id, t);
}

/* The run's token bucket lets the acquire go, after a wait for its token
 * no longer than the lock's own (through the seam, as every wait): true.
 * false: refused before it was sent, nothing in the history, as a
 * service's limiter stops the call before the lock client sees it; the
 * refusal comes once that wait is over, as Resilience4j's RateLimiter
 * waits out its timeoutDuration before it says no (and a closed loop of
 * instant refusals would only spin). */
static bool cl_token_taken(struct client *cl, uint32_t wait_ms)
{
    uint64_t now = clock_mono_ns(), at;
    uint64_t wait_ns = (uint64_t)wait_ms * 1000000u;
    if (!limiter_take(cl->run->limiter, now, wait_ns, &at)) {
        cl_sleep_until(cl, now + wait_ns, true);
        cl->limited = true;
        client_bump(cl, ST_ACQUIRE_LIMITED);
        return false;
    }
    if (at > now)
        cl_sleep_until(cl, at, true);
    return true;
}

bool client_lock_mode(struct client *cl, uint32_t key, enum lock_mode mode, uint32_t wait_ms)
{
    struct run_ctx *run = cl->run;
    struct workload *w = run->wl;
    if (!cl_may_ask(cl, key, mode))
        return false;
    if (cl->n_parked)
        client_service_parked(cl, false);
    client_log_links(cl);
    bool nested = cl->holding;
    cl->limited = false;
    if (!nested && run->limiter && !cl_token_taken(cl, wait_ms))
        return false;
    bool reentry = nested && (cl->key == key || cl_holds_key(cl, key));
    if (nested)
        cl_push_outer(cl);
    uint64_t from = cl_acquire_begins(cl, key, mode);
    cl->grant.mode = (uint8_t)mode;
    enum lock_result r = run->ops->acquire(&cl->lc, w->keys[key], w->key_lens[key],
                                           run->scn->ttl_ms, wait_ms, &cl->grant);
    cl->grant.mode = (uint8_t)mode; /* the engine's: a lock may have rebuilt the grant */
    if (cl->waiter)
        atomic_store_explicit(&cl->waiter->waiting_since, 0, memory_order_relaxed);
    if (r != LOCK_OK) {
        cl_acquire_failed(cl, r, from);
        if (nested)
            cl_pop_outer(cl);
        return false;
    }
    cl_section_begins(cl, mode, reentry, from);
    return true;
}

/* Sleep until t (CLOCK_MONOTONIC); wakes early when the run is
 * interrupted and cut_short allows it. The client's time passes through
 * the lock's sleep seam, as its lock's waits do, or, for a connected
 * client of a lock its caller drives, through the lock's idle, which keeps
 * its session alive meanwhile. */
void cl_sleep_until(struct client *cl, uint64_t t, bool cut_short)
{
    const atomic_int *cancel = cut_short ? &cl->run->interrupted : NULL;
    if (cl->connected && cl->run->ops->idle)
        cl->run->ops->idle(&cl->lc, t, cancel);
    else
        lock_sleep_until(&cl->lc, t, cancel);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* The next moment a kept lock needs the client: its release or renewal. */
static uint64_t parked_wake(const struct client *cl)
{
    uint64_t wake = UINT64_MAX;
    bool renews = cl->run->renews;
    for (size_t i = 0; i < cl->n_parked; i++) {
        wake = min_u64(wake, cl->parked[i].until_ns);
        if (renews)
            wake = min_u64(wake, cl->parked[i].next_renew_ns);
    }
    return wake;
}

/* Sleep until target, releasing and renewing kept locks on time meanwhile;
 * early when the run is stopped, or, with while_parked, once none is kept. */
static void wait_serving_parked(struct client *cl, uint64_t target, bool while_parked)
{
    for (uint64_t now = clock_mono_ns(); now < target; now = clock_mono_ns()) {
        if (run_stopping(cl->run))
            return;
        if (cl->n_parked)
            client_service_parked(cl, false);
        if (while_parked && cl->n_parked == 0)
            return;
        cl_floor(cl, now); /* whatever it logs next comes after the sleep */
        cl_sleep_until(cl, min_u64(min_u64(target, now + SLICE_NS), parked_wake(cl)), true);
    }
}

bool client_idle_until(struct client *cl, uint64_t t_ns)
{
    struct run_ctx *run = cl->run;
    wait_serving_parked(cl, min_u64(t_ns, run->deadline_ns), false);
    return t_ns < run->deadline_ns && !run_stopping(run);
}

bool client_retry(struct client *cl, uint64_t since_ns)
{
    const struct scenario *s = cl->run->scn;
    uint64_t now = clock_mono_ns();
    if (now - since_ns >= (uint64_t)s->wait_ms * NS_PER_MS)
        return false;
    uint32_t span = s->retry_max_ms - s->retry_min_ms;
    uint64_t ms = s->retry_min_ms + client_random(cl, (uint64_t)span + 1);
    return client_idle_until(cl, now + ms * NS_PER_MS);
}

/* End the section on key (begun at from_ns) and give the lock back. */
/* The effect of an optimistic section is its commit's outcome: written,
 * refused by a newer commit (a conflict: as a fenced write), or unknown
 * (no answer: nothing is written, as though it committed nothing). */
static uint8_t commit_effect(enum lock_result r)
{
    return r == LOCK_OK ? EFFECT_APPLIED : r == LOCK_LOST ? EFFECT_FENCED : EFFECT_NONE;
}

/* How a section ends: its lock released; an optimistic lock's write
 * committed, whose outcome is the section's effect (its invoke logged once
 * that is known, at the time it began); or an optimistic section that
 * wrote nothing, with nothing to send. */
enum section_end { END_RELEASE, END_COMMIT, END_NOTHING, END_REENTRY };

static enum lock_result release_lock(struct client *cl, uint32_t key, const struct lock_grant *g,
                                     uint64_t from_ns, uint8_t effect, enum section_end how)
{
    struct run_ctx *run = cl->run;
    uint64_t t = clock_mono_ns(), done = t;
    /* a re-entry's release leaves the witness to the outer section's */
    bool reentry = how == END_REENTRY;
    uint64_t seq = reentry ? HISTORY_NO_SEQ : resource_leave(run->wl->res, key, g->mode);
    if (reentry)
        how = END_RELEASE;
    if (how != END_COMMIT)
        cl_log_key(cl, key, t, HT_INVOKE, HF_RELEASE, effect, 0, seq, 0);
    cl_record_us(cl, OP_HOLD, t, t - from_ns);
    enum lock_result r = LOCK_OK;
    if (how != END_NOTHING) {
        client_log_links(cl); /* before the release: what the holder could have known */
        r = run->ops->release(&cl->lc, g);
        done = clock_mono_ns();
        cl_record_us(cl, OP_RELEASE, done, done - t);
    }
    if (how == END_COMMIT)
        cl_log_key(cl, key, t, HT_INVOKE, HF_RELEASE, commit_effect(r), 0, seq, 0);
    if (r == LOCK_OK) {
        client_bump(cl, ST_RELEASE_OK);
        cl_log_key(cl, key, done, HT_OK, HF_RELEASE, HE_NONE, 0, 0, 0);
    } else if (r == LOCK_LOST) {
        client_bump(cl, ST_RELEASE_LOST);
        cl_log_key(cl, key, done, HT_FAIL, HF_RELEASE, HE_LOST, 0, 0, 0);
    } else {
        cl_note_error(cl);
        cl_log_error(cl, key, done, HF_RELEASE, ST_RELEASE_NO_EFFECT);
        client_bump_release(cl, ST_RELEASE_ERR); /* after its no-effect count, as above */
    }
    return r;
}

static void drop_claim(struct client *cl)
{
    if (cl->fault >= 0) {
        nemesis_unclaim(cl->run->nem, cl->fault);
        cl->fault = -1;
    }
}

void client_unlock(struct client *cl, enum section_effect effect)
{
    drop_claim(cl);
    if (cl->commit != COMMIT_NONE) {
        /* client_commit ended the section; a commit that went through
         * ends now, its write applied or refused */
        if (cl->commit == COMMIT_MADE)
            resource_commit_end(cl->run->wl->res, cl->key, false);
        cl->commit = COMMIT_NONE;
        return;
    }
    cl->holding = false;
    /* an optimistic section that writes nothing has nothing to commit */
    bool nothing = cl->run->ops->optimistic && effect != EFFECT_APPLIED;
    release_lock(cl, cl->key, &cl->grant, cl->from_ns, (uint8_t)effect,
                 nothing       ? END_NOTHING
                 : cl->reentry ? END_REENTRY
                               : END_RELEASE);
    cl->reentry = false;
    if (cl->n_outer) /* the section it was nested in is the current one again */
        cl_pop_outer(cl);
}

bool client_commit(struct client *cl)
{
    if (!cl->run->ops->optimistic)
        return true;
    drop_claim(cl);
    cl->holding = false;
    struct resource *res = cl->run->wl->res;
    resource_commit_begin(res, cl->key); /* no read adopts a version it may make */
    enum lock_result r =
        release_lock(cl, cl->key, &cl->grant, cl->from_ns, EFFECT_APPLIED, END_COMMIT);
    if (r == LOCK_OK) {
        cl->commit = COMMIT_MADE; /* it ends when the workload has written: client_unlock */
        return true;
    }
    bool unknown = r == LOCK_ERR && cl->lc.err != LOCK_ERR_UNSENT && cl->lc.err != LOCK_ERR_REFUSED;
    resource_commit_end(res, cl->key, unknown);
    cl->commit = COMMIT_FAILED;
    return false;
}

void client_unlock_at(struct client *cl, enum section_effect effect, uint64_t until_ns)
{
    if (cl->commit != COMMIT_NONE) { /* an optimistic section keeps nothing */
        client_unlock(cl, effect);
        return;
    }
    if (until_ns <= clock_mono_ns() || cl->reentry || cl->n_outer) {
        client_unlock(cl, effect); /* a nested section is not kept past its outer one */
        return;
    }
    if (cl->n_parked == cl->cap_parked) {
        /* Rare: grows to the most locks one client keeps at once. */
        size_t cap = cl->cap_parked ? 2 * cl->cap_parked : 8;
        struct parked_lock *p = realloc(cl->parked, cap * sizeof(*p));
        if (p == NULL) { /* no room to keep it: give it back now, early but safe */
            client_unlock(cl, effect);
            return;
        }
        cl->parked = p;
        cl->cap_parked = cap;
    }
    drop_claim(cl);
    cl->holding = false;
    cl->parked[cl->n_parked++] = (struct parked_lock){.key = cl->key,
                                                      .effect = (uint8_t)effect,
                                                      .grant = cl->grant,
                                                      .from_ns = cl->from_ns,
                                                      .until_ns = until_ns,
                                                      .next_renew_ns = cl->next_renew_ns};
}

void client_finish_parked(struct client *cl)
{
    if (cl->n_parked)
        wait_serving_parked(cl, cl->run->deadline_ns, true);
    client_service_parked(cl, true);
}

void client_service_parked(struct client *cl, bool all)
{
    bool renews = cl->run->renews;
    for (size_t i = 0; i < cl->n_parked;) {
        struct parked_lock *p = &cl->parked[i];
        uint64_t now = clock_mono_ns();
        if (all || now >= p->until_ns) {
            struct parked_lock done = *p;
            cl->parked[i] = cl->parked[--cl->n_parked];
            release_lock(cl, done.key, &done.grant, done.from_ns, done.effect, END_RELEASE);
            continue;
        }
        if (renews && now >= p->next_renew_ns)
            cl_renew_grant(cl, p->key, &p->grant, &p->next_renew_ns);
        i++;
    }
}
