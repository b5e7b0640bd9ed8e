/* history_bin_read.c - the history.llh decoder behind history_reader.h
 * (the layout: docs/history.md, "history.llh"; the writer: history_bin.c).
 *
 * As strict as the JSON-lines reader, value for value: the same bounds
 * (history.h's HISTORY_MAX_*), the same rules (time never goes back, a
 * client below the start's count, a renew without invoke...), so a file
 * reads the same, or is refused, in either form. The file is untrusted:
 * every varint is bounded in length and value before it sizes anything,
 * an id must name a table entry already given, and an error names the
 * byte offset of the record it is in.
 *
 * Speed: a record is decoded from a buffer refilled 64 KiB at a time, so
 * the hot loop is plain byte arithmetic with one bounds test per byte.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sim/faults/fault_spec.h"
#include "sim/record/grow.h"
#include "sim/record/history_bin.h"
#include "sim/record/history_decode.h"
#include "sim/record/history_intern.h"
#include "sim/record/history_validate.h"

#define BUF_BYTES  65536
#define RECORD_MAX 96 /* every record but a string fits in this */

struct table {
    struct intern in;
    uint32_t *map; /* file id -> interned id (equal names are one id, as in JSONL) */
    size_t n, cap;
};

struct llh_dec {
    FILE *f;
    const char *name;
    char *err;
    size_t errlen;
    struct history *h;
    unsigned char *p, *end; /* the unread bytes of buf */
    uint64_t base;          /* the file offset of buf[0] */
    uint64_t rec;           /* the offset of the record being read */
    bool eof;
    struct table keys, owners, notes;
    uint64_t *last_seq, *last_token; /* by file key id */
    size_t n_last;
    uint64_t last_t, stall_end;
    size_t n_events;
    bool started, ended;
    struct history_validator valid;
    char *str; /* a string being read, LLH_STR_MAX + 1 bytes */
    unsigned char buf[BUF_BYTES];
};

__attribute__((format(printf, 2, 3))) static int fail(struct llh_dec *d, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(d->err, d->errlen, "%s: byte %llu: %s", d->name, (unsigned long long)d->rec, msg);
    history_printable(d->err);
    return -1;
}

/* At least want bytes unread in buf, unless the file ends first. */
static int fill(struct llh_dec *d, size_t want)
{
    size_t have = (size_t)(d->end - d->p);
    if (have >= want || d->eof)
        return 0;
    memmove(d->buf, d->p, have);
    d->base += (uint64_t)(d->p - d->buf);
    d->p = d->buf;
    d->end = d->buf + have;
    while (!d->eof && (size_t)(d->end - d->p) < want) {
        size_t got = fread(d->end, 1, BUF_BYTES - (size_t)(d->end - d->buf), d->f);
        d->end += got;
        if (got == 0) {
            if (ferror(d->f))
                return fail(d, "read error: %s", strerror(errno));
            d->eof = true;
        }
    }
    return 0;
}

/* The next LEB128 varint of the record: at most 64 bits in 10 bytes. */
static int get_var(struct llh_dec *d, uint64_t *v)
{
    uint64_t x = 0;
    *v = 0; /* defined even after a failure: an -O3 build cannot see that no caller reads it then */
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (d->p == d->end)
            return fail(d, "the file ends inside a record");
        unsigned c = *d->p++;
        if (shift == 63 && c > 1)
            return fail(d, "a varint of more than 64 bits");
        x |= (uint64_t)(c & 0x7f) << shift;
        if (c < 0x80) {
            *v = x;
            return 0;
        }
    }
    return fail(d, "a varint of more than 64 bits");
}

static int get_max(struct llh_dec *d, const char *what, uint64_t max, uint64_t *v)
{
    if (get_var(d, v) < 0)
        return -1;
    if (*v > max)
        return fail(d, "%s %llu: at most %llu", what, (unsigned long long)*v,
                    (unsigned long long)max);
    return 0;
}

static int get_u32(struct llh_dec *d, const char *what, uint64_t max, uint32_t *v)
{
    uint64_t x;
    if (get_max(d, what, max, &x) < 0)
        return -1;
    *v = (uint32_t)x;
    return 0;
}

