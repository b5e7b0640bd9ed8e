/* scorecard_json.c - scorecard.json (locklab.scorecard/1,
 * docs/schema/scorecard.schema.json): everything the grid was drawn from,
 * each cell's folders relative to the scorecard's own, so the folder can
 * be moved whole. A figure that does not apply is null, never 0. */
#include "reports/scorecard.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "reports/report.h"

#define SCHEMA "locklab.scorecard/1"

static json_t *ms_or_null(bool has, double ms)
{
    return has && ms >= 0 ? json_real(ms) : json_null();
}

static json_t *text_or_null(const char *s)
{
    return s[0] ? json_string(s) : json_null();
}

static json_t *window_json(const struct scorecard_run *x)
{
    if (!x->has_window)
        return json_null();
    return json_pack("{s:I, s:I, s:I, s:o, s:f, s:o}", "granted", (json_int_t)x->window_granted,
                     "failed", (json_int_t)x->window_failed, "ambiguous",
                     (json_int_t)x->window_ambiguous, "p99_ms", ms_or_null(true, x->window_p99_ms),
                     "longest_no_grant_ms", x->longest_no_grant_ms, "recovery_ms",
                     ms_or_null(true, x->recovery_ms));
}

static json_t *run_json(const struct scorecard *sc, const struct scorecard_run *x)
{
    json_t *o =
        json_pack("{s:I, s:s, s:s, s:b, s:b, s:b, s:I, s:I, s:b, s:o}", "seed", (json_int_t)x->seed,
                  "verdict", scorecard_run_word(x), "run_dir", scorecard_rel(sc, x->run_dir), "ran",
                  x->ran, "complete", x->complete, "safe", x->safe, "violations",
                  (json_int_t)x->violations, "fenced_pairs", (json_int_t)x->fenced_pairs,
                  "invariants_hold", x->invariants_hold, "broken", text_or_null(x->broken));
    json_object_update_new(
        o, json_pack("{s:I, s:I, s:I, s:I, s:f, s:o, s:o, s:o, s:o, s:f, s:o, s:o}", "acquired",
                     (json_int_t)x->acquired, "failed", (json_int_t)x->failed, "ambiguous",
                     (json_int_t)x->ambiguous, "lost_at_release", (json_int_t)x->lost_at_release,
                     "qps", x->qps, "p50_ms", ms_or_null(true, x->p50_ms), "p99_ms",
                     ms_or_null(true, x->p99_ms), "fairness", ms_or_null(true, x->fairness),
                     "window", window_json(x), "stuck_ms", x->stuck_ms, "why", text_or_null(x->why),
                     "fault_truth", text_or_null(x->fault_truth)));
    return o;
}

static json_t *cost_json(const struct scorecard_cost *k)
{
    static const char *const kinds[] = {"p99", "stretch", "never"};
    return json_pack("{s:s, s:o, s:o, s:f}", "kind", kinds[k->kind], "ms", ms_or_null(true, k->ms),
                     "p99_ms", ms_or_null(true, k->p99_ms), "gap_ms", k->gap_ms);
}

static json_t *cell_json(const struct scorecard *sc, const struct scorecard_cell *c, size_t k)
{
    static const char *const states[] = {"not_run", "na", "ran"};
    char word[32], fig[32];
    json_t *runs = json_array();
    for (size_t i = 0; i < c->n_runs; i++)
        json_array_append_new(runs, run_json(sc, &c->runs[i]));
    const char *href =
        c->n_runs && c->runs[0].run_dir[0] ? scorecard_rel(sc, c->runs[0].run_dir) : NULL;
    char link[600];
    snprintf(link, sizeof(link), "%s/report.html", href ? href : "");
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o}", "class", sc->classes[k].name, "state",
        states[c->state], "verdict", scorecard_verdict_name(scorecard_cell_verdict(c)), "word",
        scorecard_cell_word(c, word, sizeof(word)), "grid_word", scorecard_grid_word(sc, c, k),
        "grid_figure", scorecard_grid_figure(sc, c, k, fig, sizeof(fig)), "na_why",
        c->state == CELL_NA ? json_string(c->na_why) : json_null(), "layout",
        text_or_null(c->layout), "lease_ms",
        c->state == CELL_RAN ? json_real(c->lease_ms) : json_null());
    json_object_update_new(
        o, json_pack("{s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:o, s:o}", "scenario",
                     c->scenario[0] ? json_string(scorecard_rel(sc, c->scenario)) : json_null(),
                     "command", text_or_null(c->command), "known", text_or_null(c->known),
                     "known_source", text_or_null(c->known_source), "seeds", (json_int_t)c->n_runs,
                     "unsafe_seeds", (json_int_t)c->n_unsafe, "incomplete_seeds",
                     (json_int_t)c->n_incomplete, "report", href ? json_string(link) : json_null(),
                     "runs", runs));
    char unmet[sizeof(c->known_source) + 400];
    json_object_set_new(o, "known_unsafe",
                        c->known[0] ? json_boolean(c->known_unsafe) : json_null());
    json_object_set_new(o, "known_unmet",
                        text_or_null(scorecard_known_unmet(c, unmet, sizeof(unmet)) ? unmet : ""));
    struct scorecard_cost cost = scorecard_cell_cost(sc, c, k);
    json_object_set_new(o, "cost",
                        c->state == CELL_RAN && c->n_runs ? cost_json(&cost) : json_null());
    return o;
}

