/* worker.c - coroutines on one epoll loop (worker.h). */
#include "sim/engine/worker.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "algorithms/lock.h"

#define EVENTS_PER_WAIT 256
#define POKE_TAG        UINT64_MAX
/* A cancellable sleep still looks at its flag this often, should a setter
 * forget to poke. */
#define CANCEL_LOOK_NS (250ULL * 1000000ULL)

enum task_state { TASK_RUNNABLE, TASK_WAITING, TASK_PARKED, TASK_DONE };

struct worker {
    int epfd, pokefd;
    struct coro_home home;
    struct task **tasks;
    uint32_t n_tasks, max_tasks;
    uint32_t alive, parked;
    struct task *run_head, *run_tail;
    struct task **heap; /* by deadline_ns */
    size_t heap_n;
};

static _Thread_local struct worker *running_worker;

struct task *worker_self(void)
{
    struct worker *w = running_worker;
    if (w == NULL || w->home.current == NULL)
        return NULL;
    return (struct task *)(void *)w->home.current; /* co is a task's first member */
}

/* --- the deadline heap ---------------------------------------------------- */

static void heap_set(struct worker *w, size_t i, struct task *t)
{
    w->heap[i] = t;
    t->heap_at = i;
}

static void heap_up(struct worker *w, size_t i)
{
    struct task *t = w->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (w->heap[p]->deadline_ns <= t->deadline_ns)
            break;
        heap_set(w, i, w->heap[p]);
        i = p;
    }
    heap_set(w, i, t);
}

static void heap_down(struct worker *w, size_t i)
{
    struct task *t = w->heap[i];
    for (;;) {
        size_t l = 2 * i + 1, m = l;
        if (l >= w->heap_n)
            break;
        if (l + 1 < w->heap_n && w->heap[l + 1]->deadline_ns < w->heap[l]->deadline_ns)
            m = l + 1;
        if (w->heap[m]->deadline_ns >= t->deadline_ns)
            break;
        heap_set(w, i, w->heap[m]);
        i = m;
    }
    heap_set(w, i, t);
}

static void heap_push(struct worker *w, struct task *t)
{
    heap_set(w, w->heap_n++, t);
    heap_up(w, w->heap_n - 1);
}

static void heap_remove(struct worker *w, struct task *t)
{
    size_t i = t->heap_at;
    if (i == SIZE_MAX)
        return;
    t->heap_at = SIZE_MAX;
    struct task *last = w->heap[--w->heap_n];
    if (i == w->heap_n)
        return;
    heap_set(w, i, last);
    heap_up(w, i);
    heap_down(w, last->heap_at);
}

/* --- tasks ------------------------------------------------------------------ */

static void make_runnable(struct worker *w, struct task *t)
{
    heap_remove(w, t);
    t->state = TASK_RUNNABLE;
    t->next = NULL;
    if (w->run_tail)
        w->run_tail->next = t;
    else
        w->run_head = t;
    w->run_tail = t;
}

struct worker *worker_new(uint32_t max_tasks)
{
    struct worker *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return NULL;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->pokefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    w->tasks = calloc(max_tasks ? max_tasks : 1, sizeof(*w->tasks));
    w->heap = calloc(max_tasks ? max_tasks : 1, sizeof(*w->heap));
    w->max_tasks = max_tasks;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = POKE_TAG};
    if (w->epfd < 0 || w->pokefd < 0 || w->tasks == NULL || w->heap == NULL ||
        epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->pokefd, &ev) < 0) {
        int e = errno;
        worker_free(w);
        errno = e ? e : ENOMEM;
        return NULL;
    }
    return w;
}

void worker_free(struct worker *w)
{
    if (w == NULL)
        return;
    for (uint32_t i = 0; i < w->n_tasks; i++) {
        coro_free(&w->tasks[i]->co);
        free(w->tasks[i]);
    }
    if (w->epfd >= 0)
        close(w->epfd);
    if (w->pokefd >= 0)
        close(w->pokefd);
    free(w->tasks);
    free(w->heap);
    free(w);
}

static void task_entry(void *arg)
{
    struct task *t = arg;
    t->fn(t->arg);
}

