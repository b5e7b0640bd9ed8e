/* zookeeper_server.c - the server kind "zookeeper": a standalone
 * ZooKeeper or an ensemble of three, on loopback, from Debian's jars with
 * SETUP.md's JVM flags. A member serves once srvr reports a Mode (it has
 * joined a quorum); the one whose Mode is leader (or standalone) leads.
 * Its data is its transaction log and myid: kept across every fault.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "sim/fleet/spawn.h"
#include "sim/fleet/zookeeper_server.h"
#include "sim/record/run_meta.h"

extern const struct server_kind server_zookeeper;

/* SETUP.md's measured flags: a small heap and a quick-starting JIT keep an
 * ensemble of three near 60 MB each and ready in about a second. */
static void command(struct spawn *sp, const struct managed_server *s)
{
    static const char *const jvm[] = {"-Xms16m",
                                      "-Xmx128m",
                                      "-Xss512k",
                                      "-XX:+UseSerialGC",
                                      "-XX:TieredStopAtLevel=1",
                                      "-XX:MaxMetaspaceSize=64m",
                                      "-XX:ReservedCodeCacheSize=32m",
                                      "-Dzookeeper.admin.enableServer=false"};
    spawn_arg(sp, "%s", spawn_env_or("LOCKLAB_JAVA", "java"));
    for (size_t i = 0; i < sizeof(jvm) / sizeof(jvm[0]); i++)
        spawn_arg(sp, "%s", jvm[i]);
    spawn_arg(sp, "-cp");
    spawn_arg(sp, "%s",
              spawn_env_or("LOCKLAB_ZOOKEEPER_CLASSPATH",
                           "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar"));
    spawn_arg(sp, "org.apache.zookeeper.server.quorum.QuorumPeerMain");
    spawn_arg(sp, "%s/zoo.cfg", s->dir);
}

/* zoo.cfg (and myid in an ensemble) for member i of zk[0..n). tickTime 500
 * lets sessions be as short as 1 s: the server clamps them to 2..20 ticks.
 * clientPortListenBacklog: the JVM's default accept queue is 50, and 10,000
 * clients dialling at the start of a run overflow it; the kernel drops the
 * SYNs past it, their retries come 1 s and 3 s later, past the engine's
 * 2 s connect timeout (the kernel caps it at net.core.somaxconn). */
static int write_zoo_cfg(struct managed_server *const *zk, size_t n, size_t i)
{
    FILE *f = cluster_server_file(zk[i]->dir, "zoo.cfg");
    if (f == NULL)
        return -1;
    fprintf(f,
            "tickTime=500\ninitLimit=20\nsyncLimit=10\ndataDir=%s\nclientPort=%d\n"
            "clientPortAddress=%s\n4lw.commands.whitelist=*\nadmin.enableServer=false\n"
            "maxClientCnxns=0\nforceSync=no\nclientPortListenBacklog=65535\n",
            zk[i]->dir, zk[i]->port, zk[i]->addr);
    for (size_t j = 0; n > 1 && j < n; j++)
        fprintf(f, "server.%zu=%s:%d:%d\n", j + 1, zk[j]->addr, zk[j]->peer_port,
                zk[j]->election_port);
    int rc = fclose(f);
    if (n > 1 && rc == 0) {
        f = cluster_server_file(zk[i]->dir, "myid");
        if (f == NULL)
            return -1;
        fprintf(f, "%zu\n", i + 1);
        rc = fclose(f);
    }
    return rc;
}

static int zk_ports(struct managed_server *s)
{
    s->port = cluster_free_port();
    s->peer_port = cluster_free_port();
    s->election_port = cluster_free_port();
    return s->port > 0 && s->peer_port > 0 && s->election_port > 0 && s->port != s->peer_port &&
                   s->port != s->election_port && s->peer_port != s->election_port
               ? 0
               : -1;
}

