/* proxy_state.h - the proxy's insides, shared by proxy.c (the listeners,
 * the commands, toxics set and cleared), pump.c (the event loop that moves
 * the bytes) and toxics.c (what the toxics in force do to them). Everything here
 * but the command fields runs on the loop's thread alone. */
#ifndef LOCKLAB_PROXY_STATE_H
#define LOCKLAB_PROXY_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "sim/proxy/proxy.h"

#define NEVER UINT64_MAX

/* Bytes on their way in one direction, due at ready_ns. */
struct chunk {
    struct chunk *next;
    uint64_t ready_ns;
    uint32_t len, off;
    char data[];
};

/* One direction of a connection: from one socket to the other. */
struct flow {
    struct chunk *head, *tail;
    size_t queued;       /* bytes in the queue */
    uint64_t last_ready; /* keeps delayed chunks in order */
    uint64_t limited;    /* bytes past a limit_data toxic since it began */
    bool eof;            /* the source closed: close once the queue is out */
    bool close_after;    /* a limit was reached: close once the queue is out */
};

enum pfd_kind { PFD_LISTENER = 1, PFD_CLIENT, PFD_SERVER, PFD_WAKE };

struct link;

/* What epoll's data.ptr points at: every kind starts with its kind. */
struct pfd {
    enum pfd_kind kind;
    int fd;
    uint32_t events; /* what epoll watches now */
    struct link *link;
};

struct link {
    struct pfd client, server;
    struct flow up, down; /* up: client -> server */
    size_t ep, group;
    uint64_t created_ns;
    uint64_t applies; /* bit id: toxic id applies to it (drawn by toxicity) */
    bool connecting;  /* the upstream connect is still under way */
    bool dead;        /* closed this turn; freed after it */
    struct link *prev, *next;
};

struct listener {
    struct pfd pfd; /* fd -1 while a down toxic holds it */
    size_t ep, group;
    int port;
    uint64_t downed; /* bit id: down toxics holding it */
};

struct slot {
    bool active;
    struct toxic t; /* t.groups points at own_groups */
    uint8_t *own_groups;
    uint64_t since_ns;
};

enum cmd_kind { CMD_NONE = 0, CMD_ADD, CMD_REMOVE, CMD_STATS, CMD_STOP };

struct proxy {
    struct lock_endpoint up[LOCK_ENDPOINT_MAX];
    struct sockaddr_storage up_addr[LOCK_ENDPOINT_MAX]; /* resolved once */
    socklen_t up_len[LOCK_ENDPOINT_MAX];
    bool relisten; /* a listener a down toxic closed could not listen again yet */
    size_t n_up;
    uint32_t proxied;
    size_t n_groups;
    struct listener *ls; /* n_up * n_groups, index e * n_groups + g; unproxied: fd -1 */
    int ep_fd, wake_fd;
    struct pfd wake;
    struct link *links; /* open connections */
    struct link *graveyard;
    struct slot slot[PROXY_MAX_TOXICS];
    uint64_t active; /* bit id: slot id active */
    uint64_t rng;
    struct proxy_stats st;

    /* commands from other threads, one at a time */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    enum cmd_kind cmd;
    int cmd_id;
    struct toxic cmd_toxic;
    int cmd_rc;
    uint64_t cmd_links;
    struct proxy_stats cmd_stats;
    bool done;               /* the command was carried out */
    pthread_mutex_t call_mu; /* one caller at a time */
    pthread_t thread;
    bool running;
    atomic_bool gone; /* the loop has left */
};

/* pump.c */
/* Add d's fd to the loop's epoll set, watching events. epoll_ctl's result. */
int pump_watch(struct proxy *p, struct pfd *d, uint32_t events);
/* Watch events on d from now on (nothing when d is closed or unchanged). */
void pump_rewatch(struct proxy *p, struct pfd *d, uint32_t events);
/* Take fd out of the epoll set, then close it; nothing for fd < 0. */
void pump_unwatch_close(struct proxy *p, int fd);
/* Close both sides of l and drop what it queued; with rst, the client sees
 * a reset. l is freed by pump_bury, after the turn whose events name it. */
void pump_kill_link(struct proxy *p, struct link *l, bool rst);
/* Watch on l's two sockets what its queues and toxics allow now. */
void pump_update_events(struct proxy *p, struct link *l, uint64_t now);
/* Send what has come due, carry out timed closes and resets; the next
 * moment something will be due (NEVER: nothing). */
uint64_t pump_tick(struct proxy *p, uint64_t now);
/* Free the links closed this turn. */
void pump_bury(struct proxy *p);
/* Accept every waiting connection on ls, each a link to its upstream. */
void pump_accept_all(struct proxy *p, struct listener *ls, uint64_t now);
/* Events ev on one side d of a link. */
void pump_on_link(struct proxy *p, struct pfd *d, uint32_t ev, uint64_t now);

/* toxics.c */
/* Queue n bytes just read from one side of l onto f (direction dir). */
void toxics_enqueue(struct proxy *p, struct link *l, struct flow *f, unsigned dir, const char *buf,
                    size_t n, uint64_t now);
/* Does an active toxic stop anything leaving on flow dir of l? */
bool toxics_holding(const struct proxy *p, const struct link *l, unsigned dir);
/* Does any active toxic that shapes time (latency, bandwidth, slicer, or a
 * timed close or reset) apply to l? */
uint64_t toxics_deadline(const struct proxy *p, const struct link *l, bool *reset, bool *close_);
/* Decide which active toxics apply to a new connection, or which
 * connections a new toxic id applies to. */
void toxics_draw(struct proxy *p, struct link *l, int id);
bool toxics_any_on(const struct proxy *p, const struct link *l, unsigned dir);
/* Does toxic t reach group g of endpoint e? */
bool toxic_reaches(const struct toxic *t, size_t e, size_t g);
uint64_t proxy_random(struct proxy *p);

#endif
