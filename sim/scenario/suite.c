/* suite.c - a scorecard's fault suite read and validated whole, its
 * errors located in the file as a scenario's are. What a fault template
 * says beyond its lease multiples is the scenario loader's to judge, once
 * suite_cell has made a cell's scenario of it. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/scenario/json_locate.h"
#include "sim/scenario/scenario_parse.h"
#include "sim/scenario/suite.h"

#define SUITE_DIR "scenarios/scorecard"

struct sctx {
    const char *file;
    const char *text;
    size_t len;
    char *err;
};

__attribute__((format(printf, 4, 0))) static int
vfail(struct sctx *c, bool at_key, const char *path, const char *fmt, va_list ap)
{
    char msg[SCENARIO_ERR_MAX];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    struct json_pos pos;
    bool found = json_locate(c->text, c->len, path, at_key, &pos) == 0;
    scn_emit(c->err, c->file, found ? &pos : NULL, path, msg);
    return -1;
}

/* The value at path is wrong; always -1. */
__attribute__((format(printf, 3, 4))) static int fail(struct sctx *c, const char *path,
                                                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(c, false, path, fmt, ap);
    va_end(ap);
    return -1;
}

/* The key at path is wrong (unknown); always -1. */
__attribute__((format(printf, 3, 4))) static int fail_key(struct sctx *c, const char *path,
                                                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(c, true, path, fmt, ap);
    va_end(ap);
    return -1;
}

/* Keys of obj (at path) outside known[0..n): the first is an error. */
static int only_keys(struct sctx *c, const json_t *obj, const char *path, const char *const *known,
                     size_t n)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        bool ok = false;
        for (size_t i = 0; i < n && !ok; i++)
            ok = strcmp(key, known[i]) == 0;
        if (!ok) {
            char at[160];
            snprintf(at, sizeof(at), "%s%s%s", path, path[0] ? "." : "", key);
            const char *near = suggest_closest(key, known, n);
            return near ? fail_key(c, at, "unknown key \"%s\" (did you mean \"%s\"?)", key, near)
                        : fail_key(c, at, "unknown key \"%s\"", key);
        }
    }
    (void)v;
    return 0;
}

/* A string member into out (required: missing is an error); 0 or -1. */
static int get_text(struct sctx *c, const json_t *obj, const char *path, const char *key,
                    bool required, char *out, size_t len)
{
    char at[160];
    snprintf(at, sizeof(at), "%s%s%s", path, path[0] ? "." : "", key);
    const json_t *v = json_object_get(obj, key);
    if (v == NULL && required)
        return fail(c, path, "missing required key \"%s\"", key);
    if (v == NULL)
        return 0;
    if (!json_is_string(v) || json_string_length(v) == 0)
        return fail(c, at, "expected a non-empty string");
    if (json_string_length(v) >= len)
        return fail(c, at, "longer than %zu characters", len - 1);
    snprintf(out, len, "%s", json_string_value(v));
    return 0;
}

static int get_uint(struct sctx *c, const json_t *obj, const char *path, const char *key,
                    uint64_t lo, uint64_t hi, uint64_t *out)
{
    char at[160];
    snprintf(at, sizeof(at), "%s%s%s", path, path[0] ? "." : "", key);
    const json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)lo ||
        (uint64_t)json_integer_value(v) > hi)
        return fail(c, at, "expected an integer in %llu..%llu", (unsigned long long)lo,
                    (unsigned long long)hi);
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static bool is_name(const char *s)
{
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return false;
    return s[0] != '\0';
}

static int check_template(struct sctx *c, const json_t *f, const char *path)
{
    if (!json_is_object(f))
        return fail(c, path, "expected a fault object");
    if (!json_is_string(json_object_get(f, "type")))
        return fail(c, path, "missing required key \"type\" (a fault kind: `locklab list faults`)");
    for (size_t k = 0; k < SUITE_LEASE_KEYS; k++) {
        const json_t *v = json_object_get(f, suite_lease_keys[k][0]);
        char at[256];
        snprintf(at, sizeof(at), "%s.%s", path, suite_lease_keys[k][0]);
        if (v && (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 1000))
            return fail(c, at, "expected a number of leases in 0..1000");
        if (v && json_object_get(f, suite_lease_keys[k][1]))
            return fail(c, at, "give %s or %s, not both", suite_lease_keys[k][0],
                        suite_lease_keys[k][1]);
    }
    const json_t *opt = json_object_get(f, "optional");
    if (opt && !json_is_boolean(opt)) {
        char at[256];
        snprintf(at, sizeof(at), "%s.optional", path);
        return fail(c, at, "expected true or false");
    }
    if (json_object_get(f, "expect")) {
        char at[256];
        snprintf(at, sizeof(at), "%s.expect", path);
        return fail(c, at, "a scorecard judges a cell by what happened: no expectation");
    }
    return 0;
}

