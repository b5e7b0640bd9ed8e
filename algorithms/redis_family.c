/* redis_family.c - lock.redis (redis.h): the topology of the locks on one
 * Redis master, the redis lock's and the Redisson locks', kept in one file
 * as they share it. */
#include <inttypes.h>
#include <stdio.h>

#include "algorithms/lock.h"
#include "algorithms/redis.h"

_Static_assert(sizeof(struct redis_spec) <= SETTINGS_BYTES_MAX, "fits a settings_store");

/* Sentinels vote on a failover: one, or three for a majority of two. */
static int check_sentinels(const void *settings, char *why, size_t len)
{
    if (((const struct redis_spec *)settings)->sentinels != 2)
        return 0;
    snprintf(why, len, "2 sentinels cannot outvote one that is wrong: 0, 1 or 3");
    return -1;
}

/* Replicas are what a failover promotes and WAIT counts. */
static int redis_after(void *settings, const bool *given, const char **blame, char *why, size_t len)
{
    struct redis_spec *r = settings;
    if (r->sentinels > 0 && !given[0]) /* replicas */
        r->replicas = 1;
    if (r->sentinels > 0 && r->replicas == 0) {
        *blame = "replicas";
        snprintf(why, len, "0 leaves the sentinels nobody to promote (1 or 2)");
        return -1;
    }
    if (r->wait_replicas > r->replicas) {
        *blame = "wait_replicas";
        snprintf(why, len, "%" PRIu32 " is more than the %" PRIu32 " replica%s", r->wait_replicas,
                 r->replicas, r->replicas == 1 ? "" : "s");
        return -1;
    }
    return 0;
}

#define RS(m) offsetof(struct redis_spec, m)
static const struct setting_key redis_keys[] = {
    {.key = "replicas", .type = SETTING_U32, .offset = RS(replicas), .max = 2},
    {.key = "sentinels",
     .type = SETTING_U32,
     .offset = RS(sentinels),
     .max = 3,
     .check = check_sentinels},
    {.key = "wait_replicas", .type = SETTING_U32, .offset = RS(wait_replicas), .max = 2},
    {.key = "wait_timeout_ms",
     .type = SETTING_U32,
     .offset = RS(wait_timeout_ms),
     .min = 1,
     .max = 60000},
};
static const struct setting_table redis_table = {
    redis_keys, sizeof(redis_keys) / sizeof(redis_keys[0]), redis_after};

static void redis_defaults(void *settings)
{
    *(struct redis_spec *)settings = (struct redis_spec){.wait_timeout_ms = 1000};
}

static size_t redis_servers(const void *settings)
{
    return 1 + ((const struct redis_spec *)settings)->replicas; /* the master, then its replicas */
}

/* Shown whenever a topology is asked, whatever lock runs. */
static bool redis_shown(const void *settings, bool own)
{
    const struct redis_spec *r = settings;
    (void)own;
    return r->replicas || r->sentinels;
}

static void redis_describe(const void *settings, char *buf, size_t len)
{
    const struct redis_spec *r = settings;
    snprintf(buf, len,
             "redis: replicas=%" PRIu32 " sentinels=%" PRIu32 " wait_replicas=%" PRIu32
             " wait_timeout=%" PRIu32 "ms",
             r->replicas, r->sentinels, r->wait_replicas, r->wait_timeout_ms);
}

/* The master's replicas, and the sentinels that fail it over. */
static void redis_layout(const void *settings, struct family_layout *out)
{
    const struct redis_spec *r = settings;
    out->followers = r->replicas;
    out->finders = r->sentinels;
}

/* External sentinels name the master, so locklab starts none of its own
 * and no master is named beside them; it starts sentinels only with the
 * masters it manages. */
static int redis_layout_misfit(const void *settings, size_t finders, size_t named,
                               const char *const **blame, char *why, size_t len)
{
    static const char *const of_finders[] = {"servers", "sentinel", NULL};
    static const char *const of_sentinels[] = {"lock", "redis", "sentinels", NULL};
    const struct redis_spec *r = settings;
    if (finders > 0 && (r->sentinels > 0 || r->replicas > 0 || named > 0)) {
        *blame = of_finders;
        snprintf(why, len,
                 "external sentinels (--sentinel, servers.sentinel) name the master: leave out "
                 "lock.redis.replicas, lock.redis.sentinels and servers.redis");
        return -1;
    }
    if (r->sentinels > 0 && named > 0) {
        *blame = of_sentinels;
        snprintf(why, len,
                 "locklab starts the sentinels with the servers it manages; with "
                 "external Redis servers leave them out");
        return -1;
    }
    return 0;
}

const struct lock_family redis_family = {
    .key = "redis",
    .size = sizeof(struct redis_spec),
    .table = &redis_table,
    .defaults = redis_defaults,
    .servers = redis_servers,
    .shown = redis_shown,
    .describe = redis_describe,
    .reported = true,
    .layout = redis_layout,
    .layout_words = "replicas and sentinels are the topology of a lock on one Redis master "
                    "(redis, the Redisson locks)",
    .layout_misfit = redis_layout_misfit,
};
