/* zookeeper_session.c - one client's ZooKeeper session: the watchers the
 * library calls on its completion thread, connect and reconnect, the wait
 * on a watch, the link changes kept for the engine, and the crash that
 * leaves the session to expire on the server.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "algorithms/zookeeper_session.h"

#define ZK_DEFAULT_SESSION_MS 10000 /* when the engine gives none */
#define ZK_POLL_MS            50    /* how often a waiter looks at the cancel flag */
#define ZK_SEVER_TRIES        8     /* loopback addresses tried for a refusing socket */

static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;

/* The C client logs connection chatter to stderr from its own threads, and
 * the stream is process-wide: aim it at /dev/null once. The FILE stays open
 * because the library may log until exit. */
static void quiet_client_log(void)
{
    FILE *devnull = fopen("/dev/null", "w"); // cppcheck-suppress resourceLeak
    if (devnull)
        zoo_set_log_stream(devnull);
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
}

/* Under mu. A flood (the library retrying a dead ensemble every few ms)
 * keeps the first ones and the last: the newest state is what matters. */
static void note_link(struct zk_session *s, int state)
{
    uint8_t link = state == ZOO_CONNECTED_STATE ? LOCK_LINK_CONNECTED
                   : state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE
                       ? LOCK_LINK_EXPIRED
                       : LOCK_LINK_CONNECTING;
    if (s->link_known && s->last_link == link)
        return; /* the same state again: no change */
    s->link_known = true;
    s->last_link = link;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    size_t at = s->n_links < ZK_LINKS_MAX ? s->n_links++ : ZK_LINKS_MAX - 1;
    s->links[at] = (struct lock_link_event){
        .t_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, .state = link};
    atomic_store(&s->links_pending, true);
}

/* Runs on the client library's completion thread. */
static void session_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh;
    (void)path;
    struct zk_session *s = ctx;
    if (type != ZOO_SESSION_EVENT)
        return;
    pthread_mutex_lock(&s->mu);
    note_link(s, state);
    bool was = s->connected;
    s->connected = state == ZOO_CONNECTED_STATE;
    if (!s->connected)
        atomic_fetch_add(&s->losses, 1);
    /* One lost connection, counted once: the library reports CONNECTING
     * only when a live connection drops, and an expiry it learns of later
     * (on reconnecting) is the same outage, already counted. */
    if (was && !s->connected)
        atomic_fetch_add(&s->drops, 1);
    if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE)
        s->expired = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* The watch on the node a waiter waits for. The library also hands every
 * watcher each session event; those are session_watcher's business. */
static void node_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh;
    (void)state;
    struct zk_session *s = ctx;
    if (type == ZOO_SESSION_EVENT || type == ZOO_NOTWATCHING_EVENT)
        return;
    atomic_fetch_add(&s->watch_events, 1);
    pthread_mutex_lock(&s->mu);
    /* A watch left by an earlier wait that gave up may fire later: only
     * the node being waited on now wakes the waiter. */
    if (path && strcmp(path, s->watching) == 0)
        s->fired = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static struct timespec deadline_ts(uint64_t at_ms)
{
    struct timespec ts = {.tv_sec = (time_t)(at_ms / 1000),
                          .tv_nsec = (long)(at_ms % 1000) * 1000000L};
    return ts;
}

/* lock_now_ms and the condition variable share CLOCK_MONOTONIC. */
static int init_sync(struct zk_session *s)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0)
        return -1;
    int rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0)
        return -1;
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        pthread_cond_destroy(&s->cv);
        return -1;
    }
    s->sync_ready = true;
    return 0;
}

int zk_session_init(struct lock_client *c, struct zk_session *s)
{
    if (init_sync(s) < 0) {
        lock_set_error(c, LOCK_ERR_IO, "cannot initialise a mutex");
        return -1;
    }
    return 0;
}

void zk_session_fini(struct zk_session *s)
{
    if (s->sync_ready) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
    }
}

/* Move the drops the session watcher saw into c->connect_failures, and
 * into c->connect_refused too: lock.h counts a dropped ZooKeeper connection
 * as a server gone. The watcher runs on the library's thread and never
 * writes the client; this runs on the client's own, at the end of each
 * call. */
