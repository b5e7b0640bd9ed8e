/* sentinel_server.h - what the redis topology and a failover ask of
 * sentinels (sentinel_server.c). */
#ifndef LOCKLAB_SENTINEL_SERVER_H
#define LOCKLAB_SENTINEL_SERVER_H

#include <stddef.h>
#include <stdint.h>

struct cluster;

/* Start count redis-sentinels watching the master on master_port as
 * "mymaster" (a quorum of count/2 + 1; down after 500 ms; failover-timeout
 * failover_ms), and wait until each knows the replicas and the other
 * sentinels. 0, or -1 with err set and the sentinels stopped. */
int sentinel_server_start(struct cluster *c, size_t count, int master_port, size_t replicas,
                          uint64_t failover_ms, char *err, size_t errlen);
/* The master a sentinel on port names for "mymaster": its port, or -1. */
int sentinel_server_master(int port);

#endif
