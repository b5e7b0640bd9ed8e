/* history_read.c - read a history.jsonl back (docs/history.md).
 *
 * Strict: an unknown "type", "f", "effect", "error" or "mode" value, a missing
 * required field or a time going backwards is an error naming the line, so
 * a history from another tool is either understood exactly or refused.
 * Keys the reader does not know are ignored, so the format can grow.
 * Key and owner strings are interned through hash tables: files have
 * millions of lines.
 *
 * The file is untrusted input (`locklab check` reads whatever it is
 * given): no line is held past HISTORY_LINE_MAX bytes, and every number is
 * bounded before anything sizes a table or does arithmetic with it
 * (history.h's HISTORY_MAX_*), so a hostile file is refused, never a crash
 * or an allocation the size of a number in it.
 */
#include "sim/record/history.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sim/faults/fault_spec.h"
#include "sim/record/history_decode.h"
#include "sim/record/history_intern.h"
#include "sim/record/history_validate.h"

struct reader {
    const char *path;
    size_t line;
    char *err;
    size_t errlen;
    struct history *h; /* the header: start, tables, end; never the events */
    FILE *f;
    char *buf; /* one line, HISTORY_LINE_MAX + 1 bytes */
    struct intern keys, owners, notes;
    bool started;       /* the end line is h->end_line */
    uint64_t stall_end; /* the previous stall's end: stalls do not overlap */
    uint64_t last_t;    /* the previous event's time: times never go back */
    size_t n_events;
    struct history_event *out; /* where the next event goes */
    bool have;                 /* read_line put one there */
    struct history_validator valid;
};

/* The message is one line whatever the file holds: its strings (a key,
 * an unknown value, jansson's quote of a bad token) may carry any byte. */
__attribute__((format(printf, 2, 3))) static int fail(struct reader *r, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "%s:%zu: %s", r->path, r->line, msg);
    history_printable(r->err);
    return -1;
}

/* A string of the file as an id of t. */
static int intern_str(struct intern *t, const char *s, uint32_t *id)
{
    return intern_id(t, s, strlen(s), id, NULL);
}

/* ---- fields ------------------------------------------------------------- */

/* An integer from 0 to max; v is left alone when it is absent. */
static int get_num(struct reader *r, json_t *o, const char *name, bool required, uint64_t max,
                   uint64_t *v)
{
    json_t *j = json_object_get(o, name);
    if (j == NULL) {
        if (required)
            return fail(r, "missing \"%s\"", name);
        return 0;
    }
    if (!json_is_integer(j) || json_integer_value(j) < 0)
        return fail(r, "\"%s\" must be an integer >= 0", name);
    if ((uint64_t)json_integer_value(j) > max)
        return fail(r, "\"%s\" must be at most %llu", name, (unsigned long long)max);
    *v = (uint64_t)json_integer_value(j);
    return 0;
}

static int get_u64(struct reader *r, json_t *o, const char *name, bool required, uint64_t *v)
{
    return get_num(r, o, name, required, INT64_MAX, v);
}

static int get_u32(struct reader *r, json_t *o, const char *name, bool required, uint32_t max,
                   uint32_t *v)
{
    uint64_t x = *v;
    if (get_num(r, o, name, required, max, &x) < 0)
        return -1;
    *v = (uint32_t)x;
    return 0;
}

/* A time of the run: from the start line's on, and at most a week later. */
static int get_time(struct reader *r, json_t *o, const char *name, bool required, uint64_t *v)
{
    uint64_t t = 0, t0 = r->h->start_mono_ns;
    if (get_u64(r, o, name, required, &t) < 0)
        return -1;
    if (json_object_get(o, name) == NULL)
        return 0;
    if (t < t0)
        return fail(r, "\"%s\" %llu is before the start line's \"mono_ns\" %llu", name,
                    (unsigned long long)t, (unsigned long long)t0);
    if (t - t0 > HISTORY_MAX_SPAN_NS)
        return fail(r, "\"%s\" %llu is more than a week after the start line's \"mono_ns\" %llu",
                    name, (unsigned long long)t, (unsigned long long)t0);
    *v = t;
    return 0;
}

/* A client number: below the start line's "clients", or when it gave none
 * below HISTORY_MAX_CLIENTS (the checker sizes tables by the largest). */
