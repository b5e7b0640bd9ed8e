/* workload.h - a business scenario: the keys it locks, one business step,
 * and the invariants its resource must keep. */
#ifndef LOCKLAB_WORKLOAD_H
#define LOCKLAB_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/check/invariant.h"
#include "sim/scenario/scenario.h"

struct client;
struct resource;

struct workload {
    const struct workload_ops *ops;
    const struct scenario *scn;
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
    /* Build keys, resource and state. 0, or -1 out of memory. */
    int (*init)(struct workload *w);
    void (*free)(struct workload *w);
    /* One business step of one client. true when it got its lock. */
    bool (*step)(struct workload *w, struct client *cl);
    /* Judge the resource after the run; returns how many were written. */
    size_t (*invariants)(const struct workload *w, struct invariant *out, size_t max);
};

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

/* Workload w's summary; NULL past the last. */
const char *workload_summary(enum workload_kind w);

/* The workload a scenario names, initialised; NULL out of memory. */
struct workload *workload_new(const struct scenario *s);
void workload_free(struct workload *w); /* accepts NULL */

#endif
