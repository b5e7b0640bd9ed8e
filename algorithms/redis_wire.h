/* redis_wire.h - what the Redis-based algorithms share: one hiredis
 * connection per client in its non-blocking form, every wait for its
 * socket through the seam (lock_wait), commands written straight into RESP
 * without a format string, and Lua scripts run by EVALSHA with an EVAL
 * fallback.
 *
 * This is client-library code, not an algorithm: redis.c and redis_naive.c
 * include it, neither includes the other.
 */
#ifndef LOCKLAB_REDIS_WIRE_H
#define LOCKLAB_REDIS_WIRE_H

#include <hiredis/hiredis.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock.h"

#define WIRE_MAX_ARGS 16

struct wire_script {
    const char *body;
    char sha[41]; /* filled by SCRIPT LOAD on every (re)connect */
};

#define WIRE_MAX_SCRIPTS 6

struct redis_wire;
/* Aim w->ep before each dial (a master asked of sentinels). 0, or -1
 * with c->err set. */
typedef int (*wire_locate_fn)(struct lock_client *c, struct redis_wire *w);

struct redis_wire {
    redisContext *ctx;
    const struct lock_endpoint *ep;
    wire_locate_fn locate;       /* NULL: ep stays where it was aimed */
    struct lock_endpoint master; /* where wire_locate_master aimed ep */
    unsigned pending;            /* replies owed to wire_send's requests: the next
                                    wire_call reads and drops them before its own */
    uint64_t used_ms;            /* lock_now_ms() of the last call on this connection */
    uint32_t io_timeout_ms;      /* cfg's when dialled: the most one wait may take, 0 = none */
    struct wire_script scripts[WIRE_MAX_SCRIPTS]; /* loaded after each connect */
    size_t n_scripts;
    char out[1024]; /* the RESP request being built */
};

/* An algorithm's client state is a struct whose first member is a struct
 * redis_wire. Allocate `size` zeroed bytes as c->impl, aim the wire at the
 * first endpoint (or let locate aim it before every dial), set its scripts
 * and connect. 0, or -1 with c->err set
 * (c->impl may then be half-built: wire_client_close frees it). */
int wire_client_open(struct lock_client *c, size_t size, const char *const *scripts,
                     size_t n_scripts, wire_locate_fn locate);
/* A wire_locate_fn for a single master behind sentinels
 * (lock_config.sentinels): the first sentinel that answers names the
 * master, dialled through its endpoint when the engine gave one (a proxy).
 * Every lock that follows a failover as Redisson does uses it. */
int wire_locate_master(struct lock_client *c, struct redis_wire *w);

/* Close the connection and free c->impl; safe on a half-built client. A
 * crash is the same thing seen from the server: the socket just closes. */
void wire_client_close(struct lock_client *c);

/* One attempt at taking key for ttl: 1 won (*token set, 0 when none), 0
 * busy, -1 error with c->err set. */
typedef int (*wire_try_fn)(struct lock_client *c, const char *key, size_t key_len, const char *ttl,
                           size_t ttl_len, uint64_t *token);
/* The wait both Redis locks share: try, and while busy retry with capped
 * exponential backoff and jitter until wait_ms has passed or the engine
 * cancels; on success fill g, validity counted from when the winning
 * request was sent. */
enum lock_result wire_acquire(struct lock_client *c, wire_try_fn try_once, const char *key,
                              size_t key_len, uint32_t ttl_ms, uint32_t wait_ms,
                              struct lock_grant *g);
/* Capped exponential backoff with jitter for the attempt-th retry, in ms,
 * never past the deadline: min(max, min << attempt) scaled into [1/2, 1]. */
uint32_t wire_backoff_ms(struct lock_client *c, unsigned attempt, uint64_t now_ms,
                         uint64_t deadline_ms);
/* ttl_ms less the time since sent_ms: what the holder may still assume. */
uint32_t wire_validity(uint32_t ttl_ms, uint64_t sent_ms);

/* redisConnectWithTimeout without blocking: a non-blocking context whose
 * connect is awaited through the seam for up to timeout_ms. Returns it
 * connected, or with ctx->err and ctx->errstr as the blocking call would
 * have set them ("Connection refused", "Connection timed out"); NULL when
 * out of memory. The caller frees it (redisFree). */
