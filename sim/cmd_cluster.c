/* cmd_cluster.c - `locklab cluster up|status|down`: the managed fleet for
 * manual use (redis-cli, zkCli.sh, several locklab runs against one set of
 * servers through --redis/--zookeeper).
 *
 * `up` forks a supervisor into its own session. The supervisor starts the
 * servers (they die with it, through PR_SET_PDEATHSIG), writes the state
 * file, tells the waiting parent through a pipe, and then only waits for a
 * signal; `down` sends it SIGTERM and it stops them by PID, in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "cluster.h"

struct cluster_opts {
    char dir[256];
    long long redis_nodes, zk_nodes;
};

static int parse_cluster_opts(int argc, char **argv, struct cluster_opts *o)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(o->dir, sizeof(o->dir), "%s/locklab-cluster", tmp && tmp[0] ? tmp : "/tmp");
    o->redis_nodes = 5;
    o->zk_nodes = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--dir") == 0 && v)
            snprintf(o->dir, sizeof(o->dir), "%s", v);
        else if (strcmp(a, "--redis-nodes") == 0 && v) {
            if (parse_long(v, 0, 8, &o->redis_nodes) < 0)
                return bad_usage("--redis-nodes: expected 0..8, got \"%s\"", v);
        } else if (strcmp(a, "--zookeeper-nodes") == 0 && v) {
            if (parse_long(v, 0, 3, &o->zk_nodes) < 0 || o->zk_nodes == 2)
                return bad_usage("--zookeeper-nodes: expected 0, 1 or 3, got \"%s\"", v);
        } else
            return bad_usage("cluster: unexpected argument \"%s\"", a);
        i++;
    }
    if (o->redis_nodes + o->zk_nodes == 0)
        return bad_usage("%s", "cluster: nothing to start (--redis-nodes 0 --zookeeper-nodes 0)");
    return 0;
}

static void state_path(const struct cluster_opts *o, char *buf, size_t len)
{
    snprintf(buf, len, "%s/state", o->dir);
}

/* The endpoints of one kind, "127.0.0.1:p,127.0.0.1:q". */
static void endpoints_of(const struct cluster *c, const char *kind, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->n && used < len; i++)
        if (strcmp(c->srv[i].kind, kind) == 0)
            used += (size_t)snprintf(buf + used, len - used, "%s127.0.0.1:%d", used ? "," : "",
                                     c->srv[i].port);
}

static int write_state(const struct cluster_opts *o, const struct cluster *c)
{
    char path[300], tmp[310], redis[400], zk[200];
    state_path(o, path, sizeof(path));
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    endpoints_of(c, "redis", redis, sizeof(redis));
    endpoints_of(c, "zookeeper", zk, sizeof(zk));
    fprintf(f, "supervisor=%d\nredis=%s\nzookeeper=%s\n", (int)getpid(), redis, zk);
    for (size_t i = 0; i < c->n; i++)
        fprintf(f, "server=%s %d %d\n", c->srv[i].kind, c->srv[i].port, (int)c->srv[i].pid);
    if (fclose(f) != 0)
        return -1;
    return rename(tmp, path); /* status never reads half a file */
}

/* The supervisor: start, report through fd, then wait for the end. */
static void supervise(const struct cluster_opts *o, int fd)
{
    static struct cluster c;
    char err[512] = "";
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int rc = cluster_start_redis(&c, (size_t)o->redis_nodes, err, sizeof(err));
    if (rc == 0 && o->zk_nodes > 0)
        rc = cluster_start_zookeeper(&c, (size_t)o->zk_nodes, err, sizeof(err));
    if (rc == 0 && write_state(o, &c) < 0) {
        snprintf(err, sizeof(err), "cannot write the state file in %s: %s", o->dir,
                 strerror(errno));
        rc = -1;
    }
    if (rc < 0) {
        cluster_stop(&c, NULL);
        if (write(fd, err, strlen(err)) < 0)
            _exit(3);
        _exit(3);
    }
    if (write(fd, "", 1) < 0) { /* the caller is gone: nobody will know the endpoints */
        cluster_stop(&c, NULL);
        _exit(3);
    }
    close(fd);
    struct timespec tick = {.tv_sec = 1};
    while (sigtimedwait(&set, NULL, &tick) < 0)
        ; /* a server that dies stays dead: status reports it */
    char path[300];
    state_path(o, path, sizeof(path));
    unlink(path);
    cluster_stop(&c, NULL);
    _exit(0);
}

/* What the state file says. */
struct cluster_state {
    pid_t supervisor;
    char redis[400], zookeeper[200];
    char servers[CLUSTER_MAX_SERVERS][64]; /* "kind port pid" */
    size_t n;
};

/* Copy the value of line into out when line starts with key. */
static bool take(const char *line, const char *key, char *out, size_t len)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0)
        return false;
    snprintf(out, len, "%.*s", (int)(len - 1), line + k);
    return true;
}

