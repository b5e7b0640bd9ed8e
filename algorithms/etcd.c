/* etcd.c - etcd's concurrency.Mutex (client/v3/concurrency/mutex.go), on
 * the v3 JSON gateway, so that etcdctl lock and locklab contend on one lock
 * correctly.
 *
 * A session is a lease (TTL = cfg->ttl_ms, the run's resolved lease,
 * rounded up to whole seconds; a config without one takes the acquire's
 * ttl_ms), granted at connect as concurrency.NewSession grants it (a
 * config without one grants at the first acquire), and again at the next
 * acquire once the old one is gone (expired, revoked). etcd grants no
 * lease under its own floor (3/2 of its election timeout) and answers with
 * the TTL it granted: the client keeps alive the lease it has, and a
 * lease longer than asked fails the grant, as the run would otherwise
 * report a lease it does not run on. Every key this
 * client creates rides on it; a crash leaves it to run out, and the client
 * that connects again makes a session of its own.
 * acquire: the key is <lock key>/<lease id in lowercase hex> (etcdctl lock
 *   NAME uses the prefix NAME/). One txn: if create_revision(key) == 0 then
 *   put(key, "", lease) + range(prefix, first by create revision) else
 *   range(key) + the same range. myRev = the txn's revision, or the key's
 *   create revision when it was there; the owner is the first-created key
 *   under the prefix. Otherwise waitDeletes: the newest key created before
 *   myRev is watched until it is deleted, again until none is left. Then,
 *   with lock.etcd.recheck (etcd 3.5's fix for #11456), the own key is read
 *   and the grant refused when the lease took it meanwhile; without, it is
 *   granted as etcd 3.4 grants it. The token is myRev, the key's create
 *   revision, which increases with every grant (Mutex.IsOwner's fence).
 *   The client keeps its lease alive at TTL/3 itself, as the Session's
 *   goroutine would, in its calls: before the txn when one is due (a
 *   client granted at once, again and again, sends none otherwise, and its
 *   lease ran out under its holds), while waiting, and after a slow txn;
 *   the engine's renew while holding. wait_ms or a cancel deletes the own
 *   key (as Mutex.Lock does when its context ends) and says BUSY.
 * renew: one lease keepalive; TTL 0 in the answer: expired, LOST.
 * release: delete the own key; deleted 0: it was gone, LOST. A delete
 *   with no answer (a leader killed under it) may have been applied or
 *   not, and the lease lives on, so the key may head its queue for as long
 *   as this session does: every other client would wait on it. Unlock's
 *   error is the caller's to act on, and the caller's act is to unlock
 *   again; locklab does it before this client's next acquire (as
 *   zookeeper.c deletes its orphans, Curator's guaranteed delete). The key
 *   is this lease's alone, so a late delete can free no one else's hold.
 * connect: the wire dials the first member at once, as clientv3.New does
 *   (before the start line, so 10,000 clients are not 10,000 dials at
 *   the gun), then grants the lease as NewSession does, waiting for its
 *   answer longer than a call (ETCD_SESSION_WAIT_MS): a grant that fails
 *   fails connect, as NewSession returns its error; the engine tries
 *   again, as a program whose NewSession failed would (docs/etcd.md).
 * crash: drop the connections, revoke nothing: the lease runs out.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/etcd.h"
#include "algorithms/etcd_wire.h"
#include "algorithms/lock.h"

#define ETCD_KEY_MAX 200
#define ETCD_POLL_MS 100 /* how often a waiter looks at lock_cancelled */
/* NewSession grants on the client's own context, which has no deadline:
 * it waits for its one grant however long the server takes, and sends it
 * once (a grant sent again after a timeout is one more lease for a server
 * already behind). locklab bounds that wait, so a stop is never held up
 * longer, by the 10 s the engine gives a client to connect at the start
 * line (runner.c's START_CONNECT_NS). */
#define ETCD_SESSION_WAIT_MS 10000

struct etcd_lock {
    struct etcd_wire *w;
    int64_t lease;          /* 0: none yet, or the last one is gone */
    uint32_t lease_s;       /* its TTL */
    uint64_t kept_alive_ms; /* lock_now_ms() of its last grant or keepalive */
    /* own keys whose delete got no answer, all on the lease above */
    char (*orphans)[ETCD_KEY_MAX];
    size_t n_orphans, cap_orphans;
};

