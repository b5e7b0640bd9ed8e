/* kinds_text.c - the kinds `locklab list` names, each read from its
 * registry, their names joined as the help and the listing print them,
 * and text wrapped to a width: so no help or listing types a kind's name. */
#include <stdio.h>
#include <string.h>

#include "algorithms/lock.h"
#include "sim/cli/cli.h"
#include "sim/faults/fault.h"
#include "sim/fleet/server_kind.h"
#include "sim/workloads/workload.h"

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

/* scenarios: the shipped files, read from their folder (no registry) */
static const struct cli_kind kinds[] = {
    {"algorithms", lock_count, algorithm_at},        {"scenarios", NULL, NULL},
    {"workloads", workload_count, workload_name_at}, {"faults", fault_kind_count, fault_at},
    {"servers", server_kind_count, server_at},
};

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
