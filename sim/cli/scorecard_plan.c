/* scorecard_plan.c - every cell of a scorecard made and judged before any
 * server starts. A cell's scenario is made in three steps: without
 * faults, to learn the lease its lock really runs on (etcd's whole
 * seconds, ZooKeeper's floor); with its class's faults sized from that
 * lease, read but not yet judged whole, to ask whether each fault can
 * strike this lock's servers (an optional one that cannot is left out, a
 * required one makes the cell n/a with the loader's reason); then loaded
 * whole, as `locklab run` would load its file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/cli.h"
#include "sim/cli/scorecard_plan.h"
#include "sim/fleet/server_kind.h"

static int add_row(struct sc_plan *p, const struct suite_lock *l)
{
    for (size_t i = 0; i < p->n_rows; i++)
        if (p->locks[i].ops == l->ops && p->locks[i].mode == l->mode &&
            p->locks[i].fencing == l->fencing)
            return 0;
    if (p->n_rows == SCORECARD_MAX_ROWS)
        return bad_usage("scorecard: at most %d rows", SCORECARD_MAX_ROWS);
    p->locks[p->n_rows++] = *l;
    return 0;
}

/* One name as rows: a name without @mode is each of its library's default
 * modes; with fenced, a lock that gives tokens also gets its fenced rows
 * (a name with +fencing is that row alone). */
static int add_spec(struct sc_plan *p, const char *spec, bool fenced, const char *option)
{
    struct suite_lock l;
    char why[400];
    if (suite_lock_parse(spec, &l, why, sizeof(why)) < 0) {
        if (lock_find(spec) == NULL && strpbrk(spec, "@+") == NULL)
            return unknown_algorithm(option, spec);
        return bad_usage("%s: %s", option, why);
    }
    bool every_mode = strchr(spec, '@') == NULL && l.mode != NULL;
    size_t n_modes = every_mode ? 0 : 1;
    while (every_mode && n_modes < LOCK_MAX_DEFAULTS && l.ops->defaults[n_modes].tag)
        n_modes++;
    int rc = 0;
    for (int f = 0; f < 2 && rc == 0; f++) {
        bool fencing = f == 1;
        if (fencing && !(l.fencing || (fenced && l.ops->gives_token && !strchr(spec, '+'))))
            continue;
        if (!fencing && l.fencing)
            continue;
        for (size_t m = 0; m < n_modes && rc == 0; m++) {
            struct suite_lock one = l;
            one.fencing = fencing;
            if (every_mode)
                one.mode = &l.ops->defaults[m];
            rc = add_row(p, &one);
        }
    }
    return rc;
}

static int plan_rows(const struct sc_opts *o, struct sc_plan *p)
{
    int rc = 0;
    if (o->algorithms) {
        char buf[1024];
        snprintf(buf, sizeof(buf), "%s", o->algorithms);
        for (char *save = NULL, *n = strtok_r(buf, ",", &save); n && rc == 0;
             n = strtok_r(NULL, ",", &save))
            rc = add_spec(p, n, !o->no_fenced_rows, "--algorithms");
    } else if (p->suite.n_rows) {
        for (size_t i = 0; i < p->suite.n_rows && rc == 0; i++)
            rc = add_spec(p, p->suite.rows[i], false, p->suite.path); /* as the suite lists */
    } else {
        for (size_t i = 0; i < lock_count() && rc == 0; i++)
            rc = add_spec(p, lock_at(i)->name, !o->no_fenced_rows, "scorecard");
    }
    if (rc == 0 && p->n_rows == 0)
        return bad_usage("%s", "scorecard: --algorithms names no lock");
    return rc;
}

static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *at = list; (at = strstr(at, name)) != NULL; at += n)
        if ((at == list || at[-1] == ',') && (at[n] == ',' || at[n] == '\0'))
            return true;
    return false;
}

static int plan_classes(const struct sc_opts *o, struct sc_plan *p, const char *only_class)
{
    for (size_t i = 0; i < p->suite.n_classes; i++) {
        const char *name = p->suite.classes[i].name;
        if ((o->classes && !listed(o->classes, name)) || (only_class && strcmp(only_class, name)))
            continue;
        p->cls[p->n_cls++] = i;
    }
    if (p->n_cls > 0)
        return 0;
    char names[600] = "";
    for (size_t i = 0; i < p->suite.n_classes; i++)
        snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
                 p->suite.classes[i].name);
    return bad_usage("scorecard: %s names no class of %s (%s)", only_class ? "--only" : "--classes",
                     p->suite.path, names);
}

