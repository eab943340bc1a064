/* The probe state's lifetime (runtime.h has tdm_device_probe_get). */
#ifndef TDM_RUNTIME_PROBE_H
#define TDM_RUNTIME_PROBE_H

#include "runtime.h"

int tdm_probe_new(struct tdm_probe **out, tdm_err *err);
/* Accepts NULL. */
void tdm_probe_free(struct tdm_probe *p);

#endif