void zk_session_count_drops(struct lock_client *c, struct zk_session *s)
{
    uint64_t seen = atomic_load(&s->drops);
    c->connect_failures += seen - s->drops_counted;
    c->connect_refused += seen - s->drops_counted;
    s->drops_counted = seen;
}

/* 0 connected; -1 the time ran out or the session ended first. */
static int wait_connected(struct zk_session *s, uint32_t limit_ms)
{
    struct timespec until = deadline_ts(lock_now_ms() + limit_ms);
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    while (!s->connected && !s->expired && rc == 0)
        rc = pthread_cond_timedwait(&s->cv, &s->mu, &until);
    int ok = s->connected ? 0 : -1;
    pthread_mutex_unlock(&s->mu);
    return ok;
}

static uint32_t session_timeout(const struct lock_client *c)
{
    return c->cfg->session_timeout_ms ? c->cfg->session_timeout_ms : ZK_DEFAULT_SESSION_MS;
}

int zk_session_open(struct lock_client *c, struct zk_session *s)
{
    uint32_t session = session_timeout(c);
    uint32_t limit = c->cfg->connect_timeout_ms ? c->cfg->connect_timeout_ms : session;
    pthread_once(&quiet_once, quiet_client_log);
    pthread_mutex_lock(&s->mu);
    s->connected = s->expired = false;
    pthread_mutex_unlock(&s->mu);
    s->zh = zookeeper_init(s->hosts, session_watcher, (int)session, NULL, s, 0);
    if (s->zh == NULL) {
        c->connect_failures++;
        lock_set_error(c, LOCK_ERR_CONFIG, "zookeeper_init %s failed", s->hosts);
        return -1;
    }
    if (wait_connected(s, limit) < 0) {
        /* Never connected, so the watcher counted nothing: one failed
         * open, counted here once. Not as refused: the library does not
         * say whether nobody listened or the server was slow. */
        c->connect_failures++;
        zookeeper_close(s->zh);
        s->zh = NULL;
        lock_set_error(c, LOCK_ERR_IO, "no ZooKeeper session with %s within %u ms", s->hosts,
                       limit);
        return -1;
    }
    /* The server clamps the timeout to 2..20 ticks; the library keeps what
     * it granted, and that is what the holder can count on. */
    s->session_ms = zoo_recv_timeout(s->zh);
    return 0;
}

int64_t zk_session_id(const struct zk_session *s)
{
    const clientid_t *id = s->zh ? zoo_client_id(s->zh) : NULL;
    return id ? id->client_id : 0;
}

/* An expired session is final in the C client: open a new one. 0 the
 * session lives on, 1 a new one was opened, -1. */
int zk_session_ensure(struct lock_client *c, struct zk_session *s)
{
    if (s->zh != NULL && is_unrecoverable(s->zh) == ZOK)
        return 0;
    if (s->zh != NULL)
        zookeeper_close(s->zh);
    s->zh = NULL;
    return zk_session_open(c, s) < 0 ? -1 : 1;
}

int zk_session_hosts(struct lock_client *c, struct zk_session *s)
{
    size_t used = 0;
    for (size_t i = 0; i < c->cfg->n_endpoints; i++) {
        const struct lock_endpoint *e = &c->cfg->endpoints[i];
        int n = snprintf(s->hosts + used, sizeof(s->hosts) - used, "%s%s:%d", i ? "," : "", e->host,
                         e->port);
        if (n < 0 || (size_t)n >= sizeof(s->hosts) - used) {
            lock_set_error(c, LOCK_ERR_CONFIG, "ZooKeeper host list too long");
            return -1;
        }
        used += (size_t)n;
    }
    return 0;
}

void zk_session_close(struct lock_client *c, struct zk_session *s)
{
    zk_session_count_drops(c, s); /* before the close: closing is no lost connection */
    if (s->zh != NULL)
        zookeeper_close(s->zh); /* closeSession: the server drops our nodes at once */
}

/* Does any endpoint resolve to ip? */
static bool is_endpoint(const struct lock_config *cfg, in_addr_t ip)
{
    bool found = false;
    for (size_t i = 0; i < cfg->n_endpoints && !found; i++) {
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
        if (getaddrinfo(cfg->endpoints[i].host, NULL, &hints, &res) != 0)
            continue;
        for (const struct addrinfo *p = res; p && !found; p = p->ai_next)
            found = ((const struct sockaddr_in *)(const void *)p->ai_addr)->sin_addr.s_addr == ip;
        freeaddrinfo(res);
    }
    return found;
}

