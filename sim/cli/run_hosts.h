/* run_hosts.h - the hosts a command reaches over SSH (--hosts FILE or
 * --nodes, with --ssh-*): read, connected and asked what they have
 * before anything starts on any of them, so that a host not reached, a
 * key refused, sudo asking for a password or a package missing is one
 * line and nothing is started anywhere. `locklab hosts` shows what the
 * probe found; run hands the connected hosts to the fleet, which places
 * its servers there (cluster.h's hosts). */
#ifndef LOCKLAB_RUN_HOSTS_H
#define LOCKLAB_RUN_HOSTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "sim/fleet/host_probe.h"
#include "sim/fleet/hosts.h"
#include "sim/fleet/remote.h"
#include "sim/fleet/ssh.h"

/* The options, as given. */
struct host_opts {
    const char *file, *nodes;
    struct host_defaults d;
    struct ssh_options ssh;
};

/* The long options of host_opts (getopt_long's, their values from
 * HOST_OPT_FIRST), ended by a zero entry, for a command's own table. */
enum { HOST_OPT_FIRST = 400, HOST_OPTS = 7 };
extern const struct option host_long_options[HOST_OPTS + 1];
/* getopt's code c with its argument into o: 1 when it was one of them,
 * 0 when not, EXIT_USAGE (after the message) for a bad value. */
int host_opts_take(int c, const char *arg, struct host_opts *o);
/* The help lines of those options. */
extern const char host_opts_help[];

struct run_hosts {
    struct host_list list;
    struct fleet_host host[HOSTS_MAX]; /* each with what its probe found */
    bool open[HOSTS_MAX];
    size_t reached;
    char dir[128]; /* the connections' sockets and ssh's logs */
};

/* Every host of o read, connected and probed; each a host must be able
 * to run the kinds in needs (bits by the registry's index). With
 * keep_going every host is tried and each failure printed (`locklab
 * hosts`), else the first failure ends it, everything closed. 0 when
 * every host was reached and fits, else an exit code after the lines:
 * EXIT_USAGE (the inventory), EXIT_ENV (a host). No hosts given: 0, h
 * empty. Close with run_hosts_close whatever it returned. */
int run_hosts_open(const struct host_opts *o, unsigned needs, bool keep_going, struct run_hosts *h);
bool host_opts_given(const struct host_opts *o);
void run_hosts_close(struct run_hosts *h);

#endif
