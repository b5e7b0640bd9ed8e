/* spawn.h - one managed server's process, for cluster.c, control.c and the
 * server kinds' files:
 * started (through the keeper thread, see spawn.c), waited for until it
 * serves, reaped, stopped. Not for the rest of the engine. */
#ifndef LOCKLAB_SPAWN_H
#define LOCKLAB_SPAWN_H

#include <stddef.h>
#include <stdint.h>

#include "sim/fleet/cluster.h"

void spawn_sleep_ms(long ms);

/* A server's command line and environment, prepared before its fork (a
 * kind's command fills it: server_kind.h). */
struct spawn;
/* One more argument. */
void spawn_arg(struct spawn *sp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Run the server as user (its groups: the user's own group alone),
 * dropped to in the child before anything else it does. 0, or -1 when no
 * such user exists. Its folder must be the user's. */
int spawn_run_as(struct spawn *sp, const char *user);
/* Run a tool to its end (initdb, cp) as user (NULL: as locklab), its
 * output into log (appended; NULL: /dev/null), killed after timeout_ms.
 * Its exit status (0 ok), or -1 when it could not run or timed out. */
int spawn_run(const char *user, const char *const argv[], const char *log, uint32_t timeout_ms);
/* The environment's value of name, or fallback when unset or empty. */
const char *spawn_env_or(const char *name, const char *fallback);
/* Run s under its clock_preload (the faketime shim, then libfaketime),
 * reading its offset from its own file at every time call. */
void spawn_faketime(struct spawn *sp, const struct managed_server *s);
/* Fork and exec s's server on s->port, in s->dir. 0, or -1 with err set. */
int spawn_start(struct managed_server *s, char *err, size_t errlen);
/* What a wait for a server to serve saw, for the error if it failed. */
struct spawn_wait {
    int rc;            /* 0 serves; 1 exited (maybe the port); -1 not within limit_ms */
    int status;        /* when it exited: its wait status */
    uint64_t limit_ms; /* how long it was given */
    size_t starting;   /* servers started at once with it */
    double load;       /* the one-minute load average then */
    long cores;        /* the cores online then */
};

/* Wait until it serves, for as long as its kind needs on this machine
 * now: longer when starting servers start with it or the machine is
 * loaded. w->rc, also returned. */
int spawn_wait_ready(struct managed_server *s, size_t starting, struct spawn_wait *w);
/* Why the wait w failed, into err: what was waited for and how long, how
 * it ended, the last log line; "is it installed?" only when its program
 * could not be executed. */
void spawn_failed(struct managed_server *s, const struct spawn_wait *w, char *err, size_t errlen);
/* The last line of its logs, for an error message. */
void spawn_log_tail(const struct managed_server *s, char *out, size_t len);
/* 1 when it has exited (and is reaped: pid 0), 0 while it lives. */
int spawn_reap(struct managed_server *s, int *status);
/* A Redis under libfaketime: the file its offset is read from, and that
 * offset written (atomically: the server reads it at every time call).
 * 0, or -1 with errno set. */
void spawn_faketime_file(const struct managed_server *s, char *path, size_t len);
int spawn_write_clock(const struct managed_server *s, uint64_t ahead_ms);
/* The processes of the tree under root now, from /proc: root first, then
 * every descendant, parents before their children (PostgreSQL's backends
 * each lead a session of their own, so no process group holds them all).
 * How many were written to out, at most max; 0 when root is gone. */
size_t spawn_processes(pid_t root, struct cluster_proc *out, size_t max);
/* p's state letter now ('R', 'S', 'D', 'T', 'Z', ...); 0 when it is gone
 * or its pid names another process now. */
char spawn_process_state(const struct cluster_proc *p);
/* sig to each of p[0..n) that is still the process it was; how many. */
size_t spawn_signal_all(const struct cluster_proc *p, size_t n, int sig);
/* sig to each of p[0..n), read a moment ago, the last first (the newest:
 * the processes of a server's clients), without looking at /proc again:
 * a strike is then a few microseconds. */
void spawn_signal_known(const struct cluster_proc *p, size_t n, int sig);
/* sig, SIGCONT (a paused one must act on it), then SIGKILL after a while;
 * every process under it is continued with it, and killed with it. */
void spawn_stop(struct managed_server *s, int sig);
/* spawn_stop with its kind's clean stop signal (server_kind.h). */
void spawn_stop_clean(struct managed_server *s);

#endif
