/* etcd_wire.c - etcd's v3 JSON gateway for one lock client, over
 * libcurl's multi interface. libcurl tells which sockets it wants watched
 * (CURLMOPT_SOCKETFUNCTION) and when it wants to be called back
 * (CURLMOPT_TIMERFUNCTION); pump() turns those into pollfds and a deadline
 * for lock_wait, the seam, and hands what became ready back to
 * curl_multi_socket_action. curl_multi_fdset is not used: it skips
 * descriptors past FD_SETSIZE, which a run with many clients reaches.
 *
 * One multi handle a thread, shared by the wires made on it (a hub): since
 * 7.68 libcurl gives every multi handle a socketpair of its own (its
 * wakeup), so a multi handle a client cost two descriptors besides its
 * connections, and 10,000 clients ran out of a 20,000 limit on open files
 * before half of them had connected (docs/etcd.md). A client still rides
 * its own connections only: each wire keeps them in a share of its own
 * (CURL_LOCK_DATA_CONNECT), as clientv3 keeps one connection a client.
 * A wire sleeps on its own sockets and deadline alone; libcurl's timer is
 * the multi's, so each wire wakes for the timer its own calls set and for
 * its own connect timeout, and whoever wakes runs what has expired.
 */
#include "algorithms/etcd_wire.h"

#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SOCKS    8
#define MAX_ANSWER   (1u << 20) /* a lock's ranges are one key; anything larger is wrong */
#define NS_PER_MS    1000000ull
#define PATH_MAX_LEN 64
/* gRPC's connection back-off, which clientv3 3.4 keeps (grpc-go's
 * DefaultConfig): 1 s, times 1.6 after each failed dial, +-20 %, at most
 * 120 s; a connection made resets it. */
#define DIAL_BASE_MS 1000u
#define DIAL_MAX_MS  120000u
#define DIAL_JITTER  20 /* percent */

struct etcd_wire;

struct xfer {
    struct etcd_wire *w;
    CURL *h;
    char *body; /* the request, owned (json_dumps) */
    char *buf;  /* the answer so far */
    size_t len, cap;
    uint64_t start_ns;
    bool active; /* in the multi */
    bool done;
    bool overflow;
    CURLcode rc;
};

struct hub {
    CURLM *m;
    pthread_mutex_t mu;        /* a wire may be freed on another thread (tests) */
    size_t refs;               /* the thread's own, and one a wire */
    struct etcd_wire *calling; /* the wire inside a libcurl call on m */
    bool timer_set;
    uint64_t timer_at_ns;
};

struct etcd_wire {
    struct lock_client *c;
    struct hub *hub;
    CURLSH *own; /* this client's connections, nobody else's */
    struct curl_slist *hdrs;
    struct xfer unary, watch;
    size_t ep; /* the member dialled now */
    struct {
        curl_socket_t fd;
        int what;             /* CURL_POLL_IN, _OUT, _INOUT */
        const struct xfer *x; /* whose */
    } socks[MAX_SOCKS];
    size_t n_socks;
    bool timer_set; /* the multi's timer as this wire's own calls left it */
    uint64_t timer_at_ns;
    uint64_t dial_after_ns[LOCK_ENDPOINT_MAX]; /* a member's back-off after a failed dial */
    uint32_t backoff_ms[LOCK_ENDPOINT_MAX];    /* its next back-off; 0: none yet */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;
static pthread_key_t hub_key;
static int hub_key_rc = -1;

static void hub_put(struct hub *h)
{
    pthread_mutex_lock(&h->mu);
    bool last = --h->refs == 0;
    pthread_mutex_unlock(&h->mu);
    if (!last)
        return;
    curl_multi_cleanup(h->m);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

/* A thread ends: its hub lives on while a wire made there does. */
static void hub_thread_gone(void *h)
{
    hub_put(h);
}

static void curl_start(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    hub_key_rc = pthread_key_create(&hub_key, hub_thread_gone);
}

static void hub_lock(struct etcd_wire *w)
{
    pthread_mutex_lock(&w->hub->mu);
    w->hub->calling = w;
}

static void hub_unlock(struct etcd_wire *w)
{
    w->hub->calling = NULL;
    pthread_mutex_unlock(&w->hub->mu);
}

static struct xfer *xfer_of(CURL *easy)
{
    struct xfer *x = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
    return x;
}

/* A wire's connections are its own, so the socket is its transfer's. */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void)userp;
    (void)socketp;
    const struct xfer *x = xfer_of(easy);
    if (x == NULL)
        return 0; /* the cache closing an idle connection: watched by nobody */
    struct etcd_wire *w = x->w;
    size_t i = 0;
    while (i < w->n_socks && w->socks[i].fd != fd)
        i++;
    if (what == CURL_POLL_REMOVE) {
        if (i < w->n_socks)
            w->socks[i] = w->socks[--w->n_socks];
        return 0;
    }
    if (i == w->n_socks) {
        if (w->n_socks == MAX_SOCKS)
            return -1; /* two transfers never need this many */
        w->n_socks++;
    }
    w->socks[i].fd = fd;
    w->socks[i].what = what;
    w->socks[i].x = x;
    return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *userp)
{
    (void)m;
    struct hub *h = userp;
    h->timer_set = timeout_ms >= 0;
    if (h->timer_set)
        h->timer_at_ns = lock_now_ns() + (uint64_t)timeout_ms * NS_PER_MS;
    if (h->calling) {
        h->calling->timer_set = h->timer_set;
        h->calling->timer_at_ns = h->timer_at_ns;
    }
    return 0;
}

