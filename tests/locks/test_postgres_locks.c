/* test_postgres_locks.c - the PostgreSQL locks against a real PostgreSQL,
 * read as PostgreSQL's own description of them (Explicit Locking).
 *
 * postgres-advisory: a held lock makes another session's try fail and its
 * wait last until the release or lock_timeout; the key is
 * hashtextextended(name, 0), as pg_locks shows it (classid the high 32
 * bits, objid the low, objsubid 1); a crashed holder's lock is free at
 * once; an unlock of a lock not held is LOST; a plain libpq session taking
 * pg_advisory_lock on the same bigint blocks locklab's client, and the
 * other way round.
 * postgres-row: FOR UPDATE blocks the second until COMMIT; lock_timeout
 * bounds the wait; a plain session's FOR UPDATE on the same row blocks
 * locklab's; the server killed while held makes the COMMIT an error, not
 * OK; two held at once by one client are two transactions, released
 * apart.
 * postgres-optimistic (a version column, as an ORM's @Version): reading
 * takes nothing and never waits, however many read at once; of two
 * writers that read the same version the first commit wins and the
 * second is a conflict; the version is a plain column another
 * application's UPDATE moves too, which makes locklab's commit conflict;
 * a new name's row starts at version 1.
 *
 * The server is started by locklab's own fleet code (a copy of one initdb,
 * as the postgres user) on a free loopback port and stopped by its PID.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <libpq-fe.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "tests/lib/lock_config.h"

static struct cluster cluster, own;
static struct lock_config cfg, cfg_token, own_cfg;
static int key_counter;

static void client_open(struct lock_client *c, const char *algo, const struct lock_config *conf,
                        const char *owner)
{
    memset(c, 0, sizeof(*c));
    c->ops = lock_find(algo);
    assert_non_null(c->ops);
    c->cfg = conf;
    c->rng = 88172645463325252ULL;
    snprintf(c->owner, sizeof(c->owner), "%s", owner);
    c->owner_len = strlen(owner);
    assert_int_equal(c->ops->connect(c), 0);
}

static void new_key(char *key, size_t len, const char *algo)
{
    snprintf(key, len, "test:%s:%d", algo, key_counter++);
}

static enum lock_result take(struct lock_client *c, const char *key, uint32_t wait,
                             struct lock_grant *g)
{
    return c->ops->acquire(c, key, strlen(key), 10000, wait, g);
}

/* A plain libpq session, as another application would open one. */
static PGconn *plain(int port)
{
    char info[128];
    snprintf(info, sizeof(info), "host=127.0.0.1 port=%d user=postgres dbname=postgres", port);
    PGconn *pg = PQconnectdb(info);
    assert_int_equal(PQstatus(pg), CONNECTION_OK);
    return pg;
}

/* One value of a plain query with the key as $1. */
static void plain_query(PGconn *pg, const char *sql, const char *key, char *out, size_t len)
{
    const char *params[] = {key};
    PGresult *r = PQexecParams(pg, sql, key ? 1 : 0, NULL, key ? params : NULL, NULL, NULL, 0);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    if (out)
        snprintf(out, len, "%s", st == PGRES_TUPLES_OK && PQntuples(r) ? PQgetvalue(r, 0, 0) : "");
    PQclear(r);
}

struct waiter {
    struct lock_client *c;
    const char *key;
    uint32_t wait_ms;
    enum lock_result rc;
    uint64_t waited_ms;
    struct lock_grant g;
};

static void *wait_for_lock(void *arg)
{
    struct waiter *w = arg;
    uint64_t t = lock_now_ms();
    w->rc = take(w->c, w->key, w->wait_ms, &w->g);
    w->waited_ms = lock_now_ms() - t;
    return NULL;
}

/* a holds key; b waits up to 5 s in a thread; a releases after 300 ms:
 * b gets it then, not before. */
