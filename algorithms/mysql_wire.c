/* mysql_wire.c - a lock client's Connector/C connection on the seam:
 * MYSQL_OPT_NONBLOCK and the library's _start/_cont calls, every wait a
 * lock_wait on mysql_get_socket. The library's blocking calls
 * (mysql_real_connect, mysql_real_query, mysql_ping) are never used: they
 * would wait outside the seam. Nor is MYSQL_OPT_RECONNECT, which
 * reconnects inside a blocking call and is deprecated: lock.mysql.reconnect
 * is played here instead, where the new session can be seen.
 */
#include "algorithms/mysql_wire.h"

#include <errmsg.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "algorithms/mysql.h"

#define NS_PER_MS 1000000ULL
/* a wait that may be cancelled looks at the flag this often, as the
 * seam's sleep does */
#define CANCEL_SLICE_NS (50 * NS_PER_MS)
#define CONNECT_MS      2000 /* when the config gives no connect timeout */
#define IO_MS           5000 /* when it gives no io timeout */

/* Server errors that end the session: the connection is gone with them
 * (ER_CONNECTION_KILLED, ER_SERVER_SHUTDOWN). */
#define ER_KILLED   1927
#define ER_SHUTDOWN 1053

/* The schema, one statement each (a connection has no multi-statement
 * flag until it is made). CREATE ... IF NOT EXISTS is safe to race here:
 * the server serialises DDL on one name by its metadata lock. Names are
 * bytes (engine keys), compared as bytes. */
static const char *const schema_sql[] = {
    "CREATE DATABASE IF NOT EXISTS " MYSQL_DATABASE,
    "USE " MYSQL_DATABASE,
    "CREATE TABLE IF NOT EXISTS " MYSQL_FENCE_TABLE
    " (name VARBINARY(320) PRIMARY KEY, token BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS " MYSQL_LOCK_TABLE
    " (name VARBINARY(320) PRIMARY KEY, token BIGINT UNSIGNED NOT NULL DEFAULT 0) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS " MYSQL_VERSION_TABLE
    " (name VARBINARY(320) PRIMARY KEY, version BIGINT UNSIGNED NOT NULL DEFAULT 1) "
    "ENGINE=InnoDB",
};

static pthread_once_t library_once = PTHREAD_ONCE_INIT;

static void library_start(void)
{
    mysql_library_init(0, NULL, NULL);
}

void mysql_wire_library(void)
{
    pthread_once(&library_once, library_start);
}

void mysql_wire_credentials(MYSQL *m, const char **user, const char **password)
{
    const char *file = getenv(MYSQL_DEFAULTS_ENV);
    const char *pwd = getenv("MYSQL_PWD");
    *user = "root"; /* the managed server's, passwordless on loopback */
    *password = pwd && pwd[0] ? pwd : NULL;
    if (file && file[0]) {
        mysql_options(m, MYSQL_READ_DEFAULT_FILE, file);
        mysql_options(m, MYSQL_READ_DEFAULT_GROUP, "client");
        *user = NULL; /* the file's [client] user (and password) */
    }
}

uint64_t mysql_deadline(const struct lock_client *c, uint32_t ms)
{
    uint32_t io = c->cfg->io_timeout_ms ? c->cfg->io_timeout_ms : IO_MS;
    return lock_now_ns() + ((uint64_t)ms + io) * NS_PER_MS;
}

/* mysql_close sends COM_QUIT the blocking way: on a shut socket the
 * write fails at once instead of waiting on a server that reads nothing
 * (paused, or half-way through a login). The server sees the connection
 * end either way. */
static void close_handle(MYSQL *m)
{
    int fd = (int)mysql_get_socket(m);
    if (fd >= 0)
        shutdown(fd, SHUT_RDWR);
    mysql_close(m);
}

void mysql_close_wire(struct mysql_wire *w)
{
    if (w == NULL || w->m == NULL)
        return;
    close_handle(w->m);
    w->m = NULL;
}

void mysql_drop(struct lock_client *c, struct mysql_wire *w)
{
    if (w->m == NULL)
        return;
    c->connect_failures++;
    mysql_close_wire(w);
}

/* What poll saw, as the library's MYSQL_WAIT_* bits. */
static int ready_bits(const struct pollfd *p)
{
    int ready = 0;
    ready |= (p->revents & (POLLIN | POLLERR | POLLHUP)) ? MYSQL_WAIT_READ : 0;
    ready |= (p->revents & (POLLOUT | POLLERR | POLLHUP)) ? MYSQL_WAIT_WRITE : 0;
    ready |= (p->revents & POLLPRI) ? MYSQL_WAIT_EXCEPT : 0;
    return ready;
}