/* The calling thread's hub, one more reference taken. NULL on no memory. */
static struct hub *hub_get(void)
{
    struct hub *h = pthread_getspecific(hub_key);
    if (h == NULL) {
        h = calloc(1, sizeof(*h));
        if (h == NULL)
            return NULL;
        h->m = curl_multi_init();
        if (h->m == NULL || pthread_mutex_init(&h->mu, NULL) != 0) {
            if (h->m)
                curl_multi_cleanup(h->m);
            free(h);
            return NULL;
        }
        curl_multi_setopt(h->m, CURLMOPT_SOCKETFUNCTION, on_socket);
        curl_multi_setopt(h->m, CURLMOPT_SOCKETDATA, h);
        curl_multi_setopt(h->m, CURLMOPT_TIMERFUNCTION, on_timer);
        curl_multi_setopt(h->m, CURLMOPT_TIMERDATA, h);
        h->refs = 1; /* the thread's, given back as it ends */
        if (pthread_setspecific(hub_key, h) != 0) {
            hub_put(h);
            return NULL;
        }
    }
    pthread_mutex_lock(&h->mu);
    h->refs++;
    pthread_mutex_unlock(&h->mu);
    return h;
}

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
    struct xfer *x = arg;
    size_t len = size * n;
    if (x->len + len + 1 > x->cap) {
        size_t cap = x->cap ? x->cap : 1024;
        while (cap < x->len + len + 1)
            cap *= 2;
        char *p = cap <= MAX_ANSWER ? realloc(x->buf, cap) : NULL;
        if (p == NULL) {
            x->overflow = true;
            return 0; /* libcurl ends the transfer with CURLE_WRITE_ERROR */
        }
        x->buf = p;
        x->cap = cap;
    }
    memcpy(x->buf + x->len, data, len);
    x->len += len;
    x->buf[x->len] = '\0';
    return len;
}

