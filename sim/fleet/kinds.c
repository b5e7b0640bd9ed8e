/* kinds.c - the one list of server kinds. A kind's index here is its
 * place in a scenario's external server lists: append, never reorder. */
#include <stdio.h>
#include <string.h>

#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"

extern const struct server_kind server_redis, server_zookeeper, server_sentinel, server_etcd;
extern const struct server_kind server_postgres, server_pgbouncer, server_redis_cluster;
extern const struct server_kind server_mysql;

static const struct server_kind *const kinds[] = {
    &server_redis,    &server_zookeeper, &server_sentinel,      &server_etcd,
    &server_postgres, &server_pgbouncer, &server_redis_cluster, &server_mysql};

#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

size_t server_kind_count(void)
{
    return N_KINDS;
}

const struct server_kind *server_kind_at(size_t i)
{
    return i < N_KINDS ? kinds[i] : NULL;
}

int server_kind_index(const char *name)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (strcmp(kinds[i]->name, name) == 0)
            return (int)i;
    return -1;
}

const struct server_kind *server_kind_find(const char *name)
{
    int i = server_kind_index(name);
    return i < 0 ? NULL : kinds[i];
}

int cluster_start(struct cluster *c, const char *kind, size_t count, char *err, size_t errlen)
{
    const struct server_kind *k = server_kind_find(kind);
    if (k == NULL || k->start == NULL) {
        snprintf(err, errlen, "locklab starts no %s servers on their own", kind);
        return -1;
    }
    return k->start(c, count, err, errlen);
}
