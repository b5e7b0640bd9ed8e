/* check_pass.c - the consumers of `check`'s one pass, fed each event in
 * turn (check_pass.h). */
#include "sim/check/check_pass.h"

#include <stdlib.h>
#include <string.h>

#include "sim/check/availability.h"
#include "sim/check/check_stream.h"
#include "sim/check/latch_check.h"
#include "sim/check/stale_grants.h"
#include "sim/check/stalls.h"
#include "sim/check/stuck.h"
#include "sim/record/hiccup.h"

struct check_pass {
    uint64_t lookback_ns;
    struct check_result check;
    struct checker *checker;
    struct availability *avail;
    struct stuck *stuck;
    struct stalls *stalls;
    struct stale_grants *grants;
    struct latch_check *latch; /* NULL: no latch */
    struct history_latch latch_settings;
};

void check_pass_free(struct check_pass *p)
{
    if (p == NULL)
        return;
    struct fault_availability *a = NULL;
    struct stuck_key *k = NULL;
    struct host_stall *st = NULL;
    size_t n;
    if (p->checker)
        checker_end(p->checker, 0, NULL, NULL);
    if (p->avail && availability_end(p->avail, 0, &a, &n) == 0)
        free(a);
    if (p->stuck && stuck_end(p->stuck, 0, &k, &n) == 0)
        free(k);
    if (p->stalls && stalls_end(p->stalls, &st, &n) == 0)
        free(st);
    stale_grants_free(p->grants);
    latch_check_free(p->latch);
    checker_result_free(&p->check);
    free(p);
}

struct check_pass *check_pass_begin(uint64_t lookback_ns, bool writes_only)
{
    struct check_pass *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->lookback_ns = lookback_ns;
    /* the whole-history check lists 1000 overlaps too (result.c) */
    p->checker = checker_begin(lookback_ns, 1000, writes_only, &p->check);
    p->avail = availability_begin();
    p->stuck = stuck_begin();
    p->stalls = stalls_begin(HICCUP_FLOOR_MS * 1000000ULL);
    p->grants = stale_grants_begin(writes_only);
    if (!p->checker || !p->avail || !p->stuck || !p->stalls || !p->grants) {
        check_pass_free(p);
        return NULL;
    }
    return p;
}

int check_pass_latch(struct check_pass *p, const struct history_latch *s)
{
    latch_check_free(p->latch);
    p->latch_settings = *s;
    p->latch = latch_check_begin(s);
    return p->latch ? 0 : -1;
}

int check_pass_event(struct check_pass *p, const struct history_event *e)
{
    int rc = checker_event(p->checker, e);
    if (rc < 0)
        return rc;
    if (availability_event(p->avail, e) < 0 || stuck_event(p->stuck, e) < 0 ||
        stalls_event(p->stalls, e) < 0 || stale_grants_event(p->grants, e) < 0 ||
        (p->latch && latch_check_event(p->latch, e) < 0))
        return -1;
    return 0;
}

size_t check_pass_held_peak(const struct check_pass *p)
{
    return checker_held_peak(p->checker);
}

int check_pass_end(struct check_pass *p, uint64_t end_ns, struct run_result *r)
{
    struct checker *c = p->checker;
    struct availability *a = p->avail;
    struct stuck *s = p->stuck;
    struct stalls *st = p->stalls;
    p->checker = NULL;
    p->avail = NULL;
    p->stuck = NULL;
    p->stalls = NULL;
    stale_grants_end(p->grants, &r->late_grants, &r->n_late_grants, &r->lost_at_release);
    p->grants = NULL;
    if (p->latch) {
        struct latch_tally t;
        latch_check_end(p->latch, &t);
        p->latch = NULL;
        r->n_inv = latch_tally_invariants(&t, &p->latch_settings, r->inv, WORKLOAD_MAX_INVARIANTS);
        r->invariants_hold = r->inv[0].holds && r->inv[1].holds;
    }
    size_t n_avail = 0;
    int rc = checker_end(c, end_ns, &r->spans, &r->n_spans);
    rc |= availability_end(a, end_ns, &r->avail, &n_avail);
    rc |= stuck_end(s, end_ns, &r->stuck, &r->n_stuck);
    rc |= stalls_end(st, &r->stalls, &r->n_stalls);
    if (rc == 0 && n_avail != r->n_spans)
        rc = -1; /* both pair the spans by one rule: never */
    if (rc == 0) {
        r->check = p->check;
        memset(&p->check, 0, sizeof(p->check));
        checker_attach_stalls(&r->check, NULL, r->stalls, r->n_stalls, p->lookback_ns);
    }
    check_pass_free(p);
    return rc < 0 ? -1 : 0;
}
