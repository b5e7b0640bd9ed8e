/* record.c - the run's history streamed to its journal while the run goes
 * (record.h). The recorder's thread is the only one that runs the sink. */
#include "sim/engine/record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/check/result.h"
#include "sim/engine/client.h"
#include "sim/engine/resource.h"
#include "sim/engine/runner_state.h"
#include "sim/faults/nemesis.h"
#include "sim/record/journal.h"
#include "sim/record/recorder.h"
#include "sim/workloads/workload.h"

/* An owner id is incarnation * clients + client (client.h); incarnations
 * count in 16 bits. */
#define MAX_INCARNATIONS 65536u

struct run_record {
    struct runner *r;
    struct history_buf **bufs;
    struct recorder *rec;
    uint64_t *last_seq; /* by key: the witness's last seq, unwrapped */
    char **owners;      /* names for owner ids [0, n_owners) */
    struct history_names names;
    uint64_t unreached;
};

uint32_t record_lease_ms(const struct runner *r)
{
    /* a lock whose grants have no lease is judged against the ttl */
    return r->run.ops->leaseless ? r->run.scn->ttl_ms : scenario_lease_ms(r->run.scn, r->run.ops);
}

/* The longest stall of a holder its lease survives by design: the lease
 * less how long the holder goes without refreshing it. A client that
 * pings whatever it holds (ZooKeeper's, every third of the session) does
 * so every pings_ms; a watchdog (or a
 * kept lease) renews every renew_ms from the grant, or never when the hold
 * is shorter; otherwise the lease from the grant must cover the whole
 * hold. 0: the lock is not meant to survive its holder's hold (a ttl
 * shorter than it). */
uint32_t record_slack_ms(const struct runner *r)
{
    const struct scenario *s = r->run.scn;
    uint32_t lease = record_lease_ms(r), refresh = scenario_hold_ms(s);
    const struct lock_family *pings = lock_family_with(r->run.ops->family, FAMILY_HOOK(pings_ms));
    if (pings)
        refresh = pings->pings_ms(scenario_settings(s, pings));
    else if (r->run.renews && s->renew_ms < refresh)
        refresh = s->renew_ms;
    return lease > refresh ? lease - refresh : 0;
}

/* Names for every incarnation up to the one of owner id. */
static int name_owners(struct run_record *rr, uint32_t owner)
{
    uint32_t n = rr->r->n;
    size_t want = ((size_t)owner / n + 1) * n;
    char **t = realloc(rr->owners, want * sizeof(*t));
    if (t == NULL)
        return ENOMEM;
    rr->owners = t;
    for (size_t id = rr->names.n_owners; id < want; id++) {
        char buf[LOCK_OWNER_MAX];
        client_owner_name(buf, sizeof(buf), rr->r->run.run_id, (uint32_t)(id % n),
                          (uint16_t)(id / n));
        t[id] = strdup(buf);
        if (t[id] == NULL) {
            rr->names.n_owners = id;
            return ENOMEM;
        }
    }
    rr->names.owners = (const char *const *)t;
    rr->names.n_owners = want;
    return 0;
}

/* The witness's sequence numbers wrap (resource.h): each key's events come
 * in time order, their order on the witness to within the nanoseconds
 * between its fetch-add and the clock reading, far less than half the
 * range, so each is made whole from the key's last. */
static int sink(void *ctx, struct history_event *e)
{
    struct run_record *rr = ctx;
    if (history_has_seq(e) && e->key < rr->names.n_keys)
        e->seq = rr->last_seq[e->key] = resource_unwrap_seq(rr->last_seq[e->key], e->seq);
    if (e->f == HF_ACQUIRE &&
        ((e->type == HT_FAIL && e->arg == HE_UNSENT) || (e->type == HT_INFO && e->arg == HE_ERROR)))
        rr->unreached++;
    if (e->f != HF_FAULT && e->f != HF_STALL && e->owner >= rr->names.n_owners &&
        e->owner / rr->r->n < MAX_INCARNATIONS) {
        int rc = name_owners(rr, e->owner);
        if (rc)
            return rc;
    }
    return journal_write(rr->r->journal, e, &rr->names);
}

