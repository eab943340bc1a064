/* The probe state of a device (runtime.h has tdm_device_probe_get): made and
 * freed with the device (device.c), filled by the measurement (probe.c), so
 * that neither file calls the other back. */
#ifndef TDM_RUNTIME_PROBE_H
#define TDM_RUNTIME_PROBE_H

#include <pthread.h>

#include "runtime.h"

struct tdm_probe {
    pthread_mutex_t lock; /* held for the whole measurement: one at a time */
    int done;
    tdm_device_probe val;
};

int tdm_probe_new(struct tdm_probe **out, tdm_err *err);
/* Accepts NULL. */
void tdm_probe_free(struct tdm_probe *p);

#endif
