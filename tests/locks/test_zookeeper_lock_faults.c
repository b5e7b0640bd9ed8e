/* test_zookeeper_lock_faults.c - the zookeeper lock's sessions under
 * faults, against a real ZooKeeper: a holder cut off past its session
 * timeout (through a loopback relay the test runs) finds the lock lost and
 * a new session opened, a holder whose link dropped (server paused) counts
 * its grant as lost, and a release the paused server never answered is
 * unknown (LOCK_ERR), not lost. Dropped connections count in
 * connect_failures. A holder driven through its lock's idle keeps its
 * session; one that only sleeps loses it. Its close waits for the
 * server's reply in the seam.
 *
 * The group starts its own standalone ZooKeeper through locklab's cluster
 * code (tests/lib/zk_group.h), on free loopback ports, and stops it by PID
 * at the end; it pauses that server, and continues it in a per-test
 * teardown, pass or fail. The recipe itself is test_zookeeper_lock_recipe.c's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "algorithms/lock.h"
#include "algorithms/zookeeper.h"
#include "tests/lib/lock_settings.h"
#include "tests/lib/zk_group.h"

static struct group fault_group;

static int setup_faults(void **state)
{
    (void)state;
    return group_start(&fault_group, SESSION_MS);
}

static int teardown_faults(void **state)
{
    (void)state;
    group_stop(&fault_group);
    return 0;
}

/* The server a test paused and has not continued yet: the fault group's
 * per-test teardown continues it, pass or fail. */
static pid_t paused_pid;

/* Wait until pid is stopped (state T): kill() only queues the signal. */
static void wait_stopped(pid_t pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    for (int i = 0; i < 200; i++) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = '\0';
        const char *end = strrchr(buf, ')'); /* the state follows "(comm) " */
        if (end && end[1] == ' ' && end[2] == 'T')
            return;
        lock_sleep_ms(5);
    }
    fail_msg("process %d did not stop", (int)pid);
}

static int continue_server(void **state)
{
    (void)state;
    struct group *G = &fault_group;
    if (paused_pid > 0)
        kill(paused_pid, SIGCONT);
    paused_pid = 0;
    if (G->raw == NULL)
        G->raw = raw_open(G->cluster.srv[0].port);
    return 0;
}

/* SIGSTOP the group's server for pause_ms while the n lock clients cs sit
 * idle (driven, as the engine does). The observer session is closed first
 * and opened again after: the pause is for the lock's sessions. */
static void pause_server(struct group *G, uint32_t pause_ms, struct lock_client *const *cs,
                         size_t n)
{
    zookeeper_close(G->raw);
    G->raw = NULL;
    pid_t pid = G->cluster.srv[0].pid;
    assert_int_equal(kill(pid, SIGSTOP), 0);
    rest(cs, n, pause_ms);
    assert_int_equal(kill(pid, SIGCONT), 0);
    G->raw = raw_open(G->cluster.srv[0].port);
    assert_non_null(G->raw);
}

/* A loopback TCP relay between one lock client and the server, so that a
 * test can cut that client off: while cut, its connections are closed and
 * every new one is closed as soon as it is accepted, so nothing it sends
 * reaches the server; the server sees only the TCP close, which leaves the
 * session to expire on its own. One thread, bounded poll loop. */
#define RELAY_PAIRS 8
struct relay {
    int listen_fd, port, target;
    atomic_int cut, stop;
    pthread_t thread;
    int pair[RELAY_PAIRS][2];
    int n;
};

static void relay_drop(struct relay *r, int i)
{
    close(r->pair[i][0]);
    close(r->pair[i][1]);
    r->pair[i][0] = r->pair[r->n - 1][0];
    r->pair[i][1] = r->pair[r->n - 1][1];
    r->n--;
}

static void relay_accept(struct relay *r)
{
    int in = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (in < 0)
        return;
    int out = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)r->target),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (atomic_load(&r->cut) || r->n == RELAY_PAIRS || out < 0 ||
        connect(out, (struct sockaddr *)&a, sizeof(a)) < 0) {
        close(in);
        if (out >= 0)
            close(out);
        return;
    }
    r->pair[r->n][0] = in;
    r->pair[r->n][1] = out;
    r->n++;
}

/* Copy what one side has to the other; -1 when the pair is finished. */
static int relay_copy(int from, int to)
{
    char buf[16384];
    ssize_t got = read(from, buf, sizeof(buf));
    for (ssize_t put = 0, w; got > 0 && put < got; put += w)
        if ((w = write(to, buf + put, (size_t)(got - put))) <= 0)
            return -1;
    return got > 0 ? 0 : -1;
}

