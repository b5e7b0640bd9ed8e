/* percentiles.c - the latency percentiles a run shows: --percentiles read
 * (memtier's spelling), the default set, and their names as keys and
 * column headers, one spelling for the terminal, the CSV and report.json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "sim/record/histogram.h"

size_t report_percentiles_or_default(const double *set, size_t n, const double **p)
{
    if (n > 0 && n <= RESULT_MAX_PERCENTILES) {
        *p = set;
        return n;
    }
    *p = report_percentiles;
    return REPORT_N_PERCENTILES;
}

size_t report_chosen_percentiles(const struct run_result *r, const double **p)
{
    return report_percentiles_or_default(r->percentiles, r->n_percentiles, p);
}

bool report_chosen_ms(const struct run_result *r, const struct histogram *h, double *ms)
{
    if (h == NULL || h->total_count == 0)
        return false;
    const double *pct;
    size_t n = report_chosen_percentiles(r, &pct);
    for (size_t i = 0; i < n; i++)
        ms[i] = (double)histogram_percentile(h, pct[i]) / 1000.0;
    return true;
}

/* One number of the list, decimal only (no hex, inf, nan or blanks, which
 * strtod would take): 0, or -1. */
static int one_percentile(const char *s, size_t n, double *out)
{
    char buf[32], *end;
    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (buf[strspn(buf, "0123456789.eE+-")] != '\0')
        return -1;
    double v = strtod(buf, &end);
    if (end == buf || *end || !(v > 0) || v > 100)
        return -1;
    *out = v;
    return 0;
}

size_t report_parse_percentiles(const char *s, double *p, char *why, size_t len)
{
    size_t k = 0;
    for (const char *at = s;; at++) {
        size_t n = strcspn(at, ",");
        if (k == RESULT_MAX_PERCENTILES) {
            snprintf(why, len, "at most %d percentiles, got more in \"%s\"", RESULT_MAX_PERCENTILES,
                     s);
            return 0;
        }
        if (one_percentile(at, n, &p[k]) < 0) {
            snprintf(why, len, "expected numbers in (0, 100] separated by commas, got \"%.*s\"",
                     (int)(n > 40 ? 40 : n), at);
            return 0;
        }
        for (size_t i = 0; i < k; i++)
            if (p[i] == p[k]) {
                snprintf(why, len, "%.*s is named twice", (int)(n > 40 ? 40 : n), at);
                return 0;
            }
        k++;
        at += n;
        if (*at == '\0')
            return k;
    }
}

/* p with at least min decimals and as many more as it takes to read back
 * the same double (the value the user typed, never a rounded one). */
static const char *exact(double p, int min, char *buf, size_t len)
{
    for (int d = min; d <= 12; d++) {
        snprintf(buf, len, "%.*f", d, p);
        if (strtod(buf, NULL) == p)
            return buf;
    }
    return buf;
}

const char *report_percentile_key(double p, char *buf, size_t len)
{
    char num[40];
    /* a key longer than buf is cut, as every label here is */
    if (snprintf(buf, len, "p%s", exact(p, 2, num, sizeof(num))) >= (int)len && len > 0)
        buf[len - 1] = '\0';
    return buf;
}

json_t *report_percentiles_json(const double *set, size_t n, const double *ms, bool has)
{
    if (!has)
        return json_null();
    const double *pct;
    size_t k = report_percentiles_or_default(set, n, &pct);
    json_t *o = json_object();
    for (size_t i = 0; i < k; i++) {
        char key[40];
        json_object_set_new(o, report_percentile_key(pct[i], key, sizeof(key)), json_real(ms[i]));
    }
    return o;
}

const char *report_percentile_label(double p, char *buf, size_t len)
{
    if (p == 100) {
        snprintf(buf, len, "max");
    } else {
        char num[40];
        snprintf(buf, len, "p%s", exact(p, 0, num, sizeof(num)));
    }
    return buf;
}
