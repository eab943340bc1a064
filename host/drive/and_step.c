/* Ranked AND step by step on whichever device (and_step.h): the query's
 * constants, one segment's device work, the intermediate carried between
 * devices. Every command of a segment is on the device's compute queue, in
 * order; the host waits at each step for the candidates' count (the
 * scheduler's decision needs it, as Griffin's does). */
#include "and_step.h"

#include <stdlib.h>
#include <string.h>

#include "codec/layout.h"
#include "resident/listcache.h"
#include "runtime/serial.h"

int tdm_astep_applies(const tdm_query *q, int algorithm)
{
    return (algorithm == TDM_ALGO_AND || algorithm == TDM_ALGO_AND_OR) && q->nterms >= 2;
}

static void mid_free(tdm_astep_mid *m)
{
    free(m->cand);
    free(m->cols);
    memset(m, 0, sizeof *m);
}

void tdm_astep_free(tdm_astep *a)
{
    tdm_query_free(&a->q);
    free(a->qw);
    free(a->order);
    free(a->sum_col);
    mid_free(&a->mid);
    mid_free(&a->next);
    memset(a, 0, sizeof *a);
}

void tdm_astep_commit(tdm_astep *a)
{
    mid_free(&a->mid);
    a->mid = a->next;
    memset(&a->next, 0, sizeof a->next);
}

/* Shortest list first; equal lengths in term order (a stable insertion sort:
 * a query has few terms). */
static void take_order(tdm_astep *a)
{
    for (uint32_t i = 0; i < a->nt; i++) {
        uint32_t t = i, j = i;
        while (j > 0 && a->q.terms[a->order[j - 1]].df > a->q.terms[t].df) {
            a->order[j] = a->order[j - 1];
            j--;
        }
        a->order[j] = t;
    }
    for (uint32_t j = 0; j < a->nt; j++)
        a->sum_col[a->order[j]] = j;
}

int tdm_astep_open(tdm_search *s, tdm_query *q, const tdm_search_options *o, tdm_astep *a,
                   tdm_err *err)
{
    memset(a, 0, sizeof *a);
    a->q = *q;
    tdm_query_init(q);
    int rc;
    tdm_score_params sp = tdm_score_params_for(s->r, o->scoring, o->k1, o->b);
    tdm_scorer sc;
    if ((rc = tdm_scorer_init(&sc, s->r, &a->q, &sp, err)))
        return rc;
    a->nt = (uint32_t)a->q.nterms;
    a->k = o->k;
    a->kind = sc.kind;
    a->c0 = sc.c0;
    a->c1 = sc.c1;
    size_t nt = a->nt ? a->nt : 1;
    a->qw = malloc(nt * sizeof *a->qw);
    a->order = malloc(nt * sizeof *a->order);
    a->sum_col = malloc(nt * sizeof *a->sum_col);
    if (!a->qw || !a->order || !a->sum_col)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    else
        memcpy(a->qw, sc.qw, a->nt * sizeof *a->qw);
    tdm_scorer_free(&sc);
    if (rc == TDM_OK)
        take_order(a);
    return rc;
}

/* ---- one segment's device state */

enum { S_DOCS, S_FREQS, S_CAND0, S_CAND1, S_COLS0, S_COLS1, S_COUNT, S_STATUS, S_SUMCOL, S_HN,
       S_OUT, S_OUTN, S_N };

typedef struct seg {
    tdm_search *s;
    tdm_astep *a;
    const tdm_sdev *sd;
    tdm_device *d;
    cl_mem b[S_N];
    int cur;            /* candidates and columns in S_CAND0 + cur, S_COLS0 + cur */
    uint32_t done, n, stride;
} seg;

static int copy(seg *g, int up, cl_mem m, size_t off, size_t bytes, void *host, tdm_err *err)
{
    if (!bytes)
        return TDM_OK;
    cl_int rc = up ? clEnqueueWriteBuffer(g->d->queue, m, CL_TRUE, off, bytes, host, 0, NULL, NULL)
                   : clEnqueueReadBuffer(g->d->queue, m, CL_TRUE, off, bytes, host, 0, NULL, NULL);
    if (rc != CL_SUCCESS) {
        tdm_cl_fail(err, rc, up ? "and step: clEnqueueWriteBuffer" : "and step: clEnqueueReadBuffer");
        return tdm_err_append(err, " (%zu bytes, device %s)", bytes, g->d->info.name), err->code;
    }
    if (up)
        g->a->bytes_up += bytes;
    else
        g->a->bytes_down += bytes;
    return TDM_OK;
}

