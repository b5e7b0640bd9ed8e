/* cli.c - option parsing and scenario loading shared by run and compare. */
#include "sim/cli/cli.h"
#include "algorithms/mysql_wire.h"
#include "reports/report.h"
#include "sim/fleet/server_kind.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim/cli/metrics_http.h"

int bad_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "locklab: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see locklab --help)\n");
    va_end(ap);
    return EXIT_USAGE;
}

int parse_long(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int parse_percentiles_opt(const char *arg, double *p, size_t *n)
{
    char why[160];
    *n = report_parse_percentiles(arg, p, why, sizeof(why));
    return *n ? 0 : bad_usage("--percentiles: %s", why);
}

int check_stdout_taken(int csv, const char *json_to)
{
    if (csv && json_to && strcmp(json_to, "-") == 0)
        return bad_usage("%s", "--csv and --json - both write stdout; give --json a FILE");
    if (json_to == NULL || strcmp(json_to, "-") == 0)
        return 0;
    /* known before anything starts: a run is not made to lose its copy */
    char dir[700];
    snprintf(dir, sizeof(dir), "%s", json_to);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof(dir), ".");
    struct stat st;
    if (json_to[0] == '\0' || json_to[strlen(json_to) - 1] == '/' ||
        (stat(json_to, &st) == 0 && S_ISDIR(st.st_mode)) || stat(dir, &st) != 0 ||
        !S_ISDIR(st.st_mode) || access(dir, W_OK) != 0)
        return bad_usage("--json \"%s\": expected a file in a folder that can be written, or -",
                         json_to);
    return 0;
}

