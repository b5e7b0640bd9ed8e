/* recorder.h - the run's history leaving memory as the run goes.
 *
 * Every client, the nemesis and the stall meter append to their own
 * buffer (history.h). A recorder thread takes what they appended every few
 * milliseconds and hands it on to a sink in the history's order (time,
 * then client, then buffer, then append order: what history_merge gives),
 * so a run keeps in memory only what is newer than its slowest appender's
 * promise (history_buf_floor), not its whole history.
 *
 * An appender's floor is how far the order is known: an event earlier than
 * the least floor can no longer be preceded by one still to come, and goes
 * out. An event that comes later than that (an appender broke its promise:
 * a testbed bug) is not written out of order: it is counted as late, and a
 * history with late events is not complete.
 */
#ifndef LOCKLAB_RECORDER_H
#define LOCKLAB_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "sim/record/history.h"

struct recorder;

/* Each event in order; may change it (the seq unwrapped). Not 0: the sink
 * failed, and gets nothing more (the recorder goes on taking, so the
 * appenders' memory stays bounded). */
typedef int (*recorder_sink)(void *ctx, struct history_event *e);

/* Start taking from bufs[0..n) (kept by the caller until recorder_stop).
 * NULL when out of memory or no thread could start (errno set). */
struct recorder *recorder_start(struct history_buf *const *bufs, size_t n, recorder_sink sink,
                                void *ctx);

/* Every appender is done: the rest goes out, the thread is joined, r
 * freed. Accepts NULL. */
struct recorder_stats {
    uint64_t events;       /* handed to the sink (or taken after it failed) */
    uint64_t late;         /* came after their time had gone out: not written */
    uint64_t pending_peak; /* the most events held at once */
    int sink_error;        /* the sink's first failure, 0: none */
};
void recorder_stop(struct recorder *r, struct recorder_stats *stats);

#endif