/* before + a zigzag difference, wrapping as the writer's did. */
static int get_delta(struct llh_dec *d, uint64_t before, uint64_t *v)
{
    uint64_t z;
    if (get_var(d, &z) < 0)
        return -1;
    *v = before + ((z >> 1) ^ (uint64_t) - (int64_t)(z & 1));
    return 0;
}

/* A string into d->str (NUL-terminated); its length in *len. */
static int get_str(struct llh_dec *d, size_t *len)
{
    uint64_t n;
    if (fill(d, 16) < 0 || get_max(d, "a string's length", LLH_STR_MAX, &n) < 0)
        return -1;
    for (size_t at = 0; at < n;) {
        if (fill(d, 1) < 0)
            return -1;
        if (d->p == d->end)
            return fail(d, "the file ends inside a record");
        size_t k = (size_t)(d->end - d->p) < n - at ? (size_t)(d->end - d->p) : (size_t)n - at;
        memcpy(d->str + at, d->p, k);
        d->p += k;
        at += k;
    }
    d->str[n] = '\0';
    if (strlen(d->str) != n)
        return fail(d, "a string with a NUL byte");
    *len = (size_t)n;
    return 0;
}

/* A time of the run: from the start's on, and at most a week later. */
static int check_time(struct llh_dec *d, const char *what, uint64_t t)
{
    uint64_t t0 = d->h->start_mono_ns;
    if (t < t0)
        return fail(d, "%s %llu is before the start's mono_ns %llu", what, (unsigned long long)t,
                    (unsigned long long)t0);
    if (t - t0 > HISTORY_MAX_SPAN_NS)
        return fail(d, "%s %llu is more than a week after the start's mono_ns %llu", what,
                    (unsigned long long)t, (unsigned long long)t0);
    return 0;
}

static int check_client(struct llh_dec *d, const char *what, uint64_t c)
{
    uint32_t n = d->h->clients;
    if (n > 0 && c >= n)
        return fail(d, "%s %llu is not a client: the start says %u client%s, 0 to %u", what,
                    (unsigned long long)c, (unsigned)n, n == 1 ? "" : "s", (unsigned)n - 1);
    if (c >= HISTORY_MAX_CLIENTS)
        return fail(d, "%s %llu is not a client number, 0 to %u", what, (unsigned long long)c,
                    (unsigned)HISTORY_MAX_CLIENTS - 1);
    return 0;
}

static int read_start(struct llh_dec *d)
{
    struct history *h = d->h;
    uint64_t version, floor;
    size_t len;
    if (get_var(d, &version) < 0)
        return -1;
    if (version != LLH_VERSION)
        return fail(d, "unsupported version %llu (this reader knows %d)",
                    (unsigned long long)version, LLH_VERSION);
    if (get_max(d, "mono_ns", HISTORY_MAX_CLOCK_NS, &h->start_mono_ns) < 0 ||
        get_max(d, "wall_ns", HISTORY_MAX_CLOCK_NS, &h->start_wall_ns) < 0 ||
        get_u32(d, "clients", HISTORY_MAX_CLIENTS, &h->clients) < 0 ||
        get_max(d, "seed", INT64_MAX, &h->seed) < 0 ||
        get_u32(d, "ttl_ms", HISTORY_MAX_MS, &h->ttl_ms) < 0 ||
        get_u32(d, "slack_ms", HISTORY_MAX_MS, &h->slack_ms) < 0 ||
        get_max(d, "stall_floor_ms + 1", HISTORY_MAX_MS + 1ULL, &floor) < 0)
        return -1;
    h->metered = floor != 0;
    if (get_str(d, &len) < 0)
        return -1;
    snprintf(h->scenario, sizeof(h->scenario), "%s", d->str);
    if (get_str(d, &len) < 0)
        return -1;
    snprintf(h->algorithm, sizeof(h->algorithm), "%s", d->str);
    d->last_t = h->start_mono_ns;
    d->valid.have_last = true; /* no event before the start */
    d->valid.last_t = h->start_mono_ns;
    d->started = true;
    return 0;
}

/* A latch run's settings: once, before the first event and table record
 * (the writer puts it right after the start). */