static int xfer_init(struct etcd_wire *w, struct xfer *x)
{
    x->w = w;
    x->h = curl_easy_init();
    if (x->h == NULL)
        return -1;
    curl_easy_setopt(x->h, CURLOPT_PRIVATE, (char *)x);
    curl_easy_setopt(x->h, CURLOPT_SHARE, w->own);
    curl_easy_setopt(x->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(x->h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, w->hdrs);
    curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(x->h, CURLOPT_WRITEDATA, x);
    /* No timer of libcurl's may fall due while this client sleeps: libcurl
     * runs every expired timer of the multi in any wire's call, and a
     * transfer it finishes there leaves its owner asleep until its
     * deadline (seen: GET /version answered, noticed 3 s later). So the
     * connect timeout is this file's (connect_late), and happy eyeballs'
     * 200 ms timer is pushed past any request's life (an endpoint is one
     * address; a refused one moves on to the next at once anyway). */
    curl_easy_setopt(x->h, CURLOPT_HAPPY_EYEBALLS_TIMEOUT_MS, 3600000L);
    return 0;
}

/* With the hub locked. */
static void xfer_stop_locked(struct etcd_wire *w, struct xfer *x)
{
    if (x->active)
        curl_multi_remove_handle(w->hub->m, x->h);
    x->active = false;
}

static void xfer_stop(struct etcd_wire *w, struct xfer *x)
{
    hub_lock(w);
    xfer_stop_locked(w, x);
    hub_unlock(w);
}

static void xfer_free(struct etcd_wire *w, struct xfer *x)
{
    xfer_stop_locked(w, x);
    if (x->h)
        curl_easy_cleanup(x->h);
    free(x->body);
    free(x->buf);
}

static int xfer_start(struct etcd_wire *w, struct xfer *x, const char *path, const json_t *req)
{
    const struct lock_endpoint *ep = &w->c->cfg->endpoints[w->ep];
    char url[LOCK_ENDPOINT_MAX + sizeof(ep->host) + PATH_MAX_LEN + 32];
    xfer_stop(w, x);
    free(x->body);
    x->body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    if (req && x->body == NULL) {
        lock_set_error(w->c, LOCK_ERR_UNSENT, "etcd: no memory for a request");
        return -1;
    }
    snprintf(url, sizeof(url), "http://%s:%d%s", ep->host, ep->port, path);
    curl_easy_setopt(x->h, CURLOPT_URL, url);
    if (req) {
        curl_easy_setopt(x->h, CURLOPT_POSTFIELDS, x->body);
        curl_easy_setopt(x->h, CURLOPT_POSTFIELDSIZE, (long)strlen(x->body));
    } else
        curl_easy_setopt(x->h, CURLOPT_HTTPGET, 1L);
    x->len = 0;
    x->done = x->overflow = false;
    x->rc = CURLE_OK;
    x->start_ns = lock_now_ns();
    hub_lock(w);
    CURLMcode mc = curl_multi_add_handle(w->hub->m, x->h);
    hub_unlock(w);
    if (mc != CURLM_OK) {
        lock_set_error(w->c, LOCK_ERR_UNSENT, "etcd: libcurl refused a transfer");
        return -1;
    }
    x->active = true;
    return 0;
}

/* With the hub locked: run what the multi's timer says is due, and take
 * every finished transfer's result to its wire (any wire of the hub). */
static void hub_run(struct etcd_wire *w)
{
    struct hub *h = w->hub;
    int running;
    uint64_t now = lock_now_ns();
    if (h->timer_set && now >= h->timer_at_ns) {
        uint64_t was = h->timer_at_ns;
        curl_multi_socket_action(h->m, CURL_SOCKET_TIMEOUT, 0, &running);
        /* libcurl calls back only when its earliest expiry changed: none
         * means nothing had expired by its clock yet, a hair behind ours */
        if (h->timer_set && h->timer_at_ns == was)
            h->timer_at_ns = now + NS_PER_MS;
    }
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(h->m, &left)) != NULL) {
        struct xfer *x = msg->msg == CURLMSG_DONE ? xfer_of(msg->easy_handle) : NULL;
        if (x == NULL)
            continue;
        x->done = true;
        x->rc = msg->data.result;
    }
}

static bool finished(const struct xfer *x)
{
    return x->active && x->done;
}

/* Is a transfer of w still connecting? libcurl watches a connecting
 * socket for writing alone, and an answer's for reading. */
static bool connecting(const struct etcd_wire *w, const struct xfer *x)
{
    if (!x->active || x->done)
        return false;
    for (size_t i = 0; i < w->n_socks; i++)
        if (w->socks[i].x == x && (w->socks[i].what & CURL_POLL_IN))
            return false;
    curl_off_t us = 0;
    curl_easy_getinfo(x->h, CURLINFO_CONNECT_TIME_T, &us);
    return us == 0;
}

static uint64_t connect_deadline(const struct etcd_wire *w, const struct xfer *x)
{
    uint32_t ct = w->c->cfg->connect_timeout_ms;
    return ct ? x->start_ns + (uint64_t)ct * NS_PER_MS : LOCK_FOREVER;
}

/* The connect timeout, kept here: a transfer still connecting past it
 * ends as libcurl's CONNECTTIMEOUT would (nothing was sent). */