static int check_client(struct reader *r, const char *name, json_int_t c)
{
    uint32_t n = r->h->clients;
    if (n > 0 && (c < 0 || c >= (json_int_t)n))
        return fail(r, "\"%s\" %lld is not a client: the start line says %u client%s, 0 to %u",
                    name, (long long)c, (unsigned)n, n == 1 ? "" : "s", (unsigned)n - 1);
    if (c < 0 || c >= (json_int_t)HISTORY_MAX_CLIENTS)
        return fail(r, "\"%s\" %lld is not a client number, 0 to %u", name, (long long)c,
                    (unsigned)HISTORY_MAX_CLIENTS - 1);
    return 0;
}

/* The string value of name, or NULL (and err set when required). */
static const char *get_str(struct reader *r, json_t *o, const char *name, bool required)
{
    json_t *j = json_object_get(o, name);
    if (j == NULL) {
        if (required)
            fail(r, "missing \"%s\"", name);
        return NULL;
    }
    if (!json_is_string(j)) {
        fail(r, "\"%s\" must be a string", name);
        return NULL;
    }
    return json_string_value(j);
}

/* Index of name in names[0..n), or -1 with err "unknown what \"name\"". */
static int get_enum(struct reader *r, json_t *o, const char *field, const char *const *names, int n,
                    int absent)
{
    json_t *j = json_object_get(o, field);
    if (j == NULL && absent >= 0)
        return absent;
    const char *s = get_str(r, o, field, true);
    if (s == NULL)
        return -1;
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return fail(r, "unknown %s \"%s\"", field, s);
}

/* ---- lines -------------------------------------------------------------- */

static const char *const line_types[] = {"invoke", "ok", "fail", "info", "start", "end"};
enum { LT_START = 4, LT_END = 5 };
static const char *const fault_values[] = {"start", "end"};

static int read_start(struct reader *r, json_t *o)
{
    struct history *h = r->h;
    uint64_t version = 0;
    if (get_u64(r, o, "locklab", true, &version) < 0)
        return -1;
    if (version != 1)
        return fail(r, "unsupported \"locklab\" version %llu (this reader knows 1)",
                    (unsigned long long)version);
    uint64_t floor = 0;
    if (get_num(r, o, "mono_ns", true, HISTORY_MAX_CLOCK_NS, &h->start_mono_ns) < 0 ||
        get_num(r, o, "wall_ns", false, HISTORY_MAX_CLOCK_NS, &h->start_wall_ns) < 0 ||
        get_u32(r, o, "clients", false, HISTORY_MAX_CLIENTS, &h->clients) < 0 ||
        get_u64(r, o, "seed", false, &h->seed) < 0 ||
        get_u32(r, o, "ttl_ms", false, HISTORY_MAX_MS, &h->ttl_ms) < 0 ||
        get_u32(r, o, "slack_ms", false, HISTORY_MAX_MS, &h->slack_ms) < 0 ||
        get_num(r, o, "stall_floor_ms", false, HISTORY_MAX_MS, &floor) < 0)
        return -1;
    h->metered = json_object_get(o, "stall_floor_ms") != NULL;
    /* a latch run's settings: all three, or none (an older file, a lock) */
    if (get_u32(r, o, "latches", false, HISTORY_MAX_LATCH_COUNT, &h->latch.latches) < 0 ||
        get_u32(r, o, "parties", false, HISTORY_MAX_LATCH_COUNT, &h->latch.parties) < 0 ||
        get_u32(r, o, "bound_ms", false, HISTORY_MAX_MS, &h->latch.bound_ms) < 0)
        return -1;
    const bool has[3] = {json_object_get(o, "latches") != NULL,
                         json_object_get(o, "parties") != NULL,
                         json_object_get(o, "bound_ms") != NULL};
    if (has[0] != has[1] || has[0] != has[2])
        return fail(r, "\"latches\", \"parties\" and \"bound_ms\" come together, or not at all");
    if (has[0] && (!h->latch.latches || !h->latch.parties || !h->latch.bound_ms))
        return fail(r, "\"latches\", \"parties\" and \"bound_ms\" must be at least 1");
    const char *scn = get_str(r, o, "scenario", false);
    const char *alg = get_str(r, o, "algorithm", false);
    if ((scn == NULL && json_object_get(o, "scenario")) ||
        (alg == NULL && json_object_get(o, "algorithm")))
        return -1;
    snprintf(h->scenario, sizeof(h->scenario), "%s", scn ? scn : "");
    snprintf(h->algorithm, sizeof(h->algorithm), "%s", alg ? alg : "");
    r->started = true;
    return 0;
}

