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
#include "sim/fleet/server_kind.h"
#include "sim/workloads/workload.h"

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
        printf("  %-*s %s%s%s%s%s%s%s%s [%s]\n", width, op->name, op->summary,
               op->unsafe ? " [unsafe]" : "", op->gives_token ? " [token]" : "",
               op->renew ? " [watchdog]" : "", op->reentrant ? " [reentrant]" : "",
               lock_grants_mode(op, LOCK_MODE_SHARED) ? " [shared]" : "",
               lock_grants_mode(op, LOCK_MODE_PERMIT) ? " [permits]" : "",
               op->latch ? " [latch]" : "", op->server);
    }
    printf("  tags: [unsafe] a baseline wrong by design, for the checker to catch;\n"
           "        [token] grants carry a fencing token, so it can run \"fencing\": true;\n"
           "        [watchdog] it can renew a held lock, so it can run \"lock.watchdog\": true;\n"
           "        [reentrant] its holder may take it again (\"nested\": true);\n"
           "        [shared] it grants shared (read) sections besides exclusive ones;\n"
           "        [permits] a semaphore: lock.permits holders at once, no exclusive section;\n"
           "        [latch] a countdown latch, not a lock: it runs the latch workload alone;\n"
           "        [redis], [postgres], ...: the kind of server it needs\n");
    printf("\n  %-*s %-8s %-9s %s\n", width, "supports", "fencing", "watchdog", "servers");
    for (size_t i = 0; i < lock_count(); i++) {
        const struct lock_ops *op = lock_at(i);
        char one[96];
        snprintf(one, sizeof(one), "1 %s", op->server);
        const char *servers =
            op->family && op->family->list_servers ? op->family->list_servers : one;
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
    cli_wrap(stdout, text, n, SCENARIO_COLUMN, SCENARIO_COLUMN, LIST_WIDTH);
    printf("\n");
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

/* A folder kind's files: their names, or (scenarios) each described. */
static int list_folder(const struct cli_kind *kind, int names_only)
{
    struct dirent **ent;
    int n = cli_folder_files(kind, &ent);
    if (n < 0) {
        fprintf(stderr, "locklab: cannot read the shipped %s in %s\n", kind->name, kind->folder());
        return EXIT_ENV;
    }
    if (!names_only)
        printf("%s (%s/):\n", kind->name, kind->folder());
    for (int i = 0; i < n; i++) {
        char name[PATH_MAX + 300];
        cli_folder_name(kind, ent[i]->d_name, name, sizeof(name));
        if (names_only)
            printf("%s\n", name);
        else
            describe_scenario(name, ent[i]->d_name);
        free(ent[i]);
    }
    free(ent);
    return EXIT_PASS;
}

static int list_names(const char *name)
{
    const struct cli_kind *kind = cli_kind_find(name);
    if (kind == NULL) {
        char kinds[160];
        return bad_usage("list: unknown kind \"%s\" (%s)", name,
                         cli_kinds_joined(", ", " or ", kinds, sizeof(kinds)));
    }
    if (kind->folder)
        return list_folder(kind, 1);
    for (size_t i = 0; i < kind->count(); i++)
        printf("%s\n", kind->at(i));
    return EXIT_PASS;
}

static void list_workloads(void)
{
    printf("\nworkloads:\n");
    for (size_t w = 0; w < workload_count(); w++)
        printf("  %-16s %s\n", workload_at(w)->name, workload_at(w)->summary);
}

/* What the targets take, wrapped under TARGETS_COLUMN: text, then the
 * names the parser takes (from its tables), then more. */
#define TARGETS_COLUMN 11
static void print_targets(const char *text, const char *names, const char *more)
{
    char line[1024];
    snprintf(line, sizeof(line), "%s%s%s", text, names, more);
    printf("%*s", TARGETS_COLUMN, "");
    cli_wrap(stdout, line, strlen(line), TARGETS_COLUMN, TARGETS_COLUMN, LIST_WIDTH);
    printf("\n");
}

static void list_targets(void)
{
    char nodes[200], head[300], picks[400], net[400];
    printf("  targets: client faults \"holder\" or \"client:N\" (client_pause also \"waiter\");\n");
    /* a server by name: the kinds the fleet starts for a lock */
    snprintf(head, sizeof(head), "server faults a server by name (%s), or one of: ",
             cli_started_kinds(true, "", "-1..", ", ", nodes, sizeof(nodes)));
    print_targets(head, fault_target_names(false, picks, sizeof(picks)),
                  " (picked from the seed among the lock's servers; a role names the one "
                  "that leads now, one that follows it, the pooler in front, and an ensemble's "
                  "own spelling its kind too; holder-majority: Redlock's nodes holding the "
                  "votes of the current holder of \"key\", \"count\" of them);");
    print_targets("network faults a server or one of: ", fault_target_names(true, net, sizeof(net)),
                  " (every client's traffic to it), or \"holder\", \"client:K\", \"clients:N\" "
                  "(their traffic to every server), or \"replication\" (the replicas' link to "
                  "the master);");
    print_targets("\"stream\": upstream, downstream (the default, as in Toxiproxy) or both", "",
                  "");
}

/* The roles kind's servers play ("leader, replica"), "-" for none. */
static const char *roles_of(const struct server_kind *kind, char *buf, size_t len)
{
    const char *word[SERVER_ROLES] = {[SERVER_ROLE_LEADER] = "leader",
                                      [SERVER_ROLE_FOLLOWER] = kind->follower_word,
                                      [SERVER_ROLE_POOLER] = "pooler"};
    size_t used = 0;
    snprintf(buf, len, "-");
    for (size_t r = 0; r < SERVER_ROLES && used < len; r++)
        if (kind->roles & SERVER_ROLE_BIT(r))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", word[r]);
    return buf;
}

/* What a kill leaves of its data: kept (on disk), lost, or none to lose. */
static const char *data_of(const struct server_kind *kind)
{
    return kind->keeps_data ? "kept" : kind->forget_data ? "lost" : "-";
}

/* What else its table says (the durable mode a run may ask), or another
 * kind's of it: whose pooler it is, whose master its servers name. */
static void note_of(const struct server_kind *kind, char *buf, size_t len)
{
    buf[0] = '\0';
    if (kind->durable_mode)
        snprintf(buf, len, "or kept by %s (data: kept)", kind->durable_mode);
    for (size_t k = 0; k < server_kind_count(); k++) {
        const struct server_kind *other = server_kind_at(k);
        if (other->pooler && strcmp(other->pooler, kind->name) == 0)
            snprintf(buf, len, "%s's pooler, started with it", other->name);
        if (other->found_by && strcmp(other->found_by, kind->name) == 0)
            snprintf(buf, len, "they name %s's master", other->name);
    }
}

static void list_servers(void)
{
    int width = 10;
    for (size_t k = 0; k < server_kind_count(); k++) {
        int w = (int)strlen(server_kind_at(k)->name) + 1;
        width = w > width ? w : width;
    }
    printf("\nservers (a kind, its servers as fault targets, the roles they play, their data "
           "after a kill):\n");
    for (size_t k = 0; k < server_kind_count(); k++) {
        const struct server_kind *kind = server_kind_at(k);
        char nodes[48] = "-", roles[64], note[96];
        if (kind->start)
            snprintf(nodes, sizeof(nodes), "%s-1..", kind->node_prefix);
        note_of(kind, note, sizeof(note));
        printf("  %-*s %-12s %-18s %-*s%s%s\n", width, kind->name, nodes,
               roles_of(kind, roles, sizeof(roles)), note[0] ? 4 : 0, data_of(kind),
               note[0] ? "  " : "", note);
    }
}

int cmd_list(int argc, char **argv)
{
    if (argc > 2) {
        char kinds[160];
        return bad_usage("list: at most one KIND (%s)",
                         cli_kinds_joined(", ", ", ", kinds, sizeof(kinds)));
    }
    if (argc == 2)
        return list_names(argv[1]);
    list_algorithms();
    list_workloads();
    printf("\nfaults (a scenario's \"faults\", on its timeline):\n");
    for (size_t t = 0; t < fault_kind_count(); t++)
        printf("  %-14s %s\n", fault_kind_at(t)->name, fault_kind_at(t)->summary);
    list_targets();
    list_servers();
    printf("\n");
    return list_folder(cli_kind_find("scenarios"), 0);
}
