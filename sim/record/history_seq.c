/* history_seq.c - the witness's numbers of a history file, checked once
 * the whole file is read (history_seq.h says what is promised). Sorting
 * the marks costs 24 bytes a mark, where a hash set of every (key, seq)
 * would cost more than the history itself. */
#include "sim/record/history_seq.h"

#include <stdlib.h>

int seq_marks_add(struct seq_marks *s, const struct seq_mark *m)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        struct seq_mark *p = realloc(s->m, cap * sizeof(*p));
        if (p == NULL)
            return -1;
        s->m = p;
        s->cap = cap;
    }
    s->m[s->n++] = *m;
    return 0;
}

#define CMP(x, y) (((x) > (y)) - ((x) < (y)))

static int by_key_seq(const void *pa, const void *pb)
{
    const struct seq_mark *a = pa, *b = pb;
    int c = CMP(a->key, b->key);
    c = c ? c : CMP(a->seq, b->seq);
    return c ? c : CMP(a->line, b->line);
}

static int by_key_client(const void *pa, const void *pb)
{
    const struct seq_mark *a = pa, *b = pb;
    int c = CMP(a->key, b->key);
    c = c ? c : CMP(a->client, b->client);
    return c ? c : CMP(a->line, b->line);
}

/* Keep in f the fault at the earlier line, the one seen first on a tie. */
static void keep_earliest(struct seq_fault *f, const struct seq_mark *prev,
                          const struct seq_mark *at, bool again)
{
    if (f->line != 0 && f->line <= at->line)
        return;
    *f = (struct seq_fault){.line = at->line,
                            .prev_line = prev->line,
                            .seq = at->seq,
                            .prev_seq = prev->seq,
                            .key = at->key,
                            .client = at->client,
                            .again = again};
}

bool seq_marks_broken(struct seq_marks *s, struct seq_fault *f)
{
    *f = (struct seq_fault){0};
    if (s->n < 2)
        return false;
    /* Within a (key, seq) run sorted by line, its second mark is where the
     * seq first came again. */
    qsort(s->m, s->n, sizeof(*s->m), by_key_seq);
    for (size_t i = 1; i < s->n; i++)
        if (s->m[i].key == s->m[i - 1].key && s->m[i].seq == s->m[i - 1].seq)
            keep_earliest(f, &s->m[i - 1], &s->m[i], true);
    qsort(s->m, s->n, sizeof(*s->m), by_key_client);
    for (size_t i = 1; i < s->n; i++) {
        const struct seq_mark *a = &s->m[i - 1], *b = &s->m[i];
        if (a->key == b->key && a->client == b->client && b->seq <= a->seq)
            keep_earliest(f, a, b, false);
    }
    return f->line != 0;
}

void seq_marks_free(struct seq_marks *s)
{
    free(s->m);
    *s = (struct seq_marks){0};
}
