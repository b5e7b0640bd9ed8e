/* proxy.h - locklab's own TCP proxy: the network faults.
 *
 * One event-loop thread (epoll) in locklab's process forwards bytes between
 * the clients and the servers, on loopback. Each proxied server endpoint
 * has one listener per group of clients: a single group when no fault
 * needs to tell clients apart, or one per client, so that one client's
 * traffic can be held while the others' flows.
 *
 * Toxics keep Toxiproxy's names and meanings (toxic_kind.h; one file each
 * in sim/proxy/toxics/), each on a stream (upstream: client
 * to server; downstream: server to client) and with a toxicity (the
 * probability it applies to a connection, drawn per connection from the
 * seed). Two differences, both stated in docs/scenario.md: a `timeout`
 * drops the data it holds (a black hole, as REFERENCES.md has it), while a
 * `hold` (a paused client) keeps it and lets it through when it ends.
 *
 * Every call but proxy_new and proxy_free may come from any thread; a
 * toxic is in force on every connection it applies to when proxy_toxic_add
 * returns, and gone when proxy_toxic_remove returns.
 */
#ifndef LOCKLAB_PROXY_H
#define LOCKLAB_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "algorithms/settings.h"
#include "sim/proxy/toxic_kind.h"
#include "sim/record/proxy_stats.h"

enum { STREAM_UP = 1, STREAM_DOWN = 2, STREAM_BOTH = 3 };

/* A toxic in force: its kind (toxic_kind.h) and its parameters, and what
 * every toxic shares, the way Toxiproxy's wrapper adds them. */
struct toxic {
    const struct toxic_kind *kind;
    struct settings_store params; /* the kind's own struct, as a fault's spec holds it */
    unsigned stream;              /* STREAM_* */
    double toxicity;              /* 0..1: the share of connections it applies to */
    uint32_t endpoints;           /* bit e: the upstream endpoint e */
    int32_t group;                /* the one group it applies to, or -1: all */
    const uint8_t *groups;        /* or, when not NULL: groups[g] != 0 for each it applies to
                                     (proxy_groups() bytes, copied) */
    /* A group whose groups[g] is TOXIC_OTHER_SIDE: on these endpoints
     * instead (a partition's side: its clients reach only the servers
     * cut off, the rest every server but those). */
    uint32_t other_endpoints;
};
#define TOXIC_OTHER_SIDE 2

struct proxy;

/* Listen on 127.0.0.1, on free ports, for every endpoint e of up[0..n)
 * whose bit is set in proxied, n_groups times. NULL with err set. */
struct proxy *proxy_new(const struct lock_endpoint *up, size_t n, uint32_t proxied, size_t n_groups,
                        uint64_t seed, char *err, size_t errlen);
/* Start the event loop. -1 with err set. */
int proxy_start(struct proxy *p, char *err, size_t errlen);
/* Where group g reaches endpoint e: the listener, or up[e] itself when e is
 * not proxied. */
struct lock_endpoint proxy_address(const struct proxy *p, size_t e, size_t g);
bool proxy_covers(const struct proxy *p, size_t e);
/* The server behind endpoint e. */
struct lock_endpoint proxy_upstream(const struct proxy *p, size_t e);
size_t proxy_groups(const struct proxy *p);
size_t proxy_endpoints(const struct proxy *p); /* n of proxy_new */

/* Put toxic t in force under id (0..PROXY_MAX_TOXICS), on the connections
 * open now and on those opened while it lasts; how many connections it
 * applies to now in *links (may be NULL). -1 when id is taken or the
 * loop is gone. */
int proxy_toxic_add(struct proxy *p, int id, const struct toxic *t, uint64_t *links);
/* End toxic id (no-op when not in force). Data a latency or slicer
 * toxic delays goes out at once, as in Toxiproxy; a hold lets its data
 * through; a down toxic's listeners listen again. */
void proxy_toxic_remove(struct proxy *p, int id);

void proxy_stats(struct proxy *p, struct proxy_stats *out);
/* Stop the loop, close every socket. Accepts NULL. */
void proxy_free(struct proxy *p);

#endif
