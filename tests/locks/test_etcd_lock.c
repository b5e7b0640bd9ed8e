/* test_etcd_lock.c - the etcd lock against a real etcd, read as
 * concurrency.Mutex describes it: the key is <name>/<lease id in hex> on
 * the client's lease; the first-created key holds; a second client waits
 * and is granted when the first releases; tokens are create revisions and
 * increase; a waiter watches only its predecessor; a wait ends at its
 * deadline and takes its key back; locklab and etcdctl lock (the same
 * Mutex in Go) exclude each other on one name, both ways; #11456: a waiter
 * whose lease expires while it waits is refused with the recheck and
 * granted on a key that no longer exists without it (a third client is
 * then granted too: two holders); renew and release of a lost lock say
 * LOST; a client costs one connection and no more descriptors; a refused
 * dial is tried again after gRPC's back-off. Given the ttl at connect, a
 * client makes its session there, as concurrency.NewSession does: the
 * lease is granted by connect, its keys ride on it, a reconnect after a
 * crash makes a new one (the old left to run out), one revoked or run out
 * is replaced at the next acquire, and a grant that cannot be sent fails
 * connect. A 1 s ttl is a 1 s lease on the managed etcd (its election
 * timeout of 500 ms grants no shorter), and one the server lengthens (an
 * etcd at its default timings grants 2 s at least) fails connect, said
 * why, at once. A release whose answer never came (its request dropped by
 * locklab's proxy, so the key stays on a lease kept alive) is deleted
 * again before the client's next acquire, and a waiter on it is granted.
 *
 * The group starts its own etcd through locklab's fleet (free loopback
 * ports), and stops it by PID at the end. The test looks at the server
 * through the gateway itself (etcd_server_ask) and expires leases from
 * outside with /v3/lease/revoke.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "algorithms/etcd_wire.h"
#include "algorithms/lock.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/etcd_server.h"
#include "sim/fleet/server_kind.h"
#include "sim/proxy/proxy.h"
#include "tests/lib/lock_settings.h"

#define LONG_TTL_MS 30000
#define SETTLE_MS   400 /* long enough for a wrongly woken waiter to have been granted */
#define WAIT_LONG   20000
#define POLL_TRIES  500 /* of 20 ms: 10 s */

static struct cluster fleet;
static struct lock_config cfg, cfg_norecheck;
static int port;
static int key_counter;

static int setup(void **state)
{
    (void)state;
    char err[256];
    if (cluster_start(&fleet, "etcd", 1, err, sizeof(err)) < 0) {
        fprintf(stderr, "cannot start etcd: %s\n", err);
        return -1;
    }
    port = fleet.srv[0].port;
    snprintf(cfg.endpoints[0].host, sizeof(cfg.endpoints[0].host), "127.0.0.1");
    cfg.endpoints[0].port = port;
    cfg.n_endpoints = 1;
    cfg.connect_timeout_ms = 2000;
    cfg.io_timeout_ms = 5000;
    cfg.retry_min_ms = 1;
    cfg.retry_max_ms = 50;
    cfg.want_token = true;
    CFG_SETTINGS(cfg, etcd, etcd_spec)->recheck = true;
    cfg_norecheck = cfg;
    CFG_SETTINGS(cfg_norecheck, etcd, etcd_spec)->recheck = false;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cluster_stop(&fleet, NULL);
    return 0;
}

static void client_open(struct lock_client *c, const struct lock_config *conf)
{
    memset(c, 0, sizeof(*c));
    c->ops = lock_find("etcd");
    assert_non_null(c->ops);
    c->cfg = conf;
    c->rng = 88172645463325252ULL;
    assert_int_equal(c->ops->connect(c), 0);
}

static void new_key(char *key, size_t len)
{
    snprintf(key, len, "lock:test:%d", ++key_counter);
}

static enum lock_result take(struct lock_client *c, const char *key, uint32_t ttl, uint32_t wait,
                             struct lock_grant *g)
{
    return c->ops->acquire(c, key, strlen(key), ttl, wait, g);
}

/* The gateway's answer to body on path, parsed. */
static json_t *ask(const char *path, json_t *body)
{
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    static char reply[65536];
    int n = etcd_server_ask(port, path, text, reply, sizeof(reply));
    free(text);
    assert_true(n > 0);
    json_t *j = json_loads(reply, 0, NULL);
    assert_non_null(j);
    return j;
}

/* The keys under <name>/, first created first: their names into names,
 * their create revisions and leases. How many. */
