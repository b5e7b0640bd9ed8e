/* workload.h - a business scenario: the keys it locks, one business step,
 * and the invariants its resource must keep. */
#ifndef LOCKLAB_WORKLOAD_H
#define LOCKLAB_WORKLOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "algorithms/settings.h"
#include "sim/check/invariant.h"
#include "sim/record/history.h"
#include "sim/record/measures.h"
#include "sim/record/section_effect.h"

struct client;
struct resource;

/* The store's answer to a read or a write (sim/engine/resource.h). */
enum resource_rc { RES_OK = 0, RES_FENCED = 1 };

/* A latch's round as its parties keep it (the latch workload's), read by
 * each waiter as its await comes back. */
struct latch_count {
    _Atomic uint32_t sent;    /* countDowns sent this round */
    _Atomic uint32_t failed;  /* of them, unanswered */
    _Atomic uint64_t zero_at; /* the last countDown's answer (0: not all yet) */
};

/* What a waiter saw, as its await's result line says it. */
struct latch_seen {
    uint64_t invoked_ns; /* the await's invoke */
    uint64_t at_ns;      /* its return: the result line's time */
    uint64_t resumed_ns; /* a pause of the client inside it ended then; 0 none */
    uint64_t zero_ns;    /* count's zero_at */
    uint32_t sent, unanswered;
};

/* What a step calls of its client and of the store, handed over by the
 * engine (sim/engine/client_calls.c) as a lock reaches its seam: a
 * workload includes nothing of the engine. sim/engine/client.h and
 * resource.h say what each does. */
struct workload_calls {
    bool (*lock)(struct client *cl, uint32_t key);
    bool (*lock_wait)(struct client *cl, uint32_t key, uint32_t wait_ms);
    bool (*lock_mode)(struct client *cl, uint32_t key, enum lock_mode mode, uint32_t wait_ms);
    bool (*lock_all)(struct client *cl, const uint32_t *keys, size_t n, enum lock_mode mode);
    bool (*hold)(struct client *cl, uint32_t ms);
    bool (*commit)(struct client *cl);
    void (*unlock)(struct client *cl, enum section_effect effect);
    void (*unlock_at)(struct client *cl, enum section_effect effect, uint64_t until_ns);
    uint64_t (*token)(const struct client *cl);
    uint64_t (*token_of)(const struct client *cl, uint32_t key);
    bool (*idle_until)(struct client *cl, uint64_t t_ns);
    uint64_t (*random)(struct client *cl, uint64_t n);
    bool (*retry)(struct client *cl, uint64_t since_ns);
    uint32_t (*id)(const struct client *cl);
    uint64_t (*section_from_ns)(const struct client *cl); /* when its section began */
    uint64_t (*start_ns)(const struct client *cl);        /* the run's start line */
    uint64_t (*deadline_ns)(const struct client *cl);     /* the run's last step start */
    const struct lock_ops *(*lock_ops)(const struct client *cl);
    /* Was its last lock call refused by the run's token bucket, never sent? */
    bool (*limited)(const struct client *cl);
    /* One more of a workload's own counters (measures.h: ST_BREAKER_OPENED,
     * ST_DEGRADED_STEPS, ST_DEGRADED_ORDERS), the report's like the rest. */
    void (*count)(struct client *cl, enum stat_kind k);
    uint64_t (*now_ns)(void); /* CLOCK_MONOTONIC */
    struct resource *(*store_new)(size_t n_keys, int64_t initial, bool fencing);
    void (*store_free)(struct resource *r);
    void (*store_preset)(struct resource *r, uint32_t key, int64_t value);
    enum resource_rc (*store_read)(struct resource *r, uint32_t key, uint64_t token,
                                   int64_t *value);
    enum resource_rc (*store_write)(struct resource *r, uint32_t key, uint64_t token,
                                    int64_t value);
    int64_t (*store_value)(const struct resource *r, uint32_t key);
    /* A latch's calls (a workload_ops.latch workload's), each the run's
     * latch_ops call on the key's name, each an invoke and a result line
     * in the history: trySetCount (1 set, 0 it was already, -1 an error),
     * delete (true when answered), countDown (count->sent one more just
     * after its invoke, before it leaves; true when answered, *acked_ns
     * when), await (1 passed, 0 the wait ran out, -1 an error; *seen what
     * the waiter saw of count as it came back, which its result line
     * carries). */
    int (*latch_set)(struct client *cl, uint32_t key, uint32_t count);
    bool (*latch_delete)(struct client *cl, uint32_t key);
    bool (*latch_down)(struct client *cl, uint32_t key, struct latch_count *count,
                       uint64_t *acked_ns);
    int (*latch_await)(struct client *cl, uint32_t key, uint32_t wait_ms,
                       const struct latch_count *count, struct latch_seen *seen);
};

/* What a workload reads of the run beside its own keys, taken from the
 * scenario by its caller (scenario_workload_run): a workload knows no
 * scenario. */
struct workload_run {
    uint32_t clients;
    uint64_t duration_ms;
    uint32_t ttl_ms, wait_ms;
    bool watchdog;
    uint32_t permits;          /* lock.permits: a semaphore's per key */
    bool fencing;              /* the resource rejects writes with a stale token */
    uint64_t longest_fault_ms; /* how far a fault may stretch a step past the end */
};

