/* grow.h - the one helper of the growing arrays the history's readers,
 * writers and checkers keep: room for want elements, the new part zeroed.
 * Capacity doubles, so a stream of appends costs O(1) each on average. */
#ifndef LOCKLAB_GROW_H
#define LOCKLAB_GROW_H

#include <stdlib.h>
#include <string.h>

/* *pp (an array of *cap elements of size bytes each) made to hold at
 * least want; 0, or -1 out of memory (then unchanged). */
static inline int array_grow(void *pp, size_t *cap, size_t want, size_t size)
{
    if (want <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < want)
        n *= 2;
    unsigned char *p = realloc(*(void **)pp, n * size);
    if (p == NULL)
        return -1;
    memset(p + *cap * size, 0, (n - *cap) * size);
    *(void **)pp = p;
    *cap = n;
    return 0;
}

#endif
