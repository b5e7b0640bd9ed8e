/* mariadb_server.c - the server kind "mysql": MariaDB 10.11 from Debian's
 * packages (mariadb-server), on loopback, never on 3306. The MySQL locks
 * speak the protocol MySQL and MariaDB share, so a user's own MySQL
 * (--mysql) serves them too; the managed one is MariaDB.
 *
 * mariadb-install-db (about a second) runs once per run into a template;
 * each server starts from a copy of it, with --no-defaults so that no
 * /etc/mysql file of the machine's applies. Its root user logs in with no
 * password (--auth-root-authentication-method=normal), which is safe only
 * because the server listens on 127.0.0.1 and on a socket in its own
 * folder. As root, mariadbd must be told --user=root; it refuses else.
 * Its data folder stays through every fault: a restart recovers it
 * (innodb_flush_log_at_trx_commit=2 writes the redo log at each commit
 * and syncs it once a second: a killed process loses nothing, the kernel
 * has the writes; only a machine crash would lose the last second).
 * The fleet may block: its own questions use Connector/C's blocking calls
 * with 2 s timeouts (a paused server never answers).
 */
#include <errno.h>
#include <mysql.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "algorithms/mysql_wire.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "sim/fleet/spawn.h"
#include "sim/record/run_meta.h"

extern const struct server_kind server_mysql;

#define INSTALL_TIMEOUT_MS 120000 /* measured 0.7 to 2.4 s; room for a loaded box */
#define COPY_TIMEOUT_MS    30000  /* the 26 MB template */
#define ASK_TIMEOUT_S      2
#define SOCKET_PATH_MAX    107 /* sizeof(sockaddr_un.sun_path) less its NUL */
#define SOCKET_NAME        "mysqld.sock"

/* Small and quick, for a throwaway server: the InnoDB pool and redo log
 * of a test box (the data is a few rows); no binary log, no name lookups;
 * connections for a run's clients (up to 4096), each with one more per
 * row lock it holds at once (mysql_row.c). The log settings must be the
 * install's too, or the first start resizes the redo log. */
static const char *const settings[] = {
    "--innodb-buffer-pool-size=32M",
    "--innodb-log-file-size=8M",
    "--innodb-flush-log-at-trx-commit=2",
    "--skip-log-bin",
    "--skip-name-resolve",
    "--max-connections=4500",
    "--performance-schema=OFF",
};
#define N_SETTINGS (sizeof(settings) / sizeof(settings[0]))

static const char *install_db(void)
{
    return spawn_env_or("LOCKLAB_MARIADB_INSTALL_DB", "mariadb-install-db");
}

static const char *mariadbd(void)
{
    return spawn_env_or("LOCKLAB_MARIADBD", "/usr/sbin/mariadbd");
}

/* The run's install, made once: <root>/mysql-template/data. */
static int template_dir(struct cluster *c, char *tmpl, size_t len, char *err, size_t errlen)
{
    char dir[300], marker[340], datadir[340], log[340];
    snprintf(dir, sizeof(dir), "%.200s/mysql-template", c->root);
    snprintf(tmpl, len, "%s/data", dir);
    snprintf(marker, sizeof(marker), "%s/mysql", tmpl);
    if (access(marker, R_OK) == 0)
        return 0;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "mkdir %s: %s", dir, strerror(errno));
        return -1;
    }
    snprintf(datadir, sizeof(datadir), "--datadir=%s", tmpl);
    snprintf(log, sizeof(log), "%s/install.log", dir);
    const char *argv[] = {install_db(),
                          "--no-defaults",
                          datadir,
                          "--skip-test-db",
                          "--auth-root-authentication-method=normal",
                          settings[0],
                          settings[1],
                          geteuid() == 0 ? "--user=root" : NULL,
                          NULL};
    int rc = spawn_run(NULL, argv, log, INSTALL_TIMEOUT_MS);
    if (rc != 0) {
        snprintf(err, errlen, "%s %s (see %s; is mariadb-server installed?)", install_db(),
                 rc < 0 ? "did not run or took too long" : "failed", log);
        return -1;
    }
    return 0;
}

