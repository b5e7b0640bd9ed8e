/* help.c - `locklab help [CMD]` and `locklab CMD --help`: one text per
 * command (usage, options, an example), and the list of commands. The
 * README points here for the options; tests/runs/test_docs.py checks that every
 * option the docs name is in these texts. A list of kinds is never typed here:
 * a placeholder ({algorithms}, {server_options}, ...) stands for it, printed
 * from its registry as the text is. */
#include "sim/cli/help.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/cli.h"
#include "sim/fleet/server_kind.h"
#include "sim/scenario/suite.h"

/* The help fits a terminal this wide. */
#define HELP_WIDTH 89
/* Where an option's text starts. */
#define OPTION_COLUMN 27

/* run, compare and matrix: the live figures (docs/metrics.md) */
#define METRICS_OPTIONS                                                                            \
    "      --metrics H:P        serve the run's figures while it goes at http://H:P/metrics\n"     \
    "                           (OpenMetrics, for Prometheus; docs/metrics.md)\n"                  \
    "      --metrics-linger S   and S seconds more once the reports are written\n"

struct command_help {
    const char *name;
    const char *summary;
    const char *text; /* usage, options, example */
};

#define RUN_OPTIONS                                                                                \
    "  -c, --clients N          clients, 1..100000; default: the scenario's\n"                     \
    "  -d, --duration S         seconds, > 0 and <= 86400, at least 1 ms once rounded to\n"        \
    "                           whole ms; default: the scenario's duration_s\n"                    \
    "  -n, --requests N         stop after N business steps in all (0 = no limit)\n"               \
    "      --rate R             open loop: R business steps per second in all, each client\n"      \
    "                           on a schedule, latency from each step's due time (0: closed\n"     \
    "                           loop, the default: a step as soon as the last one ended)\n"        \
    "  -s, --seed N             the seed of every random choice; the same seed repeats a run\n"    \
    "{server_options}\n"                                                                           \
    "      --mysql-defaults-file FILE\n"                                                           \
    "                           the MySQL locks' user and password from FILE's [client]\n"         \
    "                           group (or MYSQL_PWD), never from a command line\n"                 \
    "      --proxy              every server through locklab's proxy, not only those a\n"          \
    "                           network fault touches (its cost: bench/proxy_cost.sh)\n"

/* For other tools: the same three options on run, compare and matrix, each
 * with its CSV's columns (docs/outputs.md says what each holds). */
#define OUTPUT_OPTIONS                                                                             \
    "      --json FILE          a copy of the report's JSON in FILE too; --json - writes it\n"     \
    "                           to stdout and nothing else there (not with --csv)\n"               \
    "      --percentiles P,...  the latency percentiles shown, memtier's spelling: up to 10,\n"    \
    "                           each 0 < P <= 100 (default 50,90,99,99.9,100); report.json\n"      \
    "                           keys them p50.00, p99.90, ...\n"
#define CSV_HEAD                                                                                   \
    "      --csv                CSV on stdout instead of the summary (which goes to\n"             \
    "                           stderr): a header line, then one line per "
#define RUN_OUTPUTS                                                                                \
    CSV_HEAD "operation:\n"                                                                        \
             "                           operation,count,per_second,mean_ms,p50_ms,...,\n"         \
             "                           errors,ambiguous,verdict,safe,violations,\n"              \
             "                           invariants_hold,scenario,algorithm (p100_ms is the\n"     \
             "                           max; the last six are the run's, on every "               \
             "line)\n" OUTPUT_OPTIONS
#define COMPARE_OUTPUTS                                                                            \
    CSV_HEAD                                                                                       \
    "algorithm:\n"                                                                                 \
    "                           algorithm,verdict,safe,violations,elapsed_s,steps,\n"              \
    "                           acquired,busy,errors,per_second,p50_ms,...,\n"                     \
    "                           fenced_pairs,rejected_accesses,invariants_hold,\n"                 \
    "                           run_dir,note,scenario,fault_windows,fault_granted,\n"              \
    "                           fault_granted_within,fault_failed,fault_ambiguous,\n"              \
    "                           fault_longest_no_grant_ms,fault_recovered,\n"                      \
    "                           fault_recovery_ms,stuck_ms (the acquires' percentiles;\n"          \
    "                           fault_*: what the fault windows cost, summed)\n" OUTPUT_OPTIONS
