/* main.c - the command line: run, compare, show, check, cluster, list, help. The
 * command files (main.c, cmd_*.c) are the only ones that print errors and
 * choose exit codes; the codes are in cli.h. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "algorithms/lock.h"
#include "reports/report.h"
#include "sim/check/checker.h"
#include "sim/cli/cli.h"
#include "sim/cli/help.h"
#include "sim/cli/signals.h"
#include "sim/record/history.h"
#include "sim/scenario/scenario.h"

/* ---- check ------------------------------------------------------------ */

/* The verdict line of a check, and its exit code. A history that did not
 * end (no end line: the writer died; or an end line saying incomplete)
 * never passes, as `run` never passes an interrupted run: what it did not
 * record could hold the violation. A violation it does show is a FAIL all
 * the same. */
static int check_verdict(const struct run_result *r, int met, const char *want, uint64_t got)
{
    const struct history *h = &r->hist;
    char why[320], tail[640], verdict[200];
    const char *word = "PASS";
    int rc = EXIT_PASS;
    if (result_host_made_violations(r, why, sizeof(why))) {
        snprintf(tail, sizeof(tail), "%s; violations expected %s, got %" PRIu64, why, want, got);
        word = "INCOMPLETE";
        rc = EXIT_ENV;
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

static int cmd_check(int argc, char **argv)
{
    struct expect_num want = {.op = EXPECT_EQ, .value = 0};
    long long show = 10;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) {
            if (expect_parse(argv[++i], &want) < 0)
                return bad_usage("--expect: expected e.g. 0, \">0\", \"<=3\", got \"%s\"", argv[i]);
        } else if (strcmp(argv[i], "--show-violations") == 0 && i + 1 < argc) {
            if (parse_long(argv[++i], 0, 100000, &show) < 0)
                return bad_usage("--show-violations: expected an integer in 0..100000, got \"%s\"",
                                 argv[i]);
        } else if (argv[i][0] == '-' || path) {
            return bad_usage("check: unexpected argument \"%s\"", argv[i]);
        } else {
            path = argv[i];
        }
    }
    if (path == NULL)
        return bad_usage("%s", "check: which history? give RUN_DIR or RUN_DIR/history.jsonl");
    char file[600];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(file, sizeof(file), "%s/history.jsonl", path);
    else
        snprintf(file, sizeof(file), "%s", path);

    static struct run_result res;
    char err[512];
    if (history_read_jsonl(file, &res.hist, err, sizeof(err)) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_USAGE;
    }
    res.t0_mono_ns = res.hist.start_mono_ns;
    res.complete = res.hist.complete; /* the safety of a cut-short history is "so far" */
    if (result_check_history(&res, (uint64_t)res.hist.ttl_ms * 1000000u) < 0) {
        fprintf(stderr, "locklab: out of memory checking %s\n", file);
        result_free(&res);
        return EXIT_ENV;
    }
    const struct check_result *c = &res.check;
    printf("%s: scenario %s, algorithm %s, %" PRIu32 " clients%s\n", file, res.hist.scenario,
           res.hist.algorithm, res.hist.clients, res.hist.complete ? "" : " (INCOMPLETE run)");
    printf("checker: %" PRIu64 " sections, %" PRIu64 " overlapping pairs (%" PRIu64
           " fenced pairs, safe), %" PRIu64 " violations, %" PRIu64 " concurrent entries\n",
           c->sections, c->overlaps, c->fenced_pairs, c->violations, c->concurrent_entries);
    report_violations(stdout, &res, (int)show);
    report_spans(stdout, &res);
    char stuck[256];
    if (report_stuck(&res, stuck, sizeof(stuck)))
        printf("stuck: %s\n", stuck);
    char w[24];
    int met = expect_met(&want, c->violations);
    int rc = check_verdict(&res, met, expect_format(&want, w, sizeof(w)), c->violations);
    result_free(&res);
    return rc;
}

/* `locklab CMD --help` (or -h) anywhere among CMD's arguments. */
static int wants_help(int argc, char **argv)
{
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) /* "--": arguments follow */
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

static int cmd_help(int argc, char **argv)
{
    if (argc < 3) {
        help_overview(stdout);
        return EXIT_PASS;
    }
    if (argc > 3)
        return bad_usage("%s", "help: one command at a time");
    const char *what =
        strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0 ? "help" : argv[2];
    if (help_command(stdout, what) < 0)
        return bad_usage("help: unknown command \"%s\"", argv[2]);
    return EXIT_PASS;
}

static int dispatch(const char *cmd, int argc, char **argv)
{
    if (strcmp(cmd, "list") == 0)
        return cmd_list(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "show") == 0)
        return cmd_show(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0) {
        signals_start();
        return cmd_run(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "compare") == 0) {
        signals_start();
        return cmd_compare(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "matrix") == 0) {
        signals_start();
        return cmd_matrix(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "cluster") == 0)
        return cmd_cluster(argc - 1, argv + 1);
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        help_overview(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        return cmd_help(1, argv); /* the overview */
    if (strcmp(cmd, "help") == 0)
        return cmd_help(argc, argv);
    if (strcmp(cmd, "--version") == 0) {
        printf("locklab %s\n", LOCKLAB_VERSION);
        return EXIT_PASS;
    }
    if (wants_help(argc, argv) && help_command(stdout, cmd) == 0)
        return EXIT_PASS;
    int rc = dispatch(cmd, argc, argv);
    if (rc >= 0)
        return rc;
    const char *known[16];
    size_t n = 0;
    for (; help_command_name(n) && n < 16; n++)
        known[n] = help_command_name(n);
    const char *near = suggest_closest(cmd, known, n);
    if (near)
        return bad_usage("unknown command \"%s\" (did you mean \"%s\"?)", cmd, near);
    return bad_usage("unknown command \"%s\"", cmd);
}
