/* redis_server.c - the server kind "redis": redis-server on a loopback
 * port, in its folder, no snapshots; with AOF and fsync on every write when
 * a scenario keeps its data; under libfaketime when a clock may jump; a
 * replica of a master (through the fleet's proxy) for the redis lock's
 * topology. It serves when PING answers PONG; FLUSHALL empties it between
 * the runs of a comparison. Also the inline-command probes the kinds that
 * speak Redis's protocol share (sentinel_server.c, the faults).
 */
#include <errno.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/fleet/cluster.h"
#include "sim/fleet/redis_server.h"
#include "sim/fleet/remote.h"
#include "sim/fleet/sentinel_server.h"
#include "sim/fleet/server_kind.h"
#include "sim/fleet/spawn.h"
#include "sim/proxy/proxy.h"
#include "sim/record/run_meta.h"

extern const struct server_kind server_redis;

int redis_server_reply(int port, const char *command, char *reply, size_t len)
{
    if (len == 0)
        return -1;
    char line[600], why[128]; /* the longest line: the clock jump's script */
    int n = snprintf(line, sizeof(line), "%s\r\n", command);
    ssize_t got = -1;
    int fd = n > 0 && (size_t)n < sizeof(line)
                 ? server_dial(cluster_port_addr(port), port, why, sizeof(why))
                 : -1;
    if (fd >= 0 && write(fd, line, (size_t)n) == n) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 2000) == 1)
            got = read(fd, reply, len - 1);
    }
    if (fd >= 0)
        close(fd);
    reply[got > 0 ? got : 0] = '\0';
    return got > 0 ? (int)got : -1;
}

/* GET key: "$12\r\nowner-value\r\n", "$-1" when the key is not there. */
int redis_server_read_key(int port, const char *key, char *out, size_t len)
{
    char cmd[96], reply[160];
    out[0] = '\0';
    snprintf(cmd, sizeof(cmd), "GET %s", key);
    if (redis_server_reply(port, cmd, reply, sizeof(reply)) < 0 || reply[0] != '$')
        return -1;
    const char *v = strstr(reply, "\r\n");
    if (reply[1] != '-' && v)
        snprintf(out, len, "%.*s", (int)strcspn(v + 2, "\r"), v + 2);
    return 0;
}

int redis_server_command(int port, const char *command, const char *want)
{
    char buf[64];
    if (redis_server_reply(port, command, buf, sizeof(buf)) < 0)
        return -1;
    return strncmp(buf, want, strlen(want)) == 0 ? 0 : -1;
}

/* Redis and its sentinels alike: INFO server's redis_version. */
int redis_server_version(const char *host, int port, struct server_version *v)
{
    char reply[4096];
    if (server_ask(host, port, "INFO server\r\nQUIT\r\n", "redis_version:", reply, sizeof(reply),
                   v->why, sizeof(v->why)) < 0)
        return -1;
    return server_version_field(reply, "redis_version:", NULL, v);
}

bool redis_server_answers(int port)
{
    return redis_server_command(port, "PING", "+PONG") == 0;
}

int redis_server_node_id(int port, char id[41])
{
    char reply[128];
    if (redis_server_reply(port, "CLUSTER MYID", reply, sizeof(reply)) < 0 ||
        strncmp(reply, "$40\r\n", 5) != 0)
        return -1;
    memcpy(id, reply + 5, 40);
    id[40] = '\0';
    return 0;
}

/* A master leads, a replica follows: INFO replication's role (sentinel
 * names the master of a topology it watches: the faults ask it first). */
bool redis_server_leads(int port)
{
    char reply[256];
    return redis_server_reply(port, "INFO replication", reply, sizeof(reply)) > 0 &&
           strstr(reply, "role:master") != NULL;
}

