/* The shared device decode driver: upload once, decode whole lists or chosen
 * blocks with the codec's kernel, time it, report errors with the device named. */
#include "codec_dev.h"

#include <stdlib.h>
#include <string.h>

#include "tandem.h"

/* Status bits the kernels set (cl/codec_dev.cl). */
#define ST_CORRUPT 1u
#define ST_BADJOB 2u

/* tdm_cl_fail, with the device named. */
static int cl_fail(tdm_codec_dev_list *l, tdm_err *err, cl_int rc, const char *what)
{
    int st = tdm_cl_fail(err, rc, what);
    tdm_err_append(err, " on %s (codec %s)", l->dev->info.name, l->ops->name);
    return st;
}

static int make_buffer(tdm_codec_dev_list *l, size_t bytes, const void *host, cl_mem *out,
                       tdm_err *err)
{
    cl_mem_flags fl = host ? CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR : CL_MEM_READ_WRITE;
    int st = tdm_buffer_create(l->dev, fl, bytes, (void *)host, out, err);
    if (st != TDM_OK)
        tdm_err_append(err, " (uploading a %s list of %u values)", l->ops->name, l->n);
    else
        l->device_bytes += bytes ? bytes : 1;
    return st;
}

/* Refuses lists that cannot fit before the driver allocates anything, so
 * that a large list fails cleanly rather than late in a kernel launch. */
static int check_fits(tdm_device *d, const tdm_encoded *enc, tdm_err *err)
{
    uint64_t need = (uint64_t)enc->nwords * 4 + ((uint64_t)enc->nblocks * 2 + 1) * 4;
    if (d->info.global_mem_bytes && need > d->info.global_mem_bytes)
        return tdm_err_set(err, TDM_ERR_DEVICE_MEMORY,
                           "a list of %llu bytes does not fit %s's %llu bytes of memory",
                           (unsigned long long)need, d->info.name,
                           (unsigned long long)d->info.global_mem_bytes);
    return TDM_OK;
}

int tdm_codec_dev_upload(tdm_device *d, const tdm_encoded *enc, tdm_codec_dev_list *out,
                         tdm_err *err)
{
    memset(out, 0, sizeof *out);
    const tdm_codec_ops *ops = enc ? tdm_codec_by_id(enc->codec) : NULL;
    if (!d || !enc)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "codec upload: no device or list");
    int st = tdm_encoded_validate(enc, err);
    if (st != TDM_OK)
        return st;
    if (!ops->dev)
        return tdm_err_set(err, TDM_ERR_UNSUPPORTED, "codec %s has no device decoder",
                           ops->name);
    if (ops->dev->check && (st = ops->dev->check(enc, err)) != TDM_OK)
        return st;
    if ((st = check_fits(d, enc, err)) != TDM_OK)
        return st;
    *out = (tdm_codec_dev_list){.dev = d, .ops = ops, .codec = enc->codec,
                                .delta = enc->delta, .n = enc->n,
                                .block_size = enc->block_size, .nblocks = enc->nblocks,
                                .nwords = enc->nwords};
    uint32_t zero = 0;
    st = make_buffer(out, enc->nwords * 4, enc->nwords ? enc->words : &zero, &out->words, err);
    if (st == TDM_OK)
        st = make_buffer(out, ((size_t)enc->nblocks + 1) * 4, enc->offsets, &out->offsets, err);
    if (st == TDM_OK)
        st = make_buffer(out, (size_t)enc->nblocks * 4, enc->nblocks ? enc->bases : &zero,
                         &out->bases, err);
    if (st == TDM_OK)
        st = make_buffer(out, sizeof enc->params, enc->params, &out->params, err);
    if (st == TDM_OK)
        st = tdm_buffer_create(d, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, &zero,
                               &out->status, err);
    if (st == TDM_OK && ops->dev->kernel)
        st = tdm_kernel_create(d, ops->dev->kernel, &out->kernel, err);
    if (st == TDM_OK) {
        out->bpg = ops->dev->blocks_per_group
                       ? ops->dev->blocks_per_group(d->wg_size, enc->block_size)
                       : 1;
        if (out->bpg == 0)
            out->bpg = 1;
        /* Copies from host memory finish before the call returns: the caller
         * may free `enc` right away. */
        cl_int rc = clFinish(d->queue);
        if (rc != CL_SUCCESS)
            st = cl_fail(out, err, rc, "uploading a list");
    }
    if (st != TDM_OK)
        tdm_codec_dev_free(out);
    return st;
}

