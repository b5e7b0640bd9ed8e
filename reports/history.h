/* history.h - runs over time: every report.json under a folder (run
 * folders, and those inside compare and matrix folders) read into one
 * index, grouped in series (one per scenario name x algorithm x settings
 * key, reports/history_key.h) in time order, each run held to the earlier
 * runs of its series so a regression stands out; then history.json,
 * history.html and the terminal's table (`locklab history`,
 * docs/history-index.md).
 *
 * The rule: a complete run is flagged when its acquire p99 is more than
 * HISTORY_P99_FACTOR times the median p99 of the earlier complete runs of
 * its series, or its QPS (locks acquired per second) under
 * HISTORY_QPS_FACTOR times their median QPS; any run is flagged when it is
 * UNSAFE and the run before it in its series was safe.
 */
#ifndef LOCKLAB_HISTORY_INDEX_H
#define LOCKLAB_HISTORY_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HISTORY_P99_FACTOR 1.5
#define HISTORY_QPS_FACTOR (2.0 / 3.0)
/* Folders searched below DIR: DIR/compare/algorithm is 2, DIR/matrix/row/seed 3. */
#define HISTORY_MAX_DEPTH 4
#define HISTORY_PATH      1024

/* What flagged a run, as bits. */
enum { HISTORY_P99 = 1, HISTORY_QPS = 2, HISTORY_SAFETY = 4 };

struct json_t;

struct history_run {
    char scenario[128], algorithm[64];
    uint64_t key;              /* FNV-1a 64 of the key object's canonical text */
    struct json_t *settings;   /* the key object (history_key.h), owned */
    uint64_t series_start;     /* start_ns of its series's first run: the order of series */
    char started_at[40];       /* as report.json writes it: ISO 8601 UTC */
    uint64_t start_ns;         /* its start_wall_ns: the order of a series */
    char folder[HISTORY_PATH]; /* the run folder, as found under DIR */
    char verdict[16];          /* PASS, FAIL, INCOMPLETE */
    bool complete;
    double qps;            /* locks acquired per second */
    double p50_ms, p99_ms; /* acquire latency; NAN when nothing was acquired */
    bool safe;
    uint64_t violations;
    char safety[160]; /* report.json's safety.text: "safe", "UNSAFE: 3 violations" */
    /* held to the earlier runs of its series */
    unsigned flags;               /* HISTORY_P99 | HISTORY_QPS | HISTORY_SAFETY */
    size_t earlier;               /* complete earlier runs with figures: the baseline's size */
    double base_p99_ms, base_qps; /* their medians; NAN when none */
};

struct history_skip {
    char path[HISTORY_PATH + 16]; /* the report.json */
    char why[256];
};

struct history_series {
    size_t first, n; /* runs[first .. first + n) of the index */
    /* the earlier series of the same scenario x algorithm whose settings
     * differ least from its own (the latest of those that tie), or
     * SIZE_MAX when it is the first of its name */
    size_t after;
    char differs[256]; /* in words: "rate 0.0 -> 500.0" */
};

struct history_index {
    char dir[HISTORY_PATH];
    /* sorted: scenario, algorithm, series (by its first run's start), then
     * start time */
    struct history_run *runs;
    size_t n_runs;
    struct history_skip *skipped;
    size_t n_skipped;
    struct history_series *series;
    size_t n_series;
    size_t regressions; /* runs with a flag */
};

/* Every report.json under dir (HISTORY_MAX_DEPTH folders down; links not
 * followed, so runs/latest is not counted twice) into idx, grouped and
 * flagged. A report.json that cannot be read is listed in idx->skipped.
 * 0, or -1 with err set when dir is no folder that can be read (or memory
 * ran out). */
int history_index_build(const char *dir, struct history_index *idx, char *err, size_t errlen);
void history_index_free(struct history_index *idx);

/* The flags of a run in words: "p99 4.2x", "qps 0.31x", "UNSAFE"; "" when
 * none. */
const char *history_flag_text(const struct history_run *r, char *buf, size_t len);

/* "new series" for the first run of series s, with the settings that
 * differ from the series before it of its name ("new series: rate 0.0 ->
 * 500.0 (vs 1a2b3c4d)"); "" for any other run. */
const char *history_series_text(const struct history_index *idx, size_t s, size_t k, char *buf,
                                size_t len);

/* The short table on the terminal: one line per run, each series's runs
 * together and oldest first, then the skipped files. */
void history_table(FILE *f, const struct history_index *idx, bool wide);
/* history.json (docs/history-index.md, docs/schema/history.schema.json).
 * 0, or -1 with errno set. */
int history_json(const char *path, const struct history_index *idx);
/* history.html: a chart per series (p99 and QPS over its runs), the runs'
 * table, the regressions first. Links to each run's report.html lead from
 * out_dir, the folder the page is written into. 0, or -1 with errno set. */
int history_html(const char *path, const char *out_dir, const struct history_index *idx);

#endif
