/* resource.h - the protected resource: an in-process store of one integer
 * per key (stock per item), with the online witness and optional fencing.
 *
 * Without fencing, reads and writes are separate relaxed atomic accesses,
 * so two holders inside at once lose an update exactly as two processes
 * racing on a database row would — visible, and free of C data races.
 *
 * Witness: one 64-bit word per key: how many exclusive holders are
 * inside (bits 0-16), how many shared ones, shared and permits alike
 * (bits 17-33), and an event sequence (bits 34-63, RESOURCE_SEQ_BITS: it
 * wraps past a billion entries and exits of one key, and the history's
 * reader unwraps it, resource_unwrap_seq). Entering and leaving
 * are single fetch-adds on it, so the sequence is the exact order in which
 * holders came and went, and each entry sees exactly who was inside; the
 * history records the sequence and the offline checker orders sections by
 * it, which is why the two always agree. An entry counts as concurrent by
 * the checker's rule (checker.h): an exclusive one when anyone is inside, a
 * shared one when an exclusive holder is, a permit when an exclusive
 * holder is or `permits` shared ones are. The witness does not know
 * owners: it is entered once per holder of a key, and a holder re-entering
 * a key it holds is no new holder (the checker does not count it either).
 *
 * Fencing (Kleppmann): the store remembers the highest token it has seen
 * per key, on reads as well as writes, and rejects any access with a lower
 * one. Checking a read too is what makes read-modify-write safe: once a
 * newer holder has read, an older holder's write can no longer land.
 *
 * Versions (optimistic concurrency, postgres-optimistic): the value is a
 * row whose version lives in the lock's database. A section's token is
 * the version it read there; it commits there (version + 1) before it
 * writes here. The store keeps the version its value is at, so that value
 * and version move as one, as they do in a real row: a read with a token
 * older than the value's version is refused (a newer commit has written),
 * one newer too while that commit has yet to write here (version_current
 * in resource.c says when it is adopted instead), and a write is applied
 * only on the version its token names, moving it to token + 1. Commits
 * and writes of one key are so applied in the database's order.
 */
#ifndef LOCKLAB_RESOURCE_H
#define LOCKLAB_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "sim/workloads/workload.h" /* enum resource_rc: what the workloads are told */

struct resource;

/* n_keys keys, each holding `initial`. NULL when out of memory. */
struct resource *resource_new(size_t n_keys, int64_t initial, bool fencing);
void resource_free(struct resource *r); /* accepts NULL */

/* key's starting value in place of `initial`, for a store whose keys do
 * not all start alike; set before any client runs. */
void resource_preset(struct resource *r, uint32_t key, int64_t value);

/* Track versions (above); set before any client runs. */
void resource_set_versioned(struct resource *r);

/* Versions: a commit on key begins (its compare-and-set is sent), and
 * ends once its write is applied here or the commit failed; unknown: its
 * answer never came, so it may have committed a version whose write will
 * never come here. */
void resource_commit_begin(struct resource *r, uint32_t key);
void resource_commit_end(struct resource *r, uint32_t key, bool unknown);
/* Versions: committed writes the store refused, which a database that
 * lets one commit through per version never causes. */
uint64_t resource_lost_commits(const struct resource *r);

/* Witness: how many permit holders one key admits (lock_config.permits,
 * at least 1; 1 until set); set before any client runs. */
void resource_set_permits(struct resource *r, uint32_t permits);
/* Witness: enter key in mode: true when it entered while a conflicting set
 * was inside (above), and counted so; sets *seq. leave, in the mode it
 * entered: the sequence of the leaving event. */
/* The witness's sequence is this many bits wide. */
#define RESOURCE_SEQ_BITS 30
/* seq as a whole count, given the whole count last seen on its key (any
 * wrap between the two undone: they are less than half the range apart). */
static inline uint64_t resource_unwrap_seq(uint64_t last, uint64_t seq)
{
    const uint64_t range = 1ULL << RESOURCE_SEQ_BITS;
    uint64_t d = (seq - last) & (range - 1);
    return d < range / 2 ? last + d : last - (range - d);
}

bool resource_enter(struct resource *r, uint32_t key, enum lock_mode mode, uint64_t *seq);
uint64_t resource_leave(struct resource *r, uint32_t key, enum lock_mode mode);
/* Entries that found their key held in a conflicting mode, over the run. */
uint64_t resource_concurrent_entries(const struct resource *r);

/* Read / write key's value with the holder's fencing token (ignored
 * without fencing or versions). RES_FENCED: rejected, nothing read or
 * changed. */
enum resource_rc resource_read(struct resource *r, uint32_t key, uint64_t token, int64_t *value);
enum resource_rc resource_write(struct resource *r, uint32_t key, uint64_t token, int64_t value);

int64_t resource_value(const struct resource *r, uint32_t key);
uint64_t resource_rejected(const struct resource *r); /* accesses fencing refused */
size_t resource_keys(const struct resource *r);

#endif
