/* host_probe.c - what a host has, asked in one command (host_probe.h). */
#include "sim/fleet/host_probe.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fleet/server_kind.h"
#include "sim/record/clock.h"

#define PROBE_TIMEOUT_MS 15000
#define CLOCK_SAMPLES    5
#define PROBE_OUT        8192

/* One line per thing asked, "<what> yes|no", so that the answer reads
 * the same whatever the host's shell prints around it. A need is a
 * command on the PATH, an executable regular file once its links are
 * followed, or, given by its path, a file there. */
static size_t probe_script(char *buf, size_t len)
{
    size_t o = (size_t)snprintf(
        buf, len,
        "echo \"kernel $(uname -r)\"; echo \"hostname $(uname -n)\"; "
        "has() { case $1 in */*) [ -f \"$1\" ];; *) w=$(command -v \"$1\") && [ -f \"$w\" ] "
        "&& [ -x \"$w\" ];; esac; }; "
        "for p in nft tc");
    for (size_t k = 0; k < server_kind_count() && o < len; k++)
        for (const char *const *n = server_kind_at(k)->host_needs; *n && o < len; n++)
            o += (size_t)snprintf(buf + o, len - o, " %s", *n);
    if (o < len)
        o += (size_t)snprintf(buf + o, len - o,
                              "; do if has \"$p\"; then echo \"$p yes\"; else echo \"$p no\"; fi; "
                              "done; if modinfo sch_netem >/dev/null 2>&1 || [ -d "
                              "/sys/module/sch_netem ]; then echo 'netem yes'; else echo 'netem "
                              "no'; fi");
    return o;
}

/* The answer's line for what ("nft yes"): 1 yes, 0 no, -1 absent. */
static int answered(const char *out, const char *what)
{
    size_t n = strlen(what);
    for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, what, n) == 0 && l[n] == ' ')
            return strncmp(l + n + 1, "yes", 3) == 0 ? 1 : 0;
    }
    return -1;
}

static void field(const char *out, const char *name, char *to, size_t len)
{
    to[0] = '\0';
    size_t n = strlen(name);
    for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, name, n) == 0 && l[n] == ' ') {
            size_t v = strcspn(l + n + 1, "\n");
            snprintf(to, len, "%.*s", (int)(v < len ? v : len - 1), l + n + 1);
            return;
        }
}

static void kinds_found(const char *out, struct host_probe *p)
{
    for (size_t k = 0; k < server_kind_count() && k < HOST_PROBE_KINDS; k++) {
        p->kind_ok[k] = true;
        p->kind_missing[k][0] = '\0';
        for (const char *const *n = server_kind_at(k)->host_needs; *n; n++)
            if (answered(out, *n) != 1) {
                p->kind_ok[k] = false;
                snprintf(p->kind_missing[k], sizeof(p->kind_missing[k]), "%s", *n);
                break;
            }
    }
}

int host_clock_offset(struct ssh_conn *c, int64_t *offset_us, uint64_t *rtt_us, char *err,
                      size_t errlen)
{
    uint64_t best = UINT64_MAX;
    struct ssh_pipe p;
    /* one session answering a line with its clock, so that each exchange
     * is a write and a read each way: a command of its own per sample
     * pays the session's start on the way there only */
    if (ssh_pipe_open(c, "while read -r _; do date +%s%N; done", &p, err, errlen) < 0)
        return -1;
    for (int i = 0; i <= CLOCK_SAMPLES; i++) {
        char out[64];
        uint64_t t0 = clock_wall_ns();
        if (ssh_pipe_ask(&p, "\n", out, sizeof(out), PROBE_TIMEOUT_MS) < 0) {
            snprintf(err, errlen, "host %s: its clock did not answer", c->name);
            ssh_pipe_close(&p);
            return -1;
        }
        uint64_t t1 = clock_wall_ns();
        unsigned long long there = strtoull(out, NULL, 10);
        if (there == 0) {
            snprintf(err, errlen, "host %s: `date +%%s%%N` answered \"%.40s\"", c->name, out);
            ssh_pipe_close(&p);
            return -1;
        }
        if (i == 0)
            continue; /* the first one waited for the session to start */
        if (t1 - t0 < best) {
            best = t1 - t0;
            *rtt_us = best / 1000;
            *offset_us = ((int64_t)there - (int64_t)(t0 + (t1 - t0) / 2)) / 1000;
        }
    }
    ssh_pipe_close(&p);
    return 0;
}

int host_probe(struct ssh_conn *c, struct host_probe *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    char script[4096];
    if (probe_script(script, sizeof(script)) >= sizeof(script)) {
        snprintf(err, errlen, "host %s: the probe's command is too long", c->name);
        return -1;
    }
    static __thread char out[PROBE_OUT];
    struct ssh_result r;
    if (ssh_run(c, script, NULL, 0, out, sizeof(out), PROBE_TIMEOUT_MS, &r, err, errlen) < 0)
        return -1;
    if (r.status != 0) {
        snprintf(err, errlen, "host %s: the probe exited %d: %s", c->name, r.status, r.err);
        return -1;
    }
    field(out, "kernel", p->kernel, sizeof(p->kernel));
    field(out, "hostname", p->hostname, sizeof(p->hostname));
    p->nft = answered(out, "nft") == 1;
    p->netem = answered(out, "tc") == 1 && answered(out, "netem") == 1;
    kinds_found(out, p);
    return host_clock_offset(c, &p->offset_us, &p->rtt_us, err, errlen);
}
