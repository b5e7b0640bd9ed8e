/* scenario.c - load and validate a scenario file (see scenario.h and
 * docs/scenario.md).
 *
 * Each JSON object of the format is a table of fields; one walker checks an
 * object against its table: first every key it holds must be known, then the
 * fields are visited in table order, so the first error reported does not
 * depend on how the file orders its keys. Errors carry the JSON path of what
 * is being checked; json_locate finds it in the raw text, because jansson
 * only knows positions while it parses.
 */
#include "sim/scenario/scenario.h"
#include "sim/faults/fault.h"
#include "sim/fleet/server_kind.h"

#include "algorithms/lock.h"
#include "sim/scenario/json_locate.h"
#include "sim/scenario/scenario_parse.h"
#include "sim/workloads/workload.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- field parsers ----------------------------------------------------- */

/* Every enum of scenario.h has the size of an int, so one parser can store
 * them all. */
_Static_assert(sizeof(enum fault_data) == sizeof(int), "enum size");
_Static_assert(sizeof(enum expect_invariants) == sizeof(int), "enum size");

static int parse_algorithm(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct scenario *s = base;

    (void)f;
    if (!json_is_string(v))
        return scn_type_error(c, v, "a string");
    /* Known or not is for the checks of the whole (scenario_finish.c),
     * the one place for it; a name too long to keep cannot be known. */
    if (json_string_length(v) >= sizeof(s->algorithm))
        return scn_unknown_algorithm(c, json_string_value(v), NULL);
    strcpy(s->algorithm, json_string_value(v));
    return 0;
}

static int parse_servers(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct server_list *l = field_at(base, f);
    char why[160];
    if (!json_is_array(v))
        return scn_type_error(c, v, "an array of \"host:port\" strings");
    if (json_array_size(v) > LOCK_ENDPOINT_MAX)
        return scn_fail(c, "too many servers (at most %d)", LOCK_ENDPOINT_MAX);
    l->n = 0;
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *el = json_array_get(v, i);
        scn_push_index(c, i);
        int rc = json_is_string(el)
                     ? endpoint_parse(json_string_value(el), &l->ep[i], why, sizeof(why))
                     : scn_type_error(c, el, "a \"host:port\" string");
        if (rc < 0 && json_is_string(el))
            scn_fail(c, "%s", why);
        scn_pop(c);
        if (rc < 0)
            return -1;
        l->n++;
    }
    return 0;
}

/* ---- the format ------------------------------------------------------ */

static const char *const invariants_list[] = {"hold", "broken"};

static const struct names invariants_names = {"value", invariants_list, N_OF(invariants_list),
                                              EXPECT_INV_HOLD};

#define SC(m) offsetof(struct scenario, m)

static const struct field rate_limit_fields[] = {
    {.key = "rate",
     .parse = parse_positive,
     .offset = SC(limit_rate),
     .max = 10000000,
     .required = true},
    {.key = "burst", .parse = parse_u32, .offset = SC(limit_burst), .min = 1, .max = 10000000},
};
static const struct table rate_limit_table = {rate_limit_fields, N_OF(rate_limit_fields), NULL};

static int lock_after(struct ctx *c, json_t *obj, void *base);
static const struct field lock_fields[] = {
    {.key = "algorithm", .parse = parse_algorithm},
    {.key = "ttl_ms", .parse = parse_u32, .offset = SC(ttl_ms), .min = 1, .max = MS_MAX},
    {.key = "wait_ms", .parse = parse_u32, .offset = SC(wait_ms), .max = MS_MAX},
    {.key = "watchdog", .parse = parse_bool, .offset = SC(watchdog)},
    {.key = "renew_ms", .parse = parse_u32, .offset = SC(renew_ms), .max = MS_MAX},
    {.key = "retry_min_ms", .parse = parse_u32, .offset = SC(retry_min_ms), .min = 1, .max = 60000},
    {.key = "retry_max_ms", .parse = parse_u32, .offset = SC(retry_max_ms), .min = 1, .max = 60000},
    {.key = "permits",
     .parse = parse_u32,
     .offset = SC(permits),
     .min = 1,
     .max = SCENARIO_MAX_CLIENTS},
    {.key = "rate_limit", .parse = parse_object, .sub = &rate_limit_table},
};