/* b[i] with room for `bytes` (a new buffer when it has less). */
static int room(seg *g, int i, size_t bytes, size_t *cap, tdm_err *err)
{
    if (bytes < 4)
        bytes = 4;
    if (g->b[i] && cap[i] >= bytes)
        return TDM_OK;
    if (g->b[i])
        clReleaseMemObject(g->b[i]);
    g->b[i] = NULL;
    cap[i] = 0;
    int rc = tdm_buffer_create(g->d, CL_MEM_READ_WRITE, bytes, NULL, &g->b[i], err);
    if (rc == TDM_OK)
        cap[i] = bytes;
    return rc;
}

static int launch(seg *g, const char *name, const tdm_karg *args, cl_uint nargs, size_t items,
                  tdm_err *err)
{
    size_t wg = g->d->wg_size;
    int rc = tdm_kernel_launch(g->d, name, args, nargs, tdm_round_up(items ? items : 1, wg), wg, 0,
                               NULL, NULL, err);
    if (rc == TDM_OK)
        g->a->launches++;
    return rc;
}

/* Decodes the list of term t into S_DOCS / S_FREQS (its df postings). */
static int decode(seg *g, uint32_t t, size_t *cap, tdm_err *err)
{
    const tdm_resident *res = &g->sd->res;
    tdm_decode_req req = {(uint32_t)g->a->q.terms[t].id, 0, TDM_DECODE_TO_END};
    tdm_decode_batch b;
    cl_mem jobs[TDM_CODEC_COUNT] = {0};
    cl_event ready = NULL, done = NULL;
    tdm_listcache_hold *hold = NULL;
    static const cl_uint zero = 0;
    int rc = tdm_decode_batch_build(g->s->r, &req, 1, &b, err);
    size_t m = rc == TDM_OK ? (size_t)b.npostings : 0;
    if (rc == TDM_OK && (rc = room(g, S_DOCS, m * 4, cap, err)) == TDM_OK)
        rc = room(g, S_FREQS, m * 4, cap, err);
    if (rc == TDM_OK)
        rc = copy(g, 1, g->b[S_STATUS], 0, 4, (void *)&zero, err);
    if (rc == TDM_OK)
        rc = tdm_resident_acquire_batch(res, &b, &ready, &hold, &g->a->bytes_up, err);
    if (rc == TDM_OK && ready) { /* the cache's upload is on the transfer queue */
        cl_int w = clWaitForEvents(1, &ready);
        if (w != CL_SUCCESS)
            rc = tdm_cl_fail(err, w, "and step: list cache upload");
    }
    if (rc == TDM_OK && (rc = tdm_decode_batch_upload(res, &b, jobs, err)) == TDM_OK)
        rc = tdm_decode_batch_enqueue(res, NULL, &b, jobs, g->b[S_DOCS], g->b[S_FREQS],
                                      g->b[S_STATUS], 0, NULL, &done, err);
    for (int c = 0; rc == TDM_OK && c < TDM_CODEC_COUNT; c++)
        if (b.njobs[c]) {
            g->a->launches++;
            g->a->bytes_up += (uint64_t)b.njobs[c] * sizeof(tdm_decode_job);
        }
    if (rc == TDM_OK)
        rc = tdm_decode_jobs_status(res, g->b[S_STATUS], done ? 1 : 0, done ? &done : NULL, err);
    if (rc == TDM_ERR_CORRUPT)
        tdm_err_append(err, " (%s, list %u)", tdm_ireader_path(g->s->r), req.list);
    if (rc) { /* commands may still read the lists: wait for the queue */
        cl_event mk = NULL;
        if (clEnqueueMarkerWithWaitList(g->d->queue, 0, NULL, &mk) == CL_SUCCESS && mk) {
            clWaitForEvents(1, &mk);
            clReleaseEvent(mk);
        }
    }
    if (ready)
        clReleaseEvent(ready);
    if (done)
        clReleaseEvent(done);
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        if (jobs[c])
            clReleaseMemObject(jobs[c]);
    tdm_resident_unhold(res, hold, NULL); /* the status read waited for the decode */
    tdm_decode_batch_free(&b);
    return rc;
}