static size_t keys_under(const char *name, char (*names)[128], int64_t *revs, int64_t *leases,
                         size_t max)
{
    char prefix[96];
    int plen = snprintf(prefix, sizeof(prefix), "%s/", name);
    json_t *ans =
        ask("/v3/kv/range", json_pack("{s:o, s:o, s:s, s:s}", "key", etcd_b64(prefix, (size_t)plen),
                                      "range_end", etcd_prefix_end(prefix, (size_t)plen),
                                      "sort_target", "CREATE", "sort_order", "ASCEND"));
    json_t *kvs = json_object_get(ans, "kvs");
    size_t n = json_array_size(kvs) < max ? json_array_size(kvs) : max;
    for (size_t i = 0; i < n; i++) {
        json_t *kv = json_array_get(kvs, i);
        if (names)
            assert_true(etcd_unb64(json_object_get(kv, "key"), names[i], 128) > 0);
        if (revs)
            revs[i] = etcd_int(kv, "create_revision");
        if (leases)
            leases[i] = etcd_int(kv, "lease");
    }
    json_decref(ans);
    return n;
}

static void wait_for_keys(const char *name, size_t n)
{
    for (int i = 0; i < POLL_TRIES; i++) {
        if (keys_under(name, NULL, NULL, NULL, 16) == n)
            return;
        lock_sleep_ms(20);
    }
    fail_msg("%s/ never had %zu keys", name, n);
}

static void revoke_lease(int64_t lease)
{
    char id[24];
    snprintf(id, sizeof(id), "%" PRId64, lease);
    json_decref(ask("/v3/lease/revoke", json_pack("{s:s}", "ID", id)));
}

/* The leases etcd holds now, their IDs into ids; how many. */
static size_t leases_now(int64_t *ids, size_t max)
{
    json_t *ans = ask("/v3/lease/leases", json_object());
    json_t *all = json_object_get(ans, "leases");
    size_t n = json_array_size(all);
    for (size_t i = 0; i < n && i < max; i++)
        ids[i] = etcd_int(json_array_get(all, i), "ID");
    json_decref(ans);
    return n;
}

