/* compare_judge.c - how a comparison judges: each row by what happened in
 * its seeds (violations, broken invariants), and the scenario's
 * expectation on the lock it was written for alone. An expectation such
 * as "violations >0" is a claim about one lock ("redis under this pause is
 * unsafe"): held against a lock that stayed safe, it would call that lock
 * a failure for being safe. */
#include "reports/compare.h"
#include "sim/scenario/scenario.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

/* The safety invariants of r that broke, "no_oversell, stock_accounting". */
static void broken_of(const struct run_result *r, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n_inv; i++)
        if (!r->inv[i].holds && !r->inv[i].advisory)
            report_append(buf, len, &used, "%s%s", used ? ", " : "", r->inv[i].name);
}

void compare_seed_add(struct compare_row *row, const struct run_result *r)
{
    if (row->n_seeds == COMPARE_MAX_SEEDS)
        return;
    struct compare_seed *s = &row->seeds[row->n_seeds++];
    memset(s, 0, sizeof(*s));
    s->seed = r->scn->seed;
    snprintf(s->run_dir, sizeof(s->run_dir), "%s", r->run_dir);
    s->ran = true;
    s->complete = r->complete;
    snprintf(s->verdict, sizeof(s->verdict), "%s", report_verdict(r));
    s->safety = report_safety_of(r);
    broken_of(r, s->broken, sizeof(s->broken));
    s->stuck_lock_ms = report_stuck_ms(r);
    s->passed = r->passed;
    char why[256];
    const char *fail = report_failure(r, why, sizeof(why));
    snprintf(s->note, sizeof(s->note), "%s",
             !r->complete ? r->incomplete_reason
             : fail       ? fail
                          : "");
}

void compare_seed_not_run(struct compare_row *row, uint64_t seed, const char *why)
{
    if (row->n_seeds == COMPARE_MAX_SEEDS)
        return;
    struct compare_seed *s = &row->seeds[row->n_seeds++];
    memset(s, 0, sizeof(*s));
    s->seed = seed;
    snprintf(s->verdict, sizeof(s->verdict), "NOT RUN");
    snprintf(s->note, sizeof(s->note), "%s", why);
}

bool compare_seed_unsafe(const struct compare_seed *s)
{
    /* a violation counts whenever it was seen (a cut-short run's too),
     * unless the host made it; an invariant only once the run ended */
    return s->ran && ((s->safety.violations > 0 && !s->safety.host_made) ||
                      (s->complete && s->safety.invariants_broken > 0));
}

static bool seed_incomplete(const struct compare_seed *s)
{
    return !compare_seed_unsafe(s) && (!s->ran || !s->complete || s->safety.so_far);
}

size_t compare_unsafe_seeds(const struct compare_row *row)
{
    size_t n = 0;
    for (size_t i = 0; i < row->n_seeds; i++)
        n += compare_seed_unsafe(&row->seeds[i]);
    return n;
}

static size_t incomplete_seeds(const struct compare_row *row)
{
    size_t n = 0;
    for (size_t i = 0; i < row->n_seeds; i++)
        n += seed_incomplete(&row->seeds[i]);
    return n;
}

/* What a seed adds to its row's note: why it is incomplete or did not
 * run; for the scenario's lock, the expectation it missed. */
static const char *seed_note(const struct compare_row *row, const struct compare_seed *s)
{
    if (!s->note[0] || compare_seed_unsafe(s) || !(seed_incomplete(s) || row->scenario_lock))
        return NULL;
    return s->note;
}

void compare_row_judge(struct compare_row *row)
{
    if (!row->ran)
        return;
    size_t unsafe = compare_unsafe_seeds(row), incomplete = incomplete_seeds(row);
    snprintf(row->verdict, sizeof(row->verdict), "%s",
             unsafe       ? "UNSAFE"
             : incomplete ? "INCOMPLETE"
                          : "safe");
    size_t used = 0;
    row->note[0] = '\0';
    for (size_t i = 0; i < row->n_seeds; i++) {
        const struct compare_seed *s = &row->seeds[i];
        const char *note = seed_note(row, s);
        if (note == NULL)
            continue;
        const char *what = seed_incomplete(s) ? "" : "expectation missed: ";
        if (row->n_seeds > 1)
            report_append(row->note, sizeof(row->note), &used, "%sseed %" PRIu64 ": %s%s",
                          used ? "; " : "", s->seed, what, note);
        else
            report_append(row->note, sizeof(row->note), &used, "%s%s", what, note);
    }
}

/* One seed's safety: "UNSAFE: 122 violations, 2 invariants broken",
 * "INCOMPLETE (safe so far)", "safe". */