/* Step `g->done` on the device: the lead (step 0) or a probe. */
static int step(seg *g, size_t *cap, tdm_err *err)
{
    tdm_astep *a = g->a;
    uint32_t t = a->order[g->done];
    uint32_t m = a->q.terms[t].df, kind = (uint32_t)a->kind;
    cl_float qw = a->qw[t], c0 = a->c0, c1 = a->c1;
    int rc = decode(g, t, cap, err);
    cl_mem *dl = (cl_mem *)&g->sd->res.doclens;
    cl_uint nd = g->sd->res.ndocs;
    if (rc == TDM_OK && g->done == 0) {
        size_t cols = (size_t)m * a->nt * 4;
        if ((rc = room(g, S_CAND0, (size_t)m * 4, cap, err)) == TDM_OK &&
            (rc = room(g, S_COLS0, cols, cap, err)) == TDM_OK) {
            tdm_karg la[] = {TDM_KARG_MEM(&g->b[S_DOCS]), TDM_KARG_MEM(&g->b[S_FREQS]),
                             TDM_KARG_U32(&m), TDM_KARG_MEM(dl), TDM_KARG_U32(&nd),
                             {sizeof qw, &qw},
                             TDM_KARG_U32(&kind), {sizeof c0, &c0}, {sizeof c1, &c1},
                             TDM_KARG_MEM(&g->b[S_CAND0]), TDM_KARG_MEM(&g->b[S_COLS0])};
            rc = launch(g, "tdm_and_step_lead", la, sizeof la / sizeof *la, m, err);
        }
        g->cur = 0;
        g->n = g->stride = m;
    } else if (rc == TDM_OK) {
        int in = g->cur, out = 1 - g->cur;
        cl_uint n = g->n, stride = g->stride, done = g->done, ostride = g->n;
        static const cl_uint zero = 0;
        if ((rc = room(g, S_CAND0 + out, (size_t)n * 4, cap, err)) == TDM_OK &&
            (rc = room(g, S_COLS0 + out, (size_t)n * a->nt * 4, cap, err)) == TDM_OK)
            rc = copy(g, 1, g->b[S_COUNT], 0, 4, (void *)&zero, err);
        if (rc == TDM_OK) {
            tdm_karg pa[] = {
                TDM_KARG_MEM(&g->b[S_CAND0 + in]), TDM_KARG_MEM(&g->b[S_COLS0 + in]),
                TDM_KARG_U32(&n), TDM_KARG_U32(&stride), TDM_KARG_U32(&done),
                TDM_KARG_MEM(&g->b[S_DOCS]), TDM_KARG_MEM(&g->b[S_FREQS]), TDM_KARG_U32(&m),
                TDM_KARG_MEM(dl), TDM_KARG_U32(&nd), {sizeof qw, &qw}, TDM_KARG_U32(&kind),
                {sizeof c0, &c0},
                {sizeof c1, &c1}, TDM_KARG_MEM(&g->b[S_CAND0 + out]),
                TDM_KARG_MEM(&g->b[S_COLS0 + out]), TDM_KARG_U32(&ostride),
                TDM_KARG_MEM(&g->b[S_COUNT])};
            rc = launch(g, "tdm_and_step_probe", pa, sizeof pa / sizeof *pa, n, err);
        }
        uint32_t got = 0;
        if (rc == TDM_OK)
            rc = copy(g, 0, g->b[S_COUNT], 0, 4, &got, err);
        if (rc == TDM_OK && got > n)
            rc = tdm_err_set(err, TDM_ERR_INTERNAL, "and step: %u survivors of %u", got, n);
        g->cur = out;
        g->n = got;
        g->stride = ostride;
    }
    if (rc == TDM_OK)
        g->done++;
    return rc;
}

/* The committed intermediate up to the device. */
static int upload_mid(seg *g, size_t *cap, tdm_err *err)
{
    const tdm_astep_mid *m = &g->a->mid;
    g->done = m->done;
    g->n = g->stride = m->n;
    g->cur = 0;
    if (!m->done)
        return TDM_OK;
    size_t cb = (size_t)m->done * m->n * 4;
    uint64_t before = g->a->bytes_up;
    int rc = room(g, S_CAND0, (size_t)m->n * 4, cap, err);
    if (rc == TDM_OK)
        rc = room(g, S_COLS0, (size_t)m->n * g->a->nt * 4, cap, err);
    if (rc == TDM_OK)
        rc = copy(g, 1, g->b[S_CAND0], 0, (size_t)m->n * 4, m->cand, err);
    if (rc == TDM_OK)
        rc = copy(g, 1, g->b[S_COLS0], 0, cb, m->cols, err);
    g->a->carried += g->a->bytes_up - before;
    return rc;
}

