/* scorecard.c - the words every form of the scorecard shares: a cell's
 * verdict, its cost and its one figure, the rows that stayed safe, and the
 * answer line. Each output (scorecard_terminal.c, scorecard_text.c,
 * scorecard_json.c, scorecard_html.c) says a cell the same way because it
 * asks here. */
#include "reports/scorecard.h"

#include <inttypes.h>
#include <string.h>

#include "reports/report.h"

const char *scorecard_cell_word(const struct scorecard_cell *c, char *buf, size_t len)
{
    switch (scorecard_cell_verdict(c)) {
    case SCV_NA:
        snprintf(buf, len, "n/a");
        break;
    case SCV_NOT_RUN:
        snprintf(buf, len, "NOT RUN");
        break;
    case SCV_UNSAFE:
        snprintf(buf, len, "UNSAFE");
        break;
    case SCV_MIXED:
        snprintf(buf, len, "UNSAFE %zu/%zu", c->n_unsafe, c->n_runs);
        break;
    case SCV_INCOMPLETE:
        snprintf(buf, len, "INCOMPLETE");
        break;
    case SCV_SAFE:
        snprintf(buf, len, "safe");
        break;
    }
    return buf;
}

enum scorecard_verdict scorecard_cell_verdict(const struct scorecard_cell *c)
{
    if (c->state == CELL_NA)
        return SCV_NA;
    if (c->state == CELL_NOT_RUN || c->n_runs == 0)
        return SCV_NOT_RUN;
    if (c->n_unsafe) /* a violation in a run cut short still happened */
        return c->n_unsafe < c->n_runs ? SCV_MIXED : SCV_UNSAFE;
    return c->n_incomplete ? SCV_INCOMPLETE : SCV_SAFE;
}

const char *scorecard_known_unmet(const struct scorecard_cell *c, char *buf, size_t len)
{
    if (!c->known[0] || !c->known_unsafe || scorecard_cell_verdict(c) != SCV_SAFE)
        return NULL;
    snprintf(buf, len,
             "safe in %s, though known result %s - %s; this class's shape did not reproduce "
             "it: `locklab matrix --only %s` runs its own scenario",
             c->n_runs > 1 ? "every seed" : "its seed", c->known, c->known_source, c->known);
    return buf;
}

size_t scorecard_each_unmet(const struct scorecard *sc,
                            void (*fn)(void *arg, size_t r, size_t k, const char *text), void *arg)
{
    char text[sizeof(sc->rows[0].cells[0].known_source) + 400];
    size_t n = 0;
    for (size_t r = 0; r < sc->n_rows; r++)
        for (size_t k = 0; k < sc->n_classes; k++)
            if (scorecard_known_unmet(&sc->rows[r].cells[k], text, sizeof(text))) {
                if (fn)
                    fn(arg, r, k, text);
                n++;
            }
    return n;
}

const char *scorecard_verdict_name(enum scorecard_verdict v)
{
    static const char *const names[] = {"safe", "unsafe", "mixed", "incomplete", "na", "not_run"};
    return (size_t)v < sizeof(names) / sizeof(names[0]) ? names[v] : "not_run";
}

const char *scorecard_run_word(const struct scorecard_run *r)
{
    return !r->ran ? "NOT RUN" : !r->safe ? "UNSAFE" : !r->complete ? "INCOMPLETE" : "safe";
}

int scorecard_baseline(const struct scorecard *sc)
{
    for (size_t i = 0; i < sc->n_classes; i++)
        if (strcmp(sc->classes[i].name, "none") == 0)
            return (int)i;
    return -1;
}

static double max_d(double a, double b)
{
    return a > b ? a : b;
}

