/* redisson_multi.c - Redisson's RedissonMultiLock over independent Redis
 * masters: several RLocks, each perhaps on a server of its own, taken as
 * one, all of them or none.
 *
 * Placement: the endpoints are N independent masters (lock.redlock.nodes
 * says how many), and a key's RLock lives on master FNV-1a(key) mod N,
 * as accounts sharded by hand over separate Redis servers are, the case
 * MultiLock exists for. `acquire` of one key is a MultiLock of that one
 * RLock; `acquire_all` of several keys is a MultiLock of their RLocks, in
 * the order given, each on its own master. Each member is RLock as
 * redisson.c speaks it (the hash, its "<client id>:<thread id>" field
 * counting re-entries, the acquire and unlock scripts, the unlock channel,
 * the latch: redisson_wire.c), on a connection pair of its master's, so a
 * Java RedissonMultiLock over the same servers contends with locklab.
 *
 * tryLock(waitTime, leaseTime) as RedissonMultiLock has it, with the
 * engine's wait_ms and ttl_ms:
 *  - the members are tried in order, each with RLock's own wait for the
 *    time the whole call has left (calcLockWaitTime is the remaining time
 *    itself for MultiLock; RedLock divides it), each on a lease of twice
 *    the wait (the ttl itself for a wait of 0), long enough to outlast the
 *    taking of the others;
 *  - failedLocksLimit is 0: one member that cannot be had unlocks every
 *    member taken so far and, while time is left, starts again from the
 *    first (a wait of 0 gives up at once). A member whose answer was lost
 *    is unlocked too (it may have been taken: Redisson's
 *    RedisResponseTimeoutException); other errors are a member not had;
 *  - after each member the time left is counted down, and once it is gone
 *    what was taken is unlocked and the call fails, even after the last
 *    member was had;
 *  - with every member held, each is PEXPIREd to the lease (leaseTime),
 *    its answer not looked at, as Redisson's expireAsync's is not.
 * Between rounds that failed on an error (a master down answers at once)
 * it backs off as the run's retry settings say, where Redisson's command
 * retries wait their retryInterval. release is the member's RLock unlock
 * on its master (MultiLock's unlock unlocks each lock), renew the member's
 * RLock renewal there (the watchdog's script), crash closes every
 * connection. No fencing token, no WAIT: the masters have no replicas.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/redis.h"
#include "algorithms/redis_wire.h"
#include "algorithms/redisson_wire.h"
#include "algorithms/redlock.h"

/* RLock's acquire first: rsn_lock_try runs scripts[0]. */
enum { SCRIPT_ACQUIRE, SCRIPT_UNLOCK, SCRIPT_RENEW, SCRIPT_EXPIRE, N_SCRIPTS };

/* RedissonExpirable's expire: PEXPIRE each key, 1 when any was set.
 * KEYS: names; ARGV: lease. */
static const char expire_script[] = "local set = 0 "
                                    "for i = 1, #KEYS do "
                                    "  if redis.call('pexpire', KEYS[i], ARGV[1]) == 1 then "
                                    "set = 1 end "
                                    "end "
                                    "return set";

static const char *const script_bodies[N_SCRIPTS] = {
    [SCRIPT_ACQUIRE] = rsn_lock_acquire_script,
    [SCRIPT_UNLOCK] = rsn_lock_unlock_script,
    [SCRIPT_RENEW] = rsn_renew_script,
    [SCRIPT_EXPIRE] = expire_script,
};

struct multi {
    size_t n;
    struct rsn_client *master; /* [n]: one Redisson connection pair per master */
};

/* c->impl is the struct multi between calls; around a call into
 * redisson_wire it is the member's rsn_client (that code reads c->impl). */
#define MULTI(c) ((struct multi *)(c)->impl)

/* FNV-1a, 64 bits: a placement any client can compute from the key. */
static size_t master_of(const struct multi *m, const char *key, size_t len)
{
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)key[i]) * 1099511628211ULL;
    return (size_t)(h % m->n);
}

static int multi_connect(struct lock_client *c)
{
    if (c->cfg->n_endpoints < 1) {
        lock_set_error(c, LOCK_ERR_CONFIG, "redisson-multi needs at least one Redis master");
        return -1;
    }
    if (redis_settings(c->cfg)->wait_replicas > 0) {
        lock_set_error(c, LOCK_ERR_CONFIG, "redisson-multi's masters have no replicas to WAIT for");
        return -1;
    }
    struct multi *m = calloc(1, sizeof(*m));
    if (m)
        m->master = calloc(c->cfg->n_endpoints, sizeof(*m->master));
    if (m == NULL || m->master == NULL) {
        free(m);
        lock_set_error(c, LOCK_ERR_IO, "out of memory");
        return -1;
    }
    m->n = c->cfg->n_endpoints;
    c->impl = m;
    size_t up = 0;
    for (size_t i = 0; i < m->n; i++)
        up += rsn_attach(c, &m->master[i], &c->cfg->endpoints[i], script_bodies, N_SCRIPTS) == 0;
    /* A master that is down only fails the keys placed on it (its
     * connection is dialled again at their next call); none up is an
     * error. */
    if (up == 0)
        return -1;
    lock_clear_error(c);
    return 0;
}

