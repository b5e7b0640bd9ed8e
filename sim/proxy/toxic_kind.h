/* toxic_kind.h - a toxic as a plug-in, the way Toxiproxy has one per file:
 * its name, its parameters, what it does to the bytes of a connection.
 *
 * Each toxic is one file in sim/proxy/toxics/ exporting one
 * `const struct toxic_kind toxic_<name>`, and one line of the registry
 * (toxic_kinds.c). Its parameters are a struct of its own, which it
 * describes with algorithms/settings.h's keys: the scenario parser reads a
 * fault's keys through them into a fault's params (sim/faults/fault_spec.h)
 * and the proxy gets the very same bytes in struct toxic's params, so
 * neither names a parameter. What every toxic shares (its stream, its
 * toxicity, whose connections) is the wrapper's: struct toxic and toxics.c.
 */
#ifndef LOCKLAB_TOXIC_KIND_H
#define LOCKLAB_TOXIC_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/settings.h"

struct proxy;

/* How the toxics in force on one direction of a connection shape a chunk
 * read from it: each toxic's work folds its part in, in the order of
 * their ids, then toxics.c queues the chunk so shaped. */
struct toxic_shape {
    uint64_t delay_ns;  /* added before the chunk may leave */
    uint32_t rate_kbs;  /* the slowest bandwidth, 0 = none */
    uint32_t slice;     /* cut into slices of about this size, 0 = whole */
    uint32_t variation; /* a slice's size is slice +- this */
    uint64_t gap_ns;    /* between two slices */
    uint64_t limit;     /* bytes let through on the connection (with limited) */
    bool limited;       /* limit says something */
    bool drop;          /* the chunk is thrown away, the connection stays */
};

struct toxic_kind {
    const char *name; /* Toxiproxy's, as scenario files write it: "latency" */
    /* Its network fault's number in history files (struct fault_kind's
     * number): the next free one, never reused; none for an internal one. */
    uint8_t fault_number;
    const char *summary; /* one line for `locklab list faults` */
    /* Its parameters: keys into its own struct (at most SETTINGS_BYTES_MAX
     * bytes, held to it in its file), in the order the parser reads them.
     * A required key is one the fault cannot do without (its what is said
     * when it is missing); after, when not NULL, checks the whole struct. */
    struct setting_table params;
    bool streamed; /* it takes a stream and a toxicity; else it acts on whole endpoints */
    bool internal; /* no fault of its own: the nemesis puts it in force itself */
    bool holds;    /* nothing leaves on its stream while it is in force */
    /* It closes the listeners it reaches and drops their connections
     * while in force, instead of acting on bytes. */
    bool refuses;
    /* It counts the bytes of each connection from when it applies to it
     * (toxic_shape.limit): the count starts at 0 then. */
    bool counts_bytes;
    /* Its part in the shape of one chunk (NULL: none). */
    void (*work)(const void *params, struct proxy *p, struct toxic_shape *sh);
    /* Optional: each connection it applies to ends after_ms from then
     * (from when it began, for those open already); *reset: with an RST,
     * else closed. false: it does not end them. */
    bool (*ends)(const void *params, uint32_t *after_ms, bool *reset);
    /* What it does with these parameters, for the fault's record:
     * "latency 50 +- 0 ms". NULL: its name says it ("down"). */
    void (*text)(const void *params, char *out, size_t len);
};

/* The registry, in the order of toxic_kinds.c. */
size_t toxic_kind_count(void);
const struct toxic_kind *toxic_kind_at(size_t i);
const struct toxic_kind *toxic_kind_find(const char *name); /* NULL when none */
/* The key named key among k's parameters, or NULL. */
const struct setting_key *toxic_param(const struct toxic_kind *k, const char *key);
/* Every key of every toxic, each name once (its first toxic's), in the
 * registry's order; how many, at most max (TOXIC_PARAMS_MAX holds them). */
#define TOXIC_PARAMS_MAX 64
size_t toxic_params_all(const struct setting_key **out, size_t max);

/* The one toxic the nemesis names itself: a paused client's connections
 * held while the pause lasts. */
extern const struct toxic_kind toxic_hold;

/* A uniform draw in [0, n] from the proxy's seed, for a toxic's work. */
uint64_t proxy_draw_upto(struct proxy *p, uint64_t n);

#endif
