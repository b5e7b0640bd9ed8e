/* redis_cluster_family.c - lock.redis_cluster (redis_cluster.h): the
 * cluster's masters and their replicas, as the server kind redis-cluster
 * lays them out (sim/fleet/redis_cluster_server.c: 3 to 5 masters alone,
 * or 3 to 5 with a replica each), and WAIT. */
#include <inttypes.h>
#include <stdio.h>

#include "algorithms/redis_cluster.h"

_Static_assert(sizeof(struct redis_cluster_spec) <= SETTINGS_BYTES_MAX, "fits a settings_store");

static int cluster_after(void *settings, const bool *given, const char **blame, char *why,
                         size_t len)
{
    const struct redis_cluster_spec *r = settings;
    (void)given;
    if (r->wait_replicas > r->replicas) {
        *blame = "wait_replicas";
        snprintf(why, len, "%" PRIu32 " is more than the %" PRIu32 " replica%s of each master",
                 r->wait_replicas, r->replicas, r->replicas == 1 ? "" : "s");
        return -1;
    }
    return 0;
}

#define RC(m) offsetof(struct redis_cluster_spec, m)
static const struct setting_key cluster_keys[] = {
    {.key = "masters", .type = SETTING_U32, .offset = RC(masters), .min = 3, .max = 5},
    {.key = "replicas", .type = SETTING_U32, .offset = RC(replicas), .max = 2},
    {.key = "wait_replicas", .type = SETTING_U32, .offset = RC(wait_replicas), .max = 2},
    {.key = "wait_timeout_ms",
     .type = SETTING_U32,
     .offset = RC(wait_timeout_ms),
     .min = 1,
     .max = 60000},
    {.key = "sharded_pubsub", .type = SETTING_BOOL, .offset = RC(sharded_pubsub)},
};
static const struct setting_table cluster_table = {
    cluster_keys, sizeof(cluster_keys) / sizeof(cluster_keys[0]), cluster_after};

static void cluster_defaults(void *settings)
{
    *(struct redis_cluster_spec *)settings = (struct redis_cluster_spec){
        .masters = 3, .replicas = 1, .wait_timeout_ms = 1000, .sharded_pubsub = true};
}

/* The masters first, then a replica of each: the kind's count. */
static size_t cluster_servers(const void *settings)
{
    const struct redis_cluster_spec *r = settings;
    return r->masters * (1 + r->replicas);
}

static size_t cluster_leaders(const void *settings)
{
    return ((const struct redis_cluster_spec *)settings)->masters;
}

static void cluster_describe(const void *settings, char *buf, size_t len)
{
    const struct redis_cluster_spec *r = settings;
    snprintf(buf, len,
             "redis_cluster: masters=%" PRIu32 " replicas=%" PRIu32 " wait_replicas=%" PRIu32
             " wait_timeout=%" PRIu32 "ms",
             r->masters, r->replicas, r->wait_replicas, r->wait_timeout_ms);
}

const struct lock_family redis_cluster_family = {
    .key = "redis_cluster",
    .size = sizeof(struct redis_cluster_spec),
    .table = &cluster_table,
    .defaults = cluster_defaults,
    .servers = cluster_servers,
    .leaders = cluster_leaders,
    .describe = cluster_describe,
    .reported = true,
    .list_servers = "M redis-cluster masters x (1 + R replicas) (lock.redis_cluster, 3 x 1)",
};
