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
_Static_assert(sizeof(enum workload_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(enum skew_kind) == sizeof(int), "enum size");
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

static int parse_hot_items(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    const struct scenario *s = base;
    struct field bounded = *f;

    /* items is read first (table order), so the bound is the file's */
    bounded.max = s->flash_sale.items;
    return parse_u32(c, v, &bounded, base);
}

/* A store of at most a million keys, as items allows: a segment is a key. */
#define FLASH_MAX_KEYS 1000000u

static int parse_segments(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    const struct scenario *s = base;

    if (parse_u32(c, v, f, base) < 0)
        return -1;
    /* items is read first (table order), so the product is the file's */
    uint64_t keys = (uint64_t)s->flash_sale.items * s->flash_sale.segments;
    if (keys <= FLASH_MAX_KEYS)
        return 0;
    return scn_fail(
        c, "%" PRIu32 " items x %" PRIu32 " segments are %" PRIu64 " lock keys (at most %u)",
        s->flash_sale.items, s->flash_sale.segments, keys, FLASH_MAX_KEYS);
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

static const char *const workload_list[] = {"flash_sale", "cache_rebuild", "scheduled_tasks",
                                            "order_ids",  "bank_transfer", "read_mostly",
                                            "pool"};
static const char *const skew_list[] = {"uniform", "hot", "per_client"};
static const char *const invariants_list[] = {"hold", "broken"};

static const struct names workload_names = {"workload", workload_list, N_OF(workload_list), 0};
static const struct names skew_names = {"skew", skew_list, N_OF(skew_list), SKEW_UNIFORM};
static const struct names invariants_names = {"value", invariants_list, N_OF(invariants_list),
                                              EXPECT_INV_HOLD};

#define SC(m) offsetof(struct scenario, m)

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

static const struct field flash_sale_fields[] = {
    {.key = "type",
     .parse = parse_enum,
     .offset = SC(workload),
     .names = &workload_names,
     .required = true},
    {.key = "items", .parse = parse_u32, .offset = SC(flash_sale.items), .min = 1, .max = 1000000},
    {.key = "stock", .parse = parse_i64, .offset = SC(flash_sale.stock), .max = 1000000000000000LL},
    {.key = "critical_ms", .parse = parse_u32, .offset = SC(flash_sale.critical_ms), .max = 600000},
    {.key = "skew", .parse = parse_enum, .offset = SC(flash_sale.skew), .names = &skew_names},
    {.key = "hot_fraction",
     .parse = parse_positive,
     .offset = SC(flash_sale.hot_fraction),
     .max = 1},
    {.key = "hot_items", .parse = parse_hot_items, .offset = SC(flash_sale.hot_items), .min = 1},
    {.key = "nested", .parse = parse_bool, .offset = SC(flash_sale.nested)},
    {.key = "segments",
     .parse = parse_segments,
     .offset = SC(flash_sale.segments),
     .min = 1,
     .max = 1024},
};

static const struct field cache_rebuild_fields[] = {
    {.key = "type",
     .parse = parse_enum,
     .offset = SC(workload),
     .names = &workload_names,
     .required = true},
    {.key = "keys", .parse = parse_u32, .offset = SC(cache_rebuild.keys), .min = 1, .max = 100000},
    {.key = "period_ms",
     .parse = parse_u32,
     .offset = SC(cache_rebuild.period_ms),
     .min = 10,
     .max = MS_MAX},
    {.key = "load_ms", .parse = parse_u32, .offset = SC(cache_rebuild.load_ms), .max = 600000},
    {.key = "read_ms", .parse = parse_u32, .offset = SC(cache_rebuild.read_ms), .max = 600000},
};

static const struct field scheduled_tasks_fields[] = {
    {.key = "type",
     .parse = parse_enum,
     .offset = SC(workload),
     .names = &workload_names,
     .required = true},
    {.key = "tasks",
     .parse = parse_u32,
     .offset = SC(scheduled_tasks.tasks),
     .min = 1,
     .max = 1000},
    {.key = "period_ms",
     .parse = parse_u32,
     .offset = SC(scheduled_tasks.period_ms),
     .min = 10,
     .max = MS_MAX},
    {.key = "run_ms", .parse = parse_u32, .offset = SC(scheduled_tasks.run_ms), .max = MS_MAX},
    {.key = "jitter_ms",
     .parse = parse_u32,
     .offset = SC(scheduled_tasks.jitter_ms),
     .max = MS_MAX},
    {.key = "hold_min_ms",
     .parse = parse_u32,
     .offset = SC(scheduled_tasks.hold_min_ms),
     .max = MS_MAX},
};

static const struct field order_ids_fields[] = {
    {.key = "type",
     .parse = parse_enum,
     .offset = SC(workload),
     .names = &workload_names,
     .required = true},
    {.key = "sequences",
     .parse = parse_u32,
     .offset = SC(order_ids.sequences),
     .min = 1,
     .max = 1000},
    {.key = "critical_ms", .parse = parse_u32, .offset = SC(order_ids.critical_ms), .max = 600000},
};

static const struct field bank_transfer_fields[] = {
    {.key = "type",
     .parse = parse_enum,
     .offset = SC(workload),
     .names = &workload_names,
     .required = true},
    {.key = "accounts",
     .parse = parse_u32,
     .offset = SC(bank_transfer.accounts),
     .min = 2,
     .max = 100000},
    {.key = "balance",
     .parse = parse_i64,
     .offset = SC(bank_transfer.balance),
     .max = 1000000000000LL},
    {.key = "amount_max",
     .parse = parse_u32,
     .offset = SC(bank_transfer.amount_max),
     .min = 1,
     .max = 1000000000},
    {.key = "critical_ms",
     .parse = parse_u32,
     .offset = SC(bank_transfer.critical_ms),
     .max = 600000},
};

static const struct field read_mostly_fields[] = {
    {.key = "type",
     .parse = parse_enum,
     .offset = SC(workload),
     .names = &workload_names,
     .required = true},
    {.key = "keys", .parse = parse_u32, .offset = SC(read_mostly.keys), .min = 1, .max = 100000},
    {.key = "critical_ms",
     .parse = parse_u32,
     .offset = SC(read_mostly.critical_ms),
     .max = 600000},
    {.key = "write_fraction",
     .parse = parse_positive,
     .offset = SC(read_mostly.write_fraction),
     .max = 1},
};

static const struct field pool_fields[] = {
    {.key = "type",
     .parse = parse_enum,
     .offset = SC(workload),
     .names = &workload_names,
     .required = true},
    {.key = "pools", .parse = parse_u32, .offset = SC(pool.pools), .min = 1, .max = 1000},
    {.key = "critical_ms", .parse = parse_u32, .offset = SC(pool.critical_ms), .max = 600000},
};

/* A new workload kind adds its name to workload_list and its table here;
 * every table starts with "type". */
static const struct table workload_tables[] = {
    [WORKLOAD_FLASH_SALE] = {flash_sale_fields, N_OF(flash_sale_fields), NULL},
    [WORKLOAD_CACHE_REBUILD] = {cache_rebuild_fields, N_OF(cache_rebuild_fields), NULL},
    [WORKLOAD_SCHEDULED_TASKS] = {scheduled_tasks_fields, N_OF(scheduled_tasks_fields), NULL},
    [WORKLOAD_ORDER_IDS] = {order_ids_fields, N_OF(order_ids_fields), NULL},
    [WORKLOAD_BANK_TRANSFER] = {bank_transfer_fields, N_OF(bank_transfer_fields), NULL},
    [WORKLOAD_READ_MOSTLY] = {read_mostly_fields, N_OF(read_mostly_fields), NULL},
    [WORKLOAD_POOL] = {pool_fields, N_OF(pool_fields), NULL},
};
_Static_assert(N_OF(workload_tables) == N_OF(workload_list), "a table for every workload");

static int parse_workload(struct ctx *c, json_t *v, const struct field *f, void *base)
{
    struct scenario *s = base;
    int kind;

    (void)f;
    if (!json_is_object(v))
        return scn_type_error(c, v, "an object");
    json_t *type = json_object_get(v, "type");
    /* the type decides which keys are known, so it is checked first */
    if (!type)
        return scn_fail(c, "missing required key \"type\"");
    scn_push_key(c, "type");
    int rc = match_name(c, type, &workload_names, &kind);
    scn_pop(c);
    if (rc < 0)
        return -1;
    s->workload = (enum workload_kind)kind;
    return walk_object(c, v, &workload_tables[kind], base);
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
    s->workload = WORKLOAD_FLASH_SALE;
    s->flash_sale = (struct flash_sale_spec){
        .items = 10,
        .stock = 1000,
        .critical_ms = 1,
        .skew = SKEW_UNIFORM,
        .hot_fraction = 0.9,
        .hot_items = 1,
        .segments = 1,
    };
    s->cache_rebuild = (struct cache_rebuild_spec){
        .keys = 4,
        .period_ms = 1000,
        .load_ms = 50,
        .read_ms = 5,
    };
    s->scheduled_tasks = (struct scheduled_tasks_spec){
        .tasks = 4,
        .period_ms = 1000,
        .run_ms = 50,
        .jitter_ms = 20,
        .hold_min_ms = 0,
    };
    s->order_ids = (struct order_ids_spec){.sequences = 1, .critical_ms = 1};
    s->bank_transfer = (struct bank_transfer_spec){
        .accounts = 10, .balance = 1000, .amount_max = 100, .critical_ms = 1};
    s->read_mostly = (struct read_mostly_spec){.keys = 4, .critical_ms = 5, .write_fraction = 0.05};
    s->pool = (struct pool_spec){.pools = 1, .critical_ms = 10};
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

const char *workload_name(enum workload_kind w)
{
    return (unsigned)w < N_OF(workload_list) ? workload_list[w] : "unknown";
}

size_t workload_count(void)
{
    return N_OF(workload_list);
}
