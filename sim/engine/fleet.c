/* fleet.c - managed or external servers, and each algorithm's share. */
#include "sim/engine/fleet.h"
#include "sim/faults/fault_spec.h"
#include "sim/faults/nemesis.h"
#include "sim/fleet/remote.h"
#include "sim/fleet/server_kind.h"
#include "sim/proxy/proxy.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(SCENARIO_MAX_CLIENTS <= CLUSTER_MAX_CLIENTS, "every server admits every client");

/* The registry's index of the kind ops runs on (lock_find's locks name
 * kinds the fleet knows: fleet_check refuses one it does not). */
static size_t kind_index(const struct lock_ops *ops)
{
    int k = server_kind_index(ops->server);
    return k < 0 ? 0 : (size_t)k;
}

/* What ops[0..n) need of each kind. */
static void needs(const struct scenario *s, const struct lock_ops *const *ops, size_t n,
                  size_t need[SCENARIO_SERVER_KINDS])
{
    memset(need, 0, sizeof(size_t) * SCENARIO_SERVER_KINDS);
    for (size_t i = 0; i < n; i++) {
        size_t k = scenario_servers(s, ops[i]);
        if (k > need[kind_index(ops[i])])
            need[kind_index(ops[i])] = k;
    }
}

int fleet_check(const struct scenario *s, const struct lock_ops *const *ops, size_t n, char *err,
                size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        const struct server_kind *kind = server_kind_find(ops[i]->server);
        if (kind == NULL || server_kind_index(ops[i]->server) >= SCENARIO_SERVER_KINDS) {
            snprintf(err, errlen, "%s runs on %s servers, a kind locklab does not know",
                     ops[i]->name, ops[i]->server);
            return -1;
        }
        const struct server_list *ext = scenario_external(s, kind->name);
        size_t want = scenario_servers(s, ops[i]);
        /* An ensemble is one service: any number of its members will do.
         * Independent nodes must all be named. */
        if (ext->n == 0 || ext->n >= want || kind->one_service)
            continue;
        snprintf(err, errlen,
                 "%s needs %zu %s servers, but only %zu %s given (--%s or \"servers\")",
                 ops[i]->name, want, kind->name, ext->n, ext->n == 1 ? "is" : "are", kind->name);
        return -1;
    }
    return 0;
}

static int start_kind(struct fleet *f, size_t kind, size_t count, char *err, size_t errlen)
{
    size_t first = f->cl.n;
    if (cluster_start(&f->cl, server_kind_at(kind)->name, count, err, errlen) < 0)
        return -1;
    struct server_list *l = &f->ep[kind];
    for (size_t i = first; i < f->cl.n && l->n < LOCK_ENDPOINT_MAX; i++)
        l->ep[l->n++] = server_endpoint(&f->cl.srv[i]);
    return 0;
}

/* The LD_PRELOAD that lets a clock_jump move a Redis's clock: locklab's
 * shim (next to the binary) and then libfaketime. 0, or -1 with why. */
static int faketime_preload(char *out, size_t len, char *why, size_t whylen)
{
    char self[300], shim[400];
    const char *env = getenv("LOCKLAB_FAKETIME_SHIM");
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    if (env && env[0])
        snprintf(shim, sizeof(shim), "%.300s", env);
    else
        snprintf(shim, sizeof(shim), "%.300s/liblocklab_faketime.so", self);
    if (access(shim, R_OK) != 0) {
        snprintf(why, whylen, "%.120s is missing (built with locklab)", shim);
        return -1;
    }
    const char *lib = getenv("LOCKLAB_LIBFAKETIME");
    glob_t g = {0};
    if (!(lib && lib[0]) && glob("/usr/lib/*/faketime/libfaketime.so.1", 0, NULL, &g) == 0)
        lib = g.gl_pathv[0];
    if (lib == NULL || access(lib, R_OK) != 0) {
        snprintf(why, whylen, "libfaketime is not installed (apt-get install libfaketime)");
        globfree(&g);
        return -1;
    }
    snprintf(out, len, "%.250s:%.120s", shim, lib);
    globfree(&g);
    return 0;
}

/* kind's share started its own way (server_kind.start_topology): 1, 0
 * when s asks for none, -1 with err set. */
