/* history.c - the index of runs over time (history.h): report.json files
 * found and read, grouped per scenario x algorithm x settings key
 * (history_key.c), each run held to the earlier runs of its series;
 * history.json and the terminal's table. The page is history_html.c. */
#include "reports/history.h"
#include "reports/history_key.h"
#include "reports/report.h"
#include "reports/text_table.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SCHEMA "locklab.history/1"

static int push_run(struct history_index *idx, const struct history_run *r, size_t *cap)
{
    if (idx->n_runs == *cap) {
        size_t n = *cap ? *cap * 2 : 64;
        struct history_run *v = realloc(idx->runs, n * sizeof(*v));
        if (v == NULL)
            return -1;
        idx->runs = v;
        *cap = n;
    }
    idx->runs[idx->n_runs++] = *r;
    return 0;
}

static int push_skip(struct history_index *idx, const char *path, const char *why, size_t *cap)
{
    if (idx->n_skipped == *cap) {
        size_t n = *cap ? *cap * 2 : 8;
        struct history_skip *v = realloc(idx->skipped, n * sizeof(*v));
        if (v == NULL)
            return -1;
        idx->skipped = v;
        *cap = n;
    }
    struct history_skip *s = &idx->skipped[idx->n_skipped++];
    snprintf(s->path, sizeof(s->path), "%s", path);
    snprintf(s->why, sizeof(s->why), "%s", why);
    return 0;
}

/* The value at a dotted path of o ("operations.acquire.qps"), or NULL. */
static json_t *at(json_t *o, const char *path)
{
    char key[64];
    while (o && *path) {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof(key), "%.*s", (int)n, path);
        o = json_is_object(o) ? json_object_get(o, key) : NULL;
        path += n + (path[n] == '.');
    }
    return o;
}

enum want { WANT_STRING, WANT_NUMBER, WANT_BOOLEAN };

/* The value at path when it is of the type wanted; NULL with why when it
 * is not. */
static json_t *want(json_t *root, const char *path, enum want type, char *why, size_t wl)
{
    static const char *const name[] = {"a string", "a number", "a boolean"};
    json_t *v = at(root, path);
    bool ok = type == WANT_STRING   ? json_is_string(v)
              : type == WANT_NUMBER ? json_is_number(v)
                                    : json_is_boolean(v);
    if (ok)
        return v;
    snprintf(why, wl, "%s is %s, not %s", path, v ? "of another type" : "missing", name[type]);
    return NULL;
}

static int want_text(json_t *root, const char *path, char *buf, size_t len, char *why, size_t wl)
{
    json_t *v = want(root, path, WANT_STRING, why, wl);
    if (v)
        snprintf(buf, len, "%s", json_string_value(v));
    return v ? 0 : -1;
}

static int want_number(json_t *root, const char *path, double *out, char *why, size_t wl)
{
    json_t *v = want(root, path, WANT_NUMBER, why, wl);
    if (v)
        *out = json_number_value(v);
    return v ? 0 : -1;
}

static int want_bool(json_t *root, const char *path, bool *out, char *why, size_t wl)
{
    json_t *v = want(root, path, WANT_BOOLEAN, why, wl);
    if (v)
        *out = json_is_true(v);
    return v ? 0 : -1;
}

/* A latency that is absent when nothing was acquired: NAN then. */
static int want_latency(json_t *root, const char *path, double *out, char *why, size_t wl)
{
    json_t *v = at(root, path);
    *out = NAN;
    if (v == NULL || json_is_null(v))
        return 0;
    return want_number(root, path, out, why, wl);
}

/* The run's series key: its settings and their hash. */
static int set_key(json_t *root, struct history_run *r)
{
    r->settings = history_key_object(root);
    char *text = r->settings ? history_canonical_json(r->settings) : NULL;
    if (text == NULL) {
        json_decref(r->settings);
        r->settings = NULL;
        return -1;
    }
    r->key = history_fnv1a64(text, strlen(text));
    free(text);
    return 0;
}

/* One run from its report.json; -1 with why when the file does not say
 * what the index needs. */
