/* nest.c - re-entries as a stack of varint-coded deltas (nest.h). */
#include "sim/check/nest.h"

#include <stdlib.h>

#include "sim/record/history.h"

enum { HAS_ASK = 1, HAS_MODE = 2, HAS_TOKEN = 4, HAS_PERMITS = 8, FLAG_BITS = 4 };

void nest_start(struct nest *t, const struct section *base, uint64_t below_id)
{
    t->proc = base->client;
    t->owner = base->owner;
    t->key = base->key;
    t->n = 0;
    t->len = 0;
    t->top_from = base->from_ns;
    t->top_id = below_id;
}

/* Room for want more bytes; the growth touches no page it does not write
 * (a realloc of a large block maps, it does not fill). */
static int room(struct nest *t, size_t want)
{
    if (t->len + want <= t->cap)
        return 0;
    size_t cap = t->cap ? t->cap + t->cap / 2 : 256;
    while (cap < t->len + want)
        cap += cap / 2;
    unsigned char *b = realloc(t->buf, cap);
    if (b == NULL)
        return -1;
    t->buf = b;
    t->cap = cap;
    return 0;
}

static void put(struct nest *t, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        t->buf[t->len++] = (unsigned char)(v | 0x80);
    t->buf[t->len++] = (unsigned char)v;
}

/* The varint that ends at *end, read backwards: every byte of a varint but
 * its last has the high bit set. *end moves to its first byte. */
static uint64_t get_back(const unsigned char *buf, size_t *end)
{
    size_t i = *end - 1;
    while (i > 0 && (buf[i - 1] & 0x80))
        i--;
    *end = i;
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        v |= (uint64_t)(buf[i] & 0x7f) << shift;
        if (!(buf[i++] & 0x80))
            return v;
    }
}

int nest_push(struct nest *t, const struct section *s, uint64_t id)
{
    if (id <= t->top_id || id - t->top_id - 1 >= (UINT64_C(1) << (64 - FLAG_BITS)) ||
        s->from_ns < t->top_from || s->asked_ns > s->from_ns)
        return -1;
    unsigned flags = (s->asked_ns != s->from_ns ? HAS_ASK : 0) |
                     (s->mode != LOCK_MODE_EXCLUSIVE ? HAS_MODE : 0) | (s->token ? HAS_TOKEN : 0) |
                     (s->permits ? HAS_PERMITS : 0);
    if (room(t, 6 * 10) < 0)
        return -1;
    if (flags & HAS_PERMITS)
        put(t, s->permits);
    if (flags & HAS_TOKEN)
        put(t, s->token);
    if (flags & HAS_MODE)
        put(t, s->mode);
    if (flags & HAS_ASK)
        put(t, s->from_ns - s->asked_ns);
    put(t, s->from_ns - t->top_from);
    put(t, (id - t->top_id - 1) << FLAG_BITS | flags);
    t->top_from = s->from_ns;
    t->top_id = id;
    t->n++;
    return 0;
}

/* The top re-entry taken off: its section and id; the top is the one below. */
static struct section pop_one(struct nest *t, uint64_t *id)
{
    struct section s = {.key = t->key,
                        .owner = t->owner,
                        .client = t->proc,
                        .from_ns = t->top_from,
                        .seq_from = HISTORY_NO_SEQ};
    *id = t->top_id;
    uint64_t hdr = get_back(t->buf, &t->len);
    unsigned flags = (unsigned)(hdr & ((1u << FLAG_BITS) - 1));
    t->top_id -= (hdr >> FLAG_BITS) + 1;
    t->top_from -= get_back(t->buf, &t->len);
    s.asked_ns = s.from_ns - (flags & HAS_ASK ? get_back(t->buf, &t->len) : 0);
    if (flags & HAS_MODE)
        s.mode = (uint8_t)get_back(t->buf, &t->len);
    if (flags & HAS_TOKEN)
        s.token = get_back(t->buf, &t->len);
    if (flags & HAS_PERMITS)
        s.permits = (uint32_t)get_back(t->buf, &t->len);
    t->n--;
    return s;
}

void nest_pop(struct nest *t)
{
    uint64_t id;
    (void)pop_one(t, &id);
}

int nest_take(struct nest *t, struct section **s, uint64_t **ids, size_t *n)
{
    size_t m = (size_t)t->n;
    *s = malloc((m ? m : 1) * sizeof(**s));
    *ids = malloc((m ? m : 1) * sizeof(**ids));
    if (*s == NULL || *ids == NULL) {
        free(*s);
        free(*ids);
        return -1;
    }
    for (size_t i = m; i-- > 0;)
        (*s)[i] = pop_one(t, &(*ids)[i]);
    *n = m;
    nest_free(t);
    return 0;
}

void nest_free(struct nest *t)
{
    free(t->buf);
    t->buf = NULL;
    t->cap = t->len = 0;
    t->n = 0;
}
