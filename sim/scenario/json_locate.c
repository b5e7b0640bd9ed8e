/* json_locate.c - where a JSON path sits in the raw text (see json_locate.h).
 *
 * A scanner just good enough to step over what jansson already accepted:
 * it checks the structure it walks through (colons, commas, brackets) but
 * skips a value it does not enter by counting brackets, so it never
 * recurses on skipped input.
 */
#include "sim/scenario/json_locate.h"

#include <stdint.h>
#include <string.h>

/* json_path_at recurses once per nesting level; deeper text is refused. */
#define WALK_MAX_DEPTH 256
/* json_locate's paths are short: a scenario nests three levels. */
#define PATH_MAX_STEPS 32

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* p at the opening quote; returns the byte after the closing one. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '"')
            return p + 1;
        if (*p == '\\' && ++p == end)
            break;
    }
    return NULL;
}

/* Numbers and the literals true, false, null. */
static const char *skip_scalar(const char *p, const char *end)
{
    const char *start = p;
    while (p < end && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || *p == 'E' ||
                       *p == '+' || *p == '-' || *p == '.'))
        p++;
    return p > start ? p : NULL;
}

/* Returns the byte after the value at p, or NULL if it is cut short. */
static const char *skip_value(const char *p, const char *end)
{
    size_t depth = 0;

    if (p >= end)
        return NULL;
    if (*p == '"')
        return skip_string(p, end);
    if (*p != '{' && *p != '[')
        return skip_scalar(p, end);
    while (p < end) {
        if (*p == '"') {
            p = skip_string(p, end);
            if (!p)
                return NULL;
            continue;
        }
        if (*p == '{' || *p == '[')
            depth++;
        else if ((*p == '}' || *p == ']') && --depth == 0)
            return p + 1;
        p++;
    }
    return NULL;
}

