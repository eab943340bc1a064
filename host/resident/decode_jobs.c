/* The batched decode driver (decode_jobs.h): checks, scratch buffers and the
 * three kernels of a launch (cl/decode_jobs.cl). */
#include "decode_jobs.h"

#include <stdlib.h>
#include <string.h>

#include "codec/codec_dev.h"
#include "index/format.h"
#include "runtime/tune_table.h"

const char *tdm_decode_jobs_kernel(int codec)
{
    static const char *const names[TDM_CODEC_COUNT] = {
        [TDM_CODEC_RAW] = "tdm_jobs_raw",           [TDM_CODEC_BP128] = "tdm_jobs_bp128",
        [TDM_CODEC_BP256] = "tdm_jobs_bp256",       [TDM_CODEC_VBYTE128] = "tdm_jobs_vbyte128",
        [TDM_CODEC_VBYTE1024] = "tdm_jobs_vbyte1024", [TDM_CODEC_PEF] = "tdm_jobs_pef",
        [TDM_CODEC_PFOR] = "tdm_jobs_pfor",         [TDM_CODEC_NEWPFD128] = "tdm_jobs_newpfd128",
        [TDM_CODEC_RICE] = "tdm_jobs_rice",         [TDM_CODEC_NEWPFD64] = "tdm_jobs_newpfd64",
    };
    return codec >= 0 && codec < TDM_CODEC_COUNT ? names[codec] : NULL;
}

int tdm_decode_jobs_variant(const tdm_device *d)
{
    /* The serial kernel decodes every codec through codec_serial.cl, as the
       compressed cursors do: rusticl inlines all of it twice into one kernel,
       which llvmpipe took 5 minutes and GBs to compile (no_zcur, runtime.h) */
    if (d->no_zcur)
        return TDM_DECODE_GROUP;
    switch (tdm_settings_tuning(d->settings)->decode_variant) {
    case TDM_TUNE_DECODE_GROUP:
        return TDM_DECODE_GROUP;
    case TDM_TUNE_DECODE_SERIAL:
        return TDM_DECODE_SERIAL;
    default:
        /* the tuning table's (runtime/tune_table.h): serial on a CPU */
        return tdm_tune_row_of(&d->info)->decode_variant == TDM_TUNE_DECODE_SERIAL
                   ? TDM_DECODE_SERIAL
                   : TDM_DECODE_GROUP;
    }
}

/* Borrows `name`, sets its arguments and enqueues it on q: `groups`
 * work-groups of the device's size, or of `local` work-items if not 0. */
static int launch_local(tdm_device *d, cl_command_queue q, const char *name,
                        const tdm_karg *args, cl_uint nargs, size_t groups, size_t local,
                        cl_uint nwait, const cl_event *wait, cl_event *ev, tdm_err *err)
{
    cl_kernel k;
    int st = tdm_kernel_borrow(d, name, &k, err);
    if (st != TDM_OK)
        return st;
    cl_int rc = CL_SUCCESS;
    cl_uint i = 0;
    for (; rc == CL_SUCCESS && i < nargs; i++)
        rc = clSetKernelArg(k, i, args[i].size, args[i].p);
    if (!local)
        local = d->wg_size;
    size_t global = groups * local;
    if (rc != CL_SUCCESS) {
        tdm_cl_fail(err, rc, "clSetKernelArg");
        tdm_err_append(err, " (argument %u of kernel '%s' on %s)", i - 1, name, d->info.name);
    } else if ((rc = tdm_kernel_enqueue(d, q, k, name, global, local, nwait, wait, ev)) !=
               CL_SUCCESS) {
        tdm_cl_fail(err, rc, "clEnqueueNDRangeKernel");
        tdm_err_append(err, " (kernel '%s', %zu work-items in groups of %zu, on %s)", name, global,
                       local, d->info.name);
    }
    tdm_kernel_return(d, k);
    return rc == CL_SUCCESS ? TDM_OK : err->code;
}

