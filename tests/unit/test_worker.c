/* test_worker.c - the worker's waits (sim/engine/worker.c) held to
 * poll(2)'s answers, on socketpairs the test makes: the one-shot epoll
 * scheme (a socket armed by an earlier wait, a number closed and reused,
 * hang-ups and errors, negative and closed fds, the same fd twice in one
 * array), the deadline heap (order, ties, removal from the middle), a
 * passed deadline that only looks, a cancellable sleep woken by a poke,
 * and the lone task that waits without the loop.
 *
 * Every wait has a deadline of a few seconds at most, so a broken worker
 * fails a test instead of hanging it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "algorithms/lock.h"
#include "sim/engine/worker.h"

#define MS      1000000ULL
#define LONG_NS (3000ULL * MS) /* a deadline no test should reach */
#define CROWD   300            /* more sockets ready at once than one epoll_wait returns */

static void pair(int sv[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
}

static void put(int fd)
{
    assert_int_equal(write(fd, "x", 1), 1);
}

/* Run the tasks of w (spawned by the caller) to their end. */
static void run_all(struct worker *w)
{
    assert_int_equal(worker_run(w), 0);
    worker_free(w);
}

/* --- one task's wait against poll(2) ------------------------------------ */

struct one {
    struct pollfd fds[4];
    size_t n;
    uint64_t deadline;
    int rc;
    uint64_t took_ns, ended_ns;
};

static void one_wait(void *arg)
{
    struct one *o = arg;
    struct worker *w = worker_self()->w;
    uint64_t t = lock_now_ns();
    o->rc = worker_wait(w, o->fds, o->n, o->deadline);
    o->ended_ns = lock_now_ns();
    o->took_ns = o->ended_ns - t;
}

/* A task that only sleeps a while: beside it a waiter is not alone on
 * its worker, so it waits on the loop (alone, it would block the thread
 * in ppoll, the seam's old path). */
static void companion(void *arg)
{
    (void)arg;
    struct worker *w = worker_self()->w;
    worker_sleep(w, lock_now_ns() + 200 * MS, NULL);
}

/* o's wait on the worker's loop, and poll(2) on a copy of its array just
 * after: the same count and the same revents (the states here do not
 * change between the two). */
static void wait_as_poll(struct one *o)
{
    struct worker *w = worker_new(2);
    assert_non_null(w);
    assert_non_null(worker_spawn(w, companion, NULL, true));
    assert_non_null(worker_spawn(w, one_wait, o, true));
    run_all(w);
    struct pollfd p[4];
    memcpy(p, o->fds, sizeof(p));
    int want = poll(p, o->n, 0);
    assert_int_equal(o->rc, want);
    for (size_t i = 0; i < o->n; i++)
        assert_int_equal(o->fds[i].revents, p[i].revents);
}

static void readable_socket_wakes_its_waiter(void **state)
{
    (void)state;
    int sv[2];
    pair(sv);
    put(sv[1]);
    struct one o = {.fds = {{.fd = sv[0], .events = POLLIN}}, .n = 1};
    o.deadline = lock_now_ns() + LONG_NS;
    wait_as_poll(&o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.fds[0].revents, POLLIN);
    assert_true(o.took_ns < LONG_NS);
    close(sv[0]);
    close(sv[1]);
}

static void deadline_ends_a_wait_with_nothing_ready(void **state)
{
    (void)state;
    int sv[2];
    pair(sv);
    struct one o = {.fds = {{.fd = sv[0], .events = POLLIN}}, .n = 1};
    o.deadline = lock_now_ns() + 30 * MS;
    wait_as_poll(&o);
    assert_int_equal(o.rc, 0);
    assert_true(o.ended_ns >= o.deadline); /* not before it */
    close(sv[0]);
    close(sv[1]);
}

/* The same fd twice, once for reading and once for writing: poll answers
 * for each entry. One arming per fd must carry both, and an event must
 * reach every entry that asked for it. */
static void same_fd_twice_in_one_array(void **state)
{
    (void)state;
    int sv[2];
    pair(sv);
    /* writable, nothing to read: only the second entry is ready */
    struct one o = {.fds = {{.fd = sv[0], .events = POLLIN}, {.fd = sv[0], .events = POLLOUT}},
                    .n = 2};
    o.deadline = lock_now_ns() + LONG_NS;
    wait_as_poll(&o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.fds[1].revents, POLLOUT);
    assert_true(o.took_ns < LONG_NS);
    /* readable and writable: both */
    put(sv[1]);
    struct one b = {.fds = {{.fd = sv[0], .events = POLLOUT}, {.fd = sv[0], .events = POLLIN}},
                    .n = 2};
    b.deadline = lock_now_ns() + LONG_NS;
    wait_as_poll(&b);
    assert_int_equal(b.rc, 2);
    assert_int_equal(b.fds[0].revents, POLLOUT);
    assert_int_equal(b.fds[1].revents, POLLIN);
    close(sv[0]);
    close(sv[1]);
}

static void negative_fds_are_skipped(void **state)
{
    (void)state;
    int sv[2];
    pair(sv);
    put(sv[1]);
    struct one o = {.fds = {{.fd = -1, .events = POLLIN}, {.fd = sv[0], .events = POLLIN}}, .n = 2};
    o.deadline = lock_now_ns() + LONG_NS;
    wait_as_poll(&o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.fds[0].revents, 0);
    assert_int_equal(o.fds[1].revents, POLLIN);
    /* only negative ones: the deadline ends it */
    struct one none = {.fds = {{.fd = -1, .events = POLLIN}}, .n = 1};
    none.deadline = lock_now_ns() + 20 * MS;
    wait_as_poll(&none);
    assert_int_equal(none.rc, 0);
    close(sv[0]);
    close(sv[1]);
}

static void closed_fd_is_pollnval(void **state)
{
    (void)state;
    int sv[2];
    pair(sv);
    /* a number far above the worker's own descriptors, which would
     * otherwise take the one just closed */
    int gone = fcntl(sv[0], F_DUPFD_CLOEXEC, 900);
    assert_true(gone >= 900);
    close(gone);
    close(sv[0]);
    struct one o = {.fds = {{.fd = gone, .events = POLLIN}}, .n = 1};
    o.deadline = lock_now_ns() + LONG_NS;
    wait_as_poll(&o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.fds[0].revents, POLLNVAL);
    close(sv[1]);
}

static void hangup_and_rdhup_as_poll_says(void **state)
{
    (void)state;
    int sv[2];
    /* the peer shut its writing side: POLLRDHUP, asked for */
    pair(sv);
    shutdown(sv[1], SHUT_WR);
    struct one r = {.fds = {{.fd = sv[0], .events = POLLRDHUP}}, .n = 1};
    r.deadline = lock_now_ns() + LONG_NS;
    wait_as_poll(&r);
    assert_int_equal(r.rc, 1);
    assert_int_equal(r.fds[0].revents, POLLRDHUP);
    close(sv[0]);
    close(sv[1]);
    /* the peer closed: POLLHUP comes unasked, with what was asked */
    pair(sv);
    close(sv[1]);
    struct one h = {.fds = {{.fd = sv[0], .events = POLLOUT}}, .n = 1};
    h.deadline = lock_now_ns() + LONG_NS;
    wait_as_poll(&h);
    assert_int_equal(h.rc, 1);
    assert_true(h.fds[0].revents & POLLHUP);
    close(sv[0]);
}

/* --- several tasks -------------------------------------------------------- */

/* A socket armed by a wait that ended on its deadline fires later, while
 * its task waits on another: it must not end that wait. */
struct stale {
    int a[2], c[2];
    int rc1, rc2;
    short rev2;
    uint64_t second_took;
};

static void stale_waiter(void *arg)
{
    struct stale *s = arg;
    struct worker *w = worker_self()->w;
    struct pollfd p = {.fd = s->a[0], .events = POLLIN};
    s->rc1 = worker_wait(w, &p, 1, lock_now_ns() + 10 * MS);
    struct pollfd q = {.fd = s->c[0], .events = POLLIN};
    uint64_t t = lock_now_ns();
    s->rc2 = worker_wait(w, &q, 1, t + LONG_NS);
    s->second_took = lock_now_ns() - t;
    s->rev2 = q.revents;
}

static void stale_writer(void *arg)
{
    struct stale *s = arg;
    struct worker *w = worker_self()->w;
    worker_sleep(w, lock_now_ns() + 20 * MS, NULL); /* the first wait is over */
    put(s->a[1]);                                   /* fires the old arming */
    worker_sleep(w, lock_now_ns() + 50 * MS, NULL);
    put(s->c[1]);
}

static void old_arming_does_not_end_a_later_wait(void **state)
{
    (void)state;
    struct stale s = {0};
    pair(s.a);
    pair(s.c);
    struct worker *w = worker_new(2);
    assert_non_null(worker_spawn(w, stale_waiter, &s, true));
    assert_non_null(worker_spawn(w, stale_writer, &s, true));
    run_all(w);
    assert_int_equal(s.rc1, 0);
    assert_int_equal(s.rc2, 1);
    assert_int_equal(s.rev2, POLLIN);
    assert_true(s.second_took >= 40 * MS); /* not woken by a's byte, 20 ms before */
    close(s.a[0]);
    close(s.a[1]);
    close(s.c[0]);
    close(s.c[1]);
}

/* A number closed by one task (its socket still armed) and taken by
 * another's new socket: the new socket's waits are the other task's. */
struct reuse {
    int first[2], second[2];
    int other[2];
    int rc_old, rc_new;
    short rev_new;
};

static void reuse_first(void *arg)
{
    struct reuse *r = arg;
    struct worker *w = worker_self()->w;
    struct pollfd p = {.fd = r->first[0], .events = POLLIN};
    worker_wait(w, &p, 1, lock_now_ns() + 5 * MS); /* leaves it armed for this task */
    close(r->first[0]);
    close(r->first[1]);
    /* and waits on something else meanwhile */
    struct pollfd q = {.fd = r->other[0], .events = POLLIN};
    r->rc_old = worker_wait(w, &q, 1, lock_now_ns() + 150 * MS);
}

static void reuse_second(void *arg)
{
    struct reuse *r = arg;
    struct worker *w = worker_self()->w;
    worker_sleep(w, lock_now_ns() + 20 * MS, NULL);
    pair(r->second); /* the two lowest free numbers: the first task's */
    put(r->second[1]);
    struct pollfd p = {.fd = r->second[0], .events = POLLIN};
    r->rc_new = worker_wait(w, &p, 1, lock_now_ns() + LONG_NS);
    r->rev_new = p.revents;
}

static void reused_number_belongs_to_its_new_owner(void **state)
{
    (void)state;
    struct reuse r = {0};
    pair(r.other);
    pair(r.first);
    int lo = r.first[0] < r.first[1] ? r.first[0] : r.first[1];
    struct worker *w = worker_new(2);
    assert_non_null(worker_spawn(w, reuse_first, &r, true));
    assert_non_null(worker_spawn(w, reuse_second, &r, true));
    run_all(w);
    assert_true(r.second[0] == lo || r.second[1] == lo); /* the number was reused */
    assert_int_equal(r.rc_new, 1);
    assert_int_equal(r.rev_new, POLLIN);
    assert_int_equal(r.rc_old, 0); /* the first task's other wait ended on its deadline */
    close(r.second[0]);
    close(r.second[1]);
    close(r.other[0]);
    close(r.other[1]);
}

/* More sockets ready at once than one epoll_wait hands back, and one task
 * whose deadline is due by the time the worker looks: poll(2) would tell it
 * its socket is ready, whether its deadline had passed as it called (a look)
 * or passed while the worker was busy with the others. */
struct crowd {
    int sv[CROWD][2];
    int late[2];
    int rc[CROWD];
    int late_rc;
    short late_rev;
    bool look; /* the late task's deadline has passed as it calls */
    uint64_t late_deadline;
};

struct crowd_arg {
    struct crowd *c;
    int i;
};

static void crowd_waiter(void *arg)
{
    struct crowd_arg *a = arg;
    struct worker *w = worker_self()->w;
    struct pollfd p = {.fd = a->c->sv[a->i][0], .events = POLLIN};
    a->c->rc[a->i] = worker_wait(w, &p, 1, lock_now_ns() + LONG_NS);
}

static void late_waiter(void *arg)
{
    struct crowd *c = arg;
    struct worker *w = worker_self()->w;
    struct pollfd p = {.fd = c->late[0], .events = POLLIN};
    c->late_deadline = c->look ? lock_now_ns() - 1 : lock_now_ns() + 2 * MS;
    c->late_rc = worker_wait(w, &p, 1, c->late_deadline);
    c->late_rev = p.revents;
}

/* Makes every socket ready, the late task's last, then keeps the worker
 * busy past the late task's deadline. */
static void crowd_writer(void *arg)
{
    struct crowd *c = arg;
    for (int i = 0; i < CROWD; i++)
        put(c->sv[i][1]);
    put(c->late[1]);
    while (lock_now_ns() <= c->late_deadline + MS)
        ;
}

static void crowd_run(bool look)
{
    struct crowd *c = calloc(1, sizeof(*c));
    struct crowd_arg *args = calloc(CROWD, sizeof(*args));
    assert_non_null(c);
    assert_non_null(args);
    c->look = look;
    for (int i = 0; i < CROWD; i++)
        pair(c->sv[i]);
    pair(c->late);
    struct worker *w = worker_new(CROWD + 2);
    for (int i = 0; i < CROWD; i++) {
        args[i] = (struct crowd_arg){.c = c, .i = i};
        assert_non_null(worker_spawn(w, crowd_waiter, &args[i], false));
    }
    if (look) { /* the socket is ready before the look */
        assert_non_null(worker_spawn(w, crowd_writer, c, false));
        assert_non_null(worker_spawn(w, late_waiter, c, false));
    } else { /* it becomes ready before the deadline, the worker busy */
        assert_non_null(worker_spawn(w, late_waiter, c, false));
        assert_non_null(worker_spawn(w, crowd_writer, c, false));
    }
    run_all(w);
    for (int i = 0; i < CROWD; i++)
        assert_int_equal(c->rc[i], 1);
    assert_int_equal(c->late_rc, 1);
    assert_int_equal(c->late_rev, POLLIN);
    for (int i = 0; i < CROWD; i++) {
        close(c->sv[i][0]);
        close(c->sv[i][1]);
    }
    close(c->late[0]);
    close(c->late[1]);
    free(args);
    free(c);
}

static void passed_deadline_looks_past_a_crowd(void **state)
{
    (void)state;
    crowd_run(true);
}

static void ready_before_deadline_beats_it_in_a_crowd(void **state)
{
    (void)state;
    crowd_run(false);
}

/* Sleepers wake in the order of their deadlines, ties included, while some
 * leave the heap from its middle (woken by a socket first). */
#define SLEEPERS 40

struct order {
    uint64_t base;
    uint64_t woke[SLEEPERS + 1]; /* the deadline of each wake, in order */
    int n_woke;
    int sv[2];
    int fd_rc;
};

struct order_arg {
    struct order *o;
    int i;
};

static uint64_t order_deadline(const struct order *o, int i)
{
    return o->base + (uint64_t)((i * 7) % 10) * 4 * MS + 20 * MS; /* four of each */
}

static void order_sleeper(void *arg)
{
    struct order_arg *a = arg;
    struct worker *w = worker_self()->w;
    uint64_t d = order_deadline(a->o, a->i);
    worker_sleep(w, d, NULL);
    a->o->woke[a->o->n_woke++] = d;
}

/* Waits on a socket with the latest deadline of all; woken by it early. */
static void order_fd_waiter(void *arg)
{
    struct order *o = arg;
    struct worker *w = worker_self()->w;
    struct pollfd p = {.fd = o->sv[0], .events = POLLIN};
    o->fd_rc = worker_wait(w, &p, 1, o->base + 60 * MS);
}

static void order_poker(void *arg)
{
    struct order *o = arg;
    struct worker *w = worker_self()->w;
    worker_sleep(w, o->base + 10 * MS, NULL);
    put(o->sv[1]);
}

static void deadlines_wake_in_order(void **state)
{
    (void)state;
    struct order o = {0};
    struct order_arg args[SLEEPERS];
    pair(o.sv);
    struct worker *w = worker_new(SLEEPERS + 2);
    for (int i = 0; i < SLEEPERS; i++) {
        if (i == SLEEPERS / 2) /* in the middle of the heap */
            assert_non_null(worker_spawn(w, order_fd_waiter, &o, true));
        args[i] = (struct order_arg){.o = &o, .i = i};
        assert_non_null(worker_spawn(w, order_sleeper, &args[i], true));
    }
    assert_non_null(worker_spawn(w, order_poker, &o, true));
    /* read by the tasks as they run: no deadline has passed as it is set
     * (spawning is slow under the sanitizers) */
    o.base = lock_now_ns();
    run_all(w);
    assert_int_equal(o.fd_rc, 1);
    assert_int_equal(o.n_woke, SLEEPERS);
    for (int i = 1; i < SLEEPERS; i++)
        assert_true(o.woke[i - 1] <= o.woke[i]);
    close(o.sv[0]);
    close(o.sv[1]);
}

/* A cancellable sleep: the flag set from another thread and the worker
 * poked ends it long before its time. */
struct cancel {
    atomic_int flag;
    struct worker *w;
    uint64_t took;
};

static void cancel_sleeper(void *arg)
{
    struct cancel *c = arg;
    uint64_t t = lock_now_ns();
    worker_sleep(c->w, t + 10000 * MS, &c->flag);
    c->took = lock_now_ns() - t;
}

static void *cancel_setter(void *arg)
{
    struct cancel *c = arg;
    lock_sleep_ms(30);
    atomic_store(&c->flag, 1);
    worker_poke(c->w);
    return NULL;
}

static void poke_ends_a_cancellable_sleep(void **state)
{
    (void)state;
    struct cancel c = {0};
    atomic_init(&c.flag, 0);
    c.w = worker_new(2);
    /* beside a companion, so the sleep is the loop's and not the lone
     * task's sliced blocking one */
    assert_non_null(worker_spawn(c.w, companion, NULL, true));
    assert_non_null(worker_spawn(c.w, cancel_sleeper, &c, true));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, cancel_setter, &c), 0);
    assert_int_equal(worker_run(c.w), 0);
    pthread_join(t, NULL); /* its poke is over before the worker goes */
    worker_free(c.w);
    assert_true(c.took >= 30 * MS - 1000);
    assert_true(c.took < 200 * MS); /* the poke, not the look every 250 ms */
}

