/* redisson_wire.c - Redisson's names, its pub/sub wait and its latched
 * unlock, shared by the Redisson family (see redisson_wire.h).
 *
 * The pub/sub connection is a second hiredis context in subscriber mode,
 * read through the seam as the command connection is. A waiter
 * subscribes, waits, and sends its UNSUBSCRIBE without waiting for the
 * answer: the next SUBSCRIBE reads past it (and past any message that was
 * already on its way) to its own confirmation, so a contended acquire
 * pays one round trip for the subscription, not two.
 */
#include "algorithms/redisson_wire.h"
#include "algorithms/redis.h"

#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_MS 1000000ULL
/* A waiter looks at the engine's cancel flag this often. */
#define CANCEL_SLICE_MS 50

const char rsn_renew_script[] =
    "local result = {} "
    "for i = 1, #KEYS do "
    "  if redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1 then "
    "    redis.call('pexpire', KEYS[i], ARGV[1]); table.insert(result, 1) "
    "  else table.insert(result, 0) end "
    "end "
    "return result";

/* KEYS: name, channel, latch; ARGV: message, lease, field, publish
 * command, latch lifetime. */
const char rsn_lock_unlock_script[] =
    "local done = redis.call('get', KEYS[3]) "
    "if done ~= false then return tonumber(done) end "
    "if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil end "
    "if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then "
    "  redis.call('pexpire', KEYS[1], ARGV[2]); "
    "  redis.call('set', KEYS[3], 0, 'px', ARGV[5]); return 0 "
    "end "
    "redis.call('del', KEYS[1]); "
    "redis.call(ARGV[4], KEYS[2], ARGV[1]); "
    "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); return 1";

/* KEYS: name; ARGV: lease, field. */
const char rsn_lock_acquire_script[] =
    "if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then "
    "  redis.call('hincrby', KEYS[1], ARGV[2], 1); "
    "  redis.call('pexpire', KEYS[1], ARGV[1]); return nil "
    "end "
    "return redis.call('pttl', KEYS[1])";

/* The WAIT after a grant, as lock.redis asks it (one Redis, or a master
 * behind sentinels). */
static void use_redis_waits(struct lock_client *c, struct rsn_client *r)
{
    r->wait_replicas = redis_settings(c->cfg)->wait_replicas;
    r->wait_timeout_ms = redis_settings(c->cfg)->wait_timeout_ms;
}

/* wire's script table, which its connections load and rsn_eval indexes. */
static void set_scripts(struct rsn_client *r, const char *const *scripts, size_t n_scripts)
{
    r->wire.n_scripts = n_scripts;
    for (size_t i = 0; i < n_scripts; i++)
        r->wire.scripts[i].body = scripts[i];
}

static void set_field(struct lock_client *c, struct rsn_client *r)
{
    int n = snprintf(r->field, sizeof(r->field), "%.*s:1", (int)c->owner_len, c->owner);
    r->field_len = n > 0 && (size_t)n < sizeof(r->field) ? (size_t)n : 0;
    n = snprintf(r->write_field, sizeof(r->write_field), "%s:write", r->field);
    r->write_field_len = n > 0 && (size_t)n < sizeof(r->write_field) ? (size_t)n : 0;
}

int rsn_open(struct lock_client *c, size_t size, const char *const *scripts, size_t n_scripts)
{
    int rc = wire_client_open(c, size, scripts, n_scripts,
                              c->cfg->n_sentinels ? wire_locate_master : NULL);
    struct rsn_client *r = c->impl;
    if (r) {
        set_field(c, r);
        use_redis_waits(c, r);
    }
    return rc;
}

int rsn_open_cluster(struct lock_client *c, size_t size, const char *const *scripts,
                     size_t n_scripts, bool sharded, uint32_t wait_replicas,
                     uint32_t wait_timeout_ms)
{
    struct rsn_client *r = calloc(1, size);
    if (r == NULL || n_scripts > WIRE_MAX_SCRIPTS || (r->cw = malloc(sizeof(*r->cw))) == NULL) {
        free(r);
        lock_set_error(c, LOCK_ERR_CONFIG, "out of memory or too many scripts");
        return -1;
    }
    c->impl = r;
    set_field(c, r);
    r->sharded = sharded;
    r->wait_replicas = wait_replicas;
    r->wait_timeout_ms = wait_timeout_ms;
    /* wire is never dialled: its script table names the scripts (rsn_eval
     * passes their index to the cluster client, which loads them on
     * every node it dials). */
    set_scripts(r, scripts, n_scripts);
    return cw_open(c, r->cw, scripts, n_scripts);
}