static int launch(tdm_device *d, cl_command_queue q, const char *name, const tdm_karg *args,
                  cl_uint nargs, size_t groups, cl_uint nwait, const cl_event *wait,
                  cl_event *ev, tdm_err *err)
{
    return launch_local(d, q, name, args, nargs, groups, 0, nwait, wait, ev, err);
}

/* Values (uint32) a buffer holds, capped at 2^32 - 1; 0 for NULL. */
static int buffer_values(const tdm_device *d, cl_mem m, uint64_t *values, tdm_err *err)
{
    size_t bytes = 0;
    *values = 0;
    if (!m)
        return TDM_OK;
    cl_int rc = clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof bytes, &bytes, NULL);
    if (rc != CL_SUCCESS) {
        tdm_cl_fail(err, rc, "clGetMemObjectInfo");
        tdm_err_append(err, " (batched decode on %s)", d->info.name);
        return err->code;
    }
    *values = bytes / 4 > UINT32_MAX ? UINT32_MAX : bytes / 4;
    return TDM_OK;
}

/* What one launch needs, checked. */
typedef struct plan {
    const tdm_resident *res;
    cl_command_queue q;
    cl_mem jobs, docs, freqs, status, jpre, tsum;
    uint32_t njobs, ntiles, codec, block, outs, docs_cap, freqs_cap;
    const char *kernel;
    int serial;           /* the serial variant (tdm_jobs_serial) */
    uint64_t blocks_hint; /* blocks in the launch if known, else 0 */
    cl_event *first;      /* if not NULL: gets the first kernel's event */
    tdm_decode_scratch *scr; /* if not NULL: jpre and tsum come from it */
    int pre;              /* jpre and tsum hold the host's prefix sums: no count, no scan */
} plan;

static int check_plan(plan *p, tdm_err *err)
{
    const tdm_resident *res = p->res;
    if (!res || !res->dev || !p->jobs || !p->status)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "batched decode: missing index, job table or status buffer");
    const tdm_codec_ops *ops = tdm_codec_by_id((int)p->codec);
    p->kernel = tdm_decode_jobs_kernel((int)p->codec);
    if (!ops || !p->kernel)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "batched decode: no codec %d",
                           (int)p->codec);
    p->block = ops->block_size;
    p->serial = tdm_decode_jobs_variant(res->dev) == TDM_DECODE_SERIAL;
    uint64_t njv, sv, dv, fv;
    int st = buffer_values(res->dev, p->jobs, &njv, err);
    if (st == TDM_OK)
        st = buffer_values(res->dev, p->status, &sv, err);
    if (st == TDM_OK)
        st = buffer_values(res->dev, p->docs, &dv, err);
    if (st == TDM_OK)
        st = buffer_values(res->dev, p->freqs, &fv, err);
    if (st != TDM_OK)
        return st;
    if (njv / 4 < p->njobs || sv < 1)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "batched decode: a job buffer of %llu bytes for %u jobs, or no "
                           "status word (on %s)", (unsigned long long)njv * 4, p->njobs,
                           res->dev->info.name);
    p->outs = (p->docs ? 1u : 0u) | (p->freqs ? 2u : 0u);
    p->docs_cap = (uint32_t)dv;
    p->freqs_cap = (uint32_t)fv;
    p->ntiles = tdm_decode_prefix_tiles(res->dev, p->njobs);
    return TDM_OK;
}

/* Work-groups of the decode kernel: enough to fill the device, fewer when
 * the launch is known to be small; each loops over its share. */
static size_t decode_groups(const plan *p)
{
    tdm_device *d = p->res->dev;
    size_t cap = (size_t)(d->info.compute_units ? d->info.compute_units : 1) *
                 tdm_codec_dev_groups_per_cu(d);
    const tdm_codec_ops *ops = tdm_codec_by_id((int)p->codec);
    uint32_t bpg = ops->dev ? ops->dev->blocks_per_group(d->wg_size, p->block) : 1;
    if (p->blocks_hint) {
        uint64_t need = (p->blocks_hint + bpg - 1) / (bpg ? bpg : 1);
        if (need < cap)
            cap = (size_t)need;
    }
    return cap ? cap : 1;
}

