/* markdown.c - report.md: the same facts as the terminal summary, as
 * tables a person can paste into a ticket or a pull request. */
#include <inttypes.h>
#include <stdio.h>

#include "reports/report.h"
#include "reports/violation_groups.h"
#include "sim/check/context.h"
#include "sim/record/histogram.h"
#include "sim/scenario/scenario.h"

static void md_ops(FILE *f, const struct run_result *r)
{
    fprintf(f, "## Latency and throughput\n\n"
               "| operation | count | QPS | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < OP_COUNT; k++) {
        const struct histogram *h = r->ops[k];
        uint64_t n = (uint64_t)h->total_count;
        fprintf(f, "| %s | %" PRIu64 " | %.1f |", report_op_name(k), n, result_qps(r, n));
        for (size_t i = 0; i < REPORT_N_PERCENTILES; i++) {
            if (n)
                fprintf(f, " %.3f |",
                        (double)histogram_percentile(h, report_percentiles[i]) / 1000.0);
            else
                fprintf(f, " - |");
        }
        fputc('\n', f);
    }
    char counts[640];
    fprintf(f,
            "\nCounts: %s (no effect: an error surely not in effect, the request never left"
            " or was refused; ambiguous: sent, no answer).\n\n",
            report_op_counts(r, counts, sizeof(counts)));
    fprintf(f, "Load: %s.\n\n", report_load(r, counts, sizeof(counts)));
}

static void md_safety(FILE *f, const struct run_result *r)
{
    const struct check_result *c = &r->check;
    struct report_safety safety = report_safety_of(r);
    char text[160];
    fprintf(f, "## Safety\n\nMutual exclusion: **%s**.\n\n",
            report_safety_text(&safety, text, sizeof(text)));
    fprintf(
        f,
        "| sections | overlapping pairs | fenced pairs | violations | witness | checker | agree "
        "|\n"
        "|---:|---:|---:|---:|---:|---:|---|\n"
        "| %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | **%" PRIu64 "** | %" PRIu64 " | %" PRIu64
        " | %s |\n\n",
        c->sections, c->overlaps, c->fenced_pairs, c->violations, r->witness_concurrent,
        c->concurrent_entries, r->witness_agrees ? "yes" : "**NO**");
    if (r->lost_at_release)
        fprintf(f,
                "Lost at release: **%" PRIu64 "** grant%s lost while held, the holder told only "
                "by its release's not-owner answer.\n\n",
                r->lost_at_release, r->lost_at_release == 1 ? "" : "s");
    if (r->scn->fencing)
        fprintf(f,
                "Fencing: %" PRIu64 " rejected accesses (reads and writes the store refused for a "
                "stale token).\n\n",
                r->rejected_accesses);
    fprintf(f, "| invariant | holds | detail |\n|---|---|---|\n");
    for (size_t i = 0; i < r->n_inv; i++)
        fprintf(f, "| %s | %s | %s |\n", r->inv[i].name,
                r->inv[i].holds      ? "yes"
                : r->inv[i].advisory ? "no (availability)"
                                     : "**NO**",
                r->inv[i].detail);
    fputc('\n', f);
}

#define MD_GROUPS 20 /* groups with a row of their own */

/* One row per stale holder before the pairs, as on the terminal and the page. */
static void md_groups(FILE *f, const struct run_result *r)
{
    const struct violation_groups *gs = &r->check.groups;
    if (gs->groups == 0)
        return;
    fprintf(f,
            "## Violations by stale holder (%" PRIu64 " group%s)\n\n"
            "| group | key | violations | from s | to s | overlapped by | cause |\n"
            "|---:|---|---:|---:|---:|---|---|\n",
            gs->groups, gs->groups == 1 ? "" : "s");
    size_t shown = 0;
    for (size_t i = 0; i < gs->n_list && i < MD_GROUPS; i++, shown++) {
        const struct violation_group *g = &gs->list[i];
        char holders[200], cause[600];
        fprintf(f, "| %zu | %s | %" PRIu64 " | %.3f | %.3f | %s | %s |\n", i + 1,
                r->hist.keys[g->stale.key], g->pairs, report_rel_s(r, g->first_ns),
                report_rel_s(r, g->last_ns), report_group_holders(g, holders, sizeof(holders)),
                report_group_cause(r, g, cause, sizeof(cause)));
    }
    uint64_t rest = gs->other_pairs;
    for (size_t i = shown; i < gs->n_list; i++)
        rest += gs->list[i].pairs;
    if (gs->groups > shown)
        fprintf(f,
                "| other | | %" PRIu64 " | | | | %" PRIu64 " more stale holders (report.json "
                "keeps 100) |\n",
                rest, gs->groups - shown);
    fputc('\n', f);
}

