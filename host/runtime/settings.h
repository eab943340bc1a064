/* Engine settings in one place.
 *
 * tdm_engine_open resolves every setting once, from the caller's options,
 * then the TANDEM_* environment variable, then the built-in default, into
 * one tdm_settings that the engine owns and every device points to
 * (tdm_device.settings). No other code reads a TANDEM_* variable: code that
 * needs a setting reads it from here.
 *
 *   setting               option (tdm_engine_options)   environment
 *   devices               devices                       TANDEM_DEVICES
 *   cache_mode            cache_mode                    TANDEM_CACHE
 *   cache_dir             cache_dir                     TANDEM_CACHE_DIR
 *                                                       (then $XDG_CACHE_HOME/tandem,
 *                                                        $HOME/.cache/tandem)
 *   build_options         build_options                 (none)
 *   kernel_source         kernel_source                 (none)
 *   wg_size               wg_size                       TANDEM_WG_SIZE
 *   nv_shuffle            nv_shuffle                    TANDEM_NV_SHUFFLE
 *   codec_groups_per_cu   codec_groups_per_cu           TANDEM_CODEC_GROUPS_PER_CU
 *   policy, policy_name   policy                        TANDEM_POLICY (a name, checked here:
 *                                                       host/sched resolves it at
 *                                                       tdm_search_open)
 *   batch_window_us       batch_window_us               TANDEM_BATCH_WINDOW_US
 *   load_threshold        load_threshold                TANDEM_LOAD_THRESHOLD
 *   deadline_ms           deadline_ms                   TANDEM_DEADLINE_MS
 *   calibrate             calibrate                     TANDEM_CALIBRATE
 *   fault_inject          fault_inject                  TANDEM_FAULT_INJECT (test switch;
 *                                                       host/sched parses it)
 *   lane_kinds            lane_kinds                    TANDEM_LANE_KINDS (test switch)
 *   lane_slots            lane_slots                    TANDEM_LANE_SLOTS
 *   migrate               migrate                       TANDEM_MIGRATE (auto, force, off)
 *   device_memory         device_memory                 TANDEM_DEVICE_MEMORY
 *   partition             partition                     TANDEM_PARTITION (auto, on, off,
 *                                                       split)
 *   launch_guard          (none)                        TANDEM_LAUNCH_GUARD (auto, off:
 *                                                       the PoCL work-around, launch_guard.c)
 *   run_queues            (none)                        TANDEM_RUN_QUEUES (shared, per-run:
 *                                                       a single run's queue, search_dev.c)
 *   first_kernel_ms       first_kernel_ms               TANDEM_FIRST_KERNEL_MS
 *   test_hang             (none)                        TANDEM_TEST_HANG (test hook: a
 *                                                       device index whose first kernel hangs)
 *   run_timeout_ms        run_timeout_ms                TANDEM_RUN_TIMEOUT_MS (the search-time
 *                                                       watchdog, host/sched/watchdog.c)
 *   tuning                (none)                        the tuning and A/B switches
 *                                                       (tdm_tuning below)
 *
 * Every variable, with what it accepts, is in settings.c's table: what
 * `tandem --help-env` prints and docs/SETTINGS.md lists (tests/
 * test_settings_doc.sh keeps the three in step).
 *
 * An invalid value (option or environment) is TDM_ERR_INVALID_ARG with a
 * message naming the option or the variable.
 * Threads: a resolved tdm_settings is immutable; read it from any thread. */
#ifndef TDM_RUNTIME_SETTINGS_H
#define TDM_RUNTIME_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "tandem.h"

/* Tuning and A/B switches, from the environment only (docs/SETTINGS.md).
 * Each is 0 when its variable is unset: the built-in rule of the code that
 * reads it (the defaults and their measurements stay beside that code). */
enum { TDM_TUNE_RULE = 0, TDM_TUNE_OFF = 1, TDM_TUNE_ON = 2 };
enum { TDM_TUNE_ZR_RANGE = 1, TDM_TUNE_ZR_INTERLEAVED = 2 };
enum { TDM_TUNE_DECODE_GROUP = 1, TDM_TUNE_DECODE_SERIAL = 2 };
enum { TDM_TUNE_AND_RANGE = 1, TDM_TUNE_AND_WU = 2 };
enum { TDM_TUNE_BOUNDS_DEVICE = 1, TDM_TUNE_BOUNDS_HOST = 2 };
/* A device batch's uploads (TANDEM_BATCH_UPLOAD; drive/search_batch_dev.c). */
enum { TDM_TUNE_UPLOAD_PAGEABLE = 1, TDM_TUNE_UPLOAD_PINNED = 2 };
#define TDM_SETTINGS_STAGING_WORKERS_MAX 16u
#define TDM_SETTINGS_STAGING_CHUNK_MB_MAX 256u