static json_t *row_json(const struct scorecard *sc, const struct scorecard_row *row)
{
    json_t *cells = json_array();
    for (size_t k = 0; k < sc->n_classes; k++)
        json_array_append_new(cells, cell_json(sc, &row->cells[k], k));
    return json_pack("{s:s, s:s, s:o, s:b, s:o, s:b, s:o}", "label", row->label, "algorithm",
                     row->algorithm, "mode", text_or_null(row->mode), "fencing", row->fencing,
                     "not_run", text_or_null(row->not_run), "safe_everywhere",
                     scorecard_row_safe(row), "cells", cells);
}

static json_t *classes_json(const struct scorecard *sc)
{
    json_t *a = json_array();
    for (size_t k = 0; k < sc->n_classes; k++) {
        const struct scorecard_class *c = &sc->classes[k];
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "name", c->name,
                                           "title", c->title, "short", c->short_, "strikes",
                                           c->strikes, "size", c->size, "layout", c->layout));
    }
    return a;
}

static json_t *answer_json(const struct scorecard *sc)
{
    struct scorecard_pick picks[SCORECARD_MAX_ROWS];
    size_t n = scorecard_picks(sc, picks, SCORECARD_MAX_ROWS);
    char text[4096];
    json_t *locks = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct scorecard_pick *p = &picks[i];
        json_array_append_new(
            locks, json_pack("{s:s, s:o, s:o, s:o}", "row", sc->rows[p->row].label,
                             "no_fault_p99_ms", ms_or_null(true, p->p99_ms), "worst_class",
                             p->worst < 0 ? json_null() : json_string(sc->classes[p->worst].name),
                             "cost", p->worst < 0 ? json_null() : cost_json(&p->cost)));
    }
    return json_pack("{s:s, s:o}", "text", scorecard_answer(sc, text, sizeof(text)), "locks",
                     locks);
}

/* --require-safe's names, as given. */
static json_t *names_json(const char *list)
{
    json_t *a = json_array();
    char copy[256];
    snprintf(copy, sizeof(copy), "%s", list);
    for (char *save = NULL, *n = strtok_r(copy, ",", &save); n; n = strtok_r(NULL, ",", &save))
        json_array_append_new(a, json_string(n));
    return a;
}

/* The rows they name that were unsafe somewhere (a label may hold a comma). */
static json_t *required_unsafe_json(const struct scorecard *sc)
{
    json_t *a = json_array();
    for (size_t r = 0; r < sc->n_rows; r++)
        if (scorecard_row_required_unsafe(sc, &sc->rows[r]))
            json_array_append_new(a, json_string(sc->rows[r].label));
    return a;
}

int scorecard_json(const char *path, const struct scorecard *sc)
{
    json_t *rows = json_array();
    for (size_t r = 0; r < sc->n_rows; r++)
        json_array_append_new(rows, row_json(sc, &sc->rows[r]));
    int base = scorecard_baseline(sc);
    size_t ran, unsafe, na;
    scorecard_counts(sc, &ran, &unsafe, &na);
    char end[800];
    json_t *root = json_pack(
        "{s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s}, s:I, s:I, s:I, s:s}", "schema",
        SCHEMA, "locklab", LOCKLAB_VERSION, "verdict", scorecard_verdict(sc), "end",
        scorecard_end_text(sc, end, sizeof(end)), "suite", "name", sc->suite, "path",
        sc->suite_path, "description", sc->description, "scenario", "name", sc->scenario, "path",
        sc->scenario_path, "ttl_ms", (json_int_t)sc->ttl_ms, "seeds", (json_int_t)sc->seeds,
        "first_seed", (json_int_t)sc->first_seed, "out_dir", sc->out_dir);
    if (root == NULL) {
        json_decref(rows);
        errno = ENOMEM;
        return -1;
    }
    json_object_update_new(
        root, json_pack("{s:b, s:b, s:f, s:o, s:o, s:{s:I, s:I, s:I}, s:o, s:o, s:o}", "complete",
                        sc->complete, "cut_short", sc->cut_short, "elapsed_s", sc->elapsed_s,
                        "require_safe", names_json(sc->require_safe), "required_unsafe",
                        required_unsafe_json(sc), "cells", "ran", (json_int_t)ran, "unsafe",
                        (json_int_t)unsafe, "na", (json_int_t)na, "baseline",
                        base < 0 ? json_null() : json_string(sc->classes[base].name), "classes",
                        classes_json(sc), "rows", rows));
    json_object_set_new(root, "answer", answer_json(sc));
    json_object_set_new(
        root, "meta",
        report_meta_json(sc->meta, sc->meta ? sc->meta->started_wall_ns : 0, NULL, 0, false));
    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return rc == 0 ? 0 : -1;
}
