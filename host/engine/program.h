/* Programs (program.c, cache.c): kernels.cl's build options and build for
 * one device, and the on-disk cache of built binaries. */
#ifndef TDM_ENGINE_PROGRAM_H
#define TDM_ENGINE_PROGRAM_H

#include <stddef.h>

#include "common/error.h"
#include "runtime/runtime.h"
#include "runtime/settings.h"

/* The kernel source (kernels.cl with the cl/ files it includes expanded),
 * embedded at build time into this area (CMakeLists.txt): what an engine
 * builds unless the caller gives its own (settings->kernel_source). */
extern const char tdm_kernels_source[];
extern const size_t tdm_kernels_source_len;

/* Whether kernels may use warp shuffles through inline PTX on dev: an
 * NVIDIA GPU of compute capability 7.0 or more, unless settings->nv_shuffle
 * is 0 (option nv_shuffle / TANDEM_NV_SHUFFLE=0). */
int tdm_nv_shuffle_ok(const tdm_settings *settings, cl_device_id dev, const tdm_device_info *info);

/* The options kernels.cl is compiled with on `info` (work-group size, local
 * memory, TDM_NV_SHFL where nv_shuffle is set and the groups are whole
 * warps) followed by `extra` (may be NULL).
 * Writes into buf (NUL-terminated). */
void tdm_build_options(const tdm_device_info *info, size_t wg_size, int nv_shuffle,
                       const char *extra, char *buf, size_t len);

/* The work-group size kernels are built for on this device (settings->wg_size
 * if set, lowered to the device's maximum). */
size_t tdm_choose_wg_size(const tdm_settings *settings, const tdm_device_info *info);

/* Builds `source` for one device with `options`. On failure returns
 * TDM_ERR_BUILD with the compiler's log in `err`. */
int tdm_program_build(cl_context ctx, cl_device_id dev, const char *source, size_t len,
                      const char *options, cl_program *out, tdm_err *err);

typedef struct tdm_cache_cfg {
    int enabled;     /* 0: skip the cache entirely */
    char dir[1024];
} tdm_cache_cfg;

/* The cache configuration for one device from the resolved settings. */
void tdm_cache_config(const tdm_settings *settings, const tdm_device_info *info,
                      tdm_cache_cfg *out);

/* Gets the program for `dev` from the cache if a valid entry exists, else
 * builds it from source and stores the binary. *from_cache tells which.
 * A corrupt or stale entry is rebuilt and overwritten, never trusted. */
int tdm_program_get(const tdm_cache_cfg *cache, cl_context ctx, cl_device_id dev,
                    const tdm_device_info *info, const char *source, size_t len,
                    const char *options, cl_program *out, int *from_cache, tdm_err *err);

#endif