/* A socket bound to a loopback address no endpoint uses, never listening:
 * connections to it are refused. The address differs because the client
 * library compares server lists by IP alone, ports ignored. -1 if none. */
static int refusing_socket(const struct lock_config *cfg, char *host, size_t len)
{
    for (in_addr_t last = 2; last < 2 + ZK_SEVER_TRIES; last++) {
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_addr.s_addr = htonl((INADDR_LOOPBACK & ~0xffu) | last)};
        socklen_t alen = sizeof(a);
        if (is_endpoint(cfg, a.sin_addr.s_addr))
            continue;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        if (bind(fd, (struct sockaddr *)&a, alen) == 0 &&
            getsockname(fd, (struct sockaddr *)&a, &alen) == 0) {
            char ip[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
            snprintf(host, len, "%s:%u", ip, (unsigned)ntohs(a.sin_port));
            return fd;
        }
        close(fd);
    }
    return -1;
}

/* zookeeper_close would send closeSession and the server would delete our
 * ephemeral nodes at once; a dead process sends nothing. So first give the
 * handle a server list of one address that refuses: zoo_set_servers drops
 * the live connection (a TCP close does not end a ZooKeeper session) and
 * every reconnect fails. zookeeper_close on a handle that is not connected
 * sends nothing and frees it all; the server expires the session after
 * its timeout, as it does for a client that died. Should no refusing
 * socket be had (out of descriptors), the close is a clean one. */
static void sever_and_close(const struct lock_config *cfg, zhandle_t *zh)
{
    char host[INET_ADDRSTRLEN + 8];
    int fd = refusing_socket(cfg, host, sizeof(host));
    if (fd >= 0)
        zoo_set_servers(zh, host);
    zookeeper_close(zh);
    if (fd >= 0)
        close(fd); /* only now: it must refuse until the handle is gone */
}

void zk_session_crash(struct lock_client *c, struct zk_session *s)
{
    zk_session_count_drops(c, s); /* before the severing, which is the crash, not a fault */
    if (s->zh != NULL)
        sever_and_close(c->cfg, s->zh);
}

/* Sleep until the watch set by zk_session_watch fires (1), the deadline
 * passes or the engine cancels (0), or the session ends (-1). */
int zk_session_wait_watch(struct lock_client *c, struct zk_session *s, uint64_t deadline)
{
    int res = 1;
    pthread_mutex_lock(&s->mu);
    while (!s->fired) {
        uint64_t now = lock_now_ms();
        if (s->expired) {
            res = -1;
            break;
        }
        if (now >= deadline || lock_cancelled(c)) {
            res = 0;
            break;
        }
        uint64_t until = deadline - now > ZK_POLL_MS ? now + ZK_POLL_MS : deadline;
        struct timespec ts = deadline_ts(until);
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    pthread_mutex_unlock(&s->mu);
    return res;
}

/* getData rather than exists, as Curator does: on a node already gone it
 * leaves no watch behind. The ZooKeeper code of the call. */
int zk_session_watch(struct zk_session *s, const char path[static ZK_PATH_MAX])
{
    pthread_mutex_lock(&s->mu);
    memcpy(s->watching, path, sizeof(s->watching));
    s->fired = false;
    pthread_mutex_unlock(&s->mu);
    char data[LOCK_OWNER_MAX];
    int len = (int)sizeof(data);
    return zoo_wget(s->zh, path, node_watcher, s, data, &len, NULL);
}

size_t zk_session_links(struct zk_session *s, struct lock_link_event *out, size_t max)
{
    if (!s->sync_ready || !atomic_load(&s->links_pending))
        return 0;
    pthread_mutex_lock(&s->mu);
    size_t n = s->n_links < max ? s->n_links : max;
    memcpy(out, s->links, n * sizeof(*out));
    /* what did not fit waits for the next call */
    memmove(s->links, s->links + n, (s->n_links - n) * sizeof(*out));
    s->n_links -= n;
    atomic_store(&s->links_pending, s->n_links > 0);
    pthread_mutex_unlock(&s->mu);
    return n;
}
