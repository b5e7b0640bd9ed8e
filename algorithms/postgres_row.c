/* postgres_row.c - a lock as a row locked FOR UPDATE in an open
 * transaction, the way applications lock "a job" or "a tenant" in
 * PostgreSQL (SELECT ... FOR UPDATE, Explicit Locking: Row-Level Locks).
 *
 * The rows: locklab_locks (key text primary key), one per lock name, made
 * by INSERT ... ON CONFLICT DO NOTHING in a transaction of its own, only
 * when the locking SELECT found none. Outside the locking transaction on
 * purpose: inside, a second client's insert of the same new key would
 * wait on the first's uncommitted index entry, and the first's rollback
 * would take the row from under the second; committed first, the row is
 * simply there for everyone's SELECT FOR UPDATE.
 * acquire: one message, BEGIN; SET LOCAL lock_timeout = wait_ms; SELECT
 *   ... FOR UPDATE (NOWAIT when there is no wait: lock_timeout 0 means
 *   "forever"). With fencing, the token is nextval of a shared sequence
 *   taken from a subquery of the locked row: evaluated only once the row
 *   lock is granted, so a later holder always has a larger token.
 *   lock_timeout's or NOWAIT's error (55P03) is a busy lock.
 * The critical section runs inside that transaction.
 * release: COMMIT. The server answering ROLLBACK or an error means the
 *   transaction, and the lock with it, did not last to the end: LOCK_LOST;
 *   a COMMIT whose answer never came is LOCK_ERR (it may have committed).
 * No ttl: a crashed client's transaction ends with its socket; a paused
 *   one's stays open and keeps the row locked while it is paused.
 * One transaction per lock held, so one connection each: a client that
 *   holds several at once (scheduled tasks keep a lock while they fire the
 *   next) must not have one COMMIT release them all, as it would with all
 *   its locks in one transaction. Connections are made as more locks are
 *   held at once; IDLE_KEPT of them stay open for the next acquires, the
 *   others close at their COMMIT, so the server's connections stay about
 *   one per client plus one per lock held.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/pg_wire.h"
#include "algorithms/postgres.h"

#define SQLSTATE_LOCK_TIMEOUT "55P03" /* lock_not_available */
#define SQL_MAKE_ROW          "INSERT INTO " PG_LOCK_TABLE " (key) VALUES ($1) ON CONFLICT DO NOTHING"
#define ROW_TRIES             3 /* the row made, then locked: twice suffices */
#define IDLE_KEPT             2 /* connections kept open with no transaction */

/* One connection and the transaction open on it. */
struct row_txn {
    struct pg_wire w;
    char name[LOCK_OWNER_MAX + 256]; /* the key its transaction locked */
    char sql[2 * (LOCK_OWNER_MAX + 256) + 256];
    bool in_txn; /* a transaction is open (or was, when the connection went) */
};

/* A client's connections: as many as it ever held locks at once. */
struct row_lock {
    struct row_txn **t;
    size_t n;
};

static struct row_txn *add_txn(struct lock_client *c, struct row_lock *l)
{
    struct row_txn **t = realloc(l->t, (l->n + 1) * sizeof(*t));
    if (t == NULL)
        return NULL;
    l->t = t;
    t[l->n] = calloc(1, sizeof(**t));
    if (t[l->n] == NULL)
        return NULL;
    t[l->n]->w.ep = &c->cfg->endpoints[0];
    return t[l->n++];
}

static int row_connect(struct lock_client *c)
{
    struct row_lock *l = pg_client_impl(c, sizeof(*l));
    if (l == NULL)
        return -1;
    struct row_txn *t = add_txn(c, l);
    if (t == NULL) {
        lock_set_error(c, LOCK_ERR_CONFIG, "out of memory");
        return -1;
    }
    return pg_connect(c, &t->w, &c->cfg->endpoints[0]);
}

