/* test_zookeeper_lock_recipe.c - the zookeeper lock against a real
 * ZooKeeper, read as the recipe describes it: the lowest ephemeral
 * sequential node holds, a second client is busy, release deletes the node,
 * tokens follow the sequence, waiters are granted in queue order and each
 * is woken once (no herd effect, checked on the client and with the
 * server's `wchc`), a wait ends at its deadline, a crashed holder's node
 * lives until its session expires. One client holds twenty locks at once.
 * A failed session open counts in connect_failures once.
 *
 * The group starts its own standalone ZooKeeper through locklab's cluster
 * code (tests/lib/zk_group.h), on free loopback ports, and stops it by PID
 * at the end. Sessions cut off, dropped links and unanswered releases are
 * test_zookeeper_lock_faults.c's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "algorithms/lock.h"
#include "algorithms/zookeeper.h"
#include "sim/fleet/zookeeper_server.h"
#include "tests/lib/lock_settings.h"
#include "tests/lib/zk_group.h"

/* The main group's session: its tests are not about sessions, and the C
 * client drops the link after 2/3 of the session with no word from the
 * server. A loaded CI host stalls the whole process for 0.7 s at times, and
 * with a 1 s session that drop made a held grant LOCK_LOST (rightly, as
 * Curator's SUSPENDED), failing a test that expected LOCK_OK. */
#define STEADY_SESSION_MS LONG_SESSION_MS
#define HOLD_MS           5
#define WCHC_MAX          65536
#define MANY_KEYS         20

static struct group main_group;

static int setup_main(void **state)
{
    (void)state;
    return group_start(&main_group, STEADY_SESSION_MS);
}

static int teardown_main(void **state)
{
    (void)state;
    group_stop(&main_group);
    return 0;
}

static void assert_node_data(zhandle_t *raw, const char *path, const char *want)
{
    char buf[128];
    int len = (int)sizeof(buf) - 1;
    assert_int_equal(raw_get(raw, path, buf, &len), ZOK);
    buf[len < 0 ? 0 : len] = '\0';
    assert_string_equal(buf, want);
}

