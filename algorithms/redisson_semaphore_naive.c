/* redisson_semaphore_naive.c - the deliberately unsafe semaphore: a
 * counter of lock.permits permits named as the lock, as RSemaphore
 * keeps it (waiters on redisson_sc:{<name>}, woken by any count
 * published), taken with two plain commands instead of one script.
 *
 * The flaw, on purpose: acquire reads the counter (GET) and, seeing a
 * permit left, takes it (DECRBY 1) in a second round trip, never looking
 * at what DECRBY answered. Two clients that both read "1" before either
 * decrements both go in, and the counter goes below zero: one permit,
 * two holders. Alone, or one at a time, it looks right. Compare
 * redisson-semaphore, whose check and decrement are one script.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/redis_wire.h"
#include "algorithms/redisson_wire.h"

static int semn_connect(struct lock_client *c)
{
    if (c->cfg->permits < 1) {
        lock_set_error(c, LOCK_ERR_CONFIG, "a semaphore needs permits >= 1");
        return -1;
    }
    int rc = rsn_open(c, sizeof(struct rsn_client), NULL, 0);
    struct rsn_client *r = c->impl;
    if (r)
        r->any_message = true;
    return rc;
}

static size_t semn_channel(struct lock_client *c, const char *key, size_t key_len, char *out)
{
    (void)c;
    return rsn_prefix_name(out, "redisson_sc", key, key_len);
}

/* One command whose answer is an integer, a number in a string, or nil:
 * 1 with *v set, 0 nil, -1 anything else (c->err set). */
static int number_call(struct lock_client *c, int argc, const char **argv, const size_t *lens,
                       long long *v)
{
    struct rsn_client *r = c->impl;
    redisReply *rep = wire_call(c, &r->wire, argc, argv, lens);
    if (rep == NULL)
        return -1;
    int got = -1;
    if (rep->type == REDIS_REPLY_NIL) {
        got = 0;
    } else if (rep->type == REDIS_REPLY_INTEGER) {
        *v = rep->integer, got = 1;
    } else if (rep->type == REDIS_REPLY_STRING) {
        char *end;
        *v = strtoll(rep->str, &end, 10);
        got = end != rep->str && *end == '\0' ? 1 : -1;
    }
    if (got < 0)
        lock_set_error(c, LOCK_ERR_PROTOCOL, "%s: %s", argv[0],
                       rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    freeReplyObject(rep);
    return got;
}

/* One try (an rsn_try_fn): read, then take. No holder ttl bounds a wait. */
static int semn_try(struct lock_client *c, const char *key, size_t key_len, uint32_t ttl_ms,
                    uint64_t *token, int64_t *left)
{
    (void)ttl_ms;
    *token = 0;
    *left = -1;
    const char *get[2] = {"GET", key};
    size_t get_len[2] = {3, key_len};
    long long n = 0;
    int got = number_call(c, 2, get, get_len, &n);
    if (got < 0)
        return -1;
    if (got == 0) {
        /* No counter yet: set it to the permits (only if still absent),
         * and read again. */
        char permits[21];
        const char *set[4] = {"SET", key, permits, "NX"};
        size_t set_len[4] = {3, key_len, wire_u64(permits, c->cfg->permits), 2};
        struct rsn_client *r = c->impl;
        redisReply *rep = wire_call(c, &r->wire, 4, set, set_len);
        if (rep == NULL)
            return -1;
        bool refused = rep->type == REDIS_REPLY_ERROR;
        if (refused)
            lock_set_error(c, LOCK_ERR_PROTOCOL, "SET: %s", rep->str);
        freeReplyObject(rep);
        if (refused || (got = number_call(c, 2, get, get_len, &n)) < 0)
            return -1;
        if (got == 0) {
            lock_set_error(c, LOCK_ERR_PROTOCOL, "GET: the counter is gone");
            return -1;
        }
    }
    if (n < 1)
        return 0;
    /* The window: between the GET above and this DECRBY, another client
     * may read the same count and take the same permit. */
    const char *decr[3] = {"DECRBY", key, "1"};
    size_t decr_len[3] = {6, key_len, 1};
    long long after;
    return number_call(c, 3, decr, decr_len, &after) == 1 ? 1 : -1;
}

static enum lock_result semn_acquire(struct lock_client *c, const char *key, size_t key_len,
                                     uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    return rsn_acquire(c, semn_try, semn_channel, key, key_len, ttl_ms, wait_ms, g);
}

/* INCRBY, then the new count published for the waiters: a release is
 * never refused (nothing says whose permit it was). */
static enum lock_result semn_release(struct lock_client *c, const struct lock_grant *g)
{
    struct rsn_client *r = c->impl;
    char channel[RSN_NAME_MAX], count[24];
    size_t ch_len = semn_channel(c, g->key, g->key_len, channel);
    if (ch_len == 0) {
        lock_set_error(c, LOCK_ERR_UNSENT, "lock name too long");
        return LOCK_ERR;
    }
    const char *incr[3] = {"INCRBY", g->key, "1"};
    size_t incr_len[3] = {6, g->key_len, 1};
    long long n;
    if (number_call(c, 3, incr, incr_len, &n) != 1)
        return LOCK_ERR;
    int count_len = snprintf(count, sizeof(count), "%lld", n);
    const char *pub[3] = {"PUBLISH", channel, count};
    size_t pub_len[3] = {7, ch_len, (size_t)count_len};
    /* The permit is back whether or not the waiters hear of it. */
    wire_send(c, &r->wire, 3, pub, pub_len);
    return LOCK_OK;
}

const struct lock_ops redisson_semaphore_naive_ops = {
    .name = "redisson-semaphore-naive",
    .unsafe = true,
    .summary = "UNSAFE baseline: a semaphore that reads the count (GET) and takes a permit "
               "(DECRBY) in two round trips, so two clients take the last permit",
    .server = "redis",
    .leaseless = true, /* RSemaphore: no owner, no ttl */
    .modes = LOCK_MODE_BIT(LOCK_MODE_PERMIT),
    .connect = semn_connect,
    .disconnect = rsn_close,
    .acquire = semn_acquire,
    .release = semn_release,
    .crash = rsn_close,
};
