/* history.c - per-thread history buffers, their merge, the JSON-lines
 * writer (history_sections.c rebuilds the critical sections).
 *
 * A buffer is a list of fixed-size chunks: appending never moves what is
 * already recorded (no realloc-and-copy on a client's hot path), and a
 * chunk is malloc'ed only when the previous one is full. The file format
 * is documented in docs/history.md; history_read.c reads it back.
 */
#include "sim/record/history.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/record/hiccup.h"
#include "sim/scenario/scenario.h"

/* A buffer's first chunk is small and each next one twice the last, up to
 * CHUNK_EVENTS: ten thousand clients cost little before they have run. */
#define CHUNK_FIRST  32
#define CHUNK_EVENTS 4096

struct chunk {
    struct chunk *next;
    size_t n, cap;
    struct history_event ev[];
};

struct history_buf {
    struct chunk *head, *tail;
    size_t len;
    uint64_t dropped;
};

struct history_buf *history_buf_new(void)
{
    return calloc(1, sizeof(struct history_buf));
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
    free(b);
}

int history_append(struct history_buf *b, const struct history_event *e)
{
    if (b->tail == NULL || b->tail->n == b->tail->cap) {
        size_t cap = b->tail == NULL               ? CHUNK_FIRST
                     : b->tail->cap < CHUNK_EVENTS ? 2 * b->tail->cap
                                                   : CHUNK_EVENTS;
        struct chunk *c = malloc(sizeof(*c) + cap * sizeof(c->ev[0]));
        if (c == NULL) {
            b->dropped++;
            return -1;
        }
        c->next = NULL;
        c->n = 0;
        c->cap = cap;
        if (b->tail)
            b->tail->next = c;
        else
            b->head = c;
        b->tail = c;
    }
    b->tail->ev[b->tail->n++] = *e;
    b->len++;
    return 0;
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

void history_free(struct history *h)
{
    for (size_t i = 0; h->keys && i < h->n_keys; i++)
        free(h->keys[i]);
    for (size_t i = 0; h->owners && i < h->n_owners; i++)
        free(h->owners[i]);
    for (size_t i = 0; h->notes && i < h->n_notes; i++)
        free(h->notes[i]);
    free(h->keys);
    free(h->owners);
    free(h->notes);
    free(h->ev);
    memset(h, 0, sizeof(*h));
}

/* ---- JSON-lines writer -------------------------------------------------- */

static const char *const type_names[] = {"invoke", "ok", "fail", "info"};
const char *const history_f_names[HF_CRASH + 1] = {"acquire", "release", "renew", "crash"};
const char *const history_link_names[HISTORY_LINK_STATES] = {"connected", "connecting", "expired"};
_Static_assert(HISTORY_LINK_STATES == LOCK_LINK_COUNT, "a word for every link state");
const char *const history_effect_names[EFFECT_COUNT] = {"applied", "none", "fenced", "crashed"};
const char *const history_error_names[HE_REFUSED + 1] = {"none",  "busy",   "lost",
                                                         "error", "unsent", "refused"};
const char *const history_mode_names[LOCK_MODE_COUNT] = {"exclusive", "shared", "permit"};

/* Millions of lines: assembled in a buffer on the stack that goes out in
 * one fwrite when full; digits by hand, no format strings, no allocation. */
struct line {
    FILE *f;
    size_t n;
    char b[8192];
};

static void flush_line(struct line *l)
{
    fwrite(l->b, 1, l->n, l->f);
    l->n = 0;
}

static void put_mem(struct line *l, const char *s, size_t len)
{
    if (l->n + len > sizeof(l->b))
        flush_line(l);
    if (len > sizeof(l->b)) {
        fwrite(s, 1, len, l->f);
        return;
    }
    memcpy(l->b + l->n, s, len);
    l->n += len;
}

static void put(struct line *l, const char *s)
{
    put_mem(l, s, strlen(s));
}

static void put_u64(struct line *l, uint64_t v)
{
    char b[24], *p = b + sizeof(b);
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put_mem(l, p, (size_t)(b + sizeof(b) - p));
}

static void put_field_u64(struct line *l, const char *name, uint64_t v)
{
    put(l, name);
    put_u64(l, v);
}

/* A JSON string: quotes, backslashes and control bytes escaped; other
 * bytes (UTF-8) as they are. */
static void put_str(struct line *l, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    put_mem(l, "\"", 1);
    for (;;) {
        size_t run = 0;
        while ((unsigned char)s[run] >= 0x20 && s[run] != '"' && s[run] != '\\')
            run++;
        put_mem(l, s, run);
        s += run;
        unsigned char c = (unsigned char)*s++;
        if (c == '\0')
            break;
        char esc[6] = {'\\', (char)c};
        size_t len = 2;
        if (c == '\n' || c == '\t' || c == '\r') {
            esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        } else if (c < 0x20) {
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            len = 6;
        }
        put_mem(l, esc, len);
    }
    put_mem(l, "\"", 1);
}

static void put_field_str(struct line *l, const char *name, const char *s)
{
    put(l, name);
    put_str(l, s);
}

static void write_start(const struct history *h, struct line *l)
{
    put_field_u64(l, "{\"type\":\"start\",\"locklab\":1,\"mono_ns\":", h->start_mono_ns);
    put_field_u64(l, ",\"wall_ns\":", h->start_wall_ns);
    put_field_str(l, ",\"scenario\":", h->scenario);
    put_field_str(l, ",\"algorithm\":", h->algorithm);
    put_field_u64(l, ",\"clients\":", h->clients);
    put_field_u64(l, ",\"seed\":", h->seed);
    if (h->ttl_ms)
        put_field_u64(l, ",\"ttl_ms\":", h->ttl_ms);
    if (h->slack_ms)
        put_field_u64(l, ",\"slack_ms\":", h->slack_ms);
    if (h->metered)
        put_field_u64(l, ",\"stall_floor_ms\":", HICCUP_FLOOR_MS);
    put(l, "}\n");
}

static void write_end(const struct history *h, struct line *l)
{
    put_field_u64(l, "{\"type\":\"end\",\"mono_ns\":", h->end_mono_ns);
    put(l, h->complete ? ",\"complete\":true" : ",\"complete\":false");
    if (!h->complete && h->incomplete_reason[0])
        put_field_str(l, ",\"reason\":", h->incomplete_reason);
    put_field_u64(l, ",\"dropped\":", h->dropped);
    put(l, "}\n");
}

static const char *note(const struct history *h, uint64_t id)
{
    return id < h->n_notes ? h->notes[id] : NULL;
}

static int write_fault(const struct history *h, const struct history_event *e, struct line *l)
{
    const char *name = e->arg < fault_kind_count() ? fault_type_name(e->arg) : NULL;
    if (name == NULL || e->arg2 > 1)
        return -1;
    put_field_u64(l, "{\"time\":", e->t_ns);
    put_field_str(l, ",\"process\":\"nemesis\",\"type\":\"info\",\"f\":", name);
    put(l, e->arg2 ? ",\"value\":\"end\"" : ",\"value\":\"start\"");
    if (e->key != HISTORY_NO_FAULT)
        put_field_u64(l, ",\"fault\":", e->key);
    if (e->client != HISTORY_SERVERS)
        put_field_u64(l, ",\"target\":", e->client);
    else if (note(h, e->owner))
        put_field_str(l, ",\"target\":", note(h, e->owner));
    if (note(h, e->seq))
        put_field_str(l, ",\"detail\":", note(h, e->seq));
    put(l, "}\n");
    return 0;
}

/* An acquire's mode: nothing for exclusive, so such lines read as they
 * did before modes were recorded, by any tool. */
static int write_mode(const struct history_event *e, struct line *l)
{
    if (e->mode >= LOCK_MODE_COUNT || (e->mode == LOCK_MODE_PERMIT && e->permits == 0))
        return -1;
    if (e->mode != LOCK_MODE_EXCLUSIVE)
        put_field_str(l, ",\"mode\":", history_mode_names[e->mode]);
    if (e->mode == LOCK_MODE_PERMIT)
        put_field_u64(l, ",\"permits\":", e->permits);
    return 0;
}

/* The fields after "owner" that belong to this kind of event. */
static int write_extra(const struct history_event *e, struct line *l)
{
    bool seq = e->seq != HISTORY_NO_SEQ;
    if (e->f == HF_ACQUIRE && (e->type == HT_INVOKE || e->type == HT_OK) && write_mode(e, l) < 0)
        return -1;
    if (e->f == HF_ACQUIRE && e->type == HT_INVOKE) {
        if (e->due_ns)
            put_field_u64(l, ",\"due\":", e->due_ns);
    } else if (e->f == HF_ACQUIRE && e->type == HT_OK) {
        if (e->token)
            put_field_u64(l, ",\"token\":", e->token);
        if (seq)
            put_field_u64(l, ",\"seq\":", e->seq);
    } else if (e->f == HF_RELEASE && e->type == HT_INVOKE) {
        if (e->arg >= EFFECT_COUNT)
            return -1;
        if (seq)
            put_field_u64(l, ",\"seq\":", e->seq);
        put_field_str(l, ",\"effect\":", history_effect_names[e->arg]);
    } else if (e->f == HF_CRASH) {
        if (seq)
            put_field_u64(l, ",\"seq\":", e->seq);
    } else if (e->type == HT_FAIL || e->type == HT_INFO) {
        if (e->arg > HE_REFUSED)
            return -1;
        if (e->arg != HE_NONE)
            put_field_str(l, ",\"error\":", history_error_names[e->arg]);
    }
    return 0;
}

/* An id outside its table (an engine bug) is written as "#id", so the
 * file still reads back and distinct ids stay distinct. */
static void put_name(struct line *l, const char *field, char *const *table, size_t n, uint32_t id)
{
    put(l, field);
    if (id < n) {
        put_str(l, table[id]);
        return;
    }
    put(l, "\"#");
    put_u64(l, id);
    put(l, "\"");
}

/* The meter woke late: from time to end, no client, no key. */
static int write_stall(const struct history_event *e, struct line *l)
{
    if (e->type != HT_INFO || e->end_ns < e->t_ns)
        return -1;
    put_field_u64(l, "{\"time\":", e->t_ns);
    put(l, ",\"process\":\"host\",\"type\":\"info\",\"f\":\"stall\"");
    put_field_u64(l, ",\"end\":", e->end_ns);
    put(l, "}\n");
    return 0;
}

/* A client's link changed: no key, only its owner (which life) and the state. */
static int write_link(const struct history *h, const struct history_event *e, struct line *l)
{
    if (e->type != HT_INFO || e->arg >= HISTORY_LINK_STATES)
        return -1;
    put_field_u64(l, "{\"time\":", e->t_ns);
    put_field_u64(l, ",\"process\":", e->client);
    put_field_str(l, ",\"type\":", type_names[HT_INFO]);
    put_field_str(l, ",\"f\":", "link");
    put_name(l, ",\"owner\":", h->owners, h->n_owners, e->owner);
    put_field_str(l, ",\"value\":", history_link_names[e->arg]);
    put(l, "}\n");
    return 0;
}

static int write_event(const struct history *h, const struct history_event *e, struct line *l)
{
    if (e->f == HF_FAULT)
        return write_fault(h, e, l);
    if (e->f == HF_LINK)
        return write_link(h, e, l);
    if (e->f == HF_STALL)
        return write_stall(e, l);
    if (e->type > HT_INFO || e->f > HF_CRASH || (e->f == HF_CRASH && e->type != HT_INFO) ||
        (e->f == HF_RENEW && e->type == HT_INVOKE))
        return -1;
    put_field_u64(l, "{\"time\":", e->t_ns);
    put_field_u64(l, ",\"process\":", e->client);
    put_field_str(l, ",\"type\":", type_names[e->type]);
    put_field_str(l, ",\"f\":", history_f_names[e->f]);
    put_name(l, ",\"key\":", h->keys, h->n_keys, e->key);
    put_name(l, ",\"owner\":", h->owners, h->n_owners, e->owner);
    if (write_extra(e, l) < 0)
        return -1;
    put(l, "}\n");
    return 0;
}

static int done(FILE *f)
{
    if (fflush(f) != 0 || ferror(f)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

int history_write_jsonl(const struct history *h, FILE *f)
{
    struct line l = {.f = f};
    write_start(h, &l);
    for (size_t i = 0; i < h->n && !ferror(f); i++) {
        if (write_event(h, &h->ev[i], &l) < 0) {
            errno = EINVAL; /* an event the format cannot express */
            return -1;
        }
    }
    write_end(h, &l);
    flush_line(&l);
    return done(f);
}

/* The same lines one at a time, for a history streamed from a reader:
 * the bytes history_write_jsonl would write, in as many calls. */
int history_jsonl_start(const struct history *h, FILE *f)
{
    struct line l = {.f = f};
    write_start(h, &l);
    flush_line(&l);
    return ferror(f) ? -1 : 0;
}

int history_jsonl_event(const struct history *h, const struct history_event *e, FILE *f)
{
    struct line l = {.f = f};
    if (write_event(h, e, &l) < 0) {
        errno = EINVAL;
        return -1;
    }
    flush_line(&l);
    return ferror(f) ? -1 : 0;
}

int history_jsonl_end(const struct history *h, FILE *f)
{
    struct line l = {.f = f};
    write_end(h, &l);
    flush_line(&l);
    return done(f);
}