/* Work-items of the serial kernel, each its own group (a CPU driver runs a
 * group on one thread): a few a compute unit, so that one with slow blocks
 * does not hold the launch up; at most one a block when the launch is
 * known to be small. */
static size_t serial_items(const plan *p)
{
    tdm_device *d = p->res->dev;
    size_t cap = (size_t)(d->info.compute_units ? d->info.compute_units : 1) * 8;
    if (p->blocks_hint && p->blocks_hint < cap)
        cap = (size_t)p->blocks_hint;
    return cap ? cap : 1;
}

/* The three kernels, chained by events after the wait list `w` (n). */
static int run_plan(plan *p, cl_uint n, const cl_event *w, cl_event *done, tdm_err *err)
{
    const tdm_resident *r = p->res;
    tdm_device *d = r->dev;
    cl_uint ntiles = p->ntiles;
    tdm_karg cargs[] = {
        TDM_KARG_MEM(&p->jobs),     TDM_KARG_U32(&p->njobs),     TDM_KARG_MEM(&r->lists),
        TDM_KARG_MEM(&r->codecs),   TDM_KARG_U32(&r->nlists),    TDM_KARG_U32(&p->codec),
        TDM_KARG_U32(&p->block),    TDM_KARG_U32(&p->outs),      TDM_KARG_U32(&p->docs_cap),
        TDM_KARG_U32(&p->freqs_cap), TDM_KARG_MEM(&p->jpre),     TDM_KARG_MEM(&p->tsum),
        TDM_KARG_MEM(&p->status),
    };
    /* Every queue of a device is in order: the count waits for the caller's
       events, the scan and the decode follow it with no event between them
       (an event costs the host ~2 us an enqueue on the H200); only the
       caller's `done` and the profiled first kernel get one. */
    cl_event e1 = NULL;
    size_t local = p->serial ? 1 : 0; /* 0: the device's work-group size */
    int st = p->pre ? TDM_OK
                    : launch_local(d, p->q, p->serial ? "tdm_jobs_count_serial" : "tdm_jobs_count",
                                   cargs, sizeof cargs / sizeof *cargs, ntiles, local, n, w,
                                   p->first ? &e1 : NULL, err);
    if (st == TDM_OK && ntiles > 1 && !p->pre) {
        tdm_karg sargs[] = {TDM_KARG_MEM(&p->tsum), TDM_KARG_U32(&ntiles),
                            TDM_KARG_MEM(&p->status)};
        st = launch_local(d, p->q, p->serial ? "tdm_jobs_scan_serial" : "tdm_jobs_scan", sargs, 3,
                          1, local, 0, NULL, NULL, err);
    }
    cl_mem docs = p->docs ? p->docs : p->status, freqs = p->freqs ? p->freqs : p->status;
    tdm_karg dargs[] = {
        TDM_KARG_MEM(&r->arena),      TDM_KARG_MEM(&r->lists),       TDM_KARG_MEM(&r->codecs),
        TDM_KARG_MEM(&r->block_last), TDM_KARG_MEM(&r->block_docs),  TDM_KARG_MEM(&r->block_freqs),
        TDM_KARG_U32(&r->nlists),     TDM_KARG_U32(&r->arena_words), TDM_KARG_U32(&r->spans),
        TDM_KARG_MEM(&p->jobs),
        TDM_KARG_U32(&p->njobs),      TDM_KARG_MEM(&p->jpre),        TDM_KARG_MEM(&p->tsum),
        TDM_KARG_U32(&ntiles),        TDM_KARG_MEM(&docs),           TDM_KARG_MEM(&freqs),
        TDM_KARG_U32(&p->outs),       TDM_KARG_MEM(&p->status),        TDM_KARG_U32(&p->codec),
    };
    if (st == TDM_OK && p->first && e1)
        *p->first = e1; /* the caller's reference */
    else if (e1)
        clReleaseEvent(e1);
    cl_uint nd = sizeof dargs / sizeof *dargs;
    /* with the host's sums the decode is the first kernel: it waits */
    cl_uint dn = p->pre ? n : 0;
    const cl_event *dw = p->pre ? w : NULL;
    cl_event e2 = NULL, *ev = done ? done : p->pre && p->first ? &e2 : NULL;
    if (st == TDM_OK && p->serial)
        st = launch_local(d, p->q, "tdm_jobs_serial", dargs, nd, serial_items(p), 1, dn, dw, ev,
                          err);
    else if (st == TDM_OK) /* the work-group kernels take no codec argument */
        st = launch(d, p->q, p->kernel, dargs, nd - 1, decode_groups(p), dn, dw, ev, err);
    if (st == TDM_OK && p->pre && p->first && *ev) /* first and last: one event, twice held */
        clRetainEvent(*p->first = *ev);
    if (e2)
        clReleaseEvent(e2);
    return st;
}

