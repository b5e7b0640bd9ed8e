/* host_probe.h - what one host reached over SSH has and how its clock
 * stands against this machine's: asked before anything starts on it, so
 * that a host without a server's package, or without the nftables the
 * network faults need, is refused in one line and nothing is started
 * anywhere. */
#ifndef LOCKLAB_HOST_PROBE_H
#define LOCKLAB_HOST_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/fleet/ssh.h"

#define HOST_PROBE_KINDS 16

struct host_probe {
    char kernel[64];
    char hostname[64];
    /* per server kind (its index in the registry): are all its host_needs
     * there; the first one missing when not */
    bool kind_ok[HOST_PROBE_KINDS];
    char kind_missing[HOST_PROBE_KINDS][96];
    bool nft;   /* nftables: partitions, black holes, loss on the host */
    bool netem; /* the kernel's netem qdisc and tc: delay on the host */
    /* its wall clock less this machine's at the midpoint of the fastest
     * of a few round trips, and that round trip: the offset is known to
     * within half of it */
    int64_t offset_us;
    uint64_t rtt_us;
};

/* Ask c's host. 0, or -1 with err set (the host did not answer). */
int host_probe(struct ssh_conn *c, struct host_probe *p, char *err, size_t errlen);

/* The host's clock against this machine's now (offset and round trip as
 * in struct host_probe): for the report's offsets at a run's start and
 * end. 0, or -1 with err set. */
int host_clock_offset(struct ssh_conn *c, int64_t *offset_us, uint64_t *rtt_us, char *err,
                      size_t errlen);

#endif