/* --only LOCK/CLASS: that row alone (as named, mode and fencing included). */
static int plan_only(const struct sc_opts *o, struct sc_plan *p, char *cls, size_t len)
{
    const char *slash = strchr(o->only, '/');
    if (slash == NULL || slash == o->only || !slash[1])
        return bad_usage("--only: expected LOCK/CLASS (\"redis/holder_crashed\"), got \"%s\"",
                         o->only);
    char lock[96];
    snprintf(lock, sizeof(lock), "%.*s", (int)(slash - o->only), o->only);
    snprintf(cls, len, "%s", slash + 1);
    struct suite_lock l;
    char why[400];
    if (suite_lock_parse(lock, &l, why, sizeof(why)) < 0)
        return bad_usage("--only: %s", why);
    return add_row(p, &l);
}

static const char *text_of(const json_t *scn, char **keep)
{
    *keep = json_dumps(scn, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    return *keep;
}

/* Load (whole, or read when !whole) the cell scenario scn named name into
 * s; its text kept in *text (replacing what was there). 0 or -1 with err. */
static int load_cell(const json_t *scn, const char *name, bool whole, struct scenario *s,
                     char **text, char *err)
{
    free(*text);
    const char *t = text_of(scn, text);
    if (t == NULL) {
        snprintf(err, SCENARIO_ERR_MAX, "out of memory");
        return -1;
    }
    return whole ? scenario_load_text(name, t, strlen(t), NULL, s, err)
                 : scenario_read_text(name, t, strlen(t), s, err);
}

/* What a cell runs on, in words: "1 redis master + 1 replica, 1 sentinel". */
static void layout_text(const struct scenario *s, const struct lock_ops *ops, char *out, size_t len)
{
    size_t n = scenario_servers(s, ops);
    const struct server_kind *k = server_kind_find(ops->server);
    struct family_layout l;
    scenario_layout(s, &l);
    if (k && l.finders && scenario_follows_topology(s, ops))
        snprintf(out, len, "1 %s %s + %u %s%s, %u %s%s", ops->server,
                 k->leader_word ? k->leader_word : "leader", l.followers, k->follower_word,
                 l.followers == 1 ? "" : "s", l.finders, k->found_by ? k->found_by : "finder",
                 l.finders == 1 ? "" : "s");
    else
        snprintf(out, len, "%zu %s server%s%s%s", n, ops->server, n == 1 ? "" : "s",
                 l.pool_mode && k && k->pooler ? " behind " : "",
                 l.pool_mode && k && k->pooler ? k->pooler : "");
}

struct cell_job {
    struct sc_plan *p;
    size_t r, c; /* row, and column of the plan */
    struct scorecard_cell *cell;
    char name[128];
    bool renews; /* the lock renews its grants here (learnt with the lease) */
};

/* The lease the cell's lock really runs on, learnt from its scenario
 * without faults; 0 (cell marked n/a) when the layout cannot be had. */
static int learn_lease(struct cell_job *j, struct scenario *s, uint32_t *lease)
{
    const struct suite *su = &j->p->suite;
    size_t k = j->p->cls[j->c];
    const struct suite_lock *l = &j->p->locks[j->r];
    char err[SCENARIO_ERR_MAX], why[256];
    struct suite_sizing z = {.layout = true};
    json_t *probe = suite_cell(su, j->p->base, k, l, &z, why, sizeof(why));
    if (probe == NULL)
        return bad_usage("%s: %s", su->path, why);
    int rc = load_cell(probe, j->name, true, s, &j->p->text[j->r][j->c], err);
    json_decref(probe);
    if (rc < 0) {
        snprintf(j->cell->na_why, sizeof(j->cell->na_why), "the %s layout does not apply: %.180s",
                 su->classes[k].layout, err);
        j->cell->state = CELL_NA;
        *lease = 0;
        return 0;
    }
    uint32_t ms = scenario_lease_ms(s, l->ops);
    j->cell->lease_ms = ms;
    *lease = ms ? ms : su->ttl_ms; /* a lock with no lease: sized from the suite's ttl */
    j->renews = scenario_renews(s, l->ops);
    layout_text(s, l->ops, j->cell->layout, sizeof(j->cell->layout));
    return 0;
}

/* Template index of the i-th fault of a cell that left out skip's. */
static size_t template_of(size_t i, uint32_t skip)
{
    size_t t = 0;
    for (;; t++)
        if (!(skip & (1u << t)) && i-- == 0)
            return t;
}

static int plan_faults(struct cell_job *j, struct scenario *s, uint32_t lease)
{
    const struct suite *su = &j->p->suite;
    size_t k = j->p->cls[j->c];
    const struct suite_lock *l = &j->p->locks[j->r];
    char err[SCENARIO_ERR_MAX], why[256];
    struct suite_sizing z = {.layout = true, .lease_ms = lease, .renews = j->renews};
    for (;;) {
        json_t *scn = suite_cell(su, j->p->base, k, l, &z, why, sizeof(why));
        if (scn == NULL)
            return bad_usage("%s: %s", su->path, why);
        int rc = load_cell(scn, j->name, false, s, &j->p->text[j->r][j->c], err);
        int bad = rc < 0 ? -1 : scenario_fault_misfit(s, l->ops, why, sizeof(why));
        size_t t = bad >= 0 ? template_of((size_t)bad, z.skip) : 0;
        if (rc == 0 && bad >= 0 && suite_fault_optional(su, k, t)) {
            json_decref(scn);
            z.skip |= 1u << t; /* it applies only where it can strike */
            continue;
        }
        if (rc == 0 && bad >= 0) {
            json_decref(scn);
            j->cell->state = CELL_NA;
            snprintf(j->cell->na_why, sizeof(j->cell->na_why), "%.239s", why);
            return 0;
        }
        if (rc == 0)
            rc = load_cell(scn, j->name, true, s, &j->p->text[j->r][j->c], err);
        json_decref(scn);
        if (rc < 0)
            return bad_usage("%s: classes[%zu] (%s) on %s makes a scenario that does not load: %s",
                             su->path, k, su->classes[k].name, l->ops->name, err);
        j->cell->state = CELL_RAN;
        return 0;
    }
}

static int plan_cell(struct sc_plan *p, size_t r, size_t c, struct scorecard *sc)
{
    struct cell_job j = {.p = p, .r = r, .c = c, .cell = &sc->rows[r].cells[c]};
    char slug[64];
    snprintf(j.name, sizeof(j.name), "%s/%s/scenario.json",
             suite_lock_slug(&p->locks[r], slug, sizeof(slug)), p->suite.classes[p->cls[c]].name);
    struct scenario *s = calloc(1, sizeof(*s));
    uint32_t lease = 0;
    if (s == NULL) {
        fprintf(stderr, "locklab: out of memory\n");
        return EXIT_ENV;
    }
    int rc = learn_lease(&j, s, &lease);
    if (rc == 0 && lease)
        rc = plan_faults(&j, s, lease);
    if (rc == 0 && j.cell->state == CELL_RAN) {
        p->scn[r][c] = s;
        return 0;
    }
    free(s);
    return rc;
}

/* A row that cannot run the scenario at all (the lock lacks what it
 * needs): NOT RUN with the loader's words, its cells too. */
static bool row_runs(struct sc_plan *p, size_t r, struct scorecard_row *row)
{
    char err[SCENARIO_ERR_MAX], why[256];
    struct scenario *s = calloc(1, sizeof(*s));
    struct suite_sizing z = {0};
    json_t *probe = suite_cell(&p->suite, p->base, p->cls[0], &p->locks[r], &z, why, sizeof(why));
    char *text = NULL;
    int rc = s && probe ? load_cell(probe, row->label, true, s, &text, err) : -1;
    if (rc < 0)
        snprintf(row->not_run, sizeof(row->not_run), "%.255s", s && probe ? err : why);
    free(text);
    json_decref(probe);
    free(s);
    return rc == 0;
}

static void fill_row(struct sc_plan *p, size_t r, struct scorecard_row *row)
{
    const struct suite_lock *l = &p->locks[r];
    snprintf(row->algorithm, sizeof(row->algorithm), "%s", l->ops->name);
    row->fencing = l->fencing;
    snprintf(row->mode, sizeof(row->mode), "%s", l->mode ? l->mode->label : "");
    char name[96];
    suite_lock_name(l, name, sizeof(name));
    snprintf(row->label, sizeof(row->label), "%s", name);
}

static void fill_classes(const struct sc_plan *p, struct scorecard *sc)
{
    for (size_t c = 0; c < p->n_cls; c++) {
        const struct suite_class *k = &p->suite.classes[p->cls[c]];
        struct scorecard_class *out = &sc->classes[c];
        snprintf(out->name, sizeof(out->name), "%s", k->name);
        snprintf(out->title, sizeof(out->title), "%s", k->title);
        snprintf(out->short_, sizeof(out->short_), "%s", k->short_);
        snprintf(out->strikes, sizeof(out->strikes), "%s", k->strikes);
        snprintf(out->size, sizeof(out->size), "%s", k->size);
        snprintf(out->layout, sizeof(out->layout), "%s", k->layout);
    }
    sc->n_classes = p->n_cls;
}

static int load_base(const struct sc_opts *o, struct sc_plan *p, struct scorecard *sc)
{
    const char *path = o->scenario ? o->scenario : p->suite.scenario;
    char err[SCENARIO_ERR_MAX];
    struct scenario *s = calloc(1, sizeof(*s));
    int rc = s ? scenario_read(path, NULL, s, err) : -1;
    if (rc == 0) {
        snprintf(sc->scenario, sizeof(sc->scenario), "%s", s->name);
        p->base = json_load_file(path, 0, NULL);
    }
    free(s);
    if (rc < 0)
        return bad_usage("%s", s ? err : "out of memory");
    if (p->base == NULL)
        return bad_usage("%s: cannot be read again", path);
    snprintf(sc->scenario_path, sizeof(sc->scenario_path), "%s", path);
    if (o->duration_ms)
        json_object_set_new(p->suite.run, "duration_s", json_real((double)o->duration_ms / 1000.0));
    for (size_t k = 0; o->duration_ms && k < p->suite.n_classes; k++)
        p->suite.classes[k].duration_ms = 0; /* --duration: every cell alike */
    return 0;
}

static int plan_suite(const struct sc_opts *o, struct sc_plan *p, struct scorecard *sc)
{
    char err[SCENARIO_ERR_MAX], cls[64];
    if (suite_load(o->suite ? o->suite : SUITE_DEFAULT, &p->suite, err) < 0)
        return bad_usage("%s", err);
    int rc = load_base(o, p, sc);
    if (rc == 0)
        rc = o->only ? plan_only(o, p, cls, sizeof(cls)) : plan_rows(o, p);
    if (rc == 0)
        rc = plan_classes(o, p, o->only ? cls : NULL);
    if (rc)
        return rc;
    const struct suite *su = &p->suite;
    snprintf(sc->suite, sizeof(sc->suite), "%s", su->name);
    snprintf(sc->suite_path, sizeof(sc->suite_path), "%s", su->path);
    snprintf(sc->description, sizeof(sc->description), "%s", su->description);
    sc->ttl_ms = su->ttl_ms;
    sc->seeds = o->seeds ? (size_t)o->seeds : su->seeds;
    sc->first_seed = (uint64_t)json_integer_value(json_object_get(p->base, "seed"));
    if (sc->first_seed == 0)
        sc->first_seed = 1;
    fill_classes(p, sc);
    return 0;
}

int scorecard_plan(const struct sc_opts *o, struct sc_plan *p, struct scorecard *sc)
{
    int rc = plan_suite(o, p, sc);
    for (size_t r = 0; r < p->n_rows && rc == 0; r++) {
        struct scorecard_row *row = &sc->rows[sc->n_rows++];
        fill_row(p, r, row);
        if (!row_runs(p, r, row))
            continue; /* every cell NOT RUN: zeroed */
        for (size_t c = 0; c < p->n_cls && rc == 0; c++)
            rc = plan_cell(p, r, c, sc);
    }
    return rc;
}

void scorecard_plan_free(struct sc_plan *p)
{
    for (size_t r = 0; r < SCORECARD_MAX_ROWS; r++)
        for (size_t c = 0; c < SCORECARD_MAX_CLASSES; c++) {
            free(p->scn[r][c]);
            free(p->text[r][c]);
        }
    json_decref(p->base);
    suite_free(&p->suite);
}
