/* ssh.c - commands on another machine over OpenSSH (ssh.h). */
#include "sim/fleet/ssh.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/record/clock.h"

#define SSH_MAX_ARGS     48
#define SSH_DEFAULT_PORT 22
#define SSH_CONNECT_S    5
#define SSH_SUN_PATH     100 /* sockaddr_un's 108, with room */
#define SSH_READ_CHUNK   4096
#define SSH_CMD_MAX      16384
#define SSH_MASTER_GRACE 2000 /* ms past the connect timeout for the handshake */
#define SSH_SOCKET_POLL  10

int ssh_quote(const char *arg, char *buf, size_t len)
{
    size_t o = 0;
    if (len < 3)
        return -1;
    buf[o++] = '\'';
    for (const char *p = arg; *p; p++) {
        const char *piece = *p == '\'' ? "'\\''" : NULL;
        size_t n = piece ? 4 : 1;
        if (o + n + 2 > len)
            return -1;
        if (piece)
            memcpy(buf + o, piece, n);
        else
            buf[o] = *p;
        o += n;
    }
    buf[o++] = '\'';
    buf[o] = '\0';
    return 0;
}

int ssh_command_line(const char *const argv[], char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; argv[i]; i++) {
        if (i > 0) {
            if (o + 2 > len)
                return -1;
            buf[o++] = ' ';
        }
        if (ssh_quote(argv[i], buf + o, len - o) < 0)
            return -1;
        o += strlen(buf + o);
    }
    return 0;
}

/* The options every ssh of c's takes, into argv from *n: key only, never
 * a prompt, the host key checked, the master's socket. */
struct ssh_args {
    const char *v[SSH_MAX_ARGS + 1];
    size_t n;
    char opt[12][192];
    size_t n_opt;
};

static void add(struct ssh_args *a, const char *s)
{
    if (a->n < SSH_MAX_ARGS)
        a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

/* -o name=value */
static void add_opt(struct ssh_args *a, const char *name, const char *value)
{
    if (a->n_opt >= sizeof(a->opt) / sizeof(a->opt[0]))
        return;
    char *o = a->opt[a->n_opt++];
    snprintf(o, sizeof(a->opt[0]), "%s=%s", name, value);
    add(a, "-o");
    add(a, o);
}

static void common_args(struct ssh_args *a, const struct ssh_conn *c, const struct ssh_options *o)
{
    memset(a, 0, sizeof(*a));
    add(a, "ssh");
    add(a, "-p");
    add(a, c->port);
    add_opt(a, "BatchMode", "yes");
    add_opt(a, "PreferredAuthentications", "publickey");
    add_opt(a, "ControlPath", c->control);
    add_opt(a, "LogLevel", "ERROR");
    if (c->key[0]) {
        add(a, "-i");
        add(a, c->key);
        add_opt(a, "IdentitiesOnly", "yes");
    }
    if (o) {
        add_opt(a, "StrictHostKeyChecking", o->accept_new ? "accept-new" : "yes");
        if (o->known_hosts && o->known_hosts[0])
            add_opt(a, "UserKnownHostsFile", o->known_hosts);
        char secs[16];
        snprintf(secs, sizeof(secs), "%u",
                 o->connect_timeout_s ? o->connect_timeout_s : SSH_CONNECT_S);
        add_opt(a, "ConnectTimeout", secs);
    }
}

/* In the child: every signal unblocked (locklab blocks them for its
 * sigwait thread), killed with locklab, only its three descriptors, in a
 * process group of its own: a terminal's Ctrl-C reaches locklab, which
 * still needs its connections to stop the servers on the hosts. */
static void child_setup(int in, int out, int errfd)
{
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(in, 0);
    dup2(out, 1);
    dup2(errfd, 2);
    if (close_range(3, ~0U, 0) != 0)
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
}

static void last_line(const char *path, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0])
            snprintf(out, len, "%.*s", (int)(len - 1), line);
    }
    fclose(f);
}