/* The runner runs a worker twice (to the start line, then the run), its
 * clients parked between. Under AddressSanitizer the thread's stack must
 * still be known after the second run: a longjmp there (ASan then looks at
 * the stack's bounds) says nothing on stderr. Elsewhere it checks that a
 * parked task resumes and ends. */
static struct worker *parked_w;
static int parked_steps;

static void parking_task(void *arg)
{
    (void)arg;
    parked_steps++;
    worker_park(parked_w);
    parked_steps++;
}

static void stack_known_after_a_second_run(void **state)
{
    (void)state;
    parked_w = worker_new(1);
    struct task *t = worker_spawn(parked_w, parking_task, NULL, true);
    assert_non_null(t);
    assert_int_equal(worker_run(parked_w), 1);
    assert_int_equal(parked_steps, 1);
    worker_unpark(parked_w, t);
    char path[] = "/tmp/test_worker_stderr_XXXXXX";
    int out = mkstemp(path);
    assert_true(out >= 0);
    unlink(path);
    int saved = dup(2);
    dup2(out, 2);
    assert_int_equal(worker_run(parked_w), 0);
    jmp_buf jb;
    if (setjmp(jb) == 0)
        longjmp(jb, 1);
    dup2(saved, 2);
    close(saved);
    char said[512] = {0};
    assert_true(pread(out, said, sizeof(said) - 1, 0) >= 0);
    close(out);
    assert_string_equal(said, "");
    assert_int_equal(parked_steps, 2);
    worker_free(parked_w);
}