static void *relay_run(void *arg)
{
    struct relay *r = arg;
    while (!atomic_load(&r->stop)) {
        while (atomic_load(&r->cut) && r->n > 0)
            relay_drop(r, 0);
        struct pollfd p[1 + 2 * RELAY_PAIRS] = {{.fd = r->listen_fd, .events = POLLIN}};
        for (int i = 0; i < r->n; i++)
            for (int k = 0; k < 2; k++)
                p[1 + 2 * i + k] = (struct pollfd){.fd = r->pair[i][k], .events = POLLIN};
        int n = r->n;
        if (poll(p, (nfds_t)(1 + 2 * n), 20) <= 0)
            continue;
        for (int i = n - 1; i >= 0; i--)
            for (int k = 0; k < 2; k++)
                if (p[1 + 2 * i + k].revents && relay_copy(r->pair[i][k], r->pair[i][1 - k]) < 0) {
                    relay_drop(r, i);
                    break;
                }
        if (p[0].revents & POLLIN)
            relay_accept(r);
    }
    while (r->n > 0)
        relay_drop(r, 0);
    return NULL;
}

static void relay_start(struct relay *r, int target)
{
    memset(r, 0, sizeof(*r));
    r->target = target;
    r->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    assert_true(r->listen_fd >= 0);
    assert_int_equal(bind(r->listen_fd, (struct sockaddr *)&a, len), 0);
    assert_int_equal(listen(r->listen_fd, 16), 0);
    assert_int_equal(getsockname(r->listen_fd, (struct sockaddr *)&a, &len), 0);
    r->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&r->thread, NULL, relay_run, r), 0);
}

static void relay_stop(struct relay *r)
{
    atomic_store(&r->stop, 1);
    pthread_join(r->thread, NULL);
    close(r->listen_fd);
}

/* The holder is cut off from the server past its session timeout: the
 * server expires the session and deletes the node, with no release from
 * anyone. (A SIGSTOPped server is no reliable way to this: on SIGCONT it
 * may read the client's queued reconnect before its session tracker runs,
 * and the reconnect renews the session; seen in about 1 run of 25.) */
static void zk_expired_session_loses_the_lock(void **state)
{
    (void)state;
    struct group *G = &fault_group;
    struct relay *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    relay_start(r, G->cluster.srv[0].port);
    struct lock_config via = G->cfg;
    via.endpoints[0].port = r->port;
    struct lock_client a;
    client_open(&a, &via, "owner-a");
    char key[64];
    new_key(key, sizeof(key));
    struct lock_grant ga;
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    int64_t before = zookeeper_session_id(&a);
    assert_true(before != 0);

    atomic_store(&r->cut, 1);
    uint64_t t = lock_now_ms();
    assert_int_equal(wait_for_kids(G->raw, key, 0, &a), 0);
    assert_true(lock_now_ms() - t <= SESSION_MS + 3000);
    atomic_store(&r->cut, 0);

    /* The next acquire, the first call to hear of the expiry, opens a new
     * session by itself; the old grant is lost. */
    struct lock_grant again;
    assert_int_equal(take(&a, key, 5000, &again), LOCK_OK);
    int64_t after = zookeeper_session_id(&a);
    assert_true(after != 0 && after != before);
    assert_true(again.token > ga.token);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_LOST);
    assert_int_equal(a.ops->release(&a, &again), LOCK_OK);
    a.ops->disconnect(&a);
    relay_stop(r);
    free(r);
}

/* A pause the client notices (no answer for 2/3 of the session timeout)
 * but shorter than the timeout: the session survives, yet while the link
 * was down the holder could not know, so, as Curator's SUSPENDED, the grant
 * counts as lost. Release still deletes the node, which would otherwise
 * head the queue. */
