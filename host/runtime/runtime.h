/* Internal OpenCL runtime: device discovery, selection, program build and
 * cache, and the per-device state that kernel drivers (codecs, query steps)
 * use. Not part of the public API. */
#ifndef TDM_RUNTIME_H
#define TDM_RUNTIME_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>
#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001 /* cl_khr_icd: the loader found no platform */
#endif
#include <stddef.h>

#include "common/error.h"
#include "tandem.h"

/* ---- discovery (discover.c) */

/* One discovered device: its ids and its description. */
typedef struct tdm_found_device {
    cl_platform_id platform;
    cl_device_id device;
    tdm_device_info info;
} tdm_found_device;

/* Every device of every platform, in order. *out is malloc'd (caller frees);
 * *count may be 0. Errors go to `err`. */
int tdm_discover(tdm_found_device **out, size_t *count, tdm_err *err);

/* "CPU", "GPU", "ACCELERATOR" or "OTHER". */
const char *tdm_device_type_name(int type);

/* Whether the device's platform is PoCL (which caches binaries itself). */
int tdm_is_pocl(const tdm_device_info *info);

/* ---- selection (select.c) */

/* Marks in `chosen` (count entries, 0/1) the devices that `spec` selects
 * (syntax: see tdm_engine_options.devices). Returns TDM_OK if at least one
 * device matched; TDM_ERR_INVALID_ARG for a malformed spec and
 * TDM_ERR_NO_DEVICE when nothing matched, each with a message that lists the
 * devices there are. */
int tdm_select_devices(const char *spec, const tdm_found_device *devs, size_t count,
                       unsigned char *chosen, tdm_err *err);

/* ---- per-device state (engine.c) */

typedef struct tdm_device {
    cl_platform_id platform;
    cl_device_id id;
    cl_context ctx;
    cl_command_queue queue; /* in-order, profiling enabled */
    cl_program program;     /* kernels.cl built for this device */
    tdm_device_info info;
    size_t wg_size;         /* work-group size the kernels were built for (TDM_WG_SIZE) */
    int nv_shuffle;         /* the kernels were built with NVIDIA warp shuffles */
    int from_cache;         /* program came from the binary cache */
} tdm_device;

/* Internal accessor for kernel drivers: the engine's i-th device, or NULL. */
tdm_device *tdm_engine_device(tdm_engine *engine, int i);
/* The engine's error state, for internal code that reports through it. */
tdm_err *tdm_engine_err(tdm_engine *engine);

/* ---- programs (program.c, cache.c) */

/* The kernel source embedded at build time (kernels.cl with its includes). */
extern const char tdm_kernels_source[];
extern const size_t tdm_kernels_source_len;

/* Whether kernels may use warp shuffles through inline PTX on dev: an
 * NVIDIA GPU of compute capability 7.0 or more, unless the environment
 * says TANDEM_NV_SHUFFLE=0. */
int tdm_nv_shuffle_ok(cl_device_id dev, const tdm_device_info *info);

/* The options kernels.cl is compiled with on `info` (work-group size, local
 * memory, vendor and type defines, TDM_NV_SHFL where nv_shuffle is set and
 * the groups are whole warps) followed by `extra` (may be NULL).
 * Writes into buf (NUL-terminated). */
void tdm_build_options(const tdm_device_info *info, size_t wg_size, int nv_shuffle,
                       const char *extra, char *buf, size_t len);

/* The work-group size kernels are built for on this device. */
size_t tdm_choose_wg_size(const tdm_device_info *info);

/* Builds `source` for one device with `options`. On failure returns
 * TDM_ERR_BUILD with the compiler's log in `err`. */
int tdm_program_build(cl_context ctx, cl_device_id dev, const char *source, size_t len,
                      const char *options, cl_program *out, tdm_err *err);

typedef struct tdm_cache_cfg {
    int enabled;     /* 0: skip the cache entirely */
    char dir[1024];
} tdm_cache_cfg;

/* Resolves mode/dir from options and the environment for one device. */
void tdm_cache_config(int mode, const char *dir, const tdm_device_info *info,
                      tdm_cache_cfg *out);

/* Gets the program for `dev` from the cache if a valid entry exists, else
 * builds it from source and stores the binary. *from_cache tells which.
 * A corrupt or stale entry is rebuilt and overwritten, never trusted. */
int tdm_program_get(const tdm_cache_cfg *cache, cl_context ctx, cl_device_id dev,
                    const tdm_device_info *info, const char *source, size_t len,
                    const char *options, cl_program *out, int *from_cache, tdm_err *err);

/* ---- helpers for kernel drivers (clutil.c) */

/* The symbolic name of an OpenCL error code ("CL_OUT_OF_RESOURCES"). */
const char *tdm_cl_errname(cl_int code);

/* Maps an OpenCL error to a tandem status (allocation failures become
 * TDM_ERR_DEVICE_MEMORY, everything else TDM_ERR_OPENCL), sets `err` to
 * "<what>: <CL name>" and returns the status. */
int tdm_cl_fail(tdm_err *err, cl_int code, const char *what);

/* Creates a kernel by name from the device's program. */
int tdm_kernel_create(tdm_device *d, const char *name, cl_kernel *out, tdm_err *err);

/* Creates a buffer of `bytes` (at least 1) with `flags`; `host` may be NULL. */
int tdm_buffer_create(tdm_device *d, cl_mem_flags flags, size_t bytes, void *host,
                      cl_mem *out, tdm_err *err);

/* Seconds a completed, profiled event ran on the device (END - START). */
double tdm_event_seconds(cl_event ev);

/* Rounds n up to a multiple of m (m > 0). */
static inline size_t tdm_round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

#endif
