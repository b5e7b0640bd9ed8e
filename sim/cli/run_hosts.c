/* run_hosts.c - the hosts a command reaches over SSH (run_hosts.h). */
#include <arpa/inet.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sim/cli/cli.h"
#include "sim/cli/run_hosts.h"
#include "sim/fleet/server_kind.h"

enum { OPT_HOSTS = HOST_OPT_FIRST, OPT_NODES, OPT_USER, OPT_KEY, OPT_PORT, OPT_KNOWN, OPT_ACCEPT };

const struct option host_long_options[HOST_OPTS + 1] = {
    {"hosts", required_argument, 0, OPT_HOSTS},
    {"nodes", required_argument, 0, OPT_NODES},
    {"ssh-user", required_argument, 0, OPT_USER},
    {"ssh-key", required_argument, 0, OPT_KEY},
    {"ssh-port", required_argument, 0, OPT_PORT},
    {"ssh-known-hosts", required_argument, 0, OPT_KNOWN},
    {"ssh-accept-new-host-key", no_argument, 0, OPT_ACCEPT},
    {0, 0, 0, 0}};

const char host_opts_help[] =
    "      --hosts FILE         the hosts, an Ansible INI inventory or a JSON list\n"
    "                           (docs/hosts.md)\n"
    "      --nodes LIST         or the hosts themselves: [user@]address[:port],...\n"
    "      --ssh-user USER      for hosts that name none (default root)\n"
    "      --ssh-key FILE       the private key for hosts that name none (default: ssh's)\n"
    "      --ssh-port PORT      for hosts that name none (default 22)\n"
    "      --ssh-known-hosts F  the host keys to check against (default: the user's\n"
    "                           ~/.ssh/known_hosts)\n"
    "      --ssh-accept-new-host-key  a host whose key is not known yet is added on\n"
    "                           first use (a changed key is still refused)\n";

int host_opts_take(int c, const char *arg, struct host_opts *o)
{
    long long port;
    switch (c) {
    case OPT_HOSTS:
        o->file = arg;
        return 1;
    case OPT_NODES:
        o->nodes = arg;
        return 1;
    case OPT_USER:
        o->d.user = arg;
        return 1;
    case OPT_KEY:
        o->d.key = arg;
        return 1;
    case OPT_PORT:
        if (parse_long(arg, 1, 65535, &port) < 0)
            return bad_usage("--ssh-port \"%s\": expected 1..65535", arg);
        o->d.port = (int)port;
        return 1;
    case OPT_KNOWN:
        o->ssh.known_hosts = arg;
        return 1;
    case OPT_ACCEPT:
        o->ssh.accept_new = true;
        return 1;
    default:
        return 0;
    }
}

bool host_opts_given(const struct host_opts *o)
{
    return o->file || o->nodes;
}

/* The connections' folder, in TMPDIR where its path leaves room for a
 * socket's name (sockaddr_un holds 108 bytes), else in /tmp. */
static int control_dir(char *dir, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || tmp[0] == '\0' || strlen(tmp) > 60)
        tmp = "/tmp";
    snprintf(dir, len, "%s/locklab-ssh-XXXXXX", tmp);
    return mkdtemp(dir) ? 0 : -1;
}

/* The address the host's servers listen at: its inventory address as an
 * IPv4 number (a server binds numbers, not names). */
static int listen_addr(const struct host_spec *h, char *out, size_t len)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(h->address, NULL, &hints, &res) != 0 || res == NULL)
        return -1;
    const struct sockaddr_in *a = (const struct sockaddr_in *)res->ai_addr;
    const char *ok = inet_ntop(AF_INET, &a->sin_addr, out, (socklen_t)len);
    freeaddrinfo(res);
    return ok ? 0 : -1;
}

/* The first kind of needs this host cannot run, said in one line. */
static bool lacks(const struct fleet_host *h, unsigned needs)
{
    char err[300];
    for (size_t k = 0; k < server_kind_count() && k < HOST_PROBE_KINDS; k++)
        if ((needs >> k & 1u) && remote_has_packages(h, server_kind_at(k), err, sizeof(err)) < 0) {
            fprintf(stderr, "locklab: %s\n", err);
            return true;
        }
    return false;
}

static int open_one(struct run_hosts *h, size_t i, const struct host_opts *o, unsigned needs)
{
    const struct host_spec *spec = &h->list.host[i];
    struct fleet_host *fh = &h->host[i];
    char err[512];
    snprintf(fh->name, sizeof(fh->name), "%s", spec->name);
    if (listen_addr(spec, fh->addr, sizeof(fh->addr)) < 0) {
        fprintf(stderr, "locklab: host %s: its address %s has no IPv4 address\n", spec->name,
                spec->address);
        return EXIT_ENV;
    }
    struct ssh_options so = o->ssh;
    so.dir = h->dir;
    struct ssh_target t = {spec->name, spec->address, spec->port, spec->user, spec->key};
    if (ssh_open(&fh->ssh, &t, &so, err, sizeof(err)) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_ENV;
    }
    h->open[i] = true;
    if (host_probe(&fh->ssh, &fh->probe, err, sizeof(err)) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_ENV;
    }
    h->reached++;
    return lacks(fh, needs) ? EXIT_ENV : 0;
}

int run_hosts_open(const struct host_opts *o, unsigned needs, bool keep_going, struct run_hosts *h)
{
    memset(h, 0, sizeof(*h));
    if (!host_opts_given(o))
        return 0;
    char err[512];
    if ((o->file ? hosts_load(o->file, &o->d, &h->list, err, sizeof(err))
                 : hosts_from_nodes(o->nodes, &o->d, &h->list, err, sizeof(err))) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_USAGE;
    }
    if (control_dir(h->dir, sizeof(h->dir)) < 0) {
        fprintf(stderr, "locklab: cannot make a folder for the SSH connections: %s\n", h->dir);
        h->dir[0] = '\0';
        return EXIT_ENV;
    }
    int rc = 0;
    for (size_t i = 0; i < h->list.n; i++) {
        int one = open_one(h, i, o, needs);
        if (one != 0 && rc == 0)
            rc = one;
        if (rc != 0 && !keep_going)
            break;
    }
    return rc;
}

void run_hosts_close(struct run_hosts *h)
{
    for (size_t i = 0; i < h->list.n; i++)
        if (h->open[i]) {
            ssh_close(&h->host[i].ssh);
            h->open[i] = false;
        }
    if (h->dir[0]) {
        /* what ssh left: its logs; the sockets went with the masters */
        for (size_t i = 0; i < h->list.n; i++) {
            char log[256];
            snprintf(log, sizeof(log), "%s/%s.ssh.log", h->dir, h->list.host[i].name);
            unlink(log);
        }
        rmdir(h->dir);
        h->dir[0] = '\0';
    }
}
