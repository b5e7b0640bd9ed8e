/* fault_keys.c - the checks of a fault's keys that several kinds share:
 * Toxiproxy's attributes (only network faults take them, each kind its
 * toxic's, read from sim/proxy's registry), a server fault's target, data and restart_after_ms, a
 * clock's keys, holder-majority's key and count, a length that must be given. Each kind's check
 * calls them in its own order, so that the first thing wrong in a fault object is the one blamed.
 */
#include <stdio.h>
#include <string.h>

#include "algorithms/lock.h"
#include "sim/faults/fault.h"
#include "sim/fleet/server_kind.h"
#include "sim/proxy/toxic_kind.h"

bool fault_has(const struct fault_check *fc, const char *key)
{
    return json_object_get(fc->obj, key) != NULL;
}

struct fault_spec *fault_checked(struct fault_check *fc)
{
    return fc->fs;
}

__attribute__((format(printf, 3, 0))) static int vblame(struct fault_check *fc, const char *key,
                                                        const char *fmt, va_list ap)
{
    fc->blame(fc->ctx, key, fmt, ap);
    return -1;
}

__attribute__((format(printf, 3, 4))) static int blame_on(struct fault_check *fc, const char *key,
                                                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vblame(fc, key, fmt, ap);
    va_end(ap);
    return -1;
}

int fault_refuse(struct fault_check *fc, const char *key, const char *why)
{
    if (!fault_has(fc, key))
        return 0;
    return blame_on(fc, key, "a %s takes no %s (%s)", fault_type_name(fc->fs->kind), key, why);
}

int fault_require(struct fault_check *fc, const char *key, const char *what)
{
    if (fault_has(fc, key))
        return 0;
    return blame_on(fc, NULL, "missing required key \"%s\" (%s)", key, what);
}

int fault_needs(struct fault_check *fc, const char *key, const char *what)
{
    return blame_on(fc, NULL, "missing required key \"%s\" (a %s needs one: %s)", key,
                    fault_type_name(fc->fs->kind), what);
}

int fault_blame(struct fault_check *fc, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vblame(fc, key, fmt, ap);
    va_end(ap);
    return -1;
}

int fault_fail(struct fault_check *fc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vblame(fc, NULL, fmt, ap);
    va_end(ap);
    return -1;
}

/* Toxiproxy's attributes that every streamed toxic takes, then each
 * toxic's own (t's taken, NULL: none). */
static int toxic_keys_fit(struct fault_check *fc, const struct toxic_kind *t, const char *why)
{
    static const char *const wrapper[] = {"stream", "toxicity"};
    for (size_t k = 0; k < sizeof(wrapper) / sizeof(wrapper[0]); k++)
        if (!(t && t->streamed) && fault_refuse(fc, wrapper[k], why) < 0)
            return -1;
    const struct setting_key *all[TOXIC_PARAMS_MAX];
    size_t n = toxic_params_all(all, TOXIC_PARAMS_MAX);
    for (size_t k = 0; k < n; k++) {
        const struct setting_key *own = t ? toxic_param(t, all[k]->key) : NULL;
        if (!own && fault_refuse(fc, all[k]->key, why) < 0)
            return -1;
        if (own && own->required && !fault_has(fc, own->key))
            return fault_needs(fc, own->key, own->what ? own->what : "");
    }
    return 0;
}

int fault_check_no_toxic_keys(struct fault_check *fc)
{
    return toxic_keys_fit(fc, NULL, "only network faults take Toxiproxy's attributes");
}

int fault_check_toxic_keys(struct fault_check *fc, const struct toxic_kind *t)
{
    return toxic_keys_fit(fc, t, "see docs/scenario.md for each network fault's keys");
}

int fault_check_servers(struct fault_check *fc)
{
    if (fault_has(fc, "target"))
        return 0;
    return fault_fail(fc,
                      "missing required key \"target\" (a %s names its servers: \"redis-2\", "
                      "\"one\", \"majority\", ...)",
                      fault_type_name(fault_checked(fc)->kind));
}

/* "a kill or a restart": the kinds that take a key, from the registry. */
static const char *kinds_taking(bool data, char *buf, size_t len)
{
    size_t n = 0, used = 0, count = 0;
    for (size_t i = 0; i < fault_kind_count(); i++)
        count += data ? fault_kind_at(i)->takes_data : fault_kind_at(i)->takes_restart;
    buf[0] = '\0';
    for (size_t i = 0; i < fault_kind_count() && used < len; i++) {
        const struct fault_kind *k = fault_kind_at(i);
        if (!(data ? k->takes_data : k->takes_restart))
            continue;
        n++;
        used += (size_t)snprintf(buf + used, len - used, "%sa %s",
                                 n == 1       ? ""
                                 : n == count ? " or "
                                              : ", ",
                                 k->name);
    }
    return buf;
}

