/* stale_grants.c - the late grants and the grants lost at release, as a
 * history's events come (stale_grants.h). */
#include "sim/check/stale_grants.h"

#include <stdlib.h>
#include <string.h>

#include "sim/faults/fault_spec.h"
#include "sim/record/grow.h"

#define NO_LATE UINT32_MAX

/* One client: its acquire in flight and a stop that struck it there, and
 * the late grant it holds until its release answers. */
struct asker {
    bool asking, stopped, stop_over;
    uint32_t key, stop_kind;
    uint32_t late; /* index into the kept list, or NO_LATE */
    uint64_t asked_ns, stop_from_ns, stop_to_ns;
};

struct stale_grants {
    struct asker *who;
    size_t n_who;
    struct late_grant *late;
    size_t n_late, cap_late;
    uint64_t lost_at_release;
    bool writes_only;
};

struct stale_grants *stale_grants_begin(bool writes_only)
{
    struct stale_grants *t = calloc(1, sizeof(*t));
    if (t)
        t->writes_only = writes_only;
    return t;
}

void stale_grants_free(struct stale_grants *t)
{
    if (t == NULL)
        return;
    free(t->who);
    free(t->late);
    free(t);
}

/* The client's state, the table grown to hold it; NULL out of memory. */
static struct asker *asker_of(struct stale_grants *t, uint32_t client)
{
    if (client >= t->n_who) {
        size_t cap = t->n_who;
        if (array_grow(&t->who, &cap, (size_t)client + 1, sizeof(*t->who)) < 0)
            return NULL;
        for (size_t i = t->n_who; i < cap; i++)
            t->who[i].late = NO_LATE;
        t->n_who = cap;
    }
    return &t->who[client];
}

/* A stop: a client fault that leaves its client alive (a pause), not one
 * that kills it (its acquire dies with it). */
static bool stops_client(unsigned kind)
{
    return fault_on_client(kind) && !fault_kills_holder(kind);
}

static void fault_event(struct asker *a, const struct history_event *e)
{
    if (e->arg2 == 0 && a->asking && !a->stopped) {
        a->stopped = true;
        a->stop_kind = e->arg;
        a->stop_from_ns = e->t_ns;
    } else if (e->arg2 == 1 && a->stopped && !a->stop_over) {
        a->stop_over = true;
        a->stop_to_ns = e->t_ns;
    }
}

static int entered(struct stale_grants *t, struct asker *a, uint32_t client,
                   const struct history_event *e)
{
    bool late = a->asking && a->stopped;
    a->asking = false;
    if (!late || t->n_late >= LATE_GRANTS_MAX)
        return 0;
    if (array_grow(&t->late, &t->cap_late, t->n_late + 1, sizeof(*t->late)) < 0)
        return -1;
    /* the end of a stop may be written just after the entry it let go */
    t->late[t->n_late] = (struct late_grant){
        .client = client,
        .key = e->key,
        .stop_kind = a->stop_kind,
        .release = LATE_HELD,
        .asked_ns = a->asked_ns,
        .stop_from_ns = a->stop_from_ns,
        .stop_to_ns = a->stop_over ? a->stop_to_ns : e->t_ns,
        .entered_ns = e->t_ns,
    };
    a->late = (uint32_t)t->n_late++;
    return 0;
}

static void released(struct stale_grants *t, struct asker *a, const struct history_event *e)
{
    bool lost = e->type == HT_FAIL && e->arg == HE_LOST;
    if (lost && !t->writes_only)
        t->lost_at_release++;
    if (a->late == NO_LATE || t->late[a->late].key != e->key)
        return;
    t->late[a->late].release = e->type == HT_OK ? LATE_RELEASED : lost ? LATE_LOST : LATE_UNKNOWN;
    a->late = NO_LATE;
}

int stale_grants_event(struct stale_grants *t, const struct history_event *e)
{
    if (e->client >= HISTORY_MAX_CLIENTS)
        return 0; /* the servers' faults, the host's stalls */
    bool fault = e->f == HF_FAULT;
    if (fault && !stops_client(e->arg))
        return 0;
    if (!fault && e->f != HF_ACQUIRE && e->f != HF_RELEASE && e->f != HF_CRASH)
        return 0;
    struct asker *a = asker_of(t, e->client);
    if (a == NULL)
        return -1;
    if (fault) {
        fault_event(a, e);
    } else if (e->f == HF_CRASH) {
        a->asking = false;
        a->late = NO_LATE;
    } else if (e->f == HF_ACQUIRE && e->type == HT_INVOKE) {
        *a = (struct asker){.asking = true, .key = e->key, .late = a->late, .asked_ns = e->t_ns};
    } else if (e->f == HF_ACQUIRE && e->type == HT_OK) {
        return entered(t, a, e->client, e);
    } else if (e->f == HF_ACQUIRE) {
        a->asking = false; /* busy, or no answer: no grant to be late */
    } else if (e->type != HT_INVOKE) {
        released(t, a, e);
    }
    return 0;
}

void stale_grants_end(struct stale_grants *t, struct late_grant **late, size_t *n_late,
                      uint64_t *lost_at_release)
{
    *late = t->late;
    *n_late = t->n_late;
    *lost_at_release = t->lost_at_release;
    t->late = NULL;
    stale_grants_free(t);
}
