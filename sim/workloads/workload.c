/* workload.c - the registry of workloads, and what their steps share. */
#include "sim/workloads/workload.h"

#include <stdlib.h>
#include <string.h>

#include "sim/record/clock.h"

extern const struct workload_ops flash_sale_ops;
extern const struct workload_ops cache_rebuild_ops;
extern const struct workload_ops scheduled_tasks_ops;
extern const struct workload_ops order_ids_ops;
extern const struct workload_ops bank_transfer_ops;
extern const struct workload_ops read_mostly_ops;
extern const struct workload_ops pool_ops;
extern const struct workload_ops latch_ops;

/* A new workload adds its line here: the order of `locklab list`; the
 * first is the scenario's default. */
static const struct workload_ops *const workloads[] = {
    &flash_sale_ops,  &cache_rebuild_ops, &scheduled_tasks_ops, &order_ids_ops, &bank_transfer_ops,
    &read_mostly_ops, &pool_ops,          &latch_ops,
};

size_t workload_count(void)
{
    return sizeof(workloads) / sizeof(workloads[0]);
}

const struct workload_ops *workload_at(size_t i)
{
    return i < workload_count() ? workloads[i] : NULL;
}

const struct workload_ops *workload_find(const char *name)
{
    for (size_t i = 0; i < workload_count(); i++)
        if (strcmp(workloads[i]->name, name) == 0)
            return workloads[i];
    return NULL;
}

uint32_t workload_hold_ms(const struct workload_ops *w, const void *settings)
{
    if (w->hold_ms)
        return w->hold_ms(settings);
    for (size_t i = 0; i < w->keys.n; i++)
        if (strcmp(w->keys.keys[i].key, w->hold_key) == 0)
            return *(const uint32_t *)((const char *)settings + w->keys.keys[i].offset);
    return 0;
}

bool workload_attempts(struct workload *w, struct client *cl, uint32_t key,
                       enum attempt (*try_once)(struct workload *, struct client *, uint32_t))
{
    bool optimistic = w->calls->lock_ops(cl)->optimistic;
    uint64_t since = optimistic ? clock_mono_ns() : 0; /* a lock's step is one attempt */
    for (;;) {
        enum attempt a = try_once(w, cl, key);
        if (a != ATTEMPT_REFUSED || !optimistic || !w->calls->retry(cl, since))
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

struct workload *workload_new(const struct workload_ops *ops, const void *settings,
                              const struct workload_run *run, const struct workload_calls *calls)
{
    struct workload *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return NULL;
    w->ops = ops;
    w->calls = calls;
    w->settings = settings;
    w->run = *run;
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
    if (w->res)
        w->calls->store_free(w->res);
    free(w);
}
