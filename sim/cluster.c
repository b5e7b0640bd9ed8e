/* cluster.c - managed redis-server processes. */
#include "cluster.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

#define READY_TIMEOUT_MS 10000 /* SETUP.md measured 11-16 ms; a loaded CI box is slower */
#define STOP_TIMEOUT_MS  3000
#define START_ATTEMPTS   3 /* a freshly picked free port can be taken before the server binds it */

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

int cluster_redis_command(int port, const char *command, const char *want)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    char line[128];
    int n = snprintf(line, sizeof(line), "%s\r\n", command);
    int ok = -1;
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && n > 0 &&
        write(fd, line, (size_t)n) == n) {
        char buf[64] = {0};
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 2000) == 1 && read(fd, buf, sizeof(buf) - 1) > 0)
            ok = strncmp(buf, want, strlen(want)) == 0 ? 0 : -1;
    }
    close(fd);
    return ok;
}

/* Everything the child needs, prepared before fork: between fork and exec
 * only async-signal-safe calls are allowed (other threads may hold locks). */
#define SPAWN_MAX_ARGS 24

struct spawn {
    char *argv[SPAWN_MAX_ARGS + 1];
    char args[SPAWN_MAX_ARGS][320];
    size_t argc;
    char out_path[320];
    pid_t parent;
};

__attribute__((format(printf, 2, 3))) static void spawn_arg(struct spawn *sp, const char *fmt, ...)
{
    if (sp->argc >= SPAWN_MAX_ARGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sp->args[sp->argc], sizeof(sp->args[0]), fmt, ap);
    va_end(ap);
    sp->argv[sp->argc] = sp->args[sp->argc];
    sp->argc++;
    sp->argv[sp->argc] = NULL;
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && v[0] ? v : fallback;
}

static void prepare_redis(struct spawn *sp, const struct managed_server *s)
{
    spawn_arg(sp, "%s", env_or("LOCKLAB_REDIS_SERVER", "redis-server"));
    spawn_arg(sp, "--port");
    spawn_arg(sp, "%d", s->port);
    spawn_arg(sp, "--bind");
    spawn_arg(sp, "127.0.0.1");
    spawn_arg(sp, "--save");
    spawn_arg(sp, "%s", "");
    spawn_arg(sp, "--appendonly");
    spawn_arg(sp, "no");
    spawn_arg(sp, "--daemonize");
    spawn_arg(sp, "no");
    spawn_arg(sp, "--dir");
    spawn_arg(sp, "%s", s->dir);
    spawn_arg(sp, "--logfile");
    spawn_arg(sp, "%s/%s", s->dir, s->log);
}

/* SETUP.md's measured flags: a small heap and a quick-starting JIT keep an
 * ensemble of three near 60 MB each and ready in about a second. */
static void prepare_zookeeper(struct spawn *sp, const struct managed_server *s)
{
    static const char *const jvm[] = {"-Xms16m",
                                      "-Xmx128m",
                                      "-Xss512k",
                                      "-XX:+UseSerialGC",
                                      "-XX:TieredStopAtLevel=1",
                                      "-XX:MaxMetaspaceSize=64m",
                                      "-XX:ReservedCodeCacheSize=32m",
                                      "-Dzookeeper.admin.enableServer=false"};
    spawn_arg(sp, "%s", env_or("LOCKLAB_JAVA", "java"));
    for (size_t i = 0; i < sizeof(jvm) / sizeof(jvm[0]); i++)
        spawn_arg(sp, "%s", jvm[i]);
    spawn_arg(sp, "-cp");
    spawn_arg(sp, "%s",
              env_or("LOCKLAB_ZOOKEEPER_CLASSPATH",
                     "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar"));
    spawn_arg(sp, "org.apache.zookeeper.server.quorum.QuorumPeerMain");
    spawn_arg(sp, "%s/zoo.cfg", s->dir);
}

static void prepare_spawn(struct spawn *sp, const struct managed_server *s)
{
    memset(sp, 0, sizeof(*sp));
    if (strcmp(s->kind, "zookeeper") == 0)
        prepare_zookeeper(sp, s);
    else
        prepare_redis(sp, s);
    snprintf(sp->out_path, sizeof(sp->out_path), "%s/stdout.log", s->dir);
    sp->parent = getpid();
}

