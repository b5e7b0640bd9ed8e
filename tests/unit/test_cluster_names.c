/* test_cluster_names.c - a managed server's one name (sim/fleet/cluster.h):
 * its kind's node_prefix and its number among the servers of that kind,
 * from 1, as fault targets and reports say it; and its log kept under that
 * name, not under its slot, which counts every kind (a PostgreSQL after
 * three others was postgres-3.log while its faults said pg-1). No server
 * runs: the cluster is filled by hand, the log is a file written here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "tests/lib/scratch.h"

static const struct server_kind *kind(const char *name)
{
    const struct server_kind *k = server_kind_find(name);
    assert_non_null(k);
    return k;
}

/* A Redis master, its replica and a sentinel, then PostgreSQL with its
 * pooler, then a three-node ZooKeeper ensemble: slots 0..7. */
static void fill(struct cluster *c)
{
    static const char *const kinds[] = {"redis",     "redis",     "sentinel",  "postgres",
                                        "pgbouncer", "zookeeper", "zookeeper", "zookeeper"};
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        c->srv[c->n++].kind = kind(kinds[i]);
}

static void each_server_is_named_by_its_kind_and_number(void **state)
{
    (void)state;
    static const char *const want[] = {"redis-1",     "redis-2", "sentinel-1", "pg-1",
                                       "pgbouncer-1", "zk-1",    "zk-2",       "zk-3"};
    struct cluster *c = malloc(sizeof(*c));
    fill(c);
    for (size_t i = 0; i < c->n; i++) {
        char name[64];
        assert_string_equal(cluster_server_name(c, i, name, sizeof(name)), want[i]);
    }
    char name[64];
    assert_string_equal(cluster_node_name(kind("etcd"), 3, name, sizeof(name)), "etcd-3");
    free(c);
}

static void a_kept_log_takes_the_servers_name(void **state)
{
    (void)state;
    char root[] = "/tmp/locklab-names-XXXXXX", dir[500], path[600], logs[500], got[64] = "";
    assert_non_null(mkdtemp(root));
    /* slot 3, the first PostgreSQL: its folder is postgres-3, its log pg-1 */
    snprintf(dir, sizeof(dir), "%s/postgres-3", root);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(path, sizeof(path), "%s/%s", dir, kind("postgres")->log);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("LOG:  database system is ready to accept connections\n", f);
    fclose(f);
    snprintf(logs, sizeof(logs), "%s/servers", root);
    assert_int_equal(mkdir(logs, 0755), 0);
    assert_int_equal(cluster_keep_log(root, kind("postgres"), 3, "pg-1", logs), 0);
    snprintf(path, sizeof(path), "%s/pg-1.log", logs);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(got, sizeof(got), f));
    fclose(f);
    assert_string_equal(got, "LOG:  database system is ready to accept connections\n");
    snprintf(path, sizeof(path), "%s/postgres-3.log", logs);
    struct stat sb;
    assert_int_equal(stat(path, &sb), -1);
    /* a server whose log is not there keeps nothing */
    assert_int_equal(cluster_keep_log(root, kind("redis"), 0, "redis-1", logs), -1);
    scratch_remove("test_cluster_names", root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_server_is_named_by_its_kind_and_number),
        cmocka_unit_test(a_kept_log_takes_the_servers_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
