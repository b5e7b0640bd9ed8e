/* mysql_family.c - lock.mysql (mysql.h): the session settings the three
 * MySQL locks share, and how each maps the engine's wait onto the
 * server's timeouts, kept in one file as the three share them. */
#include <inttypes.h>
#include <stdio.h>

#include "algorithms/lock.h"
#include "algorithms/mysql.h"

_Static_assert(sizeof(struct mysql_spec) <= SETTINGS_BYTES_MAX, "fits a settings_store");

/* wait_timeout's range on Linux (MariaDB and MySQL alike: a year) */
#define WAIT_TIMEOUT_MAX_S 31536000
#define MS_PER_S           1000u

static const struct setting_key mysql_keys[] = {
    {.key = "reconnect", .type = SETTING_BOOL, .offset = offsetof(struct mysql_spec, reconnect)},
    {.key = "wait_timeout_s",
     .type = SETTING_U32,
     .offset = offsetof(struct mysql_spec, wait_timeout_s),
     .min = 0,
     .max = WAIT_TIMEOUT_MAX_S},
};
static const struct setting_table mysql_table = {mysql_keys, 2, NULL};

void mysql_get_lock_timeout(uint32_t wait_ms, char *buf, size_t len)
{
    /* MariaDB reads GET_LOCK's timeout as a real number, so the wait is
     * kept to the millisecond; MySQL reads an integer (a fraction rounds) */
    snprintf(buf, len, "%" PRIu32 ".%03" PRIu32, wait_ms / MS_PER_S, wait_ms % MS_PER_S);
}

uint32_t mysql_row_wait_s(uint32_t wait_ms)
{
    /* innodb_lock_wait_timeout takes whole seconds: rounded up, so that no
     * wait is cut short of what the engine allowed */
    return (wait_ms + MS_PER_S - 1) / MS_PER_S;
}

/* The waits as the server sees them, said once for the run (show, the
 * header's notes). */
static void mysql_resolve(void *settings, const struct family_scene *sc)
{
    char get_lock[24];
    (void)settings;
    mysql_get_lock_timeout(sc->wait_ms, get_lock, sizeof(get_lock));
    family_note(sc,
                "lock.mysql waits: GET_LOCK(name, %s) = wait_ms in seconds; "
                "innodb_lock_wait_timeout %" PRIu32 " = wait_ms rounded up to whole seconds",
                get_lock, mysql_row_wait_s(sc->wait_ms));
}

/* Shown whenever the session's defaults are changed, whatever lock runs. */
static bool mysql_shown(const void *settings, bool own)
{
    const struct mysql_spec *m = settings;
    return own || m->reconnect || m->wait_timeout_s;
}

static void mysql_describe(const void *settings, char *buf, size_t len)
{
    const struct mysql_spec *m = settings;
    char timeout[24] = "server's";
    if (m->wait_timeout_s)
        snprintf(timeout, sizeof(timeout), "%" PRIu32 "s", m->wait_timeout_s);
    snprintf(buf, len, "mysql: reconnect=%s wait_timeout=%s", m->reconnect ? "on" : "off", timeout);
}

const struct lock_family mysql_family = {
    .key = "mysql",
    .size = sizeof(struct mysql_spec),
    .table = &mysql_table,
    .resolve = mysql_resolve,
    .shown = mysql_shown,
    .describe = mysql_describe,
    .reported = true,
};
