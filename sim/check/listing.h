/* listing.h - which overlaps the checker lists, of the many it may count:
 * private to sim/check (sweep.c).
 *
 * The list keeps the first max_listed overlaps in (key, judging) order:
 * the whole-history checker judges one key after another, so this is the
 * order it finds them in; a stream judges the keys interleaved, and keeps
 * the same ones in a max-heap on that order, so a history checked either
 * way lists, and `check` prints, the same pairs.
 */
#ifndef LOCKLAB_LISTING_H
#define LOCKLAB_LISTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/check/checker.h"

struct listing_rank {
    uint32_t key;
    uint64_t n; /* the pair's place in the judging order */
};

struct listing {
    struct listing_rank *rank; /* rank[i] of out->list[i] */
    size_t cap;                /* of rank and out->list */
    uint64_t judged;           /* pairs offered so far */
};

/* Whether a pair on key could still be listed (the list is not full, or
 * key sorts before its last). */
bool listing_wants(const struct listing *l, const struct check_result *out, uint32_t key);
/* Offer v (its sa and sb filled): listed if it is among the first. 0, or
 * -1 out of memory. */
int listing_offer(struct listing *l, struct check_result *out, const struct violation *v);
/* Put out->list in (key, judging) order; frees l's arrays. 0, or -1. */
int listing_finish(struct listing *l, struct check_result *out);
void listing_free(struct listing *l);

#endif
