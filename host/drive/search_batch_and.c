/* Ranked AND batches with Wu's mapping (search_batch_and.h,
 * cl/search_batch_and.cl): the host tables, the launches, the plain-C
 * reference.
 *
 * Host: per query its term table (search_range.cl's words 0 to 4, word 0
 * shifted to the batch's postings, word 5 the list's first block-table
 * entry, word 6 its blocks), a query table row, one decode job for its lead
 * (the first of its shortest lists) and, per non-lead list, a select-table
 * row in its codec's part. Nothing per block or posting goes up: the jobs
 * of the other lists are made on the device. */
#include "search_batch_and.h"

#include <stdlib.h>
#include <string.h>

#include "index/format.h"
#include "resident/listcache.h"

/* What the tables need of one term of a query. */
typedef struct tinfo {
    uint32_t list, df, nb, entry, bs, codec, pos;
} tinfo;

/* Term t of p (query q on r), pos its first posting in the query's layout. */
static int term_info(const tdm_ireader *r, const tdm_query *q, const tdm_sprep *p, uint32_t t,
                     tinfo *o, tdm_err *err)
{
    tdm_ilist l;
    int rc = tdm_ireader_list(r, q->terms[t].id, &l, err);
    if (rc)
        return rc;
    uint64_t sz;
    const uint8_t *codecs = tdm_ireader_section(r, TDM_SEC_CODECS, &sz);
    const uint32_t *w = p->terms + (size_t)t * TDM_SEARCH_TW;
    o->list = (uint32_t)q->terms[t].id;
    o->df = w[TDM_TW_DF]; /* the term table's (tests shorten it) */
    o->nb = l.nblocks;
    o->entry = l.nblocks > 1 ? l.first_entry : 0;
    o->bs = l.docs.block_size;
    o->codec = codecs[q->terms[t].id];
    o->pos = w[TDM_TW_POS];
    if (o->codec >= TDM_CODEC_COUNT)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: list %u: codec %u unknown",
                           tdm_ireader_path(r), o->list, o->codec);
    return TDM_OK;
}

/* The first term with the fewest postings (the lead). */
static uint32_t lead_of(const tinfo *ti, uint32_t nt)
{
    uint32_t lead = 0;
    for (uint32_t t = 1; t < nt; t++)
        if (ti[t].df < ti[lead].df)
            lead = t;
    return lead;
}

typedef struct host_side {
    tinfo *ti;          /* every term of the batch, queries in order */
    uint32_t *terms, *qtab, *selt;
    tdm_decode_job *lead[TDM_CODEC_COUNT], *all[TDM_CODEC_COUNT];
    uint32_t nlead[TDM_CODEC_COUNT], nall[TDM_CODEC_COUNT];
    uint32_t rows[TDM_CODEC_COUNT], row0[TDM_CODEC_COUNT], nblk[TDM_CODEC_COUNT];
    size_t nterms, npost, nelem, nrows;
    uint64_t *out;
} host_side;

static void host_free(host_side *h)
{
    free(h->ti);
    free(h->terms);
    free(h->qtab);
    free(h->selt);
    free(h->out);
    for (int c = 0; c < TDM_CODEC_COUNT; c++) {
        free(h->lead[c]);
        free(h->all[c]);
    }
}

