/* mysql_wire.h - one MariaDB Connector/C connection of a lock client,
 * waited on only through the seam (lock.h): MYSQL_OPT_NONBLOCK, then
 * mysql_real_connect_start/_cont, mysql_real_query_start/_cont and
 * mysql_store_result_start/_cont, each wait a lock_wait on
 * mysql_get_socket with a deadline. Shared by the MySQL locks
 * (mysql_named.c, mysql_row.c, mysql_optimistic.c): a query is one text
 * statement (or several, separated by ';') whose answer is its first
 * value, its row count and its affected count.
 *
 * lock.mysql.reconnect (mysql.h) is played here, in the wire, as
 * MYSQL_OPT_RECONNECT plays it in the client library: a session found
 * ended before a statement is sent is replaced by a new one without a
 * word to the lock, and the statement goes to the new session. The new
 * session's id (mysql_thread_id) and the reconnects counter show it.
 */
#ifndef LOCKLAB_MYSQL_WIRE_H
#define LOCKLAB_MYSQL_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mysql.h>

#include "algorithms/lock.h"

/* The schema the locks share, made on every connection if absent, in the
 * database MYSQL_DATABASE (made too): mysql-named's fencing counters,
 * mysql-row's lock rows (each with its counter), mysql-optimistic's
 * versions. On a user's own server (--mysql) the fleet drops them once
 * the run ends (sim/fleet/mariadb_server.c). */
#define MYSQL_DATABASE      "locklab"
#define MYSQL_FENCE_TABLE   "locklab_fence"
#define MYSQL_LOCK_TABLE    "locklab_locks"
#define MYSQL_VERSION_TABLE "locklab_versions"
/* Room for a lock's name (an engine key) in a statement, quoted. */
#define MYSQL_NAME_MAX (LOCK_OWNER_MAX + 256)

/* The environment variable locklab's --mysql-defaults-file sets: an
 * option file Connector/C reads ([client] user, password, ...), so a
 * password is never on a command line. MYSQL_PWD is read too. */
#define MYSQL_DEFAULTS_ENV "LOCKLAB_MYSQL_DEFAULTS_FILE"

struct mysql_wire {
    MYSQL *m; /* NULL: not connected */
    const struct lock_endpoint *ep;
    unsigned long session;   /* the server's id of the session now (CONNECTION_ID()) */
    uint64_t reconnects;     /* sessions replaced by lock.mysql.reconnect */
    bool reconnect;          /* lock.mysql.reconnect, copied at connect */
    uint32_t wait_timeout_s; /* lock.mysql.wait_timeout_s; 0: the server's */
};

/* What a statement answered. */
struct mysql_reply {
    size_t rows;         /* rows of the last result set */
    int64_t affected;    /* of the last statement that changed rows; -1 when none */
    uint64_t insert_id;  /* what LAST_INSERT_ID(expr) set, as the OK packet carries it */
    bool null;           /* its first value was NULL (or there was none) */
    char value[64];      /* the first row's first column, as text */
    unsigned int errnum; /* the server's error number, when it refused */
};

enum mysql_outcome {
    MYSQL_DONE = 0,       /* the server answered: it ran */
    MYSQL_REFUSED = 1,    /* the server answered with an error: it did not run (errnum says
                             why; c->err LOCK_ERR_REFUSED) */
    MYSQL_NO_ANSWER = -1, /* no answer (lost, timed out; c->err LOCK_ERR_IO or
                             LOCK_ERR_TIMEOUT): it may have run; the connection is closed */
    MYSQL_UNSENT = -2,    /* never sent: no connection, or the session had ended before it
                             (LOCK_ERR_UNSENT) */
};

/* Connector/C's one-time set-up, safe from any thread (mysql_init is not
 * until it has run). */
void mysql_wire_library(void);
/* Credentials on m: the option file named by MYSQL_DEFAULTS_ENV, then
 * MYSQL_PWD; user root when neither names one (the managed server's). The
 * user and password to pass to mysql_real_connect*, NULL when the option
 * file gives them. */
void mysql_wire_credentials(MYSQL *m, const char **user, const char **password);

/* A MySQL lock's client state: size bytes zeroed, made c->impl (so
 * disconnect frees it whatever follows), once the config names a server.
 * NULL with c->err set. */
void *mysql_client_impl(struct lock_client *c, size_t size);
/* Connect w to ep (closing what it had), set the session's wait_timeout
 * when asked, and make the schema. 0, or -1 with c->err set; every failure
 * counted in c->connect_failures, a refused one in c->connect_refused. */
int mysql_connect(struct lock_client *c, struct mysql_wire *w, const struct lock_endpoint *ep);
/* Connected now to a session the server has not ended, or else a fresh
 * connection made (0), or -1 (counted), c->err LOCK_ERR_UNSENT. For a
 * client that holds nothing on w: a release must not reconnect. */
int mysql_ensure(struct lock_client *c, struct mysql_wire *w);
/* Close without counting anything (a crash, a disconnect): the socket
 * shut first, so no COM_QUIT can wait on a server that does not read.
 * NULL-safe. */
void mysql_close_wire(struct mysql_wire *w);
/* Close a connection found broken or abandoned mid-statement: counted
 * as one lost connection in c->connect_failures. */
void mysql_drop(struct lock_client *c, struct mysql_wire *w);

/* Run sql and wait for its whole answer until deadline_ns. Before it is
 * sent, a session the server ended while idle (killed, wait_timeout, a
 * server gone) is found: with lock.mysql.reconnect a new session takes its
 * place silently, else the outcome is MYSQL_UNSENT with *ended set (NULL:
 * not asked). Between waits it looks at lock_cancelled when cancellable:
 * cancelled, the connection is closed (the server ends the session and
 * what it waited for), MYSQL_NO_ANSWER, LOCK_ERR_TIMEOUT, *cancelled set. */
enum mysql_outcome mysql_query_wire(struct lock_client *c, struct mysql_wire *w, const char *sql,
                                    uint64_t deadline_ns, bool cancellable, bool *cancelled,
                                    bool *ended, struct mysql_reply *out);
/* now + ms + the client's io timeout, as a seam deadline. */
uint64_t mysql_deadline(const struct lock_client *c, uint32_t ms);
/* name as a quoted SQL string literal into out (room for len); -1 when it
 * does not fit. */
int mysql_quote(const struct mysql_wire *w, const char *name, size_t name_len, char *out,
                size_t len);
/* The reply's first value as an integer (0 when it is not one). */
int64_t mysql_int(const struct mysql_reply *r);
/* The fencing token of a name (quoted as mysql_quote makes it): its
 * counter in MYSQL_FENCE_TABLE incremented on w in autocommit, so it is
 * committed whatever becomes of a lock held elsewhere. The outcome, and
 * *token set (> 0) when it is MYSQL_DONE and the counter moved. */
enum mysql_outcome mysql_next_token(struct lock_client *c, struct mysql_wire *w, const char *quoted,
                                    uint64_t *token);

#endif
