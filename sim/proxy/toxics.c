/* toxics.c - what the toxics in force do to the bytes of a connection:
 * the wrapper every toxic shares (its stream, its toxicity, whose
 * connections), around each toxic's own work (sim/proxy/toxics/).
 *
 * A chunk read from one side is given the moment it may leave (delayed,
 * slowed, sliced), or dropped, or cut short, as the toxics' work shapes
 * it, as it is queued; the loop in pump.c sends it when that moment has come and
 * no toxic holds its direction. Times only grow along a flow, so bytes
 * keep their order, as TCP's do.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/proxy/proxy_state.h"

uint64_t proxy_random(struct proxy *p)
{
    /* xorshift64*: repeatable from the seed, enough for toxicity and jitter */
    p->rng ^= p->rng >> 12;
    p->rng ^= p->rng << 25;
    p->rng ^= p->rng >> 27;
    return p->rng * 0x2545F4914F6CDD1DULL;
}

uint64_t proxy_draw_upto(struct proxy *p, uint64_t n)
{
    return n ? proxy_random(p) % (n + 1) : 0;
}

bool toxic_reaches(const struct toxic *t, size_t e, size_t g)
{
    uint32_t eps =
        t->groups && t->groups[g] == TOXIC_OTHER_SIDE ? t->other_endpoints : t->endpoints;
    if (!(eps & (1u << e)))
        return false;
    if (t->groups)
        return t->groups[g] != 0;
    return t->group < 0 || (size_t)t->group == g;
}

void toxics_draw(struct proxy *p, struct link *l, int id)
{
    for (int i = 0; i < PROXY_MAX_TOXICS; i++) {
        if ((id >= 0 && i != id) || !p->slot[i].active)
            continue;
        const struct toxic *t = &p->slot[i].t;
        uint64_t bit = 1ULL << i;
        l->applies &= ~bit;
        if (t->kind->refuses || !toxic_reaches(t, l->ep, l->group))
            continue;
        /* toxicity: drawn once per connection, as Toxiproxy does */
        double u = (double)(proxy_random(p) >> 11) / 9007199254740992.0;
        if (t->toxicity < 1.0 && u >= t->toxicity)
            continue;
        l->applies |= bit;
        p->st.toxic_links[i]++;
        if (t->kind->counts_bytes)
            l->up.limited = l->down.limited = 0;
    }
}

/* The toxics in force on l in direction dir, as a bit set of ids. */
static uint64_t on(const struct proxy *p, const struct link *l, unsigned dir)
{
    uint64_t set = p->active & l->applies, out = 0;
    while (set) {
        int i = __builtin_ctzll(set);
        set &= set - 1;
        if (p->slot[i].t.stream & dir)
            out |= 1ULL << i;
    }
    return out;
}

bool toxics_any_on(const struct proxy *p, const struct link *l, unsigned dir)
{
    return on(p, l, dir) != 0;
}

bool toxics_holding(const struct proxy *p, const struct link *l, unsigned dir)
{
    for (uint64_t set = on(p, l, dir); set; set &= set - 1) {
        if (p->slot[__builtin_ctzll(set)].t.kind->holds)
            return true;
    }
    return false;
}

uint64_t toxics_deadline(const struct proxy *p, const struct link *l, bool *reset, bool *close_)
{
    uint64_t when = NEVER;
    *reset = *close_ = false;
    for (uint64_t set = p->active & l->applies; set; set &= set - 1) {
        const struct slot *s = &p->slot[__builtin_ctzll(set)];
        uint32_t after_ms;
        bool rst;
        if (!s->t.kind->ends || !s->t.kind->ends(&s->t.params, &after_ms, &rst))
            continue;
        uint64_t from = s->since_ns > l->created_ns ? s->since_ns : l->created_ns;
        uint64_t t = from + (uint64_t)after_ms * 1000000u;
        if (t <= when) {
            when = t;
            *reset = rst;
            *close_ = !*reset;
        }
    }
    return when;
}

static void push(struct flow *f, const char *buf, size_t n, uint64_t ready)
{
    struct chunk *c = malloc(sizeof(*c) + n);
    if (c == NULL) {
        f->close_after = true; /* no memory for the bytes: the connection cannot go on whole */
        return;
    }
    c->next = NULL;
    c->ready_ns = ready;
    c->len = (uint32_t)n;
    c->off = 0;
    memcpy(c->data, buf, n);
    if (f->tail)
        f->tail->next = c;
    else
        f->head = c;
    f->tail = c;
    f->queued += n;
}

/* Each toxic in force folds its part in, in the order of their ids (the
 * draws of their work follow it, so a seed repeats a run). */
static void shape_of(struct proxy *p, uint64_t set, struct toxic_shape *sh)
{
    memset(sh, 0, sizeof(*sh));
    for (; set; set &= set - 1) {
        const struct toxic *t = &p->slot[__builtin_ctzll(set)].t;
        if (t->kind->work)
            t->kind->work(&t->params, p, sh);
    }
}

static size_t slice_len(struct proxy *p, const struct toxic_shape *sh, size_t left)
{
    if (sh->slice == 0)
        return left;
    uint64_t v = sh->variation < sh->slice ? sh->variation : sh->slice - 1;
    uint64_t len = sh->slice - v + proxy_draw_upto(p, 2 * v);
    if (len == 0)
        len = 1;
    return len < left ? (size_t)len : left;
}

void toxics_enqueue(struct proxy *p, struct link *l, struct flow *f, unsigned dir, const char *buf,
                    size_t n, uint64_t now)
{
    struct toxic_shape sh;
    shape_of(p, on(p, l, dir), &sh);
    if (sh.drop) { /* a black hole: gone, the connection stays open */
        p->st.bytes_dropped += n;
        return;
    }
    if (sh.limited) {
        uint64_t room = sh.limit > f->limited ? sh.limit - f->limited : 0;
        if (n >= room) {
            p->st.bytes_dropped += n - room;
            n = (size_t)room;
            f->close_after = true;
        }
        f->limited += n;
    }
    uint64_t ready = now + sh.delay_ns;
    if (ready < f->last_ready)
        ready = f->last_ready;
    for (size_t off = 0; off < n;) {
        size_t len = slice_len(p, &sh, n - off);
        if (sh.rate_kbs)
            ready += (uint64_t)len * 1000000u / sh.rate_kbs; /* ns: len / (rate * 1000 B/s) */
        push(f, buf + off, len, ready);
        off += len;
        if (off < n)
            ready += sh.gap_ns;
    }
    f->last_ready = ready;
}
