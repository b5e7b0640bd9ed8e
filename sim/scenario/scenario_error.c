/* scenario_error.c - the scenario parser's messages: one line each,
 * "file:line:col: json.path: what", with the user's text quoted safely and
 * the closest known name suggested. Split from scenario.c, which holds the
 * format itself; both share scenario_parse.h. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "algorithms/lock.h"
#include "sim/scenario/json_locate.h"
#include "sim/scenario/scenario_parse.h"

/* ---- messages -------------------------------------------------------- */

/* Append s to buf (of len, holding a string), escaping what would break a
 * one-line message, and cutting it at max bytes with "...". */
static void append_escaped(char *buf, size_t len, const char *s, size_t max)
{
    size_t used = strlen(buf);

    for (size_t i = 0; s[i] && used + 8 < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (i >= max && (ch & 0xC0) != 0x80) {
            snprintf(buf + used, len - used, "...");
            return;
        }
        if (ch < 0x20 || ch == 0x7F)
            used += (size_t)snprintf(buf + used, len - used, "\\u%04x", ch);
        else if (ch == '"' || ch == '\\')
            used += (size_t)snprintf(buf + used, len - used, "\\%c", ch);
        else
            buf[used++] = (char)ch;
        buf[used] = '\0';
    }
}

struct quoted scn_quote(const char *s)
{
    struct quoted q = {"\""};

    append_escaped(q.s, sizeof(q.s) - 1, s, QUOTE_MAX);
    strcat(q.s, "\"");
    return q;
}

static void render_path(const struct ctx *c, char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0; i < c->depth; i++) {
        size_t used = strlen(buf);
        if (!c->path[i].key)
            snprintf(buf + used, len - used, "[%zu]", c->path[i].index);
        else {
            if (i > 0)
                snprintf(buf + used, len - used, ".");
            append_escaped(buf, len, c->path[i].key, QUOTE_MAX);
        }
    }
}

/* The error is one line, whatever the file name or jansson's text hold, and
 * a cut does not leave half a UTF-8 character behind. */
static void one_line(char *err)
{
    size_t n = strlen(err), lead = n;

    for (size_t i = 0; i < n; i++)
        if ((unsigned char)err[i] < 0x20 || err[i] == 0x7F)
            err[i] = '?';
    if (n + 1 < SCENARIO_ERR_MAX)
        return;
    while (lead > 0 && ((unsigned char)err[lead - 1] & 0xC0) == 0x80)
        lead--;
    if (lead == 0)
        return;
    unsigned char first = (unsigned char)err[lead - 1];
    size_t want = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1;
    if (n - (lead - 1) < want)
        err[lead - 1] = '\0';
}

/* "file:line:col: path: msg", leaving out what is not known. */
void scn_emit(char *err, const char *file, const struct json_pos *pos, const char *path,
              const char *msg)
{
    int n = 0;

    /* jansson says column 0 at the start of a line (an empty file);
     * columns count from 1 here, as the docs promise */
    if (file[0] && pos)
        n = snprintf(err, SCENARIO_ERR_MAX, "%s:%d:%d: ", file, pos->line > 0 ? pos->line : 1,
                     pos->column > 0 ? pos->column : 1);
    else if (file[0])
        n = snprintf(err, SCENARIO_ERR_MAX, "%s: ", file);
    if (n >= 0 && n < SCENARIO_ERR_MAX)
        snprintf(err + n, SCENARIO_ERR_MAX - (size_t)n, "%s%s%s", path, path[0] ? ": " : "", msg);
    one_line(err);
}

