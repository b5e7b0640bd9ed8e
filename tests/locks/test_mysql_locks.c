/* test_mysql_locks.c - the MySQL locks against a real MariaDB, read as the
 * MariaDB manual describes them (GET_LOCK, InnoDB locking reads).
 *
 * Each lock under contention: four clients on one key, a counter of
 * holders inside that must never pass one (for mysql-optimistic: every
 * commit moved the version by one, so no two committed from one read).
 * mysql-named: GET_LOCK's timeout answers 0, a busy lock, after about the
 * wait and not sooner; a plain session's GET_LOCK blocks locklab's and the
 * other way round; a holder whose session another session killed (KILL
 * CONNECTION) is told at release that it lost the lock; with
 * lock.mysql.reconnect the holder gets a new session (another id)
 * without the lock, silently, and another client takes it meanwhile; the
 * session's wait_timeout (lock.mysql.wait_timeout_s) ends an idle
 * holder's session, and its lock with it; tokens grow.
 * mysql-row: FOR UPDATE blocks the second until COMMIT and
 * innodb_lock_wait_timeout bounds its wait; a killed holder's COMMIT is
 * LOST, but with reconnect it answers OK on the new session (the lock was
 * lost unseen); tokens grow, and go on growing past a server killed and
 * restarted with its data, the one of the transaction the kill rolled
 * back included (it was committed apart from that transaction).
 *
 * The server is started by locklab's own fleet code (a copy of one
 * mariadb-install-db) on a free loopback port and stopped by its PID.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <mysql.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/mysql.h"
#include "algorithms/mysql_wire.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "tests/lib/lock_config.h"

#define CONTENDERS 4
#define CYCLES     40

static struct cluster cluster, own;
static struct lock_config cfg, cfg_token, cfg_reconnect, cfg_idle, own_cfg;
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
    if (c->ops->connect(c) != 0)
        fail_msg("%s connect: %s", algo, c->errstr);
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

/* A plain session, as another application would open one. */
static MYSQL *plain(int port)
{
    MYSQL *m = mysql_init(NULL);
    assert_non_null(m);
    if (!mysql_real_connect(m, "127.0.0.1", "root", NULL, MYSQL_DATABASE, (unsigned)port, NULL, 0))
        fail_msg("plain connect: %s", mysql_error(m));
    return m;
}

/* The first value a plain statement answers ("" for none). */
static void plain_query(MYSQL *m, const char *sql, char *out, size_t len)
{
    if (mysql_query(m, sql) != 0)
        fail_msg("%s: %s", sql, mysql_error(m));
    MYSQL_RES *res = mysql_store_result(m);
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    if (out)
        snprintf(out, len, "%s", row && row[0] ? row[0] : "");
    mysql_free_result(res);
}

/* The session of a locklab client that holds key (mysql-named). */
static void kill_holder_of(int port, const char *key)
{
    char sql[160], id[32];
    MYSQL *m = plain(port);
    snprintf(sql, sizeof(sql), "SELECT IS_USED_LOCK('%s')", key);
    plain_query(m, sql, id, sizeof(id));
    assert_true(id[0] != '\0');
    snprintf(sql, sizeof(sql), "KILL CONNECTION %s", id);
    plain_query(m, sql, NULL, 0);
    mysql_close(m);
    lock_sleep_ms(100); /* the server closes the socket */
}

/* Every session but the asker's that has an open transaction, killed:
 * the mysql-row holder's. */
static void kill_transactions(int port)
{
    char id[32];
    MYSQL *m = plain(port);
    plain_query(m,
                "SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX WHERE "
                "trx_mysql_thread_id <> CONNECTION_ID() LIMIT 1",
                id, sizeof(id));
    assert_true(id[0] != '\0');
    char sql[64];
    snprintf(sql, sizeof(sql), "KILL CONNECTION %s", id);
    plain_query(m, sql, NULL, 0);
    mysql_close(m);
    lock_sleep_ms(100);
}

struct contender {
    const char *algo;
    const char *key;
    atomic_int *inside;
    atomic_int *worst;
    int granted, committed;
};