struct scorecard_cost scorecard_cell_cost(const struct scorecard *sc,
                                          const struct scorecard_cell *c, size_t cls)
{
    struct scorecard_cost k = {.kind = COST_P99, .ms = -1, .p99_ms = -1, .gap_ms = 0};
    bool baseline = (int)cls == scorecard_baseline(sc), never = false;
    for (size_t i = 0; i < c->n_runs; i++) {
        const struct scorecard_run *r = &c->runs[i];
        if (!r->ran)
            continue;
        bool window = r->has_window && !baseline;
        k.p99_ms = max_d(k.p99_ms, window ? r->window_p99_ms : r->p99_ms);
        k.gap_ms = max_d(k.gap_ms, max_d(r->stuck_ms, window ? r->longest_no_grant_ms : 0));
        if (window && r->recovery_ms < 0)
            never = true;
        else if (window)
            k.gap_ms = max_d(k.gap_ms, r->recovery_ms);
    }
    /* the lease is how long the lock lets a dead holder keep everyone
     * out: a longer stretch with no grant is availability lost */
    double lease = c->lease_ms > 0 ? c->lease_ms : (double)sc->ttl_ms;
    if (never)
        k.kind = COST_NEVER;
    else if (k.gap_ms > lease)
        k.kind = COST_STRETCH;
    k.ms = k.kind == COST_STRETCH ? k.gap_ms : k.kind == COST_NEVER ? -1 : k.p99_ms;
    return k;
}

bool scorecard_cost_worse(const struct scorecard_cost *a, const struct scorecard_cost *b)
{
    if (a->kind != b->kind)
        return a->kind > b->kind;
    return a->ms > b->ms;
}

const char *scorecard_ms(double ms, bool compact, char *buf, size_t len)
{
    const char *sp = compact ? "" : " ";
    if (ms < 0)
        snprintf(buf, len, "-");
    else if (ms < 1)
        snprintf(buf, len, "%.2f%sms", ms, sp);
    else if (ms < 9.95)
        snprintf(buf, len, "%.1f%sms", ms, sp);
    else if (ms < 999.5)
        snprintf(buf, len, "%.0f%sms", ms, sp);
    else if (ms < 9950)
        snprintf(buf, len, "%.1f%ss", ms / 1000, sp);
    else
        snprintf(buf, len, "%.0f%ss", ms / 1000, sp);
    return buf;
}

const char *scorecard_grid_word(const struct scorecard *sc, const struct scorecard_cell *c,
                                size_t cls)
{
    switch (scorecard_cell_verdict(c)) {
    case SCV_SAFE: {
        struct scorecard_cost k = scorecard_cell_cost(sc, c, cls);
        return k.kind == COST_P99 ? "safe" : "stuck";
    }
    case SCV_UNSAFE:
    case SCV_MIXED:
        return "UNSAFE";
    case SCV_INCOMPLETE:
        return "INCOMP";
    case SCV_NA:
        return "n/a";
    case SCV_NOT_RUN:
        break;
    }
    return "NOT RUN";
}

/* Violations in a few characters: "41", "12k", "3M". */
static void count_short(uint64_t n, char *buf, size_t len)
{
    if (n < 100000)
        snprintf(buf, len, "%" PRIu64, n);
    else if (n < 100000000)
        snprintf(buf, len, "%" PRIu64 "k", n / 1000);
    else
        snprintf(buf, len, "%" PRIu64 "M", n / 1000000);
}

const char *scorecard_grid_figure(const struct scorecard *sc, const struct scorecard_cell *c,
                                  size_t cls, char *buf, size_t len)
{
    enum scorecard_verdict v = scorecard_cell_verdict(c);
    buf[0] = '\0';
    if (v == SCV_MIXED) {
        snprintf(buf, len, "%zu of %zu", c->n_unsafe, c->n_runs);
    } else if (v == SCV_UNSAFE) {
        uint64_t n = 0;
        for (size_t i = 0; i < c->n_runs; i++)
            n += c->runs[i].violations;
        char num[16];
        count_short(n, num, sizeof(num));
        if (n)
            snprintf(buf, len, "%sv", num);
        else /* unsafe without a violation: an invariant broke */
            snprintf(buf, len, "inv");
    } else if (v == SCV_INCOMPLETE && c->n_incomplete < c->n_runs) {
        snprintf(buf, len, "%zu of %zu", c->n_incomplete, c->n_runs);
    } else if (v == SCV_SAFE) {
        struct scorecard_cost k = scorecard_cell_cost(sc, c, cls);
        if (k.kind == COST_NEVER)
            snprintf(buf, len, "never");
        else
            scorecard_ms(k.ms, true, buf, len);
    }
    return buf;
}