static int load_known(struct sctx *c, const json_t *arr, const char *path, struct suite_class *k)
{
    static const char *const keys[] = {"row", "result", "source", "unsafe"};
    if (arr == NULL)
        return 0;
    if (!json_is_array(arr) || json_array_size(arr) > SUITE_MAX_KNOWN)
        return fail(c, path, "expected an array of at most %d known results", SUITE_MAX_KNOWN);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        char at[200];
        snprintf(at, sizeof(at), "%s[%zu]", path, i);
        const json_t *o = json_array_get(arr, i);
        struct suite_known *kn = &k->known[k->n_known++];
        if (!json_is_object(o))
            return fail(c, at, "expected an object {row, result, source, unsafe}");
        if (only_keys(c, o, at, keys, 4) ||
            get_text(c, o, at, "row", true, kn->row, sizeof(kn->row)) ||
            get_text(c, o, at, "result", true, kn->result, sizeof(kn->result)) ||
            get_text(c, o, at, "source", true, kn->source, sizeof(kn->source)))
            return -1;
        struct suite_lock l;
        char why[200];
        if (suite_lock_parse(kn->row, &l, why, sizeof(why)) < 0) {
            snprintf(at + strlen(at), sizeof(at) - strlen(at), ".row");
            return fail(c, at, "%s", why);
        }
        const json_t *u = json_object_get(o, "unsafe");
        if (!json_is_boolean(u)) {
            snprintf(at + strlen(at), sizeof(at) - strlen(at), ".unsafe");
            return fail(c, at, "expected true or false (what the published result says)");
        }
        kn->unsafe = json_is_true(u);
    }
    return 0;
}

static int load_class(struct sctx *c, const json_t *o, const char *path, struct suite *s,
                      struct suite_class *k)
{
    static const char *const keys[] = {
        "name",   "title",  "short", "strikes",    "size",
        "layout", "faults", "known", "duration_s", "hold_renewed_leases",
        "run"};
    k->faults = k->run = NULL;
    if (!json_is_object(o))
        return fail(c, path, "expected a fault class object");
    if (only_keys(c, o, path, keys, sizeof(keys) / sizeof(keys[0])) ||
        get_text(c, o, path, "name", true, k->name, sizeof(k->name)) ||
        get_text(c, o, path, "title", true, k->title, sizeof(k->title)) ||
        get_text(c, o, path, "short", true, k->short_, sizeof(k->short_)) ||
        get_text(c, o, path, "strikes", true, k->strikes, sizeof(k->strikes)) ||
        get_text(c, o, path, "size", false, k->size, sizeof(k->size)))
        return -1;
    char at[160];
    snprintf(at, sizeof(at), "%s.name", path);
    if (!is_name(k->name))
        return fail(c, at, "expected lower-case letters, digits and _ (it names a folder)");
    for (size_t i = 0; i < s->n_classes; i++)
        if (strcmp(s->classes[i].name, k->name) == 0)
            return fail(c, at, "\"%s\" names classes[%zu] already", k->name, i);
    snprintf(k->layout, sizeof(k->layout), "default");
    if (get_text(c, o, path, "layout", false, k->layout, sizeof(k->layout)))
        return -1;
    snprintf(at, sizeof(at), "%s.layout", path);
    if (strcmp(k->layout, "default") != 0 && json_object_get(s->layouts, k->layout) == NULL)
        return fail(c, at, "\"%s\" is no layout of the suite's \"layouts\"", k->layout);
    const json_t *d = json_object_get(o, "duration_s");
    snprintf(at, sizeof(at), "%s.duration_s", path);
    if (d && (!json_is_number(d) || json_number_value(d) <= 0 || json_number_value(d) > 3600))
        return fail(c, at, "expected seconds, more than 0 and at most 3600");
    k->duration_ms = d ? (uint64_t)llround(json_number_value(d) * 1000) : 0;
    const json_t *h = json_object_get(o, "hold_renewed_leases");
    snprintf(at, sizeof(at), "%s.hold_renewed_leases", path);
    if (h && (!json_is_number(h) || json_number_value(h) <= 0 || json_number_value(h) > 100))
        return fail(c, at, "expected a number of leases, more than 0 and at most 100");
    k->hold_renewed_leases = h ? json_number_value(h) : 0;
    json_t *run = json_object_get(o, "run");
    snprintf(at, sizeof(at), "%s.run", path);
    if (run && !json_is_object(run))
        return fail(c, at,
                    "expected an object merged into the class's cells after the suite's run");
    k->run = run ? json_incref(run) : NULL;
    const json_t *faults = json_object_get(o, "faults");
    snprintf(at, sizeof(at), "%s.faults", path);
    if (!json_is_array(faults) || json_array_size(faults) > 32)
        return fail(c, at, "expected an array of at most 32 fault templates ([] for no fault)");
    for (size_t i = 0; i < json_array_size(faults); i++) {
        char fat[200];
        snprintf(fat, sizeof(fat), "%s[%zu]", at, i);
        if (check_template(c, json_array_get(faults, i), fat) < 0)
            return -1;
    }
    k->faults = json_incref((json_t *)faults);
    snprintf(at, sizeof(at), "%s.known", path);
    return load_known(c, json_object_get(o, "known"), at, k);
}

