/* mysql.h - lock.mysql, the session settings the MySQL locks share; the
 * family is mysql_family.c's. */
#ifndef LOCKLAB_MYSQL_H
#define LOCKLAB_MYSQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock_family.h"

struct mysql_spec {
    /* seconds an idle session lives (the session's wait_timeout, set after
     * connect); 0: the server's own (28800 unless configured) */
    uint32_t wait_timeout_s;
    /* a session found ended is replaced silently, as MYSQL_OPT_RECONNECT
     * does: the locks it held are gone without the holder being told */
    bool reconnect;
};

extern const struct lock_family mysql_family;

/* GET_LOCK's timeout for a wait of wait_ms, in seconds with milliseconds
 * ("1.500"), into buf; innodb_lock_wait_timeout's, whole seconds rounded
 * up (0 for no wait: NOWAIT instead). */
void mysql_get_lock_timeout(uint32_t wait_ms, char *buf, size_t len);
uint32_t mysql_row_wait_s(uint32_t wait_ms);

#endif
