/* etcd_server.c - the server kind "etcd": one etcd 3.4 member or a
 * cluster of three, on loopback, as SETUP.md starts them, with a 500 ms
 * election timeout so that they grant 1 s leases (etcd_server.h). A member serves
 * once GET /health says {"health":"true"} (it has a leader); the one
 * whose maintenance status names itself as leader leads. Its data dir
 * lives in its folder and is kept across every fault: a restart with the
 * same command rejoins (the --initial-cluster flags are ignored once data
 * exists). The fleet may block, so its HTTP calls use libcurl's easy
 * interface with short timeouts: a paused member accepts TCP and hangs.
 */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fleet/cluster.h"
#include "sim/fleet/etcd_server.h"
#include "sim/fleet/server_kind.h"
#include "sim/fleet/spawn.h"
#include "sim/record/run_meta.h"

extern const struct server_kind server_etcd;

/* Short: /health on a survivor blocks ~1 s right after a kill (SETUP.md),
 * and a paused member never answers; the ready loop asks again. */
#define ASK_TIMEOUT_MS 1500

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_start(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct body {
    char *buf;
    size_t len, cap;
};

static size_t take(char *data, size_t size, size_t n, void *arg)
{
    struct body *b = arg;
    size_t len = size * n;
    if (b->len + len + 1 > b->cap)
        len = b->cap - 1 - b->len; /* a status or health answer is small: the rest is cut */
    memcpy(b->buf + b->len, data, len);
    b->len += len;
    b->buf[b->len] = '\0';
    return size * n;
}

int etcd_server_ask(int port, const char *path, const char *post, char *reply, size_t len)
{
    if (len == 0)
        return -1;
    pthread_once(&curl_once, curl_start);
    CURL *h = curl_easy_init();
    if (h == NULL)
        return -1;
    char url[128];
    snprintf(url, sizeof(url), "http://%s:%d%s", cluster_port_addr(port), port, path);
    struct body b = {.buf = reply, .len = 0, .cap = len};
    reply[0] = '\0';
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)ASK_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)ASK_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, take);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    if (post)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, post);
    long code = 0;
    CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    return rc == CURLE_OK && code == 200 ? (int)b.len : -1;
}

/* The member's name is its folder's (etcd-1), which also names it in
 * --initial-cluster, written by start into the folder's initial-cluster
 * file: command sees one server only. */
static const char *member_name(const struct managed_server *s)
{
    const char *slash = strrchr(s->dir, '/');
    return slash ? slash + 1 : s->dir;
}

static void command(struct spawn *sp, const struct managed_server *s)
{
    char initial[1024] = "";
    char path[320];
    snprintf(path, sizeof(path), "%.250s/initial-cluster", s->dir);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(initial, sizeof(initial), f) == NULL)
            initial[0] = '\0';
        initial[strcspn(initial, "\n")] = '\0';
        fclose(f);
    }
    spawn_arg(sp, "%s", spawn_env_or("LOCKLAB_ETCD", "etcd"));
    spawn_arg(sp, "--logger=zap"); /* else every start warns that capnslog is deprecated */
    spawn_arg(sp, "--log-outputs=%s/%s", s->dir, s->kind->log);
    spawn_arg(sp, "--name=%s", member_name(s));
    spawn_arg(sp, "--data-dir=%s/data", s->dir);
    /* leases from 1 s (etcd_server.h): the resolved lease rests on them */
    spawn_arg(sp, "--heartbeat-interval=%d", ETCD_HEARTBEAT_MS);
    spawn_arg(sp, "--election-timeout=%d", ETCD_ELECTION_TIMEOUT_MS);
    spawn_arg(sp, "--listen-client-urls=http://%s:%d", s->addr, s->port);
    spawn_arg(sp, "--advertise-client-urls=http://%s:%d", s->addr, s->port);
    spawn_arg(sp, "--listen-peer-urls=http://%s:%d", s->addr, s->peer_port);
    spawn_arg(sp, "--initial-advertise-peer-urls=http://%s:%d", s->addr, s->peer_port);
    if (initial[0])
        spawn_arg(sp, "--initial-cluster=%s", initial);
    spawn_arg(sp, "--initial-cluster-state=new");
    /* each cluster its own token (its run folder, the members' common
     * parent): members of another run never join it */
    const char *name = member_name(s);
    spawn_arg(sp, "--initial-cluster-token=%.*s", (int)(name - s->dir), s->dir);
}

static int write_initial_cluster(struct managed_server *const *m, size_t n, size_t i)
{
    FILE *f = cluster_server_file(m[i]->dir, "initial-cluster");
    if (f == NULL)
        return -1;
    for (size_t j = 0; j < n; j++)
        fprintf(f, "%s%s=http://%s:%d", j ? "," : "", member_name(m[j]), m[j]->addr,
                m[j]->peer_port);
    fputc('\n', f);
    return fclose(f);
}

