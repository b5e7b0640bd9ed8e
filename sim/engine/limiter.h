/* limiter.h - a token bucket in front of a run's lock requests (the
 * scenario's lock.rate_limit), as a service puts one in front of its lock
 * client (Guava's RateLimiter, Resilience4j's RateLimiter): rate tokens a
 * second, at most burst kept. An acquire that finds the bucket empty waits
 * for its token as long as it would wait for the lock (Guava's
 * tryAcquire(timeout), Resilience4j's timeoutDuration), behind the tokens
 * already promised; one that would wait longer is refused at once, never
 * sent. One bucket for the whole run: the clients are one service's
 * callers. */
#ifndef LOCKLAB_LIMITER_H
#define LOCKLAB_LIMITER_H

#include <stdbool.h>
#include <stdint.h>

struct limiter;

/* Full at the start (burst tokens). NULL out of memory. */
struct limiter *limiter_new(double rate, uint32_t burst, uint64_t now_ns);
/* A token for a request at now_ns (CLOCK_MONOTONIC): true with *at_ns
 * when it may go (now_ns, or when the bucket has refilled that far);
 * false, nothing taken, when that is more than max_wait_ns away. Safe
 * from any thread. */
bool limiter_take(struct limiter *l, uint64_t now_ns, uint64_t max_wait_ns, uint64_t *at_ns);
void limiter_free(struct limiter *l); /* accepts NULL */

#endif