static int read_end(struct reader *r, json_t *o)
{
    json_t *c = json_object_get(o, "complete");
    if (get_time(r, o, "mono_ns", true, &r->h->end_mono_ns) < 0 ||
        get_num(r, o, "dropped", false, HISTORY_MAX_COUNT, &r->h->dropped) < 0)
        return -1;
    if (c == NULL)
        return fail(r, "missing \"complete\"");
    if (!json_is_boolean(c))
        return fail(r, "\"complete\" must be true or false");
    r->h->complete = json_is_true(c);
    json_t *why = json_object_get(o, "reason");
    if (why && (!json_is_string(why) || r->h->complete))
        return fail(r, "\"reason\" must be a string, and only where \"complete\" is false");
    snprintf(r->h->incomplete_reason, sizeof(r->h->incomplete_reason), "%s",
             why ? json_string_value(why) : "");
    r->h->end_line = true;
    return 0;
}

/* An optional text of a fault line, interned as a note. */
static int read_note(struct reader *r, json_t *o, const char *name, uint32_t *id)
{
    *id = HISTORY_NO_NOTE;
    json_t *v = json_object_get(o, name);
    if (v == NULL)
        return 0;
    if (!json_is_string(v))
        return fail(r, "\"%s\" must be a string", name);
    return intern_str(&r->notes, json_string_value(v), id) < 0 ? fail(r, "out of memory") : 0;
}

/* A client fault's target is the client's number; a server fault's, the
 * servers it struck ("redis-2,redis-4"). */
static int read_fault_target(struct reader *r, json_t *o, struct history_event *e)
{
    json_t *t = json_object_get(o, "target");
    if (t != NULL && json_is_string(t)) {
        e->client = HISTORY_SERVERS;
        return read_note(r, o, "target", &e->owner);
    }
    e->owner = HISTORY_NO_NOTE;
    if (get_u32(r, o, "target", true, UINT32_MAX, &e->client) < 0)
        return -1;
    return check_client(r, "target", (json_int_t)e->client);
}

static int read_fault(struct reader *r, json_t *o, int type, struct history_event *e)
{
    const char *f = get_str(r, o, "f", true);
    if (f == NULL)
        return -1;
    int t = fault_kind_index(f);
    if (t < 0)
        return fail(r, "unknown f \"%s\"", f);
    if (type != HT_INFO)
        return fail(r, "a fault is of type \"info\"");
    int v = get_enum(r, o, "value", fault_values, 2, -1);
    uint32_t detail;
    e->key = HISTORY_NO_FAULT;
    if (v < 0 || read_fault_target(r, o, e) < 0 ||
        get_u32(r, o, "fault", false, HISTORY_MAX_FAULT_INDEX, &e->key) < 0 ||
        read_note(r, o, "detail", &detail) < 0)
        return -1;
    e->seq = detail;
    e->f = HF_FAULT;
    e->arg = (uint8_t)t;
    e->arg2 = (uint8_t)v;
    return 0;
}

/* A step is begun when it is due or later, never before: its latency counts
 * from "due" to the grant. */
static int read_due(struct reader *r, json_t *o, struct history_event *e)
{
    if (get_time(r, o, "due", false, &e->due_ns) < 0)
        return -1;
    if (e->due_ns > e->t_ns)
        return fail(r, "\"due\" %llu is after the acquire's \"time\" %llu",
                    (unsigned long long)e->due_ns, (unsigned long long)e->t_ns);
    return 0;
}

/* An acquire's mode: absent, exclusive (as every line before modes were
 * recorded); a permit's line names its key's permits, at least 1. */
static int read_mode(struct reader *r, json_t *o, struct history_event *e)
{
    int m = get_enum(r, o, "mode", history_mode_names, LOCK_MODE_COUNT, LOCK_MODE_EXCLUSIVE);
    if (m < 0)
        return -1;
    e->mode = (uint8_t)m;
    if (m != LOCK_MODE_PERMIT)
        return json_object_get(o, "permits") ? fail(r, "\"permits\" on a line whose mode is "
                                                       "not \"permit\"")
                                             : 0;
    if (get_u32(r, o, "permits", true, UINT32_MAX, &e->permits) < 0)
        return -1;
    return e->permits ? 0 : fail(r, "\"permits\" must be at least 1");
}

