/* matrix.h - the known-results matrix: one row per scenario of a folder,
 * each run with several seeds, expected against observed; the terminal
 * table, matrix.md and matrix.json. Each run's figures are taken from its
 * result before the next run starts. */
#ifndef LOCKLAB_MATRIX_H
#define LOCKLAB_MATRIX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "reports/report.h"
#include "sim/check/result.h"

#define MATRIX_MAX_ROWS  64
#define MATRIX_MAX_SEEDS 100

struct matrix_run {
    uint64_t seed;
    bool ran;          /* false: it could not start (the error went to stderr) */
    bool matched;      /* complete, and every expectation met */
    char verdict[16];  /* PASS, FAIL, INCOMPLETE, NOT RUN */
    char failure[640]; /* the first unmet expectation, or why it is incomplete */
    char run_dir[512];
    uint64_t violations;
    struct report_safety safety; /* whether the lock kept mutual exclusion */
    uint64_t failed;             /* acquires that failed in the fault windows, all summed */
    uint64_t ambiguous;          /* and those whose outcome is unknown */
    bool recovered;              /* every fault window was followed by a grant */
    double recovery_ms;          /* the slowest recovery among the windows */
    double stuck_ms;             /* the longest stretch a key had waiters and no holder */
    uint64_t acquired;           /* grants in the whole run */
    uint64_t fault_runs;         /* fault windows the run had */
    bool has_latency;            /* some acquire was granted */
    /* the acquires' latency at the matrix's percentiles (--percentiles) */
    double acquire_pct_ms[RESULT_MAX_PERCENTILES];
};

struct matrix_row {
    char file[512];
    char name[64];
    char algorithm[32];
    char fault[256];    /* the scenario's description: which fault, which setting */
    char expected[256]; /* "violations 0; faults[0].acquired >0" */
    struct matrix_run *runs;
    size_t n_runs;
    size_t matched;
};

struct matrix {
    char dir[512];     /* the scenarios' folder */
    char out_dir[512]; /* where matrix.md, matrix.json and the runs go */
    size_t seeds;
    struct matrix_row rows[MATRIX_MAX_ROWS];
    size_t n;
    bool complete;  /* every run of every row ran to its end and could be judged */
    bool cut_short; /* interrupted: some runs are missing */
    double elapsed_s;
    double percentiles[RESULT_MAX_PERCENTILES]; /* --percentiles; none: the default set */
    size_t n_percentiles;
    /* where and how it ran (NULL: not known), and each server's version
     * as it answered (reports/meta.c) */
    const struct run_meta *meta;
    struct server_version versions[RESULT_MAX_SERVERS * 2];
    size_t n_versions;
    bool has_proxy; /* some run went through locklab's proxy */
};

/* Why the matrix is not complete, in a few words ("" when it is). */
const char *matrix_incomplete_note(const struct matrix *m);

/* The row's expectation in words, from its scenario. */
void matrix_expected(const struct scenario *s, char *buf, size_t len);
/* A run's figures from its finished result. */
void matrix_run_fill(struct matrix_run *m, const struct run_result *r);
/* Rows whose every run matched. */
size_t matrix_rows_matched(const struct matrix *m);
/* The table within 120 columns (what has no room beside the others, the
 * expectation, on the line under each row), or with wide one line per
 * row however long (--wide). */
void matrix_terminal(FILE *f, const struct matrix *m, bool wide);
/* 0, or -1 with errno set. */
int matrix_markdown(const char *path, const struct matrix *m);
int matrix_json(const char *path, const struct matrix *m);
/* matrix.html: one row per known result, expected against observed, each
 * seed's figure linked to its run's report.html. */
int matrix_html(const char *path, const struct matrix *m);

#endif