typedef struct tdm_tuning {
    int search_variant;      /* TANDEM_SEARCH_VARIANT: 0, or TDM_VARIANT_ITEM, _GROUP or
                                _COMPRESSED for every search that asks for auto */
    int zr_layout;           /* TANDEM_ZR_LAYOUT: 0 or TDM_TUNE_ZR_* */
    int seed;                /* TANDEM_SEED: TDM_TUNE_RULE, _OFF or _ON */
    int zr_seed;             /* TANDEM_ZR_SEED: TDM_TUNE_RULE, _OFF or _ON */
    uint32_t gpu_min_rlen;        /* TANDEM_GPU_MIN_RLEN: 0, else 1 .. 2^20 */
    uint32_t gpu_zgroups_per_cu;  /* TANDEM_GPU_ZGROUPS_PER_CU: 0, else 1 .. 64 */
    uint32_t cpu_ranges_per_cu;   /* TANDEM_CPU_RANGES_PER_CU: 0, else 1 .. 1024 */
    uint32_t batch_ranges_per_cu; /* TANDEM_BATCH_RANGES_PER_CU: 0, else 1 .. 65536 */
    uint32_t batch_merge_keys;    /* TANDEM_BATCH_MERGE_KEYS: 0, else 1 .. 2^24 */
    uint32_t batch_min_part;      /* TANDEM_BATCH_MIN_PART: 0, else 1 .. 65536 */
    uint32_t batch_max_k;         /* TANDEM_BATCH_MAX_K: 0, else 1 .. 65536 */
    uint32_t batch_merge_rlen;    /* TANDEM_BATCH_MERGE_RLEN: 0, else 1 .. 2^30 */
    uint32_t merge_direct_keys;   /* TANDEM_MERGE_DIRECT_KEYS: 0 (the row's), else 1 .. 2^24 */
    int merge_filter;             /* TANDEM_MERGE_FILTER: TDM_TUNE_RULE, _OFF or _ON */
    int merge_small;              /* TANDEM_MERGE_SMALL: TDM_TUNE_RULE, _OFF or _ON */
    int range_select;             /* TANDEM_RANGE_SELECT: TDM_TUNE_RULE, _OFF or _ON */
    int and_select;               /* TANDEM_AND_SELECT: TDM_TUNE_RULE, _OFF or _ON */
    uint64_t split_min_postings;  /* TANDEM_SPLIT_MIN_POSTINGS: 0, else 1 .. 2^62 */
    int host_max_set;             /* 1: TANDEM_HOST_MAX_POSTINGS gave host_max_postings */
    uint64_t host_max_postings;   /* the host path's postings at most, 0 .. 2^62 (0: never) */
    int decode_variant;      /* TANDEM_DECODE_VARIANT: 0 or TDM_TUNE_DECODE_* */
    int batch_and;           /* TANDEM_BATCH_AND: 0 or TDM_TUNE_AND_* */
    int batch_bounds;        /* TANDEM_BATCH_BOUNDS: 0 or TDM_TUNE_BOUNDS_* */
    int query_bounds;        /* TANDEM_QUERY_BOUNDS: 0 or TDM_TUNE_BOUNDS_* */
    int batch_queue;         /* TANDEM_BATCH_QUEUE: TDM_TUNE_RULE, _OFF or _ON */
    int batch_wait;          /* TANDEM_BATCH_WAIT: TDM_TUNE_RULE, _OFF (spin) or _ON
                                (sleep) */
    int batch_upload;        /* TANDEM_BATCH_UPLOAD: 0 or TDM_TUNE_UPLOAD_* */
    int batch_host;          /* TANDEM_BATCH_HOST: TDM_TUNE_RULE, _OFF or _ON */
    uint32_t batch_alone_threads;  /* TANDEM_BATCH_ALONE_THREADS: 0, else 1 .. 64 */
    uint32_t batch_or_alone_terms; /* TANDEM_BATCH_OR_ALONE_TERMS: 0, else 1 .. 65536
                                      (above TDM_SEARCH_MAX_TERMS: never) */
    int bounds_cache_set;    /* 1: TANDEM_BOUNDS_CACHE_MB gave bounds_cache_mb */
    size_t bounds_cache_mb;  /* a search handle's bounds cache, 0: none */
    unsigned staging_workers;  /* TANDEM_STAGING: 0, else 1 .. _STAGING_WORKERS_MAX */
    unsigned staging_chunk_mb; /* 0, else 1 .. _STAGING_CHUNK_MB_MAX */
    int search_profile;      /* TANDEM_SEARCH_PROFILE: 0 off, 1 on, 2 host phases only */
} tdm_tuning;

