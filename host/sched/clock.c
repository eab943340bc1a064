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