static void multi_close(struct lock_client *c)
{
    struct multi *m = c->impl;
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->n && m->master; i++)
        rsn_detach(&m->master[i]);
    free(m->master);
    free(m);
    c->impl = NULL;
}

/* --- one member, on its master -------------------------------------- */

static struct rsn_client *enter(struct lock_client *c, struct multi *m, const char *key, size_t len)
{
    struct rsn_client *r = &m->master[master_of(m, key, len)];
    c->impl = r;
    return r;
}

static enum lock_result member_lock(struct lock_client *c, struct multi *m, struct lock_grant *g,
                                    uint32_t lease_ms, uint32_t wait_ms)
{
    enter(c, m, g->key, g->key_len);
    enum lock_result res =
        rsn_acquire(c, rsn_lock_try, rsn_lock_channel, g->key, g->key_len, lease_ms, wait_ms, g);
    c->impl = m;
    return res;
}

static enum lock_result member_unlock(struct lock_client *c, struct multi *m,
                                      const struct lock_grant *g)
{
    struct rsn_client *r = enter(c, m, g->key, g->key_len);
    enum lock_result res = rsn_lock_release(c, &r->wire.scripts[SCRIPT_UNLOCK], g);
    c->impl = m;
    return res;
}

/* The lease set on a held member. 0 answered (whatever the answer), -1
 * no answer (c->err set). */
static int member_expire(struct lock_client *c, struct multi *m, struct lock_grant *g,
                         uint32_t lease_ms)
{
    struct rsn_client *r = enter(c, m, g->key, g->key_len);
    char lease[21];
    const char *args[1] = {lease};
    size_t alens[1] = {wire_u64(lease, lease_ms)};
    uint64_t sent = lock_now_ms();
    redisReply *rep = wire_eval(c, &r->wire, &r->wire.scripts[SCRIPT_EXPIRE], 1, &g->key,
                                &g->key_len, 1, args, alens);
    c->impl = m;
    if (rep == NULL)
        return -1;
    int rc = 0;
    if (rep->type == REDIS_REPLY_ERROR) {
        lock_set_error(c, LOCK_ERR_PROTOCOL, "expire: %s", rep->str);
        rc = -1;
    }
    freeReplyObject(rep);
    g->ttl_ms = lease_ms;
    g->validity_ms = wire_validity(lease_ms, sent);
    return rc;
}

/* --- tryLock ---------------------------------------------------------- */

/* Room for what a member said, with its key and what was done about it:
 * lock_set_error cuts it to LOCK_ERRSTR_MAX. */
#define NOTE_MAX (LOCK_ERRSTR_MAX + 128)

/* "<what><key>: <errstr><tail>" into out[NOTE_MAX], the key cut at 64. */
static void note(char *out, const char *what, const struct lock_grant *g, const char *errstr,
                 const char *tail)
{
    snprintf(out, NOTE_MAX, "%s%.*s: %.*s%s", what, (int)(g->key_len > 64 ? 64 : g->key_len),
             g->key, LOCK_ERRSTR_MAX - 1, errstr, tail);
}

/* One MultiLock attempt's state. */
struct attempt {
    bool *held;     /* [n]: member i is ours */
    bool unsure;    /* an undo's answer was lost: a member may be held */
    int unsure_err; /* and why */
    char unsure_str[NOTE_MAX];
};

/* Unlock every member held (unlockInner). */
static void undo(struct lock_client *c, struct multi *m, struct lock_grant *grants, size_t n,
                 struct attempt *a)
{
    for (size_t i = 0; i < n; i++) {
        if (!a->held[i])
            continue;
        a->held[i] = false;
        if (member_unlock(c, m, &grants[i]) == LOCK_ERR && !a->unsure) {
            a->unsure = true;
            a->unsure_err = c->err;
            note(a->unsure_str, "unlocking again ", &grants[i], c->errstr, "");
        }
    }
}

/* The end of a failed call: nothing held, or LOCK_ERR when that is not
 * sure; else a member's error (surely not in effect now) or busy. */
static enum lock_result failed(struct lock_client *c, const struct attempt *a, enum lock_result why,
                               int err, const char *errstr)
{
    if (a->unsure) {
        lock_set_error(c, a->unsure_err == LOCK_ERR_UNSENT ? LOCK_ERR_IO : a->unsure_err, "%s",
                       a->unsure_str);
        return LOCK_ERR;
    }
    if (why == LOCK_ERR) {
        lock_set_error(c, err, "%s", errstr);
        return LOCK_ERR;
    }
    lock_clear_error(c);
    return LOCK_BUSY;
}