#define MATRIX_OUTPUTS                                                                             \
    CSV_HEAD "row and seed:\n"                                                                     \
             "                           row,algorithm,seed,verdict,matched,safe,violations,\n"    \
             "                           acquired,failed,ambiguous,recovered,recovery_ms,\n"       \
             "                           stuck_ms,p50_ms,...,run_dir,failure\n" OUTPUT_OPTIONS

static const struct command_help commands[] = {
    {"run", "run one scenario with one algorithm; reports in a run folder",
     "usage: locklab run SCENARIO [options]\n"
     "\n"
     "Starts the servers the algorithm needs (unless options below name them),\n"
     "runs the scenario's clients and faults, checks the history, writes the reports\n"
     "and stops every server it started.\n"
     "\n"
     "options:\n"
     "  -a, --algorithm NAME     {algorithms} (locklab list algorithms);\n"
     "                           default: the scenario's lock.algorithm\n" RUN_OPTIONS
     "{host_options}\n" METRICS_OPTIONS
     "  -o, --out DIR            the run folder; default runs/<scenario>-<algorithm>-<time>/.\n"
     "                           A folder that holds a run already is refused. runs/latest\n"
     "                           links to the last folder written in runs/ (locklab history)\n"
     "  -q, --quiet              print only the verdict line\n"
     "      --show-violations N  list at most N violations (default 10)\n" RUN_OUTPUTS
     "      --history-jsonl      history.jsonl beside history.llh (show --history prints it)\n"
     "\n"
     "exit: 0 expectations met, 1 not met, 2 bad usage or scenario (nothing started),\n"
     "      3 environment or INCOMPLETE, 130 interrupted (partial report written)\n"
     "\n"
     "example:\n"
     "  locklab run scenarios/flash_sale_pause.json --algorithm redis --duration 5\n"},
    {"compare", "run one scenario with several algorithms, side by side",
     "usage: locklab compare SCENARIO [options]\n"
     "\n"
     "Runs the scenario with each algorithm in turn on one fleet (managed Redis servers\n"
     "are emptied in between, and every managed server is given up to 15 s to stop\n"
     "working off the last run: stderr says how long), then prints one table and\n"
     "writes compare.html, compare.md and compare.json. An algorithm that cannot run\n"
     "the scenario (fencing needs tokens, a watchdog needs renewals) is listed as NOT\n"
     "RUN with the reason; the others run.\n"
     "\n"
     "Each row is judged by what happened in its runs: safe, or UNSAFE with its\n"
     "violations and broken invariants. The scenario's expect is written for the\n"
     "lock its file names (lock.algorithm, redis when it names none): only that\n"
     "lock is held to it, on a line of its own (\"expectation (written for redis):\n"
     "met\"); every other lock runs expecting safety.\n"
     "\n"
     "options:\n"
     "  -A, --algorithms A,B,... default " COMPARE_ALGORITHMS "\n" RUN_OPTIONS
     "{host_options}\n" METRICS_OPTIONS
     "      --seeds N            runs per algorithm, 1..10 (default 1): the scenario's seed,\n"
     "                           then the next ones, each in <out>/<algorithm>/seed-<S>/; a row\n"
     "                           unsafe in some seeds says \"UNSAFE in 1 of 2 seeds\"; its\n"
     "                           figures are the first seed's run\n"
     "      --wide               the table one line per algorithm, however long (by\n"
     "                           default it keeps within 120 columns, the safety and\n"
     "                           invariants on a line under each row)\n"
     "  -o, --out DIR            the comparison folder, one run folder per algorithm inside;\n"
     "                           default runs/<scenario>-compare-<time>/\n"
     "  -q, --quiet              print only the verdict line\n"
     "      --show-violations N  (accepted, as for run)\n" COMPARE_OUTPUTS "\n"
     "exit: 0 the scenario's lock met its expectation in every seed (or is not among\n"
     "      the algorithms), whichever locks were unsafe; 1 it missed it; 2 bad usage,\n"
     "      or no named algorithm can run the scenario; 3 a run INCOMPLETE or a server\n"
     "      failed; 130 interrupted (the worst of these wins)\n"
     "\n"
     "example:\n"
     "  locklab compare scenarios/flash_sale.json --algorithms redis,zookeeper --duration 5\n"},
    {"matrix", "the known results: every scenario of a folder, several seeds each",
     "usage: locklab matrix [DIR] [options]\n"
     "\n"
     "Runs every scenario (*.json) of DIR (default scenarios/matrix), each with its own\n"
     "algorithm and expectations, once per seed, on servers started afresh for each\n"
     "run; then prints one table (expected against observed, with the failed\n"
     "acquisitions, recovery and longest stuck) and writes matrix.html, matrix.md and\n"
     "matrix.json.\n"
     "Every scenario is checked before anything starts.\n"
     "\n"
     "options:\n"
     "      --seeds N            runs per row, 1..100 (default 1): the file's seed, then\n"
     "                           the next ones\n" METRICS_OPTIONS
     "      --only TEXT          only the rows whose scenario name contains TEXT\n"
     "      --plan               print the rows it would run (with --only: those it selects),\n"
     "                           each with its lock and what it expects; run nothing\n"
     "  -o, --out DIR            the matrix folder, one run folder per row and seed in it;\n"
     "                           default runs/known-results-matrix-<time>/\n"
     "  -q, --quiet              print only the table\n"
     "      --wide               the table one line per row, however long (by default it\n"
     "                           keeps within 120 columns, the expectation under each "
     "row)\n" MATRIX_OUTPUTS "\n"
     "exit: 0 every row matched in every seed, 1 some did not, 2 bad usage or scenario\n"
     "      (nothing started), 3 environment (a run INCOMPLETE), 130 interrupted\n"
     "\n"
     "example:\n"
     "  locklab matrix --seeds 5\n"},
    {"scorecard", "every lock through one fault suite: the grid that answers which lock to use",
     "usage: locklab scorecard [options]\n"
     "\n"
     "Runs one business scenario (default: the suite's, scenarios/flash_sale.json) with\n"
     "every lock (rows: each in its library's default modes, and fenced where it gives\n"
     "tokens) through every fault class of a suite (columns), each cell in N seeds on\n"
     "servers started afresh, faults sized from the lease each lock really has. Each\n"
     "cell is judged by what happened: safe or UNSAFE (violations, broken invariants),\n"
     "with the availability and P99 it cost; n/a, with the reason, where the class\n"
     "cannot apply. Ends with the answer: the locks safe in every class, by no-fault\n"
     "P99. Writes scorecard.html, scorecard.md and scorecard.json; every cell's folder\n"
     "keeps its scenario.json and the runs (docs/scorecard.md).\n"
     "Every cell is planned and checked before anything starts.\n"
     "\n"
     "options:\n"
     "      --suite NAME|FILE    {suites}\n"
     "      --scenario FILE      the business scenario instead of the suite's\n"
     "  -A, --algorithms A,...   rows: lock names; NAME@MODE one library mode (etcd@3.4),\n"
     "                           NAME+fencing the fenced row alone; default: the suite's rows,\n"
     "                           or every lock (fenced rows too) when it lists none\n"
     "      --no-fenced-rows     no automatic +fencing row for a lock that gives tokens\n"
     "      --classes C,...      only these classes (columns) of the suite\n"
     "      --only LOCK/CLASS    one cell alone (redis/holder_crashed), to run it again\n"
     "      --plan               print what every cell would run (lease, layout, faults)\n"
     "                           or why it would not, and start nothing\n"
     "      --seeds N            seeds per cell, 1..10 (default: the suite's)\n"
     "  -d, --duration S         every cell's length, instead of the suite's (a cell still\n"
     "                           runs 1.5 leases past its last fault)\n"
     "      --require-safe L,... exit 1 when one of these rows was unsafe in any class\n"
     "  -o, --out DIR            the scorecard folder; default\n"
     "                           runs/<scenario>-scorecard-<suite>-<time>/\n"
     "  -q, --quiet              print only the grid\n"
     "      --wide               each grid cell on one line, however long (by default the\n"
     "                           grid keeps within 120 columns, figures under the words)\n"
     "      --csv                CSV on stdout (one line per cell and seed), the grid on stderr\n"
     "      --json FILE          a copy of scorecard.json in FILE; --json - to stdout\n"
     "      --junit FILE         JUnit XML: a testsuite per row, a testcase per cell\n"
     "\n"
     "exit: 0 every cell was judged, 1 --require-safe named a row that was unsafe,\n"
     "      2 bad usage or suite (nothing started), 3 a cell could not be judged\n"
     "      (INCOMPLETE), 130 interrupted (the partial grid is written)\n"
     "\n"
     "example:\n"
     "  locklab scorecard --suite quick\n"
     "  locklab scorecard --suite standard --seeds 3 --require-safe zookeeper+fencing\n"},
    {"show", "the effective settings of a scenario, without running it",
     "usage: locklab show SCENARIO [options]\n"
     "       locklab show --history RUN_DIR | HISTORY\n"
     "\n"
     "Prints what `run` would do with the same options: every setting after defaults\n"
     "and clamps (a default: line for each value derived or clamped), the servers\n"
     "it would start, the faults on their timeline and the expectation. Starts\n"
     "nothing.\n"
     "\n"
     "options:\n"
     "  -a, --algorithm NAME     as for run\n" RUN_OPTIONS
     "      --json               print report.json's \"scenario\" object instead\n"
     "\n"
     "--history prints a run's history (history.llh, or any history file) as the JSON\n"
     "lines of docs/history.md, byte for byte what run --history-jsonl writes.\n"
     "\n"
     "exit: 0, or 2 when the scenario or an option is wrong (the same error run gives)\n"
     "      or the history unreadable\n"
     "\n"
     "example:\n"
     "  locklab show scenarios/flash_sale_watchdog_long.json\n"},
    {"check", "re-check a recorded history offline",
     "usage: locklab check RUN_DIR | HISTORY [options]\n"
     "\n"
     "Reads RUN_DIR/history.llh (or the file named: history.llh or JSON lines such as\n"
     "history.jsonl), rebuilds every critical section,\n"
     "and reports every pair of different owners whose sections on one key overlap;\n"
     "a countdown latch's run is judged from its latch lines: its two invariants.\n"
     "\n"
     "options:\n"
     "      --expect EXPR        the expected number of violations: 0 (the default),\n"
     "                           \">0\", \">=3\", \"<5\", \"==2\"\n"
     "      --expect-invariants hold|broken\n"
     "                           a latch's invariants as expected (default hold)\n"
     "      --show-violations N  list at most N violations (default 10)\n"
     "      --in-memory          load the whole history and check it as `run` checks its\n"
     "                           own (the same output, memory growing with the file);\n"
     "                           by default one pass, in memory bounded by the keys\n"
     "\n"
     "exit: 0 PASS, 1 FAIL (the expectation is not met), 2 bad usage or unreadable\n"
     "      history, 3 INCOMPLETE (met, but the history was cut short)\n"
     "\n"
     "example:\n"
     "  locklab check runs/flash_sale_pause-redis-20261123-101500 --expect '>0'\n"},
    {"cluster", "start, show or stop a managed fleet for manual use",
     "usage: locklab cluster up {cluster_usage} [--dir DIR]\n"
     "       locklab cluster status [--dir DIR]\n"
     "       locklab cluster down [--dir DIR]\n"
     "\n"
     "up starts the servers of each kind below on free 127.0.0.1 ports, under a\n"
     "supervisor that outlives the command (as another user where a server refuses\n"
     "root: PostgreSQL runs as the postgres user); status lists each server and the\n"
     "options of run that name them; down stops them by PID and keeps their logs.\n"
     "\n"
     "options:\n"
     "{cluster_options}\n"
     "      --dir DIR            the cluster's folder (default $TMPDIR/locklab-cluster);\n"
     "                           status and down find the last one started without it\n"
     "\n"
     "exit: 0, 2 bad usage, 3 a server would not start or no cluster is up\n"
     "\n"
     "example:\n"
     "  locklab cluster up --redis-nodes 1 --zookeeper-nodes 0\n"},
    {"history", "index the run folders: P99, QPS and verdict per scenario over time",
     "usage: locklab history [DIR] [options]\n"
     "\n"
     "Reads every report.json under DIR (default runs/): run folders, and the runs\n"
     "inside compare and matrix folders, up to 4 folders down; links (runs/latest) are\n"
     "not followed. Groups the runs in series, oldest first, prints one line per run\n"
     "(its series's key, QPS, acquire p50/p99, verdict, safety) and writes\n"
     "history.html (a chart of p99 and QPS over the runs of each series) and\n"
     "history.json (docs/history-index.md). A report.json that cannot be read is\n"
     "listed as skipped.\n"
     "\n"
     "A series is one scenario name x algorithm x settings: the scenario as run\n"
     "(show --json; name, description, file and defaults aside: clients, duration,\n"
     "rate, seed, lock, workload, faults...) and the servers by kind, layout and\n"
     "version, not their addresses. Its key is FNV-1a 64 of those settings as\n"
     "canonical JSON (8 hex digits in the table, 16 in history.json). A run whose\n"
     "settings are new starts a series, its row saying so and, when its name has\n"
     "older series, what differs, under it: \"rate 0.0 -> 500.0 (vs 9062d662)\".\n"
     "\n"
     "A run is flagged REGRESSION when, complete, its acquire p99 is more than 1.5x the\n"
     "median p99 of the earlier complete runs of its series, or its QPS under 2/3 of\n"
     "their median QPS; or when it is UNSAFE and the run before it in its series was\n"
     "safe.\n"
     "\n"
     "run, compare and matrix point runs/latest at the folder they wrote, when that\n"
     "folder is directly in runs/ (the default; --out elsewhere leaves no link).\n"
     "\n"
     "options:\n"
     "  -o, --out DIR2           write history.html and history.json there (made if\n"
     "                           missing); default: DIR\n"
     "      --fail-on-regression exit 1 when any run is flagged REGRESSION (for CI)\n"
     "      --wide               each run on one line, its flags and what its new series\n"
     "                           differs in at its end (by default the table keeps within\n"
     "                           120 columns, those words on a line under the row)\n"
     "\n"
     "exit: 0 (regressions or not, without --fail-on-regression), 1 a regression with\n"
     "      --fail-on-regression, 2 bad usage or DIR no readable folder, 3 the files\n"
     "      could not be written\n"
     "\n"
     "example:\n"
     "  locklab history runs --out /tmp/locklab-history\n"
     "  locklab history runs --fail-on-regression   # in CI, after the runs\n"},
    {"hosts", "reach every host of an inventory over SSH and say what it can run",
     "usage: locklab hosts (--hosts FILE | --nodes N1,N2,...) [options]\n"
     "\n"
     "Opens one SSH connection to each host (OpenSSH, key authentication only; ssh never\n"
     "asks for a password), checks that the user is root there or has sudo without a\n"
     "password, and asks what the host has: the programs each server kind needs (as\n"
     "Debian's packages install them), nftables for the network faults, netem for\n"
     "delay, and its clock against this machine's (the offset at the midpoint of the\n"
     "fastest of 5 round trips, good to half of that round trip). Nothing is started\n"
     "or changed on a host. FILE is an Ansible INI inventory or a JSON list\n"
     "(docs/hosts.md).\n"
     "\n"
     "options:\n"
     "{host_options}\n"
     "      --needs KINDS        each host must be able to run these server kinds\n"
     "                           (redis,sentinel,...): a host that cannot is named with\n"
     "                           the package it lacks\n"
     "\n"
     "exit: 0 every host reached (and fit for --needs), 2 bad usage or a bad inventory,\n"
     "      3 a host not reached, its key refused, sudo asking for a password, or a\n"
     "      package missing\n"
     "\n"
     "example:\n"
     "  locklab hosts --hosts staging.ini --needs redis,sentinel\n"},
    {"list", "what this build can run, kind by kind, with what each does",
     "usage: locklab list [{kinds}]\n"
     "\n"
     "Without an argument, everything with a line of explanation (a server kind with\n"
     "the roles its servers play and what a kill leaves of their data); with one, only\n"
     "the names of that kind, one per line (for scripts and shell completion).\n"
     "\n"
     "exit: 0, or 2 for an unknown kind\n"
     "\n"
     "example:\n"
     "  locklab list algorithms\n"},
    {"help", "this list, or one command's options",
     "usage: locklab help [COMMAND]   (or: locklab COMMAND --help)\n"
     "\n"
     "example:\n"
     "  locklab help run\n"},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

void help_overview(FILE *f)
{
    fprintf(f, "usage: locklab COMMAND [options]   (locklab help COMMAND for its options)\n\n"
               "commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n"
               "  locklab --version\n"
               "\n"
               "exit: 0 expectations met, 1 not met, 2 bad usage or scenario, 3 environment or\n"
               "      incomplete, 130 interrupted (partial report written, marked incomplete)\n");
}

/* ---- the lists of kinds, read from the registries as the help prints --- */

static const char *algorithm_name(size_t i)
{
    return cli_kind_find("algorithms")->at(i);
}

/* {algorithms}: "redis, redis-naive, ... or redisson-semaphore-naive" */
static void algorithms_text(char *buf, size_t len)
{
    cli_join(cli_kind_find("algorithms")->count(), algorithm_name, ", ", " or ", buf, len);
}

/* {suites}: "quick or standard (...; default: quick), or a suite file" */
static void suites_text(char *buf, size_t len)
{
    const struct cli_kind *kind = cli_kind_find("suites");
    struct dirent **ent;
    int n = cli_folder_files(kind, &ent);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        char name[256];
        cli_folder_name(kind, ent[i]->d_name, name, sizeof(name));
        if (used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                     i == 0       ? ""
                                     : i + 1 == n ? " or "
                                                  : ", ",
                                     name);
        free(ent[i]);
    }
    if (n > 0)
        free(ent);
    if (used < len)
        snprintf(buf + used, len - used, "%s(locklab list suites; default: %s), or a suite file",
                 used ? " " : "", SUITE_DEFAULT);
}

