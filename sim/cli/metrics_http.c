/* metrics_http.c - the metrics endpoint's server (see metrics_http.h). */
#include "sim/cli/metrics_http.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sim/cli/metrics_text.h"
#include "sim/cli/signals.h"
#include "sim/engine/metrics.h"
#include "sim/record/clock.h"

#define REQUEST_MAX   8192 /* a scraper's request is a few hundred bytes */
#define IO_TIMEOUT_MS 2000 /* for reading one request, and for writing its answer */
#define LOOK_MS       100  /* how often the thread looks whether it should end */

struct metrics_http {
    int fd;
    pthread_t thread;
    atomic_int quit;
    /* the figures: the runner's while it is followed, else the last read */
    pthread_mutex_t mu;
    struct runner *r;
    struct metrics m;
    bool followed; /* a run was: its last figures are worth a linger */
};

/* text split into its host and port, resolved into *res (freed by the
 * caller with freeaddrinfo). 0, or -1 with why in err. */
static int resolve(const char *text, struct addrinfo **res, char *err, size_t errlen)
{
    const char *colon = strrchr(text, ':');
    if (colon == NULL) {
        snprintf(err, errlen, "expected HOST:PORT, got \"%s\"", text);
        return -1;
    }
    const char *port = colon + 1;
    char *end;
    errno = 0;
    long p = strtol(port, &end, 10);
    if (port[0] < '0' || port[0] > '9' || *end || errno || p < 1 || p > 65535) {
        snprintf(err, errlen, "expected a port in 1..65535 after the last ':', got \"%s\"", text);
        return -1;
    }
    char host[256];
    size_t n = (size_t)(colon - text);
    if (n >= sizeof(host)) {
        snprintf(err, errlen, "the host of \"%s\" is too long", text);
        return -1;
    }
    memcpy(host, text, n);
    host[n] = '\0';
    const char *name = host;
    if (host[0] == '[') { /* [::1]:9464 */
        if (n < 3 || host[n - 1] != ']') {
            snprintf(err, errlen, "expected [IPv6]:PORT, got \"%s\"", text);
            return -1;
        }
        host[n - 1] = '\0';
        name = host + 1;
    } else if (strchr(host, ':')) {
        snprintf(err, errlen, "an IPv6 address goes in brackets: [%s]:%s", host, port);
        return -1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV | (name[0] ? 0 : AI_PASSIVE)};
    int rc = getaddrinfo(name[0] ? name : NULL, port, &hints, res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve \"%s\": %s", name, gai_strerror(rc));
        return -1;
    }
    return 0;
}

int metrics_address_check(const char *text, char *err, size_t errlen)
{
    struct addrinfo *res;
    if (resolve(text, &res, err, errlen) < 0)
        return -1;
    freeaddrinfo(res);
    return 0;
}

/* --- one request --------------------------------------------------------- */

static int remaining_ms(uint64_t until)
{
    uint64_t now = clock_mono_ns();
    return now >= until ? 0 : (int)((until - now) / 1000000u) + 1;
}

/* The request's head (up to its blank line) into buf; its length, -2
 * when it is longer than buf, or -1 when it is too slow or the peer left. */
static ssize_t read_head(int c, char *buf, size_t cap)
{
    uint64_t until = clock_mono_ns() + (uint64_t)IO_TIMEOUT_MS * 1000000u;
    size_t used = 0;
    while (used < cap - 1) {
        struct pollfd p = {.fd = c, .events = POLLIN};
        int ms = remaining_ms(until);
        if (ms == 0 || poll(&p, 1, ms) <= 0)
            return -1;
        ssize_t got = recv(c, buf + used, cap - 1 - used, 0);
        if (got < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (got <= 0)
            return -1;
        used += (size_t)got;
        buf[used] = '\0';
        if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
            return (ssize_t)used;
    }
    return -2;
}

static void write_all(int c, const char *p, size_t len)
{
    uint64_t until = clock_mono_ns() + (uint64_t)IO_TIMEOUT_MS * 1000000u;
    while (len > 0) {
        ssize_t put = send(c, p, len, MSG_NOSIGNAL);
        if (put > 0) {
            p += put;
            len -= (size_t)put;
            continue;
        }
        if (put < 0 && errno != EAGAIN && errno != EINTR)
            return;
        struct pollfd w = {.fd = c, .events = POLLOUT};
        int ms = remaining_ms(until);
        if (ms == 0 || poll(&w, 1, ms) <= 0)
            return; /* a scraper that reads nothing is dropped */
    }
}

static void answer(int c, const char *status, const char *type, const char *body, size_t len,
                   bool head_only)
{
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     status, type, len);
    write_all(c, head, (size_t)n);
    if (!head_only)
        write_all(c, body, len);
}

static void plain(int c, const char *status, const char *text)
{
    answer(c, status, "text/plain; charset=utf-8", text, strlen(text), false);
}

/* The value of header name in the request's head, NUL-ended in place, or
 * NULL. */
static char *header(char *head, const char *name)
{
    size_t n = strlen(name);
    for (char *line = strchr(head, '\n'); line; line = strchr(line, '\n')) {
        line++;
        if (strncasecmp(line, name, n) == 0 && line[n] == ':') {
            char *v = line + n + 1;
            v += strspn(v, " \t");
            v[strcspn(v, "\r\n")] = '\0';
            return v;
        }
    }
    return NULL;
}