bool scorecard_row_safe(const struct scorecard_row *row)
{
    size_t ran = 0;
    if (row->not_run[0])
        return false;
    for (size_t c = 0; c < SCORECARD_MAX_CLASSES; c++) {
        const struct scorecard_cell *cell = &row->cells[c];
        if (cell->state != CELL_RAN)
            continue;
        if (scorecard_cell_verdict(cell) != SCV_SAFE)
            return false;
        ran++;
    }
    return ran > 0;
}

static struct scorecard_pick pick_of(const struct scorecard *sc, size_t r)
{
    const struct scorecard_row *row = &sc->rows[r];
    struct scorecard_pick p = {.row = r, .p99_ms = -1, .worst = -1};
    int base = scorecard_baseline(sc);
    for (size_t c = 0; c < sc->n_classes; c++) {
        const struct scorecard_cell *cell = &row->cells[c];
        if (cell->state != CELL_RAN)
            continue;
        struct scorecard_cost k = scorecard_cell_cost(sc, cell, c);
        if ((int)c == base)
            p.p99_ms = k.p99_ms;
        else if (p.worst < 0 || scorecard_cost_worse(&k, &p.cost)) {
            p.worst = (int)c;
            p.cost = k;
        }
    }
    return p;
}

/* By no-fault P99, fastest first; a lock whose no-fault cell did not run
 * last; ties in the grid's order. */
static bool pick_before(const struct scorecard_pick *a, const struct scorecard_pick *b)
{
    if ((a->p99_ms < 0) != (b->p99_ms < 0))
        return b->p99_ms < 0;
    if (a->p99_ms != b->p99_ms)
        return a->p99_ms < b->p99_ms;
    return a->row < b->row;
}

size_t scorecard_picks(const struct scorecard *sc, struct scorecard_pick *picks, size_t max)
{
    size_t n = 0;
    for (size_t r = 0; r < sc->n_rows && n < max; r++) {
        if (!scorecard_row_safe(&sc->rows[r]))
            continue;
        struct scorecard_pick p = pick_of(sc, r);
        size_t at = n++;
        for (; at > 0 && pick_before(&p, &picks[at - 1]); at--)
            picks[at] = picks[at - 1];
        picks[at] = p;
    }
    return n;
}

/* "holder crashed, no grant for 1.2 s", "100 ms latency, P99 104 ms". */
static void cost_words(const struct scorecard *sc, const struct scorecard_pick *p, char *buf,
                       size_t len)
{
    char ms[32];
    if (p->worst < 0) {
        snprintf(buf, len, "no fault class ran");
        return;
    }
    const char *title = sc->classes[p->worst].title;
    if (p->cost.kind == COST_NEVER)
        snprintf(buf, len, "worst: %s, never recovered", title);
    else if (p->cost.kind == COST_STRETCH)
        snprintf(buf, len, "worst: %s, no grant for %s", title,
                 scorecard_ms(p->cost.ms, false, ms, sizeof(ms)));
    else if (p->cost.ms < 0)
        snprintf(buf, len, "worst: %s, no grant in its window", title);
    else
        snprintf(buf, len, "worst: %s, P99 %s", title,
                 scorecard_ms(p->cost.ms, false, ms, sizeof(ms)));
}

