/* cmd_check.c - `locklab check`: a history written by a run, read back and
 * checked again (sections, fault spans, the checker), its violations
 * listed and one verdict line; needs no server. The history is read in
 * one pass, each event handed to the consumers and forgotten, so a run of
 * any length is checked in the memory of its keys and open sections. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "algorithms/lock.h"
#include "reports/report.h"
#include "sim/check/check_pass.h"
#include "sim/check/checker.h"
#include "sim/cli/cli.h"
#include "sim/record/history.h"
#include "sim/record/history_reader.h"
#include "sim/scenario/scenario.h"

/* A history a latch wrote (redisson-latch) before its lines were
 * recorded: no section in it, and nothing to judge its rounds by. */
static bool latch_unjudged(const struct history *h)
{
    const struct lock_ops *ops = lock_find(h->algorithm);
    return ops && ops->latch && !h->latch.latches;
}

/* What --expect-invariants asks of a latch's invariants. */
enum want_inv { WANT_HOLD = 0, WANT_BROKEN };

/* The verdict line of a check, and its exit code. A history that did not
 * end (no end line: the writer died; or an end line saying incomplete)
 * never passes, as `run` never passes an interrupted run: what it did not
 * record could hold the violation. A violation it does show is a FAIL all
 * the same. */
static int check_verdict(const struct run_result *r, int met, const char *want, uint64_t got,
                         enum want_inv want_inv)
{
    const struct history *h = &r->hist;
    char why[320], tail[640], verdict[200];
    const char *word = "PASS";
    int rc = EXIT_PASS;
    if (result_host_made_violations(r, why, sizeof(why))) {
        snprintf(tail, sizeof(tail), "%s; violations expected %s, got %" PRIu64, why, want, got);
        word = "INCOMPLETE";
        rc = EXIT_ENV;
    } else if (latch_unjudged(h)) {
        /* an older latch history: its invariants were judged in its run's
         * memory alone, and "0 violations" of a latch says nothing */
        snprintf(tail, sizeof(tail),
                 "%s is a latch, and this history of it (from a locklab before the latch's "
                 "lines were recorded) holds none of its calls: its invariants are judged by "
                 "its run (report.json's invariants), not from the history",
                 h->algorithm);
        word = "INCOMPLETE";
        rc = EXIT_ENV;
    } else if (h->latch.latches && met && r->invariants_hold != (want_inv == WANT_HOLD)) {
        /* the latch's invariants, judged from its lines, as the run's verdict has them */
        snprintf(tail, sizeof(tail), "invariants: expected %s, got %s%s",
                 want_inv == WANT_HOLD ? "hold" : "broken", r->invariants_hold ? "hold" : "broken",
                 h->complete ? "" : " (in an incomplete history)");
        word = "FAIL";
        rc = EXIT_FAILED;
    } else if (!met) {
        snprintf(tail, sizeof(tail), "violations expected %s, got %" PRIu64 "%s", want, got,
                 h->complete ? "" : " (in an incomplete history)");
        word = "FAIL";
        rc = EXIT_FAILED;
    } else if (!h->complete) {
        char cause[700];
        if (!h->end_line)
            snprintf(cause, sizeof(cause), "the history has no end line (its writer stopped)");
        else if (h->incomplete_reason[0])
            snprintf(cause, sizeof(cause), "its end line says the run could not be judged: %s",
                     h->incomplete_reason);
        else
            snprintf(cause, sizeof(cause), "the run was cut short (its end line says incomplete)");
        snprintf(tail, sizeof(tail),
                 "%.*s; so far the expectations held - violations expected %s, got %" PRIu64,
                 (int)sizeof(tail) - 96, cause, want, got);
        word = "INCOMPLETE";
        rc = EXIT_ENV;
    } else {
        snprintf(tail, sizeof(tail), "violations expected %s, got %" PRIu64, want, got);
    }
    struct report_safety s = report_safety_of(r);
    printf("End of check: %s - %s\n", report_verdict_safety(word, &s, verdict, sizeof(verdict)),
           tail);
    return rc;
}

/* Check file in one pass over its events (check_pass.h): memory bounded
 * by its keys, clients and open sections, not its length. Fills res as
 * result_check_history would, but for the sections. 0, or the exit code. */
