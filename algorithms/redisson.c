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
#include "algorithms/redis_wire.h"
#include "algorithms/redisson_wire.h"

enum { SCRIPT_ACQUIRE, SCRIPT_UNLOCK, SCRIPT_RENEW, N_SCRIPTS };

/* KEYS: name; ARGV: lease, field. */
static const char acquire_script[] =
    "if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then "
    "  redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "  redis.call('pexpire', KEYS[1], ARGV[1]); return nil "
    "end "
    "return redis.call('pttl', KEYS[1])";

static const char *const script_bodies[N_SCRIPTS] = {
    [SCRIPT_ACQUIRE] = acquire_script,
    [SCRIPT_UNLOCK] = rsn_lock_unlock_script,
    [SCRIPT_RENEW] = rsn_renew_script,
};

static int redisson_connect(struct lock_client *c)
{
    return rsn_open(c, sizeof(struct rsn_client), script_bodies, N_SCRIPTS);
}

/* One try (an rsn_try_fn). */
static int try_lock(struct lock_client *c, const char *key, size_t key_len, uint32_t ttl_ms,
                    uint64_t *token, int64_t *left)
{
    struct rsn_client *r = c->impl;
    char ttl[21];
    const char *keys[1] = {key};
    size_t klens[1] = {key_len};
    const char *args[2] = {ttl, r->field};
    size_t alens[2] = {wire_u64(ttl, ttl_ms), r->field_len};
    redisReply *rep =
        wire_eval(c, &r->wire, &r->wire.scripts[SCRIPT_ACQUIRE], 1, keys, klens, 2, args, alens);
    if (rep == NULL)
        return -1;
    int won = -1;
    *token = 0;
    if (rep->type == REDIS_REPLY_NIL)
        won = 1;
    else if (rep->type == REDIS_REPLY_INTEGER)
        won = 0, *left = rep->integer;
    else
        lock_set_error(c,
                       rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "READONLY", 8) == 0
                           ? LOCK_ERR_REFUSED
                           : LOCK_ERR_PROTOCOL,
                       "lock: %s", rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    if (won < 0 && c->err == LOCK_ERR_REFUSED)
        wire_drop(c, &r->wire); /* a demoted master: ask the sentinels again */
    freeReplyObject(rep);
    return won;
}

static enum lock_result redisson_acquire(struct lock_client *c, const char *key, size_t key_len,
                                         uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    return rsn_acquire(c, try_lock, rsn_lock_channel, key, key_len, ttl_ms, wait_ms, g);
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
    .reentrant = true,
    .follows_sentinels = true,
    .connect = redisson_connect,
    .disconnect = rsn_close,
    .acquire = redisson_acquire,
    .release = redisson_release,
    .renew = redisson_renew,
    .crash = rsn_close, /* the sockets just close: nothing is released */
};
