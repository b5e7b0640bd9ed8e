/* redis_cluster_wire.c - a Redis Cluster client over redis_wire's
 * connections (redis_cluster_wire.h). */
#include "algorithms/redis_cluster_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), the cluster spec's. */
static uint16_t crc16(const unsigned char *p, size_t n)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = crc & 0x8000 ? (uint16_t)(crc << 1 ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

const char *cw_hash_tag(const char *key, size_t len, size_t *tag_len)
{
    const char *open = memchr(key, '{', len);
    if (open == NULL)
        return NULL;
    const char *close = memchr(open + 1, '}', len - (size_t)(open - key) - 1);
    if (close == NULL || close == open + 1)
        return NULL;
    *tag_len = (size_t)(close - open - 1);
    return open + 1;
}

uint16_t cw_key_slot(const char *key, size_t len)
{
    size_t n;
    const char *tag = cw_hash_tag(key, len, &n);
    return tag ? crc16((const unsigned char *)tag, n) % CW_SLOTS
               : crc16((const unsigned char *)key, len) % CW_SLOTS;
}

/* "host:port" (the last ':' splits it: an IPv6 host has its own) into ep;
 * an empty host is left empty for the caller. 0, or -1. */
static int parse_address(const char *s, size_t len, struct lock_endpoint *ep)
{
    const char *colon = NULL;
    for (size_t i = 0; i < len; i++)
        if (s[i] == ':')
            colon = s + i;
    if (colon == NULL || (size_t)(colon - s) >= sizeof(ep->host))
        return -1;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || port < 1 || port > 65535)
        return -1;
    snprintf(ep->host, sizeof(ep->host), "%.*s", (int)(colon - s), s);
    ep->port = (int)port;
    return 0;
}

int cw_redirect(const char *err, uint16_t *slot, struct lock_endpoint *to, bool *ask)
{
    size_t word;
    if (strncmp(err, "MOVED ", 6) == 0)
        word = 6, *ask = false;
    else if (strncmp(err, "ASK ", 4) == 0)
        word = 4, *ask = true;
    else
        return 0;
    char *end;
    long s = strtol(err + word, &end, 10);
    if (end == err + word || *end != ' ' || s < 0 || s >= CW_SLOTS)
        return 0;
    const char *addr = end + 1;
    if (parse_address(addr, strcspn(addr, " \r\n"), to) < 0)
        return 0;
    *slot = (uint16_t)s;
    return 1;
}

static bool same_endpoint(const struct lock_endpoint *a, const struct lock_endpoint *b)
{
    return a->port == b->port && strcmp(a->host, b->host) == 0;
}

/* How this client dials the node the cluster names ep. */
static struct lock_endpoint dial_of(const struct cluster_wire *cw, const struct lock_endpoint *ep)
{
    for (size_t e = 0; cw->nat && e < cw->nat->n_endpoints; e++)
        if (same_endpoint(&cw->nat->upstream[e], ep))
            return cw->nat->endpoints[e];
    return *ep;
}

/* The node at ep, added when new; -1 when the table is full. */
static int node_at(struct cluster_wire *cw, const struct lock_endpoint *ep)
{
    for (size_t i = 0; i < cw->n_nodes; i++)
        if (same_endpoint(&cw->node[i].ep, ep))
            return (int)i;
    if (cw->n_nodes >= CW_MAX_NODES)
        return -1;
    cw->node[cw->n_nodes] = (struct cw_node){.ep = *ep, .dial = dial_of(cw, ep)};
    return (int)cw->n_nodes++;
}

static int cmp_range(const void *a, const void *b)
{
    const struct cw_range *x = a, *y = b;
    return (x->from > y->from) - (x->from < y->from);
}

/* One entry of CLUSTER SLOTS: [from, to, [host, port, id, ...], replicas...]. */
static int slot_entry(struct cluster_wire *cw, const redisReply *e,
                      const struct lock_endpoint *from, struct cw_range *out)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
        e->element[0]->type != REDIS_REPLY_INTEGER || e->element[1]->type != REDIS_REPLY_INTEGER)
        return -1;
    const redisReply *m = e->element[2];
    long long lo = e->element[0]->integer, hi = e->element[1]->integer;
    if (m->type != REDIS_REPLY_ARRAY || m->elements < 2 ||
        m->element[0]->type != REDIS_REPLY_STRING || m->element[1]->type != REDIS_REPLY_INTEGER ||
        lo < 0 || hi < lo || hi >= CW_SLOTS)
        return -1;
    struct lock_endpoint ep = {.port = (int)m->element[1]->integer};
    /* an empty host (or "?") is the one asked: the node does not know its own */
    const char *host =
        m->element[0]->len && strcmp(m->element[0]->str, "?") ? m->element[0]->str : from->host;
    if (strlen(host) >= sizeof(ep.host))
        return -1;
    snprintf(ep.host, sizeof(ep.host), "%s", host);
    int k = node_at(cw, &ep);
    if (k < 0)
        return -1;
    *out = (struct cw_range){.from = (uint16_t)lo, .to = (uint16_t)hi, .node = (uint8_t)k};
    return 0;
}