static int check_streamed(const char *file, struct run_result *res)
{
    char err[512];
    struct history_reader *rd = history_reader_open(file, err, sizeof(err));
    if (rd == NULL) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_USAGE;
    }
    struct history_event e;
    int got = history_reader_next(rd, &e); /* reads the start line too */
    const struct history *start = history_reader_header(rd);
    /* optimistic concurrency is judged by its writes: known by its name */
    const struct lock_ops *ops = lock_find(start->algorithm);
    struct check_pass *p =
        check_pass_begin((uint64_t)start->ttl_ms * 1000000u, ops && ops->optimistic);
    int rc = p ? 0 : -1;
    if (rc == 0 && start->latch.latches)
        rc = check_pass_latch(p, &start->latch); /* its rounds, from its lines */
    for (; rc == 0 && got == 1; got = history_reader_next(rd, &e))
        rc = check_pass_event(p, &e);
    if (got < 0 || rc == -2) {
        fprintf(stderr, "locklab: %s\n",
                got < 0 ? history_reader_error(rd) : "events out of time order");
        check_pass_free(p);
        history_reader_close(rd);
        return EXIT_USAGE;
    }
    history_reader_take(rd, &res->hist);
    history_reader_close(rd);
    history_names_printable(&res->hist);
    if (rc < 0 || check_pass_end(p, res->hist.end_mono_ns, res) < 0) {
        if (rc < 0)
            check_pass_free(p);
        fprintf(stderr, "locklab: out of memory checking %s\n", file);
        return EXIT_ENV;
    }
    return 0;
}

/* The whole history read into res->hist and checked as `run` checks its
 * own (result_check_history): --in-memory, the stream's cross-check. */
static int check_whole(const char *file, struct run_result *res)
{
    char err[512];
    if (history_read_file(file, &res->hist, err, sizeof(err)) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_USAGE;
    }
    const struct lock_ops *ops = lock_find(res->hist.algorithm);
    if (result_check_history(res, (uint64_t)res->hist.ttl_ms * 1000000u, ops && ops->optimistic) <
        0) {
        fprintf(stderr, "locklab: out of memory checking %s\n", file);
        return EXIT_ENV;
    }
    return 0;
}

/* Check file into res, print what was found and the verdict; the exit
 * code. */
static int check_file(const char *file, const struct expect_num *want, enum want_inv want_inv,
                      int show, bool whole, struct run_result *res)
{
    int rc = whole ? check_whole(file, res) : check_streamed(file, res);
    if (rc != 0)
        return rc;
    res->t0_mono_ns = res->hist.start_mono_ns;
    res->complete = res->hist.complete; /* the safety of a cut-short history is "so far" */
    const struct check_result *c = &res->check;
    printf("%s: scenario %s, algorithm %s, %" PRIu32 " clients%s\n", file, res->hist.scenario,
           res->hist.algorithm, res->hist.clients, res->hist.complete ? "" : " (INCOMPLETE run)");
    char line[160];
    printf("checker: %s, %" PRIu64 " concurrent entries\n", report_checker(c, line, sizeof(line)),
           c->concurrent_entries);
    report_lost_at_release(stdout, res);
    if (res->hist.latch.latches)
        report_invariants(stdout, res);
    report_violations(stdout, res, show);
    report_spans(stdout, res);
    char stuck[256];
    if (report_stuck(res, stuck, sizeof(stuck)))
        printf("stuck: %s\n", stuck);
    char w[24];
    int met = expect_met(want, c->violations);
    return check_verdict(res, met, expect_format(want, w, sizeof(w)), c->violations, want_inv);
}

int cmd_check(int argc, char **argv)
{
    struct expect_num want = {.op = EXPECT_EQ, .value = 0};
    long long show = 10;
    bool whole = false;
    enum want_inv want_inv = WANT_HOLD;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) {
            if (expect_parse(argv[++i], &want) < 0)
                return bad_usage("--expect: expected e.g. 0, \">0\", \"<=3\", got \"%s\"", argv[i]);
        } else if (strcmp(argv[i], "--show-violations") == 0 && i + 1 < argc) {
            if (parse_long(argv[++i], 0, 100000, &show) < 0)
                return bad_usage("--show-violations: expected an integer in 0..100000, got \"%s\"",
                                 argv[i]);
        } else if (strcmp(argv[i], "--expect-invariants") == 0 && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "hold") != 0 && strcmp(argv[i], "broken") != 0)
                return bad_usage("--expect-invariants: expected hold or broken, got \"%s\"",
                                 argv[i]);
            want_inv = strcmp(argv[i], "hold") == 0 ? WANT_HOLD : WANT_BROKEN;
        } else if (strcmp(argv[i], "--in-memory") == 0) {
            whole = true;
        } else if (argv[i][0] == '-' || path) {
            return bad_usage("check: unexpected argument \"%s\"", argv[i]);
        } else {
            path = argv[i];
        }
    }
    if (path == NULL)
        return bad_usage(
            "%s",
            "check: which history? give RUN_DIR, or a history file (history.llh, history.jsonl)");
    char file[600];
    history_file_of(path, file, sizeof(file));

    struct run_result *res = calloc(1, sizeof(*res));
    if (res == NULL) {
        fprintf(stderr, "locklab: out of memory\n");
        return EXIT_ENV;
    }
    int rc = check_file(file, &want, want_inv, (int)show, whole, res);
    result_free(res);
    free(res);
    return rc;
}