static int read_latch_record(struct llh_dec *d)
{
    struct history_latch *l = &d->h->latch;
    if (l->latches || d->n_events || d->keys.n || d->owners.n || d->notes.n)
        return fail(d, "a latch record other than right after the start record");
    if (get_u32(d, "latches", HISTORY_MAX_LATCH_COUNT, &l->latches) < 0 ||
        get_u32(d, "parties", HISTORY_MAX_LATCH_COUNT, &l->parties) < 0 ||
        get_u32(d, "bound_ms", HISTORY_MAX_MS, &l->bound_ms) < 0)
        return -1;
    if (!l->latches || !l->parties || !l->bound_ms)
        return fail(d, "a latch record's latches, parties and bound_ms must be at least 1");
    return 0;
}

static void sync_tables(struct llh_dec *d)
{
    d->h->keys = d->keys.in.names;
    d->h->n_keys = d->keys.in.n;
    d->h->owners = d->owners.in.names;
    d->h->n_owners = d->owners.in.n;
    d->h->notes = d->notes.in.names;
    d->h->n_notes = d->notes.in.n;
}

/* A table record: the table's next file id names this string. */
static int read_entry(struct llh_dec *d, struct table *t, bool key)
{
    size_t len;
    uint32_t id;
    if (get_str(d, &len) < 0)
        return -1;
    if (t->n == t->cap && array_grow(&t->map, &t->cap, t->n + 1, sizeof(*t->map)) < 0)
        return fail(d, "out of memory");
    if (intern_id(&t->in, d->str, len, &id, NULL) < 0)
        return fail(d, "out of memory");
    sync_tables(d);
    t->map[t->n++] = id;
    if (key && d->keys.n > d->n_last) {
        size_t cap = d->n_last;
        if (array_grow(&d->last_seq, &cap, d->keys.n + 1, sizeof(uint64_t)) < 0 ||
            array_grow(&d->last_token, &d->n_last, d->keys.n + 1, sizeof(uint64_t)) < 0)
            return fail(d, "out of memory");
    }
    return 0;
}

/* A file id of t, as the interned id; *file keeps the file's. */
static int get_ref(struct llh_dec *d, struct table *t, const char *what, uint32_t *id,
                   uint32_t *file)
{
    uint64_t v;
    if (get_var(d, &v) < 0)
        return -1;
    if (v >= t->n)
        return fail(d, "%s id %llu: the file named %zu so far", what, (unsigned long long)v, t->n);
    if (file)
        *file = (uint32_t)v;
    *id = t->map[v];
    return 0;
}

static int read_end(struct llh_dec *d)
{
    struct history *h = d->h;
    uint64_t complete;
    size_t len;
    if (get_var(d, &h->end_mono_ns) < 0 || check_time(d, "the end's mono_ns", h->end_mono_ns) < 0 ||
        get_max(d, "complete", 1, &complete) < 0 ||
        get_max(d, "dropped", HISTORY_MAX_COUNT, &h->dropped) < 0 || get_str(d, &len) < 0)
        return -1;
    h->complete = complete == 1;
    if (len && h->complete)
        return fail(d, "a reason, and only where complete is 0");
    snprintf(h->incomplete_reason, sizeof(h->incomplete_reason), "%s", d->str);
    h->end_line = true;
    d->ended = true;
    return 0;
}

/* ---- events ------------------------------------------------------------- */

static int read_fault(struct llh_dec *d, struct history_event *e)
{
    uint64_t x, client, index, target, detail;
    if (get_var(d, &x) < 0 || get_var(d, &client) < 0 || get_var(d, &index) < 0 ||
        get_var(d, &target) < 0 || get_var(d, &detail) < 0)
        return -1;
    if ((x >> 1) >= fault_kind_count())
        return fail(d, "unknown fault type %llu", (unsigned long long)(x >> 1));
    if (index > HISTORY_MAX_FAULT_INDEX + 1ULL)
        return fail(d, "fault index %llu: at most %u", (unsigned long long)index - 1,
                    (unsigned)HISTORY_MAX_FAULT_INDEX);
    if (target > d->notes.n || detail > d->notes.n)
        return fail(d, "note id %llu: the file named %zu so far",
                    (unsigned long long)(target > detail ? target : detail) - 1, d->notes.n);
    if (client != 0 && check_client(d, "the fault's target", client - 1) < 0)
        return -1;
    if (client != 0 && target != 0)
        return fail(d, "a fault on a client names no servers");
    e->arg = (uint8_t)(x >> 1);
    e->arg2 = (uint8_t)(x & 1);
    e->client = client ? (uint32_t)(client - 1) : HISTORY_SERVERS;
    e->key = index ? (uint32_t)(index - 1) : HISTORY_NO_FAULT;
    e->owner = target ? d->notes.map[target - 1] : HISTORY_NO_NOTE;
    e->seq = detail ? d->notes.map[detail - 1] : HISTORY_NO_NOTE;
    return 0;
}