int cw_apply_slots(struct cluster_wire *cw, const redisReply *slots,
                   const struct lock_endpoint *from)
{
    if (slots == NULL || slots->type != REDIS_REPLY_ARRAY || slots->elements > CW_MAX_RANGES)
        return -1;
    struct cw_range r[CW_MAX_RANGES] = {{0}};
    for (size_t i = 0; i < slots->elements; i++)
        if (slot_entry(cw, slots->element[i], from, &r[i]) < 0)
            return -1;
    qsort(r, slots->elements, sizeof(r[0]), cmp_range);
    memcpy(cw->range, r, slots->elements * sizeof(r[0]));
    cw->n_ranges = slots->elements;
    return 0;
}

int cw_node_of(const struct cluster_wire *cw, uint16_t slot)
{
    size_t lo = 0, hi = cw->n_ranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cw->range[mid].to < slot)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < cw->n_ranges && cw->range[lo].from <= slot ? cw->range[lo].node : -1;
}

/* Node k's connection, made (not yet dialled: wire_call dials) on first use. */
static struct redis_wire *node_wire(struct lock_client *c, struct cluster_wire *cw, int k)
{
    struct cw_node *n = &cw->node[k];
    if (n->w)
        return n->w;
    n->w = calloc(1, sizeof(*n->w));
    if (n->w == NULL) {
        lock_set_error(c, LOCK_ERR_IO, "out of memory");
        return NULL;
    }
    n->w->ep = &n->dial;
    n->w->n_scripts = cw->n_scripts;
    for (size_t i = 0; i < cw->n_scripts; i++)
        n->w->scripts[i].body = cw->scripts[i];
    return n->w;
}

/* The map asked again, of each known node in turn (the one that sent a
 * MOVED first, when given): 0, or -1 with c->err set when none answered. */
static int refresh(struct lock_client *c, struct cluster_wire *cw, int first)
{
    const char *argv[2] = {"CLUSTER", "SLOTS"};
    static const size_t lens[2] = {7, 5};
    size_t n = cw->n_nodes;
    for (size_t i = 0; i < n; i++) {
        int k = first >= 0 ? (int)((size_t)first + i) % (int)n : (int)i;
        struct redis_wire *w = node_wire(c, cw, k);
        if (w == NULL)
            return -1;
        redisReply *rep = wire_call(c, w, 2, argv, lens);
        int ok = rep ? cw_apply_slots(cw, rep, &cw->node[k].ep) : -1;
        freeReplyObject(rep);
        if (ok == 0) {
            cw->stale = false;
            cw->refreshed++;
            return 0;
        }
    }
    if (c->err == LOCK_OK)
        lock_set_error(c, LOCK_ERR_PROTOCOL, "CLUSTER SLOTS: no node gave a slot map");
    return -1;
}

uint64_t cw_io_deadline(const struct lock_client *c)
{
    return lock_now_ms() + (c->cfg->io_timeout_ms ? c->cfg->io_timeout_ms : 1000);
}

int cw_refresh(struct lock_client *c, struct cluster_wire *cw)
{
    return refresh(c, cw, -1);
}

int cw_open(struct lock_client *c, struct cluster_wire *cw, const char *const *scripts,
            size_t n_scripts)
{
    memset(cw, 0, sizeof(*cw));
    cw->scripts = scripts;
    cw->n_scripts = n_scripts;
    if (c->cfg->n_endpoints < 1 || n_scripts > WIRE_MAX_SCRIPTS) {
        lock_set_error(c, LOCK_ERR_CONFIG, "%s needs a node of the cluster", c->ops->name);
        return -1;
    }
    cw->nat = c->cfg;
    for (size_t i = 0; i < c->cfg->n_endpoints && i < CW_MAX_NODES; i++)
        node_at(cw, c->cfg->upstream[i].port ? &c->cfg->upstream[i] : &c->cfg->endpoints[i]);
    return refresh(c, cw, -1);
}

void cw_close(struct cluster_wire *cw)
{
    for (size_t i = 0; i < cw->n_nodes; i++) {
        if (cw->node[i].w)
            wire_close(cw->node[i].w);
        free(cw->node[i].w);
        cw->node[i].w = NULL;
    }
}

static bool error_is(const redisReply *rep, const char *word)
{
    return rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, word, strlen(word)) == 0;
}

struct cw_request {
    int argc;
    const char **argv;
    const size_t *lens;
    /* a script instead: */
    bool eval;
    size_t script;
    int nkeys, nargs;
    const char **keys, **args;
    const size_t *key_lens, *arg_lens;
};

