/* etcd_server.h - what others must know of a managed etcd member: the
 * timings it runs with, on which its shortest lease rests (the scenario's
 * resolver reads them), and its JSON gateway, for whoever must look at one
 * (etcd_server.c, tests): one blocking HTTP call with a short timeout. */
#ifndef LOCKLAB_ETCD_SERVER_H
#define LOCKLAB_ETCD_SERVER_H

#include <stddef.h>
#include <stdint.h>

/* The managed members' raft timing. etcd grants no lease shorter than
 * 3/2 of its election timeout, in whole heartbeats, rounded up to a second
 * (etcdserver's MinLeaseTTL: (3 * electionTicks / 2) heartbeats): its
 * default 1000 ms grants 2 s at least, 500 ms grants 1 s, so that a 1 s
 * ttl runs on a 1 s lease. etcd refuses a heartbeat longer than a fifth
 * of the election timeout; 50 ms (a tenth) lets a follower miss nine in a
 * row on a loaded machine before it stands for election. */
#define ETCD_ELECTION_TIMEOUT_MS 500
#define ETCD_HEARTBEAT_MS        50
/* etcd's own defaults: what an etcd locklab does not start is taken to run */
#define ETCD_DEFAULT_ELECTION_TIMEOUT_MS 1000
#define ETCD_DEFAULT_HEARTBEAT_MS        100

/* The shortest lease, in seconds, an etcd with these timings grants. */
static inline uint32_t etcd_lease_floor_s(uint32_t election_ms, uint32_t heartbeat_ms)
{
    uint32_t ticks = election_ms / heartbeat_ms;
    return (3 * ticks / 2 * heartbeat_ms + 999) / 1000;
}

/* GET (post NULL) or POST post to http://127.0.0.1:port/path; the answer
 * into reply (NUL-terminated, cut to len). Its length when the server
 * answered 200, else -1. */
int etcd_server_ask(int port, const char *path, const char *post, char *reply, size_t len);

#endif