/* {kinds}: list's "algorithms|scenarios|..." */
static void kinds_text(char *buf, size_t len)
{
    cli_kinds_joined("|", "|", buf, len);
}

/* {cluster_usage}: "[--redis-nodes N] [--zookeeper-nodes N] ...", the
 * kinds cluster up starts */
static void cluster_usage_text(char *buf, size_t len)
{
    cli_started_kinds(false, "[--", "-nodes N]", " ", buf, len);
}

/* An option's name (up to OPTION_COLUMN) and its text wrapped under it. */
static void print_option(FILE *f, const char *option, const char *text)
{
    int col = fprintf(f, "  %-*s ", OPTION_COLUMN - 3, option);
    cli_wrap(f, text, strlen(text), col, OPTION_COLUMN, HELP_WIDTH);
    fputc('\n', f);
}

/* {server_options}: --redis H:P and the like, one per kind that has one */
static void print_server_options(FILE *f)
{
    for (size_t k = 0; k < server_kind_count(); k++) {
        const struct server_kind *kind = server_option_kind(k);
        char option[80], letter = kind ? server_option_letter(kind) : 0;
        if (kind == NULL)
            continue;
        snprintf(option, sizeof(option), "%c%c%s--%s %s", letter ? '-' : ' ', letter ? letter : ' ',
                 letter ? ", " : "  ", kind->name, kind->option_arg);
        print_option(f, option, kind->option_help);
    }
}

