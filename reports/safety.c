/* safety.c - whether the lock kept mutual exclusion, worded once for every
 * renderer. A verdict only says whether the scenario's expectation held:
 * a known-unsafe scenario PASSes with a hundred violations, and a reader
 * who skims must not take that PASS for a safe lock. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "reports/report.h"

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

struct report_safety report_safety_of(const struct run_result *r)
{
    struct report_safety s = {.violations = r->check.violations};
    s.safe = s.violations == 0;
    for (size_t i = 0; i < r->n_inv; i++)
        s.invariants_broken += !r->inv[i].holds && !r->inv[i].advisory;
    char why[2]; /* only the answer is wanted; the verdict quotes the stall */
    s.host_made = result_host_made_violations(r, why, sizeof(why));
    /* A run the host made INCOMPLETE ran to its end: its count is whole.
     * Lost history events leave the count short whatever the verdict. */
    s.so_far = (!r->complete && !s.host_made) || r->hist.dropped > 0;
    return s;
}

const char *report_safety_text(const struct report_safety *s, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    const char *so_far = s->so_far ? " so far" : "";
    if (s->safe)
        report_append(buf, len, &used, "safe%s%s", so_far, s->invariants_broken ? ", but " : "");
    else
        report_append(buf, len, &used, "UNSAFE%s: %" PRIu64 " violation%s%s", so_far, s->violations,
                      plural(s->violations), s->invariants_broken ? ", " : "");
    if (s->invariants_broken)
        report_append(buf, len, &used, "%" PRIu64 " invariant%s broken", s->invariants_broken,
                      plural(s->invariants_broken));
    if (!s->safe && s->host_made)
        report_append(buf, len, &used, ", all in host stalls");
    return buf;
}

const char *report_safety_class(const struct report_safety *s)
{
    if (!s->safe)
        return "UNSAFE";
    return s->so_far || s->invariants_broken ? "CAUTION" : "SAFE";
}

json_t *report_safety_json(const struct report_safety *s)
{
    char text[160];
    return json_pack("{s:b, s:I, s:I, s:b, s:b, s:s}", "safe", s->safe, "violations",
                     (json_int_t)s->violations, "invariants_broken",
                     (json_int_t)s->invariants_broken, "so_far", s->so_far, "host_made",
                     s->host_made, "text", report_safety_text(s, text, sizeof(text)));
}

const char *report_verdict_safety(const char *verdict, const struct report_safety *s, char *buf,
                                  size_t len)
{
    char text[160];
    /* PASS beside UNSAFE reads as a contradiction unless it says why */
    bool expected = !s->safe && strcmp(verdict, "PASS") == 0;
    snprintf(buf, len, "%s (%s%s)", verdict, expected ? "expected " : "",
             report_safety_text(s, text, sizeof(text)));
    return buf;
}

const char *report_verdict_brief(const struct run_result *r, char *buf, size_t len)
{
    struct report_safety s = report_safety_of(r);
    return report_verdict_safety(report_verdict(r), &s, buf, len);
}

const char *report_verdict_line(const struct run_result *r, char *buf, size_t len)
{
    char why[256];
    const char *fail = report_failure(r, why, sizeof(why));
    size_t used = strlen(report_verdict_brief(r, buf, len));
    /* An incomplete run has no verdict: "so far PASS" would be one, and a
     * skimming reader or a grep for PASS would take it. */
    if (!r->complete)
        report_append(buf, len, &used, " - %s; so far %s%s", r->incomplete_reason,
                      r->passed ? "the expectations held" : "FAIL: ", fail ? fail : "");
    else if (fail)
        report_append(buf, len, &used, " - %s", fail);
    return buf;
}

void report_safety_add(struct report_safety_sum *sum, const struct report_safety *s,
                       const char *name)
{
    sum->runs++;
    sum->violations += s->violations;
    sum->so_far = sum->so_far || s->so_far;
    if (s->safe)
        return;
    sum->unsafe++;
    if (name == NULL)
        return;
    size_t used = strlen(sum->names);
    report_append(sum->names, sizeof(sum->names), &used, "%s%s", used ? ", " : "", name);
}

const char *report_safety_sum_text(const struct report_safety_sum *sum, char *buf, size_t len)
{
    const char *so_far = sum->so_far ? " so far" : "";
    if (sum->runs == 0)
        snprintf(buf, len, "nothing ran");
    else if (sum->unsafe == 0)
        snprintf(buf, len, "safe%s (%zu run%s)", so_far, sum->runs, plural(sum->runs));
    else
        snprintf(buf, len, "UNSAFE%s: %" PRIu64 " violation%s in %zu of %zu run%s%s%s%s", so_far,
                 sum->violations, plural(sum->violations), sum->unsafe, sum->runs,
                 plural(sum->runs), sum->names[0] ? " (" : "", sum->names,
                 sum->names[0] ? ")" : "");
    return buf;
}

const char *report_safety_sum_word(const struct report_safety_sum *sum, char *buf, size_t len)
{
    if (sum->runs == 0)
        snprintf(buf, len, "-");
    else if (sum->unsafe == 0)
        snprintf(buf, len, "safe");
    else if (sum->unsafe == sum->runs)
        snprintf(buf, len, "UNSAFE");
    else
        snprintf(buf, len, "UNSAFE %zu/%zu", sum->unsafe, sum->runs);
    return buf;
}

const char *report_safety_sum_class(const struct report_safety_sum *sum)
{
    if (sum->runs == 0)
        return "NOTRUN";
    return sum->unsafe ? "UNSAFE" : sum->so_far ? "CAUTION" : "SAFE";
}

json_t *report_safety_sum_json(const struct report_safety_sum *sum)
{
    char text[400];
    return json_pack("{s:o, s:I, s:I, s:I, s:b, s:s}", "safe",
                     sum->runs ? json_boolean(sum->unsafe == 0) : json_null(), "runs",
                     (json_int_t)sum->runs, "unsafe_runs", (json_int_t)sum->unsafe, "violations",
                     (json_int_t)sum->violations, "so_far", sum->so_far, "text",
                     report_safety_sum_text(sum, text, sizeof(text)));
}