static void zk_acquire_busy_release(void **state)
{
    (void)state;
    struct group *G = &main_group;
    struct lock_client a, b;
    client_open(&a, &G->cfg, "owner-a");
    client_open(&b, &G->cfg, "owner-b");
    char key[64], paths[MAX_KIDS][PATH_LEN];
    new_key(key, sizeof(key));
    struct lock_grant ga, gb;
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    assert_int_equal(ga.ttl_ms, 30000);
    assert_true(ga.validity_ms > 0 && ga.validity_ms <= STEADY_SESSION_MS);
    assert_int_equal(kids(G->raw, key, paths, MAX_KIDS), 1);
    assert_non_null(strstr(paths[0], "-lock-"));
    assert_int_equal(ga.token, seq_of(paths[0]) + 1);
    assert_node_data(G->raw, paths[0], "owner-a");

    assert_int_equal(take(&b, key, 0, &gb), LOCK_BUSY);
    assert_int_equal(count_kids(G->raw, key), 1); /* tryLock left no node */
    /* b presents a's grant: not b's node, nothing is deleted. */
    assert_int_equal(b.ops->release(&b, &ga), LOCK_LOST);
    assert_int_equal(count_kids(G->raw, key), 1);

    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_int_equal(count_kids(G->raw, key), 0);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_LOST);
    assert_int_equal(take(&b, key, 0, &gb), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static void zk_tokens_increase(void **state)
{
    (void)state;
    struct group *G = &main_group;
    struct lock_client a, b;
    client_open(&a, &G->cfg, "owner-a");
    client_open(&b, &G->cfg, "owner-b");
    char key[64], paths[MAX_KIDS][PATH_LEN];
    new_key(key, sizeof(key));
    uint64_t last = 0;
    for (int i = 0; i < 6; i++) {
        struct lock_client *c = i % 2 ? &b : &a;
        struct lock_grant g;
        assert_int_equal(take(c, key, 0, &g), LOCK_OK);
        assert_int_equal(kids(G->raw, key, paths, MAX_KIDS), 1);
        assert_int_equal(g.token, seq_of(paths[0]) + 1);
        assert_true(g.token > last);
        last = g.token;
        assert_int_equal(c->ops->release(c, &g), LOCK_OK);
    }
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static void zk_bad_key_is_a_config_error(void **state)
{
    (void)state;
    struct lock_client a;
    client_open(&a, &main_group.cfg, "owner-a");
    struct lock_grant g;
    assert_int_equal(take(&a, "a/b", 0, &g), LOCK_ERR);
    assert_int_equal(a.err, LOCK_ERR_CONFIG);
    a.ops->disconnect(&a);
}

static void zk_connect_to_refusing_port_is_an_io_error(void **state)
{
    (void)state;
    /* A port the test holds bound but never listens on refuses for sure. */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, len), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    struct lock_config bad = main_group.cfg;
    bad.endpoints[0].port = ntohs(a.sin_port);
    bad.connect_timeout_ms = 500;
    struct lock_client c = {.ops = lock_find("zookeeper"), .cfg = &bad, .rng = 1};
    uint64_t t = lock_now_ms();
    assert_int_equal(c.ops->connect(&c), -1);
    assert_true(lock_now_ms() - t < 10000);
    assert_int_equal(c.err, LOCK_ERR_IO);
    assert_int_equal(c.connect_failures, 1); /* one failed open, counted once */
    assert_int_equal(c.connect_refused, 0);  /* the library cannot say it was refused */
    char where[32];
    snprintf(where, sizeof(where), "127.0.0.1:%d", bad.endpoints[0].port);
    assert_non_null(strstr(c.errstr, where));
    c.ops->disconnect(&c);
    assert_null(c.impl);
    close(fd);
}

/* A scheduled-tasks instance keeps many task locks while it moves on:
 * twenty at once, given back in another order than taken. */
static void zk_one_client_holds_many_locks(void **state)
{
    (void)state;
    struct group *G = &main_group;
    struct lock_client a, b;
    client_open(&a, &G->cfg, "owner-a");
    client_open(&b, &G->cfg, "owner-b");
    char keys[MANY_KEYS][64];
    struct lock_grant g[MANY_KEYS], gb;
    for (int i = 0; i < MANY_KEYS; i++) {
        new_key(keys[i], sizeof(keys[i]));
        assert_int_equal(take(&a, keys[i], 0, &g[i]), LOCK_OK);
        assert_int_equal(count_kids(G->raw, keys[i]), 1);
    }
    for (int i = 0; i < MANY_KEYS; i += 5)
        assert_int_equal(take(&b, keys[i], 0, &gb), LOCK_BUSY);
    /* 7 and 20 share no factor: k -> 7k mod 20 visits every lock once. */
    for (int k = 0; k < MANY_KEYS; k++) {
        int i = (7 * k + 3) % MANY_KEYS;
        assert_int_equal(a.ops->release(&a, &g[i]), LOCK_OK);
        assert_int_equal(count_kids(G->raw, keys[i]), 0);
    }
    assert_int_equal(a.ops->release(&a, &g[0]), LOCK_LOST); /* already released */
    assert_int_equal(take(&b, keys[MANY_KEYS - 1], 0, &gb), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    assert_int_equal(a.connect_failures, 0);
    assert_int_equal(a.connect_refused, 0);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

struct waiter {
    struct lock_client c;
    const char *key;
    pthread_t thread;
    enum lock_result got, released;
    struct lock_grant g;
    int order;
};

static atomic_int grant_order;

static void *waiter_run(void *arg)
{
    struct waiter *w = arg;
    w->got = take(&w->c, w->key, 60000, &w->g);
    if (w->got == LOCK_OK) {
        /* Inside the lock: nobody else counts at the same time. */
        w->order = atomic_fetch_add(&grant_order, 1);
        struct lock_client *me = &w->c;
        rest(&me, 1, HOLD_MS);
        w->released = w->c.ops->release(&w->c, &w->g);
    }
    return NULL;
}

/* `wchc` lists each session that watches anything as a "0x<id>" line,
 * then one tab-indented line per watched path. Returns the number of such
 * sessions, or -1 when one of them watches more than one path. */
static int sessions_watching_one(const char *reply)
{
    int sessions = 0, paths = 0;
    for (const char *line = reply; line && *line; line = strchr(line, '\n')) {
        line += line[0] == '\n';
        if (strncmp(line, "0x", 2) == 0)
            sessions++, paths = 0;
        else if (line[0] == '\t' && ++paths > 1)
            return -1;
    }
    return sessions;
}

static int wchc_path_count(const char *reply, const char *path)
{
    int n = 0;
    size_t len = strlen(path);
    for (const char *p = strstr(reply, path); p; p = strstr(p + 1, path))
        n += p[-1] == '\t' && (p[len] == '\n' || p[len] == '\0');
    return n;
}

/* Wait until the server reports WAITERS sessions with watches, each on one
 * path, then check those are the nodes the waiters stand behind, each
 * watched once: every node but the last. */
static void check_server_watches(struct group *G, const char *key, struct lock_client *idler)
{
    char paths[MAX_KIDS][PATH_LEN];
    char *reply = malloc(WCHC_MAX);
    assert_non_null(reply);
    int sessions = 0;
    for (int i = 0; i < 500 && sessions != WAITERS; i++) {
        assert_true(zookeeper_server_ask(G->cluster.srv[0].port, "wchc", reply, WCHC_MAX) > 0);
        sessions = sessions_watching_one(reply);
        assert_true(sessions >= 0); /* no session ever watches two nodes */
        if (sessions != WAITERS)
            rest(&idler, 1, 10);
    }
    assert_int_equal(sessions, WAITERS);
    int n = kids(G->raw, key, paths, MAX_KIDS);
    assert_int_equal(n, WAITERS + 1);
    for (int i = 0; i < WAITERS; i++)
        assert_int_equal(wchc_path_count(reply, paths[i]), 1);
    assert_int_equal(wchc_path_count(reply, paths[WAITERS]), 0); /* the last is nobody's */
    free(reply);
}

static void zk_fair_queue_without_herd(void **state)
{
    (void)state;
    struct group *G = &main_group;
    /* The queue is the subject, not sessions: 17 one-second sessions on a
     * loaded host (ctest -j2 beside JVMs) once lost one to a late
     * heartbeat, and a waiter's acquire came back LOCK_ERR. */
    struct lock_config longer = G->cfg;
    CFG_SETTINGS(longer, zookeeper, zookeeper_spec)->session_timeout_ms = LONG_SESSION_MS;
    char key[64];
    new_key(key, sizeof(key));
    struct lock_client h;
    client_open(&h, &longer, "holder");
    struct lock_grant gh;
    assert_int_equal(take(&h, key, 0, &gh), LOCK_OK);
    struct waiter *w = calloc(WAITERS, sizeof(*w));
    assert_non_null(w);
    atomic_store(&grant_order, 0);
    for (int i = 0; i < WAITERS; i++) {
        char owner[32];
        snprintf(owner, sizeof(owner), "waiter-%d", i);
        client_open(&w[i].c, &longer, owner);
        w[i].key = key;
        w[i].order = -1;
        assert_int_equal(pthread_create(&w[i].thread, NULL, waiter_run, &w[i]), 0);
        /* One at a time: waiter i's node is the (i+2)th, so the queue order
         * is the start order. */
        assert_int_equal(wait_for_kids(G->raw, key, i + 2, &h), 0);
    }
    check_server_watches(G, key, &h);
    assert_int_equal(h.ops->release(&h, &gh), LOCK_OK);
    for (int i = 0; i < WAITERS; i++)
        pthread_join(w[i].thread, NULL);

    assert_int_equal(zookeeper_watch_events(&h), 0);
    uint64_t last = gh.token;
    for (int i = 0; i < WAITERS; i++) {
        assert_int_equal(w[i].got, LOCK_OK);
        assert_int_equal(w[i].released, LOCK_OK);
        assert_int_equal(w[i].order, i); /* granted in the order they queued */
        assert_true(w[i].g.token > last);
        last = w[i].g.token;
        /* woken once: by its predecessor's deletion, by nothing else */
        assert_int_equal(zookeeper_watch_events(&w[i].c), 1);
        w[i].c.ops->disconnect(&w[i].c);
    }
    assert_int_equal(count_kids(G->raw, key), 0);
    h.ops->disconnect(&h);
    free(w);
}

static atomic_int cancel_flag;

static void *cancel_soon(void *arg)
{
    (void)arg;
    lock_sleep_ms(100);
    atomic_store(&cancel_flag, 1);
    return NULL;
}

static void zk_wait_ends_busy_and_leaves_no_node(void **state)
{
    (void)state;
    struct group *G = &main_group;
    struct lock_client a, b;
    client_open(&a, &G->cfg, "owner-a");
    client_open(&b, &G->cfg, "owner-b");
    char key[64];
    new_key(key, sizeof(key));
    struct lock_grant ga, gb;
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);

    uint64_t t = lock_now_ms();
    assert_int_equal(take(&b, key, 200, &gb), LOCK_BUSY);
    uint64_t waited = lock_now_ms() - t;
    assert_true(waited >= 200 && waited < 5000);
    assert_int_equal(count_kids(G->raw, key), 1);

    assert_int_equal(take(&b, key, 0, &gb), LOCK_BUSY);
    assert_int_equal(count_kids(G->raw, key), 1);

    /* The engine's stop flag ends a long wait early. */
    struct lock_config cancellable = G->cfg;
    cancellable.cancel = &cancel_flag;
    atomic_store(&cancel_flag, 0);
    b.cfg = &cancellable;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_soon, NULL), 0);
    t = lock_now_ms();
    assert_int_equal(take(&b, key, 60000, &gb), LOCK_BUSY);
    waited = lock_now_ms() - t;
    pthread_join(th, NULL);
    assert_true(waited < 10000);
    assert_int_equal(count_kids(G->raw, key), 1);
    b.cfg = &G->cfg;

    /* Once released, a waiting client gets it. */
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_int_equal(take(&b, key, 5000, &gb), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static void zk_crash_leaves_node_until_session_expires(void **state)
{
    (void)state;
    struct group *G = &main_group;
    struct lock_config brief = G->cfg; /* the crashed client's session ends soon */
    CFG_SETTINGS(brief, zookeeper, zookeeper_spec)->session_timeout_ms = SESSION_MS;
    struct lock_client a, b;
    client_open(&a, &brief, "owner-a");
    client_open(&b, &G->cfg, "owner-b");
    char key[64], paths[MAX_KIDS][PATH_LEN];
    new_key(key, sizeof(key));
    struct lock_grant ga, gb;
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    a.ops->crash(&a);
    assert_null(a.impl);
    uint64_t crashed = lock_now_ms();
    lock_sleep_ms(100);
    /* No closeSession went out: the node outlives the client... */
    assert_int_equal(kids(G->raw, key, paths, MAX_KIDS), 1);
    assert_node_data(G->raw, paths[0], "owner-a");
    assert_int_equal(take(&b, key, 0, &gb), LOCK_BUSY);
    /* ...until the server expires the session; then the waiter has it. */
    assert_int_equal(take(&b, key, SESSION_MS + 3000, &gb), LOCK_OK);
    assert_true(lock_now_ms() - crashed <= SESSION_MS + 3000 + 100);
    assert_int_equal(kids(G->raw, key, paths, MAX_KIDS), 1);
    assert_node_data(G->raw, paths[0], "owner-b");
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);

    /* The control: a clean disconnect frees the lock at once. */
    client_open(&a, &G->cfg, "owner-a");
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    a.ops->disconnect(&a);
    assert_int_equal(count_kids(G->raw, key), 0);
    assert_int_equal(take(&b, key, 0, &gb), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    b.ops->disconnect(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zk_acquire_busy_release),
        cmocka_unit_test(zk_tokens_increase),
        cmocka_unit_test(zk_one_client_holds_many_locks),
        cmocka_unit_test(zk_bad_key_is_a_config_error),
        cmocka_unit_test(zk_connect_to_refusing_port_is_an_io_error),
        cmocka_unit_test(zk_fair_queue_without_herd),
        cmocka_unit_test(zk_wait_ends_busy_and_leaves_no_node),
        cmocka_unit_test(zk_crash_leaves_node_until_session_expires),
    };
    return cmocka_run_group_tests_name("zookeeper", tests, setup_main, teardown_main);
}