static void child_exec(const struct spawn *sp)
{
    /* Own process group: a terminal's Ctrl-C reaches locklab, which stops
     * the servers in order, instead of killing them mid-run. */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != sp->parent)
        _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL); /* locklab blocks signals for its sigwait thread */
    int fd = open(sp->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
    }
    if (null >= 0)
        dup2(null, 0);
    execvp(sp->argv[0], sp->argv);
    static const char msg[] = ": cannot execute: not installed, or not executable\n";
    if (write(2, sp->argv[0], strlen(sp->argv[0])) < 0 || write(2, msg, sizeof(msg) - 1) < 0)
        _exit(127);
    _exit(127);
}

/* Last line of the server's logs, for an error message. */
static void log_tail(const struct managed_server *s, char *out, size_t len)
{
    const char *names[] = {"stdout.log", s->log};
    out[0] = '\0';
    for (size_t i = 0; i < 2; i++) {
        char path[320], line[256];
        snprintf(path, sizeof(path), "%s/%s", s->dir, names[i]);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        while (fgets(line, sizeof(line), f))
            if (line[0] != '\n')
                snprintf(out, len, "%.*s", (int)(len - 1), line);
        fclose(f);
    }
    out[strcspn(out, "\n")] = '\0';
}

static int reap(struct managed_server *s, int *status)
{
    pid_t r = waitpid(s->pid, status, WNOHANG);
    if (r == s->pid) {
        s->pid = 0;
        return 1;
    }
    return 0;
}

int cluster_answers(const char *kind, int port)
{
    if (strcmp(kind, "zookeeper") == 0) {
        char reply[512];
        /* ruok answers before the server serves; srvr's Mode: line comes
         * only once it has joined a quorum (SETUP.md) */
        return cluster_ask(port, "srvr", reply, sizeof(reply)) > 0 &&
               strstr(reply, "Mode:") != NULL;
    }
    return cluster_redis_command(port, "PING", "+PONG") == 0;
}

/* Wait until the server answers; 0, 1 (it died: maybe the port), -1 (timeout). */
static int wait_ready(struct managed_server *s)
{
    uint64_t deadline = clock_mono_ns() + (uint64_t)READY_TIMEOUT_MS * 1000000u;
    while (clock_mono_ns() < deadline) {
        int status;
        if (reap(s, &status))
            return 1;
        if (cluster_answers(s->kind, s->port))
            return 0;
        sleep_ms(s->kind[0] == 'z' ? 50 : 5);
    }
    return -1;
}

static void stop_one(struct managed_server *s, int sig)
{
    if (s->pid <= 0)
        return;
    kill(s->pid, sig);
    uint64_t deadline = clock_mono_ns() + (uint64_t)STOP_TIMEOUT_MS * 1000000u;
    int status;
    while (!reap(s, &status)) {
        if (clock_mono_ns() > deadline) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &status, 0);
            s->pid = 0;
            return;
        }
        sleep_ms(5);
    }
}

static int spawn_one(struct managed_server *s, char *err, size_t errlen)
{
    struct spawn sp;
    prepare_spawn(&sp, s);
    s->pid = fork();
    if (s->pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        s->pid = 0;
        return -1;
    }
    if (s->pid == 0)
        child_exec(&sp);
    return 0;
}

static void start_failed(struct managed_server *s, int rc, char *err, size_t errlen)
{
    char tail[200];
    log_tail(s, tail, sizeof(tail));
    snprintf(err, errlen, "%s on port %d %s: %s", s->kind, s->port,
             rc < 0 ? "did not answer in time" : "exited at start",
             tail[0] ? tail : "(no log: is it installed?)");
}

static int start_redis(struct managed_server *s, char *err, size_t errlen)
{
    for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        s->port = free_port();
        if (s->port < 0) {
            snprintf(err, errlen, "no free loopback port: %s", strerror(errno));
            return -1;
        }
        if (spawn_one(s, err, errlen) < 0)
            return -1;
        int rc = wait_ready(s);
        if (rc == 0)
            return 0;
        char tail[200];
        log_tail(s, tail, sizeof(tail));
        int retry = rc > 0 && strstr(tail, "in use") != NULL && attempt + 1 < START_ATTEMPTS;
        if (!retry)
            start_failed(s, rc, err, errlen);
        stop_one(s, SIGKILL);
        if (!retry)
            return -1;
    }
    return -1;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

#define OWNER_FILE "owner.pid"

