/* cmd_list.c - `locklab list`: what this build can run, each with a line on
 * what it is, and the shipped scenarios with what they expect. `list KIND`
 * prints only the names, one per line, for scripts and completion. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "sim/cli/cli.h"
#include "sim/faults/fault.h"

#ifndef LOCKLAB_SCENARIOS_DIR
#define LOCKLAB_SCENARIOS_DIR "scenarios"
#endif

static const char *const workload_what[] = {
    [WORKLOAD_FLASH_SALE] = "inventory under a flash sale: orders never exceed stock",
    [WORKLOAD_CACHE_REBUILD] = "expiring cache keys rebuilt once per expiry: no stampede",
    [WORKLOAD_SCHEDULED_TASKS] = "instances firing tasks each period: each runs exactly once",
    [WORKLOAD_ORDER_IDS] = "order ids handed out from a last-id counter: none twice, none skipped",
    [WORKLOAD_BANK_TRANSFER] =
        "transfers under both accounts' locks, all or none: the total never changes",
    [WORKLOAD_READ_MOSTLY] =
        "a cache entry many read and few rewrite: no reader sees a half-written value",
    [WORKLOAD_POOL] = "a connection pool behind a semaphore: never more in use than it holds",
};

/* The widest algorithm name and a space, at least 12, so the columns stay
 * aligned and two spaces always end a name (scripts split on them). */
static int name_width(void)
{
    int width = 12;
    for (size_t i = 0; i < lock_count(); i++) {
        int w = (int)strlen(lock_at(i)->name) + 1;
        width = w > width ? w : width;
    }
    return width;
}

static void list_algorithms(void)
{
    int width = name_width();
    printf("algorithms:\n");
    for (size_t i = 0; i < lock_count(); i++) {
        const struct lock_ops *op = lock_at(i);
        printf("  %-*s %s%s%s%s%s%s [%s]\n", width, op->name, op->summary,
               op->gives_token ? " [token]" : "", op->renew ? " [watchdog]" : "",
               op->reentrant ? " [reentrant]" : "",
               lock_grants_mode(op, LOCK_MODE_SHARED) ? " [shared]" : "",
               lock_grants_mode(op, LOCK_MODE_PERMIT) ? " [permits]" : "", op->server);
    }
    printf("  tags: [token] grants carry a fencing token, so it can run \"fencing\": true;\n"
           "        [watchdog] it can renew a held lock, so it can run \"lock.watchdog\": true;\n"
           "        [reentrant] its holder may take it again (\"nested\": true);\n"
           "        [shared] it grants shared (read) sections besides exclusive ones;\n"
           "        [permits] a semaphore: lock.permits holders at once, no exclusive section;\n"
           "        [redis], [postgres], ...: the kind of server it needs\n");
    printf("\n  %-*s %-8s %-9s %s\n", width, "supports", "fencing", "watchdog", "servers");
    for (size_t i = 0; i < lock_count(); i++) {
        const struct lock_ops *op = lock_at(i);
        char one[96];
        /* a PostgreSQL lock may reach its server through pgbouncer */
        snprintf(one, sizeof(one), "1 %s%s", op->server,
                 strcmp(op->server, "postgres") == 0 ? " (lock.postgres.pooler)" : "");
        const char *servers = op->independent_nodes ? "N redis masters (lock.redlock.nodes, 5)"
                              : op->session_lease   ? "1 or 3 zookeeper (lock.zookeeper.ensemble)"
                              : strcmp(op->server, "etcd") == 0 ? "1 or 3 etcd (lock.etcd.nodes)"
                                                                : one;
        printf("  %-*s %-8s %-9s %s\n", width, op->name, op->gives_token ? "yes" : "no",
               op->renew ? "yes" : "no", servers);
    }
}

/* A scenario's line: its name in a column this wide, then its text. */
#define SCENARIO_COLUMN 37
/* The listing fits a terminal this wide. */
#define LIST_WIDTH 100

/* The description's first sentence (its first n bytes): printed whole,
 * wrapped at word boundaries to LIST_WIDTH, each further line under the
 * first; a word longer than a line goes on one line of its own. */
static void print_wrapped(const char *text, size_t n)
{
    const size_t room = LIST_WIDTH - SCENARIO_COLUMN;
    while (n > 0) {
        size_t take = n;
        if (take > room) {
            take = room;
            while (take > 0 && text[take] != ' ')
                take--;
            if (take == 0) /* one long word: up to the next blank */
                for (take = room; take < n && text[take] != ' ';)
                    take++;
        }
        printf("%.*s\n", (int)take, text);
        text += take;
        n -= take;
        while (n > 0 && *text == ' ')
            text++, n--;
        if (n > 0)
            printf("%*s", SCENARIO_COLUMN, "");
    }
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_json(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".json") == 0;
}

