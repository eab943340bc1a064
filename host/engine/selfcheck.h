/* The block delta decoder behind tdm_engine_selfcheck: a C reference and a
 * device driver. Also the simplest example of a kernel driver. */
#ifndef TDM_ENGINE_SELFCHECK_H
#define TDM_ENGINE_SELFCHECK_H

#include <stdint.h>

#include "runtime/runtime.h"

/* out[i] = bases[b] + sum of gaps[b*block .. i] for i in block b. */
void tdm_delta_decode_ref(const uint32_t *gaps, const uint32_t *bases, uint32_t *out, size_t n,
                          size_t block);

/* The same on device d with kernel tdm_delta_decode (blocking). */
int tdm_delta_decode_device(tdm_device *d, const uint32_t *gaps, const uint32_t *bases,
                            uint32_t *out, size_t n, size_t block, tdm_err *err);

#endif
