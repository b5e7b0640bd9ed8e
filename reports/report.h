/* report.h - renderers of a finished run. Each reads struct run_result and
 * nothing else. */
#ifndef LOCKLAB_REPORT_H
#define LOCKLAB_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/check/result.h"

/* What a run is about to do, printed before it starts (so a log shows it
 * while the run goes on): the command's settings after every default, and
 * the servers. */
void report_header(FILE *f, const struct scenario *s, const char (*servers)[RESULT_SERVER_LEN],
                   size_t n_servers);
/* The summary a person reads on the terminal after the header; ends with
 * the verdict line "End of run: " and report_verdict_line. */
void report_terminal(FILE *f, const struct run_result *r, int max_violations);
/* The verdict alone, for --quiet and each run of a comparison or matrix:
 * "End of run: PASS (expected UNSAFE: 110 violations)  runs/x/". */
void report_brief(FILE *f, const struct run_result *r);

/* The "!!! violation" lines, at most max, then a count of the rest.
 * Needs only sections, spans, check, hist and t0_mono_ns of r. */
void report_violations(FILE *f, const struct run_result *r, int max);
/* The history's fault spans with their availability (`locklab check`). */
void report_spans(FILE *f, const struct run_result *r);
/* "lost at release: N grants lost while held, ..." when there were any
 * (run_result.lost_at_release). */
void report_lost_at_release(FILE *f, const struct run_result *r);
/* "invariants:" and a line for each, ok or !!!, as the run prints them
 * (and `check` of a latch's history). */
void report_invariants(FILE *f, const struct run_result *r);

/* Files in the run folder. Each returns 0, or -1 with errno set. */
int report_json(const char *path, const struct run_result *r);
int report_markdown(const char *path, const struct run_result *r);
/* One <op>.hgrm per operation that has samples, values in milliseconds. */
int report_hgrm_files(const char *dir, const struct run_result *r);
/* report.html: the charts and tables on one self-contained page (html.c). */
int report_html(const char *path, const struct run_result *r);
/* Close a report file written with stdio: 0, or -1 (errno set, EIO when
 * stdio left it unset) when any write or the close failed. */
int report_close(FILE *f);
/* One <op>.hlog per operation: its per-second histograms (hlog.h). */
int report_hlog_files(const char *dir, const struct run_result *r);

/* --- shared by the renderers ------------------------------------------- */
/* The colour of a lock, by its registry name: the same on every page
 * (compare.html, matrix.html, scorecard.html), whatever else is drawn
 * beside it; never red (red marks what went wrong). A name the registry
 * does not know gets a dark grey no lock has. (reports/svg.c) */
const char *report_algorithm_colour(const char *name);
/* The columns of every latency table: p50, p90, p99, p99.9 and max. */
#define REPORT_N_PERCENTILES 5
extern const double report_percentiles[REPORT_N_PERCENTILES];
/* The percentiles r shows (r->percentiles, or report_percentiles when
 * none was chosen) into *p; their count. */
size_t report_chosen_percentiles(const struct run_result *r, const double **p);
/* The percentiles r shows of h, in ms, into ms (room for
 * RESULT_MAX_PERCENTILES) when h counted a sample; whether it did. */
bool report_chosen_ms(const struct run_result *r, const struct histogram *h, double *ms);
/* The same for a set kept elsewhere (a comparison's, a matrix's). */
size_t report_percentiles_or_default(const double *set, size_t n, const double **p);
/* --percentiles' value, memtier's spelling "50,99,99.9,99.99": at most
 * RESULT_MAX_PERCENTILES numbers, each 0 < p <= 100, none twice, into p
 * in the order given. Their count, or 0 with the bad value named in why. */
size_t report_parse_percentiles(const char *s, double *p, char *why, size_t len);
/* A percentile's key in report.json's "percentiles", as memtier's JSON
 * spells them: "p50.00", "p99.90", "p99.999", "p100.00": at least two
 * decimals, more when p has them. */
const char *report_percentile_key(double p, char *buf, size_t len);
/* {"p50.00": ms[0], ...} at the percentiles of set (or the default set
 * when n is 0); null when has is false (no sample). */
