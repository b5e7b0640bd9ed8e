/* spawn.c - one managed server's process: started, waited for, stopped.
 *
 * Every server is forked by one long-lived thread, the keeper, never by
 * the thread that asks: PR_SET_PDEATHSIG fires when the forking *thread*
 * ends, and a server the nemesis restarts mid-run must outlive the
 * nemesis's thread (a comparison keeps the fleet for the next algorithm)
 * yet still die with locklab.
 */
#include "sim/fleet/spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/fleet/remote.h"
#include "sim/fleet/server_kind.h"
#include "sim/fleet/ssh.h"
#include "sim/record/clock.h"

/* A kind's base time to serve (its ready_base_ms) leaves room for a
 * loaded CI box; ready_limit_ms stretches it by what competes, up to: */
#define READY_MAX_MS    180000
#define STOP_TIMEOUT_MS 3000

void spawn_sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Everything the child needs, prepared before fork: between fork and exec
 * only async-signal-safe calls are allowed (other threads may hold locks). */
#define SPAWN_MAX_ARGS 48

#define SPAWN_MAX_ENV 256 /* of locklab's own environment, passed on */

struct spawn {
    char *argv[SPAWN_MAX_ARGS + 1];
    char args[SPAWN_MAX_ARGS][320];
    size_t argc;
    bool cut; /* an argument past SPAWN_MAX_ARGS was given: the command is not started */
    /* NULL: locklab's environment as it is; else that plus extra[] */
    char **envp;
    char *env_list[SPAWN_MAX_ENV + 8];
    char extra[4][420];
    char out_path[320];
    pid_t parent;
    /* run_as: the user the child becomes before it execs (PostgreSQL
     * refuses root); looked up before the fork, getpwnam not being
     * async-signal-safe */
    bool drop;
    uid_t uid;
    gid_t gid;
    char user[32]; /* by name, for a host where its ids may differ */
};

void spawn_arg(struct spawn *sp, const char *fmt, ...)
{
    if (sp->argc >= SPAWN_MAX_ARGS) {
        sp->cut = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sp->args[sp->argc], sizeof(sp->args[0]), fmt, ap);
    va_end(ap);
    sp->argv[sp->argc] = sp->args[sp->argc];
    sp->argc++;
    sp->argv[sp->argc] = NULL;
}

const char *spawn_env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && v[0] ? v : fallback;
}

int spawn_run_as(struct spawn *sp, const char *user)
{
    const struct passwd *pw = getpwnam(user);
    if (pw == NULL)
        return -1;
    sp->drop = true;
    snprintf(sp->user, sizeof(sp->user), "%s", user);
    sp->uid = pw->pw_uid;
    sp->gid = pw->pw_gid;
    return 0;
}

/* In the child, before PR_SET_PDEATHSIG: the kernel clears the death
 * signal when credentials change, so a server that dropped them after it
 * would outlive locklab. Groups first: setgroups needs root. */
static void drop_credentials(const struct spawn *sp)
{
    if (!sp->drop)
        return;
    if (setgroups(1, &sp->gid) != 0 || setgid(sp->gid) != 0 || setuid(sp->uid) != 0) {
        static const char msg[] = "locklab: cannot drop to the server's user\n";
        if (write(2, msg, sizeof(msg) - 1) < 0)
            _exit(126);
        _exit(126);
    }
}

void spawn_faketime_file(const struct managed_server *s, char *path, size_t len)
{
    snprintf(path, len, "%.250s/faketime", s->dir);
}

int spawn_write_clock(const struct managed_server *s, uint64_t ahead_ms)
{
    char file[300], tmp[310];
    spawn_faketime_file(s, file, sizeof(file));
    snprintf(tmp, sizeof(tmp), "%s.new", file);
    /* whole or not at all: the server reads the file at every time call */
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    int bad = fprintf(f, "+%llu.%03llu\n", (unsigned long long)(ahead_ms / 1000),
                      (unsigned long long)(ahead_ms % 1000)) < 0;
    if (fclose(f) != 0 || bad || rename(tmp, file) < 0)
        return -1;
    return 0;
}

