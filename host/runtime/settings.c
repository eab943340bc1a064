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
    memset(s, 0, sizeof *s);
}
