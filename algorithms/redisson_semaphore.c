/* redisson_semaphore.c - Redisson's RSemaphore on the wire: a permit is
 * a grant of mode LOCK_MODE_PERMIT, and a key admits lock_config.permits
 * holders at once.
 *
 * The semaphore is a plain counter named as the lock, set once to the
 * permits by trySetPermits (only while it does not exist, publishing the
 * count). acquire DECRBYs 1 when at least 1 is left; a waiter listens on
 * redisson_sc:{<name>} and wakes at any message, for the rest of its
 * wait: there is no holder ttl to bound it. release INCRBYs 1 and
 * publishes the new count.
 *
 * Redisson's shape, kept here on purpose: a permit has no owner and no
 * ttl, so a permit whose holder dies is never given back (RSemaphore's
 * documented behaviour; RPermitExpirableSemaphore is the variant with
 * leases), and a release is never refused: nothing on the server says
 * whose permit it was.
 */
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/redis.h"
#include "algorithms/redis_wire.h"
#include "algorithms/redisson_wire.h"

enum { SCRIPT_SET_PERMITS, SCRIPT_ACQUIRE, SCRIPT_RELEASE, N_SCRIPTS };

/* KEYS: name, channel; ARGV: permits, publish command. */
static const char set_permits_script[] =
    "if redis.call('get', KEYS[1]) == false then "
    "  redis.call('set', KEYS[1], ARGV[1]); redis.call(ARGV[2], KEYS[2], ARGV[1]); return 1 "
    "end "
    "return 0";

/* KEYS: name; ARGV: permits wanted. */
static const char acquire_script[] =
    "local left = redis.call('get', KEYS[1]) "
    "if left ~= false and tonumber(left) >= tonumber(ARGV[1]) then "
    "  redis.call('decrby', KEYS[1], ARGV[1]); return 1 "
    "end "
    "return 0";

/* KEYS: name, channel; ARGV: permits given back, publish command. */
static const char release_script[] = "local left = redis.call('incrby', KEYS[1], ARGV[1]) "
                                     "redis.call(ARGV[2], KEYS[2], left)";

/* The keys whose counter this client has set (trySetPermits is called
 * once per key, as an application does at start-up); a small open table
 * of key hashes, and past it every acquire sets again (the script leaves
 * an existing counter alone, so that is only slower). */
#define SET_KEYS 64

struct sem_client {
    struct rsn_client base; /* first: rsn_open allocates the whole */
    uint64_t set[SET_KEYS]; /* key hashes | 1 (0: empty) */
};

static const char *const script_bodies[N_SCRIPTS] = {
    [SCRIPT_SET_PERMITS] = set_permits_script,
    [SCRIPT_ACQUIRE] = acquire_script,
    [SCRIPT_RELEASE] = release_script,
};

static int sem_connect(struct lock_client *c)
{
    if (c->cfg->permits < 1) {
        lock_set_error(c, LOCK_ERR_CONFIG, "a semaphore needs permits >= 1");
        return -1;
    }
    int rc = rsn_open(c, sizeof(struct sem_client), script_bodies, N_SCRIPTS);
    struct sem_client *s = c->impl;
    if (s)
        s->base.any_message = true;
    return rc;
}

static size_t sem_channel(struct lock_client *c, const char *key, size_t key_len, char *out)
{
    (void)c;
    return rsn_prefix_name(out, "redisson_sc", key, key_len);
}

static uint64_t key_hash(const char *key, size_t len)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)key[i]) * 1099511628211ULL;
    return h | 1;
}

