/* test_wait_all.c - the seam's wait_all (algorithms/lock.h): the worker's
 * (sim/engine/worker.c), which wakes its task once every socket of a wait
 * has answered, and lock.h's for a seam without one, which waits again on
 * what has not; each held to the answers poll(2) gives, on socketpairs the
 * test makes. Every wait has a deadline, so a broken wait fails a test
 * instead of hanging it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "algorithms/lock.h"
#include "sim/engine/worker.h"

#define MS      1000000ULL
#define LONG_NS (3000ULL * MS) /* a deadline no test should reach */

static void pair(int sv[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
}

static void put(int fd)
{
    assert_int_equal(write(fd, "x", 1), 1);
}

/* Beside it a waiter is not alone on its worker: it waits on the loop. */
static void companion(void *arg)
{
    (void)arg;
    struct worker *w = worker_self()->w;
    worker_sleep(w, lock_now_ns() + 200 * MS, NULL);
}

static void run_all(struct worker *w)
{
    assert_int_equal(worker_run(w), 0);
    worker_free(w);
}

struct all_of {
    int sv[3][2];
    struct pollfd fds[3];
    uint64_t deadline;
    int rc;
    uint64_t began_ns, ended_ns;
};

static void all_wait(void *arg)
{
    struct all_of *a = arg;
    struct worker *w = worker_self()->w;
    a->began_ns = lock_now_ns();
    a->rc = worker_wait_all(w, a->fds, 3, a->deadline);
    a->ended_ns = lock_now_ns();
}

/* Answers the three sockets 20 ms apart, from another task of the worker. */
static void answer_slowly(void *arg)
{
    struct all_of *a = arg;
    struct worker *w = worker_self()->w;
    for (int i = 0; i < 3; i++) {
        worker_sleep(w, lock_now_ns() + 20 * MS, NULL);
        put(a->sv[i][1]);
    }
}

static void all_of_open(struct all_of *a, uint64_t deadline_in_ns)
{
    for (int i = 0; i < 3; i++) {
        pair(a->sv[i]);
        a->fds[i] = (struct pollfd){.fd = a->sv[i][0], .events = POLLIN};
    }
    a->deadline = lock_now_ns() + deadline_in_ns;
}

static void all_of_close(struct all_of *a)
{
    for (int i = 0; i < 3; i++) {
        close(a->sv[i][0]);
        close(a->sv[i][1]);
    }
}

/* The waiter wakes once, after the last answer (60 ms in), not at the
 * first, and finds all three ready. */
static void wait_all_wakes_once_every_socket_answered(void **state)
{
    (void)state;
    struct all_of a = {.rc = 0};
    all_of_open(&a, LONG_NS);
    struct worker *w = worker_new(2);
    assert_non_null(w);
    assert_non_null(worker_spawn(w, all_wait, &a, true));
    assert_non_null(worker_spawn(w, answer_slowly, &a, true));
    run_all(w);
    assert_int_equal(a.rc, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(a.fds[i].revents, POLLIN);
    assert_true(a.ended_ns - a.began_ns >= 60 * MS);
    assert_true(a.ended_ns < a.deadline);
    all_of_close(&a);
}

/* At its deadline it gives what answered: one of three. */
static void wait_all_at_its_deadline_gives_what_answered(void **state)
{
    (void)state;
    struct all_of a = {.rc = 0};
    all_of_open(&a, 30 * MS);
    put(a.sv[1][1]);
    struct worker *w = worker_new(2);
    assert_non_null(w);
    assert_non_null(worker_spawn(w, companion, NULL, true));
    assert_non_null(worker_spawn(w, all_wait, &a, true));
    run_all(w);
    assert_int_equal(a.rc, 1);
    assert_int_equal(a.fds[0].revents, 0);
    assert_int_equal(a.fds[1].revents, POLLIN);
    assert_int_equal(a.fds[2].revents, 0);
    assert_true(a.ended_ns >= a.deadline);
    all_of_close(&a);
}

/* lock.h's way for a seam without wait_all (here the blocking one): the
 * same answers, by waiting again on what has not answered. */
static void wait_all_through_a_plain_wait(void **state)
{
    (void)state;
    struct all_of a = {.rc = 0};
    all_of_open(&a, 30 * MS);
    put(a.sv[2][1]);
    assert_int_equal(lock_seam_wait_all(NULL, a.fds, 3, a.deadline), 1);
    assert_true(lock_now_ns() >= a.deadline);
    assert_int_equal(a.fds[0].revents, 0);
    assert_int_equal(a.fds[2].revents, POLLIN);
    put(a.sv[0][1]);
    put(a.sv[1][1]);
    assert_int_equal(lock_seam_wait_all(NULL, a.fds, 3, lock_now_ns() + LONG_NS), 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(a.fds[i].revents, POLLIN);
    all_of_close(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wait_all_wakes_once_every_socket_answered),
        cmocka_unit_test(wait_all_at_its_deadline_gives_what_answered),
        cmocka_unit_test(wait_all_through_a_plain_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
