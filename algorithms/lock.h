/* lock.h - the one interface between locklab's engine and a lock algorithm.
 *
 * Each algorithm is one file, algorithms/<name>.c, exporting exactly one
 * `const struct lock_ops <name>_ops`, in the spirit of the kernel's
 * locktorture `struct lock_torture_ops`. The engine reaches algorithms only
 * through this table and never includes an algorithm's file; an algorithm
 * includes this header and its client library, never the engine.
 *
 * Calls are blocking for the client that makes them. Each virtual client
 * owns its connections, so no algorithm needs a lock of its own on the hot
 * path. Errors follow hiredis: a small result code, the detail in c->err /
 * c->errstr, set by lock_set_error(). Algorithms never print and never
 * exit.
 *
 * The seam: an algorithm must wait for a socket only through lock_wait()
 * (or lock_wait_all(), for a fan-out that needs every answer) and sleep
 * only through lock_sleep() / lock_sleep_until(); it never calls
 * poll, select, nanosleep or a client library's blocking call itself, and
 * uses its library in the non-blocking form (hiredis's buffer read/write,
 * libpq's PQsendQuery/PQconsumeInput, libcurl's multi interface). Those
 * calls go to the engine's struct lock_seam when it gave one, so an engine
 * runs clients as coroutines on an event loop by changing those
 * functions alone: every lock waits through the seam, so every client is
 * a coroutine. A library its caller must drive to keep a session alive
 * (ZooKeeper's single-threaded C client) gets the client's idle time
 * through lock_ops.idle.
 */
#ifndef LOCKLAB_LOCK_H
#define LOCKLAB_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock_family.h"

enum lock_result {
    LOCK_OK = 0,   /* acquired / released / renewed */
    LOCK_BUSY = 1, /* acquire: someone else holds it and the wait elapsed */
    LOCK_LOST = 2, /* release/renew: the lock is known to be no longer ours (expired,
                      taken): the servers said so, enough of them to be sure */
    LOCK_ERR = -1, /* connection or protocol error; outcome unknown, see errstr: never
                      a guess of LOST or OK where the answer did not come back */
};

enum lock_errcode {
    LOCK_ERR_NONE = 0,
    LOCK_ERR_IO,       /* connect, read or write failed */
    LOCK_ERR_TIMEOUT,  /* the server did not answer in time */
    LOCK_ERR_PROTOCOL, /* the server answered something unexpected */
    LOCK_ERR_CONFIG,   /* the algorithm cannot run with this configuration */
    LOCK_ERR_UNSENT,   /* the request never left (no connection, no session): the
                          operation surely did not happen, a failure, not an unknown */
    LOCK_ERR_REFUSED,  /* the server refused it (READONLY), or the lock undid it (WAIT
                          short of its replicas): surely not in effect */
};

/* What a holder may share its key with: the mode the engine asks of
 * acquire (lock_grant.mode) and the history records for each section. */
enum lock_mode {
    LOCK_MODE_EXCLUSIVE = 0, /* nobody else: a mutex, a write lock */
    LOCK_MODE_SHARED,        /* other shared holders, never an exclusive one: a read lock */
    LOCK_MODE_PERMIT,        /* one of lock_config.permits holders: a semaphore's permit */
    LOCK_MODE_COUNT
};
#define LOCK_MODE_BIT(m) (1u << (m))

#define LOCK_ERRSTR_MAX   128
#define LOCK_OWNER_MAX    64
#define LOCK_ENDPOINT_MAX 16

struct lock_endpoint {
    char host[64];
    int port;
};

/* Servers a scenario or the command line names instead of managed ones,
 * or those the fleet started. */
struct server_list {
    struct lock_endpoint ep[LOCK_ENDPOINT_MAX];
    size_t n; /* 0: locklab starts its own */
};

