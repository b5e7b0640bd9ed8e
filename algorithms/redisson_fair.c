/* redisson_fair.c - Redisson's RFairLock (RedissonFairLock) on the wire:
 * RLock's hash, plus a queue that hands the lock out in request order, so
 * a Java service on RFairLock and locklab wait in one line.
 *
 * Three keys per lock name: the hash (RLock's: field "<client id>:<thread
 * id>" counting re-entries), the list redisson_lock_queue:{<name>} of
 * waiters' fields in arrival order, and the zset
 * redisson_lock_timeout:{<name>} of each waiter's deadline, in the
 * clients' wall-clock milliseconds. Every script first drops the heads
 * whose deadline has passed (a waiter that died stalls the line until
 * then, no longer). The lock goes only to the head, and only when free;
 * the winner lowers everyone's deadline by its own slot. A newcomer is
 * queued with the deadline of the waiter before it (or, first in line,
 * now plus the holder's PTTL) plus its slot, and told how long to wait.
 *
 * The slot is what Redisson calls wait: the acquire's wait_ms, as
 * tryLock(waitTime) passes it, or, for a wait of 0 (tryLock(0)),
 * threadWaitTime: lock.redisson.fair_wait_ms (its family's settings,
 * Redisson's fairLockWaitTimeout). A waiter whose wait runs out leaves
 * the line and lowers the deadlines behind it by its slot
 * (acquireFailed); one stopped by the engine leaves its place behind, as
 * an interrupted Java thread does.
 *
 * Each waiter listens on a channel of its own,
 * redisson_lock__channel:{<name>}:<field>; the unlock publishes to the
 * head's alone. Deadlines are wall-clock times from the clients, so
 * clients whose clocks disagree disagree on who is stale: Redisson's
 * design, kept.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "algorithms/lock.h"
#include "algorithms/redis.h"
#include "algorithms/redis_wire.h"
#include "algorithms/redisson.h"
#include "algorithms/redisson_wire.h"

enum { SCRIPT_ACQUIRE, SCRIPT_FAILED, SCRIPT_UNLOCK, SCRIPT_RENEW, N_SCRIPTS };

/* The purge every script starts with: heads past their deadline (now in
 * ARGV[n]) leave the queue; the deadlines of the others stay. Queue in
 * KEYS[2], deadlines in KEYS[3]. */
#define PURGE_STALE_HEADS(now_arg)                                                                 \
    "while true do "                                                                               \
    "  local head = redis.call('lindex', KEYS[2], 0) "                                             \
    "  if not head then break end "                                                                \
    "  local due = redis.call('zscore', KEYS[3], head) "                                           \
    "  if due == false or tonumber(due) > tonumber(" now_arg ") then break end "                   \
    "  redis.call('zrem', KEYS[3], head); redis.call('lpop', KEYS[2]) "                            \
    "end "

/* KEYS: name, queue, deadlines; ARGV: lease, field, slot, now. nil:
 * ours; else how long to wait (the holder's PTTL, or until the waiter
 * ahead's deadline). */
static const char acquire_script[] = PURGE_STALE_HEADS(
    "ARGV[4]") "if redis.call('exists', KEYS[1]) == 0 and (redis.call('exists', KEYS[2]) == 0 "
               "    or redis.call('lindex', KEYS[2], 0) == ARGV[2]) then "
               "  redis.call('lpop', KEYS[2]); redis.call('zrem', KEYS[3], ARGV[2]) "
               "  for _, w in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do "
               "    redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), w) "
               "  end "
               "  redis.call('hset', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]) "
               "  return nil "
               "end "
               "if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then "
               "  redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], "
               "ARGV[1]) "
               "  return nil "
               "end "
               "if redis.call('zscore', KEYS[3], ARGV[2]) ~= false then "
               "  return math.max(0, redis.call('pttl', KEYS[1])) "
               "end "
               "local last = redis.call('lindex', KEYS[2], -1) "
               "local wait "
               "if last and last ~= ARGV[2] and redis.call('zscore', KEYS[3], last) ~= false then "
               "  wait = tonumber(redis.call('zscore', KEYS[3], last)) - tonumber(ARGV[4]) "
               "else "
               "  wait = redis.call('pttl', KEYS[1]) "
               "end "
               "if redis.call('zadd', KEYS[3], wait + tonumber(ARGV[3]) + tonumber(ARGV[4]), "
               "ARGV[2]) == 1 "
               "then redis.call('rpush', KEYS[2], ARGV[2]) end "
               "return wait";

