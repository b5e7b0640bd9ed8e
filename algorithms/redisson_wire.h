/* redisson_wire.h - what Redisson's locks share on the wire: the names
 * of their keys and channels, the hash field that says who holds, the
 * pub/sub connection a waiter listens on, Redisson's wait (try, subscribe,
 * try again, sleep until an unlock message or the holder's ttl) and its
 * unlock with a latch.
 *
 * Client-library code on top of redis_wire.h: redisson.c,
 * redisson_fenced.c and the rest of the family include it, none includes
 * another. Key names, fields, messages and scripts are Redisson's, so a
 * Java service on Redisson and a locklab run contend on one lock.
 */
#ifndef LOCKLAB_REDISSON_WIRE_H
#define LOCKLAB_REDISSON_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "algorithms/redis_cluster_wire.h"
#include "algorithms/redis_wire.h"

/* Room for a derived name: a prefix, the lock's name, a suffix. */
#define RSN_NAME_MAX 384

/* Redisson's LockPubSub messages. */
#define RSN_UNLOCK_MESSAGE      "0"
#define RSN_READ_UNLOCK_MESSAGE "1"

/* One client's connections. A family member's client state is a struct
 * whose first member is this one. */
struct rsn_client {
    struct redis_wire wire;     /* commands; first: wire_client_open allocates the whole */
    struct redis_wire sub;      /* pub/sub, dialled at the first wait and kept */
    char channel[RSN_NAME_MAX]; /* subscribed to on sub; "" none */
    bool any_message;           /* every message wakes a waiter (a semaphore's counts), not
                                   only LockPubSub's unlock messages */
    /* Redisson's getLockName(threadId): "<client id>:<thread id>". A
     * locklab client is one thread of one Redisson instance: its owner
     * value (unique per client life) is the instance id, its thread 1. */
    char field[LOCK_OWNER_MAX + 4];
    size_t field_len;
    /* RedissonWriteLock's getLockName: "<field>:write" (the read-write
     * locks' writer field). */
    char write_field[LOCK_OWNER_MAX + 10];
    size_t write_field_len;
    char latch[RSN_NAME_MAX]; /* the unlock latch being used */
    /* Redisson's checkLockSyncedSlaves after a won try: WAIT for this
     * many replicas (0: none), this long. */
    uint32_t wait_replicas, wait_timeout_ms;
    /* Cluster mode (rsn_open_cluster): each command goes to the master of
     * its first key's slot, and a waiter listens on that master; NULL:
     * every command goes on wire. */
    struct cluster_wire *cw;
    /* Sharded pub/sub: SPUBLISH in the unlock script, SSUBSCRIBE to wait
     * (Redisson in cluster mode on a Redis that has them); else PUBLISH
     * and SUBSCRIBE. */
    bool sharded;
    uint64_t deadline_ms; /* the acquire's under way (0: none): how long a cluster
                             between states (TRYAGAIN, CLUSTERDOWN) is retried */
};

/* Open: allocate size zeroed bytes as c->impl (a struct that begins with
 * struct rsn_client), connect, load the scripts, set the field. Behind
 * sentinels the master is asked of them before each dial. 0, or -1 with
 * c->err set (rsn_close frees a half-built client). */
int rsn_open(struct lock_client *c, size_t size, const char *const *scripts, size_t n_scripts);
/* rsn_open's cluster mode: seed the slot map from c's endpoints (any
 * nodes of the cluster) instead of dialling one server; the waits and
 * the pub/sub as given. 0, or -1 with c->err set (rsn_close frees). */
int rsn_open_cluster(struct lock_client *c, size_t size, const char *const *scripts,
                     size_t n_scripts, bool sharded, uint32_t wait_replicas,
                     uint32_t wait_timeout_ms);
/* Close both connections (in cluster mode, every node's) and free
 * c->impl; also the crash (the sockets just close, nothing is released). */
