/* toxics.c - what each toxic does to the bytes of a connection.
 *
 * A chunk read from one side is given the moment it may leave (latency,
 * bandwidth, slicer), or dropped (timeout), or cut short (limit_data), as
 * it is queued; the loop in pump.c sends it when that moment has come and
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

/* A uniform draw in [0, n]. */
static uint64_t draw_upto(struct proxy *p, uint64_t n)
{
    return n ? proxy_random(p) % (n + 1) : 0;
}

bool toxic_reaches(const struct toxic *t, size_t e, size_t g)
{
    if (!(t->endpoints & (1u << e)))
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
        if (t->type == TOXIC_DOWN || !toxic_reaches(t, l->ep, l->group))
            continue;
        /* toxicity: drawn once per connection, as Toxiproxy does */
        double u = (double)(proxy_random(p) >> 11) / 9007199254740992.0;
        if (t->toxicity < 1.0 && u >= t->toxicity)
            continue;
        l->applies |= bit;
        p->st.toxic_links[i]++;
        if (t->type == TOXIC_LIMIT_DATA)
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
        enum toxic_type ty = p->slot[__builtin_ctzll(set)].t.type;
        if (ty == TOXIC_TIMEOUT || ty == TOXIC_HOLD)
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
        bool timed =
            s->t.type == TOXIC_RESET_PEER || (s->t.type == TOXIC_TIMEOUT && s->t.timeout_ms);
        if (!timed)
            continue;
        uint64_t from = s->since_ns > l->created_ns ? s->since_ns : l->created_ns;
        uint64_t t = from + (uint64_t)s->t.timeout_ms * 1000000u;
        if (t <= when) {
            when = t;
            *reset = s->t.type == TOXIC_RESET_PEER;
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

/* How the toxics in force shape this chunk. */
struct shape {
    uint64_t delay_ns;  /* latency + jitter */
    uint32_t rate_kbs;  /* the slowest bandwidth, 0 = none */
    uint32_t slice;     /* slicer: average size, 0 = none */
    uint32_t variation; /* slicer */
    uint64_t gap_ns;    /* slicer: between two slices */
    uint64_t limit;     /* limit_data: bytes (0: close at the first byte) */
    bool limited;       /* a limit_data toxic is in force */
    bool drop;          /* timeout */
};

static void shape_of(struct proxy *p, uint64_t set, struct shape *sh)
{
    memset(sh, 0, sizeof(*sh));
    for (; set; set &= set - 1) {
        const struct toxic *t = &p->slot[__builtin_ctzll(set)].t;
        switch (t->type) {
        case TOXIC_LATENCY: {
            int64_t d = (int64_t)t->latency_ms * 1000000 +
                        ((int64_t)draw_upto(p, 2ull * t->jitter_ms * 1000000u) -
                         (int64_t)t->jitter_ms * 1000000);
            sh->delay_ns += d > 0 ? (uint64_t)d : 0;
            break;
        }
        case TOXIC_BANDWIDTH:
            if (sh->rate_kbs == 0 || t->rate_kbs < sh->rate_kbs)
                sh->rate_kbs = t->rate_kbs;
            break;
        case TOXIC_SLICER:
            sh->slice = t->average_size;
            sh->variation = t->size_variation;
            sh->gap_ns = (uint64_t)t->delay_us * 1000u;
            break;
        case TOXIC_LIMIT_DATA:
            if (!sh->limited || t->bytes < sh->limit)
                sh->limit = t->bytes;
            sh->limited = true;
            break;
        case TOXIC_TIMEOUT:
            sh->drop = true;
            break;
        default:
            break;
        }
    }
}

static size_t slice_len(struct proxy *p, const struct shape *sh, size_t left)
{
    if (sh->slice == 0)
        return left;
    uint64_t v = sh->variation < sh->slice ? sh->variation : sh->slice - 1;
    uint64_t len = sh->slice - v + draw_upto(p, 2 * v);
    if (len == 0)
        len = 1;
    return len < left ? (size_t)len : left;
}

void toxics_enqueue(struct proxy *p, struct link *l, struct flow *f, unsigned dir, const char *buf,
                    size_t n, uint64_t now)
{
    struct shape sh;
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
