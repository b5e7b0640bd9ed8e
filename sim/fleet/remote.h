/* remote.h - a managed server's processes on another host, reached over
 * SSH (ssh.h), as Jepsen's control node drives its nodes: its folder made
 * there at the same path as here (the kind writes its configuration here
 * and it is copied over whole before the start, so no path in a command
 * line or a file changes), started detached in a session of its own,
 * watched, struck and stopped by its PID there with every process under
 * it, its log fetched back. Nothing of locklab's runs there but these
 * commands. spawn.c and control.c hand a server placed on a host here
 * (managed_server.host) at each point where a local one meets fork,
 * waitpid, kill or /proc.
 */
#ifndef LOCKLAB_REMOTE_H
#define LOCKLAB_REMOTE_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/fleet/cluster.h"
#include "sim/fleet/host_probe.h"
#include "sim/fleet/ssh.h"

/* One host of a run: its name (as the inventory gives it), the address
 * its servers listen at and clients reach, its open connection. */
struct fleet_host {
    char name[64];
    char addr[64];
    struct ssh_conn ssh;
    struct host_probe probe; /* what it has (which kinds it can run), asked at the start */
};

/* Does h have what kind needs (its probe: the kind's host_needs)? 0, or
 * -1 with the one line naming what is missing and its package. */
int remote_has_packages(const struct fleet_host *h, const struct server_kind *kind, char *err,
                        size_t errlen);
/* Can kind run on h: placed on hosts at all, and its packages there? 0,
 * or -1 with the one line that says why not. */
int remote_fits(const struct fleet_host *h, const struct server_kind *kind, char *err,
                size_t errlen);

/* s's folder copied to its host (made there first), then its command
 * line (spawn_shell_line) started there detached, stdout and stderr into
 * stdout.log in its folder: s->pid and s->pid_start its pid there and
 * the kernel's start time of it. 0, or -1 with err set. */
int remote_start(struct managed_server *s, const char *line, char *err, size_t errlen);
/* Has it exited there (then s->pid is 0)? 1 gone, 0 alive; a host that
 * does not answer counts as alive (the run finds out otherwise). */
int remote_reap(struct managed_server *s);
/* sig (SIGKILL, SIGSTOP, SIGCONT) to s and every process under it there,
 * its children first, in one command; a kill or a pause then waits there
 * up to CLUSTER_STRIKE_WAIT_MS for each to be gone or stopped and counts
 * those that were not (st as cluster_strike's, its times this machine's
 * before the command and after its answer). 0, or -1 with err set. */
int remote_strike(struct managed_server *s, int sig, struct cluster_struck *st, char *err,
                  size_t errlen);
/* sig (a clean stop), SIGCONT, then SIGKILL to every process of it after
 * a while: ended there for good. */
void remote_stop(struct managed_server *s, int sig);
/* The file name of s's folder there, copied to the local path to. 0, or -1. */
int remote_fetch(const struct managed_server *s, const char *name, const char *to);
/* The last line of its logs there, for an error message. */
void remote_log_tail(const struct managed_server *s, char *out, size_t len);
/* The janitor's part (janitor.h): each server started on a host is
 * noted in the run folder's REMOTE_NOTES file (its host, how ssh reaches
 * it, its pid and start time there), so that once locklab is gone the
 * janitor can reach every host, kill what still runs there of the run
 * and remove the run's folder there. remote_clean_up does that from the
 * notes; how many hosts it could not reach, each named on stderr. */
#define REMOTE_NOTES "hosts.pids"
int remote_clean_up(const char *root);

/* The run's nftables table on h (netfilter.h's name, in the host's own
 * network namespace) holding chains (nft statements: whole chain
 * definitions), replacing what it held; chains NULL: the table gone. The
 * table is checked to be there after a set. 0, or -1 with err set. */
int remote_nft(struct fleet_host *h, const char *table, const char *chains, char *err,
               size_t errlen);

/* dir removed on h, whatever is in it. */
void remote_remove_dir(struct fleet_host *h, const char *dir);
/* The files of s's folder there whose names start with one of the
 * prefixes (NULL-ended) removed: its data lost, as a crash with no disk
 * would leave it. */
void remote_remove_files(const struct managed_server *s, const char *const prefixes[]);

#endif
