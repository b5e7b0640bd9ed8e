/* redis_wire.c - one blocking hiredis connection, RESP written by hand. */
#include "algorithms/redis_wire.h"

#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#define WIRE_IDLE_CHECK_MS 50

struct timeval wire_timeval(uint32_t ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};
    return tv;
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
        redisReply *r = redisCommand(w->ctx, "SCRIPT LOAD %s", w->scripts[i].body);
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
    w->ctx =
        redisConnectWithTimeout(w->ep->host, w->ep->port, wire_timeval(c->cfg->connect_timeout_ms));
    if (w->ctx == NULL || w->ctx->err) {
        lock_set_error(c, LOCK_ERR_IO, "connect %s:%d: %s", w->ep->host, w->ep->port,
                       w->ctx ? w->ctx->errstr : "out of memory");
        /* Nobody listening: the server is gone, not slow (a timeout is). */
        if (w->ctx && w->ctx->err == REDIS_ERR_IO && strstr(w->ctx->errstr, "refused"))
            c->connect_refused++;
    } else if (c->cfg->io_timeout_ms &&
               redisSetTimeout(w->ctx, wire_timeval(c->cfg->io_timeout_ms)))
        lock_set_error(c, LOCK_ERR_IO, "set timeout: %s", w->ctx->errstr);
    else if (load_scripts(c, w) == 0)
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
 * pause, so back-to-back calls pay nothing. */
static bool closed_while_idle(struct redis_wire *w)
{
    uint64_t now = lock_now_ms();
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
    if (closed_while_idle(w))
        wire_drop(c, w);
    if ((w->ctx == NULL || w->ctx->err) && wire_connect(c, w) < 0) {
        c->err = LOCK_ERR_UNSENT; /* nothing of this call went out */
        return NULL;
    }
    size_t len = format_resp(w->out, sizeof(w->out), argc, argv, lens);
    int rc = len ? redisAppendFormattedCommand(w->ctx, w->out, len)
                 : redisAppendCommandArgv(w->ctx, argc, argv, lens);
    void *reply = NULL;
    if (rc != REDIS_OK || redisGetReply(w->ctx, &reply) != REDIS_OK || reply == NULL)
        return io_failed(c, w);
    return reply;
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
        lock_sleep_ms(wire_backoff_ms(c, attempt, now, deadline));
    }
}