static bool has_lease(const int64_t *ids, size_t n, int64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

/* The one lease in after that is not in before (0: none or several). */
static int64_t new_lease(const int64_t *before, size_t nb, const int64_t *after, size_t na)
{
    int64_t found = 0;
    for (size_t i = 0; i < na; i++)
        if (!has_lease(before, nb, after[i])) {
            if (found)
                return 0;
            found = after[i];
        }
    return found;
}

/* A client acquiring on its own thread, and when it was answered. */
struct waiter {
    struct lock_client c;
    const char *key;
    uint32_t wait;
    struct lock_grant g;
    enum lock_result rc;
    atomic_int done;
    uint64_t done_ms;
    pthread_t th;
};

static void *waiter_main(void *arg)
{
    struct waiter *w = arg;
    w->rc = take(&w->c, w->key, LONG_TTL_MS, w->wait, &w->g);
    w->done_ms = lock_now_ms();
    atomic_store(&w->done, 1);
    return NULL;
}

static void waiter_start(struct waiter *w, const struct lock_config *conf, const char *key)
{
    memset(w, 0, sizeof(*w));
    client_open(&w->c, conf);
    w->key = key;
    w->wait = WAIT_LONG;
    assert_int_equal(pthread_create(&w->th, NULL, waiter_main, w), 0);
}

static void waiter_join(struct waiter *w)
{
    pthread_join(w->th, NULL);
}

static void key_is_name_slash_lease_and_first_holds(void **state)
{
    (void)state;
    struct lock_client a, b;
    client_open(&a, &cfg);
    client_open(&b, &cfg);
    char key[64], names[4][128];
    int64_t revs[4], leases[4];
    new_key(key, sizeof(key));
    struct lock_grant ga, gb;
    assert_int_equal(take(&a, key, LONG_TTL_MS, 0, &ga), LOCK_OK);
    assert_int_equal(keys_under(key, names, revs, leases, 4), 1);
    char want[128];
    snprintf(want, sizeof(want), "%s/%" PRIx64, key, (uint64_t)leases[0]);
    assert_string_equal(names[0], want); /* <name>/<lease id in lowercase hex> */
    assert_int_equal(ga.token, (uint64_t)revs[0]);
    assert_true(ga.validity_ms > 0 && ga.validity_ms <= LONG_TTL_MS);

    /* a wait of 0: the key is put, found second, taken back */
    assert_int_equal(take(&b, key, LONG_TTL_MS, 0, &gb), LOCK_BUSY);
    assert_int_equal(keys_under(key, NULL, NULL, NULL, 4), 1);

    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_int_equal(keys_under(key, NULL, NULL, NULL, 4), 0);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_LOST); /* deleted 0 */
    assert_int_equal(take(&b, key, LONG_TTL_MS, 0, &gb), LOCK_OK);
    assert_true(gb.token > ga.token);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static void waiter_granted_on_release_tokens_increase(void **state)
{
    (void)state;
    struct lock_client a;
    client_open(&a, &cfg);
    char key[64];
    new_key(key, sizeof(key));
    uint64_t last = 0;
    for (int round = 0; round < 3; round++) {
        struct lock_grant ga;
        assert_int_equal(take(&a, key, LONG_TTL_MS, 0, &ga), LOCK_OK);
        assert_true(ga.token > last);
        struct waiter w;
        waiter_start(&w, &cfg, key);
        wait_for_keys(key, 2);
        lock_sleep_ms(SETTLE_MS);
        assert_int_equal(atomic_load(&w.done), 0); /* still waiting */
        uint64_t released = lock_now_ms();
        assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
        waiter_join(&w);
        assert_int_equal(w.rc, LOCK_OK);
        assert_true(w.done_ms >= released);
        assert_true(w.g.token > ga.token);
        last = w.g.token;
        assert_int_equal(w.c.ops->release(&w.c, &w.g), LOCK_OK);
        w.c.ops->disconnect(&w.c);
    }
    a.ops->disconnect(&a);
}

static void waiter_watches_only_its_predecessor(void **state)
{
    (void)state;
    struct lock_client a;
    client_open(&a, &cfg);
    char key[64];
    new_key(key, sizeof(key));
    struct lock_grant ga;
    assert_int_equal(take(&a, key, LONG_TTL_MS, 0, &ga), LOCK_OK);
    struct waiter b, c;
    waiter_start(&b, &cfg, key);
    wait_for_keys(key, 2);
    waiter_start(&c, &cfg, key);
    wait_for_keys(key, 3);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    waiter_join(&b);
    assert_int_equal(b.rc, LOCK_OK);
    lock_sleep_ms(SETTLE_MS);
    assert_int_equal(atomic_load(&c.done), 0); /* a's delete did not wake c: b is before it */
    uint64_t released = lock_now_ms();
    assert_int_equal(b.c.ops->release(&b.c, &b.g), LOCK_OK);
    waiter_join(&c);
    assert_int_equal(c.rc, LOCK_OK);
    assert_true(c.done_ms >= released);
    assert_true(ga.token < b.g.token && b.g.token < c.g.token);
    assert_int_equal(c.c.ops->release(&c.c, &c.g), LOCK_OK);
    a.ops->disconnect(&a);
    b.c.ops->disconnect(&b.c);
    c.c.ops->disconnect(&c.c);
}

static void wait_ends_at_deadline_and_takes_its_key_back(void **state)
{
    (void)state;
    struct lock_client a, b;
    client_open(&a, &cfg);
    client_open(&b, &cfg);
    char key[64];
    new_key(key, sizeof(key));
    struct lock_grant ga, gb;
    assert_int_equal(take(&a, key, LONG_TTL_MS, 0, &ga), LOCK_OK);
    uint64_t t0 = lock_now_ms();
    assert_int_equal(take(&b, key, LONG_TTL_MS, 600, &gb), LOCK_BUSY);
    uint64_t took = lock_now_ms() - t0;
    assert_true(took >= 600 && took < 5000);
    assert_int_equal(keys_under(key, NULL, NULL, NULL, 4), 1);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

/* etcdctl lock NAME CMD: holds NAME while CMD runs (its own Mutex). */
static pid_t etcdctl_lock(const char *name, const char *cmd)
{
    char ep[64];
    snprintf(ep, sizeof(ep), "--endpoints=http://127.0.0.1:%d", port);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("ETCDCTL_API", "3", 1);
        execlp("etcdctl", "etcdctl", ep, "lock", name, "--", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Has pid exited (reaped)? Its status into *status. */
static bool exited(pid_t pid, int *status)
{
    return waitpid(pid, status, WNOHANG) == pid;
}

static void stop_pid(pid_t pid)
{
    int status;
    if (!exited(pid, &status)) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
}

static void contends_with_etcdctl(void **state)
{
    (void)state;
    char key[64];
    new_key(key, sizeof(key));
    int status = 0;
    /* etcdctl holds while its command sleeps; locklab waits for it */
    pid_t ctl = etcdctl_lock(key, "sleep 1.5");
    wait_for_keys(key, 1);
    struct lock_client a;
    client_open(&a, &cfg);
    struct lock_grant ga;
    assert_int_equal(take(&a, key, LONG_TTL_MS, WAIT_LONG, &ga), LOCK_OK);
    /* granted only once etcdctl's command ended and it unlocked */
    bool gone = false;
    for (int i = 0; i < POLL_TRIES && !gone; i++)
        gone = exited(ctl, &status) || (lock_sleep_ms(20), false);
    assert_true(gone);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(keys_under(key, NULL, NULL, NULL, 4), 1);

    /* the reverse: etcdctl waits while locklab holds */
    ctl = etcdctl_lock(key, "true");
    wait_for_keys(key, 2);
    lock_sleep_ms(SETTLE_MS);
    bool early = exited(ctl, &status);
    if (early)
        fail_msg("etcdctl lock returned while locklab held the lock");
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    gone = false;
    for (int i = 0; i < POLL_TRIES && !gone; i++)
        gone = exited(ctl, &status) || (lock_sleep_ms(20), false);
    if (!gone)
        stop_pid(ctl);
    assert_true(gone);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    a.ops->disconnect(&a);
}

/* #11456: b waits behind a; b's lease is revoked (its keepalive would say
 * TTL 0 from then on: the same as its session expiring); a releases. */
static void lease_lost_while_waiting(const struct lock_config *conf, bool recheck)
{
    struct lock_client a, c;
    client_open(&a, &cfg);
    client_open(&c, &cfg);
    char key[64], names[4][128];
    int64_t leases[4];
    new_key(key, sizeof(key));
    struct lock_grant ga, gc;
    assert_int_equal(take(&a, key, LONG_TTL_MS, 0, &ga), LOCK_OK);
    struct waiter b;
    waiter_start(&b, conf, key);
    wait_for_keys(key, 2);
    assert_int_equal(keys_under(key, names, NULL, leases, 4), 2);
    revoke_lease(leases[1]);
    assert_int_equal(keys_under(key, NULL, NULL, NULL, 4), 1); /* b's key went with its lease */
    lock_sleep_ms(SETTLE_MS);
    assert_int_equal(atomic_load(&b.done), 0); /* b still waits on a's key */
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    waiter_join(&b);
    if (recheck) {
        assert_int_equal(b.rc, LOCK_ERR);
        assert_int_equal(b.c.err, LOCK_ERR_REFUSED);
    } else {
        /* granted on a key that no longer exists, and c is granted too */
        assert_int_equal(b.rc, LOCK_OK);
        assert_int_equal(keys_under(key, NULL, NULL, NULL, 4), 0);
        assert_int_equal(take(&c, key, LONG_TTL_MS, 0, &gc), LOCK_OK);
        assert_int_equal(b.c.ops->renew(&b.c, &b.g), LOCK_LOST);
        assert_int_equal(b.c.ops->release(&b.c, &b.g), LOCK_LOST);
        assert_int_equal(c.ops->release(&c, &gc), LOCK_OK);
    }
    a.ops->disconnect(&a);
    c.ops->disconnect(&c);
    b.c.ops->disconnect(&b.c);
}

static void lease_lost_while_waiting_recheck_refuses(void **state)
{
    (void)state;
    lease_lost_while_waiting(&cfg, true);
}

static void lease_lost_while_waiting_no_recheck_grants(void **state)
{
    (void)state;
    lease_lost_while_waiting(&cfg_norecheck, false);
}

static void renew_and_release_after_expiry_say_lost(void **state)
{
    (void)state;
    struct lock_client a;
    char key[64];
    int64_t leases[4];
    struct lock_grant ga;
    /* renew first: the keepalive answers TTL 0 */
    client_open(&a, &cfg);
    new_key(key, sizeof(key));
    assert_int_equal(take(&a, key, 2000, 0, &ga), LOCK_OK);
    assert_int_equal(a.ops->renew(&a, &ga), LOCK_OK);
    assert_int_equal(keys_under(key, NULL, NULL, leases, 4), 1);
    revoke_lease(leases[0]);
    assert_int_equal(a.ops->renew(&a, &ga), LOCK_LOST);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_LOST);
    /* a new session (lease) for the next acquire */
    assert_int_equal(take(&a, key, 2000, 0, &ga), LOCK_OK);
    a.ops->disconnect(&a);

    /* release first: the delete finds nothing */
    client_open(&a, &cfg);
    new_key(key, sizeof(key));
    assert_int_equal(take(&a, key, 2000, 0, &ga), LOCK_OK);
    assert_int_equal(keys_under(key, NULL, NULL, leases, 4), 1);
    revoke_lease(leases[0]);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_LOST);
    a.ops->disconnect(&a);
}

static void crash_leaves_the_key_to_its_lease(void **state)
{
    (void)state;
    struct lock_client a, b;
    client_open(&a, &cfg);
    client_open(&b, &cfg);
    char key[64];
    new_key(key, sizeof(key));
    struct lock_grant ga, gb;
    assert_int_equal(take(&a, key, 2000, 0, &ga), LOCK_OK);
    a.ops->crash(&a);
    assert_int_equal(keys_under(key, NULL, NULL, NULL, 4), 1); /* nothing revoked */
    uint64_t t0 = lock_now_ms();
    assert_int_equal(take(&b, key, LONG_TTL_MS, 10000, &gb), LOCK_OK);
    assert_true(lock_now_ms() - t0 >= 1000); /* the 2 s lease ran out first */
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    b.ops->disconnect(&b);
}

/* A release the server never got: the proxy drops the delete, the call
 * times out (outcome unknown to the client), and the key stays on a lease
 * the client keeps. Before its next acquire the client deletes it again,
 * and a waiter on the old key is granted then, not when the lease (30 s)
 * would run out. */
static void an_unanswered_release_is_deleted_before_the_next_acquire(void **state)
{
    (void)state;
    char err[256];
    struct lock_endpoint up = {.host = "127.0.0.1", .port = port};
    struct proxy *px = proxy_new(&up, 1, 1, 1, 42, err, sizeof(err));
    assert_non_null(px);
    assert_int_equal(proxy_start(px, err, sizeof(err)), 0);
    struct lock_config via = cfg;
    via.endpoints[0] = proxy_address(px, 0, 0);
    via.io_timeout_ms = 1000;
    struct lock_client a;
    client_open(&a, &via);
    char key[64], other[64];
    new_key(key, sizeof(key));
    new_key(other, sizeof(other));
    struct lock_grant ga, go;
    assert_int_equal(take(&a, key, LONG_TTL_MS, 0, &ga), LOCK_OK);
    struct toxic drop = {.kind = toxic_kind_find("timeout"),
                         .stream = STREAM_UP,
                         .toxicity = 1.0,
                         .endpoints = 1,
                         .group = -1};
    assert_int_equal(proxy_toxic_add(px, 1, &drop, NULL), 0);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_ERR);
    assert_int_not_equal(a.err, LOCK_ERR_UNSENT); /* sent: the outcome is unknown */
    proxy_toxic_remove(px, 1);
    assert_int_equal(keys_under(key, NULL, NULL, NULL, 4), 1); /* the delete never arrived */
    /* b waits on the key a left; a's next acquire, of another lock, frees it */
    struct waiter w;
    waiter_start(&w, &cfg, key);
    wait_for_keys(key, 2);
    uint64_t t0 = lock_now_ms();
    assert_int_equal(take(&a, other, LONG_TTL_MS, 0, &go), LOCK_OK);
    waiter_join(&w);
    assert_int_equal(w.rc, LOCK_OK);
    assert_true(w.done_ms - t0 < LONG_TTL_MS / 3);             /* not the lease running out */
    assert_int_equal(keys_under(key, NULL, NULL, NULL, 4), 1); /* the waiter's alone */
    assert_int_equal(w.c.ops->release(&w.c, &w.g), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &go), LOCK_OK);
    w.c.ops->disconnect(&w.c);
    a.ops->disconnect(&a);
    proxy_free(px);
}