redisContext *wire_dial(struct lock_client *c, const char *host, int port, uint32_t timeout_ms);
/* redisGetReply's blocking contract on a non-blocking context: write what
 * is appended to ctx, then read one reply, waiting through the seam. Each
 * wait may take timeout_ms (0: no limit), as SO_SNDTIMEO / SO_RCVTIMEO
 * gave each write and read; the reply's first wait counts from from_ns
 * (lock_now_ns: a caller that has just read the clock passes its reading).
 * REDIS_OK with *reply set, or REDIS_ERR with ctx->err and ctx->errstr set
 * as blocking hiredis sets them, a timeout as REDIS_ERR_IO "Resource
 * temporarily unavailable". */
int wire_exchange(struct lock_client *c, redisContext *ctx, uint32_t timeout_ms, uint64_t from_ns,
                  void **reply);
/* The writing half of wire_exchange alone: REDIS_OK once everything
 * appended is written, else REDIS_ERR as above. */
int wire_flush(struct lock_client *c, redisContext *ctx, uint32_t timeout_ms);
/* Connect (or reconnect after an error) to w->ep and load w->scripts,
 * with cfg's connect and io timeouts. 0, or -1 with c->err set and
 * c->connect_failures bumped. */
int wire_connect(struct lock_client *c, struct redis_wire *w);
/* Close the connection; safe when never connected. */
void wire_close(struct redis_wire *w);
/* Close a connection that broke or fell out of step (a late answer would
 * be read as the next request's) and count it as lost in
 * c->connect_failures; nothing when it is already closed. */
void wire_drop(struct lock_client *c, struct redis_wire *w);

/* Append one command to w's connected context in RESP written by hand
 * (no allocation per argument), to be written by wire_flush or
 * wire_exchange. REDIS_OK, or REDIS_ERR when hiredis could not take it. */
int wire_append(struct redis_wire *w, int argc, const char **argv, const size_t *lens);

/* Send one command and read its reply (free it with freeReplyObject).
 * Reconnects first if the previous call broke the connection. NULL on I/O or
 * protocol error, with c->err set and the connection dropped (wire_drop):
 * the command may or may not have run, so a caller must not read NULL as a
 * "no". */
redisReply *wire_call(struct lock_client *c, struct redis_wire *w, int argc, const char **argv,
                      const size_t *lens);

/* Send one command without waiting for its reply (Redisson's
 * fire-and-forget writes): the next wire_call reads past it. Nothing is
 * sent when the connection is down. 0 sent, -1 not (the connection is
 * then dropped). */
int wire_send(struct lock_client *c, struct redis_wire *w, int argc, const char **argv,
              const size_t *lens);

/* Run script s with the given keys and args (EVALSHA, then EVAL on NOSCRIPT,
 * e.g. after the server restarted). Same return contract as wire_call. */
redisReply *wire_eval(struct lock_client *c, struct redis_wire *w, struct wire_script *s, int nkeys,
                      const char **keys, const size_t *key_lens, int nargs, const char **args,
                      const size_t *arg_lens);

/* The redis lock's scripts (redis.c), which redis_cluster.c runs byte for
 * byte so that the two contend on one key: the fenced SET (KEYS: the key,
 * its counter), the compare-and-delete release and the compare-and-pexpire
 * renewal (KEYS: the key; ARGV: the owner, the ttl). */
enum { REDIS_SCRIPT_ACQUIRE_FENCED, REDIS_SCRIPT_RELEASE, REDIS_SCRIPT_RENEW, REDIS_N_SCRIPTS };
extern const char *const redis_lock_scripts[REDIS_N_SCRIPTS];

/* What a SET NX (or the fenced script) answered: 1 won (*token set, 0
 * with none), 0 busy, -1 anything else (c->err set, what says which). */
int wire_set_reply(struct lock_client *c, const redisReply *rep, uint64_t *token);
/* What a compare-and-<op> script answered: LOCK_OK for 1 (the owner was
 * ours), LOCK_LOST for 0 (the server's own word that it was not); an
 * error or another reply says nothing about whose key it is: LOCK_ERR
 * with c->err set. */
enum lock_result wire_owner_reply(struct lock_client *c, const redisReply *rep);

/* Decimal digits of v into buf (>= 21 bytes); returns the length. */
size_t wire_u64(char *buf, uint64_t v);

#endif
