/* html_parts.h - the parts of report.html, shared by html.c (the page, its
 * sections in order) and the files that draw them: html_charts.c,
 * html_timelines.c and html_tables.c. Private to the renderers in reports/.
 * Each part writes into f and reads r alone.
 */
#ifndef LOCKLAB_HTML_PARTS_H
#define LOCKLAB_HTML_PARTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reports/report.h"
#include "reports/svg.h"

/* html_charts.c */
/* Where span s ends, in seconds of the run (its end, if it never ended). */
double html_span_end_s(const struct run_result *r, const struct fault_span *s);
/* The host stalls past the lock's slack that reach into [w0, w1] (ns), as
 * bands on c. */
void html_stall_bands(struct svg_chart *c, const struct run_result *r, uint64_t w0, uint64_t w1);
/* Steps per second, ok and failed, with the faults. */
void html_throughput_chart(FILE *f, const struct run_result *r);
/* Acquire latency per second (p50, p99, max) on a log axis, with the faults. */
void html_latency_chart(FILE *f, const struct run_result *r);
/* The percentile spectrum of every operation that has samples. */
void html_op_spectrum(FILE *f, const struct run_result *r);
/* Acquisitions per client: the max/min note and a bar per client. */
void html_fairness(FILE *f, const struct run_result *r);

/* html_timelines.c */
/* The lock timeline of group g of violations, the nth drawn (from 0). */
void html_group_timeline(FILE *f, const struct run_result *r, const struct violation_group *g,
                         size_t nth);

/* html_tables.c */
void html_operations_table(FILE *f, const struct run_result *r);
/* Or a note when the scenario has no faults. */
void html_faults_table(FILE *f, const struct run_result *r);
/* The violations by group, one row each, the listed pairs of each on
 * demand. */
void html_violations_table(FILE *f, const struct run_result *r);
/* With the checker's, the witness's, fencing's, stuck locks' and the
 * host's figures in a note below. */
void html_invariants_table(FILE *f, const struct run_result *r);
/* With the proxy's figures when there was one. */
void html_servers_table(FILE *f, const struct run_result *r);
/* The scenario as report.json has it, as indented JSON. */
void html_scenario_block(FILE *f, const struct run_result *r);

#endif