static void row_disconnect(struct lock_client *c)
{
    struct row_lock *l = c->impl;
    for (size_t i = 0; l && i < l->n; i++) {
        pg_close(&l->t[i]->w);
        free(l->t[i]);
    }
    if (l)
        free(l->t);
    free(l);
    c->impl = NULL;
}

/* A connection with no transaction open (an open one first), made when
 * every one has. */
static struct row_txn *free_txn(struct lock_client *c, struct row_lock *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (!l->t[i]->in_txn && l->t[i]->w.conn != NULL)
            return l->t[i];
    for (size_t i = 0; i < l->n; i++)
        if (!l->t[i]->in_txn)
            return l->t[i];
    return add_txn(c, l);
}

/* The locking message for the key, as one simple query (several
 * statements cannot take parameters): the key as an escaped literal. */
static int locking_sql(struct lock_client *c, struct row_txn *l, uint32_t wait_ms)
{
    char *lit = PQescapeLiteral(l->w.conn, l->name, strlen(l->name));
    if (lit == NULL) {
        lock_set_error(c, LOCK_ERR_CONFIG, "cannot quote the key");
        return -1;
    }
    char timeout[48] = "";
    if (wait_ms)
        snprintf(timeout, sizeof(timeout), "SET LOCAL lock_timeout = %" PRIu32 "; ", wait_ms);
    const char *mode = wait_ms ? "FOR UPDATE" : "FOR UPDATE NOWAIT";
    if (c->cfg->want_token)
        snprintf(l->sql, sizeof(l->sql),
                 "BEGIN; %sSELECT nextval('" PG_FENCE_SEQ "') FROM (SELECT 1 FROM " PG_LOCK_TABLE
                 " WHERE key = %s %s) AS locked",
                 timeout, lit, mode);
    else
        snprintf(l->sql, sizeof(l->sql),
                 "BEGIN; %sSELECT 1 FROM " PG_LOCK_TABLE " WHERE key = %s %s", timeout, lit, mode);
    PQfreemem(lit);
    return 0;
}

/* End the open transaction without keeping anything. */
static void roll_back(struct lock_client *c, struct row_txn *l)
{
    struct pg_reply r;
    l->in_txn = false;
    if (l->w.conn &&
        pg_query(c, &l->w, "ROLLBACK", 0, NULL, pg_deadline(c, 0), false, NULL, &r) != PG_DONE)
        pg_drop(c, &l->w); /* a transaction left open would hold its locks */
}

static enum lock_result row_acquire(struct lock_client *c, const char *key, size_t key_len,
                                    uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct row_txn *l = free_txn(c, c->impl);
    struct pg_reply r;
    bool cancelled;
    if (l == NULL) {
        lock_set_error(c, LOCK_ERR_CONFIG, "out of memory");
        return LOCK_ERR;
    }
    if (key_len >= sizeof(l->name)) {
        lock_set_error(c, LOCK_ERR_CONFIG, "key of %zu bytes is too long", key_len);
        return LOCK_ERR;
    }
    snprintf(l->name, sizeof(l->name), "%.*s", (int)key_len, key);
    for (int i = 0; i < ROW_TRIES; i++) {
        if (lock_cancelled(c))
            return LOCK_BUSY;
        if (pg_ensure(c, &l->w) < 0 || locking_sql(c, l, wait_ms) < 0)
            return LOCK_ERR;
        l->in_txn = true;
        enum pg_outcome o =
            pg_query(c, &l->w, l->sql, 0, NULL, pg_deadline(c, wait_ms), true, &cancelled, &r);
        if (cancelled || o == PG_NO_ANSWER || o == PG_UNSENT) {
            l->in_txn = false; /* the connection is closed: so is the transaction */
            return cancelled ? LOCK_BUSY : LOCK_ERR;
        }
        if (o == PG_REFUSED) {
            bool busy = strcmp(r.sqlstate, SQLSTATE_LOCK_TIMEOUT) == 0;
            char why[LOCK_ERRSTR_MAX];
            snprintf(why, sizeof(why), "%s", c->errstr);
            roll_back(c, l);
            if (busy) {
                lock_clear_error(c);
                return LOCK_BUSY;
            }
            lock_set_error(c, LOCK_ERR_REFUSED, "%s", why);
            return LOCK_ERR;
        }
        if (r.rows == 1) {
            *g = (struct lock_grant){.key = key,
                                     .key_len = key_len,
                                     .ttl_ms = ttl_ms,
                                     .validity_ms = ttl_ms, /* no expiry */
                                     .token = c->cfg->want_token ? (uint64_t)pg_int(&r) : 0};
            return LOCK_OK;
        }
        /* no row for this name yet: made, committed, and locked again */
        roll_back(c, l);
        const char *params[] = {l->name};
        if (l->w.conn == NULL || pg_query(c, &l->w, SQL_MAKE_ROW, 1, params, pg_deadline(c, 0),
                                          false, NULL, &r) == PG_NO_ANSWER)
            return LOCK_ERR;
    }
    lock_set_error(c, LOCK_ERR_PROTOCOL, "the row for %s cannot be found or made", l->name);
    return LOCK_ERR;
}