static bool socket_up(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static void reap_master(struct ssh_conn *c)
{
    if (c->master > 0) {
        kill(c->master, SIGTERM);
        waitpid(c->master, NULL, 0);
    }
    c->master = 0;
    if (c->control[0] == '/')
        unlink(c->control);
}

/* Fork the master; wait until its socket is there (authenticated) or it
 * has exited. */
static int start_master(struct ssh_conn *c, const struct ssh_options *o, char *err, size_t errlen)
{
    struct ssh_args a;
    common_args(&a, c, o);
    add(&a, "-M");
    add(&a, "-N");
    add_opt(&a, "ControlMaster", "yes");
    add_opt(&a, "ServerAliveInterval", "2");
    add_opt(&a, "ServerAliveCountMax", "3");
    add(&a, c->dest);
    int logfd = open(c->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (logfd < 0 || null < 0) {
        snprintf(err, errlen, "host %s: cannot write %s: %s", c->name, c->log, strerror(errno));
        if (logfd >= 0)
            close(logfd);
        if (null >= 0)
            close(null);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        child_setup(null, logfd, logfd);
        execvp("ssh", (char *const *)a.v);
        _exit(127);
    }
    close(logfd);
    close(null);
    if (pid < 0) {
        snprintf(err, errlen, "host %s: fork: %s", c->name, strerror(errno));
        return -1;
    }
    c->master = pid;
    uint32_t secs = o->connect_timeout_s ? o->connect_timeout_s : SSH_CONNECT_S;
    uint64_t deadline = clock_mono_ns() + ((uint64_t)secs * 1000u + SSH_MASTER_GRACE) * 1000000u;
    int status;
    while (!socket_up(c->control)) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || clock_mono_ns() >= deadline) {
            char why[320];
            last_line(c->log, why, sizeof(why));
            if (r == pid) {
                c->master = 0;
                if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && why[0] == '\0')
                    snprintf(why, sizeof(why), "cannot run ssh: install openssh-client");
            } else {
                reap_master(c);
            }
            snprintf(err, errlen, "host %s (%s port %s): %s", c->name, c->dest, c->port,
                     why[0] ? why : "ssh gave up without a word");
            return -1;
        }
        struct timespec ts = {0, SSH_SOCKET_POLL * 1000000L};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static int checked_user(struct ssh_conn *c, char *err, size_t errlen)
{
    char out[64];
    struct ssh_result r;
    if (ssh_run(c, "id -u", NULL, 0, out, sizeof(out), 10000, &r, err, errlen) < 0)
        return -1;
    if (r.status == 0 && strtol(out, NULL, 10) == 0 && out[0] == '0')
        return 0;
    if (ssh_run(c, "sudo -n true", NULL, 0, NULL, 0, 10000, &r, err, errlen) < 0)
        return -1;
    if (r.status != 0) {
        snprintf(err, errlen,
                 "host %s: %s is not root there and sudo would ask for a password (sudo -n: "
                 "%s): locklab needs root or sudo without a password",
                 c->name, c->dest, r.err[0] ? r.err : "refused");
        return -1;
    }
    c->sudo = true;
    return 0;
}

static void fill_conn(struct ssh_conn *c, const struct ssh_target *t, const struct ssh_options *o)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->name, sizeof(c->name), "%s", t->name);
    snprintf(c->dest, sizeof(c->dest), "%s@%s", t->user && t->user[0] ? t->user : "root",
             t->address);
    snprintf(c->port, sizeof(c->port), "%d",
             t->port > 0 && t->port < 65536 ? t->port : SSH_DEFAULT_PORT);
    snprintf(c->key, sizeof(c->key), "%s", t->key ? t->key : "");
    c->opts = *o;
    if (o->known_hosts) {
        snprintf(c->known_hosts, sizeof(c->known_hosts), "%s", o->known_hosts);
        c->opts.known_hosts = c->known_hosts;
    }
    c->opts.dir = NULL; /* the caller's; only ssh_open needs it */
}

void ssh_conn_direct(struct ssh_conn *c, const struct ssh_target *t, const struct ssh_options *o,
                     bool sudo)
{
    fill_conn(c, t, o);
    snprintf(c->control, sizeof(c->control), "none"); /* ssh's word for no master */
    c->sudo = sudo;
}

int ssh_open(struct ssh_conn *c, const struct ssh_target *t, const struct ssh_options *o, char *err,
             size_t errlen)
{
    fill_conn(c, t, o);
    int n = snprintf(c->control, sizeof(c->control), "%s/%s.ssh", o->dir, t->name);
    if (n < 0 || n >= SSH_SUN_PATH) {
        snprintf(err, errlen,
                 "host %s: the control socket's path %s/%s.ssh is too long for a socket", t->name,
                 o->dir, t->name);
        return -1;
    }
    snprintf(c->log, sizeof(c->log), "%s/%s.ssh.log", o->dir, t->name);
    unlink(c->control);
    if (start_master(c, o, err, errlen) < 0)
        return -1;
    if (checked_user(c, err, errlen) < 0) {
        ssh_close(c);
        return -1;
    }
    return 0;
}

