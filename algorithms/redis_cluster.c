/* redis_cluster.c - the redis lock (redis.c: SET NX PX, the Lua
 * compare-and-delete release and compare-and-pexpire renewal, capped
 * exponential back-off) on a Redis Cluster, as a cluster client runs it:
 * each command to the master of its key's slot (redis_cluster_wire.h),
 * MOVED and ASK followed, the slot map asked again after a failover,
 * CLUSTERDOWN and TRYAGAIN retried until the acquire's wait runs out (a
 * release's or renewal's: its io timeout).
 *
 * The scripts are redis.c's, byte for byte, so a client of the plain
 * redis lock and this one contend on one key. The fencing counter must
 * share the key's slot for the script to touch both: it is
 * "{<key>}:fence" (the key's own hash tag, when it has one: "<key>:fence"),
 * where the plain lock's is "<key>:fence".
 *
 * With wait_replicas, a won SET is followed by WAIT on the same master;
 * short of the replicas, the key is given back and the acquire fails, as
 * Redisson's RLock does in cluster mode.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/redis_cluster.h"
#include "algorithms/redis_cluster_wire.h"

/* redis_wire.h's redis_lock_scripts, by these names */
enum {
    SCRIPT_ACQUIRE_FENCED = REDIS_SCRIPT_ACQUIRE_FENCED,
    SCRIPT_RELEASE = REDIS_SCRIPT_RELEASE,
    SCRIPT_RENEW = REDIS_SCRIPT_RENEW,
    N_SCRIPTS = REDIS_N_SCRIPTS
};

struct cluster_lock {
    struct cluster_wire cw;
    uint64_t deadline_ms; /* of the acquire under way: how long TRYAGAIN is retried */
    char fence_key[LOCK_OWNER_MAX + 256];
};

static int cluster_connect(struct lock_client *c)
{
    struct cluster_lock *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        lock_set_error(c, LOCK_ERR_IO, "out of memory");
        return -1;
    }
    c->impl = r;
    return cw_open(c, &r->cw, redis_lock_scripts, N_SCRIPTS);
}

static void cluster_close(struct lock_client *c)
{
    struct cluster_lock *r = c->impl;
    if (r == NULL)
        return;
    cw_close(&r->cw);
    free(r);
    c->impl = NULL;
}

/* A compare-and-<op> script: LOCK_OK when it found our owner value (1),
 * LOCK_LOST when the server said it did not (0); no answer, or an error
 * reply, says nothing about whose key it is: LOCK_ERR. */
static enum lock_result owner_script(struct lock_client *c, int script, const struct lock_grant *g,
                                     int nargs, const char *arg2, size_t arg2_len)
{
    struct cluster_lock *r = c->impl;
    const char *keys[1] = {g->key};
    size_t klens[1] = {g->key_len};
    const char *args[2] = {c->owner, arg2};
    size_t alens[2] = {c->owner_len, arg2_len};
    redisReply *rep = cw_eval(c, &r->cw, cw_key_slot(g->key, g->key_len), cw_io_deadline(c),
                              (size_t)script, 1, keys, klens, nargs, args, alens);
    if (rep == NULL)
        return LOCK_ERR;
    enum lock_result res = wire_owner_reply(c, rep);
    freeReplyObject(rep);
    return res;
}

/* After a won SET: WAIT on the key's master; short of the replicas, the
 * key goes back. 1 kept, -1 given back or unknown, with c->err set. */
static int wait_for_replicas(struct lock_client *c, struct cluster_lock *r, const char *key,
                             size_t key_len)
{
    const struct redis_cluster_spec *rs = redis_cluster_settings(c->cfg);
    char n[21], ms[21];
    const char *argv[3] = {"WAIT", n, ms};
    size_t lens[3] = {4, wire_u64(n, rs->wait_replicas), wire_u64(ms, rs->wait_timeout_ms)};
    redisReply *rep =
        cw_call(c, &r->cw, cw_key_slot(key, key_len), cw_io_deadline(c), 3, argv, lens);
    if (rep == NULL)
        return -1;
    long long acked = rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
    freeReplyObject(rep);
    if (acked >= (long long)rs->wait_replicas)
        return 1;
    const struct lock_grant mine = {.key = key, .key_len = key_len};
    if (owner_script(c, SCRIPT_RELEASE, &mine, 1, NULL, 0) != LOCK_ERR)
        lock_set_error(c, LOCK_ERR_REFUSED,
                       "WAIT: %lld of %" PRIu32 " replicas had the lock after %" PRIu32
                       " ms; given back",
                       acked < 0 ? 0 : acked, rs->wait_replicas, rs->wait_timeout_ms);
    return -1;
}