/* After a COMMIT on t: close it when IDLE_KEPT others are idle already. */
static void keep_or_close(struct row_lock *l, struct row_txn *t)
{
    size_t idle = 0;
    for (size_t i = 0; i < l->n; i++)
        idle += l->t[i] != t && !l->t[i]->in_txn && l->t[i]->w.conn != NULL;
    if (idle >= IDLE_KEPT)
        pg_close(&t->w); /* its slot stays, reconnected when needed again */
}

/* The connection whose open transaction locked g's key; NULL: none. */
static struct row_txn *holding_txn(struct row_lock *l, const struct lock_grant *g)
{
    for (size_t i = 0; i < l->n; i++) {
        struct row_txn *t = l->t[i];
        if (t->in_txn && strlen(t->name) == g->key_len && memcmp(t->name, g->key, g->key_len) == 0)
            return t;
    }
    return NULL;
}

static enum lock_result row_release(struct lock_client *c, const struct lock_grant *g)
{
    struct row_txn *l = holding_txn(c->impl, g);
    struct pg_reply r;
    if (l == NULL || l->w.conn == NULL) {
        if (l)
            l->in_txn = false;
        lock_set_error(c, LOCK_ERR_IO, "the transaction that held it ended");
        return LOCK_LOST;
    }
    l->in_txn = false;
    enum pg_outcome o = pg_query(c, &l->w, "COMMIT", 0, NULL, pg_deadline(c, 0), false, NULL, &r);
    if (o == PG_NO_ANSWER)
        return LOCK_ERR; /* it may have committed */
    if (o == PG_DONE && strcmp(r.tag, "COMMIT") == 0) {
        keep_or_close(c->impl, l);
        return LOCK_OK;
    }
    /* refused, or answered ROLLBACK (the transaction had failed): the row
     * lock did not last to the end */
    if (o == PG_DONE)
        lock_set_error(c, LOCK_ERR_REFUSED, "COMMIT answered %s", r.tag);
    if (o == PG_REFUSED)
        roll_back(c, l);
    return LOCK_LOST;
}

static void row_crash(struct lock_client *c)
{
    row_disconnect(c); /* no COMMIT: the server rolls back when the socket closes */
}

const struct lock_ops postgres_row_ops = {
    .name = "postgres-row",
    .summary = "PostgreSQL row lock: SELECT ... FOR UPDATE held by an open transaction",
    .server = "postgres",
    .family = &postgres_family,
    .leaseless = true,
    .gives_token = true,
    .connect = row_connect,
    .disconnect = row_disconnect,
    .acquire = row_acquire,
    .release = row_release,
    .crash = row_crash,
};
