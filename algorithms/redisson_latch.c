/* redisson_latch.c - Redisson's RCountDownLatch: a latch, not a lock
 * (struct latch_ops), on redisson_latch_wire.c's key, channel and scripts.
 *
 * await(time) is Redisson's: getCount, and at zero pass at once; else
 * subscribe to the latch's channel, read the count again (a zero between
 * the two is not missed), and wait for a message for the time left,
 * reading the count again on every wake, until it is zero or the time is
 * spent. It waits on RedissonLock's wait (rsn_acquire) with getCount as
 * its try and no holder ttl to bound a wait.
 *
 * Where it differs from Redisson, and why: CountDownLatchPubSub runs its
 * listeners on the zero message alone (the new-count message closes its
 * local latch); the family's wait wakes on "0" and on "1", so a new count
 * set while a waiter waits costs it one GET more, and changes nothing it
 * decides. A missing key reads 0 and passes, as Redisson's does: a Redis
 * restarted without its data opens every latch on it.
 */
#include "algorithms/lock.h"
#include "algorithms/redis.h"
#include "algorithms/redisson_wire.h"

enum { SCRIPT_SET, SCRIPT_DOWN, SCRIPT_DELETE, N_SCRIPTS };

static const char *const script_bodies[N_SCRIPTS] = {
    [SCRIPT_SET] = rsn_latch_set_script,
    [SCRIPT_DOWN] = rsn_latch_down_script,
    [SCRIPT_DELETE] = rsn_latch_delete_script,
};

static int latch_connect(struct lock_client *c)
{
    return rsn_open(c, sizeof(struct rsn_client), script_bodies, N_SCRIPTS);
}

static struct wire_script *script(struct lock_client *c, int which)
{
    return &((struct rsn_client *)c->impl)->wire.scripts[which];
}

static enum lock_result latch_set_count(struct lock_client *c, const char *key, size_t key_len,
                                        uint32_t count)
{
    return rsn_latch_set(c, script(c, SCRIPT_SET), key, key_len, count);
}

static enum lock_result latch_remove(struct lock_client *c, const char *key, size_t key_len)
{
    return rsn_latch_delete(c, script(c, SCRIPT_DELETE), key, key_len);
}

static enum lock_result latch_count_down(struct lock_client *c, const char *key, size_t key_len)
{
    return rsn_latch_down(c, script(c, SCRIPT_DOWN), key, key_len);
}

/* One look at the count (an rsn_try_fn): zero passes; no ttl bounds the
 * wait for the next message. */
static int latch_open(struct lock_client *c, const char *key, size_t key_len, uint32_t ttl_ms,
                      uint64_t *token, int64_t *left)
{
    (void)ttl_ms;
    *token = 0;
    *left = -1;
    int64_t count;
    if (rsn_latch_count(c, key, key_len, &count) < 0)
        return -1;
    return count <= 0; /* Redisson waits while getCount() > 0 */
}

static enum lock_result latch_await(struct lock_client *c, const char *key, size_t key_len,
                                    uint32_t wait_ms)
{
    struct lock_grant g = {0};
    return rsn_acquire(c, latch_open, rsn_latch_channel, key, key_len, 0, wait_ms, &g);
}

static const struct latch_ops latch = {
    .set_count = latch_set_count,
    .count_down = latch_count_down,
    .await = latch_await,
    .remove = latch_remove,
};

const struct lock_ops redisson_latch_ops = {
    .name = "redisson-latch",
    .summary = "Redisson's RCountDownLatch: trySetCount, countDown publishing the zero, await on "
               "its channel",
    .server = "redis",
    .family = &redis_family,
    .leaseless = true, /* a count, no owner and no ttl */
    .latch = &latch,
    .connect = latch_connect,
    .disconnect = rsn_close,
    .crash = rsn_close,
};
