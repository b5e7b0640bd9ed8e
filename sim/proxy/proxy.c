/* proxy.c - the proxy of a run and its control: its listeners (one per
 * proxied endpoint and group of clients), the commands other threads hand
 * the loop, and what they do there: toxics put in force and taken away,
 * listeners a down toxic closed and opened again, the stats.
 *
 * The event loop that moves the bytes is pump.c's; toxics.c applies the
 * toxics in force to them, each toxic's own work in sim/proxy/toxics/.
 */
#include "sim/proxy/proxy.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sim/proxy/proxy_state.h"
#include "sim/record/clock.h"

/* ---- sockets --------------------------------------------------------- */

static int open_listener(struct listener *ls)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)ls->port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 512) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
        close(fd);
        return -1;
    }
    if (ls->port == 0) /* set once: other threads read it (proxy_address) */
        ls->port = ntohs(a.sin_port);
    ls->pfd.fd = fd;
    return 0;
}

static void close_listener(struct proxy *p, struct listener *ls)
{
    pump_unwatch_close(p, ls->pfd.fd);
    ls->pfd.fd = -1;
}

/* The server's address, looked up once in proxy_new: a lookup inside the
 * loop would stall every connection. */
static int resolve(const struct lock_endpoint *ep, struct sockaddr_storage *out, socklen_t *len)
{
    char port[16];
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    snprintf(port, sizeof(port), "%d", ep->port);
    if (getaddrinfo(ep->host, port, &hints, &ai) != 0 || ai == NULL)
        return -1;
    memcpy(out, ai->ai_addr, ai->ai_addrlen);
    *len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}

/* ---- toxics set and cleared, on the loop's command ------------------- */

static void retime(struct link *l, uint64_t now)
{
    struct flow *fs[2] = {&l->up, &l->down};
    for (int k = 0; k < 2; k++) {
        for (struct chunk *c = fs[k]->head; c; c = c->next)
            if (c->ready_ns > now)
                c->ready_ns = now;
        fs[k]->last_ready = now;
    }
}

static size_t n_listeners(const struct proxy *p)
{
    return p->n_up * p->n_groups;
}

static void down_start(struct proxy *p, int id, const struct toxic *t, uint64_t *links)
{
    for (size_t i = 0; i < n_listeners(p); i++) {
        struct listener *ls = &p->ls[i];
        if (!(p->proxied & (1u << ls->ep)) || !toxic_reaches(t, ls->ep, ls->group))
            continue;
        ls->downed |= 1ULL << id;
        close_listener(p, ls);
    }
    for (struct link *l = p->links, *nx; l; l = nx) {
        nx = l->next;
        if (toxic_reaches(t, l->ep, l->group)) {
            pump_kill_link(p, l, false);
            (*links)++;
        }
    }
}

/* Listen again where no down toxic holds a listener any more. Its port may
 * be taken meanwhile (by some connection's local end): then the loop tries
 * again each turn (relisten) until it is free. */
static void proxy_relisten(struct proxy *p)
{
    p->relisten = false;
    for (size_t i = 0; i < n_listeners(p); i++) {
        struct listener *ls = &p->ls[i];
        if (!(p->proxied & (1u << ls->ep)) || ls->downed)
            continue;
        if (ls->pfd.fd >= 0) {
            pump_rewatch(p, &ls->pfd, EPOLLIN); /* one accept4 could not take */
            continue;
        }
        if (open_listener(ls) < 0) {
            p->relisten = true;
        } else if (pump_watch(p, &ls->pfd, EPOLLIN) < 0) {
            close_listener(p, ls);
            p->relisten = true;
        }
    }
}

static void down_end(struct proxy *p, int id)
{
    for (size_t i = 0; i < n_listeners(p); i++)
        p->ls[i].downed &= ~(1ULL << id);
    proxy_relisten(p);
}

static int add_toxic(struct proxy *p, int id, const struct toxic *t, uint64_t now, uint64_t *links)
{
    *links = 0;
    if (id < 0 || id >= PROXY_MAX_TOXICS || p->slot[id].active)
        return -1;
    uint8_t *own = NULL;
    if (t->groups && (own = malloc(p->n_groups)) == NULL)
        return -1;
    if (own)
        memcpy(own, t->groups, p->n_groups);
    p->slot[id] = (struct slot){.active = true, .t = *t, .own_groups = own, .since_ns = now};
    p->slot[id].t.groups = own;
    p->active |= 1ULL << id;
    if (t->kind->refuses) {
        down_start(p, id, t, links);
        p->st.toxic_links[id] += *links;
        return 0;
    }
    for (struct link *l = p->links; l; l = l->next) {
        toxics_draw(p, l, id);
        *links += (l->applies >> id) & 1;
    }
    return 0;
}

