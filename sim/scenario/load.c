/* load.c - a scenario read once: the file's text parsed, the command
 * line's values put in place of the file's, the document walked against
 * the format's tables (scenario.c) with each value checked where it is
 * written, then the checks of the whole (scenario_finish.c) with the text
 * still in memory, so that a message points into the file exactly when
 * the value it blames is the file's.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fleet/server_kind.h"
#include "sim/scenario/json_locate.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_parse.h"

/* The file's base name without ".json", made into a valid name. */
static void default_name(struct scenario *s, const char *path)
{
    const char *base = strrchr(path, '/');
    size_t n;

    base = base ? base + 1 : path;
    n = strlen(base);
    if (n >= 5 && strcmp(base + n - 5, ".json") == 0)
        n -= 5;
    size_t out = 0;
    for (size_t i = 0; i < n && out + 1 < sizeof(s->name); i++) {
        unsigned char b = (unsigned char)base[i];
        if ((b & 0xC0) == 0x80)
            continue; /* the rest of a UTF-8 character: one '_' a character */
        s->name[out++] = strchr(name_chars, b) ? (char)b : '_';
    }
    s->name[out] = '\0';
    if (out == 0)
        snprintf(s->name, sizeof(s->name), "scenario");
}

/* jansson refuses an integer beyond 64 bits as a syntax error, naming
 * neither the key nor where the number starts: blame the key, at the
 * number, as any other value out of range. 0 if the number is not found. */
static int number_overflow(struct ctx *c, const json_error_t *je)
{
    char path[256], why[160];
    struct json_pos pos;
    size_t end = je->position > 0 ? (size_t)je->position : 0, start;
    if (end > c->len)
        return 0;
    while (end > 0 && !strchr("0123456789", c->text[end - 1]))
        end--; /* jansson may stop past the number */
    for (start = end; start > 0 && strchr("0123456789-+.eE", c->text[start - 1]); start--)
        ;
    if (start == end || json_path_at(c->text, c->len, start, path, sizeof(path), &pos) < 0)
        return 0;
    int n = (int)(end - start > 40 ? 40 : end - start);
    if (memchr(c->text + start, '.', (size_t)n) || memchr(c->text + start, 'e', (size_t)n) ||
        memchr(c->text + start, 'E', (size_t)n))
        snprintf(why, sizeof(why), "%.*s is out of range (too large for a number)", n,
                 c->text + start);
    else
        snprintf(why, sizeof(why), "%.*s is out of range (integers go from %lld to %lld)", n,
                 c->text + start, (long long)INT64_MIN, (long long)INT64_MAX);
    scn_emit(c->err, c->file, &pos, path, why);
    return -1;
}

static int syntax_error(struct ctx *c, const json_error_t *je)
{
    char path[256];
    struct json_pos pos;

    /* jansson stops just after a duplicate key; name its path instead */
    if (json_error_code(je) == json_error_duplicate_key && je->position > 0 &&
        json_path_at(c->text, c->len, (size_t)je->position - 1, path, sizeof(path), &pos) == 0) {
        scn_emit(c->err, c->file, &pos, path, "duplicate key");
        return -1;
    }
    if (json_error_code(je) == json_error_numeric_overflow && number_overflow(c, je) < 0)
        return -1;
    pos = (struct json_pos){je->line, je->column};
    scn_emit(c->err, c->file, &pos, "syntax", je->text);
    return -1;
}

void scenario_no_overrides(struct scenario_overrides *ov)
{
    *ov = (struct scenario_overrides){.clients = -1, .requests = -1, .rate = -1, .seed = -1};
}

/* The file's values ov replaces, taken out of the document before it is
 * walked (so they are neither checked nor blamed), each path kept in
 * given[] for the messages; how many. */
