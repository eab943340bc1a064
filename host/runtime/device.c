/* Per-device machinery beside the engine: the transfer queue, and enqueueing
 * kernels and copies CLBlast style (wait list in, event out). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcache.h"
#include "launch_guard.h"
#include "probe.h"
#include "runtime.h"

static int platform_major(cl_platform_id p)
{
    char v[128] = "";
    int major = 1, minor = 0;
    clGetPlatformInfo(p, CL_PLATFORM_VERSION, sizeof v - 1, v, NULL);
    sscanf(v, "OpenCL %d.%d", &major, &minor);
    return major;
}

int tdm_queue_create(tdm_device *d, cl_command_queue *out, tdm_err *err)
{
    cl_int rc;
    if (platform_major(d->platform) >= 2) {
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
        *out = clCreateCommandQueueWithProperties(d->ctx, d->id, props, &rc);
    } else {
        *out = clCreateCommandQueue(d->ctx, d->id, CL_QUEUE_PROFILING_ENABLE, &rc);
    }
    if (rc != CL_SUCCESS) {
        *out = NULL;
        tdm_cl_fail(err, rc, "clCreateCommandQueue");
        tdm_err_append(err, " on %s", d->info.name);
        return err->code;
    }
    return TDM_OK;
}

int tdm_queue_create_plain(tdm_device *d, cl_command_queue *out, tdm_err *err)
{
    cl_int rc;
    *out = clCreateCommandQueue(d->ctx, d->id, 0, &rc);
    if (rc != CL_SUCCESS) {
        *out = NULL;
        tdm_cl_fail(err, rc, "clCreateCommandQueue (no profiling)");
        tdm_err_append(err, " on %s", d->info.name);
        return err->code;
    }
    return TDM_OK;
}

/* The probe state (probe.h) is made and freed with the device; probe.c fills
 * it. */
int tdm_probe_new(struct tdm_probe **out, tdm_err *err)
{
    struct tdm_probe *p = calloc(1, sizeof *p);
    if (!p || pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        *out = NULL;
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for device probes");
    }
    *out = p;
    return TDM_OK;
}

void tdm_probe_free(struct tdm_probe *p)
{
    if (!p)
        return;
    pthread_mutex_destroy(&p->lock);
    free(p);
}

int tdm_device_start(tdm_device *d, tdm_err *err)
{
    int st = tdm_queue_create(d, &d->xfer, err);
    if (st == TDM_OK)
        st = tdm_queue_create_plain(d, &d->lat, err);
    if (st == TDM_OK)
        st = tdm_kcache_new(d, &d->kcache, err);
    if (st == TDM_OK)
        st = tdm_probe_new(&d->probe, err);
    return st;
}

void tdm_device_stop(tdm_device *d)
{
    /* Commands still queued may use pooled kernels and buffers. */
    if (d->queue)
        clFinish(d->queue);
    if (d->xfer) {
        clFinish(d->xfer);
        clReleaseCommandQueue(d->xfer);
        d->xfer = NULL;
    }
    if (d->lat) {
        clFinish(d->lat);
        clReleaseCommandQueue(d->lat);
        d->lat = NULL;
    }
    tdm_kcache_free(d->kcache);
    d->kcache = NULL;
    tdm_probe_free(d->probe);
    d->probe = NULL;
}

void tdm_device_swap_program(tdm_device *d, cl_program prog, size_t wg_size, cl_program *old,
                             size_t *old_wg)
{
    clFinish(d->queue);
    clFinish(d->xfer);
    if (d->lat)
        clFinish(d->lat);
    tdm_kcache_clear(d->kcache);
    *old = d->program;
    *old_wg = d->wg_size;
    d->program = prog;
    d->wg_size = wg_size;
    __atomic_store_n(&d->merge_local, 0, __ATOMIC_RELAXED); /* found again for these kernels */
}

int tdm_kernel_launch(tdm_device *d, const char *name, const tdm_karg *args, cl_uint nargs,
                      size_t global, size_t local, cl_uint nwait, const cl_event *wait,
                      cl_event *ev, tdm_err *err)
{
    return tdm_kernel_launch_on(d, NULL, name, args, nargs, global, local, nwait, wait, ev, err);
}

