/* scorecard.h - every lock through one fault suite on one business
 * scenario: rows are locks (a lock in each of its library's default modes,
 * and fenced where it gives tokens), columns the suite's fault classes,
 * cells the runs of one class on one lock in N seeds. Filled by
 * sim/cli/cmd_scorecard.c from finished runs; rendered here as the
 * terminal grid, scorecard.md, scorecard.json (docs/schema), CSV, JUnit
 * XML and scorecard.html. Plain data: a renderer sees no engine.
 *
 * A cell is judged by what happened in it (violations, broken
 * invariants), never by an expectation written for another lock. */
#ifndef LOCKLAB_SCORECARD_H
#define LOCKLAB_SCORECARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/record/run_meta.h"

#define SCORECARD_MAX_ROWS    40
#define SCORECARD_MAX_CLASSES 16
#define SCORECARD_MAX_SEEDS   10

/* One seed of one cell: what its run showed. */
struct scorecard_run {
    uint64_t seed;
    char run_dir[512]; /* its folder: report.html, report.json, scenario.json */
    bool ran;          /* false: it could not start; why says so */
    bool complete;     /* false: INCOMPLETE (a server or fault failed, Ctrl-C) */
    bool safe;         /* no violation and every invariant held */
    uint64_t violations;
    uint64_t fenced_pairs; /* overlaps a fence turned away */
    bool invariants_hold;
    char broken[160];         /* the invariants that broke, "no_oversell, stock_accounting" */
    uint64_t acquired;        /* grants in the whole run */
    uint64_t failed;          /* acquires that failed (busy, error), whole run */
    uint64_t ambiguous;       /* acquires whose outcome is unknown (info), whole run */
    uint64_t lost_at_release; /* grants the holder learned at release it had lost */
    double qps;               /* grants per second */
    double p50_ms, p99_ms;    /* acquire latency, whole run; -1: no grant */
    double fairness;          /* most grants of a client over the fewest; -1: inf */
    /* the fault window (the class's first fault that fired); has_window
     * false for the no-fault class or a fault that never fired */
    bool has_window;
    uint64_t window_granted, window_failed, window_ambiguous;
    double window_p99_ms;       /* acquires begun in the window; -1: none granted */
    double longest_no_grant_ms; /* waiters and no holder, inside the window */
    double recovery_ms;         /* from the fault's end (start, for a kill); -1: never */
    double stuck_ms;            /* the run's longest stretch of a key with waiters and no holder */
    char why[320];              /* UNSAFE: the checker's first violation group in one line;
                                   INCOMPLETE or not ran: why */
    char fault_truth[200];      /* what the fault really did: "SIGSTOP redis-1 (pid 42) ..." */
};

enum scorecard_state {
    CELL_NOT_RUN = 0, /* its row does not run (the lock cannot run the scenario) or Ctrl-C */
    CELL_NA,          /* the class cannot apply to this lock: na_why says why */
    CELL_RAN,         /* runs[0..n_runs) hold its seeds */
};

struct scorecard_cell {
    enum scorecard_state state;
    char na_why[240];
    char layout[96];    /* what it ran on: "1 redis", "3 etcd members" */
    double lease_ms;    /* the lease its lock really had; 0: none (a lock with no lease) */
    char scenario[512]; /* the generated scenario, kept in the cell's folder */
    char command[800];  /* the `locklab run ...` that reproduces seed 1 */
    struct scorecard_run runs[SCORECARD_MAX_SEEDS];
    size_t n_runs;          /* seeds that ran (or tried) */
    size_t n_unsafe;        /* of them, not safe */
    size_t n_incomplete;    /* of them, not complete or not ran */
    char known[96];         /* the known-results row (scenarios/matrix) that shows the same */
    char known_source[200]; /* whose finding it is: "Kleppmann 2016", "etcd #11456" */
    bool known_unsafe;      /* what that finding says: violations */
};

/* A fault class, as the suite describes it (docs/scorecard.md). */
struct scorecard_class {
    char name[40];    /* "holder_paused_past_lease" */
    char title[64];   /* "holder paused past its lease" */
    char short_[16];  /* the terminal's column head: "pause>L" */
    char strikes[64]; /* the role it strikes: "the holder", "every lock server" */
    char size[96];    /* its size in leases: "2.5 leases from 1 lease" */
    char layout[32];  /* "default" or "replicated" */
};

