/* pg_wire.c - a lock client's libpq connection on the seam: libpq's
 * asynchronous calls, and every wait a lock_wait on PQsocket. libpq's own
 * blocking calls (PQexec, PQconnectdb) are never used: they would wait
 * outside the seam.
 */
#include "algorithms/pg_wire.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_MS 1000000ULL
/* a wait that may be cancelled looks at the flag this often (lock.h's
 * seam notices a cancel within 50 ms; so does this) */
#define CANCEL_SLICE_NS (50 * NS_PER_MS)
/* clients racing to make the schema: one wins, the others see it made */
#define SCHEMA_TRIES 5

/* The schema's statements, safe to repeat. CREATE ... IF NOT EXISTS is not
 * safe to race: two sessions may both find the name free and the later
 * insert into the catalog fails (unique_violation on pg_type's or
 * pg_class's index, or duplicate_table); then it exists, and a retry sees
 * it. */
static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS " PG_LOCK_TABLE " (key text PRIMARY KEY); "
    "CREATE TABLE IF NOT EXISTS " PG_VERSION_TABLE
    " (key text PRIMARY KEY, version bigint NOT NULL DEFAULT 1); "
    "CREATE SEQUENCE IF NOT EXISTS " PG_FENCE_SEQ;

static bool schema_race(const char *sqlstate)
{
    return strcmp(sqlstate, "23505") == 0 || strcmp(sqlstate, "42P07") == 0 ||
           strcmp(sqlstate, "42710") == 0;
}

static void quiet(void *arg, const char *message)
{
    /* a WARNING such as "you don't own a lock" is answered in the result
     * too; libpq would print it on locklab's terminal */
    (void)arg;
    (void)message;
}

uint64_t pg_deadline(const struct lock_client *c, uint32_t ms)
{
    uint32_t io = c->cfg->io_timeout_ms ? c->cfg->io_timeout_ms : 5000;
    return lock_now_ns() + ((uint64_t)ms + io) * NS_PER_MS;
}

void pg_close(struct pg_wire *w)
{
    if (w && w->conn)
        PQfinish(w->conn);
    if (w)
        w->conn = NULL;
}

void pg_drop(struct lock_client *c, struct pg_wire *w)
{
    if (w->conn == NULL)
        return;
    c->connect_failures++;
    pg_close(w);
}

/* The message without its trailing newline, into c->errstr. */
static void set_pg_error(struct lock_client *c, int code, const char *what, const char *msg)
{
    size_t len = strcspn(msg, "\n");
    lock_set_error(c, code, "%s: %.*s", what, (int)(len > 100 ? 100 : len), msg);
}

/* Dial and finish the start-up exchange, waiting through the seam. */
static PGconn *dial(struct lock_client *c, const struct lock_endpoint *ep)
{
    char info[256];
    /* user and database postgres, as the managed server has them, unless
     * the environment names others (libpq reads PGUSER, PGDATABASE) */
    snprintf(info, sizeof(info), "host=%s port=%d application_name=locklab%s%s", ep->host, ep->port,
             getenv("PGUSER") ? "" : " user=postgres",
             getenv("PGDATABASE") ? "" : " dbname=postgres");
    PGconn *pg = PQconnectStart(info);
    uint64_t deadline =
        lock_now_ns() +
        (uint64_t)(c->cfg->connect_timeout_ms ? c->cfg->connect_timeout_ms : 2000) * NS_PER_MS;
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    while (pg && PQstatus(pg) != CONNECTION_BAD && st != PGRES_POLLING_OK &&
           st != PGRES_POLLING_FAILED) {
        struct pollfd p = {.fd = PQsocket(pg),
                           .events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT};
        int r = lock_wait(c, &p, 1, deadline);
        if (r < 0 && errno != EINTR)
            break;
        if (r == 0) {
            lock_set_error(c, LOCK_ERR_TIMEOUT, "connect %s:%d: no answer in %" PRIu32 " ms",
                           ep->host, ep->port, c->cfg->connect_timeout_ms);
            PQfinish(pg);
            return NULL;
        }
        st = PQconnectPoll(pg);
    }
    if (pg && PQstatus(pg) == CONNECTION_OK && PQsetnonblocking(pg, 1) == 0) {
        PQsetNoticeProcessor(pg, quiet, NULL);
        return pg;
    }
    const char *msg = pg ? PQerrorMessage(pg) : "out of memory";
    set_pg_error(c, LOCK_ERR_IO, "connect", msg);
    /* nobody listening: the server is gone, not slow */
    if (strstr(msg, "refused"))
        c->connect_refused++;
    PQfinish(pg);
    return NULL;
}

int pg_connect(struct lock_client *c, struct pg_wire *w, const struct lock_endpoint *ep)
{
    pg_close(w);
    w->ep = ep;
    w->conn = dial(c, ep);
    for (int i = 0; w->conn && i < SCHEMA_TRIES; i++) {
        struct pg_reply r;
        enum pg_outcome o = pg_query(c, w, schema_sql, 0, NULL, pg_deadline(c, 0), false, NULL, &r);
        if (o == PG_DONE)
            return 0;
        if (o != PG_REFUSED || !schema_race(r.sqlstate))
            break;
    }
    /* Every dial is counted once, here, however far it got. */
    c->connect_failures++;
    pg_close(w);
    return -1;
}

void *pg_client_impl(struct lock_client *c, size_t size)
{
    void *impl = calloc(1, size);
    if (impl == NULL) {
        lock_set_error(c, LOCK_ERR_CONFIG, "out of memory");
        return NULL;
    }
    c->impl = impl;
    if (c->cfg->n_endpoints == 0) {
        lock_set_error(c, LOCK_ERR_CONFIG, "no PostgreSQL endpoint");
        return NULL;
    }
    return impl;
}

