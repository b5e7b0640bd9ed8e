/* lock.c - the algorithm registry, the helpers every algorithm shares, and
 * the seam's fallback: the one place in algorithms/ that blocks a thread
 * (zookeeper.c's library aside). */
#include "algorithms/lock.h"
#include "algorithms/etcd.h"
#include "algorithms/lock_family.h"
#include "algorithms/mysql.h"
#include "algorithms/postgres.h"
#include "algorithms/redis.h"
#include "algorithms/redis_cluster.h"
#include "algorithms/redisson.h"
#include "algorithms/redlock.h"
#include "algorithms/zookeeper_settings.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_MS 1000000ULL
#define SLICE_NS  (50 * NS_PER_MS) /* a cancellable sleep looks at its flag this often */

extern const struct lock_ops redis_ops;
extern const struct lock_ops redis_naive_ops;
extern const struct lock_ops redlock_ops;
extern const struct lock_ops zookeeper_ops;
extern const struct lock_ops etcd_ops;
extern const struct lock_ops postgres_advisory_ops;
extern const struct lock_ops postgres_row_ops;
extern const struct lock_ops postgres_optimistic_ops;
extern const struct lock_ops redisson_ops;
extern const struct lock_ops redisson_fenced_ops;
extern const struct lock_ops redisson_fair_ops;
extern const struct lock_ops redisson_rw_ops;
extern const struct lock_ops redisson_semaphore_ops;
extern const struct lock_ops redisson_multi_ops;
extern const struct lock_ops redisson_rw_naive_ops;
extern const struct lock_ops redisson_semaphore_naive_ops;
extern const struct lock_ops redis_cluster_ops;
extern const struct lock_ops redisson_cluster_ops;
extern const struct lock_ops redisson_latch_ops;
extern const struct lock_ops redisson_latch_naive_ops;
extern const struct lock_ops mysql_named_ops;
extern const struct lock_ops mysql_row_ops;
extern const struct lock_ops mysql_optimistic_ops;

/* The one place that lists every algorithm; `locklab list` shows this order. */
static const struct lock_ops *const registry[] = {
    &redis_ops,
    &redis_naive_ops,
    &redlock_ops,
    &zookeeper_ops,
    &etcd_ops,
    &postgres_advisory_ops,
    &postgres_row_ops,
    &postgres_optimistic_ops,
    &redisson_ops,
    &redisson_fenced_ops,
    &redisson_fair_ops,
    &redisson_rw_ops,
    &redisson_semaphore_ops,
    &redisson_multi_ops,
    &redisson_rw_naive_ops,
    &redisson_semaphore_naive_ops,
    &redis_cluster_ops,
    &redisson_cluster_ops,
    &redisson_latch_ops,
    &redisson_latch_naive_ops,
    &mysql_named_ops,
    &mysql_row_ops,
    &mysql_optimistic_ops,
};

#define N_REGISTRY (sizeof(registry) / sizeof(registry[0]))

/* Every lock family, in the order of their objects under "lock" (the
 * order a message lists them in, and report.json gives them); the place
 * of each is where a scenario keeps its settings. */
static const struct lock_family *const families[] = {
    &redlock_family, &zookeeper_family, &redis_family,         &postgres_family,
    &etcd_family,    &redisson_family,  &redis_cluster_family, &mysql_family,
};

/* The same, in the order the header prints their lines: a lock's own
 * settings before the topology asked whatever the lock (a pooler,
 * replicas). */
static const struct lock_family *const lines[] = {
    &redlock_family,  &zookeeper_family, &etcd_family,          &redisson_family,
    &postgres_family, &redis_family,     &redis_cluster_family, &mysql_family,
};

#define N_FAMILIES (sizeof(families) / sizeof(families[0]))
_Static_assert(N_FAMILIES <= LOCK_FAMILIES_MAX, "room for every family");
_Static_assert(sizeof(lines) == sizeof(families), "every family has its line");

size_t lock_family_count(void)
{
    return N_FAMILIES;
}

const struct lock_family *lock_family_at(size_t i)
{
    return i < N_FAMILIES ? families[i] : NULL;
}

const struct lock_family *lock_family_line_at(size_t i)
{
    return i < N_FAMILIES ? lines[i] : NULL;
}

size_t lock_family_index(const struct lock_family *f)
{
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (families[i] == f)
            return i;
    return LOCK_FAMILIES_MAX;
}

const struct lock_family *lock_family_with(const struct lock_family *f, size_t hook)
{
    for (; f; f = f->base) {
        void (*fn)(void) = NULL;
        memcpy(&fn, (const char *)f + hook, sizeof(fn));
        if (fn)
            return f;
    }
    return NULL;
}

void *lock_settings_mut(struct lock_config *cfg, const struct lock_family *f)
{
    size_t i = lock_family_index(f);
    return i < LOCK_FAMILIES_MAX ? cfg->settings[i].bytes : NULL;
}

const void *lock_settings(const struct lock_config *cfg, const struct lock_family *f)
{
    return lock_settings_mut((struct lock_config *)cfg, f);
}

