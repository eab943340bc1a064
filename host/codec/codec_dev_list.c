/* The per-list device decode driver (codec_dev_list.h; tests and
 * benchmarks only): upload once through the transfer queue, decode whole
 * lists or chosen blocks with the codec's kernel, time it, report errors
 * with the device named. */
#include "codec_dev_list.h"

#include <stdlib.h>
#include <string.h>

#include "tandem.h"

/* tdm_cl_fail, with the device named. */
static int cl_fail(tdm_codec_dev_list *l, tdm_err *err, cl_int rc, const char *what)
{
    int st = tdm_cl_fail(err, rc, what);
    tdm_err_append(err, " on %s (codec %s)", l->dev->info.name, l->ops->name);
    return st;
}

static int make_buffer(tdm_codec_dev_list *l, cl_mem_flags fl, size_t bytes, cl_mem *out,
                       tdm_err *err)
{
    int st = tdm_buffer_create(l->dev, fl, bytes, NULL, out, err);
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

static int check_upload(tdm_device *d, const tdm_encoded *enc, const tdm_codec_ops **ops,
                        tdm_err *err)
{
    if (!d || !enc)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "codec upload: no device or list");
    int st = tdm_encoded_validate(enc, err);
    if (st != TDM_OK)
        return st;
    *ops = tdm_codec_by_id(enc->codec);
    if (!(*ops)->dev)
        return tdm_err_set(err, TDM_ERR_UNSUPPORTED, "codec %s has no device decoder",
                           (*ops)->name);
    if ((*ops)->dev->check && (st = (*ops)->dev->check(enc, err)) != TDM_OK)
        return st;
    return check_fits(d, enc, err);
}

/* Enqueues the copies of enc's arrays and a zeroed status word on the
 * transfer queue (in order: the last copy's event covers them all). */
static int copy_arrays(tdm_codec_dev_list *l, const tdm_encoded *enc, tdm_err *err)
{
    static const uint32_t zero = 0;
    tdm_device *d = l->dev;
    struct {
        cl_mem m;
        size_t bytes;
        const void *src;
    } part[] = {
        {l->words, enc->nwords * 4, enc->words},
        {l->offsets, ((size_t)enc->nblocks + 1) * 4, enc->offsets},
        {l->bases, (size_t)enc->nblocks * 4, enc->bases},
        {l->params, sizeof enc->params, enc->params},
        {l->status, 4, &zero},
    };
    int st = TDM_OK;
    for (size_t i = 0; st == TDM_OK && i < sizeof part / sizeof *part; i++) {
        if (part[i].bytes == 0)
            continue;
        cl_event ev;
        st = tdm_upload(d, part[i].m, 0, part[i].bytes, part[i].src, 0, NULL, &ev, err);
        if (st == TDM_OK) {
            if (l->ready)
                clReleaseEvent(l->ready);
            l->ready = ev;
        }
    }
    return st;
}

int tdm_codec_dev_upload_async(tdm_device *d, const tdm_encoded *enc, tdm_codec_dev_list *out,
                               cl_event *ev, tdm_err *err)
{
    memset(out, 0, sizeof *out);
    if (ev)
        *ev = NULL;
    const tdm_codec_ops *ops = NULL;
    int st = check_upload(d, enc, &ops, err);
    if (st != TDM_OK)
        return st;
    *out = (tdm_codec_dev_list){.dev = d, .ops = ops, .codec = enc->codec,
                                .delta = enc->delta, .n = enc->n,
                                .block_size = enc->block_size, .nblocks = enc->nblocks,
                                .nwords = enc->nwords};
    const cl_mem_flags ro = CL_MEM_READ_ONLY, rw = CL_MEM_READ_WRITE;
    st = make_buffer(out, ro, enc->nwords * 4, &out->words, err);
    if (st == TDM_OK)
        st = make_buffer(out, ro, ((size_t)enc->nblocks + 1) * 4, &out->offsets, err);
    if (st == TDM_OK)
        st = make_buffer(out, ro, (size_t)enc->nblocks * 4, &out->bases, err);
    if (st == TDM_OK)
        st = make_buffer(out, ro, sizeof enc->params, &out->params, err);
    if (st == TDM_OK)
        st = make_buffer(out, rw, 4, &out->status, err);
    if (st == TDM_OK)
        st = copy_arrays(out, enc, err);
    if (st == TDM_OK) {
        uint32_t bpg = ops->dev->blocks_per_group(d->wg_size, enc->block_size);
        out->bpg = bpg ? bpg : 1;
        if (ev && out->ready) {
            clRetainEvent(out->ready);
            *ev = out->ready;
        }
    }
    if (st != TDM_OK)
        tdm_codec_dev_free(out);
    return st;
}