static void *contend(void *arg)
{
    struct contender *k = arg;
    struct lock_client c;
    struct lock_grant g;
    client_open(&c, k->algo, &cfg, "contender");
    for (int i = 0; i < CYCLES; i++) {
        if (take(&c, k->key, 5000, &g) != LOCK_OK)
            continue;
        k->granted++;
        int now = atomic_fetch_add(k->inside, 1) + 1;
        if (now > atomic_load(k->worst))
            atomic_store(k->worst, now);
        lock_sleep_ms(1);
        atomic_fetch_sub(k->inside, 1);
        k->committed += c.ops->release(&c, &g) == LOCK_OK;
    }
    c.ops->disconnect(&c);
    return NULL;
}

/* CONTENDERS clients on one key: how many holders were ever inside at
 * once, and the grants and commits of all. */
static int contention(const char *algo, const char *key, int *granted, int *committed)
{
    atomic_int inside = 0, worst = 0;
    struct contender k[CONTENDERS];
    pthread_t t[CONTENDERS];
    for (int i = 0; i < CONTENDERS; i++) {
        k[i] = (struct contender){.algo = algo, .key = key, .inside = &inside, .worst = &worst};
        assert_int_equal(pthread_create(&t[i], NULL, contend, &k[i]), 0);
    }
    *granted = *committed = 0;
    for (int i = 0; i < CONTENDERS; i++) {
        pthread_join(t[i], NULL);
        *granted += k[i].granted;
        *committed += k[i].committed;
    }
    return atomic_load(&worst);
}

static void exclusion_holds(const char *algo)
{
    char key[64];
    int granted, committed;
    new_key(key, sizeof(key), algo);
    assert_int_equal(contention(algo, key, &granted, &committed), 1);
    assert_int_equal(granted, CONTENDERS * CYCLES);
    assert_int_equal(committed, granted);
}

static void named_exclusion_under_contention(void **state)
{
    (void)state;
    exclusion_holds("mysql-named");
}

static void row_exclusion_under_contention(void **state)
{
    (void)state;
    exclusion_holds("mysql-row");
}

/* Sections overlap by design; what must hold is that each commit moved
 * the version by one: the row's version is 1 + the commits. */
static void optimistic_commits_one_per_version(void **state)
{
    (void)state;
    char key[64], sql[128], v[32];
    int granted, committed;
    new_key(key, sizeof(key), "optimistic");
    contention("mysql-optimistic", key, &granted, &committed);
    assert_int_equal(granted, CONTENDERS * CYCLES);
    assert_true(committed >= CYCLES && committed <= granted);
    MYSQL *m = plain(cfg.endpoints[0].port);
    snprintf(sql, sizeof(sql), "SELECT version FROM " MYSQL_VERSION_TABLE " WHERE name = '%s'",
             key);
    plain_query(m, sql, v, sizeof(v));
    assert_int_equal(atoi(v), committed + 1);
    mysql_close(m);
}

/* a holds key: b's try is busy at once, and a wait of wait_ms is busy
 * after about that long (GET_LOCK's 0, innodb_lock_wait_timeout's error),
 * not sooner, and is no error. */