struct task *worker_spawn(struct worker *w, void (*fn)(void *), void *arg, bool guard)
{
    if (w->n_tasks == w->max_tasks) {
        errno = ENOSPC;
        return NULL;
    }
    struct task *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    if (coro_new(&t->co, task_entry, t, guard) < 0) {
        free(t);
        return NULL;
    }
    t->w = w;
    t->fn = fn;
    t->arg = arg;
    t->idx = w->n_tasks;
    t->heap_at = SIZE_MAX;
    w->tasks[w->n_tasks++] = t;
    w->alive++;
    make_runnable(w, t);
    return t;
}

/* --- readiness ------------------------------------------------------------- */

static uint32_t to_epoll(short events)
{
    uint32_t e = 0;
    if (events & POLLIN)
        e |= EPOLLIN;
    if (events & POLLOUT)
        e |= EPOLLOUT;
    if (events & POLLPRI)
        e |= EPOLLPRI;
    if (events & POLLRDHUP)
        e |= EPOLLRDHUP;
    return e;
}

static short from_epoll(uint32_t e, short asked)
{
    short r = 0;
    if (e & EPOLLIN)
        r |= POLLIN;
    if (e & EPOLLOUT)
        r |= POLLOUT;
    if (e & EPOLLPRI)
        r |= POLLPRI;
    if (e & EPOLLRDHUP)
        r |= POLLRDHUP;
    r &= asked;
    if (e & EPOLLERR)
        r |= POLLERR; /* as poll(2), whether asked or not */
    if (e & EPOLLHUP)
        r |= POLLHUP;
    return r;
}

/* The first entry of fds[0..i] on fds[i]'s fd. */
static size_t first_of(const struct pollfd *fds, size_t i)
{
    size_t j = 0;
    while (fds[j].fd != fds[i].fd)
        j++;
    return j;
}

/* Arm fds[i]'s fd for one event of t's, for what every entry of the array
 * on that fd asks (one arming per fd: a second epoll_ctl would replace the
 * first's events). -1: it cannot be watched (closed, or not pollable):
 * fds[i].revents says so, as poll(2) would. */
static int arm(struct worker *w, struct task *t, struct pollfd *fds, size_t i, size_t n)
{
    struct pollfd *p = &fds[i];
    uint32_t want = 0;
    for (size_t j = i; j < n; j++)
        if (fds[j].fd == p->fd)
            want |= to_epoll(fds[j].events);
    struct epoll_event ev = {.events = want | EPOLLONESHOT,
                             .data.u64 = (uint64_t)t->idx << 32 | (uint32_t)p->fd};
    if (epoll_ctl(w->epfd, EPOLL_CTL_MOD, p->fd, &ev) == 0)
        return 0;
    /* first wait on this fd here, or its number now names a new socket */
    if (errno == ENOENT && epoll_ctl(w->epfd, EPOLL_CTL_ADD, p->fd, &ev) == 0)
        return 0;
    p->revents = errno == EPERM ? (short)(p->events & (POLLIN | POLLOUT)) : POLLNVAL;
    return -1;
}

/* Is the calling task the only one with anything to do? Then nobody else
 * needs the loop, and it may block the thread itself: a worker of one
 * client saves the two system calls a wait costs on the loop (its tasks
 * parked at the start line are woken by this thread alone, later). */
static bool alone(const struct worker *w)
{
    return w->alive - w->parked == 1;
}

/* Arm every fd of fds[0..n) for t: how many entries are answered already
 * (an fd that cannot be watched, or one that shares a refused fd). */
static int arm_all(struct worker *w, struct task *t, struct pollfd *fds, size_t n)
{
    int ready = 0;
    for (size_t i = 0; i < n; i++)
        fds[i].revents = 0;
    for (size_t i = 0; i < n; i++) {
        if (fds[i].fd < 0)
            continue;
        size_t j = first_of(fds, i);
        if (j < i) { /* armed with the first, or refused with it */
            if (fds[j].revents) {
                fds[i].revents = fds[j].revents == POLLNVAL
                                     ? POLLNVAL
                                     : (short)(fds[i].events & (POLLIN | POLLOUT));
                ready++;
            }
            continue;
        }
        if (arm(w, t, fds, i, n) < 0)
            ready++;
    }
    return ready;
}

/* Park t in its wait until want entries are ready (0: any), or the
 * deadline; how many are. */
static int park_wait(struct worker *w, struct task *t, struct pollfd *fds, size_t n,
                     uint64_t deadline_ns, int ready, int want)
{
    t->fds = fds;
    t->n_fds = n;
    t->ready = ready;
    t->want = want;
    t->cancel = NULL;
    t->deadline_ns = deadline_ns;
    t->state = TASK_WAITING;
    if (deadline_ns != LOCK_FOREVER)
        heap_push(w, t);
    coro_yield(&w->home);
    t->fds = NULL;
    t->n_fds = 0;
    t->want = 0;
    return t->ready;
}

