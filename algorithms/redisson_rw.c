/* redisson_rw.c - Redisson's RReadWriteLock on the wire: a shared grant
 * is its read lock (RedissonReadLock), an exclusive one its write lock
 * (RedissonWriteLock).
 *
 * One hash per lock, named as the lock, with a field "mode" = read |
 * write. A reader's field is "<client id>:<thread id>" counting its
 * holds, and each hold has a key of its own,
 * "{<name>}:<field>:rwlock_timeout:<n>", whose ttl is that hold's lease:
 * the hash lives as long as the longest of them. A writer's field is
 * "<field>:write"; a writer may take read holds too (never the other way
 * round), and its unlock leaves the hash in read mode when such holds
 * remain. Waiters of both kinds listen on redisson_rwlock:{<name>}: a
 * read unlock publishes 0, a write unlock 1, and any message wakes them.
 * The watchdog renews a reader's hold keys and the hash while its field
 * is there (ReadLockTask), a writer's hash as RLock's does.
 *
 * Redisson's shape, kept here on purpose: a reader that dies leaves its
 * field in the hash, and while other readers keep renewing the hash a
 * writer waits behind a reader that is gone.
 */
#include <stdio.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/redis.h"
#include "algorithms/redis_wire.h"
#include "algorithms/redisson_wire.h"

enum {
    SCRIPT_READ,
    SCRIPT_WRITE,
    SCRIPT_READ_UNLOCK,
    SCRIPT_WRITE_UNLOCK,
    SCRIPT_READ_RENEW,
    SCRIPT_WRITE_RENEW,
    N_SCRIPTS
};

struct rw_client {
    struct rsn_client base; /* first: rsn_open allocates the whole */
    uint8_t mode;           /* of the acquire under way (rsn_try_fn has no grant) */
};

/* KEYS: name, hold-key prefix; ARGV: lease, field, write field. */
static const char read_script[] =
    "local mode = redis.call('hget', KEYS[1], 'mode') "
    "if mode == false then "
    "  redis.call('hset', KEYS[1], 'mode', 'read'); redis.call('hset', KEYS[1], ARGV[2], 1); "
    "  redis.call('set', KEYS[2] .. ':1', 1); redis.call('pexpire', KEYS[2] .. ':1', ARGV[1]); "
    "  redis.call('pexpire', KEYS[1], ARGV[1]); return nil "
    "end "
    "if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then "
    "  local n = redis.call('hincrby', KEYS[1], ARGV[2], 1) "
    "  local hold = KEYS[2] .. ':' .. n "
    "  redis.call('set', hold, 1); redis.call('pexpire', hold, ARGV[1]) "
    "  local left = redis.call('pttl', KEYS[1]) "
    "  redis.call('pexpire', KEYS[1], math.max(left, ARGV[1])); return nil "
    "end "
    "return redis.call('pttl', KEYS[1])";

/* KEYS: name; ARGV: lease, write field. */
static const char write_script[] =
    "local mode = redis.call('hget', KEYS[1], 'mode') "
    "if mode == false then "
    "  redis.call('hset', KEYS[1], 'mode', 'write'); redis.call('hset', KEYS[1], ARGV[2], 1); "
    "  redis.call('pexpire', KEYS[1], ARGV[1]); return nil "
    "end "
    "if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then "
    "  redis.call('hincrby', KEYS[1], ARGV[2], 1) "
    "  redis.call('pexpire', KEYS[1], redis.call('pttl', KEYS[1]) + ARGV[1]); return nil "
    "end "
    "return redis.call('pttl', KEYS[1])";

/* KEYS: name, channel, hold-key prefix, key prefix, latch; ARGV: message,
 * field, publish command, latch lifetime. The hash's ttl becomes the
 * longest left of the remaining holds. */
