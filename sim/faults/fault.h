/* fault.h - the fault registry: every kind of fault locklab plays, one ops
 * table each, in one array (registry.c), the way algorithms/lock.h
 * registers locks and Toxiproxy registers its toxics.
 *
 * A kind's file (client_faults.c, process_faults.c, clock_jump.c,
 * failover.c; a network kind's toxic in sim/proxy/toxics/, which
 * toxic_faults.c makes a kind) is the only place that names it: the keys it
 * takes and their validation, what it needs of the run's servers, what it
 * does at its start and its end, what it writes into the plan and the
 * report. The parser, `list`, `show`, the nemesis and the reports read the
 * table, through fault_spec.h's fault_* queries where they must not see the
 * nemesis. Adding a kind is one file and one line in registry.c
 * (docs/architecture.md walks through it).
 */
#ifndef LOCKLAB_FAULT_H
#define LOCKLAB_FAULT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sim/faults/fault_spec.h"

struct nemesis;
struct lock_ops;
struct toxic_kind;

/* Which machinery plays a kind: its family. */
enum fault_family {
    FAULT_FAMILY_CLIENT,  /* a holder carries it out on itself, in its own thread */
    FAULT_FAMILY_SERVERS, /* the nemesis's thread acts on managed servers' processes */
    FAULT_FAMILY_NETWORK, /* a toxic at locklab's proxy, Toxiproxy's names */
};

/* What a client fault does to the holder that claims it. */
enum fault_holder_act {
    HOLDER_STALLS, /* it stops inside its critical section for duration_ms */
    HOLDER_DIES,   /* it dies holding its lock; a new process after duration_ms */
};

/* How a fault's window, as written, ends. */
enum fault_window {
    WINDOW_DURATION, /* at_ms + duration_ms (a network fault's 0: the run's end) */
    WINDOW_RESTART,  /* restart_after_ms after at_ms, else the run's end; its
                        recovery is counted from its start */
};

/* The validation of one fault object's keys, handed to a kind's check:
 * the object as written, the spec parsed so far, and the parser's located
 * error (on key; NULL: on the object), which the helpers below call. */
struct fault_check {
    json_t *obj;
    struct fault_spec *fs;
    void *ctx;
    void (*blame)(void *ctx, const char *key, const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));
};
/* The key is in the object: blame it with "a KIND takes no KEY (why)". */
int fault_refuse(struct fault_check *fc, const char *key, const char *why);
/* The key is missing: "missing required key "KEY" (what)". */
int fault_require(struct fault_check *fc, const char *key, const char *what);
/* The key is missing and the kind cannot do without it:
 * "missing required key "KEY" (a KIND needs one: what)". */
