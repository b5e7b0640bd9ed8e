/* hosts_json.c - the inventory as a JSON list: each item a string (one
 * --nodes item) or an object {name, address, port, user, key, groups}.
 * A value is blamed by its JSON path ("$[2].port"); a syntax error by
 * jansson's line and column, as scenario files are.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "sim/fleet/hosts_parse.h"

struct jctx {
    const char *file;
    char *err;
    size_t errlen;
    const struct hosts_base *b;
};

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "a list";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* Fail at $[i] (key NULL) or $[i].key, with why. */
static int jfail(const struct jctx *c, size_t i, const char *key, const char *why)
{
    return hosts_fail(c->err, c->errlen, "%s: $[%zu]%s%s: %s", c->file, i, key ? "." : "",
                      key ? key : "", why);
}

static int want_string(const struct jctx *c, size_t i, const char *key, const json_t *v)
{
    char why[96];
    if (json_is_string(v))
        return 0;
    snprintf(why, sizeof(why), "expected a string, got %s", type_name(v));
    return jfail(c, i, key, why);
}

static int read_port(const struct jctx *c, size_t i, const json_t *v, struct host_spec *h)
{
    char why[96];
    if (!json_is_integer(v)) {
        snprintf(why, sizeof(why), "expected a number from 1 to 65535, got %s", type_name(v));
        return jfail(c, i, "port", why);
    }
    json_int_t p = json_integer_value(v);
    if (p < 1 || p > 65535) {
        snprintf(why, sizeof(why), "%lld: not a port (a number from 1 to 65535)", (long long)p);
        return jfail(c, i, "port", why);
    }
    h->port = (int)p;
    return 0;
}

static int read_groups(const struct jctx *c, size_t i, const json_t *v, struct host_spec *h)
{
    char why[320], path[48];
    size_t k;
    json_t *g;
    if (!json_is_array(v)) {
        snprintf(why, sizeof(why), "expected a list of group names, got %s", type_name(v));
        return jfail(c, i, "groups", why);
    }
    json_array_foreach(v, k, g)
    {
        snprintf(path, sizeof(path), "groups[%zu]", k);
        if (want_string(c, i, path, g) < 0)
            return -1;
        if (hosts_check_group(json_string_value(g), why, sizeof(why)) < 0)
            return jfail(c, i, path, why);
        for (size_t j = 0; j < h->n_groups; j++)
            if (strcmp(h->groups[j], json_string_value(g)) == 0) {
                snprintf(why, sizeof(why), "%s is groups[%zu] already", h->groups[j], j);
                return jfail(c, i, path, why);
            }
        if (h->n_groups == HOST_GROUPS_MAX) {
            snprintf(why, sizeof(why), "more than %d groups", HOST_GROUPS_MAX);
            return jfail(c, i, path, why);
        }
        snprintf(h->groups[h->n_groups++], sizeof(h->groups[0]), "%s", json_string_value(g));
    }
    return 0;
}

/* One string member of an object, checked, into dst. */
static int read_text(const struct jctx *c, size_t i, const char *key, const json_t *v,
                     int (*check)(const char *, char *, size_t), char *dst, size_t dstlen)
{
    char why[320];
    if (want_string(c, i, key, v) < 0)
        return -1;
    if (check(json_string_value(v), why, sizeof(why)) < 0)
        return jfail(c, i, key, why);
    snprintf(dst, dstlen, "%s", json_string_value(v));
    return 0;
}

static int read_key(const struct jctx *c, size_t i, const json_t *v, struct host_spec *h)
{
    char why[320];
    if (want_string(c, i, "key", v) < 0)
        return -1;
    if (hosts_expand_key(json_string_value(v), h->key, sizeof(h->key), why, sizeof(why)) < 0)
        return jfail(c, i, "key", why);
    return 0;
}