json_t *report_percentiles_json(const double *set, size_t n, const double *ms, bool has);
/* A percentile's column name: "p50", "p99.9", "max" for 100. */
const char *report_percentile_label(double p, char *buf, size_t len);
const char *report_op_name(int op); /* "acquire", "acquire_failed", ... */
const char *report_effect_name(int effect);
/* Whole milliseconds as seconds, exactly: "20", "1.235", "86400". */
const char *report_seconds(uint64_t ms, char *buf, size_t len);
/* A fencing token as printed: the number, or "-" for a grant without one. */
const char *report_token(uint64_t token, char *buf, size_t len);
/* The workload and its settings on one line: "flash_sale items=10 ...". */
const char *report_workload(const struct scenario *s, char *buf, size_t len);
/* The effective settings (scenario_resolve's values and notes): lock,
 * algorithm, workload lines, as the run header and `show` print them. */
void report_settings(FILE *f, const struct scenario *s);
/* What s expects, on one line without its end: "violations >0,
 * invariants broken[, rejected_accesses >0]" (show and list). */
void report_expectation(FILE *f, const struct scenario *s);
/* report.json's "scenario" object; `show --json` prints the same. */
json_t *report_scenario_json(const struct scenario *s);
/* "ok", "!!!" (safety broken) or "~" (availability lost: advisory) */
const char *report_invariant_mark(const struct invariant *inv);
/* Seconds since the run's start line. */
double report_rel_s(const struct run_result *r, uint64_t mono_ns);
/* A fault as planned, in words: "kill one, back after 1.000 s, data lost",
 * "client_pause the next holder for 2.000 s". */
/* A fault as the scenario states it, for report.json and `show --json`. */
json_t *report_fault_spec_json(const struct fault_spec *f);
const char *report_fault_plan(const struct fault_spec *f, char *buf, size_t len);
/* What a fault did, in words: its servers and signals, or its client. */
const char *report_fault_done(const struct run_result *r, const struct fault_record *x, char *buf,
                              size_t len);
/* What a fault window cost, in words: "12 granted, 3 failed, 0 ambiguous;
 * longest no grant 0.350 s; recovered 0.045 s after its end". */
const char *report_availability(const struct fault_availability *a, uint32_t type, char *buf,
                                size_t len);
/* The same as report.json writes it (times in ms, recovery null for never). */
json_t *report_availability_json(const struct fault_availability *a);
/* Fault windows' cost added up: counts summed, the longest no grant and
 * the slowest recovery of any window. Start from FAULT_COST_NONE. */
struct fault_cost {
    size_t windows;
    uint64_t granted, granted_within, failed, ambiguous; /* summed */
    double longest_no_grant_ms;                          /* the longest of any window */
    bool recovered;                                      /* every window was followed by a grant */
    double recovery_ms; /* the slowest recovery; meaningful only when recovered */
};
#define FAULT_COST_NONE ((struct fault_cost){.recovered = true})
void report_fault_cost_add(struct fault_cost *x, const struct fault_availability *a);
/* What the checker found, in words: "2808 sections, 117 violations (117
 * overlapping pairs)", "..., 0 violations (5 overlapping pairs, 5 of them
 * made safe by fencing)": the count that decides first, never "safe"
 * beside it. Returns buf. */
const char *report_checker(const struct check_result *c, char *buf, size_t len);
/* A stretch of a key with waiters and no holder counts as stuck when it is
 * longer than the lock's longest retry back-off (the scenario's
 * retry_max_ms): a polling lock leaves one up to that long at every
 * hand-over by design. One rule for the summary, the page, compare, the
 * matrix and the scorecard; report.json's stuck_locks keeps every key's
 * longest. 0 when the run's scenario is not known (locklab check). */
uint64_t report_stuck_floor_ns(const struct run_result *r);
/* The longest stretch that counts, in ms; 0 when none does. */
double report_stuck_ms(const struct run_result *r);
/* The stuck locks in a line: "longest 1.204 s on lock:stock:3 from 2.310 s
 * (4 keys had waiters and no holder longer than the 50 ms retry
 * back-off)"; NULL when none counts. */
