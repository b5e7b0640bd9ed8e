/* scenario.h - a scenario file, loaded and validated.
 *
 * Nothing starts before scenario_load() (or _with, with the command line's
 * values) has succeeded. Every error is one line naming the file, line, column and the
 * JSON path: "scenarios/x.json:12:18: faults[2].at_ms: expected an integer
 * >= 0". Unknown keys are errors, with the closest known key suggested.
 * The file format is documented in docs/scenario.md.
 */
#ifndef LOCKLAB_SCENARIO_H
#define LOCKLAB_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "algorithms/lock_family.h"
#include "algorithms/settings.h"
#include "sim/faults/fault_spec.h"
#include "sim/record/figures.h"

#define SCENARIO_MAX_CLIENTS  100000
#define SCENARIO_MAX_RATE     1000000 /* business steps per second */
#define SCENARIO_ERR_MAX      512
#define SCENARIO_MAX_NOTES    8
#define SCENARIO_SERVER_KINDS 8 /* room in a scenario for the fleet's server kinds */

enum expect_invariants { EXPECT_INV_UNSET = 0, EXPECT_INV_HOLD, EXPECT_INV_BROKEN };

struct workload_ops;
struct workload_run;

struct scenario {
    char path[512];
    char name[64];
    char description[256];

    /* the run */
    uint32_t clients;
    uint64_t duration_ms; /* stop after this long... */
    uint64_t requests;    /* ...or after this many business steps (0 = no limit) */
    double rate;          /* open loop: business steps per second in all, each client on a
                             schedule; 0 = closed loop (a step as soon as the last ended) */
    uint64_t seed;

    /* the lock */
    char algorithm[32];
    uint32_t ttl_ms;
    uint32_t wait_ms;      /* how long acquire may wait for a busy lock */
    bool watchdog;         /* renew while held */
    uint32_t renew_ms;     /* renewal period (watchdog or kept lease); 0 in the file = ttl/3 */
    uint32_t retry_min_ms; /* backoff while waiting */
    uint32_t retry_max_ms;
    uint32_t permits; /* a semaphore's permits per key (lock_config.permits); 1 by default */
    /* lock.rate_limit: a token bucket in front of every acquire
     * (sim/engine/limiter.h), rate tokens a second, burst at most; 0: none */
    double limit_rate;
    uint32_t limit_burst; /* 0 in the file: one second's tokens (scenario_limit_burst) */
    /* Each lock family's own settings (lock.redlock, lock.redis, ...), at
     * its place in the families' registry (algorithms/lock_family.h), read
     * through scenario_settings. */
    struct settings_store lock_settings[LOCK_FAMILIES_MAX];

    /* External servers, by their kind's index in the fleet's registry
     * (sim/fleet/kinds.c: "servers" in the file, --redis, ...); empty =
     * managed. External redis-sentinels (servers.sentinel, --sentinel)
     * are what the redis lock asks for its master: its Redis servers are
     * then theirs (scenario_sentinels). */
    struct server_list servers[SCENARIO_SERVER_KINDS];

    /* the resource */
    const struct workload_ops *workload; /* from the workloads' registry */
    struct settings_store workload_keys; /* its own struct (scenario_workload) */
    bool fencing; /* the resource rejects writes with a token below the highest seen */

    struct fault_spec faults[SCENARIO_MAX_FAULTS];
    size_t n_faults;

    struct {
        struct expect_num violations;
        struct expect_num rejected_accesses; /* accesses fencing refused */
        enum expect_invariants invariants;
    } expect;

    /* What scenario_resolve chose rather than read, one line each
     * ("lock.renew_ms: 166 = ttl_ms / 3 (...)"). */
    char resolved[SCENARIO_MAX_NOTES][160];
    size_t n_resolved;
};

/* Fill s with every default (see docs/scenario.md). */
void scenario_defaults(struct scenario *s);

/* A lock family's settings in s, its struct (the family's header names
 * it); the _mut form for what resolves or sets them. */
const void *scenario_settings(const struct scenario *s, const struct lock_family *f);
void *scenario_settings_mut(struct scenario *s, const struct lock_family *f);
/* What every family's settings in s lay out around the lock's servers
 * (lock_family.layout), together, whatever lock runs. */
void scenario_layout(const struct scenario *s, struct family_layout *out);
/* The family whose followers or finders s asks, else the first that could
 * ask them (it has layout_words); NULL when none could. */
const struct lock_family *scenario_topology_family(const struct scenario *s);
/* Does ops follow that topology: is it of that family, or of one based on
 * it (a topology is its family's locks' alone)? */
bool scenario_follows_topology(const struct scenario *s, const struct lock_ops *ops);