int tdm_codec_dev_upload(tdm_device *d, const tdm_encoded *enc, tdm_codec_dev_list *out,
                         tdm_err *err)
{
    int st = tdm_codec_dev_upload_async(d, enc, out, NULL, err);
    if (st == TDM_OK && out->ready) {
        cl_int rc = clWaitForEvents(1, &out->ready);
        if (rc != CL_SUCCESS) {
            st = cl_fail(out, err, rc, "uploading a list");
            tdm_codec_dev_free(out);
        }
    }
    return st;
}

void tdm_codec_dev_free(tdm_codec_dev_list *l)
{
    if (!l)
        return;
    if (l->ready) {
        clWaitForEvents(1, &l->ready); /* the copies read host memory until then */
        clReleaseEvent(l->ready);
    }
    cl_mem *bufs[] = {&l->words, &l->offsets, &l->bases, &l->params, &l->status};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (*bufs[i])
            clReleaseMemObject(*bufs[i]);
    memset(l, 0, sizeof *l);
}

int tdm_codec_dev_wait_list(const tdm_codec_dev_list *l, cl_uint nwait, const cl_event *wait,
                            cl_event **all, cl_uint *n, tdm_err *err)
{
    *n = 0;
    *all = malloc(((size_t)nwait + 1) * sizeof **all);
    if (!*all)
        return tdm_err_set(err, TDM_ERR_NOMEM, "a wait list of %u events", nwait);
    for (cl_uint i = 0; i < nwait; i++)
        (*all)[i] = wait[i];
    *n = nwait;
    if (l->ready)
        (*all)[(*n)++] = l->ready;
    return TDM_OK;
}

int tdm_codec_dev_launch(tdm_codec_dev_list *l, const tdm_codec_dev_job *job, size_t groups,
                         cl_uint nwait, const cl_event *wait, cl_event *ev, tdm_err *err)
{
    cl_uint delta = (cl_uint)l->delta, use_sel = job->sel != NULL;
    cl_mem sel = job->sel ? job->sel : l->params; /* an unused selection: any valid buffer */
    tdm_karg args[] = {
        TDM_KARG_MEM(&l->words),   TDM_KARG_MEM(&l->offsets),  TDM_KARG_MEM(&l->bases),
        TDM_KARG_MEM(&l->params),  TDM_KARG_U32(&l->nblocks),  TDM_KARG_U32(&l->n),
        TDM_KARG_U32(&delta),      TDM_KARG_MEM(&sel),         TDM_KARG_U32(&job->njobs),
        TDM_KARG_U32(&use_sel),    TDM_KARG_MEM(&job->out),    TDM_KARG_U32(&job->out_cap),
        TDM_KARG_MEM(&l->status),
    };
    if (groups == 0) {
        groups = ((size_t)job->njobs + l->bpg - 1) / l->bpg;
        size_t cap = (size_t)(l->dev->info.compute_units ? l->dev->info.compute_units : 1) *
                     tdm_codec_dev_groups_per_cu(l->dev);
        if (cap && groups > cap)
            groups = cap; /* enough to fill the device; each group loops */
    }
    cl_event *all;
    cl_uint n;
    if (tdm_codec_dev_wait_list(l, nwait, wait, &all, &n, err) != TDM_OK)
        return err->code;
    size_t local = l->dev->wg_size;
    int st = tdm_kernel_launch(l->dev, l->ops->dev->kernel, args, sizeof args / sizeof *args,
                               groups * local, local, n, all, ev, err);
    free(all);
    if (st != TDM_OK)
        tdm_err_append(err, " (codec %s)", l->ops->name);
    return st;
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
                             uint32_t out_cap, cl_uint nwait, const cl_event *wait,
                             cl_event *ev, tdm_err *err)
{
    if (ev)
        *ev = NULL;
    if (!l || !l->dev || !sel || !out || (nwait && !wait))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "codec decode: missing argument");
    if (njobs == 0)
        return TDM_OK;
    int st = check_buffer(l, out, out_cap, "output", err);
    if (st == TDM_OK)
        st = check_buffer(l, sel, 2 * (size_t)njobs, "selection", err);
    if (st != TDM_OK)
        return st;
    tdm_codec_dev_job job = {.sel = sel, .njobs = njobs, .out = out, .out_cap = out_cap};
    return tdm_codec_dev_launch(l, &job, 0, nwait, wait, ev, err);
}