/* The remote command line: cmd as it is, or under sudo -n sh -c. */
static int remote_line(const struct ssh_conn *c, const char *cmd, char *buf, size_t len)
{
    if (!c->sudo)
        return snprintf(buf, len, "%s", cmd) < (int)len ? 0 : -1;
    const char *argv[] = {"sudo", "-n", "sh", "-c", cmd, NULL};
    return ssh_command_line(argv, buf, len);
}

/* stdin written, stdout and stderr read until both end or the deadline. */
struct pump {
    int in, out, errfd;
    const char *input;
    size_t in_len, in_done;
    char *buf;
    size_t size, len;
    bool cut;
    char errbuf[1024];
    size_t err_len;
};

static void pump_read(int *fd, char *to, size_t room, size_t *len, bool *cut)
{
    char chunk[SSH_READ_CHUNK];
    ssize_t got = read(*fd, chunk, sizeof(chunk));
    if (got <= 0) {
        if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
            close(*fd);
            *fd = -1;
        }
        return;
    }
    size_t keep = (size_t)got;
    if (*len + keep > room) {
        keep = room > *len ? room - *len : 0;
        if (cut)
            *cut = true;
    }
    memcpy(to + *len, chunk, keep);
    *len += keep;
}

static bool pump_step(struct pump *p, int wait_ms)
{
    struct pollfd fds[3] = {{.fd = p->out, .events = POLLIN},
                            {.fd = p->errfd, .events = POLLIN},
                            {.fd = p->in, .events = POLLOUT}};
    if (p->out < 0 && p->errfd < 0)
        return false;
    if (poll(fds, 3, wait_ms) <= 0)
        return true;
    if (fds[0].revents)
        pump_read(&p->out, p->buf, p->size ? p->size - 1 : 0, &p->len, &p->cut);
    if (fds[1].revents)
        pump_read(&p->errfd, p->errbuf, sizeof(p->errbuf) - 1, &p->err_len, NULL);
    if (fds[2].revents) {
        ssize_t put = (fds[2].revents & POLLOUT)
                          ? write(p->in, p->input + p->in_done, p->in_len - p->in_done)
                          : -1;
        if (put > 0)
            p->in_done += (size_t)put;
        if (put < 0 || p->in_done == p->in_len) {
            close(p->in);
            p->in = -1;
        }
    }
    return true;
}

static void err_last_line(const char *text, size_t len, char *out, size_t outlen)
{
    out[0] = '\0';
    size_t end = len;
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r'))
        end--;
    size_t start = end;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    snprintf(out, outlen, "%.*s", (int)(end - start), text + start);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void close_fds(struct pump *p)
{
    close_fd(&p->in);
    close_fd(&p->out);
    close_fd(&p->errfd);
}

static pid_t fork_command(const struct ssh_conn *c, const char *line, int pin[2], int pout[2],
                          int perr[2])
{
    struct ssh_args a;
    common_args(&a, c, &c->opts);
    add_opt(&a, "ControlMaster", "no");
    add(&a, "-T");
    add(&a, c->dest);
    add(&a, "--");
    add(&a, line);
    pid_t pid = fork();
    if (pid == 0) {
        child_setup(pin[0], pout[1], perr[1]);
        execvp("ssh", (char *const *)a.v);
        _exit(127);
    }
    return pid;
}

static void close_pair(int p[2])
{
    for (int i = 0; i < 2; i++)
        if (p[i] >= 0)
            close(p[i]);
}

int ssh_run(struct ssh_conn *c, const char *cmd, const void *input, size_t in_len, char *out,
            size_t out_size, uint32_t timeout_ms, struct ssh_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    r->status = -1;
    static __thread char tline[SSH_CMD_MAX]; /* a thread's, as each runs its own commands */
    if (remote_line(c, cmd, tline, sizeof(tline)) < 0) {
        snprintf(err, errlen, "host %s: a command of %zu bytes is too long", c->name, strlen(cmd));
        return -1;
    }
    int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};
    if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "host %s: pipe: %s", c->name, strerror(errno));
        close_pair(pin);
        close_pair(pout);
        close_pair(perr);
        return -1;
    }
    pid_t pid = fork_command(c, tline, pin, pout, perr);
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    struct pump p = {.in = pin[1],
                     .out = pout[0],
                     .errfd = perr[0],
                     .input = input,
                     .in_len = input ? in_len : 0,
                     .buf = out,
                     .size = out ? out_size : 0};
    if (p.in_len == 0) {
        close(p.in);
        p.in = -1;
    }
    if (pid < 0) {
        snprintf(err, errlen, "host %s: fork: %s", c->name, strerror(errno));
        close_fds(&p);
        return -1;
    }
    uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000u;
    while (clock_mono_ns() < deadline && pump_step(&p, 50))
        ;
    int status = 0;
    pid_t got = waitpid(pid, &status, WNOHANG);
    while (got == 0 && clock_mono_ns() < deadline) {
        struct timespec ts = {0, 2000000L};
        nanosleep(&ts, NULL);
        got = waitpid(pid, &status, WNOHANG);
    }
    if (got == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        r->timed_out = true;
    }
    close_fds(&p);
    if (out && out_size)
        out[p.len] = '\0';
    r->out_len = p.len;
    r->out_cut = p.cut;
    err_last_line(p.errbuf, p.err_len, r->err, sizeof(r->err));
    if (r->timed_out) {
        snprintf(err, errlen, "host %s: `%.80s` did not end within %u ms", c->name, cmd,
                 timeout_ms);
        return -1;
    }
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r->status == 255) {
        snprintf(err, errlen, "host %s (%s port %s): ssh: %s", c->name, c->dest, c->port,
                 r->err[0] ? r->err : "the connection failed");
        return -1;
    }
    return 0;
}

