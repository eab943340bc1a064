/* Launch guard: a work-around for a PoCL bug in the reference counts of its
 * CPU drivers' work-group function cache (launch_guard.c says what and why).
 *
 * On a guarded device (tdm_device.launch_guard) every launch of kernel
 * `name` with work-group size `local` waits, before it is enqueued on queue
 * q, until no launch of the same name and local size is in flight on any
 * other queue of the process; launches on the same (in-order) queue do not
 * wait for each other. tdm_kernel_enqueue (device.c) is the one caller.
 * Thread-safe: one process-wide table under one lock. */
#ifndef TDM_RUNTIME_LAUNCH_GUARD_H
#define TDM_RUNTIME_LAUNCH_GUARD_H

#include <stddef.h>

#include "runtime.h"

/* Whether a device needs the guard: a CPU device of PoCL (every version:
 * see launch_guard.c), unless the settings turn it off. */
int tdm_launch_guard_needed(const tdm_device_info *info, const tdm_settings *s);

/* Waits until a launch of (name, local) may go on q and counts it in flight.
 * Returns the slot to pass to tdm_launch_guard_armed / _left. */
int tdm_launch_guard_enter(cl_command_queue q, const char *name, size_t local);
/* The launch was enqueued with event e: the slot is left when e completes
 * (a callback; if none can be set, this waits for e). e stays the caller's. */
void tdm_launch_guard_armed(int slot, cl_event e);
/* The launch was not enqueued: leaves the slot now. */
void tdm_launch_guard_left(int slot);

/* Launches that had to wait for another queue's, since the process started
 * (for tests). */
size_t tdm_launch_guard_waits(void);

#endif
