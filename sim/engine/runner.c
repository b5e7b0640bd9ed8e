/* runner.c - the virtual clients of a run, a closed loop each, as
 * coroutines on one worker per core (worker.h).
 *
 * Clients connect first and wait at a start line, so connection set-up is
 * not part of any figure and a server that refuses clients stops the run
 * before it starts. A worker connects all its clients at once, each
 * parking at the line, and then reports for them all: start-up costs one
 * wake-up per thread, not one per client for every client. Each thread
 * measures into its own tally (tally.h), each client keeps its counters
 * and history buffer; they are merged once, after the join (collect.c).
 */
#include "sim/engine/runner.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/engine/limiter.h"
#include "sim/engine/record.h"
#include "sim/engine/resource.h"
#include "sim/engine/run_ctx.h"
#include "sim/engine/runner_state.h"
#include "sim/engine/seam.h"
#include "sim/engine/tally.h"
#include "sim/engine/worker.h"
#include "sim/faults/nemesis.h"
#include "sim/fleet/server_kind.h"
#include "sim/proxy/proxy.h"
#include "sim/record/clock.h"
#include "sim/record/hiccup.h"
#include "sim/record/histogram.h"
#include "sim/record/history.h"
#include "sim/workloads/workload.h"

#define ERROR_PAUSE_NS   (20ULL * 1000000ULL)    /* after a failed call, before the next step */
#define START_CONNECT_NS (10ULL * 1000000000ULL) /* the most a client tries to connect at start */

static void random_run_id(char out[17], uint64_t seed)
{
    /* The id only needs to differ between runs against the same server. */
    uint64_t x = clock_wall_ns() ^ (seed * 0x9e3779b97f4a7c15ULL) ^ clock_mono_ns() << 17;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    snprintf(out, 17, "%016" PRIx64, x);
}

/* How many workers: one per core the process may run on, never more than
 * clients. */
static uint32_t worker_count(uint32_t clients)
{
    /* Under taskset (as the benches pin locklab to one core) the online
     * count would put two workers on one core, trading epoll batches for
     * context switches between them. */
    cpu_set_t set;
    long cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
                                                              : sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t n = cores > 0 ? (uint32_t)cores : 1;
    return n < clients ? n : clients;
}

/* The workers, their threads and their tallies. */
static int make_threads(struct runner *r)
{
    r->n_threads = worker_count(r->n);
    r->tallies = calloc(r->n_threads, sizeof(*r->tallies));
    r->threads = calloc(r->n_threads, sizeof(*r->threads));
    if (r->tallies == NULL || r->threads == NULL)
        return -1;
    for (uint32_t t = 0; t < r->n_threads; t++)
        if (tally_init(&r->tallies[t], r->tl_len) < 0)
            return -1;
    r->workers = calloc(r->n_threads, sizeof(*r->workers));
    if (r->workers == NULL)
        return -1;
    for (uint32_t t = 0; t < r->n_threads; t++)
        if ((r->workers[t] = worker_new(r->n / r->n_threads + 1)) == NULL)
            return -1;
    /* Without it (no thread) each worker seals on its own. */
    r->sealer = tally_sealer_start(r->tallies, r->n_threads);
    return 0;
}

