/* pump.c - the proxy's links, for its event loop (proxy.c): it accepts
 * connections, dials the server for each, and moves the bytes both ways,
 * sending what a toxic delayed once it is due and carrying out timed
 * closes and resets.
 *
 * Level-triggered epoll, one thread. With no toxic in force a chunk read
 * from one side is written to the other at once, with no allocation: the
 * proxy's own cost is a read and a write per chunk (bench/proxy_cost.sh
 * measures it against direct connections). Only when a toxic is in force
 * does the loop walk the connections to send what has become due.
 *
 * That read and write are the floor of a relay in user space, as
 * bench/relay_floor.sh shows beside this proxy in the same run: a bare
 * relay doing only recv and send comes no nearer the direct rate. Nor do
 * splice(2) (two splices a message where a recv and a send were: the
 * messages are tens of bytes, their copy was never the cost), reads until
 * EAGAIN (one more recv a wake), or the kernel forwarding alone through a
 * sockmap (each message then passes through a kernel worker thread). The cost
 * is the kernel's: perf puts some 96 % of this thread's time there, the
 * loopback TCP transmit and receive per chunk, the reader's wake-up and
 * the switches it brings; this file's code and libc are the rest.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sim/proxy/proxy_state.h"
#include "sim/record/clock.h"

#define FLOW_CAP   (1u << 20) /* stop reading a side while this much waits to go out */
#define READ_BYTES 16384

/* ---- sockets --------------------------------------------------------- */

int pump_watch(struct proxy *p, struct pfd *d, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = d};
    d->events = events;
    return epoll_ctl(p->ep_fd, EPOLL_CTL_ADD, d->fd, &ev);
}

void pump_rewatch(struct proxy *p, struct pfd *d, uint32_t events)
{
    if (d->fd < 0 || d->events == events)
        return;
    struct epoll_event ev = {.events = events, .data.ptr = d};
    d->events = events;
    epoll_ctl(p->ep_fd, EPOLL_CTL_MOD, d->fd, &ev);
}

/* Out of the epoll set first: a close alone leaves it there while a copy
 * of the descriptor lives on (a server being forked holds one until its
 * exec), and its events would then name freed memory. */
void pump_unwatch_close(struct proxy *p, int fd)
{
    if (fd < 0)
        return;
    if (p->ep_fd >= 0)
        epoll_ctl(p->ep_fd, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
}

static int dial(const struct proxy *p, size_t e, bool *refused)
{
    const struct sockaddr_storage *a = &p->up_addr[e];
    *refused = false;
    int fd = socket(a->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (const struct sockaddr *)a, p->up_len[e]) < 0 &&
        errno != EINPROGRESS) {
        *refused = errno == ECONNREFUSED;
        close(fd);
        fd = -1;
    }
    return fd;
}

static void no_delay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---- connections ----------------------------------------------------- */

static void free_flow(struct proxy *p, struct flow *f)
{
    while (f->head) {
        struct chunk *c = f->head;
        f->head = c->next;
        p->st.bytes_dropped += c->len - c->off;
        free(c);
    }
    f->tail = NULL;
    f->queued = 0;
}

