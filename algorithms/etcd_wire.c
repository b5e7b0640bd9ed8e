/* etcd_wire.c - etcd's v3 JSON gateway for one lock client, over
 * libcurl's multi interface. libcurl tells which sockets it wants watched
 * (CURLMOPT_SOCKETFUNCTION) and when it wants to be called back
 * (CURLMOPT_TIMERFUNCTION); pump() turns those into pollfds and a deadline
 * for lock_wait, the seam, and hands what became ready back to
 * curl_multi_socket_action. curl_multi_fdset is not used: it skips
 * descriptors past FD_SETSIZE, which a run with many clients reaches.
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

struct xfer {
    CURL *h;
    char *body; /* the request, owned (json_dumps) */
    char *buf;  /* the answer so far */
    size_t len, cap;
    bool active; /* in the multi */
    bool done;
    bool overflow;
    CURLcode rc;
};

struct etcd_wire {
    struct lock_client *c;
    CURLM *m;
    struct curl_slist *hdrs;
    struct xfer unary, watch;
    size_t ep; /* the member dialled now */
    struct {
        curl_socket_t fd;
        int what; /* CURL_POLL_IN, _OUT, _INOUT */
    } socks[MAX_SOCKS];
    size_t n_socks;
    bool timer_set;
    uint64_t timer_at_ns;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;

static void curl_start(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void)easy;
    (void)socketp;
    struct etcd_wire *w = userp;
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
    return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *userp)
{
    (void)m;
    struct etcd_wire *w = userp;
    w->timer_set = timeout_ms >= 0;
    if (w->timer_set)
        w->timer_at_ns = lock_now_ns() + (uint64_t)timeout_ms * NS_PER_MS;
    return 0;
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
    x->h = curl_easy_init();
    if (x->h == NULL)
        return -1;
    const struct lock_config *cfg = w->c->cfg;
    curl_easy_setopt(x->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(x->h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, w->hdrs);
    curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(x->h, CURLOPT_WRITEDATA, x);
    if (cfg->connect_timeout_ms)
        curl_easy_setopt(x->h, CURLOPT_CONNECTTIMEOUT_MS, (long)cfg->connect_timeout_ms);
    return 0;
}

static void xfer_stop(struct etcd_wire *w, struct xfer *x)
{
    if (x->active)
        curl_multi_remove_handle(w->m, x->h);
    x->active = false;
}

static void xfer_free(struct etcd_wire *w, struct xfer *x)
{
    xfer_stop(w, x);
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
    x->body = json_dumps(req, JSON_COMPACT);
    if (x->body == NULL) {
        lock_set_error(w->c, LOCK_ERR_UNSENT, "etcd: no memory for a request");
        return -1;
    }
    snprintf(url, sizeof(url), "http://%s:%d%s", ep->host, ep->port, path);
    curl_easy_setopt(x->h, CURLOPT_URL, url);
    curl_easy_setopt(x->h, CURLOPT_POSTFIELDS, x->body);
    curl_easy_setopt(x->h, CURLOPT_POSTFIELDSIZE, (long)strlen(x->body));
    x->len = 0;
    x->done = x->overflow = false;
    x->rc = CURLE_OK;
    if (curl_multi_add_handle(w->m, x->h) != CURLM_OK) {
        lock_set_error(w->c, LOCK_ERR_UNSENT, "etcd: libcurl refused a transfer");
        return -1;
    }
    x->active = true;
    return 0;
}

/* One round: wait through the seam for what libcurl wants, at most until
 * deadline_ns, and let it act on what became ready. 0, or -1 with c->err
 * set when the wait itself failed. */
static int pump(struct etcd_wire *w, uint64_t deadline_ns)
{
    struct pollfd fds[MAX_SOCKS];
    size_t n = w->n_socks;
    for (size_t i = 0; i < n; i++) {
        fds[i].fd = w->socks[i].fd;
        fds[i].events = (short)(((w->socks[i].what & CURL_POLL_IN) ? POLLIN : 0) |
                                ((w->socks[i].what & CURL_POLL_OUT) ? POLLOUT : 0));
        fds[i].revents = 0;
    }
    uint64_t wake = deadline_ns;
    if (w->timer_set && w->timer_at_ns < wake)
        wake = w->timer_at_ns;
    int ready = lock_wait(w->c, fds, n, wake);
    if (ready < 0 && errno != EINTR) {
        lock_set_error(w->c, LOCK_ERR_IO, "etcd: waiting for the gateway: %s", strerror(errno));
        return -1;
    }
    int running;
    for (size_t i = 0; ready > 0 && i < n; i++) {
        int ev = 0;
        if (fds[i].revents & (POLLIN | POLLHUP))
            ev |= CURL_CSELECT_IN;
        if (fds[i].revents & POLLOUT)
            ev |= CURL_CSELECT_OUT;
        if (fds[i].revents & (POLLERR | POLLNVAL))
            ev |= CURL_CSELECT_ERR;
        if (ev)
            curl_multi_socket_action(w->m, fds[i].fd, ev, &running);
    }
    if (w->timer_set && lock_now_ns() >= w->timer_at_ns) {
        w->timer_set = false; /* the action may set it again */
        curl_multi_socket_action(w->m, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(w->m, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        struct xfer *x = msg->easy_handle == w->unary.h ? &w->unary : &w->watch;
        x->done = true;
        x->rc = msg->data.result;
    }
    return 0;
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
    w->ep = (w->ep + 1) % w->c->cfg->n_endpoints;
    return x->rc == CURLE_COULDNT_CONNECT || x->rc == CURLE_COULDNT_RESOLVE_HOST ||
           (x->rc == CURLE_OPERATION_TIMEDOUT && !connected);
}

static uint64_t io_deadline(const struct etcd_wire *w)
{
    uint32_t ms = w->c->cfg->io_timeout_ms;
    return ms ? lock_now_ns() + (uint64_t)ms * NS_PER_MS : LOCK_FOREVER;
}

int etcd_wire_call(struct etcd_wire *w, const char *path, const json_t *req, json_t **out)
{
    struct lock_client *c = w->c;
    struct xfer *x = &w->unary;
    *out = NULL;
    for (size_t tries = 0; tries < c->cfg->n_endpoints; tries++) {
        const struct lock_endpoint *ep = &c->cfg->endpoints[w->ep];
        uint64_t deadline = io_deadline(w);
        if (xfer_start(w, x, path, req) < 0)
            return -1;
        while (!x->done && lock_now_ns() < deadline)
            if (pump(w, deadline) < 0) {
                xfer_stop(w, x);
                return -1;
            }
        xfer_stop(w, x);
        if (!x->done) { /* a paused member accepts and never answers (SETUP.md) */
            w->c->connect_failures++;
            w->ep = (w->ep + 1) % c->cfg->n_endpoints;
            lock_set_error(c, LOCK_ERR_TIMEOUT, "etcd %s:%d: %s: no answer in %u ms", ep->host,
                           ep->port, path, c->cfg->io_timeout_ms);
            return -1;
        }
        if (x->rc == CURLE_OK) {
            long code = 0;
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

int etcd_wire_watch_open(struct etcd_wire *w, const json_t *req)
{
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
        if (x->done) {
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
    if (curl_init_rc != CURLE_OK) {
        lock_set_error(c, LOCK_ERR_CONFIG, "etcd: libcurl: %s", curl_easy_strerror(curl_init_rc));
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
    w->m = curl_multi_init();
    w->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    if (w->m == NULL || w->hdrs == NULL || xfer_init(w, &w->unary) < 0 ||
        xfer_init(w, &w->watch) < 0) {
        etcd_wire_free(w);
        lock_set_error(c, LOCK_ERR_CONFIG, "etcd: libcurl could not start");
        return NULL;
    }
    curl_multi_setopt(w->m, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(w->m, CURLMOPT_SOCKETDATA, w);
    curl_multi_setopt(w->m, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(w->m, CURLMOPT_TIMERDATA, w);
    return w;
}

void etcd_wire_free(struct etcd_wire *w)
{
    if (w == NULL)
        return;
    xfer_free(w, &w->unary);
    xfer_free(w, &w->watch);
    if (w->m)
        curl_multi_cleanup(w->m);
    curl_slist_free_all(w->hdrs);
    free(w);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

json_t *etcd_b64(const char *bytes, size_t len)
{
    size_t n = 4 * ((len + 2) / 3);
    char *s = malloc(n + 1);
    if (s == NULL)
        return NULL;
    const unsigned char *p = (const unsigned char *)bytes;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        s[o++] = b64[(v >> 18) & 63];
        s[o++] = b64[(v >> 12) & 63];
        s[o++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
        s[o++] = i + 2 < len ? b64[v & 63] : '=';
    }
    s[o] = '\0';
    json_t *j = json_stringn(s, o);
    free(s);
    return j;
}

long etcd_unb64(const json_t *v, char *out, size_t len)
{
    const char *s = json_string_value(v);
    if (s == NULL || len == 0)
        return -1;
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    for (; *s && *s != '='; s++) {
        const char *at = strchr(b64, *s);
        if (at == NULL)
            return -1;
        acc = (acc << 6) | (uint32_t)(at - b64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o + 1 < len)
                out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[o] = '\0';
    return (long)o;
}

int64_t etcd_int(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    if (json_is_integer(v))
        return json_integer_value(v);
    const char *s = json_string_value(v);
    return s ? strtoll(s, NULL, 10) : 0;
}

json_t *etcd_prefix_end(const char *prefix, size_t len)
{
    char end[256];
    if (len == 0 || len > sizeof(end))
        return NULL;
    memcpy(end, prefix, len);
    /* the last byte below 0xff, plus one, and nothing after it */
    while (len > 0 && (unsigned char)end[len - 1] == 0xff)
        len--;
    if (len == 0)
        return etcd_b64("\0", 1); /* every key: etcd's "from key" */
    end[len - 1] = (char)((unsigned char)end[len - 1] + 1);
    return etcd_b64(end, len);
}