static struct etcd_lock *me(struct lock_client *c)
{
    return c->impl;
}

static int grant_lease(struct lock_client *c, uint32_t ttl_ms, uint32_t wait_ms);

/* The lease is known gone (expired, revoked): every key on it went with
 * it, so did the ones whose delete got no answer. */
static void forget_lease(struct etcd_lock *l)
{
    l->lease = 0;
    l->n_orphans = 0;
}

static int etcd_connect(struct lock_client *c)
{
    struct etcd_lock *l = calloc(1, sizeof(*l));
    if (l == NULL) {
        lock_set_error(c, LOCK_ERR_CONFIG, "etcd: no memory");
        return -1;
    }
    c->impl = l;
    l->w = etcd_wire_new(c);
    if (l->w == NULL)
        return -1;
    /* clientv3.New returns with the dial under way, not done: a member
     * not reached now is dialled again by the first call, after gRPC's
     * back-off, so a client that could not dial still starts */
    if (etcd_wire_dial(l->w) < 0)
        lock_clear_error(c);
    /* NewSession: the lease now, so that its grants are not the first
     * acquires' (10,000 of them at the start line) */
    if (c->cfg->ttl_ms == 0 || grant_lease(c, c->cfg->ttl_ms, ETCD_SESSION_WAIT_MS) == 0)
        return 0;
    if (c->err == LOCK_ERR_CONFIG)
        c->connect_refused++; /* no second try grants a shorter lease: the run stops now */
    return -1;
}

static void etcd_disconnect(struct lock_client *c)
{
    struct etcd_lock *l = me(c);
    if (l == NULL)
        return;
    etcd_wire_free(l->w);
    free(l->orphans);
    free(l);
    c->impl = NULL;
}

/* etcd's error message, for c->errstr. */
static const char *why(const json_t *ans)
{
    const char *m = json_string_value(json_object_get(ans, "message"));
    return m ? m : json_string_value(json_object_get(ans, "error"));
}

/* One unary call, answered within timeout_ms: its answer (the caller's)
 * on HTTP 200; NULL otherwise with c->err set (etcd refused:
 * LOCK_ERR_REFUSED, its message; *lease_gone when the refusal says our
 * lease does not exist). */
static json_t *call_within(struct lock_client *c, const char *path, json_t *req, bool *lease_gone,
                           uint32_t timeout_ms)
{
    json_t *ans = NULL;
    int code = req ? etcd_wire_call_within(me(c)->w, path, req, &ans, timeout_ms) : -1;
    if (req == NULL)
        lock_set_error(c, LOCK_ERR_UNSENT, "etcd: no memory for a request");
    json_decref(req);
    if (code == 200)
        return ans;
    if (code > 0) {
        const char *m = why(ans);
        if (lease_gone)
            *lease_gone = m && strstr(m, "lease not found");
        lock_set_error(c, LOCK_ERR_REFUSED, "etcd %s: HTTP %d: %s", path, code, m ? m : "?");
    }
    json_decref(ans);
    return NULL;
}

/* The same within the request timeout (cfg->io_timeout_ms). */
static json_t *call(struct lock_client *c, const char *path, json_t *req, bool *lease_gone)
{
    return call_within(c, path, req, lease_gone, c->cfg->io_timeout_ms);
}

