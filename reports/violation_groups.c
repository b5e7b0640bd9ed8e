/* violation_groups.c - the violations by stale holder in words and JSON,
 * for every renderer (violation_groups.h). */
#include "reports/violation_groups.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "reports/report.h"
#include "sim/check/context.h"
#include "sim/check/groups.h"
#include "sim/check/stale_grants.h"
#include "sim/scenario/scenario.h"

/* The lease the words speak of: the one the lock's grants really ran on
 * (scenario_lease_ms; a history read back says it as its ttl_ms), with
 * what the scenario asked beside it when they differ. */
struct lease_words {
    uint32_t lease_ms, ttl_ms; /* ttl_ms 0: not known (a history read back) */
    bool leaseless, session;
};

static struct lease_words lease_words_of(const struct run_result *r)
{
    const struct lock_ops *ops = lock_find(r->algorithm ? r->algorithm : r->hist.algorithm);
    struct lease_words w = {.lease_ms = r->hist.ttl_ms};
    if (ops == NULL)
        return w;
    /* a lease of the lock's own (a session, etcd's whole seconds) */
    const struct lock_family *own = lock_family_with(ops->family, FAMILY_HOOK(lease_ms));
    w.leaseless = ops->leaseless;
    w.session = own && own->session;
    if (r->scn) {
        w.lease_ms = scenario_lease_ms(r->scn, ops);
        w.ttl_ms = r->scn->ttl_ms;
    } else if (!own) {
        w.ttl_ms = w.lease_ms; /* the history's ttl_ms is the ttl itself */
    }
    if (w.leaseless)
        w.lease_ms = 0;
    return w;
}

/* "its lease (ttl 500 ms)", "its lease (2000 ms, for a ttl of 1500 ms)",
 * "its session (timeout 1000 ms)". */
static const char *lease_phrase(const struct lease_words *w, char *buf, size_t len)
{
    if (w->session)
        snprintf(buf, len, "its session (timeout %" PRIu32 " ms)", w->lease_ms);
    else if (w->ttl_ms == w->lease_ms)
        snprintf(buf, len, "its lease (ttl %" PRIu32 " ms)", w->lease_ms);
    else if (w->ttl_ms)
        snprintf(buf, len, "its lease (%" PRIu32 " ms, for a ttl of %" PRIu32 " ms)", w->lease_ms,
                 w->ttl_ms);
    else
        snprintf(buf, len, "its lease (%" PRIu32 " ms)", w->lease_ms);
    return buf;
}

struct group_blame report_group_blame(const struct run_result *r, const struct violation_group *g)
{
    struct lease_words w = lease_words_of(r);
    struct blame_facts f = {.lease_ns = (uint64_t)w.lease_ms * 1000000u,
                            .leaseless = w.leaseless,
                            .late = r->late_grants,
                            .n_late = r->n_late_grants,
                            .spans = r->spans,
                            .n_spans = r->n_spans};
    return groups_blame(g, &f);
}

