/* hiccup.h - the host's stalls, as the testbed's own process lives them.
 *
 * A lease lock is safe only while its holder can renew (or finish) within
 * the lease. A host that stops the testbed longer than that (a hypervisor
 * stealing the CPU, a loaded machine, a swap storm) breaks the lock's
 * timing assumption the way a GC pause does, though no fault was
 * injected. The meter makes such stalls visible, as jHiccup does for a
 * JVM: a thread of its own sleeps 1 ms at a time and records, in the
 * history, every wake-up that came at least HICCUP_FLOOR_MS late. That
 * thread alone can be late on a busy machine: history_stalls keeps of
 * each stall only the stretch in which no other thread logged anything.
 */
#ifndef LOCKLAB_HICCUP_H
#define LOCKLAB_HICCUP_H

#include <stdint.h>

#include "sim/record/history.h"

#define HICCUP_PERIOD_MS 1
#define HICCUP_FLOOR_MS  10 /* shorter delays are the scheduler's ordinary noise */

struct hiccup;

/* Start metering into buf (owned by the caller, read after hiccup_stop).
 * NULL when the thread cannot start. */
struct hiccup *hiccup_start(struct history_buf *buf);
/* Stop and join the meter; accepts NULL. */
void hiccup_stop(struct hiccup *h);

#endif