int pg_ensure(struct lock_client *c, struct pg_wire *w)
{
    if (w->conn && PQstatus(w->conn) == CONNECTION_OK)
        return 0;
    if (pg_connect(c, w, w->ep) == 0)
        return 0;
    /* whatever the dial met, the request that needed it never left */
    c->err = LOCK_ERR_UNSENT;
    return -1;
}

enum wait_end { WAIT_READY, WAIT_LOST, WAIT_TIMEOUT, WAIT_CANCELLED };

/* Wait until libpq has a whole result (not busy), reading as it comes. */
static enum wait_end wait_idle(struct lock_client *c, PGconn *pg, uint64_t deadline_ns,
                               bool cancellable)
{
    for (;;) {
        /* what is left to send first: a long parameter may not fit at once */
        int f = PQflush(pg);
        if (f < 0)
            return WAIT_LOST;
        if (f == 0 && !PQisBusy(pg))
            return WAIT_READY;
        uint64_t now = lock_now_ns(), until = deadline_ns;
        if (now >= deadline_ns)
            return WAIT_TIMEOUT;
        if (cancellable && lock_cancelled(c))
            return WAIT_CANCELLED;
        if (cancellable && until - now > CANCEL_SLICE_NS)
            until = now + CANCEL_SLICE_NS;
        struct pollfd p = {.fd = PQsocket(pg), .events = POLLIN | (f ? POLLOUT : 0)};
        int r = lock_wait(c, &p, 1, until);
        if (r < 0 && errno != EINTR)
            return WAIT_LOST;
        if (r > 0 && (p.revents & (POLLIN | POLLERR | POLLHUP)) && !PQconsumeInput(pg))
            return WAIT_LOST;
    }
}

static void keep_rows(const PGresult *res, struct pg_reply *out)
{
    out->rows = (size_t)PQntuples(res);
    out->null = out->rows == 0 || PQnfields(res) == 0 || PQgetisnull(res, 0, 0);
    out->value[0] = '\0';
    if (!out->null)
        snprintf(out->value, sizeof(out->value), "%s", PQgetvalue(res, 0, 0));
}

enum pg_outcome pg_query(struct lock_client *c, struct pg_wire *w, const char *sql, int n,
                         const char *const *params, uint64_t deadline_ns, bool cancellable,
                         bool *cancelled, struct pg_reply *out)
{
    memset(out, 0, sizeof(*out));
    out->affected = -1;
    out->null = true;
    if (cancelled)
        *cancelled = false;
    PGconn *pg = w->conn;
    if (pg == NULL) {
        lock_set_error(c, LOCK_ERR_UNSENT, "not connected to %s:%d", w->ep ? w->ep->host : "?",
                       w->ep ? w->ep->port : 0);
        return PG_UNSENT;
    }
    int sent =
        n ? PQsendQueryParams(pg, sql, n, NULL, params, NULL, NULL, 0) : PQsendQuery(pg, sql);
    if (!sent) {
        /* refused by libpq before a byte left: a broken connection */
        set_pg_error(c, LOCK_ERR_UNSENT, "send", PQerrorMessage(pg));
        pg_drop(c, w);
        return PG_UNSENT;
    }
    bool refused = false;
    for (;;) {
        enum wait_end e = wait_idle(c, pg, deadline_ns, cancellable);
        if (e != WAIT_READY) {
            if (e == WAIT_LOST)
                set_pg_error(c, LOCK_ERR_IO, "connection lost", PQerrorMessage(pg));
            else
                lock_set_error(c, LOCK_ERR_TIMEOUT, "%s",
                               e == WAIT_CANCELLED ? "cancelled while waiting"
                                                   : "no answer in time");
            if (cancelled)
                *cancelled = e == WAIT_CANCELLED;
            /* the query is still in flight: only closing makes it end */
            if (e == WAIT_CANCELLED)
                pg_close(w);
            else
                pg_drop(c, w);
            return PG_NO_ANSWER;
        }
        PGresult *res = PQgetResult(pg);
        if (res == NULL)
            break;
        ExecStatusType st = PQresultStatus(res);
        if ((st == PGRES_FATAL_ERROR || st == PGRES_BAD_RESPONSE) && !refused) {
            const char *code = PQresultErrorField(res, PG_DIAG_SQLSTATE);
            snprintf(out->sqlstate, sizeof(out->sqlstate), "%s", code ? code : "");
            set_pg_error(c, LOCK_ERR_REFUSED, "refused", PQresultErrorMessage(res));
            refused = true;
        } else if (st == PGRES_TUPLES_OK) {
            keep_rows(res, out);
        }
        snprintf(out->tag, sizeof(out->tag), "%s", PQcmdStatus(res));
        const char *tuples = PQcmdTuples(res);
        if (tuples[0])
            out->affected = strtoll(tuples, NULL, 10);
        PQclear(res);
    }
    if (PQstatus(pg) != CONNECTION_OK) {
        /* the server ended the session (terminated, shut down) while it
         * ran the query: whether it took effect is unknown */
        if (!refused)
            set_pg_error(c, LOCK_ERR_IO, "connection lost", PQerrorMessage(pg));
        c->err = LOCK_ERR_IO;
        pg_drop(c, w);
        return PG_NO_ANSWER;
    }
    return refused ? PG_REFUSED : PG_DONE;
}

int64_t pg_int(const struct pg_reply *r)
{
    return r->null ? 0 : strtoll(r->value, NULL, 10);
}

bool pg_true(const struct pg_reply *r)
{
    return !r->null && r->value[0] == 't';
}