/* Fields that belong to this (type, f); absent ones take their defaults. */
static int read_extra(struct reader *r, json_t *o, struct history_event *e)
{
    bool acq_ok = e->f == HF_ACQUIRE && e->type == HT_OK;
    bool rel_inv = e->f == HF_RELEASE && e->type == HT_INVOKE;
    if (acq_ok && get_u64(r, o, "token", false, &e->token) < 0)
        return -1;
    if (e->f == HF_ACQUIRE && read_mode(r, o, e) < 0)
        return -1;
    if (e->f == HF_ACQUIRE && e->type == HT_INVOKE && read_due(r, o, e) < 0)
        return -1;
    if (acq_ok || rel_inv || e->f == HF_CRASH) {
        e->seq = HISTORY_NO_SEQ;
        if (get_num(r, o, "seq", false, HISTORY_MAX_COUNT, &e->seq) < 0)
            return -1;
    }
    int a = 0;
    if (rel_inv)
        a = get_enum(r, o, "effect", history_effect_names, EFFECT_COUNT, EFFECT_APPLIED);
    else if ((e->type == HT_FAIL || e->type == HT_INFO) && e->f != HF_CRASH)
        a = get_enum(r, o, "error", history_error_names, HE_REFUSED + 1, HE_NONE);
    if (a < 0)
        return -1;
    e->arg = (uint8_t)a;
    return 0;
}

static int read_link(struct reader *r, json_t *o, struct history_event *e)
{
    if (e->type != HT_INFO)
        return fail(r, "a link event is of type \"info\"");
    const char *owner = get_str(r, o, "owner", true);
    if (owner == NULL)
        return -1;
    int v = get_enum(r, o, "value", history_link_names, HISTORY_LINK_STATES, -1);
    if (v < 0)
        return -1;
    if (intern_str(&r->owners, owner, &e->owner) < 0)
        return fail(r, "out of memory");
    e->f = HF_LINK;
    e->key = UINT32_MAX; /* no key */
    e->arg = (uint8_t)v;
    return 0;
}

static int read_stall(struct reader *r, json_t *o, int type, struct history_event *e)
{
    const char *f = get_str(r, o, "f", true);
    if (f == NULL)
        return -1;
    if (strcmp(f, "stall") != 0)
        return fail(r, "unknown f \"%s\" of the host (it logs \"stall\")", f);
    if (type != HT_INFO)
        return fail(r, "a stall is of type \"info\"");
    if (get_time(r, o, "end", true, &e->end_ns) < 0)
        return -1;
    if (e->end_ns < e->t_ns)
        return fail(r, "a stall's \"end\" is before its \"time\"");
    if (e->t_ns < r->stall_end)
        return fail(r, "a stall that begins before the previous one ended");
    r->stall_end = e->end_ns;
    e->f = HF_STALL;
    e->client = HISTORY_HOST;
    e->key = UINT32_MAX;
    e->owner = UINT32_MAX;
    return 0;
}

/* A latch's call (docs/history.md, "latches"): its key and owner as an
 * operation's; a trySetCount's count; what a waiter saw. */
/* An op's "key" and "owner", both required, interned into e. */
static int read_key_owner(struct reader *r, json_t *o, struct history_event *e)
{
    const char *key = get_str(r, o, "key", true);
    const char *owner = key ? get_str(r, o, "owner", true) : NULL;
    if (owner == NULL)
        return -1;
    if (intern_str(&r->keys, key, &e->key) < 0 || intern_str(&r->owners, owner, &e->owner) < 0)
        return fail(r, "out of memory");
    return 0;
}

