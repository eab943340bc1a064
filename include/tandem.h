/*
 * tandem — a portable OpenCL engine for search-engine query processing.
 *
 * This is the one public header. Conventions, as in zstd / sqlite / libuv:
 *
 *  - Handles are opaque (tdm_engine, ...). Every create/open has a matching
 *    free/close that accepts NULL.
 *  - Functions that can fail return an int status: 0 (TDM_OK) on success, a
 *    negative TDM_ERR_* code on failure. tdm_strerror() names the code; the
 *    handle's last-error message (tdm_engine_errmsg) carries the detail, such
 *    as an OpenCL compiler log or a file offset.
 *  - Memory: every function says who owns what it returns. Strings returned as
 *    `const char *` are owned by the library and stay valid as stated.
 *  - Threads: every handle states what may be done with it concurrently.
 */
#ifndef TANDEM_H
#define TANDEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(TANDEM_SHARED_BUILD)
#define TDM_API __declspec(dllexport)
#elif defined(__GNUC__) && __GNUC__ >= 4
#define TDM_API __attribute__((visibility("default")))
#else
#define TDM_API
#endif

/* ---------------------------------------------------------------- version */

#define TDM_VERSION_MAJOR 0
#define TDM_VERSION_MINOR 1
#define TDM_VERSION_PATCH 0
#define TDM_VERSION_NUMBER \
    (TDM_VERSION_MAJOR * 10000 + TDM_VERSION_MINOR * 100 + TDM_VERSION_PATCH)
#define TDM_VERSION_STRING "0.1.0"

/* The library's version as "MAJOR.MINOR.PATCH" (static string; thread-safe). */
TDM_API const char *tdm_version(void);
/* The library's TDM_VERSION_NUMBER, to compare with the header's. Thread-safe. */
TDM_API unsigned tdm_version_number(void);

/* ---------------------------------------------------------------- status */

enum {
    TDM_OK = 0,
    TDM_ERR_INVALID_ARG = -1,   /* a NULL handle, a bad option value, ... */
    TDM_ERR_NOMEM = -2,         /* host memory exhausted */
    TDM_ERR_IO = -3,            /* a file could not be read or written */
    TDM_ERR_FORMAT = -4,        /* malformed input: bad magic, truncated, ... */
    TDM_ERR_CORRUPT = -5,       /* checksum mismatch or inconsistent data */
    TDM_ERR_VERSION = -6,       /* a format version this library cannot read */
    TDM_ERR_NO_DEVICE = -7,     /* no OpenCL device (or none matched the selection) */
    TDM_ERR_OPENCL = -8,        /* an OpenCL call failed */
    TDM_ERR_BUILD = -9,         /* kernels failed to compile; message holds the log */
    TDM_ERR_DEVICE_MEMORY = -10,/* the device ran out of memory */
    TDM_ERR_NOT_FOUND = -11,    /* a term, file or entry does not exist */
    TDM_ERR_UNSUPPORTED = -12,  /* a feature the device or build lacks */
    TDM_ERR_LIMIT = -13,        /* input exceeds a documented limit */
    TDM_ERR_INTERNAL = -14      /* a bug in tandem: please report it */
};

/* A short static description of a status code ("unknown status" for codes
 * this version does not know). Thread-safe. */
TDM_API const char *tdm_strerror(int status);

/* ---------------------------------------------------------------- devices */

enum tdm_device_type {
    TDM_DEVICE_CPU = 1,
    TDM_DEVICE_GPU = 2,
    TDM_DEVICE_ACCELERATOR = 4,
    TDM_DEVICE_OTHER = 8
};

/* What discovery reports about one OpenCL device. Plain data: copy freely. */
typedef struct tdm_device_info {
    int index;                 /* position in the discovery order (platforms, then devices) */
    int platform_index;        /* which platform it belongs to */
    int type;                  /* one of enum tdm_device_type */
    char platform[128];        /* platform name, e.g. "NVIDIA CUDA" */
    char vendor[128];          /* device vendor */
    char name[128];            /* device name */
    char driver_version[64];
    char device_version[64];   /* "OpenCL 3.0 CUDA", ... */
    char opencl_c_version[64]; /* "OpenCL C 1.2", ... */
    unsigned compute_units;
    unsigned max_clock_mhz;
    uint64_t global_mem_bytes;
    uint64_t max_alloc_bytes;
    uint64_t local_mem_bytes;
    size_t max_work_group_size;
    size_t preferred_wg_multiple; /* from a probe kernel; 0 if unknown */
    char extensions[2048];     /* space separated, truncated if longer */
} tdm_device_info;

