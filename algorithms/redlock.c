/* redlock.c - Redlock as redis.io's "Distributed Locks with Redis" states it.
 *
 * N independent Redis masters (default 5), one owner value on all of them.
 * A round sends SET key owner NX PX ttl to every node at once and collects
 * the answers for at most node_timeout_ms (small against the ttl), so a
 * round costs about one node's latency, and a node that is down or paused
 * is a no-vote rather than a stall. The lock is ours with a quorum
 * (N/2+1 unless configured) and a positive validity:
 *     validity = ttl - elapsed - drift,  drift = ttl * 0.01 + 2 ms,
 * elapsed counted from just before the round was sent. A failed round
 * deletes our value on every node (compare-and-delete, so a node that did
 * say yes does not keep the key until it expires) and is retried after a
 * random delay until wait_ms has passed: then LOCK_BUSY, whether the other
 * votes went to another owner or to nodes that are down; LOCK_ERR only when
 * no node took the request (all refuse) or none answered in any round of
 * the wait. A round no node answered is retried like any failed round: on
 * a loaded host the live nodes can miss one node timeout. A failed round's
 * release goes to the nodes that said yes and to those that went silent
 * after taking the SET (they may have run it). Release and extend are the same fan-out
 * with the compare-and-delete / compare-and-pexpire scripts, and each node's
 * answer is one of three: 1 (done: it was ours), 0 (definitely not ours
 * there: expired or taken), or none (silent past its timeout, connection
 * broken or refused, an error reply): then the script may or may not have
 * run. Release and extend are LOCK_OK on a quorum of 1s; LOCK_LOST only
 * when the 0s alone make a quorum impossible (1s + unknowns < quorum), as
 * lock.h promises LOST only when the servers said so; anything between is
 * LOCK_ERR, "outcome unknown", with the counts in errstr. An extend whose
 * quorum came back too late (no validity left) is LOST too. Redlock has no
 * fencing token (Kleppmann's point).
 *
 * A timed-out node's connection is dropped (a late answer would put it out
 * of step) and counted in c->connect_failures, as is every failed dial; a
 * node that refuses connections is left alone for a moment instead of
 * being redialled on every round.
 */
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/redis_wire.h"
#include "algorithms/redlock.h"

#define REDIAL_MS 200 /* how long a refusing node is left alone */

enum { SCRIPT_RELEASE, SCRIPT_EXTEND, N_SCRIPTS };

static const char *const script_bodies[N_SCRIPTS] = {
    [SCRIPT_RELEASE] = "if redis.call('get', KEYS[1]) == ARGV[1] then "
                       "return redis.call('del', KEYS[1]) end return 0",
    [SCRIPT_EXTEND] = "if redis.call('get', KEYS[1]) == ARGV[1] then "
                      "return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0",
};

struct node {
    struct redis_wire wire;
    uint64_t redial_at_ms; /* 0: may dial now */
    bool pending;          /* a request of this round awaits its answer */
    redisReply *reply;     /* this round's answer, NULL: no vote */
    int fault;             /* this round, no answer: why (enum lock_errcode) */
};

/* A script round on every node, counted for release and extend. */
struct tally {
    size_t yes;     /* answered 1: done there */
    size_t unknown; /* no definite answer: the script may or may not have run */
    int err;        /* the most telling enum lock_errcode among the unknown */
};

struct redlock {
    struct node node[LOCK_ENDPOINT_MAX];
    size_t n;
    struct lock_config node_cfg; /* the run's config with per-node timeouts */
};

/* lock.redlock, as the run resolved it (all zero: the fallbacks below). */
static const struct redlock_spec *settings_of(const struct lock_client *c)
{
    return lock_settings(c->cfg, &redlock_family);
}

static size_t quorum(const struct lock_client *c, const struct redlock *rl)
{
    return settings_of(c)->quorum ? settings_of(c)->quorum : rl->n / 2 + 1;
}

/* What the holder may assume after a round that took elapsed ms since it
 * began: ttl - elapsed - drift, drift = ttl/100 + 2 ms; 0 when nothing. */
static uint32_t validity(uint32_t ttl_ms, uint64_t elapsed_ms)
{
    uint64_t spent = elapsed_ms + ttl_ms / 100 + 2;
    return spent < ttl_ms ? ttl_ms - (uint32_t)spent : 0;
}