/* "; UNSAFE somewhere: redis, redlock": the rows of a kind, named. */
static void list_rows(const struct scorecard *sc, char *buf, size_t len, size_t *used,
                      const char *what, bool (*is)(const struct scorecard_row *))
{
    size_t n = 0;
    for (size_t r = 0; r < sc->n_rows; r++)
        if (is(&sc->rows[r]))
            report_append(buf, len, used, "%s%s", n++ ? ", " : what, sc->rows[r].label);
}

static bool row_unsafe(const struct scorecard_row *row)
{
    for (size_t c = 0; c < SCORECARD_MAX_CLASSES; c++)
        if (row->cells[c].state == CELL_RAN && row->cells[c].n_unsafe)
            return true;
    return false;
}

/* A row with no cell that ran: it could not run the scenario. */
static bool row_not_run(const struct scorecard_row *row)
{
    for (size_t c = 0; c < SCORECARD_MAX_CLASSES; c++)
        if (row->cells[c].state == CELL_RAN && row->cells[c].n_runs)
            return false;
    return true;
}

/* Safe wherever it was judged, but some cell could not be judged. */
static bool row_unjudged(const struct scorecard_row *row)
{
    return !scorecard_row_safe(row) && !row_unsafe(row) && !row_not_run(row);
}

const char *scorecard_answer(const struct scorecard *sc, char *buf, size_t len)
{
    struct scorecard_pick picks[SCORECARD_MAX_ROWS];
    size_t n = scorecard_picks(sc, picks, SCORECARD_MAX_ROWS), used = 0;
    buf[0] = '\0';
    if (n == 0)
        report_append(buf, len, &used, "no lock stayed safe in every class");
    else
        report_append(buf, len, &used, "safe in every class, by no-fault P99: ");
    for (size_t i = 0; i < n; i++) {
        char ms[32], cost[200];
        cost_words(sc, &picks[i], cost, sizeof(cost));
        report_append(
            buf, len, &used, "%s%s %s (%s)", i ? ", " : "", sc->rows[picks[i].row].label,
            picks[i].p99_ms < 0 ? "-" : scorecard_ms(picks[i].p99_ms, false, ms, sizeof(ms)), cost);
    }
    list_rows(sc, buf, len, &used, "; UNSAFE somewhere: ", row_unsafe);
    list_rows(sc, buf, len, &used, "; not judged in every class: ", row_unjudged);
    list_rows(sc, buf, len, &used, "; not run: ", row_not_run);
    report_append(buf, len, &used, ".");
    return buf;
}

/* Whether the comma-separated list names this row: by its label, or by
 * its algorithm when no row has that label. */
static bool named(const struct scorecard *sc, const struct scorecard_row *row, const char *name)
{
    if (strcmp(row->label, name) == 0)
        return true;
    for (size_t r = 0; r < sc->n_rows; r++)
        if (strcmp(sc->rows[r].label, name) == 0)
            return false;
    return strcmp(row->algorithm, name) == 0;
}

bool scorecard_row_required_unsafe(const struct scorecard *sc, const struct scorecard_row *row)
{
    bool hit = false;
    char copy[sizeof(sc->require_safe)];
    snprintf(copy, sizeof(copy), "%s", sc->require_safe);
    for (char *save = NULL, *n = strtok_r(copy, ",", &save); n && !hit;
         n = strtok_r(NULL, ",", &save))
        hit = named(sc, row, n);
    return hit && row_unsafe(row);
}

const char *scorecard_required_unsafe(const struct scorecard *sc, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t r = 0; r < sc->n_rows; r++)
        if (scorecard_row_required_unsafe(sc, &sc->rows[r]))
            report_append(buf, len, &used, "%s%s", used ? ", " : "", sc->rows[r].label);
    return buf;
}

void scorecard_counts(const struct scorecard *sc, size_t *ran, size_t *unsafe, size_t *na)
{
    *ran = *unsafe = *na = 0;
    for (size_t r = 0; r < sc->n_rows; r++)
        for (size_t c = 0; c < sc->n_classes; c++) {
            const struct scorecard_cell *cell = &sc->rows[r].cells[c];
            *na += cell->state == CELL_NA;
            if (cell->state != CELL_RAN || cell->n_runs == 0)
                continue;
            ++*ran;
            *unsafe += cell->n_unsafe > 0;
        }
}

