/* spans.c - fault spans paired as their events come (spans.h). */
#include "sim/check/spans.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/record/grow.h"

size_t span_track_event(struct span_track *t, const struct history_event *e)
{
    int32_t client = e->client == HISTORY_SERVERS ? -1 : (int32_t)e->client;
    if (e->arg2 == 0) {
        if (array_grow(&t->fs, &t->cap, t->n + 1, sizeof(*t->fs)) < 0 ||
            array_grow(&t->open, &t->cap_open, t->n_open + 1, sizeof(*t->open)) < 0)
            return SPAN_OOM;
        t->fs[t->n] = (struct fault_span){.type = e->arg,
                                          .client = client,
                                          .fault = e->key,
                                          .servers = e->owner,
                                          .from_ns = e->t_ns,
                                          .to_ns = UINT64_MAX};
        t->open[t->n_open++] = t->n;
        return t->n++;
    }
    for (size_t i = 0; i < t->n_open; i++) {
        size_t k = t->open[i];
        struct fault_span *f = &t->fs[k];
        if (f->type == e->arg && f->client == client && f->fault == e->key) {
            f->to_ns = e->t_ns;
            memmove(&t->open[i], &t->open[i + 1], (t->n_open - i - 1) * sizeof(*t->open));
            t->n_open--;
            return k;
        }
    }
    return SIZE_MAX;
}

void span_track_free(struct span_track *t)
{
    free(t->fs);
    free(t->open);
    memset(t, 0, sizeof(*t));
}