int ssh_pipe_open(struct ssh_conn *c, const char *cmd, struct ssh_pipe *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    static __thread char line[SSH_CMD_MAX];
    /* its stderr to /dev/null: nobody reads it while the exchange goes on */
    int pin[2] = {-1, -1}, pout[2] = {-1, -1},
        perr[2] = {-1, open("/dev/null", O_WRONLY | O_CLOEXEC)};
    if (remote_line(c, cmd, line, sizeof(line)) < 0 || perr[1] < 0 || pipe2(pin, O_CLOEXEC) < 0 ||
        pipe2(pout, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "host %s: cannot start `%.60s`", c->name, cmd);
        close_pair(pin);
        close_pair(pout);
        close_pair(perr);
        return -1;
    }
    p->pid = fork_command(c, line, pin, pout, perr);
    close(pin[0]);
    close(pout[1]);
    close_pair(perr);
    p->in = pin[1];
    p->out = pout[0];
    if (p->pid < 0) {
        snprintf(err, errlen, "host %s: fork: %s", c->name, strerror(errno));
        ssh_pipe_close(p);
        return -1;
    }
    return 0;
}

int ssh_pipe_ask(struct ssh_pipe *p, const char *line, char *reply, size_t len, uint32_t timeout_ms)
{
    size_t n = strlen(line);
    if (write(p->in, line, n) != (ssize_t)n)
        return -1;
    uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        char *nl = memchr(p->buf, '\n', p->len);
        if (nl) {
            size_t k = (size_t)(nl - p->buf);
            snprintf(reply, len, "%.*s", (int)k, p->buf);
            memmove(p->buf, nl + 1, p->len - k - 1);
            p->len -= k + 1;
            return 0;
        }
        uint64_t now = clock_mono_ns();
        struct pollfd f = {.fd = p->out, .events = POLLIN};
        if (now >= deadline || p->len == sizeof(p->buf) ||
            poll(&f, 1, (int)((deadline - now) / 1000000u) + 1) <= 0)
            return -1;
        ssize_t got = read(p->out, p->buf + p->len, sizeof(p->buf) - p->len);
        if (got <= 0)
            return -1;
        p->len += (size_t)got;
    }
}

void ssh_pipe_close(struct ssh_pipe *p)
{
    if (p->in >= 0)
        close(p->in);
    p->in = -1;
    for (int i = 0; p->pid > 0 && i < 100 && waitpid(p->pid, NULL, WNOHANG) == 0; i++) {
        struct timespec ts = {0, 10000000L};
        nanosleep(&ts, NULL);
        if (i == 99)
            kill(p->pid, SIGKILL), waitpid(p->pid, NULL, 0);
    }
    p->pid = 0;
    if (p->out >= 0)
        close(p->out);
    p->out = -1;
}

void ssh_close(struct ssh_conn *c)
{
    reap_master(c);
}
