/* zk_group.h - what the ZooKeeper lock tests (tests/locks/test_zookeeper_lock_*.c)
 * share: a group of tests with its own standalone ZooKeeper and a plain
 * client that looks at the tree, lock clients opened on it, and the
 * children of a lock's parent node. The C client is the single-threaded
 * one: the observer's calls drive its session on the test's thread until
 * the answer is in, and a lock client the test leaves idle is driven
 * through its lock_ops.idle (rest), as the engine does. Each function asserts (cmocka) rather than
 * returning an error, but for the group's start, which a cmocka group setup returns. */
#ifndef LOCKLAB_TEST_ZK_GROUP_H
#define LOCKLAB_TEST_ZK_GROUP_H

#include <stddef.h>
#include <stdint.h>
#include <zookeeper/zookeeper.h>

#include "algorithms/lock.h"
#include "sim/fleet/cluster.h"

/* tickTime 500 lets the server grant sessions from 1 s: expiry tests stay short. */
#define SESSION_MS 1000
/* The server's most, 20 ticks of 500 ms, less room: a pause of 13/16 of it
 * is past the client's 2/3 (it sees the link drop) and 1.5 s short of the
 * timeout (the session lives). */
#define LONG_SESSION_MS 8000
#define WAITERS         16
#define MAX_KIDS        (WAITERS + 4)
#define PATH_LEN        256

struct group {
    struct cluster cluster;
    struct lock_config cfg;
    zhandle_t *raw; /* a plain client that looks at the tree */
};

/* A plain client's session on the loopback port, connected, or NULL. */
zhandle_t *raw_open(int port);
/* The observer's getData of path into buf (*len in: its size, out: the
 * data's length): the ZooKeeper code. */
int raw_get(zhandle_t *raw, const char *path, char *buf, int *len);

/* Let n lock clients sit idle for ms, each driven through its lock's idle
 * in turn (slices of 10 ms), as the engine spends a client's idle time;
 * a client with no session only sleeps. */
void rest(struct lock_client *const *cs, size_t n, uint32_t ms);

/* Start g's ZooKeeper and its observer session; lock clients get
 * session_ms. 0, or -1 with the reason on stderr and nothing left running. */
int group_start(struct group *g, int session_ms);
/* Close the observer session and stop the server by PID. */
void group_stop(struct group *g);

/* A zookeeper lock client on conf as owner, connected. */
void client_open(struct lock_client *c, const struct lock_config *conf, const char *owner);
/* A key no earlier test of this process used. */
void new_key(char *key, size_t len);
/* acquire with a 30 s ttl, waiting up to wait ms. */
enum lock_result take(struct lock_client *c, const char *key, uint32_t wait, struct lock_grant *g);
/* The sequence number of a sequential node's name, or -1. */
int64_t seq_of(const char *name);

/* The children of /locks/<key>, sorted by sequence, as full paths in
 * paths[] (each PATH_LEN bytes). Returns how many (0 when the parent does
 * not exist yet). */
int kids(zhandle_t *raw, const char *key, char (*paths)[PATH_LEN], int max);
int count_kids(zhandle_t *raw, const char *key);
/* 0 once /locks/<key> has n children, -1 after 10 s; idler (NULL: none)
 * is driven meanwhile, as rest() does. */
int wait_for_kids(zhandle_t *raw, const char *key, int n, struct lock_client *idler);

#endif