/* What the command line puts in place of the file's values: -1 (NULL,
 * 0 for the duration) keeps the file's. Each was checked as it was read
 * (by the rules the file's values follow: SCENARIO_MAX_CLIENTS,
 * scenario_duration_ms, lock_find, endpoints_parse); the file's values it
 * replaces are neither checked nor blamed. */
struct scenario_overrides {
    const char *algorithm;
    long long clients;
    uint64_t duration_ms;
    long long requests;
    double rate; /* 0: closed loop */
    long long seed;
    /* by server kind (the fleet's registry index): the external servers */
    const struct server_list *servers[SCENARIO_SERVER_KINDS];
};
/* Keeps every value of the file. */
void scenario_no_overrides(struct scenario_overrides *ov);

/* Load path into s, with ov's values in place of the file's (NULL: none),
 * and validate it once: each value the file gives where the file gives it,
 * then what only the whole can tell (the algorithm can do what is asked,
 * a task fits its period, the faults fall inside the run and strike
 * servers it uses), then the defaults that depend on the algorithm
 * resolved (scenario_resolve). Returns 0, or -1 with one line in err:
 * "path:line:col: json.path: what is wrong", without the position when
 * the value blamed is the command line's. */
int scenario_load(const char *path, struct scenario *s, char err[SCENARIO_ERR_MAX]);
int scenario_load_with(const char *path, const struct scenario_overrides *ov, struct scenario *s,
                       char err[SCENARIO_ERR_MAX]);
/* The same of a file's len bytes already in memory, named name ("" for
 * text that is no file's: its messages then name no file). */
int scenario_load_text(const char *name, const char *text, size_t len,
                       const struct scenario_overrides *ov, struct scenario *s,
                       char err[SCENARIO_ERR_MAX]);
/* The file with ov's values (NULL: none), each value checked, without the
 * checks of the whole: what compare asks of every algorithm before it
 * loads the scenario for those that can run it. */
int scenario_read(const char *path, const struct scenario_overrides *ov, struct scenario *s,
                  char err[SCENARIO_ERR_MAX]);
/* The same of text in memory, named name, with no overrides (a
 * scorecard's cell before its faults are judged against its lock). */
int scenario_read_text(const char *name, const char *text, size_t len, struct scenario *s,
                       char err[SCENARIO_ERR_MAX]);

/* What s asks of a lock that ops cannot give: LACKS_TOKEN ("fencing":
 * true without fencing tokens), LACKS_RENEW (lock.watchdog without
 * renewals), LACKS_REPLICAS (followers or finders, lock.redis's replicas and
 * sentinels: its family's locks' alone), LACKS_EXCLUSION (a workload whose section does
 * more than write a value, run on optimistic concurrency, which can only
 * refuse a write), LACKS_PERMITS (lock.permits above 1 for a lock that
 * grants no permits), LACKS_LATCH (a latch's workload on a lock, or a lock's
 * workload on a latch); 0 when it can run s. scenario_load refuses such a pair,
 * compare lists it as NOT RUN: one list of what a scenario requires. */
enum {
    LACKS_TOKEN = 1,
    LACKS_RENEW = 2,
    LACKS_REPLICAS = 4,
    LACKS_EXCLUSION = 8,
    LACKS_PERMITS = 16,
    LACKS_MODE = 32,    /* the workload's sections need a mode the lock cannot grant */
    LACKS_REENTRY = 64, /* the workload re-enters a lock it holds; the lock is not reentrant */
    LACKS_LATCH = 128,  /* the workload runs a latch and the algorithm is a lock, or the reverse */
};
unsigned scenario_lacks(const struct scenario *s, const struct lock_ops *ops);
/* LACKS_LATCH's one line, into why. */
void scenario_latch_misfit(const struct scenario *s, const struct lock_ops *ops, char *why,
                           size_t len);
/* Does s's workload take a lock it holds again (flash_sale's nested)? */
bool scenario_reenters(const struct scenario *s);
/* s's workload's own settings: the struct its file defines, as the file
 * and the workload's defaults made it. */
const void *scenario_workload(const struct scenario *s);
/* What s's workload reads of the run beside its own keys, into out. */
void scenario_workload_run(const struct scenario *s, struct workload_run *out);

/* The external servers s names for a server kind, by its name (empty for
 * a kind the fleet does not know). */
const struct server_list *scenario_external(const struct scenario *s, const char *kind);
/* The external servers that name the master of ops's servers (its kind's
 * found_by: the redis lock's sentinels, servers.sentinel or --sentinel);
 * empty when none are named. */