void tdm_codec_dev_free(tdm_codec_dev_list *l)
{
    if (!l)
        return;
    cl_mem *bufs[] = {&l->words, &l->offsets, &l->bases, &l->params, &l->status};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (*bufs[i])
            clReleaseMemObject(*bufs[i]);
    if (l->kernel)
        clReleaseKernel(l->kernel);
    memset(l, 0, sizeof *l);
}

int tdm_codec_dev_set_args(tdm_codec_dev_list *l, cl_kernel k, const tdm_codec_dev_job *job,
                           tdm_err *err)
{
    cl_uint delta = (cl_uint)l->delta, use_sel = job->sel != NULL;
    /* An unused selection still needs a valid buffer argument. */
    cl_mem sel = job->sel ? job->sel : l->params;
    struct {
        size_t size;
        const void *p;
    } args[] = {
        {sizeof(cl_mem), &l->words},   {sizeof(cl_mem), &l->offsets},
        {sizeof(cl_mem), &l->bases},   {sizeof(cl_mem), &l->params},
        {sizeof(cl_uint), &l->nblocks}, {sizeof(cl_uint), &l->n},
        {sizeof(cl_uint), &delta},      {sizeof(cl_mem), &sel},
        {sizeof(cl_uint), &job->njobs}, {sizeof(cl_uint), &use_sel},
        {sizeof(cl_mem), &job->out},    {sizeof(cl_uint), &job->out_cap},
        {sizeof(cl_mem), &l->status},
    };
    for (cl_uint i = 0; i < sizeof args / sizeof *args; i++) {
        cl_int rc = clSetKernelArg(k, i, args[i].size, args[i].p);
        if (rc != CL_SUCCESS)
            return cl_fail(l, err, rc, "clSetKernelArg");
    }
    return TDM_OK;
}

int tdm_codec_dev_enqueue(tdm_codec_dev_list *l, cl_kernel k, uint32_t njobs, uint32_t bpg,
                          cl_event *ev, tdm_err *err)
{
    size_t local = l->dev->wg_size;
    size_t groups = ((size_t)njobs + bpg - 1) / bpg;
    size_t cap = (size_t)(l->dev->info.compute_units ? l->dev->info.compute_units : 1) *
                 tdm_codec_dev_groups_per_cu();
    if (l->ops->dev->grid_stride && cap && groups > cap)
        groups = cap; /* enough to fill the device; each group loops */
    size_t global = groups * local;
    cl_int rc = clEnqueueNDRangeKernel(l->dev->queue, k, 1, NULL, &global, &local, 0, NULL, ev);
    if (rc != CL_SUCCESS)
        return cl_fail(l, err, rc, l->ops->dev->kernel ? l->ops->dev->kernel : "codec kernel");
    return TDM_OK;
}

/* Runs one job: the codec's own launcher, or the standard one. On success
 * *first and *last are the events bracketing the work (the same event for
 * one kernel); the caller releases both. */
static int launch(tdm_codec_dev_list *l, const tdm_codec_dev_job *job, cl_event *first,
                  cl_event *last, tdm_err *err)
{
    *first = *last = NULL;
    if (l->ops->dev->launch) {
        int st = l->ops->dev->launch(l, job, first, last, err);
        if (st == TDM_OK && !*first && *last) {
            *first = *last;
            clRetainEvent(*first);
        }
        return st;
    }
    int st = tdm_codec_dev_set_args(l, l->kernel, job, err);
    if (st == TDM_OK)
        st = tdm_codec_dev_enqueue(l, l->kernel, job->njobs, l->bpg, last, err);
    if (st == TDM_OK) {
        *first = *last;
        clRetainEvent(*first);
    }
    return st;
}

