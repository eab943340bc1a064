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

void tdm_spack_free(tdm_spack *pk)
{
    release(pk);
    free(pk->host);
    memset(pk, 0, sizeof *pk);
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
    unsigned char *h = realloc(pk->host, at ? at : 1);
    if (!h)
        return tdm_err_set(err, TDM_ERR_NOMEM, "search: out of memory for %zu bytes", at);
    pk->host = h;
    pk->total = at;
    int rc = tdm_buffer_create(d, CL_MEM_READ_WRITE, at ? at : 4, NULL, &pk->parent, err);
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