/* The caller's wait list plus the index's upload, in a malloc'd array. */
static int wait_list(const tdm_resident *res, cl_uint nwait, const cl_event *wait,
                     cl_event **all, cl_uint *n, tdm_err *err)
{
    *all = malloc(((size_t)nwait + 1) * sizeof **all);
    if (!*all)
        return tdm_err_set(err, TDM_ERR_NOMEM, "batched decode: a wait list of %u", nwait);
    for (cl_uint i = 0; i < nwait; i++)
        (*all)[i] = wait[i];
    *n = nwait;
    if (res->ready)
        (*all)[(*n)++] = res->ready;
    return TDM_OK;
}

void tdm_decode_scratch_free(tdm_decode_scratch *s)
{
    if (s->jpre)
        clReleaseMemObject(s->jpre);
    if (s->tsum)
        clReleaseMemObject(s->tsum);
    memset(s, 0, sizeof *s);
}

/* *m holds at least `bytes` (a new buffer, with room, if not: the old one is
 * released, OpenCL keeping it for the commands still using it). */
static int scratch_fit(tdm_device *d, cl_mem *m, size_t *cap, size_t bytes, tdm_err *err)
{
    if (*m && *cap >= bytes)
        return TDM_OK;
    if (*m)
        clReleaseMemObject(*m);
    *m = NULL;
    *cap = 0;
    size_t want = bytes < 256 ? 256 : bytes + bytes / 2;
    int st = tdm_buffer_create(d, CL_MEM_READ_WRITE, want, NULL, m, err);
    if (st == TDM_OK)
        *cap = want;
    return st;
}

static int enqueue(plan *p, cl_uint nwait, const cl_event *wait, cl_event *done, tdm_err *err)
{
    if (done)
        *done = NULL;
    if (nwait && !wait)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "batched decode: %u events, no list", nwait);
    int st = check_plan(p, err);
    if (st != TDM_OK)
        return st;
    tdm_device *d = p->res->dev;
    if (!p->q)
        p->q = d->queue;
    cl_event *all = NULL;
    cl_uint n = 0;
    if ((st = wait_list(p->res, nwait, wait, &all, &n, err)) != TDM_OK)
        return st;
    if (p->njobs == 0) {
        tdm_wait_flush(p->q, n, all);
        cl_int rc = clEnqueueMarkerWithWaitList(p->q, n, n ? all : NULL, done);
        free(all);
        if (rc != CL_SUCCESS)
            tdm_cl_fail(err, rc, "clEnqueueMarkerWithWaitList");
        return rc == CL_SUCCESS ? TDM_OK : err->code;
    }
    if (p->pre) {
        /* the caller's, filled */
    } else if (p->scr) {
        st = scratch_fit(d, &p->scr->jpre, &p->scr->jpre_bytes, (size_t)p->njobs * 4, err);
        if (st == TDM_OK)
            st = scratch_fit(d, &p->scr->tsum, &p->scr->tsum_bytes,
                             ((size_t)p->ntiles + 1) * 4, err);
        p->jpre = p->scr->jpre;
        p->tsum = p->scr->tsum;
    } else {
        st = tdm_buffer_create(d, CL_MEM_READ_WRITE, (size_t)p->njobs * 4, NULL, &p->jpre, err);
        if (st == TDM_OK)
            st = tdm_buffer_create(d, CL_MEM_READ_WRITE, ((size_t)p->ntiles + 1) * 4, NULL,
                                   &p->tsum, err);
    }
    if (st == TDM_OK)
        st = run_plan(p, n, all, done, err);
    if (st != TDM_OK)
        tdm_err_append(err, " (batched decode of %u jobs, codec %s)", p->njobs,
                       tdm_codec_by_id((int)p->codec) ? tdm_codec_by_id((int)p->codec)->name
                                                      : "?");
    /* Released now, freed by OpenCL once the kernels that use them are done. */
    if (p->jpre && !p->scr && !p->pre)
        clReleaseMemObject(p->jpre);
    if (p->tsum && !p->scr && !p->pre)
        clReleaseMemObject(p->tsum);
    free(all);
    return st;
}