/* trySetPermits once per key: 0, or -1 with c->err set. */
static int set_permits(struct lock_client *c, const char *key, size_t key_len)
{
    struct sem_client *s = c->impl;
    uint64_t h = key_hash(key, key_len);
    size_t at = h % SET_KEYS, probes = 0;
    while (s->set[at] != 0 && s->set[at] != h && ++probes < SET_KEYS)
        at = (at + 1) % SET_KEYS;
    if (probes < SET_KEYS && s->set[at] == h)
        return 0;
    char channel[RSN_NAME_MAX], n[21];
    size_t ch_len = sem_channel(c, key, key_len, channel);
    if (ch_len == 0) {
        lock_set_error(c, LOCK_ERR_UNSENT, "lock name too long");
        return -1;
    }
    const char *keys[2] = {key, channel};
    size_t klens[2] = {key_len, ch_len};
    const char *args[2] = {n, "publish"};
    size_t alens[2] = {wire_u64(n, c->cfg->permits), 7};
    redisReply *rep = wire_eval(c, &s->base.wire, &s->base.wire.scripts[SCRIPT_SET_PERMITS], 2,
                                keys, klens, 2, args, alens);
    if (rep == NULL)
        return -1;
    int ok = rep->type == REDIS_REPLY_INTEGER;
    if (!ok)
        lock_set_error(c, LOCK_ERR_PROTOCOL, "trySetPermits: %s",
                       rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    freeReplyObject(rep);
    if (ok && probes < SET_KEYS)
        s->set[at] = h;
    return ok ? 0 : -1;
}

/* One try (an rsn_try_fn): no holder ttl bounds a wait. */
static int try_permit(struct lock_client *c, const char *key, size_t key_len, uint32_t ttl_ms,
                      uint64_t *token, int64_t *left)
{
    struct sem_client *s = c->impl;
    (void)ttl_ms;
    *token = 0;
    *left = -1;
    if (set_permits(c, key, key_len) < 0)
        return -1;
    const char *keys[1] = {key};
    size_t klens[1] = {key_len};
    const char *args[1] = {"1"};
    size_t alens[1] = {1};
    redisReply *rep = wire_eval(c, &s->base.wire, &s->base.wire.scripts[SCRIPT_ACQUIRE], 1, keys,
                                klens, 1, args, alens);
    if (rep == NULL)
        return -1;
    int won = -1;
    if (rep->type == REDIS_REPLY_INTEGER && (rep->integer == 0 || rep->integer == 1))
        won = (int)rep->integer;
    else
        lock_set_error(c,
                       rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "READONLY", 8) == 0
                           ? LOCK_ERR_REFUSED
                           : LOCK_ERR_PROTOCOL,
                       "tryAcquire: %s",
                       rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    freeReplyObject(rep);
    if (won < 0 && c->err == LOCK_ERR_REFUSED)
        wire_drop(c, &s->base.wire); /* a demoted master: ask the sentinels again */
    return won;
}

static enum lock_result sem_acquire(struct lock_client *c, const char *key, size_t key_len,
                                    uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    return rsn_acquire(c, try_permit, sem_channel, key, key_len, ttl_ms, wait_ms, g);
}

static enum lock_result sem_release(struct lock_client *c, const struct lock_grant *g)
{
    struct sem_client *s = c->impl;
    char channel[RSN_NAME_MAX];
    size_t ch_len = sem_channel(c, g->key, g->key_len, channel);
    if (ch_len == 0) {
        lock_set_error(c, LOCK_ERR_UNSENT, "lock name too long");
        return LOCK_ERR;
    }
    const char *keys[2] = {g->key, channel};
    size_t klens[2] = {g->key_len, ch_len};
    const char *args[2] = {"1", "publish"};
    size_t alens[2] = {1, 7};
    redisReply *rep = wire_eval(c, &s->base.wire, &s->base.wire.scripts[SCRIPT_RELEASE], 2, keys,
                                klens, 2, args, alens);
    if (rep == NULL)
        return LOCK_ERR;
    enum lock_result res = LOCK_OK; /* the script answers nothing: a release is never refused */
    if (rep->type == REDIS_REPLY_ERROR) {
        lock_set_error(c, LOCK_ERR_PROTOCOL, "release: %s", rep->str);
        res = LOCK_ERR;
    }
    freeReplyObject(rep);
    return res;
}

const struct lock_ops redisson_semaphore_ops = {
    .name = "redisson-semaphore",
    .summary = "Redisson's RSemaphore: a counter of lock.permits permits, no owner and no ttl "
               "(a dead holder's permit is lost)",
    .server = "redis",
    .family = &redis_family,
    .leaseless = true, /* RSemaphore: no owner, no ttl */
    .modes = LOCK_MODE_BIT(LOCK_MODE_PERMIT),
    .connect = sem_connect,
    .disconnect = rsn_close,
    .acquire = sem_acquire,
    .release = sem_release,
    .crash = rsn_close,
};