/* A Redis whose clock a fault may move: libfaketime (after locklab's shim,
 * which keeps it out of jemalloc's start-up), reading its offset from the
 * server's own file at every time call. The file is written here, so a
 * restarted server keeps the offset its machine's clock has. */
void spawn_faketime(struct spawn *sp, const struct managed_server *s)
{
    char file[300];
    spawn_faketime_file(s, file, sizeof(file));
    spawn_write_clock(s, s->clock_ahead_ms);
    snprintf(sp->extra[0], sizeof(sp->extra[0]), "LD_PRELOAD=%s", s->preload);
    snprintf(sp->extra[1], sizeof(sp->extra[1]), "FAKETIME_TIMESTAMP_FILE=%s", file);
    snprintf(sp->extra[2], sizeof(sp->extra[2]), "FAKETIME_NO_CACHE=1");
    /* a backward jump would stall the server's timers otherwise (SETUP.md) */
    snprintf(sp->extra[3], sizeof(sp->extra[3]), "FAKETIME_DONT_FAKE_MONOTONIC=1");
    extern char **environ;
    size_t n = 0;
    for (char **e = environ; e && *e && n < SPAWN_MAX_ENV; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) != 0 && strncmp(*e, "FAKETIME", 8) != 0)
            sp->env_list[n++] = *e;
    for (size_t k = 0; k < 4; k++)
        sp->env_list[n++] = sp->extra[k];
    sp->env_list[n] = NULL;
    sp->envp = sp->env_list;
}

static void prepare_spawn(struct spawn *sp, const struct managed_server *s)
{
    memset(sp, 0, sizeof(*sp));
    s->kind->command(sp, s);
    snprintf(sp->out_path, sizeof(sp->out_path), "%s/stdout.log", s->dir);
    sp->parent = getpid();
}

/* Every descriptor past stderr closed: a server started mid-run (a
 * restart fault) would otherwise keep copies of the clients' sockets,
 * which the client libraries open without close-on-exec, so a client's
 * closed or crashed connection would never end at its server, and of the
 * workers' epoll and eventfd descriptors. */
static void close_inherited(void)
{
    if (close_range(3, ~0U, 0) == 0)
        return;
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 3; fd < (max > 0 ? max : 1024); fd++)
        close((int)fd);
}

/* In a forked child before its exec: every signal unblocked (locklab
 * blocks them for its sigwait thread), stdin from /dev/null, stdout and
 * stderr into out, opened with oflag (O_TRUNC or O_APPEND), nothing else
 * open. */
static void child_stdio(const char *out, int oflag)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int fd = open(out, O_WRONLY | O_CREAT | oflag | O_CLOEXEC, 0644);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
    }
    if (null >= 0)
        dup2(null, 0);
    close_inherited();
}

static void child_exec(const struct spawn *sp)
{
    /* Own process group: a terminal's Ctrl-C reaches locklab, which stops
     * the servers in order, instead of killing them mid-run. */
    setpgid(0, 0);
    drop_credentials(sp);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != sp->parent)
        _exit(127);
    child_stdio(sp->out_path, O_TRUNC);
    if (sp->envp)
        execvpe(sp->argv[0], sp->argv, sp->envp);
    else
        execvp(sp->argv[0], sp->argv);
    static const char msg[] = ": cannot execute: not installed, or not executable\n";
    if (write(2, sp->argv[0], strlen(sp->argv[0])) < 0 || write(2, msg, sizeof(msg) - 1) < 0)
        _exit(127);
    _exit(127);
}

/* The keeper: forks what it is handed, one at a time, and lives until
 * the process ends. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool started;
    const struct spawn *job; /* handed over, not yet forked */
    pid_t pid;               /* the last fork's result */
    unsigned long done;      /* forks completed */
} keeper = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *keeper_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&keeper.mu);
    for (;;) {
        while (keeper.job == NULL)
            pthread_cond_wait(&keeper.cv, &keeper.mu);
        pid_t pid = fork();
        if (pid == 0)
            child_exec(keeper.job);
        keeper.pid = pid;
        keeper.job = NULL;
        keeper.done++;
        pthread_cond_broadcast(&keeper.cv);
    }
    return NULL;
}

