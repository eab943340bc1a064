/* Engine settings: options, then TANDEM_* environment variables, then defaults.
 * The only place in the library that reads the environment. */
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime.h"

#define GROUPS_PER_CU_MAX 65536u

/* The variable's value, NULL when unset or empty (empty counts as unset). */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* A whole decimal number in [lo, hi]; 0 when `s` is anything else. */
static int parse_size(const char *s, size_t lo, size_t hi, size_t *out)
{
    char *end;
    if (!isdigit((unsigned char)*s))
        return 0;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return 0;
    *out = (size_t)v;
    return 1;
}

static int is_pow2(size_t v) { return v && (v & (v - 1)) == 0; }

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

static int resolve_cache_mode(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    if (o->cache_mode < TDM_CACHE_DEFAULT || o->cache_mode > TDM_CACHE_ALWAYS)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "engine option cache_mode: %d is not a tdm_cache_mode", o->cache_mode);
    s->cache_mode = o->cache_mode != TDM_CACHE_DEFAULT ? o->cache_mode : TDM_CACHE_ON;
    const char *v = env("TANDEM_CACHE");
    if (o->cache_mode != TDM_CACHE_DEFAULT || !v)
        return TDM_OK;
    if (!strcmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "no"))
        s->cache_mode = TDM_CACHE_OFF;
    else if (!strcmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes"))
        s->cache_mode = TDM_CACHE_ON;
    else if (!strcasecmp(v, "always"))
        s->cache_mode = TDM_CACHE_ALWAYS;
    else
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "TANDEM_CACHE=%s: expected 0, off, no, 1, on, yes or always", v);
    return TDM_OK;
}

/* Option, TANDEM_CACHE_DIR, $XDG_CACHE_HOME/tandem, $HOME/.cache/tandem, "". */
static char *resolve_cache_dir(const tdm_engine_options *o)
{
    const char *v;
    if (o->cache_dir && *o->cache_dir)
        return strdup(o->cache_dir);
    if ((v = env("TANDEM_CACHE_DIR")))
        return strdup(v);
    const char *fmt = (v = env("XDG_CACHE_HOME")) ? "%s/tandem" : "%s/.cache/tandem";
    if (!v && !(v = env("HOME")))
        return strdup("");
    size_t n = strlen(v) + 16;
    char *dir = malloc(n);
    if (dir)
        snprintf(dir, n, fmt, v);
    return dir;
}

static int resolve_wg_size(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    const char *v;
    if (o->wg_size) {
        if (!is_pow2(o->wg_size) || o->wg_size > TDM_SETTINGS_WG_SIZE_MAX)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "engine option wg_size: %zu is not a power of two up to %d",
                               o->wg_size, TDM_SETTINGS_WG_SIZE_MAX);
        s->wg_size = o->wg_size;
    } else if ((v = env("TANDEM_WG_SIZE"))) {
        if (!parse_size(v, 1, TDM_SETTINGS_WG_SIZE_MAX, &s->wg_size) || !is_pow2(s->wg_size))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "TANDEM_WG_SIZE=%s: expected a power of two from 1 to %d", v,
                               TDM_SETTINGS_WG_SIZE_MAX);
    }
    return TDM_OK;
}

static int resolve_nv_shuffle(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    const char *v;
    s->nv_shuffle = 1;
    if (o->nv_shuffle == 0 || o->nv_shuffle == 1)
        s->nv_shuffle = o->nv_shuffle;
    else if (o->nv_shuffle != -1)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "engine option nv_shuffle: %d (expected -1, 0 or 1)", o->nv_shuffle);
    else if ((v = env("TANDEM_NV_SHUFFLE"))) {
        if (strcmp(v, "0") && strcmp(v, "1"))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "TANDEM_NV_SHUFFLE=%s: expected 0 or 1",
                               v);
        s->nv_shuffle = v[0] == '1';
    }
    return TDM_OK;
}

