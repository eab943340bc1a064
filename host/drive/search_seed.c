/* The seed of the shared threshold (search_seed.h): the device launches and
 * the plain-C reference. */
#include "search_seed.h"

#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "tandem.h"

size_t tdm_search_seed_bytes(uint32_t nt)
{
    return (size_t)(nt ? nt : 1) * TDM_SEED_BUCKETS * sizeof(uint32_t);
}

int tdm_search_seed_enqueue(tdm_device *d, cl_command_queue q, cl_mem docs, cl_mem freqs,
                            cl_mem terms, cl_mem doclens, uint32_t ndocs, cl_mem hist,
                            int hist_zero, uint32_t nt, uint32_t npost, uint32_t kind, float c0, float c1,
                            uint32_t k, cl_event wait, cl_event *done, uint32_t *launches,
                            tdm_err *err)
{
    static const cl_uint zero = 0;
    cl_event e0 = NULL, e1 = NULL;
    if (!q)
        q = d->queue;
    cl_int cr = CL_SUCCESS;
    if (!hist_zero)
        cr = clEnqueueFillBuffer(q, hist, &zero, sizeof zero, 0, tdm_search_seed_bytes(nt),
                                 wait ? 1 : 0, wait ? &wait : NULL, &e0);
    else if (wait)
        clRetainEvent(e0 = wait);
    if (cr != CL_SUCCESS)
        return tdm_cl_fail(err, cr, "clEnqueueFillBuffer (search seed histogram)");
    cl_uint cnt = nt, np = npost, kd = kind, kk = k, nd = ndocs;
    tdm_karg ha[] = {
        TDM_KARG_MEM(&docs), TDM_KARG_MEM(&freqs), TDM_KARG_MEM(&terms),
        TDM_KARG_MEM(&doclens), TDM_KARG_U32(&nd), TDM_KARG_MEM(&hist), TDM_KARG_U32(&cnt),
        TDM_KARG_U32(&np), TDM_KARG_U32(&kd), {sizeof c0, &c0}, {sizeof c1, &c1},
    };
    size_t wg = d->wg_size;
    int rc = TDM_OK;
    if (npost) {
        rc = tdm_kernel_launch_on(d, q, "tdm_search_seed_hist", ha, sizeof ha / sizeof *ha,
                                  tdm_round_up(npost, wg), wg, e0 ? 1 : 0, &e0, &e1, err);
        if (e0)
            clReleaseEvent(e0);
        if (rc)
            return rc;
        ++*launches;
    } else {
        e1 = e0;
    }
    tdm_karg sa[] = {TDM_KARG_MEM(&terms), TDM_KARG_MEM(&hist), TDM_KARG_U32(&cnt),
                     TDM_KARG_U32(&kk)};
    rc = tdm_kernel_launch_on(d, q, "tdm_search_seed", sa, 4, wg, wg, e1 ? 1 : 0, &e1, done, err);
    if (e1)
        clReleaseEvent(e1);
    if (rc == TDM_OK)
        ++*launches;
    return rc;
}

static int desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

int tdm_search_seed_ref(const uint32_t *terms, uint32_t nt, const uint32_t *docs,
                        const uint32_t *freqs, const uint32_t *doclens, uint32_t kind, float c0,
                        float c1, uint32_t k, uint32_t *seed)
{
    *seed = 0;
    for (uint32_t t = 0; t < nt; t++) {
        const uint32_t *w = terms + (size_t)t * TDM_SEARCH_TW;
        uint32_t pos = w[TDM_TW_POS], df = w[TDM_TW_DF], top = w[TDM_TW_BOUND] >> 16;
        if (df < k || k == 0)
            continue;
        uint32_t *sc = malloc((size_t)df * sizeof *sc);
        if (!sc)
            return TDM_ERR_NOMEM;
        float qw = tdm_u2f(w[TDM_TW_QW]);
        for (uint32_t i = 0; i < df; i++) {
            float f = (float)freqs[pos + i];
            float s = kind == TDM_SCORING_IMPACT
                          ? qw * f
                          : (qw * f) / (f + (c0 + c1 * (float)doclens[docs[pos + i]]));
            sc[i] = tdm_f2u(s);
        }
        qsort(sc, df, sizeof *sc, desc);
        uint32_t key = sc[k - 1] >> 16;
        if (key > top)
            key = top;
        if (top - key < TDM_SEED_BUCKETS - 1 && key << 16 > *seed)
            *seed = key << 16;
        free(sc);
    }
    return TDM_OK;
}