/* A lease of ttl_ms, its answer awaited up to wait_ms. */
static int grant_lease(struct lock_client *c, uint32_t ttl_ms, uint32_t wait_ms)
{
    struct etcd_lock *l = me(c);
    uint32_t secs = (uint32_t)(((uint64_t)ttl_ms + 999) / 1000);
    if (secs == 0)
        secs = 1;
    json_t *ans = call_within(c, "/v3/lease/grant", json_pack("{s:I}", "TTL", (json_int_t)secs),
                              NULL, wait_ms);
    if (ans == NULL)
        return -1;
    l->lease = etcd_int(ans, "ID");
    l->lease_s = (uint32_t)etcd_int(ans, "TTL");
    json_decref(ans);
    if (l->lease == 0 || l->lease_s == 0) {
        lock_set_error(c, LOCK_ERR_PROTOCOL, "etcd: lease/grant answered no lease");
        l->lease = 0;
        return -1;
    }
    if (l->lease_s > secs) {
        /* its election timeout grants none shorter: a setting, not a
         * passing failure (connect says so at once) */
        lock_set_error(c, LOCK_ERR_CONFIG,
                       "etcd: a %" PRIu32 " s lease asked, %" PRIu32
                       " s granted (3/2 of its --election-timeout): give lock.ttl_ms %" PRIu32
                       " or more",
                       secs, l->lease_s, l->lease_s * 1000u);
        l->lease = 0;
        return -1;
    }
    l->kept_alive_ms = lock_now_ms();
    return 0;
}

/* One keepalive of the lease: 1 alive, 0 expired (TTL 0), -1 error. */
static int keep_alive(struct lock_client *c)
{
    struct etcd_lock *l = me(c);
    char id[24];
    snprintf(id, sizeof(id), "%" PRId64, l->lease);
    json_t *ans = call(c, "/v3/lease/keepalive", json_pack("{s:s}", "ID", id), NULL);
    if (ans == NULL)
        return -1;
    /* the gateway streams it: {"result": {..., "TTL": "2"}} */
    json_t *res = json_object_get(ans, "result");
    int64_t ttl = etcd_int(res ? res : ans, "TTL");
    json_decref(ans);
    if (ttl <= 0)
        return 0;
    l->kept_alive_ms = lock_now_ms();
    return 1;
}

/* The keep-alive the Session's goroutine would have sent by now: once a
 * third of the lease has passed since the last one. A lease found expired
 * is forgotten: a wait goes on (as a Mutex whose Session died does), the
 * recheck decides; an acquire grants a new one. 0, or -1 (c->err set) when
 * it got no answer. */
static int keep_alive_due(struct lock_client *c)
{
    struct etcd_lock *l = me(c);
    if (l->lease == 0 || lock_now_ms() < l->kept_alive_ms + l->lease_s * 1000u / 3)
        return 0;
    int rc = keep_alive(c);
    if (rc == 0)
        forget_lease(l);
    return rc < 0 ? -1 : 0;
}

/* Before the txn: the Session keeps its lease alive every TTL/3 beside
 * whatever the program does, so clientv3 never locks on a stale lease.
 * This client is one thread and keeps it alive only in its calls: a
 * client granted at once, again and again, or back from a call that hung,
 * would put its key on a lease with little or nothing left, which runs
 * out under the holder (docs/etcd.md). So an overdue keep-alive goes
 * first; one with no answer fails the acquire, as never sent: the lease
 * may be about to run out, and the txn would not tell. */
static int session_fresh(struct lock_client *c)
{
    if (keep_alive_due(c) == 0)
        return 0;
    char cause[LOCK_ERRSTR_MAX];
    snprintf(cause, sizeof(cause), "%s", c->errstr);
    lock_set_error(c, LOCK_ERR_UNSENT, "etcd: the session's keep-alive: %s", cause);
    return -1;
}

/* The range of every key under prefix: first created (ASCEND) or, with
 * max_rev, the last created at or before it. */
static json_t *prefix_range(const char *prefix, size_t len, int64_t max_rev)
{
    json_t *r = json_pack("{s:o, s:o, s:s, s:s, s:s}", "key", etcd_b64(prefix, len), "range_end",
                          etcd_prefix_end(prefix, len), "sort_target", "CREATE", "sort_order",
                          max_rev ? "DESCEND" : "ASCEND", "limit", "1");
    if (r && max_rev) {
        char rev[24];
        snprintf(rev, sizeof(rev), "%" PRId64, max_rev);
        json_object_set_new(r, "max_create_revision", json_string(rev));
    }
    return r;
}

static const json_t *first_kv(const json_t *range)
{
    return json_array_get(json_object_get(range, "kvs"), 0);
}