static void command(struct spawn *sp, const struct managed_server *s)
{
    spawn_arg(sp, "%s", mariadbd());
    spawn_arg(sp, "--no-defaults");
    if (geteuid() == 0)
        spawn_arg(sp, "--user=root");
    spawn_arg(sp, "--datadir=%s/data", s->dir);
    spawn_arg(sp, "--socket=%s/" SOCKET_NAME, s->dir);
    spawn_arg(sp, "--pid-file=%s/mysqld.pid", s->dir);
    spawn_arg(sp, "--port=%d", s->port);
    spawn_arg(sp, "--bind-address=%s", s->addr);
    for (size_t i = 0; i < N_SETTINGS; i++)
        spawn_arg(sp, "%s", settings[i]);
}

/* A blocking session of the fleet's to host:port, with the credentials
 * the locks use; NULL with why. */
static MYSQL *ask_connect(const char *host, int port, char *why, size_t len)
{
    mysql_wire_library();
    MYSQL *m = mysql_init(NULL);
    if (m == NULL) {
        snprintf(why, len, "out of memory");
        return NULL;
    }
    unsigned int t = ASK_TIMEOUT_S;
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &t);
    mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &t);
    mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &t);
    const char *user, *password;
    mysql_wire_credentials(m, &user, &password);
    if (mysql_real_connect(m, host, user, password, NULL, (unsigned)port, NULL, 0))
        return m;
    snprintf(why, len, "connect %s:%d: %.100s", host, port, mysql_error(m));
    mysql_close(m);
    return NULL;
}

static bool answers(int port)
{
    char why[160];
    MYSQL *m = ask_connect(cluster_port_addr(port), port, why, sizeof(why));
    bool ok = m && mysql_query(m, "SELECT 1") == 0;
    if (ok)
        mysql_free_result(mysql_store_result(m));
    mysql_close(m);
    return ok;
}

/* SELECT VERSION(): "10.11.19-MariaDB-0+deb12u1" */
static int version(const char *host, int port, struct server_version *v)
{
    MYSQL *m = ask_connect(host, port, v->why, sizeof(v->why));
    if (m == NULL)
        return -1;
    MYSQL_RES *res = mysql_query(m, "SELECT VERSION()") == 0 ? mysql_store_result(m) : NULL;
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    bool ok = row && row[0];
    if (ok) {
        snprintf(v->version, sizeof(v->version), "%s", row[0]);
        snprintf(v->answer, sizeof(v->answer), "VERSION() %s", row[0]);
    } else {
        snprintf(v->why, sizeof(v->why), "SELECT VERSION(): %.100s", mysql_error(m));
    }
    mysql_free_result(res);
    mysql_close(m);
    return ok ? 0 : -1;
}

/* Its socket must fit a sockaddr_un's 108 bytes with its NUL. */
static int socket_fits(const struct managed_server *s, char *err, size_t errlen)
{
    size_t len = strlen(s->dir) + strlen("/" SOCKET_NAME);
    if (len < SOCKET_PATH_MAX)
        return 0;
    snprintf(err, errlen, "MariaDB's socket in %s would be a path of %zu bytes, over %d", s->dir,
             len, SOCKET_PATH_MAX - 1);
    return -1;
}

