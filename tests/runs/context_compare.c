/* context_compare.c - report.html's violation timelines drawn from one
 * history file two ways, byte for byte: from every section (the whole
 * history read and checked, as runs have built them: result_check_history)
 * and from a one-pass check whose sections are only those the violations'
 * context rebuilt in a second pass over the file (sim/check/context.h), as
 * a run that streams its history will draw them.
 *
 *   context_compare HISTORY [WINDOWS [DRAWN]]
 *
 * WINDOWS: how many groups of violations the context gives a window
 * (default CONTEXT_WINDOWS, what report.html draws); DRAWN: how many are
 * drawn both ways (default WINDOWS). Fewer windows than drawn must show
 * differences (the check of the check). The two paths must group alike
 * (sim/check/groups.h); each drawn group is matched to the whole path's by
 * its stale holder. Prints one line; exit 0 all the same, 1 one differs
 * (both drawings printed), 2 the file could not be read, 3 nothing to
 * compare (no group drawn both ways, or one not found whole).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "reports/html_parts.h"
#include "sim/check/check_pass.h"
#include "sim/check/context.h"
#include "sim/check/groups.h"
#include "sim/check/result.h"
#include "sim/record/history_reader.h"

static bool writes_only(const struct history *h)
{
    const struct lock_ops *ops = lock_find(h->algorithm);
    return ops && ops->optimistic;
}

static int whole(const char *path, struct run_result *r)
{
    char err[512];
    if (history_read_file(path, &r->hist, err, sizeof(err)) < 0) {
        fprintf(stderr, "context_compare: %s\n", err);
        return -1;
    }
    r->t0_mono_ns = r->hist.start_mono_ns;
    return result_check_history(r, (uint64_t)r->hist.ttl_ms * 1000000u, writes_only(&r->hist));
}

/* The one-pass check (cmd_check.c's), then the context's second pass. */
static int streamed(const char *path, struct run_result *r, size_t windows)
{
    char err[512];
    struct history_reader *rd = history_reader_open(path, err, sizeof(err));
    if (rd == NULL) {
        fprintf(stderr, "context_compare: %s\n", err);
        return -1;
    }
    struct history_event e;
    int got = history_reader_next(rd, &e);
    const struct history *start = history_reader_header(rd);
    struct check_pass *p = check_pass_begin((uint64_t)start->ttl_ms * 1000000u, writes_only(start));
    int rc = p ? 0 : -1;
    for (; rc == 0 && got == 1; got = history_reader_next(rd, &e))
        rc = check_pass_event(p, &e);
    if (got < 0 || rc != 0) {
        fprintf(stderr, "context_compare: %s: %s\n", path,
                got < 0 ? history_reader_error(rd) : "could not be checked");
        check_pass_free(p);
        history_reader_close(rd);
        return -1;
    }
    history_reader_take(rd, &r->hist);
    history_reader_close(rd);
    history_names_printable(&r->hist);
    if (check_pass_end(p, r->hist.end_mono_ns, r) < 0)
        return -1;
    r->t0_mono_ns = r->hist.start_mono_ns;
    if (context_from_file(path, r, windows, err, sizeof(err)) != 0) {
        fprintf(stderr, "context_compare: %s\n", err);
        return -1;
    }
    return 0;
}

static bool same_section(const struct section *x, const struct section *y)
{
    return x->key == y->key && x->client == y->client && x->owner == y->owner &&
           x->from_ns == y->from_ns && x->to_ns == y->to_ns;
}

/* The whole path's group of the same stale holder, or NULL. */
static const struct violation_group *match(const struct run_result *w,
                                           const struct violation_group *g)
{
    for (size_t i = 0; i < w->check.groups.n_list; i++)
        if (same_section(&w->check.groups.list[i].stale, &g->stale))
            return &w->check.groups.list[i];
    return NULL;
}

/* The two paths grouped alike: the same groups, each with as many pairs
 * from the same first to the same last overlap. */
static bool same_groups(const struct violation_groups *x, const struct violation_groups *y)
{
    if (x->groups != y->groups || x->n_list != y->n_list || x->other_pairs != y->other_pairs)
        return false;
    for (size_t i = 0; i < x->n_list; i++) {
        const struct violation_group *a = &x->list[i], *b = &y->list[i];
        if (!same_section(&a->stale, &b->stale) || a->pairs != b->pairs ||
            a->first_ns != b->first_ns || a->last_ns != b->last_ns)
            return false;
    }
    return true;
}

static char *drawn(const struct run_result *r, const struct violation_group *g, size_t nth)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NULL;
    html_group_timeline(f, r, g, nth);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: context_compare HISTORY [WINDOWS [DRAWN]]\n");
        return 2;
    }
    size_t windows = argc >= 3 ? strtoul(argv[2], NULL, 10) : CONTEXT_WINDOWS;
    size_t draw = argc == 4 ? strtoul(argv[3], NULL, 10) : windows;
    struct run_result w = {0}, s = {0};
    if (whole(argv[1], &w) < 0 || streamed(argv[1], &s, windows) < 0) {
        result_free(&w);
        result_free(&s);
        return 2;
    }
    int rc = 0;
    size_t compared = 0, unmatched = 0, idx[CHECK_MAX_GROUPS];
    if (!same_groups(&w.check.groups, &s.check.groups)) {
        printf("context_compare: %" PRIu64 " groups whole, %" PRIu64
               " in one pass, or their pairs differ\n",
               w.check.groups.groups, s.check.groups.groups);
        rc = 1;
    }
    size_t n = groups_drawn(&s.check.groups, draw, idx);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const struct violation_group *g = &s.check.groups.list[idx[k]];
        const struct violation_group *u = match(&w, g);
        if (u == NULL) {
            unmatched++;
            continue;
        }
        char *x = drawn(&w, u, idx[k]), *y = drawn(&s, g, idx[k]);
        if (x == NULL || y == NULL)
            rc = 2;
        else if (strcmp(x, y) != 0) {
            printf("context_compare: group %zu drawn differently\n--- whole history:\n%s\n--- "
                   "context:\n%s\n",
                   idx[k] + 1, x, y);
            rc = 1;
        }
        compared += rc == 0;
        free(x);
        free(y);
    }
    if (rc == 0 && w.check.violations != s.check.violations) {
        printf("context_compare: %" PRIu64 " violations whole, %" PRIu64 " in one pass\n",
               w.check.violations, s.check.violations);
        rc = 1;
    }
    if (rc == 0)
        printf("context_compare: %zu timelines the same, of %" PRIu64
               " groups (%zu not found whole); %zu sections kept of %zu; %" PRIu64 " violations\n",
               compared, s.check.groups.groups, unmatched, s.n_sections, w.n_sections,
               w.check.violations);
    if (rc == 0 && (compared == 0 || unmatched))
        rc = 3;
    result_free(&w);
    result_free(&s);
    return rc;
}
