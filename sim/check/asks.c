/* asks.c - each process's last acquire invoke (asks.h). */
#include "sim/check/asks.h"

#include <stdbool.h>

#include "sim/record/grow.h"

struct ask {
    uint64_t t_ns;
    uint32_t key;
    bool seen;
};

int asks_event(struct asks *a, const struct history_event *e)
{
    if (e->f != HF_ACQUIRE || e->type != HT_INVOKE || e->client >= HISTORY_MAX_CLIENTS)
        return 0;
    if (e->client >= a->n &&
        array_grow(&a->by_proc, &a->n, (size_t)e->client + 1, sizeof(*a->by_proc)) < 0)
        return -1;
    a->by_proc[e->client] = (struct ask){.t_ns = e->t_ns, .key = e->key, .seen = true};
    return 0;
}

uint64_t asks_asked_ns(const struct asks *a, const struct history_event *ok)
{
    if (ok->client >= a->n)
        return ok->t_ns;
    const struct ask *k = &a->by_proc[ok->client];
    return k->seen && k->key == ok->key && k->t_ns <= ok->t_ns ? k->t_ns : ok->t_ns;
}

void asks_free(struct asks *a)
{
    free(a->by_proc);
    a->by_proc = NULL;
    a->n = 0;
}
