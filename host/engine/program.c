/* Compiling kernels.cl for one device: options per device, build logs. */
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "engine_testing.h"
#include "program.h"
#include "runtime/runtime.h"

size_t tdm_choose_wg_size(const tdm_settings *settings, const tdm_device_info *info)
{
    /* GPUs: 128. On the H200 the block decoders ran 3-7 % of the copy
     * bandwidth faster than at 256 (their barriers wait on fewer warps) and
     * no slower than at 64 or 32 but for VByte1024 and PEF (BENCHMARKS.md).
     * CPUs: 256. The wg_size setting (TANDEM_WG_SIZE, a power of two)
     * overrides both for tuning; a device with a smaller maximum gets its
     * maximum, a power of two. */
    size_t wg = info->type == TDM_DEVICE_GPU ? 128 : 256;
    if (settings && settings->wg_size)
        wg = settings->wg_size;
    while (wg > info->max_work_group_size && wg > 1)
        wg >>= 1;
    return wg;
}

static int is_nvidia(const tdm_device_info *info)
{
    return !tdm_is_pocl(info) && tdm_strcasestr(info->vendor, "nvidia") != NULL;
}

int tdm_nv_shuffle_ok(const tdm_settings *settings, cl_device_id dev, const tdm_device_info *info)
{
    /* shfl.sync needs PTX 6.0 and Volta's independent thread scheduling
     * semantics; older NVIDIA GPUs and other vendors take the portable path. */
    const cl_device_info cc_major_nv = 0x4000; /* CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV */
    cl_uint major = 0;
    if ((settings && !settings->nv_shuffle) || !is_nvidia(info) ||
        !strstr(info->extensions, "cl_nv_device_attribute_query"))
        return 0;
    if (clGetDeviceInfo(dev, cc_major_nv, sizeof major, &major, NULL) != CL_SUCCESS)
        return 0;
    return major >= 7;
}

void tdm_build_options(const tdm_device_info *info, size_t wg_size, int nv_shuffle,
                       const char *extra, char *buf, size_t len)
{
    size_t pos = 0;
    buf[0] = '\0';
    tdm_bufprintf(buf, len, &pos, "-cl-std=CL1.2 -DTDM_WG_SIZE=%zu -DTDM_LOCAL_MEM=%llu",
                  wg_size, (unsigned long long)info->local_mem_bytes);
    if (nv_shuffle && wg_size % 32 == 0) /* whole warps only */
        tdm_bufprintf(buf, len, &pos, " -DTDM_NV_SHFL=1");
    /* NVIDIA's compiler fuses a*b+c into an FMA despite FP_CONTRACT OFF;
     * scores go through PTX mul.rn/add.rn there (cl/common.cl), which it
     * never fuses, so every device rounds alike. */
    if (is_nvidia(info))
        tdm_bufprintf(buf, len, &pos, " -DTDM_NV_PTX=1");
    if (extra && *extra)
        tdm_bufprintf(buf, len, &pos, " %s", extra);
}

static void append_log(cl_program prog, cl_device_id dev, tdm_err *err)
{
    size_t n = 0;
    if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS ||
        n == 0)
        return;
    char *log = malloc(n + 1);
    if (!log)
        return;
    if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL) == CL_SUCCESS) {
        log[n] = '\0';
        tdm_err_append(err, "\n--- build log ---\n%s", log);
    }
    free(log);
}

int tdm_program_build(cl_context ctx, cl_device_id dev, const char *source, size_t len,
                      const char *options, cl_program *out, tdm_err *err)
{
    cl_int rc;
    *out = NULL;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, &len, &rc);
    if (rc != CL_SUCCESS)
        return tdm_cl_fail(err, rc, "clCreateProgramWithSource");
    rc = clBuildProgram(prog, 1, &dev, options, NULL, NULL);
    if (rc != CL_SUCCESS) {
        tdm_err_set(err, TDM_ERR_BUILD, "kernel build failed: %s (%d) with options \"%s\"",
                    tdm_cl_errname(rc), (int)rc, options);
        append_log(prog, dev, err);
        clReleaseProgram(prog);
        return TDM_ERR_BUILD;
    }
    *out = prog;
    return TDM_OK;
}

/* Devices whose builds the tests break (tdm_test_break_build). */
static cl_device_id broken[8];
static int nbroken;

void tdm_test_break_build(cl_device_id dev)
{
    if (!dev)
        nbroken = 0;
    else if (nbroken < (int)(sizeof broken / sizeof *broken))
        broken[nbroken++] = dev;
}

int tdm_test_build_broken(cl_device_id dev)
{
    for (int i = 0; i < nbroken; i++)
        if (broken[i] == dev)
            return 1;
    return 0;
}
