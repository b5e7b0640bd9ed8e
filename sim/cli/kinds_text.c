/* kinds_text.c - the kinds `locklab list` names, each read from its
 * registry, their names joined as the help and the listing print them,
 * and text wrapped to a width: so no help or listing types a kind's name. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "sim/cli/cli.h"
#include "sim/faults/fault.h"
#include "sim/fleet/server_kind.h"
#include "sim/scenario/suite.h"
#include "sim/workloads/workload.h"

#ifndef LOCKLAB_SCENARIOS_DIR
#define LOCKLAB_SCENARIOS_DIR "scenarios"
#endif

static const char *algorithm_at(size_t i)
{
    return lock_at(i)->name;
}

static const char *workload_name_at(size_t i)
{
    return workload_at(i)->name;
}

static const char *fault_at(size_t i)
{
    return fault_kind_at(i)->name;
}

static const char *server_at(size_t i)
{
    return server_kind_at(i)->name;
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

/* scenarios and suites: the shipped files, read from their folders */
static const struct cli_kind kinds[] = {
    {"algorithms", lock_count, algorithm_at, NULL, false},
    {"scenarios", NULL, NULL, scenarios_dir, false},
    {"workloads", workload_count, workload_name_at, NULL, false},
    {"faults", fault_kind_count, fault_at, NULL, false},
    {"servers", server_kind_count, server_at, NULL, false},
    {"suites", NULL, NULL, suite_folder, true},
};

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_json(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".json") == 0;
}

int cli_folder_files(const struct cli_kind *kind, struct dirent ***ent)
{
    return scandir(kind->folder(), ent, is_json, by_name);
}

void cli_folder_name(const struct cli_kind *kind, const char *file, char *buf, size_t len)
{
    if (kind->bare)
        snprintf(buf, len, "%.*s", (int)(strlen(file) - strlen(".json")), file);
    else
        snprintf(buf, len, "%s/%s", kind->folder(), file);
}

#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

const struct cli_kind *cli_kind_find(const char *name)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (strcmp(kinds[i].name, name) == 0)
            return &kinds[i];
    return NULL;
}

const char *cli_join(size_t n, const char *(*at)(size_t), const char *sep, const char *last,
                     char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                 i == 0       ? ""
                                 : i + 1 == n ? last
                                              : sep,
                                 at(i));
    return buf;
}

static const char *kind_name_at(size_t i)
{
    return kinds[i].name;
}

const char *cli_kinds_joined(const char *sep, const char *last, char *buf, size_t len)
{
    return cli_join(N_KINDS, kind_name_at, sep, last, buf, len);
}

const char *cli_started_kinds(bool prefix, const char *before, const char *after, const char *sep,
                              char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < server_kind_count() && used < len; k++) {
        const struct server_kind *kind = server_kind_at(k);
        if (kind->start)
            used += (size_t)snprintf(buf + used, len - used, "%s%s%s%s", used ? sep : "", before,
                                     prefix ? kind->node_prefix : kind->name, after);
    }
    return buf;
}

int cli_wrap(FILE *f, const char *text, size_t n, int col, int indent, int width)
{
    while (n > 0) {
        size_t room = width > col ? (size_t)(width - col) : 1, take = n;
        if (take > room) {
            take = room;
            while (take > 0 && text[take] != ' ')
                take--;
            if (take == 0 && col > indent) { /* its first word goes on the next line */
                fprintf(f, "\n%*s", indent, "");
                col = indent;
                continue;
            }
            if (take == 0) /* one long word: up to the next blank */
                for (take = room; take < n && text[take] != ' ';)
                    take++;
        }
        fprintf(f, "%.*s", (int)take, text);
        col += (int)take;
        text += take;
        n -= take;
        while (n > 0 && *text == ' ')
            text++, n--;
        if (n > 0) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        }
    }
    return col;
}
