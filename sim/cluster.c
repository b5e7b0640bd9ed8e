/* cluster.c - managed redis-server processes. */
#include "cluster.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
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

/* One PING over a fresh connection: 1 when +PONG came back. */
static int redis_pings(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = 0;
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && write(fd, "PING\r\n", 6) == 6) {
        char buf[16] = {0};
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 500) == 1 && read(fd, buf, sizeof(buf) - 1) > 0)
            ok = strncmp(buf, "+PONG", 5) == 0;
    }
    close(fd);
    return ok;
}

/* Everything the child needs, prepared before fork: between fork and exec
 * only async-signal-safe calls are allowed (other threads may hold locks). */
struct spawn {
    const char *bin;
    char port[16];
    char out_path[320];
    char log_path[320];
    const char *dir;
    pid_t parent;
};

static void prepare_spawn(struct spawn *sp, const struct managed_server *s)
{
    sp->bin = getenv("LOCKLAB_REDIS_SERVER");
    if (sp->bin == NULL || sp->bin[0] == '\0')
        sp->bin = "redis-server";
    snprintf(sp->port, sizeof(sp->port), "%d", s->port);
    snprintf(sp->out_path, sizeof(sp->out_path), "%s/stdout.log", s->dir);
    snprintf(sp->log_path, sizeof(sp->log_path), "%s/redis.log", s->dir);
    sp->dir = s->dir;
    sp->parent = getpid();
}

static void child_exec_redis(const struct spawn *sp)
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
    execlp(sp->bin, sp->bin, "--port", sp->port, "--bind", "127.0.0.1", "--save", "",
           "--appendonly", "no", "--daemonize", "no", "--dir", sp->dir, "--logfile", sp->log_path,
           (char *)NULL);
    static const char msg[] = "exec redis-server failed: not installed, or not executable\n";
    if (write(2, msg, sizeof(msg) - 1) < 0)
        _exit(127);
    _exit(127);
}

/* Last line of the server's logs, for an error message. */
static void log_tail(const struct managed_server *s, char *out, size_t len)
{
    const char *names[] = {"stdout.log", "redis.log"};
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

/* Wait until the server answers; 0, 1 (it died: maybe the port), -1 (timeout). */
static int wait_ready(struct managed_server *s)
{
    uint64_t deadline = clock_mono_ns() + (uint64_t)READY_TIMEOUT_MS * 1000000u;
    while (clock_mono_ns() < deadline) {
        int status;
        if (reap(s, &status))
            return 1;
        if (redis_pings(s->port))
            return 0;
        sleep_ms(5);
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

static int start_one(struct cluster *c, struct managed_server *s, char *err, size_t errlen)
{
    for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        s->port = free_port();
        if (s->port < 0) {
            snprintf(err, errlen, "no free loopback port: %s", strerror(errno));
            return -1;
        }
        struct spawn sp;
        prepare_spawn(&sp, s);
        s->pid = fork();
        if (s->pid < 0) {
            snprintf(err, errlen, "fork: %s", strerror(errno));
            s->pid = 0;
            return -1;
        }
        if (s->pid == 0)
            child_exec_redis(&sp);
        int rc = wait_ready(s);
        if (rc == 0)
            return 0;
        char tail[200];
        log_tail(s, tail, sizeof(tail));
        stop_one(s, SIGKILL);
        if (rc < 0 || strstr(tail, "in use") == NULL || attempt + 1 == START_ATTEMPTS) {
            snprintf(err, errlen, "redis-server on port %d %s: %s", s->port,
                     rc < 0 ? "did not answer PING in time" : "exited at start",
                     tail[0] ? tail : "(no log; is redis-server installed?)");
            return -1;
        }
    }
    (void)c;
    return -1;
}

static int make_root(struct cluster *c, char *err, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(c->root, sizeof(c->root), "%s/locklab-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(c->root) == NULL) {
        snprintf(err, errlen, "cannot create a temporary folder in %s: %s",
                 tmp && tmp[0] ? tmp : "/tmp", strerror(errno));
        c->root[0] = '\0';
        return -1;
    }
    return 0;
}

int cluster_start_redis(struct cluster *c, size_t count, char *err, size_t errlen)
{
    if (c->n + count > CLUSTER_MAX_SERVERS) {
        snprintf(err, errlen, "at most %d managed servers", CLUSTER_MAX_SERVERS);
        return -1;
    }
    if (c->root[0] == '\0' && make_root(c, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < count; i++) {
        struct managed_server *s = &c->srv[c->n];
        memset(s, 0, sizeof(*s));
        snprintf(s->kind, sizeof(s->kind), "redis");
        char dir[sizeof(s->dir)];
        snprintf(dir, sizeof(dir), "%.*s/redis-%zu", (int)(sizeof(dir) - 32), c->root, c->n);
        memcpy(s->dir, dir, sizeof(dir));
        if (mkdir(s->dir, 0700) < 0) {
            snprintf(err, errlen, "mkdir %s: %s", s->dir, strerror(errno));
            cluster_stop(c, NULL);
            return -1;
        }
        c->n++;
        if (start_one(c, s, err, errlen) < 0) {
            cluster_stop(c, NULL);
            return -1;
        }
    }
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "r");
    if (in == NULL)
        return;
    FILE *out = fopen(to, "w");
    if (out) {
        char buf[8192];
        size_t n;
        while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
            fwrite(buf, 1, n, out);
        fclose(out);
    }
    fclose(in);
}

static void keep_logs(const struct cluster *c, const char *logs_dir)
{
    if (mkdir(logs_dir, 0755) < 0 && errno != EEXIST)
        return;
    for (size_t i = 0; i < c->n; i++) {
        char from[320], to[600];
        snprintf(from, sizeof(from), "%s/redis.log", c->srv[i].dir);
        snprintf(to, sizeof(to), "%s/%s-%zu.log", logs_dir, c->srv[i].kind, i);
        copy_file(from, to);
    }
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
