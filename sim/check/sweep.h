/* sweep.h - the checker's per-key sweeps (checker.h), fed a section at a
 * time as a run's stream brings them: private to sim/check.
 *
 * A section is opened when its holder enters and closed when it leaves.
 * Each key is swept twice, as checker.c's whole-history sweep did: on the
 * witness sequence (sections with one) and on time (all, pairs with a side
 * lacking a sequence). An entry is judged once it is safe to: it and every
 * section that sorts before it on the key have closed, nothing can still
 * come that sorts before it (time: the stream has passed its entry; the
 * sequence: every lower step of the key's witness has been seen), and, on
 * time, it was judged on the sequence first. A judged section stays only
 * while it is still inside for a later entrant: the state is the keys,
 * the sections still open, and those that entered while one was open.
 */
#ifndef LOCKLAB_SWEEP_H
#define LOCKLAB_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/check/checker.h"

/* A sequence number not given (the value of HISTORY_NO_SEQ). */
#define SWEEP_NO_SEQ UINT64_MAX
/* No slot: the end of a caller's chain. */
#define SWEEP_NONE UINT32_MAX

struct sweep;

/* Overlaps are counted into out (zeroed first); at most max_listed are
 * listed, in the order they are judged. NULL: out of memory. */
struct sweep *sweep_new(size_t max_listed, bool writes_only, struct check_result *out);
/* Section s enters (its key, owner, client, mode, permits, token, from_ns,
 * and seq_from when may_seq: it takes part in the sequence sweep if it
 * closes with a sequence too). id names it in the listing. Its slot in
 * *slot, valid until it is judged. 0, or -1 out of memory. */
int sweep_open(struct sweep *w, uint64_t id, const struct section *s, bool may_seq, uint32_t *slot);
/* The section in slot leaves: its exit and what it did. */
void sweep_close(struct sweep *w, uint32_t slot, uint64_t to_ns, bool has_seq, uint64_t seq_to,
                 uint8_t effect);
const struct section *sweep_section(const struct sweep *w, uint32_t slot);
/* A link the caller may keep per open section (its holder's chain). */
uint32_t *sweep_link(struct sweep *w, uint32_t slot);
/* The key's witness took step seq (an entry or an exit): judging on the
 * sequence waits until every lower step is seen. 0, or -1 out of memory. */
int sweep_seq(struct sweep *w, uint32_t key, uint64_t seq);
/* Nothing more will enter before t (at t itself, still may). Judges what
 * waited only for time. 0, or -1 out of memory. */
int sweep_time(struct sweep *w, uint64_t t);
/* Every section key will have carries a sequence (a whole history
 * knows it; a stream cannot): its time sweep, which would find nothing,
 * is skipped. Before the key's first section. 0, or -1 out of memory. */
int sweep_seq_only(struct sweep *w, uint32_t key);
/* Judge what is ready on key. 0, or -1 out of memory. */
int sweep_poll(struct sweep *w, uint32_t key);
/* Nothing more comes for key: judge all of it and forget it. Every section
 * of the key must be closed. 0, or -1 out of memory. */
int sweep_flush_key(struct sweep *w, uint32_t key);
/* The end of the stream: every section must be closed. Judges the rest,
 * names each listed overlap's faults (checker_run's rule), completes out
 * and frees w. rc < 0 (a caller's earlier failure) frees all the same
 * and empties out. 0, or -1 out of memory. */
int sweep_finish(struct sweep *w, const struct fault_span *faults, size_t nf, uint64_t lookback_ns,
                 int rc);
/* Sections held now, and the most ever held at once (the state's bound). */
size_t sweep_held(const struct sweep *w);
size_t sweep_held_peak(const struct sweep *w);

#endif