struct runner *runner_new(const struct scenario *s, const struct lock_ops *ops,
                          const struct lock_config *cfg, char *err, size_t errlen)
{
    struct runner *r = calloc(1, sizeof(*r));
    if (r == NULL)
        goto oom;
    r->run.scn = s;
    r->run.ops = ops;
    r->run.cfg = cfg;
    r->run.renews = scenario_renews(s, ops);
    if (s->limit_rate > 0) {
        r->run.limiter = limiter_new(s->limit_rate, scenario_limit_burst(s), clock_mono_ns());
        if (r->run.limiter == NULL)
            goto oom;
    }
    atomic_init(&r->run.stop, 0);
    atomic_init(&r->run.interrupted, 0);
    random_run_id(r->run.run_id, s->seed);
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* wall-clock jumps must not stretch waits */
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    struct workload_run wr;
    scenario_workload_run(s, &wr);
    r->run.wl = workload_new(s->workload, scenario_workload(s), &wr, &client_calls);
    r->run.nem = nemesis_new(s->faults, s->n_faults, s->seed);
    r->n = s->clients;
    r->clients = calloc(r->n, sizeof(*r->clients));
    if (r->run.wl == NULL || r->run.nem == NULL || r->clients == NULL ||
        nemesis_waiters_new(r->run.nem, r->n) < 0)
        goto oom;
    r->tl_len = (size_t)((s->duration_ms + scenario_longest_fault_ms(s) + s->wait_ms) / 1000 + 3);
    if (make_threads(r) < 0)
        goto oom;
    if (ops->optimistic)
        resource_set_versioned(r->run.wl->res); /* the value moves with the lock's version */
    resource_set_permits(r->run.wl->res, s->permits);
    for (uint32_t i = 0; i < r->n; i++) {
        /* client i on worker i mod workers: neighbours spread over the cores */
        uint32_t th = i % r->n_threads;
        if (client_init(&r->clients[i], &r->run, i, &r->tallies[th], r->workers[th]) < 0)
            goto oom;
        r->clients[i].steps_left = s->requests ? request_share(s, i) : UINT64_MAX;
        r->clients[i].waiter = nemesis_waiter_slot(r->run.nem, i);
        r->clients[i].lc.seam = client_seam(&r->clients[i]);
    }
    return r;
oom:
    snprintf(err, errlen, "out of memory setting up %" PRIu32 " clients", s->clients);
    runner_free(r);
    return NULL;
}

static void pause_after_error(struct client *cl)
{
    lock_sleep_until(&cl->lc, clock_mono_ns() + ERROR_PAUSE_NS, NULL);
}

/* Wait for the next step's turn on the schedule. Its due time, or 0 when
 * the client is done: the schedule has no step left before the end (it
 * waits for the end all the same, as a closed-loop client would be busy
 * until then: the run lasts its duration and its faults all fire), or the
 * run was stopped meanwhile. */
static uint64_t wait_for_turn(struct client *cl)
{
    uint64_t due = step_due(cl, cl->next_step);
    if (due >= cl->run->deadline_ns) {
        client_idle_until(cl, cl->run->deadline_ns);
        cl->cut_short = run_stopping(cl->run) != 0 && clock_mono_ns() < cl->run->deadline_ns;
        return 0;
    }
    if (!client_idle_until(cl, due)) {
        cl->cut_short = run_stopping(cl->run) != 0;
        return 0;
    }
    uint64_t lag = clock_mono_ns() - due;
    cl->lag_sum_ns += lag;
    if (lag > cl->lag_max_ns)
        cl->lag_max_ns = lag;
    cl->next_step++;
    return due;
}

static void client_loop(struct client *cl)
{
    struct run_ctx *run = cl->run;
    bool open_loop = run->scn->rate > 0;
    for (;;) {
        if (cl->steps_left == 0)
            break;
        uint64_t t = clock_mono_ns();
        if (t >= run->deadline_ns)
            break;
        if (run_stopping(run)) {
            cl->cut_short = true; /* it would have gone on: the run is incomplete */
            break;
        }
        if (!cl->connected && client_connect(cl) < 0) {
            cl_floor(cl, t); /* a server gone for good must not hold the history back */
            pause_after_error(cl);
            continue;
        }
        if (open_loop && (t = cl->due_ns = wait_for_turn(cl)) == 0)
            break;
        cl_floor(cl, t);
        uint64_t errors = client_stat(cl, ST_ACQUIRE_ERR);
        bool ok = run->wl->ops->step(run->wl, cl);
        cl->due_ns = 0; /* a step that took no lock leaves it */
        uint64_t done = clock_mono_ns();
        tally_step(cl->tally, run->t0_ns, done, done - t, ok);
        cl->steps_left--;
        client_bump(cl, ST_STEPS);
        if (client_stat(cl, ST_ACQUIRE_ERR) != errors)
            pause_after_error(cl);
    }
}

static struct runner *runner_of(struct client *cl)
{
    /* run is the runner's first member. */
    return (struct runner *)(void *)cl->run;
}

