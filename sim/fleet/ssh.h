/* ssh.h - commands on another machine over OpenSSH, as Jepsen's control
 * node reaches its nodes: the `ssh` binary is the engine, nothing of
 * locklab's runs there but the commands it sends.
 *
 * One master connection per host (ControlMaster, a child of locklab's
 * killed with it), every command a session multiplexed on it: a command
 * then costs a few milliseconds, not a handshake. Key authentication
 * only (BatchMode: ssh never asks for a password or a passphrase), the
 * host's key checked as the user's known_hosts says unless the run
 * accepts a new host's key on first use. On a host where the user is not
 * root every command runs under `sudo -n`, which fails at once where sudo
 * would ask for a password.
 */
#ifndef LOCKLAB_SSH_H
#define LOCKLAB_SSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How ssh reaches one host (from the hosts inventory, sim/fleet/hosts.h). */
struct ssh_target {
    const char *name;    /* as reports name it: "n1" */
    const char *address; /* host name or address */
    int port;            /* 0: 22 */
    const char *user;    /* NULL or "": root */
    const char *key;     /* NULL or "": ssh's own default identities */
};

/* The run's choices for every host. */
struct ssh_options {
    const char *known_hosts;    /* NULL: the user's own (~/.ssh/known_hosts) */
    bool accept_new;            /* a host not in known_hosts is added, not refused */
    uint32_t connect_timeout_s; /* 0: 5 */
    const char *dir;            /* where the control sockets and ssh's logs go */
};

struct ssh_conn {
    char name[64];
    char dest[320]; /* user@address */
    char port[8];
    char key[512];
    char control[160]; /* the master's socket */
    char log[256];     /* the master's stderr */
    pid_t master;      /* 0: not open */
    bool sudo;         /* not root there: commands under sudo -n */
    /* the host-key options of ssh_open's, for every command: one that
     * finds the master gone connects on its own, checked the same way */
    struct ssh_options opts;
    char known_hosts[512];
};

/* The master connection to t, authenticated; who is logged in checked,
 * and sudo -n where that is not root. 0, or -1 with a one-line err
 * naming the host and what ssh or sudo said. Call from a thread that
 * lives as long as the connection (the main thread): the master dies
 * with the thread that forked it. */
int ssh_open(struct ssh_conn *c, const struct ssh_target *t, const struct ssh_options *o, char *err,
             size_t errlen);

/* c as ssh_open would make it, but with no master: each command then
 * connects on its own, checked with o's options (the janitor's, once
 * locklab and its masters are gone). */
void ssh_conn_direct(struct ssh_conn *c, const struct ssh_target *t, const struct ssh_options *o,
                     bool sudo);

/* What a command did. */
struct ssh_result {
    int status;     /* its exit status; -1: it did not run to an end (below) */
    bool timed_out; /* not ended within the time given: its ssh killed */
    size_t out_len; /* bytes of its stdout kept in out */
    bool out_cut;   /* it wrote more than out could keep */
    char err[256];  /* the last line of its stderr */
};

/* Run the shell command cmd on c's host (under sudo -n sh -c when c->sudo),
 * input (in_len bytes, may be NULL) as its stdin, its stdout into out
 * (out_size bytes, '\0'-ended; may be NULL), for at most timeout_ms. 0
 * when it ran to an end (r->status its exit status), -1 when ssh itself
 * failed (255: the connection) or the time ran out, with err set. */
int ssh_run(struct ssh_conn *c, const char *cmd, const void *input, size_t in_len, char *out,
            size_t out_size, uint32_t timeout_ms, struct ssh_result *r, char *err, size_t errlen);

/* A command that stays, spoken to line by line (a question, its answer)
 * over one session: the time of a session's start (a fork there, a
 * login shell) stays out of each exchange, so both ways cost alike. */
struct ssh_pipe {
    pid_t pid;
    int in, out; /* its stdin, its stdout */
    char buf[256];
    size_t len;
};
/* 0, or -1 with err set. */
int ssh_pipe_open(struct ssh_conn *c, const char *cmd, struct ssh_pipe *p, char *err,
                  size_t errlen);
/* line (with its newline) written, one line of the answer read into reply
 * without its newline, within timeout_ms. 0, or -1. */
int ssh_pipe_ask(struct ssh_pipe *p, const char *line, char *reply, size_t len,
                 uint32_t timeout_ms);
/* Its stdin closed, the command ended (killed after a while). */
void ssh_pipe_close(struct ssh_pipe *p);

/* The master closed and its socket removed. Safe on a closed one. */
void ssh_close(struct ssh_conn *c);

/* arg as one word of a POSIX shell command line, into buf ('...', with
 * each ' written '\''); -1 when it does not fit. */
int ssh_quote(const char *arg, char *buf, size_t len);
/* argv[0..] (NULL-ended) as one shell command line of quoted words; -1
 * when it does not fit. */
int ssh_command_line(const char *const argv[], char *buf, size_t len);

#endif