static int start_topology(struct fleet *f, const struct scenario *s, const struct server_kind *kind,
                          char *err, size_t errlen)
{
    if (kind->start_topology == NULL)
        return 0;
    struct topology t = {.seed = s->seed,
                         .duration_ms = s->duration_ms,
                         .clients = s->clients,
                         .cl = &f->cl,
                         .endpoints = &f->ep[server_kind_index(kind->name)],
                         .finders = &f->sentinels,
                         .link = &f->repl};
    scenario_layout(s, &t.layout);
    return kind->start_topology(&t, err, errlen);
}

/* The hosts every fleet of this process places its servers on
 * (fleet_use_hosts); none: this machine. */
static struct {
    struct fleet_host *hosts;
    size_t n;
} placed;

void fleet_use_hosts(struct fleet_host *hosts, size_t n)
{
    placed.hosts = hosts;
    placed.n = n;
}

/* Before anything starts: every kind the fleet will start fits every
 * host (its packages there, the kind placeable), and no fault needs what
 * hosts do not give yet (the relay on a replica's link). */
static int hosts_fit(const struct scenario *s, const size_t *need, char *err, size_t errlen)
{
    struct family_layout layout;
    scenario_layout(s, &layout);
    for (size_t i = 0; i < s->n_faults; i++)
        if (fault_on_network(s->faults[i].kind) && s->faults[i].scope == NET_REPLICATION) {
            char why[256];
            if (nemesis_host_cut_fits(&s->faults[i], why, sizeof(why)) < 0) {
                snprintf(err, errlen, "faults[%zu]: %s", i, why);
                return -1;
            }
        }
    for (size_t k = 0; k < server_kind_count() && k < SCENARIO_SERVER_KINDS; k++) {
        const struct server_kind *kind = server_kind_at(k);
        if (need[k] == 0 || s->servers[k].n > 0)
            continue;
        const struct server_kind *finder = kind->found_by ? server_kind_find(kind->found_by) : NULL;
        for (size_t h = 0; h < placed.n; h++)
            if (remote_fits(&placed.hosts[h], kind, err, errlen) < 0 ||
                (finder && layout.finders > 0 &&
                 remote_fits(&placed.hosts[h], finder, err, errlen) < 0))
                return -1;
    }
    return 0;
}

int fleet_up(struct fleet *f, const struct scenario *s, const struct lock_ops *const *ops, size_t n,
             char *err, size_t errlen)
{
    size_t need[SCENARIO_SERVER_KINDS];
    memset(f, 0, sizeof(*f));
    if (fleet_check(s, ops, n, err, errlen) < 0)
        return -1;
    f->cl.hosts = placed.hosts;
    f->cl.n_hosts = placed.n;
    f->cl.keep_data = scenario_keeps_data(s);
    if (scenario_fakes_time(s) && placed.n > 0)
        snprintf(f->no_faketime, sizeof(f->no_faketime),
                 "a server on a host keeps that host's clock: locklab's preload is not copied "
                 "there");
    else if (scenario_fakes_time(s) &&
             faketime_preload(f->cl.clock_preload, sizeof(f->cl.clock_preload), f->no_faketime,
                              sizeof(f->no_faketime)) < 0)
        f->cl.clock_preload[0] = '\0';
    needs(s, ops, n, need);
    if (placed.n > 0 && hosts_fit(s, need, err, errlen) < 0)
        return -1;
    for (size_t k = 0; k < server_kind_count() && k < SCENARIO_SERVER_KINDS; k++) {
        const struct server_kind *kind = server_kind_at(k);
        int topology;
        const struct server_list *finders =
            kind->found_by ? scenario_external(s, kind->found_by) : NULL;
        if (need[k] == 0)
            continue;
        if (finders && finders->n > 0) {
            /* the master is the finders' to name: the lock asks them */
            f->sentinels = *finders;
            f->ep[k] = *finders;
            f->external[k] = true;
        } else if (s->servers[k].n > 0) {
            f->ep[k] = s->servers[k];
            f->external[k] = true;
        } else if ((topology = start_topology(f, s, kind, err, errlen)) < 0 ||
                   (topology == 0 && start_kind(f, k, need[k], err, errlen) < 0)) {
            fleet_down(f, NULL);
            return -1;
        }
    }
    return 0;
}

