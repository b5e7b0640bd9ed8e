/* verdict.h - a run's result judged against its scenario (verdict.c). */
#ifndef LOCKLAB_VERDICT_H
#define LOCKLAB_VERDICT_H

#include "sim/check/result.h"

/* Compare the run with the scenario's expectations; sets expects, passed.
 * A run whose every violation a host stall made, longer than the lock's
 * slack (history.slack_ms), and whose other expectations hold, is made
 * INCOMPLETE with the stall in incomplete_reason: it tested the host. */
void result_judge(struct run_result *r);

#endif