int scn_read_file(const char *path, char **text, size_t *len, char *why, size_t why_len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0;

    if (!f) {
        snprintf(why, why_len, "cannot open: %s", strerror(errno));
        return -1;
    }
    buf = malloc(FILE_MAX_BYTES + 1);
    if (buf) {
        n = fread(buf, 1, FILE_MAX_BYTES + 1, f);
        if (ferror(f))
            snprintf(why, why_len, "cannot read: %s", strerror(errno));
        else if (n > FILE_MAX_BYTES)
            snprintf(why, why_len, "too large (more than %d bytes)", FILE_MAX_BYTES);
        else
            why[0] = '\0';
    } else {
        snprintf(why, why_len, "cannot read: out of memory");
    }
    fclose(f);
    if (!buf || why[0]) {
        free(buf);
        return -1;
    }
    *text = buf;
    *len = n;
    return 0;
}

/* Is the value under check one the command line gave (or inside one)? */
static bool given_by_option(const struct ctx *c)
{
    for (size_t i = 0; i < c->n_given; i++) {
        const struct scn_override *o = &c->given[i];
        size_t k = 0;
        while (k < 2 && o->keys[k] && k < c->depth && c->path[k].key &&
               strcmp(c->path[k].key, o->keys[k]) == 0)
            k++;
        if (k > 0 && (k == 2 || o->keys[k] == NULL))
            return true;
    }
    return false;
}

/* Where the value under check sits in the file. A check of the whole may
 * blame a value the file does not hold (a default): then the innermost
 * object around it that the file has, with *absent set, so every error the
 * file caused points into it. False only when not even the root is there. */
static bool locate(const struct ctx *c, bool at_key, struct json_pos *pos, bool *absent)
{
    *absent = false;
    for (size_t d = c->depth;; d--) {
        if (json_locate_steps(c->text, c->len, c->path, d, at_key && d == c->depth, pos) == 0)
            return true;
        *absent = true;
        if (d == 0)
            return false;
    }
}

__attribute__((format(printf, 5, 0))) static int
vfail(struct ctx *c, bool at_key, bool any_value, const json_t *want, const char *fmt, va_list ap)
{
    char msg[SCENARIO_ERR_MAX], path[256];
    struct json_pos pos;
    bool located, absent = false;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    render_path(c, path, sizeof(path));
    /* a value the command line gave is nowhere in the file; one that
     * cannot be the file's (want NULL) is not pointed at either */
    located =
        c->text && !given_by_option(c) && (any_value || want) && locate(c, at_key, &pos, &absent);
    if (located && absent) {
        size_t used = strlen(msg);
        snprintf(msg + used, sizeof(msg) - used, "; not in the file: the default");
    }
    scn_emit(c->err, c->file, located ? &pos : NULL, path, msg);
    return -1;
}

/* Fail at the value under check. */
__attribute__((format(printf, 2, 3))) int scn_fail(struct ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(c, false, true, NULL, fmt, ap);
    va_end(ap);
    return -1;
}

__attribute__((format(printf, 2, 0))) int scn_vfail(struct ctx *c, const char *fmt, va_list ap)
{
    vfail(c, false, true, NULL, fmt, ap);
    return -1;
}

/* Fail at the key of the member under check (an unknown key). */
__attribute__((format(printf, 2, 3))) static int fail_key(struct ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(c, true, true, NULL, fmt, ap);
    va_end(ap);
    return -1;
}

/* The checks of the whole: fail at the value, pointed at in the file
 * unless the command line gave it (want NULL: it cannot be the file's);
 * takes want's reference. */
__attribute__((format(printf, 3, 4))) int scn_fail_if_file(struct ctx *c, json_t *want,
                                                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(c, false, false, want, fmt, ap);
    va_end(ap);
    json_decref(want);
    return -1;
}

void scn_push_key(struct ctx *c, const char *key)
{
    c->path[c->depth++] = (struct json_step){.key = key, .key_len = strlen(key)};
}

void scn_push_index(struct ctx *c, size_t i)
{
    c->path[c->depth++] = (struct json_step){.index = i};
}

void scn_pop(struct ctx *c)
{
    c->depth--;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number"; /* 1.0 is a number, not an integer, as in JSON Schema */
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    default:
        return "null";
    }
}

