/* history_bin.c - the history.llh writer (history_bin.h; the layout is in
 * docs/history.md, "history.llh").
 *
 * Cheap on purpose, as a later engine feeds it from the run itself: no
 * format strings, no allocation per event (the id maps grow by doubling),
 * bytes assembled in a 64 KiB buffer that goes out in one fwrite. Ids are
 * renumbered in the order the file first needs them, which is the order
 * the JSON-lines reader interns them in: both formats read back to the
 * same ids.
 */
#include "sim/record/history_bin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/faults/fault_spec.h"
#include "sim/record/grow.h"
#include "sim/record/hiccup.h"

#define BUF_BYTES 65536
/* The most one record but a string can take: a tag and eight varints. */
#define RECORD_MAX 96
#define UNMAPPED   0 /* a map slot holds the file id + 1 */

/* A table's ids as the caller numbers them -> as the file does. */
struct idmap {
    uint32_t *to_file;
    size_t cap;
    uint32_t n_file; /* entries written */
};

struct llh_writer {
    FILE *f;
    uint64_t prev_t;
    struct idmap keys, owners, notes;
    /* by file key id: the previous seq and token on the key */
    uint64_t *last_seq, *last_token;
    size_t n_last;
    size_t n;
    unsigned char b[BUF_BYTES];
};

static int flush_buf(struct llh_writer *w)
{
    if (w->n && fwrite(w->b, 1, w->n, w->f) != w->n)
        return -1;
    w->n = 0;
    return 0;
}

static int room(struct llh_writer *w, size_t need)
{
    return w->n + need > BUF_BYTES ? flush_buf(w) : 0;
}

static void put_byte(struct llh_writer *w, unsigned v)
{
    w->b[w->n++] = (unsigned char)v;
}