/* Pass 1: term facts, sizes and counts. */
static int count(const tdm_ireader *r, tdm_sbq *const *qs, uint32_t n, host_side *h,
                 tdm_err *err)
{
    for (uint32_t i = 0; i < n; i++)
        h->nterms += qs[i]->p.nt;
    h->ti = malloc((h->nterms ? h->nterms : 1) * sizeof *h->ti);
    if (!h->ti)
        return tdm_err_set(err, TDM_ERR_NOMEM, "search batch: out of memory");
    uint64_t npost = 0, nelem = 0, blk[TDM_CODEC_COUNT] = {0};
    size_t tb = 0;
    for (uint32_t i = 0; i < n; i++) {
        const tdm_sprep *p = &qs[i]->p;
        tinfo *ti = h->ti + tb;
        for (uint32_t t = 0; t < p->nt; t++) {
            int rc = term_info(r, &qs[i]->q, p, t, &ti[t], err);
            if (rc)
                return rc;
        }
        tb += p->nt;
        npost += p->npost;
        if (!p->nt)
            continue;
        uint32_t lead = lead_of(ti, p->nt);
        nelem += ti[lead].df;
        h->nlead[ti[lead].codec]++;
        for (uint32_t t = 0; t < p->nt; t++) {
            h->nall[ti[t].codec]++;
            if (t != lead && ti[t].nb) {
                h->rows[ti[t].codec]++;
                blk[ti[t].codec] += ti[t].nb;
            }
        }
    }
    for (int c = 0; c < TDM_CODEC_COUNT; c++) {
        if (blk[c] > UINT32_MAX)
            return tdm_err_set(err, TDM_ERR_LIMIT, "search batch: %llu blocks of one codec "
                               "(at most %u a batch)", (unsigned long long)blk[c], UINT32_MAX);
        h->nblk[c] = (uint32_t)blk[c];
        h->row0[c] = (uint32_t)h->nrows;
        h->nrows += h->rows[c];
    }
    if (npost > UINT32_MAX || nelem > UINT32_MAX || h->nterms > UINT32_MAX / TDM_SEARCH_TW)
        return tdm_err_set(err, TDM_ERR_LIMIT, "search batch: %u queries hold %llu postings "
                           "(at most %u a batch)", n, (unsigned long long)npost, UINT32_MAX);
    h->npost = (size_t)npost;
    h->nelem = (size_t)nelem;
    return TDM_OK;
}

static int alloc_host(host_side *h, uint32_t n, uint32_t p2, tdm_err *err)
{
    h->terms = calloc((h->nterms ? h->nterms : 1) * TDM_SEARCH_TW, 4);
    h->qtab = calloc((size_t)n * TDM_SBQ_W, 4);
    h->selt = malloc((h->nrows ? h->nrows : 1) * TDM_SBA_W * 4);
    h->out = malloc((size_t)n * (p2 + 2) * 8);
    int ok = h->terms && h->qtab && h->selt && h->out;
    for (int c = 0; ok && c < TDM_CODEC_COUNT; c++) {
        if (h->nlead[c] && !(h->lead[c] = malloc(h->nlead[c] * sizeof(tdm_decode_job))))
            ok = 0;
        if (h->nall[c] && !(h->all[c] = malloc(h->nall[c] * sizeof(tdm_decode_job))))
            ok = 0;
    }
    return ok ? TDM_OK
              : tdm_err_set(err, TDM_ERR_NOMEM, "search batch: out of memory for %u queries", n);
}

