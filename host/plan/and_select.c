/* AND's block selection (and_select.h): the table, the launches, the
 * plain-C reference. */
#include "and_select.h"

#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "index/format.h"
#include "search_plan.h"
#include "tandem.h"

void tdm_and_sel_free(tdm_and_sel *a)
{
    free(a->tab);
    memset(a, 0, sizeof *a);
}

/* Each term's mode, tasks, flags and job slots once the lead is known. */
static void fill_modes(tdm_and_sel *a, uint32_t ratio)
{
    uint32_t lead_df = a->tab[a->lead * TDM_SEL_TW + TDM_SEL_DF];
    uint32_t task = 0, flag = 0;
    for (uint32_t t = 0; t < a->nt; t++) {
        uint32_t *w = a->tab + (size_t)t * TDM_SEL_TW;
        if (t == a->lead)
            w[TDM_SEL_MODE] = TDM_SEL_M_LEAD;
        else if (w[TDM_SEL_NB] <= 1)
            w[TDM_SEL_MODE] = TDM_SEL_M_ONE;
        else
            w[TDM_SEL_MODE] = (uint64_t)w[TDM_SEL_DF] > (uint64_t)ratio * lead_df ? TDM_SEL_M_DOC
                                                                                  : TDM_SEL_M_BLOCK;
        w[TDM_SEL_TASK] = task;
        w[TDM_SEL_FLAG] = flag;
        task += w[TDM_SEL_MODE] == TDM_SEL_M_BLOCK ? w[TDM_SEL_NB]
                : w[TDM_SEL_MODE] == TDM_SEL_M_DOC ? lead_df
                                                   : 0;
        if (w[TDM_SEL_MODE] != TDM_SEL_M_LEAD) {
            flag += w[TDM_SEL_NB];
            w[TDM_SEL_JOB] = a->njobs[w[TDM_SEL_CODEC]];
            a->njobs[w[TDM_SEL_CODEC]] += w[TDM_SEL_NB];
            a->blocks_all += w[TDM_SEL_NB];
        }
    }
    a->ntasks = task;
    a->nflags = flag;
}

int tdm_and_sel_build(const tdm_ireader *r, const tdm_query *q, uint32_t ratio, tdm_and_sel *a,
                      tdm_err *err)
{
    return tdm_and_sel_build_lists(r, q, NULL, ratio, a, err);
}

int tdm_and_sel_build_lists(const tdm_ireader *r, const tdm_query *q, const tdm_ilist *lists,
                            uint32_t ratio, tdm_and_sel *a, tdm_err *err)
{
    memset(a, 0, sizeof *a);
    a->nt = (uint32_t)q->nterms;
    if (!a->nt)
        return TDM_OK;
    a->tab = calloc((size_t)a->nt * TDM_SEL_TW, sizeof *a->tab);
    if (!a->tab)
        return tdm_err_set(err, TDM_ERR_NOMEM, "AND selection: out of memory");
    uint64_t sz;
    const uint8_t *codecs = tdm_ireader_section(r, TDM_SEC_CODECS, &sz);
    for (uint32_t t = 0; t < a->nt; t++) {
        tdm_ilist l;
        int rc = TDM_OK;
        if (lists)
            l = lists[t];
        else
            rc = tdm_ireader_list(r, q->terms[t].id, &l, err);
        if (rc) {
            tdm_and_sel_free(a);
            return rc;
        }
        uint32_t *w = a->tab + (size_t)t * TDM_SEL_TW;
        w[TDM_SEL_LIST] = (uint32_t)q->terms[t].id;
        w[TDM_SEL_DF] = l.df;
        w[TDM_SEL_NB] = l.nblocks;
        w[TDM_SEL_BSIZE] = l.docs.block_size;
        w[TDM_SEL_ENTRY] = l.nblocks > 1 ? l.first_entry : 0;
        w[TDM_SEL_CODEC] = codecs[q->terms[t].id];
        if (l.df < a->tab[a->lead * TDM_SEL_TW + TDM_SEL_DF])
            a->lead = t;
    }
    const uint32_t *lw = a->tab + (size_t)a->lead * TDM_SEL_TW;
    a->lead_job = (tdm_decode_job){lw[TDM_SEL_LIST], 0, lw[TDM_SEL_NB], 0};
    a->lead_codec = (int)lw[TDM_SEL_CODEC];
    fill_modes(a, ratio ? ratio : TDM_SEL_RATIO);
    return TDM_OK;
}