/* Shared, read-only configuration of every client of one run. */
struct lock_config {
    struct lock_endpoint endpoints[LOCK_ENDPOINT_MAX];
    size_t n_endpoints;
    uint32_t connect_timeout_ms;
    uint32_t io_timeout_ms; /* per request; 0 = block */
    uint32_t retry_min_ms;  /* backoff while waiting for a busy lock */
    uint32_t retry_max_ms;
    bool want_token; /* the resource checks fencing tokens: grants must carry one */
    /* Each lock family's settings (lock_family.h: lock.redlock's nodes and
     * node timeout, lock.zookeeper's session, ...), resolved, at its
     * family's place; a lock reads them through lock_settings. All zero
     * (a config that sets none): each lock's fallbacks (Redlock's 50 ms
     * node timeout and majority, ZooKeeper's session timeout, no WAIT, no
     * re-check). */
    struct settings_store settings[LOCK_FAMILIES_MAX];
    /* The scenario's lock.ttl_ms, for a lock that needs it before its
     * first acquire: etcd's Session grants its lease at connect, as
     * concurrency.NewSession does. 0: not known at connect. */
    uint32_t ttl_ms;
    /* A single-instance lock behind sentinels (redis): ask them which
     * server is master_name's master (again after a connection error or a
     * READONLY reply) instead of using endpoints[0]. The sentinels name
     * servers as upstream[] does; endpoints[e] is how to dial upstream[e]
     * (the same, or a proxy's listener); a server in neither is dialled as
     * named. */
    struct lock_endpoint sentinels[LOCK_ENDPOINT_MAX];
    size_t n_sentinels;
    char master_name[64];
    struct lock_endpoint upstream[LOCK_ENDPOINT_MAX];
    /* LOCK_MODE_PERMIT: how many holders one key admits at once (a
     * semaphore's permits). */
    uint32_t permits;
    /* When set and non-zero, stop waiting for busy locks (the run is being
     * stopped): acquire gives up with LOCK_BUSY. May be NULL. */
    const atomic_int *cancel;
};

/* What a successful acquire hands back; release and renew take it again. */
struct lock_grant {
    const char *key; /* the engine's string; must outlive the grant */
    size_t key_len;
    uint64_t token;       /* fencing token, 0 when the algorithm gives none */
    uint32_t ttl_ms;      /* what was asked for */
    uint32_t validity_ms; /* how long the holder may assume it still holds it */
    uint8_t mode;         /* in: the enum lock_mode asked for, set before acquire; only
                             a mode in the lock's lock_ops.modes is ever asked */
};

struct lock_ops;
struct lock_client;
struct lock_family;
struct pollfd;

/* A countdown latch (Redisson's RCountDownLatch): not a lock, so it has
 * no acquire, release or sections. A coordinator sets the count, each
 * party counts down once, and waiters wait until it reaches zero; a
 * latch's lock_ops has these and no acquire, and only a workload that
 * runs a latch (workload_ops.latch) can use it. */
struct latch_ops {
    /* trySetCount: the count, only while the latch does not exist. LOCK_OK
     * set, LOCK_BUSY it existed (left as it was), LOCK_ERR. */
    enum lock_result (*set_count)(struct lock_client *c, const char *key, size_t key_len,
                                  uint32_t count);
    /* countDown: one less. LOCK_OK, LOCK_ERR (the answer did not come
     * back: it may have counted). */
    enum lock_result (*count_down)(struct lock_client *c, const char *key, size_t key_len);
    /* await(wait): LOCK_OK once the count is zero (the latch passed),
     * LOCK_BUSY when the wait ran out first, LOCK_ERR. */
    enum lock_result (*await)(struct lock_client *c, const char *key, size_t key_len,
                              uint32_t wait_ms);
    /* delete: the latch gone, whatever its count (a coordinator's start
     * over a latch an earlier run left set). LOCK_OK deleted, LOCK_BUSY
     * there was none, LOCK_ERR. */
    enum lock_result (*remove)(struct lock_client *c, const char *key, size_t key_len);
};

/* No deadline, for lock_wait. */
#define LOCK_FOREVER UINT64_MAX

/* How a client waits, given by the engine. Deadlines are CLOCK_MONOTONIC
 * nanoseconds (lock_now_ns). Today's engine gives none: lock.c's fallback
 * then blocks the client's thread (ppoll, clock_nanosleep). */