/* Pass 2: the tables. */
static void fill(tdm_sbq *const *qs, uint32_t n, host_side *h)
{
    size_t tb = 0, pb = 0, bb = 0, eb = 0;
    uint32_t nl[TDM_CODEC_COUNT] = {0}, na[TDM_CODEC_COUNT] = {0}, row[TDM_CODEC_COUNT],
             blk[TDM_CODEC_COUNT] = {0};
    memcpy(row, h->row0, sizeof row);
    for (uint32_t i = 0; i < n; i++) {
        const tdm_sprep *p = &qs[i]->p;
        const tinfo *ti = h->ti + tb;
        uint32_t lead = p->nt ? lead_of(ti, p->nt) : 0;
        uint32_t *w = h->terms + tb * TDM_SEARCH_TW;
        for (uint32_t t = 0; t < p->nt; t++) {
            uint32_t *x = w + t * TDM_SEARCH_TW; /* words POS .. QW, then AND's own */
            memcpy(x, p->terms + (size_t)t * TDM_SEARCH_TW, (TDM_TW_QW + 1) * 4);
            x[TDM_TW_POS] += (uint32_t)pb;
            x[TDM_TW_BMAX] += (uint32_t)bb;
            x[TDM_TW_AND_ENTRY] = ti[t].entry;
            x[TDM_TW_AND_NB] = ti[t].nb;
            uint32_t c = ti[t].codec, at = ti[t].pos + (uint32_t)pb;
            h->all[c][na[c]++] = (tdm_decode_job){ti[t].list, 0, ti[t].nb, at};
            if (t == lead)
                h->lead[c][nl[c]++] = (tdm_decode_job){ti[t].list, 0, ti[t].nb, at};
        }
        uint32_t lat = p->nt ? ti[lead].pos + (uint32_t)pb : 0, ldf = p->nt ? ti[lead].df : 0;
        for (uint32_t t = 0; t < p->nt; t++) {
            if (t == lead || !ti[t].nb)
                continue;
            uint32_t c = ti[t].codec;
            uint32_t *s = h->selt + (size_t)row[c]++ * TDM_SBA_W;
            s[TDM_SBA_JOB0] = blk[c];
            s[TDM_SBA_LIST] = ti[t].list;
            s[TDM_SBA_NB] = ti[t].nb;
            s[TDM_SBA_ENTRY] = ti[t].entry;
            s[TDM_SBA_POS] = ti[t].pos + (uint32_t)pb;
            s[TDM_SBA_BSIZE] = ti[t].bs;
            s[TDM_SBA_LEADPOS] = lat;
            s[TDM_SBA_LEADLEN] = ldf;
            blk[c] += ti[t].nb;
        }
        uint32_t *q = h->qtab + (size_t)i * TDM_SBQ_W;
        q[TDM_SBQ_TERM] = (uint32_t)tb;
        q[TDM_SBQ_NT] = p->nt;
        q[TDM_SBQ_LEAD0] = (uint32_t)eb;
        q[TDM_SBQ_MATCHES] = 0; /* counted on the device */
        q[TDM_SBQ_LEAD] = lead;
        q[TDM_SBQ_CAP] = 1;
        q[TDM_SBQ_HEAP] = (uint32_t)eb;
        tb += p->nt;
        pb += p->npost;
        bb += p->nbmax;
        eb += ldf;
    }
}

/* ---- device side */

enum { D_DOCS, D_FREQS, D_TERMS, D_QTAB, D_SELT, D_HS, D_HD, D_HN, D_OUT, D_STATUS, D_COUNT };

typedef struct dev_side {
    cl_mem b[D_COUNT];
    cl_mem lead[TDM_CODEC_COUNT], jobs[TDM_CODEC_COUNT];
} dev_side;

static void dev_free(dev_side *ds)
{
    for (int i = 0; i < D_COUNT; i++)
        if (ds->b[i])
            clReleaseMemObject(ds->b[i]);
    for (int c = 0; c < TDM_CODEC_COUNT; c++) {
        if (ds->lead[c])
            clReleaseMemObject(ds->lead[c]);
        if (ds->jobs[c])
            clReleaseMemObject(ds->jobs[c]);
    }
}

/* Buffers and the uploads (non-blocking, on the compute queue: h outlives
 * the batch's last command, the blocking download). */
static int make_device(tdm_device *d, const host_side *h, uint32_t n, uint32_t p2, dev_side *ds,
                       uint64_t *up, tdm_err *err)
{
    static const cl_uint zero = 0;
    size_t bytes[D_COUNT] = {
        [D_DOCS] = h->npost * 4,
        [D_FREQS] = h->npost * 4,
        [D_TERMS] = h->nterms * TDM_SEARCH_TW * 4,
        [D_QTAB] = (size_t)n * TDM_SBQ_W * 4,
        [D_SELT] = h->nrows * TDM_SBA_W * 4,
        [D_HS] = h->nelem * 4,
        [D_HD] = h->nelem * 4,
        [D_HN] = h->nelem * 4,
        [D_OUT] = (size_t)n * (p2 + 2) * 8,
        [D_STATUS] = 4,
    };
    int rc = TDM_OK;
    for (int i = 0; rc == TDM_OK && i < D_COUNT; i++)
        rc = tdm_buffer_create(d, CL_MEM_READ_WRITE, bytes[i] ? bytes[i] : 4, NULL, &ds->b[i], err);
    for (int c = 0; rc == TDM_OK && c < TDM_CODEC_COUNT; c++) {
        if (h->nlead[c])
            rc = tdm_buffer_create(d, CL_MEM_READ_ONLY, h->nlead[c] * sizeof(tdm_decode_job),
                                   NULL, &ds->lead[c], err);
        if (rc == TDM_OK && h->nblk[c])
            rc = tdm_buffer_create(d, CL_MEM_READ_WRITE, (size_t)h->nblk[c] * sizeof(tdm_decode_job),
                                   NULL, &ds->jobs[c], err);
    }
    if (rc == TDM_OK)
        rc = tdm_search_batch_upload(d, ds->b[D_TERMS], bytes[D_TERMS], h->terms, up, err);
    if (rc == TDM_OK)
        rc = tdm_search_batch_upload(d, ds->b[D_QTAB], bytes[D_QTAB], h->qtab, up, err);
    if (rc == TDM_OK)
        rc = tdm_search_batch_upload(d, ds->b[D_SELT], bytes[D_SELT], h->selt, up, err);
    if (rc == TDM_OK)
        rc = tdm_search_batch_upload(d, ds->b[D_STATUS], 4, &zero, up, err);
    for (int c = 0; rc == TDM_OK && c < TDM_CODEC_COUNT; c++)
        if (h->nlead[c])
            rc = tdm_search_batch_upload(d, ds->lead[c], h->nlead[c] * sizeof(tdm_decode_job),
                                         h->lead[c], up, err);
    return rc;
}