void rsn_close(struct lock_client *c);

/* Script s (one of r->wire.scripts) with these keys and args, where the
 * client sends its commands: on wire, or in cluster mode to the master
 * of the first key's slot (all its keys must share it), redirections
 * followed. wire_eval's contract: NULL when no answer came. */
redisReply *rsn_eval(struct lock_client *c, struct wire_script *s, int nkeys, const char **keys,
                     const size_t *key_lens, int nargs, const char **args, const size_t *arg_lens);

/* A client of several masters (redisson-multi) keeps one struct
 * rsn_client per master inside its own state and points c->impl at the
 * one it is talking to around each call of the functions below (they all
 * read c->impl). rsn_attach sets up such a zeroed r on ep with its
 * scripts and field and connects: 0, or -1 with c->err set (r stays
 * usable: its next call dials again). rsn_detach closes both of r's
 * connections (nothing is released). */
int rsn_attach(struct lock_client *c, struct rsn_client *r, const struct lock_endpoint *ep,
               const char *const *scripts, size_t n_scripts);
void rsn_detach(struct rsn_client *r);

/* RedissonObject.prefixName: "<prefix>:{<name>}", or "<prefix>:<name>"
 * when the name already holds a hash tag. The length, 0 when it does
 * not fit in RSN_NAME_MAX. */
size_t rsn_prefix_name(char *out, const char *prefix, const char *name, size_t len);

/* One try at the lock: 1 won (*token set: 0 when none), 0 busy with
 * *ttl_ms the holder's remaining PTTL (-1: none known), -1 error with
 * c->err set. */
typedef int (*rsn_try_fn)(struct lock_client *c, const char *key, size_t key_len, uint32_t ttl_ms,
                          uint64_t *token, int64_t *ttl_ms_left);
/* The channel a waiter of key listens on, into out (RSN_NAME_MAX): its
 * length, 0 when it does not fit. */
typedef size_t (*rsn_channel_fn)(struct lock_client *c, const char *key, size_t key_len, char *out);

/* RedissonLock.tryLock(waitTime): try; while busy and time is left,
 * subscribe to the key's channel, try again, then wait for a message on
 * it, at most the holder's ttl (a holder that dies publishes nothing: its
 * key expires) and the time left; unsubscribe at the end. Wake-ups are
 * counted in c->woken_by_notice / woken_by_timer. After a won try with
 * wait_replicas, WAIT (Redisson's checkLockSyncedSlaves) on the master that
 * granted it: short of them, unlock once (undo) and fail refused. */
enum lock_result rsn_acquire(struct lock_client *c, rsn_try_fn try_once, rsn_channel_fn channel,
                             const char *key, size_t key_len, uint32_t ttl_ms, uint32_t wait_ms,
                             struct lock_grant *g);

/* A fresh unlock latch for key: "redisson_unlock_latch:{<name>}:<request
 * id>", into the client's latch; its length (0: too long, c->err set).
 * Redisson's unlocks take it as a key: while it exists it holds what the
 * unlock answered, so an unlock retried after a lost answer answers as
 * the first did instead of unlocking twice. */
size_t rsn_new_latch(struct lock_client *c, const char *key, size_t key_len);
/* Run an unlock script (its keys include the latch made just before),
 * then delete the latch. 1 freed, 0 still held (a re-entry left), -2 not ours (nil),
 * -1 no answer or an error reply (c->err set). */
int rsn_unlock_eval(struct lock_client *c, struct wire_script *s, int nkeys, const char **keys,
                    const size_t *key_lens, int nargs, const char **args, const size_t *arg_lens);
/* The args RLock's unlock takes after its keys: the message, the lease,
 * the field, "publish", the latch's lifetime; into args / lens [0..5),
 * numbers written in scratch. */
void rsn_unlock_args(struct lock_client *c, uint32_t ttl_ms, const char *message, const char **args,
                     size_t *lens, char scratch[2][21]);

