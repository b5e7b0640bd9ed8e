/* toxic_faults.c - the network fault kinds: one for each toxic of the
 * proxy's registry (sim/proxy/toxic_kind.h: Toxiproxy's toxics under its
 * names and attributes, and its "down"), played by locklab's own proxy on
 * the connections a target names. network_faults.c puts them in force;
 * this file makes each toxic a fault kind, with what every network fault
 * checks, plans and reports around what its toxic says of itself.
 */
#include <pthread.h>
#include <stdio.h>

#include "sim/faults/fault.h"
#include "sim/proxy/toxic_kind.h"

/* What every network fault checks after its own attributes. */
static int check_network(struct fault_check *fc)
{
    const struct fault_spec *f = fault_checked(fc);
    if (f->duration_ms == 0 && fault_has(fc, "duration_ms"))
        return fault_blame(fc, "duration_ms",
                           "0 is out of range for a %s (1..%d; leave it out for the rest of "
                           "the run)",
                           fault_type_name(f->kind), SCENARIO_MS_MAX);
    if (!fault_has(fc, "target"))
        return fault_fail(fc,
                          "missing required key \"target\" (a %s names whose traffic: \"all\", "
                          "\"redis-2\", \"holder\", \"client:3\", ...)",
                          fault_type_name(f->kind));
    if (fault_check_no_data(fc) < 0 || fault_check_no_restart(fc) < 0 ||
        fault_check_no_clock_keys(fc) < 0 || fault_check_no_mode(fc) < 0 ||
        fault_check_no_side_clients(fc) < 0)
        return -1;
    return fault_check_holder_majority(fc);
}

/* Its toxic's keys, then what its toxic says of them together. */
static int check_toxic(struct fault_check *fc)
{
    struct fault_spec *f = fault_checked(fc);
    const struct toxic_kind *t = fault_kind_of(f)->toxic;
    if (fault_check_toxic_keys(fc, t) < 0)
        return -1;
    if (t->params.after) {
        bool given[SETTING_KEYS_MAX];
        const char *blame = NULL;
        char why[SETTING_WHY_MAX];
        for (size_t k = 0; k < t->params.n && k < SETTING_KEYS_MAX; k++)
            given[k] = fault_has(fc, t->params.keys[k].key);
        if (t->params.after(&f->toxic, given, &blame, why, sizeof(why)) < 0)
            return blame ? fault_blame(fc, blame, "%s", why) : fault_fail(fc, "%s", why);
    }
    return check_network(fc);
}

static void toxic_text(const struct fault_spec *f, char *out, size_t len)
{
    const struct toxic_kind *t = fault_kind_of(f)->toxic;
    if (t->text)
        t->text(&f->toxic, out, len);
    else
        snprintf(out, len, "%s", t->name);
}

/* "latency on all (downstream), for 2 s" */
static void plan(const struct fault_spec *f, char *buf, size_t len)
{
    char span[48] = "until the run ends";
    if (f->duration_ms) {
        char a[32];
        snprintf(span, sizeof(span), "for %s s", figure_seconds(f->duration_ms, a, sizeof(a)));
    }
    const char *way = !fault_kind_of(f)->has_stream   ? ""
                      : f->stream == STREAM_BOTH_WAYS ? " (both ways)"
                      : f->stream == STREAM_UPSTREAM  ? " (upstream)"
                                                      : " (downstream)";
    snprintf(buf, len, "%s on %s%s, %s", fault_type_name(f->kind), f->target_text, way, span);
}

/* Its target as written, Toxiproxy's attributes when it takes them, and
 * its toxic's parameters in their order. */
static void settings(const struct fault_spec *f, json_t *o)
{
    const struct toxic_kind *t = fault_kind_of(f)->toxic;
    json_object_set_new(o, "target", json_string(f->target_text));
    if (t->streamed) {
        json_object_set_new(o, "stream", json_string(fault_stream_name(f->stream)));
        json_object_set_new(o, "toxicity", json_real(f->toxicity));
    }
    for (size_t k = 0; k < t->params.n; k++)
        json_object_set_new(o, t->params.keys[k].key,
                            json_integer((json_int_t)setting_int(&t->params.keys[k], &f->toxic)));
}

static struct fault_kind kinds[FAULT_NETWORK_KINDS_MAX];
static size_t n_kinds;
static pthread_once_t built = PTHREAD_ONCE_INIT;

static void build(void)
{
    for (size_t i = 0; i < toxic_kind_count() && n_kinds < FAULT_NETWORK_KINDS_MAX; i++) {
        const struct toxic_kind *t = toxic_kind_at(i);
        if (t->internal)
            continue;
        kinds[n_kinds++] = (struct fault_kind){
            .name = t->name,
            .number = t->fault_number,
            .summary = t->summary,
            .family = FAULT_FAMILY_NETWORK,
            .window = WINDOW_DURATION,
            .band = "network",
            .check = check_toxic,
            .toxic = t,
            .has_stream = t->streamed,
            .toxic_text = toxic_text,
            .plan = plan,
            .settings = settings,
        };
    }
}

size_t fault_network_kind_count(void)
{
    pthread_once(&built, build);
    return n_kinds;
}

const struct fault_kind *fault_network_kind_at(size_t i)
{
    pthread_once(&built, build);
    return i < n_kinds ? &kinds[i] : NULL;
}
