/* redisson_rw_naive.c - the deliberately unsafe read-write lock: a
 * hand-written one in Redisson's shape (a hash named as the lock, a field
 * "mode" = read | write, one field per holder counting its holds,
 * waiters on redisson_rwlock:{<name>}) whose write script was written as
 * if only writers could be in the way.
 *
 * The flaw, on purpose: the write script refuses only when another
 * writer holds (mode = write). A hash in read mode, readers inside, does
 * not stop it: it sets mode = write and goes in beside them. Readers
 * that come after it are kept out, so the lock looks right whenever the
 * writer comes first; it breaks only when a writer arrives while readers
 * hold, which a read-mostly workload does all the time. Compare
 * redisson-rw, Redisson's RReadWriteLock, whose write script waits for
 * the hash to be free.
 */
#include <stdio.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/redis_wire.h"
#include "algorithms/redisson_wire.h"

enum { SCRIPT_READ, SCRIPT_WRITE, SCRIPT_UNLOCK, SCRIPT_RENEW, N_SCRIPTS };

struct rwn_client {
    struct rsn_client base; /* first: rsn_open allocates the whole */
    uint8_t mode;           /* of the acquire under way (rsn_try_fn has no grant) */
};

/* KEYS: name; ARGV: lease, field, write field. A writer's own readers
 * are let in; anybody else's writer keeps a reader out. */
static const char read_script[] =
    "local mode = redis.call('hget', KEYS[1], 'mode') "
    "if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 0 then "
    "  return redis.call('pttl', KEYS[1]) "
    "end "
    "if mode == false then redis.call('hset', KEYS[1], 'mode', 'read') end "
    "redis.call('hincrby', KEYS[1], ARGV[2], 1) "
    "redis.call('pexpire', KEYS[1], ARGV[1]); return nil";

/* KEYS: name; ARGV: lease, write field. The bug: only mode = write held
 * by someone else refuses; the readers' fields are never looked at. */
static const char write_script[] =
    "local mode = redis.call('hget', KEYS[1], 'mode') "
    "if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 0 then "
    "  return redis.call('pttl', KEYS[1]) "
    "end "
    "redis.call('hset', KEYS[1], 'mode', 'write') "
    "redis.call('hincrby', KEYS[1], ARGV[2], 1) "
    "redis.call('pexpire', KEYS[1], ARGV[1]); return nil";

/* KEYS: name, channel; ARGV: field (a reader's or a writer's), message.
 * nil: the field was not there; 0: holders remain; 1: the hash is gone.
 * A writer leaving readers behind puts the hash back in read mode. */
static const char unlock_script[] =
    "if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return nil end "
    "if redis.call('hincrby', KEYS[1], ARGV[1], -1) <= 0 then "
    "  redis.call('hdel', KEYS[1], ARGV[1]) "
    "end "
    "if redis.call('hlen', KEYS[1]) <= 1 then "
    "  redis.call('del', KEYS[1]); redis.call('publish', KEYS[2], ARGV[2]); return 1 "
    "end "
    "local writers = 0 "
    "for _, f in ipairs(redis.call('hkeys', KEYS[1])) do "
    "  if string.sub(f, -6) == ':write' then writers = writers + 1 end "
    "end "
    "if writers == 0 then redis.call('hset', KEYS[1], 'mode', 'read') end "
    "redis.call('publish', KEYS[2], ARGV[2]); return 0";

static const char *const script_bodies[N_SCRIPTS] = {
    [SCRIPT_READ] = read_script,
    [SCRIPT_WRITE] = write_script,
    [SCRIPT_UNLOCK] = unlock_script,
    [SCRIPT_RENEW] = rsn_renew_script,
};

static int rwn_connect(struct lock_client *c)
{
    return rsn_open(c, sizeof(struct rwn_client), script_bodies, N_SCRIPTS);
}

/* One try in the mode asked (an rsn_try_fn): nil won, an integer the
 * hash's PTTL. */
