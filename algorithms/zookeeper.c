/* zookeeper.c - the lock of ZooKeeper's "Recipes and Solutions", run the
 * way Curator's InterProcessMutex runs it.
 *
 * acquire: create /locks/<key>/_c_<id>-lock- EPHEMERAL|SEQUENCE, list the
 *   children; the lowest sequence holds the lock. A waiter watches only the
 *   node just before its own (no herd effect) and lists again when that
 *   one goes. The token is the sequence number + 1: the server hands out
 *   sequences in creation order and the queue grants in that order.
 * release: delete the node.
 * The session timeout plays the ttl: when the connection drops or the
 *   session expires while a lock is held, the grant counts as lost
 *   (Curator's SUSPENDED/LOST) and release reports LOCK_LOST. No renew: the
 *   session's own heartbeat is the renewal.
 * LOST is only ever said on the server's word (the node is gone, the
 *   session was declared expired) or on that of our own books (a grant this
 *   client does not hold). A delete whose answer did not come back
 *   (connection loss, timeout) is LOCK_ERR, outcome unknown: the node is
 *   kept as an orphan and deleted before this client's next acquire.
 * A client holds any number of locks at once (a growable array of holds).
 *   Every drop of its connection and every failed session open counts in
 *   c->connect_failures; a drop also in c->connect_refused.
 * The session under all this (connect, reconnect, watchers, the requests
 * and the wait on a watch, all driven through the seam, the idle time
 * that keeps it alive, the crash) is zookeeper_session.c's, on the
 * single-threaded C library: the client drives its own session, and the
 * engine hands it the client's idle time (lock_ops.idle) to ping in.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "algorithms/lock.h"
#include "algorithms/zookeeper.h"
#include "algorithms/zookeeper_session.h"
#include "algorithms/zookeeper_settings.h"

#define ZK_KEY_MAX      160
#define ZK_MIN_HOLDS    8  /* the first allocation of the holds array */
#define ZK_SEQ_DIGITS   10 /* the server's %010d suffix */
#define ZK_CREATE_TRIES 3
#define ZK_ID_DIGITS    16

static const char locks_root[] = "/locks";
static const char name_tag[] = "-lock-"; /* between the client id and the sequence */

enum zk_hold_state {
    HOLD_FREE = 0, /* a slot to reuse */
    HOLD_HELD,     /* granted, not released */
    HOLD_ORPHAN,   /* its release got no answer: the node may still be there */
};

/* A lock this client holds; release finds it by key and token. */
struct zk_hold {
    enum zk_hold_state state;
    uint64_t token;
    uint64_t losses; /* z->s.losses when granted: any change means it may be lost */
    int64_t session; /* the session the node was created in (it dies with it) */
    char path[ZK_PATH_MAX];
};

struct zk_lock {
    struct zk_session s;
    char id[ZK_ID_DIGITS + 1];
    /* The acquire in progress (the client's own thread only). */
    char parent[ZK_PATH_MAX]; /* /locks/<key> */
    char prefix[ZK_PATH_MAX]; /* /locks/<key>/_c_<id>-lock- */
    size_t parent_len, prefix_len;
    char node[ZK_PATH_MAX]; /* our node once created */
    int64_t seq;
    char pred[ZK_PATH_MAX];
    /* A prefix whose node a failed delete may have left behind; removed
     * before this client queues again, or it would hold the queue up. */
    char pending[ZK_PATH_MAX];
    struct zk_hold *holds; /* n_holds slots, grown (rarely) when all are taken */
    size_t n_holds;
};

static atomic_uint next_client_id;

static int error_code(int rc)
{
    switch (rc) {
    case ZOPERATIONTIMEOUT:
        return LOCK_ERR_TIMEOUT;
    case ZCONNECTIONLOSS:
    case ZSESSIONEXPIRED:
        return LOCK_ERR_IO;
    case ZINVALIDSTATE: /* the handle is dead or closing: the library sent nothing */
    case ZCLOSING:
        return LOCK_ERR_UNSENT;
    default:
        return LOCK_ERR_PROTOCOL;
    }
}

static int fail(struct lock_client *c, const char *what, const char *path, int rc)
{
    lock_set_error(c, error_code(rc), "%s %s: %s", what, path, zerror(rc));
    return -1;
}

