/* compare_parts.h - the parts of a comparison that tell its story over
 * time (compare_parts.c): what each row keeps of its run beyond the
 * totals, and how compare.html and compare.json show it. Private to
 * compare.c, csv.c (its fault cost) and tests/unit/test_compare_parts.c. */
#ifndef LOCKLAB_COMPARE_PARTS_H
#define LOCKLAB_COMPARE_PARTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "reports/compare.h"

/* The table's latency columns: p50, p99, p99.9, max (p90 stays in the
 * per-run reports, to keep one line per algorithm readable). */
#define COMPARE_N_SHOWN 4
/* A row's figures as the two tables print them; "-" for what was not
 * measured (a row that did not run, latency without an acquire). */
struct compare_cells {
    char latency[COMPARE_N_SHOWN][16];
    char qps[24], fair[24], failed[24], violations[24], fenced_pairs[24], rejected[24];
    char ttl[16], lease[16], stuck[24];
};

void compare_row_cells(const struct compare_row *row, struct compare_cells *x);
/* The safety of every run (each seed of each row), an unsafe row named once. */
struct report_safety_sum compare_safety_sum(const struct comparison *c);
/* Where a row's (or seed's) run folder is, from the comparison's folder. */
const char *compare_below(const struct comparison *c, const char *run_dir);

/* The per-second series, the faults as lived and the effective settings
 * of r, into row (the rest of it filled already). */
void compare_row_keep(struct compare_row *row, const struct run_result *r);
/* What a row's fault windows cost it, summed over them: the cost table's
 * figures (compare_cost_table) in one row, for the CSV and compare.json's
 * fault_cost. A fault with no window (it did not fire) is not counted. */
struct fault_cost compare_fault_cost(const struct compare_row *row);

/* Into a row's JSON object: "faults" (each fault's window and its cost),
 * "fault_cost" (their sum, compare_fault_cost) and "settings"; null for a
 * row that did not run. */
void compare_row_parts_json(json_t *o, const struct compare_row *row);
/* The scenario's faults as planned, for compare.json's "faults". */
json_t *compare_planned_faults_json(const struct comparison *c);

/* compare.html: locks acquired and acquire p99 per interval, one series
 * per algorithm, with the fault bands. */
void compare_time_charts(FILE *f, const struct comparison *c);
/* compare.html: what each fault window cost each algorithm. */
void compare_cost_table(FILE *f, const struct comparison *c);
/* compare.html: each algorithm's effective settings, as `show` prints them. */
void compare_settings_block(FILE *f, const struct comparison *c);

/* A label for a bar that ends at x_end (from x0 at the frame's left) in a
 * frame ending at frame_right: inside the bar when it fits there, else
 * beside it; its width given as textLength, so where it ends is known. */
void compare_bar_label(FILE *f, double x0, double x_end, double frame_right, double y,
                       const char *text);

#endif
