/* lock.c - the algorithm registry and the helpers every algorithm shares. */
#include "algorithms/lock.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

extern const struct lock_ops redis_ops;
extern const struct lock_ops redis_naive_ops;
extern const struct lock_ops redlock_ops;
extern const struct lock_ops zookeeper_ops;

/* The one place that lists every algorithm; `locklab list` shows this order. */
static const struct lock_ops *const registry[] = {
    &redis_ops,
    &redis_naive_ops,
    &redlock_ops,
    &zookeeper_ops,
};

#define N_REGISTRY (sizeof(registry) / sizeof(registry[0]))

const struct lock_ops *lock_find(const char *name)
{
    for (size_t i = 0; i < N_REGISTRY; i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

size_t lock_count(void)
{
    return N_REGISTRY;
}

const struct lock_ops *lock_at(size_t i)
{
    return i < N_REGISTRY ? registry[i] : NULL;
}

const char *lock_names(char *buf, size_t len)
{
    size_t used = 0;
    if (len == 0)
        return buf;
    buf[0] = '\0';
    for (size_t i = 0; i < N_REGISTRY && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", registry[i]->name);
        if (n < 0 || (size_t)n >= len - used)
            break; /* truncated: buf already ends in a NUL */
        used += (size_t)n;
    }
    return buf;
}

const char *lock_server_name(enum lock_server s)
{
    switch (s) {
    case LOCK_SERVER_REDIS:
        return "redis";
    case LOCK_SERVER_ZOOKEEPER:
        return "zookeeper";
    default:
        return "unknown";
    }
}

void lock_set_error(struct lock_client *c, int err, const char *fmt, ...)
{
    va_list ap;
    c->err = err;
    va_start(ap, fmt);
    vsnprintf(c->errstr, sizeof(c->errstr), fmt, ap);
    va_end(ap);
}

void lock_clear_error(struct lock_client *c)
{
    c->err = LOCK_ERR_NONE;
    c->errstr[0] = '\0';
}

bool lock_cancelled(const struct lock_client *c)
{
    const atomic_int *f = c->cfg->cancel;
    return f != NULL && atomic_load_explicit(f, memory_order_relaxed) != 0;
}

uint64_t lock_random_from(uint64_t *state, uint64_t n)
{
    /* xorshift64*: cheap, and each caller keeps its own state, so nothing
     * shared is written on the hot path. */
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    uint64_t r = x * 2685821657736338717ULL;
    return (uint64_t)(((unsigned __int128)r * n) >> 64);
}

uint64_t lock_random(struct lock_client *c, uint64_t n)
{
    return lock_random_from(&c->rng, n);
}

void lock_sleep_ms(uint32_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

uint64_t lock_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
