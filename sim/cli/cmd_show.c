/* cmd_show.c - `locklab show`: what `run` would do with the same options,
 * after every default and clamp, without starting anything. It reads the
 * same resolved scenario the run, its header and report.json read. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "sim/cli/cli.h"
#include "sim/fleet/server_kind.h"
#include "sim/record/history_reader.h"

/* A text from the file on one line: control characters escaped as JSON
 * writes them, so a newline or a terminal escape cannot break the output. */
static void print_one_line(const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('\n');
}

/* " (redis-1)", " (zk-1..zk-3)": n managed servers of kind from the first'th,
 * as faults and their kept logs (servers/<name>.log) name them. */
static void print_names(const struct server_kind *kind, size_t first, size_t n)
{
    if (n == 1)
        printf(" (%s-%zu)", kind->node_prefix, first);
    else if (n > 1)
        printf(" (%s-%zu..%s-%zu)", kind->node_prefix, first, kind->node_prefix, first + n - 1);
}

static const char managed[] = ", managed: started on free 127.0.0.1 ports, stopped by PID at the "
                              "end, each log kept as servers/<name>.log\n";

/* A leader and its followers, through locklab's proxy, and the finders
 * that fail it over (the layout of the lock's family). */
static void print_topology(const struct server_kind *sk, const struct family_layout *l)
{
    const struct server_kind *finder = sk->found_by ? server_kind_find(sk->found_by) : NULL;
    printf("  servers: a %s %s", sk->name, sk->leader_word ? sk->leader_word : "leader");
    print_names(sk, 1, 1);
    printf(", %" PRIu32 " %s%s", l->followers, sk->follower_word, l->followers == 1 ? "" : "s");
    print_names(sk, 2, l->followers);
    printf(" replicating through locklab's proxy, %" PRIu32 " %s%s", l->finders,
           finder ? finder->name : "finder", l->finders == 1 ? "" : "s");
    if (finder)
        print_names(finder, 1, l->finders);
    fputs(managed, stdout);
}

static void print_fleet(const struct scenario *s, const struct lock_ops *ops)
{
    const struct server_list *ext = scenario_external(s, ops->server);
    const struct server_list *finders = scenario_finders(s, ops);
    const char *kind = ops->server;
    size_t need = scenario_servers(s, ops);
    const struct server_kind *sk = server_kind_find(kind);
    if (finders->n > 0) { /* they are of the kind that finds its master */
        const struct server_kind *finder = server_kind_find(sk->found_by);
        printf("  servers: %s, external: the %s the %ss name for \"%s\", asked before "
               "each dial; %ss:",
               kind, sk->leader_word ? sk->leader_word : "leader", sk->found_by,
               finder && finder->finds_as ? finder->finds_as : "", sk->found_by);
        for (size_t i = 0; i < finders->n; i++)
            printf(" %s:%d", finders->ep[i].host, finders->ep[i].port);
        printf("\n");
        return;
    }
    struct family_layout l;
    scenario_layout(s, &l);
    if (ext->n == 0 && l.followers > 0) {
        print_topology(sk, &l);
        return;
    }
    if (ext->n == 0) {
        printf("  servers: %zu %s", need, kind);
        print_names(sk, 1, need);
        const struct server_kind *pooler =
            sk->pooler && sk->pooled && sk->pooled(&l) ? server_kind_find(sk->pooler) : NULL;
        if (pooler) {
            printf(" behind a %s", pooler->name);
            print_names(pooler, 1, 1);
        }
        fputs(managed, stdout);
        return;
    }
    printf("  servers: %s, external (--%s or \"servers\"), never started or stopped:", kind, kind);
    /* voters use the nodes they need of those named; one service, all */
    size_t n = lock_family_with(ops->family, FAMILY_HOOK(quorum)) ? need : ext->n;
    for (size_t i = 0; i < n && i < ext->n; i++)
        printf(" %s:%d", ext->ep[i].host, ext->ep[i].port);
    printf("\n");
}

static void print_timeline(const struct scenario *s)
{
    if (s->n_faults == 0) {
        printf("faults: none\n");
        return;
    }
    printf("faults:\n");
    for (size_t i = 0; i < s->n_faults; i++) {
        char plan[160];
        printf("  %8.3f s  %s\n", (double)s->faults[i].at_ms / 1000.0,
               report_fault_plan(&s->faults[i], plan, sizeof(plan)));
    }
}

static int show_json(const struct scenario *s)
{
    json_t *o = report_scenario_json(s);
    int rc = o ? json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) : -1;
    json_decref(o);
    printf("\n");
    return rc < 0 ? EXIT_ENV : EXIT_PASS;
}

/* What a run of s would do, in words (or as JSON). */
static int show_planned(const struct run_opts *o, const struct scenario *s,
                        const struct lock_ops *ops)
{
    if (o->json)
        return show_json(s);
    printf("%s: ", s->path);
    print_one_line(s->description[0] ? s->description : "(no description)");
    report_header(stdout, s, NULL, 0);
    print_fleet(s, ops);
    char secs[32];
    printf("run: no new business step after %s s",
           report_seconds(s->duration_ms, secs, sizeof(secs)));
    if (s->requests)
        printf(" or %" PRIu64 " steps, whichever comes first", s->requests);
    printf("; a step under way finishes (an acquire may wait up to wait_ms %" PRIu32 " more)\n",
           s->wait_ms);
    if (s->rate > 0)
        printf("load: open loop, %g steps/s in all: each client starts a step every %.3f ms, "
               "and latency counts from when the step was due\n",
               s->rate, 1000.0 * s->clients / s->rate);
    else
        printf("load: closed loop: each client starts its next step as soon as the last ends\n");
    print_timeline(s);
    printf("expect: ");
    report_expectation(stdout, s);
    printf("\n");
    printf("(nothing was started: `locklab run` with the same options runs this)\n");
    return EXIT_PASS;
}

/* `show --history PATH`: the history as JSON lines on stdout, whatever
 * its form, event by event: the bytes `run --history-jsonl` writes, in the
 * memory of the reader's tables, however long the run. */
static int show_history(int argc, char **argv)
{
    if (argc != 3)
        return bad_usage("%s", "show --history: give one RUN_DIR or history file");
    char file[600], err[600];
    history_file_of(argv[2], file, sizeof(file));
    struct history_reader *r = history_reader_open(file, err, sizeof(err));
    if (r == NULL) {
        fprintf(stderr, "locklab: %s\n", err);
        return EXIT_USAGE;
    }
    int rc = history_reader_to_jsonl(r, stdout);
    int code = EXIT_PASS;
    if (rc == -1) {
        fflush(stdout);
        fprintf(stderr, "locklab: %s\n", history_reader_error(r));
        code = EXIT_USAGE;
    } else if (rc == -2) {
        fprintf(stderr, "locklab: show --history %s: %s\n", file,
                errno == EINVAL ? "an event JSON lines cannot express" : strerror(errno));
        code = EXIT_ENV;
    }
    history_reader_close(r);
    return code;
}

int cmd_show(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--history") == 0)
        return show_history(argc, argv);
    struct run_opts o;
    const struct lock_ops *ops = NULL;
    struct scenario *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        fprintf(stderr, "locklab: out of memory\n");
        return EXIT_ENV;
    }
    int rc = plan_one_run(argc, argv, RUN_OPTS_SHOW, &o, s, &ops);
    if (rc == 0)
        rc = show_planned(&o, s, ops);
    free(s);
    return rc;
}
