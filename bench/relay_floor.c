/* relay_floor.c - the floor under bench/proxy_cost.sh: the cheapest TCP
 * relay in user space, one epoll thread as locklab's proxy has, doing
 * nothing but move bytes between each client and its own connection to
 * the server. No toxics, no stats, no timers. bench/relay_floor.sh puts it
 * where the proxy sits and measures the rate through it against the rate
 * direct: what any relay in user space costs on this machine, whatever it
 * is written in.
 *
 *   relay_floor MODE LISTEN_PORT SERVER_PORT   (both on 127.0.0.1)
 * MODE: copy   recv into a buffer, send it (locklab's proxy with no toxic:
 *              level-triggered, one recv per wake)
 *       drain  the same, edge-triggered, recv until EAGAIN in one wake
 *       splice socket -> pipe -> socket, the bytes never in user space
 * Runs until killed (SIGTERM). Prints "listening" once it accepts.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum mode { COPY, DRAIN, SPLICE };

#define BUF_BYTES (1 << 16)

/* One direction: bytes from src's socket on their way to dst's. */
struct side {
    int fd;
    struct side *peer;
    int pipe[2];    /* splice: what was read and not yet written */
    size_t in_pipe; /* splice */
    char *pend;     /* copy, drain: what send did not take */
    size_t pend_len;
    uint32_t watched; /* what epoll watches on fd now */
};

static enum mode mode;
static int ep;
static char buf[BUF_BYTES];

static void watch(struct side *s, uint32_t ev)
{
    if (mode == DRAIN)
        ev |= EPOLLET;
    if (s->watched == ev)
        return;
    struct epoll_event e = {.events = ev, .data.ptr = s};
    epoll_ctl(ep, s->watched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s->fd, &e);
    s->watched = ev;
}

static void close_pair(struct side *s)
{
    struct side *p = s->peer;
    struct side *both[2] = {s, p};
    for (int k = 0; k < 2; k++) {
        epoll_ctl(ep, EPOLL_CTL_DEL, both[k]->fd, NULL);
        close(both[k]->fd);
        if (mode == SPLICE) {
            close(both[k]->pipe[0]);
            close(both[k]->pipe[1]);
        }
        free(both[k]->pend);
        both[k]->fd = -1; /* freed never: a floor bench, its connections last the run */
    }
}

/* Bytes of s waiting to go to s->peer; true while some still wait. */
static int waiting(const struct side *s)
{
    return mode == SPLICE ? s->in_pipe > 0 : s->pend_len > 0;
}

/* Write what s holds to its peer; -1 on a dead connection. */
static int push(struct side *s)
{
    while (waiting(s)) {
        ssize_t w = mode == SPLICE ? splice(s->pipe[0], NULL, s->peer->fd, NULL, s->in_pipe,
                                            SPLICE_F_MOVE | SPLICE_F_NONBLOCK)
                                   : send(s->peer->fd, s->pend, s->pend_len, MSG_NOSIGNAL);
        if (w < 0 && errno == EAGAIN)
            return 0;
        if (w <= 0)
            return -1;
        if (mode == SPLICE) {
            s->in_pipe -= (size_t)w;
        } else {
            s->pend_len -= (size_t)w;
            memmove(s->pend, s->pend + w, s->pend_len);
        }
    }
    return 0;
}

/* Read what s's socket has and pass it on; -1 when the pair must close. */
static int pull(struct side *s)
{
    do {
        ssize_t n;
        if (mode == SPLICE) {
            n = splice(s->fd, NULL, s->pipe[1], NULL, BUF_BYTES, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
            if (n > 0)
                s->in_pipe += (size_t)n;
        } else {
            n = recv(s->fd, buf, sizeof(buf), 0);
            if (n > 0) {
                ssize_t w = send(s->peer->fd, buf, (size_t)n, MSG_NOSIGNAL);
                if (w < 0 && errno != EAGAIN)
                    return -1;
                size_t sent = w > 0 ? (size_t)w : 0;
                if (sent < (size_t)n) {
                    s->pend = malloc((size_t)n - sent);
                    if (s->pend == NULL)
                        return -1;
                    memcpy(s->pend, buf + sent, (size_t)n - sent);
                    s->pend_len = (size_t)n - sent;
                }
            }
        }
        if (n == 0 || (n < 0 && errno != EAGAIN))
            return -1;
        if (n < 0)
            return 0;
        if (mode == SPLICE && push(s) < 0)
            return -1;
    } while (mode == DRAIN && !waiting(s));
    return 0;
}

/* Watch s for reads unless it holds bytes its peer cannot take yet; then
 * watch the peer for room instead. */
static void rewatch(struct side *s)
{
    struct side *p = s->peer;
    watch(s, (waiting(s) ? 0 : EPOLLIN) | (waiting(p) ? EPOLLOUT : 0));
    watch(p, (waiting(p) ? 0 : EPOLLIN) | (waiting(s) ? EPOLLOUT : 0));
}

static void on_event(struct side *s, uint32_t ev)
{
    if (s->fd < 0)
        return;
    if ((ev & EPOLLOUT) && push(s->peer) < 0) {
        close_pair(s);
        return;
    }
    if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !waiting(s) && pull(s) < 0) {
        close_pair(s);
        return;
    }
    rewatch(s);
}

static int listen_on(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 512) < 0)
        return -1;
    return fd;
}

static struct side *new_side(int fd)
{
    struct side *s = calloc(1, sizeof(*s));
    int one = 1;
    if (s == NULL)
        return NULL;
    s->fd = fd;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (mode == SPLICE && pipe2(s->pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
        free(s);
        return NULL;
    }
    return s;
}

/* A client: dial the server (blocking: loopback, the bench's connections
 * all come at the start) and relay between them. */
static void accept_one(int lfd, const struct sockaddr_in *server)
{
    int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
    if (c < 0)
        return;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0 || connect(s, (const struct sockaddr *)server, sizeof(*server)) < 0 ||
        fcntl(s, F_SETFL, O_NONBLOCK) < 0) {
        close(c);
        if (s >= 0)
            close(s);
        return;
    }
    struct side *a = new_side(c), *b = new_side(s);
    if (a == NULL || b == NULL) {
        fprintf(stderr, "relay_floor: out of memory or descriptors\n");
        exit(1);
    }
    a->peer = b;
    b->peer = a;
    watch(a, EPOLLIN);
    watch(b, EPOLLIN);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: relay_floor copy|drain|splice LISTEN_PORT SERVER_PORT\n");
        return 2;
    }
    if (strcmp(argv[1], "copy") == 0)
        mode = COPY;
    else if (strcmp(argv[1], "drain") == 0)
        mode = DRAIN;
    else if (strcmp(argv[1], "splice") == 0)
        mode = SPLICE;
    else {
        fprintf(stderr, "relay_floor: mode must be copy, drain or splice, not %s\n", argv[1]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct sockaddr_in server = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)atoi(argv[3])),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int lfd = listen_on(atoi(argv[2]));
    ep = epoll_create1(0);
    if (lfd < 0 || ep < 0) {
        fprintf(stderr, "relay_floor: cannot listen on 127.0.0.1:%s: %s\n", argv[2],
                strerror(errno));
        return 1;
    }
    struct epoll_event le = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &le);
    printf("listening\n");
    fflush(stdout);
    struct epoll_event ev[256];
    for (;;) {
        int n = epoll_wait(ep, ev, 256, -1);
        for (int i = 0; i < n; i++) {
            if (ev[i].data.ptr == NULL)
                accept_one(lfd, &server);
            else
                on_event(ev[i].data.ptr, ev[i].events);
        }
    }
}
