/* redis_naive.c - the deliberately unsafe Redis lock (locktorture's
 * lock_busted_ops): SETNX, then EXPIRE in a second round trip, and release
 * by a plain DEL that never checks who owns the key.
 *
 * Two ways it breaks, both on purpose: a holder that outlives its ttl
 * deletes the next holder's lock on release, letting a third client in
 * while the second is still inside; and a client that dies between SETNX
 * and EXPIRE leaves a key that never expires.
 */
#include <stdlib.h>
#include <string.h>

#include "lock.h"
#include "redis_wire.h"

struct naive_lock {
    struct redis_wire wire;
};

static int naive_connect(struct lock_client *c)
{
    if (c->cfg->n_endpoints < 1) {
        lock_set_error(c, LOCK_ERR_CONFIG, "redis-naive needs one endpoint");
        return -1;
    }
    struct naive_lock *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        lock_set_error(c, LOCK_ERR_IO, "out of memory");
        return -1;
    }
    n->wire.ep = &c->cfg->endpoints[0];
    c->impl = n;
    return wire_connect(c, &n->wire);
}

static void naive_disconnect(struct lock_client *c)
{
    struct naive_lock *n = c->impl;
    if (n == NULL)
        return;
    wire_close(&n->wire);
    free(n);
    c->impl = NULL;
}

/* Sends one command and expects an integer reply; -1 on anything else. */
static long long int_call(struct lock_client *c, struct naive_lock *n, int argc, const char **argv,
                          const size_t *lens)
{
    redisReply *rep = wire_call(c, &n->wire, argc, argv, lens);
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

static enum lock_result naive_acquire(struct lock_client *c, const char *key, size_t key_len,
                                      uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct naive_lock *n = c->impl;
    char ttl[21];
    size_t ttl_len = wire_u64(ttl, ttl_ms);
    uint64_t deadline = lock_now_ms() + wait_ms;
    for (unsigned attempt = 0;; attempt++) {
        uint64_t sent = lock_now_ms();
        const char *setnx[3] = {"SETNX", key, c->owner};
        size_t setnx_len[3] = {5, key_len, c->owner_len};
        long long won = int_call(c, n, 3, setnx, setnx_len);
        if (won < 0)
            return LOCK_ERR;
        if (won == 1) {
            /* The window: until this lands, the key has no expiry at all. */
            const char *exp[3] = {"PEXPIRE", key, ttl};
            size_t exp_len[3] = {7, key_len, ttl_len};
            if (int_call(c, n, 3, exp, exp_len) < 0)
                return LOCK_ERR;
            uint64_t took = lock_now_ms() - sent;
            g->key = key;
            g->key_len = key_len;
            g->token = 0;
            g->ttl_ms = ttl_ms;
            g->validity_ms = took < ttl_ms ? ttl_ms - (uint32_t)took : 0;
            return LOCK_OK;
        }
        uint64_t now = lock_now_ms();
        if (now >= deadline || lock_cancelled(c))
            return LOCK_BUSY;
        lock_sleep_ms(wire_backoff_ms(c, attempt, now, deadline));
    }
}

static enum lock_result naive_release(struct lock_client *c, const struct lock_grant *g)
{
    struct naive_lock *n = c->impl;
    const char *del[2] = {"DEL", g->key};
    size_t del_len[2] = {3, g->key_len};
    /* Whatever DEL removed, ours or someone else's, the naive client calls
     * it released: it cannot tell the difference, which is the bug. */
    return int_call(c, n, 2, del, del_len) < 0 ? LOCK_ERR : LOCK_OK;
}

static void naive_crash(struct lock_client *c)
{
    naive_disconnect(c);
}

const struct lock_ops redis_naive_ops = {
    .name = "redis-naive",
    .summary = "UNSAFE baseline: SETNX then EXPIRE, DEL without owner check",
    .gives_token = false,
    .connect = naive_connect,
    .disconnect = naive_disconnect,
    .acquire = naive_acquire,
    .release = naive_release,
    .renew = NULL,
    .crash = naive_crash,
};