struct lock_seam {
    /* Wait until one of fds[0..n) is ready for what its events ask
     * (POLLIN, POLLOUT, POLLRDHUP), or deadline_ns has passed; a deadline
     * already passed only looks, as poll's timeout 0 does. Fills revents as
     * poll(2) does. Returns how many are ready, 0 when none was by the
     * deadline, -1 with errno on failure; a signal is no failure. */
    int (*wait)(void *ctx, struct pollfd *fds, size_t n, uint64_t deadline_ns);
    /* Sleep until until_ns; return sooner once *cancel is non-zero (NULL:
     * never), noticed within 50 ms (the engine's Ctrl-C). */
    void (*sleep)(void *ctx, uint64_t until_ns, const atomic_int *cancel);
    /* Optional (NULL: lock_wait_all waits with wait, on the fds that have
     * not answered yet, until all have): as wait, but return only once
     * every fd of fds[0..n) is ready for what it asked (or has an error or
     * a hang-up), or deadline_ns has passed. A fan-out that needs every
     * node's answer then wakes once, not once an answer, and arms each
     * socket once. */
    int (*wait_all)(void *ctx, struct pollfd *fds, size_t n, uint64_t deadline_ns);
    void *ctx; /* handed to all three */
};

/* One virtual client. The engine fills ops, cfg, owner and rng before
 * connect(), and seam when it has one; the algorithm owns impl. */
struct lock_client {
    const struct lock_ops *ops;
    const struct lock_config *cfg;
    char owner[LOCK_OWNER_MAX]; /* value stored on the server; unique per client life */
    size_t owner_len;
    uint64_t rng;                 /* xorshift64 state for jitter; never 0 */
    const struct lock_seam *seam; /* NULL: block the thread (lock_blocking_seam) */
    void *impl;
    int err; /* enum lock_errcode */
    char errstr[LOCK_ERRSTR_MAX];
    /* Every connect that failed and every connection lost, however the
     * algorithm found out (a reconnect inside a call, a node redialled, a
     * ZooKeeper session dropping to "connecting"). Bumped by the algorithm
     * only; the engine reads it after the run and keeps it across
     * reconnects, so a run that lost its servers cannot look clean. */
    uint64_t connect_failures;
    /* Of those, the ones that say the server is gone, not merely slow: a
     * connect refused (nobody listening), a ZooKeeper connection that
     * dropped. A node dropped for answering late is not one. A run with
     * any lost its servers and cannot pass. Same rules as above. */
    uint64_t connect_refused;
    /* A waiter's wake-ups inside acquire: by the service's notice (an
     * unlock message, a watch event) or by its own timer (a poll's
     * back-off, a wait that ran out). Bumped by the algorithm, kept by the
     * engine across reconnects as the two above; a lock that waits on a
     * notice shows here that it does not poll. */
    uint64_t woken_by_notice;
    uint64_t woken_by_timer;
};

/* A client's link to its service, as its client library reports it:
 * ZooKeeper's session states, Curator's CONNECTED/RECONNECTED, SUSPENDED
 * and LOST. A lock read against these tells "the holder could not know". */
enum lock_link {
    LOCK_LINK_CONNECTED = 0, /* a session is up (again) */
    LOCK_LINK_CONNECTING,    /* the connection dropped; the session may live on */
    LOCK_LINK_EXPIRED,       /* the server ended the session: its locks are gone */
    LOCK_LINK_COUNT
};

struct lock_link_event {
    uint64_t t_ns; /* CLOCK_MONOTONIC, when the library reported it */
    uint8_t state; /* enum lock_link */
};

/* One way its library is used by default, for a row of the scorecard:
 * its label and the settings it merges into a scenario's "lock" object
 * (JSON text). A library whose default changed between releases has
 * one per release (etcd's clientv3 3.4 and 3.5). */
struct lock_default {
    const char *tag;      /* its short name in a row's name and folder: "3.4" (etcd@3.4) */
    const char *label;    /* "clientv3 3.4 (Debian's), no re-check" */
    const char *settings; /* "{\"etcd\": {\"recheck\": false}}"; "{}": the scenario's own */
};

#define LOCK_MAX_DEFAULTS 4