static int read_latch(struct reader *r, json_t *o, int f, struct history_event *e)
{
    e->f = (uint8_t)f;
    if (!r->h->latch.latches)
        return fail(r, "a latch's \"%s\" in a history whose start line names no latch",
                    history_latch_f_names[f - HF_LATCH_FIRST]);
    if (read_key_owner(r, o, e) < 0)
        return -1;
    if (e->type == HT_INVOKE && f == HF_SET_COUNT &&
        get_u32(r, o, "count", true, HISTORY_MAX_LATCH_COUNT, &e->permits) < 0)
        return -1;
    if (e->type == HT_FAIL || e->type == HT_INFO) {
        int a = get_enum(r, o, "error", history_error_names, HE_REFUSED + 1, HE_NONE);
        if (a < 0)
            return -1;
        e->arg = (uint8_t)a;
    }
    if (e->type == HT_INVOKE || f != HF_AWAIT)
        return 0;
    uint32_t unanswered = 0;
    if (get_u32(r, o, "sent", true, HISTORY_MAX_LATCH_COUNT, &e->permits) < 0 ||
        get_u32(r, o, "unanswered", false, HISTORY_MAX_LATCH_COUNT, &unanswered) < 0 ||
        get_time(r, o, "zero", false, &e->zero_ns) < 0 ||
        get_time(r, o, "resumed", false, &e->resumed_ns) < 0)
        return -1;
    e->unanswered = (uint16_t)unanswered;
    if (e->zero_ns > e->t_ns || e->resumed_ns > e->t_ns)
        return fail(r, "an await's \"%s\" after its \"time\"",
                    e->zero_ns > e->t_ns ? "zero" : "resumed");
    return 0;
}

/* Which latch call f names, or -1. */
static int latch_f(json_t *o)
{
    json_t *fv = json_object_get(o, "f");
    for (int i = 0; json_is_string(fv) && i < HF_COUNT - HF_LATCH_FIRST; i++)
        if (strcmp(json_string_value(fv), history_latch_f_names[i]) == 0)
            return HF_LATCH_FIRST + i;
    return -1;
}

static int read_op(struct reader *r, json_t *o, json_int_t process, struct history_event *e)
{
    if (process < 0)
        return fail(r, "\"process\" must be a client number, \"nemesis\" or \"host\"");
    if (check_client(r, "process", process) < 0)
        return -1;
    json_t *fv = json_object_get(o, "f");
    if (json_is_string(fv) && strcmp(json_string_value(fv), "link") == 0) {
        e->client = (uint32_t)process;
        return read_link(r, o, e);
    }
    int lf = latch_f(o);
    if (lf >= 0) {
        e->client = (uint32_t)process;
        return read_latch(r, o, lf, e);
    }
    int f = get_enum(r, o, "f", history_f_names, HF_CRASH + 1, -1);
    if (f < 0)
        return -1;
    e->client = (uint32_t)process;
    e->f = (uint8_t)f;
    if (f == HF_RENEW && e->type == HT_INVOKE)
        return fail(r, "renew has no invoke");
    if (f == HF_CRASH && e->type != HT_INFO)
        return fail(r, "a crash is of type \"info\"");
    if (read_key_owner(r, o, e) < 0)
        return -1;
    return read_extra(r, o, e);
}

/* The tables as they stand, for a caller reading event by event. */
static void sync_tables(struct reader *r)
{
    r->h->keys = r->keys.names;
    r->h->n_keys = r->keys.n;
    r->h->owners = r->owners.names;
    r->h->n_owners = r->owners.n;
    r->h->notes = r->notes.names;
    r->h->n_notes = r->notes.n;
}

static const struct history_words jsonl_words = {
    .seq = "\"seq\"", .time = "\"time\"", .place = "line", .on = "on"};

static int push_event(struct reader *r, const struct history_event *e)
{
    char msg[256];
    if (history_validate_event(&r->valid, e, r->line, (const char *const *)r->keys.names,
                               &jsonl_words, msg, sizeof(msg)) < 0)
        return fail(r, "%s", msg);
    r->last_t = e->t_ns;
    r->n_events++;
    *r->out = *e;
    r->have = true;
    return 0;
}

static int read_event(struct reader *r, json_t *o, int type)
{
    struct history_event e = {.type = (uint8_t)type};
    json_t *p = json_object_get(o, "process");
    if (get_time(r, o, "time", true, &e.t_ns) < 0)
        return -1;
    if (p == NULL)
        return fail(r, "missing \"process\"");
    int rc;
    if (json_is_string(p) && strcmp(json_string_value(p), "nemesis") == 0)
        rc = read_fault(r, o, type, &e);
    else if (json_is_string(p) && strcmp(json_string_value(p), "host") == 0)
        rc = read_stall(r, o, type, &e);
    else if (json_is_integer(p))
        rc = read_op(r, o, json_integer_value(p), &e);
    else
        rc = fail(r, "\"process\" must be a client number, \"nemesis\" or \"host\"");
    return rc < 0 ? -1 : push_event(r, &e);
}

