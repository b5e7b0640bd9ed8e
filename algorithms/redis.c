/* redis.c - the single-instance Redis lock as redis.io describes it.
 *
 * acquire: SET key owner NX PX ttl. When the resource checks fencing tokens,
 *   a script does the same SET and, only if it won, INCRs a per-key counter
 *   (<key>:fence) whose value is the token: one round trip, atomic.
 * release: compare-and-delete in Lua, so a holder whose lock expired and
 *   was taken by someone else cannot delete the new holder's lock.
 * renew (the watchdog): compare-and-pexpire in Lua, same reason.
 * Waiting for a busy lock retries with capped exponential backoff and jitter.
 * Behind sentinels, the master is asked of them before every dial (so a
 *   connection error or a READONLY reply, which drops the connection,
 *   leads to the master of the moment, as Redisson follows a failover).
 * With wait_replicas, a won SET is followed by WAIT: fewer replicas than
 *   asked, and the key is deleted again and the acquire fails (Redisson's
 *   RLock since RedLock's deprecation), so a failover cannot lose a lock
 *   its holder was told it has.
 * Release and renew are LOCK_LOST only on the script's own 0 ("not ours");
 * no answer (timeout, broken connection, refused reconnect) or an error
 * reply is LOCK_ERR: the script may or may not have run.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/redis.h"
#include "algorithms/redis_wire.h"

/* redis_wire.h's redis_lock_scripts, by these names */
enum {
    SCRIPT_ACQUIRE_FENCED = REDIS_SCRIPT_ACQUIRE_FENCED,
    SCRIPT_RELEASE = REDIS_SCRIPT_RELEASE,
    SCRIPT_RENEW = REDIS_SCRIPT_RENEW,
    N_SCRIPTS = REDIS_N_SCRIPTS
};

struct redis_lock {
    struct redis_wire wire; /* first: wire_client_open allocates the whole struct */
    char fence_key[LOCK_OWNER_MAX + 256];
};

static int redis_connect(struct lock_client *c)
{
    return wire_client_open(c, sizeof(struct redis_lock), redis_lock_scripts, N_SCRIPTS,
                            c->cfg->n_sentinels ? wire_locate_master : NULL);
}

/* A replica that used to be the master answers writes with READONLY: the
 * write did not happen, and the connection goes so the next call asks the
 * sentinels again. true when rep was that. */
static bool refused_readonly(struct lock_client *c, struct redis_lock *r, const redisReply *rep,
                             const char *what)
{
    if (rep->type != REDIS_REPLY_ERROR || strncmp(rep->str, "READONLY", 8) != 0)
        return false;
    lock_set_error(c, LOCK_ERR_REFUSED, "%s: %s", what, rep->str);
    wire_drop(c, &r->wire);
    return true;
}

/* Runs a compare-and-<op> script: LOCK_OK when it found our owner value
 * (the script answers 1), LOCK_LOST when the server said it did not (0). */
static enum lock_result owner_script(struct lock_client *c, int script, const struct lock_grant *g,
                                     int nargs, const char *arg2, size_t arg2_len)
{
    struct redis_lock *r = c->impl;
    const char *keys[1] = {g->key};
    size_t klens[1] = {g->key_len};
    const char *args[2] = {c->owner, arg2};
    size_t alens[2] = {c->owner_len, arg2_len};
    redisReply *rep =
        wire_eval(c, &r->wire, &r->wire.scripts[script], 1, keys, klens, nargs, args, alens);
    /* No reply: the request may have run before the answer was lost (a
     * timeout, a server killed after the write), so the outcome is unknown,
     * never LOST; c->err says what happened. */
    if (rep == NULL)
        return LOCK_ERR;
    if (refused_readonly(c, r, rep, "script")) {
        freeReplyObject(rep);
        return LOCK_ERR;
    }
    enum lock_result res = wire_owner_reply(c, rep);
    freeReplyObject(rep);
    return res;
}

/* After a won SET: WAIT for the replicas; short of them, the key is
 * deleted again (ours: the compare-and-delete script). 1 kept, -1 given
 * back or unknown, with c->err set. */
