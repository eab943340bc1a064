/* Engine settings: options, then TANDEM_* environment variables, then defaults.
 * The only place in the library that reads the environment. */
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

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

/* ---- tuning and A/B switches (tdm_tuning): environment only */

typedef struct choice {
    const char *word;
    int value;
} choice;

/* The words of a NULL-ended choice list as "a, b or c", for an error. */
static void choice_words(const choice *c, char *buf, size_t cap)
{
    size_t pos = 0;
    buf[0] = '\0';
    for (size_t i = 0; c[i].word && pos < cap; i++)
        pos += (size_t)snprintf(buf + pos, cap - pos, "%s%s",
                                i == 0 ? "" : !c[i + 1].word ? " or " : ", ", c[i].word);
}

/* Variable `var` as one of the words of `c` (case ignored) into *out;
 * unset leaves *out. */
static int resolve_choice(const char *var, const choice *c, int *out, tdm_err *err)
{
    const char *v = env(var);
    if (!v)
        return TDM_OK;
    for (size_t i = 0; c[i].word; i++)
        if (!strcasecmp(v, c[i].word)) {
            *out = c[i].value;
            return TDM_OK;
        }
    char words[128];
    choice_words(c, words, sizeof words);
    return tdm_err_set(err, TDM_ERR_INVALID_ARG, "%s=%s: expected %s", var, v, words);
}

/* Variable `var` as a whole number in [lo, hi] into *out; unset leaves *out. */
static int resolve_u32(const char *var, uint32_t lo, uint32_t hi, uint32_t *out, tdm_err *err)
{
    const char *v = env(var);
    size_t n;
    if (!v)
        return TDM_OK;
    if (!parse_size(v, lo, hi, &n))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "%s=%s: expected a whole number from %u to %u",
                           var, v, (unsigned)lo, (unsigned)hi);
    *out = (uint32_t)n;
    return TDM_OK;
}

/* TANDEM_BOUNDS_CACHE_MB: whole MiB, 0 for no cache, up to what a size_t holds. */
static int resolve_bounds_cache(tdm_tuning *t, tdm_err *err)
{
    const char *v = env("TANDEM_BOUNDS_CACHE_MB");
    if (!v)
        return TDM_OK;
    if (!parse_size(v, 0, (size_t)-1 >> 20, &t->bounds_cache_mb))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "TANDEM_BOUNDS_CACHE_MB=%s: expected a whole number of MiB from 0 "
                           "(no cache) to %zu", v, (size_t)-1 >> 20);
    t->bounds_cache_set = 1;
    return TDM_OK;
}

/* A count of postings from var, lo .. 2^62 (lo_text says what lo means):
 * *set (where set) 1 where var is given. TANDEM_SPLIT_MIN_POSTINGS, a split handle's
 * threshold (1: every query with a posting splits; 2^62: none);
 * TANDEM_HOST_MAX_POSTINGS, the host path's (0: never; 2^62: every query). */
static int resolve_postings(const char *var, size_t lo, const char *lo_text, uint64_t *out,
                            int *set, tdm_err *err)
{
    const char *v = env(var);
    size_t n;
    if (!v)
        return TDM_OK;
    if (!parse_size(v, lo, (size_t)1 << 62, &n))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "%s=%s: expected a whole number of postings from %s to %llu", var, v,
                           lo_text, 1ull << 62);
    *out = (uint64_t)n;
    if (set)
        *set = 1;
    return TDM_OK;
}

/* TANDEM_STAGING=THREADS[,CHUNK_MB]. */
static int resolve_staging(tdm_tuning *t, tdm_err *err)
{
    const char *v = env("TANDEM_STAGING");
    if (!v)
        return TDM_OK;
    char buf[64];
    size_t workers = 0, mb = 0;
    snprintf(buf, sizeof buf, "%s", v);
    char *comma = strchr(buf, ',');
    if (comma)
        *comma = '\0';
    if (strlen(v) >= sizeof buf ||
        !parse_size(buf, 1, TDM_SETTINGS_STAGING_WORKERS_MAX, &workers) ||
        (comma && !parse_size(comma + 1, 1, TDM_SETTINGS_STAGING_CHUNK_MB_MAX, &mb)))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "TANDEM_STAGING=%s: expected THREADS (1 to %u) or THREADS,CHUNK_MB "
                           "(CHUNK_MB 1 to %u)",
                           v, TDM_SETTINGS_STAGING_WORKERS_MAX, TDM_SETTINGS_STAGING_CHUNK_MB_MAX);
    t->staging_workers = (unsigned)workers;
    t->staging_chunk_mb = comma ? (unsigned)mb : 8u; /* THREADS alone: 8 MiB, as it always was */
    return TDM_OK;
}

