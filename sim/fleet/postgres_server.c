/* postgres_server.c - the server kind "postgres": PostgreSQL 15 from
 * Debian's packages, on loopback, as SETUP.md measured it. initdb (about
 * a second) runs once per run into a template; each server starts from a
 * copy of it (0.05 s). Both refuse root, so the server runs as the
 * postgres user (spawn_run_as), in folders that user owns, in the run's
 * shared folder (cluster_shared_dir): whatever the user's TMPDIR, which
 * the postgres user may not pass through (mktemp -d makes it 0700). Its data
 * folder stays through every fault: a restart finds its tables (fsync is
 * off, so a machine crash would lose them; a process kill does not).
 */
#include <errno.h>
#include <libpq-fe.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/fleet/cluster.h"
#include "sim/fleet/pgbouncer_server.h"
#include "sim/fleet/postgres_server.h"
#include "sim/fleet/server_kind.h"
#include "sim/fleet/spawn.h"
#include "sim/record/run_meta.h"

extern const struct server_kind server_postgres;

#define INITDB_TIMEOUT_MS 60000 /* measured 0.99 s; room for a loaded box */
#define COPY_TIMEOUT_MS   30000 /* the 39 MB template: 0.07 s */
#define SOCKET_PATH_MAX   107   /* sizeof(sockaddr_un.sun_path) less its NUL */

static const char *bin_dir(void)
{
    return spawn_env_or("LOCKLAB_POSTGRES_BIN", "/usr/lib/postgresql/15/bin");
}

/* Can pw pass through every folder above path (by its mode bits)? The
 * shared folder is made so that it can; a machine whose /var/tmp it
 * cannot pass is named. 0, or -1 with err naming the folder. */
static int reachable(const struct passwd *pw, const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    for (char *slash = strrchr(dir, '/'); slash && slash != dir; slash = strrchr(dir, '/')) {
        *slash = '\0';
        struct stat st;
        if (stat(dir, &st) < 0)
            continue;
        bool pass = (st.st_mode & S_IXOTH) || (st.st_uid == pw->pw_uid && (st.st_mode & S_IXUSR)) ||
                    (st.st_gid == pw->pw_gid && (st.st_mode & S_IXGRP));
        if (!pass) {
            snprintf(err, errlen,
                     "PostgreSQL runs as the %s user, which cannot pass through %s (mode %04o)",
                     POSTGRES_USER, dir, (unsigned)(st.st_mode & 07777));
            return -1;
        }
    }
    return 0;
}

int postgres_server_own(const char *path, char *err, size_t errlen)
{
    const struct passwd *pw = getpwnam(POSTGRES_USER);
    if (pw == NULL) {
        snprintf(err, errlen, "no user %s on this machine (is PostgreSQL installed?)",
                 POSTGRES_USER);
        return -1;
    }
    if (reachable(pw, path, err, errlen) < 0)
        return -1;
    if (chown(path, pw->pw_uid, pw->pw_gid) < 0) {
        snprintf(err, errlen, "cannot give %s to %s: %s", path, POSTGRES_USER, strerror(errno));
        return -1;
    }
    return 0;
}

/* The run's initdb, made once: <root>/postgres-template/data. */
static int template_dir(struct cluster *c, char *tmpl, size_t len, char *err, size_t errlen)
{
    char shared[sizeof(c->shared)], dir[300], version[340], initdb[300], log[340];
    if (cluster_shared_dir(c, shared, sizeof(shared), err, errlen) < 0)
        return -1;
    snprintf(dir, sizeof(dir), "%s/postgres-template", shared);
    snprintf(tmpl, len, "%s/data", dir);
    snprintf(version, sizeof(version), "%s/PG_VERSION", tmpl);
    if (access(version, R_OK) == 0)
        return 0;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "mkdir %s: %s", dir, strerror(errno));
        return -1;
    }
    if (postgres_server_own(dir, err, errlen) < 0)
        return -1;
    snprintf(initdb, sizeof(initdb), "%.280s/initdb", bin_dir());
    snprintf(log, sizeof(log), "%s/initdb.log", dir);
    const char *argv[] = {initdb,  "-D", tmpl,   "-U",          POSTGRES_USER, "-A",
                          "trust", "-E", "UTF8", "--no-locale", "--no-sync",   NULL};
    int rc = spawn_run(POSTGRES_USER, argv, log, INITDB_TIMEOUT_MS);
    if (rc != 0) {
        snprintf(err, errlen, "%s %s (see %s; is PostgreSQL 15 installed?)", initdb,
                 rc < 0 ? "did not run or took too long" : "failed", log);
        return -1;
    }
    return 0;
}