/* Wait for what the library asked (status: MYSQL_WAIT_*) until deadline:
 * what became ready, for its _cont (MYSQL_WAIT_TIMEOUT when the library's
 * own timer ran out); 0 when our deadline came first, -1 when the wait
 * failed or the client was cancelled (*cancelled set). */
static int wait_status(struct lock_client *c, MYSQL *m, int status, uint64_t deadline,
                       bool cancellable, bool *cancelled)
{
    uint64_t lib = LOCK_FOREVER;
    if (status & MYSQL_WAIT_TIMEOUT)
        lib = lock_now_ns() + (uint64_t)mysql_get_timeout_value_ms(m) * NS_PER_MS;
    struct pollfd p = {.fd = (int)mysql_get_socket(m), .events = 0};
    p.events |= (status & MYSQL_WAIT_READ) ? POLLIN : 0;
    p.events |= (status & MYSQL_WAIT_WRITE) ? POLLOUT : 0;
    p.events |= (status & MYSQL_WAIT_EXCEPT) ? POLLPRI : 0;
    for (;;) {
        uint64_t now = lock_now_ns();
        if (now >= lib)
            return MYSQL_WAIT_TIMEOUT;
        if (now >= deadline)
            return 0;
        if (cancellable && lock_cancelled(c)) {
            *cancelled = true;
            return -1;
        }
        uint64_t until = deadline < lib ? deadline : lib;
        if (cancellable && until - now > CANCEL_SLICE_NS)
            until = now + CANCEL_SLICE_NS;
        p.revents = 0;
        int r = lock_wait(c, &p, 1, until);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r > 0 && ready_bits(&p))
            return ready_bits(&p);
    }
}

/* The message without its trailing newline, into c->errstr. */
static void set_mysql_error(struct lock_client *c, int code, const char *what, MYSQL *m)
{
    const char *msg = m ? mysql_error(m) : "out of memory";
    lock_set_error(c, code, "%s: %.100s (%u)", what, msg, m ? mysql_errno(m) : 0u);
}

/* Dial and log in, waiting through the seam. */
static MYSQL *dial(struct lock_client *c, const struct lock_endpoint *ep)
{
    mysql_wire_library();
    MYSQL *m = mysql_init(NULL);
    if (m == NULL) {
        lock_set_error(c, LOCK_ERR_IO, "connect: out of memory");
        return NULL;
    }
    const char *user, *password;
    mysql_wire_credentials(m, &user, &password);
    mysql_options(m, MYSQL_OPT_NONBLOCK, 0);
    uint32_t ms = c->cfg->connect_timeout_ms ? c->cfg->connect_timeout_ms : CONNECT_MS;
    uint64_t deadline = lock_now_ns() + (uint64_t)ms * NS_PER_MS;
    MYSQL *ret = NULL;
    bool cancelled = false;
    int status = mysql_real_connect_start(&ret, m, ep->host, user, password, NULL,
                                          (unsigned)ep->port, NULL, CLIENT_MULTI_STATEMENTS);
    while (status) {
        int ready = wait_status(c, m, status, deadline, false, &cancelled);
        if (ready <= 0) {
            lock_set_error(c, LOCK_ERR_TIMEOUT, "connect %s:%d: no answer in %" PRIu32 " ms",
                           ep->host, ep->port, ms);
            close_handle(m);
            return NULL;
        }
        status = mysql_real_connect_cont(&ret, m, ready);
    }
    if (ret)
        return m;
    /* nobody listening: the server is gone, not slow */
    if (mysql_errno(m) == CR_CONN_HOST_ERROR || strstr(mysql_error(m), "refused"))
        c->connect_refused++;
    set_mysql_error(c, LOCK_ERR_IO, "connect", m);
    close_handle(m);
    return NULL;
}

/* The session set up: its wait_timeout, the schema. 0, or -1. */
static int prepare(struct lock_client *c, struct mysql_wire *w)
{
    struct mysql_reply r;
    if (w->wait_timeout_s) {
        char sql[64];
        snprintf(sql, sizeof(sql), "SET SESSION wait_timeout = %" PRIu32, w->wait_timeout_s);
        if (mysql_query_wire(c, w, sql, mysql_deadline(c, 0), false, NULL, NULL, &r) != MYSQL_DONE)
            return -1;
    }
    for (size_t i = 0; i < sizeof(schema_sql) / sizeof(schema_sql[0]); i++)
        if (mysql_query_wire(c, w, schema_sql[i], mysql_deadline(c, 0), false, NULL, NULL, &r) !=
            MYSQL_DONE)
            return -1;
    w->session = mysql_thread_id(w->m);
    return 0;
}