static const char *seed_safety(const struct compare_seed *s, char *buf, size_t len)
{
    char text[160];
    size_t used = 0;
    buf[0] = '\0';
    if (!s->ran)
        report_append(buf, len, &used, "NOT RUN");
    else if (seed_incomplete(s))
        report_append(buf, len, &used, "INCOMPLETE (%s)",
                      report_safety_text(&s->safety, text, sizeof(text)));
    else if (!compare_seed_unsafe(s))
        report_append(buf, len, &used, "safe");
    else if (s->safety.violations && s->safety.invariants_broken)
        report_append(buf, len, &used,
                      "UNSAFE: %" PRIu64 " violation%s, %" PRIu64 " invariant%s broken",
                      s->safety.violations, plural(s->safety.violations),
                      s->safety.invariants_broken, plural(s->safety.invariants_broken));
    else if (s->safety.violations)
        report_append(buf, len, &used, "UNSAFE: %" PRIu64 " violation%s", s->safety.violations,
                      plural(s->safety.violations));
    else
        report_append(buf, len, &used, "UNSAFE: %" PRIu64 " invariant%s broken",
                      s->safety.invariants_broken, plural(s->safety.invariants_broken));
    return buf;
}

const char *compare_row_safety(const struct compare_row *row, char *buf, size_t len)
{
    size_t n = row->n_seeds, unsafe = compare_unsafe_seeds(row);
    if (!row->ran || n == 0)
        snprintf(buf, len, "NOT RUN");
    else if (n == 1)
        seed_safety(&row->seeds[0], buf, len);
    else if (unsafe)
        snprintf(buf, len, "UNSAFE in %zu of %zu seeds", unsafe, n);
    else if (incomplete_seeds(row))
        snprintf(buf, len, "INCOMPLETE in %zu of %zu seeds", incomplete_seeds(row), n);
    else
        snprintf(buf, len, "safe in %zu of %zu seeds", n, n);
    return buf;
}

const char *compare_seed_text(const struct compare_seed *s, bool dir, char *buf, size_t len)
{
    char safety[200];
    size_t used = 0;
    buf[0] = '\0';
    report_append(buf, len, &used, "seed %" PRIu64 ": %s", s->seed,
                  seed_safety(s, safety, sizeof(safety)));
    if (!s->ran) {
        report_append(buf, len, &used, " - %s", s->note);
        return buf;
    }
    if (compare_seed_unsafe(s) && s->broken[0])
        report_append(buf, len, &used, " (%s)", s->broken);
    report_append(buf, len, &used, "; stuck %.3f s", s->stuck_lock_ms / 1000.0);
    if (dir)
        report_append(buf, len, &used, "; %s/", s->run_dir);
    return buf;
}

const char *compare_lease(const struct compare_row *row, char *buf, size_t len)
{
    if (!row->ran)
        snprintf(buf, len, "-");
    else if (row->lease_ms == 0)
        snprintf(buf, len, "none");
    else
        snprintf(buf, len, "%" PRIu32, row->lease_ms);
    return buf;
}

/* --- the scenario's expectation ------------------------------------------ */

void compare_expect_of(struct comparison *c, const struct scenario *s)
{
    snprintf(c->written_for, sizeof(c->written_for), "%s", s->algorithm);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return;
    report_expectation(f, s);
    for (size_t i = 0; i < s->n_faults; i++)
        for (size_t k = 0; k < FAULT_EXPECTS; k++) {
            const struct expect_num *e = fault_expect_at(&s->faults[i].expect, k);
            if (e->op == EXPECT_UNSET)
                continue;
            char want[32];
            fprintf(f, ", faults[%zu].%s %s", i, fault_expect_names[k],
                    expect_format(e, want, sizeof(want)));
        }
    if (fclose(f) == 0)
        snprintf(c->expectation, sizeof(c->expectation), "%s", text);
    free(text);
}

static const struct compare_row *scenario_row(const struct comparison *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].scenario_lock)
            return &c->rows[i];
    return NULL;
}

/* The seeds of the scenario's lock that met its expectation, and that
 * missed it (a run that did not end judges nothing). */
static void tally(const struct compare_row *row, size_t *met, size_t *missed)
{
    *met = *missed = 0;
    for (size_t i = 0; row && row->ran && i < row->n_seeds; i++) {
        const struct compare_seed *s = &row->seeds[i];
        if (s->ran && s->complete) {
            *met += s->passed;
            *missed += !s->passed;
        }
    }
}

enum compare_expect compare_expectation(const struct comparison *c)
{
    const struct compare_row *row = scenario_row(c);
    size_t met, missed;
    tally(row, &met, &missed);
    if (missed)
        return EXPECT_MISSED;
    return row && row->ran && met == row->n_seeds ? EXPECT_MET : EXPECT_NOT_JUDGED;
}

