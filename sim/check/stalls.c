/* stalls.c - host stalls cut to their quiet part as the events come
 * (stalls.h): each stall waits, its best stretch so far beside it, until
 * an event at or past its end says it is over; then it is kept only if
 * that stretch is min_ns long, so the list grows with the stalls the
 * check reports, not with every stall line of a long run on a busy host. */
#include "sim/check/stalls.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct found {
    struct host_stall q; /* its longest quiet stretch so far */
    uint64_t from_ns;    /* the stall's start */
    uint64_t to_ns;      /* and its end */
    uint64_t last;       /* the latest event inside it */
    bool over;
};

struct stalls {
    uint64_t min_ns;
    struct found *f; /* in the order the stalls began */
    size_t n, cap;
    size_t n_kept;   /* f[0 .. n_kept): over, and min_ns long */
    size_t first_on; /* f[n_kept .. first_on): over, to be dropped; the rest still on */
};

struct stalls *stalls_begin(uint64_t min_ns)
{
    struct stalls *s = calloc(1, sizeof(*s));
    if (s)
        s->min_ns = min_ns;
    return s;
}

static bool long_enough(const struct stalls *s, const struct found *f)
{
    return f->q.to_ns - f->q.from_ns >= s->min_ns;
}

static void cut(struct found *f, uint64_t t)
{
    if (t - f->last > f->q.to_ns - f->q.from_ns)
        f->q = (struct host_stall){f->last, t};
    f->last = t;
}

/* Close the gap the stalls over and too short left: the kept, then the
 * stalls still on. */
static void drop_over(struct stalls *s)
{
    if (s->first_on == s->n_kept)
        return;
    memmove(&s->f[s->n_kept], &s->f[s->first_on], (s->n - s->first_on) * sizeof(*s->f));
    s->n -= s->first_on - s->n_kept;
    s->first_on = s->n_kept;
}

int stalls_event(struct stalls *s, const struct history_event *e)
{
    /* an event at a stall's start is passed over, one at or past its end
     * ends it, and any other but a stall splits it */
    for (size_t i = s->first_on; i < s->n; i++) {
        struct found *f = &s->f[i];
        if (f->over || e->t_ns <= f->from_ns)
            continue;
        if (e->t_ns >= f->to_ns) {
            cut(f, f->to_ns);
            f->over = true;
        } else if (e->f != HF_STALL) {
            cut(f, e->t_ns);
        }
    }
    /* stalls never overlap, so they are over in the order they began */
    for (; s->first_on < s->n && s->f[s->first_on].over; s->first_on++)
        if (long_enough(s, &s->f[s->first_on]))
            s->f[s->n_kept++] = s->f[s->first_on];
    if (e->f != HF_STALL)
        return 0;
    drop_over(s);
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        struct found *p = realloc(s->f, cap * sizeof(*p));
        if (p == NULL)
            return -1;
        s->f = p;
        s->cap = cap;
    }
    s->f[s->n++] = (struct found){
        .q = {e->t_ns, e->t_ns}, .from_ns = e->t_ns, .to_ns = e->end_ns, .last = e->t_ns};
    return 0;
}

size_t stalls_held(const struct stalls *s)
{
    return s->n - (s->first_on - s->n_kept);
}

int stalls_end(struct stalls *s, struct host_stall **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    struct host_stall *st = malloc((s->n ? s->n : 1) * sizeof(*st));
    if (st == NULL) {
        free(s->f);
        free(s);
        return -1;
    }
    size_t m = 0;
    drop_over(s);
    for (size_t i = 0; i < s->n; i++) {
        struct found *f = &s->f[i];
        if (!f->over)
            cut(f, f->to_ns);
        if (long_enough(s, f))
            st[m++] = f->q;
    }
    free(s->f);
    free(s);
    *out = st;
    *n = m;
    return 0;
}