void redis_server_args(struct spawn *sp, const struct managed_server *s)
{
    spawn_arg(sp, "%s", spawn_env_or("LOCKLAB_REDIS_SERVER", "redis-server"));
    spawn_arg(sp, "--port");
    spawn_arg(sp, "%d", s->port);
    spawn_arg(sp, "--bind");
    spawn_arg(sp, "%s", s->addr);
    if (s->host) { /* its clients come from this machine: protected mode lets in loopback alone */
        spawn_arg(sp, "--protected-mode");
        spawn_arg(sp, "no");
    }
    spawn_arg(sp, "--save");
    spawn_arg(sp, "%s", "");
    spawn_arg(sp, "--appendonly");
    spawn_arg(sp, "%s", s->aof ? "yes" : "no");
    /* as many clients as locklab runs (redis-server lowers it to what its
     * limit on open files allows, and says so in its log) */
    spawn_arg(sp, "--maxclients");
    spawn_arg(sp, "%d", CLUSTER_MAX_CLIENTS + 1000);
    if (s->aof) { /* every write on disk before the reply: a kill loses nothing */
        spawn_arg(sp, "--appendfsync");
        spawn_arg(sp, "always");
    }
    /* a replica syncs at once, not after the default 5 s wait (SETUP.md) */
    spawn_arg(sp, "--repl-diskless-sync-delay");
    spawn_arg(sp, "0");
    if (s->replica_of > 0) {
        spawn_arg(sp, "--replicaof");
        spawn_arg(sp, "%s", cluster_port_addr(s->replica_of));
        spawn_arg(sp, "%d", s->replica_of);
    }
    spawn_arg(sp, "--daemonize");
    spawn_arg(sp, "no");
    spawn_arg(sp, "--dir");
    spawn_arg(sp, "%s", s->dir);
    spawn_arg(sp, "--logfile");
    spawn_arg(sp, "%s/%s", s->dir, s->kind->log);
    if (s->preload[0])
        spawn_faketime(sp, s);
}

static void command(struct spawn *sp, const struct managed_server *s)
{
    redis_server_args(sp, s);
}

static int start(struct cluster *c, size_t count, char *err, size_t errlen)
{
    for (size_t i = 0; i < count; i++) {
        struct managed_server *s = cluster_add_server(c, &server_redis, err, errlen);
        if (s == NULL || cluster_start_server(s, err, errlen) < 0) {
            cluster_stop(c, NULL);
            return -1;
        }
    }
    return 0;
}

/* Poll port with command until its reply holds want (or, want NULL, an
 * array of at least count), for up to REDIS_LINK_WAIT_MS. 0, or -1. */
int redis_server_wait_reply(int port, const char *command, const char *want, long count)
{
    for (int waited = 0; waited < REDIS_LINK_WAIT_MS; waited += 50) {
        char reply[4096];
        if (redis_server_reply(port, command, reply, sizeof(reply)) > 0 &&
            (want ? strstr(reply, want) != NULL : reply[0] == '*' && atol(reply + 1) >= count))
            return 0;
        spawn_sleep_ms(50);
    }
    return -1;
}

/* A replica whose link is up may not get writes yet: after a diskless
 * sync, Redis 7 streams them to it only once the replica's first REPLCONF
 * ACK has come, up to a second later, and a master killed before that
 * takes them along (a failover row once lost its holder's key so). Ready
 * is when a write made through from (the master) is on the replica; the
 * probe key is then deleted the same way. 0, or -1. */
static int replication_streams(int from, int replica)
{
    char set[64], want[32];
    snprintf(set, sizeof(set), "SET locklab:replication-probe %d", replica);
    snprintf(want, sizeof(want), "$%d\r\n%d", snprintf(NULL, 0, "%d", replica), replica);
    if (redis_server_command(from, set, "+OK") < 0 ||
        redis_server_wait_reply(replica, "GET locklab:replication-probe", want, 0) < 0 ||
        redis_server_command(from, "DEL locklab:replication-probe", ":1") < 0)
        return -1;
    return redis_server_wait_reply(replica, "GET locklab:replication-probe", "$-1", 0);
}

