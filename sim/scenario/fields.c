/* fields.c - the scenario parser's field parsers: integers in bounds,
 * names from a list, strings, objects walked against their table, an
 * expectation. Each writes one field of the struct a table describes, and
 * blames what is wrong at its JSON path (scenario_error.c says how).
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_parse.h"

void *field_at(void *base, const struct field *f)
{
    return (char *)base + f->offset;
}

int get_int(struct ctx *c, json_t *v, const struct field *f, long long *out)
{
    if (!json_is_integer(v))
        return scn_type_error(c, v, "an integer");
    long long x = json_integer_value(v);
    if (x < f->min && f->max == NO_MAX)
        return scn_fail(c, "expected an integer >= %lld", f->min);
    if (x < f->min || x > f->max)
        return scn_fail(c, "%lld is out of range (%lld..%lld)", x, f->min, f->max);
    *out = x;
    return 0;
}

int parse_u32(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    long long x = 0;
    if (get_int(c, v, f, &x) < 0)
        return -1;
    *(uint32_t *)field_at(base, f) = (uint32_t)x;
    return 0;
}

int parse_u64(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    long long x = 0;
    if (get_int(c, v, f, &x) < 0)
        return -1;
    *(uint64_t *)field_at(base, f) = (uint64_t)x;
    return 0;
}

int parse_i64(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    long long x = 0;
    if (get_int(c, v, f, &x) < 0)
        return -1;
    *(int64_t *)field_at(base, f) = x;
    return 0;
}

int parse_bool(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    if (!json_is_boolean(v))
        return scn_type_error(c, v, "a boolean");
    *(bool *)field_at(base, f) = json_is_true(v);
    return 0;
}

int match_name(struct ctx *c, json_t *v, const struct names *nm, int *out)
{
    if (!json_is_string(v))
        return scn_type_error(c, v, "a string");
    for (size_t i = 0; i < nm->n; i++) {
        if (strcmp(json_string_value(v), nm->list[i]) == 0) {
            *out = nm->first + (int)i;
            return 0;
        }
    }
    return scn_unknown_name(c, nm, json_string_value(v));
}

int parse_enum(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    int x;
    if (match_name(c, v, f->names, &x) < 0)
        return -1;
    memcpy(field_at(base, f), &x, sizeof(x));
    return 0;
}

const char name_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-";

static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n < sizeof(((struct scenario *)0)->name) && strspn(s, name_chars) == n;
}

int parse_name(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    if (!json_is_string(v))
        return scn_type_error(c, v, "a string");
    if (!valid_name(json_string_value(v)))
        return scn_fail(c, "%s is not a valid name (1 to 63 of A-Z a-z 0-9 _ . -)",
                        scn_quote(json_string_value(v)).s);
    strcpy(field_at(base, f), json_string_value(v));
    return 0;
}

int parse_text(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    if (!json_is_string(v))
        return scn_type_error(c, v, "a string");
    size_t n = json_string_length(v);
    if (n > (size_t)f->max)
        return scn_fail(c, "too long (%zu bytes, at most %lld)", n, f->max);
    memcpy(field_at(base, f), json_string_value(v), n + 1);
    return 0;
}

/* A number in (0, max]; integers are numbers too. */
int get_positive(struct ctx *c, json_t *v, double max, double *out)
{
    if (!json_is_number(v))
        return scn_type_error(c, v, "a number");
    double x = json_number_value(v);
    if (!(x > 0 && x <= max))
        return scn_fail(c, "%g is out of range (> 0 and <= %g)", x, max);
    *out = x;
    return 0;
}

int scenario_duration_ms(double seconds, uint64_t *ms, char *why, size_t len)
{
    if (!(seconds > 0 && seconds <= MS_MAX / 1000)) {
        snprintf(why, len, "%.10g is out of range (> 0 and <= %d)", seconds, MS_MAX / 1000);
        return -1;
    }
    long long whole = llround(seconds * 1000);
    if (whole < 1) {
        snprintf(why, len, "%.10g is shorter than 1 ms", seconds);
        return -1;
    }
    *ms = (uint64_t)whole;
    return 0;
}

int parse_duration(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct scenario *s = base;
    char why[96];

    (void)f;
    if (!json_is_number(v))
        return scn_type_error(c, v, "a number");
    if (scenario_duration_ms(json_number_value(v), &s->duration_ms, why, sizeof(why)) < 0)
        return scn_fail(c, "%s", why);
    return 0;
}

/* A number in (0, f->max]: a fraction, a rate. */
int parse_positive(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    double x = 0;
    if (get_positive(c, v, (double)f->max, &x) < 0)
        return -1;
    *(double *)field_at(base, f) = x;
    return 0;
}

int parse_object(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    if (!json_is_object(v))
        return scn_type_error(c, v, "an object");
    return walk_object(c, v, f->sub, base);
}

