/* workload.c - the list of workloads, by scenario kind. */
#include "sim/workloads/workload.h"

#include <stdlib.h>
#include <string.h>

#include "sim/engine/client.h"
#include "sim/engine/resource.h"
#include "sim/engine/run_ctx.h"
#include "sim/record/clock.h"

extern const struct workload_ops flash_sale_ops;
extern const struct workload_ops cache_rebuild_ops;
extern const struct workload_ops scheduled_tasks_ops;
extern const struct workload_ops order_ids_ops;
extern const struct workload_ops bank_transfer_ops;
extern const struct workload_ops read_mostly_ops;
extern const struct workload_ops pool_ops;

static const struct workload_ops *const workloads[] = {
    [WORKLOAD_FLASH_SALE] = &flash_sale_ops,
    [WORKLOAD_CACHE_REBUILD] = &cache_rebuild_ops,
    [WORKLOAD_SCHEDULED_TASKS] = &scheduled_tasks_ops,
    [WORKLOAD_ORDER_IDS] = &order_ids_ops,
    [WORKLOAD_BANK_TRANSFER] = &bank_transfer_ops,
    [WORKLOAD_READ_MOSTLY] = &read_mostly_ops,
    [WORKLOAD_POOL] = &pool_ops,
};

const char *workload_summary(enum workload_kind w)
{
    return (size_t)w < sizeof(workloads) / sizeof(workloads[0]) ? workloads[w]->summary : NULL;
}

bool workload_attempts(struct workload *w, struct client *cl, uint32_t key,
                       enum attempt (*try_once)(struct workload *, struct client *, uint32_t))
{
    bool optimistic = cl->run->ops->optimistic;
    uint64_t since = optimistic ? clock_mono_ns() : 0; /* a lock's step is one attempt */
    for (;;) {
        enum attempt a = try_once(w, cl, key);
        if (a != ATTEMPT_REFUSED || !optimistic || !client_retry(cl, since))
            return a != ATTEMPT_NO_LOCK;
    }
}

int workload_alloc_keys(struct workload *w, size_t n)
{
    w->keys = calloc(n, sizeof(*w->keys));
    w->key_lens = calloc(n, sizeof(*w->key_lens));
    if (w->keys == NULL || w->key_lens == NULL)
        return -1;
    w->n_keys = n;
    return 0;
}

int workload_set_key(struct workload *w, size_t i, const char *name)
{
    size_t n = strlen(name);
    w->keys[i] = malloc(n + 1);
    if (w->keys[i] == NULL)
        return -1;
    memcpy(w->keys[i], name, n + 1);
    w->key_lens[i] = n;
    return 0;
}

struct workload *workload_new(const struct scenario *s)
{
    struct workload *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return NULL;
    w->ops = workloads[s->workload];
    w->scn = s;
    if (w->ops->init(w) < 0) {
        workload_free(w);
        return NULL;
    }
    return w;
}

void workload_free(struct workload *w)
{
    if (w == NULL)
        return;
    if (w->ops && w->ops->free)
        w->ops->free(w);
    if (w->keys)
        for (size_t i = 0; i < w->n_keys; i++)
            free(w->keys[i]);
    free(w->keys);
    free(w->key_lens);
    resource_free(w->res);
    free(w);
}
