/* The scheduler's clock (sched_priv.h): seconds on the monotonic clock.
 * A file of its own so that every part of the scheduler (lanes, placement,
 * migration, calibration) reads it without calling into another. */
#include <time.h>

#include "sched_priv.h"

double tdm_sched_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct timespec tdm_sched_deadline_in(double seconds)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long ns = (long long)ts.tv_nsec + (long long)(seconds * 1e9);
    ts.tv_sec += (time_t)(ns / 1000000000LL);
    ts.tv_nsec = (long)(ns % 1000000000LL);
    return ts;
}
