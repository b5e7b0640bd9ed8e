/* history.c - a history's JSON-lines writer and its release
 * (history_buf.c holds the clients' buffers and their merge; sections.c
 * rebuilds the critical sections). The file format is documented in
 * docs/history.md; history_read.c reads it back.
 */
#include "sim/record/history.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/faults/fault_spec.h"
#include "sim/record/hiccup.h"

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
const char *const history_latch_f_names[HF_COUNT - HF_LATCH_FIRST] = {"set_count", "delete",
                                                                      "count_down", "await"};
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
    if (h->latch.latches) {
        put_field_u64(l, ",\"latches\":", h->latch.latches);
        put_field_u64(l, ",\"parties\":", h->latch.parties);
        put_field_u64(l, ",\"bound_ms\":", h->latch.bound_ms);
    }
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

/* A latch's call: its error as an operation's; a trySetCount's count; what
 * a waiter saw when its await came back. */
static int write_latch(const struct history *h, const struct history_event *e, struct line *l)
{
    if (!history_latch_expressible(e))
        return -1;
    put_field_u64(l, "{\"time\":", e->t_ns);
    put_field_u64(l, ",\"process\":", e->client);
    put_field_str(l, ",\"type\":", type_names[e->type]);
    put_field_str(l, ",\"f\":", history_latch_f_names[e->f - HF_LATCH_FIRST]);
    put_name(l, ",\"key\":", h->keys, h->n_keys, e->key);
    put_name(l, ",\"owner\":", h->owners, h->n_owners, e->owner);
    if (e->type == HT_INVOKE && e->f == HF_SET_COUNT)
        put_field_u64(l, ",\"count\":", e->permits);
    if ((e->type == HT_FAIL || e->type == HT_INFO) && e->arg != HE_NONE)
        put_field_str(l, ",\"error\":", history_error_names[e->arg]);
    if (e->type != HT_INVOKE && e->f == HF_AWAIT) {
        put_field_u64(l, ",\"sent\":", e->permits);
        if (e->zero_ns)
            put_field_u64(l, ",\"zero\":", e->zero_ns);
        if (e->unanswered)
            put_field_u64(l, ",\"unanswered\":", e->unanswered);
        if (e->resumed_ns)
            put_field_u64(l, ",\"resumed\":", e->resumed_ns);
    }
    put(l, "}\n");
    return 0;
}

static int write_event(const struct history *h, const struct history_event *e, struct line *l)
{
    if (history_f_latch(e->f))
        return write_latch(h, e, l);
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
