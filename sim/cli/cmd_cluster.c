/* cmd_cluster.c - `locklab cluster up|status|down`: the managed fleet for
 * manual use (redis-cli, zkCli.sh, several locklab runs against one set of
 * servers through --redis/--zookeeper).
 *
 * `up` forks a supervisor into its own session. The supervisor starts the
 * servers (they die with it, through PR_SET_PDEATHSIG), writes the state
 * file, tells the waiting parent through a pipe, and then only waits for a
 * signal; `down` sends it SIGTERM and it stops them by PID, in order,
 * keeping their logs in DIR/logs.
 *
 * `up` also leaves the cluster's folder in a pointer file in TMPDIR, so
 * that status and down without --dir find it wherever it was started; one
 * cluster at a time, so that "the cluster" has one meaning.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/cli/cli.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "sim/record/clock.h"

struct cluster_opts {
    char dir[256];
    bool dir_given;                         /* --dir: status and down look nowhere else */
    bool remembered;                        /* dir came from the pointer file */
    long long nodes[SCENARIO_SERVER_KINDS]; /* by server kind: how many `up` starts */
};

/* The kinds `cluster up` can start: those that start on their own. */
static bool startable(size_t k)
{
    return k < SCENARIO_SERVER_KINDS && k < server_kind_count() && server_kind_at(k)->start;
}

/* The kind whose --<name>-nodes option a is, or -1. */
static int nodes_option(const char *a)
{
    for (size_t k = 0; k < server_kind_count(); k++) {
        char name[48];
        snprintf(name, sizeof(name), "--%s-nodes", server_kind_at(k)->name);
        if (startable(k) && strcmp(a, name) == 0)
            return (int)k;
    }
    return -1;
}

static int take_nodes(struct cluster_opts *o, int k, const char *a, const char *v)
{
    const struct server_kind *kind = server_kind_at((size_t)k);
    long long n;
    if (parse_long(v, 0, 31, &n) < 0 || !(kind->cluster_counts & (1u << n)))
        return bad_usage("%s: expected %s, got \"%s\"", a, kind->cluster_counts_text, v);
    o->nodes[k] = n;
    return 0;
}

/* "(--redis-nodes 0 --zookeeper-nodes 0)": every kind's option at 0. */
static int nothing_to_start(void)
{
    char all[256] = "";
    size_t used = 0;
    for (size_t k = 0; k < server_kind_count() && used < sizeof(all); k++)
        if (startable(k))
            used += (size_t)snprintf(all + used, sizeof(all) - used, "%s--%s-nodes 0",
                                     used ? " " : "", server_kind_at(k)->name);
    return bad_usage("cluster: nothing to start (%s)", all);
}

static const char *tmp_root(void)
{
    const char *tmp = getenv("TMPDIR");
    return tmp && tmp[0] ? tmp : "/tmp";
}

static int take_dir(struct cluster_opts *o, const char *v)
{
    if (v[0] == '\0' || strlen(v) >= sizeof(o->dir))
        return bad_usage("--dir: expected a folder path of 1..%zu characters", sizeof(o->dir) - 1);
    snprintf(o->dir, sizeof(o->dir), "%s", v);
    o->dir_given = true;
    return 0;
}

/* argv[1] is the action, already known to be up, status or down. */
static int parse_cluster_opts(int argc, char **argv, struct cluster_opts *o)
{
    bool up = strcmp(argv[1], "up") == 0;
    snprintf(o->dir, sizeof(o->dir), "%s/locklab-cluster", tmp_root());
    long long total = 0;
    for (size_t k = 0; k < server_kind_count() && k < SCENARIO_SERVER_KINDS; k++)
        o->nodes[k] = startable(k) ? server_kind_at(k)->cluster_nodes : 0;
    for (int i = 2; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int k = nodes_option(a);
        /* status and down act on the cluster as it is: a size would be ignored */
        if (!up && k >= 0)
            return bad_usage("cluster %s: %s is for `cluster up` only", argv[1], a);
        if (strcmp(a, "--dir") == 0 && v) {
            if (take_dir(o, v) != 0)
                return EXIT_USAGE;
        } else if (k >= 0 && v) {
            if (take_nodes(o, k, a, v) != 0)
                return EXIT_USAGE;
        } else
            return bad_usage("cluster: unexpected argument \"%s\"", a);
    }
    for (size_t k = 0; k < SCENARIO_SERVER_KINDS; k++)
        total += o->nodes[k];
    if (up && total == 0)
        return nothing_to_start();
    return 0;
}