struct lock_ops {
    const char *name;
    const char *summary; /* one line for `locklab list` */
    bool gives_token;    /* acquire can fill grant->token when cfg->want_token */
    /* The kind of server it talks to, by its name in the fleet's registry
     * of server kinds (sim/fleet/kinds.c): "redis". The engine starts (or
     * is given) servers of that kind and fills lock_config.endpoints. */
    const char *server;
    /* The family of its own settings in a scenario (lock_family.h:
     * lock.redlock, lock.zookeeper, ...), which the scenario, the fleet and
     * the reports ask instead of naming the lock. NULL: none of its own. */
    const struct lock_family *family;
    /* Its grants live on a lease the client must keep alive all the time
     * it holds them, as etcd's concurrency.Session does from its own
     * goroutine: the engine calls renew every renew period (ttl/3 unless
     * the scenario says) whether or not the scenario asks for a watchdog,
     * and a paused client stops doing so. The algorithm keeps the lease
     * alive itself while it waits inside acquire. */
    bool keeps_lease_alive;
    /* Its grants have no lease: a grant lasts until it is released or
     * its session ends (PostgreSQL's advisory and row locks); the ttl
     * means nothing to it, and no fault is sized from it. */
    bool leaseless;
    /* How its library runs when a program just calls lock() (Redisson's
     * watchdog on): the scorecard's rows of it, one per entry, the first
     * the default; none (defaults[0].label NULL): one row, as the
     * scenario says. */
    struct lock_default defaults[LOCK_MAX_DEFAULTS];
    /* Not a lock: optimistic concurrency. acquire reads the key's version
     * (the token) and never waits; release is the write's commit, a
     * compare-and-set of that version, LOCK_LOST when another commit came
     * first (a conflict). Sections overlap by design: the engine commits
     * before the workload writes and writes only what committed, so a
     * conflict is a refused write, judged as fencing's are. */
    bool optimistic;
    /* An unsafe baseline, wrong by design (redis-naive): what a checker
     * must catch, never a lock to pick; the no-false-alarm sweep runs
     * every lock but these. */
    bool unsafe;
    /* The modes it grants, LOCK_MODE_BIT()s; 0 is exclusive alone. */
    unsigned modes;
    /* A holder may take a key it holds again (Redisson's RLock, Java's
     * ReentrantLock): each acquire is matched by a release, and only the
     * last release frees the key. A non-reentrant lock would wait for
     * itself, so the engine never asks it to. */
    bool reentrant;
    /* A latch, not a lock (NULL for every lock): its acquire and release
     * are NULL, and the engine reaches it through these alone. */
    const struct latch_ops *latch;
    /* Open the client's connections. 0 on success, -1 with err/errstr set. */
    int (*connect)(struct lock_client *c);
    /* Close everything and free impl. Safe on a half-connected client. */
    void (*disconnect)(struct lock_client *c);
    /* Take `key` for ttl_ms, waiting up to wait_ms while it is busy
     * (NULL for a latch alone). */
    enum lock_result (*acquire)(struct lock_client *c, const char *key, size_t key_len,
                                uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g);
    /* Optional (NULL: the engine takes the keys one by one, in the order
     * given, and gives back what it took when one fails): take every one
     * of grants[0..n) or none, within wait_ms (Redisson's MultiLock). The
     * engine fills each grant's key, key_len and mode; the lock fills the
     * rest of each. Each grant is released (and renewed) on its own
     * afterwards, as MultiLock's unlock unlocks each lock. LOCK_BUSY /
     * LOCK_ERR: none is held (whatever was taken was given back; an undo
     * whose answer was lost is LOCK_ERR, as an acquire's is). */
    enum lock_result (*acquire_all)(struct lock_client *c, struct lock_grant *grants, size_t n,
                                    uint32_t ttl_ms, uint32_t wait_ms);
    /* Give the lock back. LOCK_LOST when it was no longer ours. */
    enum lock_result (*release)(struct lock_client *c, const struct lock_grant *g);
    /* Optional (NULL): extend the lock to a fresh ttl, for a watchdog. */
    enum lock_result (*renew)(struct lock_client *c, struct lock_grant *g);
    /* Die without releasing anything: drop the connections, free impl.
     * What it drops on purpose is no lost connection: it must not count
     * them in connect_failures / connect_refused (earlier drops it has not
     * yet counted, it counts first). */
    void (*crash)(struct lock_client *c);
    /* Optional (NULL: it reports none): the link changes since the last
     * call, oldest first, at most max of them; the count. Called by the
     * client's own thread between operations; cheap when there are none. */
    size_t (*links)(struct lock_client *c, struct lock_link_event *out, size_t max);
    /* Optional (NULL: the engine sleeps through the seam): a lock whose
     * library its caller drives. The engine spends a connected client's
     * idle time here instead of sleeping (holding a lock, thinking,
     * backing off), until until_ns or, sooner, once *cancel is non-zero
     * (NULL: never), noticed within 50 ms, as lock_sleep_until. The lock
     * keeps its session alive meanwhile (ZooKeeper's pings, its watchers'
     * news of the link), waiting only through the seam. A paused client
     * does nothing, so the engine sleeps a pause plainly. */
    void (*idle)(struct lock_client *c, uint64_t until_ns, const atomic_int *cancel);
};

