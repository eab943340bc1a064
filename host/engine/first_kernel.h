/* Each device's first kernel, run at engine open under a time limit. */
#ifndef TDM_ENGINE_FIRST_KERNEL_H
#define TDM_ENGINE_FIRST_KERNEL_H

#include "runtime/runtime.h"

/* Runs tdm_first_kernel on d's compute queue and reads its word back,
 * waiting at most limit_ms. TDM_ERR_TIMEOUT when the device misses the limit:
 * then its queue may never drain, so the caller must abandon the device
 * (tdm_device.hung) instead of releasing it; what this call allocated is
 * left to the stuck commands. A wrong word is TDM_ERR_INTERNAL. `hang` runs
 * tdm_first_kernel_hang, which never ends (a test hook). Thread-safe per device. */
int tdm_first_kernel_run(tdm_device *d, unsigned limit_ms, int hang, tdm_err *err);

#endif
