/* invariant.h - one business invariant as a workload judged it after the
 * run: plain data that the verdict and the reports read without reaching
 * the workload or its resource. */
#ifndef LOCKLAB_INVARIANT_H
#define LOCKLAB_INVARIANT_H

#include <stdbool.h>

struct invariant {
    char name[48];
    bool holds;
    /* Availability, not safety (a scheduled run missed): reported, but it
     * never fails the run's verdict. */
    bool advisory;
    /* Only two holders inside at once can break it (a violation): then the
     * violations say why it broke, and no configuration can. */
    bool by_overlaps;
    char detail[600];
};

#define WORKLOAD_MAX_INVARIANTS 8

#endif
