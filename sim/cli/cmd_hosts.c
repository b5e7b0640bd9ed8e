/* cmd_hosts.c - `locklab hosts`: every host of an inventory reached over
 * SSH and asked what it has (host_probe.h), before a run places anything
 * there: who logs in and whether sudo -n works, which server kinds it can
 * run (the kinds' own host_needs), nftables and netem for the network
 * faults, and its clock against this machine's. */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli/cli.h"
#include "sim/cli/run_hosts.h"
#include "sim/fleet/host_probe.h"
#include "sim/fleet/server_kind.h"

enum { OPT_NEEDS = 300 };

static int parse_opts(int argc, char **argv, struct host_opts *o, const char **needs)
{
    struct option longs[HOST_OPTS + 2];
    memcpy(longs, host_long_options, sizeof(host_long_options));
    longs[HOST_OPTS] = (struct option){"needs", required_argument, 0, OPT_NEEDS};
    longs[HOST_OPTS + 1] = (struct option){0, 0, 0, 0};
    memset(o, 0, sizeof(*o));
    *needs = NULL;
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        int took = host_opts_take(c, optarg, o);
        if (took == EXIT_USAGE)
            return took;
        if (took)
            continue;
        if (c == OPT_NEEDS) {
            *needs = optarg;
            continue;
        }
        return bad_usage("hosts: unknown or incomplete option \"%s\"", argv[optind - 1]);
    }
    if (optind < argc)
        return bad_usage("hosts: unexpected argument \"%s\"", argv[optind]);
    if ((o->file == NULL) == (o->nodes == NULL))
        return bad_usage("%s", "hosts: give the hosts: --hosts FILE or --nodes n1,n2,...");
    return 0;
}

/* --needs redis,sentinel: the kinds' indexes as bits. */
static int needed_kinds(const char *list, unsigned *bits)
{
    *bits = 0;
    if (list == NULL)
        return 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *save = NULL, *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
        int i = server_kind_index(k);
        if (i < 0 || i >= HOST_PROBE_KINDS || server_kind_at((size_t)i)->internal)
            return bad_usage("hosts: --needs: no server kind \"%s\" (locklab list servers)", k);
        *bits |= 1u << i;
    }
    return 0;
}

static void kinds_text(const struct host_probe *p, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < server_kind_count() && k < HOST_PROBE_KINDS && o < len; k++)
        if (p->kind_ok[k])
            o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? " " : "", server_kind_at(k)->name);
    if (o == 0)
        snprintf(buf, len, "none");
}

static void print_row(const struct host_spec *h, const struct ssh_conn *c,
                      const struct host_probe *p)
{
    char kinds[256], addr[300];
    kinds_text(p, kinds, sizeof(kinds));
    snprintf(addr, sizeof(addr), "%s:%d", h->address, h->port);
    printf("%-10s %-22s %-8s %-5s %-10s %+9.2f ms (rtt %.2f)  %-4s %-5s %s\n", h->name, addr,
           h->user, c->sudo ? "sudo" : "root", p->hostname, (double)p->offset_us / 1000.0,
           (double)p->rtt_us / 1000.0, p->nft ? "yes" : "no", p->netem ? "yes" : "no", kinds);
}

int cmd_hosts(int argc, char **argv)
{
    struct host_opts o;
    const char *needs_text;
    unsigned needs;
    int rc = parse_opts(argc, argv, &o, &needs_text);
    if (rc == 0)
        rc = needed_kinds(needs_text, &needs);
    if (rc != 0)
        return rc;
    static struct run_hosts h;
    rc = run_hosts_open(&o, needs, true, &h);
    if (rc == EXIT_USAGE) {
        run_hosts_close(&h);
        return rc;
    }
    if (h.reached > 0)
        printf("%-10s %-22s %-8s %-5s %-10s %-24s %-4s %-5s %s\n", "host", "address", "user", "as",
               "hostname", "clock offset", "nft", "netem", "servers it can run");
    for (size_t i = 0; i < h.list.n; i++)
        if (h.open[i] && h.host[i].probe.hostname[0])
            print_row(&h.list.host[i], &h.host[i].ssh, &h.host[i].probe);
    size_t n = h.list.n, reached = h.reached;
    run_hosts_close(&h);
    bool pass = rc == 0;
    printf("End of hosts: %s - %zu of %zu hosts reached%s%s\n", pass ? "PASS" : "INCOMPLETE",
           reached, n, needs && pass ? ", fit to run " : "", needs && pass ? needs_text : "");
    return pass ? EXIT_PASS : EXIT_ENV;
}