void rsn_close(struct lock_client *c)
{
    struct rsn_client *r = c->impl;
    if (r) {
        wire_close(&r->sub);
        if (r->cw)
            cw_close(r->cw);
        free(r->cw);
        r->cw = NULL;
    }
    wire_client_close(c);
}

/* How long a cluster between states is retried: the acquire's wait, or
 * one wait for an answer. */
static uint64_t cluster_deadline(const struct lock_client *c, const struct rsn_client *r)
{
    return r->deadline_ms ? r->deadline_ms : cw_io_deadline(c);
}

redisReply *rsn_eval(struct lock_client *c, struct wire_script *s, int nkeys, const char **keys,
                     const size_t *key_lens, int nargs, const char **args, const size_t *arg_lens)
{
    struct rsn_client *r = c->impl;
    if (r->cw == NULL)
        return wire_eval(c, &r->wire, s, nkeys, keys, key_lens, nargs, args, arg_lens);
    return cw_eval(c, r->cw, cw_key_slot(keys[0], key_lens[0]), cluster_deadline(c, r),
                   (size_t)(s - r->wire.scripts), nkeys, keys, key_lens, nargs, args, arg_lens);
}

/* A plain command about key, where the client sends its commands. */
static redisReply *call_on(struct lock_client *c, struct rsn_client *r, const char *key,
                           size_t key_len, int argc, const char **argv, const size_t *lens)
{
    if (r->cw == NULL)
        return wire_call(c, &r->wire, argc, argv, lens);
    return cw_call(c, r->cw, cw_key_slot(key, key_len), cluster_deadline(c, r), argc, argv, lens);
}

int rsn_attach(struct lock_client *c, struct rsn_client *r, const struct lock_endpoint *ep,
               const char *const *scripts, size_t n_scripts)
{
    if (n_scripts > WIRE_MAX_SCRIPTS) {
        lock_set_error(c, LOCK_ERR_CONFIG, "at most %d scripts", WIRE_MAX_SCRIPTS);
        return -1;
    }
    r->wire.ep = ep;
    set_scripts(r, scripts, n_scripts);
    set_field(c, r);
    use_redis_waits(c, r);
    return wire_connect(c, &r->wire);
}

void rsn_detach(struct rsn_client *r)
{
    wire_close(&r->sub);
    wire_close(&r->wire);
    r->channel[0] = '\0';
}

/* Names are built on every unlock: by hand, not by snprintf, which
 * cost a quarter of the lock cycle's instructions. */
size_t rsn_prefix_name(char *out, const char *prefix, const char *name, size_t len)
{
    bool tagged = memchr(name, '{', len) != NULL;
    size_t pl = strlen(prefix), n = pl + 1 + len + (tagged ? 0 : 2);
    if (n >= RSN_NAME_MAX)
        return 0;
    char *at = out;
    memcpy(at, prefix, pl);
    at += pl;
    *at++ = ':';
    if (!tagged)
        *at++ = '{';
    memcpy(at, name, len);
    at += len;
    if (!tagged)
        *at++ = '}';
    *at = '\0';
    return n;
}

/* 16 lower-case hex digits of v at out. */
static void put_hex64(char *out, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--, v >>= 4)
        out[i] = digits[v & 15];
}

/* --- the pub/sub connection -------------------------------------------- */

static bool same_endpoint(const struct lock_endpoint *a, const struct lock_endpoint *b)
{
    return a->port == b->port && strcmp(a->host, b->host) == 0;
}

/* The words of the pub/sub in use: sharded (a slot's own channels,
 * served by its master) or not. */
struct sub_words {
    const char *subscribe, *unsubscribe, *message;
};
static const struct sub_words plain_words = {"subscribe", "unsubscribe", "message"};
static const struct sub_words shard_words = {"ssubscribe", "sunsubscribe", "smessage"};

static const struct sub_words *words(const struct rsn_client *r)
{
    return r->sharded ? &shard_words : &plain_words;
}