static int read_seq(struct llh_dec *d, uint32_t fkey, struct history_event *e)
{
    if (get_delta(d, d->last_seq[fkey], &e->seq) < 0)
        return -1;
    if (e->seq > HISTORY_MAX_COUNT)
        return fail(d, "seq %llu: at most %llu", (unsigned long long)e->seq,
                    (unsigned long long)HISTORY_MAX_COUNT);
    d->last_seq[fkey] = e->seq;
    return 0;
}

/* An acquire's mode, its permits when a permit, and the flags above them. */
static int read_mode(struct llh_dec *d, struct history_event *e, uint64_t flags_max, uint64_t *x)
{
    if (get_var(d, x) < 0)
        return -1;
    if ((*x & 3) >= LOCK_MODE_COUNT || *x > flags_max)
        return fail(d, "an acquire's mode and flags %llu", (unsigned long long)*x);
    e->mode = (uint8_t)(*x & 3);
    if (e->mode != LOCK_MODE_PERMIT)
        return 0;
    if (get_u32(d, "permits", UINT32_MAX, &e->permits) < 0)
        return -1;
    return e->permits ? 0 : fail(d, "permits must be at least 1");
}

/* The fields after the owner, as history_bin.c writes them. */
static int read_op_extra(struct llh_dec *d, uint32_t fkey, struct history_event *e)
{
    uint64_t x;
    if (e->f == HF_ACQUIRE && e->type == HT_INVOKE) {
        if (read_mode(d, e, 7, &x) < 0)
            return -1;
        if (x & 4) {
            uint64_t back;
            if (get_delta(d, 0, &back) < 0)
                return -1;
            e->due_ns = e->t_ns - back;
            if (check_time(d, "due", e->due_ns) < 0)
                return -1;
            if (e->due_ns > e->t_ns)
                return fail(d, "due %llu is after the acquire's time %llu",
                            (unsigned long long)e->due_ns, (unsigned long long)e->t_ns);
            if (e->due_ns == 0)
                return fail(d, "due 0");
        }
    } else if (e->f == HF_ACQUIRE && e->type == HT_OK) {
        if (read_mode(d, e, 15, &x) < 0)
            return -1;
        e->seq = HISTORY_NO_SEQ;
        if (x & 4) {
            if (get_delta(d, d->last_token[fkey], &e->token) < 0)
                return -1;
            if (e->token == 0 || e->token > INT64_MAX)
                return fail(d, "token %llu: 1 to %lld", (unsigned long long)e->token,
                            (long long)INT64_MAX);
            d->last_token[fkey] = e->token;
        }
        if ((x & 8) && read_seq(d, fkey, e) < 0)
            return -1;
    } else if ((e->f == HF_RELEASE && e->type == HT_INVOKE) || e->f == HF_CRASH) {
        if (get_max(d, "a release's effect and flags", e->f == HF_CRASH ? 4 : 7, &x) < 0)
            return -1;
        if (e->f == HF_CRASH && (x & 3))
            return fail(d, "a crash with an effect");
        e->arg = (uint8_t)(x & 3);
        e->seq = HISTORY_NO_SEQ;
        if ((x & 4) && read_seq(d, fkey, e) < 0)
            return -1;
    } else if (e->type == HT_FAIL || e->type == HT_INFO) {
        if (get_max(d, "error", HE_REFUSED, &x) < 0)
            return -1;
        e->arg = (uint8_t)x;
    }
    return 0;
}

