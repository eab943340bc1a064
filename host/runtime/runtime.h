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
#include "settings.h"
#include "tandem.h"

/* ---- discovery (discover.c) */

/* One discovered device: its ids and its description (info.extensions
 * points into the block tdm_discover returned). */
typedef struct tdm_found_device {
    cl_platform_id platform;
    cl_device_id device;
    tdm_device_info info;
} tdm_found_device;

/* Every device of every platform, in order. *out is one malloc'd block,
 * extension strings included (caller frees it with one free());
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
 * TDM_ERR_NO_DEVICE when nothing matched, each with a message that begins
 * with `what` (where the spec came from: "TANDEM_DEVICES", say) and lists
 * the devices there are. */
int tdm_select_devices(const char *spec, const char *what, const tdm_found_device *devs,
                       size_t count, unsigned char *chosen, tdm_err *err);

/* ---- per-device state (engine.c) */

struct tdm_kcache;
struct tdm_probe;

/* One opened device. Every field is set at engine open and read-only after,
 * so any thread may read them; the kernel pool and the probes carry their
 * own locks, and OpenCL queues accept commands from several threads. The
 * engine opens its devices concurrently, each on a thread of its own
 * (engine.c), so what opening one touches (tdm_device_start, the program
 * build and cache, tdm_launch_guard_needed) shares no mutable state with
 * another device's open; a tdm_device holds no pointer into itself (the
 * engine moves one down over a failed device's slot). */
typedef struct tdm_device {
    cl_platform_id platform;
    cl_device_id id;
    cl_context ctx;
    cl_command_queue queue; /* compute: in-order, profiling enabled */
    cl_command_queue xfer;  /* transfers: in-order, profiling, runs beside `queue` */
    cl_command_queue lat;   /* in-order, no profiling: commands nobody times (a single
                               query's), where an event costs ~7 us less on the H200 */
    cl_program program;     /* kernels.cl built for this device */
    tdm_device_info info;   /* info.extensions: the device's own copy */
    const tdm_settings *settings; /* the engine's, resolved at open */
    size_t wg_size;         /* work-group size the kernels were built for (TDM_WG_SIZE) */
    int nv_shuffle;         /* the kernels were built with NVIDIA warp shuffles */
    int from_cache;         /* program came from the binary cache */
    int launch_guard;       /* launches go through the PoCL work-around (launch_guard.c) */
    int hung;               /* missed its first kernel's limit: abandoned, never released */
    size_t merge_local;     /* drive/search_dev.c's tdm_search_merge_local, found once
                               (0 until then; read and written atomically) */
    int no_zcur;            /* the kernels that decode every codec (codec_serial.cl: the
                               compressed cursors', the serial batched decode) are never
                               run here: rusticl inlines every call into them (NIR) and
                               its llvmpipe then took 24 GB compiling the range kernel,
                               minutes and GBs tdm_jobs_serial (docs/HACKING.md) */
    void *serial;           /* a pthread_mutex_t: one host thread at a time drives the
                               device (serial.c: PoCL's basic driver), else NULL */
    struct tdm_kcache *kcache; /* kernels of `program`, reused (kcache.c) */
    struct tdm_probe *probe;   /* measured characteristics (probe.c) */
} tdm_device;

/* ---- per-device machinery (device.c, kcache.c, probe.c)
 *
 * Commands follow CLBlast: a function that enqueues takes the wait list
 * (nwait events that must complete first; wait may be NULL when nwait is 0)
 * and returns in *ev (if not NULL) the event of its last command, which the
 * caller releases. Kernels run on tdm_device.queue, copies between host and
 * device on tdm_device.xfer; the two are ordered only through events. */

/* Creates the transfer and latency queues, the kernel pool and the probe
 * state of a device whose context, compute queue and program exist. */
int tdm_device_start(tdm_device *d, tdm_err *err);
/* Releases what tdm_device_start made (waits for its three queues first).
 * Accepts a device that was never started. */
void tdm_device_stop(tdm_device *d);

/* Puts `prog`, built for work-groups of wg_size, in place of the device's
 * program (tests and benchmarks that try other builds): waits for its three
 * queues, drops the pooled kernels (none may be lent out) and hands the old
 * program and size back in *old and *old_wg (the caller releases or restores
 * them). No other thread may use the device meanwhile. */
void tdm_device_swap_program(tdm_device *d, cl_program prog, size_t wg_size, cl_program *old,
                             size_t *old_wg);

/* An in-order, profiling queue on d's context and device. */
int tdm_queue_create(tdm_device *d, cl_command_queue *out, tdm_err *err);

/* An in-order queue without profiling, as tdm_device.lat is made. */
int tdm_queue_create_plain(tdm_device *d, cl_command_queue *out, tdm_err *err);

/* Kernel pool (kcache.c): kernels are created once per device and name, and
 * lent out. A kernel's arguments are not safe to set from two threads, so a
 * lent kernel belongs to the borrower alone until it is returned; the pool
 * (one lock per device) makes a new one only when every kernel of that name
 * is lent out, so it holds at most as many of a name as threads used it at
 * once. Returning a kernel right after clEnqueueNDRangeKernel is safe: the
 * launch keeps its arguments. */
int tdm_kernel_borrow(tdm_device *d, const char *name, cl_kernel *out, tdm_err *err);
void tdm_kernel_return(tdm_device *d, cl_kernel k);
/* The largest work-group kernel k (from d's pool) may be launched with on d
 * (CL_KERNEL_WORK_GROUP_SIZE, read when the pool made it; 0 unknown). */
size_t tdm_kernel_max_wg(tdm_device *d, cl_kernel k);
/* The same by name (0 when the kernel cannot be made). Thread-safe. */
size_t tdm_kernel_wg_limit(tdm_device *d, const char *name);
/* Kernels the pool holds (lent or not) for `name`, for tests. */
size_t tdm_kcache_count(tdm_device *d, const char *name);

