/* The serial lock of PoCL's basic driver (serial.h).
 *
 * The bug. OpenCL makes every API call but clSetKernelArg thread-safe
 * (OpenCL 3.0, appendix "Shared Objects and Thread Safety"). PoCL's basic
 * driver (PoCL 3.1, Debian 12) has no worker thread: a command runs on
 * whichever host thread enqueues, flushes or waits when it becomes ready,
 * and a completion runs the commands that waited for it on the same thread,
 * recursively. With two host threads enqueueing on one basic device
 * (`POCL_DEVICES=basic tandem run ... --threads 2`, with either a lane's two
 * slots or the direct policy) the process deadlocked 2 runs in 4, and the
 * others failed queries with a garbage status word read back ("decode jobs
 * refused ... status 3221227408"). The stuck thread was the only one inside
 * PoCL: clEnqueueNDRangeKernel -> the basic driver's submit -> the command
 * scheduler -> pocl_exec_command of a command made ready -> its completion's
 * broadcast -> the driver's notify -> the scheduler again -> pocl_exec_command
 * -> pocl_update_event_running, blocked on an event's mutex that the same
 * thread holds further up. PoCL's bug, not tandem's: one thread at a time
 * never met it (one lane slot: TANDEM_LANE_SLOTS=1; or --threads 1).
 *
 * The work-around. A search run on such a device holds this lock, so one
 * host thread at a time drives it; the pthread driver (worker threads run
 * the commands) is left alone. Costs nothing elsewhere. Detected by the
 * device name PoCL gives: "basic-<cpu>" (PoCL 1-3), "cpu-minimal-<cpu>"
 * (PoCL 4 and later). */
#include "serial.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int tdm_serial_needed(const tdm_device_info *info)
{
    return tdm_is_pocl(info) && info->type == TDM_DEVICE_CPU &&
           (strncmp(info->name, "basic", 5) == 0 || strncmp(info->name, "cpu-minimal", 11) == 0);
}

int tdm_serial_init(tdm_device *d, tdm_err *err)
{
    d->serial = NULL;
    if (!tdm_serial_needed(&d->info))
        return TDM_OK;
    /* on the heap: the engine moves devices in its array (runtime.h) */
    pthread_mutex_t *mu = malloc(sizeof *mu);
    if (!mu || pthread_mutex_init(mu, NULL) != 0) {
        free(mu);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for the serial lock of %s",
                           d->info.name);
    }
    d->serial = mu;
    return TDM_OK;
}

void tdm_serial_free(tdm_device *d)
{
    if (d->serial) {
        pthread_mutex_destroy(d->serial);
        free(d->serial);
        d->serial = NULL;
    }
}

void tdm_serial_enter(const tdm_device *d)
{
    if (d->serial)
        pthread_mutex_lock(d->serial);
}

void tdm_serial_leave(const tdm_device *d)
{
    if (d->serial)
        pthread_mutex_unlock(d->serial);
}