static bool known_key(const struct table *t, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->fields[i].key, key) == 0)
            return true;
    return false;
}

int walk_object(struct ctx *c, json_t *obj, const struct table *t, void *base)
{
    /* keys in file order: jansson keeps objects in insertion order */
    for (void *it = json_object_iter(obj); it; it = json_object_iter_next(obj, it))
        if (!known_key(t, json_object_iter_key(it)))
            return scn_unknown_key(c, t, json_object_iter_key(it));
    for (size_t i = 0; i < t->n; i++) {
        const struct field *f = &t->fields[i];
        json_t *v = json_object_get(obj, f->key);
        if (!v) {
            if (f->required)
                return scn_fail(c, "missing required key \"%s\"", f->key);
            continue;
        }
        scn_push_key(c, f->key);
        int rc = f->parse(c, v, f, base);
        scn_pop(c);
        if (rc < 0)
            return -1;
    }
    return t->after ? t->after(c, obj, base) : 0;
}

int parse_expect(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct expect_num *e = field_at(base, f);

    if (json_is_integer(v)) {
        if (json_integer_value(v) < 0)
            return scn_fail(c, "expected an integer >= 0");
        e->op = EXPECT_EQ;
        e->value = (uint64_t)json_integer_value(v);
        return 0;
    }
    if (!json_is_string(v))
        return scn_type_error(c, v, "an integer or a string");
    if (expect_parse(json_string_value(v), e) < 0)
        return scn_fail(c, "cannot read %s as a count (write 0, \">0\", \">= 3\", \"<5\")",
                        scn_quote(json_string_value(v)).s);
    return 0;
}

/* ---- a plug-in's keys (algorithms/settings.h) -------------------------- */

static int parse_choice(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    const struct setting_key *k = f->setting;
    const struct names nm = {k->noun, k->names, k->n_names, 0};
    const struct field named = {.offset = f->offset, .names = &nm};
    return parse_enum(c, v, &named, base);
}

static const parse_fn setting_parsers[] = {
    [SETTING_U32] = parse_u32,   [SETTING_U64] = parse_u64,       [SETTING_I64] = parse_i64,
    [SETTING_BOOL] = parse_bool, [SETTING_CHOICE] = parse_choice, [SETTING_NUMBER] = parse_positive,
};

/* One key: its type's parser, then the plug-in's own check at its value,
 * given the plug-in's struct (wherever it sits in base). */
static int parse_setting(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    char why[SETTING_WHY_MAX];
    struct field bounded = *f;
    void *settings = (char *)base + f->offset - f->setting->offset;

    if (f->setting->max_of)
        bounded.max = f->setting->max_of(settings);
    if (setting_parsers[f->setting->type](c, v, &bounded, base) < 0)
        return -1;
    if (!f->setting->check || f->setting->check(settings, why, sizeof(why)) == 0)
        return 0;
    return scn_fail(c, "%s", why);
}

struct field setting_field(const struct setting_key *k, size_t at)
{
    return (struct field){.key = k->key,
                          .parse = parse_setting,
                          .offset = at + k->offset,
                          .min = k->min,
                          .max = k->max,
                          .required = k->required,
                          .setting = k};
}

static int settings_after(struct ctx *c, json_t *obj, const struct setting_table *t, void *settings)
{
    bool given[SETTING_KEYS_MAX];
    const char *blame = NULL;
    char why[SETTING_WHY_MAX];

    for (size_t i = 0; i < t->n; i++)
        given[i] = json_object_get(obj, t->keys[i].key) != NULL;
    if (!t->after || t->after(settings, given, &blame, why, sizeof(why)) == 0)
        return 0;
    if (blame)
        scn_push_key(c, blame);
    int rc = scn_fail(c, "%s", why);
    if (blame)
        scn_pop(c);
    return rc;
}

int walk_settings_after(struct ctx *c, json_t *obj, const struct field *lead,
                        const struct setting_table *t, void *settings)
{
    struct field fields[SETTING_KEYS_MAX + 1];
    size_t n = 0;

    if (lead)
        fields[n++] = *lead;
    for (size_t i = 0; i < t->n && i < SETTING_KEYS_MAX; i++)
        fields[n++] = setting_field(&t->keys[i], 0);
    const struct table table = {fields, n, NULL};
    if (walk_object(c, obj, &table, settings) < 0)
        return -1;
    return settings_after(c, obj, t, settings);
}

int walk_settings(struct ctx *c, json_t *obj, const struct setting_table *t, void *settings)
{
    return walk_settings_after(c, obj, NULL, t, settings);
}

int parse_settings(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    if (!json_is_object(v))
        return scn_type_error(c, v, "an object");
    return walk_settings(c, v, f->settings, field_at(base, f));
}
