/* redisson_fenced.c - Redisson's RFencedLock: RLock whose every grant
 * also INCRs a counter, redisson_lock_token:{<name>}, and hands its value
 * out as the fencing token (Kleppmann's fix for a holder that outlives
 * its lease: the resource refuses a token lower than one it has seen).
 *
 * The lock hash, its field, the unlock message, the latch and the
 * watchdog are RLock's (redisson_wire.c), so RLock holders and
 * RFencedLock holders of one name exclude each other; only the acquire
 * script differs: it answers {-1, token} when granted and {pttl, -1} when
 * busy, as RedissonFencedLock's does. A re-entry takes a new token too.
 */
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/redis.h"
#include "algorithms/redis_wire.h"
#include "algorithms/redisson_wire.h"

enum { SCRIPT_ACQUIRE, SCRIPT_UNLOCK, SCRIPT_RENEW, N_SCRIPTS };

/* KEYS: name, token counter; ARGV: lease, field. */
static const char acquire_script[] =
    "if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then "
    "  local token = redis.call('incr', KEYS[2]); "
    "  redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "  redis.call('pexpire', KEYS[1], ARGV[1]); return {-1, token} "
    "end "
    "return {redis.call('pttl', KEYS[1]), -1}";

static const char *const script_bodies[N_SCRIPTS] = {
    [SCRIPT_ACQUIRE] = acquire_script,
    [SCRIPT_UNLOCK] = rsn_lock_unlock_script,
    [SCRIPT_RENEW] = rsn_renew_script,
};

static int fenced_connect(struct lock_client *c)
{
    return rsn_open(c, sizeof(struct rsn_client), script_bodies, N_SCRIPTS);
}

/* The script's {a, b}: 1 won with *token = b, 0 busy with *left = a, -1
 * anything else. */
static int read_pair(struct lock_client *c, const redisReply *rep, uint64_t *token, int64_t *left)
{
    if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
        rep->element[0]->type == REDIS_REPLY_INTEGER &&
        rep->element[1]->type == REDIS_REPLY_INTEGER) {
        long long a = rep->element[0]->integer, b = rep->element[1]->integer;
        if (a == -1 && b > 0) {
            *token = (uint64_t)b;
            return 1;
        }
        if (b == -1) {
            *left = a;
            return 0;
        }
    }
    lock_set_error(c,
                   rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "READONLY", 8) == 0
                       ? LOCK_ERR_REFUSED
                       : LOCK_ERR_PROTOCOL,
                   "lock: %s", rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    return -1;
}

/* One try (an rsn_try_fn). */
static int try_lock(struct lock_client *c, const char *key, size_t key_len, uint32_t ttl_ms,
                    uint64_t *token, int64_t *left)
{
    struct rsn_client *r = c->impl;
    char ttl[21], counter[RSN_NAME_MAX];
    size_t counter_len = rsn_prefix_name(counter, "redisson_lock_token", key, key_len);
    if (counter_len == 0) {
        lock_set_error(c, LOCK_ERR_UNSENT, "lock name too long");
        return -1;
    }
    const char *keys[2] = {key, counter};
    size_t klens[2] = {key_len, counter_len};
    const char *args[2] = {ttl, r->field};
    size_t alens[2] = {wire_u64(ttl, ttl_ms), r->field_len};
    redisReply *rep =
        wire_eval(c, &r->wire, &r->wire.scripts[SCRIPT_ACQUIRE], 2, keys, klens, 2, args, alens);
    if (rep == NULL)
        return -1;
    *token = 0;
    int won = read_pair(c, rep, token, left);
    freeReplyObject(rep);
    if (won < 0 && c->err == LOCK_ERR_REFUSED)
        wire_drop(c, &r->wire); /* a demoted master: ask the sentinels again */
    return won;
}

static enum lock_result fenced_acquire(struct lock_client *c, const char *key, size_t key_len,
                                       uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    return rsn_acquire(c, try_lock, rsn_lock_channel, key, key_len, ttl_ms, wait_ms, g);
}

static enum lock_result fenced_release(struct lock_client *c, const struct lock_grant *g)
{
    struct rsn_client *r = c->impl;
    return rsn_lock_release(c, &r->wire.scripts[SCRIPT_UNLOCK], g);
}

static enum lock_result fenced_renew(struct lock_client *c, struct lock_grant *g)
{
    struct rsn_client *r = c->impl;
    return rsn_renew(c, &r->wire.scripts[SCRIPT_RENEW], g);
}

const struct lock_ops redisson_fenced_ops = {
    .name = "redisson-fenced",
    .summary = "Redisson's RFencedLock: RLock plus a fencing token from an INCR per grant",
    .server = "redis",
    .family = &redis_family,
    .defaults = {{"watchdog", "watchdog on (Redisson's lock() default)", "{\"watchdog\": true}"}},
    .gives_token = true,
    .reentrant = true,
    .connect = fenced_connect,
    .disconnect = rsn_close,
    .acquire = fenced_acquire,
    .release = fenced_release,
    .renew = fenced_renew,
    .crash = rsn_close,
};
