/* zk_group.c - a ZooKeeper lock test group's server, observer session and
 * lock clients (zk_group.h). */
#include "tests/lib/zk_group.h"

#include <setjmp.h>
#include <stdarg.h>

#include <cmocka.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fleet/server_kind.h"
#include "tests/lib/lock_settings.h"

#define RAW_SESSION  10000
#define RAW_LIMIT_MS 30000 /* the longest the observer drives for one answer */
#define RAW_TRIES    3     /* a read that lost its connection is asked again */
#define REST_MS      10

static int key_counter;

/* The single-threaded library formats log lines into one static buffer:
 * none at all, as zookeeper_session.c does. */
static void raw_quiet(void)
{
    zoo_set_debug_level((ZooLogLevel)0);
}

/* One turn of the observer's session on the test's thread, as the
 * library's own I/O loop would run it (a wait of 10 ms at most). -1 when
 * the handle is past use. */
static int raw_turn(zhandle_t *zh)
{
    int fd = -1, interest = 0;
    struct timeval tv = {0, 0};
    if (zookeeper_interest(zh, &fd, &interest, &tv) == ZINVALIDSTATE)
        return -1;
    long ms = tv.tv_sec * 1000L + tv.tv_usec / 1000L;
    struct pollfd p = {.fd = fd,
                       .events = (short)(((interest & ZOOKEEPER_READ) ? POLLIN : 0) |
                                         ((interest & ZOOKEEPER_WRITE) ? POLLOUT : 0))};
    int events = 0;
    if (poll(&p, fd >= 0 ? 1 : 0, (int)(ms < 10 ? ms : 10)) > 0) {
        events |= (p.revents & (POLLIN | POLLERR)) ? ZOOKEEPER_READ : 0;
        events |= (p.revents & (POLLOUT | POLLHUP | POLLERR)) ? ZOOKEEPER_WRITE : 0;
    }
    zookeeper_process(zh, events);
    return 0;
}

/* Drive the observer until *done or RAW_LIMIT_MS. */
static void raw_drive(zhandle_t *zh, const bool *done)
{
    uint64_t until = lock_now_ms() + RAW_LIMIT_MS;
    while (!*done && lock_now_ms() < until)
        if (raw_turn(zh) < 0)
            return;
}

struct raw_call {
    bool done;
    int rc;
    struct String_vector *kids;
    char *buf;
    int *len, size;
};

static void raw_listed(int rc, const struct String_vector *strings, const void *data)
{
    struct raw_call *k = (struct raw_call *)data;
    k->rc = rc;
    if (rc == ZOK) {
        assert_int_equal(allocate_String_vector(k->kids, strings->count), 0);
        for (int32_t i = 0; i < strings->count; i++)
            assert_non_null(k->kids->data[i] = strdup(strings->data[i]));
    }
    k->done = true;
}

static void raw_got(int rc, const char *value, int value_len, const struct Stat *stat,
                    const void *data)
{
    (void)stat;
    struct raw_call *k = (struct raw_call *)data;
    k->rc = rc;
    if (rc == ZOK) {
        int n = value_len < *k->len ? value_len : *k->len;
        if (n > 0)
            memcpy(k->buf, value, (size_t)n);
        *k->len = value_len < 0 ? -1 : n;
    }
    k->done = true;
}

static int send_children(zhandle_t *raw, const char *path, struct raw_call *k)
{
    return zoo_aget_children(raw, path, 0, raw_listed, k);
}

static int send_get(zhandle_t *raw, const char *path, struct raw_call *k)
{
    *k->len = k->size;
    return zoo_aget(raw, path, 0, raw_got, k);
}

/* One read, sent by send with k as its completion's data and driven to
 * its answer, asked again when its connection gave out under it. */
static int raw_ask(zhandle_t *raw, const char *path, struct raw_call *k,
                   int (*send)(zhandle_t *, const char *, struct raw_call *))
{
    int rc = ZCONNECTIONLOSS;
    for (int t = 0; t < RAW_TRIES && (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT); t++) {
        k->done = false;
        k->rc = ZOPERATIONTIMEOUT;
        rc = send(raw, path, k);
        if (rc == ZOK) {
            raw_drive(raw, &k->done);
            assert_true(k->done);
            rc = k->rc;
        }
    }
    return rc;
}

static int raw_children(zhandle_t *raw, const char *path, struct String_vector *v)
{
    struct raw_call k = {.kids = v};
    return raw_ask(raw, path, &k, send_children);
}

int raw_get(zhandle_t *raw, const char *path, char *buf, int *len)
{
    struct raw_call k = {.buf = buf, .len = len, .size = *len};
    return raw_ask(raw, path, &k, send_get);
}