static uint32_t node_timeout(const struct lock_client *c)
{
    uint32_t timeout = settings_of(c)->node_timeout_ms;
    return timeout ? timeout : 50;
}

/* Dial a node with the per-node timeouts; false when it is not there. */
static bool node_ready(struct lock_client *c, struct redlock *rl, struct node *nd)
{
    if (nd->wire.ctx && !nd->wire.ctx->err)
        return true;
    uint64_t now = lock_now_ms();
    if (now < nd->redial_at_ms)
        return false;
    const struct lock_config *run_cfg = c->cfg;
    c->cfg = &rl->node_cfg; /* wire_connect reads its timeouts from c->cfg */
    int rc = wire_connect(c, &nd->wire);
    c->cfg = run_cfg;
    nd->redial_at_ms = rc < 0 ? now + REDIAL_MS : 0;
    return rc == 0;
}

static void drop_replies(struct redlock *rl)
{
    for (size_t i = 0; i < rl->n; i++) {
        if (rl->node[i].reply)
            freeReplyObject(rl->node[i].reply);
        rl->node[i].reply = NULL;
        rl->node[i].pending = false;
        rl->node[i].fault = LOCK_ERR_NONE;
    }
}

/* This round's request on nd will get no answer: drop the connection (it
 * is out of step or broken, counted as lost) and say why. */
static void node_failed(struct lock_client *c, struct node *nd, int why)
{
    wire_drop(c, &nd->wire);
    nd->pending = false;
    nd->fault = why;
}

/* Send one command to every reachable node; returns how many took it. */
static size_t send_all(struct lock_client *c, struct redlock *rl, int argc, const char **argv,
                       const size_t *lens)
{
    size_t sent = 0;
    drop_replies(rl);
    for (size_t i = 0; i < rl->n; i++) {
        struct node *nd = &rl->node[i];
        nd->fault = LOCK_ERR_IO; /* until the request is out */
        if (!node_ready(c, rl, nd) || wire_append(&nd->wire, argc, argv, lens) != REDIS_OK)
            continue;
        if (wire_flush(c, nd->wire.ctx, nd->wire.io_timeout_ms) != REDIS_OK) {
            node_failed(c, nd, LOCK_ERR_IO);
            continue;
        }
        nd->fault = LOCK_ERR_NONE;
        nd->pending = true;
        sent++;
    }
    return sent;
}

/* Take a parsed answer off a node if one is there. */
static void take_reply(struct lock_client *c, struct node *nd)
{
    void *r = NULL;
    if (redisGetReplyFromReader(nd->wire.ctx, &r) != REDIS_OK) {
        node_failed(c, nd, LOCK_ERR_PROTOCOL);
    } else if (r) {
        nd->reply = r;
        nd->pending = false;
    }
}

/* Collect the answers until every node has answered or node_timeout_ms
 * from sent_ms has passed; the silent ones are dropped. Every answer is
 * needed (the validity counts from the last), so the wait is for all of
 * them at once: one wake a round where the engine can, not one a node. */
static void collect(struct lock_client *c, struct redlock *rl, uint64_t sent_ms)
{
    uint64_t deadline = sent_ms + node_timeout(c);
    for (;;) {
        struct pollfd pf[LOCK_ENDPOINT_MAX];
        size_t idx[LOCK_ENDPOINT_MAX], np = 0;
        for (size_t i = 0; i < rl->n; i++)
            if (rl->node[i].pending) {
                pf[np] = (struct pollfd){.fd = rl->node[i].wire.ctx->fd, .events = POLLIN};
                idx[np++] = i;
            }
        uint64_t now = lock_now_ms();
        if (np == 0 || now >= deadline)
            break;
        if (lock_wait_all(c, pf, np, deadline * 1000000u) <= 0)
            continue; /* none ready, or the wait failed: the deadline decides */
        for (size_t k = 0; k < np; k++) {
            struct node *nd = &rl->node[idx[k]];
            if (pf[k].revents == 0)
                continue;
            if (redisBufferRead(nd->wire.ctx) != REDIS_OK) {
                node_failed(c, nd, LOCK_ERR_IO);
                continue;
            }
            take_reply(c, nd);
        }
    }
    for (size_t i = 0; i < rl->n; i++)
        if (rl->node[i].pending) /* silent past its timeout: out of step now */
            node_failed(c, &rl->node[i], LOCK_ERR_TIMEOUT);
}