/* Where a waiter on key listens: where the commands go, a master named
 * by the sentinels too, or in cluster mode the master of key's slot,
 * which is where its unlock is published. NULL, with c->err set, when
 * the slot map names none. */
static const struct lock_endpoint *sub_target(struct lock_client *c, struct rsn_client *r,
                                              const char *key, size_t key_len)
{
    if (r->cw == NULL)
        return r->wire.ep;
    int k = cw_node_of(r->cw, cw_key_slot(key, key_len));
    if (k < 0) {
        lock_set_error(c, LOCK_ERR_UNSENT, "no node of the cluster serves the lock's slot");
        return NULL;
    }
    return &r->cw->node[k].dial; /* dialled through the address map */
}

static int sub_connect(struct lock_client *c, struct rsn_client *r, const struct lock_endpoint *to)
{
    /* The kept connection follows the master after a failover; left on
     * the old one it would listen where no unlock is published. The
     * sub's own copy of where it was dialled (its master, unused
     * otherwise), as wire.ep points into the wire, which a redial moves. */
    if (r->sub.ctx && !r->sub.ctx->err && same_endpoint(&r->sub.master, to))
        return 0;
    r->sub.master = *to;
    r->sub.ep = &r->sub.master;
    r->channel[0] = '\0';
    return wire_connect(c, &r->sub);
}

static void sub_broken(struct lock_client *c, struct rsn_client *r, const char *what)
{
    lock_set_error(c, LOCK_ERR_IO, "%s: %s", what,
                   r->sub.ctx && r->sub.ctx->errstr[0] ? r->sub.ctx->errstr : "connection lost");
    wire_drop(c, &r->sub);
    r->channel[0] = '\0';
}

/* The next push on sub by deadline_ns: 1 with *reply, 0 none by then,
 * -1 the connection failed (ctx->err set). */
static int sub_read(struct lock_client *c, redisContext *ctx, uint64_t deadline_ns, void **reply)
{
    *reply = NULL;
    for (;;) {
        if (redisGetReplyFromReader(ctx, reply) != REDIS_OK)
            return -1;
        if (*reply)
            return 1;
        struct pollfd p = {.fd = ctx->fd, .events = POLLIN};
        int rc = lock_wait(c, &p, 1, deadline_ns);
        if (rc == 0)
            return 0;
        if (rc < 0 || redisBufferRead(ctx) != REDIS_OK)
            return -1;
    }
}

/* Is r a pub/sub push of this kind ("message", "subscribe") on channel? */
static bool is_push(const redisReply *r, const char *kind, const char *channel)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
           r->element[0]->type == REDIS_REPLY_STRING && strcmp(r->element[0]->str, kind) == 0 &&
           r->element[1]->type == REDIS_REPLY_STRING && strcmp(r->element[1]->str, channel) == 0;
}

/* One subscription attempt (subscribe's): 0, -1 the connection broke or
 * could not be had, -2 no confirmation in time, -3 refused (a node that
 * does not serve the channel's slot: MOVED); c->err set. */
static int subscribe_once(struct lock_client *c, struct rsn_client *r, const char *channel,
                          const struct lock_endpoint *to)
{
    if (sub_connect(c, r, to) < 0)
        return -1;
    if (strcmp(r->channel, channel) == 0)
        return 0;
    redisContext *ctx = r->sub.ctx;
    const struct sub_words *w = words(r);
    if (r->channel[0] && redisAppendCommand(ctx, "%s %s", w->unsubscribe, r->channel) != REDIS_OK)
        return sub_broken(c, r, "UNSUBSCRIBE"), -1;
    r->channel[0] = '\0';
    if (redisAppendCommand(ctx, "%s %s", w->subscribe, channel) != REDIS_OK ||
        wire_flush(c, ctx, c->cfg->io_timeout_ms) != REDIS_OK)
        return sub_broken(c, r, "SUBSCRIBE"), -1;
    uint64_t deadline = c->cfg->io_timeout_ms
                            ? lock_now_ns() + (uint64_t)c->cfg->io_timeout_ms * NS_PER_MS
                            : LOCK_FOREVER;
    for (;;) {
        void *reply;
        int rc = sub_read(c, ctx, deadline, &reply);
        if (rc <= 0) {
            if (rc == 0)
                snprintf(ctx->errstr, sizeof(ctx->errstr), "no confirmation in time");
            sub_broken(c, r, "SUBSCRIBE");
            return rc == 0 ? -2 : -1;
        }
        const redisReply *rp = reply;
        if (rp->type == REDIS_REPLY_ERROR) {
            lock_set_error(c, LOCK_ERR_UNSENT, "%s: %s", w->subscribe, rp->str);
            freeReplyObject(reply);
            return -3; /* the connection is sound: it stays */
        }
        bool mine = is_push(rp, w->subscribe, channel);
        freeReplyObject(reply);
        if (mine)
            break;
    }
    snprintf(r->channel, sizeof(r->channel), "%s", channel);
    return 0;
}

