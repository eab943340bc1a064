/* Device discovery through the ICD loader. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "runtime.h"

static void str_info(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
    buf[0] = '\0';
    if (clGetDeviceInfo(d, what, len, buf, NULL) != CL_SUCCESS) {
        /* Too long for buf (extensions): read it whole and truncate. */
        size_t need = 0;
        if (clGetDeviceInfo(d, what, 0, NULL, &need) == CL_SUCCESS && need > 0) {
            char *tmp = malloc(need);
            if (tmp && clGetDeviceInfo(d, what, need, tmp, NULL) == CL_SUCCESS)
                tdm_strlcpy(buf, tmp, len);
            free(tmp);
        }
    }
    buf[len - 1] = '\0';
    tdm_strtrim(buf);
}

/* A whole string property, malloc'd (never truncated); NULL on no memory. */
static char *str_info_dup(cl_device_id d, cl_device_info what)
{
    size_t need = 0;
    char *s = NULL;
    if (clGetDeviceInfo(d, what, 0, NULL, &need) == CL_SUCCESS && need > 0 &&
        (s = malloc(need + 1)) && clGetDeviceInfo(d, what, need, s, NULL) == CL_SUCCESS) {
        s[need] = '\0';
        tdm_strtrim(s);
        return s;
    }
    free(s);
    return strdup("");
}

static int map_type(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU) return TDM_DEVICE_GPU;
    if (t & CL_DEVICE_TYPE_CPU) return TDM_DEVICE_CPU;
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return TDM_DEVICE_ACCELERATOR;
    return TDM_DEVICE_OTHER;
}

static void describe(cl_platform_id p, cl_device_id d, tdm_device_info *in)
{
    cl_device_type t = 0;
    cl_uint u = 0;
    cl_ulong ul = 0;
    size_t sz = 0;
    memset(in, 0, sizeof *in);
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof in->platform, in->platform, NULL);
    in->platform[sizeof in->platform - 1] = '\0';
    tdm_strtrim(in->platform);
    if (clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL) == CL_SUCCESS)
        in->type = map_type(t);
    str_info(d, CL_DEVICE_VENDOR, in->vendor, sizeof in->vendor);
    str_info(d, CL_DEVICE_NAME, in->name, sizeof in->name);
    str_info(d, CL_DRIVER_VERSION, in->driver_version, sizeof in->driver_version);
    str_info(d, CL_DEVICE_VERSION, in->device_version, sizeof in->device_version);
    str_info(d, CL_DEVICE_OPENCL_C_VERSION, in->opencl_c_version, sizeof in->opencl_c_version);
    in->extensions = str_info_dup(d, CL_DEVICE_EXTENSIONS); /* packed later; NULL: no memory */
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof u, &u, NULL) == CL_SUCCESS)
        in->compute_units = u;
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof u, &u, NULL) == CL_SUCCESS)
        in->max_clock_mhz = u;
    if (clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof ul, &ul, NULL) == CL_SUCCESS)
        in->global_mem_bytes = ul;
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ul, &ul, NULL) == CL_SUCCESS)
        in->max_alloc_bytes = ul;
    if (clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof ul, &ul, NULL) == CL_SUCCESS)
        in->local_mem_bytes = ul;
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof sz, &sz, NULL) == CL_SUCCESS)
        in->max_work_group_size = sz;
}

/* Copies n items of item_size bytes, each with a `const char *` at ext_off,
 * into one malloc'd block that also holds the strings, so that one free()
 * releases everything. Frees the original strings when free_strings. */
static void *pack(const void *items, size_t n, size_t item_size, size_t ext_off,
                  int free_strings)
{
    size_t total = n * item_size;
    for (size_t i = 0; i < n; i++)
        total += strlen(*(const char *const *)((const char *)items + i * item_size + ext_off)) + 1;
    char *block = malloc(total ? total : 1);
    if (block) {
        if (n) /* items is NULL when no device was found */
            memcpy(block, items, n * item_size);
        char *str = block + n * item_size;
        for (size_t i = 0; i < n; i++) {
            const char **slot = (const char **)(block + i * item_size + ext_off);
            size_t len = strlen(*slot) + 1;
            memcpy(str, *slot, len);
            *slot = str;
            str += len;
        }
    }
    for (size_t i = 0; free_strings && i < n; i++)
        free(*(char **)((char *)items + i * item_size + ext_off));
    return block;
}