static void busy_after_the_wait(const char *algo, uint32_t wait_ms)
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
    assert_int_equal(take(&b, key, wait_ms, &gb), LOCK_BUSY);
    uint64_t waited = lock_now_ms() - t;
    assert_true(waited >= wait_ms - 50 && waited < wait_ms + 1500);
    assert_int_equal(b.err, LOCK_ERR_NONE);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_int_equal(take(&b, key, 0, &gb), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static void named_get_lock_timeout_is_busy(void **state)
{
    (void)state;
    busy_after_the_wait("mysql-named", 300); /* MariaDB takes the fraction */
}

static void row_lock_wait_timeout_is_busy(void **state)
{
    (void)state;
    busy_after_the_wait("mysql-row", 1000); /* whole seconds */
}

static void named_contends_with_a_plain_client(void **state)
{
    (void)state;
    struct lock_client a;
    struct lock_grant ga;
    char key[64], sql[128], got[8];
    new_key(key, sizeof(key), "named");
    client_open(&a, "mysql-named", &cfg, "a");
    MYSQL *m = plain(cfg.endpoints[0].port);
    snprintf(sql, sizeof(sql), "SELECT GET_LOCK('%s', 0)", key);
    plain_query(m, sql, got, sizeof(got));
    assert_string_equal(got, "1");
    assert_int_equal(take(&a, key, 200, &ga), LOCK_BUSY);
    snprintf(sql, sizeof(sql), "SELECT RELEASE_LOCK('%s')", key);
    plain_query(m, sql, got, sizeof(got));
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    snprintf(sql, sizeof(sql), "SELECT GET_LOCK('%s', 0)", key);
    plain_query(m, sql, got, sizeof(got));
    assert_string_equal(got, "0");
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    mysql_close(m);
    a.ops->disconnect(&a);
}

static void named_killed_holder_is_lost_at_release(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant ga, gb;
    char key[64];
    new_key(key, sizeof(key), "named");
    client_open(&a, "mysql-named", &cfg, "a");
    client_open(&b, "mysql-named", &cfg, "b");
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    kill_holder_of(cfg.endpoints[0].port, key);
    assert_int_equal(take(&b, key, 0, &gb), LOCK_OK); /* the session took it along */
    assert_int_equal(a.ops->release(&a, &ga), LOCK_LOST);
    assert_true(a.connect_failures >= 1);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

/* The session a mysql-named client is on now (its impl begins with its
 * wire), as CONNECTION_ID() would answer in it. */
static unsigned long session_of(const struct lock_client *c)
{
    return ((const struct mysql_wire *)c->impl)->session;
}

static void named_reconnect_is_a_new_session_without_the_lock(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant ga, gb;
    char key[64];
    new_key(key, sizeof(key), "named");
    client_open(&a, "mysql-named", &cfg_reconnect, "a");
    client_open(&b, "mysql-named", &cfg, "b");
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    unsigned long first = session_of(&a);
    kill_holder_of(cfg.endpoints[0].port, key);
    assert_int_equal(take(&b, key, 0, &gb), LOCK_OK);
    /* a's release goes to a new session, which holds nothing */
    assert_int_equal(a.ops->release(&a, &ga), LOCK_LOST);
    assert_true(session_of(&a) != first);
    assert_int_equal(((const struct mysql_wire *)a.impl)->reconnects, 1);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static void named_wait_timeout_drops_an_idle_holder(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant ga, gb;
    char key[64];
    new_key(key, sizeof(key), "named");
    client_open(&a, "mysql-named", &cfg_idle, "a");
    client_open(&b, "mysql-named", &cfg, "b");
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    /* wait_timeout 1 s: the server ends a's idle session within ~2 s */
    assert_int_equal(take(&b, key, 4000, &gb), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_LOST);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    /* a session ended while it held nothing costs the next acquire
     * nothing: it is dialled again first */
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    lock_sleep_ms(2500);
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
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

static void named_tokens_grow(void **state)
{
    (void)state;
    tokens_grow("mysql-named");
}

static void row_tokens_grow(void **state)
{
    (void)state;
    tokens_grow("mysql-row");
}

static void row_killed_holder_is_lost_at_commit(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant ga, gb;
    char key[64];
    new_key(key, sizeof(key), "row");
    client_open(&a, "mysql-row", &cfg, "a");
    client_open(&b, "mysql-row", &cfg, "b");
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    kill_transactions(cfg.endpoints[0].port);
    assert_int_equal(take(&b, key, 0, &gb), LOCK_OK); /* rolled back: the row is free */
    assert_int_equal(a.ops->release(&a, &ga), LOCK_LOST);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

/* MYSQL_OPT_RECONNECT's hazard: the COMMIT goes to a new session, which
 * commits nothing and says OK; the holder never learns it lost the row. */
static void row_reconnect_hides_the_lost_lock(void **state)
{
    (void)state;
    struct lock_client a, b;
    struct lock_grant ga, gb;
    char key[64];
    new_key(key, sizeof(key), "row");
    client_open(&a, "mysql-row", &cfg_reconnect, "a");
    client_open(&b, "mysql-row", &cfg, "b");
    assert_int_equal(take(&a, key, 0, &ga), LOCK_OK);
    kill_transactions(cfg.endpoints[0].port);
    assert_int_equal(take(&b, key, 0, &gb), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static int own_stop(void **state)
{
    (void)state;
    cluster_stop(&own, NULL);
    return 0;
}

/* The token counter is on disk, committed apart from the locking
 * transaction: a server killed and restarted with its data goes on past
 * every token it handed out, and the holder of the kill is told its
 * commit did not happen. */
static void row_tokens_survive_a_restart_with_data(void **state)
{
    (void)state;
    char err[256];
    if (cluster_start(&own, "mysql", 1, err, sizeof(err)) < 0)
        fail_msg("cannot start MariaDB: %s", err);
    own_cfg = cfg_token;
    own_cfg.endpoints[0].port = own.srv[0].port;
    struct lock_client a, b;
    struct lock_grant ga, gb;
    client_open(&a, "mysql-row", &own_cfg, "a");
    assert_int_equal(take(&a, "test:row:restart", 0, &ga), LOCK_OK);
    assert_int_equal(a.ops->release(&a, &ga), LOCK_OK);
    assert_int_equal(take(&a, "test:row:restart", 0, &ga), LOCK_OK);
    assert_int_equal(cluster_kill(&own, 0, err, sizeof(err)), 0);
    lock_sleep_ms(100);
    assert_int_not_equal(a.ops->release(&a, &ga), LOCK_OK);
    if (cluster_revive_start(&own, 0, true, err, sizeof(err)) < 0 ||
        cluster_revive_wait(&own, 0, 1, err, sizeof(err)) < 0)
        fail_msg("restart: %s", err);
    client_open(&b, "mysql-row", &own_cfg, "b");
    assert_int_equal(take(&b, "test:row:restart", 0, &gb), LOCK_OK);
    /* the second grant's transaction was rolled back by the kill, but not
     * its token, committed on a connection of its own: the next is larger */
    assert_true(gb.token > ga.token);
    assert_int_equal(b.ops->release(&b, &gb), LOCK_OK);
    a.ops->disconnect(&a);
    b.ops->disconnect(&b);
}

static int setup(void **state)
{
    (void)state;
    char err[256];
    if (cluster_start(&cluster, "mysql", 1, err, sizeof(err)) < 0) {
        fprintf(stderr, "cannot start MariaDB: %s\n", err);
        return -1;
    }
    lock_config_one(&cfg, cluster.srv[0].port);
    cfg_token = cfg;
    cfg_token.want_token = true;
    cfg_reconnect = cfg;
    ((struct mysql_spec *)lock_settings_mut(&cfg_reconnect, &mysql_family))->reconnect = true;
    cfg_idle = cfg;
    ((struct mysql_spec *)lock_settings_mut(&cfg_idle, &mysql_family))->wait_timeout_s = 1;
    signal(SIGPIPE, SIG_IGN); /* as the engine does */
    return 0;
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
        cmocka_unit_test(named_exclusion_under_contention),
        cmocka_unit_test(named_get_lock_timeout_is_busy),
        cmocka_unit_test(named_contends_with_a_plain_client),
        cmocka_unit_test(named_killed_holder_is_lost_at_release),
        cmocka_unit_test(named_reconnect_is_a_new_session_without_the_lock),
        cmocka_unit_test(named_wait_timeout_drops_an_idle_holder),
        cmocka_unit_test(named_tokens_grow),
        cmocka_unit_test(row_exclusion_under_contention),
        cmocka_unit_test(row_lock_wait_timeout_is_busy),
        cmocka_unit_test(row_tokens_grow),
        cmocka_unit_test(row_killed_holder_is_lost_at_commit),
        cmocka_unit_test(row_reconnect_hides_the_lost_lock),
        cmocka_unit_test_teardown(row_tokens_survive_a_restart_with_data, own_stop),
        cmocka_unit_test(optimistic_commits_one_per_version),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
