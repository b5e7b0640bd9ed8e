/* server_ask.c - the plain TCP question the server kinds that speak text
 * share to learn a server's version (Redis's INFO, ZooKeeper's four-letter
 * words, etcd's HTTP), and the reading of its answer. A question that goes
 * unanswered leaves the version unknown, with why; it never fails a run. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "sim/fleet/server_kind.h"
#include "sim/record/clock.h"
#include "sim/record/run_meta.h"

#define ASK_MS 2000 /* a server that serves answers in well under a millisecond */

static int64_t now_ms(void)
{
    return (int64_t)(clock_mono_ns() / 1000000u);
}

int server_dial(const char *host, int port, char *why, size_t whylen)
{
    char service[16];
    snprintf(service, sizeof(service), "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int rc = getaddrinfo(host, service, &hints, &ai);
    if (rc != 0) {
        snprintf(why, whylen, "cannot resolve %s: %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (const struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        /* on Linux the send timeout also bounds connect */
        struct timeval tv = {.tv_sec = ASK_MS / 1000};
        if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
                        connect(fd, a->ai_addr, a->ai_addrlen) != 0)) {
            snprintf(why, whylen, "cannot connect to %s:%d: %s", host, port, strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    return fd;
}

int server_ask(const char *host, int port, const char *question, const char *until, char *reply,
               size_t len, char *why, size_t whylen)
{
    if (len == 0)
        return -1;
    reply[0] = '\0';
    int fd = server_dial(host, port, why, whylen);
    if (fd < 0)
        return -1;
    size_t n = strlen(question), got = 0;
    if (write(fd, question, n) != (ssize_t)n) {
        snprintf(why, whylen, "cannot ask %s:%d: %s", host, port, strerror(errno));
        close(fd);
        return -1;
    }
    int64_t end = now_ms() + ASK_MS;
    for (int64_t left = ASK_MS; got + 1 < len && left > 0; left = end - now_ms()) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)left) != 1)
            break;
        ssize_t r = read(fd, reply + got, len - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
        reply[got] = '\0';
        const char *at = until ? strstr(reply, until) : NULL;
        if (at && strchr(at, '\n'))
            break;
    }
    close(fd);
    reply[got] = '\0';
    return (int)got;
}

/* s cut to its first line and to len, for a message. */
static void first_line(char *out, size_t len, const char *s)
{
    size_t n = strcspn(s, "\r\n");
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), s);
}

int server_version_field(const char *reply, const char *field, const char *stop,
                         struct server_version *v)
{
    const char *at = strstr(reply, field);
    if (at == NULL) {
        char said[100];
        first_line(said, sizeof(said), reply);
        snprintf(v->why, sizeof(v->why), "no %s in its answer%s%s", field, said[0] ? ": " : "",
                 said);
        return -1;
    }
    const char *value = at + strlen(field);
    while (*value == ' ')
        value++;
    size_t n = strcspn(value, stop ? stop : "\r\n");
    n = n < strcspn(value, "\r\n") ? n : strcspn(value, "\r\n");
    if (n == 0) {
        snprintf(v->why, sizeof(v->why), "an empty %s in its answer", field);
        return -1;
    }
    snprintf(v->version, sizeof(v->version), "%.*s", (int)(n < 63 ? n : 63), value);
    first_line(v->answer, sizeof(v->answer), at);
    return 0;
}