/* Of the reasons nodes gave no answer, the one to report: a timeout says
 * most about a slow or paused node, then I/O, then a protocol surprise. */
static int worse_fault(int a, int b)
{
    static const int rank[] = {[LOCK_ERR_NONE] = 0,
                               [LOCK_ERR_PROTOCOL] = 1,
                               [LOCK_ERR_CONFIG] = 1,
                               [LOCK_ERR_IO] = 2,
                               [LOCK_ERR_TIMEOUT] = 3};
    return rank[b] > rank[a] ? b : a;
}

/* A compare-and-<op> script on every node; a node that lost its script
 * cache (restarted) answers NOSCRIPT and gets the body at once, alone.
 * Counts the nodes that answered the integer 1 and those that gave no
 * definite answer; the rest answered 0, "not ours here". */
static struct tally script_all(struct lock_client *c, struct redlock *rl, int script,
                               const char *key, size_t key_len, const char *arg2, size_t arg2_len)
{
    /* a script's SHA is the same on every node: take it from one that loaded it */
    const struct wire_script *s = &rl->node[0].wire.scripts[script];
    for (size_t i = 0; i < rl->n && s->sha[0] == '\0'; i++)
        s = &rl->node[i].wire.scripts[script];
    const char *argv[6] = {"EVALSHA", s->sha, "1", key, c->owner, arg2};
    size_t lens[6] = {7, 40, 1, key_len, c->owner_len, arg2_len};
    int argc = arg2 ? 6 : 5;
    send_all(c, rl, argc, argv, lens);
    collect(c, rl, lock_now_ms()); /* timed from the last send: dialling is not answering */
    struct tally t = {0};
    for (size_t i = 0; i < rl->n; i++) {
        struct node *nd = &rl->node[i];
        redisReply *r = nd->reply;
        if (r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0) {
            const char *keys[1] = {key};
            const char *args[2] = {c->owner, arg2};
            size_t alens[2] = {c->owner_len, arg2_len};
            freeReplyObject(r);
            nd->reply = r = wire_eval(c, &nd->wire, &nd->wire.scripts[script], 1, keys, &key_len,
                                      argc - 4, args, alens);
            if (r == NULL)
                nd->fault = c->err != LOCK_ERR_NONE ? c->err : LOCK_ERR_IO;
        }
        if (r && r->type == REDIS_REPLY_INTEGER && r->integer == 1) {
            t.yes++;
        } else if (r == NULL || r->type != REDIS_REPLY_INTEGER || r->integer != 0) {
            /* Why unknown and not "no": a node that did not answer may have
             * run the script before it went quiet, and an error reply
             * (LOADING, BUSY, ...) says nothing about whose key it is. Only
             * the script's own 0 is a definite "not ours". */
            t.unknown++;
            t.err = worse_fault(t.err, r ? LOCK_ERR_PROTOCOL : nd->fault ? nd->fault : LOCK_ERR_IO);
        }
    }
    drop_replies(rl);
    return t;
}

/* lock.h's promise for release and extend: OK on a quorum of "done"; LOST
 * only when the definite "not ours" answers leave no quorum possible
 * however the silent nodes went; otherwise the outcome is unknown. */
static enum lock_result verdict(struct lock_client *c, const struct redlock *rl, const char *what,
                                const struct tally *t)
{
    size_t q = quorum(c, rl);
    if (t->yes >= q || t->yes + t->unknown < q) {
        lock_clear_error(c); /* what a node's failed redial left there is no news now */
        return t->yes >= q ? LOCK_OK : LOCK_LOST;
    }
    lock_set_error(c, t->err,
                   "%s: %zu of %zu nodes confirmed, %zu did not answer (quorum %zu): outcome "
                   "unknown",
                   what, t->yes, rl->n, t->unknown, q);
    return LOCK_ERR;
}