int tdm_kernel_launch_on(tdm_device *d, cl_command_queue q, const char *name,
                         const tdm_karg *args, cl_uint nargs, size_t global, size_t local,
                         cl_uint nwait, const cl_event *wait, cl_event *ev, tdm_err *err)
{
    if (ev)
        *ev = NULL;
    cl_kernel k;
    int st = tdm_kernel_borrow(d, name, &k, err);
    if (st != TDM_OK)
        return st;
    cl_int rc = CL_SUCCESS;
    cl_uint i = 0;
    for (; rc == CL_SUCCESS && i < nargs; i++)
        rc = clSetKernelArg(k, i, args[i].size, args[i].p);
    if (rc != CL_SUCCESS) {
        tdm_cl_fail(err, rc, "clSetKernelArg");
        tdm_err_append(err, " (argument %u of kernel '%s' on %s)", i - 1, name, d->info.name);
    } else if ((rc = tdm_kernel_enqueue(d, q ? q : d->queue, k, name, global, local, nwait,
                                        wait, ev)) != CL_SUCCESS) {
        tdm_cl_fail(err, rc, "clEnqueueNDRangeKernel");
        tdm_err_append(err, " (kernel '%s', %zu work-items in groups of %zu, on %s, which "
                       "allows groups of %zu for it)", name, global, local, d->info.name,
                       tdm_kernel_max_wg(d, k));
    }
    tdm_kernel_return(d, k);
    return rc == CL_SUCCESS ? TDM_OK : err->code;
}

cl_int tdm_kernel_enqueue(tdm_device *d, cl_command_queue q, cl_kernel k, const char *name,
                          size_t global, size_t local, cl_uint nwait, const cl_event *wait,
                          cl_event *ev)
{
    const cl_event *w = nwait ? wait : NULL;
    size_t max_wg = tdm_kernel_max_wg(d, k);
    if (max_wg && local > max_wg) { /* the specification's limit, whatever a driver forgives */
        if (ev)
            *ev = NULL;
        return CL_INVALID_WORK_GROUP_SIZE;
    }
    tdm_wait_flush(q, nwait, w);
    if (!d->launch_guard)
        return clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, nwait, w, ev);
    int slot = tdm_launch_guard_enter(q, name, local);
    cl_event e = NULL;
    cl_int rc = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, nwait, w, &e);
    if (rc != CL_SUCCESS) {
        tdm_launch_guard_left(slot);
        if (ev)
            *ev = NULL;
        return rc;
    }
    tdm_launch_guard_armed(slot, e);
    if (ev)
        *ev = e;
    else
        clReleaseEvent(e); /* the command keeps it until it completes (and calls back) */
    return CL_SUCCESS;
}

/* Waits for ev (when the caller wants no event back) and releases it. */
static cl_int finish(cl_event e, cl_event *ev)
{
    if (ev) {
        *ev = e;
        return CL_SUCCESS;
    }
    cl_int rc = clWaitForEvents(1, &e);
    clReleaseEvent(e);
    return rc;
}

/* One copy on the transfer queue, either way (tdm_upload, tdm_download). */
static int transfer(tdm_device *d, int write, cl_mem buf, size_t offset, size_t bytes,
                    void *host, cl_uint nwait, const cl_event *wait, cl_event *ev, tdm_err *err)
{
    cl_event e = NULL;
    if (ev)
        *ev = NULL;
    const cl_event *w = nwait ? wait : NULL;
    tdm_wait_flush(d->xfer, nwait, w);
    cl_int rc = write ? clEnqueueWriteBuffer(d->xfer, buf, CL_FALSE, offset, bytes, host, nwait,
                                             w, &e)
                      : clEnqueueReadBuffer(d->xfer, buf, CL_FALSE, offset, bytes, host, nwait,
                                            w, &e);
    if (rc == CL_SUCCESS)
        rc = finish(e, ev);
    if (rc != CL_SUCCESS) {
        tdm_cl_fail(err, rc, write ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer");
        tdm_err_append(err, " (%zu bytes %s %s)", bytes, write ? "to" : "from", d->info.name);
        return err->code;
    }
    return TDM_OK;
}

int tdm_upload(tdm_device *d, cl_mem dst, size_t offset, size_t bytes, const void *src,
               cl_uint nwait, const cl_event *wait, cl_event *ev, tdm_err *err)
{
    return transfer(d, 1, dst, offset, bytes, (void *)src, nwait, wait, ev, err);
}

int tdm_download(tdm_device *d, cl_mem src, size_t offset, size_t bytes, void *dst,
                 cl_uint nwait, const cl_event *wait, cl_event *ev, tdm_err *err)
{
    return transfer(d, 0, src, offset, bytes, dst, nwait, wait, ev, err);
}