static int read_report(const char *path, struct history_run *r, char *why, size_t wl)
{
    json_error_t e;
    json_t *root = json_load_file(path, 0, &e);
    if (root == NULL) {
        snprintf(why, wl, "not JSON: %s (line %d)", e.text, e.line);
        return -1;
    }
    double violations = 0;
    int rc = json_is_object(root) ? 0 : -1;
    if (rc < 0)
        snprintf(why, wl, "not a JSON object");
    json_t *schema = at(root, "schema");
    if (rc == 0 && !(json_is_string(schema) &&
                     strncmp(json_string_value(schema), "locklab.report/", 15) == 0)) {
        snprintf(why, wl, "schema is not locklab.report/*: not a run's report");
        rc = -1;
    }
    if (rc == 0)
        rc = want_text(root, "scenario.name", r->scenario, sizeof(r->scenario), why, wl);
    if (rc == 0)
        rc = want_text(root, "algorithm", r->algorithm, sizeof(r->algorithm), why, wl);
    if (rc == 0)
        rc = want_text(root, "started_at", r->started_at, sizeof(r->started_at), why, wl);
    if (rc == 0 && !json_is_integer(at(root, "start_wall_ns"))) {
        snprintf(why, wl, "start_wall_ns is missing or not an integer");
        rc = -1;
    }
    if (rc == 0)
        rc = want_text(root, "verdict", r->verdict, sizeof(r->verdict), why, wl);
    if (rc == 0)
        rc = want_bool(root, "complete", &r->complete, why, wl);
    if (rc == 0)
        rc = want_number(root, "operations.acquire.qps", &r->qps, why, wl);
    if (rc == 0)
        rc = want_latency(root, "operations.acquire.p50_ms", &r->p50_ms, why, wl);
    if (rc == 0)
        rc = want_latency(root, "operations.acquire.p99_ms", &r->p99_ms, why, wl);
    if (rc == 0)
        rc = want_bool(root, "safety.safe", &r->safe, why, wl);
    if (rc == 0)
        rc = want_text(root, "safety.text", r->safety, sizeof(r->safety), why, wl);
    if (rc == 0)
        rc = want_number(root, "checker.violations", &violations, why, wl);
    if (rc == 0 && set_key(root, r) < 0) {
        snprintf(why, wl, "out of memory");
        rc = -1;
    }
    json_int_t wall = json_integer_value(at(root, "start_wall_ns"));
    r->start_ns = wall > 0 ? (uint64_t)wall : 0;
    r->violations = violations > 0 ? (uint64_t)violations : 0;
    json_decref(root);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of dir's entries, dot files left out, sorted; NULL when it
 * cannot be read (errno set). */
static char **list_dir(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    *n = 0;
    if (d == NULL)
        return NULL;
    size_t cap = 16;
    char **v = malloc(cap * sizeof(*v));
    struct dirent *e;
    if (v == NULL) {
        closedir(d);
        errno = ENOMEM;
        return NULL;
    }
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (*n == cap) {
            char **w = realloc(v, cap * 2 * sizeof(*v));
            if (w == NULL)
                break;
            v = w;
            cap *= 2;
        }
        if ((v[*n] = strdup(e->d_name)) != NULL)
            (*n)++;
    }
    closedir(d);
    qsort(v, *n, sizeof(*v), by_name);
    return v;
}

struct walk {
    struct history_index *idx;
    size_t run_cap, skip_cap;
    bool oom;
};