/* Fork sp through the keeper; the child's pid, or -1 with errno set. */
static pid_t keeper_fork(const struct spawn *sp)
{
    pthread_mutex_lock(&keeper.mu);
    if (!keeper.started) {
        pthread_t t;
        /* signals stay blocked in it as in every thread: only sigwait takes them */
        int rc = pthread_create(&t, NULL, keeper_main, NULL);
        if (rc != 0) {
            pthread_mutex_unlock(&keeper.mu);
            errno = rc;
            return -1;
        }
        pthread_detach(t);
        keeper.started = true;
    }
    while (keeper.job != NULL)
        pthread_cond_wait(&keeper.cv, &keeper.mu);
    keeper.job = sp;
    unsigned long ticket = keeper.done + 1;
    pthread_cond_broadcast(&keeper.cv);
    while (keeper.done < ticket)
        pthread_cond_wait(&keeper.cv, &keeper.mu);
    pid_t pid = keeper.pid;
    pthread_mutex_unlock(&keeper.mu);
    return pid;
}

/* Last line of the server's logs, for an error message. */
void spawn_log_tail(const struct managed_server *s, char *out, size_t len)
{
    if (s->host) {
        remote_log_tail(s, out, len);
        return;
    }
    const char *names[] = {"stdout.log", s->kind->log};
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

int spawn_reap(struct managed_server *s, int *status)
{
    if (s->host) {
        *status = 0; /* how it ended stays on its host */
        return remote_reap(s);
    }
    pid_t r = waitpid(s->pid, status, WNOHANG);
    if (r == s->pid) {
        s->pid = 0;
        return 1;
    }
    return 0;
}

/* /proc/<pid>/stat's state, parent and start time; false when it is gone.
 * The command's name comes in parentheses and may hold any of them, so
 * the fields are read after its last ')'. */
static bool read_stat(pid_t pid, char *state, pid_t *ppid, unsigned long long *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    const char *p = strrchr(buf, ')');
    int parent;
    /* state, ppid, then 17 fields to starttime (proc(5): fields 3, 4, 22) */
    if (p == NULL ||
        sscanf(p + 1,
               " %c %d %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
               state, &parent, start) != 3)
        return false;
    *ppid = (pid_t)parent;
    return true;
}

struct proc_row {
    pid_t pid, ppid;
    unsigned long long start;
};

static int by_parent(const void *a, const void *b)
{
    const struct proc_row *x = a, *y = b;
    return (x->ppid > y->ppid) - (x->ppid < y->ppid);
}

/* Every process of the machine with its parent, sorted by parent; how
 * many (0 when /proc cannot be read), into *rows (the caller frees). */
static size_t all_processes(struct proc_row **rows)
{
    size_t n = 0, cap = 1024;
    *rows = malloc(cap * sizeof(**rows));
    DIR *d = *rows ? opendir("/proc") : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char *end, state;
        long pid = strtol(e->d_name, &end, 10);
        struct proc_row r = {.pid = (pid_t)pid};
        if (*end || pid <= 0 || !read_stat(r.pid, &state, &r.ppid, &r.start))
            continue;
        if (n == cap) {
            struct proc_row *more = realloc(*rows, 2 * cap * sizeof(**rows));
            if (more == NULL)
                break;
            *rows = more, cap *= 2;
        }
        (*rows)[n++] = r;
    }
    if (d)
        closedir(d);
    if (*rows)
        qsort(*rows, n, sizeof(**rows), by_parent);
    return n;
}

