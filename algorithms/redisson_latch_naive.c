/* redisson_latch_naive.c - deliberately unsafe: redisson-latch's key,
 * scripts and channel, with the await hand-made code gets wrong. It polls
 * getCount every retry_min_ms..retry_max_ms instead of listening, and
 * when its wait runs out it passes anyway: the caller of
 * await(time, unit) that drops the boolean it returns. A waiter whose
 * wait is shorter than the parties' work goes through before the count is
 * zero, which the latch workload must catch. Never point it at a latch a
 * Redisson service uses.
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

static int naive_connect(struct lock_client *c)
{
    return rsn_open(c, sizeof(struct rsn_client), script_bodies, N_SCRIPTS);
}

static struct wire_script *script(struct lock_client *c, int which)
{
    return &((struct rsn_client *)c->impl)->wire.scripts[which];
}

static enum lock_result naive_set_count(struct lock_client *c, const char *key, size_t key_len,
                                        uint32_t count)
{
    return rsn_latch_set(c, script(c, SCRIPT_SET), key, key_len, count);
}

static enum lock_result naive_remove(struct lock_client *c, const char *key, size_t key_len)
{
    return rsn_latch_delete(c, script(c, SCRIPT_DELETE), key, key_len);
}

static enum lock_result naive_count_down(struct lock_client *c, const char *key, size_t key_len)
{
    return rsn_latch_down(c, script(c, SCRIPT_DOWN), key, key_len);
}

static enum lock_result naive_await(struct lock_client *c, const char *key, size_t key_len,
                                    uint32_t wait_ms)
{
    uint64_t deadline = lock_now_ms() + wait_ms;
    uint32_t lo = c->cfg->retry_min_ms, span = c->cfg->retry_max_ms - lo;
    for (;;) {
        int64_t count;
        if (rsn_latch_count(c, key, key_len, &count) < 0)
            return LOCK_ERR;
        if (count <= 0)
            return LOCK_OK;
        uint64_t now = lock_now_ms();
        if (now >= deadline || lock_cancelled(c))
            return LOCK_OK; /* the bug: "timed out" taken for "opened" */
        uint64_t nap = lo + lock_random(c, (uint64_t)span + 1);
        lock_sleep(c, (uint32_t)(now + nap < deadline ? nap : deadline - now));
        c->woken_by_timer++;
    }
}

static const struct latch_ops latch = {
    .set_count = naive_set_count,
    .count_down = naive_count_down,
    .await = naive_await,
    .remove = naive_remove,
};

const struct lock_ops redisson_latch_naive_ops = {
    .name = "redisson-latch-naive",
    .summary = "deliberately unsafe: redisson-latch's wire, an await that polls the count and "
               "passes when its wait runs out",
    .server = "redis",
    .family = &redis_family,
    .leaseless = true,
    .unsafe = true,
    .latch = &latch,
    .connect = naive_connect,
    .disconnect = rsn_close,
    .crash = rsn_close,
};
