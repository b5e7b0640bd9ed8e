/* history_buf.c - the per-client history buffers (history.h) and their
 * merge into one history ordered by time.
 *
 * A buffer is a list of fixed-size chunks: appending never moves what is
 * already recorded (no realloc-and-copy on a client's hot path), and a
 * chunk is malloc'ed only when the previous one is full.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sim/record/history.h"

/* A buffer's first chunk is small and each next one twice the last, up to
 * CHUNK_EVENTS: ten thousand clients cost little before they have run. A
 * buffer drained while the run goes hands its consumed chunks back (one
 * spare at a time), so a client that the recorder keeps up with runs on two
 * chunks whatever the run's length. */
#define CHUNK_FIRST  32
#define CHUNK_EVENTS 4096

struct chunk {
    struct chunk *next;
    size_t n, cap;
    struct history_event ev[];
};

struct history_buf {
    /* the producer's: the thread that appends */
    struct chunk *tail;
    size_t len;
    uint64_t dropped;
    /* shared: what the producer has published, the earliest time it may
     * still append, a consumed chunk handed back */
    _Atomic size_t published;
    _Atomic uint64_t floor;
    _Atomic(struct chunk *) spare;
    /* the consumer's (history_buf_take), or the merge's once the producer is
     * done: the first chunk still held and the next event to take in it */
    struct chunk *head;
    size_t head_pos, taken;
};

struct history_buf *history_buf_new(void)
{
    struct history_buf *b = calloc(1, sizeof(*b));
    if (b) {
        atomic_init(&b->published, 0);
        atomic_init(&b->floor, 0);
        atomic_init(&b->spare, NULL);
    }
    return b;
}

void history_buf_free(struct history_buf *b)
{
    if (b == NULL)
        return;
    struct chunk *c = b->head;
    while (c) {
        struct chunk *next = c->next;
        free(c);
        c = next;
    }
    free(atomic_load(&b->spare));
    free(b);
}

/* The next chunk: the spare the consumer handed back, else a new one twice
 * the last (the consumer has fallen behind, or there is none). */
static struct chunk *new_chunk(struct history_buf *b)
{
    struct chunk *c = atomic_exchange_explicit(&b->spare, NULL, memory_order_acquire);
    if (c == NULL) {
        size_t cap = b->tail == NULL               ? CHUNK_FIRST
                     : b->tail->cap < CHUNK_EVENTS ? 2 * b->tail->cap
                                                   : CHUNK_EVENTS;
        c = malloc(sizeof(*c) + cap * sizeof(c->ev[0]));
        if (c == NULL)
            return NULL;
        c->cap = cap;
    }
    c->next = NULL;
    c->n = 0;
    return c;
}

int history_append(struct history_buf *b, const struct history_event *e)
{
    if (b->tail == NULL || b->tail->n == b->tail->cap) {
        struct chunk *c = new_chunk(b);
        if (c == NULL) {
            b->dropped++;
            return -1;
        }
        if (b->tail)
            b->tail->next = c;
        else
            b->head = c; /* before the first event is published: the consumer's from then on */
        b->tail = c;
    }
    b->tail->ev[b->tail->n++] = *e;
    b->len++;
    atomic_store_explicit(&b->published, b->len, memory_order_release);
    return 0;
}

void history_buf_floor(struct history_buf *b, uint64_t t_ns)
{
    atomic_store_explicit(&b->floor, t_ns, memory_order_release);
}

void history_buf_close(struct history_buf *b)
{
    history_buf_floor(b, UINT64_MAX);
}

uint64_t history_buf_floor_of(struct history_buf *b)
{
    return atomic_load_explicit(&b->floor, memory_order_acquire);
}

/* A chunk the consumer is done with: the producer's next, or freed. */
static void hand_back(struct history_buf *b, struct chunk *c)
{
    struct chunk *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&b->spare, &none, c, memory_order_release,
                                                 memory_order_relaxed))
        free(c);
}

size_t history_buf_take(struct history_buf *b, struct history_event *out, size_t max)
{
    size_t avail = atomic_load_explicit(&b->published, memory_order_acquire) - b->taken;
    size_t k = 0;
    while (k < avail && k < max) {
        struct chunk *c = b->head;
        if (b->head_pos == c->cap) { /* an event is waiting: the producer has moved on */
            b->head = c->next;
            b->head_pos = 0;
            hand_back(b, c);
            continue;
        }
        size_t m = c->cap - b->head_pos;
        if (m > avail - k)
            m = avail - k;
        if (m > max - k)
            m = max - k;
        memcpy(out + k, c->ev + b->head_pos, m * sizeof(*out));
        b->head_pos += m;
        k += m;
    }
    b->taken += k;
    return k;
}