static redisReply *send_to(struct lock_client *c, struct cluster_wire *cw, int k, bool asking,
                           const struct cw_request *q)
{
    struct redis_wire *w = node_wire(c, cw, k);
    if (w == NULL)
        return NULL;
    if (asking) { /* the next command alone may use the importing node's slot */
        const char *argv[1] = {"ASKING"};
        static const size_t lens[1] = {6};
        redisReply *ok = wire_call(c, w, 1, argv, lens);
        if (ok == NULL)
            return NULL;
        freeReplyObject(ok);
    }
    if (q->eval)
        return wire_eval(c, w, &w->scripts[q->script], q->nkeys, q->keys, q->key_lens, q->nargs,
                         q->args, q->arg_lens);
    return wire_call(c, w, q->argc, q->argv, q->lens);
}

static redisReply *route(struct lock_client *c, struct cluster_wire *cw, uint16_t slot,
                         uint64_t deadline_ms, const struct cw_request *q)
{
    int forced = -1, hops = 0;
    bool asking = false;
    for (unsigned attempt = 0;; attempt++) {
        if (cw->stale && forced < 0 && refresh(c, cw, -1) < 0)
            return NULL;
        int k = forced >= 0 ? forced : cw_node_of(cw, slot);
        if (k < 0) {
            lock_set_error(c, LOCK_ERR_PROTOCOL, "no node of the cluster serves slot %u",
                           (unsigned)slot);
            cw->stale = true;
            return NULL;
        }
        redisReply *rep = send_to(c, cw, k, asking, q);
        if (rep == NULL) { /* the node may be gone: a failover; the map is asked again */
            cw->stale = true;
            /* One that never left (the node refused the connection) is
             * sent again where the new map points, while time is left: a
             * promoted replica serves it. One that left may have run. */
            uint64_t now = lock_now_ms();
            if (c->err != LOCK_ERR_UNSENT || now >= deadline_ms || lock_cancelled(c))
                return NULL;
            forced = -1, asking = false;
            lock_sleep(c, wire_backoff_ms(c, attempt, now, deadline_ms));
            continue;
        }
        forced = -1;
        asking = false;
        uint16_t at;
        struct lock_endpoint to;
        bool ask;
        if (rep->type == REDIS_REPLY_ERROR && cw_redirect(rep->str, &at, &to, &ask)) {
            freeReplyObject(rep);
            if (to.host[0] == '\0')
                snprintf(to.host, sizeof(to.host), "%s", cw->node[k].ep.host);
            if (++hops > CW_MAX_HOPS || (forced = node_at(cw, &to)) < 0) {
                lock_set_error(c, LOCK_ERR_PROTOCOL, "slot %u: redirected %d times", (unsigned)slot,
                               hops);
                return NULL;
            }
            asking = ask;
            cw->asked += ask;
            cw->moved += !ask;
            if (!ask && refresh(c, cw, forced) == 0 && cw_node_of(cw, slot) == forced)
                forced = -1; /* the new map says so too */
            continue;
        }
        if (!error_is(rep, "TRYAGAIN") && !error_is(rep, "CLUSTERDOWN"))
            return rep;
        /* not run: a slot in the middle of a move, or the cluster electing */
        uint64_t now = lock_now_ms();
        if (now >= deadline_ms || lock_cancelled(c)) {
            lock_set_error(c, LOCK_ERR_REFUSED, "%s (until the wait ran out)", rep->str);
            freeReplyObject(rep);
            return NULL; /* refused to the end: it did not run */
        }
        freeReplyObject(rep);
        cw->stale = true;
        hops = 0; /* a slot on the move may send it back and forth until it has moved */
        lock_sleep(c, wire_backoff_ms(c, attempt, now, deadline_ms));
    }
}

redisReply *cw_call(struct lock_client *c, struct cluster_wire *cw, uint16_t slot,
                    uint64_t deadline_ms, int argc, const char **argv, const size_t *lens)
{
    const struct cw_request q = {.argc = argc, .argv = argv, .lens = lens};
    return route(c, cw, slot, deadline_ms, &q);
}

int cw_send(struct lock_client *c, struct cluster_wire *cw, uint16_t slot, int argc,
            const char **argv, const size_t *lens)
{
    int k = cw_node_of(cw, slot);
    if (k < 0 || cw->node[k].w == NULL || cw->node[k].w->ctx == NULL)
        return -1;
    return wire_send(c, cw->node[k].w, argc, argv, lens);
}

redisReply *cw_eval(struct lock_client *c, struct cluster_wire *cw, uint16_t slot,
                    uint64_t deadline_ms, size_t script, int nkeys, const char **keys,
                    const size_t *key_lens, int nargs, const char **args, const size_t *arg_lens)
{
    const struct cw_request q = {.eval = true,
                                 .script = script,
                                 .nkeys = nkeys,
                                 .keys = keys,
                                 .key_lens = key_lens,
                                 .nargs = nargs,
                                 .args = args,
                                 .arg_lens = arg_lens};
    return route(c, cw, slot, deadline_ms, &q);
}