typedef struct tdm_settings {
    char *devices;            /* selection spec, never NULL ("all" by default) */
    int cache_mode;           /* TDM_CACHE_OFF, _ON or _ALWAYS (never _DEFAULT) */
    char *cache_dir;          /* never NULL; "" when there is nowhere to cache */
    char *build_options;      /* extra kernel build options, never NULL ("" for none) */
    const char *kernel_source;/* the caller's source to build, or NULL: the embedded
                                 kernels.cl (engine/program.h) */
    size_t kernel_source_len;
    size_t wg_size;           /* 0: per device type (tdm_choose_wg_size), else a power of two */
    int nv_shuffle;           /* 0: never build with NVIDIA warp shuffles; 1: where supported */
    size_t codec_groups_per_cu; /* work-groups per compute unit for grid-stride codec kernels */
    char *kernel_source_copy; /* owned copy behind kernel_source when the caller gave one */
    /* Scheduling (host/sched, docs/SCHED.md). */
    int policy;               /* the option's enum tdm_policy, 0 when unset */
    char *policy_name;        /* TANDEM_POLICY when the option is unset, else NULL */
    long batch_window_us;     /* 0 .. 1,000,000 */
    unsigned load_threshold;  /* >= 1 */
    double deadline_ms;       /* > 0 */
    int calibrate;            /* sample queries per lane, 0 none */
    char *fault_inject;       /* never NULL ("" for none) */
    char *lane_kinds;         /* never NULL ("" for the device types) */
    unsigned lane_slots;      /* runs a lane keeps going at once, 1 .. TDM_SETTINGS_LANE_SLOTS_MAX */
    int migrate;              /* enum tdm_migrate, never DEFAULT (TANDEM_MIGRATE) */
    uint64_t device_memory;   /* bytes an index may take on a device, 0: no budget
                                 (resident/resident.h) */
    int partition;            /* enum tdm_partition, never DEFAULT (host/sched/partition_fit.c) */
    int launch_guard;         /* 1: PoCL CPU devices launch through the guard (auto); 0: off */
    int run_queues;           /* 1: each single-query run has its own in-order queue
                                 (per-run); 0: the device's shared one (shared) */
    unsigned first_kernel_ms; /* each device's first kernel's time limit at open */
    long test_hang;           /* test hook: the discovery index of a device whose first
                                 kernel never ends (TANDEM_TEST_HANG), -1 none */
    long run_timeout_ms;      /* a lane run's time limit: > 0 ms, 0 auto (from the run's
                                 predicted time), -1 off (host/sched/watchdog.c) */
    const char *devices_from; /* what gave `devices`, for its errors: "TANDEM_DEVICES",
                                 "engine option devices" or "device selection" */
    tdm_tuning tuning;
} tdm_settings;

/* Built-in defaults, also what tdm_engine_options_init documents. */
#define TDM_SETTINGS_GROUPS_PER_CU_DEFAULT 32
#define TDM_SETTINGS_WG_SIZE_MAX 4096
#define TDM_SETTINGS_BATCH_WINDOW_US_DEFAULT 200
#define TDM_SETTINGS_BATCH_WINDOW_US_MAX 1000000
#define TDM_SETTINGS_LOAD_THRESHOLD_DEFAULT 4
#define TDM_SETTINGS_DEADLINE_MS_DEFAULT 500.0
#define TDM_SETTINGS_CALIBRATE_DEFAULT 16
#define TDM_SETTINGS_LANE_SLOTS_DEFAULT 2
#define TDM_SETTINGS_LANE_SLOTS_MAX 8
#define TDM_SETTINGS_FIRST_KERNEL_MS_DEFAULT 10000
#define TDM_SETTINGS_RUN_TIMEOUT_MS_MAX 3600000

/* Resolves `o` (already validated for struct_size; never NULL), then the
 * environment, then the defaults, into *s. On failure *s holds nothing to
 * free and `err` names the bad option or variable. */
int tdm_settings_resolve(const tdm_engine_options *o, tdm_settings *s, tdm_err *err);

/* Frees what tdm_settings_resolve allocated. Accepts a zeroed struct. */
void tdm_settings_free(tdm_settings *s);

/* The tuning of settings `s`, or every switch unset (the rules) where s is
 * NULL (a device made by hand in a test, not by an engine). */
const tdm_tuning *tdm_settings_tuning(const tdm_settings *s);

/* TANDEM_SEARCH_PROFILE as the process's first engine open read it (0 before
 * any): the profile's table is one for the process (plan/search_prof.c). */
int tdm_settings_search_profile(void);

/* One documented environment variable: its name, its group and what it
 * accepts and does. */
typedef struct tdm_settings_var {
    const char *name, *group, *help;
} tdm_settings_var;

/* Every variable the library reads, grouped, in the order `tandem
 * --help-env` prints them; *n gets their count. */
const tdm_settings_var *tdm_settings_vars(size_t *n);

/* TANDEM_BENCH_LOAD_CORRUPT, a test switch of `tandem bench load` (the CLI
 * checks its value): NULL when unset or empty. Read when called: a tool's
 * switch, not an engine's. */
const char *tdm_settings_bench_load_corrupt(void);

/* The OpenCL driver environment, for the hint when no device is found
 * (icdhint.c): the ICD loader's vendor directory (OCL_ICD_VENDORS where it
 * names a directory, else /etc/OpenCL/vendors) and the kernel cache directory
 * PoCL picks (POCL_CACHE_DIR, $XDG_CACHE_HOME/pocl/kcache,
 * $HOME/.cache/pocl/kcache). Read when called: only that hint needs them. */
const char *tdm_settings_icd_vendor_dir(void);
void tdm_settings_pocl_cache_dir(char *buf, size_t cap);

#endif