int copy_json_out(const char *src, const char *dst)
{
    bool to_stdout = strcmp(dst, "-") == 0;
    struct stat a, b;
    if (!to_stdout && stat(src, &a) == 0 && stat(dst, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        return 0; /* --json named the report itself: opening it to write would empty it */
    FILE *in = fopen(src, "r");
    FILE *out = in == NULL ? NULL : to_stdout ? stdout : fopen(dst, "w");
    int ok = in && out;
    char buf[8192];
    for (size_t n; ok && (n = fread(buf, 1, sizeof(buf), in)) > 0;)
        ok = fwrite(buf, 1, n, out) == n;
    ok = ok && !ferror(in);
    int err = errno;
    if (in)
        fclose(in);
    if (out && !to_stdout && fclose(out) != 0)
        ok = 0;
    if (out && to_stdout && fflush(stdout) != 0)
        ok = 0;
    if (ok)
        return 0;
    fprintf(stderr, "locklab: --json %s: cannot copy %s: %s\n", dst, src,
            strerror(err ? err : EIO));
    return EXIT_ENV;
}

int finish_outputs(int rc, const char *dir, const char *name, const char *json_to)
{
    if (json_to) {
        char path[600];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        rc = exit_worse(rc, copy_json_out(path, json_to));
    }
    if (fflush(stdout) != 0)
        rc = exit_worse(rc, EXIT_ENV);
    return rc;
}

/* Values of the options beyond the short letters: one per server kind,
 * and those for other tools (--json FILE is run's and compare's; show's
 * --json takes no value). */
#define OPT_SERVERS     1000
#define OPT_CSV         900
#define OPT_JSON_TO     901
#define OPT_PERCENTILES 902
#define OPT_SEEDS       903 /* compare --seeds N */
#define OPT_WIDE        904 /* compare --wide */
#define OPT_MYSQL_FILE  905 /* --mysql-defaults-file FILE */
#define RUN_OPTIONS_MAX (15 + 5 + SCENARIO_SERVER_KINDS + HOST_OPTS + 1)
#define BASE_SHORTS     "a:A:c:d:n:s:o:q"

#define OPT_METRICS 2000 /* --metrics HOST:PORT */
#define OPT_LINGER  2001 /* --metrics-linger S */

int parse_duration_opt(const char *arg, uint64_t *ms)
{
    char *end, why[96];
    /* decimal only, as JSON writes numbers: no hex, inf or blanks */
    double secs = strtod(arg, &end);
    if (end == arg || *end || arg[strspn(arg, "0123456789.eE+-")] != '\0')
        return bad_usage("--duration: expected seconds, got \"%s\"", arg);
    if (scenario_duration_ms(secs, ms, why, sizeof(why)) < 0)
        return bad_usage("--duration: %s", why);
    return 0;
}

static int numeric_opt(int c, const char *arg, struct run_opts *o)
{
    long long v;
    switch (c) {
    case 'c':
        if (parse_long(arg, 1, SCENARIO_MAX_CLIENTS, &v) < 0)
            return bad_usage("--clients: expected an integer in 1..%d, got \"%s\"",
                             SCENARIO_MAX_CLIENTS, arg);
        o->clients = (long)v;
        return 0;
    case 'd':
        return parse_duration_opt(arg, &o->duration_ms);
    case 'n':
        if (parse_long(arg, 0, INT64_MAX, &v) < 0)
            return bad_usage("--requests: expected an integer in 0..%lld, got \"%s\"",
                             (long long)INT64_MAX, arg);
        o->requests = v;
        return 0;
    case 'R': {
        char *end;
        double r = strtod(arg, &end);
        if (end == arg || *end || arg[strspn(arg, "0123456789.eE+-")] != '\0' || !(r >= 0) ||
            r > SCENARIO_MAX_RATE)
            return bad_usage("--rate: expected business steps per second in 0..%d (0: closed "
                             "loop), got \"%s\"",
                             SCENARIO_MAX_RATE, arg);
        o->rate = r;
        return 0;
    }
    case 's':
        if (parse_long(arg, 0, INT64_MAX, &v) < 0)
            return bad_usage("--seed: expected an integer in 0..%lld, got \"%s\"",
                             (long long)INT64_MAX, arg);
        o->seed = v;
        return 0;
    case OPT_SEEDS:
        if (parse_long(arg, 1, RUN_MAX_SEEDS, &v) < 0)
            return bad_usage("--seeds: expected an integer in 1..%d, got \"%s\"", RUN_MAX_SEEDS,
                             arg);
        o->seeds = (size_t)v;
        return 0;
    default: /* 'V' */
        if (parse_long(arg, 0, 100000, &v) < 0)
            return bad_usage("--show-violations: expected an integer in 0..100000, got \"%s\"",
                             arg);
        o->max_violations = (int)v;
        return 0;
    }
}

/* An option this command does not take (--algorithm on compare and
 * --algorithms on run get their own message first): what only a run uses
 * on show, show's --json on the others. */
static int foreign_opt(int c, enum run_opts_mode mode)
{
    if (mode == RUN_OPTS_SHOW)
        return c == 'A' || c == 'o' || c == 'q' || c == 'V' || c == 'P' || c == 'H' ||
               c == OPT_CSV || c == OPT_PERCENTILES || c == OPT_METRICS || c == OPT_LINGER ||
               c == OPT_SEEDS || c == OPT_WIDE;
    return c == 'J' || ((c == OPT_SEEDS || c == OPT_WIDE) && mode != RUN_OPTS_COMPARE);
}

int metrics_option(bool linger, const char *arg, struct run_opts *o)
{
    if (!linger) {
        char err[300];
        if (metrics_address_check(arg, err, sizeof(err)) < 0)
            return bad_usage("--metrics: %s", err);
        o->metrics = arg;
        return 0;
    }
    char *end;
    double s = strtod(arg, &end);
    if (end == arg || *end || arg[strspn(arg, "0123456789.")] != '\0' || !(s >= 0) || s > 3600)
        return bad_usage("--metrics-linger: expected seconds in 0..3600, got \"%s\"", arg);
    o->metrics_linger = s;
    return 0;
}

/* The MySQL locks' credentials: an option file Connector/C reads, named
 * to them through the environment (mysql_wire.h), so that no password is
 * ever on a command line, locklab's or a server's. */
static int mysql_file_option(const char *arg)
{
    if (access(arg, R_OK) < 0)
        return bad_usage("--mysql-defaults-file: cannot read %s: %s", arg, strerror(errno));
    if (setenv(MYSQL_DEFAULTS_ENV, arg, 1) < 0)
        return bad_usage("--mysql-defaults-file: %s", strerror(errno));
    return 0;
}

static int text_opt(int c, const char *arg, struct run_opts *o)
{
    if (c == OPT_METRICS || c == OPT_LINGER)
        return metrics_option(c == OPT_LINGER, arg, o);
    if (c == OPT_MYSQL_FILE)
        return mysql_file_option(arg);
    if (c == 'a')
        o->algorithm = arg;
    else if (c == 'A')
        o->algorithms = arg;
    else if (c == 'o')
        o->out = arg;
    else if (c >= OPT_SERVERS && c < OPT_SERVERS + SCENARIO_SERVER_KINDS)
        o->servers[c - OPT_SERVERS] = arg;
    else if (c == 'q')
        o->quiet = 1;
    else if (c == 'J')
        o->json = 1;
    else if (c == 'P')
        o->proxy = 1;
    else if (c == 'H')
        o->history_jsonl = 1;
    else if (c == OPT_CSV)
        o->csv = 1;
    else if (c == OPT_WIDE)
        o->wide = 1;
    else if (c == OPT_JSON_TO)
        o->json_to = arg;
    else if (c == OPT_PERCENTILES)
        return parse_percentiles_opt(arg, o->percentiles, &o->n_percentiles);
    else
        return numeric_opt(c, arg, o);
    return 0;
}

static const char *option_name(const struct option *longs, int c, char *name, size_t len)
{
    name[0] = '\0';
    for (; longs->name; longs++)
        if (longs->val == c)
            snprintf(name, len, "--%s", longs->name);
    return name;
}

char server_option_letter(const struct server_kind *kind)
{
    char c = kind->option_letter;
    return c && !strchr(BASE_SHORTS, c) ? c : 0; /* never another option's letter */
}

const struct server_kind *server_option_kind(size_t k)
{
    const struct server_kind *kind = k < SCENARIO_SERVER_KINDS ? server_kind_at(k) : NULL;
    return kind && !kind->internal ? kind : NULL;
}

/* The options of run, compare and show: these, then one per server kind
 * (--redis H:P, with its kind's short letter -r), into longs; the short
 * options' string into shorts. */
static void run_options(struct option *longs, char *shorts, size_t shorts_len,
                        enum run_opts_mode mode)
{
    static const struct option base[] = {
        {"algorithm", required_argument, 0, 'a'},
        {"algorithms", required_argument, 0, 'A'},
        {"clients", required_argument, 0, 'c'},
        {"duration", required_argument, 0, 'd'},
        {"requests", required_argument, 0, 'n'},
        {"rate", required_argument, 0, 'R'},
        {"seed", required_argument, 0, 's'},
        {"out", required_argument, 0, 'o'},
        {"quiet", no_argument, 0, 'q'},
        {"show-violations", required_argument, 0, 'V'},
        {"json", no_argument, 0, 'J'},
        {"proxy", no_argument, 0, 'P'},
        {"history-jsonl", no_argument, 0, 'H'},
        {"csv", no_argument, 0, OPT_CSV},
        {"percentiles", required_argument, 0, OPT_PERCENTILES},
        {"seeds", required_argument, 0, OPT_SEEDS},
        {"wide", no_argument, 0, OPT_WIDE},
        {"metrics", required_argument, 0, OPT_METRICS},
        {"metrics-linger", required_argument, 0, OPT_LINGER},
        {"mysql-defaults-file", required_argument, 0, OPT_MYSQL_FILE}};
    /* a merge that adds options must make room for them */
    _Static_assert(sizeof(base) / sizeof(base[0]) + SCENARIO_SERVER_KINDS + HOST_OPTS + 1 <=
                       RUN_OPTIONS_MAX,
                   "RUN_OPTIONS_MAX is short of run's options");
    size_t n = sizeof(base) / sizeof(base[0]), used;
    memcpy(longs, base, sizeof(base));
    for (size_t i = 0; i < n && mode != RUN_OPTS_SHOW; i++) /* --json FILE: the report's copy */
        if (longs[i].val == 'J')
            longs[i] = (struct option){"json", required_argument, 0, OPT_JSON_TO};
    used = (size_t)snprintf(shorts, shorts_len, "%s", BASE_SHORTS);
    for (size_t k = 0; k < server_kind_count(); k++) {
        const struct server_kind *kind = server_option_kind(k);
        if (kind == NULL)
            continue;
        longs[n++] = (struct option){kind->name, required_argument, 0, OPT_SERVERS + (int)k};
        if (server_option_letter(kind) && used + 3 < shorts_len)
            used += (size_t)snprintf(shorts + used, shorts_len - used, "%c:", kind->option_letter);
    }
    for (size_t h = 0; h < HOST_OPTS && mode != RUN_OPTS_SHOW; h++)
        longs[n++] = host_long_options[h];
    longs[n] = (struct option){0, 0, 0, 0};
}

int hosts_up(const struct run_opts *o, struct run_hosts *h)
{
    int rc = run_hosts_open(&o->hosts, 0, false, h);
    if (rc == 0 && h->list.n > 0)
        fleet_use_hosts(h->host, h->list.n);
    return rc;
}

void hosts_down(struct run_hosts *h)
{
    fleet_use_hosts(NULL, 0);
    run_hosts_close(h);
}

/* A server kind's short letter (-r) as its option's value. */
static int server_letter(int c)
{
    for (size_t k = 0; k < server_kind_count() && k < SCENARIO_SERVER_KINDS; k++)
        if (c != 0 && server_option_letter(server_kind_at(k)) == c)
            return OPT_SERVERS + (int)k;
    return c;
}

void run_opts_init(struct run_opts *o)
{
    *o = (struct run_opts){
        .clients = -1, .requests = -1, .rate = -1, .seed = -1, .max_violations = 10, .seeds = 1};
    o->metrics_linger = -1;
}

int parse_run_opts(int argc, char **argv, struct run_opts *o, enum run_opts_mode mode)
{
    struct option longs[RUN_OPTIONS_MAX];
    char shorts[64];
    run_options(longs, shorts, sizeof(shorts), mode);
    static const char *const names[] = {"run", "compare", "show"};
    const char *cmd = names[mode];
    run_opts_init(o);
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        c = server_letter(c);
        if (c == 'a' && mode == RUN_OPTS_COMPARE)
            return bad_usage("compare: use --algorithms a,b,c");
        if (c == 'A' && mode == RUN_OPTS_RUN)
            return bad_usage("run: use --algorithm NAME");
        if (c != '?' && c != ':' && foreign_opt(c, mode)) {
            char name[32];
            return bad_usage("%s: %s does not apply here", cmd,
                             option_name(longs, c, name, sizeof(name)));
        }
        if (c == '?' || c == ':')
            return bad_usage("%s: unknown or incomplete option \"%s\"", cmd, argv[optind - 1]);
        int took = host_opts_take(c, optarg, &o->hosts);
        if (took == EXIT_USAGE)
            return took;
        int rc = took ? 0 : text_opt(c, optarg, o);
        if (rc)
            return rc;
    }
    if (o->metrics_linger >= 0 && o->metrics == NULL)
        return bad_usage("%s: --metrics-linger needs --metrics HOST:PORT", cmd);
    if (optind != argc - 1)
        return bad_usage("%s: %s", cmd,
                         optind >= argc ? "which scenario? give one SCENARIO file"
                                        : "exactly one SCENARIO file, please");
    o->scenario = argv[optind];
    o->to_stderr = o->csv || (o->json_to && strcmp(o->json_to, "-") == 0);
    return check_stdout_taken(o->csv, o->json_to);
}

int plan_one_run(int argc, char **argv, enum run_opts_mode mode, struct run_opts *o,
                 struct scenario *s, const struct lock_ops **ops)
{
    char err[512];
    int rc = parse_run_opts(argc, argv, o, mode);
    if (rc == 0)
        rc = load_scenario(o, s);
    if (rc)
        return rc;
    *ops = lock_find(s->algorithm);
    if (fleet_check(s, ops, 1, err, sizeof(err)) < 0)
        return bad_usage("%s", err);
    return 0;
}

int unknown_algorithm(const char *option, const char *name)
{
    const char *known[16];
    size_t n = 0;
    for (; n < lock_count() && n < 16; n++)
        known[n] = lock_at(n)->name;
    const char *near = suggest_closest(name, known, n);
    if (near) {
        fprintf(stderr, "locklab: %s: unknown algorithm \"%s\" (did you mean \"%s\"?)\n", option,
                name, near);
        return EXIT_USAGE;
    }
    char names[256];
    fprintf(stderr, "locklab: %s: unknown algorithm \"%s\" (known: %s)\n", option, name,
            lock_names(names, sizeof(names)));
    return EXIT_USAGE;
}

/* The command line's server lists, each read by endpoints_parse (its
 * syntax, and each endpoint's) into lists[k]. */
static int read_servers(const struct run_opts *o, struct server_list *lists,
                        struct scenario_overrides *ov)
{
    for (size_t k = 0; k < server_kind_count() && k < SCENARIO_SERVER_KINDS; k++) {
        char err[256];
        if (o->servers[k] == NULL)
            continue;
        if (endpoints_parse(o->servers[k], &lists[k], err, sizeof(err)) < 0)
            return bad_usage("--%s: %s", server_kind_at(k)->name, err);
        ov->servers[k] = &lists[k];
    }
    return 0;
}

/* The command line's values for the scenario: --algorithm checked, the
 * server lists read into lists. 0, or an exit code after its message. */
static int options_as_overrides(const struct run_opts *o, struct server_list *lists,
                                struct scenario_overrides *ov)
{
    scenario_no_overrides(ov);
    if (o->algorithm && lock_find(o->algorithm) == NULL)
        return unknown_algorithm("--algorithm", o->algorithm);
    int rc = read_servers(o, lists, ov);
    if (rc)
        return rc;
    ov->algorithm = o->algorithm;
    ov->clients = o->clients > 0 ? o->clients : -1;
    ov->duration_ms = o->duration_ms;
    ov->requests = o->requests;
    ov->rate = o->rate;
    ov->seed = o->seed;
    return 0;
}

/* The scenario of o with its options in place: whole (every check), or
 * as compare first reads it (each value, no checks of the whole). */
static int scenario_of(const struct run_opts *o, bool whole, struct scenario *s)
{
    struct scenario_overrides ov;
    struct server_list *lists = calloc(SCENARIO_SERVER_KINDS, sizeof(*lists));
    if (lists == NULL) {
        fprintf(stderr, "locklab: out of memory\n");
        return EXIT_ENV;
    }
    int rc = options_as_overrides(o, lists, &ov);
    if (rc == 0) {
        char err[SCENARIO_ERR_MAX];
        int bad = whole ? scenario_load_with(o->scenario, &ov, s, err)
                        : scenario_read(o->scenario, &ov, s, err);
        if (bad < 0) {
            fprintf(stderr, "locklab: %s\n", err);
            rc = EXIT_USAGE;
        }
    }
    free(lists);
    return rc;
}

int load_scenario(const struct run_opts *o, struct scenario *s)
{
    return scenario_of(o, true, s);
}

int read_scenario(const struct run_opts *o, struct scenario *s)
{
    return scenario_of(o, false, s);
}

/* The file that says a folder holds a run (or a comparison) already, or
 * NULL: --out must never mix two runs' files or replace one silently. */
static const char *holds_a_run(const char *dir)
{
    static const char *const marks[] = {"report.json", "history.llh", "history.jsonl",
                                        "compare.json", "matrix.json"};
    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
        char path[800];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, marks[i]);
        if (stat(path, &st) == 0)
            return marks[i];
    }
    return NULL;
}