/* Subscribe sub to channel (leaving the one it was on), and wait for the
 * confirmation, past older pushes. 0, or -1 with c->err set. */
static int subscribe(struct lock_client *c, struct rsn_client *r, const char *channel,
                     const char *key, size_t key_len)
{
    /* The kept connection sat idle since the last wait: a server that
     * restarted, or closed it at its idle timeout, meanwhile shows only
     * now, as the SUBSCRIBE reads end-of-file. Dial once more rather than
     * fail an acquire that a fresh connection serves (Redisson's pub/sub
     * reconnects). A confirmation that did not come in time is not tried
     * again: that would double the wait. */
    /* A node that no longer serves the slot refuses a sharded
     * subscription with MOVED: the map is asked again, and the
     * subscription made once more where it now points. */
    bool kept = r->sub.ctx != NULL && r->sub.ctx->err == 0;
    const struct lock_endpoint *to = sub_target(c, r, key, key_len);
    int rc = to ? subscribe_once(c, r, channel, to) : -1;
    if ((rc == -1 && kept) || (rc == -3 && r->cw && cw_refresh(c, r->cw) == 0)) {
        to = sub_target(c, r, key, key_len);
        rc = to ? subscribe_once(c, r, channel, to) : -1;
    }
    return rc == 0 ? 0 : -1;
}

/* Leave the channel without waiting for the answer (see the top). */
static void unsubscribe(struct lock_client *c, struct rsn_client *r)
{
    if (r->channel[0] == '\0' || r->sub.ctx == NULL || r->sub.ctx->err)
        return;
    if (redisAppendCommand(r->sub.ctx, "%s %s", words(r)->unsubscribe, r->channel) != REDIS_OK ||
        wire_flush(c, r->sub.ctx, c->cfg->io_timeout_ms) != REDIS_OK) {
        sub_broken(c, r, "UNSUBSCRIBE");
        return;
    }
    r->channel[0] = '\0';
}

/* Wait for a message on the subscribed channel until until_ns, looking
 * at the cancel flag now and then. 1 a message came, 0 none (the time
 * ran out or the run is being stopped), -1 the connection broke. */
static int await_message(struct lock_client *c, struct rsn_client *r, uint64_t until_ns)
{
    while (!lock_cancelled(c)) {
        uint64_t now = lock_now_ns();
        if (now >= until_ns)
            return 0;
        uint64_t slice = now + CANCEL_SLICE_MS * NS_PER_MS;
        void *reply;
        int rc = sub_read(c, r->sub.ctx, slice < until_ns ? slice : until_ns, &reply);
        if (rc < 0) {
            sub_broken(c, r, "pub/sub");
            return -1;
        }
        if (rc == 0)
            continue;
        /* LockPubSub wakes a waiter on its two messages only; a
         * semaphore's channel carries counts, and any of them wakes. */
        const redisReply *m = reply;
        if (is_push(m, "sunsubscribe", r->channel)) {
            /* The slot left this node (a failover, a migration): nothing
             * more is published here. The next try subscribes again, where
             * the map then points. */
            freeReplyObject(reply);
            r->channel[0] = '\0';
            if (r->cw)
                r->cw->stale = true;
            return 0;
        }
        bool msg = is_push(m, words(r)->message, r->channel) &&
                   m->element[2]->type == REDIS_REPLY_STRING &&
                   (r->any_message || strcmp(m->element[2]->str, RSN_UNLOCK_MESSAGE) == 0 ||
                    strcmp(m->element[2]->str, RSN_READ_UNLOCK_MESSAGE) == 0);
        freeReplyObject(reply);
        if (msg)
            return 1;
    }
    return 0;
}