/* "lock": its own keys, then an object for each lock family, which
 * declares its keys (algorithms/lock_family.h). */
static int parse_lock(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct field fields[N_OF(lock_fields) + LOCK_FAMILIES_MAX];
    size_t n = N_OF(lock_fields);
    (void)f;
    memcpy(fields, lock_fields, sizeof(lock_fields));
    for (size_t i = 0; i < lock_family_count(); i++)
        fields[n++] = (struct field){.key = lock_family_at(i)->key,
                                     .parse = parse_settings,
                                     .offset = SC(lock_settings[i]),
                                     .settings = lock_family_at(i)->table};
    const struct table lock_table = {fields, n, lock_after};
    if (!json_is_object(v))
        return scn_type_error(c, v, "an object");
    return walk_object(c, v, &lock_table, base);
}

/* Room for the names of the workloads' registry, as the parser offers them. */
#define WORKLOADS_MAX 32

static void choose_workload(struct scenario *s, const struct workload_ops *w)
{
    s->workload = w;
    memset(&s->workload_keys, 0, sizeof(s->workload_keys));
    memcpy(s->workload_keys.bytes, w->defaults, w->settings_size);
}

/* "type" is read before the other keys, since it chose their table. */
static int parse_type_read(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    (void)c, (void)v, (void)f, (void)base;
    return 0;
}

static int parse_workload(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    static const struct field type_field = {.key = "type", .parse = parse_type_read};
    struct scenario *s = base;
    const char *list[WORKLOADS_MAX];
    size_t n = 0;
    int kind;

    (void)f;
    if (!json_is_object(v))
        return scn_type_error(c, v, "an object");
    json_t *type = json_object_get(v, "type");
    /* the type decides which keys are known, so it is checked first */
    if (!type)
        return scn_fail(c, "missing required key \"type\"");
    for (; n < WORKLOADS_MAX && workload_at(n); n++)
        list[n] = workload_at(n)->name;
    const struct names names = {"workload", list, n, 0};
    scn_push_key(c, "type");
    int rc = match_name(c, type, &names, &kind);
    scn_pop(c);
    if (rc < 0)
        return -1;
    choose_workload(s, workload_at((size_t)kind));
    return walk_settings_after(c, v, &type_field, &s->workload->keys, s->workload_keys.bytes);
}

static const struct field expect_fields[] = {
    {.key = "violations", .parse = parse_expect, .offset = SC(expect.violations)},
    /* the old key "fenced" is refused with this name (scenario_error.c) */
    {.key = "rejected_accesses", .parse = parse_expect, .offset = SC(expect.rejected_accesses)},
    {.key = "invariants",
     .parse = parse_enum,
     .offset = SC(expect.invariants),
     .names = &invariants_names},
};
static const struct table expect_table = {expect_fields, N_OF(expect_fields), NULL};

/* "servers": a list for each kind of the fleet's registry, by its name. */
static int parse_server_lists(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct field fields[SCENARIO_SERVER_KINDS];
    size_t n = 0;
    (void)f;
    for (size_t i = 0; i < server_kind_count() && i < SCENARIO_SERVER_KINDS; i++)
        if (!server_kind_at(i)->internal)
            fields[n++] = (struct field){
                .key = server_kind_at(i)->name, .parse = parse_servers, .offset = SC(servers[i])};
    const struct table servers_table = {fields, n, NULL};
    if (!json_is_object(v))
        return scn_type_error(c, v, "an object");
    return walk_object(c, v, &servers_table, base);
}