const char *scorecard_verdict(const struct scorecard *sc)
{
    char unsafe[256];
    if (!sc->complete || sc->cut_short)
        return "INCOMPLETE";
    return scorecard_required_unsafe(sc, unsafe, sizeof(unsafe))[0] ? "FAIL" : "PASS";
}

const char *scorecard_rel(const struct scorecard *sc, const char *path)
{
    size_t n = strlen(sc->out_dir);
    if (n && strncmp(path, sc->out_dir, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

const char *scorecard_end_text(const struct scorecard *sc, char *buf, size_t len)
{
    size_t ran, unsafe, na, safe = 0, used = 0;
    char required[256];
    scorecard_counts(sc, &ran, &unsafe, &na);
    for (size_t r = 0; r < sc->n_rows; r++)
        safe += scorecard_row_safe(&sc->rows[r]);
    const char *verdict = scorecard_verdict(sc);
    buf[0] = '\0';
    report_append(buf, len, &used, "%s", verdict);
    if (strcmp(verdict, "INCOMPLETE") == 0)
        report_append(buf, len, &used, " (%s)",
                      sc->cut_short ? "cut short" : "some cells could not be judged");
    report_append(buf, len, &used, " - ");
    if (scorecard_required_unsafe(sc, required, sizeof(required))[0])
        report_append(buf, len, &used, "required safe but UNSAFE somewhere: %s; ", required);
    report_append(buf, len, &used,
                  "%zu of %zu locks safe in every class (%zu class%s, %zu seed%s each), %.0f s; "
                  "UNSAFE in %zu of %zu cells that ran",
                  safe, sc->n_rows, sc->n_classes, sc->n_classes == 1 ? "" : "es", sc->seeds,
                  sc->seeds == 1 ? "" : "s", sc->elapsed_s, unsafe, ran);
    if (na)
        report_append(buf, len, &used, ", %zu n/a", na);
    return buf;
}

static const char *cell_value(const struct scorecard_cell *c, bool lease, char *buf, size_t len)
{
    if (!lease)
        snprintf(buf, len, "%s", c->layout);
    else if (c->lease_ms > 0)
        scorecard_ms(c->lease_ms, false, buf, len);
    else
        snprintf(buf, len, "no lease");
    return buf;
}

size_t scorecard_row_grouped(const struct scorecard *sc, const struct scorecard_row *row,
                             bool lease, char *buf, size_t len)
{
    char seen[SCORECARD_MAX_CLASSES][96], v[96];
    size_t count[SCORECARD_MAX_CLASSES] = {0}, n = 0, used = 0, most = 0;
    for (size_t c = 0; c < sc->n_classes; c++) {
        if (row->cells[c].state != CELL_RAN)
            continue;
        cell_value(&row->cells[c], lease, v, sizeof(v));
        size_t i = 0;
        while (i < n && strcmp(seen[i], v) != 0)
            i++;
        if (i == n)
            snprintf(seen[n++], sizeof(seen[0]), "%s", v);
        most = ++count[i] > count[most] ? i : most;
    }
    buf[0] = '\0';
    if (n)
        report_append(buf, len, &used, "%s", seen[most]);
    /* the others with the classes that had them */
    for (size_t i = 0; i < n; i++) {
        if (i == most)
            continue;
        report_append(buf, len, &used, "; %s (", seen[i]);
        for (size_t c = 0, k = 0; c < sc->n_classes; c++)
            if (row->cells[c].state == CELL_RAN &&
                strcmp(cell_value(&row->cells[c], lease, v, sizeof(v)), seen[i]) == 0)
                report_append(buf, len, &used, "%s%s", k++ ? ", " : "", sc->classes[c].short_);
        report_append(buf, len, &used, ")");
    }
    return n;
}
