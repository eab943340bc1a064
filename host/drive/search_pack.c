/* The packed upload of a search call (search_pack.h). */
#include "search_pack.h"

#include <stdlib.h>
#include <string.h>

static void release(tdm_spack *pk)
{
    for (int i = 0; i < TDM_SPACK_MAX; i++)
        if (pk->sub[i]) {
            clReleaseMemObject(pk->sub[i]);
            pk->sub[i] = NULL;
        }
    if (pk->parent)
        clReleaseMemObject(pk->parent);
    pk->parent = NULL;
}

/* The staging copy freed: unmapped and released where pinned (not waited
 * for on a device the watchdog abandoned: the unmap would wait behind its
 * stuck commands). */
static void host_free(const tdm_device *d, tdm_spack *pk)
{
    if (pk->hostbuf && pk->host && !__atomic_load_n(&d->hung, __ATOMIC_RELAXED)) {
        cl_event u = NULL;
        if (clEnqueueUnmapMemObject(d->queue, pk->hostbuf, pk->host, 0, NULL, &u) ==
                CL_SUCCESS &&
            u) {
            clWaitForEvents(1, &u);
            clReleaseEvent(u);
        }
    }
    if (pk->hostbuf)
        clReleaseMemObject(pk->hostbuf);
    else
        free(pk->host);
    pk->hostbuf = NULL;
    pk->host = NULL;
}

void tdm_spack_free(const tdm_device *d, tdm_spack *pk)
{
    release(pk);
    host_free(d, pk);
    memset(pk, 0, sizeof *pk);
}

/* A staging copy of `bytes`: pinned where pk->pinned (the old one freed). */
static int host_alloc(tdm_device *d, tdm_spack *pk, size_t bytes, tdm_err *err)
{
    if (!pk->pinned) {
        unsigned char *h = realloc(pk->host, bytes);
        if (!h)
            return tdm_err_set(err, TDM_ERR_NOMEM, "search: out of memory for %zu bytes", bytes);
        pk->host = h;
        return TDM_OK;
    }
    host_free(d, pk);
    cl_int rc = CL_SUCCESS;
    pk->hostbuf = clCreateBuffer(d->ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_ONLY, bytes, NULL,
                                 &rc);
    if (rc == CL_SUCCESS)
        pk->host = clEnqueueMapBuffer(d->queue, pk->hostbuf, CL_TRUE, CL_MAP_WRITE, 0, bytes, 0,
                                      NULL, NULL, &rc);
    if (rc != CL_SUCCESS) {
        if (pk->hostbuf)
            clReleaseMemObject(pk->hostbuf);
        pk->hostbuf = NULL;
        pk->host = NULL;
        tdm_cl_fail(err, rc, "search: pinned staging");
        tdm_err_append(err, " (%zu bytes on %s)", bytes, d->info.name);
        return err->code;
    }
    return TDM_OK;
}

/* Bytes a sub-buffer's origin must be a multiple of. */
static size_t base_align(const tdm_device *d)
{
    cl_uint bits = 0;
    if (clGetDeviceInfo(d->id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL) !=
            CL_SUCCESS ||
        bits < 32)
        bits = 4096; /* the largest any driver reports */
    return bits / 8;
}

static size_t round_to(size_t x, size_t a) { return (x + a - 1) / a * a; }

static int layout(tdm_device *d, tdm_spack *pk, int n, tdm_err *err)
{
    size_t a = base_align(d), at = 0;
    for (int i = 0; i < n; i++) {
        pk->off[i] = at;
        at += round_to(pk->cap[i], a);
    }
    release(pk);
    int rc = host_alloc(d, pk, at ? at : 4, err);
    if (rc)
        return rc;
    pk->total = at;
    rc = tdm_buffer_create(d, CL_MEM_READ_WRITE, at ? at : 4, NULL, &pk->parent, err);
    for (int i = 0; rc == TDM_OK && i < n; i++) {
        if (!pk->cap[i])
            continue;
        cl_buffer_region r = {pk->off[i], pk->cap[i]};
        cl_int cr;
        pk->sub[i] = clCreateSubBuffer(pk->parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                       &r, &cr);
        if (cr != CL_SUCCESS) {
            pk->sub[i] = NULL;
            rc = tdm_cl_fail(err, cr, "clCreateSubBuffer");
            tdm_err_append(err, " (%zu bytes at %zu of a search's upload on %s)", r.size,
                           r.origin, d->info.name);
        }
    }
    if (rc) {
        release(pk);
        memset(pk->cap, 0, sizeof pk->cap);
    }
    return rc;
}

int tdm_spack_ensure(tdm_device *d, tdm_spack *pk, const size_t *need, int n, tdm_err *err)
{
    if (n > TDM_SPACK_MAX)
        return tdm_err_set(err, TDM_ERR_INTERNAL, "search: %d upload regions", n);
    int short_ = !pk->parent;
    for (int i = 0; i < n; i++)
        short_ |= need[i] > pk->cap[i];
    if (!short_)
        return TDM_OK;
    for (int i = 0; i < n; i++)
        if (need[i] > pk->cap[i])
            pk->cap[i] = need[i] + need[i] / 2; /* room to grow */
    return layout(d, pk, n, err);
}
