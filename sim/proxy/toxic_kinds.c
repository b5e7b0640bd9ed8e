/* toxic_kinds.c - the one list of toxics, one line each, and what may be
 * asked of their parameters by key.
 *
 * The network fault kinds are these toxics in this order (but the
 * internal ones), each numbered in history files by its fault_number,
 * not by its place here.
 */
#include <string.h>

#include "sim/proxy/toxic_kind.h"

#define TOXICS(X)                                                                                  \
    X(latency)                                                                                     \
    X(bandwidth)                                                                                   \
    X(timeout)                                                                                     \
    X(reset_peer)                                                                                  \
    X(limit_data)                                                                                  \
    X(slicer)                                                                                      \
    X(down)                                                                                        \
    X(hold)

#define DECLARE(name) extern const struct toxic_kind toxic_##name;
#define POINT(name)   &toxic_##name,
TOXICS(DECLARE)
static const struct toxic_kind *const kinds[] = {TOXICS(POINT)};

#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

size_t toxic_kind_count(void)
{
    return N_KINDS;
}

const struct toxic_kind *toxic_kind_at(size_t i)
{
    return i < N_KINDS ? kinds[i] : NULL;
}

const struct toxic_kind *toxic_kind_find(const char *name)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (strcmp(kinds[i]->name, name) == 0)
            return kinds[i];
    return NULL;
}

const struct setting_key *toxic_param(const struct toxic_kind *k, const char *key)
{
    for (size_t i = 0; k && i < k->params.n; i++)
        if (strcmp(k->params.keys[i].key, key) == 0)
            return &k->params.keys[i];
    return NULL;
}

size_t toxic_params_all(const struct setting_key **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < N_KINDS; i++)
        for (size_t j = 0; j < kinds[i]->params.n; j++) {
            const struct setting_key *k = &kinds[i]->params.keys[j];
            bool seen = false;
            for (size_t s = 0; s < n && !seen; s++)
                seen = strcmp(out[s]->key, k->key) == 0;
            if (!seen && n < max)
                out[n++] = k;
        }
    return n;
}