/* {host_options}: --hosts FILE and the --ssh-* options (run_hosts.h) */
static void print_host_options(FILE *f)
{
    fputs(host_opts_help, f);
}

/* {cluster_options}: --redis-nodes N and the like: the counts each takes */
static void print_cluster_options(FILE *f)
{
    for (size_t k = 0; k < server_kind_count(); k++) {
        const struct server_kind *kind = server_kind_at(k);
        char option[80], text[96];
        if (kind->start == NULL)
            continue;
        snprintf(option, sizeof(option), "    --%s-nodes N", kind->name);
        snprintf(text, sizeof(text), "%s (default %u)", kind->cluster_counts_text,
                 (unsigned)kind->cluster_nodes);
        print_option(f, option, text);
    }
}

/* A placeholder of the texts: words in a line, or lines of their own. */
static const struct expansion {
    const char *name;
    void (*words)(char *buf, size_t len);
    void (*lines)(FILE *f);
} expansions[] = {
    {"{algorithms}", algorithms_text, NULL},
    {"{kinds}", kinds_text, NULL},
    {"{suites}", suites_text, NULL},
    {"{cluster_usage}", cluster_usage_text, NULL},
    {"{server_options}", NULL, print_server_options},
    {"{cluster_options}", NULL, print_cluster_options},
    {"{host_options}", NULL, print_host_options},
};