int tdm_codec_dev_status(tdm_codec_dev_list *l, cl_uint nwait, const cl_event *wait,
                         tdm_err *err)
{
    cl_uint flags = 0;
    if (nwait) {
        int st = tdm_download(l->dev, l->status, 0, 4, &flags, nwait, wait, NULL, err);
        if (st != TDM_OK)
            return st;
    } else {
        cl_int rc = clEnqueueReadBuffer(l->dev->queue, l->status, CL_TRUE, 0, 4, &flags, 0,
                                        NULL, NULL);
        if (rc != CL_SUCCESS)
            return cl_fail(l, err, rc, "reading the decode status");
    }
    if (flags & TDM_CODEC_ST_CORRUPT)
        return tdm_err_set(err, TDM_ERR_CORRUPT,
                           "%s list of %u values: corrupt payload (found by the kernel on %s)",
                           l->ops->name, l->n, l->dev->info.name);
    if (flags & TDM_CODEC_ST_BADJOB)
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

/* The selection buffer for host block ids, its copy enqueued (*ev). */
static int upload_pairs(tdm_codec_dev_list *l, const uint32_t *pairs, size_t nblocks,
                        cl_mem *sel, cl_event *ev, tdm_err *err)
{
    int st = tdm_buffer_create(l->dev, CL_MEM_READ_ONLY, nblocks * 8, NULL, sel, err);
    if (st == TDM_OK)
        st = tdm_upload(l->dev, *sel, 0, nblocks * 8, pairs, 0, NULL, ev, err);
    return st;
}

/* Runs the decode and, when asked, copies the values back and reads the
 * status (after the kernel only), then waits for the kernel. */
static int run_decode(tdm_codec_dev_list *l, const tdm_codec_dev_job *job, cl_event sel_ev,
                      uint32_t *host_out, size_t nv, double *kernel_s, tdm_err *err)
{
    cl_event kev = NULL;
    int st = tdm_codec_dev_launch(l, job, 0, sel_ev ? 1 : 0, &sel_ev, &kev, err);
    if (st == TDM_OK && host_out)
        st = tdm_download(l->dev, job->out, 0, nv * 4, host_out, 1, &kev, NULL, err);
    if (st == TDM_OK && host_out)
        st = tdm_codec_dev_status(l, 1, &kev, err);
    if (st == TDM_OK) {
        cl_int rc = clWaitForEvents(1, &kev);
        if (rc != CL_SUCCESS)
            st = cl_fail(l, err, rc, "waiting for the decode kernel");
        else if (kernel_s)
            *kernel_s = tdm_event_seconds(kev);
    } else if (kev) {
        clWaitForEvents(1, &kev); /* the kernel may still read pairs the caller frees */
    }
    if (kev)
        clReleaseEvent(kev);
    return st;
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
    cl_event sel_ev = NULL;
    if (st == TDM_OK && blocks && nblocks)
        st = upload_pairs(l, pairs, nblocks, &sel, &sel_ev, err);
    if (st == TDM_OK && out && nv)
        st = check_buffer(l, out, nv, "output", err);
    if (st == TDM_OK && !out && nv)
        st = tdm_buffer_create(l->dev, CL_MEM_READ_WRITE, nv * 4, NULL, &tmp, err);
    if (st == TDM_OK && nv) {
        tdm_codec_dev_job job = {.sel = sel, .njobs = (uint32_t)nblocks,
                                 .out = out ? out : tmp, .out_cap = (uint32_t)nv};
        st = run_decode(l, &job, sel_ev, host_out, nv, kernel_s, err);
    }
    if (st == TDM_OK && nvalues)
        *nvalues = nv;
    if (sel_ev) {
        clWaitForEvents(1, &sel_ev); /* the copy reads `pairs` until then */
        clReleaseEvent(sel_ev);
    }
    if (tmp)
        clReleaseMemObject(tmp);
    if (sel)
        clReleaseMemObject(sel);
    free(pairs);
    return st;
}