static void zk_connection_loss_while_holding_is_lost(void **state)
{
    (void)state;
    struct group *G = &fault_group;
    struct lock_config longer = G->cfg;
    CFG_SETTINGS(longer, zookeeper, zookeeper_spec)->session_timeout_ms = LONG_SESSION_MS;
    struct lock_client a, b;
    client_open(&a, &longer, "owner-a");
    client_open(&b, &longer, "owner-b");
    char key[64];
    new_key(key, sizeof(key));
    struct lock_grant ga, gb;
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    int64_t before = zookeeper_session_id(&a);

    struct lock_client *both[] = {&a, &b};
    pause_server(G, LONG_SESSION_MS * 13 / 16, both, 2);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_LOST);
    assert_int_equal(zookeeper_session_id(&a), before); /* not expired */
    assert_int_equal(a.connect_failures, 1);            /* the one drop, counted once */
    assert_int_equal(a.connect_refused, 1);             /* a dropped connection: a server gone */
    assert_int_equal(count_kids(G->raw, key), 0);
    assert_int_equal(take(&b, key, 0, &gb), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

/* Pause the fault group's server (the observer session closed first, as
 * pause_server does), release ga from a after `before_ms`, continue the
 * server: what the release said, with a's errstr. */
static enum lock_result release_while_paused(struct lock_client *a, struct lock_grant *ga,
                                             uint32_t before_ms, void **state)
{
    struct group *G = &fault_group;
    zookeeper_close(G->raw);
    G->raw = NULL;
    paused_pid = G->cluster.srv[0].pid;
    assert_int_equal(kill(paused_pid, SIGSTOP), 0);
    wait_stopped(paused_pid);
    rest(&a, 1, before_ms);
    uint64_t t = lock_now_ms();
    enum lock_result r = a->ops->release(a, ga);
    uint64_t took = lock_now_ms() - t;
    continue_server(state);
    assert_non_null(G->raw);
    assert_true(took < SESSION_MS * 5);
    return r;
}

/* The server paused past the client's own timeout (2/3 of the session):
 * the delete gets no answer and may or may not have been applied, so the
 * release is LOCK_ERR, never a guess. Sent on a live link, or sent after
 * the client saw the link drop (which once made it LOST), the same. The
 * node is not left to head the queue: a's next acquire deletes it. */
static void zk_unanswered_release_is_unknown(void **state)
{
    (void)state;
    struct group *G = &fault_group;
    for (int round = 0; round < 2; round++) {
        struct lock_client a, b;
        client_open(&a, &G->cfg, "owner-a");
        char key[64], other[64];
        new_key(key, sizeof(key));
        new_key(other, sizeof(other));
        struct lock_grant ga, gb, go;
        assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
        /* round 0 waits out the client's 2/3-of-the-session timeout first */
        enum lock_result r = release_while_paused(&a, &ga, round ? 0 : SESSION_MS, state);
        if (r != LOCK_ERR || strstr(a.errstr, "outcome unknown") == NULL)
            fail_msg("round %d: release %d (%s), want LOCK_ERR, outcome unknown", round, r,
                     a.errstr);
        assert_true(a.err == LOCK_ERR_TIMEOUT || a.err == LOCK_ERR_IO); /* no answer */
        /* Whether the session lived or expired, after a's next acquire the
         * node is gone and b gets the lock without waiting. */
        assert_int_equal(take(&a, other, 5000, &go), LOCK_OK);
        /* the drop, seen while a was driven, is counted by now */
        assert_true(a.connect_failures >= 1);
        assert_int_equal(count_kids(G->raw, key), 0);
        /* b comes after the pause: a client that sat through it with a 1 s
         * session may still be reconnecting on a loaded host, and a tryLock
         * (wait 0) on a reconnecting handle is an error, not the answer
         * this checks */
        client_open(&b, &G->cfg, "owner-b");
        assert_int_equal(take(&b, key, 0, &gb), LOCK_OK);
        assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
        assert_int_equal(a.ops->release(&a, &go), LOCK_OK);
        a.ops->disconnect(&a);
        b.ops->disconnect(&b);
    }
}

/* Two lock clients, owner-a and owner-b, connected, and a new key for
 * each (64 bytes). */
static void two_clients(struct group *G, struct lock_client *a, struct lock_client *b, char ka[64],
                        char kb[64])
{
    client_open(a, &G->cfg, "owner-a");
    client_open(b, &G->cfg, "owner-b");
    new_key(ka, 64);
    new_key(kb, 64);
}

/* Nothing pings for a single-threaded client unless it is driven: a holder
 * whose time passes in its lock's idle keeps its session through three
 * session timeouts (no link change, the same session, its release OK),
 * while one that only sleeps as long loses it (the server expires the
 * session and deletes the node: LOCK_LOST). */
static void zk_idle_keeps_the_session(void **state)
{
    (void)state;
    struct group *G = &fault_group;
    struct lock_client a, b;
    char ka[64], kb[64];
    two_clients(G, &a, &b, ka, kb);
    struct lock_grant ga, gb;
    assert_int_equal(take(&a, ka, 0, &ga), LOCK_OK);
    struct lock_link_event ev[4];
    size_t first = a.ops->links(&a, ev, 4); /* the connect's own CONNECTED */
    assert_int_equal(first, 1);
    assert_int_equal(ev[0].state, LOCK_LINK_CONNECTED);
    int64_t session = zookeeper_session_id(&a);
    struct lock_client *idler = &a;
    rest(&idler, 1, 3 * SESSION_MS);
    assert_int_equal(a.ops->links(&a, ev, 4), 0);
    assert_int_equal(zookeeper_session_id(&a), session);
    assert_int_equal(count_kids(G->raw, ka), 1);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);

    assert_int_equal(take(&b, kb, 0, &gb), LOCK_OK);
    lock_sleep_ms(3 * SESSION_MS);
    assert_int_equal(count_kids(G->raw, kb), 0);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_LOST);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

