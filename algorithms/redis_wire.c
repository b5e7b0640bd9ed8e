/* redis_wire.c - one non-blocking hiredis connection, RESP written by
 * hand, every wait for the socket through the seam.
 *
 * Waits and failures keep the shape blocking hiredis gave them (a socket
 * timeout per read and per write, the same words in ctx->errstr), so what
 * the algorithms make of an error is what it always was.
 */
#include "algorithms/redis_wire.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <hiredis/sds.h>

#define WIRE_IDLE_CHECK_MS 50
#define NS_PER_MS          1000000ULL

/* A failure of a wait of ours, left on the context in hiredis's words:
 * the caller reads ctx->errstr as it read blocking hiredis's. */
static void ctx_error(redisContext *ctx, const char *prefix, int errnum)
{
    char buf[64];
    ctx->err = REDIS_ERR_IO;
    snprintf(ctx->errstr, sizeof(ctx->errstr), "%s%s", prefix,
             strerror_r(errnum, buf, sizeof(buf)));
}

redisContext *wire_dial(struct lock_client *c, const char *host, int port, uint32_t timeout_ms)
{
    redisContext *ctx = redisConnectNonBlock(host, port);
    if (ctx == NULL || ctx->err)
        return ctx; /* refused at once, or no such host: hiredis said why */
    /* Counted from here, as blocking hiredis's wait for the connect was. */
    struct pollfd p = {.fd = ctx->fd, .events = POLLOUT};
    int rc = lock_wait(c, &p, 1, lock_now_ns() + timeout_ms * NS_PER_MS);
    int err = 0;
    socklen_t len = sizeof(err);
    if (rc < 0)
        ctx_error(ctx, "poll(2): ", errno);
    else if (rc == 0)
        ctx_error(ctx, "", ETIMEDOUT);
    else if (getsockopt(ctx->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        ctx_error(ctx, "getsockopt(SO_ERROR): ", errno);
    else if (err)
        ctx_error(ctx, "", err); /* "Connection refused" */
    return ctx;
}

/* One wait for ctx's socket, of at most timeout_ms from from_ns. */
static inline int wait_ready(struct lock_client *c, redisContext *ctx, short events,
                             uint32_t timeout_ms, uint64_t from_ns)
{
    struct pollfd p = {.fd = ctx->fd, .events = events};
    int rc = lock_wait(c, &p, 1, timeout_ms ? from_ns + timeout_ms * NS_PER_MS : LOCK_FOREVER);
    if (rc > 0)
        return REDIS_OK; /* an error or hang-up on it: the read or write says which */
    /* A socket timeout's expiry read as EAGAIN in blocking hiredis. */
    ctx_error(ctx, "", rc == 0 ? EAGAIN : errno);
    return REDIS_ERR;
}

/* What a first write left behind (a full socket buffer: rare). Each wait
 * counts from the write that could not finish, as each blocking write had
 * a timeout of its own; *from_ns is moved to the end of the last one,
 * where the reply's wait begins. Kept out of line: the common path
 * writes everything at once. */
static __attribute__((noinline)) int flush_rest(struct lock_client *c, redisContext *ctx,
                                                uint32_t timeout_ms, uint64_t *from_ns)
{
    for (;;) {
        if (wait_ready(c, ctx, POLLOUT, timeout_ms, lock_now_ns()) != REDIS_OK)
            return REDIS_ERR;
        *from_ns = lock_now_ns();
        int done = 0;
        if (redisBufferWrite(ctx, &done) != REDIS_OK)
            return REDIS_ERR;
        if (done)
            return REDIS_OK;
    }
}

static inline int flush(struct lock_client *c, redisContext *ctx, uint32_t timeout_ms,
                        uint64_t *from_ns)
{
    int done = 0;
    if (redisBufferWrite(ctx, &done) != REDIS_OK)
        return REDIS_ERR;
    return done ? REDIS_OK : flush_rest(c, ctx, timeout_ms, from_ns);
}

int wire_flush(struct lock_client *c, redisContext *ctx, uint32_t timeout_ms)
{
    uint64_t unused = 0;
    return flush(c, ctx, timeout_ms, &unused);
}

int wire_exchange(struct lock_client *c, redisContext *ctx, uint32_t timeout_ms, uint64_t from_ns,
                  void **reply)
{
    *reply = NULL;
    if (flush(c, ctx, timeout_ms, &from_ns) != REDIS_OK)
        return REDIS_ERR;
    /* No read before the first wait: the answer cannot be there yet, and
     * a read that finds nothing is a system call on every request. */
    for (;;) {
        if (wait_ready(c, ctx, POLLIN, timeout_ms, from_ns) != REDIS_OK ||
            redisBufferRead(ctx) != REDIS_OK || redisGetReplyFromReader(ctx, reply) != REDIS_OK)
            return REDIS_ERR;
        if (*reply)
            return REDIS_OK;
        from_ns = lock_now_ns();
    }
}

size_t wire_u64(char *buf, uint64_t v)
{
    /* Nearly every number in a request is an argument count or a length
     * below 100: answer those without the digit loop. */
    if (v < 10) {
        buf[0] = (char)('0' + v);
        buf[1] = '\0';
        return 1;
    }
    if (v < 100) {
        buf[0] = (char)('0' + v / 10);
        buf[1] = (char)('0' + v % 10);
        buf[2] = '\0';
        return 2;
    }
    char tmp[21];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
    return n;
}

static int load_scripts(struct lock_client *c, struct redis_wire *w)
{
    for (size_t i = 0; i < w->n_scripts; i++) {
        void *reply = NULL;
        if (redisAppendCommand(w->ctx, "SCRIPT LOAD %s", w->scripts[i].body) == REDIS_OK)
            wire_exchange(c, w->ctx, w->io_timeout_ms, lock_now_ns(), &reply);
        redisReply *r = reply;
        if (r == NULL || r->type != REDIS_REPLY_STRING || r->len != 40) {
            lock_set_error(c, r ? LOCK_ERR_PROTOCOL : LOCK_ERR_IO, "SCRIPT LOAD failed: %s",
                           r && r->type == REDIS_REPLY_ERROR ? r->str : w->ctx->errstr);
            if (r)
                freeReplyObject(r);
            return -1;
        }
        memcpy(w->scripts[i].sha, r->str, 40);
        w->scripts[i].sha[40] = '\0';
        freeReplyObject(r);
    }
    return 0;
}

int wire_connect(struct lock_client *c, struct redis_wire *w)
{
    wire_close(w);
    if (w->locate && w->locate(c, w) < 0) {
        c->connect_failures++;
        return -1;
    }
    w->ctx = wire_dial(c, w->ep->host, w->ep->port, c->cfg->connect_timeout_ms);
    w->io_timeout_ms = c->cfg->io_timeout_ms;
    if (w->ctx == NULL || w->ctx->err) {
        lock_set_error(c, LOCK_ERR_IO, "connect %s:%d: %s", w->ep->host, w->ep->port,
                       w->ctx ? w->ctx->errstr : "out of memory");
        /* Nobody listening: the server is gone, not slow (a timeout is). */
        if (w->ctx && w->ctx->err == REDIS_ERR_IO && strstr(w->ctx->errstr, "refused"))
            c->connect_refused++;
    } else if (load_scripts(c, w) == 0)
        return 0;
    /* Every dial goes through here (connect, wire_call's reconnect,
     * Redlock's redials): one failed connect, however far it got, is
     * counted once, here. */
    c->connect_failures++;
    wire_close(w);
    return -1;
}

void wire_close(struct redis_wire *w)
{
    if (w->ctx)
        redisFree(w->ctx);
    w->ctx = NULL;
    w->pending = 0;
}

void wire_drop(struct lock_client *c, struct redis_wire *w)
{
    if (w->ctx == NULL)
        return;
    c->connect_failures++;
    wire_close(w);
}

/* Appends "$<len>\r\n<bytes>\r\n"; returns the new length or 0 when full. */
static size_t put_bulk(char *out, size_t at, size_t cap, const char *s, size_t len)
{
    char num[21];
    size_t nl = wire_u64(num, len);
    if (at + 1 + nl + 2 + len + 2 > cap)
        return 0;
    out[at++] = '$';
    memcpy(out + at, num, nl);
    at += nl;
    memcpy(out + at, "\r\n", 2);
    at += 2;
    memcpy(out + at, s, len);
    at += len;
    memcpy(out + at, "\r\n", 2);
    return at + 2;
}

static size_t format_resp(char *out, size_t cap, int argc, const char **argv, const size_t *lens)
{
    char num[21];
    size_t nl = wire_u64(num, (uint64_t)argc);
    size_t at = 0;
    out[at++] = '*';
    memcpy(out + at, num, nl);
    at += nl;
    memcpy(out + at, "\r\n", 2);
    at += 2;
    for (int i = 0; i < argc && at; i++)
        at = put_bulk(out, at, cap, argv[i], lens[i]);
    return at;
}

int wire_append(struct redis_wire *w, int argc, const char **argv, const size_t *lens)
{
    size_t len = format_resp(w->out, sizeof(w->out), argc, argv, lens);
    /* Nothing queued before it: w->out goes to the socket as it is.
     * hiredis would copy it into its output buffer, realloc'ing an empty
     * sds up to the request's size, then free that and make a new empty one
     * once written: 2,200 instructions a Redis lock cycle (callgrind,
     * bench/cycle_instructions.sh: 7490 -> 5290), and a cost that moved
     * by hundreds with the layout of the thread's heap. What the socket
     * does not take now is queued behind, for the flush to finish. */
    if (len && w->ctx->err == 0 && sdslen(w->ctx->obuf) == 0) {
        ssize_t n = send(w->ctx->fd, w->out, len, MSG_NOSIGNAL);
        if (n == (ssize_t)len)
            return REDIS_OK;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            ctx_error(w->ctx, "", errno); /* as hiredis's own write would have */
            return REDIS_ERR;
        }
        size_t sent = n > 0 ? (size_t)n : 0;
        return redisAppendFormattedCommand(w->ctx, w->out + sent, len - sent);
    }
    /* hiredis's own formatter builds each argument in an sds of its own:
     * kept for what does not fit w->out */
    return len ? redisAppendFormattedCommand(w->ctx, w->out, len)
               : redisAppendCommandArgv(w->ctx, argc, argv, lens);
}

static redisReply *io_failed(struct lock_client *c, struct redis_wire *w)
{
    int to = w->ctx->err == REDIS_ERR_IO && strstr(w->ctx->errstr, "temporarily") != NULL;
    lock_set_error(c, to ? LOCK_ERR_TIMEOUT : LOCK_ERR_IO, "%s:%d: %s", w->ep->host, w->ep->port,
                   w->ctx->errstr[0] ? w->ctx->errstr : "connection lost");
    /* A timed-out reply may still arrive: the connection is out of step. */
    wire_drop(c, w);
    return NULL;
}

/* Has the server closed this connection (killed, restarted) while it sat
 * idle? A request written into it could never reach anyone, yet its reply
 * would read as a lost answer (outcome unknown): a holder's release after
 * a failover, sent into its dead master's socket. Looked at only after a
 * pause, so back-to-back calls pay nothing. The look is poll(2) with no
 * timeout, not the seam: it never waits, and on the engine's loop a
 * seam's look is an epoll arming and a turn of the loop, paid on every
 * request once clients are many (each one's previous call is then more
 * than WIRE_IDLE_CHECK_MS old). */
static bool closed_while_idle(struct redis_wire *w, uint64_t now_ns)
{
    uint64_t now = now_ns / NS_PER_MS;
    bool idle = now - w->used_ms >= WIRE_IDLE_CHECK_MS;
    w->used_ms = now;
    if (!idle || w->ctx == NULL || w->ctx->err)
        return false;
    struct pollfd p = {.fd = w->ctx->fd, .events = POLLIN | POLLRDHUP};
    if (poll(&p, 1, 0) != 1)
        return false;
    char byte;
    return (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) ||
           recv(w->ctx->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

redisReply *wire_call(struct lock_client *c, struct redis_wire *w, int argc, const char **argv,
                      const size_t *lens)
{
    uint64_t now = lock_now_ns();
    if (closed_while_idle(w, now))
        wire_drop(c, w);
    if (w->ctx == NULL || w->ctx->err) {
        if (wire_connect(c, w) < 0) {
            c->err = LOCK_ERR_UNSENT; /* nothing of this call went out */
            return NULL;
        }
        now = lock_now_ns(); /* the dial's time is not the request's */
    }
    void *reply = NULL;
    if (wire_append(w, argc, argv, lens) != REDIS_OK ||
        wire_exchange(c, w->ctx, w->io_timeout_ms, now, &reply) != REDIS_OK)
        return io_failed(c, w);
    for (; w->pending > 0; w->pending--) { /* the first replies are wire_send's */
        freeReplyObject(reply);
        reply = NULL;
        /* Ours may have come in the same read as the one dropped. */
        if (redisGetReplyFromReader(w->ctx, &reply) != REDIS_OK ||
            (reply == NULL &&
             wire_exchange(c, w->ctx, w->io_timeout_ms, lock_now_ns(), &reply) != REDIS_OK))
            return io_failed(c, w);
    }
    return reply;
}

int wire_send(struct lock_client *c, struct redis_wire *w, int argc, const char **argv,
              const size_t *lens)
{
    if (w->ctx == NULL || w->ctx->err)
        return -1;
    if (wire_append(w, argc, argv, lens) != REDIS_OK ||
        wire_flush(c, w->ctx, w->io_timeout_ms) != REDIS_OK) {
        io_failed(c, w);
        return -1;
    }
    w->pending++;
    return 0;
}

static int is_noscript(const redisReply *r)
{
    return r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0;
}

redisReply *wire_eval(struct lock_client *c, struct redis_wire *w, struct wire_script *s, int nkeys,
                      const char **keys, const size_t *key_lens, int nargs, const char **args,
                      const size_t *arg_lens)
{
    const char *argv[WIRE_MAX_ARGS];
    size_t lens[WIRE_MAX_ARGS];
    char nk[21];
    int argc = 0;
    if (3 + nkeys + nargs > WIRE_MAX_ARGS) {
        lock_set_error(c, LOCK_ERR_CONFIG, "too many script arguments");
        return NULL;
    }
    argv[argc] = "EVALSHA", lens[argc++] = 7;
    argv[argc] = s->sha, lens[argc++] = 40;
    argv[argc] = nk, lens[argc++] = wire_u64(nk, (uint64_t)nkeys);
    for (int i = 0; i < nkeys; i++)
        argv[argc] = keys[i], lens[argc++] = key_lens[i];
    for (int i = 0; i < nargs; i++)
        argv[argc] = args[i], lens[argc++] = arg_lens[i];

    redisReply *r = wire_call(c, w, argc, argv, lens);
    if (r == NULL || !is_noscript(r))
        return r;
    /* The server lost its script cache (restart, SCRIPT FLUSH): send the body. */
    freeReplyObject(r);
    argv[0] = "EVAL", lens[0] = 4;
    argv[1] = s->body, lens[1] = strlen(s->body);
    return wire_call(c, w, argc, argv, lens);
}

uint32_t wire_backoff_ms(struct lock_client *c, unsigned attempt, uint64_t now_ms,
                         uint64_t deadline_ms)
{
    uint64_t cap = c->cfg->retry_max_ms ? c->cfg->retry_max_ms : 1;
    uint64_t b = c->cfg->retry_min_ms ? c->cfg->retry_min_ms : 1;
    b = attempt < 32 ? b << attempt : cap;
    if (b > cap)
        b = cap;
    /* Jitter in [b/2, b] spreads waiters that started together. */
    b = b / 2 + lock_random(c, b - b / 2 + 1);
    if (b == 0)
        b = 1;
    if (now_ms + b > deadline_ms)
        b = deadline_ms > now_ms ? deadline_ms - now_ms : 0;
    return (uint32_t)b;
}

int wire_client_open(struct lock_client *c, size_t size, const char *const *scripts,
                     size_t n_scripts, wire_locate_fn locate)
{
    if (c->cfg->n_endpoints < 1) {
        lock_set_error(c, LOCK_ERR_CONFIG, "%s needs one endpoint", c->ops->name);
        return -1;
    }
    if (n_scripts > WIRE_MAX_SCRIPTS) {
        lock_set_error(c, LOCK_ERR_CONFIG, "at most %d scripts", WIRE_MAX_SCRIPTS);
        return -1;
    }
    struct redis_wire *w = calloc(1, size);
    if (w == NULL) {
        lock_set_error(c, LOCK_ERR_IO, "out of memory");
        return -1;
    }
    c->impl = w;
    w->ep = &c->cfg->endpoints[0];
    w->locate = locate;
    w->n_scripts = n_scripts;
    for (size_t i = 0; i < n_scripts; i++)
        w->scripts[i].body = scripts[i];
    return wire_connect(c, w);
}

void wire_client_close(struct lock_client *c)
{
    struct redis_wire *w = c->impl;
    if (w == NULL)
        return;
    wire_close(w);
    free(w);
    c->impl = NULL;
}

/* One sentinel's word on the master: 0 with *named set, or -1. */
static int ask_sentinel(struct lock_client *c, const struct lock_endpoint *s,
                        struct lock_endpoint *named)
{
    /* The connect timeout bounds each wait of the question too. */
    uint32_t ms = c->cfg->connect_timeout_ms;
    redisContext *ctx = wire_dial(c, s->host, s->port, ms);
    void *reply = NULL;
    int rc = -1;
    if (ctx && !ctx->err &&
        redisAppendCommand(ctx, "SENTINEL get-master-addr-by-name %s", c->cfg->master_name) ==
            REDIS_OK)
        wire_exchange(c, ctx, ms, lock_now_ns(), &reply);
    redisReply *r = reply;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[0]->type == REDIS_REPLY_STRING && r->element[1]->type == REDIS_REPLY_STRING) {
        snprintf(named->host, sizeof(named->host), "%s", r->element[0]->str);
        named->port = atoi(r->element[1]->str);
        rc = 0;
    }
    if (r)
        freeReplyObject(r);
    if (ctx)
        redisFree(ctx);
    return rc;
}

/* The first sentinel that answers names the master,
 * dialled through its endpoint when the engine gave one (a proxy). */
int wire_locate_master(struct lock_client *c, struct redis_wire *w)
{
    const struct lock_config *cfg = c->cfg;
    struct lock_endpoint named;
    for (size_t i = 0; i < cfg->n_sentinels; i++) {
        if (ask_sentinel(c, &cfg->sentinels[i], &named) < 0)
            continue;
        w->master = named;
        for (size_t e = 0; e < cfg->n_endpoints; e++)
            if (cfg->upstream[e].port == named.port &&
                strcmp(cfg->upstream[e].host, named.host) == 0)
                w->master = cfg->endpoints[e];
        w->ep = &w->master;
        return 0;
    }
    lock_set_error(c, LOCK_ERR_IO, "no sentinel of %zu named the master of %s", cfg->n_sentinels,
                   cfg->master_name);
    return -1;
}

uint32_t wire_validity(uint32_t ttl_ms, uint64_t sent_ms)
{
    uint64_t took = lock_now_ms() - sent_ms;
    return took < ttl_ms ? ttl_ms - (uint32_t)took : 0;
}

enum lock_result wire_acquire(struct lock_client *c, wire_try_fn try_once, const char *key,
                              size_t key_len, uint32_t ttl_ms, uint32_t wait_ms,
                              struct lock_grant *g)
{
    char ttl[21];
    size_t ttl_len = wire_u64(ttl, ttl_ms);
    uint64_t deadline = lock_now_ms() + wait_ms;
    for (unsigned attempt = 0;; attempt++) {
        uint64_t sent = lock_now_ms();
        uint64_t token = 0;
        int won = try_once(c, key, key_len, ttl, ttl_len, &token);
        if (won < 0)
            return LOCK_ERR;
        if (won) {
            g->key = key;
            g->key_len = key_len;
            g->token = token;
            g->ttl_ms = ttl_ms;
            /* The key started expiring no earlier than when the request was sent. */
            g->validity_ms = wire_validity(ttl_ms, sent);
            return LOCK_OK;
        }
        uint64_t now = lock_now_ms();
        if (now >= deadline || lock_cancelled(c))
            return LOCK_BUSY;
        lock_sleep(c, wire_backoff_ms(c, attempt, now, deadline));
    }
}

const char *const redis_lock_scripts[REDIS_N_SCRIPTS] = {
    [REDIS_SCRIPT_ACQUIRE_FENCED] =
        "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
        "return redis.call('incr', KEYS[2]) end return 0",
    [REDIS_SCRIPT_RELEASE] = "if redis.call('get', KEYS[1]) == ARGV[1] then "
                             "return redis.call('del', KEYS[1]) end return 0",
    [REDIS_SCRIPT_RENEW] = "if redis.call('get', KEYS[1]) == ARGV[1] then "
                           "return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0",
};

int wire_set_reply(struct lock_client *c, const redisReply *rep, uint64_t *token)
{
    if (rep->type == REDIS_REPLY_STATUS && strcmp(rep->str, "OK") == 0) {
        *token = 0;
        return 1;
    }
    if (rep->type == REDIS_REPLY_NIL)
        return 0;
    if (rep->type == REDIS_REPLY_INTEGER) {
        *token = (uint64_t)rep->integer;
        return rep->integer > 0;
    }
    lock_set_error(c, LOCK_ERR_PROTOCOL, "SET NX: %s",
                   rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    return -1;
}

enum lock_result wire_owner_reply(struct lock_client *c, const redisReply *rep)
{
    if (rep->type == REDIS_REPLY_INTEGER && (rep->integer == 0 || rep->integer == 1))
        return rep->integer == 1 ? LOCK_OK : LOCK_LOST; /* the server's own word */
    lock_set_error(c, LOCK_ERR_PROTOCOL, "script: %s",
                   rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
    return LOCK_ERR;
}
