/* violation_groups.c - the violations by stale holder in words and JSON,
 * for every renderer (violation_groups.h). */
#include "reports/violation_groups.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "reports/report.h"
#include "sim/check/context.h"
#include "sim/check/groups.h"

uint64_t report_group_lease_end_ns(const struct run_result *r, const struct violation_group *g)
{
    return r->hist.ttl_ms ? g->stale.from_ns + (uint64_t)r->hist.ttl_ms * 1000000u : 0;
}

/* g's faults and host stall as a listed pair's are worded. */
static void group_faults(const struct run_result *r, const struct violation_group *g, char *buf,
                         size_t len)
{
    struct violation v = {
        .n_faults = g->n_faults, .stall_ns = g->stall_ns, .stall_from_ns = g->stall_from_ns};
    memcpy(v.faults, g->faults, sizeof(v.faults));
    report_violation_faults(r, &v, buf, len);
}

const char *report_group_cause(const struct run_result *r, const struct violation_group *g,
                               char *buf, size_t len)
{
    const struct section *s = &g->stale;
    size_t used = 0;
    buf[0] = '\0';
    report_append(buf, len, &used, "client %" PRIu32 " held the lock %.3f .. %.3f s%s", s->client,
                  report_rel_s(r, s->from_ns), report_rel_s(r, s->to_ns),
                  s->effect == EFFECT_OPEN ? " (still at the end)" : "");
    uint64_t end = report_group_lease_end_ns(r, g);
    if (end == 0)
        report_append(buf, len, &used, "; its lease is not known");
    else if (end <= g->first_ns)
        report_append(buf, len, &used,
                      "; its lease (ttl %" PRIu32 " ms) ran out at %.3f s, %.1f ms before the "
                      "first other holder entered",
                      r->hist.ttl_ms, report_rel_s(r, end), (double)(g->first_ns - end) / 1e6);
    else /* nobody should have been granted it yet: the grant was lost, not outlived */
        report_append(buf, len, &used,
                      "; the first other holder entered at %.3f s, %.1f ms before its lease "
                      "(ttl %" PRIu32 " ms) ran out at %.3f s: its grant was lost",
                      report_rel_s(r, g->first_ns), (double)(end - g->first_ns) / 1e6,
                      r->hist.ttl_ms, report_rel_s(r, end));
    char faults[200];
    group_faults(r, g, faults, sizeof(faults));
    if (faults[0])
        report_append(buf, len, &used, "; during %s", faults);
    return buf;
}

const char *report_group_holders(const struct violation_group *g, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    report_append(buf, len, &used, "client%s", g->n_holders == 1 && !g->more_holders ? "" : "s");
    for (uint32_t i = 0; i < g->n_holders; i++)
        report_append(buf, len, &used, "%s %" PRIu32, i ? "," : "", g->holders[i]);
    if (g->more_holders)
        report_append(buf, len, &used, " and more");
    return buf;
}

bool report_pair_in_group(const struct run_result *r, const struct violation *v,
                          const struct violation_group *g)
{
    const struct section *a = violation_first(r, v), *s = &g->stale;
    return !v->fenced && a->key == s->key && a->owner == s->owner && a->client == s->client &&
           a->from_ns == s->from_ns;
}

static json_t *stale_json(const struct run_result *r, const struct section *s)
{
    return json_pack("{s:i, s:s, s:I, s:f, s:f, s:s}", "client", s->client, "owner",
                     s->owner < r->hist.n_owners ? r->hist.owners[s->owner] : "?", "token",
                     (json_int_t)s->token, "from_s", report_rel_s(r, s->from_ns), "to_s",
                     report_rel_s(r, s->to_ns), "effect", report_effect_name(s->effect));
}

json_t *report_fault_spans_json(const struct run_result *r, const size_t *faults, size_t n)
{
    json_t *a = json_array();
    for (size_t k = 0; k < n && k < CHECK_MAX_FAULTS_PER_VIOLATION; k++) {
        const struct fault_span *f = &r->spans[faults[k]];
        json_t *one =
            json_pack("{s:s, s:i}", "type", fault_type_name(f->type), "client", f->client);
        if (f->servers < r->hist.n_notes)
            json_object_set_new(one, "servers", json_string(r->hist.notes[f->servers]));
        json_array_append_new(a, one);
    }
    return a;
}

