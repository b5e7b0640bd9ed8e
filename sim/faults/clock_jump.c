/* clock_jump.c - the fault kind that moves Redis servers' clocks forward
 * at once (Kleppmann's case against Redlock): by libfaketime when the
 * server runs under it, else by shortening every key's remaining ttl by
 * the jump (method "ttl"), which is what the jump does to the locks.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/faults/fault.h"
#include "sim/faults/nemesis_state.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"

/* A jump is an instant: it takes jump_ms and method, and no length. */
static int check(struct fault_check *fc)
{
    if (fault_check_no_toxic_keys(fc) < 0 || fault_check_servers(fc) < 0 ||
        fault_check_no_mode(fc) < 0 || fault_check_no_side_clients(fc) < 0 ||
        fault_check_no_data(fc) < 0 || fault_check_no_restart(fc) < 0 ||
        fault_refuse(fc, "duration_ms", "a jump is an instant; the keys it shortens stay short") <
            0 ||
        fault_require(fc, "jump_ms", "how far forward the clock moves, in ms") < 0)
        return -1;
    return fault_check_holder_majority(fc);
}

static int misfit(const struct fault_fit *fit, const struct fault_spec *f, const char **key,
                  char *why, size_t len)
{
    (void)f;
    const struct lock_ops *ops = fit->ops;
    const struct server_kind *kind = server_kind_find(ops->server);
    if (kind && kind->clock_movable)
        return 0;
    *key = "type";
    snprintf(why, len,
             "a clock_jump moves a Redis server's clock (its keys expire by it); %s uses %s "
             "servers",
             ops->name, ops->server);
    return -1;
}

static bool fakes_time(const struct fault_spec *f)
{
    return f->method != CLOCK_TTL;
}

/* Node k's clock forward by the jump: for real under libfaketime, else
 * (method "ttl", or libfaketime not to be had) every key's remaining ttl
 * shortened by as much, which is what the jump does to them. */
static void strike(struct nemesis *n, size_t i, size_t k)
{
    struct fault_record *r = &n->rec[i];
    const char *name = n->nodes.node[k].name;
    struct managed_server *s = nemesis_server(n, k);
    uint64_t ms = r->spec.jump_ms;
    if (r->spec.method != CLOCK_TTL && s->preload[0]) {
        char err[256];
        if (cluster_clock_jump(n->nodes.cl, n->nodes.node[k].idx, ms, err, sizeof(err)) == 0)
            nemesis_add_text(r->detail, sizeof(r->detail),
                             "%s (pid %d) clock +%" PRIu64 " ms by libfaketime (%" PRIu64
                             " ms ahead now)",
                             name, (int)nemesis_pid(n, k), ms, s->clock_ahead_ms);
        else
            nemesis_failed_to(n, i, "clock jump", k, err);
        return;
    }
    long keys = s->kind->shorten_ttls ? s->kind->shorten_ttls(s->port, ms) : -1;
    if (keys < 0) {
        char why[96];
        snprintf(why, sizeof(why), "the keys' ttl could not be shortened (no answer on port %d)",
                 s->port);
        nemesis_failed_to(n, i, "clock jump", k, why);
        return;
    }
    bool asked = r->spec.method == CLOCK_TTL;
    nemesis_add_text(
        r->detail, sizeof(r->detail),
        "%s clock +%" PRIu64 " ms by shortening the ttl of its %ld key%s (method ttl%s%s)", name,
        ms, keys, keys == 1 ? "" : "s", asked ? "" : ": ", asked ? "" : n->nodes.no_faketime);
}

static void plan(const struct fault_spec *f, char *buf, size_t len)
{
    char a[32];
    snprintf(buf, len, "clock_jump %s +%s s%s", f->target_text,
             figure_seconds(f->jump_ms, a, sizeof(a)),
             f->method == CLOCK_TTL ? " (method ttl)" : "");
}

static void settings(const struct fault_spec *f, json_t *o)
{
    json_object_set_new(o, "target", json_string(f->target_text));
    json_object_set_new(o, "jump_ms", json_integer((json_int_t)f->jump_ms));
    json_object_set_new(o, "method", json_string(clock_method_name(f->method)));
}

const struct fault_kind fault_clock_jump = {
    .name = "clock_jump",
    .number = 5,
    .summary = "move the target Redis servers' clocks jump_ms forward at once: by "
               "libfaketime, or by shortening every key's remaining ttl (method: "
               "ttl); their locks expire early",
    .family = FAULT_FAMILY_SERVERS,
    .window = WINDOW_DURATION,
    .band = "clock",
    .check = check,
    .misfit = misfit,
    .fakes_time = fakes_time,
    .strike = strike, /* no end_due, no end: over once the clocks moved */
    .plan = plan,
    .settings = settings,
};
