/* postgres.h - lock.postgres, what stands between the PostgreSQL locks and
 * the server; the family is postgres_family.c's. */
#ifndef LOCKLAB_POSTGRES_H
#define LOCKLAB_POSTGRES_H

#include <stdint.h>

#include "algorithms/lock_family.h"

enum postgres_pooler { POOLER_NONE = 0, POOLER_TRANSACTION, POOLER_SESSION };
struct postgres_spec {
    uint32_t pooler; /* enum postgres_pooler: with one, the fleet starts pgbouncer in front */
};

extern const struct lock_family postgres_family;

#endif