size_t tdm_and_sel_tab_bytes(const tdm_and_sel *a)
{
    return (size_t)(a->nt ? a->nt : 1) * TDM_SEL_TW * 4;
}

size_t tdm_and_sel_flag_bytes(const tdm_and_sel *a)
{
    return (size_t)(a->nflags ? a->nflags : 1) * 4;
}

size_t tdm_and_sel_job_bytes(const tdm_and_sel *a, int codec)
{
    return (size_t)a->njobs[codec] * sizeof(tdm_decode_job);
}

/* The selection and each codec's jobs kernel, in order on q after what is
 * already there (every queue of a device is in order: no event between
 * them, each costing the host ~2 us an enqueue on the H200). */
static int select_and_jobs(const tdm_resident *res, cl_command_queue q, const tdm_and_sel *a,
                           cl_mem tab, cl_mem flags, cl_mem const jobs[TDM_CODEC_COUNT],
                           cl_mem docs, cl_mem terms, uint32_t *launches, tdm_err *err)
{
    tdm_device *d = res->dev;
    size_t wg = d->wg_size;
    static const cl_uint zero = 0;
    cl_int cr = clEnqueueFillBuffer(q, flags, &zero, 4, 0, tdm_and_sel_flag_bytes(a), 0, NULL,
                                    NULL);
    if (cr != CL_SUCCESS)
        return tdm_cl_fail(err, cr, "clEnqueueFillBuffer (AND selection flags)");
    cl_uint nt = a->nt, ntasks = a->ntasks, ldf = a->tab[a->lead * TDM_SEL_TW + TDM_SEL_DF];
    int rc = TDM_OK;
    if (ntasks) {
        tdm_karg sa[] = {TDM_KARG_MEM(&res->block_last), TDM_KARG_MEM(&tab), TDM_KARG_U32(&nt),
                         TDM_KARG_U32(&ntasks), TDM_KARG_MEM(&docs), TDM_KARG_U32(&ldf),
                         TDM_KARG_MEM(&flags)};
        rc = tdm_kernel_launch_on(d, q, "tdm_and_select", sa, 7, tdm_round_up(ntasks, wg), wg, 0,
                                  NULL, NULL, err);
        if (rc)
            return rc;
        ++*launches;
    }
    int first = 1;
    /* c == TDM_CODEC_COUNT: only the lead (or one-block lists of no codec),
       whose term table is still to be written */
    for (int c = 0; c <= TDM_CODEC_COUNT; c++) {
        if (c < TDM_CODEC_COUNT ? !a->njobs[c] : !first)
            continue;
        cl_uint cc = (cl_uint)c, wt = (cl_uint)first;
        cl_mem jb = c < TDM_CODEC_COUNT ? jobs[c] : flags;
        tdm_karg ja[] = {TDM_KARG_MEM(&tab),  TDM_KARG_U32(&nt),    TDM_KARG_MEM(&flags),
                         TDM_KARG_MEM(&jb),   TDM_KARG_U32(&cc),    TDM_KARG_MEM(&terms),
                         TDM_KARG_U32(&wt)};
        rc = tdm_kernel_launch_on(d, q, "tdm_and_jobs", ja, 7, wg, wg, 0, NULL, NULL, err);
        if (rc)
            return rc;
        ++*launches;
        first = 0;
    }
    return rc;
}

