/* suite_cell.c - one class of a suite on one lock, as the scenario file
 * its cell runs: the business scenario with the suite's settings, the
 * lock in its library's mode, the class's layout and its faults sized
 * from the lease the lock really has. The loader then judges the result
 * as it judges any file, so a cell can hold nothing a user could not
 * have written. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/scenario/suite.h"

const char *const suite_lease_keys[SUITE_LEASE_KEYS][2] = {
    {"at_leases", "at_ms"},
    {"duration_leases", "duration_ms"},
    {"restart_after_leases", "restart_after_ms"},
    {"jump_leases", "jump_ms"}};

int suite_lock_parse(const char *spec, struct suite_lock *out, char *why, size_t len)
{
    char name[64], tag[32] = "";
    size_t n = strcspn(spec, "@+");
    memset(out, 0, sizeof(*out));
    if (n == 0 || n >= sizeof(name)) {
        snprintf(why, len, "expected a lock's name, then @mode and +fencing if wanted, got \"%s\"",
                 spec);
        return -1;
    }
    snprintf(name, sizeof(name), "%.*s", (int)n, spec);
    const char *rest = spec + n;
    if (*rest == '@') {
        size_t t = strcspn(rest + 1, "+");
        snprintf(tag, sizeof(tag), "%.*s", (int)(t < sizeof(tag) ? t : sizeof(tag) - 1), rest + 1);
        rest += 1 + t;
    }
    out->fencing = strcmp(rest, "+fencing") == 0;
    if (*rest && !out->fencing) {
        snprintf(why, len, "\"%s\": after the name only @mode and +fencing may follow", spec);
        return -1;
    }
    out->ops = lock_find(name);
    if (out->ops == NULL) {
        char names[512];
        snprintf(why, len, "no lock is called \"%s\" (%s)", name, lock_names(names, sizeof(names)));
        return -1;
    }
    if (out->fencing && !out->ops->gives_token) {
        snprintf(why, len, "%s gives no fencing token: no +fencing row", name);
        return -1;
    }
    for (size_t i = 0; i < LOCK_MAX_DEFAULTS && out->ops->defaults[i].tag; i++)
        if (!tag[0] || strcmp(tag, out->ops->defaults[i].tag) == 0) {
            out->mode = &out->ops->defaults[i];
            return 0;
        }
    if (!tag[0])
        return 0;
    snprintf(why, len, "%s has no mode \"%s\"%s", name, tag,
             out->ops->defaults[0].tag ? " (`locklab list algorithms` names its modes)"
                                       : ": it has one way of running");
    return -1;
}

const char *suite_lock_name(const struct suite_lock *l, char *buf, size_t len)
{
    bool tagged = l->mode && l->ops->defaults[1].tag; /* a tag only where there is a choice */
    snprintf(buf, len, "%s%s%s%s", l->ops->name, tagged ? "@" : "", tagged ? l->mode->tag : "",
             l->fencing ? "+fencing" : "");
    return buf;
}

const char *suite_lock_slug(const struct suite_lock *l, char *buf, size_t len)
{
    bool tagged = l->mode && l->ops->defaults[1].tag;
    snprintf(buf, len, "%s%s%s%s", l->ops->name, tagged ? "-" : "", tagged ? l->mode->tag : "",
             l->fencing ? "-fenced" : "");
    return buf;
}

/* Objects merged into dst member by member, deeply; other values replace. */
static void merge(json_t *dst, const json_t *src)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)src, key, v)
    {
        json_t *d = json_object_get(dst, key);
        if (json_is_object(d) && json_is_object(v))
            merge(d, v);
        else
            json_object_set_new(dst, key, json_deep_copy(v));
    }
}

/* The object under key of o, made when missing (a borrowed reference). */
static json_t *object_at(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_object(v)) {
        v = json_object();
        json_object_set_new(o, key, v);
    }
    return v;
}

static int set_lock(json_t *scn, const struct suite *s, const struct suite_lock *l, char *why,
                    size_t len)
{
    json_t *lock = object_at(scn, "lock");
    json_object_set_new(lock, "algorithm", json_string(l->ops->name));
    json_object_set_new(lock, "ttl_ms", json_integer(s->ttl_ms));
    json_object_set_new(scn, "fencing", json_boolean(l->fencing));
    if (l->mode == NULL)
        return 0;
    json_error_t je;
    json_t *mode = json_loads(l->mode->settings, 0, &je);
    if (!json_is_object(mode)) {
        json_decref(mode);
        snprintf(why, len, "%s's mode \"%s\" is no JSON object: %s", l->ops->name, l->mode->tag,
                 je.text);
        return -1;
    }
    merge(lock, mode);
    json_decref(mode);
    return 0;
}