void rest(struct lock_client *const *cs, size_t n, uint32_t ms)
{
    uint64_t until = lock_now_ns() + (uint64_t)ms * 1000000u;
    for (uint64_t now = lock_now_ns(); now < until; now = lock_now_ns()) {
        uint64_t slice = now + REST_MS * 1000000u < until ? now + REST_MS * 1000000u : until;
        for (size_t i = 0; i < n; i++)
            if (cs[i]->impl && cs[i]->ops->idle)
                cs[i]->ops->idle(cs[i], slice, NULL);
        uint64_t after = lock_now_ns();
        if (after < slice) /* no client to drive, or none with a session */
            lock_sleep_ms((uint32_t)((slice - after + 999999u) / 1000000u));
    }
}

zhandle_t *raw_open(int port)
{
    char host[32];
    snprintf(host, sizeof(host), "127.0.0.1:%d", port);
    raw_quiet();
    zhandle_t *zh = zookeeper_init(host, NULL, RAW_SESSION, NULL, NULL, 0);
    uint64_t until = lock_now_ms() + 5000;
    while (zh && zoo_state(zh) != ZOO_CONNECTED_STATE && lock_now_ms() < until)
        if (raw_turn(zh) < 0)
            break;
    if (zh && zoo_state(zh) != ZOO_CONNECTED_STATE) {
        zookeeper_close(zh);
        return NULL;
    }
    return zh;
}

int group_start(struct group *g, int session_ms)
{
    char err[256];
    if (cluster_start(&g->cluster, "zookeeper", 1, err, sizeof(err)) < 0) {
        fprintf(stderr, "cannot start ZooKeeper: %s\n", err);
        return -1;
    }
    snprintf(g->cfg.endpoints[0].host, sizeof(g->cfg.endpoints[0].host), "127.0.0.1");
    g->cfg.endpoints[0].port = g->cluster.srv[0].port;
    g->cfg.n_endpoints = 1;
    g->cfg.connect_timeout_ms = 5000;
    CFG_SETTINGS(g->cfg, zookeeper, zookeeper_spec)->session_timeout_ms = session_ms;
    g->cfg.want_token = true;
    g->raw = raw_open(g->cluster.srv[0].port);
    if (g->raw == NULL) {
        fprintf(stderr, "cannot open an observer session\n");
        cluster_stop(&g->cluster, NULL);
        return -1;
    }
    return 0;
}

void group_stop(struct group *g)
{
    if (g->raw)
        zookeeper_close(g->raw);
    g->raw = NULL;
    cluster_stop(&g->cluster, NULL);
}

void client_open(struct lock_client *c, const struct lock_config *conf, const char *owner)
{
    memset(c, 0, sizeof(*c));
    c->ops = lock_find("zookeeper");
    assert_non_null(c->ops);
    c->cfg = conf;
    c->rng = 88172645463325252ULL; /* the same for all: node ids must not depend on it */
    snprintf(c->owner, sizeof(c->owner), "%s", owner);
    c->owner_len = strlen(c->owner);
    assert_int_equal(c->ops->connect(c), 0);
}

void new_key(char *key, size_t len)
{
    snprintf(key, len, "test:zk:%d", key_counter++);
}

enum lock_result take(struct lock_client *c, const char *key, uint32_t wait, struct lock_grant *g)
{
    return c->ops->acquire(c, key, strlen(key), 30000, wait, g);
}

int64_t seq_of(const char *name)
{
    size_t n = strlen(name);
    return n >= 10 ? strtoll(name + n - 10, NULL, 10) : -1;
}

static int by_seq(const void *a, const void *b)
{
    int64_t x = seq_of(*(char *const *)a), y = seq_of(*(char *const *)b);
    return (x > y) - (x < y);
}

int kids(zhandle_t *raw, const char *key, char (*paths)[PATH_LEN], int max)
{
    char parent[PATH_LEN / 2];
    snprintf(parent, sizeof(parent), "/locks/%s", key);
    struct String_vector v;
    int rc = raw_children(raw, parent, &v);
    if (rc == ZNONODE)
        return 0;
    assert_int_equal(rc, ZOK);
    if (v.count > 0) /* none: the library's data is NULL, which qsort may not take */
        qsort(v.data, (size_t)v.count, sizeof(v.data[0]), by_seq);
    int n = v.count < max ? v.count : max;
    for (int i = 0; i < n; i++)
        snprintf(paths[i], PATH_LEN, "%s/%.*s", parent, PATH_LEN / 2 - 2, v.data[i]);
    deallocate_String_vector(&v);
    return n;
}

int count_kids(zhandle_t *raw, const char *key)
{
    char paths[MAX_KIDS][PATH_LEN];
    return kids(raw, key, paths, MAX_KIDS);
}

int wait_for_kids(zhandle_t *raw, const char *key, int n, struct lock_client *idler)
{
    for (int i = 0; i < 1000; i++) {
        if (count_kids(raw, key) == n)
            return 0;
        rest(&idler, idler ? 1 : 0, 10);
    }
    return -1;
}