/* --- alone on its worker -------------------------------------------------- */

/* The worker's epoll descriptor: the process's one eventpoll (the test
 * makes no other), or -1. */
static int epoll_fd(void)
{
    char link[64], to[64];
    for (int fd = 0; fd < 1024; fd++) {
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, to, sizeof(to) - 1);
        if (n < 0)
            continue;
        to[n] = '\0';
        if (strcmp(to, "anon_inode:[eventpoll]") == 0)
            return fd;
    }
    return -1;
}

/* Is fd registered with epoll descriptor ep (its fdinfo's "tfd:" lines)? */
static bool registered(int ep, int fd)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ep);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    bool found = false;
    int t;
    while (!found && fgets(line, sizeof(line), f))
        found = sscanf(line, "tfd: %d", &t) == 1 && t == fd;
    fclose(f);
    return found;
}

struct lone {
    int fd;
    bool armed;
};

/* Waits 10 ms on fd (nothing comes), then looks whether the wait went
 * through the loop: the loop's one-shot arming stays registered. */
static void lone_wait(void *arg)
{
    struct lone *l = arg;
    struct worker *w = worker_self()->w;
    struct pollfd p = {.fd = l->fd, .events = POLLIN};
    assert_int_equal(worker_wait(w, &p, 1, lock_now_ns() + 10 * MS), 0);
    l->armed = registered(epoll_fd(), l->fd);
}

