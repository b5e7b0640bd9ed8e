/* pgbouncer_server.h - pgbouncer in front of a managed PostgreSQL, for a
 * scenario whose lock.postgres.pooler asks for one. */
#ifndef LOCKLAB_PGBOUNCER_SERVER_H
#define LOCKLAB_PGBOUNCER_SERVER_H

#include <stddef.h>

struct cluster;

/* Start one pgbouncer in c pooling the PostgreSQL on upstream_port in
 * pool_mode ("transaction" or "session") with pool_size server
 * connections, and wait until it serves. Its port, or -1 with err set. */
int pgbouncer_server_start(struct cluster *c, int upstream_port, const char *pool_mode,
                           int pool_size, char *err, size_t errlen);

#endif