static int resolve_groups(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    const char *v;
    s->codec_groups_per_cu = TDM_SETTINGS_GROUPS_PER_CU_DEFAULT;
    if (o->codec_groups_per_cu) {
        if (o->codec_groups_per_cu > GROUPS_PER_CU_MAX)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "engine option codec_groups_per_cu: %zu is more than %u",
                               o->codec_groups_per_cu, GROUPS_PER_CU_MAX);
        s->codec_groups_per_cu = o->codec_groups_per_cu;
    } else if ((v = env("TANDEM_CODEC_GROUPS_PER_CU"))) {
        if (!parse_size(v, 1, GROUPS_PER_CU_MAX, &s->codec_groups_per_cu))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "TANDEM_CODEC_GROUPS_PER_CU=%s: expected a whole number from 1 "
                               "to %u",
                               v, GROUPS_PER_CU_MAX);
    }
    return TDM_OK;
}

static int resolve_strings(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    const char *dev = o->devices ? o->devices : env("TANDEM_DEVICES");
    s->devices = strdup(dev ? dev : "all");
    s->cache_dir = resolve_cache_dir(o);
    s->build_options = dup_or_empty(o->build_options);
    if (o->kernel_source) {
        s->kernel_source_copy = strdup(o->kernel_source);
        s->kernel_source = s->kernel_source_copy;
        s->kernel_source_len = strlen(o->kernel_source);
    } else {
        s->kernel_source = tdm_kernels_source;
        s->kernel_source_len = tdm_kernels_source_len;
    }
    if (!s->devices || !s->cache_dir || !s->build_options || !s->kernel_source)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory resolving the engine settings");
    return TDM_OK;
}

/* A setting that is a whole number in [lo, hi]: the option unless it is
 * `unset`, else the variable, else `def`. */
static int resolve_long(long opt, long unset, const char *what, const char *var, long lo, long hi,
                        long def, long *out, tdm_err *err)
{
    const char *v;
    size_t n;
    *out = def;
    if (opt != unset) {
        if (opt < lo || opt > hi)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "engine option %s: %ld is not in %ld .. %ld",
                               what, opt, lo, hi);
        *out = opt;
    } else if ((v = env(var))) {
        if (!parse_size(v, (size_t)lo, (size_t)hi, &n))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "%s=%s: expected a whole number from %ld to %ld", var, v, lo, hi);
        *out = (long)n;
    }
    return TDM_OK;
}

static int resolve_deadline(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    const char *v;
    s->deadline_ms = TDM_SETTINGS_DEADLINE_MS_DEFAULT;
    if (o->deadline_ms != 0) {
        if (!(o->deadline_ms > 0 && o->deadline_ms <= 3.6e6))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "engine option deadline_ms: %g is not in (0, 3600000]",
                               o->deadline_ms);
        s->deadline_ms = o->deadline_ms;
    } else if ((v = env("TANDEM_DEADLINE_MS"))) {
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        if (errno || *end || !(d > 0 && d <= 3.6e6))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "TANDEM_DEADLINE_MS=%s: expected milliseconds in (0, 3600000]", v);
        s->deadline_ms = d;
    }
    return TDM_OK;
}

/* The option (enum tdm_migrate), else TANDEM_MIGRATE by name, else auto. */
static int resolve_migrate(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    static const char *const names[] = {"", "auto", "force", "off"};
    const char *v = o->migrate ? NULL : env("TANDEM_MIGRATE");
    s->migrate = o->migrate ? o->migrate : TDM_MIGRATE_AUTO;
    if (o->migrate < 0 || o->migrate > TDM_MIGRATE_OFF)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "engine option migrate: %d is unknown",
                           o->migrate);
    if (!v)
        return TDM_OK;
    for (int m = TDM_MIGRATE_AUTO; m <= TDM_MIGRATE_OFF; m++)
        if (!strcasecmp(v, names[m])) {
            s->migrate = m;
            return TDM_OK;
        }
    return tdm_err_set(err, TDM_ERR_INVALID_ARG, "TANDEM_MIGRATE=%s: expected auto, force or off",
                       v);
}

