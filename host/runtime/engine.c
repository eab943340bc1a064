/* The engine: selected devices, each with a context, a queue and kernels.cl. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "runtime.h"

struct tdm_engine {
    tdm_device *dev;
    int ndev;
    tdm_err err;
};

/* The message of the last failed tdm_engine_open on this thread. */
static _Thread_local tdm_err open_err;

static int platform_major(cl_platform_id p)
{
    char v[128] = "";
    int major = 1, minor = 0;
    clGetPlatformInfo(p, CL_PLATFORM_VERSION, sizeof v - 1, v, NULL);
    sscanf(v, "OpenCL %d.%d", &major, &minor);
    return major;
}

static cl_command_queue make_queue(tdm_device *d, cl_int *rc)
{
    if (platform_major(d->platform) >= 2) {
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
        return clCreateCommandQueueWithProperties(d->ctx, d->id, props, rc);
    }
    return clCreateCommandQueue(d->ctx, d->id, CL_QUEUE_PROFILING_ENABLE, rc);
}

/* The preferred work-group multiple, read from the program's first kernel. */
static size_t probe_wg_multiple(tdm_device *d)
{
    char names[4096] = "";
    size_t m = 0;
    if (clGetProgramInfo(d->program, CL_PROGRAM_KERNEL_NAMES, sizeof names - 1, names, NULL) !=
        CL_SUCCESS)
        return 0;
    char *semi = strchr(names, ';');
    if (semi)
        *semi = '\0';
    cl_int rc;
    cl_kernel k = clCreateKernel(d->program, names, &rc);
    if (rc != CL_SUCCESS)
        return 0;
    clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof m,
                             &m, NULL);
    clReleaseKernel(k);
    return m;
}

static void device_release(tdm_device *d)
{
    if (d->program) clReleaseProgram(d->program);
    if (d->queue) clReleaseCommandQueue(d->queue);
    if (d->ctx) clReleaseContext(d->ctx);
    memset(d, 0, sizeof *d);
}

static int build_kernels(tdm_device *d, const tdm_engine_options *o, tdm_err *err)
{
    char options[2048];
    tdm_build_options(&d->info, d->wg_size, d->nv_shuffle, o->build_options, options,
                      sizeof options);
    tdm_cache_cfg cache;
    tdm_cache_config(o->cache_mode, o->cache_dir, &d->info, &cache);
    const char *src = o->kernel_source ? o->kernel_source : tdm_kernels_source;
    size_t len = o->kernel_source ? strlen(o->kernel_source) : tdm_kernels_source_len;
    return tdm_program_get(&cache, d->ctx, d->id, &d->info, src, len, options, &d->program,
                           &d->from_cache, err);
}

static int device_init(tdm_device *d, const tdm_found_device *f, const tdm_engine_options *o,
                       tdm_err *err)
{
    cl_int rc;
    memset(d, 0, sizeof *d);
    d->platform = f->platform;
    d->id = f->device;
    d->info = f->info;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)f->platform, 0};
    d->ctx = clCreateContext(props, 1, &d->id, NULL, NULL, &rc);
    if (rc != CL_SUCCESS)
        return tdm_cl_fail(err, rc, "clCreateContext");
    d->queue = make_queue(d, &rc);
    if (rc != CL_SUCCESS)
        return tdm_cl_fail(err, rc, "clCreateCommandQueue");
    d->wg_size = tdm_choose_wg_size(&d->info);
    d->nv_shuffle = tdm_nv_shuffle_ok(d->id, &d->info);
    int st = build_kernels(d, o, err);
    if (st == TDM_ERR_BUILD && d->nv_shuffle) {
        /* a driver that rejects the inline PTX still gets the portable kernels */
        d->nv_shuffle = 0;
        tdm_err_clear(err);
        st = build_kernels(d, o, err);
    }
    if (st != TDM_OK)
        return st;
    d->info.preferred_wg_multiple = probe_wg_multiple(d);
    return TDM_OK;
}

