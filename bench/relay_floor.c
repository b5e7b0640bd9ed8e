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
 *       sockmap the kernel forwards each segment itself (a BPF sk_skb verdict
 *              program redirecting it to the other socket of the pair, found
 *              in a sockhash by the receiving socket's ports): no wake of the
 *              relay at all. Needs CAP_BPF and CAP_NET_ADMIN.
 * LISTEN_PORT 0: a free port, the kernel's choice. Prints "listening PORT"
 * once it accepts, then runs until killed (SIGTERM).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

enum mode { COPY, DRAIN, SPLICE, SOCKMAP };

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
    bool added;       /* fd is in the epoll set (watched may be 0) */
};

static enum mode mode;
static int ep;
static char buf[BUF_BYTES];

static void watch(struct side *s, uint32_t ev)
{
    if (mode == DRAIN)
        ev |= EPOLLET;
    struct epoll_event e = {.events = ev, .data.ptr = s};
    if (s->added && s->watched == ev)
        return;
    epoll_ctl(ep, s->added ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s->fd, &e);
    s->watched = ev;
    s->added = true;
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
    if (mode == SOCKMAP) { /* only a close wakes it */
        close_pair(s);
        return;
    }
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

/* ---- sockmap: the kernel forwards ---------------------------------- */

static int sockhash = -1;

static long bpf(int cmd, union bpf_attr *a)
{
    return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

/* A socket's key: its local port (host order) and its peer's port (network
 * order, in the upper half on a little-endian machine), as the verdict
 * program reads them from the __sk_buff. */
static uint64_t key_of(int fd)
{
    struct sockaddr_in l, r;
    socklen_t ll = sizeof(l), rl = sizeof(r);
    getsockname(fd, (struct sockaddr *)&l, &ll);
    getpeername(fd, (struct sockaddr *)&r, &rl);
    uint32_t k[2] = {ntohs(l.sin_port), r.sin_port};
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    k[1] <<= 16;
#endif
    uint64_t out;
    memcpy(&out, k, sizeof(out));
    return out;
}

/* The sockhash and the verdict program on it: a segment received on a
 * socket goes out through the socket stored under that socket's key. */
static int sockmap_setup(void)
{
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.map_type = BPF_MAP_TYPE_SOCKHASH;
    a.key_size = 8;
    a.value_size = 4;
    a.max_entries = 65536;
    sockhash = (int)bpf(BPF_MAP_CREATE, &a);
    if (sockhash < 0)
        return -1;
    struct bpf_insn prog[] = {
        {.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 6, .src_reg = 1},
        {.code = BPF_LDX | BPF_MEM | BPF_W,
         .dst_reg = 2,
         .src_reg = 6,
         .off = offsetof(struct __sk_buff, local_port)},
        {.code = BPF_STX | BPF_MEM | BPF_W, .dst_reg = 10, .src_reg = 2, .off = -8},
        {.code = BPF_LDX | BPF_MEM | BPF_W,
         .dst_reg = 2,
         .src_reg = 6,
         .off = offsetof(struct __sk_buff, remote_port)},
        {.code = BPF_STX | BPF_MEM | BPF_W, .dst_reg = 10, .src_reg = 2, .off = -4},
        {.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 1, .src_reg = 6},
        {.code = BPF_LD | BPF_DW | BPF_IMM,
         .dst_reg = 2,
         .src_reg = BPF_PSEUDO_MAP_FD,
         .imm = sockhash},
        {0},
        {.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 3, .src_reg = 10},
        {.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 3, .imm = -8},
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 4, .imm = 0}, /* egress */
        {.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_sk_redirect_hash},
        {.code = BPF_JMP | BPF_EXIT},
    };
    static char log[4096];
    memset(&a, 0, sizeof(a));
    a.prog_type = BPF_PROG_TYPE_SK_SKB;
    a.insns = (uint64_t)(uintptr_t)prog;
    a.insn_cnt = sizeof(prog) / sizeof(prog[0]);
    a.license = (uint64_t)(uintptr_t) "GPL";
    a.log_buf = (uint64_t)(uintptr_t)log;
    a.log_size = sizeof(log);
    a.log_level = 1;
    int pfd = (int)bpf(BPF_PROG_LOAD, &a);
    if (pfd < 0) {
        fprintf(stderr, "relay_floor: the verdict program did not load: %s\n%s", strerror(errno),
                log);
        return -1;
    }
    memset(&a, 0, sizeof(a));
    a.target_fd = (uint32_t)sockhash;
    a.attach_bpf_fd = (uint32_t)pfd;
    a.attach_type = BPF_SK_SKB_VERDICT;
    return (int)bpf(BPF_PROG_ATTACH, &a);
}

/* Store peer under s's key: what s receives, the kernel sends through peer. */
static int sockmap_pair(int s, int peer)
{
    union bpf_attr a;
    uint64_t k = key_of(s);
    uint32_t v = (uint32_t)peer;
    memset(&a, 0, sizeof(a));
    a.map_fd = (uint32_t)sockhash;
    a.key = (uint64_t)(uintptr_t)&k;
    a.value = (uint64_t)(uintptr_t)&v;
    a.flags = BPF_ANY;
    return (int)bpf(BPF_MAP_UPDATE_ELEM, &a);
}

static int listen_on(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    socklen_t len = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 512) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0)
        return -1;
    printf("listening %d\n", ntohs(a.sin_port));
    fflush(stdout);
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
    /* the server's side first: the server speaks only when spoken to, and
     * what the client sent before its own entry stays for recv (pull) */
    if (mode == SOCKMAP && (sockmap_pair(s, c) < 0 || sockmap_pair(c, s) < 0)) {
        fprintf(stderr, "relay_floor: cannot add a connection to the sockhash: %s\n",
                strerror(errno));
        exit(1);
    }
    if (mode == SOCKMAP) {
        /* the bytes the client sent before its entry, then no more reads:
         * a socket in the sockhash is woken for each segment the kernel
         * forwards, and recv finds nothing */
        ssize_t n = recv(c, buf, sizeof(buf), 0);
        if (n > 0 && send(s, buf, (size_t)n, MSG_NOSIGNAL) != n) {
            fprintf(stderr, "relay_floor: the first bytes did not go through at once\n");
            exit(1);
        }
        watch(a, EPOLLRDHUP);
        watch(b, EPOLLRDHUP);
        return;
    }
    watch(a, EPOLLIN);
    watch(b, EPOLLIN);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: relay_floor copy|drain|splice|sockmap LISTEN_PORT SERVER_PORT\n");
        return 2;
    }
    if (strcmp(argv[1], "copy") == 0)
        mode = COPY;
    else if (strcmp(argv[1], "drain") == 0)
        mode = DRAIN;
    else if (strcmp(argv[1], "splice") == 0)
        mode = SPLICE;
    else if (strcmp(argv[1], "sockmap") == 0)
        mode = SOCKMAP;
    else {
        fprintf(stderr, "relay_floor: mode must be copy, drain, splice or sockmap, not %s\n",
                argv[1]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct sockaddr_in server = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)atoi(argv[3])),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (mode == SOCKMAP && sockmap_setup() < 0) {
        fprintf(stderr, "relay_floor: no sockmap here: %s\n", strerror(errno));
        return 1;
    }
    int lfd = listen_on(atoi(argv[2]));
    ep = epoll_create1(0);
    if (lfd < 0 || ep < 0) {
        fprintf(stderr, "relay_floor: cannot listen on 127.0.0.1:%s: %s\n", argv[2],
                strerror(errno));
        return 1;
    }
    struct epoll_event le = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &le);
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
