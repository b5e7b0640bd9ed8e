/* pg_wire.h - one libpq connection of a lock client, waited on only
 * through the seam (lock.h): connected with PQconnectStart/PQconnectPoll,
 * queried with PQsendQuery(Params) and read with PQconsumeInput/PQisBusy.
 * Shared by the PostgreSQL locks (postgres_advisory.c, postgres_row.c and
 * any other that speaks SQL): a query is general, a parameterised text
 * query whose answer is its row count, affected count and first value.
 */
#ifndef LOCKLAB_PG_WIRE_H
#define LOCKLAB_PG_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "algorithms/lock.h"

/* The schema the locks share, made on every connection (idempotently, and
 * safely when clients race to make it): a table of lock rows, keyed by the
 * lock's name, and the sequence fencing tokens come from. */
#define PG_LOCK_TABLE "locklab_locks"
#define PG_FENCE_SEQ  "locklab_fence"
/* postgres-optimistic's rows: a version per lock name. */
#define PG_VERSION_TABLE "locklab_versions"

struct pg_wire {
    PGconn *conn; /* NULL: not connected */
    const struct lock_endpoint *ep;
};

/* What a query answered. */
struct pg_reply {
    size_t rows;      /* rows of the last statement that returned rows */
    int64_t affected; /* PQcmdTuples of the last statement, -1 when none */
    bool null;        /* its first value was NULL (or there was none) */
    char value[64];   /* the first row's first column, as text */
    char sqlstate[6]; /* of the error, when the server refused */
    char tag[16];     /* the last statement's command tag: "COMMIT", "ROLLBACK", ... */
};

enum pg_outcome {
    PG_DONE = 0,       /* the server answered: it ran */
    PG_REFUSED = 1,    /* the server answered with an error: it surely did not run (sqlstate
                          says why; c->err LOCK_ERR_REFUSED) */
    PG_NO_ANSWER = -1, /* no answer (connection lost, timed out; c->err LOCK_ERR_IO or
                          LOCK_ERR_TIMEOUT): it may have run; the connection is closed */
    PG_UNSENT = -2,    /* never sent (no connection could be had; LOCK_ERR_UNSENT) */
};

/* A PostgreSQL lock's client state: size bytes zeroed, made c->impl (so
 * disconnect frees it whatever follows), once the config names a server.
 * NULL with c->err set. */
void *pg_client_impl(struct lock_client *c, size_t size);
/* Connect w to ep (closing what it had), and make the schema. 0, or -1
 * with c->err set; every failure counted in c->connect_failures, a refused
 * one in c->connect_refused too. */
int pg_connect(struct lock_client *c, struct pg_wire *w, const struct lock_endpoint *ep);
/* Connected now, or else a fresh connection made (0), or -1 (counted),
 * c->err LOCK_ERR_UNSENT: the request waiting for it never left. */
int pg_ensure(struct lock_client *c, struct pg_wire *w);
/* Close without counting anything (a crash, a disconnect). NULL-safe. */
void pg_close(struct pg_wire *w);
/* Close a connection found broken or abandoned mid-query: counted as one
 * lost connection in c->connect_failures. */
void pg_drop(struct lock_client *c, struct pg_wire *w);

/* Run sql (one statement with $1..$n params, or, with n == 0, any number
 * of statements in one message) and wait for its whole answer until
 * deadline_ns; params are text, NULL-terminated strings. Between waits it
 * looks at lock_cancelled when cancellable: cancelled, the connection is
 * dropped (the server ends the session and what it waited for) and the
 * outcome is PG_NO_ANSWER with LOCK_ERR_TIMEOUT and *cancelled set (a
 * connection closed on purpose: not counted as lost). */
enum pg_outcome pg_query(struct lock_client *c, struct pg_wire *w, const char *sql, int n,
                         const char *const *params, uint64_t deadline_ns, bool cancellable,
                         bool *cancelled, struct pg_reply *out);
/* now + ms + the client's io timeout, as a seam deadline. */
uint64_t pg_deadline(const struct lock_client *c, uint32_t ms);
/* The reply's first value as an integer (0 when it is not one). */
int64_t pg_int(const struct pg_reply *r);
/* Does the reply's first value read as true ("t")? */
bool pg_true(const struct pg_reply *r);

#endif