static void second_waits_until_release(const char *algo)
{
    struct lock_client a, b;
    struct lock_grant ga;
    char key[64];
    new_key(key, sizeof(key), algo);
    client_open(&a, algo, &cfg, "a");
    client_open(&b, algo, &cfg, "b");
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    struct waiter w = {.c = &b, .key = key, .wait_ms = 5000};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, wait_for_lock, &w), 0);
    lock_sleep_ms(300);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    pthread_join(t, NULL);
    assert_int_equal(w.rc, LOCK_OK);
    assert_true(w.waited_ms >= 250 && w.waited_ms < 5000);
    assert_int_equal(b.ops->release(&b, &w.g), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

/* a holds key: b's try is busy at once, and a wait of 300 ms is busy
 * after about that long (lock_timeout), not sooner. */
static void second_is_busy_and_lock_timeout_bounds(const char *algo)
{
    struct lock_client a, b;
    struct lock_grant ga, gb;
    char key[64];
    new_key(key, sizeof(key), algo);
    client_open(&a, algo, &cfg, "a");
    client_open(&b, algo, &cfg, "b");
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    uint64_t t = lock_now_ms();
    assert_int_equal(take(&b, key, 0, &gb), LOCK_BUSY);
    assert_true(lock_now_ms() - t < 1000);
    t = lock_now_ms();
    assert_int_equal(take(&b, key, 300, &gb), LOCK_BUSY);
    uint64_t waited = lock_now_ms() - t;
    assert_true(waited >= 250 && waited < 2000);
    assert_int_equal(b.err, LOCK_ERR_NONE);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_int_equal(take(&b, key, 0, &gb), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static void advisory_busy_and_lock_timeout(void **state)
{
    (void)state;
    second_is_busy_and_lock_timeout_bounds("postgres-advisory");
}

static void advisory_waiter_gets_it_at_release(void **state)
{
    (void)state;
    second_waits_until_release("postgres-advisory");
}

static void advisory_key_is_hashtextextended(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant ga;
    char key[64], hash[32], classid[32], objid[32], objsubid[8];
    new_key(key, sizeof(key), "advisory");
    client_open(&a, "postgres-advisory", &cfg, "a");
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    PGconn *pg = plain(cluster.srv[0].port);
    plain_query(pg, "SELECT hashtextextended($1, 0)", key, hash, sizeof(hash));
    /* the one advisory lock held now is a's: its two halves make the key */
    plain_query(pg, "SELECT classid FROM pg_locks WHERE locktype = 'advisory' AND granted", NULL,
                classid, sizeof(classid));
    plain_query(pg, "SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND granted", NULL,
                objid, sizeof(objid));
    plain_query(pg, "SELECT objsubid FROM pg_locks WHERE locktype = 'advisory' AND granted", NULL,
                objsubid, sizeof(objsubid));
    uint64_t want = (uint64_t)strtoll(hash, NULL, 10);
    uint64_t got = (strtoull(classid, NULL, 10) << 32) | strtoull(objid, NULL, 10);
    assert_true(want == got);
    assert_string_equal(objsubid, "1");
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    PQfinish(pg);
    a.ops->disconnect(&a);
}

static void advisory_crashed_holder_is_freed_at_once(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant ga, gb;
    char key[64];
    new_key(key, sizeof(key), "advisory");
    client_open(&a, "postgres-advisory", &cfg, "a");
    client_open(&b, "postgres-advisory", &cfg, "b");
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    assert_int_equal(take(&b, key, 0, &gb), LOCK_BUSY);
    uint64_t t = lock_now_ms();
    a.ops->crash(&a);
    enum lock_result rc = LOCK_BUSY;
    for (int i = 0; i < 200 && rc == LOCK_BUSY && lock_now_ms() - t < 5000; i++) {
        rc = take(&b, key, 0, &gb);
        if (rc == LOCK_BUSY)
            lock_sleep_ms(5);
    }
    uint64_t freed = lock_now_ms() - t;
    assert_int_equal(rc, LOCK_OK);
    assert_true(freed < 1000);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    b.ops->disconnect(&b);
}

static void advisory_release_not_held_is_lost(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant ga, gb;
    char key[64];
    new_key(key, sizeof(key), "advisory");
    client_open(&a, "postgres-advisory", &cfg, "a");
    client_open(&b, "postgres-advisory", &cfg, "b");
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    /* b's session holds nothing: the server says so, and a's lock stays */
    assert_int_equal(b.ops->release(&b, &ga), LOCK_LOST);
    assert_int_equal(take(&b, key, 0, &gb), LOCK_BUSY);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_LOST);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static void advisory_contends_with_a_plain_client(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant ga;
    char key[64], got[8];
    new_key(key, sizeof(key), "advisory");
    client_open(&a, "postgres-advisory", &cfg, "a");
    PGconn *pg = plain(cluster.srv[0].port);
    plain_query(pg, "SELECT pg_advisory_lock(hashtextextended($1, 0))", key, NULL, 0);
    assert_int_equal(take(&a, key, 0, &ga), LOCK_BUSY);
    assert_int_equal(take(&a, key, 200, &ga), LOCK_BUSY);
    plain_query(pg, "SELECT pg_advisory_unlock(hashtextextended($1, 0))", key, got, sizeof(got));
    assert_string_equal(got, "t");
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    plain_query(pg, "SELECT pg_try_advisory_lock(hashtextextended($1, 0))", key, got, sizeof(got));
    assert_string_equal(got, "f");
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    PQfinish(pg);
    a.ops->disconnect(&a);
}

/* Each later holder of a key has a larger token than the one before. */
static void tokens_grow(const char *algo)
{
    struct lock_client a, b;
    struct lock_grant ga, gb;
    char key[64];
    new_key(key, sizeof(key), algo);
    client_open(&a, algo, &cfg_token, "a");
    client_open(&b, algo, &cfg_token, "b");
    uint64_t last = 0;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
        assert_true(ga.token > last);
        assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
        assert_int_equal(take(&b, key, 0, &gb), LOCK_OK);
        assert_true(gb.token > ga.token);
        last = gb.token;
        assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    }
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static void advisory_tokens_grow(void **state)
{
    (void)state;
    tokens_grow("postgres-advisory");
}

static void row_busy_and_lock_timeout(void **state)
{
    (void)state;
    second_is_busy_and_lock_timeout_bounds("postgres-row");
}

static void row_waiter_gets_it_at_commit(void **state)
{
    (void)state;
    second_waits_until_release("postgres-row");
}

static void row_tokens_grow(void **state)
{
    (void)state;
    tokens_grow("postgres-row");
}

static void row_contends_with_a_plain_client(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant ga;
    char key[64];
    new_key(key, sizeof(key), "row");
    client_open(&a, "postgres-row", &cfg, "a");
    /* the row made by locklab's first grant, then locked by another
     * application's transaction */
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    PGconn *pg = plain(cluster.srv[0].port);
    plain_query(pg, "BEGIN", NULL, NULL, 0);
    plain_query(pg, "SELECT key FROM locklab_locks WHERE key = $1 FOR UPDATE", key, NULL, 0);
    assert_int_equal(take(&a, key, 200, &ga), LOCK_BUSY);
    plain_query(pg, "COMMIT", NULL, NULL, 0);
    assert_int_equal(take(&a, key, 200, &ga), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    PQfinish(pg);
    a.ops->disconnect(&a);
}

static int own_stop(void **state)
{
    (void)state;
    cluster_stop(&own, NULL);
    return 0;
}

static void row_server_killed_while_held_is_no_commit(void **state)
{
    (void)state;
    char err[256];
    if (cluster_start(&own, "postgres", 1, err, sizeof(err)) < 0)
        fail_msg("cannot start PostgreSQL: %s", err);
    own_cfg = cfg;
    own_cfg.endpoints[0].port = own.srv[0].port;
    own_cfg.io_timeout_ms = 1000;
    struct lock_client a;
    struct lock_grant ga;
    client_open(&a, "postgres-row", &own_cfg, "a");
    assert_int_equal(take(&a, "test:row:killed", 0, &ga), LOCK_OK);
    assert_int_equal(cluster_kill(&own, 0, err, sizeof(err)), 0);
    /* The holder is still inside when the server dies: its backend sees
     * the postmaster's death at once and ends. A COMMIT sent in the same
     * microsecond as the kill can still reach the orphaned backend first
     * and commit, which is PostgreSQL's doing, not the lock's. */
    lock_sleep_ms(300);
    enum lock_result rc = a.ops->release(&a, &ga);
    assert_int_not_equal(rc, LOCK_OK);
    assert_true(rc == LOCK_ERR || rc == LOCK_LOST);
    assert_true(a.connect_failures >= 1);
    a.ops->disconnect(&a);
}

static void advisory_server_killed_refuses_connects(void **state)
{
    (void)state;
    char err[256];
    if (cluster_start(&own, "postgres", 1, err, sizeof(err)) < 0)
        fail_msg("cannot start PostgreSQL: %s", err);
    own_cfg = cfg;
    own_cfg.endpoints[0].port = own.srv[0].port;
    own_cfg.io_timeout_ms = 1000;
    struct lock_client a;
    struct lock_grant ga;
    client_open(&a, "postgres-advisory", &own_cfg, "a");
    assert_int_equal(take(&a, "test:advisory:killed", 0, &ga), LOCK_OK);
    assert_int_equal(cluster_kill(&own, 0, err, sizeof(err)), 0);
    lock_sleep_ms(300); /* as in row_server_killed_while_held_is_no_commit */
    assert_int_not_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_int_equal(take(&a, "test:advisory:killed", 0, &ga), LOCK_ERR);
    assert_true(a.connect_refused >= 1);
    a.ops->disconnect(&a);
}

static int setup(void **state)
{
    (void)state;
    char err[256];
    if (cluster_start(&cluster, "postgres", 1, err, sizeof(err)) < 0) {
        fprintf(stderr, "cannot start PostgreSQL: %s\n", err);
        return -1;
    }
    lock_config_one(&cfg, cluster.srv[0].port);
    cfg_token = cfg;
    cfg_token.want_token = true;
    signal(SIGPIPE, SIG_IGN); /* as the engine does */
    return 0;
}

/* One client holding two row locks at once (a scheduler keeps a task's
 * lock while it fires the next): each is its own transaction, so
 * releasing one commits that one alone and the other stays held. */
static void row_two_held_at_once_release_apart(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant g1, g2, gb;
    char k1[64], k2[64];
    new_key(k1, sizeof(k1), "row");
    new_key(k2, sizeof(k2), "row");
    client_open(&a, "postgres-row", &cfg, "a");
    client_open(&b, "postgres-row", &cfg, "b");
    assert_int_equal(take(&a, k1, 0, &g1), LOCK_OK);
    assert_int_equal(take(&a, k2, 0, &g2), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &g1), LOCK_OK);
    assert_int_equal(take(&b, k2, 0, &gb), LOCK_BUSY); /* still a's */
    assert_int_equal(take(&b, k1, 0, &gb), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &g2), LOCK_OK);
    assert_int_equal(take(&b, k2, 0, &gb), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

/* Two read the same version at once: neither waits; the first commit
 * wins, the second conflicts; a fresh read sees the next version. */
static void optimistic_first_commit_wins(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant ga, gb, gc;
    char key[64];
    new_key(key, sizeof(key), "optimistic");
    client_open(&a, "postgres-optimistic", &cfg, "a");
    client_open(&b, "postgres-optimistic", &cfg, "b");
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    assert_int_equal(take(&b, key, 0, &gb), LOCK_OK); /* no exclusion: both read */
    assert_int_equal(ga.token, 1);                    /* a new row starts at 1 */
    assert_int_equal(gb.token, 1);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_LOST);
    assert_int_equal(take(&b, key, 0, &gc), LOCK_OK);
    assert_int_equal(gc.token, 2);
    assert_int_equal(b.ops->release(&b, &gc), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

/* The version is the application's column: another application's UPDATE
 * of it (as its ORM would commit) makes locklab's commit a conflict, and
 * locklab's commits show in the column. */
static void optimistic_contends_with_a_plain_client(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant g;
    char key[64], v[32];
    new_key(key, sizeof(key), "optimistic");
    client_open(&a, "postgres-optimistic", &cfg, "a");
    PGconn *pg = plain(cfg.endpoints[0].port);
    assert_int_equal(take(&a, key, 0, &g), LOCK_OK);
    plain_query(pg, "UPDATE locklab_versions SET version = version + 1 WHERE key = $1", key, NULL,
                0);
    assert_int_equal(a.ops->release(&a, &g), LOCK_LOST);
    assert_int_equal(take(&a, key, 0, &g), LOCK_OK);
    assert_int_equal(g.token, 2);
    assert_int_equal(a.ops->release(&a, &g), LOCK_OK);
    plain_query(pg, "SELECT version FROM locklab_versions WHERE key = $1", key, v, sizeof(v));
    assert_string_equal(v, "3");
    PQfinish(pg);
    a.ops->disconnect(&a);
}

static int teardown(void **state)
{
    (void)state;
    cluster_stop(&cluster, NULL);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(advisory_busy_and_lock_timeout),
        cmocka_unit_test(advisory_waiter_gets_it_at_release),
        cmocka_unit_test(advisory_key_is_hashtextextended),
        cmocka_unit_test(advisory_crashed_holder_is_freed_at_once),
        cmocka_unit_test(advisory_release_not_held_is_lost),
        cmocka_unit_test(advisory_contends_with_a_plain_client),
        cmocka_unit_test(advisory_tokens_grow),
        cmocka_unit_test_teardown(advisory_server_killed_refuses_connects, own_stop),
        cmocka_unit_test(row_busy_and_lock_timeout),
        cmocka_unit_test(row_waiter_gets_it_at_commit),
        cmocka_unit_test(row_tokens_grow),
        cmocka_unit_test(row_contends_with_a_plain_client),
        cmocka_unit_test_teardown(row_server_killed_while_held_is_no_commit, own_stop),
        cmocka_unit_test(row_two_held_at_once_release_apart),
        cmocka_unit_test(optimistic_first_commit_wins),
        cmocka_unit_test(optimistic_contends_with_a_plain_client),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
