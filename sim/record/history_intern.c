/* history_intern.c - the readers' string tables (history_intern.h):
 * open addressing with FNV-1a, grown to stay at most half full. */
#include "sim/record/history_intern.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_mem(const char *s, size_t len)
{
    uint64_t x = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        x = (x ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return x;
}

static int intern_grow(struct intern *t)
{
    size_t n_slot = t->n_slot ? 2 * t->n_slot : 64;
    uint32_t *slot = calloc(n_slot, sizeof(*slot));
    if (slot == NULL)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = hash_mem(t->names[i], strlen(t->names[i])) & (n_slot - 1);
        while (slot[j])
            j = (j + 1) & (n_slot - 1);
        slot[j] = (uint32_t)i + 1;
    }
    free(t->slot);
    t->slot = slot;
    t->n_slot = n_slot;
    return 0;
}

static int intern_add(struct intern *t, const char *s, size_t len, size_t at, uint32_t *id)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        char **names = realloc(t->names, cap * sizeof(*names));
        if (names == NULL)
            return -1;
        t->names = names;
        t->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, s, len);
    copy[len] = '\0';
    t->names[t->n] = copy;
    *id = (uint32_t)t->n;
    t->slot[at] = (uint32_t)++t->n;
    return 0;
}

int intern_id(struct intern *t, const char *s, size_t len, uint32_t *id, int *added)
{
    if (added)
        *added = 0;
    if ((t->n + 1) * 2 > t->n_slot && intern_grow(t) < 0)
        return -1;
    size_t j = hash_mem(s, len) & (t->n_slot - 1);
    for (; t->slot[j]; j = (j + 1) & (t->n_slot - 1)) {
        const char *name = t->names[t->slot[j] - 1];
        if (strncmp(name, s, len) == 0 && name[len] == '\0') {
            *id = t->slot[j] - 1;
            return 0;
        }
    }
    if (t->n >= UINT32_MAX - 1)
        return -1;
    if (added)
        *added = 1;
    return intern_add(t, s, len, j, id);
}

void intern_release(struct intern *t)
{
    free(t->slot);
    memset(t, 0, sizeof(*t));
}

void intern_free(struct intern *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->names);
    intern_release(t);
}
