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
 *   policy, policy_name   policy                        TANDEM_POLICY (a name: host/sched
 *                                                       resolves it at tdm_search_open)
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
 *   launch_guard          (none)                        TANDEM_LAUNCH_GUARD (auto, off:
 *                                                       the PoCL work-around, launch_guard.c)
 *
 * An invalid value (option or environment) is TDM_ERR_INVALID_ARG with a
 * message naming the option or the variable.
 * Threads: a resolved tdm_settings is immutable; read it from any thread. */
#ifndef TDM_RUNTIME_SETTINGS_H
#define TDM_RUNTIME_SETTINGS_H

#include <stddef.h>

#include "common/error.h"
#include "tandem.h"

typedef struct tdm_settings {
    char *devices;            /* selection spec, never NULL ("all" by default) */
    int cache_mode;           /* TDM_CACHE_OFF, _ON or _ALWAYS (never _DEFAULT) */
    char *cache_dir;          /* never NULL; "" when there is nowhere to cache */
    char *build_options;      /* extra kernel build options, never NULL ("" for none) */
    const char *kernel_source;/* the source to build (embedded kernels.cl by default) */
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
                                 (index/resident.h) */
    int launch_guard;         /* 1: PoCL CPU devices launch through the guard (auto); 0: off */
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

/* Resolves `o` (already validated for struct_size; never NULL), then the
 * environment, then the defaults, into *s. On failure *s holds nothing to
 * free and `err` names the bad option or variable. */
int tdm_settings_resolve(const tdm_engine_options *o, tdm_settings *s, tdm_err *err);

/* Frees what tdm_settings_resolve allocated. Accepts a zeroed struct. */
void tdm_settings_free(tdm_settings *s);

#endif
