/* history_key.c - the series key of a run (history_key.h): the key
 * object taken from a report.json, its canonical text and hash, and the
 * settings two keys differ in. */
#include "reports/history_key.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/record/grow.h"

#define SHOWN_DIFFS 3

struct buf {
    char *p;
    size_t n, cap;
    bool oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (array_grow(&b->p, &b->cap, b->n + n + 1, 1) < 0) {
        b->oom = true;
        return;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void puts_buf(struct buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_string(struct buf *b, const char *s, size_t n)
{
    static const char shortcut[] = {
        ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};
    put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            put(b, esc, 2);
        } else if (c < 0x20 && c < sizeof(shortcut) && shortcut[c]) {
            esc[0] = '\\';
            esc[1] = shortcut[c];
            put(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            put(b, esc, 6);
        } else {
            put(b, (const char *)&s[i], 1);
        }
    }
    put(b, "\"", 1);
}

/* A real as Python's repr writes it: the fewest significant digits that
 * read back the same double, positional for exponents -4..15, else
 * d.ddde+XX; so the text does not hang on a writer's precision (0.9 is
 * "0.9" whether report.json wrote 0.9 or 0.90000000000000002) and a
 * checker in Python gets it from json.dumps. */
static void put_real(struct buf *b, double v)
{
    char sci[40], out[64], digits[24];
    int p = 0;
    do
        snprintf(sci, sizeof(sci), "%.*e", p, v);
    while (strtod(sci, NULL) != v && ++p < 17);
    const char *m = sci + (sci[0] == '-');
    size_t nd = 0;
    for (const char *c = m; *c && *c != 'e'; c++)
        if (*c != '.')
            digits[nd++] = *c;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    int exp = atoi(strchr(sci, 'e') + 1);
    if (sci[0] == '-')
        put(b, "-", 1);
    if (exp < -4 || exp >= 16) {
        snprintf(out, sizeof(out), "%c%s%se%c%02d", digits[0], nd > 1 ? "." : "", digits + 1,
                 exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    } else if (exp < 0) { /* 0.000ddd */
        memcpy(out, "0.000", (size_t)(1 - exp));
        snprintf(out + 1 - exp, sizeof(out) - (size_t)(1 - exp), "%s", digits);
    } else if ((size_t)exp + 1 >= nd) { /* ddd000.0 */
        snprintf(out, sizeof(out), "%s%.*s.0", digits, exp + 1 - (int)nd, "0000000000000000");
    } else { /* dd.ddd */
        snprintf(out, sizeof(out), "%.*s.%s", exp + 1, digits, digits + exp + 1);
    }
    puts_buf(b, out);
}

static int by_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void canon(struct buf *b, const json_t *v);

static void canon_object(struct buf *b, const json_t *v)
{
    size_t n = json_object_size(v), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof(*keys));
    const char *k;
    json_t *x;
    if (keys == NULL) {
        b->oom = true;
        return;
    }
    json_object_foreach((json_t *)v, k, x) keys[i++] = k;
    qsort(keys, n, sizeof(*keys), by_key);
    put(b, "{", 1);
    for (i = 0; i < n; i++) {
        if (i)
            put(b, ",", 1);
        put_string(b, keys[i], strlen(keys[i]));
        put(b, ":", 1);
        canon(b, json_object_get(v, keys[i]));
    }
    put(b, "}", 1);
    free(keys);
}

static void canon(struct buf *b, const json_t *v)
{
    char text[32];
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        canon_object(b, v);
        break;
    case JSON_ARRAY:
        put(b, "[", 1);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                put(b, ",", 1);
            canon(b, json_array_get(v, i));
        }
        put(b, "]", 1);
        break;
    case JSON_STRING:
        put_string(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        puts_buf(b, text);
        break;
    case JSON_REAL:
        put_real(b, json_real_value(v));
        break;
    case JSON_TRUE:
        puts_buf(b, "true");
        break;
    case JSON_FALSE:
        puts_buf(b, "false");
        break;
    default:
        puts_buf(b, "null");
    }
}

char *history_canonical_json(const json_t *v)
{
    struct buf b = {0};
    canon(&b, v);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

uint64_t history_fnv1a64(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* "managed, pid 7818, master" without its process ids: "managed, master";
 * "managed pgbouncer, pid 12, in front of pid 13": "managed pgbouncer, in
 * front of". A pid is this run's; the rest is how the server was run. */
static void layout_of(const char *how, size_t n, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    while (n > 0) {
        size_t t = 0;
        while (t < n && !(how[t] == ',' && t + 1 < n && how[t + 1] == ' '))
            t++;
        char tok[128];
        snprintf(tok, sizeof(tok), "%.*s", (int)t, how);
        char *pid = strstr(tok, "pid ");
        if (pid && pid[4] >= '0' && pid[4] <= '9') {
            char *end = pid + 4 + strspn(pid + 4, "0123456789");
            memmove(pid, end, strlen(end) + 1);
            for (size_t k = strlen(tok); k > 0 && tok[k - 1] == ' '; k--)
                tok[k - 1] = '\0';
        }
        if (tok[0] && used < len)
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "", tok);
        how += t;
        n -= t;
        if (n >= 2) {
            how += 2;
            n -= 2;
        }
    }
}

/* meta.servers' version of the server of kind at address, or null. */
static json_t *version_of(json_t *report, const char *kind, const char *address)
{
    json_t *meta = json_object_get(json_object_get(report, "meta"), "servers"), *m;
    size_t i;
    if (!json_is_array(meta))
        return json_null();
    json_array_foreach(meta, i, m)
    {
        const char *k = json_string_value(json_object_get(m, "kind"));
        const char *a = json_string_value(json_object_get(m, "address"));
        if (k && a && strcmp(k, kind) == 0 && strcmp(a, address) == 0) {
            json_t *v = json_object_get(m, "version");
            return json_is_string(v) ? json_incref(v) : json_null();
        }
    }
    return json_null();
}

/* endpoints' proxied of the server so named, or null. */
static json_t *proxied_of(json_t *report, const char *server)
{
    json_t *eps = json_object_get(report, "endpoints"), *e;
    size_t i;
    json_array_foreach(eps, i, e)
    {
        const char *s = json_string_value(json_object_get(e, "server"));
        json_t *p = json_object_get(e, "proxied");
        if (s && strcmp(s, server) == 0 && json_is_boolean(p))
            return json_incref(p);
    }
    return json_null();
}

/* One entry of report.json's servers ("redis 127.0.0.1:29710 (managed,
 * pid 7818)") as {kind, layout, version, proxied}. */
static json_t *server_key(json_t *report, const char *text)
{
    char kind[64], address[160], layout[256];
    size_t k = strcspn(text, " ");
    const char *addr = text + k + (text[k] == ' ');
    size_t a = strcspn(addr, " ");
    const char *open = strchr(addr + a, '('), *close = strrchr(text, ')');
    snprintf(kind, sizeof(kind), "%.*s", (int)k, text);
    snprintf(address, sizeof(address), "%.*s", (int)a, addr);
    layout[0] = '\0';
    if (open && close && close > open)
        layout_of(open + 1, (size_t)(close - open - 1), layout, sizeof(layout));
    return json_pack("{s:s, s:s, s:o, s:o}", "kind", kind, "layout", layout, "version",
                     version_of(report, kind, address), "proxied", proxied_of(report, text));
}

static json_t *servers_key(json_t *report)
{
    json_t *list = json_object_get(report, "servers"), *s;
    size_t i;
    if (!json_is_array(list))
        return json_null();
    json_t *out = json_array();
    json_array_foreach(list, i, s)
    {
        json_t *one = json_is_string(s) ? server_key(report, json_string_value(s)) : json_null();
        if (out == NULL || one == NULL || json_array_append_new(out, one) < 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

json_t *history_key_object(json_t *report)
{
    json_t *scn = json_object_get(report, "scenario"), *alg = json_object_get(report, "algorithm");
    json_t *s = json_is_object(scn) ? json_deep_copy(scn) : json_null();
    json_t *servers = servers_key(report);
    if (json_is_object(s)) {
        /* words and places, not settings: the file may move, the name is
         * the series's own, defaults only explains values already here */
        static const char *const aside[] = {"name", "description", "file", "defaults"};
        for (size_t i = 0; i < sizeof(aside) / sizeof(aside[0]); i++)
            json_object_del(s, aside[i]);
    }
    if (s == NULL || servers == NULL) {
        json_decref(s);
        json_decref(servers);
        return NULL;
    }
    return json_pack("{s:o, s:o, s:o}", "algorithm",
                     json_is_string(alg) ? json_incref(alg) : json_null(), "scenario", s, "servers",
                     servers);
}

struct diff {
    char *buf;
    size_t len, used;
    int shown, more;
};

static void value_text(const json_t *v, char *out, size_t len)
{
    if (v == NULL) {
        snprintf(out, len, "absent");
    } else if (json_is_string(v)) {
        snprintf(out, len, "%s", json_string_value(v));
    } else if (json_is_array(v)) {
        size_t n = json_array_size(v);
        snprintf(out, len, "%zu entr%s", n, n == 1 ? "y" : "ies");
    } else if (json_is_object(v)) {
        snprintf(out, len, "{...}");
    } else {
        char *t = history_canonical_json(v);
        snprintf(out, len, "%s", t ? t : "?");
        free(t);
    }
}

static void note(struct diff *d, const char *path, const json_t *a, const json_t *b)
{
    if (d->shown == SHOWN_DIFFS) {
        d->more++;
        return;
    }
    char x[64], y[64];
    value_text(a, x, sizeof(x));
    value_text(b, y, sizeof(y));
    if (strncmp(path, "scenario.", 9) == 0)
        path += 9;
    if (d->used < d->len)
        d->used += (size_t)snprintf(d->buf + d->used, d->len - d->used, "%s%s %s -> %s",
                                    d->shown ? ", " : "", path, x, y);
    d->shown++;
}

static void diff_walk(struct diff *d, const char *path, const json_t *a, const json_t *b);

static void diff_objects(struct diff *d, const char *path, const json_t *a, const json_t *b)
{
    const char *k;
    json_t *v;
    char sub[256];
    /* a's keys in its order, then those only b has: report.json's order */
    json_object_foreach((json_t *)a, k, v)
    {
        snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", k);
        diff_walk(d, sub, v, json_object_get(b, k));
    }
    json_object_foreach((json_t *)b, k, v) if (json_object_get(a, k) == NULL)
    {
        snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", k);
        diff_walk(d, sub, NULL, v);
    }
}

static void diff_walk(struct diff *d, const char *path, const json_t *a, const json_t *b)
{
    if (a && b && json_equal((json_t *)a, (json_t *)b))
        return;
    if (json_is_object(a) && json_is_object(b)) {
        diff_objects(d, path, a, b);
    } else if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
        char sub[256];
        for (size_t i = 0; i < json_array_size(a); i++) {
            snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
            diff_walk(d, sub, json_array_get(a, i), json_array_get(b, i));
        }
    } else {
        note(d, path, a, b);
    }
}

int history_key_diff(const json_t *older, const json_t *newer, char *buf, size_t len)
{
    struct diff d = {.buf = buf, .len = len};
    buf[0] = '\0';
    diff_walk(&d, "", older, newer);
    if (d.more && d.used < len)
        snprintf(buf + d.used, len - d.used, " and %d more", d.more);
    return d.shown + d.more;
}