static void start_fields(const struct runner *r, struct history *h)
{
    memset(h, 0, sizeof(*h));
    h->start_mono_ns = r->run.t0_ns;
    h->start_wall_ns = r->t0_wall_ns;
    snprintf(h->scenario, sizeof(h->scenario), "%s", r->run.scn->name);
    snprintf(h->algorithm, sizeof(h->algorithm), "%s", r->run.ops->name);
    h->clients = r->n;
    h->seed = r->run.scn->seed;
    h->ttl_ms = record_lease_ms(r);
    h->slack_ms = record_slack_ms(r);
    h->metered = r->meter_ran;
    if (r->run.wl->ops->latch_settings) /* the judge's settings, for check */
        r->run.wl->ops->latch_settings(r->run.wl->settings, &h->latch);
}

int record_start(struct runner *r, char *err, size_t errlen)
{
    if (r->journal == NULL && (r->journal = journal_open(NULL, err, errlen)) == NULL)
        return -1;
    struct run_record *rr = calloc(1, sizeof(*rr));
    r->rec = rr;
    if (rr == NULL)
        goto no_memory;
    rr->r = r;
    struct workload *w = r->run.wl;
    rr->names.keys = (const char *const *)w->keys;
    rr->names.n_keys = w->n_keys;
    rr->names.n_notes = nemesis_notes(r->run.nem, &rr->names.notes);
    rr->last_seq = calloc(w->n_keys ? w->n_keys : 1, sizeof(*rr->last_seq));
    rr->bufs = calloc(r->n + 2, sizeof(*rr->bufs));
    if (rr->last_seq == NULL || rr->bufs == NULL)
        goto no_memory;
    size_t n = 0;
    for (uint32_t i = 0; i < r->n; i++)
        rr->bufs[n++] = r->clients[i].hist;
    rr->bufs[n++] = nemesis_history(r->run.nem);
    if (r->stall_log)
        rr->bufs[n++] = r->stall_log;
    struct history start;
    start_fields(r, &start);
    int rc = journal_begin(r->journal, &start);
    if (rc) {
        snprintf(err, errlen, "cannot write %s: %s", journal_path(r->journal), strerror(rc));
        return -1;
    }
    if ((rr->rec = recorder_start(rr->bufs, n, sink, rr)) == NULL) {
        snprintf(err, errlen, "cannot start the history's recorder: %s", strerror(errno));
        return -1;
    }
    return 0;
no_memory:
    snprintf(err, errlen, "out of memory starting the history");
    return -1;
}

void record_stop(struct runner *r, struct run_result *res)
{
    struct run_record *rr = r->rec;
    if (rr == NULL)
        return;
    struct recorder_stats st = {0};
    recorder_stop(rr->rec, &st);
    rr->rec = NULL;
    res->history_events = st.events;
    res->unreached_acquires = rr->unreached;
    res->hist.dropped += st.late;
    if (st.late) {
        res->complete = false;
        snprintf(res->incomplete_reason, sizeof(res->incomplete_reason),
                 "%" PRIu64 " history events came after their time had been written (a testbed "
                 "bug: an appender's floor was wrong), or found no memory",
                 st.late);
    }
    res->journal = r->journal;
    r->journal = NULL;
}

void record_free(struct runner *r)
{
    struct run_record *rr = r->rec;
    if (rr) {
        recorder_stop(rr->rec, NULL);
        for (size_t i = 0; i < rr->names.n_owners; i++)
            free(rr->owners[i]);
        free(rr->owners);
        free(rr->last_seq);
        free(rr->bufs);
        free(rr);
    }
    r->rec = NULL;
    journal_free(r->journal);
    r->journal = NULL;
}
