/* checker.h - the offline mutual-exclusion checker.
 *
 * Input: every critical section of a run (who held which key in which
 * mode, from when to when, and what its write did) and every fault span.
 * Output: each pair of sections of *different owners* on the same key
 * whose intervals overlap and whose modes conflict, classified as fenced
 * (at least one side's write was rejected by the resource's fencing check:
 * safe) or a violation (neither was fenced).
 *
 * Modes (enum lock_mode): an exclusive section conflicts with every other
 * owner's section; a shared one with exclusive ones only (readers share,
 * never with a writer). A permit is a shared hold of which at most N (its
 * permits) may be inside: one conflicts with an exclusive section as a
 * shared one does, and it is a violation when it enters while N or more
 * shared or permit sections of any owner are already inside (a semaphore
 * counts permits, not owners); that overlap is reported as one pair, the
 * entrant and, of those inside, the one that leaves first. A key is a read-
 * write lock or a semaphore, never both; the mixed rule is so any history
 * has one reading, and it is the one the online witness can count.
 *
 * Ordering: when both sections carry the resource witness's per-key
 * sequence numbers (a run's own history), overlap is decided on that
 * sequence, which is the exact order in which holders entered and left the
 * resource; otherwise (a history from elsewhere) on the monotonic times.
 * Touching intervals (one ends exactly when the next begins) do not
 * overlap. Overlap durations are always reported in nanoseconds of time.
 */
#ifndef LOCKLAB_CHECKER_H
#define LOCKLAB_CHECKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "sim/record/section_effect.h"

struct section {
    uint32_t key;    /* interned key id */
    uint32_t owner;  /* interned owner id; equal owners never conflict (re-entry) */
    uint32_t client; /* process number, for reports */
    uint8_t effect;  /* enum section_effect */
    uint8_t mode;    /* enum lock_mode; any other value is judged as exclusive */
    bool has_seq;
    uint32_t permits;  /* LOCK_MODE_PERMIT: the key's N (0 is taken as 1) */
    uint64_t token;    /* fencing token, 0 = none */
    uint64_t from_ns;  /* acquired-at, CLOCK_MONOTONIC */
    uint64_t asked_ns; /* its acquire's invoke (asks.h), from_ns when not seen: the lease
                          began between the two */
    uint64_t to_ns;    /* release-started-at (or crash time); for EFFECT_OPEN the end of
                          the history, for reports only: the sweep treats it as endless */
    uint64_t seq_from; /* witness sequence at entry and exit (when has_seq) */
    uint64_t seq_to;
};

struct fault_span {
    uint32_t type;    /* the engine's fault type number */
    int32_t client;   /* target client, -1 for none */
    uint32_t fault;   /* its index in the scenario's list (UINT32_MAX: not known) */
    uint32_t servers; /* the note naming the servers it struck (UINT32_MAX: none) */
    uint64_t from_ns;
    uint64_t to_ns; /* UINT64_MAX while still active at the end */
};

/* A span the whole testbed stood still (hiccup.h): no fault of the
 * scenario's, but a holder stopped in it lives a GC pause all the same. */
struct host_stall {
    uint64_t from_ns, to_ns;
};

#define CHECK_MAX_FAULTS_PER_VIOLATION 4

struct violation {
    size_t a, b; /* the sections' ids (checker_run: indices into its sorted array; a stream:
                    the order the holders entered); a entered first */
    struct section sa, sb; /* the two, as they were: a stream keeps no array to index */
    uint64_t overlap_ns;   /* time both were inside (0 when they only overlap in sequence) */
    bool fenced;           /* at least one side fenced: counted apart, not a violation */
    size_t n_faults;       /* fault spans on while the earlier holder held (up to the overlap's
                              end), or ended within the lookback before the overlap */
    size_t faults[CHECK_MAX_FAULTS_PER_VIOLATION]; /* their indices, first ones */
    uint64_t stall_ns;      /* the longest host stall the earlier holder lived before the later
                               one entered, within a lease of it (checker_attach_stalls); 0: none */
    uint64_t stall_from_ns; /* when it began */
};