/* Close both sides; with rst, the client sees "connection reset by peer". */
void pump_kill_link(struct proxy *p, struct link *l, bool rst)
{
    if (l->dead)
        return;
    if (rst) {
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(l->client.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        if (l->server.fd >= 0)
            setsockopt(l->server.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    }
    pump_unwatch_close(p, l->client.fd);
    pump_unwatch_close(p, l->server.fd);
    free_flow(p, &l->up);
    free_flow(p, &l->down);
    if (l->prev)
        l->prev->next = l->next;
    else
        p->links = l->next;
    if (l->next)
        l->next->prev = l->prev;
    l->dead = true;
    l->next = p->graveyard; /* events of this turn may still name it */
    p->graveyard = l;
}

static void new_link(struct proxy *p, struct listener *ls, int cfd, uint64_t now)
{
    bool refused;
    no_delay(cfd);
    int sfd = dial(p, ls->ep, &refused);
    struct link *l = sfd >= 0 ? calloc(1, sizeof(*l)) : NULL;
    p->st.connections++;
    if (l == NULL) {
        /* nobody at the server: the client's connect "succeeded" here, so
         * the nearest truth it can get is a reset */
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        close(cfd);
        if (sfd >= 0)
            close(sfd);
        p->st.refused++;
        return;
    }
    no_delay(sfd);
    l->client = (struct pfd){.kind = PFD_CLIENT, .fd = cfd, .link = l};
    l->server = (struct pfd){.kind = PFD_SERVER, .fd = sfd, .link = l};
    l->ep = ls->ep;
    l->group = ls->group;
    l->created_ns = now;
    l->connecting = true;
    l->next = p->links;
    if (p->links)
        p->links->prev = l;
    p->links = l;
    toxics_draw(p, l, -1);
    pump_watch(p, &l->client, EPOLLIN);
    pump_watch(p, &l->server, EPOLLOUT);
}

void pump_accept_all(struct proxy *p, struct listener *ls, uint64_t now)
{
    for (;;) {
        int fd = accept4(ls->pfd.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            /* out of descriptors: a readable listener would wake the loop
             * every turn; the backlog waits, and relisten looks again soon */
            pump_rewatch(p, &ls->pfd, 0);
            p->relisten = true;
        }
        if (fd < 0)
            return;
        new_link(p, ls, fd, now);
    }
}

static struct pfd *dst_of(struct link *l, const struct flow *f)
{
    return f == &l->up ? &l->server : &l->client;
}

/* Send what is due on f; false when the link had to close. */
static bool flush(struct proxy *p, struct link *l, struct flow *f, unsigned dir, uint64_t now)
{
    if (f == &l->up && l->connecting)
        return true;
    bool held = toxics_holding(p, l, dir);
    while (f->head && !held && f->head->ready_ns <= now) {
        struct chunk *c = f->head;
        ssize_t w = send(dst_of(l, f)->fd, c->data + c->off, c->len - c->off, MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        if (w < 0) {
            pump_kill_link(p, l, false);
            return false;
        }
        *(dir == STREAM_UP ? &p->st.bytes_up : &p->st.bytes_down) += (uint64_t)w;
        c->off += (uint32_t)w;
        f->queued -= (size_t)w;
        if (c->off < c->len)
            break;
        f->head = c->next;
        if (f->head == NULL)
            f->tail = NULL;
        free(c);
    }
    if (f->head == NULL && (f->eof || f->close_after)) {
        pump_kill_link(p, l, false);
        return false;
    }
    return true;
}

/* Bytes read from one side, on their way to the other. */
static void pass(struct proxy *p, struct link *l, struct flow *f, unsigned dir, const char *buf,
                 size_t n, uint64_t now)
{
    if (f->head == NULL && !(f == &l->up && l->connecting) && !toxics_any_on(p, l, dir)) {
        ssize_t w = send(dst_of(l, f)->fd, buf, n, MSG_NOSIGNAL); /* the direct path */
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
            pump_kill_link(p, l, false);
            return;
        }
        size_t sent = w > 0 ? (size_t)w : 0;
        *(dir == STREAM_UP ? &p->st.bytes_up : &p->st.bytes_down) += sent;
        buf += sent, n -= sent;
        if (n == 0)
            return;
        toxics_enqueue(p, l, f, dir, buf, n, 0);
        return;
    }
    toxics_enqueue(p, l, f, dir, buf, n, now);
    flush(p, l, f, dir, now);
}

void pump_update_events(struct proxy *p, struct link *l, uint64_t now)
{
    if (l->dead)
        return;
    bool up_due = l->up.head && l->up.head->ready_ns <= now && !toxics_holding(p, l, STREAM_UP);
    bool down_due =
        l->down.head && l->down.head->ready_ns <= now && !toxics_holding(p, l, STREAM_DOWN);
    uint32_t ce = (!l->up.eof && l->up.queued < FLOW_CAP ? EPOLLIN : 0) | (down_due ? EPOLLOUT : 0);
    uint32_t se = l->connecting ? EPOLLOUT
                                : (!l->down.eof && l->down.queued < FLOW_CAP ? EPOLLIN : 0) |
                                      (up_due ? EPOLLOUT : 0);
    pump_rewatch(p, &l->client, ce);
    pump_rewatch(p, &l->server, se);
}

static void read_side(struct proxy *p, struct link *l, struct pfd *from, uint64_t now)
{
    char buf[READ_BYTES];
    bool client = from == &l->client;
    struct flow *f = client ? &l->up : &l->down;
    unsigned dir = client ? STREAM_UP : STREAM_DOWN;
    ssize_t n = recv(from->fd, buf, sizeof(buf), 0);
    if (n > 0) {
        pass(p, l, f, dir, buf, (size_t)n, now);
        return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n < 0) { /* reset: pass the reset on */
        pump_kill_link(p, l, true);
        return;
    }
    f->eof = true;
    flush(p, l, f, dir, now);
}

static void connected(struct proxy *p, struct link *l, uint64_t now)
{
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(l->server.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) {
        p->st.refused++;
        pump_kill_link(p, l, true);
        return;
    }
    l->connecting = false;
    flush(p, l, &l->up, STREAM_UP, now);
}

void pump_on_link(struct proxy *p, struct pfd *d, uint32_t ev, uint64_t now)
{
    struct link *l = d->link;
    if (l->dead)
        return;
    if (d == &l->server && l->connecting) {
        if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            connected(p, l, now);
    } else {
        struct flow *in = d == &l->client ? &l->up : &l->down;
        if ((ev & EPOLLERR) || ((ev & EPOLLHUP) && in->eof)) {
            /* a reset after its FIN: recv says only EOF again, and a
             * level-triggered error would fire every turn */
            pump_kill_link(p, l, true);
            return;
        }
        if (ev & (EPOLLIN | EPOLLHUP))
            read_side(p, l, d, now);
        if (!l->dead && (ev & EPOLLOUT))
            flush(p, l, d == &l->client ? &l->down : &l->up,
                  d == &l->client ? STREAM_DOWN : STREAM_UP, now);
    }
    pump_update_events(p, l, now);
}

/* ---- toxics in time -------------------------------------------------- */

/* When the loop must wake for f: its head's time, if still to come. What is
 * due already waits for EPOLLOUT (or for the connect), not for a timer:
 * a past time here would spin the loop. */
static uint64_t due_on(const struct proxy *p, const struct link *l, const struct flow *f,
                       unsigned dir, uint64_t now)
{
    if (f->head == NULL || f->head->ready_ns <= now || toxics_holding(p, l, dir))
        return NEVER;
    return f->head->ready_ns;
}

/* Send what has come due, carry out timed closes and resets; the next
 * moment something will be due. */
uint64_t pump_tick(struct proxy *p, uint64_t now)
{
    uint64_t next = NEVER;
    for (struct link *l = p->links, *nx; l; l = nx) {
        nx = l->next;
        bool reset, close_;
        uint64_t dl = toxics_deadline(p, l, &reset, &close_);
        if (dl <= now) {
            pump_kill_link(p, l, reset);
            continue;
        }
        if (!flush(p, l, &l->up, STREAM_UP, now) || !flush(p, l, &l->down, STREAM_DOWN, now))
            continue;
        pump_update_events(p, l, now);
        uint64_t t = due_on(p, l, &l->up, STREAM_UP, now);
        uint64_t d = due_on(p, l, &l->down, STREAM_DOWN, now);
        t = d < t ? d : t;
        t = dl < t ? dl : t;
        next = t < next ? t : next;
    }
    return next;
}

/* ---- the loop -------------------------------------------------------- */

void pump_bury(struct proxy *p)
{
    while (p->graveyard) {
        struct link *l = p->graveyard;
        p->graveyard = l->next;
        free(l);
    }
}
