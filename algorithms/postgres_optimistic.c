/* postgres_optimistic.c - optimistic concurrency on a version column, the
 * way an ORM guards a row (JPA's @Version, Rails' lock_version): no lock
 * is taken; a writer remembers the version it read and its UPDATE only
 * applies while the version is still that one.
 *
 * The rows: locklab_versions (key text primary key, version bigint,
 * starting at 1), one per lock name, inserted (ON CONFLICT DO NOTHING)
 * the first time a name is read and found missing.
 * acquire: SELECT version: the grant's token. It never waits and never
 *   says busy: everyone may read at once.
 * release: the commit, UPDATE ... SET version = version + 1 WHERE key = $1
 *   AND version = $2. One row: the write is ours (LOCK_OK). No row:
 *   another writer committed since we read, a conflict (LOCK_LOST): the
 *   caller must not write, and retries from a fresh read. An answer that
 *   never came is LOCK_ERR (it may have committed).
 * So this is no mutual exclusion: sections overlap, and what keeps the
 * business safe is that only one of the overlapping writes commits. The
 * engine commits before the workload writes (client_commit), the checker
 * counts a refused write as it counts a fenced one, and the business
 * invariants are the judge. A crashed or paused client holds nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/pg_wire.h"
#include "algorithms/postgres.h"

#define SQL_READ     "SELECT version FROM " PG_VERSION_TABLE " WHERE key = $1"
#define SQL_MAKE_ROW "INSERT INTO " PG_VERSION_TABLE " (key) VALUES ($1) ON CONFLICT DO NOTHING"
#define SQL_COMMIT                                                                                 \
    "UPDATE " PG_VERSION_TABLE " SET version = version + 1 WHERE key = $1 AND version = $2"

struct optimistic {
    struct pg_wire w;
    char name[LOCK_OWNER_MAX + 256]; /* the key, NUL-terminated for libpq */
};

static int optimistic_connect(struct lock_client *c)
{
    struct optimistic *o = pg_client_impl(c, sizeof(*o));
    if (o == NULL)
        return -1;
    return pg_connect(c, &o->w, &c->cfg->endpoints[0]);
}

static void optimistic_disconnect(struct lock_client *c)
{
    struct optimistic *o = c->impl;
    if (o)
        pg_close(&o->w);
    free(o);
    c->impl = NULL;
}

/* The key's version, its row made first when it has none: 0 with *version
 * set, -1 when the server did not answer or refused. */
static int read_version(struct lock_client *c, struct optimistic *o, int64_t *version)
{
    const char *params[] = {o->name};
    struct pg_reply r;
    for (int tries = 0; tries < 2; tries++) {
        if (pg_query(c, &o->w, SQL_READ, 1, params, pg_deadline(c, 0), false, NULL, &r) != PG_DONE)
            return -1;
        if (r.rows == 1 && !r.null) {
            *version = pg_int(&r);
            return 0;
        }
        if (pg_query(c, &o->w, SQL_MAKE_ROW, 1, params, pg_deadline(c, 0), false, NULL, &r) !=
            PG_DONE)
            return -1;
    }
    lock_set_error(c, LOCK_ERR_PROTOCOL, "the version row of %s was made but cannot be read",
                   o->name);
    return -1;
}

static enum lock_result optimistic_acquire(struct lock_client *c, const char *key, size_t key_len,
                                           uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct optimistic *o = c->impl;
    (void)wait_ms; /* nothing is waited for: a conflict shows at the commit */
    if (key_len >= sizeof(o->name)) {
        lock_set_error(c, LOCK_ERR_CONFIG, "key of %zu bytes is too long", key_len);
        return LOCK_ERR;
    }
    snprintf(o->name, sizeof(o->name), "%.*s", (int)key_len, key);
    if (lock_cancelled(c))
        return LOCK_BUSY;
    int64_t version;
    if (pg_ensure(c, &o->w) < 0 || read_version(c, o, &version) < 0)
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
    struct pg_reply r;
    char version[24];
    snprintf(o->name, sizeof(o->name), "%.*s", (int)g->key_len, g->key);
    snprintf(version, sizeof(version), "%" PRIu64, g->token);
    const char *params[] = {o->name, version};
    if (pg_ensure(c, &o->w) < 0)
        return LOCK_ERR; /* unsent: surely not committed */
    if (pg_query(c, &o->w, SQL_COMMIT, 2, params, pg_deadline(c, 0), false, NULL, &r) != PG_DONE)
        return LOCK_ERR;
    if (r.affected == 1)
        return LOCK_OK;
    lock_set_error(c, LOCK_ERR_NONE, "version %s of %s is no longer current: a conflict", version,
                   o->name);
    return LOCK_LOST;
}

static void optimistic_crash(struct lock_client *c)
{
    optimistic_disconnect(c); /* nothing is held: nothing to lose */
}

const struct lock_ops postgres_optimistic_ops = {
    .name = "postgres-optimistic",
    .summary = "PostgreSQL version column: UPDATE ... WHERE version = v; no exclusion, a "
               "conflict refuses the write",
    .server = "postgres",
    .family = &postgres_family,
    .leaseless = true,
    .gives_token = true,
    .optimistic = true,
    .connect = optimistic_connect,
    .disconnect = optimistic_disconnect,
    .acquire = optimistic_acquire,
    .release = optimistic_release,
    .crash = optimistic_crash,
};