static void free_found(tdm_found_device *devs, size_t n)
{
    for (size_t i = 0; devs && i < n; i++)
        free((char *)devs[i].info.extensions);
    free(devs);
}

/* Every device of platform p appended to *devs (*n of them so far). */
static int add_platform(cl_platform_id plat, int p, tdm_found_device **devs, size_t *n,
                        tdm_err *err)
{
    cl_uint nd = 0;
    if (clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
        return TDM_OK; /* a platform without devices is skipped, as clinfo does */
    cl_device_id *ids = calloc(nd, sizeof *ids);
    tdm_found_device *grown = realloc(*devs, (*n + nd) * sizeof **devs);
    if (grown)
        *devs = grown;
    if (!ids || !grown) {
        free(ids);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory listing devices");
    }
    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, nd, ids, NULL);
    int rc = TDM_OK;
    for (cl_uint i = 0; i < nd; i++) {
        tdm_found_device *f = &(*devs)[*n];
        f->platform = plat;
        f->device = ids[i];
        describe(plat, ids[i], &f->info);
        if (!f->info.extensions) {
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory describing a device");
            break;
        }
        f->info.index = (int)*n;
        f->info.platform_index = p;
        ++*n;
    }
    free(ids);
    return rc;
}

int tdm_discover(tdm_found_device **out, size_t *count, tdm_err *err)
{
    *out = NULL;
    *count = 0;
    cl_uint np = 0;
    cl_int rc = clGetPlatformIDs(0, NULL, &np);
    if (rc == CL_PLATFORM_NOT_FOUND_KHR || np == 0)
        return TDM_OK; /* no ICD installed: zero devices, not an error */
    if (rc != CL_SUCCESS)
        return tdm_cl_fail(err, rc, "clGetPlatformIDs");
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory listing platforms");
    clGetPlatformIDs(np, plats, NULL);
    tdm_found_device *devs = NULL;
    size_t n = 0;
    int st = TDM_OK;
    for (cl_uint p = 0; st == TDM_OK && p < np; p++)
        st = add_platform(plats[p], (int)p, &devs, &n, err);
    free(plats);
    if (st != TDM_OK) {
        free_found(devs, n);
        return st;
    }
    *out = pack(devs, n, sizeof *devs,
                offsetof(tdm_found_device, info) + offsetof(tdm_device_info, extensions), 1);
    free(devs);
    if (!*out)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory listing devices");
    *count = n;
    return TDM_OK;
}

int tdm_devices_discover(tdm_device_info **out, size_t *count)
{
    tdm_api_enter();
    if (!out || !count)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_devices_discover: out or count is NULL");
    tdm_err err = {0};
    tdm_found_device *devs;
    size_t n;
    *out = NULL;
    *count = 0;
    int rc = tdm_discover(&devs, &n, &err);
    if (rc != TDM_OK)
        return tdm_api_fail_err(&err, rc);
    tdm_device_info *infos = calloc(n ? n : 1, sizeof *infos);
    for (size_t i = 0; infos && i < n; i++)
        infos[i] = devs[i].info;
    tdm_device_info *packed =
        infos ? pack(infos, n, sizeof *infos, offsetof(tdm_device_info, extensions), 0) : NULL;
    free(infos);
    free(devs);
    if (!packed)
        return tdm_api_fail(TDM_ERR_NOMEM, "out of memory listing devices");
    *out = packed;
    *count = n;
    return TDM_OK;
}

const char *tdm_device_type_name(int type)
{
    switch (type) {
    case TDM_DEVICE_CPU: return "CPU";
    case TDM_DEVICE_GPU: return "GPU";
    case TDM_DEVICE_ACCELERATOR: return "ACCELERATOR";
    default: return "OTHER";
    }
}

int tdm_is_pocl(const tdm_device_info *info)
{
    return tdm_strcasestr(info->platform, "portable computing language") != NULL ||
           tdm_strcasestr(info->platform, "pocl") != NULL;
}
