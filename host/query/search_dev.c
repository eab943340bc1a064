/* The search kernels' driver (search.h): per call, the query's scratch
 * buffers and tables uploaded, its lists decoded on the device (one launch
 * per codec of its lists, index/decode_jobs.h), the bounds kernels where
 * the algorithm prunes, the range (or group) kernel and the merge kernel,
 * then the k keys and the counts copied back: a number of commands that
 * grows with nothing but the codecs present. */
#include <stdlib.h>
#include <string.h>

#include "codec/layout.h"
#include "search.h"
#include "tandem.h"

enum { B_DOCS, B_FREQS, B_TERMS, B_BMAX, B_CUR, B_ORD, B_HS, B_HD, B_HN, B_OUT, B_OUTN, B_STATUS,
       B_COUNT };

typedef struct scratch {
    cl_mem b[B_COUNT];
    cl_mem jobs[TDM_CODEC_COUNT];
} scratch;

static void scratch_free(scratch *s)
{
    for (int i = 0; i < B_COUNT; i++)
        if (s->b[i])
            clReleaseMemObject(s->b[i]);
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        if (s->jobs[c])
            clReleaseMemObject(s->jobs[c]);
}

static uint32_t pow2_at_least(uint32_t k)
{
    uint32_t p = 1;
    while (p < k)
        p <<= 1;
    return p;
}

static int make_buffers(tdm_device *d, const tdm_sprep *p, const tdm_splan *pl, uint32_t cap,
                        uint32_t pow2, scratch *s, tdm_sout *out, tdm_err *err)
{
    cl_mem_flags ro = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, rw = CL_MEM_READ_WRITE;
    size_t nt = p->nt, nr = pl->ranges, heap = nr * (size_t)cap;
    static const cl_uint zero = 0;
    struct {
        cl_mem_flags f;
        size_t bytes;
        void *host;
    } spec[B_COUNT] = {
        [B_DOCS] = {rw, p->npost * 4, NULL},
        [B_FREQS] = {rw, p->npost * 4, NULL},
        [B_TERMS] = {rw | CL_MEM_COPY_HOST_PTR, nt * TDM_SEARCH_TW * 4, p->terms},
        [B_BMAX] = {p->device_bounds ? rw : ro, p->nbmax * 4, p->device_bounds ? NULL : p->bmax},
        [B_CUR] = {rw, nt * nr * 4, NULL},
        [B_ORD] = {rw, pl->variant == TDM_VARIANT_GROUP ? 4 : nt * nr * 4, NULL},
        [B_HS] = {rw, heap * 4, NULL},
        [B_HD] = {rw, heap * 4, NULL},
        [B_HN] = {rw, nr * 4, NULL},
        [B_OUT] = {rw, (size_t)pow2 * 8, NULL},
        [B_OUTN] = {rw, 12, NULL},
        [B_STATUS] = {ro, 4, (void *)&zero},
    };
    for (int i = 0; i < B_COUNT; i++) {
        int rc = tdm_buffer_create(d, spec[i].host ? spec[i].f : spec[i].f & ~(cl_mem_flags)CL_MEM_COPY_HOST_PTR, spec[i].bytes ? spec[i].bytes : 4,
                                   spec[i].bytes ? spec[i].host : NULL, &s->b[i], err);
        if (rc)
            return rc;
        if (spec[i].host)
            out->bytes_up += spec[i].bytes;
    }
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        out->bytes_up += (uint64_t)p->batch.njobs[c] * sizeof(tdm_decode_job);
    return TDM_OK;
}

/* The block bounds where the device computes them, then each term's bound
 * and MaxScore's order; *ev gets the last kernel's event. */
