/* zookeeper_session.h - what ZooKeeper-based locks share: one client's
 * session with the C client library (the multi-threaded one, which keeps
 * its own threads), its watcher and the link changes it reports, opening
 * and reopening it, the wait on a watch, and the crash that leaves it to
 * expire.
 *
 * This is client-library code, not an algorithm, as redis_wire.h is for
 * Redis: zookeeper.c (the recipe) includes it. The library's completion
 * thread writes only under mu or into atomics; every function here runs
 * on the client's own thread.
 */
#ifndef LOCKLAB_ZOOKEEPER_SESSION_H
#define LOCKLAB_ZOOKEEPER_SESSION_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zookeeper/zookeeper.h>

#include "algorithms/lock.h"

#define ZK_PATH_MAX  256 /* a node's path, its terminator included */
#define ZK_LINKS_MAX 32  /* link changes kept between two operations */

/* One client's ZooKeeper session: the handle, what the library's completion
 * thread tells it (connected, expired, a watch fired), and the link
 * changes it keeps for the engine. */
struct zk_session {
    zhandle_t *zh;
    bool sync_ready; /* mu and cv initialised */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* Under mu: written by the client library's completion thread. */
    bool connected, expired, fired;
    char watching[ZK_PATH_MAX]; /* the node the waiter sleeps on */
    _Atomic uint64_t losses;    /* session events other than "connected" */
    _Atomic uint64_t drops;     /* connected -> anything else, for connect_failures */
    _Atomic uint64_t watch_events;
    /* Link changes not yet handed to the engine (under mu; pending says
     * some are there without taking mu). */
    struct lock_link_event links[ZK_LINKS_MAX];
    size_t n_links;
    atomic_bool links_pending;
    bool link_known; /* last_link holds the newest state reported */
    uint8_t last_link;
    uint64_t drops_counted;             /* the part of drops already in c->connect_failures */
    int session_ms;                     /* as negotiated with the server */
    char hosts[LOCK_ENDPOINT_MAX * 72]; /* "host:port," for each endpoint */
};

/* Initialise s's mutex and condition variable (s zeroed before). 0, or -1
 * with c->err set; zk_session_fini is safe either way. */
int zk_session_init(struct lock_client *c, struct zk_session *s);
/* Free what zk_session_init made; the handle must be closed first. */
void zk_session_fini(struct zk_session *s);
/* s->hosts from c's endpoints. 0, or -1 with c->err set. */
int zk_session_hosts(struct lock_client *c, struct zk_session *s);

/* Open a session with s->hosts and wait until it is connected (the
 * engine's connect timeout, else the session timeout). 0, or -1 with
 * c->err set, s->zh NULL and c->connect_failures bumped. */
int zk_session_open(struct lock_client *c, struct zk_session *s);
/* The session as it is if it can still recover, else a new one: 0 it lives
 * on, 1 a new one was opened (the old one's ephemeral nodes are gone), -1
 * with c->err set. */
int zk_session_ensure(struct lock_client *c, struct zk_session *s);
/* The session id the server gave, 0 when there is none. */
int64_t zk_session_id(const struct zk_session *s);
/* Add the connection drops the watcher saw since the last call to
 * c->connect_failures and c->connect_refused; at the end of each call. */
void zk_session_count_drops(struct lock_client *c, struct zk_session *s);

/* Close the session (closeSession: the server deletes its ephemeral nodes
 * at once). */
void zk_session_close(struct lock_client *c, struct zk_session *s);
/* Let go of the handle without closing the session, as a dead process
 * would: the server expires it after its timeout. */
void zk_session_crash(struct lock_client *c, struct zk_session *s);

/* Set a data watch on path (a ZK_PATH_MAX buffer) for zk_session_wait_watch.
 * The ZooKeeper code of the call: ZOK set, ZNONODE the node is gone. */
int zk_session_watch(struct zk_session *s, const char path[static ZK_PATH_MAX]);
/* Wait for that watch: 1 it fired, 0 the deadline (lock_now_ms) passed or
 * the engine cancelled, -1 the session expired (c->err not set). */
int zk_session_wait_watch(struct lock_client *c, struct zk_session *s, uint64_t deadline);

/* Hand up to max link changes, oldest first, to the engine (lock_ops.links). */
size_t zk_session_links(struct zk_session *s, struct lock_link_event *out, size_t max);

#endif
