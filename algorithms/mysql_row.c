/* mysql_row.c - a lock as an InnoDB row locked FOR UPDATE in an open
 * transaction, the way applications lock "a job" or "an account" in MySQL
 * (InnoDB Locking Reads: SELECT ... FOR UPDATE).
 *
 * The rows: locklab_locks (name varbinary primary key, token bigint), one
 * per lock name, made by INSERT IGNORE in autocommit, outside the locking
 * transaction, only when the locking SELECT found none: inside, a second
 * client's insert of the same new name would wait on the first's
 * uncommitted index record, and the first's rollback would take the row
 * from under it.
 * acquire: one message, SET SESSION innodb_lock_wait_timeout (when it
 *   changes); START TRANSACTION; SELECT token ... FOR UPDATE (NOWAIT when
 *   there is no wait). innodb_lock_wait_timeout takes whole seconds: the
 *   wait rounded up. Its error, ER_LOCK_WAIT_TIMEOUT (1205; MySQL's NOWAIT
 *   gives ER_LOCK_NOWAIT, 3572), is a busy lock. With fencing, once the
 *   row is locked the name's counter in locklab_fence is incremented on
 *   another connection of the client, in autocommit (mysql-named's
 *   statement): committed before the grant is handed out, it outlives the
 *   locking transaction. A counter incremented inside that transaction
 *   would not do: a transaction rolled back (its session killed, the
 *   server restarted) takes its increment with it and the next holder is
 *   handed the same token again, which a store that refuses only lower
 *   tokens lets through (the matrix's mysql_row_server_killed_fenced found
 *   exactly that; a MariaDB SEQUENCE's NEXTVAL fared no better here: after
 *   a kill it began again at 1).
 * The critical section runs inside that transaction.
 * release: COMMIT. A session the server ended while we held the row
 *   rolled the transaction back: LOCK_LOST; a COMMIT whose answer never
 *   came is LOCK_ERR (it may have committed). With lock.mysql.reconnect a
 *   new session hides the end, and its COMMIT (of nothing) answers OK: the
 *   holder never learns it lost the lock.
 * No ttl: a crashed client's transaction ends with its socket; a paused
 *   one's stays open and keeps the row locked (until wait_timeout ends
 *   the idle session).
 * One transaction per lock held, so one connection each, as postgres-row
 *   keeps them: IDLE_KEPT stay open for the next acquires.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/mysql.h"
#include "algorithms/mysql_wire.h"

#define ER_LOCK_WAIT_TIMEOUT 1205
#define ER_LOCK_NOWAIT       3572 /* MySQL 8's NOWAIT; MariaDB answers 1205 */
#define ROW_TRIES            3    /* the row made, then locked: twice suffices */
#define IDLE_KEPT            2    /* connections kept open with no transaction */
#define NO_WAIT_SET          UINT32_MAX

/* One connection and the transaction open on it. */
struct row_txn {
    struct mysql_wire w;
    char name[MYSQL_NAME_MAX]; /* the key its transaction locked */
    size_t name_len;
    char quoted[2 * MYSQL_NAME_MAX + 3];
    char sql[4 * MYSQL_NAME_MAX + 320];
    uint32_t wait_s; /* the session's innodb_lock_wait_timeout; NO_WAIT_SET: not set */
    bool in_txn;     /* a transaction is open (or was, when the connection went) */
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
    t[l->n]->wait_s = NO_WAIT_SET;
    return t[l->n++];
}

static int row_connect(struct lock_client *c)
{
    struct row_lock *l = mysql_client_impl(c, sizeof(*l));
    if (l == NULL)
        return -1;
    struct row_txn *t = add_txn(c, l);
    if (t == NULL) {
        lock_set_error(c, LOCK_ERR_CONFIG, "out of memory");
        return -1;
    }
    return mysql_connect(c, &t->w, &c->cfg->endpoints[0]);
}