/* The session, opened anew if it expired. The nodes that pending and the
 * orphans named died with an old session. */
static int ensure_session(struct lock_client *c, struct zk_lock *z)
{
    int rc = zk_session_ensure(c, &z->s);
    if (rc <= 0)
        return rc;
    z->pending[0] = '\0';
    for (size_t i = 0; i < z->n_holds; i++)
        if (z->holds[i].state == HOLD_ORPHAN)
            z->holds[i].state = HOLD_FREE;
    return 0;
}

static void put_hex(char *out, uint64_t v, int digits)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = digits - 1; i >= 0; i--, v >>= 4)
        out[i] = hex[v & 15];
    out[digits] = '\0';
}

/* Curator protects its node names with a UUID; here the low half counts
 * this process's clients (unique within it) and the high half mixes the
 * client's random state, the pid and the wall clock (unique across them). */
static void make_id(struct lock_client *c, struct zk_lock *z)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t mix = lock_random(c, 1ULL << 32) ^ (uint64_t)getpid() ^ (uint64_t)now.tv_nsec;
    uint64_t id = (mix & 0xffffffffULL) << 32 | atomic_fetch_add(&next_client_id, 1);
    put_hex(z->id, id, ZK_ID_DIGITS);
}

static int zookeeper_connect(struct lock_client *c)
{
    if (c->cfg->n_endpoints < 1 || c->cfg->n_endpoints > LOCK_ENDPOINT_MAX) {
        lock_set_error(c, LOCK_ERR_CONFIG, "zookeeper needs 1 to %d endpoints", LOCK_ENDPOINT_MAX);
        return -1;
    }
    struct zk_lock *z = calloc(1, sizeof(*z));
    if (z == NULL) {
        lock_set_error(c, LOCK_ERR_IO, "out of memory");
        return -1;
    }
    c->impl = z;
    make_id(c, z);
    if (zk_session_hosts(c, &z->s) < 0)
        return -1;
    return zk_session_open(c, &z->s);
}

static void free_impl(struct lock_client *c)
{
    struct zk_lock *z = c->impl;
    free(z->holds);
    free(z);
    c->impl = NULL;
}

static void zookeeper_disconnect(struct lock_client *c)
{
    struct zk_lock *z = c->impl;
    if (z == NULL)
        return;
    zk_session_close(c, &z->s);
    free_impl(c);
}

static void zookeeper_crash(struct lock_client *c)
{
    struct zk_lock *z = c->impl;
    if (z == NULL)
        return;
    zk_session_crash(c, &z->s);
    free_impl(c);
}

/* /locks/<key> and /locks/<key>/_c_<id>-lock- for this acquire. */
static int set_paths(struct lock_client *c, struct zk_lock *z, const char *key, size_t key_len)
{
    if (key_len == 0 || key_len > ZK_KEY_MAX || memchr(key, '/', key_len) != NULL ||
        memchr(key, '\0', key_len) != NULL) {
        lock_set_error(c, LOCK_ERR_CONFIG, "zookeeper: a key is 1 to %d bytes without '/'",
                       ZK_KEY_MAX);
        return -1;
    }
    size_t n = sizeof(locks_root) - 1;
    memcpy(z->parent, locks_root, n);
    z->parent[n++] = '/';
    memcpy(z->parent + n, key, key_len);
    n += key_len;
    z->parent[n] = '\0';
    z->parent_len = n;
    memcpy(z->prefix, z->parent, n);
    memcpy(z->prefix + n, "/_c_", 4);
    n += 4;
    memcpy(z->prefix + n, z->id, ZK_ID_DIGITS);
    n += ZK_ID_DIGITS;
    memcpy(z->prefix + n, name_tag, sizeof(name_tag));
    z->prefix_len = n + sizeof(name_tag) - 1;
    return 0;
}