static int read_object(struct reader *r, json_t *o)
{
    int type = get_enum(r, o, "type", line_types, 6, -1);
    if (type < 0)
        return -1;
    if (r->h->end_line)
        return fail(r, "a line after the end line");
    if (!r->started && type != LT_START)
        return fail(r, "expected the start line, {\"type\":\"start\",...}");
    if (r->started && type == LT_START)
        return fail(r, "a second start line");
    if (type == LT_START)
        return read_start(r, o);
    if (type == LT_END)
        return read_end(r, o);
    return read_event(r, o, type);
}

static bool blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

static int read_line(struct reader *r, const char *line, size_t len)
{
    json_error_t je;
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    if (o == NULL) /* columns count from 1, as in scenario errors */
        return fail(r, "bad JSON at column %d: %s%s", je.column > 0 ? je.column : 1, je.text,
                    r->line == 1 ? " (a history is JSON lines, one event a line: give RUN_DIR or "
                                   "RUN_DIR/history.jsonl)"
                                 : "");
    int rc = json_is_object(o) ? read_object(r, o) : fail(r, "expected a JSON object");
    json_decref(o);
    return rc;
}

/* The next line into buf (HISTORY_LINE_MAX + 1 bytes), without its '\n':
 * its length, -1 at the end of the file, or -2 when it is longer than
 * HISTORY_LINE_MAX (the rest of it is never read: /dev/zero is one endless
 * line). */
static long next_line(FILE *f, char *buf)
{
    size_t n = 0;
    int c;
    while ((c = getc_unlocked(f)) != EOF && c != '\n') {
        if (n == HISTORY_LINE_MAX)
            return -2;
        buf[n++] = (char)c;
    }
    return c == EOF && n == 0 ? -1 : (long)n;
}

/* Without an end line the run stopped abruptly: it ends at its last event. */
static void finish(struct reader *r)
{
    struct history *h = r->h;
    sync_tables(r);
    if (!h->end_line) {
        h->complete = false;
        h->end_mono_ns = r->n_events ? r->last_t : h->start_mono_ns;
    }
}

struct reader *jsonl_dec_new(FILE *f, const char *name, struct history *h, char *err, size_t errlen)
{
    struct reader *r = calloc(1, sizeof(*r));
    char *buf = malloc(HISTORY_LINE_MAX + 1);
    if (r == NULL || buf == NULL) {
        free(r);
        free(buf);
        snprintf(err, errlen, "%s: out of memory", name);
        return NULL;
    }
    *r = (struct reader){.path = name, .err = err, .errlen = errlen, .h = h, .f = f, .buf = buf};
    return r;
}

/* At the end of the file: what only the whole file can tell. */
static int at_eof(struct reader *r)
{
    if (ferror(r->f))
        return fail(r, "read error: %s", strerror(errno));
    if (!r->started) {
        r->line = r->line ? r->line : 1;
        return fail(r, "no start line (empty file)");
    }
    finish(r);
    return 0;
}

int jsonl_dec_next(struct reader *r, struct history_event *e)
{
    long len;
    int rc = 0;
    r->out = e;
    r->have = false;
    errno = 0;
    while (rc == 0 && !r->have && (len = next_line(r->f, r->buf)) != -1) {
        r->line++;
        if (len == -2)
            rc = fail(r, "a line longer than %d bytes, the most a history line may be",
                      HISTORY_LINE_MAX);
        else if (!blank(r->buf, (size_t)len))
            rc = read_line(r, r->buf, (size_t)len);
    }
    sync_tables(r); /* the header owns every name, whatever happened */
    if (rc < 0)
        return -1;
    return r->have ? 1 : at_eof(r) < 0 ? -1 : 0;
}

void jsonl_dec_free(struct reader *r)
{
    if (r == NULL)
        return;
    history_validator_free(&r->valid);
    /* the names belong to the header (sync_tables) */
    intern_release(&r->keys);
    intern_release(&r->owners);
    intern_release(&r->notes);
    free(r->buf);
    free(r);
}