static int rwn_try(struct lock_client *c, const char *key, size_t key_len, uint32_t ttl_ms,
                   uint64_t *token, int64_t *left)
{
    struct rwn_client *rw = c->impl;
    struct rsn_client *r = &rw->base;
    char ttl[21];
    size_t ttl_len = wire_u64(ttl, ttl_ms);
    const char *keys[1] = {key};
    size_t klens[1] = {key_len};
    bool shared = rw->mode == LOCK_MODE_SHARED;
    const char *args[3] = {ttl, shared ? r->field : rw->base.write_field, rw->base.write_field};
    size_t alens[3] = {ttl_len, shared ? r->field_len : rw->base.write_field_len,
                       rw->base.write_field_len};
    *token = 0;
    redisReply *rep = wire_eval(c, &r->wire, &r->wire.scripts[shared ? SCRIPT_READ : SCRIPT_WRITE],
                                1, keys, klens, shared ? 3 : 2, args, alens);
    if (rep == NULL)
        return -1;
    int won = -1;
    if (rep->type == REDIS_REPLY_NIL)
        won = 1;
    else if (rep->type == REDIS_REPLY_INTEGER)
        won = 0, *left = rep->integer;
    else
        lock_set_error(c, LOCK_ERR_PROTOCOL, "lock: %s",
                       rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    freeReplyObject(rep);
    return won;
}

static enum lock_result rwn_acquire(struct lock_client *c, const char *key, size_t key_len,
                                    uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct rwn_client *rw = c->impl;
    rw->mode = g->mode == LOCK_MODE_SHARED ? LOCK_MODE_SHARED : LOCK_MODE_EXCLUSIVE;
    return rsn_acquire(c, rwn_try, rsn_rw_channel, key, key_len, ttl_ms, wait_ms, g);
}

static enum lock_result rwn_release(struct lock_client *c, const struct lock_grant *g)
{
    struct rwn_client *rw = c->impl;
    struct rsn_client *r = &rw->base;
    char channel[RSN_NAME_MAX];
    size_t ch_len = rsn_rw_channel(c, g->key, g->key_len, channel);
    if (ch_len == 0) {
        lock_set_error(c, LOCK_ERR_UNSENT, "lock name too long");
        return LOCK_ERR;
    }
    bool shared = g->mode == LOCK_MODE_SHARED;
    const char *keys[2] = {g->key, channel};
    size_t klens[2] = {g->key_len, ch_len};
    const char *args[2] = {shared ? r->field : rw->base.write_field, RSN_UNLOCK_MESSAGE};
    size_t alens[2] = {shared ? r->field_len : rw->base.write_field_len, 1};
    redisReply *rep =
        wire_eval(c, &r->wire, &r->wire.scripts[SCRIPT_UNLOCK], 2, keys, klens, 2, args, alens);
    if (rep == NULL)
        return LOCK_ERR;
    enum lock_result res = LOCK_ERR;
    if (rep->type == REDIS_REPLY_NIL)
        res = LOCK_LOST;
    else if (rep->type == REDIS_REPLY_INTEGER)
        res = LOCK_OK;
    else
        lock_set_error(c, LOCK_ERR_PROTOCOL, "unlock: %s",
                       rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    freeReplyObject(rep);
    return res;
}

static enum lock_result rwn_renew(struct lock_client *c, struct lock_grant *g)
{
    struct rwn_client *rw = c->impl;
    struct rsn_client *r = &rw->base;
    bool shared = g->mode == LOCK_MODE_SHARED;
    return rsn_renew_field(c, &r->wire.scripts[SCRIPT_RENEW], g,
                           shared ? r->field : rw->base.write_field,
                           shared ? r->field_len : rw->base.write_field_len);
}

const struct lock_ops redisson_rw_naive_ops = {
    .name = "redisson-rw-naive",
    .unsafe = true,
    .summary = "UNSAFE baseline: a read-write lock whose write script checks only for another "
               "writer, so a writer enters while readers hold",
    .server = "redis",
    .defaults = {{"watchdog", "watchdog on (Redisson's lock() default)", "{\"watchdog\": true}"}},
    .modes = LOCK_MODE_BIT(LOCK_MODE_EXCLUSIVE) | LOCK_MODE_BIT(LOCK_MODE_SHARED),
    .connect = rwn_connect,
    .disconnect = rsn_close,
    .acquire = rwn_acquire,
    .release = rwn_release,
    .renew = rwn_renew,
    .crash = rsn_close,
};