static int start_all(struct cluster *c, size_t count, char *err, size_t errlen)
{
    char tmpl[320], data[320];
    for (size_t i = 0; i < count; i++) {
        struct managed_server *s = cluster_add_server(c, &server_mysql, err, errlen);
        if (s == NULL || socket_fits(s, err, errlen) < 0 ||
            template_dir(c, tmpl, sizeof(tmpl), err, errlen) < 0)
            return -1;
        snprintf(data, sizeof(data), "%.300s/data", s->dir);
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
    if (start_all(c, count, err, errlen) == 0)
        return 0;
    cluster_stop(c, NULL);
    return -1;
}

/* Every session but the asker's, killed: what a killed client's KILL
 * CONNECTION would do. 0, or -1 with why. */
static int kill_sessions(MYSQL *m, char *why, size_t len)
{
    if (mysql_query(m, "SELECT id FROM information_schema.PROCESSLIST WHERE id <> "
                       "CONNECTION_ID() AND command NOT IN ('Daemon', 'Binlog Dump')") != 0) {
        snprintf(why, len, "PROCESSLIST: %.100s", mysql_error(m));
        return -1;
    }
    MYSQL_RES *res = mysql_store_result(m);
    char sql[48];
    for (MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL; row; row = mysql_fetch_row(res)) {
        snprintf(sql, sizeof(sql), "KILL CONNECTION %s", row[0]);
        mysql_query(m, sql); /* gone meanwhile: nothing to kill */
    }
    mysql_free_result(res);
    return 0;
}

/* Between two algorithms of a comparison: every other session ended,
 * which frees the named locks and the row locks a crashed or paused holder
 * left. */
static int reset(const struct managed_server *s, char *err, size_t errlen)
{
    char why[200];
    MYSQL *m = ask_connect(s->addr, s->port, why, sizeof(why));
    int rc = m ? kill_sessions(m, why, sizeof(why)) : -1;
    if (rc < 0)
        snprintf(err, errlen, "mysql on port %d: cannot end its sessions: %s", s->port, why);
    mysql_close(m);
    return rc;
}

/* What the locks made on a user's own server: their tables, and the
 * database when nothing else is left in it. */
static void leave(const char *host, int port)
{
    char why[200];
    MYSQL *m = ask_connect(host, port, why, sizeof(why));
    if (m == NULL)
        return;
    static const char *const drops[] = {
        "DROP TABLE IF EXISTS " MYSQL_DATABASE "." MYSQL_FENCE_TABLE ", " MYSQL_DATABASE
        "." MYSQL_LOCK_TABLE ", " MYSQL_DATABASE "." MYSQL_VERSION_TABLE,
    };
    for (size_t i = 0; i < sizeof(drops) / sizeof(drops[0]); i++)
        mysql_query(m, drops[i]); /* a run that made none: nothing to drop */
    MYSQL_RES *res = mysql_query(m, "SELECT COUNT(*) FROM information_schema.TABLES WHERE "
                                    "TABLE_SCHEMA = '" MYSQL_DATABASE "'") == 0
                         ? mysql_store_result(m)
                         : NULL;
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    if (row && row[0] && strcmp(row[0], "0") == 0)
        mysql_query(m, "DROP DATABASE IF EXISTS " MYSQL_DATABASE);
    mysql_free_result(res);
    mysql_close(m);
}

const struct server_kind server_mysql = {
    .name = "mysql",
    .node_prefix = "mysql",
    .log = "stdout.log",    /* mariadbd logs to stderr without --log-error */
    .ready_base_ms = 15000, /* measured 0.1 s from a copy; crash recovery after a kill longer */
    .ready_poll_ms = 20,
    .ready_sign = "SELECT 1 to answer",
    .command = command,
    .answers = answers,
    .version = version,
    .roles = SERVER_ROLE_BIT(SERVER_ROLE_LEADER),
    .follower_word = "replica",
    .lone = "a single MariaDB",
    .keeps_data = true, /* its data folder stays through every fault */
    .start = start,
    .reset = reset,
    .leave = leave,
    .cluster_nodes = 0,    /* opt-in (--mysql-nodes): the default fleet stays as it was */
    .cluster_counts = 0xf, /* 0..3 */
    .cluster_counts_text = "0..3",
    .option_arg = "H:P",
    .option_help = "use this MySQL or MariaDB instead of starting it (user and password: "
                   "--mysql-defaults-file or MYSQL_PWD)",
    .host_needs = {"/usr/sbin/mariadbd", "mariadb-install-db", NULL},
    .host_packages = "mariadb-server",
    .not_on_hosts = "its data folder is made by mariadb-install-db, run on this machine",
};