static bool connect_late(struct etcd_wire *w, struct xfer *x)
{
    if (!connecting(w, x) || lock_now_ns() < connect_deadline(w, x))
        return false;
    x->done = true;
    x->rc = CURLE_OPERATION_TIMEDOUT;
    return true;
}

/* When this wire must look again though no socket of its own is ready:
 * the multi's timer as its own calls left it, or the connect timeout of a
 * transfer still connecting. */
static uint64_t wake_at(struct etcd_wire *w, uint64_t deadline_ns)
{
    uint64_t wake = deadline_ns;
    if (w->timer_set && w->timer_at_ns < wake)
        wake = w->timer_at_ns;
    const struct xfer *xs[2] = {&w->unary, &w->watch};
    for (int i = 0; i < 2; i++)
        if (connecting(w, xs[i]) && connect_deadline(w, xs[i]) < wake)
            wake = connect_deadline(w, xs[i]);
    return wake;
}

static bool watched(const struct etcd_wire *w, curl_socket_t fd)
{
    for (size_t i = 0; i < w->n_socks; i++)
        if (w->socks[i].fd == fd)
            return true;
    return false;
}

/* One round: wait through the seam for what libcurl wants of this wire,
 * at most until deadline_ns, and let it act on what became ready. 0, or
 * -1 with c->err set when the wait itself failed. */
static int pump(struct etcd_wire *w, uint64_t deadline_ns)
{
    struct pollfd fds[MAX_SOCKS];
    hub_lock(w);
    hub_run(w);
    bool done = finished(&w->unary) || finished(&w->watch);
    size_t n = w->n_socks;
    for (size_t i = 0; i < n; i++) {
        fds[i].fd = w->socks[i].fd;
        fds[i].events = (short)(((w->socks[i].what & CURL_POLL_IN) ? POLLIN : 0) |
                                ((w->socks[i].what & CURL_POLL_OUT) ? POLLOUT : 0));
        fds[i].revents = 0;
    }
    uint64_t wake = wake_at(w, deadline_ns);
    hub_unlock(w);
    if (done)
        return 0; /* another wire's round finished it */
    int ready = lock_wait(w->c, fds, n, wake);
    if (ready < 0 && errno != EINTR) {
        lock_set_error(w->c, LOCK_ERR_IO, "etcd: waiting for the gateway: %s", strerror(errno));
        return -1;
    }
    hub_lock(w);
    if (w->timer_set && lock_now_ns() >= w->timer_at_ns)
        w->timer_set = false; /* woken for it: whatever is due runs below */
    int running;
    for (size_t i = 0; ready > 0 && i < n; i++) {
        int ev = 0;
        if (fds[i].revents & (POLLIN | POLLHUP))
            ev |= CURL_CSELECT_IN;
        if (fds[i].revents & POLLOUT)
            ev |= CURL_CSELECT_OUT;
        if (fds[i].revents & (POLLERR | POLLNVAL))
            ev |= CURL_CSELECT_ERR;
        if (ev && watched(w, fds[i].fd)) /* another's round may have closed it */
            curl_multi_socket_action(w->hub->m, fds[i].fd, ev, &running);
    }
    hub_run(w);
    hub_unlock(w);
    return 0;
}

/* The next dial of member e waits gRPC's back-off. */
static void dial_failed(struct etcd_wire *w, size_t e)
{
    uint32_t b = w->backoff_ms[e] ? w->backoff_ms[e] : DIAL_BASE_MS;
    uint64_t span = (uint64_t)b * DIAL_JITTER / 100;
    uint64_t ms = b - span + lock_random(w->c, 2 * span + 1);
    w->dial_after_ns[e] = lock_now_ns() + ms * NS_PER_MS;
    w->backoff_ms[e] = b >= DIAL_MAX_MS / 16 * 10 ? DIAL_MAX_MS : b * 16 / 10;
}

/* A transfer that ended without an answer: count what the connection's
 * loss says and move on to the next member for the next request. Whether
 * the request surely never left (true: nothing connected). */