const char *report_stuck(const struct run_result *r, char *buf, size_t len);
/* The same as report.json's "stuck_locks" (the 10 longest keys). */
json_t *report_stuck_json(const struct run_result *r);
/* The host stalls in a line: "41 of 10 ms or more, longest 0.472 s at
 * 2.523 s, 1.9 s in all; the lock rides out a holder's stall of 200 ms";
 * NULL when the meter did not run. */
const char *report_host(const struct run_result *r, char *buf, size_t len);
/* The same as report.json's "host" (the 10 longest stalls). */
json_t *report_host_json(const struct run_result *r);
/* A fault span of the history in a few words: "kill redis-2", "client_pause (client 3)". */
const char *report_span_name(const struct run_result *r, const struct fault_span *f, char *buf,
                             size_t len);
/* "client_pause(client 7)" list of the faults active in a violation. */
void report_violation_faults(const struct run_result *r, const struct violation *v, char *buf,
                             size_t len);
/* A failed expectation, or NULL when the run passed: "violations: expected 0, got 12". */
const char *report_failure(const struct run_result *r, char *buf, size_t len);
/* printf onto buf[*used..len), moving *used on; text that does not fit is
 * cut, and later calls add nothing. */
__attribute__((format(printf, 4, 5))) void report_append(char *buf, size_t len, size_t *used,
                                                         const char *fmt, ...);
/* Errors of one operation whose outcome is unknown: all errors less the
 * ones surely not in effect. */
uint64_t report_ambiguous(const struct run_result *r, int errors, int no_effect);
/* "acquire: 9 ok, 1 busy, 0 no effect, 0 ambiguous;  release: ...;  renew: ...", into buf. */
const char *report_op_counts(const struct run_result *r, char *buf, size_t len);
/* The run's verdict word: "INCOMPLETE", "PASS" or "FAIL". */
const char *report_verdict(const struct run_result *r);

/* --- fairness (locktorture's Max/Min) ------------------------------------
 * How evenly the lock went round: acquisitions per client, the most and
 * the fewest. A retry-with-backoff lock lets some clients starve; a queue
 * serves them in turn. */
struct report_fairness {
    uint32_t clients;
    uint64_t total, max, min;
    uint32_t at_max, at_min; /* the clients with the most and the fewest */
};
/* Acquisitions per client into a new array of r's clients (free it), and
 * the figures into *out; NULL (out zeroed) with no client or no memory. */
uint64_t *report_fairness(const struct run_result *r, struct report_fairness *out);
/* "1.23", "inf" when a client never got the lock, "-" with no client. */
const char *report_fairness_ratio(const struct report_fairness *fr, char *buf, size_t len);

/* --- safety: whether the lock kept mutual exclusion ----------------------
 * A verdict says whether the expectation held; a scenario known to be
 * unsafe PASSes with violations. So every verdict a person reads carries
 * the safety beside it, worded here and nowhere else. */
struct report_safety {
    bool safe;                  /* no violation (a fenced pair is safe) */
    uint64_t violations;        /* the checker's */
    uint64_t invariants_broken; /* safety invariants (not advisory) that broke */
    bool so_far;                /* the record is cut short: more may have happened */
    bool host_made;             /* every violation came of a host stall past the lease */
};
struct report_safety report_safety_of(const struct run_result *r);
/* "safe", "safe so far", "safe, but 1 invariant broken", "UNSAFE: 110
 * violations, 3 invariants broken", "UNSAFE so far: 3 violations",
 * "UNSAFE: 2 violations, all in host stalls". */
const char *report_safety_text(const struct report_safety *s, char *buf, size_t len);
/* The class of a badge or cell: "SAFE", "UNSAFE", or "CAUTION" (safe so
 * far, or safe with a broken invariant). */