/* The sequence the server appended to a node name; -1 when there is none. */
static int64_t seq_of(const char *name)
{
    size_t len = strlen(name);
    if (len < ZK_SEQ_DIGITS)
        return -1;
    int64_t v = 0;
    for (const char *p = name + len - ZK_SEQ_DIGITS; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}

static int join_path(char *out, const char *parent, size_t parent_len, const char *name)
{
    size_t n = strlen(name);
    if (parent_len + 1 + n >= ZK_PATH_MAX)
        return -1;
    memcpy(out, parent, parent_len);
    out[parent_len] = '/';
    memcpy(out + parent_len + 1, name, n + 1);
    return 0;
}

/* Curator's creatingParentsIfNeeded: only the first create under a new
 * key meets ZNONODE. The parents stay (persistent, not containers): the
 * parent's counter is the token, and it must never start again. */
static int make_parents(struct lock_client *c, struct zk_lock *z)
{
    int rc = zk_create(c, &z->s, locks_root, NULL, -1, ZOO_PERSISTENT, NULL, 0);
    if (rc != ZOK && rc != ZNODEEXISTS)
        return rc;
    rc = zk_create(c, &z->s, z->parent, NULL, -1, ZOO_PERSISTENT, NULL, 0);
    return rc == ZNODEEXISTS ? ZOK : rc;
}

/* Is path the node of a lock this client holds? Its own leftovers and a
 * node it holds share the name prefix (a client queueing again for a key
 * it holds stands behind itself): never take one for the other. */
static bool is_held(const struct zk_lock *z, const char *path)
{
    for (size_t i = 0; i < z->n_holds; i++)
        if (z->holds[i].state == HOLD_HELD && strcmp(z->holds[i].path, path) == 0)
            return true;
    return false;
}

/* Delete every child of `parent` whose name starts with `name`, but those
 * held: the nodes this client left there. 0, or a ZooKeeper error code. */
static int delete_mine(struct lock_client *c, struct zk_lock *z, const char *parent,
                       size_t parent_len, const char *name)
{
    struct String_vector kids;
    int rc = zk_children(c, &z->s, parent, &kids);
    if (rc != ZOK)
        return rc == ZNONODE ? ZOK : rc;
    size_t n = strlen(name);
    char path[ZK_PATH_MAX];
    for (int32_t i = 0; i < kids.count && rc == ZOK; i++) {
        if (strncmp(kids.data[i], name, n) != 0 ||
            join_path(path, parent, parent_len, kids.data[i]) < 0 || is_held(z, path))
            continue;
        rc = zk_delete(c, &z->s, path);
        if (rc == ZNONODE)
            rc = ZOK;
    }
    deallocate_String_vector(&kids);
    return rc;
}

/* Did a request fail because the server expired the session? Then its
 * ephemeral nodes are gone with it: nothing is left to clean up, and the
 * create that follows opens a new session. */
static bool session_gone(zhandle_t *zh, int rc)
{
    return rc == ZSESSIONEXPIRED || is_unrecoverable(zh) != ZOK;
}

/* Remember a node prefix (path less its sequence) that a failed request may
 * have left behind. */
static void remember_pending(struct zk_lock *z, const char *path, size_t prefix_len)
{
    memcpy(z->pending, path, prefix_len);
    z->pending[prefix_len] = '\0';
}

static int flush_pending(struct lock_client *c, struct zk_lock *z)
{
    const char *slash = strrchr(z->pending, '/');
    size_t parent_len = (size_t)(slash - z->pending);
    char parent[ZK_PATH_MAX];
    memcpy(parent, z->pending, parent_len);
    parent[parent_len] = '\0';
    int rc = delete_mine(c, z, parent, parent_len, slash + 1);
    if (rc != ZOK && !session_gone(z->s.zh, rc))
        return fail(c, "delete leftover", z->pending, rc);
    z->pending[0] = '\0';
    return 0;
}

/* Delete the nodes whose release got no answer, by their exact paths. One
 * that is still there heads its queue and would keep every other client
 * out for as long as this session lives. 0, or -1 with c->err set. */
static int flush_orphans(struct lock_client *c, struct zk_lock *z)
{
    for (size_t i = 0; i < z->n_holds; i++) {
        struct zk_hold *h = &z->holds[i];
        if (h->state != HOLD_ORPHAN)
            continue;
        int rc = zk_delete(c, &z->s, h->path);
        if (rc != ZOK && rc != ZNONODE && !session_gone(z->s.zh, rc))
            return fail(c, "delete orphan", h->path, rc);
        h->state = HOLD_FREE;
    }
    return 0;
}

/* After a connection loss during create: did it reach the server? 1 found
 * (z->node set), 0 not there, -1 error. */
static int find_mine(struct lock_client *c, struct zk_lock *z)
{
    struct String_vector kids;
    int rc = zk_children(c, &z->s, z->parent, &kids);
    if (rc == ZNONODE)
        return 0;
    if (rc != ZOK)
        return fail(c, "list", z->parent, rc);
    const char *name = z->prefix + z->parent_len + 1;
    size_t n = z->prefix_len - z->parent_len - 1;
    int found = 0;
    for (int32_t i = 0; i < kids.count && !found; i++)
        found = strncmp(kids.data[i], name, n) == 0 &&
                join_path(z->node, z->parent, z->parent_len, kids.data[i]) == 0 &&
                !is_held(z, z->node);
    deallocate_String_vector(&kids);
    return found;
}

/* 0 with z->node set, or -1. */
static int create_node(struct lock_client *c, struct zk_lock *z)
{
    bool reopened = false;
    for (int attempt = 0; attempt < ZK_CREATE_TRIES; attempt++) {
        int rc = zk_create(c, &z->s, z->prefix, c->owner, (int)c->owner_len,
                           ZOO_EPHEMERAL_SEQUENTIAL, z->node, sizeof(z->node));
        if (rc == ZNONODE && (rc = make_parents(c, z)) == ZOK)
            continue;
        if (rc == ZOK)
            return 0;
        /* The library learns that the session expired only when it gets
         * through to the server again, so the first request after a long
         * partition can be the one to find out: open a new session. */
        if ((rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE) && !reopened) {
            reopened = true;
            if (ensure_session(c, z) < 0)
                return -1;
            continue;
        }
        if (rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT)
            return fail(c, "create", z->prefix, rc);
        /* The create may have been applied before the answer was lost:
         * Curator's protection finds the node by our id, or it would sit
         * in the queue as an orphan until the session ends. */
        int found = find_mine(c, z);
        if (found > 0)
            return 0;
        if (found < 0) {
            remember_pending(z, z->prefix, z->prefix_len);
            return -1;
        }
    }
    /* Still unsure: the next acquire removes whatever got through. */
    remember_pending(z, z->prefix, z->prefix_len);
    lock_set_error(c, LOCK_ERR_IO, "create %s: no answer after %d tries", z->prefix,
                   ZK_CREATE_TRIES);
    return -1;
}

/* Where our node stands: 0 lowest (the lock is ours), 1 behind z->pred,
 * -1 error. */
static int queue_position(struct lock_client *c, struct zk_lock *z)
{
    struct String_vector kids;
    int rc = zk_children(c, &z->s, z->parent, &kids);
    if (rc != ZOK)
        return fail(c, "list", z->parent, rc);
    bool mine = false;
    int32_t pred = -1;
    int64_t pred_seq = -1;
    for (int32_t i = 0; i < kids.count; i++) {
        int64_t s = seq_of(kids.data[i]);
        if (s == z->seq)
            mine = true;
        else if (s >= 0 && s < z->seq && s > pred_seq)
            pred = i, pred_seq = s;
    }
    int pos = pred >= 0;
    if (!mine)
        pos = -1, lock_set_error(c, LOCK_ERR_IO, "%s vanished: the session ended", z->node);
    else if (pred >= 0 && join_path(z->pred, z->parent, z->parent_len, kids.data[pred]) < 0)
        pos = -1, lock_set_error(c, LOCK_ERR_CONFIG, "path too long under %s", z->parent);
    deallocate_String_vector(&kids);
    return pos;
}

/* Watch only the node just before ours: its deletion wakes one waiter, not
 * the whole queue. 1 look again, 0 gave up, -1. */
static int watch_pred(struct lock_client *c, struct zk_lock *z, uint64_t deadline)
{
    int rc = zk_session_watch(c, &z->s, z->pred);
    if (rc == ZNONODE)
        return 1;
    if (rc != ZOK)
        return fail(c, "watch", z->pred, rc);
    int res = zk_session_wait_watch(c, &z->s, deadline);
    if (res < 0)
        lock_set_error(c, LOCK_ERR_IO, "session expired while waiting for %s", z->parent);
    return res;
}

/* Leave the queue. A delete that does not get through is retried before
 * the next acquire. */
static void give_up(struct lock_client *c, struct zk_lock *z)
{
    int rc = zk_delete(c, &z->s, z->node);
    if (rc != ZOK && rc != ZNONODE && is_unrecoverable(z->s.zh) == ZOK)
        remember_pending(z, z->prefix, z->prefix_len);
}

/* The index of a free hold slot, growing the array when every slot is
 * taken (doubling, so rarely); -1 with c->err set when out of memory. The
 * index, not a pointer: a later growth would move the array. */
static ssize_t free_hold(struct lock_client *c, struct zk_lock *z)
{
    for (size_t i = 0; i < z->n_holds; i++)
        if (z->holds[i].state == HOLD_FREE)
            return (ssize_t)i;
    size_t n = z->n_holds ? z->n_holds * 2 : ZK_MIN_HOLDS;
    struct zk_hold *grown =
        n > SSIZE_MAX / sizeof(*grown) ? NULL : realloc(z->holds, n * sizeof(*grown));
    if (grown == NULL) {
        lock_set_error(c, LOCK_ERR_IO, "out of memory");
        return -1;
    }
    memset(grown + z->n_holds, 0, (n - z->n_holds) * sizeof(*grown));
    z->holds = grown;
    size_t first = z->n_holds;
    z->n_holds = n;
    return (ssize_t)first;
}

/* The hold of a grant this client still has (held, or its release got no
 * answer): the same token under the same key. */
static struct zk_hold *find_hold(struct zk_lock *z, const struct lock_grant *g)
{
    size_t root = sizeof(locks_root) - 1;
    for (size_t i = 0; i < z->n_holds; i++) {
        struct zk_hold *h = &z->holds[i];
        if (h->state != HOLD_FREE && h->token == g->token &&
            strncmp(h->path + root + 1, g->key, g->key_len) == 0 &&
            h->path[root + 1 + g->key_len] == '/')
            return h;
    }
    return NULL;
}

static void grant(struct zk_lock *z, struct zk_hold *h, uint64_t losses, uint64_t sent,
                  struct lock_grant *g)
{
    h->state = HOLD_HELD;
    h->token = (uint64_t)z->seq + 1; /* sequences start at 0; a token never is 0 */
    h->losses = losses;
    h->session = zk_session_id(&z->s);
    memcpy(h->path, z->node, sizeof(h->path));
    g->token = h->token;
    /* The server saw the session alive when it answered the listing that
     * made us the holder, sent at `sent`; it cannot expire the session
     * sooner than its timeout after that. */
    uint64_t took = lock_now_ms() - sent;
    g->validity_ms =
        took < (uint64_t)z->s.session_ms ? (uint32_t)((uint64_t)z->s.session_ms - took) : 0;
}

static enum lock_result acquire_once(struct lock_client *c, struct zk_lock *z, const char *key,
                                     size_t key_len, uint32_t ttl_ms, uint32_t wait_ms,
                                     struct lock_grant *g)
{
    ssize_t slot = free_hold(c, z); /* first: out of memory leaves no node behind */
    if (slot < 0)
        return LOCK_ERR;
    if (set_paths(c, z, key, key_len) < 0 || ensure_session(c, z) < 0 || flush_orphans(c, z) < 0 ||
        (z->pending[0] && flush_pending(c, z) < 0) || create_node(c, z) < 0)
        return LOCK_ERR;
    z->seq = seq_of(z->node);
    uint64_t deadline = lock_now_ms() + wait_ms;
    for (;;) {
        /* Read before the listing: a drop after it makes the grant suspect. */
        uint64_t losses = z->s.losses;
        uint64_t sent = lock_now_ms();
        int pos = queue_position(c, z);
        if (pos == 0) {
            g->key = key;
            g->key_len = key_len;
            g->ttl_ms = ttl_ms;
            grant(z, &z->holds[slot], losses, sent, g);
            return LOCK_OK;
        }
        int go_on = pos > 0 && wait_ms > 0 ? watch_pred(c, z, deadline) : pos;
        if (go_on <= 0 || wait_ms == 0) {
            give_up(c, z);
            return go_on < 0 ? LOCK_ERR : LOCK_BUSY;
        }
    }
}

static enum lock_result zookeeper_acquire(struct lock_client *c, const char *key, size_t key_len,
                                          uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct zk_lock *z = c->impl;
    enum lock_result res = acquire_once(c, z, key, key_len, ttl_ms, wait_ms, g);
    zk_session_count_drops(c, &z->s);
    return res;
}

/* Has the session the hold's node lived in ended? Only on the server's
 * word: the library turns a handle unrecoverable when the server says
 * the session expired (no auth is used, so not for an auth failure), and
 * this client opens a new session only then; the server deleted the
 * ephemeral node with the old one. */
static bool session_ended(const struct zk_lock *z, const struct zk_hold *h)
{
    return z->s.zh == NULL || is_unrecoverable(z->s.zh) != ZOK ||
           zk_session_id(&z->s) != h->session;
}

static enum lock_result release_once(struct lock_client *c, struct zk_lock *z,
                                     const struct lock_grant *g)
{
    struct zk_hold *h = find_hold(z, g);
    /* Definite on our own books: never granted to this client, or released. */
    if (h == NULL)
        return LOCK_LOST;
    if (session_ended(z, h)) {
        h->state = HOLD_FREE;
        return LOCK_LOST;
    }
    bool lost = h->losses != z->s.losses;
    /* Even a lost grant's node is deleted: after a mere reconnect it still
     * heads the queue. */
    int rc = zk_delete(c, &z->s, h->path);
    if (rc == ZOK || rc == ZNONODE || session_gone(z->s.zh, rc)) {
        h->state = HOLD_FREE;
        /* Deleted: ours, unless the link dropped since the grant (Curator's
         * SUSPENDED: the holder could not know it still held it). Node gone
         * or session expired: the server said the lock is no longer ours. */
        return rc == ZOK && !lost ? LOCK_OK : LOCK_LOST;
    }
    /* No answer (connection loss, timeout): the delete may have been
     * applied or not, and the session may live on, so neither OK nor LOST
     * is known. The node is kept to be deleted before the next acquire, or
     * it would head its queue while this session lives. */
    h->state = HOLD_ORPHAN;
    lock_set_error(c, error_code(rc), "release: %s, outcome unknown: delete %s", zerror(rc),
                   h->path);
    return LOCK_ERR;
}

static enum lock_result zookeeper_release(struct lock_client *c, const struct lock_grant *g)
{
    struct zk_lock *z = c->impl;
    enum lock_result res = release_once(c, z, g);
    zk_session_count_drops(c, &z->s);
    return res;
}

uint64_t zookeeper_watch_events(const struct lock_client *c)
{
    const struct zk_lock *z = c->impl;
    return z ? z->s.watch_events : 0;
}

int64_t zookeeper_session_id(const struct lock_client *c)
{
    const struct zk_lock *z = c->impl;
    return z ? zk_session_id(&z->s) : 0;
}

static size_t zookeeper_links(struct lock_client *c, struct lock_link_event *out, size_t max)
{
    struct zk_lock *z = c->impl;
    return z ? zk_session_links(&z->s, out, max) : 0;
}

/* The time a connected client spends outside acquire and release (holding,
 * thinking, backing off): the session is driven meanwhile, so it pings and
 * stays alive, and its link changes are seen when they happen, as the
 * multi-threaded library's own thread did. */
static void zookeeper_idle(struct lock_client *c, uint64_t until_ns, const atomic_int *cancel)
{
    struct zk_lock *z = c->impl;
    if (z == NULL) {
        lock_sleep_until(c, until_ns, cancel);
        return;
    }
    zk_session_idle(c, &z->s, until_ns, cancel);
    zk_session_count_drops(c, &z->s);
}

/* ---- lock.zookeeper: the ensemble and the session that plays the ttl -- */

_Static_assert(sizeof(struct zookeeper_spec) <= SETTINGS_BYTES_MAX, "fits a settings_store");

/* ZooKeeper with tickTime 500 (SETUP.md) grants sessions of 2 to 20
 * ticks and silently moves anything else inside: the file's value must lie
 * inside, and a default is clamped into it, so the session that runs is
 * the one reported. */
#define ZK_SESSION_MIN_MS 1000
#define ZK_SESSION_MAX_MS 10000

static int check_ensemble(const void *settings, char *why, size_t len)
{
    return family_check_ensemble(((const struct zookeeper_spec *)settings)->ensemble, why, len);
}

#define ZS(m) offsetof(struct zookeeper_spec, m)
static const struct setting_key zookeeper_keys[] = {
    {.key = "ensemble",
     .type = SETTING_U32,
     .offset = ZS(ensemble),
     .min = 1,
     .max = 3,
     .check = check_ensemble},
    {.key = "session_timeout_ms",
     .type = SETTING_U32,
     .offset = ZS(session_timeout_ms),
     .min = ZK_SESSION_MIN_MS,
     .max = ZK_SESSION_MAX_MS},
};
static const struct setting_table zookeeper_table = {
    zookeeper_keys, sizeof(zookeeper_keys) / sizeof(zookeeper_keys[0]), NULL};

static void zookeeper_defaults(void *settings)
{
    *(struct zookeeper_spec *)settings =
        (struct zookeeper_spec){.ensemble = 1, .session_timeout_ms = 0};
}

static void zookeeper_resolve_lease(void *settings, const struct family_scene *sc)
{
    struct zookeeper_spec *z = settings;
    if (sc->named && sc->named != z->ensemble) {
        /* one service: the client gets every server named, whatever the file said */
        z->ensemble = (uint32_t)sc->named;
        family_note(sc, "lock.zookeeper.ensemble: %zu = the external servers named", sc->named);
    }
    if (z->session_timeout_ms)
        return; /* the file's value is checked to lie inside the range */
    uint32_t ttl = sc->ttl_ms;
    uint32_t ms = ttl < ZK_SESSION_MIN_MS   ? ZK_SESSION_MIN_MS
                  : ttl > ZK_SESSION_MAX_MS ? ZK_SESSION_MAX_MS
                                            : ttl;
    z->session_timeout_ms = ms;
    if (ms == ttl)
        family_note(sc,
                    "lock.zookeeper.session_timeout_ms: %" PRIu32
                    " = ttl_ms (the session plays the ttl)",
                    ms);
    else
        family_note(sc,
                    "lock.zookeeper.session_timeout_ms: %" PRIu32 ", ttl_ms %" PRIu32
                    " clamped into the %d..%d ms ZooKeeper grants (tickTime 500)",
                    ms, ttl, ZK_SESSION_MIN_MS, ZK_SESSION_MAX_MS);
}

static size_t zookeeper_servers(const void *settings)
{
    return ((const struct zookeeper_spec *)settings)->ensemble;
}

static uint32_t zookeeper_lease_ms(const void *settings, uint32_t ttl_ms)
{
    (void)ttl_ms; /* the session plays it */
    return ((const struct zookeeper_spec *)settings)->session_timeout_ms;
}

/* The client pings every third of the session, whatever it holds. */
static uint32_t zookeeper_pings_ms(const void *settings)
{
    return ((const struct zookeeper_spec *)settings)->session_timeout_ms / 3;
}

static void zookeeper_describe(const void *settings, char *buf, size_t len)
{
    const struct zookeeper_spec *z = settings;
    snprintf(buf, len, "zookeeper: ensemble=%" PRIu32 " session_timeout=%" PRIu32 "ms", z->ensemble,
             z->session_timeout_ms);
}

const struct lock_family zookeeper_family = {
    .key = "zookeeper",
    .size = sizeof(struct zookeeper_spec),
    .table = &zookeeper_table,
    .defaults = zookeeper_defaults,
    .resolve_lease = zookeeper_resolve_lease,
    .servers = zookeeper_servers,
    .lease_ms = zookeeper_lease_ms,
    .session = true,
    .pings_ms = zookeeper_pings_ms,
    .describe = zookeeper_describe,
    .reported = true,
    .list_servers = "1 or 3 zookeeper (lock.zookeeper.ensemble)",
};

const struct lock_ops zookeeper_ops = {
    .name = "zookeeper",
    .summary = "ephemeral sequential node, lowest holds, waiter watches its predecessor; "
               "session timeout as ttl, sequence as token",
    .server = "zookeeper",
    .family = &zookeeper_family,
    .gives_token = true,
    .connect = zookeeper_connect,
    .disconnect = zookeeper_disconnect,
    .acquire = zookeeper_acquire,
    .release = zookeeper_release,
    .renew = NULL, /* the session's heartbeat is the renewal */
    .crash = zookeeper_crash,
    .links = zookeeper_links,
    .idle = zookeeper_idle,
};