static int read_op(struct llh_dec *d, struct history_event *e)
{
    uint64_t client;
    uint32_t fkey = 0;
    if (e->f == HF_RENEW && e->type == HT_INVOKE)
        return fail(d, "renew has no invoke");
    if (e->f == HF_CRASH && e->type != HT_INFO)
        return fail(d, "a crash is of type info");
    if (get_var(d, &client) < 0 || check_client(d, "process", client) < 0 ||
        get_ref(d, &d->keys, "key", &e->key, &fkey) < 0 ||
        get_ref(d, &d->owners, "owner", &e->owner, NULL) < 0)
        return -1;
    e->client = (uint32_t)client;
    return read_op_extra(d, fkey, e);
}

static int read_link(struct llh_dec *d, struct history_event *e)
{
    uint64_t client, value;
    if (e->type != HT_INFO)
        return fail(d, "a link event is of type info");
    if (get_var(d, &client) < 0 || check_client(d, "process", client) < 0 ||
        get_ref(d, &d->owners, "owner", &e->owner, NULL) < 0 ||
        get_max(d, "a link's value", HISTORY_LINK_STATES - 1, &value) < 0)
        return -1;
    e->client = (uint32_t)client;
    e->key = UINT32_MAX;
    e->arg = (uint8_t)value;
    return 0;
}

static int read_stall(struct llh_dec *d, struct history_event *e)
{
    uint64_t span;
    if (e->type != HT_INFO)
        return fail(d, "a stall is of type info");
    if (get_max(d, "a stall's length", HISTORY_MAX_SPAN_NS, &span) < 0)
        return -1;
    e->end_ns = e->t_ns + span;
    if (check_time(d, "a stall's end", e->end_ns) < 0)
        return -1;
    if (e->t_ns < d->stall_end)
        return fail(d, "a stall that begins before the previous one ended");
    d->stall_end = e->end_ns;
    e->client = HISTORY_HOST;
    e->key = UINT32_MAX;
    e->owner = UINT32_MAX;
    return 0;
}

/* A time a waiter saw, written back from its line's. */
static int get_back(struct llh_dec *d, const char *what, const struct history_event *e, uint64_t *t)
{
    uint64_t back;
    if (get_max(d, what, e->t_ns - d->h->start_mono_ns, &back) < 0)
        return -1;
    *t = e->t_ns - back;
    return 0;
}

/* A latch's call (history_bin.c's put_latch_extra). */
static int read_latch(struct llh_dec *d, struct history_event *e)
{
    uint64_t client, x;
    if (!d->h->latch.latches)
        return fail(d, "a latch's call in a history with no latch record");
    if (get_var(d, &client) < 0 || check_client(d, "process", client) < 0 ||
        get_ref(d, &d->keys, "key", &e->key, NULL) < 0 ||
        get_ref(d, &d->owners, "owner", &e->owner, NULL) < 0)
        return -1;
    e->client = (uint32_t)client;
    if (e->type == HT_INVOKE)
        return e->f == HF_SET_COUNT
                   ? get_u32(d, "a trySetCount's count", HISTORY_MAX_LATCH_COUNT, &e->permits)
                   : 0;
    if (e->type != HT_OK) {
        if (get_max(d, "error", HE_REFUSED, &x) < 0)
            return -1;
        e->arg = (uint8_t)x;
    }
    if (e->f != HF_AWAIT)
        return 0;
    uint32_t unanswered = 0;
    if (get_max(d, "an await's flags", 7, &x) < 0 ||
        get_u32(d, "an await's sent", HISTORY_MAX_LATCH_COUNT, &e->permits) < 0 ||
        ((x & 1) && get_back(d, "an await's zero", e, &e->zero_ns) < 0) ||
        ((x & 2) &&
         get_u32(d, "an await's unanswered", HISTORY_MAX_LATCH_COUNT, &unanswered) < 0) ||
        ((x & 4) && get_back(d, "an await's resumed", e, &e->resumed_ns) < 0))
        return -1;
    if (((x & 1) && e->zero_ns == 0) || ((x & 2) && unanswered == 0) ||
        ((x & 4) && e->resumed_ns == 0))
        return fail(d, "an await's flags %llu name a 0", (unsigned long long)x);
    e->unanswered = (uint16_t)unanswered;
    return 0;
}

static const struct history_words llh_words = {
    .seq = "seq", .time = "time", .place = "byte", .on = "at"};