/* tdm_sband_select (cl/search_batch_and.cl): codec c's selected blocks'
 * jobs from the lead's docids. */
static cl_uint select_args(const tdm_resident *res, const dev_side *ds, int c, const cl_uint *r0,
                           const cl_uint *nr, const cl_uint *nb, tdm_karg *a)
{
    const tdm_karg args[] = {
        TDM_KARG_MEM(&res->block_last), TDM_KARG_MEM(&ds->b[D_SELT]), TDM_KARG_U32(r0),
        TDM_KARG_U32(nr),               TDM_KARG_U32(nb),              TDM_KARG_MEM(&ds->b[D_DOCS]),
        TDM_KARG_MEM(&ds->jobs[c]),
    };
    memcpy(a, args, sizeof args);
    return sizeof args / sizeof *args;
}

/* What tdm_sband_score scores: the batch's queries, lead elements, scoring. */
typedef struct score_in {
    cl_uint nq, ne, kind, ndocs;
    cl_float c0, c1;
} score_in;

/* tdm_sband_score (cl/search_batch_and.cl): a work-item a lead element. */
static cl_uint score_args(const tdm_resident *res, const dev_side *ds, const score_in *in,
                          tdm_karg *a)
{
    const tdm_karg args[] = {
        TDM_KARG_MEM(&ds->b[D_DOCS]),  TDM_KARG_MEM(&ds->b[D_FREQS]),
        TDM_KARG_MEM(&ds->b[D_TERMS]), TDM_KARG_MEM(&res->doclens),
        TDM_KARG_U32(&in->ndocs),      TDM_KARG_MEM(&res->block_last),
        TDM_KARG_MEM(&ds->b[D_QTAB]),  TDM_KARG_U32(&in->nq),
        TDM_KARG_U32(&in->ne),         TDM_KARG_U32(&in->kind),
        {sizeof in->c0, &in->c0},      {sizeof in->c1, &in->c1},
        TDM_KARG_MEM(&ds->b[D_HS]),    TDM_KARG_MEM(&ds->b[D_HD]),
        TDM_KARG_MEM(&ds->b[D_HN]),
    };
    memcpy(a, args, sizeof args);
    return sizeof args / sizeof *args;
}

/* tdm_search_merge_batch (cl/search_batch.cl): each query's heaps to its
 * best k. */
static cl_uint merge_args(const dev_side *ds, const cl_uint *k, const cl_uint *pow2, tdm_karg *a)
{
    const tdm_karg args[] = {
        TDM_KARG_MEM(&ds->b[D_HS]),   TDM_KARG_MEM(&ds->b[D_HD]), TDM_KARG_MEM(&ds->b[D_HN]),
        TDM_KARG_MEM(&ds->b[D_QTAB]), TDM_KARG_U32(k),            TDM_KARG_U32(pow2),
        TDM_KARG_MEM(&ds->b[D_OUT]),  TDM_KARG_MEM(&ds->b[D_STATUS]),
    };
    memcpy(a, args, sizeof args);
    return sizeof args / sizeof *args;
}