const char *report_safety_class(const struct report_safety *s);
/* {safe, violations, invariants_broken, so_far, host_made, text} */
json_t *report_safety_json(const struct report_safety *s);
/* A verdict word with the safety beside it: "PASS (safe)", "PASS
 * (expected UNSAFE: 110 violations)", "FAIL (UNSAFE: 2 violations)". */
const char *report_verdict_safety(const char *verdict, const struct report_safety *s, char *buf,
                                  size_t len);
/* The run's verdict with its safety (report_verdict_safety). */
const char *report_verdict_brief(const struct run_result *r, char *buf, size_t len);
/* The same and why it failed or is incomplete, what follows "End of run: ":
 * "FAIL (UNSAFE: 12 violations) - violations: expected 0, got 12",
 * "INCOMPLETE (safe so far) - interrupted after 2.0 s; so far the expectations held". */
const char *report_verdict_line(const struct run_result *r, char *buf, size_t len);

/* The safety of several runs (compare's algorithms, the matrix's seeds). */
struct report_safety_sum {
    size_t runs, unsafe;
    uint64_t violations;
    bool so_far;
    char names[256]; /* the unsafe runs' names, as given to report_safety_add */
};
/* Count one run in; name (or NULL) is listed when the run was unsafe. */
void report_safety_add(struct report_safety_sum *sum, const struct report_safety *s,
                       const char *name);
/* "safe (3 runs)", "UNSAFE: 280 violations in 3 of 3 runs (redis, redlock,
 * zookeeper)", "nothing ran". */
const char *report_safety_sum_text(const struct report_safety_sum *sum, char *buf, size_t len);
/* A table cell's word: "safe", "UNSAFE", "UNSAFE 2/3" (runs unsafe / run), "-". */
const char *report_safety_sum_word(const struct report_safety_sum *sum, char *buf, size_t len);
/* "SAFE", "UNSAFE", "CAUTION" (safe so far) or "NOTRUN". */
const char *report_safety_sum_class(const struct report_safety_sum *sum);
/* {safe (null when nothing ran), runs, unsafe_runs, violations, so_far, text} */
json_t *report_safety_sum_json(const struct report_safety_sum *sum);
/* How the load was offered, in a sentence: "closed loop: ..." or "open
 * loop at 200 steps/s: 3990 of 4000 due steps began, up to 2.013 s behind
 * schedule (mean 0.012 s); latency counts from each step's due time". */
const char *report_load(const struct run_result *r, char *buf, size_t len);
/* The same as report.json's "load". */
json_t *report_load_json(const struct run_result *r);

/* report.json's, compare.json's and matrix.json's "meta" (reports/meta.c):
 * m's build, command line and host, started_wall_ns as ISO 8601 UTC, the
 * servers v[0..n) as they answered and, when proxy, locklab's own proxy.
 * null when m is NULL. */
json_t *report_meta_json(const struct run_meta *m, uint64_t started_wall_ns,
                         const struct server_version *v, size_t n, bool proxy);
/* What every form of the meta shows beyond m: the start as ISO 8601 UTC,
 * and the servers v[0..n) with, when proxy, the proxy. */
struct report_meta_shown {
    char when[40];
    struct server_version all[RESULT_MAX_SERVERS * 2 + 1];
    size_t n;
};
void report_meta_shown(const struct run_meta *m, uint64_t started_wall_ns,
                       const struct server_version *v, size_t n, bool proxy,
                       struct report_meta_shown *out);
/* v's servers into[0..*n) (at most max) unless one of the same kind,
 * version and, when by_address, address is there; without by_address the
 * address is dropped (a matrix's runs each start their own servers). */
void report_meta_merge(struct server_version *into, size_t *n, size_t max,
                       const struct server_version *v, size_t nv, bool by_address);
/* The same in one line of text, for report.md: "Ran on HOST (...),
 * locklab V (COMMIT), WHEN; servers: redis 7.0.15, ...; command: `...`". */
void report_meta_line(FILE *f, const struct run_meta *m, uint64_t started_wall_ns,
                      const struct server_version *v, size_t n, bool proxy);
/* "2026-11-26T17:58:33.123Z" */
void report_meta_time(uint64_t wall_ns, char *buf, size_t len);

#endif