const struct server_list *scenario_finders(const struct scenario *s, const struct lock_ops *ops);
/* Does s name finders for any kind (whatever lock it runs)? */
bool scenario_names_finders(const struct scenario *s);
/* Are ops's servers external: named, or found through named finders? */
bool scenario_external_for(const struct scenario *s, const struct lock_ops *ops);

/* How many servers ops uses under s: Redlock's nodes, the ZooKeeper
 * ensemble, or the one Redis. Named redis-1.., zk-1.. in that order. */
size_t scenario_servers(const struct scenario *s, const struct lock_ops *ops);
/* The first process fault of s that cannot strike ops's servers (a named
 * server it does not use, external servers, ...): its index with
 * "faults[i].key: why" in why; -1 when every one can. */
int scenario_fault_misfit(const struct scenario *s, const struct lock_ops *ops, char *why,
                          size_t len);

/* Every default and clamp that depends on the algorithm, resolved into s
 * (renew_ms, redlock.quorum, zookeeper.session_timeout_ms), each noted in
 * s->resolved. scenario_load calls it; the run, the reports and `show`
 * read only the resolved values. */
void scenario_resolve(struct scenario *s, const struct lock_ops *ops);

/* Does a client renew the grants it holds every renew_ms: a watchdog
 * asked for (lock.watchdog), or a lease the lock keeps alive all the time
 * (lock_ops.keeps_lease_alive)? Either way the lock must have a renew. */
bool scenario_renews(const struct scenario *s, const struct lock_ops *ops);
/* The most lock.rate_limit's bucket keeps: its burst, or one second's
 * tokens (the rate rounded up), as Guava's RateLimiter keeps. */
uint32_t scenario_limit_burst(const struct scenario *s);

/* The lease ops's grants really run on under s (resolved): the ttl, or
 * what the lock makes of it (etcd's whole-second lease, ZooKeeper's
 * clamped session timeout); 0 for a lock whose grants have none
 * (lock_ops.leaseless). The scorecard sizes its faults from it and every
 * table shows it beside the ttl asked. */
uint32_t scenario_lease_ms(const struct scenario *s, const struct lock_ops *ops);

/* How long a holder means to keep a lock it took, by the workload, at the
 * least (a longer hold leaves a smaller slack, so this errs toward calling
 * a stall the lock's): the workload says (workload_ops.hold_ms). */
uint32_t scenario_hold_ms(const struct scenario *s);

/* The one rule for a run's length, in the file (duration_s) and on the
 * command line (--duration): seconds in (0, 86400], at least 1 ms once
 * rounded to whole milliseconds. 0, or -1 with the reason in why. */
int scenario_duration_ms(double seconds, uint64_t *ms, char *why, size_t len);

/* The longest duration_ms of s's faults (0 without faults): how far one
 * can stretch a step past the run's end. */
uint64_t scenario_longest_fault_ms(const struct scenario *s);
/* Does s hold a fault that acts on servers? */
bool scenario_has_server_faults(const struct scenario *s);
/* Does a fault of s need the proxy (a network fault; a client pause, which
 * holds the paused client's connections)? */
bool scenario_needs_proxy(const struct scenario *s);
/* Must the proxy tell clients apart (a fault aimed at some clients only)? */
bool scenario_proxy_per_client(const struct scenario *s);
/* The endpoints (bit e: endpoint e, of n) some fault of s can touch. */
uint32_t scenario_proxied_endpoints(const struct scenario *s, size_t n);
/* Does a fault of s ask Redis to keep its data (data: kept)? Then every
 * managed Redis runs with AOF and appendfsync always. */
bool scenario_keeps_data(const struct scenario *s);
/* Does a clock_jump of s want libfaketime (its method not "ttl")? Then
 * every managed Redis starts under it, its offset at 0 until the jump. */
bool scenario_fakes_time(const struct scenario *s);

/* "host:port" into ep; "h:p,h:p" into out (the --redis/--zookeeper form).
 * 0, or -1 with a one-line reason in err. */
int endpoint_parse(const char *text, struct lock_endpoint *ep, char *err, size_t errlen);
int endpoints_parse(const char *text, struct server_list *out, char *err, size_t errlen);

/* The name in known[0..n) closest to word (a typo's likely meaning), within
 * max(2, len/3) edits counting a swapped pair as one; NULL if none is. */
const char *suggest_closest(const char *word, const char *const *known, size_t n);
/* The targets that pick a process fault's servers (network: a network
 * fault's) by count or by role, as the parser takes them ("one, minority,
 * ..., zk-leader, ..."), into buf; buf. */
const char *fault_target_names(bool network, char *buf, size_t len);

#endif