/* The leads' decodes, each codec's selection and decode. */
static int enqueue_decodes(const tdm_sdev *sd, const host_side *h, dev_side *ds, cl_event lev,
                           uint32_t *launches, tdm_sprof *pf, tdm_err *err)
{
    tdm_device *d = sd->d;
    cl_event ev = NULL, *evp = pf->on ? &ev : NULL;
    int rc = TDM_OK, first = 1;
    for (int c = 0; rc == TDM_OK && c < TDM_CODEC_COUNT; c++) {
        if (!h->nlead[c])
            continue;
        rc = tdm_decode_jobs_enqueue(&sd->res, NULL, ds->lead[c], h->nlead[c], c, ds->b[D_DOCS],
                                     ds->b[D_FREQS], ds->b[D_STATUS], first && lev ? 1 : 0,
                                     first && lev ? &lev : NULL, evp, err);
        first = 0;
        ++*launches;
        tdm_sprof_take(pf, "AND batch: lead decode", &ev);
    }
    size_t wg = d->wg_size;
    for (int c = 0; rc == TDM_OK && c < TDM_CODEC_COUNT; c++) {
        if (!h->nblk[c])
            continue;
        cl_uint r0 = h->row0[c], nr = h->rows[c], nb = h->nblk[c];
        tdm_karg sa[7];
        rc = tdm_kernel_launch(d, "tdm_sband_select", sa,
                               select_args(&sd->res, ds, c, &r0, &nr, &nb, sa),
                               tdm_round_up(nb, wg), wg, 0, NULL, evp, err);
        tdm_sprof_take(pf, "tdm_sband_select", &ev);
        if (rc == TDM_OK)
            rc = tdm_decode_jobs_enqueue(&sd->res, NULL, ds->jobs[c], nb, c, ds->b[D_DOCS],
                                         ds->b[D_FREQS], ds->b[D_STATUS], 0, NULL, evp, err);
        tdm_sprof_take(pf, "AND batch: selected blocks' decode", &ev);
        *launches += 2;
    }
    return rc;
}

/* Scoring and merge launches, then the copy of h->out, waited for asleep
 * or not (the planner's batch_sleep). */
static int enqueue_rest(const tdm_sdev *sd, const host_side *h, uint32_t n, const tdm_sprep *p0,
                        int asleep, uint32_t k, uint32_t p2, dev_side *ds, uint32_t *launches,
                        tdm_sprof *pf, tdm_err *err)
{
    tdm_device *d = sd->d;
    cl_event ev = NULL, *evp = pf->on ? &ev : NULL;
    score_in in = {.nq = n, .ne = (cl_uint)h->nelem, .kind = (cl_uint)p0->kind,
                   .ndocs = sd->res.ndocs, .c0 = p0->c0, .c1 = p0->c1};
    cl_uint kk = k, pp = p2;
    tdm_karg a[15];
    int rc = TDM_OK;
    if (in.ne) {
        rc = tdm_kernel_launch(d, "tdm_sband_score", a, score_args(&sd->res, ds, &in, a),
                               tdm_round_up(in.ne, d->wg_size), d->wg_size, 0, NULL, evp, err);
        tdm_sprof_take(pf, "tdm_sband_score", &ev);
        ++*launches;
    }
    size_t ml = tdm_search_merge_local(d);
    if (rc == TDM_OK)
        rc = tdm_kernel_launch(d, "tdm_search_merge_batch", a, merge_args(ds, &kk, &pp, a),
                               (size_t)n * ml, ml, 0, NULL, evp, err);
    tdm_sprof_take(pf, "tdm_search_merge_batch (AND)", &ev);
    ++*launches;
    if (rc == TDM_OK) {
        cl_int e = tdm_read_wait(d->queue, ds->b[D_OUT], (size_t)n * (p2 + 2) * 8, h->out,
                                 asleep);
        if (e != CL_SUCCESS)
            rc = tdm_cl_fail(err, e, "search batch (AND): clEnqueueReadBuffer");
    }
    return rc;
}