/* A deadline already passed is armed all the same: the loop collects every
 * socket ready before it wakes anyone by deadline, so the wait only looks,
 * as poll(2) with a timeout of 0 would. */
static int loop_wait(void *ctx, struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    struct worker *w = ctx;
    if (alone(w))
        return lock_blocking_seam.wait(NULL, fds, n, deadline_ns);
    struct task *t = worker_self();
    int ready = arm_all(w, t, fds, n);
    return ready ? ready : park_wait(w, t, fds, n, deadline_ns, 0, 0);
}

static bool repeats_an_fd(const struct pollfd *fds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fds[i].fd >= 0 && first_of(fds, i) < i)
            return true;
    return false;
}

/* Every socket armed once, the task woken once all have answered. An fd
 * given twice (one arming answers for both entries, and may answer one
 * only) and the lone task take lock.h's way: wait, again, on what has not
 * answered. */
static int loop_wait_all(void *ctx, struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    struct worker *w = ctx;
    if (alone(w) || repeats_an_fd(fds, n)) {
        struct lock_seam each = {.wait = loop_wait, .ctx = w};
        return lock_seam_wait_all(&each, fds, n, deadline_ns);
    }
    struct task *t = worker_self();
    int want = 0;
    for (size_t i = 0; i < n; i++)
        want += fds[i].fd >= 0;
    int ready = arm_all(w, t, fds, n);
    return ready >= want ? ready : park_wait(w, t, fds, n, deadline_ns, ready, want);
}

static void loop_sleep(void *ctx, uint64_t until_ns, const atomic_int *cancel)
{
    struct worker *w = ctx;
    if (alone(w)) {
        lock_blocking_seam.sleep(NULL, until_ns, cancel);
        return;
    }
    struct task *t = worker_self();
    for (;;) {
        if (cancel && atomic_load_explicit(cancel, memory_order_relaxed))
            return;
        uint64_t now = lock_now_ns();
        if (now >= until_ns)
            return;
        t->fds = NULL;
        t->n_fds = 0;
        t->cancel = cancel;
        t->deadline_ns =
            cancel && until_ns - now > CANCEL_LOOK_NS ? now + CANCEL_LOOK_NS : until_ns;
        t->state = TASK_WAITING;
        heap_push(w, t);
        coro_yield(&w->home);
        t->cancel = NULL;
    }
}

int worker_wait(struct worker *w, struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    return loop_wait(w, fds, n, deadline_ns);
}

int worker_wait_all(struct worker *w, struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    return loop_wait_all(w, fds, n, deadline_ns);
}

void worker_sleep(struct worker *w, uint64_t until_ns, const atomic_int *cancel)
{
    loop_sleep(w, until_ns, cancel);
}

struct lock_seam worker_seam(struct worker *w)
{
    return (struct lock_seam){
        .wait = loop_wait, .sleep = loop_sleep, .wait_all = loop_wait_all, .ctx = w};
}

void worker_park(struct worker *w)
{
    struct task *t = worker_self();
    t->state = TASK_PARKED;
    w->parked++;
    coro_yield(&w->home);
}

void worker_unpark(struct worker *w, struct task *t)
{
    if (t->state != TASK_PARKED)
        return;
    w->parked--;
    make_runnable(w, t);
}

void worker_poke(struct worker *w)
{
    uint64_t one = 1;
    ssize_t rc = write(w->pokefd, &one, sizeof(one)); /* async-signal-safe */
    (void)rc; /* a full counter has already woken the worker */
}

/* --- the loop -------------------------------------------------------------- */

/* An event for task idx's fd: it wakes the task when the task waits on that
 * fd now, for every entry of its array on the fd that asked for what came;
 * an event left from a wait that ended otherwise is dropped. */
static void deliver(struct worker *w, uint64_t tag, uint32_t events)
{
    uint32_t idx = (uint32_t)(tag >> 32);
    int fd = (int)(uint32_t)tag;
    if (idx >= w->n_tasks)
        return;
    struct task *t = w->tasks[idx];
    if (t->state != TASK_WAITING && t->state != TASK_RUNNABLE)
        return;
    int got = 0;
    for (size_t i = 0; i < t->n_fds; i++) {
        struct pollfd *p = &t->fds[i];
        if (p->fd != fd || p->revents != 0)
            continue;
        short r = from_epoll(events, p->events);
        if (r == 0)
            continue;
        p->revents = r;
        got++;
    }
    t->ready += got;
    if (got && t->state == TASK_WAITING && t->ready >= t->want)
        make_runnable(w, t);
}