static size_t forget_replaced(json_t *root, const struct scenario_overrides *ov,
                              struct scn_override *given)
{
    size_t n = 0;
    const struct {
        bool on;
        const char *keys[2];
    } top[] = {
        {ov->clients >= 0, {"clients", NULL}},   {ov->duration_ms > 0, {"duration_s", NULL}},
        {ov->requests >= 0, {"requests", NULL}}, {ov->rate >= 0, {"rate", NULL}},
        {ov->seed >= 0, {"seed", NULL}},         {ov->algorithm != NULL, {"lock", "algorithm"}}};
    for (size_t i = 0; i < N_OF(top); i++) {
        if (!top[i].on)
            continue;
        given[n++] = (struct scn_override){{top[i].keys[0], top[i].keys[1]}};
        json_t *obj = top[i].keys[1] ? json_object_get(root, top[i].keys[0]) : root;
        if (json_is_object(obj))
            json_object_del(obj, top[i].keys[1] ? top[i].keys[1] : top[i].keys[0]);
    }
    json_t *servers = json_object_get(root, "servers");
    for (size_t k = 0; k < server_kind_count() && k < SCENARIO_SERVER_KINDS; k++) {
        if (ov->servers[k] == NULL)
            continue;
        given[n++] = (struct scn_override){{"servers", server_kind_at(k)->name}};
        if (json_is_object(servers))
            json_object_del(servers, server_kind_at(k)->name);
    }
    return n;
}

static void apply_overrides(struct scenario *s, const struct scenario_overrides *ov)
{
    if (ov->algorithm)
        snprintf(s->algorithm, sizeof(s->algorithm), "%s", ov->algorithm);
    if (ov->clients >= 0)
        s->clients = (uint32_t)ov->clients;
    if (ov->duration_ms > 0)
        s->duration_ms = ov->duration_ms;
    if (ov->requests >= 0)
        s->requests = (uint64_t)ov->requests;
    if (ov->rate >= 0)
        s->rate = ov->rate;
    if (ov->seed >= 0)
        s->seed = (uint64_t)ov->seed;
    for (size_t k = 0; k < SCENARIO_SERVER_KINDS; k++)
        if (ov->servers[k])
            s->servers[k] = *ov->servers[k];
}

/* Read text into s: its values with ov's in place, checked once; with
 * whole, then the checks of the whole and the defaults resolved. */
static int load(const char *name, const char *text, size_t len, const struct scenario_overrides *ov,
                bool whole, struct scenario *s, char *err)
{
    struct scn_override given[8 + SCENARIO_SERVER_KINDS];
    struct scenario_overrides none;
    struct ctx c = {.file = name, .text = text, .len = len, .err = err, .given = given};
    json_error_t je;
    int rc;

    if (ov == NULL)
        scenario_no_overrides(&none), ov = &none;
    scenario_defaults(s);
    snprintf(s->path, sizeof(s->path), "%s", name);
    err[0] = '\0';
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        rc = syntax_error(&c, &je);
    } else if (!json_is_object(root)) {
        rc = scn_type_error(&c, root, "an object");
    } else {
        c.n_given = forget_replaced(root, ov, given);
        rc = scn_walk_top(&c, root, s);
    }
    if (rc == 0) {
        apply_overrides(s, ov);
        if (!json_object_get(root, "name"))
            default_name(s, name);
        if (whole)
            rc = scn_finish(&c, s);
    }
    json_decref(root);
    return rc;
}

int scenario_load_text(const char *name, const char *text, size_t len,
                       const struct scenario_overrides *ov, struct scenario *s,
                       char err[SCENARIO_ERR_MAX])
{
    return load(name, text, len, ov, true, s, err);
}

static int load_file(const char *path, const struct scenario_overrides *ov, bool whole,
                     struct scenario *s, char *err)
{
    char *text, why[128];
    size_t len;

    if (scn_read_file(path, &text, &len, why, sizeof(why)) < 0) {
        scenario_defaults(s);
        snprintf(s->path, sizeof(s->path), "%s", path);
        scn_emit(err, path[0] ? path : "\"\" (an empty file name)", NULL, "", why);
        return -1;
    }
    int rc = load(path, text, len, ov, whole, s, err);
    free(text);
    return rc;
}

int scenario_load_with(const char *path, const struct scenario_overrides *ov, struct scenario *s,
                       char err[SCENARIO_ERR_MAX])
{
    return load_file(path, ov, true, s, err);
}

int scenario_load(const char *path, struct scenario *s, char err[SCENARIO_ERR_MAX])
{
    return load_file(path, NULL, true, s, err);
}

int scenario_read(const char *path, const struct scenario_overrides *ov, struct scenario *s,
                  char err[SCENARIO_ERR_MAX])
{
    return load_file(path, ov, false, s, err);
}

int scenario_read_text(const char *name, const char *text, size_t len, struct scenario *s,
                       char err[SCENARIO_ERR_MAX])
{
    return load(name, text, len, NULL, false, s, err);
}