static int read_object(const struct jctx *c, size_t i, json_t *o, struct host_spec *h)
{
    static const char *const keys[] = {"address", "groups", "key", "name", "port", "user"};
    json_t *name = json_object_get(o, "name"), *address = json_object_get(o, "address"), *v;
    const char *k;
    /* every key known before any value is read: a misspelt key is the
     * likelier mistake, and it names the others */
    json_object_foreach(o, k, v)
    {
        size_t j = 0;
        while (j < sizeof(keys) / sizeof(keys[0]) && strcmp(k, keys[j]) != 0)
            j++;
        if (j == sizeof(keys) / sizeof(keys[0]))
            return jfail(c, i, k, "unknown key (address, groups, key, name, port, user)");
    }
    if (name == NULL && address == NULL)
        return jfail(c, i, NULL, "a host needs a name or an address");
    char nm[sizeof(h->name)], ad[sizeof(h->address)];
    if (name && read_text(c, i, "name", name, hosts_check_name, nm, sizeof(nm)) < 0)
        return -1;
    if (address && read_text(c, i, "address", address, hosts_check_address, ad, sizeof(ad)) < 0)
        return -1;
    if (!name && strlen(ad) >= sizeof(nm)) {
        char why[160];
        snprintf(why, sizeof(why),
                 "an address longer than %zu characters names no host: give a name",
                 sizeof(nm) - 1);
        return jfail(c, i, "address", why);
    }
    /* without a name, the address names it, as a --nodes item does */
    hosts_spec_init(h, name ? nm : ad, c->b);
    if (address)
        snprintf(h->address, sizeof(h->address), "%s", ad);
    if ((v = json_object_get(o, "port")) && read_port(c, i, v, h) < 0)
        return -1;
    if ((v = json_object_get(o, "user")) &&
        read_text(c, i, "user", v, hosts_check_user, h->user, sizeof(h->user)) < 0)
        return -1;
    if ((v = json_object_get(o, "key")) && read_key(c, i, v, h) < 0)
        return -1;
    if ((v = json_object_get(o, "groups")) && read_groups(c, i, v, h) < 0)
        return -1;
    return 0;
}

static int read_item(const struct jctx *c, size_t i, json_t *v, struct host_spec *h)
{
    char why[320];
    if (json_is_string(v)) {
        if (hosts_parse_item(json_string_value(v), json_string_length(v), c->b, h, why,
                             sizeof(why)) < 0)
            return jfail(c, i, NULL, why);
        return 0;
    }
    if (json_is_object(v))
        return read_object(c, i, v, h);
    snprintf(why, sizeof(why), "expected a host (a string or an object), got %s", type_name(v));
    return jfail(c, i, NULL, why);
}

static int read_list(const struct jctx *c, json_t *root, struct host_list *out)
{
    char why[160];
    size_t i;
    json_t *v;
    if (!json_is_array(root))
        return hosts_fail(c->err, c->errlen, "%s: $: expected a list of hosts, got %s", c->file,
                          type_name(root));
    json_array_foreach(root, i, v)
    {
        if (out->n == HOSTS_MAX) {
            snprintf(why, sizeof(why), "more than %d hosts", HOSTS_MAX);
            return jfail(c, i, NULL, why);
        }
        struct host_spec *h = &out->host[out->n];
        if (read_item(c, i, v, h) < 0)
            return -1;
        for (size_t j = 0; j < out->n; j++)
            if (strcmp(out->host[j].name, h->name) == 0) {
                snprintf(why, sizeof(why), "%s is $[%zu] already", h->name, j);
                return jfail(c, i, NULL, why);
            }
        out->n++;
    }
    return 0;
}

int hosts_json_parse(const char *file, const char *text, size_t len, const struct hosts_base *b,
                     struct host_list *out, char *err, size_t errlen)
{
    struct jctx c = {.file = file, .err = err, .errlen = errlen, .b = b};
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (root == NULL)
        /* jansson says column 0 at a line's start; columns count from 1 */
        return hosts_fail(err, errlen, "%s:%d:%d: %s", file, je.line > 0 ? je.line : 1,
                          je.column > 0 ? je.column : 1, je.text);
    int rc = read_list(&c, root, out);
    json_decref(root);
    return rc;
}