int tdm_decode_jobs_enqueue(const tdm_resident *res, cl_command_queue q, cl_mem jobs,
                            uint32_t njobs, int codec, cl_mem out_docs, cl_mem out_freqs,
                            cl_mem status, cl_uint nwait, const cl_event *wait, cl_event *done,
                            tdm_err *err)
{
    return tdm_decode_jobs_enqueue_in(res, q, jobs, njobs, codec, out_docs, out_freqs, status,
                                      NULL, nwait, wait, done, err);
}

int tdm_decode_jobs_enqueue_in(const tdm_resident *res, cl_command_queue q, cl_mem jobs,
                               uint32_t njobs, int codec, cl_mem out_docs, cl_mem out_freqs,
                               cl_mem status, tdm_decode_scratch *s, cl_uint nwait,
                               const cl_event *wait, cl_event *done, tdm_err *err)
{
    plan p = {.res = res, .q = q, .jobs = jobs, .docs = out_docs, .freqs = out_freqs,
              .status = status, .njobs = njobs, .codec = (uint32_t)codec, .scr = s};
    return enqueue(&p, nwait, wait, done, err);
}

int tdm_decode_jobs_status(const tdm_resident *res, cl_mem status, cl_uint nwait,
                           const cl_event *wait, tdm_err *err)
{
    cl_uint flags = 0;
    int st = tdm_download(res->dev, status, 0, 4, &flags, nwait, wait, NULL, err);
    if (st != TDM_OK)
        return st;
    if (flags & TDM_CODEC_ST_CORRUPT)
        return tdm_err_set(err, TDM_ERR_CORRUPT,
                           "%s: corrupt payload or block table (found by a batched decode on %s)",
                           tdm_ireader_path(res->r), res->dev->info.name);
    if (flags & TDM_CODEC_ST_BADJOB)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "batched decode on %s: a job named a list or block out of range, a "
                           "list of another codec, or an output past its buffer",
                           res->dev->info.name);
    return TDM_OK;
}

/* ---- host-made job tables */

uint32_t tdm_decode_range_postings(uint32_t df, uint32_t block, uint32_t begin, uint32_t end)
{
    uint64_t first = (uint64_t)begin * block, last = (uint64_t)end * block;
    last = last < df ? last : df;
    return last > first ? (uint32_t)(last - first) : 0;
}

void tdm_decode_batch_free(tdm_decode_batch *b)
{
    if (!b)
        return;
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        free(b->jobs[c]);
    free(b->out);
    memset(b, 0, sizeof *b);
}

/* Checks request i and fills its job (out left to the caller). */
static int make_job(const tdm_ireader *r, const tdm_idx_list *lists, const uint8_t *codecs,
                    uint64_t nterms, const tdm_decode_req *q, size_t i, tdm_decode_job *j,
                    int *codec, uint32_t *postings, tdm_err *err)
{
    if (q->list >= nterms)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "%s: decode request %zu: list %u out of range (%llu lists)",
                           tdm_ireader_path(r), i, q->list, (unsigned long long)nterms);
    const tdm_codec_ops *ops = tdm_codec_by_id(codecs[q->list]);
    uint32_t df = lists[q->list].df, nb = df / ops->block_size + (df % ops->block_size != 0);
    uint32_t end = q->block_end == TDM_DECODE_TO_END ? nb : q->block_end;
    if (q->block_begin > end || end > nb)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "%s: decode request %zu: blocks [%u, %u) of list %u, which has %u",
                           tdm_ireader_path(r), i, q->block_begin, end, q->list, nb);
    *j = (tdm_decode_job){.list = q->list, .block_begin = q->block_begin, .block_end = end};
    *codec = codecs[q->list];
    *postings = tdm_decode_range_postings(df, ops->block_size, q->block_begin, end);
    return TDM_OK;
}