/* Opens every chosen device; a device that fails is skipped and named in the
 * engine's message, so one broken driver does not take the others down. */
static int open_devices(tdm_engine *e, const tdm_found_device *found, size_t n,
                        const unsigned char *chosen, const tdm_engine_options *o)
{
    int first_fail = TDM_OK;
    for (size_t i = 0; i < n; i++) {
        if (!chosen[i])
            continue;
        tdm_err derr = {0};
        int st = device_init(&e->dev[e->ndev], &found[i], o, &derr);
        if (st == TDM_OK) {
            e->ndev++;
        } else {
            device_release(&e->dev[e->ndev]);
            if (first_fail == TDM_OK)
                first_fail = st;
            tdm_err_append(&e->err, "%sdevice [%zu] %s (%s): %s: %s", e->err.msg ? "\n" : "",
                           i, found[i].info.name, found[i].info.platform, tdm_strerror(st),
                           tdm_err_msg(&derr));
        }
        tdm_err_clear(&derr);
    }
    if (e->ndev == 0) {
        e->err.code = first_fail;
        return first_fail;
    }
    return TDM_OK;
}

int tdm_engine_open(const tdm_engine_options *opts, tdm_engine **out)
{
    tdm_engine_options none = {0};
    const tdm_engine_options *o = opts ? opts : &none;
    tdm_err_clear(&open_err);
    if (!out)
        return tdm_err_set(&open_err, TDM_ERR_INVALID_ARG, "tdm_engine_open: out is NULL");
    *out = NULL;
    tdm_found_device *found = NULL;
    size_t n = 0;
    int st = tdm_discover(&found, &n, &open_err);
    if (st != TDM_OK)
        return st;
    const char *spec = o->devices ? o->devices : getenv("TANDEM_DEVICES");
    unsigned char *chosen = calloc(n ? n : 1, 1);
    tdm_engine *e = calloc(1, sizeof *e);
    if (e)
        e->dev = calloc(n ? n : 1, sizeof *e->dev);
    if (!chosen || !e || !e->dev) {
        st = tdm_err_set(&open_err, TDM_ERR_NOMEM, "out of memory opening the engine");
    } else if ((st = tdm_select_devices(spec && *spec ? spec : "all", found, n, chosen,
                                        &open_err)) == TDM_OK &&
               (st = open_devices(e, found, n, chosen, o)) != TDM_OK) {
        tdm_err_set(&open_err, st, "no selected device could be opened:\n%s",
                    tdm_err_msg(&e->err));
    }
    free(found);
    free(chosen);
    if (st != TDM_OK) {
        tdm_engine_close(e);
        return st;
    }
    *out = e;
    return TDM_OK;
}

void tdm_engine_close(tdm_engine *e)
{
    if (!e)
        return;
    for (int i = 0; i < e->ndev; i++)
        device_release(&e->dev[i]);
    free(e->dev);
    tdm_err_clear(&e->err);
    free(e);
}

const char *tdm_engine_errmsg(const tdm_engine *e)
{
    return e ? tdm_err_msg(&e->err) : tdm_err_msg(&open_err);
}

int tdm_engine_device_count(const tdm_engine *e) { return e ? e->ndev : 0; }

int tdm_engine_device_info(const tdm_engine *e, int i, tdm_device_info *info)
{
    if (!e || !info || i < 0 || i >= e->ndev)
        return TDM_ERR_INVALID_ARG;
    *info = e->dev[i].info;
    return TDM_OK;
}

int tdm_engine_device_cached(const tdm_engine *e, int i)
{
    if (!e || i < 0 || i >= e->ndev)
        return TDM_ERR_INVALID_ARG;
    return e->dev[i].from_cache;
}

tdm_device *tdm_engine_device(tdm_engine *e, int i)
{
    return e && i >= 0 && i < e->ndev ? &e->dev[i] : NULL;
}

tdm_err *tdm_engine_err(tdm_engine *e) { return e ? &e->err : NULL; }