static void command(struct spawn *sp, const struct managed_server *s)
{
    spawn_run_as(sp, POSTGRES_USER);
    spawn_arg(sp, "%s/postgres", bin_dir());
    spawn_arg(sp, "-D");
    spawn_arg(sp, "%s/data", s->dir);
    spawn_arg(sp, "-p");
    spawn_arg(sp, "%d", s->port);
    spawn_arg(sp, "-k"); /* its socket in its own folder, not /var/run */
    spawn_arg(sp, "%s", s->dir);
    /* SETUP.md's settings for a throwaway server: nothing waits for a disk;
     * connections for a run's clients (up to 4096), each with one more per
     * row lock it holds at once (postgres_row.c) */
    static const char *const settings[] = {"fsync=off", "synchronous_commit=off",
                                           "full_page_writes=off", "max_connections=4500"};
    spawn_arg(sp, "-c");
    spawn_arg(sp, "listen_addresses=%s", s->addr);
    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
        spawn_arg(sp, "-c");
        spawn_arg(sp, "%s", settings[i]);
    }
}

bool postgres_server_answers(int port)
{
    char conn[128];
    snprintf(conn, sizeof(conn),
             "host=%s port=%d dbname=postgres user=" POSTGRES_USER " connect_timeout=2",
             cluster_port_addr(port), port);
    return PQping(conn) == PQPING_OK;
}

/* SHOW server_version, as the server gives it ("15.5 (Debian 15.5-0+deb12u1)");
 * through pgbouncer, the server's behind it. */
static int server_version_of(const char *host, int port, struct server_version *v)
{
    char conn[320];
    snprintf(conn, sizeof(conn),
             "host=%.200s port=%d dbname=postgres user=" POSTGRES_USER " connect_timeout=2", host,
             port);
    PGconn *pg = PQconnectdb(conn);
    PGresult *r = PQstatus(pg) == CONNECTION_OK ? PQexec(pg, "SHOW server_version") : NULL;
    bool ok = r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
    if (ok) {
        snprintf(v->version, sizeof(v->version), "%s", PQgetvalue(r, 0, 0));
        snprintf(v->answer, sizeof(v->answer), "server_version %s", PQgetvalue(r, 0, 0));
    } else {
        const char *e = PQerrorMessage(pg);
        snprintf(v->why, sizeof(v->why), "SHOW server_version: %.*s", (int)strcspn(e, "\n"), e);
    }
    PQclear(r);
    PQfinish(pg);
    return ok ? 0 : -1;
}

/* Its socket, <dir>/.s.PGSQL.<port>, must fit a sockaddr_un's 108 bytes
 * with its NUL: the shared folder's short path keeps it well under. */
static int socket_fits(const struct managed_server *s, char *err, size_t errlen)
{
    size_t len = strlen(s->dir) + strlen("/.s.PGSQL.65535");
    if (len < SOCKET_PATH_MAX)
        return 0;
    snprintf(err, errlen, "PostgreSQL's socket in %s would be a path of %zu bytes, over %d", s->dir,
             len, SOCKET_PATH_MAX - 1);
    return -1;
}

int postgres_server_start(struct cluster *c, size_t count, char *err, size_t errlen)
{
    char tmpl[320], data[320];
    for (size_t i = 0; i < count; i++) {
        struct managed_server *s = cluster_add_shared_server(c, &server_postgres, err, errlen);
        if (s == NULL || template_dir(c, tmpl, sizeof(tmpl), err, errlen) < 0 ||
            postgres_server_own(s->dir, err, errlen) < 0 || socket_fits(s, err, errlen) < 0)
            return -1;
        snprintf(data, sizeof(data), "%.300s/data", s->dir);
        /* cp -a keeps the postgres user's ownership and the 0700 mode the
         * server insists on */
        const char *argv[] = {"cp", "-a", tmpl, data, NULL};
        if (spawn_run(NULL, argv, NULL, COPY_TIMEOUT_MS) != 0) {
            snprintf(err, errlen, "cannot copy %s to %s", tmpl, data);
            return -1;
        }
        if (cluster_start_server(s, err, errlen) < 0)
            return -1;
    }
    return 0;
}

