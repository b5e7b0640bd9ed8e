/* cli.h - what the commands share: exit codes, option parsing, loading a
 * scenario with the command line's overrides, and one run by the engine
 * with its reports. Only the command files (main.c, cmd_*.c) print errors and
 * choose exit codes.
 *
 * Exit status: 0 expectations met, 1 expectation failed (or, for check,
 * violations found), 2 bad usage or scenario, 3 environment (a server would
 * not start, a client could not connect, a report could not be written),
 * 130 interrupted (a partial report marked incomplete is still written).
 */
#ifndef LOCKLAB_CLI_H
#define LOCKLAB_CLI_H

#include <stdbool.h>
#include <stdio.h>

struct dirent;

#include "sim/check/result.h"
#include "sim/cli/run_hosts.h"
#include "sim/engine/engine.h"
#include "sim/engine/fleet.h"
#include "sim/scenario/scenario.h"

#define RUN_MAX_SEEDS 10 /* compare --seeds; COMPARE_MAX_SEEDS */

enum { EXIT_PASS = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_ENV = 3, EXIT_INTERRUPTED = 130 };

struct run_opts {
    const char *scenario;
    const char *algorithm;  /* run: --algorithm */
    const char *algorithms; /* compare: --algorithms a,b,c */
    const char *out;
    /* --metrics HOST:PORT (the live figures served there), --metrics-linger
     * S (-1 when not given), and that endpoint once listening (NULL: none) */
    const char *metrics;
    double metrics_linger;
    struct metrics_http *metrics_srv;
    /* --redis, --zookeeper, --sentinel (one option per server kind, by its
     * index in the fleet's registry): HOST:PORT[,...] */
    const char *servers[SCENARIO_SERVER_KINDS];
    long clients;         /* -1 = from the scenario */
    uint64_t duration_ms; /* 0 = from the scenario */
    long long requests;
    double rate; /* -1 = from the scenario; 0 = closed loop */
    long long seed;
    size_t seeds; /* compare --seeds: runs per algorithm, on seed, seed+1, ... (1..RUN_MAX_SEEDS) */
    int quiet;
    int json;   /* show: the scenario object as JSON */
    int brief;  /* only the verdict line after a run (compare prints its own table) */
    int silent; /* not even that (matrix --quiet prints its table alone) */
    int max_violations;
    int proxy;         /* --proxy: every endpoint through locklab's proxy, faults or not */
    int history_jsonl; /* --history-jsonl: history.jsonl beside history.llh */
    /* For other tools: --csv on stdout, --json FILE ("-": stdout) a copy
     * of report.json (compare.json), --percentiles in the tables, the
     * CSV and report.json. to_stderr: stdout is the tool's, so every line
     * for a person (header, summary, verdict) goes to stderr. */
    int csv;
    const char *json_to;
    int to_stderr;
    int wide; /* compare --wide: one line per algorithm, however long */
    double percentiles[RESULT_MAX_PERCENTILES];
    size_t n_percentiles;
    /* --hosts or --nodes, with --ssh-*: the managed servers placed there */
    struct host_opts hosts;
};

/* The hosts o names, connected and probed, and every fleet of this
 * process placed on them (fleet_use_hosts), before anything starts;
 * none named: nothing to do. 0, or an exit code after the one line that
 * says why. Undo with hosts_down whatever it returned. */
int hosts_up(const struct run_opts *o, struct run_hosts *h);
void hosts_down(struct run_hosts *h);

__attribute__((format(printf, 1, 2))) int bad_usage(const char *fmt, ...);
int parse_long(const char *s, long long lo, long long hi, long long *out);
/* --percentiles' value into p (*n of them); 0, or EXIT_USAGE after the
 * one-line error naming the option and the bad value. */
int parse_percentiles_opt(const char *arg, double *p, size_t *n);
/* --duration's value (seconds, decimal only) into *ms; 0, or EXIT_USAGE
 * after the one-line error naming the option and the bad value. */
int parse_duration_opt(const char *arg, uint64_t *ms);
/* --csv with --json -: both want stdout; --json FILE in a folder that is
 * not there or not writable. 0, or EXIT_USAGE after saying so. */
int check_stdout_taken(int csv, const char *json_to);
/* The file src copied to dst ("-": stdout), for --json; 0, or
 * EXIT_ENV after saying why. */
int copy_json_out(const char *src, const char *dst);
/* How compare and matrix end once their files are written: DIR/NAME
 * copied where --json said (json_to; NULL: nowhere), stdout flushed; rc
 * made worse by what failed. */
int finish_outputs(int rc, const char *dir, const char *name, const char *json_to);

/* compare's algorithms when --algorithms names none */
#define COMPARE_ALGORITHMS "redis,redlock,zookeeper"

/* The server kind k of the fleet's registry when run, compare and show
 * take an option for it (--redis H:P), else NULL; its short letter (-r),
 * 0 for none. */
struct server_kind;
const struct server_kind *server_option_kind(size_t k);
char server_option_letter(const struct server_kind *kind);

enum run_opts_mode { RUN_OPTS_RUN, RUN_OPTS_COMPARE, RUN_OPTS_SHOW };
/* Options of run, compare (--algorithms instead of --algorithm) and show
 * (no --out, --quiet; --json). 0, or an exit code after printing the
 * error. */
/* Every option as not given (the scenario's values kept). */
void run_opts_init(struct run_opts *o);
int parse_run_opts(int argc, char **argv, struct run_opts *o, enum run_opts_mode mode);
/* The scenario with the command line's overrides, validated; 0 or exit 2. */
int load_scenario(const struct run_opts *o, struct scenario *s);
/* The same without the checks of the whole (scenario_read). */
int read_scenario(const struct run_opts *o, struct scenario *s);
/* The options, the scenario with them and its algorithm, checked against
 * the servers named: all that run and show do before anything starts.
 * 0, or an exit code after printing the error. */
