/* cli.c - option parsing and scenario loading shared by run and compare. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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

enum { OPT_REDIS = 'r', OPT_ZOOKEEPER = 'z', OPT_ALGORITHMS = 'A' };

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
    case 'd': {
        char *end;
        o->duration = strtod(arg, &end);
        if (end == arg || *end || !(o->duration > 0 && o->duration <= 86400))
            return bad_usage("--duration: expected seconds in (0, 86400], got \"%s\"", arg);
        return 0;
    }
    case 'n':
        if (parse_long(arg, 0, INT64_MAX, &v) < 0)
            return bad_usage("--requests: expected an integer >= 0, got \"%s\"", arg);
        o->requests = v;
        return 0;
    case 's':
        if (parse_long(arg, 0, INT64_MAX, &v) < 0)
            return bad_usage("--seed: expected an integer >= 0, got \"%s\"", arg);
        o->seed = v;
        return 0;
    default: /* 'V' */
        if (parse_long(arg, 0, 100000, &v) < 0)
            return bad_usage("--show-violations: expected an integer >= 0, got \"%s\"", arg);
        o->max_violations = (int)v;
        return 0;
    }
}

int parse_run_opts(int argc, char **argv, struct run_opts *o, int compare)
{
    static const struct option longs[] = {{"algorithm", required_argument, 0, 'a'},
                                          {"algorithms", required_argument, 0, 'A'},
                                          {"clients", required_argument, 0, 'c'},
                                          {"duration", required_argument, 0, 'd'},
                                          {"requests", required_argument, 0, 'n'},
                                          {"seed", required_argument, 0, 's'},
                                          {"out", required_argument, 0, 'o'},
                                          {"quiet", no_argument, 0, 'q'},
                                          {"show-violations", required_argument, 0, 'V'},
                                          {"redis", required_argument, 0, 'r'},
                                          {"zookeeper", required_argument, 0, 'z'},
                                          {0, 0, 0, 0}};
    const char *cmd = compare ? "compare" : "run";
    *o = (struct run_opts){
        .clients = -1, .duration = -1, .requests = -1, .seed = -1, .max_violations = 10};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "a:c:d:n:s:o:qr:z:", longs, NULL)) != -1) {
        int rc = 0;
        if (c == 'a' && !compare)
            o->algorithm = optarg;
        else if (c == 'A' && compare)
            o->algorithms = optarg;
        else if (c == 'o')
            o->out = optarg;
        else if (c == 'r')
            o->servers[LOCK_SERVER_REDIS] = optarg;
        else if (c == 'z')
            o->servers[LOCK_SERVER_ZOOKEEPER] = optarg;
        else if (c == 'q')
            o->quiet = 1;
        else if (c != '?' && c != ':' && c != 'a' && c != 'A')
            rc = numeric_opt(c, optarg, o);
        else if (c == 'a' || c == 'A')
            return bad_usage("%s: use --%s", cmd, compare ? "algorithms a,b,c" : "algorithm NAME");
        else
            return bad_usage("%s: unknown or incomplete option \"%s\"", cmd, argv[optind - 1]);
        if (rc)
            return rc;
    }
    if (optind != argc - 1)
        return bad_usage("%s: %s", cmd,
                         optind >= argc ? "which scenario? give one SCENARIO file"
                                        : "exactly one SCENARIO file, please");
    o->scenario = argv[optind];
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

static int apply_servers(const struct run_opts *o, struct scenario *s)
{
    for (int k = 0; k < LOCK_SERVER_KINDS; k++) {
        char err[256];
        if (o->servers[k] && endpoints_parse(o->servers[k], &s->servers[k], err, sizeof(err)) < 0)
            return bad_usage("--%s: %s", lock_server_name((enum lock_server)k), err);
    }
    return 0;
}

int load_scenario(const struct run_opts *o, struct scenario *s)
{
    char err[SCENARIO_ERR_MAX];
    if (scenario_load(o->scenario, s, err) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_USAGE;
    }
    if (o->algorithm) {
        if (lock_find(o->algorithm) == NULL)
            return unknown_algorithm("--algorithm", o->algorithm);
        snprintf(s->algorithm, sizeof(s->algorithm), "%s", o->algorithm);
    }
    if (o->clients > 0)
        s->clients = (uint32_t)o->clients;
    if (o->duration > 0) {
        long long ms = llround(o->duration * 1000.0);
        s->duration_ms = ms > 0 ? (uint64_t)ms : 1;
    }
    if (o->requests >= 0)
        s->requests = (uint64_t)o->requests;
    if (o->seed >= 0)
        s->seed = (uint64_t)o->seed;
    int rc = apply_servers(o, s);
    if (rc)
        return rc;
    if (scenario_finish(s, err) < 0) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_USAGE;
    }
    return 0;
}

int make_run_dir(const char *out, const char *name, const char *what, char *dir, size_t len)
{
    if (out) {
        snprintf(dir, len, "%s", out);
    } else {
        char stamp[32];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
        mkdir("runs", 0755);
        snprintf(dir, len, "runs/%s-%s-%s", name, what, stamp);
    }
    /* Never mix two runs' files: a taken default name gets a suffix. */
    if (mkdir(dir, 0755) == 0)
        return 0;
    if (errno == EEXIST && out) {
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
    }
    size_t base = strlen(dir);
    for (int i = 2; errno == EEXIST && i < 100 && !out; i++) {
        snprintf(dir + base, len - base, "-%d", i);
        if (mkdir(dir, 0755) == 0)
            return 0;
    }
    fprintf(stderr, "locklab: cannot create the run folder %s: %s\n", dir, strerror(errno));
    return -1;
}