static int prepare(const tdm_sdev *sd, const tdm_sprep *p, scratch *s, cl_event dec,
                   cl_event *ev, uint32_t *launches, tdm_err *err)
{
    cl_uint nt = p->nt, nb = (cl_uint)p->nbmax, kind = (cl_uint)p->kind;
    cl_float c0 = p->c0, c1 = p->c1;
    cl_event e0 = NULL;
    int rc = TDM_OK;
    if (p->device_bounds) {
        tdm_karg ba[] = {
            TDM_KARG_MEM(&s->b[B_DOCS]), TDM_KARG_MEM(&s->b[B_FREQS]), TDM_KARG_MEM(&s->b[B_TERMS]),
            TDM_KARG_MEM(&sd->res.doclens), TDM_KARG_MEM(&s->b[B_BMAX]),  TDM_KARG_U32(&nt),
            TDM_KARG_U32(&nb),           TDM_KARG_U32(&kind),          {sizeof c0, &c0},
            {sizeof c1, &c1},
        };
        size_t wg = sd->d->wg_size;
        rc = tdm_kernel_launch(sd->d, "tdm_search_bounds", ba, sizeof ba / sizeof *ba,
                               tdm_round_up(nb, wg), wg, 1, &dec, &e0, err);
        if (rc)
            return rc;
        ++*launches;
    }
    tdm_karg oa[] = {TDM_KARG_MEM(&s->b[B_TERMS]), TDM_KARG_MEM(&s->b[B_BMAX]), TDM_KARG_U32(&nt)};
    size_t wg = sd->d->wg_size;
    rc = tdm_kernel_launch(sd->d, "tdm_search_order", oa, 3, wg, wg, 1, e0 ? &e0 : &dec, ev,
                           err);
    if (e0)
        clReleaseEvent(e0);
    if (rc == TDM_OK)
        ++*launches;
    return rc;
}

static int launch(const tdm_sdev *sd, const tdm_sprep *p, uint32_t ndocs, const tdm_splan *pl,
                  int salg, uint32_t k, uint32_t cap, uint32_t pow2, scratch *s, cl_event dec,
                  cl_event *ev, uint32_t *launches, tdm_err *err)
{
    cl_event e0 = NULL;
    int rc = TDM_OK;
    /* exhaustive OR and AND read no bound */
    if (salg != TDM_SALG_OR && salg != TDM_SALG_AND &&
        (rc = prepare(sd, p, s, dec, &e0, launches, err)))
        return rc;
    if (!e0) {
        e0 = dec;
        clRetainEvent(e0);
    }
    cl_uint nt = p->nt, nr = pl->ranges, rlen = pl->rlen, nd = ndocs, cp = cap, alg = (cl_uint)salg,
            kind = (cl_uint)p->kind, kk = k, p2 = pow2;
    cl_float c0 = p->c0, c1 = p->c1;
    tdm_karg ra[] = {
        TDM_KARG_MEM(&s->b[B_DOCS]), TDM_KARG_MEM(&s->b[B_FREQS]), TDM_KARG_MEM(&s->b[B_TERMS]),
        TDM_KARG_MEM(&s->b[B_BMAX]), TDM_KARG_MEM(&sd->res.doclens), TDM_KARG_MEM(&s->b[B_CUR]),
        TDM_KARG_MEM(&s->b[B_ORD]),  TDM_KARG_MEM(&s->b[B_HS]),    TDM_KARG_MEM(&s->b[B_HD]),
        TDM_KARG_MEM(&s->b[B_HN]),   TDM_KARG_U32(&nt),            TDM_KARG_U32(&nr),
        TDM_KARG_U32(&rlen),         TDM_KARG_U32(&nd),            TDM_KARG_U32(&cp),
        TDM_KARG_U32(&alg),          TDM_KARG_U32(&kind),          {sizeof c0, &c0},
        {sizeof c1, &c1},
    };
    tdm_karg ga[] = {
        ra[0], ra[1], ra[2], ra[4], ra[5], ra[7], ra[8], ra[9], ra[10], ra[11], ra[12], ra[13],
        ra[14], ra[15], ra[16], ra[17], ra[18],
    };
    cl_event e1 = NULL;
    if (pl->variant == TDM_VARIANT_GROUP)
        rc = tdm_kernel_launch(sd->d, "tdm_search_group", ga, sizeof ga / sizeof *ga,
                               (size_t)nr * pl->local, pl->local, 1, &e0, &e1, err);
    else
        rc = tdm_kernel_launch(sd->d, "tdm_search_range", ra, sizeof ra / sizeof *ra,
                               tdm_round_up(nr, pl->local), pl->local, 1, &e0, &e1, err);
    clReleaseEvent(e0);
    if (rc)
        return rc;
    tdm_karg ma[] = {
        TDM_KARG_MEM(&s->b[B_HS]), TDM_KARG_MEM(&s->b[B_HD]), TDM_KARG_MEM(&s->b[B_HN]),
        TDM_KARG_U32(&nr),         TDM_KARG_U32(&cp),         TDM_KARG_U32(&kk),
        TDM_KARG_U32(&p2),         TDM_KARG_MEM(&s->b[B_OUT]), TDM_KARG_MEM(&s->b[B_OUTN]),
        TDM_KARG_MEM(&s->b[B_STATUS]),
    };
    size_t wg = sd->d->wg_size;
    rc = tdm_kernel_launch(sd->d, "tdm_search_merge", ma, sizeof ma / sizeof *ma, wg, wg, 1, &e1,
                           ev, err);
    clReleaseEvent(e1);
    if (rc == TDM_OK)
        *launches += 2;
    return rc;
}