uint64_t report_group_lease_end_ns(const struct run_result *r, const struct violation_group *g)
{
    return report_group_blame(r, g).lease_end_ns;
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

static const char *const release_words[] = {[LATE_HELD] = "",
                                            [LATE_RELEASED] = "",
                                            [LATE_LOST] = "; its release answered not-owner",
                                            [LATE_UNKNOWN] = "; its release got no answer"};

/* A late grant: how it came to be stale, with its lease (lease_ns). */
static void late_words(const struct run_result *r, const struct late_grant *l, const char *lease,
                       uint64_t lease_ns, char *buf, size_t len, size_t *used)
{
    uint64_t out = l->stop_from_ns + lease_ns;
    report_append(buf, len, used,
                  "it asked at %.3f s and was stopped by %s from %.3f to %.3f s inside "
                  "acquire: %s, from a grant made before the stop, had run out by %.3f s at the "
                  "latest, %.1f ms before it entered%s",
                  report_rel_s(r, l->asked_ns), fault_type_name(l->stop_kind),
                  report_rel_s(r, l->stop_from_ns), report_rel_s(r, l->stop_to_ns), lease,
                  report_rel_s(r, out), (double)(l->entered_ns - out) / 1e6,
                  release_words[l->release < LATE_UNKNOWN ? l->release : LATE_UNKNOWN]);
}

/* What ended the session of a lock with no lease: a fault of its servers,
 * or one that cut the holder's own connection. */
static void session_words(const struct run_result *r, const struct violation_group *g,
                          const struct fault_span *f, char *buf, size_t len, size_t *used)
{
    char name[96];
    report_span_name(r, f, name, sizeof(name));
    report_append(buf, len, used,
                  "; the lock has no lease, it lasts as long as its session: %s at %.3f s %s "
                  "while it held, %.1f ms before the first other holder entered at %.3f s",
                  name, report_rel_s(r, f->from_ns),
                  fault_on_servers(f->type)
                      ? "ended that session with the server"
                      : "cut its connection, and the server ended the session",
                  (double)(g->first_ns - f->from_ns) / 1e6, report_rel_s(r, g->first_ns));
}

static void blame_words(const struct run_result *r, const struct violation_group *g,
                        const struct group_blame *b, const struct lease_words *w, char *buf,
                        size_t len, size_t *used)
{
    char lease[80];
    lease_phrase(w, lease, sizeof(lease));
    uint64_t lease_ns = (uint64_t)w->lease_ms * 1000000u, end = b->lease_end_ns;
    switch (b->why) {
    case BLAME_OUTLIVED:
        /* one form whether the entrant came before the latest end or after:
         * when the server granted, between the ask and the entry, the history
         * cannot tell */
        if (b->lease_end_min_ns < end)
            report_append(buf, len, used,
                          "; %s ran out at %.3f .. %.3f s (it was granted between its ask and "
                          "its entry), and the first other holder entered at %.3f s",
                          lease, report_rel_s(r, b->lease_end_min_ns), report_rel_s(r, end),
                          report_rel_s(r, g->first_ns));
        else
            report_append(buf, len, used,
                          "; %s ran out at %.3f s, and the first other holder entered at %.3f s",
                          lease, report_rel_s(r, end), report_rel_s(r, g->first_ns));
        return;
    case BLAME_LOST: /* nobody should have been granted it yet: the grant was lost, not outlived */
        report_append(
            buf, len, used,
            "; the first other holder entered at %.3f s, %.1f ms before %s ran out at "
            "%.3f s%s: its grant was lost",
            report_rel_s(r, g->first_ns), (double)(b->lease_end_min_ns - g->first_ns) / 1e6, lease,
            report_rel_s(r, b->lease_end_min_ns),
            b->lease_end_min_ns < end ? " at the earliest (granted as early as its ask)" : "");
        return;
    case BLAME_LATE_HOLDER:
        report_append(buf, len, used, "; it entered on a stale grant: ");
        late_words(r, b->late, lease, lease_ns, buf, len, used);
        report_append(buf, len, used, "; the first other holder entered at %.3f s",
                      report_rel_s(r, g->first_ns));
        return;
    case BLAME_LATE_ENTRANT: /* the holder's own grant was sound: the late one's was not */
        report_append(buf, len, used,
                      "; client %" PRIu32 ", the first other holder, entered at %.3f s on a stale "
                      "grant: ",
                      b->late->client, report_rel_s(r, g->first_ns));
        late_words(r, b->late, lease, lease_ns, buf, len, used);
        return;
    case BLAME_SESSION_ENDED:
        session_words(r, g, &r->spans[b->span], buf, len, used);
        return;
    case BLAME_SESSION_LOST:
        report_append(buf, len, used,
                      "; the lock has no lease, and nothing in the history ended its session, "
                      "yet the first other holder entered at %.3f s: its grant was lost",
                      report_rel_s(r, g->first_ns));
        return;
    default:
        report_append(buf, len, used, "; its lease is not known");
    }
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
    struct lease_words w = lease_words_of(r);
    struct group_blame b = report_group_blame(r, g);
    blame_words(r, g, &b, &w, buf, len, &used);
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

static const char *const release_names[] = {[LATE_HELD] = "held",
                                            [LATE_RELEASED] = "released",
                                            [LATE_LOST] = "not_owner",
                                            [LATE_UNKNOWN] = "no_answer"};

/* A group's late grant, as report.json gives it (null when none). */
static json_t *late_json(const struct run_result *r, const struct late_grant *l, uint64_t lease_ns)
{
    if (l == NULL)
        return json_null();
    return json_pack("{s:i, s:f, s:s, s:f, s:f, s:f, s:f, s:s}", "client", l->client, "asked_s",
                     report_rel_s(r, l->asked_ns), "stop", fault_type_name(l->stop_kind),
                     "stop_from_s", report_rel_s(r, l->stop_from_ns), "stop_to_s",
                     report_rel_s(r, l->stop_to_ns), "lease_out_by_s",
                     report_rel_s(r, l->stop_from_ns + lease_ns), "entered_s",
                     report_rel_s(r, l->entered_ns), "release",
                     release_names[l->release < LATE_UNKNOWN ? l->release : LATE_UNKNOWN]);
}

json_t *report_groups_json(const struct run_result *r, size_t drawn_max)
{
    struct lease_words w = lease_words_of(r);
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
        struct group_blame b = report_group_blame(r, g);
        uint64_t end = b.lease_end_ns;
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
        json_object_set_new(one, "blame", json_string(group_blame_names[b.why]));
        json_object_set_new(one, "late", late_json(r, b.late, (uint64_t)w.lease_ms * 1000000u));
        json_array_append_new(list, one);
    }
    return json_pack("{s:s, s:I, s:b, s:I, s:I, s:I, s:o}", "rule", "stale_holder", "lease_ttl_ms",
                     (json_int_t)w.lease_ms, "leaseless", w.leaseless, "groups",
                     (json_int_t)gs->groups, "other_groups", (json_int_t)gs->other_groups,
                     "other_pairs", (json_int_t)gs->other_pairs, "list", list);
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