static const struct field top_fields[] = {
    {.key = "name", .parse = parse_name, .offset = SC(name)},
    {.key = "description", .parse = parse_text, .offset = SC(description), .max = 255},
    {.key = "clients",
     .parse = parse_u32,
     .offset = SC(clients),
     .min = 1,
     .max = SCENARIO_MAX_CLIENTS},
    {.key = "duration_s", .parse = parse_duration},
    {.key = "requests", .parse = parse_u64, .offset = SC(requests), .max = NO_MAX},
    {.key = "rate", .parse = parse_positive, .offset = SC(rate), .max = SCENARIO_MAX_RATE},
    {.key = "seed", .parse = parse_u64, .offset = SC(seed), .max = NO_MAX},
    {.key = "lock", .parse = parse_lock},
    {.key = "workload", .parse = parse_workload, .required = true},
    {.key = "fencing", .parse = parse_bool, .offset = SC(fencing)},
    {.key = "faults", .parse = parse_faults},
    {.key = "expect", .parse = parse_object, .sub = &expect_table},
    {.key = "servers", .parse = parse_server_lists},
};
static const struct table top_table = {top_fields, N_OF(top_fields), NULL};

int scn_walk_top(struct ctx *c, json_t *root, struct scenario *s)
{
    return walk_object(c, root, &top_table, s);
}

static int lock_after(struct ctx *c, json_t *obj, void *base)
{
    const struct scenario *s = base;
    int rc = 0;

    if (s->retry_max_ms >= s->retry_min_ms)
        return 0;
    /* blame what the file wrote: the maximum if given, else the minimum */
    if (json_object_get(obj, "retry_max_ms")) {
        scn_push_key(c, "retry_max_ms");
        rc = scn_fail(c, "%" PRIu32 " is less than retry_min_ms (%" PRIu32 ")", s->retry_max_ms,
                      s->retry_min_ms);
    } else {
        scn_push_key(c, "retry_min_ms");
        rc = scn_fail(c, "%" PRIu32 " is more than retry_max_ms (%" PRIu32 " by default)",
                      s->retry_min_ms, s->retry_max_ms);
    }
    scn_pop(c);
    return rc;
}

/* ---- a fault kind's check of its keys (sim/faults/fault.h) ----------- */

/* ---- the API --------------------------------------------------------- */

void scenario_defaults(struct scenario *s)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "scenario");
    s->clients = 16;
    s->duration_ms = 10000;
    s->seed = 1;
    snprintf(s->algorithm, sizeof(s->algorithm), "redis");
    s->ttl_ms = 10000;
    s->wait_ms = 5000;
    s->retry_min_ms = 1;
    s->retry_max_ms = 50;
    s->permits = 1;
    choose_workload(s, workload_at(0));
    for (size_t i = 0; i < lock_family_count(); i++)
        if (lock_family_at(i)->defaults)
            lock_family_at(i)->defaults(s->lock_settings[i].bytes);
}

void *scenario_settings_mut(struct scenario *s, const struct lock_family *f)
{
    size_t i = lock_family_index(f);
    return i < LOCK_FAMILIES_MAX ? s->lock_settings[i].bytes : NULL;
}

const void *scenario_settings(const struct scenario *s, const struct lock_family *f)
{
    return scenario_settings_mut((struct scenario *)s, f);
}

const void *scenario_workload(const struct scenario *s)
{
    return s->workload_keys.bytes;
}

void scenario_workload_run(const struct scenario *s, struct workload_run *out)
{
    *out = (struct workload_run){
        .clients = s->clients,
        .duration_ms = s->duration_ms,
        .ttl_ms = s->ttl_ms,
        .wait_ms = s->wait_ms,
        .watchdog = s->watchdog,
        .permits = s->permits,
        .fencing = s->fencing,
        .longest_fault_ms = scenario_longest_fault_ms(s),
    };
}