void fleet_config(const struct fleet *f, const struct lock_ops *ops, const struct scenario *s,
                  struct lock_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg)); /* every field this leaves out is off */
    const struct server_list *l = &f->ep[kind_index(ops)];
    /* one service: the client gets every server of it; else those it uses */
    size_t n = server_kind_find(ops->server)->one_service ? l->n : scenario_servers(s, ops);
    if (n > l->n)
        n = l->n;
    memcpy(cfg->endpoints, l->ep, sizeof(l->ep[0]) * n);
    memcpy(cfg->upstream, l->ep, sizeof(l->ep[0]) * n);
    cfg->n_endpoints = n;
    if (f->sentinels.n > 0 && server_kind_find(ops->server)->found_by) {
        memcpy(cfg->sentinels, f->sentinels.ep, sizeof(f->sentinels.ep[0]) * f->sentinels.n);
        cfg->n_sentinels = f->sentinels.n;
        const struct server_kind *finder =
            server_kind_find(server_kind_find(ops->server)->found_by);
        snprintf(cfg->master_name, sizeof(cfg->master_name), "%s",
                 finder && finder->finds_as ? finder->finds_as : "");
    }
    cfg->connect_timeout_ms = 2000;
    cfg->io_timeout_ms = 5000;
    cfg->retry_min_ms = s->retry_min_ms;
    cfg->retry_max_ms = s->retry_max_ms;
    cfg->want_token = s->fencing;
    /* every family's settings (resolved), which each lock reads its own of */
    _Static_assert(sizeof(cfg->settings) == sizeof(s->lock_settings), "one store a family");
    memcpy(cfg->settings, s->lock_settings, sizeof(cfg->settings));
    /* the lease the lock really runs on (etcd's whole seconds), so that
     * the one its client asks for at connect is the one reported */
    cfg->ttl_ms = scenario_lease_ms(s, ops);
    cfg->permits = s->permits;
}

/* The managed server listening on port, or -1. */
static int managed_index(const struct fleet *f, int port)
{
    for (size_t j = 0; j < f->cl.n; j++)
        if (f->cl.srv[j].port == port)
            return (int)j;
    return -1;
}

/* The first managed server of the kind named, or -1. */
static int first_of_kind(const struct fleet *f, const char *kind)
{
    for (size_t j = 0; j < f->cl.n; j++)
        if (strcmp(f->cl.srv[j].kind->name, kind) == 0)
            return (int)j;
    return -1;
}

void fleet_fault_nodes(struct fleet *f, const struct lock_ops *ops, const struct scenario *s,
                       struct fault_nodes *nodes)
{
    struct lock_config cfg;
    memset(nodes, 0, sizeof(*nodes));
    if (f->external[kind_index(ops)])
        return;
    fleet_config(f, ops, s, &cfg);
    nodes->cl = &f->cl;
    snprintf(nodes->no_faketime, sizeof(nodes->no_faketime), "%s", f->no_faketime);
    nodes->repl = f->repl;
    for (size_t i = 0; i < f->sentinels.n; i++)
        nodes->sentinel_port[nodes->n_sentinels++] = f->sentinels.ep[i].port;
    const struct lock_family *voters = lock_family_with(ops->family, FAMILY_HOOK(quorum));
    nodes->quorum = voters ? voters->quorum(scenario_settings(s, voters)) : 0;
    if (nodes->quorum == 0)
        nodes->quorum = cfg.n_endpoints / 2 + 1;
    for (size_t i = 0; i < cfg.n_endpoints; i++) {
        int j = managed_index(f, cfg.endpoints[i].port);
        if (j >= 0 && f->cl.srv[j].kind->internal)
            j = first_of_kind(f, ops->server); /* a pooler's: faults strike the server behind */
        if (j < 0)
            continue;
        struct fault_node *nd = &nodes->node[nodes->n++];
        cluster_node_name(f->cl.srv[j].kind, i + 1, nd->name, sizeof(nd->name));
        nd->idx = (size_t)j;
    }
}

/* How managed server j (the lock's i-th endpoint) runs, for the report:
 * its pid (its host's, on a host), durable mode, place in a topology. */
static void managed_how(const struct fleet *f, int j, size_t i, char *how, size_t len)
{
    const struct managed_server *m = &f->cl.srv[j];
    char where[96] = "";
    if (m->host)
        snprintf(where, sizeof(where), " on host %s", m->host->name);
    snprintf(how, len, "managed%s, pid %d%s%s%s", where, (int)m->pid, m->aof ? ", " : "",
             m->aof ? m->kind->durable_mode : "",
             m->replica_of && f->repl ? ", replica via proxy"
             : m->replica_of          ? ", replica"
             : f->repl && i == 0      ? ", master"
                                      : "");
}