static const char read_unlock_script[] =
    "local done = redis.call('get', KEYS[5]) "
    "if done ~= false then return tonumber(done) end "
    "local mode = redis.call('hget', KEYS[1], 'mode') "
    "if mode == false then "
    "  redis.call(ARGV[3], KEYS[2], ARGV[1]); redis.call('set', KEYS[5], 1, 'px', ARGV[4]); "
    "  return nil "
    "end "
    "if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then return nil end "
    "local n = redis.call('hincrby', KEYS[1], ARGV[2], -1) "
    "if n == 0 then redis.call('hdel', KEYS[1], ARGV[2]) end "
    "redis.call('del', KEYS[3] .. ':' .. (n + 1)) "
    "if redis.call('hlen', KEYS[1]) > 1 then "
    "  local most = -3 "
    "  for _, f in ipairs(redis.call('hkeys', KEYS[1])) do "
    "    local holds = tonumber(redis.call('hget', KEYS[1], f)) "
    "    if type(holds) == 'number' then "
    "      for i = holds, 1, -1 do "
    "        most = math.max(most, redis.call('pttl', KEYS[4] .. ':' .. f .. ':rwlock_timeout:' .. "
    "i)) "
    "      end "
    "    end "
    "  end "
    "  if most > 0 then "
    "    redis.call('pexpire', KEYS[1], most); redis.call('set', KEYS[5], 0, 'px', ARGV[4]); "
    "    return 0 "
    "  end "
    "  if mode == 'write' then redis.call('set', KEYS[5], 0, 'px', ARGV[4]); return 0 end "
    "end "
    "redis.call('del', KEYS[1]); redis.call(ARGV[3], KEYS[2], ARGV[1]); "
    "redis.call('set', KEYS[5], 1, 'px', ARGV[4]); return 1";

/* KEYS: name, channel, latch; ARGV: message, lease, write field, publish
 * command, latch lifetime. */
static const char write_unlock_script[] =
    "local done = redis.call('get', KEYS[3]) "
    "if done ~= false then return tonumber(done) end "
    "local mode = redis.call('hget', KEYS[1], 'mode') "
    "if mode == false then "
    "  redis.call(ARGV[4], KEYS[2], ARGV[1]); redis.call('set', KEYS[3], 1, 'px', ARGV[5]); "
    "  return nil "
    "end "
    "if mode ~= 'write' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil end "
    "if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then "
    "  redis.call('pexpire', KEYS[1], ARGV[2]); redis.call('set', KEYS[3], 0, 'px', ARGV[5]); "
    "  return 0 "
    "end "
    "redis.call('hdel', KEYS[1], ARGV[3]) "
    "if redis.call('hlen', KEYS[1]) == 1 then "
    "  redis.call('del', KEYS[1]); redis.call(ARGV[4], KEYS[2], ARGV[1]) "
    "else redis.call('hset', KEYS[1], 'mode', 'read') end "
    "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); return 1";

/* ReadLockTask's: KEYS pairs of name and key prefix; ARGV: lease, then per
 * pair a count of fields and the fields. A pair whose fields are all gone
 * is left to expire. */
static const char read_renew_script[] =
    "local result = {} local at = 2 "
    "for i = 1, #KEYS, 2 do "
    "  local alive = false local count = tonumber(ARGV[at]) at = at + 1 "
    "  for k = 1, count do "
    "    local holds = redis.call('hget', KEYS[i], ARGV[at]) "
    "    if holds ~= false then "
    "      alive = true "
    "      for h = holds, 1, -1 do "
    "        redis.call('pexpire', KEYS[i + 1] .. ':' .. ARGV[at] .. ':rwlock_timeout:' .. h, "
    "ARGV[1]) "
    "      end "
    "    end "
    "    at = at + 1 "
    "  end "
    "  if alive then redis.call('pexpire', KEYS[i], ARGV[1]); table.insert(result, 1) "
    "  else table.insert(result, 0) end "
    "end "
    "return result";

static const char *const script_bodies[N_SCRIPTS] = {
    [SCRIPT_READ] = read_script,
    [SCRIPT_WRITE] = write_script,
    [SCRIPT_READ_UNLOCK] = read_unlock_script,
    [SCRIPT_WRITE_UNLOCK] = write_unlock_script,
    [SCRIPT_READ_RENEW] = read_renew_script,
    [SCRIPT_WRITE_RENEW] = rsn_renew_script,
};

static int rw_connect(struct lock_client *c)
{
    return rsn_open(c, sizeof(struct rw_client), script_bodies, N_SCRIPTS);
}