int redis_server_start_replica(struct cluster *c, int from, char *err, size_t errlen)
{
    struct managed_server *s = cluster_add_server(c, &server_redis, err, errlen);
    if (s == NULL)
        return -1;
    s->replica_of = from;
    if (cluster_start_server(s, err, errlen) < 0) {
        c->n--;
        return -1;
    }
    if (redis_server_wait_reply(s->port, "INFO replication", "master_link_status:up", 0) < 0 ||
        replication_streams(from, s->port) < 0) {
        snprintf(err, errlen, "the replica on %s:%d did not sync with %s:%d in %d ms", s->addr,
                 s->port, cluster_port_addr(from), from, REDIS_LINK_WAIT_MS);
        spawn_stop(s, SIGKILL);
        c->n--;
        return -1;
    }
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* What Redis would load at start: gone, as after a crash with no disk. */
void redis_server_forget_data(const struct managed_server *s)
{
    if (s->host) {
        static const char *const data[] = {"appendonlydir", "dump.rdb", NULL};
        remote_remove_files(s, data);
        return;
    }
    char path[320];
    snprintf(path, sizeof(path), "%s/appendonlydir", s->dir);
    nftw(path, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    snprintf(path, sizeof(path), "%s/dump.rdb", s->dir);
    unlink(path);
}

static int reset(const struct managed_server *s, char *err, size_t errlen)
{
    if (redis_server_command(s->port, "FLUSHALL", "+OK") == 0)
        return 0;
    snprintf(err, errlen, "redis on port %d did not answer FLUSHALL", s->port);
    return -1;
}

long redis_server_shorten_ttls(int port, uint64_t ms)
{
    /* One script, so no key is set or released between reading its ttl
     * and shortening it. Keys without a ttl keep none, as with a clock. */
    char cmd[512], reply[64];
    snprintf(cmd, sizeof(cmd),
             "EVAL \"local n = 0 for _, k in ipairs(redis.call('KEYS', '*')) do "
             "local t = redis.call('PTTL', k) if t > 0 then n = n + 1 "
             "if t <= tonumber(ARGV[1]) then redis.call('DEL', k) "
             "else redis.call('PEXPIRE', k, t - tonumber(ARGV[1])) end end end return n\" 0 %llu",
             (unsigned long long)ms);
    if (redis_server_reply(port, cmd, reply, sizeof(reply)) < 0 || reply[0] != ':')
        return -1;
    return strtol(reply + 1, NULL, 10);
}

/* The redis lock's topology (lock.redis): a master, its replicas
 * replicating through a proxy of the fleet's own (so a network fault can
 * delay or cut their link), and the sentinels that fail it over. 1 when
 * started, 0 when the scenario asks for a master alone, -1 with err. */
static int start_topology(const struct topology *t, char *err, size_t errlen)
{
    const struct family_layout *redis = &t->layout;
    if (redis->followers == 0)
        return 0; /* a master alone: as many as the lock asks (start) */
    if (start(t->cl, 1, err, errlen) < 0)
        return -1;
    const struct managed_server *master = &t->cl->srv[t->cl->n - 1];
    struct lock_endpoint up = server_endpoint(master);
    /* on hosts the replicas dial their master there: a relay here would
     * be a hop through this machine their deployment does not have */
    if (master->host == NULL) {
        *t->link = proxy_new(&up, 1, 1, 1, t->seed, err, errlen);
        if (*t->link == NULL || proxy_start(*t->link, err, errlen) < 0)
            return -1;
    }
    int from = *t->link ? proxy_address(*t->link, 0, 0).port : master->port;
    struct server_list *l = t->endpoints;
    l->ep[l->n++] = up;
    for (uint32_t i = 0; i < redis->followers; i++) {
        if (redis_server_start_replica(t->cl, from, err, errlen) < 0)
            return -1;
        l->ep[l->n++] = server_endpoint(&t->cl->srv[t->cl->n - 1]);
    }
    if (redis->finders == 0)
        return 1;
    /* Sentinel "fixes" a replica whose master address is not the one it
     * monitors (the proxy's) once failover-timeout has passed since it saw
     * it: longer than the run, so the link stays proxied throughout. */
    uint64_t failover_ms = t->duration_ms + 60000;
    size_t first = t->cl->n;
    if (sentinel_server_start(t->cl, redis->finders, up.port, redis->followers, failover_ms, err,
                              errlen) < 0)
        return -1;
    for (size_t i = first; i < t->cl->n; i++)
        t->finders->ep[t->finders->n++] = server_endpoint(&t->cl->srv[i]);
    return 1;
}

const struct server_kind server_redis = {
    .name = "redis",
    .node_prefix = "redis",
    .log = "redis.log",
    .ready_base_ms = 10000, /* SETUP.md: ready in 11-16 ms; room for a loaded CI box */
    .ready_poll_ms = 5,
    .ready_sign = "PING to answer PONG",
    .command = command,
    .answers = redis_server_answers,
    .version = redis_server_version,
    .leads = redis_server_leads,
    .roles = SERVER_ROLE_BIT(SERVER_ROLE_LEADER) | SERVER_ROLE_BIT(SERVER_ROLE_FOLLOWER),
    .leader_word = "master",
    .follower_word = "replica",
    .lone = "a single redis",
    .followers_setting = "lock.redis.sentinels: 1",
    .start = start,
    .forget_data = redis_server_forget_data,
    .reset = reset,
    .start_topology = start_topology,
    .durable_mode = "AOF fsync always",
    .clock_movable = true,
    .found_by = "sentinel",
    .read_key = redis_server_read_key,
    .shorten_ttls = redis_server_shorten_ttls,
    .option_letter = 'r',
    .cluster_note = "the single-instance algorithms use the first Redis",
    .cluster_nodes = 5,
    .cluster_counts = 0x1ff, /* 0..8 */
    .cluster_counts_text = "0..8",
    .option_arg = "H:P[,...]",
    .option_help = "use these Redis servers instead of starting them",
    .host_needs = {"redis-server", NULL},
    .host_packages = "redis-server",
    .on_hosts = true,
};