int tdm_decode_batch_build(const tdm_ireader *r, const tdm_decode_req *req, size_t nreq,
                           tdm_decode_batch *b, tdm_err *err)
{
    memset(b, 0, sizeof *b);
    uint64_t sz;
    const tdm_idx_list *lists = tdm_ireader_section(r, TDM_SEC_LISTS, &sz);
    const uint8_t *codecs = tdm_ireader_section(r, TDM_SEC_CODECS, &sz);
    uint64_t nterms = tdm_ireader_info_get(r)->nterms;
    tdm_decode_job *all = malloc((nreq ? nreq : 1) * sizeof *all);
    uint8_t *cid = malloc(nreq ? nreq : 1);
    b->out = malloc((nreq ? nreq : 1) * sizeof *b->out);
    b->nreq = nreq;
    int st = all && cid && b->out ? TDM_OK
                                  : tdm_err_set(err, TDM_ERR_NOMEM, "decode requests: %zu", nreq);
    uint64_t pos = 0;
    for (size_t i = 0; st == TDM_OK && i < nreq; i++) {
        int c = 0;
        uint32_t n = 0;
        st = make_job(r, lists, codecs, nterms, &req[i], i, &all[i], &c, &n, err);
        if (st == TDM_OK && pos + n > UINT32_MAX)
            st = tdm_err_set(err, TDM_ERR_LIMIT,
                             "decode requests: more than 2^32 - 1 postings (at request %zu)", i);
        if (st != TDM_OK)
            break;
        all[i].out = b->out[i] = (uint32_t)pos;
        pos += n;
        cid[i] = (uint8_t)c;
        b->njobs[c]++;
        b->nblocks += all[i].block_end - all[i].block_begin;
    }
    for (int c = 0; st == TDM_OK && c < TDM_CODEC_COUNT; c++)
        if (b->njobs[c] && !(b->jobs[c] = malloc((size_t)b->njobs[c] * sizeof **b->jobs)))
            st = tdm_err_set(err, TDM_ERR_NOMEM, "decode requests: %u jobs", b->njobs[c]);
    uint32_t fill[TDM_CODEC_COUNT] = {0};
    for (size_t i = 0; st == TDM_OK && i < nreq; i++)
        b->jobs[cid[i]][fill[cid[i]]++] = all[i];
    b->npostings = pos;
    free(all);
    free(cid);
    if (st != TDM_OK)
        tdm_decode_batch_free(b);
    return st;
}

int tdm_decode_batch_upload(const tdm_resident *res, const tdm_decode_batch *b,
                            cl_mem bufs[TDM_CODEC_COUNT], tdm_err *err)
{
    int st = TDM_OK;
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        bufs[c] = NULL;
    for (int c = 0; st == TDM_OK && c < TDM_CODEC_COUNT; c++) {
        if (!b->njobs[c])
            continue;
        size_t bytes = (size_t)b->njobs[c] * sizeof **b->jobs;
        st = tdm_buffer_create(res->dev, CL_MEM_READ_ONLY, bytes, NULL, &bufs[c], err);
        if (st == TDM_OK)
            st = tdm_upload(res->dev, bufs[c], 0, bytes, b->jobs[c], 0, NULL, NULL, err);
    }
    for (int c = 0; st != TDM_OK && c < TDM_CODEC_COUNT; c++)
        if (bufs[c]) {
            clReleaseMemObject(bufs[c]);
            bufs[c] = NULL;
        }
    return st;
}