/* RedissonObject.suffixName's "{<name>}:<field>" (or "<name>:<field>"
 * for a tagged name), then what follows it; 0 when it does not fit. */
static size_t hold_name(char *out, const char *key, size_t key_len, const char *field,
                        const char *tail)
{
    bool tagged = memchr(key, '{', key_len) != NULL;
    int n = snprintf(out, RSN_NAME_MAX, tagged ? "%.*s%s%s%s" : "{%.*s}%s%s%s", (int)key_len, key,
                     field ? ":" : "", field ? field : "", tail);
    return n > 0 && n < RSN_NAME_MAX ? (size_t)n : 0;
}

/* The answer of a lock script: nil won, an integer the holder's PTTL. */
static int read_try_answer(struct lock_client *c, redisReply *rep, int64_t *left)
{
    int won = -1;
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
    freeReplyObject(rep);
    return won;
}

/* One try in the mode asked (an rsn_try_fn). */
static int try_lock(struct lock_client *c, const char *key, size_t key_len, uint32_t ttl_ms,
                    uint64_t *token, int64_t *left)
{
    struct rw_client *rw = c->impl;
    struct rsn_client *r = &rw->base;
    char ttl[21];
    size_t ttl_len = wire_u64(ttl, ttl_ms);
    redisReply *rep;
    *token = 0;
    if (rw->mode == LOCK_MODE_SHARED) {
        char prefix[RSN_NAME_MAX];
        size_t pl = hold_name(prefix, key, key_len, r->field, ":rwlock_timeout");
        if (pl == 0) {
            lock_set_error(c, LOCK_ERR_UNSENT, "lock name too long");
            return -1;
        }
        const char *keys[2] = {key, prefix};
        size_t klens[2] = {key_len, pl};
        const char *args[3] = {ttl, r->field, rw->base.write_field};
        size_t alens[3] = {ttl_len, r->field_len, rw->base.write_field_len};
        rep = wire_eval(c, &r->wire, &r->wire.scripts[SCRIPT_READ], 2, keys, klens, 3, args, alens);
    } else {
        const char *keys[1] = {key};
        size_t klens[1] = {key_len};
        const char *args[2] = {ttl, rw->base.write_field};
        size_t alens[2] = {ttl_len, rw->base.write_field_len};
        rep =
            wire_eval(c, &r->wire, &r->wire.scripts[SCRIPT_WRITE], 1, keys, klens, 2, args, alens);
    }
    if (rep == NULL)
        return -1;
    int won = read_try_answer(c, rep, left);
    if (won < 0 && c->err == LOCK_ERR_REFUSED)
        wire_drop(c, &r->wire); /* a demoted master: ask the sentinels again */
    return won;
}

static enum lock_result rw_acquire(struct lock_client *c, const char *key, size_t key_len,
                                   uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct rw_client *rw = c->impl;
    rw->mode = g->mode == LOCK_MODE_SHARED ? LOCK_MODE_SHARED : LOCK_MODE_EXCLUSIVE;
    return rsn_acquire(c, try_lock, rsn_rw_channel, key, key_len, ttl_ms, wait_ms, g);
}

static enum lock_result read_release(struct lock_client *c, const struct lock_grant *g,
                                     const char *channel, size_t ch_len, size_t latch_len)
{
    struct rw_client *rw = c->impl;
    struct rsn_client *r = &rw->base;
    char prefix[RSN_NAME_MAX], base[RSN_NAME_MAX], latch_ms[21];
    size_t pl = hold_name(prefix, g->key, g->key_len, r->field, ":rwlock_timeout");
    size_t bl = hold_name(base, g->key, g->key_len, NULL, "");
    if (pl == 0 || bl == 0) {
        lock_set_error(c, LOCK_ERR_UNSENT, "lock name too long");
        return LOCK_ERR;
    }
    const char *keys[5] = {g->key, channel, prefix, base, r->latch};
    size_t klens[5] = {g->key_len, ch_len, pl, bl, latch_len};
    const char *args[4] = {RSN_UNLOCK_MESSAGE, r->field, "publish", latch_ms};
    size_t alens[4] = {
        1, r->field_len, 7,
        wire_u64(latch_ms, 2ULL * (c->cfg->io_timeout_ms ? c->cfg->io_timeout_ms : 1000))};
    int res =
        rsn_unlock_eval(c, &r->wire.scripts[SCRIPT_READ_UNLOCK], 5, keys, klens, 4, args, alens);
    return res >= 0 ? LOCK_OK : res == -2 ? LOCK_LOST : LOCK_ERR;
}

