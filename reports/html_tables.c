/* html_tables.c - the tables of report.html: operations, faults and
 * availability, violations, invariants, servers, and the scenario as run.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "reports/html_parts.h"
#include "reports/violation_groups.h"
#include "sim/check/context.h"
#include "sim/record/histogram.h"
#include "sim/scenario/scenario.h"

#define MAX_VIOL_ROWS 100 /* pairs listed under a group */

static void cell_text(FILE *f, const char *cls, const char *s)
{
    fprintf(f, "<td%s>", cls ? cls : "");
    svg_text(f, s);
    fprintf(f, "</td>");
}

void html_operations_table(FILE *f, const struct run_result *r)
{
    fprintf(f, "<table class=\"operations\"><tr><th class=\"l\">operation</th><th>count</th>"
               "<th>per second</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th>"
               "<th>p99.9 ms</th><th>max ms</th></tr>\n");
    for (int k = 0; k < OP_COUNT; k++) {
        const struct histogram *h = r->ops[k];
        fprintf(f, "<tr data-op=\"%s\"><td class=\"l\">%s</td><td>%" PRId64 "</td><td>%.1f</td>",
                report_op_name(k), report_op_name(k), h->total_count,
                result_qps(r, (uint64_t)h->total_count));
        for (size_t i = 0; i < REPORT_N_PERCENTILES; i++) {
            if (h->total_count)
                fprintf(f, "<td>%.3f</td>",
                        (double)histogram_percentile(h, report_percentiles[i]) / 1000.0);
            else
                fprintf(f, "<td>-</td>");
        }
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
    char counts[640];
    fprintf(f, "<p class=\"note\">");
    svg_text(f, report_op_counts(r, counts, sizeof(counts)));
    fprintf(f, "</p>\n");
}

void html_faults_table(FILE *f, const struct run_result *r)
{
    if (r->n_faults == 0) {
        fprintf(f, "<p class=\"note\">No faults in this scenario.</p>\n");
        return;
    }
    fprintf(f, "<table class=\"faults\"><tr><th>at</th><th class=\"l\">fault</th>"
               "<th class=\"l\">what it did</th><th>window</th><th class=\"l\">availability</th>"
               "</tr>\n");
    for (size_t i = 0; i < r->n_faults; i++) {
        const struct fault_record *x = &r->faults[i];
        char plan[160], done[512], win[64] = "-", av[400] = "-";
        if (x->fired && x->ended)
            snprintf(win, sizeof(win), "%.3f .. %.3f s", report_rel_s(r, x->start_ns),
                     report_rel_s(r, x->end_ns));
        else if (x->fired)
            snprintf(win, sizeof(win), "%.3f s .. the end", report_rel_s(r, x->start_ns));
        const struct fault_availability *a = result_fault_availability(r, i);
        if (a && x->fired)
            report_availability(a, x->spec.kind, av, sizeof(av));
        fprintf(f, "<tr data-fault=\"%zu\"><td>%.3f s</td>", i, (double)x->spec.at_ms / 1000.0);
        cell_text(f, " class=\"l\"", report_fault_plan(&x->spec, plan, sizeof(plan)));
        cell_text(f, " class=\"l\"", report_fault_done(r, x, done, sizeof(done)));
        cell_text(f, NULL, win);
        cell_text(f, " class=\"l\"", av);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
}

/* One listed pair under its group: the later holder (the group's row
 * names the stale one). */
static void pair_row(FILE *f, const struct run_result *r, const struct violation *v)
{
    const struct section *a = violation_first(r, v), *b = violation_second(r, v);
    char faults[160], tb[24];
    report_violation_faults(r, v, faults, sizeof(faults));
    fprintf(f,
            "<tr class=\"bad pair\" data-a=\"%" PRIu32 "\" data-b=\"%" PRIu32
            "\"><td>client %" PRIu32 "</td><td>%.3f .. %.3f s</td><td>%s</td><td>%.3f</td>",
            a->client, b->client, b->client, report_rel_s(r, b->from_ns), report_rel_s(r, b->to_ns),
            report_token(b->token, tb, sizeof(tb)), (double)v->overlap_ns / 1e6);
    cell_text(f, " class=\"l\"", faults[0] ? faults : "none");
    fprintf(f, "</tr>\n");
}

/* The listed pairs of group g, at most MAX_VIOL_ROWS, behind a summary. */
static void group_pairs(FILE *f, const struct run_result *r, const struct violation_group *g)
{
    const struct check_result *c = &r->check;
    size_t listed = 0, shown = 0;
    for (size_t i = 0; i < c->n_list; i++)
        listed += report_pair_in_group(r, &c->list[i], g);
    fprintf(f,
            "<tr class=\"pairs\"><td class=\"l\" colspan=\"8\"><details data-listed=\"%zu\">"
            "<summary>",
            listed);
    if (listed == 0) {
        fprintf(f, "none of its pairs is among the %zu listed</summary></details></td></tr>\n",
                c->n_list);
        return;
    }
    fprintf(f, "its pairs: %s%zu of %" PRIu64 "</summary>\n",
            listed > MAX_VIOL_ROWS ? "the first " : "",
            listed > MAX_VIOL_ROWS ? (size_t)MAX_VIOL_ROWS : listed, g->pairs);
    fprintf(f, "<table class=\"violations\"><tr><th>entered while it held</th><th>held</th>"
               "<th>token</th><th>overlap ms</th><th class=\"l\">faults on</th></tr>\n");
    for (size_t i = 0; i < c->n_list && shown < MAX_VIOL_ROWS; i++)
        if (report_pair_in_group(r, &c->list[i], g)) {
            pair_row(f, r, &c->list[i]);
            shown++;
        }
    fprintf(f, "</table></details></td></tr>\n");
}

void html_violations_table(FILE *f, const struct run_result *r)
{
    const struct violation_groups *gs = &r->check.groups;
    fprintf(f, "<table class=\"violations groups\"><tr><th>group</th><th class=\"l\">key</th>"
               "<th>stale holder</th><th>held</th><th>lease ran out</th><th>violations</th>"
               "<th>from .. to</th><th class=\"l\">overlapped by, and the cause</th></tr>\n");
    for (size_t i = 0; i < gs->n_list; i++) {
        const struct violation_group *g = &gs->list[i];
        char holders[200], cause[600], lease[32] = "not known";
        uint64_t end = report_group_lease_end_ns(r, g);
        if (end)
            snprintf(lease, sizeof(lease), "%.3f s", report_rel_s(r, end));
        fprintf(f,
                "<tr class=\"bad group\" data-group=\"%zu\" data-stale=\"%" PRIu32
                "\" data-pairs=\"%" PRIu64 "\"><td>%zu</td>",
                i + 1, g->stale.client, g->pairs, i + 1);
        cell_text(f, " class=\"l\"", r->hist.keys[g->stale.key]);
        fprintf(f,
                "<td>client %" PRIu32 "</td><td>%.3f .. %.3f s</td><td>%s</td><td>%" PRIu64
                "</td><td>%.3f .. %.3f s</td>",
                g->stale.client, report_rel_s(r, g->stale.from_ns), report_rel_s(r, g->stale.to_ns),
                lease, g->pairs, report_rel_s(r, g->first_ns), report_rel_s(r, g->last_ns));
        fprintf(f, "<td class=\"l\">");
        svg_text(f, report_group_holders(g, holders, sizeof(holders)));
        fprintf(f, "<br>");
        svg_text(f, report_group_cause(r, g, cause, sizeof(cause)));
        fprintf(f, "</td></tr>\n");
        group_pairs(f, r, g);
    }
    if (gs->other_groups)
        fprintf(f,
                "<tr class=\"bad other\" data-groups=\"%" PRIu64 "\" data-pairs=\"%" PRIu64
                "\"><td>other</td><td class=\"l\" colspan=\"4\">%" PRIu64
                " more stale holders, past the %d with the most violations</td><td>%" PRIu64
                "</td><td colspan=\"2\"></td></tr>\n",
                gs->other_groups, gs->other_pairs, gs->other_groups, CHECK_MAX_GROUPS,
                gs->other_pairs);
    fprintf(f, "</table>\n");
    fprintf(f,
            "<p class=\"note\">%" PRIu64 " violation%s in %" PRIu64
            " group%s, one per stale holder: the section that was still inside when each of "
            "the others in its group entered. Open a group for its pairs among the %zu the "
            "checker lists.</p>\n",
            r->check.violations, r->check.violations == 1 ? "" : "s", gs->groups,
            gs->groups == 1 ? "" : "s", r->check.n_list);
}

void html_invariants_table(FILE *f, const struct run_result *r)
{
    fprintf(f, "<table class=\"invariants\"><tr><th class=\"l\"></th><th class=\"l\">invariant</th>"
               "<th class=\"l\">figures</th></tr>\n");
    for (size_t i = 0; i < r->n_inv; i++) {
        const struct invariant *inv = &r->inv[i];
        fprintf(f, "<tr%s data-invariant=\"%s\" data-holds=\"%s\">",
                inv->holds || inv->advisory ? "" : " class=\"bad\"", inv->name,
                inv->holds ? "true" : "false");
        cell_text(f, " class=\"l\"", report_invariant_mark(inv));
        cell_text(f, " class=\"l\"", inv->name);
        cell_text(f, " class=\"l\"", inv->detail);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
    char buf[256];
    fprintf(f,
            "<p class=\"note\">Checker: %" PRIu64 " critical sections, %" PRIu64
            " overlapping pairs, %" PRIu64 " of them made safe by fencing, %" PRIu64
            " violations. Witness: %" PRIu64 " concurrent entries (%s).",
            r->check.sections, r->check.overlaps, r->check.fenced_pairs, r->check.violations,
            r->witness_concurrent, r->witness_agrees ? "agrees" : "DISAGREES");
    if (r->scn->fencing)
        fprintf(f, " Fencing: %" PRIu64 " reads and writes rejected for a stale token.",
                r->rejected_accesses);
    if (report_stuck(r, buf, sizeof(buf))) {
        fprintf(f, " Stuck: ");
        svg_text(f, buf);
        fprintf(f, ".");
    }
    if (report_host(r, buf, sizeof(buf))) {
        fprintf(f, " Host: ");
        svg_text(f, buf);
        fprintf(f, ".");
    }
    fprintf(f, "</p>\n");
}

void html_servers_table(FILE *f, const struct run_result *r)
{
    fprintf(f, "<table class=\"servers\"><tr><th class=\"l\">server</th><th>through the proxy"
               "</th></tr>\n");
    for (size_t i = 0; i < r->n_servers; i++) {
        fprintf(f, "<tr>");
        cell_text(f, " class=\"l\"", r->servers[i]);
        if (r->proxied[i])
            fprintf(f, "<td>yes (%zu listener%s)</td>", r->proxy_listeners,
                    r->proxy_listeners == 1 ? "" : "s");
        else
            fprintf(f, "<td>no</td>");
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
    if (r->has_proxy)
        fprintf(f,
                "<p class=\"note\">Proxy: %" PRIu64 " connections, %" PRIu64 " refused, %" PRIu64
                " bytes up, %" PRIu64 " down, %" PRIu64 " dropped.</p>\n",
                r->proxy.connections, r->proxy.refused, r->proxy.bytes_up, r->proxy.bytes_down,
                r->proxy.bytes_dropped);
}

void html_scenario_block(FILE *f, const struct run_result *r)
{
    json_t *j = report_scenario_json(r->scn);
    /* 15 digits: a value as the scenario wrote it (0.9, not the double's
     * 0.90000000000000002 that a round trip needs) */
    char *text =
        j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15)) : NULL;
    fprintf(f, "<pre class=\"scenario\">");
    if (text)
        svg_text(f, text);
    fprintf(f, "</pre>\n");
    free(text);
    json_decref(j);
}