/* The only task with anything to do blocks its thread in ppoll: nobody
 * else needs the loop, and the wait saves the loop's two system calls
 * (the runner's one client of a worker gets this, with no flag of its
 * own). Beside a companion, the same wait arms the loop. */
static void lone_task_waits_without_the_loop(void **state)
{
    (void)state;
    int sv[2];
    pair(sv);
    struct lone l = {.fd = sv[0]};
    struct worker *w = worker_new(1);
    assert_non_null(w);
    assert_true(epoll_fd() >= 0);
    assert_non_null(worker_spawn(w, lone_wait, &l, true));
    run_all(w);
    assert_false(l.armed);

    l.armed = false;
    w = worker_new(2);
    assert_non_null(w);
    assert_non_null(worker_spawn(w, companion, NULL, true));
    assert_non_null(worker_spawn(w, lone_wait, &l, true));
    run_all(w);
    assert_true(l.armed);
    close(sv[0]);
    close(sv[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(readable_socket_wakes_its_waiter),
        cmocka_unit_test(deadline_ends_a_wait_with_nothing_ready),
        cmocka_unit_test(same_fd_twice_in_one_array),
        cmocka_unit_test(negative_fds_are_skipped),
        cmocka_unit_test(closed_fd_is_pollnval),
        cmocka_unit_test(hangup_and_rdhup_as_poll_says),
        cmocka_unit_test(old_arming_does_not_end_a_later_wait),
        cmocka_unit_test(reused_number_belongs_to_its_new_owner),
        cmocka_unit_test(passed_deadline_looks_past_a_crowd),
        cmocka_unit_test(ready_before_deadline_beats_it_in_a_crowd),
        cmocka_unit_test(deadlines_wake_in_order),
        cmocka_unit_test(poke_ends_a_cancellable_sleep),
        cmocka_unit_test(stack_known_after_a_second_run),
        cmocka_unit_test(lone_task_waits_without_the_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