static int redlock_connect(struct lock_client *c)
{
    if (c->cfg->n_endpoints < 1) {
        lock_set_error(c, LOCK_ERR_CONFIG, "redlock needs at least one Redis node");
        return -1;
    }
    struct redlock *rl = calloc(1, sizeof(*rl));
    if (rl == NULL) {
        lock_set_error(c, LOCK_ERR_IO, "out of memory");
        return -1;
    }
    c->impl = rl;
    rl->n = c->cfg->n_endpoints;
    rl->node_cfg = *c->cfg;
    rl->node_cfg.io_timeout_ms = node_timeout(c);
    if (rl->node_cfg.connect_timeout_ms > node_timeout(c) * 4)
        rl->node_cfg.connect_timeout_ms = node_timeout(c) * 4;
    size_t up = 0;
    for (size_t i = 0; i < rl->n; i++) {
        struct redis_wire *w = &rl->node[i].wire;
        w->ep = &c->cfg->endpoints[i];
        w->n_scripts = N_SCRIPTS;
        for (size_t k = 0; k < N_SCRIPTS; k++)
            w->scripts[k].body = script_bodies[k];
        up += node_ready(c, rl, &rl->node[i]);
    }
    /* Some nodes down is what Redlock is for; none up is an error. */
    if (up == 0)
        return -1;
    lock_clear_error(c);
    return 0;
}

static void redlock_close(struct lock_client *c)
{
    struct redlock *rl = c->impl;
    if (rl == NULL)
        return;
    drop_replies(rl);
    for (size_t i = 0; i < rl->n; i++)
        wire_close(&rl->node[i].wire);
    free(rl);
    c->impl = NULL;
}

/* What one acquire round got: the nodes that took the request, answered
 * at all, and voted for us. */
struct round {
    size_t sent, answered, yes;
};

static struct round round_votes(struct lock_client *c, struct redlock *rl, const char *key,
                                size_t key_len, const char *ttl, size_t ttl_len)
{
    const char *argv[6] = {"SET", key, c->owner, "NX", "PX", ttl};
    size_t lens[6] = {3, key_len, c->owner_len, 2, 2, ttl_len};
    struct round r = {.sent = send_all(c, rl, 6, argv, lens)};
    collect(c, rl, lock_now_ms());
    for (size_t i = 0; i < rl->n; i++) {
        redisReply *rep = rl->node[i].reply;
        r.answered += rep != NULL;
        r.yes += rep && rep->type == REDIS_REPLY_STATUS && strcmp(rep->str, "OK") == 0;
    }
    drop_replies(rl);
    return r;
}

/* No vote came back. When no request ever went out either, the lock
 * surely was not taken anywhere (LOCK_ERR_UNSENT); otherwise a node may
 * have taken the SET and said nothing: unknown. */
static enum lock_result no_answer(struct lock_client *c, bool any_sent)
{
    if (!any_sent) {
        c->err = LOCK_ERR_UNSENT;
        return LOCK_ERR;
    }
    if (c->err == LOCK_ERR_NONE || c->err == LOCK_ERR_UNSENT)
        lock_set_error(c, LOCK_ERR_TIMEOUT, "no Redis node answered within %u ms",
                       (unsigned)node_timeout(c));
    return LOCK_ERR;
}

static enum lock_result redlock_acquire(struct lock_client *c, const char *key, size_t key_len,
                                        uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct redlock *rl = c->impl;
    char ttl[21];
    size_t ttl_len = wire_u64(ttl, ttl_ms);
    uint64_t deadline = lock_now_ms() + wait_ms;
    bool heard = false;    /* some node answered in some round */
    bool any_sent = false; /* some SET went out in some round */
    for (unsigned attempt = 0;; attempt++) {
        uint64_t start = lock_now_ms();
        struct round r = round_votes(c, rl, key, key_len, ttl, ttl_len);
        uint32_t valid = validity(ttl_ms, lock_now_ms() - start);
        if (r.yes >= quorum(c, rl) && valid > 0) {
            *g = (struct lock_grant){
                .key = key, .key_len = key_len, .ttl_ms = ttl_ms, .validity_ms = valid};
            lock_clear_error(c);
            return LOCK_OK;
        }
        if (r.yes > 0 || r.answered < r.sent)
            script_all(c, rl, SCRIPT_RELEASE, key, key_len, NULL, 0);
        heard |= r.answered > 0;
        any_sent |= r.sent > 0;
        if (r.sent == 0) /* every node refuses: waiting changes nothing soon */
            return no_answer(c, any_sent);
        uint64_t now = lock_now_ms();
        if (now >= deadline || lock_cancelled(c))
            return heard ? LOCK_BUSY : no_answer(c, any_sent);
        lock_sleep(c, wire_backoff_ms(c, attempt, now, deadline));
    }
}

static enum lock_result redlock_release(struct lock_client *c, const struct lock_grant *g)
{
    struct redlock *rl = c->impl;
    struct tally t = script_all(c, rl, SCRIPT_RELEASE, g->key, g->key_len, NULL, 0);
    return verdict(c, rl, "release", &t);
}

