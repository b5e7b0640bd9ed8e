/* proxy_stats.h - the proxy's counters as a run's result keeps them: plain
 * numbers the proxy fills in (proxy_stats) and the reports print, so a
 * report never sees the proxy itself. */
#ifndef LOCKLAB_PROXY_STATS_H
#define LOCKLAB_PROXY_STATS_H

#include <stdint.h>

#define PROXY_MAX_TOXICS 64 /* ids 0..63: a fault's index in the scenario */

/* What the proxy did, for the reports. */
struct proxy_stats {
    uint64_t connections;   /* accepted */
    uint64_t refused;       /* upstream connects that failed: the client was reset */
    uint64_t bytes_up;      /* delivered to servers */
    uint64_t bytes_down;    /* delivered to clients */
    uint64_t bytes_dropped; /* swallowed by timeouts, limits and closes */
    uint64_t toxic_links[PROXY_MAX_TOXICS]; /* connections each toxic applied to */
};

#endif