int plan_one_run(int argc, char **argv, enum run_opts_mode mode, struct run_opts *o,
                 struct scenario *s, const struct lock_ops **ops);
/* --algorithm names nothing known: say the likeliest meant; exit 2. */
int unknown_algorithm(const char *option, const char *name);

/* --metrics HOST:PORT (linger false: the address checked here, listened on
 * by the command before anything starts) or --metrics-linger S into o's
 * fields; 0, or EXIT_USAGE after saying why. */
int metrics_option(bool linger, const char *arg, struct run_opts *o);
/* --metrics: its endpoint listening (o->metrics_srv), before anything
 * starts; 0 (also without --metrics), or EXIT_ENV after saying why. Stop
 * it with metrics_http_stop once the reports are written. */
int metrics_listen(struct run_opts *o);

/* --out (or its subfolder sub, a comparison's per-algorithm folder) can
 * take a run: not empty, not a file, not a folder holding a run already.
 * 0, or EXIT_USAGE after printing why. */
int check_out_dir(const char *out, const char *sub);
/* dir: --out, or runs/<scenario>-<what>-<time>; made if missing (*created
 * says so: only a folder locklab made may be removed again). 0, or after
 * printing: EXIT_USAGE when --out cannot take a run, EXIT_ENV when the
 * folder cannot be made. */
int make_run_dir(const char *out, const char *name, const char *what, char *dir, size_t len,
                 bool *created);

/* One run by the engine, shown as o asks (the header and the live line
 * unless quiet, Ctrl-C wired to stop it), its reports written into
 * res->run_dir (which must exist), its summary on stdout unless quiet or
 * brief (then only the verdict line, unless silent). Returns the run's
 * exit code; a run that did not run has its error printed, and in
 * *status (unless NULL) and err why. res keeps the result for the caller,
 * who frees it with result_free. */
int run_and_report(const struct run_request *req, const struct run_opts *o, struct run_result *res,
                   enum engine_status *status, char *err, size_t errlen);

/* One seed of a matrix row or a scorecard cell, on servers of its own:
 * the scenario on that seed (res.scn points at it) and what came of it. */
struct grid_seed {
    struct scenario scn;
    struct run_result res;
    int rc;        /* the run's exit code */
    bool ran;      /* anything happened (a history, or time elapsed) */
    char why[320]; /* !ran: the folder, the servers or the clients that failed */
};
/* *scn on seed, its reports in run_dir (made here; its parent must
 * exist), shown as ro asks. NULL when out of memory (said on stderr);
 * otherwise freed by the caller with grid_seed_free. */
struct grid_seed *grid_seed_run(const struct scenario *scn, uint64_t seed, const char *run_dir,
                                const struct run_opts *ro);
void grid_seed_free(struct grid_seed *g);

/* The live line's text (without the terminal's redraw): elapsed time,
 * the step rate since the last line, the last second's coarse acquire p99
 * with the two digits it has, the counts so far. */
const char *face_text(const struct progress *p, double steps_per_s, char *buf, size_t len);

int cmd_run(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_scorecard(int argc, char **argv);
/* The worse of two exit codes: interrupted, then environment, then usage,
 * then a failed expectation. */
int exit_worse(int a, int b);
int cmd_cluster(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_hosts(int argc, char **argv);
/* runs/latest pointed at run_dir (relative, replaced atomically) when
 * run_dir is a folder directly in runs/; otherwise nothing. A link that
 * cannot be made is a warning on stderr, never a failed run. */
void runs_latest_link(const char *run_dir);

/* The kinds `locklab list KIND` names (kinds_text.c), each read from its
 * registry: its count and its i-th name; NULL for the scenarios, which
 * are files in their folder. */
struct cli_kind {
    const char *name;
    size_t (*count)(void);
    const char *(*at)(size_t i);
    /* A kind with no registry: the .json files of this folder, named by
     * their paths (scenarios) or, bare, by their names (suites). */
    const char *(*folder)(void);
    bool bare;
};
/* A folder kind's files, sorted, into *ent (free each and the array);
 * their count, or -1 when the folder cannot be read. */
int cli_folder_files(const struct cli_kind *kind, struct dirent ***ent);
/* A folder kind's names as list prints them ("quick", "scenarios/x.json"). */
void cli_folder_name(const struct cli_kind *kind, const char *file, char *buf, size_t len);
/* NULL for a name that is none. */
const struct cli_kind *cli_kind_find(const char *name);
/* The n names at(0..n) into buf, sep between them and last before the
 * last ("a, b or c"); buf. */
const char *cli_join(size_t n, const char *(*at)(size_t), const char *sep, const char *last,
                     char *buf, size_t len);
/* The kinds' own names joined so ("algorithms, scenarios, ..."). */
const char *cli_kinds_joined(const char *sep, const char *last, char *buf, size_t len);
/* Each server kind the fleet starts for a lock (one with a start): its
 * name, or with prefix its node prefix, between before and after, sep
 * between two ("redis-1.., zk-1.."); buf. */
const char *cli_started_kinds(bool prefix, const char *before, const char *after, const char *sep,
                              char *buf, size_t len);
/* text's n bytes printed from column col, wrapped at its blanks so that no
 * line passes width, each further line indented to indent; a word longer
 * than a line has one of its own. Returns the column it ended at. */
int cli_wrap(FILE *f, const char *text, size_t n, int col, int indent, int width);

/* The history file a path names: a run folder's history.llh (its
 * history.jsonl when it has no history.llh), or the path itself. */
void history_file_of(const char *path, char *file, size_t len);

#endif