size_t history_buf_len(const struct history_buf *b)
{
    return b->len;
}

uint64_t history_buf_dropped(const struct history_buf *b)
{
    return b->dropped;
}

/* ---- merge ------------------------------------------------------------ */

/* Read position in one buffer; `src` (the buffer's index) breaks ties so
 * equal (time, client) events keep the order the buffers were given in. */
struct cursor {
    const struct chunk *c;
    size_t pos;
    size_t src;
};

static const struct history_event *cur_ev(const struct cursor *k)
{
    return &k->c->ev[k->pos];
}

static int ev_cmp(const struct history_event *a, const struct history_event *b)
{
    if (a->t_ns != b->t_ns)
        return a->t_ns < b->t_ns ? -1 : 1;
    if (a->client != b->client)
        return a->client < b->client ? -1 : 1;
    return 0;
}

static bool cur_less(const struct cursor *a, const struct cursor *b)
{
    int c = ev_cmp(cur_ev(a), cur_ev(b));
    return c < 0 || (c == 0 && a->src < b->src);
}

static void heap_down(struct cursor *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && cur_less(&h[l], &h[m]))
            m = l;
        if (l + 1 < n && cur_less(&h[l + 1], &h[m]))
            m = l + 1;
        if (m == i)
            return;
        struct cursor t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static bool cur_advance(struct cursor *k)
{
    if (++k->pos < k->c->n)
        return true;
    k->c = k->c->next;
    k->pos = 0;
    return k->c != NULL && k->c->n > 0;
}

/* Each thread records in its own time order, so a k-way merge of the
 * buffers is already the global order: O(n log k), no extra copy. */
static int kway_merge(struct history_event *out, struct history_buf *const *bufs, size_t n)
{
    struct cursor *heap = malloc((n ? n : 1) * sizeof(*heap));
    if (heap == NULL)
        return -1;
    size_t hn = 0;
    for (size_t i = 0; i < n; i++)
        if (bufs[i] && bufs[i]->head && bufs[i]->head->n > 0)
            heap[hn++] = (struct cursor){.c = bufs[i]->head, .pos = 0, .src = i};
    for (size_t i = hn / 2; i-- > 0;)
        heap_down(heap, hn, i);
    size_t k = 0;
    while (hn > 0) {
        out[k++] = *cur_ev(&heap[0]);
        if (!cur_advance(&heap[0]))
            heap[0] = heap[--hn];
        heap_down(heap, hn, 0);
    }
    free(heap);
    return 0;
}

/* Stable bottom-up merge sort by (time, client). Only needed when some
 * thread appended an event with an older timestamp than its previous one. */
static int stable_sort(struct history_event *ev, size_t n)
{
    struct history_event *tmp = malloc(n * sizeof(*tmp));
    if (tmp == NULL)
        return -1;
    struct history_event *src = ev, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = ev_cmp(&src[j], &src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        struct history_event *t = src;
        src = dst;
        dst = t;
    }
    if (src != ev)
        memcpy(ev, src, n * sizeof(*ev));
    free(tmp);
    return 0;
}

static bool is_sorted(const struct history_event *ev, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (ev_cmp(&ev[i - 1], &ev[i]) > 0)
            return false;
    return true;
}

static char **copy_table(const char *const *t, size_t n)
{
    char **out = calloc(n ? n : 1, sizeof(*out));
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        out[i] = strdup(t[i] ? t[i] : "");
        if (out[i] == NULL) {
            while (i-- > 0)
                free(out[i]);
            free(out);
            return NULL;
        }
    }
    return out;
}

int history_merge(struct history *h, struct history_buf *const *bufs, size_t n,
                  const struct history_names *names)
{
    memset(h, 0, sizeof(*h));
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += bufs[i] ? bufs[i]->len : 0;
    h->ev = malloc((total ? total : 1) * sizeof(*h->ev));
    h->keys = copy_table(names->keys, names->n_keys);
    h->owners = copy_table(names->owners, names->n_owners);
    h->notes = copy_table(names->notes, names->n_notes);
    if (h->keys)
        h->n_keys = names->n_keys;
    if (h->owners)
        h->n_owners = names->n_owners;
    if (h->notes)
        h->n_notes = names->n_notes;
    if (h->ev == NULL || h->keys == NULL || h->owners == NULL || h->notes == NULL ||
        kway_merge(h->ev, bufs, n) < 0)
        goto fail;
    h->n = total;
    if (!is_sorted(h->ev, total) && stable_sort(h->ev, total) < 0)
        goto fail;
    return 0;
fail:
    history_free(h);
    return -1;
}