/* Descriptors this process has open now. */
static int open_fds(void)
{
    int n = 0;
    char path[64];
    for (int fd = 0; fd < 65536; fd++) {
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        n += access(path, F_OK) == 0;
    }
    return n;
}

#define MANY 100

/* A client costs its connection and nothing more: the clients of a thread
 * share one libcurl multi handle (libcurl gives each a socketpair of its
 * own, two descriptors a client were it one a client), and a client dials
 * at connect, as clientv3.New does. Its calls ride that connection; a
 * client gone takes it with it. */
static void a_client_costs_its_connection_alone(void **state)
{
    (void)state;
    static struct lock_client c[MANY + 1];
    client_open(&c[MANY], &cfg); /* this thread's multi handle exists from here */
    int before = open_fds();
    for (int i = 0; i < MANY; i++)
        client_open(&c[i], &cfg);
    assert_int_equal(open_fds() - before, MANY);
    char key[64];
    new_key(key, sizeof(key));
    struct lock_grant g;
    assert_int_equal(take(&c[7], key, LONG_TTL_MS, 0, &g), LOCK_OK);
    assert_int_equal(c[7].ops->release(&c[7], &g), LOCK_OK);
    assert_int_equal(open_fds() - before, MANY); /* on its own connection, again */
    for (int i = 0; i < MANY; i++)
        c[i].ops->disconnect(&c[i]);
    assert_int_equal(open_fds(), before);
    c[MANY].ops->disconnect(&c[MANY]);
}

