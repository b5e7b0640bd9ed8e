/* limiter.c - see limiter.h. A mutex, not a lock-free counter: a take is
 * a few arithmetic operations under it, and only runs that ask for a
 * limit pay for it. */
#include "sim/engine/limiter.h"

#include <pthread.h>
#include <stdlib.h>

struct limiter {
    pthread_mutex_t mu;
    double rate, burst, tokens; /* rate a second */
    uint64_t last_ns;
};

struct limiter *limiter_new(double rate, uint32_t burst, uint64_t now_ns)
{
    struct limiter *l = calloc(1, sizeof(*l));
    if (l == NULL)
        return NULL;
    pthread_mutex_init(&l->mu, NULL);
    l->rate = rate;
    l->burst = burst;
    l->tokens = burst;
    l->last_ns = now_ns;
    return l;
}

bool limiter_take(struct limiter *l, uint64_t now_ns, uint64_t max_wait_ns, uint64_t *at_ns)
{
    pthread_mutex_lock(&l->mu);
    if (now_ns > l->last_ns) { /* refilled for the time since the last take */
        l->tokens += (double)(now_ns - l->last_ns) * l->rate / 1e9;
        if (l->tokens > l->burst)
            l->tokens = l->burst;
        l->last_ns = now_ns;
    }
    /* below 1, the tokens are owed to those already waiting: the next
     * one is due once the bucket has refilled past them */
    double wait_ns = l->tokens >= 1.0 ? 0 : (1.0 - l->tokens) * 1e9 / l->rate;
    bool ok = wait_ns <= (double)max_wait_ns;
    if (ok) {
        l->tokens -= 1.0;
        *at_ns = now_ns + (uint64_t)wait_ns;
    }
    pthread_mutex_unlock(&l->mu);
    return ok;
}

void limiter_free(struct limiter *l)
{
    if (l == NULL)
        return;
    pthread_mutex_destroy(&l->mu);
    free(l);
}