int scn_type_error(struct ctx *c, const json_t *v, const char *what)
{
    return scn_fail(c, "expected %s, got %s", what, type_name(v));
}

/* ---- suggestions ----------------------------------------------------- */

#define DIST_MAX_LEN 64 /* longer candidates are never suggested */

/* Damerau-Levenshtein distance (optimal string alignment): a swapped pair
 * of letters, the commonest typo, costs one edit. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t rows[3][DIST_MAX_LEN + 1];
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

    if (lb > DIST_MAX_LEN)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
        }
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

const char *suggest_closest(const char *word, const char *const *known, size_t n)
{
    size_t limit = strlen(word) / 3, best = SIZE_MAX;
    const char *pick = NULL;

    if (limit < 2)
        limit = 2;
    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(word, known[i]) == 0)
            return known[i]; /* "REDIS" means "redis", however far in edits */
        size_t d = distance(word, known[i]);
        if (d <= limit && d < best) {
            best = d;
            pick = known[i];
        }
    }
    return pick;
}

/* " (did you mean \"x\"?)" for the closest candidate, else " (known: a, b, c)". */
static void suggest(char *buf, size_t len, const char *word, const char *const *cands, size_t n)
{
    const char *pick = suggest_closest(word, cands, n);
    size_t used;

    if (pick) {
        snprintf(buf, len, " (did you mean \"%s\"?)", pick);
        return;
    }
    snprintf(buf, len, " (known: ");
    for (size_t i = 0; i < n; i++) {
        used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? ", " : "", cands[i]);
    }
    used = strlen(buf);
    snprintf(buf + used, len - used, ")");
}

int scn_unknown_name(struct ctx *c, const struct names *nm, const char *value)
{
    char hint[SCENARIO_ERR_MAX];

    suggest(hint, sizeof(hint), value, nm->list, nm->n);
    return scn_fail(c, "unknown %s %s%s", nm->noun, scn_quote(value).s, hint);
}

/* Keys the format once had and gave up: refused with what to write
 * instead (docs/scenario.md), never read as a silent synonym. */
static const struct {
    const char *path; /* rendered JSON path of the old key */
    const char *why;
} renamed_keys[] = {
    {"expect.fenced", "no longer accepted: write \"rejected_accesses\" (the same count: reads and "
                      "writes the store rejected for a stale token)"},
};

int scn_unknown_key(struct ctx *c, const struct table *t, const char *key)
{
    const char *keys[32]; /* every key of the widest table: lock, with its families */
    char hint[SCENARIO_ERR_MAX], path[256];
    size_t n = 0;

    scn_push_key(c, key);
    render_path(c, path, sizeof(path));
    for (size_t i = 0; i < N_OF(renamed_keys); i++) {
        if (strcmp(path, renamed_keys[i].path) == 0) {
            fail_key(c, "%s", renamed_keys[i].why);
            scn_pop(c);
            return -1;
        }
    }
    for (size_t i = 0; i < t->n && n < N_OF(keys); i++)
        keys[n++] = t->fields[i].key;
    suggest(hint, sizeof(hint), key, keys, n);
    fail_key(c, "unknown key%s", hint);
    scn_pop(c);
    return -1;
}

int scn_unknown_algorithm(struct ctx *c, const char *name, json_t *want)
{
    const char *algs[32];
    char hint[SCENARIO_ERR_MAX];
    size_t n = 0;

    for (size_t i = 0; i < lock_count() && n < N_OF(algs); i++)
        algs[n++] = lock_at(i)->name;
    suggest(hint, sizeof(hint), name, algs, n);
    if (want) /* the checks of the whole: the algorithm may be the command line's */
        return scn_fail_if_file(c, want, "unknown algorithm %s%s", scn_quote(name).s, hint);
    return scn_fail(c, "unknown algorithm %s%s", scn_quote(name).s, hint);
}
