/* workload.c - the list of workloads, by scenario kind. */
#include "workload.h"

#include <stdlib.h>

#include "resource.h"

extern const struct workload_ops flash_sale_ops;
extern const struct workload_ops cache_rebuild_ops;
extern const struct workload_ops scheduled_tasks_ops;

static const struct workload_ops *const workloads[] = {
    [WORKLOAD_FLASH_SALE] = &flash_sale_ops,
    [WORKLOAD_CACHE_REBUILD] = &cache_rebuild_ops,
    [WORKLOAD_SCHEDULED_TASKS] = &scheduled_tasks_ops,
};

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