void fleet_describe(struct fleet *f, const struct lock_ops *ops, const struct scenario *s,
                    struct run_result *res)
{
    struct lock_config cfg;
    fleet_config(f, ops, s, &cfg);
    res->n_servers = 0;
    /* with external sentinels the endpoints are theirs: listed below */
    bool theirs = scenario_finders(s, ops)->n > 0;
    for (size_t i = 0; i < cfg.n_endpoints && !theirs && res->n_servers < RESULT_MAX_SERVERS; i++) {
        const struct lock_endpoint *ep = &cfg.endpoints[i];
        char how[96] = "external";
        int j = f->external[kind_index(ops)] ? -1 : managed_index(f, ep->port);
        int behind = j >= 0 && f->cl.srv[j].kind->internal ? first_of_kind(f, ops->server) : -1;
        if (behind >= 0)
            snprintf(how, sizeof(how), "managed %s, pid %d, in front of pid %d",
                     f->cl.srv[j].kind->name, (int)f->cl.srv[j].pid, (int)f->cl.srv[behind].pid);
        else if (j >= 0)
            managed_how(f, j, i, how, sizeof(how));
        fleet_version(f, ops->server, ep->host, ep->port, &res->versions[res->n_servers]);
        snprintf(res->servers[res->n_servers++], sizeof(res->servers[0]), "%s %s:%d (%s)",
                 ops->server, ep->host, ep->port, how);
    }
    /* the sentinels are the kind that names the lock's master to it */
    const struct server_kind *kind = server_kind_find(ops->server);
    const char *finder = kind ? kind->found_by : NULL;
    for (size_t i = 0; finder && i < cfg.n_sentinels && res->n_servers < RESULT_MAX_SERVERS; i++) {
        int j = theirs ? -1 : managed_index(f, cfg.sentinels[i].port);
        char how[96] = "external: the redis lock asks it for the master";
        if (j >= 0)
            managed_how(f, j, SIZE_MAX, how, sizeof(how));
        fleet_version(f, finder, cfg.sentinels[i].host, cfg.sentinels[i].port,
                      &res->versions[res->n_servers]);
        snprintf(res->servers[res->n_servers++], sizeof(res->servers[0]), "%s %s:%d (%s)", finder,
                 cfg.sentinels[i].host, cfg.sentinels[i].port, how);
    }
}

int fleet_reset(struct fleet *f, char *err, size_t errlen)
{
    for (size_t i = 0; i < f->cl.n; i++) {
        const struct managed_server *m = &f->cl.srv[i];
        if (m->kind->reset && m->pid > 0 && m->kind->reset(m, err, errlen) < 0)
            return -1;
    }
    return 0;
}

int fleet_dead(struct fleet *f)
{
    for (size_t i = 0; i < f->cl.n; i++)
        if (!cluster_alive(&f->cl, i))
            return (int)i;
    return -1;
}

void fleet_down(struct fleet *f, const char *logs_dir)
{
    for (size_t k = 0; k < server_kind_count() && k < SCENARIO_SERVER_KINDS; k++) {
        void (*leave)(const char *, int) = server_kind_at(k)->leave;
        for (size_t i = 0; leave && f->external[k] && i < f->ep[k].n; i++)
            leave(f->ep[k].ep[i].host, f->ep[k].ep[i].port);
    }
    cluster_stop(&f->cl, logs_dir);
    proxy_free(f->repl); /* after the replicas: their link runs through it */
    f->repl = NULL;
}

void fleet_version(struct fleet *f, const char *kind, const char *host, int port,
                   struct server_version *v)
{
    char address[sizeof(v->address)];
    snprintf(address, sizeof(address), "%s:%d", host, port);
    for (size_t i = 0; i < f->n_known; i++)
        if (strcmp(f->known[i].kind, kind) == 0 && strcmp(f->known[i].address, address) == 0) {
            *v = f->known[i];
            return;
        }
    memset(v, 0, sizeof(*v));
    snprintf(v->kind, sizeof(v->kind), "%s", kind);
    memcpy(v->address, address, sizeof(address));
    const struct server_kind *k = server_kind_find(kind);
    if (k == NULL || k->version == NULL)
        snprintf(v->why, sizeof(v->why), "locklab does not ask %s servers their version", kind);
    else if (k->version(host, port, v) < 0) {
        v->version[0] = '\0';
        if (v->why[0] == '\0')
            snprintf(v->why, sizeof(v->why), "no answer");
    } else
        v->why[0] = '\0';
    if (f->n_known < FLEET_KNOWN_VERSIONS)
        f->known[f->n_known++] = *v;
}
