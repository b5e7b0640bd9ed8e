/* zk_group.c - a ZooKeeper lock test group's server, observer session and
 * lock clients (zk_group.h). */
#include "tests/lib/zk_group.h"

#include <setjmp.h>
#include <stdarg.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fleet/server_kind.h"

#define RAW_SESSION 10000

static int key_counter;

static void raw_quiet(void)
{
    static FILE *devnull;
    if (devnull == NULL)
        devnull = fopen("/dev/null", "w");
    if (devnull)
        zoo_set_log_stream(devnull);
}

zhandle_t *raw_open(int port)
{
    char host[32];
    snprintf(host, sizeof(host), "127.0.0.1:%d", port);
    raw_quiet();
    zhandle_t *zh = zookeeper_init(host, NULL, RAW_SESSION, NULL, NULL, 0);
    for (int i = 0; zh && i < 500 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++)
        lock_sleep_ms(10);
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
    g->cfg.session_timeout_ms = session_ms;
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
    int rc = zoo_get_children(raw, parent, 0, &v);
    if (rc == ZNONODE)
        return 0;
    assert_int_equal(rc, ZOK);
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

int wait_for_kids(zhandle_t *raw, const char *key, int n)
{
    for (int i = 0; i < 1000; i++) {
        if (count_kids(raw, key) == n)
            return 0;
        lock_sleep_ms(10);
    }
    return -1;
}
