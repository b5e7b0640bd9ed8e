/* redis_cluster_wire.h - a Redis Cluster client for the locks that run
 * on one (client-library code beside redis_wire.h, which it uses for each
 * node's connection): keys placed by CRC16 slot with hash tags, the slot
 * map learned from CLUSTER SLOTS, MOVED and ASK followed, the map asked
 * again after a MOVED or a lost connection (a failover), CLUSTERDOWN and
 * TRYAGAIN retried until the caller's deadline, as the cluster spec asks
 * of a client (redis.io, "Redis cluster specification": "Redirection and
 * resharding").
 *
 * Every node's connection is a struct redis_wire, dialled the first time
 * a slot of that node is asked for, waiting through the seam as every
 * Redis lock does.
 */
#ifndef LOCKLAB_REDIS_CLUSTER_WIRE_H
#define LOCKLAB_REDIS_CLUSTER_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/redis_wire.h"

#define CW_SLOTS      16384
#define CW_MAX_NODES  16
#define CW_MAX_RANGES 512 /* a map split by single slots migrated one by one */
#define CW_MAX_HOPS   8   /* redirections followed for one command */

struct cw_node {
    struct lock_endpoint ep;   /* as the cluster names it (CLUSTER SLOTS, MOVED) */
    struct lock_endpoint dial; /* how this client reaches it (cw_open's map) */
    struct redis_wire *w;      /* NULL until first used */
};

struct cw_range {
    uint16_t from, to; /* slots, both included */
    uint8_t node;      /* its master, an index into node[] */
};

struct cluster_wire {
    struct cw_node node[CW_MAX_NODES];
    size_t n_nodes;
    struct cw_range range[CW_MAX_RANGES]; /* sorted by from */
    size_t n_ranges;
    bool stale; /* the map is asked again before the next command */
    const char *const *scripts;
    size_t n_scripts;
    /* The address map, as ioredis's natMap and Redisson's NatMapper: a
     * node the cluster names as cfg->upstream[e] is dialled at
     * cfg->endpoints[e] (the proxy's listener of this client's group);
     * NULL, or a node in neither: dialled as named. */
    const struct lock_config *nat;
    uint64_t moved, asked, refreshed; /* redirections met, maps asked */
};

/* key's hash tag: what lies between its first '{' and the next '}', when
 * that is not empty (*tag_len set); NULL when it has none. */
const char *cw_hash_tag(const char *key, size_t len, size_t *tag_len);
/* The slot of key: CRC16 (XMODEM) of its hash tag, or of the whole key
 * when it has none, mod 16384. */
uint16_t cw_key_slot(const char *key, size_t len);

/* A MOVED or ASK error reply ("MOVED 3999 127.0.0.1:6381"): 1 with *slot,
 * *to and *ask set; 0 when err is neither. */
int cw_redirect(const char *err, uint16_t *slot, struct lock_endpoint *to, bool *ask);

/* The map from a CLUSTER SLOTS reply, asked of `from` (whose host stands
 * in for a node announced with an empty one): each range's master. 0, or
 * -1 when the reply is not one (the map is left as it was). */
int cw_apply_slots(struct cluster_wire *cw, const redisReply *slots,
                   const struct lock_endpoint *from);

/* The node serving slot, or -1 when the map has none. */
int cw_node_of(const struct cluster_wire *cw, uint16_t slot);

/* Seed cw with c's endpoints (any nodes of the cluster, named as upstream
 * names them and dialled through the address map) and its scripts
 * (loaded on every node it dials), and learn the map. 0, or -1 with c->err
 * set. */
int cw_open(struct lock_client *c, struct cluster_wire *cw, const char *const *scripts,
            size_t n_scripts);
void cw_close(struct cluster_wire *cw);
/* The map asked again now, of each known node in turn: 0, or -1 with
 * c->err set when none gave one (the map is left as it was). */
int cw_refresh(struct lock_client *c, struct cluster_wire *cw);

/* The deadline of a command that is not part of an acquire: it retries a
 * cluster between states for as long as one wait for an answer may take
 * (the io timeout, else 1 s). */
uint64_t cw_io_deadline(const struct lock_client *c);
/* One command on the master of slot, redirections followed, CLUSTERDOWN
 * and TRYAGAIN retried with back-off until deadline_ms (lock_now_ms), as
 * is a request that never left (a node refusing the connection: after a
 * failover, the map asked again names its successor). The contract of
 * wire_call: NULL when no answer came (it may have run), or with c->err
 * LOCK_ERR_UNSENT or LOCK_ERR_REFUSED when it surely did not run (still
 * refused at the deadline); else the reply, which may be an error. */
redisReply *cw_call(struct lock_client *c, struct cluster_wire *cw, uint16_t slot,
                    uint64_t deadline_ms, int argc, const char **argv, const size_t *lens);
/* A request whose answer nobody waits for (wire_send's), to the master
 * of slot as the map has it, when that node's connection is up; no
 * redirection is followed. 0 sent, -1 not. */
int cw_send(struct lock_client *c, struct cluster_wire *cw, uint16_t slot, int argc,
            const char **argv, const size_t *lens);
/* Script number `script` of cw's, the same way (EVALSHA, EVAL on NOSCRIPT).
 * All its keys must share slot. */
redisReply *cw_eval(struct lock_client *c, struct cluster_wire *cw, uint16_t slot,
                    uint64_t deadline_ms, size_t script, int nkeys, const char **keys,
                    const size_t *key_lens, int nargs, const char **args, const size_t *arg_lens);

#endif
