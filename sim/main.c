/* main.c - the command line's dispatch: a command name to its cmd_*.c
 * (run, compare, matrix, scorecard, show, check, cluster, list, history), plus help and
 * --version. The command files (main.c, cmd_*.c) are the only ones that
 * print errors and choose exit codes; the codes are in cli.h. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli/cli.h"
#include "sim/cli/help.h"
#include "sim/cli/signals.h"
#include "sim/fleet/janitor.h"
#include "sim/record/run_meta.h"
#include "sim/scenario/scenario.h"

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
    if (strcmp(cmd, "scorecard") == 0) {
        signals_start();
        return cmd_scorecard(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "cluster") == 0)
        return cmd_cluster(argc - 1, argv + 1);
    if (strcmp(cmd, "history") == 0)
        return cmd_history(argc - 1, argv + 1);
    if (strcmp(cmd, "hosts") == 0)
        return cmd_hosts(argc - 1, argv + 1);
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        help_overview(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "__janitor") == 0) /* started by the fleet, never by a user */
        return janitor_main(argc, argv);
    static char exe[4096];
    /* runs get a keeper of their folder should locklab be killed; a cluster
     * supervisor's folder waits for `cluster down`, which rescues its logs */
    bool runs =
        strcmp(cmd, "run") == 0 || strcmp(cmd, "compare") == 0 || strcmp(cmd, "matrix") == 0;
    ssize_t len = runs ? readlink("/proc/self/exe", exe, sizeof(exe) - 1) : -1;
    if (len > 0) {
        exe[len] = '\0';
        janitor_set_exe(exe); /* run folders get a keeper if locklab is killed */
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        return cmd_help(1, argv); /* the overview */
    if (strcmp(cmd, "help") == 0)
        return cmd_help(argc, argv);
    if (strcmp(cmd, "--version") == 0) {
        printf("locklab %s (commit %s)\n", LOCKLAB_VERSION, locklab_commit);
        return EXIT_PASS;
    }
    static struct run_meta meta; /* what the reports say of this command and host */
    run_meta_init(&meta, argc, argv);
    run_meta_set(&meta);
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
