/* Scoring a query's postings: BM25 as the index records it, and impact
 * scores (the stored frequency is a precomputed integer impact).
 *
 * Two forms of every score, for two jobs:
 *
 *  - double, the oracle's: per posting tdm_bm25(...) exactly as the index's
 *    own bounds compute it (host/index/bm25.h, FORMAT.md) with its idf
 *    replaced by w_t * idf_t (so at weight 1 it is tdm_bm25 bit for bit), or
 *    w_t * impact. Tests compare every algorithm's scores with these within
 *    1e-5 relative.
 *
 *  - float, "device-exact": the one formula every kernel and the host's
 *    float reference evaluate, so that a GPU and a CPU produce bit-identical
 *    scores and a near-tie never orders differently on two devices.
 *
 * The float formula (every operation an IEEE-754 binary32 operation, in this
 * order, each rounded to nearest even; nothing contracted into an FMA):
 *
 *   per request, computed on the host in double and rounded once to float:
 *     c0    = (float)(k1 * (1 - b))          c1 = (float)(k1 * b / avgdl)
 *     (avgdl == 0, an empty collection: c0 = (float)k1, c1 = 0)
 *   per query term t, on the host in double, rounded once to float:
 *     qw[t] = (float)(w_t * idf_t * (k1 + 1))   BM25
 *     qw[t] = (float)w_t                        impact
 *     idf_t = ln(1 + (N - df + 0.5) / (df + 0.5)), w_t the term's query weight
 *   per posting (tf >= 1, dl the document's length), in float:
 *     BM25:    f = (float)tf;  K = c0 + c1 * (float)dl;
 *              s = (qw[t] * f) / (f + K)
 *     impact:  s = qw[t] * (float)tf
 *   per document: acc = 0.0f; for t in the query's term order (ascending
 *     lexicon id, tdm_query), for the terms the document holds: acc = acc + s.
 *
 * Why this is reproducible: float +, -, * and integer-to-float conversion are
 * correctly rounded on every OpenCL device (OpenCL 1.2 s7.4, 0 ulp), and
 * so is host C with FLT_EVAL_METHOD == 0 (checked below). Two things are not
 * by default and must be arranged:
 *   - contraction: host code is compiled with -ffp-contract=off (top-level
 *     CMakeLists.txt) and kernels.cl must say `#pragma OPENCL FP_CONTRACT OFF`
 *     (and never call fma/mad on scores);
 *   - single-precision division is only 2.5 ulp in OpenCL unless the program
 *     is built with -cl-fp32-correctly-rounded-divide-sqrt, which a device may
 *     accept only when it reports CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT. Where it
 *     does not, a kernel computes the quotient as (float)((double)a / (double)b)
 *     (cl_khr_fp64), which is the same correctly rounded float: a double
 *     quotient rounded to float never double-rounds wrongly, since
 *     53 >= 2 * 24 + 2 (Figueroa 1995). A device with neither (rusticl's
 *     llvmpipe) divides the significands as 64-bit integers and rounds by
 *     hand (tdm_fdiv_rn, cl/common.cl): the same float again.
 * Summing in ascending term id (not query-text order) makes "a b" and "b a"
 * score bit-identically. Pruning bounds: float rounding is monotone, so if
 * every s_t <= u_t then the float sum of the s_t in term order <= the float
 * sum of the u_t in the same order; a bound u_t on the float s_t needs a few
 * ulps of slack over the double score (TDM_SCORE_BOUND_SLACK; query/bounds.h
 * computes both kinds of bound).
 *
 * Threads: a tdm_scorer is immutable after tdm_scorer_init; any number of
 * threads may read it.
 */
#ifndef TDM_QUERY_SCORE_H
#define TDM_QUERY_SCORE_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/error.h"
#include "index/reader.h"
#include "query/query.h"

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "tandem's float scores need FLT_EVAL_METHOD == 0 (SSE2 or better on x86)"
#endif

enum tdm_scoring_kind {
    TDM_SCORING_BM25 = 0,
    TDM_SCORING_IMPACT = 1,
};

#define TDM_BM25_K1_DEFAULT 1.2
#define TDM_BM25_B_DEFAULT 0.75

/* What a request asks for. k1 >= 0 and 0 <= b <= 1, both finite; b = 0 (no
 * length normalisation) is allowed. Ignored for impact scoring. */
typedef struct tdm_score_params {
    int kind;      /* enum tdm_scoring_kind */
    double k1, b;
} tdm_score_params;

/* BM25 with the defaults (1.2, 0.75). */
tdm_score_params tdm_score_params_default(void);
/* What a request's scoring (enum tdm_scoring of tandem.h) means on index r:
 * TDM_SCORE_AUTO is impact on an impact index, else BM25. */
tdm_score_params tdm_score_params_for(const tdm_ireader *r, int scoring, double k1, double b);

/* A query's scoring constants (the per-request and per-term values above). */
typedef struct tdm_scorer {
    int kind;
    double k1, b, avgdl;
    uint64_t ndocs;
    float c0, c1;           /* K = c0 + c1 * dl */
    size_t nterms;          /* = the query's distinct terms */
    double *wd;             /* [nterms] double: w_t * idf_t (BM25), w_t (impact) */
    float *qw;              /* [nterms] float: the formula's qw[t] */
} tdm_scorer;

/* Checks p (TDM_ERR_INVALID_ARG naming the bad value; BM25 on an impact
 * index too: its frequencies are impacts, not term counts) and computes the
 * constants for q (finished) on index r. tdm_scorer_free releases them. */
int tdm_scorer_init(tdm_scorer *s, const tdm_ireader *r, const tdm_query *q,
                    const tdm_score_params *p, tdm_err *err);
void tdm_scorer_free(tdm_scorer *s);

/* The BM25 idf the index records: ln(1 + (N - df + 0.5) / (df + 0.5)). */
double tdm_score_idf(uint64_t ndocs, uint32_t df);

/* Score of one posting of the query's t-th term (tf >= 1), double (the
 * oracle's; with weight 1 equal to tdm_bm25(...) bit for bit) and float
 * (device-exact). */
static inline double tdm_score_d(const tdm_scorer *s, size_t t, uint32_t tf, uint32_t dl)
{
    if (s->kind == TDM_SCORING_IMPACT)
        return s->wd[t] * (double)tf;
    /* tdm_bm25's expression and order (bm25.c) with idf replaced by
     * wd = w * idf, so that the weight costs no extra rounding per posting. */
    double norm = s->avgdl > 0 ? 1.0 - s->b + s->b * dl / s->avgdl : 1.0;
    return s->wd[t] * tf * (s->k1 + 1.0) / (tf + s->k1 * norm);
}

static inline float tdm_score_f(const tdm_scorer *s, size_t t, uint32_t tf, uint32_t dl)
{
    float f = (float)tf;
    if (s->kind == TDM_SCORING_IMPACT)
        return s->qw[t] * f;
    float k = s->c0 + s->c1 * (float)dl;
    return (s->qw[t] * f) / (f + k);
}

/* A multiplier (> 1) that turns an upper bound on the double BM25 score of a
 * posting (e.g. a stored block_max, scaled to the query's weight) into an
 * upper bound on its float score above: the float formula's relative error
 * is below 8 ulps (2^-20); this allows 2^-17. */
#define TDM_SCORE_BOUND_SLACK (1.0 + 1.0 / 131072.0)

/* A float's bits and back: how scores, bounds and weights travel in the
 * uint32 tables the kernels read (their as_uint / as_float). */
static inline uint32_t tdm_f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float tdm_u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#endif
