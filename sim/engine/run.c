/* run.c - engine_run (engine.h): the wiring of one run. The fleet gives
 * the lock its config and the faults their nodes; the proxy listens before
 * any client connects; the runner's clients connect, cross the start line
 * with the nemesis, and are watched (the servers, the clock, the face's
 * ticks) until they leave; then the result is collected and judged. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "sim/engine/engine.h"
#include "sim/engine/fleet.h"
#include "sim/engine/runner.h"
#include "sim/engine/verdict.h"
#include "sim/faults/nemesis.h"
#include "sim/fleet/server_kind.h"
#include "sim/proxy/proxy.h"
#include "sim/record/journal.h"

#define WATCH_MS 100 /* how often the watcher looks at the servers */

static const struct run_progress silent;

static int interrupted(const struct run_progress *pg)
{
    return pg->interrupted ? pg->interrupted(pg->ctx) : 0;
}

static void publish_runner(const struct run_progress *pg, struct runner *r)
{
    if (pg->runner)
        pg->runner(pg->ctx, r);
}

/* Wait for the clients, watching the servers and the clock. */
static void watch_run(struct runner *r, struct fleet *f, struct run_result *res,
                      const struct run_progress *pg)
{
    unsigned every = pg->tick ? pg->tick_s * (1000 / WATCH_MS) : 0;
    for (unsigned n = 1; !runner_wait(r, WATCH_MS); n++) {
        if (every && n % every == 0) {
            struct progress p;
            runner_progress(r, &p);
            pg->tick(pg->ctx, &p);
        }
        int dead = fleet_dead(f);
        if (dead >= 0 && res->incomplete_reason[0] == '\0') {
            snprintf(res->incomplete_reason, sizeof(res->incomplete_reason),
                     "%s on port %d exited unexpectedly", f->cl.srv[dead].kind->name,
                     f->cl.srv[dead].port);
            runner_stop(r, 1);
        }
    }
    if (pg->end)
        pg->end(pg->ctx);
}

/* Clients need a descriptor per connection, and a proxy a listener per
 * server and client and two descriptors per connection: lift the soft
 * limit on open files to the hard one when fds would not fit. The servers
 * started after inherit it. */
static void room_for(size_t fds)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)fds + 256;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
        return;
    /* past the hard limit too where that is allowed (root, up to
     * fs.nr_open), as redis-server does for its maxclients */
    if (rl.rlim_max < want) {
        struct rlimit more = {.rlim_cur = want, .rlim_max = want};
        if (setrlimit(RLIMIT_NOFILE, &more) == 0)
            return;
    }
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
}

/* The proxy, when a fault needs one or the request asks: listening before
 * any client connects. 0 with *px NULL when none is needed. */
static int start_proxy(const struct run_request *req, const struct lock_config *cfg,
                       struct run_result *res, struct proxy **px, char *err, size_t errlen)
{
    const struct scenario *s = req->scn;
    *px = NULL;
    if (!req->proxy_all && !scenario_needs_proxy(s))
        return 0;
    size_t n = cfg->n_endpoints;
    uint32_t covered = req->proxy_all ? servers_mask(n) : scenario_proxied_endpoints(s, n);
    size_t groups = scenario_proxy_per_client(s) ? s->clients : 1;
    room_for(n * groups * 3 + (size_t)s->clients * n * 2);
    *px = proxy_new(cfg->endpoints, n, covered, groups, s->seed, err, errlen);
    if (*px == NULL || proxy_start(*px, err, errlen) < 0)
        return -1;
    res->has_proxy = true;
    res->proxy_listeners = groups;
    for (size_t e = 0; e < n && e < RESULT_MAX_SERVERS; e++)
        res->proxied[e] = proxy_covers(*px, e);
    return 0;
}

/* The clients' figures and history, what the proxy did, and the verdict. */
static enum engine_status finish_run(struct runner *r, struct proxy *px, struct run_result *res,
                                     char *err, size_t errlen)
{
    /* collecting sets its own reason (or none): the watcher's comes first */
    char reason[sizeof(res->incomplete_reason)];
    snprintf(reason, sizeof(reason), "%s", res->incomplete_reason);
    if (runner_collect(r, res) < 0) {
        snprintf(err, errlen, "out of memory collecting the results");
        return ENGINE_NO_MEMORY;
    }
    if (px)
        proxy_stats(px, &res->proxy);
    if (reason[0]) {
        res->complete = false;
        snprintf(res->incomplete_reason, sizeof(res->incomplete_reason), "%s", reason);
    }
    result_judge(res);
    return ENGINE_RAN;
}

/* The run on fleet f, its clients configured by cfg (the caller's, zeroed;
 * it outlives the clients, who keep pointers into it). */
