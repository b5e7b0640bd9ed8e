/* metrics.h - a run's figures while it goes, for the metrics endpoint
 * (--metrics, sim/cli/metrics_http.c): plain data read from the runner on
 * the endpoint's own thread, from what the clients already count for the
 * live line and the result (their counters, their workers' latency
 * totals, the witness, the nemesis's windows). Nothing is added to the
 * clients' hot path but the latency totals (live.h).
 *
 * Each figure is the one report.json gives once the clients have left
 * (docs/metrics.md names the field); while they run, a reading is at most
 * the operations in flight behind them.
 */
#ifndef LOCKLAB_METRICS_H
#define LOCKLAB_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/engine/live.h"
#include "sim/scenario/scenario.h"

struct runner;

/* An operation's outcomes, as report.json's counters split them. */
enum metrics_outcome {
    MO_OK,
    MO_REFUSED,   /* acquire: busy (the wait ran out); release: lost (not the owner) */
    MO_NO_EFFECT, /* an error surely not in effect: never sent, refused or undone */
    MO_AMBIGUOUS, /* an error after the request went out: its outcome unknown */
    MO_COUNT
};

struct metrics_fault {
    const char *kind; /* fault_type_name: static */
    char target[24];  /* as the scenario wrote it */
    bool active;      /* its window is on */
};

struct metrics {
    char scenario[64];
    char algorithm[32];
    bool started;     /* the start line is crossed */
    double elapsed_s; /* since it; once every client has left, to the last one's leaving */
    uint32_t clients, clients_running;
    uint64_t steps;
    uint64_t acquire[MO_COUNT], release[MO_COUNT];
    uint64_t concurrent_entries; /* the online witness's */
    /* granted acquires by live_le_us bound (not cumulative; the last past
     * the largest bound), and the sum of their latencies */
    uint64_t latency[LIVE_LE_COUNT + 1];
    uint64_t latency_sum_us;
    size_t n_faults;
    struct metrics_fault faults[SCENARIO_MAX_FAULTS];
};

/* Read r's figures into m, from any thread, while r is neither freed nor
 * being freed (the caller keeps it alive: metrics_http holds a mutex the
 * face takes before letting the engine free it). m holds the previous
 * reading of the same run, or zeroes: the ambiguous counts, bounded from
 * below at each reading, never go down from one reading to the next. */
void metrics_read(struct runner *r, struct metrics *m);

#endif
