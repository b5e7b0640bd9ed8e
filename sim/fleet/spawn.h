/* spawn.h - one managed server's process, for cluster.c and control.c:
 * started (through the keeper thread, see spawn.c), waited for until it
 * serves, reaped, stopped. Not for the rest of the engine. */
#ifndef LOCKLAB_SPAWN_H
#define LOCKLAB_SPAWN_H

#include <stddef.h>

#include "cluster.h"

void spawn_sleep_ms(long ms);
/* Fork and exec s's server on s->port, in s->dir. 0, or -1 with err set. */
int spawn_start(struct managed_server *s, char *err, size_t errlen);
/* Wait until it serves: 0; 1 when it exited (maybe the port); -1 at the timeout. */
int spawn_wait_ready(struct managed_server *s);
/* "redis on port N did not answer in time: <last log line>" into err. */
void spawn_failed(struct managed_server *s, int rc, char *err, size_t errlen);
/* The last line of its logs, for an error message. */
void spawn_log_tail(const struct managed_server *s, char *out, size_t len);
/* 1 when it has exited (and is reaped: pid 0), 0 while it lives. */
int spawn_reap(struct managed_server *s, int *status);
/* A Redis under libfaketime: the file its offset is read from, and that
 * offset written (atomically: the server reads it at every time call).
 * 0, or -1 with errno set. */
void spawn_faketime_file(const struct managed_server *s, char *path, size_t len);
int spawn_write_clock(const struct managed_server *s, uint64_t ahead_ms);
/* sig, SIGCONT (a paused one must act on it), then SIGKILL after a while. */
void spawn_stop(struct managed_server *s, int sig);

#endif
