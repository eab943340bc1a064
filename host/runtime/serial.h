/* One host thread at a time on a device whose driver runs its commands on
 * the threads of the API calls themselves (PoCL's "basic" CPU driver, called
 * "cpu-minimal" from PoCL 4): serial.c says why.
 *
 * A search run on such a device (a batch's device work, a step of a ranked
 * AND) holds the device's serial lock from its first enqueue to its last
 * wait; on every other device the calls are no-ops. Thread-safe. */
#ifndef TDM_RUNTIME_SERIAL_H
#define TDM_RUNTIME_SERIAL_H

#include "runtime.h"

/* Whether a device's driver needs it (PoCL's basic / cpu-minimal driver). */
int tdm_serial_needed(const tdm_device_info *info);

/* Makes d's serial lock when it needs one (d->serial; NULL otherwise).
 * TDM_ERR_NOMEM when there is no memory for it. */
int tdm_serial_init(tdm_device *d, tdm_err *err);
void tdm_serial_free(tdm_device *d);

/* Takes / gives back d's serial lock (nothing when d has none). */
void tdm_serial_enter(const tdm_device *d);
void tdm_serial_leave(const tdm_device *d);

#endif
