/* redis_wire.h - what the Redis-based algorithms share: one blocking hiredis
 * connection per client, commands written straight into RESP without a
 * format string, and Lua scripts run by EVALSHA with an EVAL fallback.
 *
 * This is client-library code, not an algorithm: redis.c and redis_naive.c
 * include it, neither includes the other.
 */
#ifndef LOCKLAB_REDIS_WIRE_H
#define LOCKLAB_REDIS_WIRE_H

#include <hiredis/hiredis.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"

#define WIRE_MAX_ARGS 8

struct wire_script {
    const char *body;
    char sha[41]; /* filled by SCRIPT LOAD on every (re)connect */
};

struct redis_wire {
    redisContext *ctx;
    const struct lock_endpoint *ep;
    struct wire_script *scripts; /* loaded after each connect; may be NULL */
    size_t n_scripts;
    char out[1024]; /* the RESP request being built */
};

/* Connect (or reconnect after an error) to w->ep and load w->scripts.
 * 0, or -1 with c->err set. */
int wire_connect(struct lock_client *c, struct redis_wire *w);
/* Close the connection; safe when never connected. */
void wire_close(struct redis_wire *w);

/* Send one command and read its reply (free it with freeReplyObject).
 * Reconnects first if the previous call broke the connection. NULL on I/O or
 * protocol error, with c->err set and the connection dropped. */
redisReply *wire_call(struct lock_client *c, struct redis_wire *w, int argc, const char **argv,
                      const size_t *lens);

/* Run script s with the given keys and args (EVALSHA, then EVAL on NOSCRIPT,
 * e.g. after the server restarted). Same return contract as wire_call. */
redisReply *wire_eval(struct lock_client *c, struct redis_wire *w, struct wire_script *s, int nkeys,
                      const char **keys, const size_t *key_lens, int nargs, const char **args,
                      const size_t *arg_lens);

/* Decimal digits of v into buf (>= 21 bytes); returns the length. */
size_t wire_u64(char *buf, uint64_t v);

/* Capped exponential backoff with jitter for the attempt-th retry, in ms,
 * never past the deadline: min(max, min << attempt) scaled into [1/2, 1]. */
uint32_t wire_backoff_ms(struct lock_client *c, unsigned attempt, uint64_t now_ms,
                         uint64_t deadline_ms);

#endif
