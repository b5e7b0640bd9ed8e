/* redis_server.h - Redis's inline-command probes, for the kinds and
 * faults that speak its protocol to a managed server (redis_server.c). */
#ifndef LOCKLAB_REDIS_SERVER_H
#define LOCKLAB_REDIS_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cluster;

#define REDIS_LINK_WAIT_MS 10000 /* a replica's first sync, sentinels learning of each other */

/* Send one inline command to a loopback port and read its first answer
 * (one read, NUL-terminated). Its length, or -1. */
int redis_server_reply(int port, const char *command, char *reply, size_t len);
/* The same: 0 when the reply starts with want ("+PONG"), -1 otherwise. */
int redis_server_command(int port, const char *command, const char *want);
struct server_version;
/* The server at host:port's redis_version, from INFO server (a kind's
 * version: server_kind.h). 0, or -1 with v->why set. */
int redis_server_version(const char *host, int port, struct server_version *v);
/* Poll port with command until its reply holds want (or, want NULL, an
 * array of at least count), for up to REDIS_LINK_WAIT_MS. 0, or -1. */
int redis_server_wait_reply(int port, const char *command, const char *want, long count);
/* Start a Redis replica of 127.0.0.1:from (the master, or a proxy in front
 * of it) and wait until writes through from reach it. 0, or -1 with err
 * set and the replica stopped. */
int redis_server_start_replica(struct cluster *c, int from, char *err, size_t errlen);
struct spawn;
struct managed_server;
/* The command line of a redis-server for s (its port, folder, log,
 * durability, replica_of and clock), into sp: a kind that runs Redis
 * another way adds its own options after these. */
void redis_server_args(struct spawn *sp, const struct managed_server *s);
/* PING answers PONG: it serves. */
bool redis_server_answers(int port);
/* A cluster node's own id (CLUSTER MYID) into id[41]; 0, or -1. */
int redis_server_node_id(int port, char id[41]);
/* INFO replication says role:master. */
bool redis_server_leads(int port);
/* What Redis would load at start gone (its AOF and snapshot), as after a
 * crash with no disk. */
void redis_server_forget_data(const struct managed_server *s);
/* GET key into out ("" when none); 0, or -1 when it does not answer. */
int redis_server_read_key(int port, const char *key, char *out, size_t len);
/* Shorten the remaining ttl of every key on the Redis at port by ms (what
 * a forward jump of its clock does to them); keys with less left are
 * deleted. The number of keys touched, or -1. */
long redis_server_shorten_ttls(int port, uint64_t ms);

#endif
