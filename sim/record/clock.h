/* clock.h - the two clocks a run is measured with. */
#ifndef LOCKLAB_CLOCK_H
#define LOCKLAB_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC as the kernel gives it: comparable with any other
 * process's readings on the machine (an observer, a capture). */
static inline uint64_t clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t clock_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