/* The registry: every algorithm locklab knows, in one static array. */
const struct lock_ops *lock_find(const char *name);
size_t lock_count(void);
const struct lock_ops *lock_at(size_t i);
/* "redis, redis-naive": for error messages; returns buf. */
const char *lock_names(char *buf, size_t len);

/* f's settings in cfg, as f's struct (its header names it). */
const void *lock_settings(const struct lock_config *cfg, const struct lock_family *f);
void *lock_settings_mut(struct lock_config *cfg, const struct lock_family *f);

/* "exclusive", "shared", "permit" ("?" past them). */
const char *lock_mode_name(int m);
/* Can ops grant mode m? (modes 0: exclusive alone.) */
bool lock_grants_mode(const struct lock_ops *ops, enum lock_mode m);

/* The one setter of c->err and c->errstr (truncates safely). */
void lock_set_error(struct lock_client *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void lock_clear_error(struct lock_client *c);

/* Has the engine asked every waiting client to give up? */
bool lock_cancelled(const struct lock_client *c);
/* Uniform random integer in [0, n) (0 when n is 0) from the client's
 * xorshift state; lock_random_from takes any non-zero state. */
uint64_t lock_random(struct lock_client *c, uint64_t n);
uint64_t lock_random_from(uint64_t *state, uint64_t n);

/* The seam's two calls, the only ways an algorithm may wait (see the top
 * of this file); they go to c->seam, or to lock_blocking_seam without one.
 * lock_wait: as struct lock_seam's wait. lock_sleep: a back-off of ms,
 * never cut short (an acquire looks at lock_cancelled between attempts).
 * lock_sleep_until: as the seam's sleep. */
int lock_wait(struct lock_client *c, struct pollfd *fds, size_t n, uint64_t deadline_ns);
/* As the seam's wait_all: revents as poll(2) fills them, the count of
 * entries ready (fewer than those with an fd >= 0 when the deadline came
 * first), -1 with errno when a wait failed before any was ready. */
int lock_wait_all(struct lock_client *c, struct pollfd *fds, size_t n, uint64_t deadline_ns);
/* lock_wait_all through s's wait alone (NULL: the blocking seam's): what a
 * seam without wait_all gets, and what one with it may fall back to. */
int lock_seam_wait_all(const struct lock_seam *s, struct pollfd *fds, size_t n,
                       uint64_t deadline_ns);
void lock_sleep(struct lock_client *c, uint32_t ms);
void lock_sleep_until(struct lock_client *c, uint64_t until_ns, const atomic_int *cancel);
/* The fallback: the calling thread blocks in ppoll / clock_nanosleep. An
 * engine's own seam may hand calls on to it. */
extern const struct lock_seam lock_blocking_seam;

/* Sleep ms milliseconds on the calling thread, for tests and tools; an
 * algorithm sleeps through lock_sleep instead. */
void lock_sleep_ms(uint32_t ms);
/* CLOCK_MONOTONIC in milliseconds, for wait and validity arithmetic, and
 * in nanoseconds, for the seam's deadlines. */
uint64_t lock_now_ms(void);
uint64_t lock_now_ns(void);

#endif