/* Blocks of codec c's jobs in b, for the launch's size. */
static uint64_t codec_blocks(const tdm_decode_batch *b, int c)
{
    uint64_t n = 0;
    for (uint32_t k = 0; k < b->njobs[c]; k++)
        n += b->jobs[c][k].block_end - b->jobs[c][k].block_begin;
    return n;
}

int tdm_decode_batch_enqueue(const tdm_resident *res, cl_command_queue q,
                             const tdm_decode_batch *b, cl_mem const bufs[TDM_CODEC_COUNT],
                             cl_mem out_docs, cl_mem out_freqs, cl_mem status, cl_uint nwait,
                             const cl_event *wait, cl_event *done, tdm_err *err)
{
    return tdm_decode_batch_enqueue_timed(res, q, b, bufs, out_docs, out_freqs, status, nwait,
                                          wait, done, NULL, err);
}

static int batch_enqueue(const tdm_resident *res, cl_command_queue q, const tdm_decode_batch *b,
                         cl_mem const bufs[TDM_CODEC_COUNT], cl_mem out_docs, cl_mem out_freqs,
                         cl_mem status, tdm_decode_scratch *scr, cl_uint nwait,
                         const cl_event *wait, cl_event *done, cl_event *first, tdm_err *err);

int tdm_decode_batch_enqueue_in(const tdm_resident *res, cl_command_queue q,
                                const tdm_decode_batch *b, cl_mem const bufs[TDM_CODEC_COUNT],
                                cl_mem out_docs, cl_mem out_freqs, cl_mem status,
                                tdm_decode_scratch *s, cl_uint nwait, const cl_event *wait,
                                cl_event *done, tdm_err *err)
{
    return batch_enqueue(res, q, b, bufs, out_docs, out_freqs, status, s, nwait, wait, done,
                         NULL, err);
}

int tdm_decode_batch_enqueue_timed(const tdm_resident *res, cl_command_queue q,
                                   const tdm_decode_batch *b, cl_mem const bufs[TDM_CODEC_COUNT],
                                   cl_mem out_docs, cl_mem out_freqs, cl_mem status,
                                   cl_uint nwait, const cl_event *wait, cl_event *done,
                                   cl_event *first, tdm_err *err)
{
    return batch_enqueue(res, q, b, bufs, out_docs, out_freqs, status, NULL, nwait, wait, done,
                         first, err);
}

static int batch_enqueue(const tdm_resident *res, cl_command_queue q, const tdm_decode_batch *b,
                         cl_mem const bufs[TDM_CODEC_COUNT], cl_mem out_docs, cl_mem out_freqs,
                         cl_mem status, tdm_decode_scratch *scr, cl_uint nwait,
                         const cl_event *wait, cl_event *done, cl_event *first, tdm_err *err)
{
    /* In order on one queue: the last codec's decode (or, with no job, a
       marker after the wait list) completes after everything before it, so
       it is `done`; the codecs before it make no event. */
    cl_event last = NULL;
    int st = TDM_OK, ncodecs = 0;
    if (done)
        *done = NULL;
    if (first)
        *first = NULL;
    for (int c = 0; st == TDM_OK && c < TDM_CODEC_COUNT; c++) {
        if (!b->njobs[c])
            continue;
        plan p = {.res = res, .q = q, .jobs = bufs[c], .docs = out_docs, .freqs = out_freqs,
                  .status = status, .njobs = b->njobs[c], .codec = (uint32_t)c,
                  .blocks_hint = codec_blocks(b, c), .first = first && !*first ? first : NULL,
                  .scr = scr};
        if (p.blocks_hint == 0)
            p.blocks_hint = 1; /* known to be empty: one group */
        if (last)
            clReleaseEvent(last);
        last = NULL;
        /* the caller's wait list before the first codec's kernels only */
        st = ncodecs ? enqueue(&p, 0, NULL, done ? &last : NULL, err)
                     : enqueue(&p, nwait, wait, done ? &last : NULL, err);
        ncodecs++;
    }
    if (st == TDM_OK && done && ncodecs) {
        *done = last;
        last = NULL;
    } else if (st == TDM_OK && done) {
        tdm_wait_flush(q ? q : res->dev->queue, nwait, wait);
        cl_int rc = clEnqueueMarkerWithWaitList(q ? q : res->dev->queue, nwait,
                                                nwait ? wait : NULL, done);
        if (rc != CL_SUCCESS)
            st = tdm_cl_fail(err, rc, "clEnqueueMarkerWithWaitList");
    }
    if (last)
        clReleaseEvent(last);
    return st;
}