size_t spawn_processes(pid_t root, struct cluster_proc *out, size_t max)
{
    char state;
    pid_t ppid;
    if (max == 0 || root <= 0 || !read_stat(root, &state, &ppid, &out[0].start))
        return 0;
    out[0].pid = root;
    struct proc_row *rows;
    size_t n = all_processes(&rows), got = 1;
    /* breadth first: each one's children, found by a binary search on the parent */
    for (size_t at = 0; at < got && rows; at++) {
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (rows[mid].ppid < out[at].pid)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < n && rows[lo].ppid == out[at].pid && got < max; lo++)
            out[got++] = (struct cluster_proc){rows[lo].pid, rows[lo].start};
    }
    free(rows);
    return got;
}

char spawn_process_state(const struct cluster_proc *p)
{
    char state;
    pid_t ppid;
    unsigned long long start;
    if (!read_stat(p->pid, &state, &ppid, &start) || start != p->start)
        return 0;
    return state;
}

size_t spawn_signal_all(const struct cluster_proc *p, size_t n, int sig)
{
    size_t reached = 0;
    for (size_t k = 0; k < n; k++)
        if (spawn_process_state(&p[k]) != 0 && kill(p[k].pid, sig) == 0)
            reached++;
    return reached;
}

void spawn_signal_known(const struct cluster_proc *p, size_t n, int sig)
{
    for (size_t k = n; k > 0; k--)
        kill(p[k - 1].pid, sig);
}

/* Its base time, times the servers starting at once per core (three JVMs
 * on two cores each get two thirds of one), times the load per core
 * beyond one (up to four): a 3-JVM ensemble on a loaded 2-core machine
 * once took more than a fixed 10 s. */
static uint64_t ready_limit_ms(const struct managed_server *s, const struct spawn_wait *w)
{
    double crowd = (double)w->starting / (double)w->cores, busy = w->load / (double)w->cores;
    double ms = s->kind->ready_base_ms;
    ms *= crowd > 1 ? crowd : 1;
    ms *= busy > 4 ? 4 : busy > 1 ? busy : 1;
    return ms > READY_MAX_MS ? READY_MAX_MS : (uint64_t)ms;
}

int spawn_wait_ready(struct managed_server *s, size_t starting, struct spawn_wait *w)
{
    memset(w, 0, sizeof(*w));
    w->starting = starting ? starting : 1;
    if (getloadavg(&w->load, 1) != 1)
        w->load = 0;
    w->cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (w->cores < 1)
        w->cores = 1;
    w->limit_ms = ready_limit_ms(s, w);
    uint64_t deadline = clock_mono_ns() + w->limit_ms * 1000000u;
    w->rc = -1;
    while (clock_mono_ns() < deadline) {
        if (spawn_reap(s, &w->status))
            return w->rc = 1;
        if (s->kind->answers(s->port))
            return w->rc = 0;
        spawn_sleep_ms(s->kind->ready_poll_ms);
    }
    return w->rc;
}

void spawn_stop(struct managed_server *s, int sig)
{
    if (s->pid <= 0)
        return;
    if (s->host) {
        remote_stop(s, sig);
        return;
    }
    /* read before it dies: its children are given to init then. A paused
     * server's children were paused with it (a PostgreSQL's backends),
     * and the one that ends them needs them running. */
    struct cluster_proc *tree = malloc(CLUSTER_MAX_PROCESSES * sizeof(*tree));
    size_t n = tree ? spawn_processes(s->pid, tree, CLUSTER_MAX_PROCESSES) : 0;
    kill(s->pid, sig);
    kill(s->pid, SIGCONT); /* a paused server acts on SIGTERM only once continued */
    if (n > 1)
        spawn_signal_all(tree + 1, n - 1, SIGCONT);
    uint64_t deadline = clock_mono_ns() + (uint64_t)STOP_TIMEOUT_MS * 1000000u;
    int status;
    while (!spawn_reap(s, &status)) {
        if (clock_mono_ns() > deadline) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &status, 0);
            s->pid = 0;
            break;
        }
        spawn_sleep_ms(5);
    }
    if (n > 1) /* none outlives it: a child left would hold its port or its memory */
        spawn_signal_all(tree + 1, n - 1, SIGKILL);
    free(tree);
}