int tdm_and_sel_enqueue(const tdm_resident *res, cl_command_queue q, tdm_decode_scratch *scr,
                        const tdm_and_sel *a, int uploaded, cl_mem tab, cl_mem lead_job,
                        cl_mem flags, cl_mem const jobs[TDM_CODEC_COUNT], cl_mem docs,
                        cl_mem freqs, cl_mem terms, cl_mem status, cl_uint nwait,
                        const cl_event *wait, cl_event *done, uint32_t *launches,
                        uint64_t *bytes_up, tdm_err *err)
{
    tdm_device *d = res->dev;
    if (!q)
        q = d->queue;
    if (done)
        *done = NULL;
    /* on q, in order before the kernels that read them */
    cl_int cr = CL_SUCCESS;
    if (!uploaded) {
        cr = clEnqueueWriteBuffer(q, tab, CL_FALSE, 0, tdm_and_sel_tab_bytes(a), a->tab, 0, NULL,
                                  NULL);
        if (cr == CL_SUCCESS)
            cr = clEnqueueWriteBuffer(q, lead_job, CL_FALSE, 0, sizeof a->lead_job,
                                      &a->lead_job, 0, NULL, NULL);
    }
    int rc = cr == CL_SUCCESS ? TDM_OK
                              : tdm_cl_fail(err, cr, "clEnqueueWriteBuffer (AND selection)");
    if (rc == TDM_OK) {
        *bytes_up += uploaded ? 0 : tdm_and_sel_tab_bytes(a) + sizeof a->lead_job;
        /* after the caller's events too: the term table rewritten below, the status */
        rc = tdm_decode_jobs_enqueue_in(res, q, lead_job, 1, a->lead_codec, docs, freqs, status,
                                        scr, nwait, wait, NULL, err);
    }
    if (rc)
        return rc;
    *launches += 1;
    rc = select_and_jobs(res, q, a, tab, flags, jobs, docs, terms, launches, err);
    int last = -1;
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        last = a->njobs[c] ? c : last;
    for (int c = 0; rc == TDM_OK && c <= last; c++) {
        if (!a->njobs[c])
            continue;
        rc = tdm_decode_jobs_enqueue_in(res, q, jobs[c], a->njobs[c], c, docs, freqs, status,
                                        scr, 0, NULL, c == last ? done : NULL, err);
        if (rc == TDM_OK)
            *launches += 1;
    }
    if (rc == TDM_OK && done && !*done) { /* no decode after the selection */
        cr = clEnqueueMarkerWithWaitList(q, 0, NULL, done);
        if (cr != CL_SUCCESS)
            rc = tdm_cl_fail(err, cr, "clEnqueueMarkerWithWaitList (AND selection)");
    }
    if (rc && done && *done) {
        clReleaseEvent(*done);
        *done = NULL;
    }
    return rc;
}

/* ---- the reference */

/* Whether block j of the list with block lasts `last` (j = 0 from docid 0)
 * holds a docid of lead[0 .. n). */
static int block_hit(const uint32_t *last, uint32_t j, const uint32_t *lead, uint32_t n)
{
    uint32_t lo = j ? last[j - 1] + 1 : 0, hi = last[j];
    for (uint32_t i = 0; i < n; i++) /* linear: a reference, not a search */
        if (lead[i] >= lo)
            return lead[i] <= hi;
    return 0;
}

int tdm_and_sel_ref(const tdm_ireader *r, const tdm_query *q, const tdm_and_sel *a,
                    uint32_t *docs, uint32_t *freqs, uint32_t *pos, uint32_t *len,
                    uint64_t *selected, tdm_err *err)
{
    *selected = 0;
    if (!a->nt)
        return TDM_OK;
    const uint32_t *lw = a->tab + (size_t)a->lead * TDM_SEL_TW;
    int rc = tdm_ireader_decode(r, lw[TDM_SEL_LIST], docs, freqs, err);
    if (rc)
        return rc;
    uint32_t n = lw[TDM_SEL_DF], at = n;
    pos[a->lead] = 0;
    len[a->lead] = n;
    uint32_t *ld = malloc((size_t)(n ? n : 1) * 4);
    if (!ld)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    memcpy(ld, docs, (size_t)n * 4);
    for (uint32_t t = 0; rc == TDM_OK && t < a->nt; t++) {
        if (t == a->lead)
            continue;
        tdm_ilist l;
        rc = tdm_ireader_list(r, q->terms[t].id, &l, err);
        uint32_t *d = NULL, *f = NULL;
        if (rc == TDM_OK) {
            d = malloc((size_t)l.df * 4);
            f = malloc((size_t)l.df * 4);
            rc = d && f ? tdm_ireader_decode(r, q->terms[t].id, d, f, err)
                        : tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        }
        pos[t] = at;
        uint32_t bs = l.docs.block_size;
        for (uint32_t j = 0; rc == TDM_OK && j < l.nblocks; j++) {
            if (l.nblocks > 1 && !block_hit(l.block_last, j, ld, n))
                continue;
            ++*selected;
            for (uint32_t i = j * bs; i < l.df && i < (j + 1) * bs; i++) {
                docs[at] = d[i];
                freqs[at++] = f[i];
            }
        }
        len[t] = at - pos[t];
        free(d);
        free(f);
    }
    free(ld);
    return rc;
}
