/* redisson.c - Redisson's RLock (RedissonLock), on the wire as Redisson
 * speaks it, so a Java service on Redisson and locklab contend on one
 * lock.
 *
 * The lock is a hash named as the lock, one field per holding thread,
 * "<client id>:<thread id>", whose value counts its re-entries. acquire
 * runs Redisson's script: a free hash, or one with our field, gets the
 * field incremented and the lease set, and answers nil; otherwise it
 * answers the hash's PTTL, and the waiter listens on
 * redisson_lock__channel:{<name>} for the unlock message, at most that
 * long, instead of polling (redisson_wire.c). release decrements; at
 * zero the hash goes and 0 is published to the waiters; a latch key makes
 * a retried unlock answer as the first did. renew is the watchdog's
 * script: PEXPIRE only while our field is there, so a renewal that comes
 * after the lock was lost cannot bring it back. With wait_replicas the
 * acquire is followed by WAIT (checkLockSyncedSlaves). Behind sentinels
 * the master is asked of them, as Redisson's sentinel mode does.
 */
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/redis.h"
#include "algorithms/redis_wire.h"
#include "algorithms/redisson_wire.h"

/* RLock's acquire first: rsn_lock_try runs scripts[0]. */
enum { SCRIPT_ACQUIRE, SCRIPT_UNLOCK, SCRIPT_RENEW, N_SCRIPTS };

static const char *const script_bodies[N_SCRIPTS] = {
    [SCRIPT_ACQUIRE] = rsn_lock_acquire_script,
    [SCRIPT_UNLOCK] = rsn_lock_unlock_script,
    [SCRIPT_RENEW] = rsn_renew_script,
};

static int redisson_connect(struct lock_client *c)
{
    return rsn_open(c, sizeof(struct rsn_client), script_bodies, N_SCRIPTS);
}

static enum lock_result redisson_acquire(struct lock_client *c, const char *key, size_t key_len,
                                         uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    return rsn_acquire(c, rsn_lock_try, rsn_lock_channel, key, key_len, ttl_ms, wait_ms, g);
}

static enum lock_result redisson_release(struct lock_client *c, const struct lock_grant *g)
{
    struct rsn_client *r = c->impl;
    return rsn_lock_release(c, &r->wire.scripts[SCRIPT_UNLOCK], g);
}

static enum lock_result redisson_renew(struct lock_client *c, struct lock_grant *g)
{
    struct rsn_client *r = c->impl;
    return rsn_renew(c, &r->wire.scripts[SCRIPT_RENEW], g);
}

const struct lock_ops redisson_ops = {
    .name = "redisson",
    .summary = "Redisson's RLock: reentrant hash, unlock published to waiters, watchdog, "
               "optional WAIT for replicas",
    .server = "redis",
    .family = &redis_family,
    .defaults = {{"watchdog", "watchdog on (Redisson's lock() default)", "{\"watchdog\": true}"}},
    .reentrant = true,
    .connect = redisson_connect,
    .disconnect = rsn_close,
    .acquire = redisson_acquire,
    .release = redisson_release,
    .renew = redisson_renew,
    .crash = rsn_close, /* the sockets just close: nothing is released */
};