/* A member that refused a dial is dialled again after gRPC's back-off
 * (1 s, then 1.6 s, +-20 %), not at once: a call meanwhile waits for it,
 * as a clientv3 call waits for its connection, then fails as never sent. */
static void a_refused_dial_backs_off(void **state)
{
    (void)state;
    struct lock_config dead = cfg;
    dead.endpoints[0].port = cluster_free_port(); /* nobody listens there */
    assert_true(dead.endpoints[0].port > 0);
    struct lock_client c;
    client_open(&c, &dead); /* the dial fails; connect does not */
    assert_int_equal(c.connect_refused, 1);
    struct lock_grant g;
    uint64_t t0 = lock_now_ms();
    assert_int_equal(take(&c, "lock:test:dead", 2000, 0, &g), LOCK_ERR);
    uint64_t first = lock_now_ms() - t0;
    assert_int_equal(c.err, LOCK_ERR_UNSENT);
    assert_int_equal(c.connect_refused, 2);
    t0 = lock_now_ms();
    assert_int_equal(take(&c, "lock:test:dead", 2000, 0, &g), LOCK_ERR);
    uint64_t second = lock_now_ms() - t0;
    assert_int_equal(c.connect_refused, 3);
    assert_true(first >= 800);   /* 1 s - 20 % */
    assert_true(second >= 1280); /* 1.6 s - 20 % */
    c.ops->disconnect(&c);
}