int mysql_connect(struct lock_client *c, struct mysql_wire *w, const struct lock_endpoint *ep)
{
    const struct mysql_spec *spec = lock_settings(c->cfg, &mysql_family);
    mysql_close_wire(w);
    w->ep = ep;
    w->reconnect = false; /* a session that ends while it is set up is a failed connect */
    w->wait_timeout_s = spec ? spec->wait_timeout_s : 0;
    w->m = dial(c, ep);
    if (w->m && prepare(c, w) == 0) {
        w->reconnect = spec && spec->reconnect;
        return 0;
    }
    /* Every dial is counted once, here, however far it got. */
    c->connect_failures++;
    mysql_close_wire(w);
    return -1;
}

void *mysql_client_impl(struct lock_client *c, size_t size)
{
    void *impl = calloc(1, size);
    if (impl == NULL) {
        lock_set_error(c, LOCK_ERR_CONFIG, "out of memory");
        return NULL;
    }
    c->impl = impl;
    if (c->cfg->n_endpoints == 0) {
        lock_set_error(c, LOCK_ERR_CONFIG, "no MySQL endpoint");
        return NULL;
    }
    return impl;
}

/* Has the server ended this idle session (killed it, wait_timeout, gone)?
 * It then closes the socket, perhaps after an error packet: readable
 * while no answer is due. One look, no wait: a peek that does not block
 * is one system call, where a wait through the seam with a passed
 * deadline cost an arming, a trip round the worker's loop and a switch
 * back, before every statement (a fifth of the cycle's time). */