/* The kernel's start time of a live pid (clock ticks since boot); 0 when
 * it is gone or a zombie (an orphan waits for init to reap it, and some
 * inits take their time), 1 when /proc cannot tell. With the pid it names
 * one process, even after the pid is reused. */
unsigned long long cluster_process_start(pid_t pid)
{
    char path[64], buf[1024] = "";
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return kill(pid, 0) == 0 || errno == EPERM ? 1 : 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* the command name in field 2 may hold spaces: count from its ')' */
    const char *p = strrchr(buf, ')');
    if (p == NULL || p[1] == '\0' || p[2] == 'Z' || p[2] == 'X')
        return 0;
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    unsigned long long t = 1;
    if (p == NULL || sscanf(p + 1, "%llu", &t) != 1)
        return 1;
    return t;
}

/* A locklab-XXXXXX folder whose owner is dead: what a SIGKILLed run left
 * (its servers died with it, PR_SET_PDEATHSIG). One without an owner file
 * may be another run's in the instant between mkdtemp and the write. */
static int orphaned(const char *dir)
{
    char path[PATH_MAX + 64];
    long pid = 0;
    snprintf(path, sizeof(path), "%s/" OWNER_FILE, dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    int got = fscanf(f, "%ld", &pid);
    fclose(f);
    return got == 1 && pid > 0 && cluster_process_start((pid_t)pid) == 0;
}

static void sweep_orphans(const char *tmp)
{
    DIR *d = opendir(tmp);
    struct dirent *e;
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        char dir[PATH_MAX + 32];
        if (strncmp(e->d_name, "locklab-", 8) != 0 || strlen(e->d_name) != 14)
            continue; /* only mkdtemp's names: never a user's cluster --dir */
        snprintf(dir, sizeof(dir), "%.*s/%.14s", PATH_MAX - 1, tmp, e->d_name);
        if (orphaned(dir))
            nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    closedir(d);
}

static int make_root(struct cluster *c, char *err, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    tmp = tmp && tmp[0] ? tmp : "/tmp";
    sweep_orphans(tmp);
    snprintf(c->root, sizeof(c->root), "%s/locklab-XXXXXX", tmp);
    if (mkdtemp(c->root) == NULL) {
        snprintf(err, errlen, "cannot create a temporary folder in %s: %s", tmp, strerror(errno));
        c->root[0] = '\0';
        return -1;
    }
    char path[sizeof(c->root) + 16];
    snprintf(path, sizeof(path), "%s/" OWNER_FILE, c->root);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%ld\n", (long)getpid());
        fclose(f);
    }
    return 0;
}

/* The file a server of kind logs to, in its folder <root>/<kind>-<i>. */
static const char *log_name(const char *kind)
{
    return strcmp(kind, "redis") == 0 ? "redis.log" : "stdout.log";
}

/* The next slot of c, with its own folder; NULL with err set. */
static struct managed_server *add_server(struct cluster *c, const char *kind, char *err,
                                         size_t errlen)
{
    if (c->n >= CLUSTER_MAX_SERVERS) {
        snprintf(err, errlen, "at most %d managed servers", CLUSTER_MAX_SERVERS);
        return NULL;
    }
    if (c->root[0] == '\0' && make_root(c, err, errlen) < 0)
        return NULL;
    struct managed_server *s = &c->srv[c->n];
    memset(s, 0, sizeof(*s));
    snprintf(s->kind, sizeof(s->kind), "%s", kind);
    snprintf(s->log, sizeof(s->log), "%s", log_name(kind));
    char dir[sizeof(s->dir)];
    snprintf(dir, sizeof(dir), "%.*s/%s-%zu", (int)(sizeof(dir) - 40), c->root, kind, c->n);
    memcpy(s->dir, dir, sizeof(dir));
    if (mkdir(s->dir, 0700) < 0) {
        snprintf(err, errlen, "mkdir %s: %s", s->dir, strerror(errno));
        return NULL;
    }
    c->n++;
    return s;
}

int cluster_start_redis(struct cluster *c, size_t count, char *err, size_t errlen)
{
    for (size_t i = 0; i < count; i++) {
        struct managed_server *s = add_server(c, "redis", err, errlen);
        if (s == NULL || start_redis(s, err, errlen) < 0) {
            cluster_stop(c, NULL);
            return -1;
        }
    }
    return 0;
}