void tdm_sband_trace_free(tdm_sband_trace *t)
{
    free(t->hs);
    free(t->hd);
    free(t->hn);
    free(t->count);
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        free(t->jobs[c]);
    memset(t, 0, sizeof *t);
}

static int read_buf(tdm_device *d, cl_mem m, size_t bytes, void **dst, tdm_err *err)
{
    if (!(*dst = malloc(bytes ? bytes : 1)))
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (!bytes)
        return TDM_OK;
    cl_int e = clEnqueueReadBuffer(d->queue, m, CL_TRUE, 0, bytes, *dst, 0, NULL, NULL);
    return e == CL_SUCCESS ? TDM_OK : tdm_cl_fail(err, e, "search batch (AND): trace read");
}

static int get_trace(tdm_device *d, const host_side *h, uint32_t n, dev_side *ds,
                     tdm_sband_trace *t, tdm_err *err)
{
    memset(t, 0, sizeof *t);
    t->nelem = h->nelem;
    t->nq = n;
    uint32_t *qt = NULL;
    int rc = read_buf(d, ds->b[D_QTAB], (size_t)n * TDM_SBQ_W * 4, (void **)&qt, err);
    if (rc == TDM_OK && !(t->count = malloc((size_t)n * 4)))
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; rc == TDM_OK && i < n; i++)
        t->count[i] = qt[(size_t)i * TDM_SBQ_W + TDM_SBQ_MATCHES];
    free(qt);
    if (rc == TDM_OK)
        rc = read_buf(d, ds->b[D_HS], h->nelem * 4, (void **)&t->hs, err);
    if (rc == TDM_OK)
        rc = read_buf(d, ds->b[D_HD], h->nelem * 4, (void **)&t->hd, err);
    if (rc == TDM_OK)
        rc = read_buf(d, ds->b[D_HN], h->nelem * 4, (void **)&t->hn, err);
    for (int c = 0; rc == TDM_OK && c < TDM_CODEC_COUNT; c++) {
        t->njobs[c] = h->nblk[c];
        if (h->nblk[c])
            rc = read_buf(d, ds->jobs[c], (size_t)h->nblk[c] * sizeof(tdm_decode_job),
                          (void **)&t->jobs[c], err);
    }
    if (rc)
        tdm_sband_trace_free(t);
    return rc;
}

/* Each query's keys and counts from h->out. */
static int results(tdm_sbq *const *qs, uint32_t n, uint32_t k, uint32_t p2, const host_side *h,
                   uint32_t launches, uint64_t up, tdm_err *err)
{
    for (uint32_t i = 0; i < n; i++) {
        const uint64_t *o = h->out + (size_t)i * (p2 + 2);
        tdm_sout *so = &qs[i]->so;
        uint32_t m = (uint32_t)o[0], st = (uint32_t)o[1];
        if (st) /* a damaged list somewhere in the batch: the caller reruns them alone */
            return tdm_err_set(err, TDM_ERR_CORRUPT, "search batch (AND): decode status %u", st);
        if (m > k)
            return tdm_err_set(err, TDM_ERR_INTERNAL, "search merge: %u results for k = %u", m, k);
        memcpy(so->keys, o + 2, (size_t)m * 8);
        so->n = m;
        so->total = (uint32_t)(o[0] >> 32);
        so->launches = launches;
        so->bytes_up = up;
        so->bytes_down = (uint64_t)n * (p2 + 2) * 8;
        qs[i]->batch = n;
    }
    return TDM_OK;
}