static bool lost(struct etcd_wire *w, struct xfer *x)
{
    long os_errno = 0, connected = 0;
    curl_easy_getinfo(x->h, CURLINFO_OS_ERRNO, &os_errno);
    curl_off_t connect_us = 0;
    curl_easy_getinfo(x->h, CURLINFO_CONNECT_TIME_T, &connect_us);
    connected = connect_us > 0;
    w->c->connect_failures++;
    if (x->rc == CURLE_COULDNT_CONNECT && os_errno == ECONNREFUSED)
        w->c->connect_refused++;
    bool unsent = x->rc == CURLE_COULDNT_CONNECT || x->rc == CURLE_COULDNT_RESOLVE_HOST ||
                  (x->rc == CURLE_OPERATION_TIMEDOUT && !connected);
    if (unsent)
        dial_failed(w, w->ep);
    w->ep = (w->ep + 1) % w->c->cfg->n_endpoints;
    return unsent;
}

static uint64_t io_deadline(uint32_t ms)
{
    return ms ? lock_now_ns() + (uint64_t)ms * NS_PER_MS : LOCK_FOREVER;
}

/* A member to send to: the current one, or the next not backing off; when
 * every one is, wait for the first to be dialled again, as a clientv3 call
 * waits for its connection (FailFast(false)), no later than deadline_ns.
 * 0, or -1 with c->err set: the deadline came first (the request surely
 * never left), or the run is being stopped. */
static int ready_member(struct etcd_wire *w, uint64_t deadline_ns)
{
    struct lock_client *c = w->c;
    size_t n = c->cfg->n_endpoints;
    for (;;) {
        uint64_t now = lock_now_ns(), first = UINT64_MAX;
        for (size_t k = 0; k < n; k++) {
            size_t e = (w->ep + k) % n;
            if (w->dial_after_ns[e] <= now) {
                w->ep = e;
                return 0;
            }
            if (w->dial_after_ns[e] < first)
                first = w->dial_after_ns[e];
        }
        if (first >= deadline_ns || lock_cancelled(c)) {
            lock_set_error(c, LOCK_ERR_UNSENT,
                           "etcd: no member to send to: each failed its last dial and backs "
                           "off (%s)",
                           c->errstr[0] ? c->errstr : "gRPC's back-off");
            return -1;
        }
        lock_sleep_until(c, first, c->cfg->cancel);
    }
}

int etcd_wire_call(struct etcd_wire *w, const char *path, const json_t *req, json_t **out)
{
    return etcd_wire_call_within(w, path, req, out, w->c->cfg->io_timeout_ms);
}

int etcd_wire_call_within(struct etcd_wire *w, const char *path, const json_t *req, json_t **out,
                          uint32_t timeout_ms)
{
    struct lock_client *c = w->c;
    struct xfer *x = &w->unary;
    *out = NULL;
    for (size_t tries = 0; tries < c->cfg->n_endpoints; tries++) {
        uint64_t deadline = io_deadline(timeout_ms);
        if (ready_member(w, deadline) < 0)
            return -1;
        const struct lock_endpoint *ep = &c->cfg->endpoints[w->ep];
        if (xfer_start(w, x, path, req) < 0)
            return -1;
        while (!x->done && lock_now_ns() < deadline && !connect_late(w, x))
            if (pump(w, deadline) < 0) {
                xfer_stop(w, x);
                return -1;
            }
        xfer_stop(w, x);
        if (!x->done) { /* a paused member accepts and never answers (SETUP.md) */
            w->c->connect_failures++;
            w->ep = (w->ep + 1) % c->cfg->n_endpoints;
            lock_set_error(c, LOCK_ERR_TIMEOUT, "etcd %s:%d: %s: no answer in %u ms", ep->host,
                           ep->port, path, timeout_ms);
            return -1;
        }
        if (x->rc == CURLE_OK) {
            long code = 0;
            w->backoff_ms[w->ep] = 0; /* connected: the back-off starts over */
            curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
            *out = json_loadb(x->buf ? x->buf : "", x->len, 0, NULL);
            if (*out == NULL) {
                lock_set_error(c, LOCK_ERR_PROTOCOL, "etcd %s:%d: %s: HTTP %ld, not JSON", ep->host,
                               ep->port, path, code);
                return -1;
            }
            return (int)code;
        }
        if (x->overflow) {
            lock_set_error(c, LOCK_ERR_PROTOCOL, "etcd %s:%d: %s: an answer over %u bytes",
                           ep->host, ep->port, path, MAX_ANSWER);
            return -1;
        }
        bool unsent = lost(w, x);
        lock_set_error(c, unsent ? LOCK_ERR_UNSENT : LOCK_ERR_IO, "etcd %s:%d: %s: %s", ep->host,
                       ep->port, path, curl_easy_strerror(x->rc));
        if (!unsent)
            return -1; /* it may have been applied: never sent twice */
    }
    return -1; /* every member refused: c->err says the last one's why */
}

