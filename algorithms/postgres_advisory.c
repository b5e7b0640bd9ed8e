/* postgres_advisory.c - PostgreSQL's session-level advisory lock, as its
 * documentation describes it (Explicit Locking, Advisory Locks).
 *
 * The key: the lock's name hashed to a bigint by the server itself,
 * hashtextextended(name, 0) (PostgreSQL 11+), so any other client, psql
 * included, takes the same lock with
 *   SELECT pg_advisory_lock(hashtextextended('<name>', 0));
 * pg_locks shows it as locktype advisory, classid the bigint's high 32
 * bits, objid its low 32 bits, objsubid 1.
 *
 * acquire: with a wait, pg_advisory_lock(k) under lock_timeout = wait_ms,
 *   set in the same statement (set_config in a subquery, which runs
 *   first: the planner keeps a subquery of volatile calls apart). The
 *   server queues the waiters and wakes one at the release, so nothing
 *   polls, and the wait is the server's, as a real client's would be;
 *   lock_timeout's error (55P03) is a busy lock. Without a wait,
 *   pg_try_advisory_lock(k) (lock_timeout 0 would mean "wait forever").
 *   The token: nextval of a shared sequence, asked after the grant, so a
 *   later holder always has a larger one.
 * release: pg_advisory_unlock(k); false (with the server's warning "you
 *   don't own a lock") is LOCK_LOST. A session whose connection is gone
 *   has lost its locks with it: LOCK_LOST too.
 * There is no ttl. A crashed client's socket is closed and the server ends
 *   its session, and its locks, at once. A paused client's session stays
 *   open (its kernel still answers), so its locks stay held until it runs
 *   again: that is what availability shows. A black-holed one's stay until
 *   TCP keepalive or a timeout ends the session.
 * Session locks belong to the server connection: behind pgbouncer's
 *   transaction pooling, lock and unlock can run on different server
 *   connections. Nothing here pins one: what breaks is reported.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/pg_wire.h"
#include "algorithms/postgres.h"

#define SQL_LOCK                                                                                   \
    "SELECT pg_advisory_lock(hashtextextended($1, 0)) "                                            \
    "FROM (SELECT set_config('lock_timeout', $2, false)) AS timeout"
#define SQL_TRY    "SELECT pg_try_advisory_lock(hashtextextended($1, 0))"
#define SQL_UNLOCK "SELECT pg_advisory_unlock(hashtextextended($1, 0))"
#define SQL_TOKEN  "SELECT nextval('" PG_FENCE_SEQ "')"

/* lock_not_available: lock_timeout ran out */
#define SQLSTATE_LOCK_TIMEOUT "55P03"

struct advisory {
    struct pg_wire w;
    char name[LOCK_OWNER_MAX + 256]; /* the key, NUL-terminated for libpq */
};

static int advisory_connect(struct lock_client *c)
{
    struct advisory *a = pg_client_impl(c, sizeof(*a));
    if (a == NULL)
        return -1;
    return pg_connect(c, &a->w, &c->cfg->endpoints[0]);
}

static void advisory_disconnect(struct lock_client *c)
{
    struct advisory *a = c->impl;
    if (a)
        pg_close(&a->w);
    free(a);
    c->impl = NULL;
}

static enum lock_result advisory_acquire(struct lock_client *c, const char *key, size_t key_len,
                                         uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct advisory *a = c->impl;
    struct pg_reply r;
    bool cancelled;
    char timeout[16];
    if (key_len >= sizeof(a->name)) {
        lock_set_error(c, LOCK_ERR_CONFIG, "key of %zu bytes is too long", key_len);
        return LOCK_ERR;
    }
    snprintf(a->name, sizeof(a->name), "%.*s", (int)key_len, key);
    if (lock_cancelled(c))
        return LOCK_BUSY;
    if (pg_ensure(c, &a->w) < 0)
        return LOCK_ERR;
    snprintf(timeout, sizeof(timeout), "%" PRIu32, wait_ms);
    const char *params[] = {a->name, timeout};
    enum pg_outcome o = pg_query(c, &a->w, wait_ms ? SQL_LOCK : SQL_TRY, wait_ms ? 2 : 1, params,
                                 pg_deadline(c, wait_ms), true, &cancelled, &r);
    if (cancelled)
        return LOCK_BUSY; /* the session went with the wait: nothing is held */
    if (o == PG_REFUSED && strcmp(r.sqlstate, SQLSTATE_LOCK_TIMEOUT) == 0) {
        lock_clear_error(c);
        return LOCK_BUSY;
    }
    if (o != PG_DONE)
        return LOCK_ERR; /* no answer: the connection is closed, so is any grant */
    if (wait_ms == 0 && !pg_true(&r))
        return LOCK_BUSY;
    *g = (struct lock_grant){.key = key,
                             .key_len = key_len,
                             .ttl_ms = ttl_ms,
                             /* no expiry: the ttl asked is all a caller plans with */
                             .validity_ms = ttl_ms};
    if (!c->cfg->want_token)
        return LOCK_OK;
    o = pg_query(c, &a->w, SQL_TOKEN, 0, NULL, pg_deadline(c, 0), false, NULL, &r);
    if (o == PG_DONE && !r.null) {
        g->token = (uint64_t)pg_int(&r);
        return LOCK_OK;
    }
    /* held but with no token to show: given back (or gone with the
     * connection), and the acquire fails */
    if (o == PG_REFUSED)
        pg_query(c, &a->w, SQL_UNLOCK, 1, params, pg_deadline(c, 0), false, NULL, &r);
    char why[LOCK_ERRSTR_MAX];
    snprintf(why, sizeof(why), "%s", c->errstr);
    lock_set_error(c, c->err ? c->err : LOCK_ERR_IO, "no fencing token: %s", why);
    return LOCK_ERR;
}

static enum lock_result advisory_release(struct lock_client *c, const struct lock_grant *g)
{
    struct advisory *a = c->impl;
    struct pg_reply r;
    if (a->w.conn == NULL) {
        lock_set_error(c, LOCK_ERR_IO, "the session that held it ended");
        return LOCK_LOST;
    }
    snprintf(a->name, sizeof(a->name), "%.*s", (int)g->key_len, g->key);
    const char *params[] = {a->name};
    enum pg_outcome o =
        pg_query(c, &a->w, SQL_UNLOCK, 1, params, pg_deadline(c, 0), false, NULL, &r);
    if (o != PG_DONE)
        return LOCK_ERR;
    if (pg_true(&r))
        return LOCK_OK;
    lock_set_error(c, LOCK_ERR_NONE, "pg_advisory_unlock: not held by this session");
    return LOCK_LOST;
}

static void advisory_crash(struct lock_client *c)
{
    /* the socket closed without an unlock: the server ends the session */
    advisory_disconnect(c);
}

const struct lock_ops postgres_advisory_ops = {
    .name = "postgres-advisory",
    .summary = "PostgreSQL session advisory lock (pg_advisory_lock, lock_timeout)",
    .server = "postgres",
    .family = &postgres_family,
    .leaseless = true,
    .gives_token = true,
    .connect = advisory_connect,
    .disconnect = advisory_disconnect,
    .acquire = advisory_acquire,
    .release = advisory_release,
    .crash = advisory_crash,
};