/* Where the shipped scenarios are, as a user would type it: "scenarios"
 * from the source tree, else the absolute path this build knows. */
static const char *scenarios_dir(void)
{
    char here[PATH_MAX], built[PATH_MAX];
    if (realpath("scenarios", here) && realpath(LOCKLAB_SCENARIOS_DIR, built) &&
        strcmp(here, built) == 0)
        return "scenarios";
    return LOCKLAB_SCENARIOS_DIR;
}

static void describe_scenario(const char *path, const char *name)
{
    struct scenario *s = calloc(1, sizeof(*s));
    char err[SCENARIO_ERR_MAX] = "out of memory";
    if (s == NULL || scenario_load(path, s, err) < 0) {
        printf("  %-34s (cannot be read: %s)\n", name, err);
        free(s);
        return;
    }
    const char *end = strstr(s->description, ". ");
    printf("  %-34s ", name);
    print_wrapped(s->description,
                  end ? (size_t)(end - s->description) + 1 : strlen(s->description));
    if (s->description[0] == '\0')
        printf("\n");
    printf("  %-34s   %s; expects ", "", s->algorithm);
    report_expectation(stdout, s);
    printf("\n");
    free(s);
}

static int list_scenarios(int names_only)
{
    struct dirent **ent;
    const char *dir = scenarios_dir();
    int n = scandir(dir, &ent, is_json, by_name);
    if (n < 0) {
        fprintf(stderr, "locklab: cannot read the shipped scenarios in %s\n", dir);
        return EXIT_ENV;
    }
    if (!names_only)
        printf("scenarios (%s/):\n", dir);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX + 300];
        snprintf(path, sizeof(path), "%s/%s", dir, ent[i]->d_name);
        if (names_only)
            printf("%s\n", path);
        else
            describe_scenario(path, ent[i]->d_name);
        free(ent[i]);
    }
    free(ent);
    return EXIT_PASS;
}

static int list_names(const char *kind)
{
    if (strcmp(kind, "algorithms") == 0)
        for (size_t i = 0; i < lock_count(); i++)
            printf("%s\n", lock_at(i)->name);
    else if (strcmp(kind, "workloads") == 0)
        for (size_t w = 0; w < sizeof(workload_what) / sizeof(workload_what[0]); w++)
            printf("%s\n", workload_name((enum workload_kind)w));
    else if (strcmp(kind, "faults") == 0)
        for (size_t t = 0; t < fault_kind_count(); t++)
            printf("%s\n", fault_kind_at(t)->name);
    else if (strcmp(kind, "scenarios") == 0)
        return list_scenarios(1);
    else
        return bad_usage("list: unknown kind \"%s\" (algorithms, scenarios, workloads or faults)",
                         kind);
    return EXIT_PASS;
}

int cmd_list(int argc, char **argv)
{
    if (argc > 2)
        return bad_usage("%s", "list: at most one KIND (algorithms, scenarios, workloads, faults)");
    if (argc == 2)
        return list_names(argv[1]);
    list_algorithms();
    printf("\nworkloads:\n");
    for (size_t w = 0; w < sizeof(workload_what) / sizeof(workload_what[0]); w++)
        printf("  %-16s %s\n", workload_name((enum workload_kind)w), workload_what[w]);
    printf("\nfaults (a scenario's \"faults\", on its timeline):\n");
    for (size_t t = 0; t < fault_kind_count(); t++)
        printf("  %-14s %s\n", fault_kind_at(t)->name, fault_kind_at(t)->summary);
    printf(
        "  targets: client faults \"holder\" or \"client:N\"; server faults a server by name\n"
        "           (redis-1.., zk-1..), or one, minority, majority, all, primaries, picked\n"
        "           from the seed, or holder-majority (Redlock: the nodes holding the\n"
        "           votes of the current holder of \"key\"; \"count\" of them), or\n"
        "           zk-leader, zk-follower (ZooKeeper's leader now, one of its followers);\n"
        "           network faults a server or a pick (every client's traffic to it),\n"
        "           or \"holder\", \"client:K\", \"clients:N\" (their traffic to every server);\n"
        "           \"stream\": upstream, downstream (the default, as in Toxiproxy) or both\n");
    printf("\n");
    return list_scenarios(0);
}