static enum lock_result redlock_extend(struct lock_client *c, struct lock_grant *g)
{
    struct redlock *rl = c->impl;
    char ttl[21];
    size_t ttl_len = wire_u64(ttl, g->ttl_ms);
    uint64_t start = lock_now_ms();
    struct tally t = script_all(c, rl, SCRIPT_EXTEND, g->key, g->key_len, ttl, ttl_len);
    uint32_t valid = validity(g->ttl_ms, lock_now_ms() - start);
    /* A quorum that came back after the whole ttl was spent: the keys may
     * have expired while the round ran, so the holder cannot count on it. */
    if (t.yes >= quorum(c, rl) && valid == 0) {
        lock_clear_error(c);
        return LOCK_LOST;
    }
    enum lock_result res = verdict(c, rl, "extend", &t);
    if (res == LOCK_OK)
        g->validity_ms = valid;
    return res;
}

/* ---- lock.redlock: the family of the locks that vote across masters --- */

_Static_assert(sizeof(struct redlock_spec) <= SETTINGS_BYTES_MAX, "fits a settings_store");

#define RL(m) offsetof(struct redlock_spec, m)
/* report.json gives them in this order */
static const struct setting_key redlock_keys[] = {
    {.key = "nodes", .type = SETTING_U32, .offset = RL(nodes), .min = 1, .max = 8},
    {.key = "quorum", .type = SETTING_U32, .offset = RL(quorum), .max = 8},
    {.key = "node_timeout_ms",
     .type = SETTING_U32,
     .offset = RL(node_timeout_ms),
     .min = 1,
     .max = 60000},
};
/* A quorum the nodes can give. */
static int redlock_after(void *settings, const bool *given, const char **blame, char *why,
                         size_t len)
{
    const struct redlock_spec *r = settings;
    (void)given;
    if (r->quorum <= r->nodes)
        return 0;
    *blame = "quorum";
    snprintf(why, len, "%" PRIu32 " votes cannot be had from %" PRIu32 " nodes", r->quorum,
             r->nodes);
    return -1;
}

static const struct setting_table redlock_table = {
    redlock_keys, sizeof(redlock_keys) / sizeof(redlock_keys[0]), redlock_after};

static void redlock_defaults(void *settings)
{
    *(struct redlock_spec *)settings =
        (struct redlock_spec){.nodes = 5, .node_timeout_ms = 50, .quorum = 0};
}

static void redlock_resolve(void *settings, const struct family_scene *sc)
{
    struct redlock_spec *r = settings;
    if (r->quorum)
        return;
    r->quorum = r->nodes / 2 + 1;
    family_note(sc, "lock.redlock.quorum: %" PRIu32 " = a majority of %" PRIu32 " nodes", r->quorum,
                r->nodes);
}

static size_t redlock_servers(const void *settings)
{
    return ((const struct redlock_spec *)settings)->nodes;
}

static size_t redlock_quorum(const void *settings)
{
    return ((const struct redlock_spec *)settings)->quorum;
}

static void redlock_describe(const void *settings, char *buf, size_t len)
{
    const struct redlock_spec *r = settings;
    snprintf(buf, len, "redlock: nodes=%" PRIu32 " quorum=%" PRIu32 " node_timeout=%" PRIu32 "ms",
             r->nodes, r->quorum, r->node_timeout_ms);
}

const struct lock_family redlock_family = {
    .key = "redlock",
    .size = sizeof(struct redlock_spec),
    .table = &redlock_table,
    .defaults = redlock_defaults,
    .resolve = redlock_resolve,
    .servers = redlock_servers,
    .quorum = redlock_quorum,
    .describe = redlock_describe,
    .reported = true,
    .list_servers = "N redis masters (lock.redlock.nodes, 5)",
};

const struct lock_ops redlock_ops = {
    .name = "redlock",
    .summary = "N independent Redis masters, quorum of SET NX PX, validity = ttl - elapsed - "
               "drift; no token",
    .server = "redis",
    .family = &redlock_family,
    .gives_token = false,
    .connect = redlock_connect,
    .disconnect = redlock_close,
    .acquire = redlock_acquire,
    .release = redlock_release,
    .renew = redlock_extend,
    .crash = redlock_close, /* the sockets just close: every node keeps the key until its ttl */
};