int tdm_search_dev_batch_and(const tdm_sdev *sd, tdm_sbq *const *qs, uint32_t n, uint32_t k,
                             tdm_sband_trace *trace, tdm_err *err)
{
    host_side h;
    dev_side ds;
    memset(&h, 0, sizeof h);
    memset(&ds, 0, sizeof ds);
    uint32_t p2 = tdm_pow2_at_least(k), launches = 0;
    uint64_t up = 0;
    tdm_sprof pf; /* TANDEM_SEARCH_PROFILE: rows "AND batch: ..." */
    tdm_sprof_begin(&pf, TDM_SALG_AND, k);
    double t = tdm_sprof_now();
    int rc = count(sd->res.r, qs, n, &h, err);
    if (rc == TDM_OK)
        rc = alloc_host(&h, n, p2, err);
    if (rc == TDM_OK)
        fill(qs, n, &h);
    tdm_sprof_host(&pf, "AND batch: host tables", t);
    /* a list cache holds every list of the batch (resident/listcache.h) */
    tdm_decode_batch all;
    memset(&all, 0, sizeof all);
    for (int c = 0; c < TDM_CODEC_COUNT; c++) {
        all.jobs[c] = h.all[c];
        all.njobs[c] = h.all[c] ? h.nall[c] : 0;
    }
    cl_event lev = NULL;
    tdm_listcache_hold *hold = NULL;
    if (rc == TDM_OK)
        rc = tdm_resident_acquire_batch(&sd->res, &all, &lev, &hold, NULL, err);
    t = tdm_sprof_now();
    if (rc == TDM_OK)
        rc = make_device(sd->d, &h, n, p2, &ds, &up, err);
    tdm_sprof_host(&pf, "AND batch: buffers and uploads", t);
    t = tdm_sprof_now();
    if (rc == TDM_OK)
        rc = enqueue_decodes(sd, &h, &ds, lev, &launches, &pf, err);
    if (lev)
        clReleaseEvent(lev);
    if (rc == TDM_OK)
        rc = enqueue_rest(sd, &h, n, &qs[0]->p, qs[0]->pl.batch_sleep, k, p2, &ds, &launches,
                          &pf, err);
    tdm_sprof_host(&pf, "AND batch: enqueue and wait", t);
    if (rc == TDM_OK && trace)
        rc = get_trace(sd->d, &h, n, &ds, trace, err);
    tdm_sprof_end(&pf, rc == TDM_OK);
    if (rc)
        tdm_search_batch_drain(sd->d); /* before the lists' hold and the host tables go */
    tdm_resident_unhold(&sd->res, hold, NULL);
    if (rc == TDM_OK)
        rc = results(qs, n, k, p2, &h, launches, up, err);
    if (rc && trace)
        tdm_sband_trace_free(trace);
    dev_free(&ds);
    host_free(&h);
    return rc;
}

/* ---- the reference */

/* Position of d in list[0 .. n), or -1. */
static long find_doc(const uint32_t *list, uint32_t n, uint32_t d)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (list[mid] < d)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && list[lo] == d ? (long)lo : -1;
}

/* score.h's float formula (tdm_score_f) with the term table's qw. */
static float ref_score(const tdm_sprep *p, uint32_t t, uint32_t tf, uint32_t dl)
{
    float qw = tdm_u2f(p->terms[(size_t)t * TDM_SEARCH_TW + TDM_TW_QW]), f = (float)tf;
    if (p->kind == TDM_SCORING_IMPACT)
        return qw * f;
    float kk = p->c0 + p->c1 * (float)dl;
    return (qw * f) / (f + kk);
}

/* One query's lists decoded (at most df postings each). */
typedef struct rlists {
    uint32_t **d, **f;
} rlists;

static int ref_decode(const tdm_ireader *r, const tinfo *ti, uint32_t nt, rlists *L, tdm_err *err)
{
    L->d = calloc(nt ? nt : 1, sizeof *L->d);
    L->f = calloc(nt ? nt : 1, sizeof *L->f);
    if (!L->d || !L->f)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (uint32_t t = 0; t < nt; t++) {
        tdm_ilist l;
        int rc = tdm_ireader_list(r, ti[t].list, &l, err);
        if (rc)
            return rc;
        L->d[t] = malloc(((size_t)l.df + 1) * 4);
        L->f[t] = malloc(((size_t)l.df + 1) * 4);
        if (!L->d[t] || !L->f[t])
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        if ((rc = tdm_ireader_decode(r, ti[t].list, L->d[t], L->f[t], err)))
            return rc;
    }
    return TDM_OK;
}

static void ref_free(rlists *L, uint32_t nt)
{
    for (uint32_t t = 0; L->d && t < nt; t++) {
        free(L->d[t]);
        free(L->f[t]);
    }
    free(L->d);
    free(L->f);
}

