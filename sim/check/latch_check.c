/* latch_check.c - a latch's rounds judged, counted and worded, from the
 * run's own view or from its history's lines (latch_check.h). */
#include "sim/check/latch_check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/record/grow.h"

enum latch_verdict latch_judge(const struct latch_round_view *v, int passed, uint64_t *after_ns)
{
    *after_ns = 0;
    if (v->unanswered > 0)
        return LATCH_UNJUDGED;
    if (passed && v->sent < v->parties)
        return LATCH_EARLY;
    if (v->zero_ns == 0)
        return LATCH_ON_TIME; /* before the last answer came: not yet due */
    uint64_t start = v->zero_ns > v->from_ns ? v->zero_ns : v->from_ns;
    *after_ns = v->at_ns > start ? v->at_ns - start : 0;
    if (*after_ns <= (uint64_t)v->bound_ms * 1000000ULL)
        return LATCH_ON_TIME;
    return passed ? LATCH_LATE : LATCH_MISSED;
}

void latch_tally_init(struct latch_tally *t)
{
    *t = (struct latch_tally){.fewest_sent = UINT32_MAX};
}

enum latch_verdict latch_tally_round(struct latch_tally *t, const struct latch_round_view *v,
                                     bool passed, bool paused)
{
    uint64_t after;
    enum latch_verdict verdict = latch_judge(v, passed, &after);
    if (passed)
        t->passes++;
    if (passed && verdict != LATCH_UNJUDGED && after > t->slowest_ns)
        t->slowest_ns = after;
    /* paused through the zero: judged from its resumption */
    if (passed && paused && v->zero_ns != 0 && v->from_ns > v->zero_ns)
        t->after_pause++;
    if (verdict == LATCH_EARLY) {
        t->early++;
        if (v->sent < t->fewest_sent)
            t->fewest_sent = v->sent;
    }
    t->late += verdict == LATCH_LATE;
    t->missed += verdict == LATCH_MISSED;
    t->judged_out += passed && verdict == LATCH_UNJUDGED;
    return verdict;
}

size_t latch_tally_invariants(const struct latch_tally *t, const struct history_latch *s,
                              struct invariant *out, size_t max)
{
    if (max < 2)
        return 0;
    out[0] = (struct invariant){.name = "no_pass_before_zero", .holds = t->early == 0};
    snprintf(out[0].detail, sizeof(out[0].detail),
             "%" PRIu64 " rounds of %" PRIu32 " latch(es), %" PRIu64 " passes; %" PRIu64
             " passed before the count reached zero (the fewest countDowns sent then: %" PRIu32
             " of %" PRIu32 ")",
             t->rounds, s->latches, t->passes, t->early, t->early ? t->fewest_sent : s->parties,
             s->parties);
    out[1] = (struct invariant){.name = "every_waiter_within_bound",
                                .holds = t->late == 0 && t->missed == 0};
    snprintf(out[1].detail, sizeof(out[1].detail),
             "the slowest pass came %.1f ms after its waiter could pass (bound %" PRIu32
             " ms; %" PRIu64
             " waiters paused through the zero, judged from their resumption); %" PRIu64
             " later than the bound, %" PRIu64 " never through by the end; %" PRIu64
             " passes not judged (a countDown unanswered); %" PRIu64
             " rounds not begun (trySetCount failed)",
             (double)t->slowest_ns / 1e6, s->bound_ms, t->after_pause, t->late, t->missed,
             t->judged_out, t->set_failed);
    return 2;
}

/* ---- from the history ---------------------------------------------------- */

/* One client's part, as its lines tell it. */
struct latch_proc {
    bool in_round;    /* a waiter between its round's first await and its pass */
    bool paused;      /* a pause inside one of this round's awaits moved from */
    bool looked;      /* an await of this round came back */
    bool set_pending; /* a coordinator's trySetCount did not set: a round not begun, unless
                         its next call is a delete that was answered (then it sets again) */
    uint64_t from_ns;
    struct latch_round_view last; /* what its last await's result saw */
};

struct latch_check {
    struct history_latch s;
    struct latch_tally t;
    struct latch_proc *p;
    size_t n_p;
};

struct latch_check *latch_check_begin(const struct history_latch *s)
{
    struct latch_check *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->s = *s;
    latch_tally_init(&c->t);
    return c;
}

void latch_check_free(struct latch_check *c)
{
    if (c == NULL)
        return;
    free(c->p);
    free(c);
}

static struct latch_proc *proc_of(struct latch_check *c, uint32_t client)
{
    /* the new ones zeroed: out of any round, nothing pending */
    if (array_grow(&c->p, &c->n_p, (size_t)client + 1, sizeof(*c->p)) < 0)
        return NULL;
    return &c->p[client];
}

/* A coordinator's try that set nothing, counted once its next call shows
 * it did not start over (or the history ended). */
static void settle_set(struct latch_check *c, struct latch_proc *p, const struct history_event *e)
{
    if (!p->set_pending)
        return;
    if (e && e->f == HF_LATCH_DELETE && e->type == HT_INVOKE)
        return; /* its answer decides */
    p->set_pending = false;
    if (e && e->f == HF_LATCH_DELETE && e->type == HT_OK)
        return; /* answered: the coordinator sets again, and that try counts */
    c->t.set_failed++;
}

static void await_result(struct latch_check *c, struct latch_proc *p, const struct history_event *e)
{
    if (!p->in_round) { /* a result with no invoke: its round began at it */
        p->in_round = true;
        p->from_ns = e->t_ns;
    }
    if (e->resumed_ns > p->from_ns) {
        p->from_ns = e->resumed_ns;
        p->paused = true;
    }
    p->last = (struct latch_round_view){
        .parties = c->s.parties,
        .sent = e->permits,
        .unanswered = e->unanswered,
        .zero_ns = e->zero_ns,
        .from_ns = p->from_ns,
        .at_ns = e->t_ns,
        .bound_ms = c->s.bound_ms,
    };
    p->looked = true;
    if (e->type != HT_OK)
        return;
    latch_tally_round(&c->t, &p->last, true, p->paused);
    p->in_round = p->paused = p->looked = false;
}

int latch_check_event(struct latch_check *c, const struct history_event *e)
{
    if (!history_f_latch(e->f))
        return 0;
    struct latch_proc *p = proc_of(c, e->client);
    if (p == NULL)
        return -1;
    settle_set(c, p, e);
    switch (e->f) {
    case HF_SET_COUNT:
        if (e->type == HT_OK)
            c->t.rounds++;
        else if (e->type != HT_INVOKE)
            p->set_pending = true;
        break;
    case HF_AWAIT:
        if (e->type == HT_INVOKE && !p->in_round) {
            p->in_round = true;
            p->from_ns = e->t_ns;
        } else if (e->type != HT_INVOKE) {
            await_result(c, p, e);
        }
        break;
    default:
        break;
    }
    return 0;
}

void latch_check_end(struct latch_check *c, struct latch_tally *out)
{
    for (size_t i = 0; i < c->n_p; i++) {
        struct latch_proc *p = &c->p[i];
        settle_set(c, p, NULL);
        /* a waiter not through by the end: judged at its last await's return */
        if (p->in_round && p->looked)
            latch_tally_round(&c->t, &p->last, false, p->paused);
    }
    *out = c->t;
    latch_check_free(c);
}
