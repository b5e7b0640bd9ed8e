/* zookeeper_session.c - one client's ZooKeeper session on the
 * single-threaded C library: the loop that drives it through the seam, the
 * watchers the library calls from inside that loop, connect and reconnect,
 * the recipe's requests, the wait on a watch, the idle time that keeps the
 * session alive, the link changes kept for the engine, and the crash that
 * leaves the session to expire on the server.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "algorithms/zookeeper_session.h"
#include "algorithms/zookeeper_settings.h"

#define ZK_DEFAULT_SESSION_MS 10000 /* when the engine gives none */
#define ZK_POLL_MS            50    /* how often a waiter looks at the cancel flag */
#define NS_PER_MS             1000000ULL
#define ZK_SEVER_TRIES        8 /* loopback addresses tried for a refusing socket */
/* The longest the library's close may take (3 s to send closeSession, 1.5 s
 * for the reply), and a margin for the thread it runs on to get a core. */
#define ZK_CLOSE_WAIT_MS (3000 + 1500 + 500)
#define ZK_CLOSER_STACK  (128 * 1024) /* zookeeper_close keeps little on its stack */

static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;

/* The C client logs connection chatter to stderr, and the single-threaded
 * library formats every line into one static buffer that sessions driven
 * on different threads would share: no logging at all (level 0, as the
 * library's own tests set it). */
static void quiet_client_log(void)
{
    zoo_set_debug_level((ZooLogLevel)0);
}

/* A flood (the library retrying a dead ensemble every few ms)
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
    size_t at = s->n_links < ZK_LINKS_MAX ? s->n_links++ : ZK_LINKS_MAX - 1;
    s->links[at] = (struct lock_link_event){.t_ns = lock_now_ns(), .state = link};
}

/* Called from inside zookeeper_process (or zookeeper_interest, on a
 * connection given up), on the client's own thread. */