static void join(char *out, size_t len, const char *dir, const char *name)
{
    size_t n = strlen(dir);
    snprintf(out, len, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
}

/* dir a run folder (it holds report.json: read it, go no deeper) or a
 * folder of them (compare, matrix, a runs folder: go on down). */
static void walk(struct walk *w, const char *dir, int depth)
{
    char path[HISTORY_PATH + 16];
    struct stat st;
    join(path, sizeof(path), dir, "report.json");
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        struct history_run r = {0};
        char why[256];
        snprintf(r.folder, sizeof(r.folder), "%s", dir);
        if (read_report(path, &r, why, sizeof(why)) == 0) {
            if (push_run(w->idx, &r, &w->run_cap) < 0) {
                json_decref(r.settings);
                w->oom = true;
            }
        } else if (push_skip(w->idx, path, why, &w->skip_cap) < 0) {
            w->oom = true;
        }
        return;
    }
    if (depth >= HISTORY_MAX_DEPTH)
        return;
    size_t n;
    char **names = list_dir(dir, &n);
    for (size_t i = 0; names && i < n; i++) {
        join(path, sizeof(path), dir, names[i]);
        /* lstat: links are not followed, so runs/latest is no second copy */
        if (!w->oom && strlen(path) < HISTORY_PATH && lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            walk(w, path, depth + 1);
        free(names[i]);
    }
    free(names);
}

static int by_u64(uint64_t x, uint64_t y)
{
    return x < y ? -1 : x > y;
}

/* Each series together, oldest first: to find each series's first run. */
static int by_key_time(const void *a, const void *b)
{
    const struct history_run *x = a, *y = b;
    int c = strcmp(x->scenario, y->scenario);
    if (c == 0)
        c = strcmp(x->algorithm, y->algorithm);
    if (c == 0)
        c = by_u64(x->key, y->key);
    if (c == 0)
        c = by_u64(x->start_ns, y->start_ns);
    return c ? c : strcmp(x->folder, y->folder);
}

/* The series of one scenario x algorithm in the order they began. */
static int by_series_time(const void *a, const void *b)
{
    const struct history_run *x = a, *y = b;
    int c = strcmp(x->scenario, y->scenario);
    if (c == 0)
        c = strcmp(x->algorithm, y->algorithm);
    if (c == 0)
        c = by_u64(x->series_start, y->series_start);
    if (c == 0)
        c = by_u64(x->key, y->key);
    if (c == 0)
        c = by_u64(x->start_ns, y->start_ns);
    return c ? c : strcmp(x->folder, y->folder);
}

static bool same_name(const struct history_run *x, const struct history_run *y)
{
    return strcmp(x->scenario, y->scenario) == 0 && strcmp(x->algorithm, y->algorithm) == 0;
}

static void order_runs(struct history_index *idx)
{
    qsort(idx->runs, idx->n_runs, sizeof(*idx->runs), by_key_time);
    for (size_t i = 0, first = 0; i < idx->n_runs; i++) {
        const struct history_run *f = &idx->runs[first];
        if (!same_name(f, &idx->runs[i]) || f->key != idx->runs[i].key)
            first = i;
        idx->runs[i].series_start = idx->runs[first].start_ns;
    }
    qsort(idx->runs, idx->n_runs, sizeof(*idx->runs), by_series_time);
}

/* A series begins at run i: the first of its name, or one whose settings
 * differ from the earlier series of its name, said against the one they
 * differ least from: the rate run beside the run it repeats, not beside
 * the last one tried. */
static void open_series(struct history_index *idx, size_t i)
{
    const struct history_run *r = &idx->runs[i];
    struct history_series *s = &idx->series[idx->n_series];
    *s = (struct history_series){.first = i, .after = SIZE_MAX};
    int fewest = 0;
    for (size_t j = idx->n_series; j-- > 0;) {
        const struct history_run *o = &idx->runs[idx->series[j].first];
        if (!same_name(o, r))
            break;
        char text[sizeof(s->differs)];
        int n = history_key_diff(o->settings, r->settings, text, sizeof(text));
        if (s->after == SIZE_MAX || n < fewest) {
            s->after = j;
            fewest = n;
            snprintf(s->differs, sizeof(s->differs), "%s", text);
        }
    }
    idx->n_series++;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorted in place): the middle value, or the mean
 * of the two middle ones; NAN for none. */
static double median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof(*v), by_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Run k of the series runs[0..k] held to runs[0..k). */
static void flag_run(struct history_run *runs, size_t k, double *p99s, double *qpss)
{
    struct history_run *r = &runs[k];
    size_t m = 0;
    for (size_t j = 0; j < k; j++)
        if (runs[j].complete && !isnan(runs[j].p99_ms)) {
            p99s[m] = runs[j].p99_ms;
            qpss[m++] = runs[j].qps;
        }
    r->earlier = m;
    r->base_p99_ms = median(p99s, m);
    r->base_qps = median(qpss, m);
    r->flags = 0;
    if (r->complete && m > 0 && !isnan(r->p99_ms) &&
        r->p99_ms > HISTORY_P99_FACTOR * r->base_p99_ms)
        r->flags |= HISTORY_P99;
    if (r->complete && m > 0 && r->qps < HISTORY_QPS_FACTOR * r->base_qps)
        r->flags |= HISTORY_QPS;
    if (k > 0 && runs[k - 1].safe && !r->safe)
        r->flags |= HISTORY_SAFETY;
}

static int group(struct history_index *idx)
{
    if (idx->n_runs == 0)
        return 0;
    order_runs(idx);
    idx->series = calloc(idx->n_runs, sizeof(*idx->series));
    double *p99s = malloc(idx->n_runs * sizeof(double));
    double *qpss = malloc(idx->n_runs * sizeof(double));
    if (idx->series == NULL || p99s == NULL || qpss == NULL) {
        free(p99s);
        free(qpss);
        return -1;
    }
    for (size_t i = 0; i < idx->n_runs; i++) {
        const struct history_run *r = &idx->runs[i];
        struct history_series *s = idx->n_series ? &idx->series[idx->n_series - 1] : NULL;
        if (s == NULL || !same_name(&idx->runs[s->first], r) || idx->runs[s->first].key != r->key) {
            open_series(idx, i);
            s = &idx->series[idx->n_series - 1];
        }
        flag_run(idx->runs + s->first, s->n, p99s, qpss);
        idx->regressions += idx->runs[i].flags != 0;
        s->n++;
    }
    free(p99s);
    free(qpss);
    return 0;
}

int history_index_build(const char *dir, struct history_index *idx, char *err, size_t errlen)
{
    struct stat st;
    *idx = (struct history_index){0};
    snprintf(idx->dir, sizeof(idx->dir), "%s", dir);
    if (stat(dir, &st) != 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a folder", dir);
        return -1;
    }
    size_t n;
    char **probe = list_dir(dir, &n);
    if (probe == NULL) {
        snprintf(err, errlen, "%s: cannot read it: %s", dir, strerror(errno ? errno : ENOMEM));
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        free(probe[i]);
    free(probe);
    struct walk w = {.idx = idx};
    walk(&w, dir, 0);
    if (w.oom || group(idx) < 0) {
        snprintf(err, errlen, "out of memory");
        history_index_free(idx);
        return -1;
    }
    return 0;
}

void history_index_free(struct history_index *idx)
{
    for (size_t i = 0; i < idx->n_runs; i++)
        json_decref(idx->runs[i].settings);
    free(idx->runs);
    free(idx->skipped);
    free(idx->series);
    idx->runs = NULL;
    idx->skipped = NULL;
    idx->series = NULL;
    idx->n_runs = idx->n_skipped = idx->n_series = 0;
}

const char *history_flag_text(const struct history_run *r, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if ((r->flags & HISTORY_P99) && used < len)
        /* the histograms count whole microseconds: a median of 0 is under 1 */
        used += (size_t)snprintf(buf + used, len - used, "p99 %.1fx",
                                 r->p99_ms / (r->base_p99_ms > 0.001 ? r->base_p99_ms : 0.001));
    if ((r->flags & HISTORY_QPS) && used < len)
        used += (size_t)snprintf(buf + used, len - used, "%sqps %.2fx", used ? ", " : "",
                                 r->base_qps > 0 ? r->qps / r->base_qps : 0.0);
    if ((r->flags & HISTORY_SAFETY) && used < len)
        snprintf(buf + used, len - used, "%sUNSAFE", used ? ", " : "");
    return buf;
}

/* "2026-11-26 18:20:01" of "2026-11-26T18:20:01.123Z". */
static const char *short_time(const char *iso, char *buf, size_t len)
{
    snprintf(buf, len, "%.19s", iso);
    char *t = strchr(buf, 'T');
    if (t)
        *t = ' ';
    return buf;
}

static void ms_cell(char *buf, size_t len, double ms)
{
    if (isnan(ms))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.3f", ms);
}

/* What series s (one that has an older series before it) differs in, and
 * that series's key: "rate 0.0 -> 500.0 (vs 9062d662)". */
static const char *series_differs(const struct history_index *idx, size_t s, char *buf, size_t len)
{
    const struct history_series *x = &idx->series[s];
    snprintf(buf, len, "%s (vs %0*" PRIx64 ")", x->differs[0] ? x->differs : "settings differ",
             HISTORY_KEY_SHORT,
             idx->runs[idx->series[x->after].first].key >> (64 - 4 * HISTORY_KEY_SHORT));
    return buf;
}

const char *history_series_text(const struct history_index *idx, size_t s, size_t k, char *buf,
                                size_t len)
{
    buf[0] = '\0';
    if (k > 0)
        return buf;
    if (idx->series[s].after == SIZE_MAX) {
        snprintf(buf, len, "new series");
    } else {
        char differs[320];
        /* cut at len, as the row's width is */
        if (snprintf(buf, len, "new series: %s",
                     series_differs(idx, s, differs, sizeof(differs))) >= (int)len &&
            len > 0)
            buf[len - 1] = '\0';
    }
    return buf;
}

/* Under a row, within the width: what flagged it, or how its new series
 * differs from the nearest older one. */
static void row_detail(FILE *f, const struct history_index *idx, size_t s, size_t k,
                       const struct history_run *r)
{
    char text[512];
    if (r->flags) {
        struct history_run figures = *r; /* its figures' words, then the safety's */
        figures.flags &= ~(unsigned)HISTORY_SAFETY;
        history_flag_text(&figures, text, sizeof(text));
        size_t used = strlen(text);
        if (used)
            report_append(text, sizeof(text), &used, " the median of %zu earlier run%s", r->earlier,
                          r->earlier == 1 ? "" : "s");
        if (r->flags & HISTORY_SAFETY)
            report_append(text, sizeof(text), &used, "%sUNSAFE, and the run before it was safe",
                          used ? "; " : "");
        text_wrap(f, text, 4, 4);
    } else if (k == 0 && idx->series[s].after != SIZE_MAX) {
        text_wrap(f, series_differs(idx, s, text, sizeof(text)), 4, 4);
    }
}

void history_table(FILE *f, const struct history_index *idx, bool wide)
{
    int sw = 8, aw = 9;
    for (size_t i = 0; i < idx->n_runs; i++) {
        int a = (int)strlen(idx->runs[i].scenario), b = (int)strlen(idx->runs[i].algorithm);
        sw = a > sw ? a : sw;
        aw = b > aw ? b : aw;
    }
    sw = sw > 40 ? 40 : sw;
    fprintf(f, "%-*s  %-*s  %-*s  %-19s  %-10s  %-7s %11s %9s %9s  %s\n", sw, "scenario", aw,
            "algorithm", HISTORY_KEY_SHORT, "series", "started (UTC)", "verdict", "safety", "qps",
            "p50 ms", "p99 ms", "flag");
    for (size_t s = 0; s < idx->n_series; s++)
        for (size_t k = 0; k < idx->series[s].n; k++) {
            const struct history_run *r = &idx->runs[idx->series[s].first + k];
            char when[32], p50[24], p99[24], flag[96], begins[320];
            ms_cell(p50, sizeof(p50), r->p50_ms);
            ms_cell(p99, sizeof(p99), r->p99_ms);
            history_flag_text(r, flag, sizeof(flag));
            history_series_text(idx, s, k, begins, sizeof(begins));
            if (!wide) { /* the words go under the row */
                flag[0] = '\0';
                if (k == 0)
                    snprintf(begins, sizeof(begins), "new series");
            }
            fprintf(f, "%-*.*s  %-*s  %0*" PRIx64 "  %-19s  %-10s  %-7s %11.1f %9s %9s%s%s%s%s\n",
                    sw, sw, r->scenario, aw, r->algorithm, HISTORY_KEY_SHORT,
                    r->key >> (64 - 4 * HISTORY_KEY_SHORT),
                    short_time(r->started_at, when, sizeof(when)), r->verdict,
                    r->safe ? "safe" : "UNSAFE", r->qps, p50, p99,
                    r->flags ? (wide ? "  REGRESSION " : "  REGRESSION") : "", flag,
                    begins[0] ? "  " : "", begins);
            if (!wide)
                row_detail(f, idx, s, k, r);
        }
    for (size_t i = 0; i < idx->n_skipped; i++)
        fprintf(f, "skipped %s: %s\n", idx->skipped[i].path, idx->skipped[i].why);
}

static json_t *num_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

static json_t *flags_json(unsigned flags)
{
    json_t *a = json_array();
    if (flags & HISTORY_P99)
        json_array_append_new(a, json_string("p99"));
    if (flags & HISTORY_QPS)
        json_array_append_new(a, json_string("qps"));
    if (flags & HISTORY_SAFETY)
        json_array_append_new(a, json_string("safety"));
    return a;
}

static json_t *run_json(const struct history_run *r)
{
    char report[HISTORY_PATH + 16];
    join(report, sizeof(report), r->folder, "report.json");
    json_t *o =
        json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:s, s:b, s:f, s:o, s:o, s:b, s:I, s:s}",
                  "scenario", r->scenario, "algorithm", r->algorithm, "started_at", r->started_at,
                  "start_wall_ns", (json_int_t)r->start_ns, "folder", r->folder, "report", report,
                  "verdict", r->verdict, "complete", r->complete, "qps", r->qps, "acquire_p50_ms",
                  num_or_null(r->p50_ms), "acquire_p99_ms", num_or_null(r->p99_ms), "safe", r->safe,
                  "violations", (json_int_t)r->violations, "safety", r->safety);
    if (o == NULL)
        return NULL;
    json_object_set_new(o, "baseline",
                        json_pack("{s:I, s:o, s:o}", "runs", (json_int_t)r->earlier,
                                  "acquire_p99_ms", num_or_null(r->base_p99_ms), "qps",
                                  num_or_null(r->base_qps)));
    json_object_set_new(o, "flags", flags_json(r->flags));
    return o;
}