/* KEYS: queue, deadlines; ARGV: field, slot. Leave the line; those
 * behind move up by our slot. */
static const char failed_script[] =
    "local line = redis.call('lrange', KEYS[1], 0, -1) "
    "local at = #line + 1 "
    "for i = 1, #line do if line[i] == ARGV[1] then at = i; break end end "
    "for i = at + 1, #line do "
    "  redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), line[i]) "
    "end "
    "redis.call('zrem', KEYS[2], ARGV[1]); redis.call('lrem', KEYS[1], 0, ARGV[1])";

/* KEYS: name, queue, deadlines, channel prefix, latch; ARGV: message,
 * lease, field, now, publish command, latch lifetime. As RedissonFairLock
 * has it, a lock already gone answers 1 (unlocked), not nil, and still
 * wakes the head. */
static const char unlock_script[] =
    "local done = redis.call('get', KEYS[5]) "
    "if done ~= false then return tonumber(done) end " PURGE_STALE_HEADS(
        "ARGV[4]") "local function wake() "
                   "  local head = redis.call('lindex', KEYS[2], 0) "
                   "  if head then redis.call(ARGV[5], KEYS[4] .. ':' .. head, ARGV[1]) end "
                   "end "
                   "if redis.call('exists', KEYS[1]) == 0 then "
                   "  wake(); redis.call('set', KEYS[5], 1, 'px', ARGV[6]); return 1 "
                   "end "
                   "if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil end "
                   "if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then "
                   "  redis.call('pexpire', KEYS[1], ARGV[2]); "
                   "  redis.call('set', KEYS[5], 0, 'px', ARGV[6]); return 0 "
                   "end "
                   "redis.call('del', KEYS[1]); redis.call('set', KEYS[5], 1, 'px', ARGV[6]) "
                   "wake() "
                   "return 1";

static const char *const script_bodies[N_SCRIPTS] = {
    [SCRIPT_ACQUIRE] = acquire_script,
    [SCRIPT_FAILED] = failed_script,
    [SCRIPT_UNLOCK] = unlock_script,
    [SCRIPT_RENEW] = rsn_renew_script,
};

/* The keys of one lock name besides the hash. */
struct fair_keys {
    char queue[RSN_NAME_MAX], deadlines[RSN_NAME_MAX];
    size_t queue_len, deadlines_len;
};

struct fair_client {
    struct rsn_client rsn; /* first: rsn_open allocates the whole */
    uint32_t slot_ms;      /* this acquire's slot in the line (Redisson's wait) */
};

static int fair_keys_of(struct lock_client *c, const char *key, size_t key_len, struct fair_keys *k)
{
    k->queue_len = rsn_prefix_name(k->queue, "redisson_lock_queue", key, key_len);
    k->deadlines_len = rsn_prefix_name(k->deadlines, "redisson_lock_timeout", key, key_len);
    if (k->queue_len && k->deadlines_len)
        return 0;
    lock_set_error(c, LOCK_ERR_UNSENT, "lock name too long");
    return -1;
}

/* Deadlines are System.currentTimeMillis(): the wall clock, shared with
 * Java clients, not the monotonic one locklab times with. */