/* TANDEM_SEARCH_PROFILE of the process: -1 until an engine open read it. */
static int search_profile = -1;

static const choice on_off[] = {{"on", TDM_TUNE_ON}, {"off", TDM_TUNE_OFF}, {NULL, 0}};
static const choice spin_sleep[] = {{"spin", TDM_TUNE_OFF}, {"sleep", TDM_TUNE_ON}, {NULL, 0}};
static const choice uploads[] = {
    {"pageable", TDM_TUNE_UPLOAD_PAGEABLE}, {"pinned", TDM_TUNE_UPLOAD_PINNED}, {NULL, 0}};
static const choice one_zero[] = {{"0", TDM_TUNE_OFF}, {"1", TDM_TUNE_ON}, {NULL, 0}};

/* Every tuning switch, checked once here so that a bad value fails the open
 * instead of being ignored where it is used. */
static int resolve_tuning(tdm_tuning *t, tdm_err *err)
{
    static const choice variants[] = {{"item", TDM_VARIANT_ITEM},
                                      {"group", TDM_VARIANT_GROUP},
                                      {"compressed", TDM_VARIANT_COMPRESSED},
                                      {NULL, 0}};
    static const choice layouts[] = {
        {"range", TDM_TUNE_ZR_RANGE}, {"interleaved", TDM_TUNE_ZR_INTERLEAVED}, {NULL, 0}};
    static const choice decodes[] = {
        {"group", TDM_TUNE_DECODE_GROUP}, {"serial", TDM_TUNE_DECODE_SERIAL}, {NULL, 0}};
    static const choice ands[] = {
        {"range", TDM_TUNE_AND_RANGE}, {"wu", TDM_TUNE_AND_WU}, {NULL, 0}};
    static const choice bounds[] = {
        {"device", TDM_TUNE_BOUNDS_DEVICE}, {"host", TDM_TUNE_BOUNDS_HOST}, {NULL, 0}};
    static const choice profiles[] = {{"0", 0}, {"1", 1}, {"host", 2}, {NULL, 0}};
    int rc = resolve_choice("TANDEM_SEARCH_VARIANT", variants, &t->search_variant, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_ZR_LAYOUT", layouts, &t->zr_layout, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_SEED", one_zero, &t->seed, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_ZR_SEED", one_zero, &t->zr_seed, err);
    if (rc == TDM_OK)
        rc = resolve_u32("TANDEM_GPU_MIN_RLEN", 1, 1u << 20, &t->gpu_min_rlen, err);
    if (rc == TDM_OK)
        rc = resolve_u32("TANDEM_GPU_ZGROUPS_PER_CU", 1, 64, &t->gpu_zgroups_per_cu, err);
    if (rc == TDM_OK)
        rc = resolve_u32("TANDEM_CPU_RANGES_PER_CU", 1, 1024, &t->cpu_ranges_per_cu, err);
    if (rc == TDM_OK)
        rc = resolve_u32("TANDEM_BATCH_RANGES_PER_CU", 1, 65536, &t->batch_ranges_per_cu, err);
    if (rc == TDM_OK)
        rc = resolve_u32("TANDEM_BATCH_MERGE_KEYS", 1, 1u << 24, &t->batch_merge_keys, err);
    if (rc == TDM_OK)
        rc = resolve_u32("TANDEM_BATCH_MIN_PART", 1, 65536, &t->batch_min_part, err);
    if (rc == TDM_OK)
        rc = resolve_u32("TANDEM_BATCH_MAX_K", 1, 65536, &t->batch_max_k, err);
    if (rc == TDM_OK)
        rc = resolve_u32("TANDEM_BATCH_MERGE_RLEN", 1, 1u << 30, &t->batch_merge_rlen, err);
    if (rc == TDM_OK) /* 0: the tuning table's row, as unset */
        rc = resolve_u32("TANDEM_MERGE_DIRECT_KEYS", 0, 1u << 24, &t->merge_direct_keys, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_MERGE_FILTER", on_off, &t->merge_filter, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_MERGE_SMALL", on_off, &t->merge_small, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_RANGE_SELECT", on_off, &t->range_select, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_AND_SELECT", on_off, &t->and_select, err);
    if (rc == TDM_OK) /* unset: 0 */
        rc = resolve_postings("TANDEM_SPLIT_MIN_POSTINGS", 1, "1", &t->split_min_postings, NULL,
                              err);
    if (rc == TDM_OK)
        rc = resolve_postings("TANDEM_HOST_MAX_POSTINGS", 0, "0 (never)",
                              &t->host_max_postings, &t->host_max_set, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_DECODE_VARIANT", decodes, &t->decode_variant, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_BATCH_AND", ands, &t->batch_and, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_BATCH_BOUNDS", bounds, &t->batch_bounds, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_QUERY_BOUNDS", bounds, &t->query_bounds, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_BATCH_QUEUE", on_off, &t->batch_queue, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_BATCH_WAIT", spin_sleep, &t->batch_wait, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_BATCH_UPLOAD", uploads, &t->batch_upload, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_BATCH_HOST", on_off, &t->batch_host, err);
    if (rc == TDM_OK)
        rc = resolve_u32("TANDEM_BATCH_ALONE_THREADS", 1, 64, &t->batch_alone_threads, err);
    if (rc == TDM_OK)
        rc = resolve_u32("TANDEM_BATCH_OR_ALONE_TERMS", 1, 65536, &t->batch_or_alone_terms, err);
    if (rc == TDM_OK)
        rc = resolve_bounds_cache(t, err);
    if (rc == TDM_OK)
        rc = resolve_staging(t, err);
    if (rc == TDM_OK)
        rc = resolve_choice("TANDEM_SEARCH_PROFILE", profiles, &t->search_profile, err);
    /* the profile is the process's (one table, printed at exit): the first
     * engine whose switches are valid sets it */
    int unset = -1;
    if (rc == TDM_OK)
        __atomic_compare_exchange_n(&search_profile, &unset, t->search_profile, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return rc;
}

const tdm_tuning *tdm_settings_tuning(const tdm_settings *s)
{
    static const tdm_tuning rules;
    return s ? &s->tuning : &rules;
}

int tdm_settings_search_profile(void)
{
    int v = __atomic_load_n(&search_profile, __ATOMIC_ACQUIRE);
    return v < 0 ? 0 : v;
}

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
    s->devices_from = o->devices ? "engine option devices"
                      : dev      ? "TANDEM_DEVICES"
                                 : "device selection";
    s->devices = strdup(dev ? dev : "all");
    s->cache_dir = resolve_cache_dir(o);
    s->build_options = dup_or_empty(o->build_options);
    if (o->kernel_source) { /* else NULL: the engine builds the embedded kernels */
        s->kernel_source_copy = strdup(o->kernel_source);
        s->kernel_source = s->kernel_source_copy;
        s->kernel_source_len = strlen(o->kernel_source);
    }
    if (!s->devices || !s->cache_dir || !s->build_options ||
        (o->kernel_source && !s->kernel_source))
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
        int num = isdigit((unsigned char)*v) || *v == '.'; /* strtod skips spaces, takes signs */
        double d = num ? strtod(v, &end) : 0;
        if (!num || errno || *end || !(d > 0 && d <= 3.6e6))
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
    int policy;
    if (p && tdm_policy_parse(p, &policy) != TDM_OK) /* the scheduler takes it by name */
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "TANDEM_POLICY=%s: expected cpu-only, gpu-only, best, hybrid or direct",
                           p);
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

/* The option, else TANDEM_PARTITION: auto, on, off or split
 * (docs/PARTITION.md). */
static int resolve_partition(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    static const char *const names[] = {"", "auto", "on", "off", "split"};
    const char *v = o->partition ? NULL : env("TANDEM_PARTITION");
    s->partition = o->partition ? o->partition : TDM_PARTITION_AUTO;
    if (o->partition < 0 || o->partition > TDM_PARTITION_SPLIT)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "engine option partition: %d is unknown",
                           o->partition);
    if (!v)
        return TDM_OK;
    for (int m = TDM_PARTITION_AUTO; m <= TDM_PARTITION_SPLIT; m++)
        if (!strcasecmp(v, names[m])) {
            s->partition = m;
            return TDM_OK;
        }
    return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                       "TANDEM_PARTITION=%s: expected auto, on, off or split", v);
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