void spawn_stop_clean(struct managed_server *s)
{
    spawn_stop(s, s->kind->stop_signal ? s->kind->stop_signal : SIGTERM);
}

/* sp as one shell command line for a host: the environment it adds to
 * the host's own (env NAME=VALUE), the user it runs as (runuser), then
 * its words, each quoted. -1 when it does not fit. */
static int shell_line(const struct spawn *sp, char *buf, size_t len)
{
    const char *words[SPAWN_MAX_ARGS + 16];
    size_t n = 0;
    if (sp->drop) {
        words[n++] = "runuser";
        words[n++] = "-u";
        words[n++] = sp->user;
        words[n++] = "--";
    }
    if (sp->envp) {
        words[n++] = "env";
        for (size_t k = 0; k < sizeof(sp->extra) / sizeof(sp->extra[0]); k++)
            if (sp->extra[k][0])
                words[n++] = sp->extra[k];
    }
    for (size_t k = 0; k < sp->argc; k++)
        words[n++] = sp->argv[k];
    words[n] = NULL;
    return ssh_command_line(words, buf, len);
}

static int start_there(struct managed_server *s, const struct spawn *sp, char *err, size_t errlen)
{
    static __thread char line[SPAWN_MAX_ARGS * 330];
    if (shell_line(sp, line, sizeof(line)) < 0) {
        snprintf(err, errlen, "%s: its command line is too long for a host", s->kind->name);
        return -1;
    }
    return remote_start(s, line, err, errlen);
}

int spawn_start(struct managed_server *s, char *err, size_t errlen)
{
    struct spawn sp;
    cluster_note_ports(s);
    prepare_spawn(&sp, s);
    if (sp.cut) { /* a server started without some of its options is not the one asked for */
        snprintf(err, errlen, "%s: its command line has more than %d arguments", s->kind->name,
                 SPAWN_MAX_ARGS);
        return -1;
    }
    if (s->host)
        return start_there(s, &sp, err, errlen);
    s->pid = keeper_fork(&sp);
    if (s->pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        s->pid = 0;
        return -1;
    }
    return 0;
}

void spawn_failed(struct managed_server *s, const struct spawn_wait *w, char *err, size_t errlen)
{
    char tail[300], how[200];
    struct stat st;
    spawn_log_tail(s, tail, sizeof(tail));
    bool missing = w->rc > 0 && WIFEXITED(w->status) && WEXITSTATUS(w->status) == 127 &&
                   strstr(tail, "cannot execute") != NULL;
    if (stat(s->dir, &st) != 0)
        snprintf(tail, sizeof(tail), "its folder %s is gone", s->dir);
    else if (tail[0] == '\0')
        snprintf(tail, sizeof(tail), "its log is empty");
    if (missing)
        snprintf(how, sizeof(how), "could not be started (is it installed?)");
    else if (w->rc > 0 && WIFEXITED(w->status))
        snprintf(how, sizeof(how), "exited at start with status %d", WEXITSTATUS(w->status));
    else if (w->rc > 0)
        snprintf(how, sizeof(how), "died at start by signal %d", WTERMSIG(w->status));
    else
        snprintf(how, sizeof(how),
                 "did not serve within %.1f s (waited for %s; %zu starting at once, load %.1f "
                 "on %ld cores)",
                 (double)w->limit_ms / 1000.0, s->kind->ready_sign, w->starting, w->load, w->cores);
    snprintf(err, errlen, "%s on port %d %s: %s", s->kind->name, s->port, how, tail);
}

int spawn_run(const char *user, const char *const argv[], const char *log, uint32_t timeout_ms)
{
    struct spawn sp;
    memset(&sp, 0, sizeof(sp));
    if (user && spawn_run_as(&sp, user) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        drop_credentials(&sp);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        child_stdio(log ? log : "/dev/null", O_APPEND);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000u;
    int status;
    pid_t r;
    while ((r = waitpid(pid, &status, WNOHANG)) == 0 && clock_mono_ns() < deadline)
        spawn_sleep_ms(5);
    if (r == pid)
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}