static int wait_for_replicas(struct lock_client *c, struct redis_lock *r, const char *key,
                             size_t key_len)
{
    char n[21], ms[21];
    const char *argv[3] = {"WAIT", n, ms};
    size_t lens[3] = {4, wire_u64(n, redis_settings(c->cfg)->wait_replicas),
                      wire_u64(ms, redis_settings(c->cfg)->wait_timeout_ms)};
    redisReply *rep = wire_call(c, &r->wire, 3, argv, lens);
    if (rep == NULL)
        return -1; /* sent, no answer: the lock may be ours; c->err says so */
    long long acked = rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
    freeReplyObject(rep);
    if (acked >= (long long)redis_settings(c->cfg)->wait_replicas)
        return 1;
    const struct lock_grant mine = {.key = key, .key_len = key_len};
    enum lock_result back = owner_script(c, SCRIPT_RELEASE, &mine, 1, NULL, 0);
    if (back != LOCK_ERR)
        lock_set_error(c, LOCK_ERR_REFUSED,
                       "WAIT: %lld of %" PRIu32 " replicas had the lock after %" PRIu32
                       " ms; given back",
                       acked < 0 ? 0 : acked, redis_settings(c->cfg)->wait_replicas,
                       redis_settings(c->cfg)->wait_timeout_ms);
    else if (c->err == LOCK_ERR_PROTOCOL || c->err == LOCK_ERR_REFUSED)
        /* answered, but not with the script's 0 or 1: the lock may be ours */
        lock_set_error(c, LOCK_ERR_PROTOCOL, "WAIT short, and giving the lock back failed");
    return -1;
}

/* One attempt (a wire_try_fn). */
static int try_set(struct lock_client *c, const char *key, size_t key_len, const char *ttl,
                   size_t ttl_len, uint64_t *token)
{
    struct redis_lock *r = c->impl;
    redisReply *rep;
    if (c->cfg->want_token) {
        size_t fl = key_len + 6;
        if (fl >= sizeof(r->fence_key)) {
            lock_set_error(c, LOCK_ERR_CONFIG, "key too long");
            return -1;
        }
        memcpy(r->fence_key, key, key_len);
        memcpy(r->fence_key + key_len, ":fence", 7);
        const char *keys[2] = {key, r->fence_key};
        size_t klens[2] = {key_len, fl};
        const char *args[2] = {c->owner, ttl};
        size_t alens[2] = {c->owner_len, ttl_len};
        rep = wire_eval(c, &r->wire, &r->wire.scripts[SCRIPT_ACQUIRE_FENCED], 2, keys, klens, 2,
                        args, alens);
    } else {
        const char *argv[6] = {"SET", key, c->owner, "NX", "PX", ttl};
        size_t lens[6] = {3, key_len, c->owner_len, 2, 2, ttl_len};
        rep = wire_call(c, &r->wire, 6, argv, lens);
    }
    if (rep == NULL)
        return -1;
    if (refused_readonly(c, r, rep, "SET NX")) {
        freeReplyObject(rep);
        return -1;
    }
    int won = wire_set_reply(c, rep, token);
    freeReplyObject(rep);
    if (won == 1 && redis_settings(c->cfg)->wait_replicas > 0)
        return wait_for_replicas(c, r, key, key_len);
    return won;
}

static enum lock_result redis_acquire(struct lock_client *c, const char *key, size_t key_len,
                                      uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    return wire_acquire(c, try_set, key, key_len, ttl_ms, wait_ms, g);
}

static enum lock_result redis_release(struct lock_client *c, const struct lock_grant *g)
{
    return owner_script(c, SCRIPT_RELEASE, g, 1, NULL, 0);
}

static enum lock_result redis_renew(struct lock_client *c, struct lock_grant *g)
{
    char ttl[21];
    size_t ttl_len = wire_u64(ttl, g->ttl_ms);
    uint64_t sent = lock_now_ms();
    enum lock_result res = owner_script(c, SCRIPT_RENEW, g, 2, ttl, ttl_len);
    if (res == LOCK_OK)
        g->validity_ms = wire_validity(g->ttl_ms, sent);
    return res;
}

const struct lock_ops redis_ops = {
    .name = "redis",
    .summary = "SET NX PX, Lua compare-and-delete release, optional watchdog and fencing token",
    .server = "redis",
    .family = &redis_family,
    .gives_token = true,
    .connect = redis_connect,
    .disconnect = wire_client_close,
    .acquire = redis_acquire,
    .release = redis_release,
    .renew = redis_renew,
    .crash = wire_client_close, /* a dead process's socket just closes: nothing is released */
};
