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
};

struct comparison {
    const struct scenario *scn;
    char out_dir[512];
    char servers[RESULT_MAX_SERVERS * 2][RESULT_SERVER_LEN];
    size_t n_servers;
    struct compare_row rows[COMPARE_MAX];
    size_t n;
    bool complete;                              /* every algorithm ran to its end */
    double percentiles[RESULT_MAX_PERCENTILES]; /* --percentiles; none: the default set */
    size_t n_percentiles;
};

/* A row from a finished run. */
void compare_row_fill(struct compare_row *row, const struct run_result *r);

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