/* Template f with its lease multiples as milliseconds of lease_ms. */
static json_t *sized(const json_t *f, uint32_t lease_ms)
{
    json_t *out = json_deep_copy(f);
    json_object_del(out, "optional");
    for (size_t k = 0; k < SUITE_LEASE_KEYS; k++) {
        const json_t *v = json_object_get(out, suite_lease_keys[k][0]);
        if (v == NULL)
            continue;
        double ms = json_number_value(v) * (double)lease_ms;
        json_object_set_new(out, suite_lease_keys[k][1], json_integer((json_int_t)llround(ms)));
        json_object_del(out, suite_lease_keys[k][0]);
    }
    return out;
}

/* A cell runs past the end of its last fault by 1.5 leases at least, so
 * that a lock whose lease is longer than the suite's ttl (etcd's whole
 * seconds) is struck as long, and has as long to recover, as the others. */
static void stretch(json_t *scn, const json_t *faults, uint32_t lease_ms)
{
    double end_ms = 0;
    for (size_t i = 0; i < json_array_size(faults); i++) {
        const json_t *f = json_array_get(faults, i);
        double at = (double)json_integer_value(json_object_get(f, "at_ms"));
        double d = (double)json_integer_value(json_object_get(f, "duration_ms"));
        double r = (double)json_integer_value(json_object_get(f, "restart_after_ms"));
        double e = at + (d > r ? d : r);
        end_ms = e > end_ms ? e : end_ms;
    }
    double want = end_ms + 1.5 * lease_ms;
    const json_t *d = json_object_get(scn, "duration_s");
    if (json_array_size(faults) && json_is_number(d) && json_number_value(d) * 1000 < want)
        json_object_set_new(scn, "duration_s", json_real(ceil(want / 100.0) / 10.0));
}

bool suite_fault_optional(const struct suite *s, size_t cls, size_t k)
{
    return json_is_true(json_object_get(json_array_get(s->classes[cls].faults, k), "optional"));
}

json_t *suite_cell(const struct suite *s, const json_t *base, size_t cls,
                   const struct suite_lock *l, const struct suite_sizing *z, char *why, size_t len)
{
    const struct suite_class *k = &s->classes[cls];
    json_t *scn = json_deep_copy(base);
    char name[128], slug[64];
    merge(scn, s->run);
    if (k->run)
        merge(scn, k->run); /* the class's own shape, after the suite's */
    snprintf(name, sizeof(name), "%s-%s-%s", json_string_value(json_object_get(scn, "name")),
             suite_lock_slug(l, slug, sizeof(slug)), k->name);
    json_object_set_new(scn, "name", json_string(name));
    char desc[256];
    snprintf(desc, sizeof(desc), "scorecard %s: %s, %s", s->name, k->title,
             suite_lock_name(l, slug, sizeof(slug)));
    json_object_set_new(scn, "description", json_string(desc));
    json_object_del(scn, "expect"); /* judged by what happened, not by an expectation */
    if (set_lock(scn, s, l, why, len) < 0) {
        json_decref(scn);
        return NULL;
    }
    const json_t *lay = z->layout ? json_object_get(s->layouts, k->layout) : NULL;
    const json_t *mine = lay ? json_object_get(lay, l->ops->server) : NULL;
    if (mine)
        merge(object_at(object_at(scn, "lock"), l->ops->server), mine);
    if (k->duration_ms)
        json_object_set_new(scn, "duration_s", json_real((double)k->duration_ms / 1000.0));
    if (z->renews && z->lease_ms && k->hold_renewed_leases > 0)
        json_object_set_new(object_at(scn, "workload"), "critical_ms",
                            json_integer(llround(k->hold_renewed_leases * z->lease_ms)));
    json_t *faults = json_array();
    for (size_t i = 0; z->lease_ms && i < json_array_size(k->faults); i++)
        if (!(z->skip & (1u << i)))
            json_array_append_new(faults, sized(json_array_get(k->faults, i), z->lease_ms));
    json_object_set_new(scn, "faults", faults);
    stretch(scn, faults, z->lease_ms);
    return scn;
}