/* The device's intermediate down into a->next. */
static int download_mid(seg *g, tdm_err *err)
{
    tdm_astep_mid *m = &g->a->next;
    m->done = g->done;
    m->n = g->n;
    m->cand = malloc(((size_t)g->n ? g->n : 1) * 4);
    size_t nc = (size_t)g->n * g->done;
    m->cols = malloc((nc ? nc : 1) * 4);
    if (!m->cand || !m->cols)
        return tdm_err_set(err, TDM_ERR_NOMEM, "and step: out of memory for %u candidates", g->n);
    uint64_t before = g->a->bytes_down;
    int rc = copy(g, 0, g->b[S_CAND0 + g->cur], 0, (size_t)g->n * 4, m->cand, err);
    for (uint32_t j = 0; rc == TDM_OK && j < g->done; j++) /* packed: stride n */
        rc = copy(g, 0, g->b[S_COLS0 + g->cur], (size_t)j * g->stride * 4, (size_t)g->n * 4,
                  m->cols + (size_t)j * g->n, err);
    g->a->carried += g->a->bytes_down - before;
    return rc;
}

/* Sums, top k (the merge kernel over one heap of n entries), hits. */
static int finish(seg *g, int dev, size_t *cap, tdm_search_result **out, tdm_err *err)
{
    tdm_astep *a = g->a;
    uint32_t k = a->k, pow2 = 1;
    while (pow2 < k)
        pow2 <<= 1;
    tdm_sout so = {0};
    so.keys = calloc(k, sizeof *so.keys);
    uint64_t *got = malloc(((size_t)k + 2) * 8);
    int rc = so.keys && got ? TDM_OK : tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (rc == TDM_OK && g->n > 0) {
        cl_uint n = g->n, stride = g->stride, nt = a->nt, one = 1, zero = 0, kk = k, p2 = pow2;
        static const cl_uint zst = 0;
        if ((rc = room(g, S_SUMCOL, (size_t)nt * 4, cap, err)) == TDM_OK &&
            (rc = room(g, S_HN, 4, cap, err)) == TDM_OK &&
            (rc = room(g, S_COLS0 + 1 - g->cur, (size_t)n * 4, cap, err)) == TDM_OK &&
            (rc = room(g, S_OUT, ((size_t)pow2 + 2) * 8, cap, err)) == TDM_OK &&
            (rc = room(g, S_OUTN, 12, cap, err)) == TDM_OK &&
            (rc = copy(g, 1, g->b[S_SUMCOL], 0, (size_t)nt * 4, a->sum_col, err)) == TDM_OK &&
            (rc = copy(g, 1, g->b[S_HN], 0, 4, &n, err)) == TDM_OK)
            rc = copy(g, 1, g->b[S_STATUS], 0, 4, (void *)&zst, err);
        cl_mem *hs = &g->b[S_COLS0 + 1 - g->cur], *hd = &g->b[S_CAND0 + g->cur];
        if (rc == TDM_OK) {
            tdm_karg fa[] = {TDM_KARG_MEM(&g->b[S_COLS0 + g->cur]), TDM_KARG_U32(&n),
                             TDM_KARG_U32(&stride), TDM_KARG_U32(&nt),
                             TDM_KARG_MEM(&g->b[S_SUMCOL]), TDM_KARG_MEM(hs)};
            rc = launch(g, "tdm_and_step_final", fa, sizeof fa / sizeof *fa, n, err);
        }
        if (rc == TDM_OK) {
            size_t wg = g->d->wg_size;
            tdm_karg ma[] = {TDM_KARG_MEM(hs),    TDM_KARG_MEM(hd),   TDM_KARG_MEM(&g->b[S_HN]),
                             TDM_KARG_U32(&zero), TDM_KARG_U32(&one), TDM_KARG_U32(&n),
                             TDM_KARG_U32(&kk),   TDM_KARG_U32(&p2),  TDM_KARG_MEM(&g->b[S_OUT]),
                             TDM_KARG_MEM(&g->b[S_OUTN]), TDM_KARG_MEM(&g->b[S_STATUS])};
            rc = tdm_kernel_launch(g->d, "tdm_search_merge", ma, sizeof ma / sizeof *ma, wg, wg,
                                   0, NULL, NULL, err);
            if (rc == TDM_OK)
                a->launches++;
        }
        if (rc == TDM_OK)
            rc = copy(g, 0, g->b[S_OUT], 0, ((size_t)k + 2) * 8, got, err);
        if (rc == TDM_OK) {
            so.n = (uint32_t)got[0];
            so.total = (uint32_t)(got[0] >> 32);
            memcpy(so.keys, got + 2, (size_t)k * 8);
            if (so.n > k || so.n != (n < k ? n : k))
                rc = tdm_err_set(err, TDM_ERR_INTERNAL, "and step: merge gave %u of %u for k = %u",
                                 so.n, n, k);
        }
    }
    tdm_search_result *r = rc == TDM_OK ? calloc(1, sizeof *r) : NULL;
    if (rc == TDM_OK && !r)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (rc == TDM_OK && !(r->hits = calloc(so.n ? so.n : 1, sizeof *r->hits)))
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; rc == TDM_OK && i < so.n; i++) {
        uint32_t bits = (uint32_t)(so.keys[i] >> 32);
        tdm_search_hit *h = &r->hits[i];
        h->docid = 0xffffffffu - (uint32_t)so.keys[i];
        memcpy(&h->score, &bits, sizeof h->score);
        if (h->docid >= g->s->ndocs) /* only a forged index decodes to one */
            rc = tdm_err_set(err, TDM_ERR_CORRUPT, "%s: section arena: a list of the query "
                             "decoded to docid %u, past the last document",
                             tdm_ireader_path(g->s->r), h->docid);
        else
            h->name = tdm_ireader_docname(g->s->r, h->docid);
    }
    if (rc == TDM_OK) {
        r->n = so.n;
        r->device = dev;
        r->algorithm = TDM_ALGO_AND;
        r->ranges = 1;
        r->variant = TDM_VARIANT_ITEM;
        r->terms = a->nt;
        r->unknown = a->q.unknown;
        r->batch = 1;
        r->steps = g->done;
        *out = r;
    } else if (r) {
        free(r->hits);
        free(r);
    }
    free(so.keys);
    free(got);
    return rc;
}