struct scorecard_row {
    char label[96];     /* "etcd (clientv3 3.4, no re-check)", "redis + fencing" */
    char algorithm[32]; /* the lock's registry name */
    char mode[96];      /* the library mode it runs: "watchdog on"; "" */
    bool fencing;       /* the resource checks the tokens */
    char not_run[256];  /* why the whole row does not run; "" when it does */
    struct scorecard_cell cells[SCORECARD_MAX_CLASSES];
};

struct scorecard {
    char suite[64]; /* "quick" */
    char suite_path[512];
    char description[256];
    char scenario[64]; /* the business scenario's name: "flash_sale" */
    char scenario_path[512];
    uint32_t ttl_ms; /* the one lease asked of every lock */
    size_t seeds;    /* each cell in this many seeds */
    uint64_t first_seed;
    char out_dir[512];
    const struct run_meta *meta; /* where and how it ran; NULL: unknown */
    struct scorecard_class classes[SCORECARD_MAX_CLASSES];
    size_t n_classes;
    struct scorecard_row rows[SCORECARD_MAX_ROWS];
    size_t n_rows;
    bool complete;  /* every cell ran to its end */
    bool cut_short; /* Ctrl-C: the grid is partial */
    double elapsed_s;
    char require_safe[256]; /* --require-safe's list, "" when none */
};

struct run_result;
/* One seed of a cell from its finished run (reports/scorecard_fill.c). */
void scorecard_run_fill(struct scorecard_run *out, const struct run_result *r);

/* The cell's verdict word: "safe", "UNSAFE", "UNSAFE 1/3", "INCOMPLETE",
 * "n/a", "NOT RUN". UNSAFE wins over INCOMPLETE: a violation seen in a
 * run cut short still happened. Read from n_runs, n_unsafe and
 * n_incomplete. */
const char *scorecard_cell_word(const struct scorecard_cell *c, char *buf, size_t len);
/* The class that no fault strikes ("none"), or -1. */
int scorecard_baseline(const struct scorecard *sc);
/* The answer in one line: the locks safe in every class that ran, by
 * their no-fault P99, each with its cost in its worst class. */
const char *scorecard_answer(const struct scorecard *sc, char *buf, size_t len);
/* The rows --require-safe names that were unsafe somewhere ("" none):
 * a name is a row's label, or else every row of that algorithm. */
const char *scorecard_required_unsafe(const struct scorecard *sc, char *buf, size_t len);

/* --- shared by the renderers (scorecard.c) ------------------------------ */

/* Whether --require-safe names this row and it was unsafe somewhere. */
bool scorecard_row_required_unsafe(const struct scorecard *sc, const struct scorecard_row *row);

/* What a cell came to, as the colour of its square and the "verdict" of
 * scorecard.json: MIXED is a cell whose seeds differ (unsafe in some). */
enum scorecard_verdict {
    SCV_SAFE,
    SCV_UNSAFE,
    SCV_MIXED,
    SCV_INCOMPLETE,
    SCV_NA,
    SCV_NOT_RUN,
};
enum scorecard_verdict scorecard_cell_verdict(const struct scorecard_cell *c);
/* A cell safe in every seed though its known result is published unsafe:
 * the class's shape did not reproduce the finding (its holds ended before
 * the protection failed, say), which a reader must not take for the lock
 * being safe there. Its sentence, with the command that runs the known
 * result's own scenario, into buf; NULL when the cell agrees. */
const char *scorecard_known_unmet(const struct scorecard_cell *c, char *buf, size_t len);
/* fn (when not NULL) on each such cell (row r, class k) with its
 * sentence, in grid order; how many there were. */
size_t scorecard_each_unmet(const struct scorecard *sc,
                            void (*fn)(void *arg, size_t r, size_t k, const char *text), void *arg);
/* "safe", "unsafe", "mixed", "incomplete", "na", "not_run". */
const char *scorecard_verdict_name(enum scorecard_verdict v);

/* What a cell cost, from its worst seed. Availability first: a stretch
 * with waiters and no grant (the window's longest, the recovery, the
 * run's longest stuck key) longer than the cell's lease (the ttl for a
 * lock with no lease) is the cost; a window that never recovered is the
 * worst; else the cost is the P99 (the window's; the whole run's for the
 * no-fault class or a cell without a window). */