static int load_rows(struct sctx *c, const json_t *rows, struct suite *s)
{
    if (rows == NULL)
        return 0;
    if (!json_is_array(rows) || json_array_size(rows) == 0 ||
        json_array_size(rows) > SUITE_MAX_ROWS)
        return fail(c, "rows", "expected 1..%d locks (\"redis\", \"redis+fencing\", \"etcd@3.4\")",
                    SUITE_MAX_ROWS);
    for (size_t i = 0; i < json_array_size(rows); i++) {
        char at[32], why[256];
        snprintf(at, sizeof(at), "rows[%zu]", i);
        const json_t *r = json_array_get(rows, i);
        struct suite_lock l;
        if (!json_is_string(r) || json_string_length(r) >= sizeof(s->rows[0]))
            return fail(c, at, "expected a lock's name");
        if (suite_lock_parse(json_string_value(r), &l, why, sizeof(why)) < 0)
            return fail(c, at, "%s", why);
        for (size_t j = 0; j < s->n_rows; j++)
            if (strcmp(s->rows[j], json_string_value(r)) == 0)
                return fail(c, at, "\"%s\" is rows[%zu] already", s->rows[j], j);
        snprintf(s->rows[s->n_rows++], sizeof(s->rows[0]), "%s", json_string_value(r));
    }
    return 0;
}

static int load_layouts(struct sctx *c, json_t *root, struct suite *s)
{
    json_t *l = json_object_get(root, "layouts");
    if (l == NULL) {
        s->layouts = json_object();
        return 0;
    }
    const char *name, *kind;
    json_t *v, *w;
    if (!json_is_object(l))
        return fail(c, "layouts", "expected an object: layout name -> {server kind -> settings}");
    json_object_foreach(l, name, v)
    {
        char at[160];
        snprintf(at, sizeof(at), "layouts.%s", name);
        if (!json_is_object(v) || strcmp(name, "default") == 0)
            return fail(c, at,
                        "expected an object of server kinds (\"default\" is the scenario's)");
        json_object_foreach(v, kind, w)
        {
            snprintf(at, sizeof(at), "layouts.%s.%s", name, kind);
            if (!json_is_object(w))
                return fail(c, at, "expected the lock.%s settings of this layout", kind);
        }
    }
    s->layouts = json_incref(l);
    return 0;
}