static enum lock_result write_release(struct lock_client *c, const struct lock_grant *g,
                                      const char *channel, size_t ch_len, size_t latch_len)
{
    struct rw_client *rw = c->impl;
    struct rsn_client *r = &rw->base;
    char scratch[2][21];
    const char *keys[3] = {g->key, channel, r->latch};
    size_t klens[3] = {g->key_len, ch_len, latch_len};
    const char *args[5];
    size_t alens[5];
    rsn_unlock_args(c, g->ttl_ms, RSN_READ_UNLOCK_MESSAGE, args, alens, scratch);
    args[2] = rw->base.write_field, alens[2] = rw->base.write_field_len;
    int res =
        rsn_unlock_eval(c, &r->wire.scripts[SCRIPT_WRITE_UNLOCK], 3, keys, klens, 5, args, alens);
    return res >= 0 ? LOCK_OK : res == -2 ? LOCK_LOST : LOCK_ERR;
}

static enum lock_result rw_release(struct lock_client *c, const struct lock_grant *g)
{
    char channel[RSN_NAME_MAX];
    size_t ch_len = rsn_rw_channel(c, g->key, g->key_len, channel);
    size_t latch_len = rsn_new_latch(c, g->key, g->key_len);
    if (ch_len == 0 || latch_len == 0) {
        lock_set_error(c, LOCK_ERR_UNSENT, "lock name too long");
        return LOCK_ERR;
    }
    return g->mode == LOCK_MODE_SHARED ? read_release(c, g, channel, ch_len, latch_len)
                                       : write_release(c, g, channel, ch_len, latch_len);
}

static enum lock_result read_renew(struct lock_client *c, struct lock_grant *g)
{
    struct rw_client *rw = c->impl;
    struct rsn_client *r = &rw->base;
    char base[RSN_NAME_MAX], ttl[21];
    size_t bl = hold_name(base, g->key, g->key_len, NULL, "");
    if (bl == 0) {
        lock_set_error(c, LOCK_ERR_UNSENT, "lock name too long");
        return LOCK_ERR;
    }
    const char *keys[2] = {g->key, base};
    size_t klens[2] = {g->key_len, bl};
    const char *args[3] = {ttl, "1", r->field};
    size_t alens[3] = {wire_u64(ttl, g->ttl_ms), 1, r->field_len};
    uint64_t sent = lock_now_ms();
    return rsn_renew_answer(
        c,
        wire_eval(c, &r->wire, &r->wire.scripts[SCRIPT_READ_RENEW], 2, keys, klens, 3, args, alens),
        g, sent);
}

static enum lock_result rw_renew(struct lock_client *c, struct lock_grant *g)
{
    struct rw_client *rw = c->impl;
    if (g->mode == LOCK_MODE_SHARED)
        return read_renew(c, g);
    return rsn_renew_field(c, &rw->base.wire.scripts[SCRIPT_WRITE_RENEW], g, rw->base.write_field,
                           rw->base.write_field_len);
}

const struct lock_ops redisson_rw_ops = {
    .name = "redisson-rw",
    .summary = "Redisson's RReadWriteLock: readers share (a hold key each), one writer excludes "
               "all; watchdog",
    .server = "redis",
    .family = &redis_family,
    .defaults = {{"watchdog", "watchdog on (Redisson's lock() default)", "{\"watchdog\": true}"}},
    .reentrant = true,
    .modes = LOCK_MODE_BIT(LOCK_MODE_EXCLUSIVE) | LOCK_MODE_BIT(LOCK_MODE_SHARED),
    .connect = rw_connect,
    .disconnect = rsn_close,
    .acquire = rw_acquire,
    .release = rw_release,
    .renew = rw_renew,
    .crash = rsn_close,
};