static void put_var(struct llh_writer *w, uint64_t v)
{
    while (v >= 0x80) {
        w->b[w->n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    w->b[w->n++] = (unsigned char)v;
}

/* A difference that may be negative, as LEB128 of its zigzag form. */
static void put_delta(struct llh_writer *w, uint64_t now, uint64_t before)
{
    uint64_t d = now - before;
    put_var(w, (d << 1) ^ (uint64_t) - (int64_t)(d >> 63));
}

static int put_str(struct llh_writer *w, unsigned tag, const char *s)
{
    size_t len = strlen(s);
    if (len > LLH_STR_MAX) {
        errno = EINVAL;
        return -1;
    }
    if (room(w, RECORD_MAX) < 0)
        return -1;
    if (tag)
        put_byte(w, tag);
    put_var(w, len);
    if (len > BUF_BYTES - w->n) {
        if (flush_buf(w) < 0 || fwrite(s, 1, len, w->f) != len)
            return -1;
        return 0;
    }
    memcpy(w->b + w->n, s, len);
    w->n += len;
    return 0;
}

struct llh_writer *llh_writer_new(FILE *f, const struct history *h)
{
    struct llh_writer *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return NULL;
    w->f = f;
    w->prev_t = h->start_mono_ns;
    memcpy(w->b, LLH_MAGIC, LLH_MAGIC_LEN);
    w->n = LLH_MAGIC_LEN;
    put_byte(w, LLH_START);
    put_var(w, LLH_VERSION);
    put_var(w, h->start_mono_ns);
    put_var(w, h->start_wall_ns);
    put_var(w, h->clients);
    put_var(w, h->seed);
    put_var(w, h->ttl_ms);
    put_var(w, h->slack_ms);
    put_var(w, h->metered ? HICCUP_FLOOR_MS + 1 : 0); /* 0: no stall meter */
    if (put_str(w, 0, h->scenario) < 0 || put_str(w, 0, h->algorithm) < 0) {
        free(w);
        return NULL;
    }
    if (h->latch.latches) {
        put_byte(w, LLH_LATCH);
        put_var(w, h->latch.latches);
        put_var(w, h->latch.parties);
        put_var(w, h->latch.bound_ms);
    }
    return w;
}

/* The file's id of the caller's id, its table record written first when
 * it is new: the name, or "#id" beyond the table (as the JSON-lines writer
 * names it). */
static int file_id(struct llh_writer *w, struct idmap *m, unsigned tag, const char *const *table,
                   size_t n_table, uint32_t id, uint32_t *out)
{
    if (id >= m->cap && array_grow(&m->to_file, &m->cap, (size_t)id + 1, sizeof(*m->to_file)) < 0)
        return -1;
    if (m->to_file[id] != UNMAPPED) {
        *out = m->to_file[id] - 1;
        return 0;
    }
    char hash[16];
    const char *name = id < n_table && table[id] ? table[id] : hash;
    if (name == hash)
        snprintf(hash, sizeof(hash), "#%u", (unsigned)id);
    if (put_str(w, tag, name) < 0)
        return -1;
    *out = m->n_file;
    m->to_file[id] = ++m->n_file;
    if (tag == LLH_KEY && m->n_file > w->n_last) {
        size_t cap = w->n_last;
        if (array_grow(&w->last_seq, &cap, m->n_file + 1, sizeof(uint64_t)) < 0 ||
            array_grow(&w->last_token, &w->n_last, m->n_file + 1, sizeof(uint64_t)) < 0)
            return -1;
    }
    return 0;
}

/* A fault's note: id + 1, or 0 when it names none (the JSON-lines writer
 * then leaves the field out). */
static int note_ref(struct llh_writer *w, const struct history_names *nm, uint64_t id,
                    uint64_t *out)
{
    uint32_t fid;
    *out = 0;
    if (id >= nm->n_notes)
        return 0;
    if (file_id(w, &w->notes, LLH_NOTE, nm->notes, nm->n_notes, (uint32_t)id, &fid) < 0)
        return -1;
    *out = (uint64_t)fid + 1;
    return 0;
}

/* What history_write_jsonl refuses (an engine bug), refused alike. */
static bool expressible(const struct history_event *e)
{
    if (history_f_latch(e->f))
        return history_latch_expressible(e);
    switch (e->f) {
    case HF_FAULT:
        return e->arg < fault_kind_count() && e->arg2 <= 1;
    case HF_STALL:
        return e->type == HT_INFO && e->end_ns >= e->t_ns;
    case HF_LINK:
        return e->type == HT_INFO && e->arg < HISTORY_LINK_STATES;
    case HF_CRASH:
        return e->type == HT_INFO;
    case HF_ACQUIRE:
        if (e->type == HT_INVOKE || e->type == HT_OK)
            return e->mode < LOCK_MODE_COUNT && (e->mode != LOCK_MODE_PERMIT || e->permits > 0);
        return e->type <= HT_INFO && e->arg <= HE_REFUSED;
    case HF_RELEASE:
    case HF_RENEW:
        if (e->type == HT_INVOKE)
            return e->f == HF_RELEASE && e->arg < EFFECT_COUNT;
        return e->type == HT_OK || (e->type <= HT_INFO && e->arg <= HE_REFUSED);
    default:
        return false;
    }
}

/* The event's ids as the file numbers them. */
struct refs {
    uint32_t key, owner;
    uint64_t target, detail; /* a fault's notes: id + 1, 0 none */
};

/* The table records the event needs, written now, before it. */
static int resolve(struct llh_writer *w, const struct history_event *e,
                   const struct history_names *nm, struct refs *r)
{
    if (e->f == HF_FAULT) {
        if (e->client == HISTORY_SERVERS && note_ref(w, nm, e->owner, &r->target) < 0)
            return -1;
        return note_ref(w, nm, e->seq, &r->detail);
    }
    if (e->f == HF_STALL)
        return 0;
    if (e->f != HF_LINK && file_id(w, &w->keys, LLH_KEY, nm->keys, nm->n_keys, e->key, &r->key) < 0)
        return -1;
    return file_id(w, &w->owners, LLH_OWNER, nm->owners, nm->n_owners, e->owner, &r->owner);
}

static void put_seq(struct llh_writer *w, uint32_t key, uint64_t seq)
{
    put_delta(w, seq, w->last_seq[key]);
    w->last_seq[key] = seq;
}

/* What history_write_jsonl writes of an operation after its owner,
 * nothing more. */
static void put_op_extra(struct llh_writer *w, const struct history_event *e, uint32_t key)
{
    bool seq = e->seq != HISTORY_NO_SEQ;
    if (e->f == HF_ACQUIRE && e->type == HT_INVOKE) {
        put_var(w, e->mode | (e->due_ns ? 4u : 0u));
        if (e->mode == LOCK_MODE_PERMIT)
            put_var(w, e->permits);
        if (e->due_ns)
            put_delta(w, e->t_ns, e->due_ns);
    } else if (e->f == HF_ACQUIRE && e->type == HT_OK) {
        put_var(w, e->mode | (e->token ? 4u : 0u) | (seq ? 8u : 0u));
        if (e->mode == LOCK_MODE_PERMIT)
            put_var(w, e->permits);
        if (e->token) {
            put_delta(w, e->token, w->last_token[key]);
            w->last_token[key] = e->token;
        }
        if (seq)
            put_seq(w, key, e->seq);
    } else if ((e->f == HF_RELEASE && e->type == HT_INVOKE) || e->f == HF_CRASH) {
        put_var(w, (e->f == HF_RELEASE ? e->arg : 0u) | (seq ? 4u : 0u));
        if (seq)
            put_seq(w, key, e->seq);
    } else if (e->type == HT_FAIL || e->type == HT_INFO) {
        put_var(w, e->arg);
    }
}

/* A latch call's fields after its owner: what history_write_jsonl writes. */
static void put_latch_extra(struct llh_writer *w, const struct history_event *e)
{
    if (e->type == HT_INVOKE) {
        if (e->f == HF_SET_COUNT)
            put_var(w, e->permits);
        return;
    }
    if (e->type != HT_OK)
        put_var(w, e->arg);
    if (e->f != HF_AWAIT)
        return;
    put_var(w, (e->zero_ns ? 1u : 0u) | (e->unanswered ? 2u : 0u) | (e->resumed_ns ? 4u : 0u));
    put_var(w, e->permits);
    if (e->zero_ns)
        put_var(w, e->t_ns - e->zero_ns);
    if (e->unanswered)
        put_var(w, e->unanswered);
    if (e->resumed_ns)
        put_var(w, e->t_ns - e->resumed_ns);
}

static void put_event(struct llh_writer *w, const struct history_event *e, const struct refs *r)
{
    put_byte(w, LLH_EVENT + ((unsigned)e->f << 2 | e->type));
    put_delta(w, e->t_ns, w->prev_t);
    w->prev_t = e->t_ns;
    switch (e->f) {
    case HF_FAULT:
        put_var(w, (uint64_t)e->arg << 1 | e->arg2);
        put_var(w, e->client == HISTORY_SERVERS ? 0 : (uint64_t)e->client + 1);
        put_var(w, e->key == HISTORY_NO_FAULT ? 0 : (uint64_t)e->key + 1);
        put_var(w, r->target);
        put_var(w, r->detail);
        return;
    case HF_STALL:
        put_var(w, e->end_ns - e->t_ns);
        return;
    case HF_LINK:
        put_var(w, e->client);
        put_var(w, r->owner);
        put_var(w, e->arg);
        return;
    default:
        put_var(w, e->client);
        put_var(w, r->key);
        put_var(w, r->owner);
        if (history_f_latch(e->f))
            put_latch_extra(w, e);
        else
            put_op_extra(w, e, r->key);
    }
}

int llh_write_event(struct llh_writer *w, const struct history_event *e,
                    const struct history_names *names)
{
    struct refs r = {0};
    if (!expressible(e)) {
        errno = EINVAL;
        return -1;
    }
    if (resolve(w, e, names, &r) < 0 || room(w, RECORD_MAX) < 0)
        return -1;
    put_event(w, e, &r);
    return 0;
}

int llh_writer_flush(struct llh_writer *w)
{
    if (flush_buf(w) < 0 || fflush(w->f) != 0 || ferror(w->f)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

int llh_write_end(struct llh_writer *w, const struct history *h)
{
    if (room(w, RECORD_MAX) < 0)
        return -1;
    put_byte(w, LLH_END);
    put_var(w, h->end_mono_ns);
    put_var(w, h->complete ? 1 : 0);
    put_var(w, h->dropped);
    if (put_str(w, 0, h->complete ? "" : h->incomplete_reason) < 0 || flush_buf(w) < 0)
        return -1;
    if (fflush(w->f) != 0 || ferror(w->f)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

void llh_writer_free(struct llh_writer *w)
{
    if (w == NULL)
        return;
    free(w->keys.to_file);
    free(w->owners.to_file);
    free(w->notes.to_file);
    free(w->last_seq);
    free(w->last_token);
    free(w);
}

int history_write_llh(const struct history *h, FILE *f)
{
    const struct history_names nm = {.keys = (const char *const *)h->keys,
                                     .n_keys = h->n_keys,
                                     .owners = (const char *const *)h->owners,
                                     .n_owners = h->n_owners,
                                     .notes = (const char *const *)h->notes,
                                     .n_notes = h->n_notes};
    errno = 0;
    struct llh_writer *w = llh_writer_new(f, h);
    if (w == NULL) {
        if (errno == 0)
            errno = ENOMEM;
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < h->n && rc == 0; i++)
        rc = llh_write_event(w, &h->ev[i], &nm);
    if (rc == 0)
        rc = llh_write_end(w, h);
    llh_writer_free(w);
    return rc;
}
