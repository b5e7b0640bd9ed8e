/* nemesis.h - the fault timeline.
 *
 * Client faults (client_pause, client_crash) strike a lock holder, so the
 * holder's own thread carries them out: when a client has just taken a lock
 * it asks whether a fault is due and aimed at it (any holder, or this
 * client), and claims it atomically so it fires exactly once. The hot path
 * costs one relaxed atomic load while no fault is pending.
 */
#ifndef LOCKLAB_NEMESIS_H
#define LOCKLAB_NEMESIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

struct nemesis;

struct fault_record {
    struct fault_spec spec;
    bool fired;
    bool ended;
    uint32_t client;   /* who suffered it */
    uint32_t key;      /* the key it held */
    uint64_t start_ns; /* CLOCK_MONOTONIC */
    uint64_t end_ns;
};

struct nemesis *nemesis_new(const struct scenario *s);
void nemesis_free(struct nemesis *n); /* accepts NULL */
void nemesis_start(struct nemesis *n, uint64_t t0_ns);

/* A fault due at now_ns for this client, claimed; or -1. */
int nemesis_claim(struct nemesis *n, uint32_t client, uint64_t now_ns);
/* Give back a claimed fault that could not be carried out. */
void nemesis_unclaim(struct nemesis *n, int idx);
const struct fault_spec *nemesis_spec(const struct nemesis *n, int idx);
/* Called by the client that claimed idx (and only it). */
void nemesis_fired(struct nemesis *n, int idx, uint32_t client, uint32_t key, uint64_t start_ns);
void nemesis_ended(struct nemesis *n, int idx, uint64_t end_ns);

/* After all clients are joined: what happened to each fault, in order. */
size_t nemesis_report(const struct nemesis *n, struct fault_record *out, size_t max);

#endif