static int resolve_sched(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    long v = 0;
    s->policy = o->policy;
    int rc = resolve_long(o->batch_window_us, -1, "batch_window_us", "TANDEM_BATCH_WINDOW_US", 0,
                          TDM_SETTINGS_BATCH_WINDOW_US_MAX, TDM_SETTINGS_BATCH_WINDOW_US_DEFAULT,
                          &s->batch_window_us, err);
    if (rc == TDM_OK)
        rc = resolve_long(o->load_threshold, 0, "load_threshold", "TANDEM_LOAD_THRESHOLD", 1,
                          1000000, TDM_SETTINGS_LOAD_THRESHOLD_DEFAULT, &v, err);
    s->load_threshold = (unsigned)v;
    if (rc == TDM_OK)
        rc = resolve_long(o->calibrate, -1, "calibrate", "TANDEM_CALIBRATE", 0, 4096,
                          TDM_SETTINGS_CALIBRATE_DEFAULT, &v, err);
    s->calibrate = (int)v;
    if (rc == TDM_OK)
        rc = resolve_long(o->lane_slots, 0, "lane_slots", "TANDEM_LANE_SLOTS", 1,
                          TDM_SETTINGS_LANE_SLOTS_MAX, TDM_SETTINGS_LANE_SLOTS_DEFAULT, &v, err);
    s->lane_slots = (unsigned)v;
    if (rc == TDM_OK)
        rc = resolve_deadline(o, s, err);
    if (rc == TDM_OK)
        rc = resolve_migrate(o, s, err);
    if (rc)
        return rc;
    const char *p = o->policy ? NULL : env("TANDEM_POLICY");
    const char *f = o->fault_inject ? o->fault_inject : env("TANDEM_FAULT_INJECT");
    const char *k = o->lane_kinds ? o->lane_kinds : env("TANDEM_LANE_KINDS");
    s->policy_name = p ? strdup(p) : NULL;
    s->fault_inject = dup_or_empty(f);
    s->lane_kinds = dup_or_empty(k);
    if ((p && !s->policy_name) || !s->fault_inject || !s->lane_kinds)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory resolving the engine settings");
    return TDM_OK;
}

/* The option, else TANDEM_DEVICE_MEMORY: bytes, or K, M, G (binary) units. */
static int resolve_device_memory(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    const char *v = o->device_memory ? NULL : env("TANDEM_DEVICE_MEMORY");
    s->device_memory = o->device_memory;
    if (!v)
        return TDM_OK;
    char *end;
    errno = 0;
    unsigned long long n = isdigit((unsigned char)*v) ? strtoull(v, &end, 10) : 0;
    unsigned shift = 0;
    if (n && !errno && *end && !end[1])
        shift = strchr("kK", *end) ? 10 : strchr("mM", *end) ? 20 : strchr("gG", *end) ? 30 : 0;
    if (!n || errno || (*end && !shift) || n > (~0ull >> shift))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "TANDEM_DEVICE_MEMORY=%s: expected bytes (> 0), or a number with K, "
                           "M or G", v);
    s->device_memory = (uint64_t)n << shift;
    return TDM_OK;
}

/* TANDEM_LAUNCH_GUARD: auto (the default: PoCL's CPU devices) or off. */
static int resolve_launch_guard(tdm_settings *s, tdm_err *err)
{
    const char *v = env("TANDEM_LAUNCH_GUARD");
    s->launch_guard = 1;
    if (!v || strcasecmp(v, "auto") == 0 || strcasecmp(v, "on") == 0)
        return TDM_OK;
    if (strcasecmp(v, "off") == 0) {
        s->launch_guard = 0;
        return TDM_OK;
    }
    return tdm_err_set(err, TDM_ERR_INVALID_ARG, "TANDEM_LAUNCH_GUARD=%s: expected auto or off",
                       v);
}

int tdm_settings_resolve(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    memset(s, 0, sizeof *s);
    int rc = resolve_cache_mode(o, s, err);
    if (rc == TDM_OK)
        rc = resolve_wg_size(o, s, err);
    if (rc == TDM_OK)
        rc = resolve_nv_shuffle(o, s, err);
    if (rc == TDM_OK)
        rc = resolve_groups(o, s, err);
    if (rc == TDM_OK)
        rc = resolve_strings(o, s, err);
    if (rc == TDM_OK)
        rc = resolve_sched(o, s, err);
    if (rc == TDM_OK)
        rc = resolve_device_memory(o, s, err);
    if (rc == TDM_OK)
        rc = resolve_launch_guard(s, err);
    if (rc != TDM_OK)
        tdm_settings_free(s);
    return rc;
}

void tdm_settings_free(tdm_settings *s)
{
    if (!s)
        return;
    free(s->devices);
    free(s->cache_dir);
    free(s->build_options);
    free(s->kernel_source_copy);
    free(s->policy_name);
    free(s->fault_inject);
    free(s->lane_kinds);
    memset(s, 0, sizeof *s);
}