/* Device seconds from the start of `first` to the end of `last`. */
static double span_seconds(cl_event first, cl_event last)
{
    if (first == last)
        return tdm_event_seconds(last);
    cl_ulong t0 = 0, t1 = 0;
    clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
    clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    return t1 > t0 ? (double)(t1 - t0) * 1e-9 : 0.0;
}

/* Refuses a buffer smaller than `values` uint32s: the kernels trust njobs
 * and out_cap. */
static int check_buffer(tdm_codec_dev_list *l, cl_mem buf, size_t values, const char *what,
                        tdm_err *err)
{
    size_t bytes = 0;
    cl_int rc = clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof bytes, &bytes, NULL);
    if (rc != CL_SUCCESS)
        return cl_fail(l, err, rc, "clGetMemObjectInfo");
    if (bytes / 4 < values)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "codec decode: %s buffer of %zu bytes for %zu values", what, bytes,
                           values);
    return TDM_OK;
}

int tdm_codec_dev_decode_sel(tdm_codec_dev_list *l, cl_mem sel, uint32_t njobs, cl_mem out,
                             uint32_t out_cap, cl_event *ev, tdm_err *err)
{
    if (ev)
        *ev = NULL;
    if (!l || !l->dev || !sel || !out)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "codec decode: missing argument");
    if (njobs == 0)
        return TDM_OK;
    int st = check_buffer(l, out, out_cap, "output", err);
    if (st == TDM_OK)
        st = check_buffer(l, sel, 2 * (size_t)njobs, "selection", err);
    if (st != TDM_OK)
        return st;
    tdm_codec_dev_job job = {.sel = sel, .njobs = njobs, .out = out, .out_cap = out_cap};
    cl_event first, last;
    st = launch(l, &job, &first, &last, err);
    if (first)
        clReleaseEvent(first);
    if (ev)
        *ev = last;
    else if (last)
        clReleaseEvent(last);
    return st;
}

int tdm_codec_dev_status(tdm_codec_dev_list *l, tdm_err *err)
{
    cl_uint flags = 0;
    cl_int rc = clEnqueueReadBuffer(l->dev->queue, l->status, CL_TRUE, 0, 4, &flags, 0, NULL,
                                    NULL);
    if (rc != CL_SUCCESS)
        return cl_fail(l, err, rc, "reading the decode status");
    if (flags & ST_CORRUPT)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "%s list of %u values: corrupt payload (found by the kernel on %s)",
                           l->ops->name, l->n, l->dev->info.name);
    if (flags & ST_BADJOB)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "%s list: a decode job named a block out of range or an output "
                           "past its buffer (on %s)", l->ops->name, l->dev->info.name);
    return TDM_OK;
}

/* Builds the (block id, output position) pairs for a host block list and
 * counts the values they decode. */
static int make_pairs(tdm_codec_dev_list *l, const uint32_t *blocks, size_t nblocks,
                      uint32_t **pairs, size_t *nvalues, tdm_err *err)
{
    *pairs = malloc(nblocks ? nblocks * 8 : 8);
    if (!*pairs)
        return tdm_err_set(err, TDM_ERR_NOMEM, "codec decode: %zu block ids", nblocks);
    size_t pos = 0;
    for (size_t i = 0; i < nblocks; i++) {
        uint32_t b = blocks[i];
        if (b >= l->nblocks)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "block %u out of range (%u blocks)",
                               b, l->nblocks);
        uint64_t start = (uint64_t)b * l->block_size, left = l->n - start;
        (*pairs)[2 * i] = b;
        (*pairs)[2 * i + 1] = (uint32_t)pos;
        pos += left < l->block_size ? left : l->block_size;
        if (pos > UINT32_MAX)
            return tdm_err_set(err, TDM_ERR_LIMIT, "codec decode: more than 2^32-1 values");
    }
    *nvalues = pos;
    return TDM_OK;
}