/* TANDEM_RUN_QUEUES: shared (the default: every single-query run of a device
 * on its one latency queue) or per-run (a queue each, drive/search_dev.c). */
static int resolve_run_queues(tdm_settings *s, tdm_err *err)
{
    const char *v = env("TANDEM_RUN_QUEUES");
    s->run_queues = 0;
    if (!v || strcasecmp(v, "shared") == 0)
        return TDM_OK;
    if (strcasecmp(v, "per-run") == 0) {
        s->run_queues = 1;
        return TDM_OK;
    }
    return tdm_err_set(err, TDM_ERR_INVALID_ARG, "TANDEM_RUN_QUEUES=%s: expected shared or "
                       "per-run", v);
}

/* The first kernel's time limit, and the test hook that hangs one device. */
static int resolve_first_kernel(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    long v = 0;
    int rc = resolve_long(o->first_kernel_ms, 0, "first_kernel_ms", "TANDEM_FIRST_KERNEL_MS", 1,
                          3600000, TDM_SETTINGS_FIRST_KERNEL_MS_DEFAULT, &v, err);
    s->first_kernel_ms = (unsigned)v;
    if (rc == TDM_OK)
        rc = resolve_long(-1, -1, "", "TANDEM_TEST_HANG", 0, 1 << 20, -1, &s->test_hang, err);
    return rc;
}