static int start(struct cluster *c, size_t count, char *err, size_t errlen)
{
    if (postgres_server_start(c, count, err, errlen) == 0)
        return 0;
    cluster_stop(c, NULL);
    return -1;
}

/* The pool mode of the pooler s asks for (lock.postgres.pooler); NULL:
 * none. */
/* A pooler asked for (lock.postgres.pooler): one PostgreSQL and pgbouncer
 * in front of it, whose port is the locks' endpoint. 1 when started, 0
 * when no pooler is asked (then start does), -1 with err set. */
static int start_topology(const struct topology *t, char *err, size_t errlen)
{
    const char *mode = t->layout.pool_mode;
    if (mode == NULL)
        return 0;
    if (postgres_server_start(t->cl, 1, err, errlen) < 0)
        return -1;
    int upstream = t->cl->srv[t->cl->n - 1].port;
    /* Transaction pooling: few server connections (2), so that clients
     * share them as a busy deployment's do, and a session lock meets other
     * clients' transactions. Session pooling pins one per client for its
     * whole session: fewer than the clients, and the rest never log in. */
    bool txn = strcmp(mode, "transaction") == 0;
    int size = txn ? 2 : (int)t->clients + 2;
    int port = pgbouncer_server_start(t->cl, upstream, mode, size, err, errlen);
    if (port < 0)
        return -1;
    struct lock_endpoint *ep = &t->endpoints->ep[t->endpoints->n++];
    *ep = (struct lock_endpoint){.port = port};
    snprintf(ep->host, sizeof(ep->host), "%s", cluster_port_addr(port));
    return 1;
}

/* Between two algorithms of a comparison: every other client's session
 * ended, which frees the session-level advisory locks a crashed or paused
 * holder left (pgbouncer's pooled connections included). */
static int reset(const struct managed_server *s, char *err, size_t errlen)
{
    char conn[128];
    snprintf(conn, sizeof(conn),
             "host=%s port=%d dbname=postgres user=" POSTGRES_USER " connect_timeout=5", s->addr,
             s->port);
    PGconn *pg = PQconnectdb(conn);
    PGresult *r =
        PQstatus(pg) == CONNECTION_OK
            ? PQexec(pg, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")
            : NULL;
    int ok = r && PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok)
        snprintf(err, errlen, "postgres on port %d: cannot end its sessions: %s", s->port,
                 PQerrorMessage(pg));
    PQclear(r);
    PQfinish(pg);
    return ok ? 0 : -1;
}

/* lock.postgres.pooler: pgbouncer in front of it (start_topology) */
static bool pooled(const struct family_layout *l)
{
    return l->pool_mode != NULL;
}

const struct server_kind server_postgres = {
    .name = "postgres",
    .node_prefix = "pg",
    .log = "stdout.log",
    .ready_base_ms = 10000, /* SETUP.md: 0.05 s from a copy, 0.3 s the first start */
    .ready_poll_ms = 10,
    .ready_sign = "PQping to say PQPING_OK",
    .command = command,
    .answers = postgres_server_answers,
    .version = server_version_of,
    .roles = SERVER_ROLE_BIT(SERVER_ROLE_LEADER) | SERVER_ROLE_BIT(SERVER_ROLE_POOLER),
    .follower_word = "replica",
    .lone = "a single PostgreSQL",
    .pooler = "pgbouncer",
    .pooled = pooled,
    .pooler_setting = "lock.postgres.pooler: \"transaction\" or \"session\"",
    /* its backends and auxiliary processes, each in a session of its own */
    .main_process = "postmaster",
    .keeps_data = true, /* its data folder stays through every fault (fsync is off) */
    .start = start,
    .reset = reset,
    .start_topology = start_topology,
    .stop_signal = SIGINT, /* fast shutdown: ends the clients' sessions (~15 ms) */
    .cluster_nodes = 0, /* opt-in (--postgres-nodes): the default fleet stays Redis and ZooKeeper */
    .cluster_counts = 0xf, /* 0..3 */
    .cluster_counts_text = "0..3",
    .option_arg = "H:P",
    .option_help = "use this PostgreSQL (or a pgbouncer) instead of starting it",
    .host_needs = {"/usr/lib/postgresql/15/bin/postgres", "/usr/lib/postgresql/15/bin/initdb",
                   NULL},
    .host_packages = "postgresql",
    .not_on_hosts = "its data folder is made by initdb, run on this machine",
};