/* The txn of Mutex.tryAcquire: 1 owner, 0 must wait, -1 error; *my_rev. */
static int try_acquire(struct lock_client *c, const char *key, size_t klen, const char *prefix,
                       size_t plen, int64_t *my_rev, bool *lease_gone)
{
    char lease[24];
    snprintf(lease, sizeof(lease), "%" PRId64, me(c)->lease);
    json_t *req =
        json_pack("{s:[{s:s, s:o, s:s}], s:[{s:{s:o, s:s, s:s}}, {s:o}], s:[{s:{s:o}}, {s:o}]}",
                  "compare", "target", "CREATE", "key", etcd_b64(key, klen), "create_revision", "0",
                  "success", "request_put", "key", etcd_b64(key, klen), "value", "", "lease", lease,
                  "request_range", prefix_range(prefix, plen, 0), "failure", "request_range", "key",
                  etcd_b64(key, klen), "request_range", prefix_range(prefix, plen, 0));
    json_t *ans = call(c, "/v3/kv/txn", req, lease_gone);
    if (ans == NULL)
        return -1;
    json_t *resp = json_object_get(ans, "responses");
    const json_t *own = first_kv(json_object_get(json_array_get(resp, 0), "response_range"));
    const json_t *owner = first_kv(json_object_get(json_array_get(resp, 1), "response_range"));
    /* "succeeded" is omitted when false (SETUP.md) */
    *my_rev = json_is_true(json_object_get(ans, "succeeded"))
                  ? etcd_int(json_object_get(ans, "header"), "revision")
                  : etcd_int(own, "create_revision");
    int rc = owner == NULL || etcd_int(owner, "create_revision") == *my_rev;
    json_decref(ans);
    if (*my_rev == 0) {
        lock_set_error(c, LOCK_ERR_PROTOCOL, "etcd: the txn answered no revision");
        return -1;
    }
    return rc;
}

static enum lock_result delete_key(struct lock_client *c, const char *key, size_t klen)
{
    json_t *ans =
        call(c, "/v3/kv/deleterange", json_pack("{s:o}", "key", etcd_b64(key, klen)), NULL);
    if (ans == NULL)
        return LOCK_ERR;
    int64_t deleted = etcd_int(ans, "deleted");
    json_decref(ans);
    return deleted > 0 ? LOCK_OK : LOCK_LOST;
}

/* Delete the own key; one whose delete failed is kept to be deleted again
 * before the next acquire (the header's release). */
static enum lock_result delete_own(struct lock_client *c, const char *key, size_t klen)
{
    struct etcd_lock *l = me(c);
    enum lock_result r = delete_key(c, key, klen);
    if (r != LOCK_ERR)
        return r;
    if (l->n_orphans == l->cap_orphans) {
        size_t cap = l->cap_orphans ? 2 * l->cap_orphans : 4;
        char(*more)[ETCD_KEY_MAX] = realloc(l->orphans, cap * sizeof(*more));
        if (more == NULL)
            return r; /* the error stands; the key runs out with the lease */
        l->orphans = more;
        l->cap_orphans = cap;
    }
    memcpy(l->orphans[l->n_orphans], key, klen);
    l->orphans[l->n_orphans++][klen] = '\0';
    return r;
}

/* The keys whose delete got no answer, deleted now: 0, or -1 (c->err set,
 * UNSENT) with the ones not yet deleted kept. Gone already (deleted 0) is done. */
static int flush_orphans(struct lock_client *c)
{
    struct etcd_lock *l = me(c);
    while (l->n_orphans) {
        const char *key = l->orphans[l->n_orphans - 1];
        if (delete_key(c, key, strlen(key)) == LOCK_ERR) {
            /* the acquire itself never left: a failure, not an unknown */
            char cause[LOCK_ERRSTR_MAX];
            snprintf(cause, sizeof(cause), "%s", c->errstr);
            lock_set_error(c, LOCK_ERR_UNSENT, "etcd: the key of an unanswered release: %s", cause);
            return -1;
        }
        l->n_orphans--;
    }
    return 0;
}

/* Watch key (base64) from rev until it is deleted: 1 deleted, 0 the
 * deadline came, -1 the stream failed (the caller looks again). The lease
 * is kept alive meanwhile. */