/* Flushes the queue of every event in the wait list that is not q's (q may
 * be NULL: every event's queue). The specification asks for it before a
 * command of one queue waits on an event of another (OpenCL 1.2, 5.13 "Flush
 * and Finish"), and before a callback or a poll can see an event complete;
 * NVIDIA and PoCL forgive its absence, rusticl waits forever. Every enqueue
 * with a wait list goes through here. Thread-safe. */
void tdm_wait_flush(cl_command_queue q, cl_uint nwait, const cl_event *wait);
/* Flushes e's queue (before a callback is set on e, or e is polled). */
void tdm_event_flush(cl_event e);
/* Reads `bytes` of m from offset 0 into host on in-order queue q and
 * returns when they are there: in the driver's blocking read (asleep 0), or
 * (asleep 1) on a condition variable until the read's completion
 * callback, where a blocking call would spin a core in the driver (NVIDIA)
 * for the milliseconds a batch takes. Falls back to the blocking wait
 * where the callback cannot be set. The read's status: CL_SUCCESS, or the
 * error of the enqueue or of the command. Thread-safe. */
cl_int tdm_read_wait(cl_command_queue q, cl_mem m, size_t bytes, void *host, int asleep);

/* clEnqueueNDRangeKernel of borrowed kernel k (named `name`) on q, 1-D,
 * through the launch guard on a device that needs it (launch_guard.c: a PoCL
 * bug makes two queues' launches of one kernel abort). Every kernel launch
 * goes through here. Returns the OpenCL status. Thread-safe. */
cl_int tdm_kernel_enqueue(tdm_device *d, cl_command_queue q, cl_kernel k, const char *name,
                          size_t global, size_t local, cl_uint nwait, const cl_event *wait,
                          cl_event *ev);

/* One kernel argument: its size and a pointer to its value (clSetKernelArg). */
typedef struct tdm_karg {
    size_t size;
    const void *p;
} tdm_karg;
#define TDM_KARG_MEM(m) ((tdm_karg){sizeof(cl_mem), (m)})
#define TDM_KARG_U32(x) ((tdm_karg){sizeof(cl_uint), (x)})

/* Borrows kernel `name`, sets its nargs arguments, enqueues it on d->queue
 * over `global` work-items in groups of `local` (1-D) after the wait list,
 * and returns the kernel. A failure names the kernel, the argument and the
 * device. Thread-safe. */
int tdm_kernel_launch(tdm_device *d, const char *name, const tdm_karg *args, cl_uint nargs,
                      size_t global, size_t local, cl_uint nwait, const cl_event *wait,
                      cl_event *ev, tdm_err *err);
/* The same on queue q (NULL: d->queue), e.g. d->lat. */
int tdm_kernel_launch_on(tdm_device *d, cl_command_queue q, const char *name,
                         const tdm_karg *args, cl_uint nargs, size_t global, size_t local,
                         cl_uint nwait, const cl_event *wait, cl_event *ev, tdm_err *err);

/* Copies host memory into a buffer on d->xfer after the wait list. With ev
 * NULL it blocks until the copy is done (waiting for this copy only, not
 * the device); else it returns at once and `src` must stay valid and
 * unchanged until *ev completes. */
int tdm_upload(tdm_device *d, cl_mem dst, size_t offset, size_t bytes, const void *src,
               cl_uint nwait, const cl_event *wait, cl_event *ev, tdm_err *err);
/* Copies a buffer to host memory on d->xfer after the wait list (give the
 * events of the kernels that wrote it). Blocking when ev is NULL, else
 * `dst` is filled when *ev completes. */
int tdm_download(tdm_device *d, cl_mem src, size_t offset, size_t bytes, void *dst,
                 cl_uint nwait, const cl_event *wait, cl_event *ev, tdm_err *err);

/* What a device can do, measured on it (probe.c). */
typedef struct tdm_device_probe {
    double copy_gbs;  /* clEnqueueCopyBuffer of 2 x 256 MiB (less where the
                         device allows less), bytes read + written per second
                         in GB/s, median of 10 after warm-up: the roofline of
                         a streaming kernel */
    double launch_s;  /* host round trip of an empty kernel (enqueue to
                         completion seen), median of 50 after warm-up */
    double launch_dev_s; /* the same kernel's device time (profiling) */
} tdm_device_probe;

/* The device's probe: measured on the first call (which takes a second or
 * so and about 512 MiB of device memory for a moment), then cached with the
 * device. Thread-safe: concurrent first calls measure once. */
int tdm_device_probe_get(tdm_device *d, tdm_device_probe *out, tdm_err *err);

/* ---- helpers for kernel drivers (clutil.c) */

/* The symbolic name of an OpenCL error code ("CL_OUT_OF_RESOURCES"). */
const char *tdm_cl_errname(cl_int code);

/* Maps an OpenCL error to a tandem status (allocation failures become
 * TDM_ERR_DEVICE_MEMORY, everything else TDM_ERR_OPENCL), sets `err` to
 * "<what>: <CL name>" and returns the status. */
int tdm_cl_fail(tdm_err *err, cl_int code, const char *what);

/* Creates a buffer of `bytes` (at least 1) with `flags`; `host` may be NULL. */
int tdm_buffer_create(tdm_device *d, cl_mem_flags flags, size_t bytes, void *host,
                      cl_mem *out, tdm_err *err);

/* Seconds a completed, profiled event ran on the device (END - START). */
double tdm_event_seconds(cl_event ev);

/* Rounds n up to a multiple of m (m > 0). */
static inline size_t tdm_round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

#endif