/* Query i's lead elements (from e0) and its selection jobs. */
static int ref_query(const tdm_ireader *r, const tdm_sbq *it, const tinfo *ti, size_t e0,
                     uint32_t pb, uint32_t *nj, tdm_sband_trace *out, tdm_err *err)
{
    const tdm_sprep *p = &it->p;
    uint32_t nt = p->nt, lead = lead_of(ti, nt);
    uint64_t sz;
    const uint32_t *doclens = tdm_ireader_section(r, TDM_SEC_DOCLENS, &sz);
    rlists L = {0};
    int rc = ref_decode(r, ti, nt, &L, err);
    const uint32_t *ld = rc ? NULL : L.d[lead];
    for (uint32_t e = 0; rc == TDM_OK && e < ti[lead].df; e++) {
        uint32_t d = ld[e], hit = 1;
        float acc = 0.0f;
        for (uint32_t t = 0; t < nt && hit; t++) {
            long at = t == lead ? (long)e : find_doc(L.d[t], ti[t].df, d);
            if (at < 0)
                hit = 0;
            else
                acc = acc + ref_score(p, t, L.f[t][at], doclens[d]);
        }
        out->hs[e0 + e] = hit ? acc : 0.0f;
        out->hd[e0 + e] = d;
        out->hn[e0 + e] = hit;
    }
    for (uint32_t t = 0; rc == TDM_OK && t < nt; t++) {
        if (t == lead || !ti[t].nb)
            continue;
        tdm_ilist l;
        if ((rc = tdm_ireader_list(r, ti[t].list, &l, err)))
            break;
        uint32_t c = ti[t].codec;
        for (uint32_t j = 0; j < ti[t].nb; j++) {
            uint32_t sel = 1;
            if (ti[t].nb > 1) { /* a lead docid in (last[j - 1], last[j]] */
                uint32_t lo = j ? l.block_last[j - 1] + 1 : 0, hi = l.block_last[j];
                sel = 0;
                for (uint32_t e = 0; e < ti[lead].df && !sel; e++)
                    sel = ld[e] >= lo && ld[e] <= hi;
            }
            out->jobs[c][nj[c]++] =
                (tdm_decode_job){ti[t].list, j, j + sel, ti[t].pos + pb + j * ti[t].bs};
        }
    }
    ref_free(&L, nt);
    return rc;
}

int tdm_sband_ref(const tdm_ireader *r, tdm_sbq *const *qs, uint32_t n, tdm_sband_trace *out,
                  tdm_err *err)
{
    host_side h;
    memset(&h, 0, sizeof h);
    memset(out, 0, sizeof *out);
    int rc = count(r, qs, n, &h, err);
    if (rc == TDM_OK) {
        out->nelem = h.nelem;
        out->hs = malloc((h.nelem ? h.nelem : 1) * 4);
        out->hd = malloc((h.nelem ? h.nelem : 1) * 4);
        out->hn = malloc((h.nelem ? h.nelem : 1) * 4);
        if (!out->hs || !out->hd || !out->hn)
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    for (int c = 0; rc == TDM_OK && c < TDM_CODEC_COUNT; c++) {
        out->njobs[c] = h.nblk[c];
        if (h.nblk[c] && !(out->jobs[c] = malloc((size_t)h.nblk[c] * sizeof(tdm_decode_job))))
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    out->nq = n;
    if (rc == TDM_OK && !(out->count = calloc(n ? n : 1, 4)))
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    uint32_t nj[TDM_CODEC_COUNT] = {0};
    size_t tb = 0, e0 = 0, pb = 0;
    for (uint32_t i = 0; rc == TDM_OK && i < n; i++) {
        const tinfo *ti = h.ti + tb;
        if (qs[i]->p.nt) {
            rc = ref_query(r, qs[i], ti, e0, (uint32_t)pb, nj, out, err);
            uint32_t len = ti[lead_of(ti, qs[i]->p.nt)].df;
            for (uint32_t e = 0; rc == TDM_OK && e < len; e++)
                out->count[i] += out->hn[e0 + e];
            e0 += len;
        }
        tb += qs[i]->p.nt;
        pb += qs[i]->p.npost;
    }
    host_free(&h);
    if (rc)
        tdm_sband_trace_free(out);
    return rc;
}
