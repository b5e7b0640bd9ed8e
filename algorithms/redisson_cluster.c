/* redisson_cluster.c - Redisson's RLock (redisson.c) as Redisson runs it
 * in cluster mode (ClusterServersConfig), so a Java service on a Redis
 * Cluster and locklab contend on one lock.
 *
 * The scripts, the hash, its field, the channel and the unlock latch are
 * redisson.c's. What the cluster changes: each script goes to the master
 * of the lock name's slot (redis_cluster_wire.h), MOVED and ASK
 * followed, the map asked again after a failover, TRYAGAIN and
 * CLUSTERDOWN retried while the acquire's wait lasts. Redisson names the
 * channel and the latch "<prefix>:{<name>}", so both hash to the name's
 * own slot and one script may touch all three. A waiter listens on the
 * master of that slot; on Redis 7 Redisson's default
 * (shardedSubscriptionMode AUTO: SPUBLISH answers) publishes the unlock
 * with SPUBLISH and waits with SSUBSCRIBE, and lock.redis_cluster's
 * sharded_pubsub: false plays its mode OFF (PUBLISH / SUBSCRIBE, which
 * the cluster bus carries to every node). With wait_replicas the grant
 * is followed by WAIT on the master that granted it.
 */
#include "algorithms/lock.h"
#include "algorithms/redis_cluster.h"
#include "algorithms/redisson_wire.h"

/* RLock's acquire first: rsn_lock_try runs scripts[0]. */
enum { SCRIPT_ACQUIRE, SCRIPT_UNLOCK, SCRIPT_RENEW, N_SCRIPTS };

static const char *const script_bodies[N_SCRIPTS] = {
    [SCRIPT_ACQUIRE] = rsn_lock_acquire_script,
    [SCRIPT_UNLOCK] = rsn_lock_unlock_script,
    [SCRIPT_RENEW] = rsn_renew_script,
};

static int rc_connect(struct lock_client *c)
{
    const struct redis_cluster_spec *rs = redis_cluster_settings(c->cfg);
    return rsn_open_cluster(c, sizeof(struct rsn_client), script_bodies, N_SCRIPTS,
                            rs->sharded_pubsub, rs->wait_replicas, rs->wait_timeout_ms);
}

static enum lock_result rc_acquire(struct lock_client *c, const char *key, size_t key_len,
                                   uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    return rsn_acquire(c, rsn_lock_try, rsn_lock_channel, key, key_len, ttl_ms, wait_ms, g);
}

static enum lock_result rc_release(struct lock_client *c, const struct lock_grant *g)
{
    struct rsn_client *r = c->impl;
    return rsn_lock_release(c, &r->wire.scripts[SCRIPT_UNLOCK], g);
}

static enum lock_result rc_renew(struct lock_client *c, struct lock_grant *g)
{
    struct rsn_client *r = c->impl;
    return rsn_renew(c, &r->wire.scripts[SCRIPT_RENEW], g);
}

const struct lock_ops redisson_cluster_ops = {
    .name = "redisson-cluster",
    .summary = "Redisson's RLock in cluster mode: slots, MOVED/ASK, sharded pub/sub, WAIT",
    .server = "redis-cluster",
    .family = &redis_cluster_family,
    .defaults = {{"watchdog", "watchdog on (Redisson's lock() default)", "{\"watchdog\": true}"}},
    .reentrant = true,
    .connect = rc_connect,
    .disconnect = rsn_close,
    .acquire = rc_acquire,
    .release = rc_release,
    .renew = rc_renew,
    .crash = rsn_close, /* the sockets just close: nothing is released */
};