/* zoo.cfg (and myid in an ensemble) for member i of zk[0..n). tickTime 500
 * lets sessions be as short as 1 s: the server clamps them to 2..20 ticks. */
static int write_zoo_cfg(struct managed_server *const *zk, size_t n, size_t i)
{
    char path[320];
    snprintf(path, sizeof(path), "%s/zoo.cfg", zk[i]->dir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f,
            "tickTime=500\ninitLimit=20\nsyncLimit=10\ndataDir=%s\nclientPort=%d\n"
            "clientPortAddress=127.0.0.1\n4lw.commands.whitelist=*\nadmin.enableServer=false\n"
            "maxClientCnxns=0\nforceSync=no\n",
            zk[i]->dir, zk[i]->port);
    for (size_t j = 0; n > 1 && j < n; j++)
        fprintf(f, "server.%zu=127.0.0.1:%d:%d\n", j + 1, zk[j]->peer_port, zk[j]->election_port);
    int rc = fclose(f);
    if (n > 1 && rc == 0) {
        snprintf(path, sizeof(path), "%s/myid", zk[i]->dir);
        f = fopen(path, "w");
        if (f == NULL)
            return -1;
        fprintf(f, "%zu\n", i + 1);
        rc = fclose(f);
    }
    return rc;
}

static int zk_ports(struct managed_server *s)
{
    s->port = free_port();
    s->peer_port = free_port();
    s->election_port = free_port();
    return s->port > 0 && s->peer_port > 0 && s->election_port > 0 && s->port != s->peer_port &&
                   s->port != s->election_port && s->peer_port != s->election_port
               ? 0
               : -1;
}

int cluster_start_zookeeper(struct cluster *c, size_t ensemble, char *err, size_t errlen)
{
    struct managed_server *zk[CLUSTER_MAX_SERVERS];
    if (ensemble != 1 && ensemble != 3) {
        snprintf(err, errlen, "a ZooKeeper ensemble of %zu: locklab runs 1 or 3", ensemble);
        return -1;
    }
    /* All members are configured and started before any is waited for:
     * a member of an ensemble answers only once a quorum has formed. */
    for (size_t i = 0; i < ensemble; i++) {
        zk[i] = add_server(c, "zookeeper", err, errlen);
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
        if (spawn_one(zk[i], err, errlen) < 0)
            goto fail;
    }
    for (size_t i = 0; i < ensemble; i++) {
        int rc = wait_ready(zk[i]);
        if (rc != 0) {
            start_failed(zk[i], rc, err, errlen);
            goto fail;
        }
    }
    return 0;
fail:
    cluster_stop(c, NULL);
    return -1;
}

int cluster_ask(int port, const char *word, char *reply, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || len == 0)
        return fd < 0 ? -1 : 0;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    size_t got = 0;
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
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

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "r");
    if (in == NULL)
        return -1;
    FILE *out = fopen(to, "w");
    char buf[8192];
    size_t n;
    int ok = out != NULL;
    while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    ok = ok && !ferror(in);
    fclose(in);
    if (out && fclose(out) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

int cluster_keep_log(const char *root, const char *kind, size_t i, const char *logs_dir)
{
    char from[400], to[600];
    snprintf(from, sizeof(from), "%s/%s-%zu/%s", root, kind, i, log_name(kind));
    snprintf(to, sizeof(to), "%s/%s-%zu.log", logs_dir, kind, i);
    return copy_file(from, to);
}

static void keep_logs(const struct cluster *c, const char *logs_dir)
{
    if (c->n == 0)
        return; /* external servers only: no log, no empty folder */
    if (mkdir(logs_dir, 0755) < 0 && errno != EEXIST)
        return;
    for (size_t i = 0; i < c->n; i++)
        cluster_keep_log(c->root, c->srv[i].kind, i, logs_dir);
}

void cluster_stop(struct cluster *c, const char *logs_dir)
{
    for (size_t i = 0; i < c->n; i++)
        stop_one(&c->srv[i], SIGTERM);
    if (logs_dir)
        keep_logs(c, logs_dir);
    if (c->root[0])
        nftw(c->root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    c->root[0] = '\0';
    c->n = 0;
}

int cluster_alive(struct cluster *c, size_t i)
{
    int status;
    if (i >= c->n || c->srv[i].pid <= 0)
        return 0;
    return !reap(&c->srv[i], &status);
}
