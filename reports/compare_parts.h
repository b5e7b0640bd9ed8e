/* compare_parts.h - the parts of a comparison that tell its story over
 * time (compare_parts.c): what each row keeps of its run beyond the
 * totals, and how compare.html and compare.json show it. Private to
 * compare.c (and tests/unit/test_compare_parts.c). */
#ifndef LOCKLAB_COMPARE_PARTS_H
#define LOCKLAB_COMPARE_PARTS_H

#include <jansson.h>
#include <stdio.h>

#include "reports/compare.h"

/* The per-second series, the faults as lived and the effective settings
 * of r, into row (the rest of it filled already). */
void compare_row_keep(struct compare_row *row, const struct run_result *r);
/* Into a row's JSON object: "faults" (each fault's window and its cost)
 * and "settings"; null for a row that did not run. */
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