int fault_needs(struct fault_check *fc, const char *key, const char *what);
/* Blame key (in the object) with a message of one's own; always -1. */
int fault_blame(struct fault_check *fc, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Blame the fault object itself; always -1. */
int fault_fail(struct fault_check *fc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool fault_has(const struct fault_check *fc, const char *key);
struct fault_spec *fault_checked(struct fault_check *fc);

/* What a kind may ask of the run it is to strike: the lock, and whether
 * something of its layout promotes a replica (Redis's sentinels). */
struct fault_fit {
    const struct lock_ops *ops;
    bool promotes;
};

struct fault_kind {
    const char *name; /* as scenario files write it */
    /* Its number in history files' fault events and in fault spans
     * (fault_spec.kind): the next free one for a new kind, never another's
     * nor reused, so every history written keeps its names. */
    uint8_t number;
    const char *summary; /* one line for `locklab list faults` */
    enum fault_family family;
    enum fault_window window;
    const char *band; /* the class of its band on the report's charts */
    /* Validate what the object says beyond the common keys (at_ms, type,
     * target, expect) and finish the spec; 0, or -1 with the error set. */
    int (*check)(struct fault_check *fc);
    /* Optional: why it cannot strike this run's servers (the lock's, laid
     * out as fit says), with *key the key to blame; 0 when it can. */
    int (*misfit)(const struct fault_fit *fit, const struct fault_spec *f, const char **key,
                  char *why, size_t len);
    /* Optional: does it need its servers started under libfaketime? */
    bool (*fakes_time)(const struct fault_spec *f);
    /* Its client's connections are held at the proxy while it lasts. */
    bool holds_connections;
    /* It cuts clients off servers through the proxy as well (a
     * partition's two sides): the run's clients each get listeners of
     * their own when it has clients on its side (side_clients). */
    bool splits_clients;
    /* It takes "data" (what a server finds on its disk when it comes
     * back) and "restart_after_ms": the other kinds refuse them, naming
     * the kinds that take them. */
    bool takes_data, takes_restart;

    /* FAULT_FAMILY_CLIENT */
    enum fault_holder_act holder_act;

    /* FAULT_FAMILY_SERVERS, played by the nemesis's thread. */
    /* Its own choice of servers (a failover's master); NULL: the target's. */
    uint32_t (*pick)(struct nemesis *n, size_t i, char *why, size_t len);
    /* Act on struck server k at the start; the record says what was done. */
    void (*strike)(struct nemesis *n, size_t i, size_t k);
    /* When its end is due, as CLOCK_MONOTONIC after its start (0: it
     * lasts until the run ends); NULL: it ends as soon as it has struck. */
    uint64_t (*end_due)(const struct nemesis *n, size_t i);
    /* Optional: false while its end must wait longer (end_due_ns moved). */
    bool (*ready_to_end)(struct nemesis *n, size_t i);
    /* Bring its servers back; healed: by the end of the run. */
    void (*end)(struct nemesis *n, size_t i, bool healed);
    /* Its strike leaves the servers answering nobody (a kill, a pause):
     * the nemesis asks them, and one that answers is the fault's error
     * (fault_truth.c). */
    bool silences;
    /* Its window opens once every process it struck is seen stopped (a
     * pause: until then a backend not yet reached still grants, and a
     * stopped one shows its clients nothing), not at its first signal (a
     * kill: a dying process's sockets close at once, and its clients see
     * it before the nemesis sees it gone). */
    bool opens_when_stopped;
    /* Its window closes as its end begins (a pause's SIGCONT), not once
     * the servers serve again. */
    bool ends_as_end_begins;
    /* Its written window is not timed: it ends on an event. */
    bool ends_on_event;
    /* It strikes one server, its pick, and ends once the layout has
     * promoted another (a failover): while it lasts it holds one server and
     * needs one more left up, which the checks of the whole count. */
    bool awaits_promotion;

    /* FAULT_FAMILY_NETWORK */
    const struct toxic_kind *toxic; /* sim/proxy/toxic_kind.h */
    bool has_stream;                /* it takes stream and toxicity */
    /* "latency 50 +- 0 ms": what the toxic does, for the record */
    void (*toxic_text)(const struct fault_spec *f, char *out, size_t len);

    /* The plan line of `show` and the reports. */
    void (*plan)(const struct fault_spec *f, char *buf, size_t len);
    /* Its keys into report.json's scenario object (after type, at_ms,
     * duration_ms and expect). */
    void (*settings)(const struct fault_spec *f, json_t *o);
};

/* The registry, by number (its count and the index of a name are
 * fault_spec.h's: fault_kind_count, fault_kind_index): NULL for a number
 * no kind has. How many kinds it lists, numbered or not (equal to
 * fault_kind_count when every number has one kind). */
size_t fault_kind_declared(void);
/* toxic_faults.c: the network kinds, one for each toxic of sim/proxy's
 * registry but its internal ones, in its order; numbered by their toxic. */
#define FAULT_NETWORK_KINDS_MAX 64
size_t fault_network_kind_count(void);
const struct fault_kind *fault_network_kind_at(size_t i);
const struct fault_kind *fault_kind_at(size_t i);
/* f's kind (never NULL for a parsed spec). */
const struct fault_kind *fault_kind_of(const struct fault_spec *f);

/* Shared by the kinds' files. */

/* fault_keys.c: the checks several kinds make, each -1 with the error set. */
/* Toxiproxy's attributes: stream and toxicity, then every toxic's
 * parameters (sim/proxy/toxic_kind.h), looked at in that order. A network
 * fault takes its toxic's (stream and toxicity too when the toxic is
 * streamed), the other kinds none: one given and not taken is refused, one
 * its toxic requires and not given is asked for. */
int fault_check_no_toxic_keys(struct fault_check *fc);
int fault_check_toxic_keys(struct fault_check *fc, const struct toxic_kind *t);
/* A server fault names its servers. */
int fault_check_servers(struct fault_check *fc);
int fault_check_no_data(struct fault_check *fc);
int fault_check_no_restart(struct fault_check *fc);
int fault_check_no_clock_keys(struct fault_check *fc);
/* "mode": only a cluster_failover has one. */
int fault_check_no_mode(struct fault_check *fc);
/* "side_clients": only a partition has clients on its side. */
int fault_check_no_side_clients(struct fault_check *fc);
/* key and count: holder-majority's own, and its key required. */
int fault_check_holder_majority(struct fault_check *fc);
/* duration_ms given, and not 0. */
int fault_check_needs_duration(struct fault_check *fc);
/* A misfit: data (lost, kept) given for a server that is no Redis. */
/* A misfit for the kinds that act on a Redis Cluster's own commands
 * (cluster_failover, slot_migrate): 0 when the lock runs on one. */
int fault_misfit_cluster(const struct fault_fit *fit, const struct fault_spec *f, const char **key,
                         char *why, size_t len);
int fault_misfit_data(const struct fault_fit *fit, const struct fault_spec *f, const char **key,
                      char *why, size_t len);

#endif
