/* Plain-C references of cl/and_step.cl (and_step.h): the same operations
 * in the same order (host code is built with -ffp-contract=off). */
#include "and_step.h"

float tdm_astep_score(float qw, uint32_t tf, uint32_t dl, int kind, float c0, float c1)
{
    float f = (float)tf;
    if (kind == TDM_SCORING_IMPACT)
        return qw * f;
    float k = c0 + c1 * (float)dl;
    return (qw * f) / (f + k);
}

void tdm_astep_ref_lead(const uint32_t *docs, const uint32_t *freqs, uint32_t m,
                        const uint32_t *doclens, float qw, int kind, float c0, float c1,
                        uint32_t *cand, float *cols)
{
    for (uint32_t i = 0; i < m; i++) {
        cand[i] = docs[i];
        cols[i] = tdm_astep_score(qw, freqs[i], doclens[docs[i]], kind, c0, c1);
    }
}

uint32_t tdm_astep_ref_probe(const uint32_t *cand, const float *cols, uint32_t n, uint32_t stride,
                             uint32_t done, const uint32_t *docs, const uint32_t *freqs,
                             uint32_t m, const uint32_t *doclens, float qw, int kind, float c0,
                             float c1, uint32_t *out_cand, float *out_cols, uint32_t ostride)
{
    uint32_t o = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t d = cand[i], lo = 0, hi = m;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (docs[mid] < d)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo >= m || docs[lo] != d)
            continue;
        out_cand[o] = d;
        for (uint32_t j = 0; j < done; j++)
            out_cols[(size_t)j * ostride + o] = cols[(size_t)j * stride + i];
        out_cols[(size_t)done * ostride + o] =
            tdm_astep_score(qw, freqs[lo], doclens[d], kind, c0, c1);
        o++;
    }
    return o;
}

void tdm_astep_ref_final(const float *cols, uint32_t n, uint32_t stride, uint32_t nt,
                         const uint32_t *sum_col, float *hs)
{
    for (uint32_t i = 0; i < n; i++) {
        float acc = 0.0f;
        for (uint32_t t = 0; t < nt; t++)
            acc = acc + cols[(size_t)sum_col[t] * stride + i];
        hs[i] = acc;
    }
}
