/* lock_settings.h - a lock test's way into the family settings of its
 * struct lock_config (algorithms/lock_family.h): what the fleet copies
 * from a scenario, a test sets by hand. Header only. */
#ifndef LOCKLAB_TEST_LOCK_SETTINGS_H
#define LOCKLAB_TEST_LOCK_SETTINGS_H

#include "algorithms/etcd.h"
#include "algorithms/lock.h"
#include "algorithms/redis.h"
#include "algorithms/redisson.h"
#include "algorithms/redlock.h"
#include "algorithms/zookeeper_settings.h"

/* The settings of family fam (redlock, zookeeper, ...) in the struct
 * lock_config cfg, as its struct type, to set. */
#define CFG_SETTINGS(cfg, fam, type) ((struct type *)lock_settings_mut(&(cfg), &fam##_family))

#endif