int etcd_wire_dial(struct etcd_wire *w)
{
    json_t *ans = NULL;
    int code = etcd_wire_call(w, "/version", NULL, &ans);
    json_decref(ans);
    return code == 200 ? 0 : -1;
}

int etcd_wire_watch_open(struct etcd_wire *w, const json_t *req)
{
    if (ready_member(w, io_deadline(w->c->cfg->io_timeout_ms)) < 0)
        return -1;
    return xfer_start(w, &w->watch, "/v3/watch", req);
}

void etcd_wire_watch_close(struct etcd_wire *w)
{
    xfer_stop(w, &w->watch);
    w->watch.len = 0;
}

/* The first complete line of the stream, taken out of its buffer. */
static int next_line(struct xfer *x, json_t **out)
{
    char *nl;
    while (x->len > 0 && (nl = memchr(x->buf, '\n', x->len)) != NULL) {
        size_t n = (size_t)(nl - x->buf);
        *out = n ? json_loadb(x->buf, n, 0, NULL) : NULL;
        x->len -= n + 1;
        memmove(x->buf, nl + 1, x->len);
        x->buf[x->len] = '\0';
        if (*out)
            return 1;
    }
    return 0;
}

int etcd_wire_watch_next(struct etcd_wire *w, uint64_t deadline_ns, json_t **out)
{
    struct xfer *x = &w->watch;
    *out = NULL;
    for (;;) {
        if (next_line(x, out))
            return 1;
        if (!x->active) {
            lock_set_error(w->c, LOCK_ERR_PROTOCOL, "etcd: no watch is open");
            return -1;
        }
        if (x->done || connect_late(w, x)) {
            const struct lock_endpoint *ep = &w->c->cfg->endpoints[w->ep];
            if (x->rc != CURLE_OK)
                lost(w, x);
            lock_set_error(w->c, LOCK_ERR_IO, "etcd %s:%d: the watch ended: %s", ep->host, ep->port,
                           curl_easy_strerror(x->rc));
            xfer_stop(w, x);
            return -1;
        }
        if (lock_now_ns() >= deadline_ns)
            return 0;
        if (pump(w, deadline_ns) < 0)
            return -1;
    }
}

struct etcd_wire *etcd_wire_new(struct lock_client *c)
{
    pthread_once(&curl_once, curl_start);
    if (curl_init_rc != CURLE_OK || hub_key_rc != 0) {
        lock_set_error(c, LOCK_ERR_CONFIG, "etcd: libcurl: %s",
                       curl_init_rc != CURLE_OK ? curl_easy_strerror(curl_init_rc)
                                                : "no thread key for its multi handle");
        return NULL;
    }
    if (c->cfg->n_endpoints == 0) {
        lock_set_error(c, LOCK_ERR_CONFIG, "etcd: no endpoints");
        return NULL;
    }
    struct etcd_wire *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        lock_set_error(c, LOCK_ERR_CONFIG, "etcd: no memory");
        return NULL;
    }
    w->c = c;
    w->hub = hub_get();
    w->own = curl_share_init();
    w->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    if (w->hub == NULL || w->own == NULL || w->hdrs == NULL ||
        curl_share_setopt(w->own, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) != CURLSHE_OK ||
        xfer_init(w, &w->unary) < 0 || xfer_init(w, &w->watch) < 0) {
        etcd_wire_free(w);
        lock_set_error(c, LOCK_ERR_CONFIG, "etcd: libcurl could not start");
        return NULL;
    }
    return w;
}

void etcd_wire_free(struct etcd_wire *w)
{
    if (w == NULL)
        return;
    if (w->hub) {
        hub_lock(w);
        xfer_free(w, &w->unary);
        xfer_free(w, &w->watch);
        if (w->own)
            curl_share_cleanup(w->own); /* closes this client's connections */
        hub_unlock(w);
        hub_put(w->hub);
    } else if (w->own)
        curl_share_cleanup(w->own);
    curl_slist_free_all(w->hdrs);
    free(w);
}