static int wait_delete(struct lock_client *c, json_t *key64, int64_t rev, uint64_t deadline_ms)
{
    struct etcd_lock *l = me(c);
    char from[24];
    snprintf(from, sizeof(from), "%" PRId64, rev);
    json_t *req =
        json_pack("{s:{s:O, s:s}}", "create_request", "key", key64, "start_revision", from);
    int rc = req ? etcd_wire_watch_open(l->w, req) : -1;
    json_decref(req);
    while (rc == 0) {
        keep_alive_due(c);
        uint64_t now = lock_now_ms();
        if (now >= deadline_ms || lock_cancelled(c))
            break;
        uint64_t until = now + ETCD_POLL_MS;
        if (l->lease)
            until = until < l->kept_alive_ms + l->lease_s * 1000u / 3
                        ? until
                        : l->kept_alive_ms + l->lease_s * 1000u / 3;
        if (until > deadline_ms)
            until = deadline_ms;
        json_t *ev = NULL;
        int got = etcd_wire_watch_next(l->w, until * 1000000ull, &ev);
        if (got < 0)
            rc = -1;
        json_t *events = json_object_get(json_object_get(ev, "result"), "events");
        for (size_t i = 0; got > 0 && i < json_array_size(events); i++) {
            const char *type =
                json_string_value(json_object_get(json_array_get(events, i), "type"));
            if (type && strcmp(type, "DELETE") == 0)
                rc = 1;
        }
        json_decref(ev);
    }
    etcd_wire_watch_close(l->w);
    return rc;
}

/* waitDeletes(prefix, myRev-1): 1 none left before us, 0 the wait ended
 * (deadline or cancel). A read that fails meanwhile (a member gone, "leader
 * changed" during an election) is tried again until the deadline, as
 * clientv3 retries its reads. */
static int wait_deletes(struct lock_client *c, const char *prefix, size_t plen, int64_t my_rev,
                        uint64_t deadline_ms)
{
    for (;;) {
        keep_alive_due(c);
        if (lock_now_ms() >= deadline_ms || lock_cancelled(c))
            return 0;
        json_t *ans = call(c, "/v3/kv/range", prefix_range(prefix, plen, my_rev - 1), NULL);
        if (ans == NULL) {
            lock_sleep(c, c->cfg->retry_max_ms ? c->cfg->retry_max_ms : ETCD_POLL_MS);
            continue;
        }
        const json_t *last = first_kv(ans);
        if (last == NULL) {
            json_decref(ans);
            return 1;
        }
        int64_t rev = etcd_int(json_object_get(ans, "header"), "revision");
        int rc = wait_delete(c, json_object_get(last, "key"), rev + 1, deadline_ms);
        json_decref(ans);
        if (rc < 0) /* a member went away under the watch: look again, not at once */
            lock_sleep(c, c->cfg->retry_max_ms ? c->cfg->retry_max_ms : ETCD_POLL_MS);
    }
}

/* With recheck: is the own key still there? 1 yes, 0 gone, -1 error. */
static int key_exists(struct lock_client *c, const char *key, size_t klen)
{
    json_t *ans = call(c, "/v3/kv/range", json_pack("{s:o}", "key", etcd_b64(key, klen)), NULL);
    if (ans == NULL)
        return -1;
    int rc = first_kv(ans) != NULL;
    json_decref(ans);
    return rc;
}

static size_t own_key(const struct etcd_lock *l, const char *key, size_t key_len, char *out,
                      size_t *plen)
{
    int n = snprintf(out, ETCD_KEY_MAX, "%.*s/", (int)key_len, key);
    *plen = (size_t)n;
    n += snprintf(out + n, ETCD_KEY_MAX - (size_t)n, "%" PRIx64, (uint64_t)l->lease);
    return (size_t)n;
}