/* Lists every OpenCL device that the ICD loader exposes, in discovery order.
 * On success *out is a malloc'd array of *count entries that the caller frees
 * with tdm_free(); *count may be 0 (no platform) with TDM_OK.
 * Thread-safe. */
TDM_API int tdm_devices_discover(tdm_device_info **out, size_t *count);

/* Frees memory that the library handed to the caller. Accepts NULL. */
TDM_API void tdm_free(void *p);

/* ---------------------------------------------------------------- engine */

/* An engine holds the selected OpenCL devices with a context, an in-order
 * queue and the compiled kernels for each.
 * Threads: one engine may be used by one thread at a time; distinct engines
 * are independent. */
typedef struct tdm_engine tdm_engine;

enum tdm_cache_mode {
    TDM_CACHE_DEFAULT = 0, /* TANDEM_CACHE from the environment, else on */
    TDM_CACHE_OFF = 1,
    TDM_CACHE_ON = 2,      /* on, except for PoCL, which caches by itself */
    TDM_CACHE_ALWAYS = 3   /* on for every platform, PoCL included */
};

/* Options for tdm_engine_open. Zero-initialise, then set what you need;
 * every zero/NULL field means "the default". */
typedef struct tdm_engine_options {
    /* Which devices to use; NULL means TANDEM_DEVICES from the environment,
     * and if that is unset, "all". Syntax: a comma-separated list of items,
     * each "all", "gpu", "cpu", "accelerator", a device index as listed by
     * `tandem devices`, or a case-insensitive substring of the platform or
     * device name ("nvidia", "pocl", "h200"). */
    const char *devices;
    /* Program-binary cache directory; NULL means TANDEM_CACHE_DIR, else
     * $XDG_CACHE_HOME/tandem, else $HOME/.cache/tandem. */
    const char *cache_dir;
    int cache_mode;              /* enum tdm_cache_mode */
    /* Extra options appended to every kernel build (e.g. "-cl-fast-relaxed-math");
     * NULL for none. */
    const char *build_options;
    /* Replace the embedded kernel source (for tests and experiments); NULL
     * means the kernels.cl compiled into the library. */
    const char *kernel_source;
} tdm_engine_options;

/* Opens an engine on the selected devices and compiles the kernels for each.
 * `opts` may be NULL. On success *out is a new engine that the caller closes
 * with tdm_engine_close. On failure *out is NULL, and tdm_engine_errmsg(NULL)
 * gives the reason on the calling thread (e.g. the compiler's log).
 * Thread-safe (each call makes its own engine). */
TDM_API int tdm_engine_open(const tdm_engine_options *opts, tdm_engine **out);

/* Releases the engine and all its OpenCL objects. Accepts NULL. */
TDM_API void tdm_engine_close(tdm_engine *engine);

/* The last error message of `engine`, "" if none. With NULL: the message of
 * the last failed tdm_engine_open on the calling thread. The string is owned
 * by the library and valid until the next call on the same handle (thread). */
TDM_API const char *tdm_engine_errmsg(const tdm_engine *engine);

/* Number of devices the engine uses (>= 1 for an open engine). */
TDM_API int tdm_engine_device_count(const tdm_engine *engine);

/* Copies the description of the engine's i-th device into *info. */
TDM_API int tdm_engine_device_info(const tdm_engine *engine, int i, tdm_device_info *info);

/* Whether the i-th device's kernels came from the on-disk binary cache
 * (1), were compiled from source (0), or i is out of range (negative status). */
TDM_API int tdm_engine_device_cached(const tdm_engine *engine, int i);

/* Runs a small kernel on every device of the engine and compares its output
 * with the plain-C reference. Returns TDM_OK when every device agrees; on a
 * mismatch TDM_ERR_INTERNAL with the device named in the engine's message.
 * If `report` is not NULL, one line per device is written to it, as
 * "<index> <name>: ok (<n> values)" ... (NUL-terminated, truncated to
 * report_len). */
TDM_API int tdm_engine_selfcheck(tdm_engine *engine, char *report, size_t report_len);

#ifdef __cplusplus
}
#endif
#endif /* TANDEM_H */
