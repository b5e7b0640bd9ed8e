/* mysql_named.c - MySQL's and MariaDB's named user-level lock, as their
 * manuals describe GET_LOCK and RELEASE_LOCK (Locking Functions).
 *
 * The name is the engine's key itself (at most 64 characters, the
 * servers' limit), so any other client takes the same lock with
 *   SELECT GET_LOCK('<name>', <seconds>);
 * and IS_USED_LOCK('<name>') shows the session that holds it.
 * acquire: SELECT GET_LOCK(name, wait_ms / 1000). The server queues the
 *   waiters and answers 1 (granted), 0 (the timeout ran out: busy) or NULL
 *   (an error: the lock is not ours); nothing polls. The token, with
 *   fencing: the name's counter row in locklab_fence incremented in the
 *   same session right after the grant (INSERT ... ON DUPLICATE KEY UPDATE
 *   token = LAST_INSERT_ID(token + 1), autocommit), so a later holder
 *   always has a larger one.
 * release: SELECT RELEASE_LOCK(name): 1 released; 0 (another session holds
 *   it) or NULL (nobody does) mean ours was already lost: LOCK_LOST. A
 *   session the server ended while we held it (KILL CONNECTION,
 *   wait_timeout, a restart) took its locks with it: LOCK_LOST too, unless
 *   lock.mysql.reconnect hid the end, when the release goes to a new
 *   session, which answers NULL.
 * There is no ttl: the lock lasts as long as its session. A crashed
 *   client's socket closes and the server frees its locks at once; a
 *   paused client's session stays open (unless wait_timeout ends it) and
 *   keeps them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "algorithms/mysql.h"
#include "algorithms/mysql_wire.h"

#define NAME_MAX_CHARS 64 /* GET_LOCK's limit on a name (ER_USER_LOCK_WRONG_NAME past it) */

struct named {
    struct mysql_wire w;
    char quoted[2 * MYSQL_NAME_MAX + 3];
    char sql[2 * MYSQL_NAME_MAX + 192];
};

static int named_connect(struct lock_client *c)
{
    struct named *n = mysql_client_impl(c, sizeof(*n));
    if (n == NULL)
        return -1;
    return mysql_connect(c, &n->w, &c->cfg->endpoints[0]);
}

static void named_disconnect(struct lock_client *c)
{
    struct named *n = c->impl;
    if (n)
        mysql_close_wire(&n->w);
    free(n);
    c->impl = NULL;
}

/* The fencing token: the name's counter, incremented after the grant. */
static enum lock_result take_token(struct lock_client *c, struct named *n, struct lock_grant *g)
{
    struct mysql_reply r;
    uint64_t token;
    enum mysql_outcome o = mysql_next_token(c, &n->w, n->quoted, &token);
    if (o == MYSQL_DONE && token > 0) {
        g->token = token;
        return LOCK_OK;
    }
    /* held with no token to show: given back (or gone with the session),
     * and the acquire fails */
    char why[LOCK_ERRSTR_MAX];
    snprintf(why, sizeof(why), "%s", c->errstr);
    int err = c->err ? c->err : LOCK_ERR_PROTOCOL;
    if (o == MYSQL_REFUSED) {
        snprintf(n->sql, sizeof(n->sql), "SELECT RELEASE_LOCK(%s)", n->quoted);
        mysql_query_wire(c, &n->w, n->sql, mysql_deadline(c, 0), false, NULL, NULL, &r);
    }
    lock_set_error(c, err, "no fencing token: %s", why);
    return LOCK_ERR;
}

static enum lock_result named_acquire(struct lock_client *c, const char *key, size_t key_len,
                                      uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    struct named *n = c->impl;
    struct mysql_reply r;
    bool cancelled;
    char timeout[24];
    if (key_len > NAME_MAX_CHARS) {
        lock_set_error(c, LOCK_ERR_CONFIG, "key of %zu bytes: GET_LOCK takes names of at most %d",
                       key_len, NAME_MAX_CHARS);
        return LOCK_ERR;
    }
    if (lock_cancelled(c))
        return LOCK_BUSY;
    if (mysql_ensure(c, &n->w) < 0 ||
        mysql_quote(&n->w, key, key_len, n->quoted, sizeof(n->quoted)) < 0)
        return LOCK_ERR;
    mysql_get_lock_timeout(wait_ms, timeout, sizeof(timeout));
    snprintf(n->sql, sizeof(n->sql), "SELECT GET_LOCK(%s, %s)", n->quoted, timeout);
    enum mysql_outcome o =
        mysql_query_wire(c, &n->w, n->sql, mysql_deadline(c, wait_ms), true, &cancelled, NULL, &r);
    if (cancelled)
        return LOCK_BUSY; /* the session went with the wait: nothing is held */
    if (o != MYSQL_DONE)
        return LOCK_ERR; /* no answer: the session is closed, so is any grant */
    if (r.null) {
        lock_set_error(c, LOCK_ERR_PROTOCOL, "GET_LOCK(%s) answered NULL: an error", n->quoted);
        return LOCK_ERR;
    }
    if (mysql_int(&r) != 1)
        return LOCK_BUSY; /* 0: the timeout ran out */
    *g = (struct lock_grant){.key = key,
                             .key_len = key_len,
                             .ttl_ms = ttl_ms,
                             /* no expiry: the ttl asked is all a caller plans with */
                             .validity_ms = ttl_ms};
    return c->cfg->want_token ? take_token(c, n, g) : LOCK_OK;
}

static enum lock_result named_release(struct lock_client *c, const struct lock_grant *g)
{
    struct named *n = c->impl;
    struct mysql_reply r;
    bool ended = false;
    if (n->w.m == NULL) {
        lock_set_error(c, LOCK_ERR_IO, "the session that held it ended");
        return LOCK_LOST;
    }
    if (mysql_quote(&n->w, g->key, g->key_len, n->quoted, sizeof(n->quoted)) < 0) {
        lock_set_error(c, LOCK_ERR_CONFIG, "cannot quote the key");
        return LOCK_ERR;
    }
    snprintf(n->sql, sizeof(n->sql), "SELECT RELEASE_LOCK(%s)", n->quoted);
    enum mysql_outcome o =
        mysql_query_wire(c, &n->w, n->sql, mysql_deadline(c, 0), false, NULL, &ended, &r);
    if (ended) {
        lock_set_error(c, LOCK_ERR_IO, "the session that held it ended");
        return LOCK_LOST;
    }
    if (o != MYSQL_DONE)
        return LOCK_ERR;
    if (mysql_int(&r) == 1)
        return LOCK_OK;
    lock_set_error(c, LOCK_ERR_NONE, "RELEASE_LOCK answered %s: %s", r.null ? "NULL" : r.value,
                   r.null ? "nobody held it" : "another session holds it");
    return LOCK_LOST;
}

static void named_crash(struct lock_client *c)
{
    /* the socket closed without a release: the server ends the session */
    named_disconnect(c);
}

const struct lock_ops mysql_named_ops = {
    .name = "mysql-named",
    .summary = "MySQL/MariaDB named lock: GET_LOCK(name, wait) / RELEASE_LOCK, per session",
    .server = "mysql",
    .family = &mysql_family,
    .leaseless = true,
    .gives_token = true,
    .connect = named_connect,
    .disconnect = named_disconnect,
    .acquire = named_acquire,
    .release = named_release,
    .crash = named_crash,
};