struct workload {
    const struct workload_ops *ops;
    const struct workload_calls *calls;
    const void *settings; /* its own struct, as the scenario's file made it */
    struct workload_run run;
    struct resource *res;
    char **keys; /* lock key names, by key id */
    size_t *key_lens;
    size_t n_keys;
    void *state;
};

struct workload_ops {
    const char *name;
    /* One line for `locklab list`: the business it plays and its invariant. */
    const char *summary;
    /* Its keys in the scenario's "workload" object, beside "type", read by
     * the scenario's one validation pass into its own struct of
     * settings_size bytes (the scenario keeps it: scenario_workload), which
     * starts as a copy of defaults. */
    struct setting_table keys;
    size_t settings_size;
    const void *defaults;
    /* How long a holder means to keep a lock it took, at the least
     * (scenario_hold_ms): the value of its key hold_key (a SETTING_U32),
     * or what hold_ms makes of its keys. */
    const char *hold_key;
    uint32_t (*hold_ms)(const void *settings);
    /* What its section does that a refused write cannot undo ("a database
     * load"), for LACKS_EXCLUSION's message; NULL when a refused write is
     * all it needs. */
    const char *needs_exclusion;
    /* It runs a countdown latch (lock_ops.latch), not sections: only a
     * latch can run it, and a latch runs nothing else (LACKS_LATCH). */
    bool latch;
    /* A latch workload's settings, for its history's start line (the
     * judge's parties and bound: docs/history.md, "latches"). */
    void (*latch_settings)(const void *settings, struct history_latch *out);
    /* The mode its sections need of every lock (LACKS_MODE). */
    enum lock_mode lock_mode;
    /* Does it take a lock it holds again (LACKS_REENTRY)? NULL: never.
     * reentry_key is the key that asks for it, reentry_by what re-enters
     * ("the purchase"), for the message. */
    bool (*reenters)(const void *settings);
    const char *reentry_key, *reentry_by;
    /* Why it refuses open loop, said at "rate" before the workloads that
     * take one; NULL: it takes a rate. */
    const char *refuses_rate;
    /* What only the whole scenario tells, once every value is in place:
     * 0, or -1 with one line in why and blame[] the path it is said at
     * ({"workload", "tasks"}, {"duration_s", NULL}). NULL: nothing. */
    int (*check)(const void *settings, const struct workload_run *run, const char *blame[2],
                 char *why, size_t len);
    /* A choice made once the lock is known, one line into note (a
     * scenario_resolve note); false when there is none. NULL: none. */
    bool (*resolve)(const void *settings, const struct lock_ops *lock, char *note, size_t len);
    /* The header's and `show`'s "workload:" line: its name and settings. */
    void (*describe)(const void *settings, const struct workload_run *run, char *buf, size_t len);
    /* Build keys, resource and state. 0, or -1 out of memory. */
    int (*init)(struct workload *w);
    void (*free)(struct workload *w);
    /* One business step of one client. true when it got its lock. */
    bool (*step)(struct workload *w, struct client *cl);
    /* Judge the resource after the run; returns how many were written. */
    size_t (*invariants)(const struct workload *w, struct invariant *out, size_t max);
};

/* keys, settings_size and defaults of a workload_ops, from its table of
 * keys and its struct of defaults; a struct larger than the scenario keeps
 * (SETTINGS_BYTES_MAX) does not compile (an array of negative size). */
#define WORKLOAD_KEYS(table, defaults_)                                                            \
    .keys = {table, sizeof(table) / sizeof((table)[0]), NULL},                                     \
    .settings_size =                                                                               \
        sizeof(defaults_) + 0 * sizeof(char[sizeof(defaults_) <= SETTINGS_BYTES_MAX ? 1 : -1]),    \
    .defaults = &(defaults_)

/* The hold w means under settings (workload_ops.hold_key, .hold_ms). */
uint32_t workload_hold_ms(const struct workload_ops *w, const void *settings);

/* The workloads' registry, in the order `locklab list` shows them. */
size_t workload_count(void);
const struct workload_ops *workload_at(size_t i);           /* NULL past the last */
const struct workload_ops *workload_find(const char *name); /* NULL: none has it */

/* For init: room for n lock keys, then each key's name. 0, or -1 out of
 * memory (workload_free releases what was made). */
int workload_alloc_keys(struct workload *w, size_t n);
int workload_set_key(struct workload *w, size_t i, const char *name);

/* How one attempt at a step's read-modify-write ended. */
enum attempt {
    ATTEMPT_NO_LOCK, /* the lock was not had: the step failed */
    ATTEMPT_DONE,    /* the section ran (wrote, or had nothing to write, or crashed) */
    ATTEMPT_REFUSED, /* its read or its write was refused: fenced, or an optimistic conflict */
};

/* A step of attempts on key: one, or with an optimistic lock (where a
 * refusal is a conflict the caller is meant to retry, as an ORM's user
 * does on an OptimisticLockException) more, from a fresh read, while
 * client_retry allows. true when the lock was had. */
bool workload_attempts(struct workload *w, struct client *cl, uint32_t key,
                       enum attempt (*try_once)(struct workload *, struct client *, uint32_t));

/* Workload ops under settings (its own struct) and run, initialised; NULL
 * out of memory. */
struct workload *workload_new(const struct workload_ops *ops, const void *settings,
                              const struct workload_run *run, const struct workload_calls *calls);
void workload_free(struct workload *w); /* accepts NULL */

#endif