/* The violations grouped by cause (groups.h): one group per stale holder,
 * the section that entered first in each of its pairs and was still
 * inside as the others entered. Every unfenced pair falls in exactly one
 * group; groups past CHECK_MAX_GROUPS are counted, not kept. */
#define CHECK_MAX_GROUPS  100
#define GROUP_MAX_HOLDERS 16

struct violation_group {
    struct section stale; /* the holder the others overlapped (a in each pair) */
    uint64_t pairs;       /* its unfenced pairs, every one of them */
    uint64_t first_ns;    /* the first other holder entered (the first overlap began) */
    uint64_t last_ns;     /* the last overlap ended */
    uint64_t reach_ns;    /* the latest any of them left: the group's extent */
    uint32_t holders[GROUP_MAX_HOLDERS]; /* the lowest-numbered clients that overlapped it,
                                            ascending, each once */
    uint32_t n_holders;
    bool more_holders; /* more clients than those overlapped it */
    size_t n_faults;   /* fault spans near it (checker_run's rule for a pair whose later
                          side runs from first_ns to last_ns) */
    size_t faults[CHECK_MAX_FAULTS_PER_VIOLATION]; /* their indices, first ones */
    uint64_t stall_ns; /* the longest host stall it lived before first_ns, within a lease
                          (checker_attach_stalls); 0: none */
    uint64_t stall_from_ns;
};

struct violation_groups {
    struct violation_group *list; /* kept: the CHECK_MAX_GROUPS with the most pairs, in the
                                     order their stale holders entered */
    size_t n_list;
    uint64_t groups;       /* every group */
    uint64_t other_groups; /* of them, not kept */
    uint64_t other_pairs;  /* their pairs */
    bool writes_only;      /* the rule the pairs were judged by (checker_run's writes_only) */
};

struct check_result {
    uint64_t sections;
    uint64_t overlaps;           /* pairs of different owners that overlap in conflicting
                                    modes, and permit entries past N (one pair each) */
    uint64_t fenced_pairs;       /* of those, pairs with a fenced side (writes_only: or
                                    with at most one side that wrote) */
    uint64_t violations;         /* overlaps - fenced_pairs */
    uint64_t concurrent_entries; /* sections entering while a conflicting set was inside
                                    (an exclusive one: any other owner's; a shared one: an
                                    exclusive; a permit: an exclusive, or N shared or
                                    permits): what the online witness counts */
    struct violation *list;      /* the first `cap` overlaps (fenced or not), in entry order */
    size_t n_list;
    size_t cap;
    struct violation_groups groups; /* the unfenced ones by cause */
};

/* Check n sections and nf fault spans: the stream's sweeps (sweep.h) fed
 * one key at a time, so it lists what the stream would on one key. With writes_only (optimistic
 * concurrency, which promises no exclusion: lock_ops.optimistic), an
 * overlap is a violation only when both sides wrote; the others count
 * with the fenced pairs, as safe. `sections` is sorted in place by
 * (key, entry). At most max_listed overlaps are kept in out->list (owned by
 * out; free with checker_result_free). A violation names the faults on
 * while the earlier holder held (up to the overlap's end), or ended at
 * most lookback_ns before the overlap (the lock's ttl: a lease a
 * fault broke lapses that long after). Returns 0, or -1 out
 * of memory. */
int checker_run(struct section *sections, size_t n, const struct fault_span *faults, size_t nf,
                uint64_t lookback_ns, size_t max_listed, bool writes_only,
                struct check_result *out);
/* Name, for each listed overlap, the longest of the n host stalls (sorted,
 * not overlapping) that can have let the earlier holder's lease lapse: its
 * part from the earlier holder's entry to the later one's, when it ended
 * at most lease_ns before the later one entered (a lease outlives a stall
 * that ended longer ago). sections as checker_run left them, or NULL: the
 * pairs' own copies (sa, sb). */
void checker_attach_stalls(struct check_result *r, const struct section *sections,
                           const struct host_stall *stalls, size_t n, uint64_t lease_ns);
void checker_result_free(struct check_result *r);

#endif
