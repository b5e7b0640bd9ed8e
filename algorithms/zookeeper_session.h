/* zookeeper_session.h - what ZooKeeper-based locks share: one client's
 * session with the single-threaded C client library, driven by the client
 * itself (zookeeper_interest, a wait through the seam, zookeeper_process),
 * its watchers and the link changes they report, opening and reopening it,
 * the requests the recipe makes, the wait on a watch, the idle time that
 * keeps the session alive, and the crash that leaves it to expire.
 *
 * This is client-library code, not an algorithm, as redis_wire.h is for
 * Redis: zookeeper.c (the recipe) includes it. The library has no thread
 * of its own: its completions and watchers run inside zookeeper_process,
 * on the client's own thread (or coroutine), so nothing here takes a lock.
 * Nothing pings the server unless the client drives the session: a client
 * that does not hold or wait drives it in zk_session_idle.
 */
#ifndef LOCKLAB_ZOOKEEPER_SESSION_H
#define LOCKLAB_ZOOKEEPER_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zookeeper/zookeeper.h>

#include "algorithms/lock.h"

#define ZK_PATH_MAX  256 /* a node's path, its terminator included */
#define ZK_LINKS_MAX 32  /* link changes kept between two operations */

/* One client's ZooKeeper session: the handle, what the watchers tell it
 * (connected, expired, a watch fired), and the link changes it keeps for
 * the engine. */
struct zk_session {
    zhandle_t *zh;
    bool connected, expired, fired;
    char watching[ZK_PATH_MAX]; /* the node the waiter waits on */
    uint64_t losses;            /* session events other than "connected" */
    uint64_t drops;             /* connected -> anything else, for connect_failures */
    uint64_t watch_events;
    /* Link changes not yet handed to the engine. */
    struct lock_link_event links[ZK_LINKS_MAX];
    size_t n_links;
    bool link_known; /* last_link holds the newest state reported */
    uint8_t last_link;
    uint64_t drops_counted;             /* the part of drops already in c->connect_failures */
    int session_ms;                     /* as negotiated with the server */
    char hosts[LOCK_ENDPOINT_MAX * 72]; /* "host:port," for each endpoint */
};

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
 * at once): the library's zookeeper_close, on a thread of its own while the
 * client waits for it through the seam (up to 5 s), so the other clients
 * of its worker go on meanwhile. s->zh is NULL after. */
void zk_session_close(struct lock_client *c, struct zk_session *s);
/* Let go of the handle without closing the session, as a dead process
 * would: the server expires it after its timeout. */
void zk_session_crash(struct lock_client *c, struct zk_session *s);

/* The requests the recipe makes, each sent and its answer waited for
 * through the seam, as the multi-threaded library's synchronous calls
 * (zoo_create, zoo_get_children, zoo_delete) wait on their completion
 * thread: the library ends every request, with ZCONNECTIONLOSS or
 * ZOPERATIONTIMEOUT when the connection gives out. Each returns the
 * ZooKeeper code. zk_create writes the created path into out (out_len
 * bytes); zk_children fills kids, which the caller frees with
 * deallocate_String_vector when the call returned ZOK. */
int zk_create(struct lock_client *c, struct zk_session *s, const char *path, const char *value,
              int value_len, int mode, char *out, size_t out_len);
int zk_children(struct lock_client *c, struct zk_session *s, const char *path,
                struct String_vector *kids);
int zk_delete(struct lock_client *c, struct zk_session *s, const char *path);

/* Set a data watch on path (a ZK_PATH_MAX buffer) for zk_session_wait_watch.
 * The ZooKeeper code of the call: ZOK set, ZNONODE the node is gone. */
int zk_session_watch(struct lock_client *c, struct zk_session *s,
                     const char path[static ZK_PATH_MAX]);
/* Wait for that watch: 1 it fired, 0 the deadline (lock_now_ms) passed or
 * the engine cancelled, -1 the session expired (c->err not set). */
int zk_session_wait_watch(struct lock_client *c, struct zk_session *s, uint64_t deadline);

/* Drive the session until until_ns (CLOCK_MONOTONIC), or sooner once
 * *cancel is non-zero (NULL: never), noticed within 50 ms: it pings, and
 * its watchers see the link drop, come back or expire, as the library's
 * own I/O thread would have. Waits only through the seam; a session that
 * is gone (expired, never opened) only sleeps. lock_ops.idle. */
void zk_session_idle(struct lock_client *c, struct zk_session *s, uint64_t until_ns,
                     const atomic_int *cancel);

/* Hand up to max link changes, oldest first, to the engine (lock_ops.links). */
size_t zk_session_links(struct zk_session *s, struct lock_link_event *out, size_t max);

#endif