/* A seam that times the waits it passes on to the blocking one. */
struct timed_seam {
    uint32_t waits;
    uint64_t waited_ns;
};

static int timed_wait(void *ctx, struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    struct timed_seam *t = ctx;
    uint64_t t0 = lock_now_ns();
    int rc = lock_blocking_seam.wait(NULL, fds, n, deadline_ns);
    t->waits++;
    t->waited_ns += lock_now_ns() - t0;
    return rc;
}

static void timed_sleep(void *ctx, uint64_t until_ns, const atomic_int *cancel)
{
    (void)ctx;
    lock_blocking_seam.sleep(NULL, until_ns, cancel);
}

/* The close is the library's (closeSession, then up to 1.5 s for the
 * reply) but spent in the seam: a server that answers has deleted the
 * holder's node by the time disconnect returns; one that is stopped gets
 * the library's whole wait for its reply, and that wait is the client's
 * in the seam (where the engine runs the worker's other clients), not a
 * thread blocked outside it. Its closeSession, sent before the stop took
 * the reply, is applied once the server goes on: the node goes then, not
 * at the session's expiry. */
static void zk_close_waits_in_the_seam(void **state)
{
    struct group *G = &fault_group;
    struct lock_client a, b;
    char ka[64], kb[64];
    two_clients(G, &a, &b, ka, kb);
    struct lock_grant ga, gb;
    assert_int_equal(take(&a, ka, 0, &ga), LOCK_OK);
    assert_int_equal(take(&b, kb, 0, &gb), LOCK_OK);

    struct timed_seam ta = {0}, tb = {0};
    struct lock_seam sa = {.wait = timed_wait, .sleep = timed_sleep, .ctx = &ta};
    struct lock_seam sb = {.wait = timed_wait, .sleep = timed_sleep, .ctx = &tb};
    a.seam = &sa;
    a.ops->disconnect(&a);
    assert_true(ta.waits >= 1);
    assert_int_equal(count_kids(G->raw, ka), 0);

    zookeeper_close(G->raw);
    G->raw = NULL;
    paused_pid = G->cluster.srv[0].pid;
    assert_int_equal(kill(paused_pid, SIGSTOP), 0);
    wait_stopped(paused_pid);
    b.seam = &sb;
    uint64_t t0 = lock_now_ns();
    b.ops->disconnect(&b);
    uint64_t took = lock_now_ns() - t0;
    continue_server(state);
    assert_non_null(G->raw);
    if (tb.waits < 1 || tb.waited_ns < 1400 * 1000000ULL || took < 1400 * 1000000ULL)
        fail_msg("disconnect took %llu ms, %u waits in the seam for %llu ms; want the library's "
                 "1500 ms, in the seam",
                 (unsigned long long)(took / 1000000), tb.waits,
                 (unsigned long long)(tb.waited_ns / 1000000));
    assert_int_equal(wait_for_kids(G->raw, kb, 0, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest fault_tests[] = {
        cmocka_unit_test(zk_expired_session_loses_the_lock),
        cmocka_unit_test(zk_connection_loss_while_holding_is_lost),
        cmocka_unit_test_teardown(zk_unanswered_release_is_unknown, continue_server),
        cmocka_unit_test(zk_idle_keeps_the_session),
        cmocka_unit_test_teardown(zk_close_waits_in_the_seam, continue_server),
    };
    return cmocka_run_group_tests_name("zookeeper-faults", fault_tests, setup_faults,
                                       teardown_faults);
}