static int hex4(const char *p, const char *end, unsigned *out)
{
    unsigned v = 0;

    if (end - p < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

static int utf8_encode(unsigned cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* \uXXXX, with a following low surrogate joined as jansson does. */
static int decode_u(const char **pp, const char *end, char out[4])
{
    const char *p = *pp;
    unsigned cp, lo;

    if (hex4(p, end, &cp) < 0)
        return -1;
    p += 4;
    if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
        hex4(p + 2, end, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        p += 6;
    }
    *pp = p;
    return utf8_encode(cp, out);
}

/* Decode the next character of a string body into out: the number of bytes,
 * 0 at the closing quote (consumed), -1 on malformed input. */
static int next_char(const char **pp, const char *end, char out[4])
{
    static const char escapes[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
    const char *p = *pp;

    if (p >= end)
        return -1;
    if (*p != '\\') {
        out[0] = *p;
        *pp = p + 1;
        return *p == '"' ? 0 : 1;
    }
    if (++p >= end)
        return -1;
    if (*p == 'u') {
        *pp = p + 1;
        return decode_u(pp, end, out);
    }
    for (size_t i = 0; i + 1 < sizeof(escapes); i += 2) {
        if (escapes[i] == *p) {
            out[0] = escapes[i + 1];
            *pp = p + 1;
            return 1;
        }
    }
    return -1;
}

/* Does the string token at tok (its opening quote) decode to key? */
static bool key_equals(const char *tok, const char *end, const char *key, size_t key_len)
{
    const char *p = tok + 1;
    size_t i = 0;
    char buf[4];
    int n;

    while ((n = next_char(&p, end, buf)) > 0) {
        if ((size_t)n > key_len - i || memcmp(buf, key + i, (size_t)n) != 0)
            return false;
        i += (size_t)n;
    }
    return n == 0 && i == key_len;
}

/* p at a member's key; on return *value is the value's first byte. */
static const char *member(const char *p, const char *end, const char **value)
{
    if (p >= end || *p != '"')
        return NULL;
    const char *q = skip_string(p, end);
    if (!q)
        return NULL;
    q = skip_ws(q, end);
    if (q >= end || *q != ':')
        return NULL;
    *value = skip_ws(q + 1, end);
    return *value < end ? p : NULL;
}

/* After a member or element: the start of the next one, or NULL at the
 * closing bracket (or on malformed input). */
static const char *next_item(const char *p, const char *end)
{
    p = skip_value(p, end);
    if (!p)
        return NULL;
    p = skip_ws(p, end);
    if (p >= end || *p != ',')
        return NULL;
    return skip_ws(p + 1, end);
}

static const char *find_member(const char *p, const char *end, const struct json_step *st,
                               const char **key_at)
{
    const char *value;

    if (p >= end || *p != '{')
        return NULL;
    for (p = skip_ws(p + 1, end); p && member(p, end, &value); p = next_item(value, end)) {
        if (key_equals(p, end, st->key, st->key_len)) {
            *key_at = p;
            return value;
        }
    }
    return NULL;
}

static const char *find_element(const char *p, const char *end, size_t index)
{
    if (p >= end || *p != '[')
        return NULL;
    p = skip_ws(p + 1, end);
    for (size_t i = 0; p && p < end && *p != ']'; i++) {
        if (i == index)
            return p;
        p = next_item(p, end);
    }
    return NULL;
}

static void position(const char *text, const char *at, struct json_pos *pos)
{
    int line = 1, column = 1;

    for (const char *p = text; p < at; p++) {
        if (*p == '\n') {
            line++;
            column = 1;
        } else if (((unsigned char)*p & 0xC0) != 0x80) {
            /* a UTF-8 continuation byte adds no column, as in jansson */
            column++;
        }
    }
    pos->line = line;
    pos->column = column;
}

int json_locate_steps(const char *text, size_t len, const struct json_step *steps, size_t n,
                      bool at_key, struct json_pos *pos)
{
    const char *end = text + len;
    const char *p = skip_ws(text, end);
    const char *key_at = NULL;

    for (size_t i = 0; i < n && p; i++)
        p = steps[i].key ? find_member(p, end, &steps[i], &key_at)
                         : find_element(p, end, steps[i].index);
    if (!p || p >= end)
        return -1;
    if (at_key && n > 0 && steps[n - 1].key)
        p = key_at;
    position(text, p, pos);
    return 0;
}

static const char *parse_index(const char *p, size_t *index)
{
    size_t v = 0;
    const char *start = ++p;

    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (SIZE_MAX - 9) / 10)
            return NULL;
        v = v * 10 + (size_t)(*p - '0');
    }
    if (p == start || *p != ']')
        return NULL;
    *index = v;
    return p + 1;
}

/* "faults[2].at_ms" -> {faults} {2} {at_ms}; keys point into path. */
static int parse_path(const char *path, struct json_step *steps, size_t max, size_t *n)
{
    const char *p = path;
    size_t k = 0;

    for (; *p; k++) {
        if (k == max)
            return -1;
        steps[k].key = NULL;
        steps[k].key_len = 0;
        steps[k].index = 0;
        if (*p == '[') {
            p = parse_index(p, &steps[k].index);
            if (!p)
                return -1;
            continue;
        }
        if (k > 0 && *p++ != '.')
            return -1;
        const char *start = p;
        p += strcspn(p, ".[");
        if (p == start)
            return -1;
        steps[k].key = start;
        steps[k].key_len = (size_t)(p - start);
    }
    *n = k;
    return 0;
}

int json_locate(const char *text, size_t len, const char *path, bool at_key, struct json_pos *pos)
{
    struct json_step steps[PATH_MAX_STEPS];
    size_t n;

    if (parse_path(path, steps, PATH_MAX_STEPS, &n) < 0)
        return -1;
    return json_locate_steps(text, len, steps, n, at_key, pos);
}

/* json_path_at's state: the offset sought and the path so far. */
struct walk {
    const char *end;
    const char *at;
    char *path;
    size_t cap;
    size_t len;
    const char *found;
};

static void path_append(struct walk *w, const char *s, size_t n)
{
    size_t room = w->cap - 1 - w->len;

    if (n > room)
        n = room;
    memcpy(w->path + w->len, s, n);
    w->len += n;
    w->path[w->len] = '\0';
}

static void path_truncate(struct walk *w, size_t len)
{
    w->len = len;
    w->path[len] = '\0';
}

static void path_key(struct walk *w, const char *tok)
{
    const char *p = tok + 1;
    char buf[4];
    int n;

    if (w->len > 0)
        path_append(w, ".", 1);
    while ((n = next_char(&p, w->end, buf)) > 0)
        path_append(w, buf, (size_t)n);
}

static void path_index(struct walk *w, size_t i)
{
    char buf[24];
    size_t n = sizeof(buf);

    /* digits backwards, so no format string is needed */
    buf[--n] = ']';
    do {
        buf[--n] = (char)('0' + i % 10);
        i /= 10;
    } while (i);
    buf[--n] = '[';
    path_append(w, buf + n, sizeof(buf) - n);
}

static int walk_value(struct walk *w, const char **pp, int depth);

/* The container at start holds w->at, but none of its items does. */
static int found_here(struct walk *w, const char *start, size_t len)
{
    path_truncate(w, len);
    w->found = start;
    return 1;
}

static int locate_in_object(struct walk *w, const char **pp, int depth)
{
    const char *start = *pp, *p = skip_ws(start + 1, w->end), *value;
    size_t len = w->len;

    if (p < w->end && *p != '}') {
        for (;; p = skip_ws(p + 1, w->end)) {
            if (w->at < p)
                return found_here(w, start, len);
            if (!member(p, w->end, &value))
                return -1;
            path_key(w, p);
            if (w->at < value)
                return found_here(w, p, w->len); /* inside the key or before the colon */
            int r = walk_value(w, &value, depth + 1);
            if (r != 0)
                return r;
            path_truncate(w, len);
            p = skip_ws(value, w->end);
            if (p >= w->end || *p != ',')
                break;
        }
    }
    if (p >= w->end || *p != '}')
        return -1;
    *pp = p + 1;
    return w->at <= p ? found_here(w, start, len) : 0;
}

static int walk_array(struct walk *w, const char **pp, int depth)
{
    const char *start = *pp, *p = skip_ws(start + 1, w->end);
    size_t len = w->len;

    if (p < w->end && *p != ']') {
        for (size_t i = 0;; i++, p = skip_ws(p + 1, w->end)) {
            if (w->at < p)
                return found_here(w, start, len);
            path_index(w, i);
            int r = walk_value(w, &p, depth + 1);
            if (r != 0)
                return r;
            path_truncate(w, len);
            p = skip_ws(p, w->end);
            if (p >= w->end || *p != ',')
                break;
        }
    }
    if (p >= w->end || *p != ']')
        return -1;
    *pp = p + 1;
    return w->at <= p ? found_here(w, start, len) : 0;
}

/* Called with w->at >= *pp. Returns 1 when the value holds w->at (w->found
 * and w->path set), 0 when it ends before (with *pp past it), -1 on
 * malformed text. */
static int walk_value(struct walk *w, const char **pp, int depth)
{
    const char *p = *pp;

    if (depth > WALK_MAX_DEPTH || p >= w->end)
        return -1;
    if (*p == '{')
        return locate_in_object(w, pp, depth);
    if (*p == '[')
        return walk_array(w, pp, depth);
    const char *q = skip_value(p, w->end);
    if (!q)
        return -1;
    *pp = q;
    if (w->at >= q)
        return 0;
    w->found = p;
    return 1;
}

int json_path_at(const char *text, size_t len, size_t at, char *path, size_t path_len,
                 struct json_pos *pos)
{
    if (path_len == 0 || at >= len)
        return -1;

    struct walk w = {.end = text + len, .at = text + at, .path = path, .cap = path_len};
    const char *p = skip_ws(text, w.end);

    if (w.at < p)
        return -1;
    path[0] = '\0';
    if (walk_value(&w, &p, 0) != 1)
        return -1;
    position(text, w.found, pos);
    return 0;
}
