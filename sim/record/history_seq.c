/* history_seq.c - the witness's numbers of a history file, checked as they
 * come (history_seq.h says what is promised, and why the state kept is
 * bounded by the keys and the steps still missing). Two hash tables with
 * linear probing hold what waits above a key's watermark: one by seq, for
 * a seq that comes again, one by client, for a client's seqs in order. */
#include "sim/record/history_seq.h"

#include <stdbool.h>
#include <stdlib.h>

#include "sim/record/grow.h"

#define NONE SIZE_MAX

static size_t home(const struct seq_table *t, uint32_t key, uint64_t id)
{
    /* splitmix64's finaliser: the ids on a key come in runs, which a plain
     * modulus would pile into one stretch of the table */
    uint64_t x = id ^ ((uint64_t)key * 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return (size_t)x & (t->cap - 1);
}

static size_t find(const struct seq_table *t, uint32_t key, uint64_t id)
{
    if (t->n == 0)
        return NONE;
    for (size_t i = home(t, key, id);; i = (i + 1) & (t->cap - 1)) {
        const struct seq_slot *s = &t->s[i];
        if (!s->used)
            return NONE;
        if (s->key == key && s->id == id)
            return i;
    }
}

/* The slot for (key, id), found or new; NONE out of memory. */
static size_t slot_for(struct seq_table *t, uint32_t key, uint64_t id)
{
    if (2 * (t->n + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        struct seq_slot *s = calloc(cap, sizeof(*s));
        if (s == NULL)
            return NONE;
        struct seq_table grown = {.s = s, .cap = cap, .n = t->n};
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->s[i].used)
                continue;
            size_t j = home(&grown, t->s[i].key, t->s[i].id);
            while (s[j].used)
                j = (j + 1) & (cap - 1);
            s[j] = t->s[i];
        }
        free(t->s);
        *t = grown;
    }
    size_t i = home(t, key, id);
    for (; t->s[i].used; i = (i + 1) & (t->cap - 1))
        if (t->s[i].key == key && t->s[i].id == id)
            return i;
    t->s[i] = (struct seq_slot){.id = id, .key = key, .used = 1};
    t->n++;
    return i;
}

static int put(struct seq_table *t, uint32_t key, uint64_t id, uint64_t val, uint64_t line)
{
    size_t i = slot_for(t, key, id);
    if (i == NONE)
        return -1;
    t->s[i].val = val;
    t->s[i].line = line;
    return 0;
}

/* Empty slot i, moving back the entries after it that probed past it, so
 * that every lookup still finds its entry before an empty slot. */
static void del(struct seq_table *t, size_t i)
{
    size_t mask = t->cap - 1;
    for (size_t j = (i + 1) & mask; t->s[j].used; j = (j + 1) & mask) {
        size_t h = home(t, t->s[j].key, t->s[j].id);
        /* j's entry may fill the hole at i when its home is not in (i, j] */
        bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
            t->s[i] = t->s[j];
            i = j;
        }
    }
    t->s[i].used = 0;
    t->n--;
}

static int broken(struct seq_fault *f, enum seq_broken kind, uint64_t prev_seq, uint64_t prev_line)
{
    f->kind = kind;
    f->prev_seq = prev_seq;
    f->prev_line = prev_line;
    return 1;
}

int seq_check_add(struct seq_check *s, uint32_t key, uint32_t client, uint64_t seq, uint64_t line,
                  struct seq_fault *f)
{
    *f = (struct seq_fault){.line = line, .seq = seq, .key = key, .client = client};
    if (array_grow(&s->keys, &s->cap_keys, (size_t)key + 1, sizeof(*s->keys)) < 0)
        return -1;
    struct seq_key *k = &s->keys[key];
    if (seq < k->next)
        return broken(f, SEQ_BELOW, k->next, k->next_line);
    size_t i = find(&s->above, key, seq);
    if (i != NONE)
        return broken(f, SEQ_AGAIN, seq, s->above.s[i].line);
    /* a client's newest seq below the watermark is forgotten: seq, not
     * below, is after it */
    i = find(&s->last, key, client);
    if (i != NONE && seq <= s->last.s[i].val)
        return broken(f, SEQ_NOT_AFTER, s->last.s[i].val, s->last.s[i].line);
    if (seq > k->next) {
        if (put(&s->above, key, seq, client, line) < 0 || put(&s->last, key, client, seq, line) < 0)
            return -1;
        return 0;
    }
    /* seq is the step the key waited for: the watermark moves past it and
     * past those above that came before it */
    k->next = seq + 1;
    k->next_line = line;
    while ((i = find(&s->above, key, k->next)) != NONE) {
        uint32_t c = (uint32_t)s->above.s[i].val;
        del(&s->above, i);
        size_t j = find(&s->last, key, c);
        if (j != NONE && s->last.s[j].val == k->next)
            del(&s->last, j);
        k->next++;
    }
    return 0;
}

size_t seq_check_held(const struct seq_check *s)
{
    return s->above.n + s->last.n;
}

void seq_check_free(struct seq_check *s)
{
    free(s->keys);
    free(s->above.s);
    free(s->last.s);
    *s = (struct seq_check){0};
}