static void session_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh;
    (void)path;
    struct zk_session *s = ctx;
    if (type != ZOO_SESSION_EVENT)
        return;
    note_link(s, state);
    bool was = s->connected;
    s->connected = state == ZOO_CONNECTED_STATE;
    if (!s->connected)
        s->losses++;
    /* One lost connection, counted once: the library reports CONNECTING
     * only when a live connection drops, and an expiry it learns of later
     * (on reconnecting) is the same outage, already counted. */
    if (was && !s->connected)
        s->drops++;
    if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE)
        s->expired = true;
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
    s->watch_events++;
    /* A watch left by an earlier wait that gave up may fire later: only
     * the node being waited on now wakes the waiter. */
    if (path && strcmp(path, s->watching) == 0)
        s->fired = true;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* One turn of the loop the library's I/O thread would run: ask it what it
 * waits for and how long it may wait (a ping is due, a connection timed
 * out, a reconnect's back-off), wait for that through the seam but no
 * later than until_ns, and let it read, write and run the completions and
 * watchers. -1 when the handle is past use (expired, or none): there is
 * nothing to drive, and the caller must not wait on it. */
static int turn(struct lock_client *c, struct zk_session *s, uint64_t until_ns)
{
    if (s->zh == NULL)
        return -1;
    int fd = -1, interest = 0;
    struct timeval tv = {0, 0};
    if (zookeeper_interest(s->zh, &fd, &interest, &tv) == ZINVALIDSTATE)
        return -1;
    /* Any other failure (a connect refused, a connection timed out) was
     * handled inside: the watcher heard of it, and tv says when to try
     * again. */
    uint64_t wake =
        lock_now_ns() + (uint64_t)tv.tv_sec * 1000 * NS_PER_MS + (uint64_t)tv.tv_usec * 1000u;
    wake = min_u64(wake, until_ns);
    int events = 0;
    if (fd >= 0) {
        struct pollfd p = {.fd = fd,
                           .events = (short)(((interest & ZOOKEEPER_READ) ? POLLIN : 0) |
                                             ((interest & ZOOKEEPER_WRITE) ? POLLOUT : 0))};
        if (lock_wait(c, &p, 1, wake) > 0) {
            /* As the library's own I/O loop maps them; an error is looked at by
             * reading, whatever was asked. */
            if (p.revents & (POLLIN | POLLERR))
                events |= ZOOKEEPER_READ;
            if (p.revents & (POLLOUT | POLLHUP | POLLERR))
                events |= ZOOKEEPER_WRITE;
        }
    } else {
        lock_wait(c, NULL, 0, wake); /* a reconnect's back-off: yields even when due */
    }
    zookeeper_process(s->zh, events);
    return 0;
}

/* Move the drops the session watcher saw into c->connect_failures, and
 * into c->connect_refused too: lock.h counts a dropped ZooKeeper connection
 * as a server gone. The watcher has only the session to hand, not the
 * client; this runs at the end of each call. */
void zk_session_count_drops(struct lock_client *c, struct zk_session *s)
{
    uint64_t seen = s->drops;
    c->connect_failures += seen - s->drops_counted;
    c->connect_refused += seen - s->drops_counted;
    s->drops_counted = seen;
}

/* 0 connected; -1 the time ran out or the session ended first. */
static int wait_connected(struct lock_client *c, struct zk_session *s, uint32_t limit_ms)
{
    uint64_t until = lock_now_ns() + limit_ms * NS_PER_MS;
    while (!s->connected && !s->expired && lock_now_ns() < until)
        if (turn(c, s, until) < 0)
            break;
    return s->connected ? 0 : -1;
}

static uint32_t session_timeout(const struct lock_client *c)
{
    const struct zookeeper_spec *z = lock_settings(c->cfg, &zookeeper_family);
    return z->session_timeout_ms ? z->session_timeout_ms : ZK_DEFAULT_SESSION_MS;
}

int zk_session_open(struct lock_client *c, struct zk_session *s)
{
    uint32_t session = session_timeout(c);
    uint32_t limit = c->cfg->connect_timeout_ms ? c->cfg->connect_timeout_ms : session;
    pthread_once(&quiet_once, quiet_client_log);
    s->connected = s->expired = false;
    s->zh = zookeeper_init(s->hosts, session_watcher, (int)session, NULL, s, 0);
    if (s->zh == NULL) {
        c->connect_failures++;
        lock_set_error(c, LOCK_ERR_CONFIG, "zookeeper_init %s failed", s->hosts);
        return -1;
    }
    /* By default the library resolves its host list again at every
     * zookeeper_interest, with AI_ADDRCONFIG, which makes glibc ask the
     * kernel for every interface address over netlink each time: with the
     * client driving its own session that is every turn of its loop (10,000
     * clients spent seconds of system time on it before they connected).
     * The list is resolved again on a lost connection all the same. */
    zoo_set_servers_resolution_delay(s->zh, -1);
    if (wait_connected(c, s, limit) < 0) {
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

/* The session's watcher once its close has begun: what the close may
 * report (a connection lost while it sends) no longer concerns the
 * client, and must not reach its zk_session from the closer's thread. */
static void closing_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh;
    (void)type;
    (void)state;
    (void)path;
    (void)ctx;
}

/* A handle being closed on a thread of its own: zookeeper_close, then the
 * write end of done closed, which the waiting client reads as its end. */
struct closer {
    zhandle_t *zh;
    int done;
};

static void *close_on_own_thread(void *arg)
{
    struct closer *k = arg;
    zookeeper_close(k->zh);
    close(k->done);
    free(k);
    return NULL;
}

/* Start k on a detached thread; 0, or -1 with nothing started. */
static int start_closer(struct closer *k)
{
    pthread_attr_t attr;
    pthread_t t;
    if (pthread_attr_init(&attr) != 0)
        return -1;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, ZK_CLOSER_STACK);
    int rc = pthread_create(&t, &attr, close_on_own_thread, k);
    pthread_attr_destroy(&attr);
    return rc == 0 ? 0 : -1;
}

/* zookeeper_close on a connected handle sends closeSession, blocks up to
 * 3 s for it to leave and then up to 1.5 s for the server's reply (the
 * library's flush_send_queue and wait_for_session_to_be_closed): on a
 * worker, every other client on it would stand still meanwhile, and a
 * worker's clients leaving at the run's end would close one after the
 * other. So the library's own close runs unchanged on a short-lived thread
 * of its own, and the client waits for its end through the seam, no longer
 * than the library's own bounds allow (ZK_CLOSE_WAIT_MS), as the
 * multi-threaded library's caller waits on its I/O thread. The handle is
 * the closer's from then on: the client never touches it again, and its
 * watcher no longer reaches the client's session. Without a thread or a
 * pipe to be had, the close is the blocking one. */
void zk_session_close(struct lock_client *c, struct zk_session *s)
{
    zk_session_count_drops(c, s); /* before the close: closing is no lost connection */
    if (s->zh == NULL)
        return;
    zhandle_t *zh = s->zh;
    s->zh = NULL;
    zoo_set_watcher(zh, closing_watcher);
    int ends[2];
    struct closer *k = malloc(sizeof(*k));
    if (k == NULL || pipe2(ends, O_CLOEXEC) != 0) {
        free(k);
        zookeeper_close(zh); /* closeSession: the server drops our nodes at once */
        return;
    }
    *k = (struct closer){.zh = zh, .done = ends[1]};
    if (start_closer(k) < 0) {
        free(k);
        close(ends[1]);
        close(ends[0]);
        zookeeper_close(zh);
        return;
    }
    struct pollfd p = {.fd = ends[0], .events = POLLIN};
    uint64_t until = lock_now_ns() + ZK_CLOSE_WAIT_MS * NS_PER_MS;
    while (lock_wait(c, &p, 1, until) == 0 && lock_now_ns() < until)
        ; /* a wait may end early (a pause sat out): the deadline decides */
    close(ends[0]);
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

/* Drive the session until the watch set by zk_session_watch fires (1),
 * the deadline passes or the engine cancels (0), or the session ends (-1). */
int zk_session_wait_watch(struct lock_client *c, struct zk_session *s, uint64_t deadline)
{
    for (;;) {
        if (s->fired)
            return 1;
        if (s->expired)
            return -1;
        uint64_t now = lock_now_ms();
        if (now >= deadline || lock_cancelled(c))
            return 0;
        uint64_t until = deadline - now > ZK_POLL_MS ? now + ZK_POLL_MS : deadline;
        if (turn(c, s, until * NS_PER_MS) < 0)
            return -1; /* unrecoverable without the watcher's word: expired all the same */
    }
}

void zk_session_idle(struct lock_client *c, struct zk_session *s, uint64_t until_ns,
                     const atomic_int *cancel)
{
    for (uint64_t now = lock_now_ns(); now < until_ns; now = lock_now_ns()) {
        if (cancel && atomic_load_explicit(cancel, memory_order_relaxed))
            return;
        uint64_t wake = cancel ? min_u64(until_ns, now + ZK_POLL_MS * NS_PER_MS) : until_ns;
        if (turn(c, s, wake) < 0) {
            lock_sleep_until(c, until_ns, cancel); /* nothing left to keep alive */
            return;
        }
    }
}

/* What one request's completion leaves for the caller, who waits for it
 * by driving the session. */
struct zk_call {
    bool done;
    int rc;
    char *out; /* zk_create: the created path */
    size_t out_len;
    struct String_vector *kids; /* zk_children: a copy, the library frees its own */
};

/* Drive the session until the request sent with rc (the code of the
 * zoo_a* call) has its answer; a request never sent has none to wait for. */
static int await(struct lock_client *c, struct zk_session *s, struct zk_call *k, int rc)
{
    if (rc != ZOK)
        return rc;
    /* A handle past use failed every request it had sent as it turned so
     * (its cleanup runs the completions): none is left to come in later. */
    while (!k->done)
        if (turn(c, s, LOCK_FOREVER) < 0)
            return ZINVALIDSTATE;
    return k->rc;
}

static void created(int rc, const char *value, const void *data)
{
    struct zk_call *k = (struct zk_call *)data;
    k->rc = rc;
    if (rc == ZOK && k->out && k->out_len) {
        snprintf(k->out, k->out_len, "%s", value ? value : "");
    }
    k->done = true;
}

static void listed(int rc, const struct String_vector *strings, const void *data)
{
    struct zk_call *k = (struct zk_call *)data;
    k->rc = rc;
    if (rc == ZOK) {
        int32_t n = strings ? strings->count : 0;
        if (allocate_String_vector(k->kids, n) != 0)
            k->rc = ZSYSTEMERROR;
        for (int32_t i = 0; k->rc == ZOK && i < n; i++)
            if ((k->kids->data[i] = strdup(strings->data[i])) == NULL)
                k->rc = ZSYSTEMERROR;
        if (k->rc != ZOK)
            deallocate_String_vector(k->kids);
    }
    k->done = true;
}

static void voided(int rc, const void *data)
{
    struct zk_call *k = (struct zk_call *)data;
    k->rc = rc;
    k->done = true;
}

static void got_data(int rc, const char *value, int value_len, const struct Stat *stat,
                     const void *data)
{
    (void)value;
    (void)value_len;
    (void)stat;
    voided(rc, data);
}

int zk_create(struct lock_client *c, struct zk_session *s, const char *path, const char *value,
              int value_len, int mode, char *out, size_t out_len)
{
    struct zk_call k = {.out = out, .out_len = out_len};
    return await(
        c, s, &k,
        zoo_acreate(s->zh, path, value, value_len, &ZOO_OPEN_ACL_UNSAFE, mode, created, &k));
}

int zk_children(struct lock_client *c, struct zk_session *s, const char *path,
                struct String_vector *kids)
{
    struct zk_call k = {.kids = kids};
    return await(c, s, &k, zoo_aget_children(s->zh, path, 0, listed, &k));
}

int zk_delete(struct lock_client *c, struct zk_session *s, const char *path)
{
    struct zk_call k = {0};
    return await(c, s, &k, zoo_adelete(s->zh, path, -1, voided, &k));
}

/* getData rather than exists, as Curator does: on a node already gone it
 * leaves no watch behind. The ZooKeeper code of the call. */
int zk_session_watch(struct lock_client *c, struct zk_session *s,
                     const char path[static ZK_PATH_MAX])
{
    memcpy(s->watching, path, sizeof(s->watching));
    s->fired = false;
    struct zk_call k = {0};
    return await(c, s, &k, zoo_awget(s->zh, path, node_watcher, s, got_data, &k));
}

size_t zk_session_links(struct zk_session *s, struct lock_link_event *out, size_t max)
{
    size_t n = s->n_links < max ? s->n_links : max;
    memcpy(out, s->links, n * sizeof(*out));
    /* what did not fit waits for the next call */
    memmove(s->links, s->links + n, (s->n_links - n) * sizeof(*out));
    s->n_links -= n;
    return n;
}