int fault_check_no_data(struct fault_check *fc)
{
    char who[96], why[128];
    snprintf(why, sizeof(why), "only %s loses data", kinds_taking(true, who, sizeof(who)));
    return fault_refuse(fc, "data", why);
}

int fault_check_no_restart(struct fault_check *fc)
{
    char who[96], why[128];
    snprintf(why, sizeof(why), "only %s waits to restart", kinds_taking(false, who, sizeof(who)));
    return fault_refuse(fc, "restart_after_ms", why);
}

int fault_check_no_clock_keys(struct fault_check *fc)
{
    if (fault_refuse(fc, "jump_ms", "only a clock_jump moves a clock") < 0)
        return -1;
    return fault_refuse(fc, "method", "only a clock_jump has one");
}

int fault_check_no_mode(struct fault_check *fc)
{
    return fault_refuse(fc, "mode", "only a cluster_failover has one");
}

int fault_check_no_side_clients(struct fault_check *fc)
{
    return fault_refuse(fc, "side_clients", "only a partition puts clients on the cut side");
}

int fault_check_holder_majority(struct fault_check *fc)
{
    const struct fault_spec *f = fault_checked(fc);
    if (f->pick != PICK_HOLDER_MAJORITY || !fault_on_servers(f->kind)) {
        if (fault_refuse(fc, "key", "only a holder-majority target looks for a key") < 0)
            return -1;
        return fault_refuse(fc, "count", "only a holder-majority target takes a count");
    }
    if (fault_has(fc, "key"))
        return 0;
    return fault_fail(fc, "missing required key \"key\" (holder-majority looks for the holder "
                          "of a lock key, such as \"lock:stock:0\")");
}

int fault_check_needs_duration(struct fault_check *fc)
{
    const struct fault_spec *f = fault_checked(fc);
    if (f->duration_ms > 0)
        return 0;
    if (!fault_has(fc, "duration_ms"))
        return fault_fail(fc, "missing required key \"duration_ms\" (a %s needs one)",
                          fault_type_name(f->kind));
    return fault_blame(fc, "duration_ms", "0 is out of range for a %s (1..%d)",
                       fault_type_name(f->kind), SCENARIO_MS_MAX);
}

/* "redis": the kinds whose servers can lose their data, from the registry. */
static const char *kinds_losing_data(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < server_kind_count() && used < len; k++)
        if (server_kind_at(k)->forget_data)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                                     server_kind_at(k)->name);
    return buf;
}

int fault_misfit_cluster(const struct fault_fit *fit, const struct fault_spec *f, const char **key,
                         char *why, size_t len)
{
    if (fit->ops->server && strcmp(fit->ops->server, "redis-cluster") == 0)
        return 0;
    *key = "type";
    snprintf(why, len, "a %s needs a Redis Cluster; %s runs on %s servers",
             fault_type_name(f->kind), fit->ops->name, fit->ops->server ? fit->ops->server : "no");
    return -1;
}

int fault_misfit_data(const struct fault_fit *fit, const struct fault_spec *f, const char **key,
                      char *why, size_t len)
{
    const struct lock_ops *ops = fit->ops;
    const struct server_kind *kind = server_kind_find(ops->server);
    bool on_disk = kind && kind->keeps_data, losable = kind && kind->forget_data;
    char who[64];
    if (f->data == DATA_UNSET)
        return 0;
    *key = "data";
    if (f->pick == PICK_POOLER)
        snprintf(why, len, "a pooler keeps no data: a %s of it loses none",
                 fault_type_name(f->kind));
    else if (f->data == DATA_LOST && on_disk)
        snprintf(why, len, "%s keeps its data on disk through a %s (\"lost\" applies to %s)",
                 ops->server, fault_type_name(f->kind), kinds_losing_data(who, sizeof(who)));
    else if (!on_disk && !losable)
        snprintf(why, len, "%s servers keep no data (\"data\" applies to %s)", ops->server,
                 kinds_losing_data(who, sizeof(who)));
    else
        return 0; /* lost or kept where it can be chosen; kept where it is on disk */
    return -1;
}
