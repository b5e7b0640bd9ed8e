/* client_calls.c - the client's and the store's calls a workload's step
 * makes, as the table the engine hands every workload (workload_calls),
 * so the workloads reach the engine only through it. */
#include "sim/engine/client.h"
#include "sim/engine/resource.h"
#include "sim/engine/run_ctx.h"
#include "sim/record/clock.h"
#include "sim/workloads/workload.h"

static uint32_t client_id(const struct client *cl)
{
    return cl->id;
}

static uint64_t client_section_from_ns(const struct client *cl)
{
    return cl->from_ns;
}

static uint64_t client_start_ns(const struct client *cl)
{
    return cl->run->t0_ns;
}

static uint64_t client_deadline_ns(const struct client *cl)
{
    return cl->run->deadline_ns;
}

static const struct lock_ops *client_lock_ops(const struct client *cl)
{
    return cl->run->ops;
}

static bool client_limited(const struct client *cl)
{
    return cl->limited;
}

static void client_count(struct client *cl, enum stat_kind k)
{
    client_bump(cl, k);
}

const struct workload_calls client_calls = {
    .lock = client_lock,
    .lock_wait = client_lock_wait,
    .lock_mode = client_lock_mode,
    .lock_all = client_lock_all,
    .hold = client_hold,
    .commit = client_commit,
    .unlock = client_unlock,
    .unlock_at = client_unlock_at,
    .token = client_token,
    .token_of = client_token_of,
    .idle_until = client_idle_until,
    .random = client_random,
    .retry = client_retry,
    .id = client_id,
    .section_from_ns = client_section_from_ns,
    .start_ns = client_start_ns,
    .deadline_ns = client_deadline_ns,
    .lock_ops = client_lock_ops,
    .limited = client_limited,
    .count = client_count,
    .now_ns = clock_mono_ns,
    .store_new = resource_new,
    .store_free = resource_free,
    .store_preset = resource_preset,
    .store_read = resource_read,
    .store_write = resource_write,
    .store_value = resource_value,
    .latch_set = client_latch_set,
    .latch_delete = client_latch_delete,
    .latch_down = client_latch_down,
    .latch_await = client_latch_await,
};
