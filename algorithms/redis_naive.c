/* redis_naive.c - the deliberately unsafe Redis lock (locktorture's
 * lock_busted_ops): SETNX, then EXPIRE in a second round trip, and release
 * by a plain DEL that never checks who owns the key.
 *
 * Two ways it breaks, both on purpose: a holder that outlives its ttl
 * deletes the next holder's lock on release, letting a third client in
 * while the second is still inside; and a client that dies between SETNX
 * and EXPIRE leaves a key that never expires.
 */
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/redis_wire.h"

static int naive_connect(struct lock_client *c)
{
    return wire_client_open(c, sizeof(struct redis_wire), NULL, 0, NULL);
}

/* Sends one command and expects an integer reply; -1 on anything else. */
static long long int_call(struct lock_client *c, int argc, const char **argv, const size_t *lens)
{
    redisReply *rep = wire_call(c, c->impl, argc, argv, lens);
    if (rep == NULL)
        return -1;
    long long v = -1;
    if (rep->type == REDIS_REPLY_INTEGER)
        v = rep->integer;
    else
        lock_set_error(c, LOCK_ERR_PROTOCOL, "%s: %s", argv[0],
                       rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    freeReplyObject(rep);
    return v;
}

/* One attempt (a wire_try_fn): SETNX, and only then, in a second round
 * trip, the expiry. */
static int try_setnx(struct lock_client *c, const char *key, size_t key_len, const char *ttl,
                     size_t ttl_len, uint64_t *token)
{
    const char *setnx[3] = {"SETNX", key, c->owner};
    size_t setnx_len[3] = {5, key_len, c->owner_len};
    long long won = int_call(c, 3, setnx, setnx_len);
    if (won != 1)
        return won < 0 ? -1 : 0;
    /* The window: until this lands, the key has no expiry at all. */
    const char *exp[3] = {"PEXPIRE", key, ttl};
    size_t exp_len[3] = {7, key_len, ttl_len};
    *token = 0;
    return int_call(c, 3, exp, exp_len) < 0 ? -1 : 1;
}

static enum lock_result naive_acquire(struct lock_client *c, const char *key, size_t key_len,
                                      uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    return wire_acquire(c, try_setnx, key, key_len, ttl_ms, wait_ms, g);
}

static enum lock_result naive_release(struct lock_client *c, const struct lock_grant *g)
{
    const char *del[2] = {"DEL", g->key};
    size_t del_len[2] = {3, g->key_len};
    /* Whatever DEL removed, ours or someone else's, the naive client calls
     * it released: it cannot tell the difference, which is the bug. A DEL
     * whose answer did not come back (or an error reply) stays LOCK_ERR,
     * not OK: the bug is the missing owner check, not a guessed outcome. */
    return int_call(c, 2, del, del_len) < 0 ? LOCK_ERR : LOCK_OK;
}

const struct lock_ops redis_naive_ops = {
    .name = "redis-naive",
    .unsafe = true,
    .summary = "UNSAFE baseline: SETNX then EXPIRE, DEL without owner check",
    .server = "redis",
    .gives_token = false,
    .connect = naive_connect,
    .disconnect = wire_client_close,
    .acquire = naive_acquire,
    .release = naive_release,
    .renew = NULL,
    .crash = wire_client_close, /* a dead process's socket just closes: nothing is released */
};
