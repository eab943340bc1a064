/* Random access on a device (gather.h): one work-item per position. */
#include "gather.h"

#include <stdlib.h>

#include "tandem.h"

const char *tdm_codec_gather_kernel(int codec)
{
    switch (codec) {
    case TDM_CODEC_BP128: return "tdm_bp128_get";
    case TDM_CODEC_BP256: return "tdm_bp256_get";
    case TDM_CODEC_PEF: return "tdm_pef_get";
    case TDM_CODEC_PFOR: return "tdm_pfor_get";
    case TDM_CODEC_NEWPFD128: return "tdm_newpfd128_get";
    case TDM_CODEC_NEWPFD64: return "tdm_newpfd64_get";
    default: return NULL;
    }
}

int tdm_codec_gather_enqueue(tdm_codec_dev_list *l, cl_mem idx, uint32_t count, cl_mem out,
                             cl_event *ev, tdm_err *err)
{
    const char *name = tdm_codec_gather_kernel(l->codec);
    if (!name)
        return tdm_err_set(err, TDM_ERR_UNSUPPORTED,
                           "codec %s has no random access on a device", l->ops->name);
    if (count == 0)
        return TDM_OK;
    cl_kernel k = NULL;
    int st = tdm_kernel_create(l->dev, name, &k, err);
    if (st != TDM_OK)
        return st;
    cl_uint delta = (cl_uint)l->delta;
    struct {
        size_t size;
        const void *p;
    } args[] = {
        {sizeof(cl_mem), &l->words},    {sizeof(cl_mem), &l->offsets},
        {sizeof(cl_mem), &l->bases},    {sizeof(cl_mem), &l->params},
        {sizeof(cl_uint), &l->nblocks}, {sizeof(cl_uint), &l->n},
        {sizeof(cl_uint), &delta},      {sizeof(cl_mem), &idx},
        {sizeof(cl_uint), &count},      {sizeof(cl_mem), &out},
        {sizeof(cl_mem), &l->status},
    };
    cl_int rc = CL_SUCCESS;
    for (cl_uint i = 0; rc == CL_SUCCESS && i < sizeof args / sizeof *args; i++)
        rc = clSetKernelArg(k, i, args[i].size, args[i].p);
    size_t local = l->dev->wg_size, global = tdm_round_up(count, local);
    if (rc == CL_SUCCESS)
        rc = clEnqueueNDRangeKernel(l->dev->queue, k, 1, NULL, &global, &local, 0, NULL, ev);
    if (rc != CL_SUCCESS) {
        st = tdm_cl_fail(err, rc, name);
        tdm_err_append(err, " on %s", l->dev->info.name);
    }
    clReleaseKernel(k); /* an enqueued kernel keeps what it needs */
    return st;
}

int tdm_codec_gather(tdm_codec_dev_list *l, const uint32_t *idx, size_t count, uint32_t *out,
                     tdm_err *err)
{
    if (count > UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT, "gather of %zu positions", count);
    for (size_t q = 0; q < count; q++)
        if (idx[q] >= l->n)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "position %u past a list of %u values",
                               idx[q], l->n);
    if (count == 0) /* nothing to run, but the same answer for an unsupported codec */
        return tdm_codec_gather_enqueue(l, NULL, 0, NULL, NULL, err);
    cl_mem bi = NULL, bo = NULL;
    int st = tdm_buffer_create(l->dev, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, count * 4,
                               (void *)idx, &bi, err);
    if (st == TDM_OK)
        st = tdm_buffer_create(l->dev, CL_MEM_WRITE_ONLY, count * 4, NULL, &bo, err);
    if (st == TDM_OK)
        st = tdm_codec_gather_enqueue(l, bi, (uint32_t)count, bo, NULL, err);
    if (st == TDM_OK) {
        cl_int rc = clEnqueueReadBuffer(l->dev->queue, bo, CL_TRUE, 0, count * 4, out, 0, NULL,
                                        NULL);
        st = rc == CL_SUCCESS ? tdm_codec_dev_status(l, err)
                              : tdm_cl_fail(err, rc, "reading gathered values");
    }
    if (bo)
        clReleaseMemObject(bo);
    if (bi)
        clReleaseMemObject(bi);
    return st;
}
