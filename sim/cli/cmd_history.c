/* cmd_history.c - runs over time: `locklab history [DIR] [--out DIR2]
 * [--fail-on-regression]` indexes the run folders under DIR
 * (reports/history.h) into history.json and history.html and prints the
 * table, exit 1 on a regression when asked; and runs/latest,
 * the link run, compare and matrix leave to the folder they wrote last. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/history.h"
#include "sim/cli/cli.h"

/* The folder default runs go into (cli.c's default_dir). */
#define RUNS_DIR "runs"

/* The folder holds what a run, a comparison or a matrix writes last. */
static bool has_reports(const char *dir)
{
    static const char *const names[] = {"report.json", "compare.json", "matrix.json"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[PATH_MAX + 16];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            return true;
    }
    return false;
}

void runs_latest_link(const char *run_dir)
{
    char full[PATH_MAX], runs[PATH_MAX];
    if (!has_reports(run_dir))
        return;
    /* only a folder directly in runs/: with --out elsewhere locklab writes
     * nothing outside the folder named */
    if (realpath(run_dir, full) == NULL || realpath(RUNS_DIR, runs) == NULL)
        return;
    char *slash = strrchr(full, '/');
    if (slash == NULL || slash == full)
        return;
    *slash = '\0';
    const char *name = slash + 1;
    if (strcmp(full, runs) != 0 || strcmp(name, "latest") == 0)
        return;
    char link[PATH_MAX + 16], tmp[PATH_MAX + 32];
    struct stat st;
    snprintf(link, sizeof(link), "%s/latest", runs);
    if (lstat(link, &st) == 0 && !S_ISLNK(st.st_mode)) {
        fprintf(stderr, "locklab: warning: %s/latest is not a link; left as it is\n", RUNS_DIR);
        return;
    }
    /* made aside and renamed over the old one: a reader sees the old link
     * or the new, never none */
    snprintf(tmp, sizeof(tmp), "%s/.latest.%ld", runs, (long)getpid());
    unlink(tmp);
    if (symlink(name, tmp) < 0 || rename(tmp, link) < 0) {
        fprintf(stderr, "locklab: warning: cannot point %s/latest at %s: %s\n", RUNS_DIR, name,
                strerror(errno));
        unlink(tmp);
    }
}

struct history_opts {
    const char *dir, *out;
    bool fail_on_regression;
    bool wide;
};

static int parse_opts(int argc, char **argv, struct history_opts *o)
{
    static const struct option longs[] = {{"out", required_argument, 0, 'o'},
                                          {"fail-on-regression", no_argument, 0, 'F'},
                                          {"wide", no_argument, 0, 'W'},
                                          {0, 0, 0, 0}};
    int c;
    *o = (struct history_opts){.dir = RUNS_DIR};
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:", longs, NULL)) != -1) {
        if (c == 'F' || c == 'W') {
            *(c == 'F' ? &o->fail_on_regression : &o->wide) = true;
            continue;
        }
        if (c != 'o')
            return bad_usage("history: unknown or incomplete option \"%s\"", argv[optind - 1]);
        if (optarg[0] == '\0')
            return bad_usage("%s", "history: --out: an empty folder name");
        o->out = optarg;
    }
    if (argc - optind > 1)
        return bad_usage("%s", "history: one DIR at most");
    if (optind < argc)
        o->dir = argv[optind];
    return 0;
}

static int write_files(const char *out, const struct history_index *idx)
{
    char path[PATH_MAX + 32];
    errno = 0;
    snprintf(path, sizeof(path), "%s/history.json", out);
    int rc = history_json(path, idx);
    if (rc == 0) {
        snprintf(path, sizeof(path), "%s/history.html", out);
        rc = history_html(path, out, idx);
    }
    if (rc < 0) {
        fprintf(stderr, "locklab: cannot write %s: %s\n", path, strerror(errno ? errno : EIO));
        return EXIT_ENV;
    }
    return EXIT_PASS;
}

int cmd_history(int argc, char **argv)
{
    struct history_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc;
    struct history_index idx;
    char err[HISTORY_PATH + 128];
    if (history_index_build(o.dir, &idx, err, sizeof(err)) < 0) {
        fprintf(stderr, "locklab: history: %s\n", err);
        return strcmp(err, "out of memory") == 0 ? EXIT_ENV : EXIT_USAGE;
    }
    const char *out = o.out ? o.out : o.dir;
    struct stat st;
    if (o.out && mkdir(out, 0755) < 0 &&
        !(errno == EEXIST && stat(out, &st) == 0 && S_ISDIR(st.st_mode))) {
        fprintf(stderr, "locklab: history: --out %s: %s\n", out,
                errno == EEXIST ? "not a folder" : strerror(errno));
        history_index_free(&idx);
        return errno == EEXIST ? EXIT_USAGE : EXIT_ENV;
    }
    /* the files first: a reader of the table that stops early (| head)
     * must not cost them */
    rc = write_files(out, &idx);
    printf("history of %s: %zu runs in %zu series, %zu regression%s, %zu report.json skipped\n",
           o.dir, idx.n_runs, idx.n_series, idx.regressions, idx.regressions == 1 ? "" : "s",
           idx.n_skipped);
    if (idx.n_runs || idx.n_skipped)
        history_table(stdout, &idx, o.wide);
    if (rc == EXIT_PASS)
        printf("wrote %s/history.html and %s/history.json\n", out, out);
    size_t regressions = idx.regressions;
    history_index_free(&idx);
    if (fflush(stdout) != 0 && rc == EXIT_PASS)
        rc = EXIT_ENV;
    /* for CI: an error keeps its own status, a regression fails the job */
    if (rc == EXIT_PASS && o.fail_on_regression && regressions > 0)
        rc = EXIT_FAILED;
    return rc;
}