/* Jobs a tile of the count kernel takes on d (one work-group's). */
static uint64_t tile_jobs(const tdm_device *d)
{
    return (uint64_t)d->wg_size * TDM_JOBS_PER_ITEM;
}

uint32_t tdm_decode_prefix_tiles(const tdm_device *d, uint32_t njobs)
{
    uint64_t tile = tile_jobs(d);
    return (uint32_t)((njobs + tile - 1) / tile);
}

int tdm_decode_prefix_fill(const tdm_resident *res, const tdm_decode_batch *b, int c,
                           uint32_t outs, uint32_t docs_cap, uint32_t freqs_cap, uint32_t *jpre,
                           uint32_t *tsum, tdm_err *err)
{
    uint64_t sz;
    const tdm_idx_list *lists = tdm_ireader_section(res->r, TDM_SEC_LISTS, &sz);
    const uint8_t *codecs = tdm_ireader_section(res->r, TDM_SEC_CODECS, &sz);
    const tdm_codec_ops *ops = tdm_codec_by_id(c);
    uint64_t tile = tile_jobs(res->dev), before = 0, in_tile = 0;
    tsum[0] = 0;
    for (uint32_t j = 0; j < b->njobs[c]; j++) {
        const tdm_decode_job *x = &b->jobs[c][j];
        /* tdm_jobs_count_one's checks */
        uint32_t df = x->list < res->nlists ? lists[x->list].df : 0;
        uint32_t bs = ops ? ops->block_size : 1, nb = df / bs + (df % bs != 0);
        uint64_t end = (uint64_t)x->out + tdm_decode_range_postings(df, bs, x->block_begin,
                                                                    x->block_end);
        if (!ops || x->list >= res->nlists || codecs[x->list] != c ||
            x->block_begin > x->block_end || x->block_end > nb ||
            ((outs & 1u) && end > docs_cap) || ((outs & 2u) && end > freqs_cap))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "batched decode: job %u (list %u, "
                               "blocks [%u, %u), out %u) refused on %s", j, x->list,
                               x->block_begin, x->block_end, x->out, res->dev->info.name);
        if (j % tile == 0 && j) { /* a new tile: the last one's blocks */
            tsum[j / tile] = (uint32_t)before;
            in_tile = 0;
        }
        jpre[j] = (uint32_t)in_tile;
        in_tile += x->block_end - x->block_begin;
        before += x->block_end - x->block_begin;
        if (before > UINT32_MAX)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "batched decode: 2^32 blocks or more "
                               "in one launch (at job %u)", j);
    }
    tsum[tdm_decode_prefix_tiles(res->dev, b->njobs[c])] = (uint32_t)before;
    return TDM_OK;
}

int tdm_decode_batch_enqueue_pre(const tdm_resident *res, cl_command_queue q,
                                 const tdm_decode_batch *b, int c, cl_mem jobs, cl_mem jpre,
                                 cl_mem tsum, cl_mem out_docs, cl_mem out_freqs, cl_mem status,
                                 cl_uint nwait, const cl_event *wait, cl_event *done,
                                 tdm_err *err)
{
    plan p = {.res = res, .q = q, .jobs = jobs, .docs = out_docs, .freqs = out_freqs,
              .status = status, .njobs = b->njobs[c], .codec = (uint32_t)c,
              .blocks_hint = codec_blocks(b, c), .jpre = jpre, .tsum = tsum, .pre = 1};
    if (p.blocks_hint == 0)
        p.blocks_hint = 1; /* known to be empty: one group */
    return enqueue(&p, nwait, wait, done, err);
}