#define MAX_LEASES 256

/* a opened on sess (the caller's: the client keeps a pointer to it); the
 * one lease its session was granted at connect. */
static int64_t session_open(struct lock_client *a, const struct lock_config *sess)
{
    static int64_t before[MAX_LEASES], after[MAX_LEASES];
    size_t n_before = leases_now(before, MAX_LEASES);
    client_open(a, sess);
    size_t n_after = leases_now(after, MAX_LEASES);
    int64_t lease = new_lease(before, n_before, after, n_after);
    assert_true(lease != 0);
    return lease;
}

/* NewSession at connect: the lease exists before any acquire, and the
 * acquire's key rides on it without granting another. */
static void a_session_is_granted_at_connect(void **state)
{
    (void)state;
    static int64_t l0[MAX_LEASES], l1[MAX_LEASES], l2[MAX_LEASES], l3[MAX_LEASES];
    struct lock_config sess = cfg;
    sess.ttl_ms = LONG_TTL_MS;
    size_t n0 = leases_now(l0, MAX_LEASES);
    struct lock_client a;
    client_open(&a, &sess);
    size_t n1 = leases_now(l1, MAX_LEASES);
    assert_int_equal(n1, n0 + 1);
    int64_t first = new_lease(l0, n0, l1, n1);
    assert_true(first != 0);
    char key[64];
    int64_t leases[4];
    new_key(key, sizeof(key));
    struct lock_grant g;
    assert_int_equal(take(&a, key, LONG_TTL_MS, 0, &g), LOCK_OK);
    assert_int_equal(keys_under(key, NULL, NULL, leases, 4), 1);
    assert_int_equal(leases[0], first);
    assert_int_equal(leases_now(l2, MAX_LEASES), n1); /* no second grant */
    /* a crash revokes nothing; the client that connects again has a lease of its own */
    a.ops->crash(&a);
    client_open(&a, &sess);
    size_t n2 = leases_now(l2, MAX_LEASES);
    assert_int_equal(n2, n1 + 1);
    assert_true(has_lease(l2, n2, first));
    int64_t second = new_lease(l1, n1, l2, n2);
    assert_true(second != 0 && second != first);
    /* lost (revoked): the next acquire makes another */
    revoke_lease(first);
    revoke_lease(second);
    new_key(key, sizeof(key));
    assert_int_equal(take(&a, key, LONG_TTL_MS, 0, &g), LOCK_OK);
    size_t n3 = leases_now(l3, MAX_LEASES);
    assert_int_equal(keys_under(key, NULL, NULL, leases, 4), 1);
    assert_true(has_lease(l3, n3, leases[0]));
    assert_false(has_lease(l2, n2, leases[0]));
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    a.ops->disconnect(&a);
}

/* A session that ran out while its client was idle (the client keeps it
 * alive in its calls and while it holds, not between) is replaced at the
 * next acquire (its keep-alive answers TTL 0), whose key rides on the new
 * lease. */