/* ---- the pointer file: where the last `up` started its cluster ---------- */

/* Per user: on a shared /tmp another user's cluster is none of ours, and
 * the sticky bit would forbid replacing their file anyway. */
static void pointer_path(char *buf, size_t len)
{
    snprintf(buf, len, "%s/locklab-cluster-%u.current", tmp_root(), (unsigned)getuid());
}

/* 0 with the remembered folder in dir, -1 when nothing is remembered. */
static int pointer_read(char *dir, size_t len)
{
    char path[300];
    pointer_path(path, sizeof(path));
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    int ok = fgets(dir, (int)len, f) != NULL;
    fclose(f);
    if (ok)
        dir[strcspn(dir, "\n")] = '\0';
    return ok && dir[0] == '/' ? 0 : -1;
}

/* Written under a private name and renamed: a reader sees the old folder
 * or the new one, never half a path. */
static int pointer_write(const char *dir)
{
    char path[300], tmp[320];
    pointer_path(path, sizeof(path));
    snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    size_t n = strlen(dir);
    int ok = write(fd, dir, n) == (ssize_t)n && write(fd, "\n", 1) == 1;
    if (close(fd) != 0 || !ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Only when it still names dir: a later `up` elsewhere owns it then. */
static void pointer_forget(const char *dir)
{
    char now[300];
    if (pointer_read(now, sizeof(now)) == 0 && strcmp(now, dir) == 0) {
        char path[300];
        pointer_path(path, sizeof(path));
        unlink(path);
    }
}

/* status and down: --dir, else the remembered folder, else the default. */
static void resolve_dir(struct cluster_opts *o)
{
    char dir[sizeof(o->dir)];
    if (!o->dir_given && pointer_read(dir, sizeof(dir)) == 0) {
        memcpy(o->dir, dir, sizeof(dir));
        o->remembered = true;
    }
}

/* The folder as an absolute path, so the pointer holds wherever `status`
 * runs from; left as given when it does not exist (yet). */
static int absolute_dir(struct cluster_opts *o)
{
    char full[PATH_MAX];
    if (realpath(o->dir, full) == NULL)
        return 0;
    if (strlen(full) >= sizeof(o->dir))
        return bad_usage("--dir: %s is longer than %zu characters", full, sizeof(o->dir) - 1);
    memcpy(o->dir, full, strlen(full) + 1);
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
        if (strcmp(c->srv[i].kind->name, kind) == 0)
            used += (size_t)snprintf(buf + used, len - used, "%s127.0.0.1:%d", used ? "," : "",
                                     c->srv[i].port);
}

static int write_state(const struct cluster_opts *o, const struct cluster *c)
{
    char path[300], tmp[310];
    state_path(o, path, sizeof(path));
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "supervisor=%d\n", (int)getpid());
    for (size_t k = 0; k < server_kind_count(); k++) {
        char eps[400];
        if (!startable(k))
            continue;
        endpoints_of(c, server_kind_at(k)->name, eps, sizeof(eps));
        fprintf(f, "%s=%s\n", server_kind_at(k)->name, eps); /* redis=127.0.0.1:p,... */
    }
    for (size_t i = 0; i < c->n; i++)
        fprintf(f, "server=%s %d %d\n", c->srv[i].kind->name, c->srv[i].port, (int)c->srv[i].pid);
    fprintf(f, "supervisor_start=%llu\nroot=%s\n", cluster_process_start(getpid()), c->root);
    if (fclose(f) != 0)
        return -1;
    return rename(tmp, path); /* status never reads half a file */
}

static void logs_path(const struct cluster_opts *o, char *buf, size_t len)
{
    snprintf(buf, len, "%s/logs", o->dir);
}

/* The supervisor's start-up: 0, or -1 with err set and nothing running. */
static int supervisor_begin(const struct cluster_opts *o, struct cluster *c, char *err, size_t len)
{
    int rc = 0;
    for (size_t k = 0; k < server_kind_count() && rc == 0; k++)
        if (startable(k) && o->nodes[k] > 0)
            rc = cluster_start(c, server_kind_at(k)->name, (size_t)o->nodes[k], err, len);
    if (rc == 0 && write_state(o, c) < 0) {
        snprintf(err, len, "cannot write the state file in %s: %s", o->dir, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && pointer_write(o->dir) < 0) {
        char path[300];
        pointer_path(path, sizeof(path));
        snprintf(err, len, "cannot write %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc < 0) {
        char state[300];
        state_path(o, state, sizeof(state));
        unlink(state);
        cluster_stop(c, NULL);
    }
    return rc;
}

static void supervisor_end(const struct cluster_opts *o, struct cluster *c)
{
    char path[300], logs[300];
    state_path(o, path, sizeof(path));
    unlink(path);
    pointer_forget(o->dir);
    /* the logs outlive the cluster: why a server died is read after `down` */
    logs_path(o, logs, sizeof(logs));
    cluster_stop(c, logs);
}

/* The supervisor: start, report through fd, then wait for the end. */
static void supervise(const struct cluster_opts *o, int fd)
{
    struct cluster *c = calloc(1, sizeof(*c)); /* the process's till it exits */
    char err[512] = "";
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    if (c == NULL)
        snprintf(err, sizeof(err), "out of memory");
    if (c == NULL || supervisor_begin(o, c, err, sizeof(err)) < 0) {
        if (write(fd, err, strlen(err)) < 0)
            _exit(3);
        _exit(3);
    }
    if (write(fd, "", 1) < 0) { /* the caller is gone: nobody will know the endpoints */
        supervisor_end(o, c);
        _exit(3);
    }
    close(fd);
    struct timespec tick = {.tv_sec = 1};
    while (sigtimedwait(&set, NULL, &tick) < 0)
        ; /* a server that dies stays dead: status reports it */
    supervisor_end(o, c);
    _exit(0);
}

/* What the state file says. */
struct cluster_state {
    pid_t supervisor;
    unsigned long long supervisor_start;        /* 0: an older state file, 1: unknown */
    char endpoints[SCENARIO_SERVER_KINDS][400]; /* by server kind: "127.0.0.1:p,..." */
    char root[200];
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

/* "redis=127.0.0.1:p,...": a kind's endpoints; false for any other line. */
static bool state_endpoints(const char *line, struct cluster_state *st)
{
    for (size_t k = 0; k < server_kind_count(); k++) {
        char key[48];
        snprintf(key, sizeof(key), "%s=", server_kind_at(k)->name);
        if (startable(k) && take(line, key, st->endpoints[k], sizeof(st->endpoints[k])))
            return true;
    }
    return false;
}

static void read_state_line(const char *line, struct cluster_state *st)
{
    char num[24];
    if (take(line, "supervisor=", num, sizeof(num)))
        st->supervisor = (pid_t)atoi(num);
    else if (take(line, "supervisor_start=", num, sizeof(num)))
        st->supervisor_start = strtoull(num, NULL, 10);
    else if (take(line, "root=", st->root, sizeof(st->root)))
        return;
    else if (state_endpoints(line, st))
        return;
    else if (st->n < CLUSTER_MAX_SERVERS &&
             take(line, "server=", st->servers[st->n], sizeof(st->servers[0])))
        st->n++;
}

/* 0 when the state file was read and names a supervisor. */
static int read_state(const struct cluster_opts *o, struct cluster_state *st)
{
    char path[300], line[512];
    state_path(o, path, sizeof(path));
    memset(st, 0, sizeof(*st));
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        read_state_line(line, st);
    }
    fclose(f);
    return st->supervisor > 0 ? 0 : -1;
}

/* The kind of the state's server i, or NULL for one locklab does not know. */
static const struct server_kind *state_kind(const struct cluster_state *st, size_t i)
{
    char kind[16];
    if (sscanf(st->servers[i], "%15s", kind) != 1)
        return NULL;
    return server_kind_find(kind);
}

/* The state's server i named as its log is (cluster_server_name): the
 * state lists the servers in the cluster's order. */
static const char *state_name(const struct cluster_state *st, size_t i, char *buf, size_t len)
{
    const struct server_kind *k = state_kind(st, i);
    size_t nth = 1;
    for (size_t j = 0; j < i; j++)
        nth += state_kind(st, j) == k;
    if (k == NULL)
        snprintf(buf, len, "?");
    else
        cluster_node_name(k, nth, buf, len);
    return buf;
}

/* A pid alone could be anyone's after the supervisor died (a reboot with
 * the folder kept): the start time says it is still the same process. */
static bool supervisor_alive(const struct cluster_state *st)
{
    unsigned long long t = cluster_process_start(st->supervisor);
    if (t == 0)
        return false;
    /* unknown on either side: the pid alone has to do */
    return t == 1 || st->supervisor_start <= 1 || t == st->supervisor_start;
}

static void print_usage_hint(const struct cluster_state *st)
{
    printf("point locklab at it:\n  locklab run SCENARIO");
    for (size_t k = 0; k < server_kind_count(); k++)
        if (startable(k) && st->endpoints[k][0])
            printf(" --%s %s", server_kind_at(k)->name, st->endpoints[k]);
    printf("\n");
    for (size_t k = 0; k < server_kind_count(); k++)
        if (startable(k) && st->endpoints[k][0] && server_kind_at(k)->cluster_note)
            printf("  (%s)\n", server_kind_at(k)->cluster_note);
}

/* No live supervisor in o->dir: say which case it is, on one line. */
static void print_not_up(const struct cluster_opts *o, const struct cluster_state *st, bool has)
{
    if (has)
        printf("the locklab cluster in %s is gone: its supervisor (pid %d) is not running; "
               "`locklab cluster down%s%s` forgets it\n",
               o->dir, (int)st->supervisor, o->dir_given ? " --dir " : "",
               o->dir_given ? o->dir : "");
    else if (o->remembered)
        printf("the locklab cluster remembered in %s is gone (no state file there); "
               "`locklab cluster down` forgets it\n",
               o->dir);
    else
        printf("no locklab cluster is up (state: %s)\n", o->dir);
}

static int cluster_status(const struct cluster_opts *o, int hint)
{
    struct cluster_state st;
    int has = read_state(o, &st) == 0;
    if (!has || !supervisor_alive(&st)) {
        print_not_up(o, &st, has);
        return EXIT_ENV;
    }
    int down = 0;
    printf("locklab cluster (supervisor pid %d, state %s/state):\n", (int)st.supervisor, o->dir);
    for (size_t i = 0; i < st.n; i++) {
        char kind[16], name[64];
        int port, pid;
        if (sscanf(st.servers[i], "%15s %d %d", kind, &port, &pid) != 3)
            continue;
        const struct server_kind *k = server_kind_find(kind);
        int ok = k && k->answers(port);
        down += !ok;
        /* the name its log is kept under at down: DIR/logs/<name>.log */
        printf("  %-12s %-10s 127.0.0.1:%-6d pid %-7d %s\n", state_name(&st, i, name, sizeof(name)),
               kind, port, pid, ok ? "up" : "DOWN");
    }
    if (hint)
        print_usage_hint(&st);
    return down ? EXIT_ENV : EXIT_PASS;
}

/* EXIT_ENV after saying so when a live supervisor holds at->dir. */
static int already_up(const struct cluster_opts *at, bool remembered)
{
    struct cluster_state st;
    if (read_state(at, &st) < 0 || !supervisor_alive(&st))
        return 0;
    fprintf(stderr,
            "locklab: a cluster is already up in %s (supervisor pid %d), one at a time: "
            "`locklab cluster down%s%s` first\n",
            at->dir, (int)st.supervisor, remembered ? "" : " --dir ", remembered ? "" : at->dir);
    return EXIT_ENV;
}

/* A second cluster would leave status and down without --dir two answers
 * (and two fleets eating the same two cores): refuse it. */
static int refuse_second(const struct cluster_opts *o)
{
    struct cluster_opts last = {.dir_given = false};
    resolve_dir(&last);
    if (last.remembered && already_up(&last, true))
        return EXIT_ENV;
    return already_up(o, last.remembered && strcmp(last.dir, o->dir) == 0);
}

static int prepare_dir(struct cluster_opts *o)
{
    if (mkdir(o->dir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "locklab: cannot create %s: %s\n", o->dir, strerror(errno));
        return EXIT_ENV;
    }
    return absolute_dir(o);
}

/* A file where the folder should be: the state file could never be
 * written there, so say so before anything starts. */
static int dir_in_the_way(const struct cluster_opts *o)
{
    struct stat sb;
    if (stat(o->dir, &sb) < 0 || S_ISDIR(sb.st_mode))
        return 0;
    if (o->dir_given)
        return bad_usage("--dir %s is not a folder", o->dir);
    fprintf(stderr, "locklab: cluster up: %s is not a folder; remove it or give --dir DIR\n",
            o->dir);
    return EXIT_ENV;
}

static int cluster_up(struct cluster_opts *o)
{
    int rc = dir_in_the_way(o);
    if (rc == 0)
        rc = absolute_dir(o);
    if (rc == 0)
        rc = refuse_second(o);
    if (rc == 0)
        rc = prepare_dir(o);
    if (rc)
        return rc;
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

/* A killed supervisor kept no logs, but its servers' folder (root=) holds
 * them until a later run sweeps it: copy them into DIR/logs as
 * cluster_stop would have. How many were kept. */
static size_t rescue_logs(const struct cluster_opts *o, const struct cluster_state *st)
{
    char logs[300];
    size_t kept = 0;
    logs_path(o, logs, sizeof(logs));
    if (mkdir(logs, 0755) < 0 && errno != EEXIST)
        return 0;
    for (size_t i = 0; i < st->n; i++) {
        char name[64];
        const struct server_kind *k = state_kind(st, i);
        if (k == NULL)
            continue; /* the state file names no path of ours to follow */
        kept += cluster_keep_log(st->root, k, i, state_name(st, i, name, sizeof(name)), logs) == 0;
    }
    rmdir(logs); /* only when nothing was kept: it is not empty otherwise */
    return kept;
}

/* The supervisor died without stopping: its state names nobody now. */
static int forget_gone(const struct cluster_opts *o, const struct cluster_state *st, bool has)
{
    char path[300];
    state_path(o, path, sizeof(path));
    struct stat sb; /* a later run may have swept the dead cluster's folder already */
    bool left = has && st->root[0] && stat(st->root, &sb) == 0 && S_ISDIR(sb.st_mode);
    size_t kept = left ? rescue_logs(o, st) : 0;
    if (has)
        unlink(path);
    pointer_forget(o->dir);
    if (kept) {
        logs_path(o, path, sizeof(path));
        printf("the locklab cluster in %s was already gone (supervisor pid %d); forgot it; "
               "its servers' logs are in %s\n",
               o->dir, (int)st->supervisor, path);
    } else if (left)
        printf("the locklab cluster in %s was already gone (supervisor pid %d); forgot it; "
               "its servers' files are left in %s\n",
               o->dir, (int)st->supervisor, st->root);
    else
        printf("the locklab cluster in %s was already gone; forgot it\n", o->dir);
    return EXIT_PASS;
}

static void print_stopped(const struct cluster_opts *o, size_t n)
{
    char logs[300];
    struct stat sb;
    logs_path(o, logs, sizeof(logs));
    if (stat(logs, &sb) == 0 && S_ISDIR(sb.st_mode))
        printf("locklab cluster stopped (%zu server%s); their logs are in %s\n", n,
               n == 1 ? "" : "s", logs);
    else
        printf("locklab cluster stopped (%zu server%s); their logs could not be kept in %s\n", n,
               n == 1 ? "" : "s", logs);
}

static int cluster_down(const struct cluster_opts *o)
{
    struct cluster_state st;
    int has = read_state(o, &st) == 0;
    if ((has && !supervisor_alive(&st)) || (!has && o->remembered))
        return forget_gone(o, &st, has);
    if (!has || kill(st.supervisor, SIGTERM) < 0) {
        printf("no locklab cluster is up (state: %s)\n", o->dir);
        return EXIT_PASS;
    }
    /* bounded: the supervisor stops each server within a few seconds */
    uint64_t deadline = clock_mono_ns() + 30ULL * 1000000000ULL;
    while (supervisor_alive(&st) && clock_mono_ns() < deadline) {
        struct timespec ts = {.tv_nsec = 20000000};
        nanosleep(&ts, NULL);
    }
    if (supervisor_alive(&st)) {
        fprintf(stderr, "locklab: the supervisor (pid %d) did not stop\n", (int)st.supervisor);
        return EXIT_ENV;
    }
    pointer_forget(o->dir);
    print_stopped(o, st.n);
    return EXIT_PASS;
}

int cmd_cluster(int argc, char **argv)
{
    struct cluster_opts o = {0};
    if (argc < 2)
        return bad_usage("%s", "cluster: up, status or down?");
    bool known = strcmp(argv[1], "up") == 0 || strcmp(argv[1], "status") == 0 ||
                 strcmp(argv[1], "down") == 0;
    if (!known)
        return bad_usage("cluster: unknown action \"%s\" (up, status or down)", argv[1]);
    int rc = parse_cluster_opts(argc, argv, &o);
    if (rc)
        return rc;
    if (strcmp(argv[1], "up") == 0)
        return cluster_up(&o);
    resolve_dir(&o);
    rc = absolute_dir(&o);
    if (rc)
        return rc;
    return argv[1][0] == 's' ? cluster_status(&o, 1) : cluster_down(&o);
}