enum scorecard_cost_kind { COST_P99, COST_STRETCH, COST_NEVER };
struct scorecard_cost {
    enum scorecard_cost_kind kind;
    double ms;     /* the stretch or the P99; -1: no grant to measure */
    double p99_ms; /* the P99 as above, whatever the kind; -1: none */
    double gap_ms; /* the longest stretch, whatever the kind */
};
struct scorecard_cost scorecard_cell_cost(const struct scorecard *sc,
                                          const struct scorecard_cell *c, size_t cls);
/* Whether a cost is worse than another (never > stretch > P99, then ms). */
bool scorecard_cost_worse(const struct scorecard_cost *a, const struct scorecard_cost *b);

/* The grid's word for a cell: "safe", "stuck" (safe, availability lost
 * past a lease), "UNSAFE", "INCOMP", "n/a", "NOT RUN"; and its one figure:
 * "2.1ms" (P99), "1.2s" or "never" (stuck), "41v" (violations, all seeds
 * unsafe), "1 of 3" (seeds that differ), "" (n/a, NOT RUN). */
const char *scorecard_grid_word(const struct scorecard *sc, const struct scorecard_cell *c,
                                size_t cls);
const char *scorecard_grid_figure(const struct scorecard *sc, const struct scorecard_cell *c,
                                  size_t cls, char *buf, size_t len);
/* Milliseconds for a cell: "0.25 ms", "2.1 ms", "340 ms", "1.2 s", "12 s";
 * compact drops the space ("2.1ms"); "-" for a negative figure. */
const char *scorecard_ms(double ms, bool compact, char *buf, size_t len);
/* A run's verdict: "safe", "UNSAFE", "INCOMPLETE", "NOT RUN". */
const char *scorecard_run_word(const struct scorecard_run *r);

/* A row that stayed safe everywhere: it ran, every cell that ran was safe
 * in every seed, and none was INCOMPLETE. */
bool scorecard_row_safe(const struct scorecard_row *row);
/* One lock of the answer: its row, its no-fault P99 (the worst seed's,
 * -1 when the no-fault cell did not run), its worst class (-1 when no
 * fault class ran) and what that cost. */
struct scorecard_pick {
    size_t row;
    double p99_ms;
    int worst;
    struct scorecard_cost cost;
};
/* The answer's locks in its order into picks[0..max); their count. */
size_t scorecard_picks(const struct scorecard *sc, struct scorecard_pick *picks, size_t max);
/* The whole scorecard's verdict, as its exit code: "INCOMPLETE" (some
 * cell could not be judged, or cut short), "FAIL" (a lock --require-safe
 * names was unsafe), "PASS". */
const char *scorecard_verdict(const struct scorecard *sc);
/* What follows "End of scorecard: ": the verdict and the counts, "PASS -
 * 2 of 5 locks safe in every class (11 classes, 3 seeds each), 540 s;
 * UNSAFE in 14 of 52 cells that ran, 3 n/a". */
const char *scorecard_end_text(const struct scorecard *sc, char *buf, size_t len);
/* A row's leases (lease) or layouts (!lease) over its cells that ran:
 * the most common first, then each other with the heads of the classes
 * that had it: "1 redis; 1 master, 1 replica, 3 sentinels (leader)";
 * the count of distinct ones. */
size_t scorecard_row_grouped(const struct scorecard *sc, const struct scorecard_row *row,
                             bool lease, char *buf, size_t len);
/* Cells that ran, and of them how many were unsafe in some seed. */
void scorecard_counts(const struct scorecard *sc, size_t *ran, size_t *unsafe, size_t *na);
/* path below the scorecard's folder as a link from it ("redis/none/seed-1"),
 * or path itself when it lies elsewhere. */
const char *scorecard_rel(const struct scorecard *sc, const char *path);

/* The grid within 120 columns (each cell's figure under its word when one
 * line has no room), or with wide each cell on one line however long. */
void scorecard_terminal(FILE *f, const struct scorecard *sc, bool wide);
void scorecard_csv(FILE *f, const struct scorecard *sc);
/* 0, or -1 with errno set. */
int scorecard_markdown(const char *path, const struct scorecard *sc);
int scorecard_json(const char *path, const struct scorecard *sc);
int scorecard_junit(const char *path, const struct scorecard *sc);
int scorecard_html(const char *path, const struct scorecard *sc);

#endif
