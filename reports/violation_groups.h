/* violation_groups.h - the words every renderer uses for the violations
 * grouped by stale holder (sim/check/groups.h): the cause in one line, the
 * holders, which listed pairs fall in a group, and report.json's
 * "violation_groups". Private to reports/. */
#ifndef LOCKLAB_VIOLATION_GROUPS_H
#define LOCKLAB_VIOLATION_GROUPS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/check/groups.h"
#include "sim/check/result.h"

/* Whose grant was stale in g (groups_blame), judged on the lease the
 * lock really ran on (scenario_lease_ms, or the history's ttl_ms), none
 * for a lock without (lock_ops.leaseless), and r's late grants. */
struct group_blame report_group_blame(const struct run_result *r, const struct violation_group *g);
/* When the stale holder's lease as granted ran out at the latest: its
 * entry plus the lease, or for a late grant the stop it waited out plus
 * the lease (a lock that renews held it longer, if its renewals went
 * through). 0: no lease, or none known. */
uint64_t report_group_lease_end_ns(const struct run_result *r, const struct violation_group *g);
/* The cause in one line: "client 11 held the lock 1.012 .. 3.027 s;
 * its lease (ttl 500 ms) ran out at 1.512 s, 2 ms before the next holder
 * entered; during client_pause (client 11)". */
const char *report_group_cause(const struct run_result *r, const struct violation_group *g,
                               char *buf, size_t len);
/* "clients 0, 1, 2" (", and more" past the ones kept). */
const char *report_group_holders(const struct violation_group *g, char *buf, size_t len);
/* Whether listed pair v is one of g's: its first holder is g's. */
bool report_pair_in_group(const struct run_result *r, const struct violation *v,
                          const struct violation_group *g);
/* The fault spans at faults[0..n) (at most CHECK_MAX_FAULTS_PER_VIOLATION)
 * as report.json gives them: type, client, servers when noted. */
json_t *report_fault_spans_json(const struct run_result *r, const size_t *faults, size_t n);
/* "violation_groups" of report.json (docs/report-json.md); drawn_max: how
 * many report.html draws (groups_drawn). */
json_t *report_groups_json(const struct run_result *r, size_t drawn_max);
/* The "!!! group" lines: at most max groups, then a count of the rest. */
void report_group_lines(FILE *f, const struct run_result *r, size_t max);

#endif