static enum lock_result etcd_acquire(struct lock_client *c, const char *key, size_t key_len,
                                     uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct etcd_lock *l = me(c);
    char mine[ETCD_KEY_MAX];
    size_t plen, klen;
    int64_t my_rev = 0;
    uint64_t deadline = lock_now_ms() + wait_ms;
    if (key_len > ETCD_KEY_MAX - 24) {
        lock_set_error(c, LOCK_ERR_CONFIG, "etcd: a key of %zu bytes", key_len);
        return LOCK_ERR;
    }
    if (flush_orphans(c) < 0 || session_fresh(c) < 0)
        return LOCK_ERR;
    int owner = -1;
    for (int tries = 0; tries < 2 && owner < 0; tries++) {
        bool lease_gone = false;
        if (l->lease == 0 &&
            grant_lease(c, c->cfg->ttl_ms ? c->cfg->ttl_ms : ttl_ms, c->cfg->io_timeout_ms) < 0)
            return LOCK_ERR;
        klen = own_key(l, key, key_len, mine, &plen);
        owner = try_acquire(c, mine, klen, mine, plen, &my_rev, &lease_gone);
        if (owner < 0 && !lease_gone)
            return LOCK_ERR;
        if (lease_gone)
            forget_lease(l); /* the session is gone: a new one, once */
    }
    if (owner < 0)
        return LOCK_ERR;
    if (!owner) {
        if (wait_deletes(c, mine, plen, my_rev, deadline) == 0) {
            /* Mutex.Lock: an ended wait unlocks before it returns */
            return delete_own(c, mine, klen) == LOCK_ERR ? LOCK_ERR : LOCK_BUSY;
        }
        if (((const struct etcd_spec *)lock_settings(c->cfg, &etcd_family))->recheck) {
            int there = key_exists(c, mine, klen);
            if (there <= 0) {
                if (there == 0) {
                    forget_lease(l); /* ErrSessionExpired: this session is over */
                    lock_set_error(c, LOCK_ERR_REFUSED,
                                   "etcd: the lease expired while waiting: %s is gone", mine);
                }
                return LOCK_ERR;
            }
        }
    }
    /* a txn that took a third of the lease: the keep-alive it held up */
    (void)keep_alive_due(c);
    g->key = key;
    g->key_len = key_len;
    g->token = (uint64_t)my_rev;
    g->ttl_ms = ttl_ms;
    uint64_t left = l->kept_alive_ms + l->lease_s * 1000ull;
    uint64_t now = lock_now_ms();
    g->validity_ms = l->lease && left > now ? (uint32_t)(left - now) : 0;
    return LOCK_OK;
}

static enum lock_result etcd_release(struct lock_client *c, const struct lock_grant *g)
{
    struct etcd_lock *l = me(c);
    char mine[ETCD_KEY_MAX];
    size_t plen;
    if (l->lease == 0)
        return LOCK_LOST; /* its lease is known expired: the key went with it */
    size_t klen = own_key(l, g->key, g->key_len, mine, &plen);
    return delete_own(c, mine, klen);
}

static enum lock_result etcd_renew(struct lock_client *c, struct lock_grant *g)
{
    struct etcd_lock *l = me(c);
    if (l->lease == 0)
        return LOCK_LOST;
    int rc = keep_alive(c);
    if (rc < 0)
        return LOCK_ERR;
    if (rc == 0) {
        forget_lease(l);
        return LOCK_LOST;
    }
    g->validity_ms = l->lease_s * 1000u;
    return LOCK_OK;
}

static void etcd_crash(struct lock_client *c)
{
    etcd_disconnect(c); /* the lease is left to run out */
}

/* ---- lock.etcd: its cluster, its re-check, the lease that runs -------- */

_Static_assert(sizeof(struct etcd_spec) <= SETTINGS_BYTES_MAX, "fits a settings_store");

static int check_nodes(const void *settings, char *why, size_t len)
{
    return family_check_ensemble(((const struct etcd_spec *)settings)->nodes, why, len);
}

#define ES(m) offsetof(struct etcd_spec, m)
static const struct setting_key etcd_keys[] = {
    {.key = "nodes",
     .type = SETTING_U32,
     .offset = ES(nodes),
     .min = 1,
     .max = 3,
     .check = check_nodes},
    {.key = "recheck", .type = SETTING_BOOL, .offset = ES(recheck)},
};
static const struct setting_table etcd_table = {etcd_keys, sizeof(etcd_keys) / sizeof(etcd_keys[0]),
                                                NULL};

static void etcd_defaults(void *settings)
{
    *(struct etcd_spec *)settings = (struct etcd_spec){.nodes = 1, .recheck = true};
}