static json_t *key_json(uint64_t key)
{
    char hex[24];
    snprintf(hex, sizeof(hex), "%016" PRIx64, key);
    return json_string(hex);
}

static json_t *regression_json(const struct history_run *r)
{
    char text[128];
    return json_pack("{s:s, s:s, s:o, s:s, s:s, s:o, s:s}", "scenario", r->scenario, "algorithm",
                     r->algorithm, "key", key_json(r->key), "started_at", r->started_at, "folder",
                     r->folder, "flags", flags_json(r->flags), "text",
                     history_flag_text(r, text, sizeof(text)));
}

/* A series: its name, its key and settings, what it differs in from the
 * series before it of that name (null for the first), its runs. */
static json_t *series_json(const struct history_index *idx, size_t s, json_t *runs)
{
    const struct history_series *x = &idx->series[s];
    const struct history_run *r0 = &idx->runs[x->first];
    json_t *after =
        x->after == SIZE_MAX
            ? json_null()
            : json_pack("{s:o, s:s}", "key", key_json(idx->runs[idx->series[x->after].first].key),
                        "differs", x->differs);
    return json_pack("{s:s, s:s, s:o, s:O, s:o, s:o}", "scenario", r0->scenario, "algorithm",
                     r0->algorithm, "key", key_json(r0->key), "settings", r0->settings, "after",
                     after, "runs", runs);
}