/* Connect before the start line. A connect that timed out is tried again:
 * nothing is measured before the start, and a cold ZooKeeper asked for
 * 174 sessions at once on a loaded host gave some of them none within
 * their 2 s session timeout (Curator, too, gives the first connection its
 * own 15 s). A refused connection, or START_CONNECT_NS of trying, fails
 * the run. The tries before the start are not the run's connect errors.
 * Between tries a pause, doubling to START_RETRY_MAX_NS: a try that fails
 * at once (no file descriptor left, no port) never waits in the seam, and
 * without one a coroutine kept its worker for its whole START_CONNECT_NS,
 * the next client only then beginning its own (100,000 clients past the
 * limit on open files: days). A Ctrl-C ends the tries and the pause. */
#define START_RETRY_MAX_NS (1000ULL * 1000000ULL)

static int connect_at_start(struct client *cl)
{
    const atomic_int *stop = &cl->run->interrupted;
    uint64_t until = clock_mono_ns() + START_CONNECT_NS, pause = ERROR_PAUSE_NS;
    for (;;) {
        if (atomic_load_explicit(stop, memory_order_relaxed)) {
            snprintf(cl->last_error, sizeof(cl->last_error), "interrupted before it connected");
            return -1;
        }
        uint64_t refused = cl->lc.connect_refused;
        if (client_connect(cl) == 0) {
            cl->lc.connect_failures = cl->lc.connect_refused = 0;
            return 0;
        }
        uint64_t now = clock_mono_ns();
        if (cl->lc.connect_refused != refused || now >= until)
            return -1;
        lock_sleep_until(&cl->lc, now + pause < until ? now + pause : until, stop);
        pause = pause * 2 < START_RETRY_MAX_NS ? pause * 2 : START_RETRY_MAX_NS;
    }
}

/* A worker tells the start line how its n clients connected (failed of them did not;
 * first names one that did not), then wait for the gun: true to run. */
static bool report_and_wait(struct runner *r, uint32_t n, uint32_t failed,
                            const struct client *first)
{
    pthread_mutex_lock(&r->mu);
    if (failed && r->failed == 0)
        snprintf(r->first_error, sizeof(r->first_error), "client %" PRIu32 ": %s", first->id,
                 first->last_error);
    r->failed += failed;
    r->ready += n - failed;
    r->reported++;
    pthread_cond_broadcast(&r->cv);
    while (r->go == 0)
        pthread_cond_wait(&r->cv, &r->mu);
    bool go = r->go > 0;
    pthread_mutex_unlock(&r->mu);
    return go;
}