static bool session_ended(MYSQL *m)
{
    char byte;
    ssize_t got = recv((int)mysql_get_socket(m), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return got >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

int mysql_ensure(struct lock_client *c, struct mysql_wire *w)
{
    /* a session the server ended while the client held nothing (its
     * wait_timeout between two steps) costs no acquire: dialled again */
    if (w->m && session_ended(w->m))
        mysql_drop(c, w);
    if (w->m)
        return 0;
    if (mysql_connect(c, w, w->ep) == 0)
        return 0;
    /* whatever the dial met, the request that needed it never left */
    c->err = LOCK_ERR_UNSENT;
    return -1;
}

/* The session to send on: a live one, a new one when it ended and
 * reconnect is on (counted), else none (*ended set). 0, or -1 unsent. */
static int live_session(struct lock_client *c, struct mysql_wire *w, bool *ended)
{
    if (w->m == NULL || !session_ended(w->m))
        return w->m ? 0 : -1;
    mysql_drop(c, w);
    if (!w->reconnect) {
        if (ended)
            *ended = true;
        lock_set_error(c, LOCK_ERR_UNSENT, "the session ended on the server's side");
        return -1;
    }
    /* MYSQL_OPT_RECONNECT's behaviour: a new session, and the statement
     * goes to it as if nothing had happened */
    if (mysql_connect(c, w, w->ep) < 0) {
        c->err = LOCK_ERR_UNSENT;
        return -1;
    }
    w->reconnects++;
    return 0;
}

/* Errors that mean the session is gone, the outcome unknown. */
static bool lost_errno(unsigned int e)
{
    return (e >= CR_MIN_ERROR && e <= CR_MAX_ERROR) || e == ER_KILLED || e == ER_SHUTDOWN;
}

enum step_end { STEP_DONE, STEP_LOST, STEP_TIMEOUT, STEP_CANCELLED };

/* Drive one _start/_cont pair to its end: the status loop every
 * non-blocking call of Connector/C shares. */
#define DRIVE(start_call, cont_call, result)                                                       \
    do {                                                                                           \
        int st_ = (start_call);                                                                    \
        while (st_) {                                                                              \
            int ready_ = wait_status(c, w->m, st_, deadline, cancellable, &cancel_);               \
            if (ready_ <= 0) {                                                                     \
                (result) = cancel_ ? STEP_CANCELLED : ready_ < 0 ? STEP_LOST : STEP_TIMEOUT;       \
                break;                                                                             \
            }                                                                                      \
            st_ = (cont_call);                                                                     \
        }                                                                                          \
    } while (0)

/* The result set now (if the statement gave one) into out. */
static enum step_end take_result(struct lock_client *c, struct mysql_wire *w, uint64_t deadline,
                                 bool cancellable, struct mysql_reply *out)
{
    enum step_end e = STEP_DONE;
    bool cancel_ = false;
    MYSQL_RES *res = NULL;
    if (mysql_field_count(w->m) == 0) {
        out->affected = (int64_t)mysql_affected_rows(w->m);
        out->insert_id = mysql_insert_id(w->m);
        return STEP_DONE;
    }
    DRIVE(mysql_store_result_start(&res, w->m), mysql_store_result_cont(&res, w->m, st_), e);
    if (e != STEP_DONE)
        return e;
    if (res == NULL)
        return STEP_LOST;
    out->rows = (size_t)mysql_num_rows(res);
    MYSQL_ROW row = mysql_fetch_row(res);
    out->null = row == NULL || mysql_num_fields(res) == 0 || row[0] == NULL;
    out->value[0] = '\0';
    if (!out->null)
        snprintf(out->value, sizeof(out->value), "%s", row[0]);
    mysql_free_result(res);
    return STEP_DONE;
}

/* Send sql and read every result it gives; *refused when the server
 * answered an error (it stops there). */
static enum step_end run_statements(struct lock_client *c, struct mysql_wire *w, const char *sql,
                                    uint64_t deadline, bool cancellable, bool *refused,
                                    struct mysql_reply *out)
{
    enum step_end e = STEP_DONE;
    bool cancel_ = false;
    int err = 0;
    DRIVE(mysql_real_query_start(&err, w->m, sql, strlen(sql)),
          mysql_real_query_cont(&err, w->m, st_), e);
    for (int more = 0; e == STEP_DONE;) {
        if (err) {
            *refused = true;
            return STEP_DONE;
        }
        if ((e = take_result(c, w, deadline, cancellable, out)) != STEP_DONE ||
            !mysql_more_results(w->m))
            break;
        DRIVE(mysql_next_result_start(&more, w->m), mysql_next_result_cont(&more, w->m, st_), e);
        err = more > 0;
        if (more < 0)
            break;
    }
    return e;
}

enum mysql_outcome mysql_query_wire(struct lock_client *c, struct mysql_wire *w, const char *sql,
                                    uint64_t deadline_ns, bool cancellable, bool *cancelled,
                                    bool *ended, struct mysql_reply *out)
{
    memset(out, 0, sizeof(*out));
    out->affected = -1;
    out->null = true;
    if (cancelled)
        *cancelled = false;
    if (ended)
        *ended = false;
    if (live_session(c, w, ended) < 0) {
        if (c->err != LOCK_ERR_UNSENT)
            lock_set_error(c, LOCK_ERR_UNSENT, "not connected to %s:%d", w->ep ? w->ep->host : "?",
                           w->ep ? w->ep->port : 0);
        return MYSQL_UNSENT;
    }
    bool refused = false;
    enum step_end e = run_statements(c, w, sql, deadline_ns, cancellable, &refused, out);
    if (e == STEP_DONE && refused && !lost_errno(mysql_errno(w->m))) {
        out->errnum = mysql_errno(w->m);
        set_mysql_error(c, LOCK_ERR_REFUSED, "refused", w->m);
        return MYSQL_REFUSED;
    }
    if (e == STEP_DONE && !refused)
        return MYSQL_DONE;
    if (e == STEP_DONE || e == STEP_LOST)
        set_mysql_error(c, LOCK_ERR_IO, "connection lost", w->m);
    else
        lock_set_error(c, LOCK_ERR_TIMEOUT, "%s",
                       e == STEP_CANCELLED ? "cancelled while waiting" : "no answer in time");
    if (cancelled)
        *cancelled = e == STEP_CANCELLED;
    /* the statement may still run: only closing the session ends it */
    if (e == STEP_CANCELLED)
        mysql_close_wire(w);
    else
        mysql_drop(c, w);
    return MYSQL_NO_ANSWER;
}

int mysql_quote(const struct mysql_wire *w, const char *name, size_t name_len, char *out,
                size_t len)
{
    /* worst case every byte escaped, two quotes and the NUL */
    if (w->m == NULL || len < 2 * name_len + 3)
        return -1;
    out[0] = '\'';
    unsigned long n = mysql_real_escape_string(w->m, out + 1, name, (unsigned long)name_len);
    out[n + 1] = '\'';
    out[n + 2] = '\0';
    return 0;
}

int64_t mysql_int(const struct mysql_reply *r)
{
    return r->null ? 0 : strtoll(r->value, NULL, 10);
}

enum mysql_outcome mysql_next_token(struct lock_client *c, struct mysql_wire *w, const char *quoted,
                                    uint64_t *token)
{
    char sql[2 * MYSQL_NAME_MAX + 192];
    struct mysql_reply r = {0};
    snprintf(sql, sizeof(sql),
             "INSERT INTO " MYSQL_FENCE_TABLE " (name, token) VALUES (%s, LAST_INSERT_ID(1)) "
             "ON DUPLICATE KEY UPDATE token = LAST_INSERT_ID(token + 1)",
             quoted);
    enum mysql_outcome o = mysql_query_wire(c, w, sql, mysql_deadline(c, 0), false, NULL, NULL, &r);
    *token = o == MYSQL_DONE ? r.insert_id : 0;
    return o;
}