static void default_dir(const char *name, const char *what, char *dir, size_t len)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    mkdir("runs", 0755);
    snprintf(dir, len, "runs/%s-%s-%s", name, what, stamp);
}

int check_out_dir(const char *out, const char *sub)
{
    char dir[700];
    struct stat st;
    if (out[0] == '\0')
        return bad_usage("%s", "--out: an empty folder name");
    snprintf(dir, sizeof(dir), "%s%s%s", out, sub ? "/" : "", sub ? sub : "");
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return bad_usage("--out: %s is not a folder", dir);
    const char *mark = holds_a_run(dir);
    if (mark) {
        if (sub)
            fprintf(stderr,
                    "locklab: --out %s: its %s/ holds a run already (%s); remove it or name "
                    "another folder\n",
                    out, sub, mark);
        else
            fprintf(stderr,
                    "locklab: --out %s holds a run already (%s); remove it or name another "
                    "folder\n",
                    out, mark);
        return EXIT_USAGE;
    }
    return 0;
}

int make_run_dir(const char *out, const char *name, const char *what, char *dir, size_t len,
                 bool *created)
{
    *created = false;
    if (out) {
        int rc = check_out_dir(out, NULL);
        if (rc)
            return rc;
        snprintf(dir, len, "%s", out);
    } else {
        default_dir(name, what, dir, len);
    }
    if (mkdir(dir, 0755) == 0)
        return *created = true, 0;
    struct stat st;
    if (errno == EEXIST && out && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return 0; /* an empty or unrelated folder the user named: never removed */
    /* Never mix two runs' files: a taken default name gets a suffix. */
    size_t base = strlen(dir);
    for (int i = 2; errno == EEXIST && i < 100 && !out; i++) {
        snprintf(dir + base, len - base, "-%d", i);
        if (mkdir(dir, 0755) == 0)
            return *created = true, 0;
    }
    fprintf(stderr, "locklab: cannot create the run folder %s: %s\n", dir, strerror(errno));
    return EXIT_ENV;
}

int exit_worse(int a, int b)
{
    static const int order[] = {EXIT_INTERRUPTED, EXIT_ENV, EXIT_USAGE, EXIT_FAILED, EXIT_PASS};
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        if (a == order[i] || b == order[i])
            return order[i];
    return a;
}

void history_file_of(const char *path, char *file, size_t len)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(file, len, "%s", path);
        return;
    }
    snprintf(file, len, "%s/history.llh", path);
    if (stat(file, &st) != 0) /* a run of locklab before history.llh */
        snprintf(file, len, "%s/history.jsonl", path);
}