void family_note(const struct family_scene *sc, const char *fmt, ...)
{
    char line[FAMILY_NOTE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    sc->note(sc->ctx, line);
}

int family_check_ensemble(uint32_t n, char *why, size_t len)
{
    if (n != 2)
        return 0;
    snprintf(why, len, "2 is not an ensemble locklab runs (1: standalone, or 3)");
    return -1;
}

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

const char *lock_mode_name(int m)
{
    static const char *const names[LOCK_MODE_COUNT] = {"exclusive", "shared", "permit"};
    return m >= 0 && m < LOCK_MODE_COUNT ? names[m] : "?";
}

bool lock_grants_mode(const struct lock_ops *ops, enum lock_mode m)
{
    unsigned modes = ops->modes ? ops->modes : LOCK_MODE_BIT(LOCK_MODE_EXCLUSIVE);
    return m < LOCK_MODE_COUNT && (modes & LOCK_MODE_BIT(m)) != 0;
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

/* One wait of blocking_wait's: the system call itself, not glibc's
 * ppoll, which is a thread cancellation point whose bookkeeping cost more
 * than the rest of the seam (bench/cycle_instructions.sh); no locklab
 * thread is ever cancelled. */
static long ppoll_until(struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    if (deadline_ns == LOCK_FOREVER)
        return syscall(SYS_ppoll, fds, (unsigned long)n, NULL, NULL, 0UL);
    struct timespec left = {0, 0};
    uint64_t now = lock_now_ns();
    if (deadline_ns > now) {
        left.tv_sec = (time_t)((deadline_ns - now) / 1000000000u);
        left.tv_nsec = (long)((deadline_ns - now) % 1000000000u);
    }
    return syscall(SYS_ppoll, fds, (unsigned long)n, &left, NULL, 0UL);
}

static int blocking_wait(void *ctx, struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    (void)ctx;
    long rc;
    while ((rc = ppoll_until(fds, n, deadline_ns)) < 0 && errno == EINTR)
        ; /* the deadline stands: a signal only costs a look at the clock */
    return (int)rc;
}

static void blocking_sleep(void *ctx, uint64_t until_ns, const atomic_int *cancel)
{
    (void)ctx;
    for (;;) {
        uint64_t now = lock_now_ns();
        if (now >= until_ns)
            return;
        if (cancel && atomic_load_explicit(cancel, memory_order_relaxed))
            return;
        /* A deadline, not a duration: a signal or a slice restarts nothing. */
        uint64_t to = cancel && until_ns - now > SLICE_NS ? now + SLICE_NS : until_ns;
        struct timespec ts = {.tv_sec = (time_t)(to / 1000000000u),
                              .tv_nsec = (long)(to % 1000000000u)};
        int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        if (rc != 0 && rc != EINTR)
            return;
    }
}

const struct lock_seam lock_blocking_seam = {.wait = blocking_wait, .sleep = blocking_sleep};

int lock_wait(struct lock_client *c, struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    const struct lock_seam *s = c->seam;
    return s ? s->wait(s->ctx, fds, n, deadline_ns) : blocking_wait(NULL, fds, n, deadline_ns);
}

int lock_seam_wait_all(const struct lock_seam *s, struct pollfd *fds, size_t n,
                       uint64_t deadline_ns)
{
    if (s == NULL)
        s = &lock_blocking_seam;
    struct pollfd left[LOCK_ENDPOINT_MAX];
    size_t at[LOCK_ENDPOINT_MAX];
    int ready = 0;
    for (size_t i = 0; i < n; i++)
        fds[i].revents = 0;
    if (n > LOCK_ENDPOINT_MAX) /* more than any fan-out here: each wakes the caller */
        return s->wait(s->ctx, fds, n, deadline_ns);
    for (;;) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (fds[i].fd >= 0 && fds[i].revents == 0) {
                left[m] = fds[i];
                at[m++] = i;
            }
        if (m == 0)
            return ready;
        int rc = s->wait(s->ctx, left, m, deadline_ns);
        if (rc <= 0) /* the deadline, or a failure: what answered stands */
            return ready > 0 || rc == 0 ? ready : rc;
        for (size_t k = 0; k < m; k++)
            if (left[k].revents) {
                fds[at[k]].revents = left[k].revents;
                ready++;
            }
    }
}

int lock_wait_all(struct lock_client *c, struct pollfd *fds, size_t n, uint64_t deadline_ns)
{
    const struct lock_seam *s = c->seam;
    if (s && s->wait_all)
        return s->wait_all(s->ctx, fds, n, deadline_ns);
    return lock_seam_wait_all(s, fds, n, deadline_ns);
}

void lock_sleep_until(struct lock_client *c, uint64_t until_ns, const atomic_int *cancel)
{
    const struct lock_seam *s = c->seam;
    if (s)
        s->sleep(s->ctx, until_ns, cancel);
    else
        blocking_sleep(NULL, until_ns, cancel);
}

void lock_sleep(struct lock_client *c, uint32_t ms)
{
    lock_sleep_until(c, lock_now_ns() + ms * NS_PER_MS, NULL);
}

void lock_sleep_ms(uint32_t ms)
{
    blocking_sleep(NULL, lock_now_ns() + ms * NS_PER_MS, NULL);
}

uint64_t lock_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t lock_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
