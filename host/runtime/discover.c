/* Device discovery through the ICD loader. */
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
    str_info(d, CL_DEVICE_EXTENSIONS, in->extensions, sizeof in->extensions);
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
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
            continue; /* a platform without devices is skipped, as clinfo does */
        cl_device_id *ids = calloc(nd, sizeof *ids);
        tdm_found_device *grown = realloc(devs, (n + nd) * sizeof *devs);
        if (!ids || !grown) {
            free(ids);
            free(grown ? grown : devs);
            free(plats);
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory listing devices");
        }
        devs = grown;
        clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL);
        for (cl_uint i = 0; i < nd; i++, n++) {
            devs[n].platform = plats[p];
            devs[n].device = ids[i];
            describe(plats[p], ids[i], &devs[n].info);
            devs[n].info.index = (int)n;
            devs[n].info.platform_index = (int)p;
        }
        free(ids);
    }
    free(plats);
    *out = devs;
    *count = n;
    return TDM_OK;
}

int tdm_devices_discover(tdm_device_info **out, size_t *count)
{
    if (!out || !count)
        return TDM_ERR_INVALID_ARG;
    tdm_err err = {0};
    tdm_found_device *devs;
    size_t n;
    int rc = tdm_discover(&devs, &n, &err);
    tdm_err_clear(&err);
    *out = NULL;
    *count = 0;
    if (rc != TDM_OK)
        return rc;
    tdm_device_info *infos = calloc(n ? n : 1, sizeof *infos);
    if (!infos) {
        free(devs);
        return TDM_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        infos[i] = devs[i].info;
    free(devs);
    *out = infos;
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
