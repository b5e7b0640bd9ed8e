/* postgres_server.h - what the PostgreSQL server kind shares with the
 * servers that stand in front of it (pgbouncer_server.c). */
#ifndef LOCKLAB_POSTGRES_SERVER_H
#define LOCKLAB_POSTGRES_SERVER_H

#include <stdbool.h>
#include <stddef.h>

struct cluster;

/* The user PostgreSQL and pgbouncer run as: both refuse root. */
#define POSTGRES_USER "postgres"

/* path (in the run's shared folder, cluster_shared_dir) made the postgres
 * user's, once every folder above it is found passable by that user. 0,
 * or -1 with err set. */
int postgres_server_own(const char *path, char *err, size_t errlen);
/* Does the one on a loopback port let a client in (PQping: the server,
 * or a pgbouncer in front of it)? REJECT while it starts or recovers. */
bool postgres_server_answers(int port);
/* Start count PostgreSQL servers in c, each from a copy of the run's one
 * initdb, and wait until they serve. 0, or -1 with err set. */
int postgres_server_start(struct cluster *c, size_t count, char *err, size_t errlen);

#endif