static int read_event(struct llh_dec *d, unsigned tag, struct history_event *e)
{
    *e = (struct history_event){.type = (uint8_t)(tag & 3), .f = (uint8_t)((tag - LLH_EVENT) >> 2)};
    if (get_delta(d, d->last_t, &e->t_ns) < 0 || check_time(d, "time", e->t_ns) < 0)
        return -1;
    int rc;
    if (e->f == HF_FAULT)
        rc = e->type == HT_INFO ? read_fault(d, e) : fail(d, "a fault is of type info");
    else if (e->f == HF_LINK)
        rc = read_link(d, e);
    else if (e->f == HF_STALL)
        rc = read_stall(d, e);
    else if (e->f <= HF_CRASH)
        rc = read_op(d, e);
    else if (history_f_latch(e->f))
        rc = read_latch(d, e);
    else
        rc = fail(d, "unknown record 0x%02x", tag);
    if (rc < 0)
        return -1;
    char msg[256];
    if (history_validate_event(&d->valid, e, d->rec, (const char *const *)d->h->keys, &llh_words,
                               msg, sizeof(msg)) < 0)
        return fail(d, "%s", msg);
    d->last_t = e->t_ns;
    d->n_events++;
    return 0;
}

/* ---- the file ------------------------------------------------------------ */

struct llh_dec *llh_dec_new(FILE *f, const char *name, struct history *h, char *err, size_t errlen)
{
    struct llh_dec *d = calloc(1, sizeof(*d));
    char *str = malloc(LLH_STR_MAX + 1);
    if (d == NULL || str == NULL) {
        free(d);
        free(str);
        snprintf(err, errlen, "%s: out of memory", name);
        return NULL;
    }
    d->f = f;
    d->name = name;
    d->err = err;
    d->errlen = errlen;
    d->h = h;
    d->str = str;
    d->p = d->end = d->buf;
    d->base = d->rec = LLH_MAGIC_LEN;
    return d;
}

/* The end of the file; without an end record the run stopped abruptly: it
 * ends at its last event. */
static int at_eof(struct llh_dec *d)
{
    struct history *h = d->h;
    if (!d->started)
        return fail(d, "no start record (the file ends after its signature)");
    if (!h->end_line) {
        h->complete = false;
        h->end_mono_ns = d->n_events ? d->last_t : h->start_mono_ns;
    }
    return 0;
}

int llh_dec_next(struct llh_dec *d, struct history_event *e)
{
    for (;;) {
        d->rec = d->base + (uint64_t)(d->p - d->buf);
        if (fill(d, RECORD_MAX) < 0)
            return -1;
        if (d->p == d->end)
            return at_eof(d) < 0 ? -1 : 0;
        unsigned tag = *d->p++;
        if (d->ended)
            return fail(d, "a record after the end record");
        if (!d->started && tag != LLH_START)
            return fail(d, "expected the start record (0x01), found 0x%02x", tag);
        int rc;
        switch (tag) {
        case LLH_START:
            rc = d->started ? fail(d, "a second start record") : read_start(d);
            break;
        case LLH_KEY:
            rc = read_entry(d, &d->keys, true);
            break;
        case LLH_OWNER:
            rc = read_entry(d, &d->owners, false);
            break;
        case LLH_NOTE:
            rc = read_entry(d, &d->notes, false);
            break;
        case LLH_END:
            rc = read_end(d);
            break;
        case LLH_LATCH:
            rc = read_latch_record(d);
            break;
        default:
            if (tag < LLH_EVENT || tag >= LLH_EVENT + (HF_COUNT << 2))
                return fail(d, "unknown record 0x%02x", tag);
            return read_event(d, tag, e) < 0 ? -1 : 1;
        }
        if (rc < 0)
            return -1;
    }
}

void llh_dec_free(struct llh_dec *d)
{
    if (d == NULL)
        return;
    /* the names belong to the header (sync_tables) */
    intern_release(&d->keys.in);
    intern_release(&d->owners.in);
    intern_release(&d->notes.in);
    free(d->keys.map);
    free(d->owners.map);
    free(d->notes.map);
    free(d->last_seq);
    free(d->last_token);
    history_validator_free(&d->valid);
    free(d->str);
    free(d);
}