/* The search-time watchdog's limit: the option (> 0 ms, -1 off), else
 * TANDEM_RUN_TIMEOUT_MS ("auto", "off" or ms), else auto (0). */
static int resolve_run_timeout(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    const char *v;
    s->run_timeout_ms = 0;
    if (o->run_timeout_ms != 0) {
        if (o->run_timeout_ms != -1 &&
            (o->run_timeout_ms < 1 || o->run_timeout_ms > TDM_SETTINGS_RUN_TIMEOUT_MS_MAX))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "engine option run_timeout_ms: %ld is not -1 (off) or in 1 .. %d",
                               o->run_timeout_ms, TDM_SETTINGS_RUN_TIMEOUT_MS_MAX);
        s->run_timeout_ms = o->run_timeout_ms;
    } else if ((v = env("TANDEM_RUN_TIMEOUT_MS"))) {
        size_t n;
        if (strcasecmp(v, "off") == 0)
            s->run_timeout_ms = -1;
        else if (strcasecmp(v, "auto") == 0)
            s->run_timeout_ms = 0;
        else if (parse_size(v, 1, TDM_SETTINGS_RUN_TIMEOUT_MS_MAX, &n))
            s->run_timeout_ms = (long)n;
        else
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "TANDEM_RUN_TIMEOUT_MS=%s: expected auto, off or milliseconds "
                               "from 1 to %d",
                               v, TDM_SETTINGS_RUN_TIMEOUT_MS_MAX);
    }
    return TDM_OK;
}