static int load_root(struct sctx *c, json_t *root, struct suite *s)
{
    static const char *const keys[] = {"name", "description", "scenario", "ttl_ms", "seeds",
                                       "run",  "layouts",     "rows",     "classes"};
    if (!json_is_object(root))
        return fail(c, "", "expected a suite object");
    if (only_keys(c, root, "", keys, sizeof(keys) / sizeof(keys[0])) ||
        get_text(c, root, "", "name", true, s->name, sizeof(s->name)) ||
        get_text(c, root, "", "description", false, s->description, sizeof(s->description)) ||
        get_text(c, root, "", "scenario", true, s->scenario, sizeof(s->scenario)))
        return -1;
    uint64_t ttl = 0, seeds = 1;
    if (json_object_get(root, "ttl_ms") == NULL)
        return fail(c, "", "missing required key \"ttl_ms\" (the one lease asked of every lock)");
    if (get_uint(c, root, "", "ttl_ms", 1, SCENARIO_MS_MAX, &ttl) ||
        get_uint(c, root, "", "seeds", 1, SUITE_MAX_SEEDS, &seeds))
        return -1;
    s->ttl_ms = (uint32_t)ttl;
    s->seeds = (uint32_t)seeds;
    json_t *run = json_object_get(root, "run");
    if (run && !json_is_object(run))
        return fail(c, "run", "expected an object merged into the scenario of every cell");
    s->run = run ? json_incref(run) : json_object();
    if (load_layouts(c, root, s) || load_rows(c, json_object_get(root, "rows"), s))
        return -1;
    const json_t *cls = json_object_get(root, "classes");
    if (!json_is_array(cls) || json_array_size(cls) == 0 ||
        json_array_size(cls) > SUITE_MAX_CLASSES)
        return fail(c, cls ? "classes" : "", "%s", "expected 1..16 fault classes in \"classes\"");
    for (size_t i = 0; i < json_array_size(cls); i++) {
        char at[32];
        snprintf(at, sizeof(at), "classes[%zu]", i);
        if (load_class(c, json_array_get(cls, i), at, s, &s->classes[i]) < 0)
            return -1;
        s->n_classes = i + 1;
    }
    return 0;
}

/* The scenario's path as the suite's folder resolves it. */
static void resolve_scenario(struct suite *s)
{
    if (s->scenario[0] == '/')
        return;
    char dir[512], joined[1100];
    snprintf(dir, sizeof(dir), "%s", s->path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        return;
    *slash = '\0';
    snprintf(joined, sizeof(joined), "%s/%s", dir, s->scenario);
    snprintf(s->scenario, sizeof(s->scenario), "%.511s", joined);
}

/* A bare name is a shipped suite: scenarios/scorecard/ here, else the
 * one of the source tree locklab was built from, wherever it is run. */
const char *suite_folder(void)
{
#ifdef LOCKLAB_SCENARIOS_DIR
    struct stat st;
    if (stat(SUITE_DIR, &st) < 0 || !S_ISDIR(st.st_mode))
        return LOCKLAB_SCENARIOS_DIR "/scorecard";
#endif
    return SUITE_DIR;
}

static void suite_path(const char *name_or_path, char *out, size_t len)
{
    bool bare = strchr(name_or_path, '/') == NULL && strstr(name_or_path, ".json") == NULL;
    if (bare)
        snprintf(out, len, "%s/%s.json", suite_folder(), name_or_path);
    else
        snprintf(out, len, "%s", name_or_path);
}

int suite_load(const char *name_or_path, struct suite *s, char err[SCENARIO_ERR_MAX])
{
    memset(s, 0, sizeof(*s));
    suite_path(name_or_path, s->path, sizeof(s->path));
    char *text = NULL, why[256];
    size_t len = 0;
    if (scn_read_file(s->path, &text, &len, why, sizeof(why)) < 0) {
        snprintf(err, SCENARIO_ERR_MAX,
                 "%.300s: %.150s (a suite is a name in " SUITE_DIR "/ or a file)", s->path, why);
        return -1;
    }
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    struct sctx c = {.file = s->path, .text = text, .len = len, .err = err};
    int rc = -1;
    if (root == NULL) {
        struct json_pos pos = {je.line, je.column};
        scn_emit(err, s->path, &pos, "", je.text);
    } else {
        rc = load_root(&c, root, s);
    }
    json_decref(root);
    free(text);
    if (rc < 0)
        suite_free(s);
    else
        resolve_scenario(s);
    return rc;
}

void suite_free(struct suite *s)
{
    for (size_t i = 0; i < SUITE_MAX_CLASSES; i++)
        json_decref(s->classes[i].faults), json_decref(s->classes[i].run);
    json_decref(s->run);
    json_decref(s->layouts);
    char path[512];
    snprintf(path, sizeof(path), "%s", s->path);
    memset(s, 0, sizeof(*s));
    snprintf(s->path, sizeof(s->path), "%s", path);
}