/* --- acquire ------------------------------------------------------------ */

/* After a won try: WAIT for the client's wait_replicas (Redisson's
 * checkLockSyncedSlaves). 0 kept; -1 short of them and undone, or no
 * answer (c->err says which). */
static int synced(struct lock_client *c, struct lock_grant *g)
{
    struct rsn_client *r = c->impl;
    char n[21], ms[21];
    const char *argv[3] = {"WAIT", n, ms};
    size_t lens[3] = {4, wire_u64(n, r->wait_replicas), wire_u64(ms, r->wait_timeout_ms)};
    uint64_t drops = c->connect_failures;
    redisReply *rep = call_on(c, r, g->key, g->key_len, 3, argv, lens);
    if (c->connect_failures != drops && (rep != NULL || c->err == LOCK_ERR_UNSENT)) {
        /* The try's connection went before the WAIT was sent (found
         * closed, or lost): a WAIT on another connection counts none of
         * its writes, and "unsent" would say nothing happened, yet the
         * lock is taken. Unknown, as a lost answer is. */
        char why[LOCK_ERRSTR_MAX];
        snprintf(why, sizeof(why), "%s", rep ? "sent on a new connection" : c->errstr);
        if (rep)
            freeReplyObject(rep);
        lock_set_error(c, LOCK_ERR_IO, "lock taken, then WAIT: %s", why);
        return -1;
    }
    if (rep == NULL)
        return -1; /* the lock may be ours: c->err says the answer was lost */
    long long acked = rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
    freeReplyObject(rep);
    if (acked >= (long long)r->wait_replicas)
        return 0;
    /* Redisson unlocks what it took (handleNoSync) and fails the call. */
    enum lock_result back = c->ops->release(c, g);
    if (back != LOCK_ERR)
        lock_set_error(c, LOCK_ERR_REFUSED,
                       "WAIT: %lld of %" PRIu32 " replicas had the lock after %" PRIu32
                       " ms; unlocked again",
                       acked < 0 ? 0 : acked, r->wait_replicas, r->wait_timeout_ms);
    return -1;
}

static enum lock_result granted(struct lock_client *c, const char *key, size_t key_len,
                                uint32_t ttl_ms, uint64_t sent_ms, uint64_t token,
                                struct lock_grant *g)
{
    g->key = key;
    g->key_len = key_len;
    g->token = token;
    g->ttl_ms = ttl_ms;
    if (((const struct rsn_client *)c->impl)->wait_replicas > 0 && synced(c, g) < 0)
        return LOCK_ERR;
    /* The hash started expiring no earlier than when the try was sent. */
    g->validity_ms = wire_validity(ttl_ms, sent_ms);
    return LOCK_OK;
}

static enum lock_result acquire_by(struct lock_client *c, struct rsn_client *r, rsn_try_fn try_once,
                                   rsn_channel_fn channel, const char *key, size_t key_len,
                                   uint32_t ttl_ms, uint64_t deadline, struct lock_grant *g)
{
    char ch[RSN_NAME_MAX];
    for (bool first = true;; first = false) {
        uint64_t sent = lock_now_ms(), token = 0;
        int64_t left = -1;
        int won = try_once(c, key, key_len, ttl_ms, &token, &left);
        if (won != 0 && !first)
            unsubscribe(c, r);
        if (won < 0)
            return LOCK_ERR;
        if (won)
            return granted(c, key, key_len, ttl_ms, sent, token, g);
        uint64_t now = lock_now_ms();
        if (now >= deadline || lock_cancelled(c)) {
            unsubscribe(c, r);
            return LOCK_BUSY;
        }
        if (r->channel[0] == '\0') {
            /* Subscribed before the next try, so no unlock between the two
             * goes unheard; a failed subscription fails the acquire, as
             * Redisson's tryLock does, having taken nothing. */
            if (channel(c, key, key_len, ch) == 0 || subscribe(c, r, ch, key, key_len) < 0) {
                c->err = LOCK_ERR_UNSENT;
                return LOCK_ERR;
            }
            continue;
        }
        /* A holder that dies publishes nothing: its ttl bounds the wait. */
        uint64_t until = deadline;
        if (left >= 0 && now + (uint64_t)left < until)
            until = now + (uint64_t)left;
        int m = await_message(c, r, until * NS_PER_MS);
        if (m > 0)
            c->woken_by_notice++;
        else
            c->woken_by_timer++;
    }
}

