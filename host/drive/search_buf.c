/* Device buffers and uploads the drivers share (drive/search.h): the scratch
 * pools' lock, a pooled buffer grown to fit, a batch's non-blocking upload,
 * its pinned staging and its drain after a failure. Apart from the drivers, so that the single
 * path (search_dev.c), the device batches (search_batch_dev.c) and ranked
 * AND's (search_batch_and.c) use them without calling one another back. */
#include <string.h>

#include "search.h"

void tdm_search_pool_lock(tdm_sdev *sd)
{
    while (__atomic_exchange_n(&sd->pool_lock, 1, __ATOMIC_ACQUIRE))
        ;
}

void tdm_search_pool_unlock(tdm_sdev *sd)
{
    __atomic_store_n(&sd->pool_lock, 0, __ATOMIC_RELEASE);
}

int tdm_search_buffer_fit(tdm_device *d, cl_mem_flags flags, cl_mem *m, size_t *cap,
                          size_t bytes, tdm_err *err)
{
    if (bytes < 4)
        bytes = 4;
    if (*m && *cap >= bytes)
        return TDM_OK;
    if (*m)
        clReleaseMemObject(*m);
    *m = NULL;
    *cap = 0;
    size_t want = bytes + bytes / 2, most = (size_t)d->info.max_alloc_bytes;
    if (most && want > most)
        want = bytes;
    int rc = tdm_buffer_create(d, flags, want, NULL, m, err);
    if (rc == TDM_OK)
        *cap = want;
    return rc;
}

int tdm_search_batch_upload(tdm_device *d, cl_mem m, size_t bytes, const void *src, uint64_t *up,
                            tdm_err *err)
{
    if (!bytes)
        return TDM_OK;
    cl_int rc = clEnqueueWriteBuffer(d->queue, m, CL_FALSE, 0, bytes, src, 0, NULL, NULL);
    if (rc != CL_SUCCESS)
        return tdm_cl_fail(err, rc, "search batch: clEnqueueWriteBuffer");
    *up += bytes;
    return TDM_OK;
}

void tdm_search_batch_drain(tdm_device *d)
{
    cl_event e = NULL;
    if (clEnqueueMarkerWithWaitList(d->queue, 0, NULL, &e) == CL_SUCCESS && e) {
        clWaitForEvents(1, &e);
        clReleaseEvent(e);
    }
}

size_t tdm_spinned_size(size_t bytes)
{
    return (bytes + 63) & ~(size_t)63;
}

/* Mapped on the transfer queue, which runs beside the compute queue: a
 * blocking map there does not wait for other batches' kernels. */
static cl_command_queue map_queue(const tdm_device *d)
{
    return d->xfer ? d->xfer : d->queue;
}

void tdm_spinned_free(tdm_device *d, tdm_spinned *s)
{
    if (s->host) {
        cl_event u = NULL;
        if (clEnqueueUnmapMemObject(map_queue(d), s->m, s->host, 0, NULL, &u) == CL_SUCCESS &&
            u) {
            clWaitForEvents(1, &u);
            clReleaseEvent(u);
        }
    }
    if (s->m)
        clReleaseMemObject(s->m);
    *s = (tdm_spinned){0};
}

int tdm_spinned_fit(tdm_device *d, tdm_spinned *s, size_t bytes, tdm_err *err)
{
    s->used = 0;
    if (s->m && s->cap >= bytes)
        return TDM_OK;
    tdm_spinned_free(d, s);
    size_t want = bytes + bytes / 2 < 4096 ? 4096 : bytes + bytes / 2;
    cl_int rc = CL_SUCCESS;
    s->m = clCreateBuffer(d->ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_ONLY, want, NULL, &rc);
    if (rc == CL_SUCCESS)
        s->host = clEnqueueMapBuffer(map_queue(d), s->m, CL_TRUE, CL_MAP_WRITE, 0, want, 0, NULL,
                                     NULL, &rc);
    if (rc != CL_SUCCESS) {
        tdm_spinned_free(d, s);
        return tdm_cl_fail(err, rc, "search batch: pinned staging");
    }
    s->cap = want;
    return TDM_OK;
}

const void *tdm_spinned_put(tdm_spinned *s, const void *src, size_t bytes)
{
    unsigned char *at = s->host + s->used;
    memcpy(at, src, bytes);
    s->used += tdm_spinned_size(bytes);
    return at;
}