json_t *report_groups_json(const struct run_result *r, size_t drawn_max)
{
    const struct violation_groups *gs = &r->check.groups;
    size_t drawn[CHECK_MAX_GROUPS], n_drawn = groups_drawn(gs, drawn_max, drawn), d = 0;
    json_t *list = json_array();
    for (size_t i = 0; i < gs->n_list; i++) {
        const struct violation_group *g = &gs->list[i];
        json_t *holders = json_array();
        for (uint32_t k = 0; k < g->n_holders; k++)
            json_array_append_new(holders, json_integer(g->holders[k]));
        size_t listed = 0;
        for (size_t k = 0; k < r->check.n_list; k++)
            listed += report_pair_in_group(r, &r->check.list[k], g);
        uint64_t end = report_group_lease_end_ns(r, g);
        bool is_drawn = d < n_drawn && drawn[d] == i;
        d += is_drawn;
        char cause[600];
        json_t *one = json_pack(
            "{s:s, s:o, s:o, s:I, s:f, s:f, s:f, s:o, s:b, s:o, s:f, s:I, s:b, s:s}", "key",
            r->hist.keys[g->stale.key], "stale", stale_json(r, &g->stale), "lease_ends_s",
            end ? json_real(report_rel_s(r, end)) : json_null(), "pairs", (json_int_t)g->pairs,
            "first_s", report_rel_s(r, g->first_ns), "last_s", report_rel_s(r, g->last_ns),
            "reach_s", report_rel_s(r, g->reach_ns), "holders", holders, "holders_more",
            g->more_holders, "faults", report_fault_spans_json(r, g->faults, g->n_faults),
            "host_stall_ms", (double)g->stall_ns / 1e6, "listed", (json_int_t)listed, "drawn",
            is_drawn, "cause", report_group_cause(r, g, cause, sizeof(cause)));
        if (g->stall_ns)
            json_object_set_new(one, "host_stall_at_s",
                                json_real(report_rel_s(r, g->stall_from_ns)));
        json_array_append_new(list, one);
    }
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:o}", "rule", "stale_holder", "lease_ttl_ms",
                     (json_int_t)r->hist.ttl_ms, "groups", (json_int_t)gs->groups, "other_groups",
                     (json_int_t)gs->other_groups, "other_pairs", (json_int_t)gs->other_pairs,
                     "list", list);
}

void report_group_lines(FILE *f, const struct run_result *r, size_t max)
{
    const struct violation_groups *gs = &r->check.groups;
    size_t shown = 0;
    for (size_t i = 0; i < gs->n_list && shown < max; i++, shown++) {
        const struct violation_group *g = &gs->list[i];
        char cause[600], by[48];
        /* a count, not the names: the line stays one line however many */
        if (g->n_holders == 1 && !g->more_holders)
            snprintf(by, sizeof(by), "client %" PRIu32, g->holders[0]);
        else
            snprintf(by, sizeof(by), "%s%" PRIu32 " clients", g->more_holders ? "more than " : "",
                     g->n_holders);
        fprintf(f, "!!! group %zu: %" PRIu64 " violation%s on %s from %.3f to %.3f s by %s: %s\n",
                i + 1, g->pairs, g->pairs == 1 ? "" : "s", r->hist.keys[g->stale.key],
                report_rel_s(r, g->first_ns), report_rel_s(r, g->last_ns), by,
                report_group_cause(r, g, cause, sizeof(cause)));
    }
    if (gs->groups > shown)
        fprintf(f, "!!! ... %" PRIu64 " groups by stale holder in all, %zu shown\n", gs->groups,
                shown);
    if (gs->other_groups)
        fprintf(f,
                "!!! ... other: %" PRIu64 " groups of %" PRIu64
                " violations, past the %d with the most\n",
                gs->other_groups, gs->other_pairs, CHECK_MAX_GROUPS);
}
