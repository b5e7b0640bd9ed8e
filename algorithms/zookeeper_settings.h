/* zookeeper_settings.h - lock.zookeeper, the settings of the ZooKeeper
 * lock (zookeeper.c's family). */
#ifndef LOCKLAB_ZOOKEEPER_SETTINGS_H
#define LOCKLAB_ZOOKEEPER_SETTINGS_H

#include <stdint.h>

#include "algorithms/lock_family.h"

struct zookeeper_spec {
    uint32_t ensemble;           /* managed servers: 1 (standalone) or 3 */
    uint32_t session_timeout_ms; /* plays the ttl; 0 in the file = ttl_ms, clamped */
};

extern const struct lock_family zookeeper_family;

#endif
