/* postgres_family.c - lock.postgres (postgres.h): what stands between the
 * PostgreSQL locks and their server, kept in one file as the three share
 * it. */
#include <stdio.h>

#include "algorithms/lock.h"
#include "algorithms/postgres.h"

_Static_assert(sizeof(struct postgres_spec) <= SETTINGS_BYTES_MAX, "fits a settings_store");

/* pgbouncer in front of the managed PostgreSQL, in its pool_mode */
static const char *const pooler_names[] = {"none", "transaction", "session"};

static const struct setting_key postgres_keys[] = {
    {.key = "pooler",
     .type = SETTING_CHOICE,
     .offset = offsetof(struct postgres_spec, pooler),
     .names = pooler_names,
     .n_names = sizeof(pooler_names) / sizeof(pooler_names[0]),
     .noun = "pooler"},
};
static const struct setting_table postgres_table = {postgres_keys, 1, NULL};

/* Shown whenever a pooler is asked, whatever lock runs. */
static bool postgres_shown(const void *settings, bool own)
{
    (void)own;
    return ((const struct postgres_spec *)settings)->pooler != POOLER_NONE;
}

static void postgres_describe(const void *settings, char *buf, size_t len)
{
    uint32_t pooler = ((const struct postgres_spec *)settings)->pooler;
    snprintf(buf, len, "postgres: pooler=pgbouncer, pool_mode=%s", pooler_names[pooler]);
}

/* pgbouncer in front, in its pool_mode */
static void postgres_layout(const void *settings, struct family_layout *out)
{
    uint32_t pooler = ((const struct postgres_spec *)settings)->pooler;
    if (pooler != POOLER_NONE)
        out->pool_mode = pooler_names[pooler];
}

const struct lock_family postgres_family = {
    .key = "postgres",
    .size = sizeof(struct postgres_spec),
    .table = &postgres_table,
    .shown = postgres_shown,
    .describe = postgres_describe,
    .reported = true,
    .layout = postgres_layout,
    /* a PostgreSQL lock may reach its server through pgbouncer */
    .list_servers = "1 postgres (lock.postgres.pooler)",
};