static void remove_toxic(struct proxy *p, int id, uint64_t now)
{
    if (id < 0 || id >= PROXY_MAX_TOXICS || !p->slot[id].active)
        return;
    bool down = p->slot[id].t.kind->refuses;
    p->slot[id].active = false;
    p->active &= ~(1ULL << id);
    if (down)
        down_end(p, id);
    free(p->slot[id].own_groups);
    p->slot[id].own_groups = NULL;
    p->slot[id].t.groups = NULL;
    if (down)
        return;
    for (struct link *l = p->links; l; l = l->next)
        if (l->applies & (1ULL << id)) {
            l->applies &= ~(1ULL << id);
            retime(l, now); /* what it delayed goes out now; what it held, too */
        }
    pump_tick(p, now);
}

/* Carry out the command another thread left; false on stop. */
static bool proxy_run_command(struct proxy *p)
{
    uint64_t v;
    if (read(p->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
        return true;
    pthread_mutex_lock(&p->mu);
    enum cmd_kind k = p->cmd;
    uint64_t now = clock_mono_ns();
    if (k == CMD_ADD)
        p->cmd_rc = add_toxic(p, p->cmd_id, &p->cmd_toxic, now, &p->cmd_links);
    else if (k == CMD_REMOVE)
        remove_toxic(p, p->cmd_id, now);
    else if (k == CMD_STATS)
        p->cmd_stats = p->st;
    if (k != CMD_NONE) {
        p->cmd = CMD_NONE;
        p->done = true;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    if (k == CMD_ADD)
        for (struct link *l = p->links; l; l = l->next)
            pump_update_events(p, l, now); /* a hold or a drop may stop a side's writes */
    return k != CMD_STOP;
}

#define MAX_EVENTS 256

static int wait_ms(uint64_t next, uint64_t now)
{
    if (next == NEVER)
        return -1;
    if (next <= now)
        return 0;
    uint64_t ms = (next - now + 999999) / 1000000;
    return ms > 1000 ? 1000 : (int)ms;
}

/* The proxy's thread: links pumped (pump.c), commands and listeners
 * seen to, until a stop command. */
static void *proxy_loop(void *arg)
{
    struct proxy *p = arg;
    struct epoll_event ev[MAX_EVENTS];
    uint64_t next = NEVER;
    for (bool go = true; go;) {
        int n = epoll_wait(p->ep_fd, ev, MAX_EVENTS, wait_ms(next, clock_mono_ns()));
        uint64_t now = clock_mono_ns();
        for (int i = 0; i < n && go; i++) {
            struct pfd *d = ev[i].data.ptr;
            if (d->kind == PFD_WAKE)
                go = proxy_run_command(p);
            else if (d->kind == PFD_LISTENER)
                pump_accept_all(p, (struct listener *)d, now);
            else
                pump_on_link(p, d, ev[i].events, now);
        }
        next = p->active || next != NEVER ? pump_tick(p, clock_mono_ns()) : NEVER;
        if (p->relisten) {
            proxy_relisten(p);
            uint64_t soon = clock_mono_ns() + 10000000u;
            next = p->relisten && soon < next ? soon : next;
        }
        pump_bury(p);
    }
    atomic_store(&p->gone, true);
    return NULL;
}

/* ---- the API --------------------------------------------------------- */

struct proxy *proxy_new(const struct lock_endpoint *up, size_t n, uint32_t proxied, size_t n_groups,
                        uint64_t seed, char *err, size_t errlen)
{
    struct proxy *p = calloc(1, sizeof(*p));
    if (p)
        p->ep_fd = p->wake_fd = -1; /* before any failure: proxy_free closes what is >= 0 */
    if (p == NULL || n > LOCK_ENDPOINT_MAX || n_groups == 0)
        goto fail;
    memcpy(p->up, up, n * sizeof(*up));
    for (size_t e = 0; e < n; e++)
        if (resolve(&up[e], &p->up_addr[e], &p->up_len[e]) < 0) {
            snprintf(err, errlen, "proxy: cannot resolve %s:%d", up[e].host, up[e].port);
            errno = 0;
            free(p);
            return NULL;
        }
    p->n_up = n;
    p->proxied = proxied;
    p->n_groups = n_groups;
    p->rng = (seed ^ 0x70726f7879ULL) * 0x9e3779b97f4a7c15ULL | 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->call_mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->ls = calloc(n * n_groups, sizeof(*p->ls));
    for (size_t i = 0; p->ls && i < n * n_groups; i++)
        p->ls[i].pfd.fd = -1; /* before any failure: proxy_free closes what is >= 0 */
    p->ep_fd = epoll_create1(EPOLL_CLOEXEC);
    p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (p->ls == NULL || p->ep_fd < 0 || p->wake_fd < 0)
        goto fail;
    p->wake = (struct pfd){.kind = PFD_WAKE, .fd = p->wake_fd};
    pump_watch(p, &p->wake, EPOLLIN);
    for (size_t i = 0; i < n * n_groups; i++) {
        struct listener *ls = &p->ls[i];
        *ls = (struct listener){
            .pfd = {.kind = PFD_LISTENER, .fd = -1}, .ep = i / n_groups, .group = i % n_groups};
        if (!(proxied & (1u << ls->ep)))
            continue;
        if (open_listener(ls) < 0 || pump_watch(p, &ls->pfd, EPOLLIN) < 0)
            goto fail;
    }
    return p;
fail:
    snprintf(err, errlen, "proxy: cannot listen on 127.0.0.1: %s",
             errno ? strerror(errno) : "out of memory");
    proxy_free(p);
    return NULL;
}

int proxy_start(struct proxy *p, char *err, size_t errlen)
{
    int rc = pthread_create(&p->thread, NULL, proxy_loop, p);
    if (rc != 0) {
        snprintf(err, errlen, "proxy: cannot start its thread: %s", strerror(rc));
        return -1;
    }
    /* Named so that its share of a core can be read in /proc/PID/task
     * (bench/proxy_cost.sh) or top -H, apart from the clients' threads. */
    pthread_setname_np(p->thread, "locklab-proxy");
    p->running = true;
    return 0;
}

struct lock_endpoint proxy_address(const struct proxy *p, size_t e, size_t g)
{
    if (!proxy_covers(p, e))
        return p->up[e];
    struct lock_endpoint ep = {.host = "127.0.0.1", .port = p->ls[e * p->n_groups + g].port};
    return ep;
}

struct lock_endpoint proxy_upstream(const struct proxy *p, size_t e)
{
    return p->up[e];
}

bool proxy_covers(const struct proxy *p, size_t e)
{
    return e < p->n_up && (p->proxied & (1u << e));
}

size_t proxy_endpoints(const struct proxy *p)
{
    return p->n_up;
}

size_t proxy_groups(const struct proxy *p)
{
    return p->n_groups;
}

/* Hand a command to the loop and wait until it is carried out. */
static int command(struct proxy *p, enum cmd_kind k, int id, const struct toxic *t, uint64_t *links)
{
    if (!p->running || atomic_load(&p->gone))
        return -1;
    pthread_mutex_lock(&p->call_mu);
    pthread_mutex_lock(&p->mu);
    p->cmd = k;
    p->cmd_id = id;
    if (t)
        p->cmd_toxic = *t;
    p->cmd_rc = 0;
    p->cmd_links = 0;
    p->done = false;
    pthread_mutex_unlock(&p->mu);
    uint64_t one = 1;
    int rc = write(p->wake_fd, &one, sizeof(one)) == sizeof(one) ? 0 : -1;
    pthread_mutex_lock(&p->mu);
    while (rc == 0 && !p->done)
        pthread_cond_wait(&p->cv, &p->mu);
    if (rc == 0)
        rc = p->cmd_rc;
    if (links)
        *links = p->cmd_links;
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->call_mu);
    return rc;
}

int proxy_toxic_add(struct proxy *p, int id, const struct toxic *t, uint64_t *links)
{
    return command(p, CMD_ADD, id, t, links);
}

void proxy_toxic_remove(struct proxy *p, int id)
{
    command(p, CMD_REMOVE, id, NULL, NULL);
}

void proxy_stats(struct proxy *p, struct proxy_stats *out)
{
    if (command(p, CMD_STATS, -1, NULL, NULL) == 0) {
        pthread_mutex_lock(&p->mu);
        *out = p->cmd_stats;
        pthread_mutex_unlock(&p->mu);
    } else {
        *out = p->st; /* the loop has left: nothing changes them any more */
    }
}

void proxy_free(struct proxy *p)
{
    if (p == NULL)
        return;
    if (p->running) {
        command(p, CMD_STOP, -1, NULL, NULL);
        pthread_join(p->thread, NULL);
        p->running = false;
    }
    while (p->links)
        pump_kill_link(p, p->links, false);
    pump_bury(p);
    for (size_t i = 0; p->ls && i < n_listeners(p); i++)
        close_listener(p, &p->ls[i]);
    for (int i = 0; i < PROXY_MAX_TOXICS; i++)
        free(p->slot[i].own_groups);
    free(p->ls);
    if (p->ep_fd >= 0)
        close(p->ep_fd);
    if (p->wake_fd >= 0)
        close(p->wake_fd);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->call_mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}