enum lock_result rsn_acquire(struct lock_client *c, rsn_try_fn try_once, rsn_channel_fn channel,
                             const char *key, size_t key_len, uint32_t ttl_ms, uint32_t wait_ms,
                             struct lock_grant *g)
{
    struct rsn_client *r = c->impl;
    uint64_t deadline = lock_now_ms() + wait_ms;
    r->deadline_ms = deadline;
    enum lock_result res = acquire_by(c, r, try_once, channel, key, key_len, ttl_ms, deadline, g);
    r->deadline_ms = 0;
    return res;
}

int rsn_lock_try(struct lock_client *c, const char *key, size_t key_len, uint32_t ttl_ms,
                 uint64_t *token, int64_t *left)
{
    struct rsn_client *r = c->impl;
    char ttl[21];
    const char *keys[1] = {key};
    size_t klens[1] = {key_len};
    const char *args[2] = {ttl, r->field};
    size_t alens[2] = {wire_u64(ttl, ttl_ms), r->field_len};
    redisReply *rep = rsn_eval(c, &r->wire.scripts[0], 1, keys, klens, 2, args, alens);
    if (rep == NULL)
        return -1;
    int won = -1;
    *token = 0;
    if (rep->type == REDIS_REPLY_NIL)
        won = 1;
    else if (rep->type == REDIS_REPLY_INTEGER)
        won = 0, *left = rep->integer;
    else
        lock_set_error(c,
                       rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "READONLY", 8) == 0
                           ? LOCK_ERR_REFUSED
                           : LOCK_ERR_PROTOCOL,
                       "lock: %s", rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    if (won < 0 && c->err == LOCK_ERR_REFUSED && r->cw == NULL)
        wire_drop(c, &r->wire); /* a demoted master: ask the sentinels again */
    freeReplyObject(rep);
    return won;
}

/* --- unlock and renew --------------------------------------------------- */

size_t rsn_new_latch(struct lock_client *c, const char *key, size_t key_len)
{
    struct rsn_client *r = c->impl;
    size_t n = rsn_prefix_name(r->latch, "redisson_unlock_latch", key, key_len);
    if (n == 0 || n + 1 + 32 >= sizeof(r->latch)) {
        lock_set_error(c, LOCK_ERR_CONFIG, "lock name too long");
        return 0;
    }
    /* the request id: 32 hex digits, as Redisson's generateId */
    r->latch[n] = ':';
    put_hex64(r->latch + n + 1, lock_random(c, UINT64_MAX));
    put_hex64(r->latch + n + 17, lock_random(c, UINT64_MAX));
    r->latch[n + 33] = '\0';
    return n + 33;
}

void rsn_unlock_args(struct lock_client *c, uint32_t ttl_ms, const char *message, const char **args,
                     size_t *lens, char scratch[2][21])
{
    struct rsn_client *r = c->impl;
    /* The latch outlives every retry of the unlock: Redisson's
     * (timeout + retry delay) x attempts, here two tries of io_timeout. */
    uint64_t latch_ms = 2ULL * (c->cfg->io_timeout_ms ? c->cfg->io_timeout_ms : 1000);
    args[0] = message, lens[0] = strlen(message);
    args[1] = scratch[0], lens[1] = wire_u64(scratch[0], ttl_ms);
    args[2] = r->field, lens[2] = r->field_len;
    args[3] = r->sharded ? "spublish" : "publish", lens[3] = strlen(args[3]);
    args[4] = scratch[1], lens[4] = wire_u64(scratch[1], latch_ms);
}