int tdm_settings_resolve(const tdm_engine_options *o, tdm_settings *s, tdm_err *err)
{
    memset(s, 0, sizeof *s);
    int rc = resolve_cache_mode(o, s, err);
    if (rc == TDM_OK)
        rc = resolve_tuning(&s->tuning, err);
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
        rc = resolve_partition(o, s, err);
    if (rc == TDM_OK)
        rc = resolve_launch_guard(s, err);
    if (rc == TDM_OK)
        rc = resolve_run_queues(s, err);
    if (rc == TDM_OK)
        rc = resolve_first_kernel(o, s, err);
    if (rc == TDM_OK)
        rc = resolve_run_timeout(o, s, err);
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

/* ---- the documented variables (tandem --help-env, docs/SETTINGS.md) */

static const tdm_settings_var vars[] = {
    {"TANDEM_DEVICES", "engine",
     "devices to use: comma-separated all, gpu, cpu, accelerator, indices from 'tandem "
     "devices', or name substrings (all)"},
    {"TANDEM_CACHE", "engine",
     "kernel binary cache: 0/off/no, 1/on/yes (not for PoCL, which caches itself), always (on)"},
    {"TANDEM_CACHE_DIR", "engine",
     "kernel binary cache directory ($XDG_CACHE_HOME/tandem, else $HOME/.cache/tandem)"},
    {"TANDEM_WG_SIZE", "engine",
     "work-group size the kernels are built for, a power of two up to 4096 (128 on GPUs, "
     "256 elsewhere)"},
    {"TANDEM_NV_SHUFFLE", "engine",
     "0: no NVIDIA warp shuffles through inline PTX; 1: where the GPU supports them (1)"},
    {"TANDEM_CODEC_GROUPS_PER_CU", "engine",
     "work-groups per compute unit of the grid-stride codec kernels, 1 to 65536 (32)"},
    {"TANDEM_DEVICE_MEMORY", "engine",
     "device memory an index may take on each device: bytes, or a number with K, M or G "
     "(the device's; docs/CACHE.md)"},
    {"TANDEM_PARTITION", "engine",
     "auto, on, off or split: a search handle splits its index across the devices by docid "
     "range, one shard a device, every query on all at once (auto: on an engine of GPUs only, "
     "when the index does not fit one device's memory budget and a shard fits each); split: "
     "the whole index on every device and a shard each beside it, long single queries on "
     "every shard at once, the rest whole on one device (docs/PARTITION.md)"},
    {"TANDEM_LAUNCH_GUARD", "engine",
     "auto or off: the work-around for PoCL's kernel cache bug on PoCL CPU devices (auto; "
     "docs/SCHED.md)"},
    {"TANDEM_RUN_QUEUES", "engine",
     "shared or per-run: the single-query runs of a device share its one in-order queue, or "
     "each has its own so that concurrent runs' kernels may overlap (not on PoCL's basic "
     "driver nor Oclgrind) (shared)"},
    {"TANDEM_FIRST_KERNEL_MS", "engine",
     "milliseconds each device's first kernel may take at engine open before the device is "
     "abandoned with a warning, 1 to 3600000 (10000)"},
    {"TANDEM_POLICY", "scheduling", "cpu-only, gpu-only, best, hybrid or direct (hybrid)"},
    {"TANDEM_MIGRATE", "scheduling",
     "Griffin's intra-query migration of ranked AND: auto, force or off (auto: under hybrid, "
     "with a GPU and a CPU lane)"},
    {"TANDEM_DEADLINE_MS", "scheduling",
     "milliseconds after which a waiting query is promoted, in (0, 3600000] (500)"},
    {"TANDEM_LOAD_THRESHOLD", "scheduling",
     "queries in flight from which GPU lanes take batches, 1 to 1000000 (4)"},
    {"TANDEM_BATCH_WINDOW_US", "scheduling",
     "microseconds a batch lane waits for more queries, 0 to 1000000 (200)"},
    {"TANDEM_LANE_SLOTS", "scheduling", "runs at once on a lane, 1 to 8 (2)"},
    {"TANDEM_RUN_TIMEOUT_MS", "scheduling",
     "auto, off or milliseconds 1 to 3600000: a lane's run not finished by then is abandoned, "
     "the lane marked dead and its queries answered elsewhere or failed naming the device "
     "(auto: 100 times the run's predicted time, at least 10000; docs/SCHED.md)"},
    {"TANDEM_CALIBRATE", "scheduling",
     "queries a lane runs at start-up to fit its cost model, 0 to 4096 (16)"},
    {"TANDEM_SEARCH_VARIANT", "tuning",
     "item, group or compressed: the variant of every search that asks for auto (the "
     "planner's choice per device)"},
    {"TANDEM_ZR_LAYOUT", "tuning",
     "range or interleaved: the compressed variant's scratch layout (range on CPU devices, "
     "interleaved on GPUs)"},
    {"TANDEM_SEED", "tuning",
     "0 or 1: the seed kernels of WAND, BMW and MaxScore on decoded postings never or always "
     "(the rule: GPU plans, and ranges shorter than 16 k)"},
    {"TANDEM_ZR_SEED", "tuning",
     "0 or 1: the host seed of the shared threshold never or always: WAND, BMW and MaxScore "
     "on the compressed variant (the rule: k >= 100, GPU plans, 32 ranges or more) and in "
     "device batches (always), OR on the group kernel (the rule: a batch call's lone runs at "
     "k >= 100)"},
    {"TANDEM_GPU_MIN_RLEN", "tuning",
     "shortest docid range a GPU gets, 1 to 1048576 (32; the compressed variant 64)"},
    {"TANDEM_GPU_ZGROUPS_PER_CU", "tuning",
     "groups of 64 ranges a GPU compute unit gets for the compressed variant, 1 to 64 (2)"},
    {"TANDEM_CPU_RANGES_PER_CU", "tuning",
     "docid ranges a CPU compute unit gets, 1 to 1024 (4)"},
    {"TANDEM_BATCH_RANGES_PER_CU", "tuning",
     "docid ranges a compute unit gets in a batch, 1 to 65536 (GPU 16384, CPU 4)"},
    {"TANDEM_BATCH_MERGE_KEYS", "tuning",
     "heap slots (ranges x k) a query of a batch gets at most, its merge being one "
     "work-group's, 1 to 16777216 (GPU 32768, CPU no limit)"},
    {"TANDEM_MERGE_DIRECT_KEYS", "tuning",
     "candidates (ranges x k) a single query's merge takes directly, one work-group with no "
     "select stage, at most, 1 to 16777216; 0 or unset: the tuning table's row (16384)"},
    {"TANDEM_MERGE_FILTER", "tuning",
     "on or off: the select stages' one-read filter, or their radix select, at every k (the "
     "tuning table's row: GPU the filter, CPU the filter up to k = 128); the merge filters "
     "always"},
    {"TANDEM_RANGE_SELECT", "tuning",
     "on or off: a single query's first select stage in its range kernel's launch, each "
     "work-group's ranges' top k (on: wherever the algorithm allows, off: never; the tuning "
     "table's row: never, measured slower on msmarco's queries on the H200)"},
    {"TANDEM_AND_SELECT", "tuning",
     "on or off: a single ranked AND query of several terms on the decoded (item) variant "
     "decodes only the blocks its block selection keeps, or every block of its lists (the "
     "tuning table's row: GPU every block, CPU the selection)"},
    {"TANDEM_MERGE_SMALL", "tuning",
     "on or off: a single query's select stages and merge at k <= 16 over few candidates "
     "with the small kernels (each work-item's best k in local memory, then a tree of "
     "merges), or with the filter (the tuning table's row: GPU the filter, CPU the small "
     "kernels)"},
    {"TANDEM_BATCH_MIN_PART", "tuning",
     "the fewest queries of a batch split over several lanes a lane gets, else the batch "
     "goes to fewer lanes, whole to one below twice it, 1 to 65536 (GPU 1024, CPU 1)"},
    {"TANDEM_BATCH_MERGE_RLEN", "tuning",
     "documents: the merge's keys cap (TANDEM_BATCH_MERGE_KEYS) never makes a batch query's "
     "ranges longer than this, 1 to 2^30 (GPU 8192; CPU no floor; 2^30: none in effect)"},
    {"TANDEM_BATCH_MAX_K", "tuning",
     "the largest k at which OR, WAND, Block-Max WAND and MaxScore queries of a batch call "
     "share a device batch; above it each runs alone, 1 to 65536 (the tuning table's row: "
     "GPU 1000, CPU 128)"},
    {"TANDEM_SPLIT_MIN_POSTINGS", "tuning",
     "postings (the sum of its lists' lengths) from which a single query on a split handle "
     "(TANDEM_PARTITION=split) runs on every partition at once, 1 to 2^62 (the tuning table's "
     "row of the devices; docs/PARTITION.md)"},
    {"TANDEM_HOST_MAX_POSTINGS", "tuning",
     "postings (the sum of its lists' lengths) up to which a query is answered on the host, "
     "with no device work, 0 (never) to 2^62 (the tuning table's row of the planned device: "
     "GPU 32768 for ranked AND and 16384 for the others, CPU 8192; docs/SEARCH.md)"},
    {"TANDEM_DECODE_VARIANT", "tuning",
     "group or serial: the batched decode kernels (serial on CPU devices, group elsewhere)"},
    {"TANDEM_BATCH_AND", "tuning",
     "range or wu: how ranked AND batches, by the range kernel or by Wu's mapping (range; "
     "Wu's above k = 128 whatever the setting)"},
    {"TANDEM_BATCH_BOUNDS", "tuning",
     "device or host: where a batch's block bounds are made for WAND, BMW and MaxScore "
     "(device, where it has fp64; else host)"},
    {"TANDEM_QUERY_BOUNDS", "tuning",
     "device or host: where a query run alone gets its block bounds for WAND, BMW and "
     "MaxScore, made on the device from 16 bytes a term or filled on the host and uploaded "
     "at 4 bytes a block (device on GPUs with fp64, host elsewhere)"},
    {"TANDEM_BATCH_QUEUE", "tuning",
     "on or off: compressed batches as a queue of ranges taken longest first by a few "
     "work-items (on for every device but GPUs)"},
    {"TANDEM_BATCH_WAIT", "tuning",
     "spin or sleep: how a device batch's host thread waits for its results, in the "
     "driver's blocking read or asleep until the read's completion callback (sleep on GPUs, "
     "spin elsewhere)"},
    {"TANDEM_BATCH_UPLOAD", "tuning",
     "pageable or pinned: a device batch's uploads from the host's tables, or from pinned "
     "staging they are copied into (pinned on GPUs, pageable elsewhere)"},
    {"TANDEM_BATCH_HOST", "tuning",
     "on or off: a batch call's queries on the host path, at any size where the host keeps no "
     "posting (ranked AND, pruning queries of two terms or more that the host's MaxScore "
     "evaluator takes, one-term queries), the others "
     "up to 2^23 postings on a CPU (2^20 elsewhere) (on for CPU devices, off elsewhere; "
     "TANDEM_HOST_MAX_POSTINGS, when set, rules every query)"},
    {"TANDEM_BATCH_ALONE_THREADS", "tuning",
     "host threads running a batch call's lone queries (OR, WAND, BMW, MaxScore above the "
     "row's batch_max_k, GPU 1000, CPU 128; long OR) at once on a device, 1 to 64 (GPU 8, "
     "CPU 2)"},
    {"TANDEM_BATCH_OR_ALONE_TERMS", "tuning",
     "terms from which an OR query of a batch call runs alone instead of in a device batch, 1 "
     "to 65536, above 1024 never (GPU 8, CPU 24)"},
    {"TANDEM_BOUNDS_CACHE_MB", "tuning",
     "MiB of a search handle's cache of bounds for other k1, b; 0: no cache (64)"},
    {"TANDEM_STAGING", "tuning",
     "THREADS or THREADS,CHUNK_MB: pinned upload staging threads, 1 to 16 (4), and chunk, "
     "1 to 256 MiB (1; 8 with THREADS alone)"},
    {"TANDEM_SEARCH_PROFILE", "tuning",
     "0, 1 or host: 1 prints per-kernel and host-phase times at exit, host the host phases "
     "only (0)"},
    {"TANDEM_LANE_KINDS", "testing", "cpu or gpu per device, comma separated"},
    {"TANDEM_FAULT_INJECT", "testing", "faults lane:build|oom|lost[@n], comma separated"},
    {"TANDEM_TEST_HANG", "testing",
     "the discovery index (0 to 1048576) of a device whose first kernel at engine open never "
     "ends (environment only)"},
    {"TANDEM_BENCH_LOAD_CORRUPT", "testing",
     "N, 1 or more: `tandem bench load` spoils the answer to arrival N of each run, to show "
     "its check fails (environment only)"},
};

const char *tdm_settings_bench_load_corrupt(void)
{
    return env("TANDEM_BENCH_LOAD_CORRUPT");
}

const tdm_settings_var *tdm_settings_vars(size_t *n)
{
    *n = sizeof vars / sizeof *vars;
    return vars;
}

/* ---- the OpenCL drivers' environment (icdhint.c) */

const char *tdm_settings_icd_vendor_dir(void)
{
    const char *v = env("OCL_ICD_VENDORS");
    struct stat st;
    return v && stat(v, &st) == 0 && S_ISDIR(st.st_mode) ? v : "/etc/OpenCL/vendors";
}

void tdm_settings_pocl_cache_dir(char *buf, size_t cap)
{
    const char *p = env("POCL_CACHE_DIR"), *x = env("XDG_CACHE_HOME"), *h = env("HOME");
    if (p)
        snprintf(buf, cap, "%s", p);
    else if (x)
        snprintf(buf, cap, "%s/pocl/kcache", x);
    else
        snprintf(buf, cap, "%s/.cache/pocl/kcache", h ? h : "");
}