static enum engine_status run_with(const struct run_request *req, struct fleet *f,
                                   struct lock_config *cfg, struct run_result *res,
                                   const struct run_progress *pg, char *err, size_t errlen)
{
    const struct scenario *s = req->scn;
    const struct lock_ops *ops = lock_find(s->algorithm);

    fleet_config(f, ops, s, cfg); /* every field, the others zero */
    res->complete = true;
    fleet_describe(f, ops, s, res);
    if (pg->start)
        pg->start(pg->ctx, s, res);
    /* a connection per endpoint a client, and one more (Redisson's
     * subscriber): thousands of clients pass the usual soft limit of 1024 */
    room_for((size_t)s->clients * (cfg->n_endpoints + 1));
    struct journal *j = journal_open(res->run_dir, err, errlen);
    if (j == NULL)
        return ENGINE_NO_CLIENTS;
    struct runner *r = runner_new(s, ops, cfg, err, errlen);
    if (r == NULL) {
        journal_free(j);
        return ENGINE_NO_CLIENTS;
    }
    runner_record_to(r, j);
    cfg->cancel = runner_cancel_flag(r); /* before any client reads cfg */
    struct fault_nodes nodes;
    fleet_fault_nodes(f, ops, s, &nodes);
    runner_set_fault_nodes(r, &nodes);
    struct proxy *px = NULL;
    /* given before the clients connect: a Ctrl-C stops their tries */
    publish_runner(pg, r);
    if (start_proxy(req, cfg, res, &px, err, errlen) < 0 ||
        runner_set_proxy(r, px, err, errlen) < 0 || runner_start(r, err, errlen) < 0) {
        publish_runner(pg, NULL);
        runner_free(r);
        proxy_free(px);
        return interrupted(pg) ? ENGINE_STOPPED : ENGINE_NO_CLIENTS;
    }
    if (interrupted(pg))
        runner_stop(r, 1); /* Ctrl-C while the servers were starting */
    runner_go(r);
    watch_run(r, f, res, pg);
    enum engine_status st = finish_run(r, px, res, err, errlen);
    publish_runner(pg, NULL);
    runner_free(r);
    proxy_free(px); /* after the clients: their connections run through it */
    return st;
}

static enum engine_status run_on_fleet(const struct run_request *req, struct fleet *f,
                                       struct run_result *res, const struct run_progress *pg,
                                       char *err, size_t errlen)
{
    struct lock_config *cfg = calloc(1, sizeof(*cfg)); /* endpoints and sentinels: large */
    if (cfg == NULL) {
        snprintf(err, errlen, "out of memory setting up the clients");
        return ENGINE_NO_CLIENTS;
    }
    enum engine_status st = run_with(req, f, cfg, res, pg, err, errlen);
    free(cfg);
    return st;
}

enum engine_status engine_run(const struct run_request *req, struct run_result *res,
                              const struct run_progress *progress, char *err, size_t errlen)
{
    const struct run_progress *pg = progress ? progress : &silent;
    if (req->fleet)
        return run_on_fleet(req, req->fleet, res, pg, err, errlen);
    const struct lock_ops *ops = lock_find(req->scn->algorithm);
    struct fleet *f = engine_fleet_up(req->scn, &ops, 1, pg, err, errlen);
    if (f == NULL)
        return ENGINE_NO_SERVERS;
    enum engine_status st = run_on_fleet(req, f, res, pg, err, errlen);
    char logs[sizeof(res->run_dir) + 16];
    snprintf(logs, sizeof(logs), "%s/servers", res->run_dir);
    engine_fleet_down(f, res->history_events ? logs : NULL, pg);
    return st;
}

struct fleet *engine_fleet_up(const struct scenario *s, const struct lock_ops *const *ops, size_t n,
                              const struct run_progress *progress, char *err, size_t errlen)
{
    /* the servers inherit the limit on open files: lifted before they
     * start, it lets redis-server take every client (its maxclients) */
    room_for((size_t)s->clients * LOCK_ENDPOINT_MAX);
    const struct run_progress *pg = progress ? progress : &silent;
    struct fleet *f = malloc(sizeof(*f)); /* fleet_up zeroes it */
    if (f == NULL) {
        snprintf(err, errlen, "out of memory starting the servers");
        return NULL;
    }
    if (fleet_up(f, s, ops, n, err, errlen) < 0) {
        free(f);
        return NULL;
    }
    if (pg->servers_up) {
        pg->servers_up(&f->cl);
        f->cl.pids_changed = pg->servers_up; /* a fault restarted one */
    }
    return f;
}

void engine_fleet_down(struct fleet *f, const char *logs_dir, const struct run_progress *progress)
{
    if (f == NULL)
        return;
    if (progress && progress->servers_down)
        progress->servers_down();
    fleet_down(f, logs_dir);
    free(f);
}