/* A client's life after the start line: its loop, then its kept locks. */
static void client_run(struct client *cl)
{
    struct runner *r = runner_of(cl);
    client_loop(cl);
    client_finish_parked(cl); /* kept locks end at their time, or with the run */
    cl->left_ns = clock_mono_ns();
    pthread_mutex_lock(&r->mu);
    if (--r->running == 0)
        pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void client_leave(struct client *cl)
{
    client_log_links(cl);
    if (cl->connected)
        cl->run->ops->disconnect(&cl->lc);
    cl->connected = false;
}

/* A client as a coroutine: connect, park at the line, run when the worker
 * says so (the runner's go is read once the worker has it). */
static void client_task(void *arg)
{
    struct client *cl = arg;
    struct runner *r = runner_of(cl);
    cl->started_ok = connect_at_start(cl) == 0;
    worker_park(cl->worker);
    if (r->go > 0 && cl->started_ok)
        client_run(cl);
    client_leave(cl);
    history_buf_close(cl->hist);
}

struct worker_job {
    struct runner *r;
    uint32_t index;
};

/* A worker's thread: its clients connect together, the worker reports for
 * them all, and once the gun goes they run until each has left. */
static void *worker_thread(void *arg)
{
    struct worker_job *job = arg;
    struct runner *r = job->r;
    struct worker *w = r->workers[job->index];
    uint32_t n = 0, failed = 0;
    const struct client *first = NULL;
    bool guard = true;
    for (uint32_t i = job->index; i < r->n; i += r->n_threads) {
        struct client *cl = &r->clients[i];
        if ((cl->task = worker_spawn(w, client_task, cl, guard)) == NULL && guard) {
            guard = false; /* out of mappings (vm.max_map_count): the rest go without */
            cl->task = worker_spawn(w, client_task, cl, false);
        }
        if (cl->task == NULL) {
            snprintf(cl->last_error, sizeof(cl->last_error), "no stack for its coroutine: %s",
                     strerror(errno));
            failed++;
            first = first ? first : cl;
        }
        n++;
    }
    worker_run(w);
    for (uint32_t i = job->index; i < r->n; i += r->n_threads) {
        const struct client *cl = &r->clients[i];
        if (cl->task && !cl->started_ok) {
            failed++;
            first = first ? first : cl;
        }
    }
    report_and_wait(r, n, failed, first);
    for (uint32_t i = job->index; i < r->n; i += r->n_threads)
        if (r->clients[i].task)
            worker_unpark(w, r->clients[i].task);
    worker_run(w);
    free(job);
    return NULL;
}

static void release_start_line(struct runner *r, int go)
{
    pthread_mutex_lock(&r->mu);
    r->go = go;
    /* Counted here, not by each client as it wakes: otherwise the watcher
     * can see nobody running before anybody has started, and stop watching. */
    if (go > 0)
        r->running = r->ready;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void runner_join(struct runner *r)
{
    for (uint32_t i = 0; i < r->started; i++)
        pthread_join(r->threads[i], NULL);
    r->started = 0;
    tally_sealer_stop(r->sealer); /* nothing records any more */
    r->sealer = NULL;
}

static int start_thread(struct runner *r, uint32_t t, const pthread_attr_t *attr)
{
    struct worker_job *job = malloc(sizeof(*job));
    if (job == NULL)
        return ENOMEM;
    *job = (struct worker_job){.r = r, .index = t};
    int rc = pthread_create(&r->threads[t], attr, worker_thread, job);
    if (rc != 0)
        free(job);
    else
        pthread_setname_np(r->threads[t], "locklab-worker");
    return rc;
}

int runner_start(struct runner *r, char *err, size_t errlen)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* A worker's thread keeps little on its own stack: its clients have
     * theirs. */
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (uint32_t t = 0; t < r->n_threads; t++) {
        int rc = start_thread(r, t, &attr);
        if (rc != 0) {
            snprintf(err, errlen, "cannot start worker thread %" PRIu32 ": %s", t, strerror(rc));
            pthread_attr_destroy(&attr);
            release_start_line(r, -1);
            runner_join(r);
            return -1;
        }
        r->started++;
    }
    pthread_attr_destroy(&attr);
    pthread_mutex_lock(&r->mu);
    while (r->reported < r->n_threads)
        pthread_cond_wait(&r->cv, &r->mu);
    uint32_t failed = r->failed;
    pthread_mutex_unlock(&r->mu);
    if (failed) {
        snprintf(err, errlen, "%" PRIu32 " of %" PRIu32 " clients could not connect; %s", failed,
                 r->n, r->first_error);
        release_start_line(r, -1);
        runner_join(r);
        return -1;
    }
    return 0;
}

void runner_go(struct runner *r)
{
    r->t0_wall_ns = clock_wall_ns();
    r->run.t0_ns = clock_mono_ns();
    r->run.deadline_ns = r->run.t0_ns + r->run.scn->duration_ms * 1000000ULL;
    /* Without its meter a run still runs: it only cannot tell a host stall. */
    r->stall_log = history_buf_new();
    r->meter = r->stall_log ? hiccup_start(r->stall_log) : NULL;
    r->meter_ran = r->meter != NULL;
    if (r->stall_log && !r->meter)
        history_buf_close(r->stall_log); /* nothing will come from it */
    if (nemesis_start(r->run.nem, r->run.t0_ns, r->run.deadline_ns, &r->run.stop) < 0) {
        r->nemesis_failed = true;
        runner_stop(r, 1);
    }
    if (record_start(r, r->record_error, sizeof(r->record_error)) < 0)
        runner_stop(r, 1); /* a run whose history is not kept cannot be judged */
    release_start_line(r, 1);
}

void runner_record_to(struct runner *r, struct journal *j)
{
    r->journal = j;
}

void runner_set_fault_nodes(struct runner *r, const struct fault_nodes *nodes)
{
    nemesis_set_nodes(r->run.nem, nodes);
}

int runner_set_proxy(struct runner *r, struct proxy *p, char *err, size_t errlen)
{
    nemesis_set_proxy(r->run.nem, p, server_kind_find(r->run.ops->server), r->n);
    if (p == NULL)
        return 0;
    size_t groups = proxy_groups(p);
    r->cfgs = calloc(groups, sizeof(*r->cfgs));
    if (r->cfgs == NULL) {
        snprintf(err, errlen, "out of memory setting up %zu proxied clients", groups);
        return -1;
    }
    for (size_t g = 0; g < groups; g++) {
        r->cfgs[g] = *r->run.cfg;
        for (size_t e = 0; e < r->cfgs[g].n_endpoints; e++)
            r->cfgs[g].endpoints[e] = proxy_address(p, e, g);
    }
    for (uint32_t i = 0; i < r->n; i++)
        r->clients[i].cfg = &r->cfgs[groups == 1 ? 0 : i];
    return 0;
}

const atomic_int *runner_cancel_flag(const struct runner *r)
{
    return &r->run.stop;
}

void runner_stop(struct runner *r, int interrupted)
{
    if (interrupted)
        atomic_store(&r->run.interrupted, 1);
    atomic_store(&r->run.stop, 1);
    /* their sleepers watching a flag look at it now */
    for (uint32_t t = 0; r->workers && t < r->n_threads; t++)
        if (r->workers[t])
            worker_poke(r->workers[t]);
}

int runner_wait(struct runner *r, uint32_t timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&r->mu);
    while (r->running > 0)
        if (pthread_cond_timedwait(&r->cv, &r->mu, &until) == ETIMEDOUT)
            break;
    int done = r->running == 0;
    pthread_mutex_unlock(&r->mu);
    return done;
}