int tdm_codec_dev_decode(tdm_codec_dev_list *l, const uint32_t *blocks, size_t nblocks,
                         cl_mem out, uint32_t *host_out, size_t *nvalues, double *kernel_s,
                         tdm_err *err)
{
    if (kernel_s)
        *kernel_s = 0;
    if (nvalues)
        *nvalues = 0;
    if (!l || !l->dev)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "codec decode: no list");
    if (!blocks)
        nblocks = l->nblocks;
    if (nblocks > UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT, "codec decode: %zu blocks", nblocks);
    uint32_t *pairs = NULL;
    size_t nv = l->n;
    int st = blocks ? make_pairs(l, blocks, nblocks, &pairs, &nv, err) : TDM_OK;
    cl_mem sel = NULL, tmp = NULL;
    cl_event first = NULL, last = NULL;
    if (st == TDM_OK && blocks && nblocks)
        st = tdm_buffer_create(l->dev, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, nblocks * 8,
                               pairs, &sel, err);
    if (st == TDM_OK && out && nv)
        st = check_buffer(l, out, nv, "output", err);
    if (st == TDM_OK && !out && nv)
        st = tdm_buffer_create(l->dev, CL_MEM_READ_WRITE, nv * 4, NULL, &tmp, err);
    if (st == TDM_OK && nv) {
        tdm_codec_dev_job job = {.sel = sel, .njobs = (uint32_t)nblocks,
                                 .out = out ? out : tmp, .out_cap = (uint32_t)nv};
        st = launch(l, &job, &first, &last, err);
    }
    if (st == TDM_OK && host_out && nv) {
        cl_int rc = clEnqueueReadBuffer(l->dev->queue, out ? out : tmp, CL_TRUE, 0, nv * 4,
                                        host_out, 0, NULL, NULL);
        st = rc == CL_SUCCESS ? tdm_codec_dev_status(l, err)
                              : cl_fail(l, err, rc, "reading decoded values");
    }
    if (st == TDM_OK && last && kernel_s) {
        cl_int rc = clWaitForEvents(1, &last);
        if (rc != CL_SUCCESS)
            st = cl_fail(l, err, rc, "waiting for the decode kernel");
        else
            *kernel_s = span_seconds(first, last);
    }
    if (st == TDM_OK && nvalues)
        *nvalues = nv;
    if (first)
        clReleaseEvent(first);
    if (last)
        clReleaseEvent(last);
    if (tmp)
        clReleaseMemObject(tmp);
    if (sel)
        clReleaseMemObject(sel);
    free(pairs);
    return st;
}

static uint32_t codec_dev_bpg(size_t wg_size, uint32_t block_size, uint32_t vpt_min)
{
    size_t vpt = block_size / wg_size > vpt_min ? block_size / wg_size : vpt_min;
    size_t tpb = vpt ? block_size / vpt : 0;
    return tpb && wg_size >= tpb ? (uint32_t)(wg_size / tpb) : 1;
}

uint32_t tdm_codec_dev_bpg_vpt(size_t wg_size, uint32_t block_size)
{
    return codec_dev_bpg(wg_size, block_size, 4);
}

uint32_t tdm_codec_dev_bpg_wide(size_t wg_size, uint32_t block_size)
{
    return codec_dev_bpg(wg_size, block_size, 8); /* cl/codec_dev.cl: TDM_WIDE_VPT_MIN */
}

size_t tdm_codec_dev_groups_per_cu(void)
{
    const char *s = getenv("TANDEM_CODEC_GROUPS_PER_CU");
    return s && *s ? (size_t)strtoul(s, NULL, 10) : 32;
}
