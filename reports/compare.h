/* compare.h - one scenario run with several algorithms, side by side: the
 * terminal table, compare.md and compare.json. Each row is taken from a
 * finished run's result before the next run starts.
 *
 * A row is judged by what happened in its runs (violations, broken
 * invariants), never by an expectation written for another lock: the
 * scenario's expect is the lock's its file names (lock.algorithm), shown
 * apart (compare_judge.c). */
#ifndef LOCKLAB_COMPARE_H
#define LOCKLAB_COMPARE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "reports/html.h"
#include "reports/report.h"
#include "sim/check/result.h"

#define COMPARE_MAX       24
#define COMPARE_MAX_SEEDS 10

/* One seed of a row: what its run showed, for its safety and its folder. */
struct compare_seed {
    uint64_t seed;
    char run_dir[512];
    bool ran;         /* false: its clients could not start (note says why) */
    bool complete;    /* false: INCOMPLETE (a server or fault failed, the host, Ctrl-C) */
    char verdict[16]; /* its report.json's: PASS, FAIL, INCOMPLETE */
    struct report_safety safety; /* its report.json's safety */
    char broken[160];            /* the safety invariants that broke: "no_oversell, ..." */
    double stuck_lock_ms;        /* its longest stretch of a key with waiters, no holder */
    bool passed;                 /* its run met the expectation it ran with */
    char note[640];              /* the unmet expectation, or why incomplete; "" */
};

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
    char run_dir[512]; /* the first seed's */
    /* by what happened in every seed (compare_row_judge): safe, UNSAFE,
     * INCOMPLETE, NOT RUN */
    char verdict[16];
    char note[640];     /* why it is incomplete, missed the expectation or did not run */
    bool ran;           /* false: NOT RUN, no figure means anything */
    bool scenario_lock; /* the lock the scenario's expect is written for */
    uint32_t ttl_ms;    /* the ttl asked */
    uint32_t lease_ms;  /* the lease its grants really had (scenario_lease_ms); 0: none */
    struct compare_seed seeds[COMPARE_MAX_SEEDS];
    size_t n_seeds;
    /* Every figure below is the first seed's run: a mean of two runs of
     * a pause is no run anyone saw. Safety is every seed's. */
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
    const struct scenario *scn; /* the scenario's lock's, when it runs: its expect as written */
    size_t seeds;               /* each algorithm's runs, on seeds scn->seed, +1, ... */
    /* the lock the scenario's expect is written for (its lock.algorithm),
     * and that expect in words ("violations >0, invariants broken") */
    char written_for[32];
    char expectation[256];
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

/* A row from a finished run (its first seed's): its figures, and that
 * seed (compare_seed_add). */
void compare_row_fill(struct compare_row *row, const struct run_result *r);
/* One more seed of a row, from its finished run. */
void compare_seed_add(struct compare_row *row, const struct run_result *r);
/* One more seed of a row that did not run (why). */
void compare_seed_not_run(struct compare_row *row, uint64_t seed, const char *why);
/* The row's verdict and note from its seeds, once they are all in. */
void compare_row_judge(struct compare_row *row);
/* Was this seed unsafe: a violation the host did not make, or a safety
 * invariant broken in a run that ended? */
bool compare_seed_unsafe(const struct compare_seed *s);
size_t compare_unsafe_seeds(const struct compare_row *row);
/* The row's safety in words: "safe", "UNSAFE: 122 violations, 2
 * invariants broken", "UNSAFE in 1 of 2 seeds", "INCOMPLETE", "NOT RUN". */
const char *compare_row_safety(const struct compare_row *row, char *buf, size_t len);
/* One seed in words, as the tables list it under its row; with dir, its
 * run folder at the end (a page links to it instead). */
const char *compare_seed_text(const struct compare_seed *s, bool dir, char *buf, size_t len);
/* A lease as the tables show it: "500", "2000", "none". */
const char *compare_lease(const struct compare_row *row, char *buf, size_t len);

/* Whose expectation s states (its lock.algorithm) and what it is, in
 * words, into c's written_for and expectation. */
void compare_expect_of(struct comparison *c, const struct scenario *s);
/* Whether the scenario's lock met the expectation written for it. */
enum compare_expect { EXPECT_NOT_JUDGED, EXPECT_MET, EXPECT_MISSED };
enum compare_expect compare_expectation(const struct comparison *c);
/* "expectation (written for redis): met - violations >0, invariants
 * broken", "... missed in seed 2 - violations: expected >0, got 0", "...
 * not judged - redis is not among the algorithms compared". */
const char *compare_expectation_line(const struct comparison *c, char *buf, size_t len);
/* {written_for, text, judged, met, seeds, seeds_met, missed: [...]} */
json_t *compare_expectation_json(const struct comparison *c);
/* What the rows allocated (their series and settings). */
void compare_free(struct comparison *c);

/* The comparison's verdict line: PASS, FAIL (the scenario's lock missed
 * its expectation) or INCOMPLETE (names), then "; expectation (written
 * for redis): met", then the rows by verdict: "; UNSAFE: redis, redisson
 * (1 of 2 seeds); safe: etcd, zookeeper; NOT RUN: redlock". */
const char *compare_verdict(const struct comparison *c, char *buf, size_t len);
/* Rows that did not run (NOT RUN). */
size_t compare_not_run(const struct comparison *c);
/* The table within 120 columns (the figures on each row, its safety and
 * invariants on the lines under it when they have no room beside), or
 * with wide one line per algorithm however long (--wide). */
void compare_terminal(FILE *f, const struct comparison *c, bool wide);
/* 0, or -1 with errno set. */
int compare_markdown(const char *path, const struct comparison *c);
int compare_json(const char *path, const struct comparison *c);
/* compare.html: the table, throughput and p99 side by side, one spectrum
 * curve per algorithm, links to each run's report.html. */
int compare_html(const char *path, const struct comparison *c);

#endif
