/* etcd_wire.h - one lock client's link to etcd's v3 JSON gateway
 * (grpc-gateway: POST /v3/kv/txn, /v3/lease/keepalive, /v3/watch, ...),
 * through libcurl's multi interface, every wait through the seam
 * (lock_wait). Unary calls go over one kept-alive connection; a watch is a
 * second transfer, a chunked stream of one JSON object per line, which
 * keeps filling while unary calls (lease keepalives) go on; it takes the
 * idle connection, and a keep-alive meanwhile opens another. A client's
 * connections are its own (docs/etcd.md: what that costs).
 *
 * Keys and values are base64 on the wire and int64 fields are JSON
 * strings; the helpers below say so once. Client-library code, not an
 * algorithm: etcd.c includes it.
 */
#ifndef LOCKLAB_ETCD_WIRE_H
#define LOCKLAB_ETCD_WIRE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock.h"

struct etcd_wire;

/* A wire for c over c->cfg->endpoints (a cluster: the next member is
 * dialled after a connection error, and a member whose dial failed only
 * after gRPC's back-off). NULL with c->err set. Free it on any thread, but
 * use it on the thread that made it: it shares that thread's multi handle. */
struct etcd_wire *etcd_wire_new(struct lock_client *c);
/* Close both connections and free w (NULL is fine). Nothing is said to
 * the server: what a crash looks like from there too. */
void etcd_wire_free(struct etcd_wire *w);

/* Dial as clientv3.New does (grpc.Dial connects at once, in the
 * background): a connection to the first member that answers is made now
 * and kept for the calls, by the cheapest request the client port serves
 * (GET /version: an HTTP/1.1 connection is kept only after a request on
 * it). 0, or -1 with c->err set; a member that could not be reached is
 * dialled again after gRPC's back-off, by the next call. */
int etcd_wire_dial(struct etcd_wire *w);

/* POST req (not stolen; NULL: a GET) to path and wait up to cfg->io_timeout_ms for the
 * whole answer, into *out (the caller's reference). Returns the HTTP status
 * (200; else etcd's error object is in *out), or -1 with c->err set:
 * LOCK_ERR_UNSENT when no member could be reached (the request surely did
 * not happen), LOCK_ERR_TIMEOUT / LOCK_ERR_IO when the answer did not
 * come. A request that never left is retried on the next member. */
int etcd_wire_call(struct etcd_wire *w, const char *path, const json_t *req, json_t **out);
/* The same, waiting up to timeout_ms (0: no limit) for the answer. */
int etcd_wire_call_within(struct etcd_wire *w, const char *path, const json_t *req, json_t **out,
                          uint32_t timeout_ms);

/* Open the watch stream with req ({"create_request": ...}); any open one
 * is closed first. 0, or -1 with c->err set. Its answers are read with
 * etcd_wire_watch_next, also while etcd_wire_call runs. */
int etcd_wire_watch_open(struct etcd_wire *w, const json_t *req);
/* The next object the stream sent, into *out: 1; 0 when none came by
 * deadline_ns (lock_now_ns's clock); -1 with c->err set when the stream
 * ended or failed. */
int etcd_wire_watch_next(struct etcd_wire *w, uint64_t deadline_ns, json_t **out);
/* Close the stream (its connection with it). */
void etcd_wire_watch_close(struct etcd_wire *w);

/* base64 of bytes, a new JSON string (NULL on no memory). */
json_t *etcd_b64(const char *bytes, size_t len);
/* An int64 field etcd sent as a string (or a number); 0 when absent. */
int64_t etcd_int(const json_t *obj, const char *key);
/* The key range_end for "every key with this prefix": prefix with its last
 * byte plus one, as clientv3.GetPrefixRangeEnd. */
json_t *etcd_prefix_end(const char *prefix, size_t len);
/* Decode a base64 JSON string into out (NUL-terminated, cut to len); its
 * length, or -1 when v is no base64 string. */
long etcd_unb64(const json_t *v, char *out, size_t len);

#endif
