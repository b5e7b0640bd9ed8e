/* scenario_env.c - the scenario unit tests' temporary folder and their
 * ways to load inline JSON (scenario_env.h). */
#include "tests/lib/scenario_env.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algorithms/lock.h"
#include "sim/fleet/server_kind.h"
#include "tests/lib/scratch.h"

int group_setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    const char *tmp = getenv("TMPDIR"), *src = getenv("LOCKLAB_SOURCE_DIR");

    if (!e)
        return -1;
    snprintf(e->dir, sizeof(e->dir), "%s/locklab-scenario-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    snprintf(e->src, sizeof(e->src), "%s", src && *src ? src : ".");
    if (!mkdtemp(e->dir)) {
        free(e);
        return -1;
    }
    *state = e;
    return 0;
}

int group_teardown(void **state)
{
    struct env *e = *state;
    if (e == NULL) /* group_setup failed: no folder */
        return 0;
    scratch_remove("test_scenario", e->dir);
    free(e);
    *state = NULL;
    return 0;
}

void write_json(const struct env *e, const char *name, const char *json, bool quotes, char *path,
                size_t len)
{
    snprintf(path, len, "%s/%s", e->dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (const char *p = json; *p; p++)
        fputc(quotes && *p == '\'' ? '"' : *p, f);
    assert_int_equal(fclose(f), 0);
}

void relative(const struct env *e, char *err)
{
    const char *roots[] = {e->dir, e->src};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(roots[i]);
        if (strncmp(err, roots[i], n) == 0 && err[n] == '/') {
            memmove(err, err + n + 1, strlen(err + n + 1) + 1);
            return;
        }
    }
}

/* Load json written into t.json: whole (every check) with finish, else
 * as written (scenario_read: each value, not the checks of the whole). */
static int run_json(void **state, const char *json, bool quotes, bool finish, struct scenario *s,
                    char *err)
{
    const struct env *e = *state;
    char path[512];

    write_json(e, "t.json", json, quotes, path, sizeof(path));
    int rc = finish ? scenario_load(path, s, err) : scenario_read(path, NULL, s, err);
    relative(e, err);
    unlink(path);
    return rc;
}

void load_ok(void **state, const char *json, struct scenario *s)
{
    char err[SCENARIO_ERR_MAX];
    int rc = run_json(state, json, true, true, s, err);
    if (rc != 0)
        print_error("input: %s\nerror: %s\n", json, err);
    assert_int_equal(rc, 0);
    assert_string_equal(err, "");
}

void check_bad(void **state, const struct bad_case *cases, size_t n, bool finish)
{
    for (size_t i = 0; i < n; i++) {
        struct scenario s;
        char err[SCENARIO_ERR_MAX];
        int rc = run_json(state, cases[i].json, true, finish, &s, err);
        if (rc != -1 || strcmp(err, cases[i].err) != 0)
            print_error("input: %s\n", cases[i].json);
        assert_int_equal(rc, -1);
        assert_string_equal(err, cases[i].err);
    }
}

void fixture_path(void **state, const char *name, char *path, size_t len)
{
    const struct env *e = *state;
    snprintf(path, len, "%s/tests/fixtures/%s", e->src, name);
}

/* The i-th name of a kind, NULL past its last (and for a server kind no
 * scenario names, "" to be left out). */
static const char *name_of(enum known_kind kind, size_t i)
{
    switch (kind) {
    case KNOWN_ALGORITHMS:
        return i < lock_count() ? lock_at(i)->name : NULL;
    case KNOWN_WORKLOADS:
        return i < workload_count() ? workload_at(i)->name : NULL;
    case KNOWN_FAULTS:
        return i < fault_kind_count() ? fault_type_name((unsigned)i) : NULL;
    case KNOWN_SERVERS:
        return i >= server_kind_count()      ? NULL
               : server_kind_at(i)->internal ? ""
                                             : server_kind_at(i)->name;
    }
    return NULL;
}

const char *known_names(enum known_kind kind)
{
    static char lists[KNOWN_SERVERS + 1][1024];
    char *buf = lists[kind];
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; name_of(kind, i) && used < sizeof(lists[0]); i++)
        if (*name_of(kind, i))
            used += (size_t)snprintf(buf + used, sizeof(lists[0]) - used, "%s%s", used ? ", " : "",
                                     name_of(kind, i));
    assert_true(used > 0 && used < sizeof(lists[0]));
    return buf;
}

const char *message(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < len);
    return buf;
}

static const struct setting_key *wl_key(const struct scenario *s, const char *key, const void **at)
{
    const struct setting_table *t = &s->workload->keys;
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->keys[i].key, key) == 0) {
            *at = (const char *)scenario_workload(s) + t->keys[i].offset;
            return &t->keys[i];
        }
    }
    fail_msg("workload %s has no key %s", s->workload->name, key);
    return NULL;
}

long long wl_int(const struct scenario *s, const char *key)
{
    const void *at = NULL;
    const struct setting_key *k = wl_key(s, key, &at);
    if (k->type == SETTING_NUMBER)
        fail_msg("workload key %s is a number", key);
    return setting_int(k, scenario_workload(s));
}

double wl_number(const struct scenario *s, const char *key)
{
    const void *at = NULL;
    assert_int_equal(wl_key(s, key, &at)->type, SETTING_NUMBER);
    return *(const double *)at;
}

const char *wl_choice(const struct scenario *s, const char *key)
{
    const void *at = NULL;
    const struct setting_key *k = wl_key(s, key, &at);
    assert_int_equal(k->type, SETTING_CHOICE);
    return k->names[*(const int *)at];
}