/* Answered: 1, 0 or -2 as rsn_unlock_eval's; -1 an error reply. */
static int unlock_answer(struct lock_client *c, const redisReply *rep)
{
    if (rep->type == REDIS_REPLY_NIL)
        return -2;
    if (rep->type == REDIS_REPLY_INTEGER && (rep->integer == 0 || rep->integer == 1))
        return (int)rep->integer;
    lock_set_error(c, LOCK_ERR_PROTOCOL, "unlock: %s",
                   rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    return -1;
}

int rsn_unlock_eval(struct lock_client *c, struct wire_script *s, int nkeys, const char **keys,
                    const size_t *key_lens, int nargs, const char **args, const size_t *arg_lens)
{
    struct rsn_client *r = c->impl;
    /* Not sent again after a lost answer: Redisson's unlock runs "no
     * retry" (evalWriteSyncedNoRetryAsync); its latch covers the re-run
     * its synced eval makes when the replicas it counted changed. */
    redisReply *rep = rsn_eval(c, s, nkeys, keys, key_lens, nargs, args, arg_lens);
    if (rep == NULL)
        return -1;
    int res = unlock_answer(c, rep);
    freeReplyObject(rep);
    /* Redisson deletes the latch once it has its answer, not waiting for
     * this one: nor does the next request wait for its reply alone. */
    const char *argv[2] = {"DEL", r->latch};
    size_t lens[2] = {3, strlen(r->latch)};
    if (r->cw)
        cw_send(c, r->cw, cw_key_slot(r->latch, lens[1]), 2, argv, lens);
    else
        wire_send(c, &r->wire, 2, argv, lens);
    return res;
}

enum lock_result rsn_renew(struct lock_client *c, struct wire_script *s, struct lock_grant *g)
{
    struct rsn_client *r = c->impl;
    return rsn_renew_field(c, s, g, r->field, r->field_len);
}

enum lock_result rsn_renew_field(struct lock_client *c, struct wire_script *s, struct lock_grant *g,
                                 const char *field, size_t field_len)
{
    char ttl[21];
    const char *keys[1] = {g->key};
    size_t klens[1] = {g->key_len};
    const char *args[2] = {ttl, field};
    size_t alens[2] = {wire_u64(ttl, g->ttl_ms), field_len};
    uint64_t sent = lock_now_ms();
    return rsn_renew_answer(c, rsn_eval(c, s, 1, keys, klens, 2, args, alens), g, sent);
}

enum lock_result rsn_renew_answer(struct lock_client *c, redisReply *rep, struct lock_grant *g,
                                  uint64_t sent_ms)
{
    if (rep == NULL)
        return LOCK_ERR;
    enum lock_result res = LOCK_ERR;
    if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 1 &&
        rep->element[0]->type == REDIS_REPLY_INTEGER)
        res = rep->element[0]->integer == 1 ? LOCK_OK : LOCK_LOST;
    else
        lock_set_error(c, LOCK_ERR_PROTOCOL, "renew: %s",
                       rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    freeReplyObject(rep);
    if (res == LOCK_OK)
        g->validity_ms = wire_validity(g->ttl_ms, sent_ms);
    return res;
}

size_t rsn_rw_channel(struct lock_client *c, const char *key, size_t key_len, char *out)
{
    (void)c;
    return rsn_prefix_name(out, "redisson_rwlock", key, key_len);
}

size_t rsn_lock_channel(struct lock_client *c, const char *key, size_t key_len, char *out)
{
    (void)c;
    return rsn_prefix_name(out, "redisson_lock__channel", key, key_len);
}

enum lock_result rsn_lock_release(struct lock_client *c, struct wire_script *s,
                                  const struct lock_grant *g)
{
    struct rsn_client *r = c->impl;
    char channel[RSN_NAME_MAX], scratch[2][21];
    size_t ch_len = rsn_lock_channel(c, g->key, g->key_len, channel);
    size_t latch_len = rsn_new_latch(c, g->key, g->key_len);
    if (ch_len == 0 || latch_len == 0) {
        lock_set_error(c, LOCK_ERR_UNSENT, "lock name too long");
        return LOCK_ERR;
    }
    const char *keys[3] = {g->key, channel, r->latch};
    size_t klens[3] = {g->key_len, ch_len, latch_len};
    const char *args[5];
    size_t alens[5];
    rsn_unlock_args(c, g->ttl_ms, RSN_UNLOCK_MESSAGE, args, alens, scratch);
    int res = rsn_unlock_eval(c, s, 3, keys, klens, 5, args, alens);
    return res >= 0 ? LOCK_OK : res == -2 ? LOCK_LOST : LOCK_ERR;
}