void runner_progress(struct runner *r, struct progress *p)
{
    memset(p, 0, sizeof(*p));
    p->elapsed_s = (double)(clock_mono_ns() - r->run.t0_ns) / 1e9;
    for (uint32_t i = 0; i < r->n; i++) {
        const struct client *cl = &r->clients[i];
        p->steps += client_stat(cl, ST_STEPS);
        p->acquired += client_stat(cl, ST_ACQUIRE_OK);
        p->failed += client_stat(cl, ST_ACQUIRE_BUSY) + client_stat(cl, ST_ACQUIRE_ERR);
    }
    p->witness = resource_concurrent_entries(r->run.wl->res);
    uint64_t now_s = (clock_mono_ns() - r->run.t0_ns) / 1000000000u;
    if (now_s > 0) {
        uint64_t sum[LIVE_BUCKETS] = {0};
        for (uint32_t t = 0; t < r->n_threads; t++)
            live_collect(&r->tallies[t].live, now_s - 1, sum);
        p->acquire_p99_us = live_percentile(sum, 99.0);
    }
    pthread_mutex_lock(&r->mu);
    p->running = r->running;
    p->clients = r->ready;
    pthread_mutex_unlock(&r->mu);
}

void runner_free(struct runner *r)
{
    if (r == NULL)
        return;
    if (r->started) {
        runner_stop(r, 1);
        release_start_line(r, -1);
        runner_join(r);
    }
    hiccup_stop(r->meter);
    r->meter = NULL;
    nemesis_finish(r->run.nem);
    record_free(r); /* every appender has stopped */
    if (r->clients)
        for (uint32_t i = 0; i < r->n; i++)
            client_destroy(&r->clients[i]);
    free(r->clients);
    limiter_free(r->run.limiter);
    tally_sealer_stop(r->sealer);
    r->sealer = NULL;
    for (uint32_t t = 0; r->tallies && t < r->n_threads; t++)
        tally_destroy(&r->tallies[t]);
    for (uint32_t t = 0; r->workers && t < r->n_threads; t++)
        worker_free(r->workers[t]);
    free(r->tallies);
    free(r->workers);
    free(r->threads);
    free(r->cfgs);
    history_buf_free(r->stall_log);
    nemesis_free(r->run.nem);
    workload_free(r->run.wl);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