/* The figures now, in fmt, into a buffer of the caller's (free). */
static char *exposition(struct metrics_http *h, enum metrics_format fmt, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (f == NULL)
        return NULL;
    pthread_mutex_lock(&h->mu);
    if (h->r)
        metrics_read(h->r, &h->m);
    int rc = metrics_text(f, &h->m, LOCKLAB_VERSION, fmt);
    pthread_mutex_unlock(&h->mu);
    if (fclose(f) != 0 || rc < 0) {
        free(text);
        return NULL;
    }
    return text;
}

static void serve(struct metrics_http *h, int c)
{
    char req[REQUEST_MAX];
    ssize_t n = read_head(c, req, sizeof(req));
    if (n == -2)
        plain(c, "431 Request Header Fields Too Large", "a request of at most 8 KiB, please\n");
    if (n < 0)
        return;
    char method[8], target[256];
    if (sscanf(req, "%7s %255s HTTP/1.", method, target) != 2) {
        plain(c, "400 Bad Request", "a request line, please: GET /metrics HTTP/1.1\n");
        return;
    }
    bool head_only = strcmp(method, "HEAD") == 0;
    if (!head_only && strcmp(method, "GET") != 0) {
        plain(c, "405 Method Not Allowed", "GET /metrics only\n");
        return;
    }
    if (strcmp(target, "/metrics") != 0 && strncmp(target, "/metrics?", 9) != 0) {
        plain(c, "404 Not Found", "locklab serves /metrics only\n");
        return;
    }
    enum metrics_format fmt = metrics_format_of(header(req, "Accept"));
    size_t len = 0;
    char *body = exposition(h, fmt, &len);
    if (body == NULL) {
        plain(c, "500 Internal Server Error", "out of memory\n");
        return;
    }
    answer(c, "200 OK", metrics_content_type(fmt), body, len, head_only);
    free(body);
}

static void *serve_thread(void *arg)
{
    struct metrics_http *h = arg;
    while (!atomic_load(&h->quit)) {
        struct pollfd p = {.fd = h->fd, .events = POLLIN};
        if (poll(&p, 1, LOOK_MS) <= 0)
            continue;
        int c = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0)
            continue;
        serve(h, c);
        close(c);
    }
    return NULL;
}

/* --- its life ------------------------------------------------------------ */

static int listen_on(const struct addrinfo *ai, char *why, size_t len)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    /* a port in TIME_WAIT from the last run is free; one listened on is not */
    if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
        bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 8) == 0)
        return fd;
    snprintf(why, len, "%s", strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

struct metrics_http *metrics_http_start(const char *text, char *err, size_t errlen)
{
    struct addrinfo *res;
    if (resolve(text, &res, err, errlen) < 0)
        return NULL;
    struct metrics_http *h = calloc(1, sizeof(*h));
    if (h == NULL) {
        freeaddrinfo(res);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    char why[128] = "no address";
    h->fd = -1;
    for (const struct addrinfo *ai = res; ai && h->fd < 0; ai = ai->ai_next)
        h->fd = listen_on(ai, why, sizeof(why));
    freeaddrinfo(res);
    if (h->fd < 0) {
        snprintf(err, errlen, "--metrics: cannot listen on %s: %s", text, why);
        free(h);
        return NULL;
    }
    pthread_mutex_init(&h->mu, NULL);
    atomic_init(&h->quit, 0);
    int rc = pthread_create(&h->thread, NULL, serve_thread, h);
    if (rc != 0) {
        snprintf(err, errlen, "--metrics: cannot start its thread: %s", strerror(rc));
        pthread_mutex_destroy(&h->mu);
        close(h->fd);
        free(h);
        return NULL;
    }
    pthread_setname_np(h->thread, "locklab-metrics");
    return h;
}

void metrics_http_follow(struct metrics_http *h, struct runner *r)
{
    if (h == NULL)
        return;
    pthread_mutex_lock(&h->mu);
    if (r == NULL && h->r)
        metrics_read(h->r, &h->m); /* the clients are done: these are its last */
    else if (r && r != h->r)
        memset(&h->m, 0, sizeof(h->m)); /* a new run: its counts start again */
    h->r = r;
    h->followed |= r != NULL;
    pthread_mutex_unlock(&h->mu);
}

void metrics_http_stop(struct metrics_http *h, double linger_s)
{
    if (h == NULL)
        return;
    pthread_mutex_lock(&h->mu);
    bool ran = h->followed;
    pthread_mutex_unlock(&h->mu);
    /* no run's figures (it could not start): nothing to wait for */
    uint64_t until = clock_mono_ns() + (ran && linger_s > 0 ? (uint64_t)(linger_s * 1e9) : 0);
    while (clock_mono_ns() < until && !signals_received()) {
        struct timespec look = {.tv_sec = 0, .tv_nsec = LOOK_MS * 1000000L};
        nanosleep(&look, NULL);
    }
    atomic_store(&h->quit, 1);
    pthread_join(h->thread, NULL);
    close(h->fd);
    pthread_mutex_destroy(&h->mu);
    free(h);
}