/* etcd leases are whole seconds, and etcd grants none under 3/2 of its
 * election timeout (etcd.h): the lease that runs is the ttl rounded up to
 * them, and at least that floor. The managed members' is locklab's to
 * set; an etcd of the user's own is taken at etcd's defaults, and one that
 * grants longer than the resolved lease fails the run (above) rather than
 * run on a lease the report does not show. Said every time, with what it
 * rests on. */
static void etcd_resolve_lease(void *settings, const struct family_scene *sc)
{
    struct etcd_spec *e = settings;
    size_t named = sc->named;
    if (named && named != e->nodes) {
        e->nodes = (uint32_t)named;
        family_note(sc, "lock.etcd.nodes: %zu = the external servers named", named);
    }
    uint32_t election = named ? ETCD_DEFAULT_ELECTION_TIMEOUT_MS : ETCD_ELECTION_TIMEOUT_MS;
    uint32_t floor_s = named ? etcd_lease_floor_s(election, ETCD_DEFAULT_HEARTBEAT_MS)
                             : etcd_lease_floor_s(election, ETCD_HEARTBEAT_MS);
    char rests[96];
    snprintf(rests, sizeof(rests),
             "%s --election-timeout %" PRIu32 ": whole seconds from %" PRIu32 " s",
             named ? "an external etcd, taken at etcd's default" : "the managed etcd,", election,
             floor_s);
    uint32_t secs = (uint32_t)(((uint64_t)sc->ttl_ms + 999) / 1000);
    if (secs < floor_s)
        secs = floor_s;
    e->lease_ms = secs * 1000;
    if (sc->ttl_ms < floor_s * 1000)
        family_note(
            sc, "etcd lease: %" PRIu32 " s, ttl_ms %" PRIu32 " raised to the shortest granted (%s)",
            secs, sc->ttl_ms, rests);
    else if (e->lease_ms != sc->ttl_ms)
        family_note(
            sc, "etcd lease: %" PRIu32 " s = ttl_ms %" PRIu32 " rounded up to whole seconds (%s)",
            secs, sc->ttl_ms, rests);
    else
        family_note(sc, "etcd lease: %" PRIu32 " s = ttl_ms (%s)", secs, rests);
}

static size_t etcd_servers(const void *settings)
{
    return ((const struct etcd_spec *)settings)->nodes;
}

static uint32_t etcd_lease_ms(const void *settings, uint32_t ttl_ms)
{
    const struct etcd_spec *e = settings;
    return e->lease_ms ? e->lease_ms : ttl_ms; /* the lease the grants ride on, whole seconds */
}

static void etcd_describe(const void *settings, char *buf, size_t len)
{
    const struct etcd_spec *e = settings;
    snprintf(buf, len, "etcd: nodes=%" PRIu32 " recheck=%s lease=%" PRIu32 "ms", e->nodes,
             e->recheck ? "on" : "off", e->lease_ms);
}

const struct lock_family etcd_family = {
    .key = "etcd",
    .size = sizeof(struct etcd_spec),
    .table = &etcd_table,
    .defaults = etcd_defaults,
    .resolve_lease = etcd_resolve_lease,
    .servers = etcd_servers,
    .lease_ms = etcd_lease_ms,
    .kept_lease = "the etcd lease",
    .describe = etcd_describe,
    .list_servers = "1 or 3 etcd (lock.etcd.nodes)",
};

const struct lock_ops etcd_ops = {
    .name = "etcd",
    .summary = "etcd's concurrency.Mutex: key <name>/<lease>, lowest create revision holds, "
               "waiter watches its predecessor; lease as ttl, create revision as token",
    .server = "etcd",
    .family = &etcd_family,
    .gives_token = true,
    .keeps_lease_alive = true,
    .defaults = {{"3.4", "clientv3 3.4 (Debian's), no re-check",
                  "{\"etcd\": {\"recheck\": false}}"},
                 {"3.5", "clientv3 3.5, re-check after waiting",
                  "{\"etcd\": {\"recheck\": true}}"}},
    .connect = etcd_connect,
    .disconnect = etcd_disconnect,
    .acquire = etcd_acquire,
    .release = etcd_release,
    .renew = etcd_renew,
    .crash = etcd_crash,
};