static size_t wall_ms(char *buf)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return wire_u64(buf, (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

static int fair_connect(struct lock_client *c)
{
    return rsn_open(c, sizeof(struct fair_client), script_bodies, N_SCRIPTS);
}

/* The waiter's own channel: "redisson_lock__channel:{<name>}:<field>" (an
 * rsn_channel_fn). */
static size_t fair_channel(struct lock_client *c, const char *key, size_t key_len, char *out)
{
    struct rsn_client *r = c->impl;
    size_t n = rsn_lock_channel(c, key, key_len, out);
    if (n == 0 || n + 1 + r->field_len >= RSN_NAME_MAX)
        return 0;
    out[n] = ':';
    memcpy(out + n + 1, r->field, r->field_len);
    out[n + 1 + r->field_len] = '\0';
    return n + 1 + r->field_len;
}

/* How long a queued waiter waits when told 0: the lock is free but the
 * head is someone else, who may be dead. Only the head's deadline ends
 * that, and no message comes: Redisson asks again at once, a loop of
 * scripts as fast as the server answers; here a back-off of the
 * scenario's retry_min_ms..retry_max_ms between asks. */
static int64_t free_but_not_ours_ms(struct lock_client *c)
{
    uint32_t lo = c->cfg->retry_min_ms ? c->cfg->retry_min_ms : 1;
    uint32_t hi = c->cfg->retry_max_ms > lo ? c->cfg->retry_max_ms : lo;
    return (int64_t)(lo + lock_random(c, (uint64_t)(hi - lo) + 1));
}

/* One try (an rsn_try_fn). */
static int try_lock(struct lock_client *c, const char *key, size_t key_len, uint32_t ttl_ms,
                    uint64_t *token, int64_t *left)
{
    struct fair_client *f = c->impl;
    struct fair_keys k;
    if (fair_keys_of(c, key, key_len, &k) < 0)
        return -1;
    char ttl[21], slot[21], now[21];
    const char *keys[3] = {key, k.queue, k.deadlines};
    size_t klens[3] = {key_len, k.queue_len, k.deadlines_len};
    const char *args[4] = {ttl, f->rsn.field, slot, now};
    size_t alens[4] = {wire_u64(ttl, ttl_ms), f->rsn.field_len, wire_u64(slot, f->slot_ms),
                       wall_ms(now)};
    redisReply *rep = wire_eval(c, &f->rsn.wire, &f->rsn.wire.scripts[SCRIPT_ACQUIRE], 3, keys,
                                klens, 4, args, alens);
    if (rep == NULL)
        return -1;
    int won = -1;
    *token = 0;
    if (rep->type == REDIS_REPLY_NIL)
        won = 1;
    else if (rep->type == REDIS_REPLY_INTEGER)
        won = 0, *left = rep->integer > 0 ? rep->integer : free_but_not_ours_ms(c);
    else
        lock_set_error(c,
                       rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "READONLY", 8) == 0
                           ? LOCK_ERR_REFUSED
                           : LOCK_ERR_PROTOCOL,
                       "lock: %s", rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    if (won < 0 && c->err == LOCK_ERR_REFUSED)
        wire_drop(c, &f->rsn.wire); /* a demoted master: ask the sentinels again */
    freeReplyObject(rep);
    return won;
}

/* acquireFailed: leave the line. The outcome of the acquire stays what
 * c->err says; this one's is not reported (Redisson logs it at most). */
static void leave_line(struct lock_client *c, const char *key, size_t key_len)
{
    struct fair_client *f = c->impl;
    int err = c->err;
    char errstr[LOCK_ERRSTR_MAX];
    memcpy(errstr, c->errstr, sizeof(errstr));
    struct fair_keys k;
    if (fair_keys_of(c, key, key_len, &k) == 0) {
        char slot[21];
        const char *keys[2] = {k.queue, k.deadlines};
        size_t klens[2] = {k.queue_len, k.deadlines_len};
        const char *args[2] = {f->rsn.field, slot};
        size_t alens[2] = {f->rsn.field_len, wire_u64(slot, f->slot_ms)};
        redisReply *rep = wire_eval(c, &f->rsn.wire, &f->rsn.wire.scripts[SCRIPT_FAILED], 2, keys,
                                    klens, 2, args, alens);
        if (rep)
            freeReplyObject(rep);
    }
    c->err = err;
    memcpy(c->errstr, errstr, sizeof(errstr));
}

static enum lock_result fair_acquire(struct lock_client *c, const char *key, size_t key_len,
                                     uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct fair_client *f = c->impl;
    f->slot_ms =
        wait_ms
            ? wait_ms
            : ((const struct redisson_spec *)lock_settings(c->cfg, &redisson_family))->fair_wait_ms;
    enum lock_result res = rsn_acquire(c, try_lock, fair_channel, key, key_len, ttl_ms, wait_ms, g);
    /* Redisson leaves the line when the wait ran out or the subscription
     * failed, not when the thread was interrupted. A broken command
     * connection is left alone: the script would only redial a server
     * that just failed, and the deadline frees the place anyway. */
    bool wire_up = f->rsn.wire.ctx != NULL && f->rsn.wire.ctx->err == 0;
    if ((res == LOCK_BUSY && !lock_cancelled(c)) || (res == LOCK_ERR && wire_up))
        leave_line(c, key, key_len);
    return res;
}

static enum lock_result fair_release(struct lock_client *c, const struct lock_grant *g)
{
    struct rsn_client *r = c->impl;
    struct fair_keys k;
    char channel[RSN_NAME_MAX], scratch[2][21], now[21];
    if (fair_keys_of(c, g->key, g->key_len, &k) < 0)
        return LOCK_ERR;
    size_t ch_len = rsn_lock_channel(c, g->key, g->key_len, channel);
    size_t latch_len = rsn_new_latch(c, g->key, g->key_len);
    if (ch_len == 0 || latch_len == 0) {
        lock_set_error(c, LOCK_ERR_UNSENT, "lock name too long");
        return LOCK_ERR;
    }
    const char *keys[5] = {g->key, k.queue, k.deadlines, channel, r->latch};
    size_t klens[5] = {g->key_len, k.queue_len, k.deadlines_len, ch_len, latch_len};
    /* RLock's args (message, lease, field, publish, latch lifetime) with
     * the wall clock put fourth, where the fair script reads it. */
    const char *rl[5], *args[6];
    size_t rl_lens[5], alens[6];
    rsn_unlock_args(c, g->ttl_ms, RSN_UNLOCK_MESSAGE, rl, rl_lens, scratch);
    for (int i = 0, j = 0; i < 6; i++) {
        if (i == 3) {
            args[i] = now, alens[i] = wall_ms(now);
            continue;
        }
        args[i] = rl[j], alens[i] = rl_lens[j], j++;
    }
    int res = rsn_unlock_eval(c, &r->wire.scripts[SCRIPT_UNLOCK], 5, keys, klens, 6, args, alens);
    return res >= 0 ? LOCK_OK : res == -2 ? LOCK_LOST : LOCK_ERR;
}

static enum lock_result fair_renew(struct lock_client *c, struct lock_grant *g)
{
    struct rsn_client *r = c->impl;
    return rsn_renew(c, &r->wire.scripts[SCRIPT_RENEW], g);
}

/* ---- lock.redisson: RFairLock's client settings ---------------------- */

_Static_assert(sizeof(struct redisson_spec) <= SETTINGS_BYTES_MAX, "fits a settings_store");

/* Redisson's fairLockWaitTimeout, up to an hour. */
static const struct setting_key redisson_keys[] = {
    {.key = "fair_wait_ms",
     .type = SETTING_U32,
     .offset = offsetof(struct redisson_spec, fair_wait_ms),
     .min = 1,
     .max = 3600000},
};
static const struct setting_table redisson_table = {redisson_keys, 1, NULL};

static void redisson_defaults(void *settings)
{
    *(struct redisson_spec *)settings = (struct redisson_spec){.fair_wait_ms = 300000};
}

static void redisson_describe(const void *settings, char *buf, size_t len)
{
    snprintf(buf, len, "redisson: fair_wait=%" PRIu32 "ms (the place in line of a wait of 0)",
             ((const struct redisson_spec *)settings)->fair_wait_ms);
}

const struct lock_family redisson_family = {
    .key = "redisson",
    .size = sizeof(struct redisson_spec),
    .table = &redisson_table,
    .base = &redis_family, /* on one Redis master, as the other Redisson locks */
    .defaults = redisson_defaults,
    .describe = redisson_describe,
};

const struct lock_ops redisson_fair_ops = {
    .name = "redisson-fair",
    .summary = "Redisson's RFairLock: RLock granted in request order through a queue of "
               "waiters with deadlines, each woken on its own channel",
    .server = "redis",
    .family = &redisson_family,
    .defaults = {{"watchdog", "watchdog on (Redisson's lock() default)", "{\"watchdog\": true}"}},
    .reentrant = true,
    .connect = fair_connect,
    .disconnect = rsn_close,
    .acquire = fair_acquire,
    .release = fair_release,
    .renew = fair_renew,
    .crash = rsn_close, /* the sockets just close; its place in the line stays */
};
