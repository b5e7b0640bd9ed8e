/* compare.h - one scenario run with several algorithms, side by side: the
 * terminal table, compare.md and compare.json. Each row is taken from a
 * finished run's result before the next run starts. */
#ifndef LOCKLAB_COMPARE_H
#define LOCKLAB_COMPARE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "reports/html.h"
#include "reports/report.h"
#include "sim/check/result.h"

#define COMPARE_MAX 16

/* One fault of the scenario as one algorithm's run lived it: each
 * algorithm runs its own timeline, so the same planned fault starts and
 * ends a little apart in each, and costs each its own. */
struct compare_fault {
    uint8_t kind;
    uint64_t at_ms; /* as planned */
    bool fired, ended;
    double start_s, end_s; /* seconds of the run; end_s is the run's end when it never ended */
    bool has_avail;
    struct fault_availability avail;
};

struct compare_row {
    char algorithm[32];
    char run_dir[512];
    char verdict[16]; /* PASS, FAIL, INCOMPLETE, NOT RUN */
    char note[640];   /* why it is incomplete, failed or did not run */
    bool ran;         /* false: NOT RUN, no figure means anything */
    double elapsed_s;
    uint64_t acquired, busy, errors, steps;
    double qps;                              /* locks acquired per second */
    bool has_latency;                        /* some acquire succeeded */
    double acquire_ms[REPORT_N_PERCENTILES]; /* report_percentiles */
    /* at the comparison's percentiles (--percentiles), for the CSV and
     * compare.json's acquire_percentiles */
    double acquire_pct_ms[RESULT_MAX_PERCENTILES];
    struct report_fairness fairness; /* acquisitions per client: most, fewest */
    uint64_t violations;
    uint64_t fenced_pairs;      /* overlapping pairs the store's fencing made safe */
    uint64_t rejected_accesses; /* reads and writes the store rejected for a stale token */
    bool invariants_hold;
    struct report_safety safety; /* whether the lock kept mutual exclusion */
    char invariants[256];        /* "ok no_oversell, ok stock_accounting, ..." */
    struct html_curve spectrum;  /* the acquire latency's, for compare.html */
    /* The run second by second (its result's tl_ok and tl_latency, copied:
     * the result is freed before the next algorithm runs); NULL when the
     * row did not run or the copy found no memory. */
    uint32_t *tl_ok;
    struct latency_second *tl_latency; /* by begin (latency_by_begin), else by grant */
    bool latency_by_begin;
    size_t tl_len;
    struct compare_fault faults[SCENARIO_MAX_FAULTS];
    size_t n_faults;
    double stuck_lock_ms;  /* the run's longest stretch of a key with waiters and no holder */
    char stuck_lock[200];  /* report_stuck's words; "" when none */
    char *settings;        /* report_settings of the scenario as it ran (malloc'ed) */
    json_t *settings_json; /* its lock, workload and defaults, as report.json has them */
};

struct comparison {
    const struct scenario *scn;
    char out_dir[512];
    char servers[RESULT_MAX_SERVERS * 2][RESULT_SERVER_LEN];
    size_t n_servers;
    /* where and how it ran (NULL: not known), and each server's version
     * as it answered (reports/meta.c) */
    const struct run_meta *meta;
    struct server_version versions[RESULT_MAX_SERVERS * 2];
    size_t n_versions;
    bool has_proxy; /* some run went through locklab's proxy */
    struct compare_row rows[COMPARE_MAX];
    size_t n;
    bool complete;                              /* every algorithm ran to its end */
    double percentiles[RESULT_MAX_PERCENTILES]; /* --percentiles; none: the default set */
    size_t n_percentiles;
};

/* A row from a finished run. */
void compare_row_fill(struct compare_row *row, const struct run_result *r);
/* What the rows allocated (their series and settings). */
void compare_free(struct comparison *c);

/* The comparison's verdict line: PASS, FAIL (names) or INCOMPLETE
 * (names), ", N of M NOT RUN", then the runs' safety: "; safe (3 runs)"
 * or "; UNSAFE: 280 violations in 3 of 3 runs (redis, redlock, zookeeper)". */
const char *compare_verdict(const struct comparison *c, char *buf, size_t len);
/* Rows that did not run (NOT RUN). */
size_t compare_not_run(const struct comparison *c);
void compare_terminal(FILE *f, const struct comparison *c);
/* 0, or -1 with errno set. */
int compare_markdown(const char *path, const struct comparison *c);
int compare_json(const char *path, const struct comparison *c);
/* compare.html: the table, throughput and p99 side by side, one spectrum
 * curve per algorithm, links to each run's report.html. */
int compare_html(const char *path, const struct comparison *c);

#endif