int tdm_search_dev_run(const tdm_sdev *sd, const tdm_sprep *p, uint32_t ndocs,
                       const tdm_splan *pl, int salg, uint32_t k, tdm_sout *out, tdm_err *err)
{
    uint32_t cap = k < pl->rlen ? k : pl->rlen;
    uint32_t pow2 = pow2_at_least(k);
    scratch s;
    memset(&s, 0, sizeof s);
    cl_event ev = NULL, dec = NULL;
    int rc = make_buffers(sd->d, p, pl, cap, pow2, &s, out, err);
    if (rc == TDM_OK)
        rc = tdm_decode_batch_upload(&sd->res, &p->batch, s.jobs, err);
    if (rc == TDM_OK)
        rc = tdm_decode_batch_enqueue(&sd->res, NULL, &p->batch, s.jobs, s.b[B_DOCS],
                                      s.b[B_FREQS], s.b[B_STATUS], 0, NULL, &dec, err);
    for (int c = 0; rc == TDM_OK && c < TDM_CODEC_COUNT; c++)
        out->launches += p->batch.njobs[c] ? 1 : 0;
    if (rc == TDM_OK)
        rc = launch(sd, p, ndocs, pl, salg, k, cap, pow2, &s, dec, &ev, &out->launches, err);
    if (dec)
        clReleaseEvent(dec);
    uint32_t n[3] = {0, 0, 0};
    if (rc == TDM_OK) {
        rc = tdm_download(sd->d, s.b[B_OUTN], 0, sizeof n, n, 1, &ev, NULL, err);
    }
    if (rc == TDM_OK && (n[2] & TDM_CODEC_ST_CORRUPT))
        rc = tdm_err_set(err, TDM_ERR_CORRUPT, "%s: a list of the query is damaged (its payload "
                         "failed to decode on device %s)", tdm_ireader_path(sd->res.r),
                         sd->d->info.name);
    else if (rc == TDM_OK && n[2])
        rc = tdm_err_set(err, TDM_ERR_INTERNAL, "search: decode jobs refused on device %s "
                         "(status %u)", sd->d->info.name, n[2]);
    if (rc == TDM_OK && n[0] > k)
        rc = tdm_err_set(err, TDM_ERR_INTERNAL, "search merge: %u results for k = %u", n[0], k);
    if (rc == TDM_OK && n[0])
        rc = tdm_download(sd->d, s.b[B_OUT], 0, (size_t)n[0] * 8, out->keys, 0, NULL, NULL, err);
    if (rc == TDM_OK) {
        out->n = n[0];
        out->total = n[1];
        out->bytes_down += sizeof n + (size_t)n[0] * 8;
    }
    if (ev)
        clReleaseEvent(ev);
    scratch_free(&s);
    return rc;
}
