/* redisson_latch_wire.c - Redisson's RCountDownLatch on the wire: its
 * count key, its channel, its scripts and getCount, shared by the
 * latch objects of the family (redisson_latch.c, redisson_latch_naive.c).
 *
 * From RedissonCountDownLatch and CountDownLatchPubSub (Redisson
 * 66863978, pinned in tests/fixtures/redisson_wire.json): the count is a
 * plain string key named as the latch; trySetCount sets it only while it
 * does not exist and publishes the new-count message; countDown DECRs,
 * deletes the key once it is at or below zero (so the name can be set
 * again) and publishes the zero message only when it reaches exactly
 * zero; getCount is a GET, a missing key reading 0; delete DELs it and
 * publishes the new-count message when there was one. One Redis, no cluster
 * mode: PUBLISH, never SPUBLISH.
 */
#include <stdlib.h>
#include <string.h>

#include "algorithms/redisson_wire.h"

/* The call order Redisson's text has: exists, set, publish. */
const char rsn_latch_set_script[] = "if redis.call('exists', KEYS[1]) ~= 0 then return 0 end "
                                    "redis.call('set', KEYS[1], ARGV[2]) "
                                    "redis.call(ARGV[3], KEYS[2], ARGV[1]) "
                                    "return 1";

/* decr, del at <= 0, publish at exactly 0; answers nothing, as Redisson's
 * (its EVAL_BOOLEAN reads the nil as false and the caller drops it). */
const char rsn_latch_down_script[] = "local left = redis.call('decr', KEYS[1]) "
                                     "if left <= 0 then redis.call('del', KEYS[1]) end "
                                     "if left == 0 then redis.call(ARGV[2], KEYS[2], ARGV[1]) end";

/* del, and the new-count message only when there was a latch. */
const char rsn_latch_delete_script[] = "if redis.call('del', KEYS[1]) ~= 1 then return 0 end "
                                       "redis.call(ARGV[2], KEYS[2], ARGV[1]) "
                                       "return 1";

size_t rsn_latch_channel(struct lock_client *c, const char *key, size_t key_len, char *out)
{
    (void)c;
    static const char prefix[] = "redisson_countdownlatch__channel__{";
    size_t pl = sizeof(prefix) - 1, n = pl + key_len + 1;
    if (n >= RSN_NAME_MAX)
        return 0;
    memcpy(out, prefix, pl);
    memcpy(out + pl, key, key_len);
    out[n - 1] = '}';
    out[n] = '\0';
    return n;
}

/* An error reply's or an unexpected reply's words, for errstr. */
static const char *reply_words(const redisReply *rep)
{
    return rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply";
}

/* A script that answers 1 or 0: LOCK_OK, LOCK_BUSY; else LOCK_ERR. */
static enum lock_result one_or_zero(struct lock_client *c, redisReply *rep, const char *what)
{
    enum lock_result res = LOCK_ERR;
    if (rep->type == REDIS_REPLY_INTEGER && (rep->integer == 0 || rep->integer == 1))
        res = rep->integer == 1 ? LOCK_OK : LOCK_BUSY;
    else
        lock_set_error(c, LOCK_ERR_PROTOCOL, "%s: %s", what, reply_words(rep));
    freeReplyObject(rep);
    return res;
}

/* Keys name and channel, for every script: 2, or 0 (c->err set). */
static int latch_keys(struct lock_client *c, const char *key, size_t key_len, char *channel,
                      const char **keys, size_t *lens)
{
    size_t ch_len = rsn_latch_channel(c, key, key_len, channel);
    if (ch_len == 0) {
        lock_set_error(c, LOCK_ERR_UNSENT, "latch name too long");
        return 0;
    }
    keys[0] = key, lens[0] = key_len;
    keys[1] = channel, lens[1] = ch_len;
    return 2;
}

enum lock_result rsn_latch_set(struct lock_client *c, struct wire_script *s, const char *key,
                               size_t key_len, uint32_t count)
{
    char channel[RSN_NAME_MAX], n[21];
    const char *keys[2];
    size_t klens[2];
    if (latch_keys(c, key, key_len, channel, keys, klens) == 0)
        return LOCK_ERR;
    const char *args[3] = {RSN_LATCH_NEW_MESSAGE, n, "publish"};
    size_t alens[3] = {1, wire_u64(n, count), 7};
    redisReply *rep = rsn_eval(c, s, 2, keys, klens, 3, args, alens);
    return rep == NULL ? LOCK_ERR : one_or_zero(c, rep, "trySetCount");
}

enum lock_result rsn_latch_delete(struct lock_client *c, struct wire_script *s, const char *key,
                                  size_t key_len)
{
    char channel[RSN_NAME_MAX];
    const char *keys[2];
    size_t klens[2];
    if (latch_keys(c, key, key_len, channel, keys, klens) == 0)
        return LOCK_ERR;
    const char *args[2] = {RSN_LATCH_NEW_MESSAGE, "publish"};
    size_t alens[2] = {1, 7};
    redisReply *rep = rsn_eval(c, s, 2, keys, klens, 2, args, alens);
    return rep == NULL ? LOCK_ERR : one_or_zero(c, rep, "delete");
}

enum lock_result rsn_latch_down(struct lock_client *c, struct wire_script *s, const char *key,
                                size_t key_len)
{
    char channel[RSN_NAME_MAX];
    const char *keys[2];
    size_t klens[2];
    if (latch_keys(c, key, key_len, channel, keys, klens) == 0)
        return LOCK_ERR;
    const char *args[2] = {RSN_LATCH_ZERO_MESSAGE, "publish"};
    size_t alens[2] = {1, 7};
    redisReply *rep = rsn_eval(c, s, 2, keys, klens, 2, args, alens);
    if (rep == NULL)
        return LOCK_ERR;
    enum lock_result res = LOCK_OK;
    if (rep->type == REDIS_REPLY_ERROR) {
        lock_set_error(c, LOCK_ERR_PROTOCOL, "countDown: %s", rep->str);
        res = LOCK_ERR;
    }
    freeReplyObject(rep);
    return res;
}

int rsn_latch_count(struct lock_client *c, const char *key, size_t key_len, int64_t *count)
{
    struct rsn_client *r = c->impl;
    const char *argv[2] = {"GET", key};
    size_t lens[2] = {3, key_len};
    redisReply *rep = wire_call(c, &r->wire, 2, argv, lens);
    if (rep == NULL)
        return -1;
    int rc = 0;
    if (rep->type == REDIS_REPLY_NIL)
        *count = 0;
    else if (rep->type == REDIS_REPLY_STRING)
        *count = strtoll(rep->str, NULL, 10);
    else {
        lock_set_error(c, LOCK_ERR_PROTOCOL, "getCount: %s", reply_words(rep));
        rc = -1;
    }
    freeReplyObject(rep);
    return rc;
}
