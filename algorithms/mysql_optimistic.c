/* mysql_optimistic.c - optimistic concurrency on a version column in
 * MySQL or MariaDB, as postgres-optimistic does it in PostgreSQL (an
 * ORM's @Version): no lock is taken; a writer remembers the version it
 * read and its UPDATE only applies while the version is still that one.
 *
 * The rows: locklab_versions (name varbinary primary key, version bigint,
 * starting at 1), one per lock name, made by INSERT IGNORE the first time
 * a name is read and found missing.
 * acquire: SELECT version: the grant's token. It never waits and never
 *   says busy: everyone may read at once.
 * release: the commit, UPDATE ... SET version = version + 1 WHERE name = ?
 *   AND version = ? (autocommit). One row changed: the write is ours
 *   (LOCK_OK). None: another writer committed since we read, a conflict
 *   (LOCK_LOST). An answer that never came is LOCK_ERR (it may have
 *   committed).
 * So this is no mutual exclusion (docs/algorithms.md, Optimistic
 * concurrency): the business invariants are the judge. A crashed or
 * paused client holds nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/mysql.h"
#include "algorithms/mysql_wire.h"

struct optimistic {
    struct mysql_wire w;
    char quoted[2 * MYSQL_NAME_MAX + 3];
    char sql[2 * MYSQL_NAME_MAX + 192];
};

static int optimistic_connect(struct lock_client *c)
{
    struct optimistic *o = mysql_client_impl(c, sizeof(*o));
    if (o == NULL)
        return -1;
    return mysql_connect(c, &o->w, &c->cfg->endpoints[0]);
}

static void optimistic_disconnect(struct lock_client *c)
{
    struct optimistic *o = c->impl;
    if (o)
        mysql_close_wire(&o->w);
    free(o);
    c->impl = NULL;
}

/* The name's version, its row made first when it has none: 0 with
 * *version set, -1 when the server did not answer or refused. */
static int read_version(struct lock_client *c, struct optimistic *o, int64_t *version)
{
    struct mysql_reply r;
    for (int tries = 0; tries < 2; tries++) {
        snprintf(o->sql, sizeof(o->sql),
                 "SELECT version FROM " MYSQL_VERSION_TABLE " WHERE name = %s", o->quoted);
        if (mysql_query_wire(c, &o->w, o->sql, mysql_deadline(c, 0), false, NULL, NULL, &r) !=
            MYSQL_DONE)
            return -1;
        if (r.rows == 1 && !r.null) {
            *version = mysql_int(&r);
            return 0;
        }
        snprintf(o->sql, sizeof(o->sql),
                 "INSERT IGNORE INTO " MYSQL_VERSION_TABLE " (name) VALUES (%s)", o->quoted);
        if (mysql_query_wire(c, &o->w, o->sql, mysql_deadline(c, 0), false, NULL, NULL, &r) !=
            MYSQL_DONE)
            return -1;
    }
    lock_set_error(c, LOCK_ERR_PROTOCOL, "the version row of %s was made but cannot be read",
                   o->quoted);
    return -1;
}

static enum lock_result optimistic_acquire(struct lock_client *c, const char *key, size_t key_len,
                                           uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct optimistic *o = c->impl;
    int64_t version;
    (void)wait_ms; /* nothing is waited for: a conflict shows at the commit */
    if (lock_cancelled(c))
        return LOCK_BUSY;
    if (mysql_ensure(c, &o->w) < 0)
        return LOCK_ERR;
    if (mysql_quote(&o->w, key, key_len, o->quoted, sizeof(o->quoted)) < 0) {
        lock_set_error(c, LOCK_ERR_CONFIG, "key of %zu bytes is too long", key_len);
        return LOCK_ERR;
    }
    if (read_version(c, o, &version) < 0)
        return LOCK_ERR;
    *g = (struct lock_grant){.key = key,
                             .key_len = key_len,
                             .token = (uint64_t)version,
                             .ttl_ms = ttl_ms,
                             .validity_ms = ttl_ms};
    return LOCK_OK;
}

static enum lock_result optimistic_release(struct lock_client *c, const struct lock_grant *g)
{
    struct optimistic *o = c->impl;
    struct mysql_reply r;
    if (mysql_ensure(c, &o->w) < 0)
        return LOCK_ERR; /* unsent: surely not committed */
    if (mysql_quote(&o->w, g->key, g->key_len, o->quoted, sizeof(o->quoted)) < 0) {
        lock_set_error(c, LOCK_ERR_CONFIG, "key of %zu bytes is too long", g->key_len);
        return LOCK_ERR;
    }
    snprintf(o->sql, sizeof(o->sql),
             "UPDATE " MYSQL_VERSION_TABLE " SET version = version + 1 WHERE name = %s AND "
             "version = %" PRIu64,
             o->quoted, g->token);
    if (mysql_query_wire(c, &o->w, o->sql, mysql_deadline(c, 0), false, NULL, NULL, &r) !=
        MYSQL_DONE)
        return LOCK_ERR;
    if (r.affected == 1)
        return LOCK_OK;
    lock_set_error(c, LOCK_ERR_NONE, "version %" PRIu64 " of %s is no longer current: a conflict",
                   g->token, o->quoted);
    return LOCK_LOST;
}

static void optimistic_crash(struct lock_client *c)
{
    optimistic_disconnect(c); /* nothing is held: nothing to lose */
}

const struct lock_ops mysql_optimistic_ops = {
    .name = "mysql-optimistic",
    .summary = "MySQL/MariaDB version column: UPDATE ... WHERE version = v; no exclusion, a "
               "conflict refuses the write",
    .server = "mysql",
    .family = &mysql_family,
    .leaseless = true,
    .gives_token = true,
    .optimistic = true,
    .connect = optimistic_connect,
    .disconnect = optimistic_disconnect,
    .acquire = optimistic_acquire,
    .release = optimistic_release,
    .crash = optimistic_crash,
};