static void a_session_that_ran_out_is_replaced_at_the_next_acquire(void **state)
{
    (void)state;
    static int64_t l1[MAX_LEASES];
    struct lock_config sess = cfg;
    sess.ttl_ms = 2000;
    struct lock_client a;
    int64_t first = session_open(&a, &sess);
    int tries = 0;
    for (; tries < POLL_TRIES && has_lease(l1, leases_now(l1, MAX_LEASES), first); tries++)
        lock_sleep_ms(20);
    assert_true(tries < POLL_TRIES); /* etcd let the 2 s lease run out */
    char key[64];
    int64_t leases[4];
    new_key(key, sizeof(key));
    struct lock_grant g;
    assert_int_equal(take(&a, key, 2000, 0, &g), LOCK_OK);
    assert_int_equal(keys_under(key, NULL, NULL, leases, 4), 1);
    assert_true(leases[0] != first);
    assert_true(has_lease(l1, leases_now(l1, MAX_LEASES), leases[0]));
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    a.ops->disconnect(&a);
}

#define HOLD_MS 300 /* the scorecard's critical section: shorter than a renew period */

/* clientv3's Session keeps its lease alive every TTL/3 whatever the
 * program does, so a client that is granted at once, again and again,
 * never waiting, keeps its session: each grant rides on the lease it had
 * at connect with at least two thirds of it left, and no key of it goes
 * with the lease while held. (A no-fault run found the client keeping its
 * lease alive only while it waited: a 2 s lease ran out 0.3 s into such a
 * grant, and the next holder entered.) The test holds each lock 300 ms
 * and renews nothing, as the engine renews only past a renew period. */
static void a_session_outlives_grants_that_never_wait(void **state)
{
    (void)state;
    struct lock_config sess = cfg;
    sess.ttl_ms = 2000;
    struct lock_client a;
    int64_t first = session_open(&a, &sess);
    char key[64];
    int64_t leases[4];
    struct lock_grant g;
    int grants = 0;
    /* 3 s: past the 2 s lease and etcd's half-second look for expired ones */
    for (uint64_t t0 = lock_now_ms(); lock_now_ms() - t0 < 3000; grants++) {
        new_key(key, sizeof(key));
        assert_int_equal(take(&a, key, 2000, 0, &g), LOCK_OK);
        assert_true(g.validity_ms >= 1000);
        lock_sleep_ms(HOLD_MS);
        assert_int_equal(keys_under(key, NULL, NULL, leases, 4), 1); /* still held */
        assert_int_equal(leases[0], first);                          /* on the session's lease */
        assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    }
    assert_true(grants >= 3); /* each at once, none waiting */
    a.ops->disconnect(&a);
}

/* NewSession returns the grant's error: a connect whose grant could not
 * be sent fails, as never sent. */
static void a_session_that_cannot_be_granted_fails_connect(void **state)
{
    (void)state;
    struct lock_config dead = cfg;
    dead.ttl_ms = 2000;
    dead.endpoints[0].port = cluster_free_port(); /* nobody listens there */
    assert_true(dead.endpoints[0].port > 0);
    struct lock_client c;
    memset(&c, 0, sizeof(c));
    c.ops = lock_find("etcd");
    c.cfg = &dead;
    c.rng = 88172645463325252ULL;
    assert_int_equal(c.ops->connect(&c), -1);
    assert_int_equal(c.err, LOCK_ERR_UNSENT);
    assert_int_equal(c.connect_refused, 2); /* the dial, then the grant's try */
    c.ops->disconnect(&c);
}

/* The lease's TTL as etcd granted it (lease/timetolive's grantedTTL). */
static int64_t granted_ttl(int64_t lease)
{
    char id[24];
    snprintf(id, sizeof(id), "%" PRId64, lease);
    json_t *ans = ask("/v3/lease/timetolive", json_pack("{s:s}", "ID", id));
    int64_t ttl = etcd_int(ans, "grantedTTL");
    json_decref(ans);
    return ttl;
}

/* The managed etcd runs with a 500 ms election timeout: a 1 s ttl is a
 * lease etcd grants as 1 s, whose grant is valid no longer, and which
 * runs out about a second after its last keep-alive. */
static void a_one_second_ttl_is_a_one_second_lease(void **state)
{
    (void)state;
    static int64_t l1[MAX_LEASES];
    struct lock_config sess = cfg;
    sess.ttl_ms = 1000;
    struct lock_client a;
    int64_t lease = session_open(&a, &sess);
    assert_int_equal(granted_ttl(lease), 1);
    char key[64];
    new_key(key, sizeof(key));
    struct lock_grant g;
    assert_int_equal(take(&a, key, 1000, 0, &g), LOCK_OK);
    assert_true(g.validity_ms > 0 && g.validity_ms <= 1000);
    uint64_t t0 = lock_now_ms();
    int tries = 0;
    for (; tries < POLL_TRIES && has_lease(l1, leases_now(l1, MAX_LEASES), lease); tries++)
        lock_sleep_ms(20);
    uint64_t gone = lock_now_ms() - t0;
    /* etcd looks for expired leases every 500 ms: gone within 1 s of its
     * TTL, never the 2 s an etcd at its defaults would have granted */
    assert_true(tries < POLL_TRIES);
    assert_true(gone < 2000);
    assert_int_equal(keys_under(key, NULL, NULL, NULL, 4), 0); /* its key went with it */
    assert_int_equal(a.ops->release(&a, &g), LOCK_LOST);
    a.ops->disconnect(&a);
}