static int astep_run(tdm_search *s, tdm_astep *a, int dev, tdm_astep_decide_fn decide,
                     void *user, int *moved, tdm_search_result **res, tdm_err *err)
{
    seg g = {.s = s, .a = a, .sd = &s->dev[dev], .d = s->dev[dev].d};
    size_t cap[S_N] = {0};
    a->segments++;
    int rc = room(&g, S_COUNT, 4, cap, err);
    if (rc == TDM_OK)
        rc = room(&g, S_STATUS, 4, cap, err);
    if (rc == TDM_OK)
        rc = upload_mid(&g, cap, err);
    while (rc == TDM_OK && g.done < a->nt && !(g.done > 0 && g.n == 0)) {
        if ((rc = step(&g, cap, err)))
            break;
        if (g.done == a->nt || g.n == 0 || !decide)
            continue;
        int to = decide(user, a, g.done, g.n, dev);
        if (to != dev && to >= 0 && to < s->ndev) {
            rc = download_mid(&g, err);
            if (rc == TDM_OK)
                *moved = to;
            break;
        }
    }
    if (rc == TDM_OK && *moved < 0)
        rc = finish(&g, dev, cap, res, err);
    if (rc) {
        mid_free(&a->next);
        *moved = -1;
    }
    for (int i = 0; i < S_N; i++)
        if (g.b[i])
            clReleaseMemObject(g.b[i]);
    return rc;
}

int tdm_astep_run(tdm_search *s, tdm_astep *a, int dev, tdm_astep_decide_fn decide, void *user,
                  int *moved, tdm_search_result **res, tdm_err *err)
{
    *moved = -1;
    *res = NULL;
    mid_free(&a->next);
    if (dev < 0 || dev >= s->ndev)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "and step: device %d of %d", dev, s->ndev);
    tdm_serial_enter(s->dev[dev].d); /* PoCL's basic driver: one thread at a time (serial.c) */
    int rc = astep_run(s, a, dev, decide, user, moved, res, err);
    tdm_serial_leave(s->dev[dev].d);
    return rc;
}