static int start(struct cluster *c, size_t count, char *err, size_t errlen)
{
    struct managed_server *m[CLUSTER_MAX_SERVERS];
    if (count != 1 && count != 3) {
        snprintf(err, errlen, "an etcd cluster of %zu: locklab runs 1 or 3", count);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        m[i] = cluster_add_server(c, &server_etcd, err, errlen);
        if (m[i] == NULL)
            goto fail;
        m[i]->port = cluster_free_port();
        m[i]->peer_port = cluster_free_port();
        if (m[i]->port < 0 || m[i]->peer_port < 0 || m[i]->port == m[i]->peer_port) {
            snprintf(err, errlen, "no free loopback ports for etcd");
            goto fail;
        }
    }
    /* All members start before any is waited for: /health says true only
     * once a quorum has elected a leader. */
    for (size_t i = 0; i < count; i++) {
        if (write_initial_cluster(m, count, i) < 0) {
            snprintf(err, errlen, "cannot write %s/initial-cluster: %s", m[i]->dir,
                     strerror(errno));
            goto fail;
        }
        if (spawn_start(m[i], err, errlen) < 0)
            goto fail;
    }
    for (size_t i = 0; i < count; i++) {
        struct spawn_wait w;
        if (spawn_wait_ready(m[i], count, &w) != 0) {
            spawn_failed(m[i], &w, err, errlen);
            goto fail;
        }
    }
    return 0;
fail:
    cluster_stop(c, NULL);
    return -1;
}

static bool answers(int port)
{
    char reply[256];
    if (etcd_server_ask(port, "/health", NULL, reply, sizeof(reply)) < 0)
        return false;
    json_t *j = json_loads(reply, 0, NULL);
    const char *h = json_string_value(json_object_get(j, "health"));
    bool ok = h != NULL && strcmp(h, "true") == 0;
    json_decref(j);
    return ok;
}

/* GET /version: {"etcdserver":"3.4.23","etcdcluster":"3.4.0"}; the
 * server's is the version, the whole answer kept (the cluster's too). */
static int version(const char *host, int port, struct server_version *v)
{
    char ask[320], reply[1024];
    snprintf(ask, sizeof(ask), "GET /version HTTP/1.0\r\nHost: %.200s:%d\r\n\r\n", host, port);
    if (server_ask(host, port, ask, NULL, reply, sizeof(reply), v->why, sizeof(v->why)) < 0)
        return -1;
    const char *body = strstr(reply, "\r\n\r\n");
    if (body == NULL) {
        snprintf(v->why, sizeof(v->why), "GET /version gave no HTTP answer: %.*s",
                 (int)strcspn(reply, "\r\n"), reply);
        return -1;
    }
    body += 4;
    json_t *j = json_loads(body, 0, NULL);
    const char *server = json_string_value(json_object_get(j, "etcdserver"));
    bool ok = server && server[0]; /* server is j's: read before j is freed */
    if (ok) {
        snprintf(v->version, sizeof(v->version), "%s", server);
        snprintf(v->answer, sizeof(v->answer), "%.*s", (int)strcspn(body, "\r\n"), body);
    } else {
        snprintf(v->why, sizeof(v->why), "GET /version gave no etcdserver: %.*s",
                 (int)strcspn(reply, "\r\n"), reply);
    }
    json_decref(j);
    return ok ? 0 : -1;
}

/* ids are uint64 as JSON strings: compared as strings, never as doubles */
static bool leads(int port)
{
    char reply[1024];
    if (etcd_server_ask(port, "/v3/maintenance/status", "{}", reply, sizeof(reply)) < 0)
        return false;
    json_t *j = json_loads(reply, 0, NULL);
    const char *leader = json_string_value(json_object_get(j, "leader"));
    const char *me = json_string_value(json_object_get(json_object_get(j, "header"), "member_id"));
    bool ok = leader && me && strcmp(leader, me) == 0;
    json_decref(j);
    return ok;
}

const struct server_kind server_etcd = {
    .name = "etcd",
    .node_prefix = "etcd",
    .log = "etcd.log",
    .ready_base_ms = 15000, /* SETUP.md: one 0.83 s, three ~2.4 s; room for a loaded box */
    .ready_poll_ms = 50,
    .ready_sign = "GET /health to say {\"health\":\"true\"}",
    .one_service = true,
    .command = command,
    .answers = answers,
    .version = version,
    .leads = leads,
    .roles = SERVER_ROLE_BIT(SERVER_ROLE_LEADER) | SERVER_ROLE_BIT(SERVER_ROLE_FOLLOWER),
    .follower_word = "follower",
    .lone = "a single etcd",
    .followers_setting = "lock.etcd.nodes: 3",
    .keeps_data = true, /* its data dir, the raft log and the keys */
    .start = start,
    /* 0: `cluster up` starts the fleet it always did unless --etcd-nodes asks */
    .cluster_nodes = 0,
    .cluster_counts = 0xb, /* 0, 1, 3 */
    .cluster_counts_text = "0, 1 or 3",
    .option_arg = "H:P[,...]",
    .option_help = "use this etcd cluster (client URLs) instead of starting it",
    .host_needs = {"etcd", NULL},
    .host_packages = "etcd-server",
    .on_hosts = true,
};