int history_json(const char *path, const struct history_index *idx)
{
    json_t *series = json_array(), *regs = json_array(), *skipped = json_array();
    for (size_t s = 0; s < idx->n_series; s++) {
        const struct history_series *x = &idx->series[s];
        json_t *runs = json_array();
        for (size_t k = 0; k < x->n; k++) {
            const struct history_run *r = &idx->runs[x->first + k];
            json_array_append_new(runs, run_json(r));
            if (r->flags)
                json_array_append_new(regs, regression_json(r));
        }
        json_array_append_new(series, series_json(idx, s, runs));
    }
    for (size_t i = 0; i < idx->n_skipped; i++)
        json_array_append_new(skipped, json_pack("{s:s, s:s}", "path", idx->skipped[i].path, "why",
                                                 idx->skipped[i].why));
    json_t *root = json_pack(
        "{s:s, s:s, s:s, s:{s:f, s:f, s:s}, s:I, s:o, s:o, s:o}", "schema", SCHEMA, "locklab",
        LOCKLAB_VERSION, "dir", idx->dir, "rule", "p99_factor", HISTORY_P99_FACTOR, "qps_factor",
        HISTORY_QPS_FACTOR, "text",
        "a series is one scenario name x algorithm x settings key; a complete run is flagged when "
        "its acquire p99 is more than 1.5x the median p99 of the earlier complete runs of its "
        "series, or its QPS under 2/3 of their median QPS; any run is flagged when it is UNSAFE "
        "and the run before it in its series was safe",
        "runs", (json_int_t)idx->n_runs, "series", series, "regressions", regs, "skipped", skipped);
    if (root == NULL) {
        errno = ENOMEM;
        return -1;
    }
    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (rc != 0 && errno == 0)
        errno = EIO;
    return rc == 0 ? 0 : -1;
}