/* 0 when the state file was read and names a supervisor. */
static int read_state(const struct cluster_opts *o, struct cluster_state *st)
{
    char path[300], line[512], pid[16];
    state_path(o, path, sizeof(path));
    memset(st, 0, sizeof(*st));
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (take(line, "supervisor=", pid, sizeof(pid)))
            st->supervisor = (pid_t)atoi(pid);
        else if (take(line, "redis=", st->redis, sizeof(st->redis)) ||
                 take(line, "zookeeper=", st->zookeeper, sizeof(st->zookeeper)))
            continue;
        else if (st->n < CLUSTER_MAX_SERVERS &&
                 take(line, "server=", st->servers[st->n], sizeof(st->servers[0])))
            st->n++;
    }
    fclose(f);
    return st->supervisor > 0 ? 0 : -1;
}

static void print_usage_hint(const char *redis, const char *zk)
{
    printf("point locklab at it:\n  locklab run SCENARIO");
    if (redis[0])
        printf(" --redis %s", redis);
    if (zk[0])
        printf(" --zookeeper %s", zk);
    printf("\n  (the single-instance algorithms use the first Redis)\n");
}

static int cluster_status(const struct cluster_opts *o, int hint)
{
    struct cluster_state st;
    if (read_state(o, &st) < 0 || kill(st.supervisor, 0) < 0) {
        printf("no locklab cluster is up (state: %s)\n", o->dir);
        return EXIT_ENV;
    }
    int down = 0;
    printf("locklab cluster (supervisor pid %d, state %s/state):\n", (int)st.supervisor, o->dir);
    for (size_t i = 0; i < st.n; i++) {
        char kind[16];
        int port, pid;
        if (sscanf(st.servers[i], "%15s %d %d", kind, &port, &pid) != 3)
            continue;
        int ok = cluster_answers(kind, port);
        down += !ok;
        printf("  %-10s 127.0.0.1:%-6d pid %-7d %s\n", kind, port, pid, ok ? "up" : "DOWN");
    }
    if (hint)
        print_usage_hint(st.redis, st.zookeeper);
    return down ? EXIT_ENV : EXIT_PASS;
}

static int cluster_up(const struct cluster_opts *o)
{
    struct cluster_state st;
    if (read_state(o, &st) == 0 && kill(st.supervisor, 0) == 0) {
        fprintf(stderr,
                "locklab: a cluster is already up (supervisor pid %d); "
                "`locklab cluster down` first\n",
                (int)st.supervisor);
        return EXIT_ENV;
    }
    if (mkdir(o->dir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "locklab: cannot create %s: %s\n", o->dir, strerror(errno));
        return EXIT_ENV;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return EXIT_ENV;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return EXIT_ENV;
    if (pid == 0) {
        close(p[0]);
        setsid();
        /* Let go of the caller's terminal and pipes: `$(locklab cluster up)` must return. */
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0), dup2(null, 1), dup2(null, 2);
        supervise(o, p[1]);
    }
    close(p[1]);
    char msg[512] = "";
    ssize_t got = read(p[0], msg, sizeof(msg) - 1);
    close(p[0]);
    if (got != 1) {
        msg[got > 0 ? got : 0] = '\0';
        waitpid(pid, NULL, 0);
        fprintf(stderr, "locklab: cluster up: %s\n", msg[0] ? msg : "the supervisor died");
        return EXIT_ENV;
    }
    return cluster_status(o, 1);
}

static int cluster_down(const struct cluster_opts *o)
{
    struct cluster_state st;
    if (read_state(o, &st) < 0 || kill(st.supervisor, SIGTERM) < 0) {
        printf("no locklab cluster is up (state: %s)\n", o->dir);
        return EXIT_PASS;
    }
    /* bounded: the supervisor stops each server within a few seconds */
    uint64_t deadline = clock_mono_ns() + 30ULL * 1000000000ULL;
    while (kill(st.supervisor, 0) == 0 && clock_mono_ns() < deadline) {
        struct timespec ts = {.tv_nsec = 20000000};
        nanosleep(&ts, NULL);
    }
    if (kill(st.supervisor, 0) == 0) {
        fprintf(stderr, "locklab: the supervisor (pid %d) did not stop\n", (int)st.supervisor);
        return EXIT_ENV;
    }
    printf("locklab cluster stopped (%zu servers)\n", st.n);
    return EXIT_PASS;
}

int cmd_cluster(int argc, char **argv)
{
    struct cluster_opts o = {0};
    if (argc < 2)
        return bad_usage("%s", "cluster: up, status or down?");
    int rc = parse_cluster_opts(argc, argv, &o);
    if (rc)
        return rc;
    if (strcmp(argv[1], "up") == 0)
        return cluster_up(&o);
    if (strcmp(argv[1], "status") == 0)
        return cluster_status(&o, 1);
    if (strcmp(argv[1], "down") == 0)
        return cluster_down(&o);
    return bad_usage("cluster: unknown action \"%s\" (up, status or down)", argv[1]);
}
