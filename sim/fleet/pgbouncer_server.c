/* pgbouncer_server.c - the server kind "pgbouncer": pgbouncer 1.18 from
 * Debian's package, in front of a managed PostgreSQL, configured as
 * SETUP.md measured it. It refuses root, so it runs as the postgres user,
 * in a folder that user owns (a log file root made first would stop it),
 * in the run's shared folder as PostgreSQL's are (cluster_shared_dir).
 * Started only as part of a PostgreSQL lock's topology (the scenario's
 * lock.postgres.pooler): it has no start of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim/fleet/cluster.h"
#include "sim/fleet/pgbouncer_server.h"
#include "sim/fleet/postgres_server.h"
#include "sim/fleet/server_kind.h"
#include "sim/fleet/spawn.h"

extern const struct server_kind server_pgbouncer;

/* The pool (what start decided) is in <dir>/pool; the configuration is
 * written again at each start, since a retry may change the port. */
static void command(struct spawn *sp, const struct managed_server *s)
{
    char path[320], mode[16] = "session";
    int upstream = 0, size = 1;
    snprintf(path, sizeof(path), "%.300s/pool", s->dir);
    FILE *in = fopen(path, "r");
    if (in) {
        if (fscanf(in, "%d %15s %d", &upstream, mode, &size) != 3)
            upstream = 0;
        fclose(in);
    }
    FILE *f = cluster_server_file(s->dir, "pgbouncer.ini");
    if (f) {
        fprintf(f,
                "[databases]\npostgres = host=%s port=%d dbname=postgres user=" POSTGRES_USER
                "\n[pgbouncer]\nlisten_addr = %s\nlisten_port = %d\nunix_socket_dir =\n"
                "auth_type = trust\nauth_file = %s/userlist.txt\npool_mode = %s\n"
                "default_pool_size = %d\nmax_client_conn = 1000\nlogfile = %s/pgbouncer.log\n",
                cluster_port_addr(upstream), upstream, s->addr, s->port, s->dir, mode, size,
                s->dir);
        fclose(f);
    }
    spawn_run_as(sp, POSTGRES_USER);
    spawn_arg(sp, "%s", spawn_env_or("LOCKLAB_PGBOUNCER", "pgbouncer"));
    spawn_arg(sp, "%s/pgbouncer.ini", s->dir);
}

int pgbouncer_server_start(struct cluster *c, int upstream_port, const char *pool_mode,
                           int pool_size, char *err, size_t errlen)
{
    struct managed_server *s = cluster_add_shared_server(c, &server_pgbouncer, err, errlen);
    if (s == NULL || postgres_server_own(s->dir, err, errlen) < 0)
        return -1;
    /* trust still wants the user listed */
    FILE *users = cluster_server_file(s->dir, "userlist.txt");
    FILE *pool = users ? cluster_server_file(s->dir, "pool") : NULL;
    if (pool == NULL) {
        snprintf(err, errlen, "cannot write in %s: %s", s->dir, strerror(errno));
        if (users)
            fclose(users);
        return -1;
    }
    fprintf(users, "\"" POSTGRES_USER "\" \"\"\n");
    fprintf(pool, "%d %s %d\n", upstream_port, pool_mode, pool_size);
    if ((fclose(users) | fclose(pool)) != 0) {
        snprintf(err, errlen, "cannot write in %s", s->dir);
        return -1;
    }
    if (cluster_start_server(s, err, errlen) < 0)
        return -1;
    return s->port;
}

const struct server_kind server_pgbouncer = {
    .name = "pgbouncer",
    .node_prefix = "pgbouncer",
    .log = "pgbouncer.log",
    .ready_base_ms = 10000, /* SETUP.md: ~50 ms */
    .ready_poll_ms = 10,
    .ready_sign = "PQping through it to say PQPING_OK",
    .internal = true, /* lock.postgres.pooler starts it; --postgres names one */
    .command = command,
    .answers = postgres_server_answers, /* PQping through it */
    .host_needs = {"pgbouncer", NULL},
    .host_packages = "pgbouncer",
    .not_on_hosts = "it runs beside a PostgreSQL, which stays on this machine",
};