static void cancel_sleepers(struct worker *w)
{
    uint64_t v;
    while (read(w->pokefd, &v, sizeof(v)) > 0)
        ;
    for (uint32_t i = 0; i < w->n_tasks; i++) {
        struct task *t = w->tasks[i];
        if (t->state == TASK_WAITING && t->cancel &&
            atomic_load_explicit(t->cancel, memory_order_relaxed))
            make_runnable(w, t);
    }
}

static void expire(struct worker *w, uint64_t now)
{
    while (w->heap_n > 0 && w->heap[0]->deadline_ns <= now)
        make_runnable(w, w->heap[0]); /* removes it from the heap */
}

static void run_queue(struct worker *w)
{
    while (w->run_head) {
        struct task *t = w->run_head;
        w->run_head = t->next;
        if (w->run_head == NULL)
            w->run_tail = NULL;
        t->next = NULL;
        coro_resume(&w->home, &t->co);
        if (t->co.done) {
            t->state = TASK_DONE;
            w->alive--;
        }
    }
}

/* epoll_pwait2 (Linux 5.11) waits to the nanosecond; where it is missing
 * (an older kernel, valgrind 3.19) epoll_wait's milliseconds, rounded up,
 * so that a deadline is never met early. */
static int wait_events(struct worker *w, struct epoll_event *evs, uint64_t left_ns)
{
    static atomic_int no_pwait2;
    if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
        struct timespec ts = {.tv_sec = (time_t)(left_ns / 1000000000ULL),
                              .tv_nsec = (long)(left_ns % 1000000000ULL)};
        /* the system call itself: glibc's wrapper is a cancellation point,
         * which costs some 90 instructions a wait, and nothing here is
         * ever cancelled */
        long n = syscall(SYS_epoll_pwait2, w->epfd, evs, EVENTS_PER_WAIT,
                         left_ns == UINT64_MAX ? NULL : &ts, NULL, 0);
        if (n >= 0 || errno != ENOSYS)
            return (int)n;
        atomic_store_explicit(&no_pwait2, 1, memory_order_relaxed);
    }
    uint64_t ms = (left_ns + 999999) / 1000000;
    return (int)syscall(SYS_epoll_wait, w->epfd, evs, EVENTS_PER_WAIT,
                        left_ns == UINT64_MAX ? -1
                        : ms > INT_MAX        ? INT_MAX
                                              : (int)ms);
}

/* Every socket ready is collected before anyone is woken by a deadline,
 * as poll(2) would report a socket that became ready before its deadline
 * (or a look's): one epoll_wait hands back EVENTS_PER_WAIT at most, and a
 * task whose event came after those would otherwise wake with nothing.
 * The epoll wait blocks only when nobody is runnable and no deadline due;
 * the clock is read again after it only when it may have blocked. */
#define DRAIN_ROUNDS 4096 /* each round takes sockets that fire once per arming */

static void poll_events(struct worker *w)
{
    struct epoll_event evs[EVENTS_PER_WAIT];
    uint64_t left = UINT64_MAX, now = 0;
    if (w->heap_n > 0) {
        uint64_t due = w->heap[0]->deadline_ns;
        now = lock_now_ns();
        left = due > now ? due - now : 0;
    }
    int n = wait_events(w, evs, left);
    for (int round = 0;; round++) {
        for (int i = 0; i < n; i++) {
            if (evs[i].data.u64 == POKE_TAG)
                cancel_sleepers(w);
            else
                deliver(w, evs[i].data.u64, evs[i].events);
        }
        if (n < EVENTS_PER_WAIT || round == DRAIN_ROUNDS)
            break;
        n = wait_events(w, evs, 0);
    }
    if (w->heap_n > 0)
        expire(w, left > 0 ? lock_now_ns() : now);
}

uint32_t worker_run(struct worker *w)
{
    running_worker = w;
    coro_home_init(&w->home);
    for (;;) {
        run_queue(w);
        if (w->alive == w->parked)
            break;
        poll_events(w);
    }
    running_worker = NULL;
    return w->parked;
}
