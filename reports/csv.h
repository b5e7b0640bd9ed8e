/* csv.h - the CSV that `run`, `compare` and `matrix` print on stdout with
 * --csv, for spreadsheets and scripts (as redis-benchmark --csv): one
 * header line, then one line per operation, per algorithm, or per row and
 * seed. RFC 4180 quoting (a field with a comma, a quote or a line break is
 * quoted, its quotes doubled); lines end in "\n"; a figure that does not
 * apply is an empty field. The columns are in docs/outputs.md. */
#ifndef LOCKLAB_CSV_H
#define LOCKLAB_CSV_H

#include <stdbool.h>
#include <stdio.h>

#include "reports/compare.h"
#include "reports/matrix.h"
#include "sim/check/result.h"

/* One field, after a comma unless first, quoted only when it must be
 * (RFC 4180, as above): the scorecard's CSV writes its fields with it. */
void csv_field(FILE *f, bool first, const char *s);
/* operation,count,per_second,mean_ms,<p>_ms...,errors,ambiguous,verdict,
 * safe,violations,invariants_hold,scenario,algorithm (the last six the
 * run's, on every line) */
void report_csv(FILE *f, const struct run_result *r);
/* algorithm,verdict,safe,violations,elapsed_s,steps,acquired,busy,errors,
 * per_second,<p>_ms...,fenced_pairs,rejected_accesses,invariants_hold,
 * run_dir,note,scenario,fault_windows,fault_granted,fault_granted_within,
 * fault_failed,fault_ambiguous,fault_longest_no_grant_ms,fault_recovered,
 * fault_recovery_ms,stuck_ms (new columns go at the end: scripts index
 * them) */
void compare_csv(FILE *f, const struct comparison *c);
/* row,algorithm,seed,verdict,matched,safe,violations,acquired,failed,
 * ambiguous,recovered,recovery_ms,stuck_ms,<p>_ms...,run_dir,failure */
void matrix_csv(FILE *f, const struct matrix *m);

#endif