static int start(struct cluster *c, size_t ensemble, char *err, size_t errlen)
{
    struct managed_server *zk[CLUSTER_MAX_SERVERS];
    if (ensemble != 1 && ensemble != 3) {
        snprintf(err, errlen, "a ZooKeeper ensemble of %zu: locklab runs 1 or 3", ensemble);
        return -1;
    }
    /* All members are configured and started before any is waited for:
     * a member of an ensemble answers only once a quorum has formed. */
    for (size_t i = 0; i < ensemble; i++) {
        zk[i] = cluster_add_server(c, &server_zookeeper, err, errlen);
        if (zk[i] == NULL)
            goto fail;
        if (zk_ports(zk[i]) < 0) {
            snprintf(err, errlen, "no free loopback ports for ZooKeeper");
            goto fail;
        }
    }
    for (size_t i = 0; i < ensemble; i++) {
        if (write_zoo_cfg(zk, ensemble, i) < 0) {
            snprintf(err, errlen, "cannot write %s/zoo.cfg: %s", zk[i]->dir, strerror(errno));
            goto fail;
        }
        if (spawn_start(zk[i], err, errlen) < 0)
            goto fail;
    }
    for (size_t i = 0; i < ensemble; i++) {
        struct spawn_wait w;
        if (spawn_wait_ready(zk[i], ensemble, &w) != 0) {
            spawn_failed(zk[i], &w, err, errlen);
            goto fail;
        }
    }
    return 0;
fail:
    cluster_stop(c, NULL);
    return -1;
}

int zookeeper_server_ask(int port, const char *word, char *reply, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || len == 0)
        return fd < 0 ? -1 : 0;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    size_t got = 0;
    if (inet_pton(AF_INET, cluster_port_addr(port), &a.sin_addr) == 1 &&
        connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        write(fd, word, strlen(word)) == (ssize_t)strlen(word)) {
        /* a four-letter word's answer ends when the server closes */
        struct pollfd p = {.fd = fd, .events = POLLIN};
        while (got + 1 < len && poll(&p, 1, 1000) == 1) {
            ssize_t n = read(fd, reply + got, len - 1 - got);
            if (n <= 0)
                break;
            got += (size_t)n;
        }
    }
    reply[got] = '\0';
    close(fd);
    return (int)got;
}

static bool answers(int port)
{
    char reply[512];
    /* ruok answers before the server serves; srvr's Mode: line comes only
     * once it has joined a quorum (SETUP.md) */
    return zookeeper_server_ask(port, "srvr", reply, sizeof(reply)) > 0 &&
           strstr(reply, "Mode:") != NULL;
}

/* srvr's first line: "Zookeeper version: 3.8.0-1, built on ...". A
 * server that keeps srvr off its 4lw.commands.whitelist says so, and
 * the why quotes it. Debian's build leaves its commit id a placeholder
 * Maven never filled ("3.8.0-${mvngit.commit.id}"): the version is the
 * part before it (the answer keeps the line as it came). */
static int version(const char *host, int port, struct server_version *v)
{
    char reply[1024];
    if (server_ask(host, port, "srvr", "Zookeeper version:", reply, sizeof(reply), v->why,
                   sizeof(v->why)) < 0 ||
        server_version_field(reply, "Zookeeper version:", ",", v) < 0)
        return -1;
    char *unfilled = strstr(v->version, "-${");
    if (unfilled && unfilled > v->version)
        *unfilled = '\0';
    return 0;
}

static bool leads(int port)
{
    char reply[512];
    return zookeeper_server_ask(port, "srvr", reply, sizeof(reply)) > 0 &&
           (strstr(reply, "Mode: leader") || strstr(reply, "Mode: standalone"));
}

const struct server_kind server_zookeeper = {
    .name = "zookeeper",
    .node_prefix = "zk",
    .log = "stdout.log",
    .ready_base_ms = 20000, /* a JVM: 0.4-2.3 s alone, 1.3 s for three (SETUP.md) */
    .ready_poll_ms = 50,
    .ready_sign = "srvr to report a Mode (serving, in a quorum)",
    .one_service = true,
    .command = command,
    .answers = answers,
    .version = version,
    .leads = leads,
    .roles = SERVER_ROLE_BIT(SERVER_ROLE_LEADER) | SERVER_ROLE_BIT(SERVER_ROLE_FOLLOWER),
    .follower_word = "follower",
    .lone = "a standalone ZooKeeper",
    .followers_setting = "lock.zookeeper.ensemble: 3",
    .keeps_data = true, /* its transaction log and snapshots, in its dataDir */
    .start = start,
    .option_letter = 'z',
    .cluster_nodes = 1,
    .cluster_counts = 0xb, /* 0, 1, 3 */
    .cluster_counts_text = "0, 1 or 3",
    .option_arg = "H:P[,...]",
    .option_help = "use this ZooKeeper ensemble instead of starting it",
    .host_needs = {"java", "/usr/share/java/zookeeper.jar", NULL},
    .host_packages = "zookeeper",
    .on_hosts = true,
};
