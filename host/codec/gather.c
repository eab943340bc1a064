/* Random access on a device (gather.h; tests and benchmarks only): one
 * work-item per position. */
#include "gather.h"

#include <stdlib.h>

#include "tandem.h"

int tdm_codec_gather_supported(int codec)
{
    const tdm_codec_ops *ops = tdm_codec_by_id(codec);
    return ops && ops->dev && ops->dev->get_kernel;
}

int tdm_codec_gather_enqueue(tdm_codec_dev_list *l, cl_mem idx, uint32_t count, cl_mem out,
                             cl_uint nwait, const cl_event *wait, cl_event *ev, tdm_err *err)
{
    if (ev)
        *ev = NULL;
    const char *name = l->ops->dev ? l->ops->dev->get_kernel : NULL;
    if (!name)
        return tdm_err_set(err, TDM_ERR_UNSUPPORTED,
                           "codec %s has no random access on a device", l->ops->name);
    if (count == 0)
        return TDM_OK;
    cl_uint delta = (cl_uint)l->delta;
    tdm_karg args[] = {
        TDM_KARG_MEM(&l->words),  TDM_KARG_MEM(&l->offsets), TDM_KARG_MEM(&l->bases),
        TDM_KARG_MEM(&l->params), TDM_KARG_U32(&l->nblocks), TDM_KARG_U32(&l->n),
        TDM_KARG_U32(&delta),     TDM_KARG_MEM(&idx),        TDM_KARG_U32(&count),
        TDM_KARG_MEM(&out),       TDM_KARG_MEM(&l->status),
    };
    cl_event *all;
    cl_uint n;
    if (tdm_codec_dev_wait_list(l, nwait, wait, &all, &n, err) != TDM_OK)
        return err->code;
    size_t local = l->dev->wg_size, global = tdm_round_up(count, local);
    int st = tdm_kernel_launch(l->dev, name, args, sizeof args / sizeof *args, global, local,
                               n, all, ev, err);
    free(all);
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
        return tdm_codec_gather_enqueue(l, NULL, 0, NULL, 0, NULL, NULL, err);
    cl_mem bi = NULL, bo = NULL;
    cl_event up = NULL, kev = NULL;
    int st = tdm_buffer_create(l->dev, CL_MEM_READ_ONLY, count * 4, NULL, &bi, err);
    if (st == TDM_OK)
        st = tdm_buffer_create(l->dev, CL_MEM_WRITE_ONLY, count * 4, NULL, &bo, err);
    if (st == TDM_OK)
        st = tdm_upload(l->dev, bi, 0, count * 4, idx, 0, NULL, &up, err);
    if (st == TDM_OK)
        st = tdm_codec_gather_enqueue(l, bi, (uint32_t)count, bo, 1, &up, &kev, err);
    if (st == TDM_OK)
        st = tdm_download(l->dev, bo, 0, count * 4, out, 1, &kev, NULL, err);
    if (st == TDM_OK)
        st = tdm_codec_dev_status(l, 1, &kev, err);
    if (up) {
        clWaitForEvents(1, &up); /* the copy reads idx until then */
        clReleaseEvent(up);
    }
    if (kev) {
        clWaitForEvents(1, &kev);
        clReleaseEvent(kev);
    }
    if (bo)
        clReleaseMemObject(bo);
    if (bi)
        clReleaseMemObject(bi);
    return st;
}
