/* sentinel_server.c - the server kind "sentinel": redis-sentinel watching
 * the redis lock's master as "mymaster" (a quorum of count/2 + 1, down
 * after 500 ms), started with the master's replicas by the fleet's redis
 * topology (fleet.c) and asked by a failover which master is current.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fleet/cluster.h"
#include "sim/fleet/redis_server.h"
#include "sim/fleet/sentinel_server.h"
#include "sim/fleet/server_kind.h"
#include "sim/fleet/spawn.h"

/* The name the sentinels watch the master under, and the lock asks them
 * for: Redis's own example's, as a deployment's often is. */
#define MASTER_NAME "mymaster"

extern const struct server_kind server_sentinel;

/* Its configuration file, which it rewrites as it learns: written by
 * sentinel_server_start in its own folder. */
static void command(struct spawn *sp, const struct managed_server *s)
{
    spawn_arg(sp, "%s", spawn_env_or("LOCKLAB_REDIS_SENTINEL", "redis-sentinel"));
    spawn_arg(sp, "%s/sentinel.conf", s->dir);
}

static bool answers(int port)
{
    return redis_server_command(port, "PING", "+PONG") == 0;
}

static int write_sentinel_conf(const struct managed_server *s, int master_port, size_t quorum,
                               uint64_t failover_ms)
{
    FILE *f = cluster_server_file(s->dir, "sentinel.conf");
    if (f == NULL)
        return -1;
    /* down-after 500 ms: a failover in about a second (SETUP.md) */
    fprintf(f,
            "port %d\nbind %s\nprotected-mode %s\ndaemonize no\ndir %s\nlogfile %s/sentinel.log\n"
            "sentinel monitor " MASTER_NAME " %s %d %zu\n"
            "sentinel down-after-milliseconds " MASTER_NAME " 500\n"
            "sentinel failover-timeout " MASTER_NAME " %llu\n",
            s->port, s->addr, s->host ? "no" : "yes", s->dir, s->dir,
            cluster_port_addr(master_port), master_port, quorum, (unsigned long long)failover_ms);
    return fclose(f);
}

int sentinel_server_start(struct cluster *c, size_t count, int master_port, size_t replicas,
                          uint64_t failover_ms, char *err, size_t errlen)
{
    size_t first = c->n;
    for (size_t i = 0; i < count; i++) {
        struct managed_server *s = cluster_add_server(c, &server_sentinel, err, errlen);
        if (s == NULL)
            goto fail;
        s->port = cluster_free_port();
        if (s->port < 0 || write_sentinel_conf(s, master_port, count / 2 + 1, failover_ms) != 0) {
            snprintf(err, errlen, "cannot configure a sentinel in %s", s->dir);
            goto fail;
        }
        if (spawn_start(s, err, errlen) < 0)
            goto fail;
        struct spawn_wait w;
        if (spawn_wait_ready(s, 1, &w) != 0) {
            spawn_failed(s, &w, err, errlen);
            goto fail;
        }
    }
    /* before any fault: each must know the replicas (or it has nobody to
     * promote) and the other sentinels (or no majority can vote) */
    for (size_t i = first; i < c->n; i++) {
        if (redis_server_wait_reply(c->srv[i].port, "SENTINEL replicas " MASTER_NAME, NULL,
                                    (long)replicas) < 0 ||
            redis_server_wait_reply(c->srv[i].port, "SENTINEL sentinels " MASTER_NAME, NULL,
                                    (long)count - 1) < 0) {
            snprintf(err, errlen,
                     "the sentinel on port %d did not learn of the replica and the "
                     "other sentinels in %d ms",
                     c->srv[i].port, REDIS_LINK_WAIT_MS);
            goto fail;
        }
    }
    return 0;
fail:
    while (c->n > first)
        spawn_stop(&c->srv[--c->n], SIGKILL);
    return -1;
}

int sentinel_server_master(int port)
{
    char reply[256];
    /* *2\r\n$9\r\n127.0.0.1\r\n$5\r\n40001\r\n */
    if (redis_server_reply(port, "SENTINEL get-master-addr-by-name " MASTER_NAME, reply,
                           sizeof(reply)) <= 0 ||
        strncmp(reply, "*2", 2) != 0)
        return -1;
    const char *last = reply + strlen(reply);
    while (last > reply && (last[-1] == '\r' || last[-1] == '\n'))
        last--;
    while (last > reply && last[-1] >= '0' && last[-1] <= '9')
        last--;
    return atoi(last);
}

const struct server_kind server_sentinel = {
    .name = "sentinel",
    .node_prefix = "sentinel",
    .log = "sentinel.log",
    .ready_base_ms = 10000,
    .ready_poll_ms = 5,
    .ready_sign = "PING to answer PONG",
    .command = command,
    .answers = answers,
    .version = redis_server_version, /* a sentinel is a redis-server in its mode */
    .names_master = sentinel_server_master,
    .finds_as = MASTER_NAME,
    .option_arg = "H:P[,...]",
    .option_help =
        "the redis lock asks these redis-sentinels for the master of \"" MASTER_NAME "\" "
        "(external; locklab starts no Redis)",
    .host_needs = {"redis-sentinel", NULL},
    .host_packages = "redis-sentinel",
    .on_hosts = true,
};
