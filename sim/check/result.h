/* result.h - a finished run, as the reports read it. Reports never reach
 * into the runner; they get this struct once everything has stopped. It
 * holds plain data only, its types from the record, the checker and the
 * scenario: a renderer that includes it sees nothing of the engine, the
 * nemesis, the proxy, the fleet or the workloads. */
#ifndef LOCKLAB_RESULT_H
#define LOCKLAB_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "sim/check/availability.h"
#include "sim/check/checker.h"
#include "sim/check/invariant.h"
#include "sim/check/stuck.h"
#include "sim/faults/fault_record.h"
#include "sim/faults/fault_spec.h"
#include "sim/record/history.h"
#include "sim/record/intervals.h"
#include "sim/record/journal.h"
#include "sim/record/latency_timeline.h"
#include "sim/record/measures.h"
#include "sim/record/proxy_stats.h"
#include "sim/record/run_meta.h"

struct histogram;
struct late_grant;

#define RESULT_MAX_SERVERS 12
#define RESULT_SERVER_LEN  256
/* the scenario's three, and three per fault window */
#define RESULT_MAX_EXPECTS (3 + 3 * SCENARIO_MAX_FAULTS)
/* --percentiles takes at most this many, as memtier's --print-percentiles. */
#define RESULT_MAX_PERCENTILES 10

struct expect_record {
    char what[48]; /* "violations", "faults[2].recovery_ms" */
    char want[24]; /* ">0" */
    char got[32];
    bool met;
};

/* How the load was offered: closed loop (rate 0), or open loop on a
 * schedule and how far behind it the clients fell. */
struct load_record {
    double rate;         /* business steps per second in all; 0 = closed loop */
    uint64_t steps_due;  /* steps the schedule had before the end */
    uint64_t started;    /* of those, the steps begun */
    uint64_t lag_max_ns; /* the latest a step began after it was due */
    uint64_t lag_sum_ns; /* over the steps begun, for the mean */
};

struct scenario;

struct run_result {
    const struct scenario *scn;
    const char *algorithm;
    char run_dir[512];
    char servers[RESULT_MAX_SERVERS]
                [RESULT_SERVER_LEN]; /* "redis 127.0.0.1:41233 (managed, pid 1234)" */
    size_t n_servers;
    struct server_version versions[RESULT_MAX_SERVERS]; /* servers[i]'s, as it answered */
    const struct run_meta *meta; /* the command and host it ran under; NULL: none known */
    /* the proxy: which servers' traffic went through it, and what it did */
    bool proxied[RESULT_MAX_SERVERS];
    size_t proxy_listeners; /* per proxied server: 1, or one per client */
    bool has_proxy;
    struct proxy_stats proxy;

    bool complete;
    char incomplete_reason[640];
    uint64_t t0_mono_ns, t0_wall_ns, end_mono_ns;
    double elapsed_s;

    struct histogram *ops[OP_COUNT]; /* merged over clients, microseconds */
    uint64_t stat[ST_COUNT];
    char sample_error[LOCK_ERRSTR_MAX + 32]; /* one client's last error, if any */
    uint64_t connects_refused; /* of stat[ST_CONNECT_ERR], those that say a server is gone */
    struct load_record load;
    /* Each thread's operations by the second (intervals.h): the .hlog
     * files and tl_latency; NULL when read from a history (`check`). */
    struct interval_log *intervals;
    size_t n_intervals;
    /* Locks each client was granted (its acquire_ok counter), by client
     * id, for the fairness figures; NULL when the result was read from a
     * history (`check`): they are then counted from its events. */
    uint64_t *grants;
    uint32_t n_grants;
    uint32_t *tl_ok, *tl_fail;         /* per second */
    struct latency_second *tl_latency; /* per second: successful acquires' latency */
    /* The same, each in the second it began (latency_timeline.h); NULL
     * when the history could not be read back, or read from one (`check`) */
    struct latency_second *tl_begun;
    size_t tl_len;

    /* The run's names and start and end fields; its events are in the file
     * (journal), which kept history_events of them: a run holds none. */
    struct history hist;
    struct journal *journal; /* the run's history file, until the reports finish it */
    uint64_t history_events;
    uint64_t unreached_acquires; /* never reached a server, or got no answer from it */
    struct section *sections;    /* sorted by the checker: (key, entry) */
    size_t n_sections;
    struct fault_span *spans;
    size_t n_spans;
    struct fault_availability *avail; /* avail[i]: what spans[i] cost the clients */
    struct host_stall *stalls;        /* the testbed stood still (history_stalls), in order */
    size_t n_stalls;
    struct stuck_key *stuck; /* keys with waiters and no holder, longest first */
    size_t n_stuck;
    struct check_result check;
    /* What the pairs cannot tell (sim/check/stale_grants.h): the acquires
     * whose client was stopped while the grant was on its way, in entry
     * order, and the releases that answered not-owner. */
    struct late_grant *late_grants;
    size_t n_late_grants;
    uint64_t lost_at_release;    /* grants lost while held, the holder told only at its release */
    uint64_t witness_concurrent; /* the online witness's count */
    bool witness_agrees;         /* == check.concurrent_entries */
    uint64_t rejected_accesses;  /* reads and writes the resource rejected (fencing) */

    struct invariant inv[WORKLOAD_MAX_INVARIANTS];
    size_t n_inv;
    bool invariants_hold;
    struct fault_record faults[SCENARIO_MAX_FAULTS];
    size_t n_faults;

    struct expect_record expects[RESULT_MAX_EXPECTS];
    size_t n_expects;
    bool passed; /* every expectation met and the witness agrees */

    /* The latency percentiles the terminal, the CSV and report.json show,
     * as --percentiles gave them; none: report.h's default set. */
    double percentiles[RESULT_MAX_PERCENTILES];
    size_t n_percentiles;
};

/* A stall longer than the lock rides out by design (history.slack_ms): one
 * that can have let a holder's lease lapse. None is, when the lease does
 * not outlast the hold (slack 0). */
static inline bool result_stall_past_slack(const struct run_result *r, uint64_t stall_ns)
{
    return r->hist.slack_ms && stall_ns > (uint64_t)r->hist.slack_ms * 1000000u;
}

static inline double result_qps(const struct run_result *r, uint64_t count)
{
    return r->elapsed_s > 0 ? (double)count / r->elapsed_s : 0.0;
}

/* Sections, fault spans, the checker's verdict and each fault's
 * availability, from r->hist; lookback_ns as in checker_run. 0, or -1 out
 * of memory. */
int result_check_history(struct run_result *r, uint64_t lookback_ns, bool writes_only);
/* The availability of fault i of the scenario (its span), or NULL. */
const struct fault_availability *result_fault_availability(const struct run_result *r, size_t i);

/* True when every violation began in a host stall longer than the lock's
 * slack (history.slack_ms) with no fault of the scenario's near it: a
 * stall of the whole testbed lets any lease lapse, as a GC pause would,
 * so those violations say nothing of the lock. why gets one sentence. */
bool result_host_made_violations(const struct run_result *r, char *why, size_t len);
void result_free(struct run_result *r); /* frees the contents */

#endif