static enum lock_result multi_lock(struct lock_client *c, struct lock_grant *grants, size_t n,
                                   uint32_t ttl_ms, uint32_t wait_ms)
{
    struct multi *m = c->impl;
    bool held_small[8];
    bool *held = n <= 8 ? held_small : calloc(n, sizeof(*held));
    if (held == NULL) {
        lock_set_error(c, LOCK_ERR_UNSENT, "out of memory");
        return LOCK_ERR;
    }
    memset(held, 0, n * sizeof(*held));
    struct attempt a = {.held = held};
    /* leaseTime > 0: with a wait, every member on twice it until all are
     * had, then the lease; without one, the lease from the start. */
    uint64_t lease64 = wait_ms > 0 ? 2ULL * wait_ms : ttl_ms;
    uint32_t lease = lease64 > UINT32_MAX ? UINT32_MAX : (uint32_t)lease64;
    int64_t remain = wait_ms > 0 ? (int64_t)wait_ms : -1;
    uint64_t t = lock_now_ms(), deadline = t + wait_ms;
    enum lock_result why = LOCK_BUSY, res = LOCK_OK;
    int err = LOCK_ERR_NONE;
    char errstr[NOTE_MAX] = "";
    unsigned rounds = 0;
    for (size_t i = 0; i < n;) {
        enum lock_result r =
            member_lock(c, m, &grants[i], lease, remain > 0 ? (uint32_t)remain : 0);
        if (r == LOCK_OK) {
            held[i++] = true;
        } else {
            bool lost_answer =
                r == LOCK_ERR && c->err != LOCK_ERR_UNSENT && c->err != LOCK_ERR_REFUSED;
            why = r == LOCK_ERR ? LOCK_ERR : LOCK_BUSY;
            /* a lost answer settled by its undo below is surely undone */
            err = lost_answer ? LOCK_ERR_REFUSED : c->err;
            note(errstr, "", &grants[i], c->errstr, lost_answer ? "; unlocked again" : "");
            if (lost_answer)
                held[i] = true; /* it may be ours: the undo unlocks it */
            undo(c, m, grants, n, &a);
            if (wait_ms == 0 || lock_cancelled(c)) {
                res = failed(c, &a, why, err, errstr);
                break;
            }
            i = 0;
            if (r == LOCK_ERR) {
                uint64_t now = lock_now_ms();
                if (now < deadline)
                    lock_sleep(c, wire_backoff_ms(c, rounds++, now, deadline));
            }
        }
        if (remain > 0) {
            uint64_t now = lock_now_ms();
            remain -= (int64_t)(now - t);
            t = now;
            if (remain <= 0) {
                undo(c, m, grants, n, &a);
                res = failed(c, &a, why, err, errstr);
                break;
            }
        }
    }
    if (res == LOCK_OK) {
        for (size_t i = 0; i < n; i++) {
            if (member_expire(c, m, &grants[i], ttl_ms) == 0)
                continue;
            /* Redisson's call would throw with every member held; here
             * the caller is promised all or none, so all go back, and
             * once every undo is answered nothing is in effect. */
            note(errstr, "expire ", &grants[i], c->errstr, "; unlocked again");
            undo(c, m, grants, n, &a);
            res = failed(c, &a, LOCK_ERR, LOCK_ERR_REFUSED, errstr);
            break;
        }
        if (res == LOCK_OK)
            lock_clear_error(c);
    }
    if (held != held_small)
        free(held);
    return res;
}

static enum lock_result multi_acquire_all(struct lock_client *c, struct lock_grant *grants,
                                          size_t n, uint32_t ttl_ms, uint32_t wait_ms)
{
    if (n == 0) {
        lock_set_error(c, LOCK_ERR_UNSENT, "no lock to take");
        return LOCK_ERR;
    }
    return multi_lock(c, grants, n, ttl_ms, wait_ms);
}

static enum lock_result multi_acquire(struct lock_client *c, const char *key, size_t key_len,
                                      uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    g->key = key;
    g->key_len = key_len;
    return multi_lock(c, g, 1, ttl_ms, wait_ms);
}

static enum lock_result multi_release(struct lock_client *c, const struct lock_grant *g)
{
    return member_unlock(c, MULTI(c), g);
}

static enum lock_result multi_renew(struct lock_client *c, struct lock_grant *g)
{
    struct multi *m = c->impl;
    struct rsn_client *r = enter(c, m, g->key, g->key_len);
    enum lock_result res = rsn_renew(c, &r->wire.scripts[SCRIPT_RENEW], g);
    c->impl = m;
    return res;
}

const struct lock_ops redisson_multi_ops = {
    .name = "redisson-multi",
    .summary = "Redisson's MultiLock: RLocks on independent masters (a key on master "
               "hash(key) mod N), all or none, unlocked and tried again from the first",
    .server = "redis",
    .family = &redlock_family,
    .defaults = {{"watchdog", "watchdog on (Redisson's lock() default)", "{\"watchdog\": true}"}},
    .reentrant = true,
    .connect = multi_connect,
    .disconnect = multi_close,
    .acquire = multi_acquire,
    .acquire_all = multi_acquire_all,
    .release = multi_release,
    .renew = multi_renew,
    .crash = multi_close, /* the sockets just close: every member keeps its hash until its lease */
};