/* Redisson's renewal (renewal/LockTask): PEXPIRE only while our field
 * exists. LOCK_OK, LOCK_LOST (gone), LOCK_ERR. */
enum lock_result rsn_renew(struct lock_client *c, struct wire_script *s, struct lock_grant *g);
/* A renewal script's answer (freed here; NULL: none came): {1} renewed,
 * its validity counted from sent_ms; {0} gone (LOST); else LOCK_ERR. */
enum lock_result rsn_renew_answer(struct lock_client *c, redisReply *rep, struct lock_grant *g,
                                  uint64_t sent_ms);
/* The same for another field of ours (a write lock's "<field>:write"). */
enum lock_result rsn_renew_field(struct lock_client *c, struct wire_script *s, struct lock_grant *g,
                                 const char *field, size_t field_len);

/* The renewal script's body, for a family member's script table. */
extern const char rsn_renew_script[];

/* RLock's acquire script (KEYS: name; ARGV: lease, field), and the
 * rsn_try_fn that runs it, which must be the client's first script
 * (wire.scripts[0]). */
extern const char rsn_lock_acquire_script[];
int rsn_lock_try(struct lock_client *c, const char *key, size_t key_len, uint32_t ttl_ms,
                 uint64_t *token, int64_t *left);

/* RLock's own unlock, which RFencedLock inherits: its script's body, the
 * channel its waiters listen on ("redisson_lock__channel:{<name>}", an
 * rsn_channel_fn), and the release made of them: LOCK_OK when unlocked
 * or one re-entry fewer, LOCK_LOST when the field was not there. */
extern const char rsn_lock_unlock_script[];
/* The read-write locks' channel, "redisson_rwlock:{<name>}" (an
 * rsn_channel_fn). */
size_t rsn_rw_channel(struct lock_client *c, const char *key, size_t key_len, char *out);
size_t rsn_lock_channel(struct lock_client *c, const char *key, size_t key_len, char *out);
enum lock_result rsn_lock_release(struct lock_client *c, struct wire_script *s,
                                  const struct lock_grant *g);

/* --- RCountDownLatch (redisson_latch_wire.c) ---------------------------- */

/* CountDownLatchPubSub's messages: the count reached zero, a new count
 * was set. */
#define RSN_LATCH_ZERO_MESSAGE "0"
#define RSN_LATCH_NEW_MESSAGE  "1"

/* The latch's scripts, for a latch's script table: trySetCount (KEYS:
 * name, channel; ARGV: new-count message, count, publish command) and
 * countDown (KEYS: name, channel; ARGV: zero message, publish command). */
extern const char rsn_latch_set_script[];
extern const char rsn_latch_down_script[];
/* delete (KEYS: name, channel; ARGV: new-count message, publish
 * command): DEL, publishing only when there was one. */
extern const char rsn_latch_delete_script[];
/* "redisson_countdownlatch__channel__{<name>}", braces even around a
 * name that holds a hash tag (an rsn_channel_fn). */
size_t rsn_latch_channel(struct lock_client *c, const char *key, size_t key_len, char *out);
/* trySetCount / countDown with script s (one of the client's): as
 * struct latch_ops's set_count / count_down. */
enum lock_result rsn_latch_set(struct lock_client *c, struct wire_script *s, const char *key,
                               size_t key_len, uint32_t count);
enum lock_result rsn_latch_down(struct lock_client *c, struct wire_script *s, const char *key,
                                size_t key_len);
/* delete with script s: as struct latch_ops's remove. */
enum lock_result rsn_latch_delete(struct lock_client *c, struct wire_script *s, const char *key,
                                  size_t key_len);
/* getCount: GET of the name, a missing one 0 (Redisson's GET_LONG). 0
 * with *count set, or -1 with c->err set. */
int rsn_latch_count(struct lock_client *c, const char *key, size_t key_len, int64_t *count);

#endif