static void row_disconnect(struct lock_client *c)
{
    struct row_lock *l = c->impl;
    for (size_t i = 0; l && i < l->n; i++) {
        mysql_close_wire(&l->t[i]->w);
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
        if (!l->t[i]->in_txn && l->t[i]->w.m != NULL)
            return l->t[i];
    for (size_t i = 0; i < l->n; i++)
        if (!l->t[i]->in_txn)
            return l->t[i];
    return add_txn(c, l);
}

/* The locking message for t's name and the wait. */
static void locking_sql(const struct lock_client *c, struct row_txn *t, uint32_t wait_ms)
{
    char set[80] = "";
    uint32_t wait_s = mysql_row_wait_s(wait_ms);
    if (wait_ms && wait_s != t->wait_s)
        snprintf(set, sizeof(set), "SET SESSION innodb_lock_wait_timeout = %" PRIu32 "; ", wait_s);
    char fence[2 * MYSQL_NAME_MAX + 96] = "";
    if (c->cfg->want_token)
        snprintf(fence, sizeof(fence),
                 "; UPDATE " MYSQL_LOCK_TABLE
                 " SET token = LAST_INSERT_ID(token + 1) WHERE name = %s",
                 t->quoted);
    snprintf(t->sql, sizeof(t->sql),
             "%sSTART TRANSACTION; SELECT token FROM " MYSQL_LOCK_TABLE " WHERE name = %s FOR "
             "UPDATE%s%s",
             set, t->quoted, wait_ms ? "" : " NOWAIT", fence);
}

/* End the open transaction without keeping anything. */
static void roll_back(struct lock_client *c, struct row_txn *t)
{
    struct mysql_reply r;
    t->in_txn = false;
    if (t->w.m && mysql_query_wire(c, &t->w, "ROLLBACK", mysql_deadline(c, 0), false, NULL, NULL,
                                   &r) != MYSQL_DONE)
        mysql_drop(c, &t->w); /* a transaction left open would hold its locks */
}

/* The name's row made, in autocommit: 0, or -1 when it was not. */
static int make_row(struct lock_client *c, struct row_txn *t)
{
    struct mysql_reply r;
    snprintf(t->sql, sizeof(t->sql), "INSERT IGNORE INTO " MYSQL_LOCK_TABLE " (name) VALUES (%s)",
             t->quoted);
    if (t->w.m == NULL)
        return -1;
    return mysql_query_wire(c, &t->w, t->sql, mysql_deadline(c, 0), false, NULL, NULL, &r) ==
                   MYSQL_NO_ANSWER
               ? -1
               : 0;
}

/* One try at the row: LOCK_OK (held), LOCK_BUSY, LOCK_ERR, or LOCK_LOST
 * standing for "no row yet" (made, try again). */
static enum lock_result lock_row(struct lock_client *c, struct row_txn *t, uint32_t wait_ms)
{
    struct mysql_reply r;
    bool cancelled;
    if (mysql_ensure(c, &t->w) < 0 ||
        mysql_quote(&t->w, t->name, t->name_len, t->quoted, sizeof(t->quoted)) < 0)
        return LOCK_ERR;
    locking_sql(c, t, wait_ms);
    t->in_txn = true;
    enum mysql_outcome o =
        mysql_query_wire(c, &t->w, t->sql, mysql_deadline(c, wait_ms), true, &cancelled, NULL, &r);
    if (cancelled || o == MYSQL_NO_ANSWER || o == MYSQL_UNSENT) {
        t->in_txn = false; /* the connection is closed: so is the transaction */
        t->wait_s = NO_WAIT_SET;
        return cancelled ? LOCK_BUSY : LOCK_ERR;
    }
    if (wait_ms)
        t->wait_s = mysql_row_wait_s(wait_ms); /* the SET ran before anything could fail */
    if (o == MYSQL_REFUSED) {
        bool busy = r.errnum == ER_LOCK_WAIT_TIMEOUT || r.errnum == ER_LOCK_NOWAIT;
        char why[LOCK_ERRSTR_MAX];
        snprintf(why, sizeof(why), "%s", c->errstr);
        roll_back(c, t);
        if (busy) {
            lock_clear_error(c);
            return LOCK_BUSY;
        }
        lock_set_error(c, LOCK_ERR_REFUSED, "%s", why);
        return LOCK_ERR;
    }
    if (r.rows != 1) {
        roll_back(c, t);
        return make_row(c, t) < 0 ? LOCK_ERR : LOCK_LOST;
    }
    return LOCK_OK;
}

/* The fencing token for t's name, with t's row locked: the counter
 * incremented and committed on another connection. 0, or -1 with c->err
 * set (the row is given back: a grant with no token to show fails). */
static int take_token(struct lock_client *c, struct row_txn *t, uint64_t *token)
{
    struct row_txn *f = free_txn(c, c->impl); /* never t: its transaction is open */
    enum mysql_outcome o = MYSQL_UNSENT;
    *token = 0;
    if (f && mysql_ensure(c, &f->w) == 0)
        o = mysql_next_token(c, &f->w, t->quoted, token);
    if (o == MYSQL_DONE && *token > 0)
        return 0;
    if (c->err == LOCK_OK)
        lock_set_error(c, LOCK_ERR_PROTOCOL, "no fencing token for %s", t->quoted);
    roll_back(c, t);
    return -1;
}

static enum lock_result row_acquire(struct lock_client *c, const char *key, size_t key_len,
                                    uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct row_txn *t = free_txn(c, c->impl);
    if (t == NULL) {
        lock_set_error(c, LOCK_ERR_CONFIG, "out of memory");
        return LOCK_ERR;
    }
    if (key_len >= sizeof(t->name)) {
        lock_set_error(c, LOCK_ERR_CONFIG, "key of %zu bytes is too long", key_len);
        return LOCK_ERR;
    }
    memcpy(t->name, key, key_len);
    t->name_len = key_len;
    for (int i = 0; i < ROW_TRIES; i++) {
        uint64_t token = 0;
        if (lock_cancelled(c))
            return LOCK_BUSY;
        enum lock_result rc = lock_row(c, t, wait_ms);
        if (rc == LOCK_OK && c->cfg->want_token && take_token(c, t, &token) < 0)
            return LOCK_ERR;
        if (rc == LOCK_OK)
            *g = (struct lock_grant){.key = key,
                                     .key_len = key_len,
                                     .ttl_ms = ttl_ms,
                                     .validity_ms = ttl_ms, /* no expiry */
                                     .token = token};
        if (rc != LOCK_LOST)
            return rc;
    }
    lock_set_error(c, LOCK_ERR_PROTOCOL, "the row for %s cannot be found or made", t->quoted);
    return LOCK_ERR;
}

/* After a COMMIT on t: close it when IDLE_KEPT others are idle already. */
static void keep_or_close(struct row_lock *l, struct row_txn *t)
{
    size_t idle = 0;
    for (size_t i = 0; i < l->n; i++)
        idle += l->t[i] != t && !l->t[i]->in_txn && l->t[i]->w.m != NULL;
    if (idle >= IDLE_KEPT) {
        mysql_close_wire(&t->w); /* its slot stays, reconnected when needed again */
        t->wait_s = NO_WAIT_SET;
    }
}

/* The connection whose open transaction locked g's key; NULL: none. */
static struct row_txn *holding_txn(struct row_lock *l, const struct lock_grant *g)
{
    for (size_t i = 0; i < l->n; i++) {
        struct row_txn *t = l->t[i];
        if (t->in_txn && t->name_len == g->key_len && memcmp(t->name, g->key, g->key_len) == 0)
            return t;
    }
    return NULL;
}

static enum lock_result row_release(struct lock_client *c, const struct lock_grant *g)
{
    struct row_txn *t = holding_txn(c->impl, g);
    struct mysql_reply r;
    bool ended = false;
    if (t == NULL || t->w.m == NULL) {
        if (t)
            t->in_txn = false;
        lock_set_error(c, LOCK_ERR_IO, "the transaction that held it ended");
        return LOCK_LOST;
    }
    t->in_txn = false;
    enum mysql_outcome o =
        mysql_query_wire(c, &t->w, "COMMIT", mysql_deadline(c, 0), false, NULL, &ended, &r);
    if (ended) {
        t->wait_s = NO_WAIT_SET;
        lock_set_error(c, LOCK_ERR_IO, "the session that held it ended: rolled back");
        return LOCK_LOST;
    }
    if (o == MYSQL_NO_ANSWER || o == MYSQL_UNSENT)
        return LOCK_ERR; /* it may have committed */
    if (o == MYSQL_DONE) {
        keep_or_close(c->impl, t);
        return LOCK_OK;
    }
    roll_back(c, t); /* refused: the transaction did not last to the end */
    return LOCK_LOST;
}

static void row_crash(struct lock_client *c)
{
    row_disconnect(c); /* no COMMIT: the server rolls back when the socket closes */
}

const struct lock_ops mysql_row_ops = {
    .name = "mysql-row",
    .summary = "MySQL/MariaDB InnoDB row lock: SELECT ... FOR UPDATE held by an open transaction",
    .server = "mysql",
    .family = &mysql_family,
    .leaseless = true,
    .gives_token = true,
    .connect = row_connect,
    .disconnect = row_disconnect,
    .acquire = row_acquire,
    .release = row_release,
    .crash = row_crash,
};