/* An etcd of etcd's default timings (--election-timeout 1000), as a user's
 * own may run: it grants 2 s for the 1 s asked. The client would hold a
 * lease longer than the run reports, so connect fails, refused (the run
 * stops at once), saying the ttl that would do. */
static void a_lease_longer_than_asked_fails_connect(void **state)
{
    (void)state;
    char dir[] = "/tmp/locklab-etcd-defaults-XXXXXX", script[128], err[256];
    assert_non_null(mkdtemp(dir));
    snprintf(script, sizeof(script), "%s/etcd", dir);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    /* etcd takes the last of a flag given twice */
    fprintf(f, "#!/bin/sh\nexec etcd \"$@\" --heartbeat-interval=%d --election-timeout=%d\n",
            ETCD_DEFAULT_HEARTBEAT_MS, ETCD_DEFAULT_ELECTION_TIMEOUT_MS);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(script, 0755), 0);
    struct cluster slow;
    memset(&slow, 0, sizeof(slow));
    setenv("LOCKLAB_ETCD", script, 1);
    int rc = cluster_start(&slow, "etcd", 1, err, sizeof(err));
    unsetenv("LOCKLAB_ETCD");
    if (rc < 0)
        fail_msg("cannot start etcd at its defaults: %s", err);
    struct lock_config sess = cfg;
    sess.endpoints[0].port = slow.srv[0].port;
    sess.ttl_ms = 1000;
    struct lock_client c;
    memset(&c, 0, sizeof(c));
    c.ops = lock_find("etcd");
    c.cfg = &sess;
    c.rng = 88172645463325252ULL;
    int connected = c.ops->connect(&c);
    int errcode = c.err;
    uint64_t refused = c.connect_refused;
    char why[sizeof(c.errstr)];
    snprintf(why, sizeof(why), "%s", c.errstr);
    c.ops->disconnect(&c);
    sess.ttl_ms = 2000; /* what the resolver gives an external etcd: granted as asked */
    memset(&c, 0, sizeof(c));
    c.ops = lock_find("etcd");
    c.cfg = &sess;
    int connected_2s = c.ops->connect(&c);
    c.ops->disconnect(&c);
    cluster_stop(&slow, NULL);
    unlink(script);
    rmdir(dir);
    assert_int_equal(connected, -1);
    assert_int_equal(errcode, LOCK_ERR_CONFIG);
    assert_int_equal(refused, 1);
    assert_string_equal(why,
                        "etcd: a 1 s lease asked, 2 s granted (3/2 of its --election-timeout): "
                        "give lock.ttl_ms 2000 or more");
    assert_int_equal(connected_2s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(key_is_name_slash_lease_and_first_holds),
        cmocka_unit_test(waiter_granted_on_release_tokens_increase),
        cmocka_unit_test(waiter_watches_only_its_predecessor),
        cmocka_unit_test(wait_ends_at_deadline_and_takes_its_key_back),
        cmocka_unit_test(contends_with_etcdctl),
        cmocka_unit_test(lease_lost_while_waiting_recheck_refuses),
        cmocka_unit_test(lease_lost_while_waiting_no_recheck_grants),
        cmocka_unit_test(renew_and_release_after_expiry_say_lost),
        cmocka_unit_test(crash_leaves_the_key_to_its_lease),
        cmocka_unit_test(an_unanswered_release_is_deleted_before_the_next_acquire),
        cmocka_unit_test(a_client_costs_its_connection_alone),
        cmocka_unit_test(a_refused_dial_backs_off),
        cmocka_unit_test(a_session_is_granted_at_connect),
        cmocka_unit_test(a_session_that_ran_out_is_replaced_at_the_next_acquire),
        cmocka_unit_test(a_session_outlives_grants_that_never_wait),
        cmocka_unit_test(a_session_that_cannot_be_granted_fails_connect),
        cmocka_unit_test(a_one_second_ttl_is_a_one_second_lease),
        cmocka_unit_test(a_lease_longer_than_asked_fails_connect),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