static const char *expect_word(enum compare_expect e)
{
    return e == EXPECT_MET ? "met" : e == EXPECT_MISSED ? "missed" : "not judged";
}

/* Why the expectation was not judged. */
static const char *not_judged_why(const struct comparison *c, const struct compare_row *row,
                                  char *buf, size_t len)
{
    if (row == NULL)
        snprintf(buf, len, "%s is not among the algorithms compared", c->written_for);
    else if (!row->ran)
        snprintf(buf, len, "%s did not run", c->written_for);
    else
        for (size_t i = 0; i < row->n_seeds; i++)
            if (!row->seeds[i].ran || !row->seeds[i].complete) {
                snprintf(buf, len, "%s's run of seed %" PRIu64 " is INCOMPLETE: %s", c->written_for,
                         row->seeds[i].seed, row->seeds[i].note);
                break;
            }
    return buf;
}

const char *compare_expectation_line(const struct comparison *c, char *buf, size_t len)
{
    const struct compare_row *row = scenario_row(c);
    enum compare_expect e = compare_expectation(c);
    size_t met, missed, used = 0;
    tally(row, &met, &missed);
    buf[0] = '\0';
    report_append(buf, len, &used, "expectation (written for %s): %s", c->written_for,
                  expect_word(e));
    size_t n = row ? row->n_seeds : 0;
    if (e == EXPECT_MET && n > 1)
        report_append(buf, len, &used, " in %zu of %zu seeds", met, n);
    if (e == EXPECT_MET)
        report_append(buf, len, &used, " - %s", c->expectation);
    if (e == EXPECT_MISSED && n > 1)
        report_append(buf, len, &used, " in %zu of %zu seeds", missed, n);
    for (size_t i = 0; e == EXPECT_MISSED && i < n; i++) {
        const struct compare_seed *s = &row->seeds[i];
        if (!s->ran || !s->complete || s->passed)
            continue;
        if (n > 1)
            report_append(buf, len, &used, " - seed %" PRIu64 ": %s", s->seed, s->note);
        else
            report_append(buf, len, &used, " - %s", s->note);
        break; /* the first: the table's note lists them all */
    }
    if (e == EXPECT_NOT_JUDGED) {
        char why[400] = "";
        report_append(buf, len, &used, " - %s", not_judged_why(c, row, why, sizeof(why)));
    }
    return buf;
}

json_t *compare_expectation_json(const struct comparison *c)
{
    const struct compare_row *row = scenario_row(c);
    size_t met, missed;
    tally(row, &met, &missed);
    char line[700];
    return json_pack("{s:s, s:s, s:b, s:s, s:I, s:I, s:s}", "written_for", c->written_for, "text",
                     c->expectation, "compared", row != NULL && row->ran, "state",
                     expect_word(compare_expectation(c)), "seeds_met", (json_int_t)met,
                     "seeds_missed", (json_int_t)missed, "line",
                     compare_expectation_line(c, line, sizeof(line)));
}

/* --- the verdict line --------------------------------------------------- */

/* Append "; WORD: a, b (1 of 2 seeds)" for the rows whose verdict is v. */
static void name_rows(const struct comparison *c, const char *v, char *buf, size_t len,
                      size_t *used)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *row = &c->rows[i];
        if (strcmp(row->verdict, v) != 0)
            continue;
        report_append(buf, len, used, "%s%s", n++ ? ", " : "", row->algorithm);
        size_t k = strcmp(v, "UNSAFE") == 0 ? compare_unsafe_seeds(row) : 0;
        if (k && k < row->n_seeds)
            report_append(buf, len, used, " (%zu of %zu seeds)", k, row->n_seeds);
    }
}

static size_t count_rows(const struct comparison *c, const char *v)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        n += strcmp(c->rows[i].verdict, v) == 0;
    return n;
}

const char *compare_verdict(const struct comparison *c, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    bool incomplete = count_rows(c, "INCOMPLETE") || !c->complete;
    report_append(buf, len, &used, "%s",
                  incomplete                                ? "INCOMPLETE"
                  : compare_expectation(c) == EXPECT_MISSED ? "FAIL"
                                                            : "PASS");
    if (count_rows(c, "INCOMPLETE")) {
        report_append(buf, len, &used, " (");
        name_rows(c, "INCOMPLETE", buf, len, &used);
        report_append(buf, len, &used, ")");
    }
    report_append(buf, len, &used, "; expectation (written for %s): %s", c->written_for,
                  expect_word(compare_expectation(c)));
    static const char *const groups[] = {"UNSAFE", "safe", "NOT RUN"};
    for (size_t g = 0; g < 3; g++) {
        if (!count_rows(c, groups[g]))
            continue;
        report_append(buf, len, &used, "; %s: ", groups[g]);
        name_rows(c, groups[g], buf, len, &used);
    }
    return buf;
}
