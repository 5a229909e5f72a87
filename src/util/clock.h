/* clock.h — the monotonic clock, for durations and deadlines.
 *
 * CLOCK_MONOTONIC never jumps when the wall clock is set, so a difference of two readings
 * is a true elapsed time. The readings themselves mean nothing (time since some boot). */
#ifndef GL_CLOCK_H
#define GL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds: for timing one kernel or one run. */
static inline uint64_t gl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Milliseconds with a fraction: for budgets, timeouts and times shown to people. */
static inline double gl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#endif