/* The fencing counter, in the key's slot. 0, or -1 when it does not fit. */
static int fence_key_of(struct cluster_lock *r, const char *key, size_t key_len, size_t *len)
{
    size_t tag_len;
    bool tagged = cw_hash_tag(key, key_len, &tag_len) != NULL;
    int n = snprintf(r->fence_key, sizeof(r->fence_key), tagged ? "%.*s:fence" : "{%.*s}:fence",
                     (int)key_len, key);
    if (n < 0 || (size_t)n >= sizeof(r->fence_key))
        return -1;
    *len = (size_t)n;
    return 0;
}

static redisReply *set_request(struct lock_client *c, struct cluster_lock *r, const char *key,
                               size_t key_len, const char *ttl, size_t ttl_len)
{
    uint16_t slot = cw_key_slot(key, key_len);
    if (!c->cfg->want_token) {
        const char *argv[6] = {"SET", key, c->owner, "NX", "PX", ttl};
        size_t lens[6] = {3, key_len, c->owner_len, 2, 2, ttl_len};
        return cw_call(c, &r->cw, slot, r->deadline_ms, 6, argv, lens);
    }
    size_t fl;
    if (fence_key_of(r, key, key_len, &fl) < 0) {
        lock_set_error(c, LOCK_ERR_CONFIG, "key too long");
        return NULL;
    }
    const char *keys[2] = {key, r->fence_key};
    size_t klens[2] = {key_len, fl};
    const char *args[2] = {c->owner, ttl};
    size_t alens[2] = {c->owner_len, ttl_len};
    return cw_eval(c, &r->cw, slot, r->deadline_ms, SCRIPT_ACQUIRE_FENCED, 2, keys, klens, 2, args,
                   alens);
}

/* One attempt (a wire_try_fn). */
static int try_set(struct lock_client *c, const char *key, size_t key_len, const char *ttl,
                   size_t ttl_len, uint64_t *token)
{
    struct cluster_lock *r = c->impl;
    redisReply *rep = set_request(c, r, key, key_len, ttl, ttl_len);
    if (rep == NULL)
        return -1;
    int won = wire_set_reply(c, rep, token);
    freeReplyObject(rep);
    if (won == 1 && redis_cluster_settings(c->cfg)->wait_replicas > 0)
        return wait_for_replicas(c, r, key, key_len);
    return won;
}

static enum lock_result cluster_acquire(struct lock_client *c, const char *key, size_t key_len,
                                        uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct cluster_lock *r = c->impl;
    r->deadline_ms = lock_now_ms() + wait_ms;
    return wire_acquire(c, try_set, key, key_len, ttl_ms, wait_ms, g);
}

static enum lock_result cluster_release(struct lock_client *c, const struct lock_grant *g)
{
    return owner_script(c, SCRIPT_RELEASE, g, 1, NULL, 0);
}

static enum lock_result cluster_renew(struct lock_client *c, struct lock_grant *g)
{
    char ttl[21];
    size_t ttl_len = wire_u64(ttl, g->ttl_ms);
    uint64_t sent = lock_now_ms();
    enum lock_result res = owner_script(c, SCRIPT_RENEW, g, 2, ttl, ttl_len);
    if (res == LOCK_OK)
        g->validity_ms = wire_validity(g->ttl_ms, sent);
    return res;
}

const struct lock_ops redis_cluster_ops = {
    .name = "redis-cluster",
    .summary = "the redis lock on a Redis Cluster: slots, MOVED/ASK, failover refresh, WAIT",
    .server = "redis-cluster",
    .family = &redis_cluster_family,
    .gives_token = true,
    .connect = cluster_connect,
    .disconnect = cluster_close,
    .acquire = cluster_acquire,
    .release = cluster_release,
    .renew = cluster_renew,
    .crash = cluster_close, /* a dead process's sockets just close: nothing is released */
};