static void md_violations(FILE *f, const struct run_result *r)
{
    const struct check_result *c = &r->check;
    if (c->n_list == 0)
        return;
    fprintf(f,
            "## Overlapping holders (first %zu)\n\n"
            "| key | holder A | holder B | overlap ms | fenced pair | faults |\n"
            "|---|---|---|---:|---|---|\n",
            c->n_list);
    for (size_t i = 0; i < c->n_list && i < 50; i++) {
        const struct violation *v = &c->list[i];
        const struct section *a = violation_first(r, v), *b = violation_second(r, v);
        char faults[160];
        report_violation_faults(r, v, faults, sizeof(faults));
        fprintf(f,
                "| %s | client %" PRIu32 " %.3f-%.3f s (%s) | client %" PRIu32
                " %.3f-%.3f s (%s) | %.3f | %s | %s |\n",
                r->hist.keys[a->key], a->client, report_rel_s(r, a->from_ns),
                report_rel_s(r, a->to_ns), report_effect_name(a->effect), b->client,
                report_rel_s(r, b->from_ns), report_rel_s(r, b->to_ns),
                report_effect_name(b->effect), (double)v->overlap_ns / 1e6,
                v->fenced ? "yes" : "no", faults);
    }
    fputc('\n', f);
}

static void md_faults(FILE *f, const struct run_result *r)
{
    if (r->n_faults == 0)
        return;
    fprintf(f, "## Faults\n\n| at s | fault | what it did | from s | to s | availability |\n"
               "|---:|---|---|---:|---:|---|\n");
    for (size_t i = 0; i < r->n_faults; i++) {
        const struct fault_record *x = &r->faults[i];
        char plan[160], done[512];
        fprintf(f, "| %.3f | %s | %s | ", (double)x->spec.at_ms / 1000.0,
                report_fault_plan(&x->spec, plan, sizeof(plan)),
                report_fault_done(r, x, done, sizeof(done)));
        if (x->fired)
            fprintf(f, "%.3f | ", report_rel_s(r, x->start_ns));
        else
            fprintf(f, "- | ");
        if (x->fired && x->ended)
            fprintf(f, "%.3f | ", report_rel_s(r, x->end_ns));
        else
            fprintf(f, "- | ");
        const struct fault_availability *a = result_fault_availability(r, i);
        fprintf(f, "%s |\n",
                a && x->fired ? report_availability(a, x->spec.kind, done, sizeof(done)) : "-");
    }
    fputc('\n', f);
}

static void md_host(FILE *f, const struct run_result *r)
{
    char buf[256];
    if (report_host(r, buf, sizeof(buf)))
        fprintf(f,
                "## Host\n\nStalls of the testbed's own process, as a thread that sleeps 1 ms at"
                " a time lives them (a hypervisor's steal, a loaded machine): %s.\n\n",
                buf);
}

static void md_stuck(FILE *f, const struct run_result *r)
{
    if (report_stuck_ms(r) == 0) /* the rule the summary's stuck line follows */
        return;
    fprintf(f,
            "## Stuck locks\n\nWaiters and no holder (the lock on the server all the same:"
            " a crashed holder's key until its ttl, an unanswered acquire's). A polling lock"
            " shows stretches up to its retry backoff (%" PRIu32 " ms) at every hand-over.\n\n"
            "| key | longest ms | from s | in all ms | stretches |\n|---|---:|---:|---:|---:|\n",
            r->scn->retry_max_ms);
    for (size_t i = 0; i < r->n_stuck && i < 10; i++) {
        const struct stuck_key *k = &r->stuck[i];
        fprintf(f, "| %s | %.1f | %.3f | %.1f | %" PRIu64 " |\n",
                k->key < r->hist.n_keys ? r->hist.keys[k->key] : "?", (double)k->longest_ns / 1e6,
                report_rel_s(r, k->longest_from_ns), (double)k->total_ns / 1e6, k->stretches);
    }
    fputc('\n', f);
}

int report_markdown(const char *path, const struct run_result *r)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    const struct scenario *s = r->scn;
    char why[256];
    const char *fail = report_failure(r, why, sizeof(why));
    char verdict[200];
    fprintf(f, "# locklab: %s on %s — %s\n\n", s->name, r->algorithm,
            report_verdict_brief(r, verdict, sizeof(verdict)));
    if (!r->complete)
        fprintf(f, "> **INCOMPLETE**: %s. Figures cover only what ran.\n\n", r->incomplete_reason);
    if (fail)
        fprintf(f, "> %s\n\n", fail);
    char secs[32];
    fprintf(f,
            "%s\n\n%" PRIu32 " clients, seed %" PRIu64 "; new steps for %s s, ran %.2f s (steps"
            " under way when the time was up finished first).\n\n",
            s->description[0] ? s->description : s->path, s->clients, s->seed,
            report_seconds(s->duration_ms, secs, sizeof(secs)), r->elapsed_s);
    report_meta_line(f, r->meta, r->t0_wall_ns, r->versions, r->n_servers, r->has_proxy);
    fprintf(f, "%s", r->meta ? "\n" : "");
    /* the same effective settings as the run's header and `show` */
    fprintf(f, "Settings:\n\n```\n");
    report_settings(f, s);
    fprintf(f, "```\n\n");
    md_ops(f, r);
    md_safety(f, r);
    md_faults(f, r);
    md_stuck(f, r);
    md_host(f, r);
    md_groups(f, r);
    md_violations(f, r);
    fprintf(f, "## Expectations\n\n| what | expected | got | met |\n|---|---|---|---|\n");
    for (size_t i = 0; i < r->n_expects; i++)
        fprintf(f, "| %s | %s | %s | %s |\n", r->expects[i].what, r->expects[i].want,
                r->expects[i].got, r->expects[i].met ? "yes" : "**NO**");
    return report_close(f);
}