/* One line of a text (n bytes, without its newline), its placeholder
 * expanded: words wrapped with the rest of the line from its column on. */
static void print_line(FILE *f, const char *line, size_t n)
{
    const char *at = memchr(line, '{', n);
    for (size_t e = 0; at && e < sizeof(expansions) / sizeof(expansions[0]); e++) {
        const struct expansion *x = &expansions[e];
        size_t len = strlen(x->name);
        if ((size_t)(line + n - at) < len || memcmp(at, x->name, len) != 0)
            continue;
        if (x->lines) {
            x->lines(f);
            return;
        }
        char words[1024];
        int col = (int)(at - line);
        x->words(words, sizeof(words));
        snprintf(words + strlen(words), sizeof(words) - strlen(words), "%.*s",
                 (int)(line + n - at - len), at + len);
        fprintf(f, "%.*s", col, line);
        cli_wrap(f, words, strlen(words), col, col, HELP_WIDTH);
        fputc('\n', f);
        return;
    }
    fprintf(f, "%.*s\n", (int)n, line);
}

int help_command(FILE *f, const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) {
            for (const char *line = commands[i].text; *line;) {
                size_t n = strcspn(line, "\n");
                print_line(f, line, n);
                line += n + (line[n] == '\n');
            }
            return 0;
        }
    return -1;
}

const char *help_command_name(size_t i)
{
    return i < N_COMMANDS ? commands[i].name : NULL;
}
