/* scorecard_plan.h - what `locklab scorecard` will run, worked out and
 * validated whole before anything starts: the suite, the rows (locks in
 * their libraries' default modes, fenced where they give tokens), and for
 * every cell the scenario it runs, or why the class cannot apply (n/a) or
 * the row cannot run (NOT RUN). */
#ifndef LOCKLAB_SCORECARD_PLAN_H
#define LOCKLAB_SCORECARD_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "reports/scorecard.h"
#include "sim/scenario/suite.h"

struct sc_opts {
    const char *suite;        /* a name in scenarios/scorecard/ or a file; default "quick" */
    const char *scenario;     /* the business scenario instead of the suite's */
    const char *algorithms;   /* rows: "redis,etcd@3.4,redis+fencing" */
    const char *classes;      /* columns: class names, "none,server_paused" */
    const char *only;         /* "LOCK/CLASS": one cell */
    const char *require_safe; /* "LOCK,...": exit 1 when one was unsafe anywhere */
    const char *out;
    const char *json_to;  /* --json FILE ("-": stdout) */
    const char *junit;    /* --junit FILE */
    long long seeds;      /* 0: the suite's */
    uint64_t duration_ms; /* --duration: every cell's length instead of the suite's */
    bool no_fenced_rows;
    bool dry_run; /* --plan: print what each cell would run, start nothing */
    int quiet;
    int csv;
    int wide;      /* --wide: each grid cell on one line, however long */
    int to_stderr; /* stdout is the tool's (--csv, --json -) */
};

struct sc_plan {
    struct suite suite;
    json_t *base; /* the business scenario as its file holds it */
    struct suite_lock locks[SCORECARD_MAX_ROWS];
    size_t n_rows;
    size_t cls[SCORECARD_MAX_CLASSES]; /* the suite's classes shown, by index */
    size_t n_cls;
    /* A cell's scenario (NULL: it does not run) and its file's text. */
    struct scenario *scn[SCORECARD_MAX_ROWS][SCORECARD_MAX_CLASSES];
    char *text[SCORECARD_MAX_ROWS][SCORECARD_MAX_CLASSES];
};

/* o's scorecard planned into p and sc (both zeroed): rows, classes and
 * every cell's scenario or the reason it does not run. 0, or an exit
 * code after the one-line error. */
int scorecard_plan(const struct sc_opts *o, struct sc_plan *p, struct scorecard *sc);
void scorecard_plan_free(struct sc_plan *p);

#endif
