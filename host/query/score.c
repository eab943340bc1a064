/* Scoring constants for a query (score.h). */
#include "score.h"

#include <math.h>
#include <stdlib.h>

#include "tandem.h"

tdm_score_params tdm_score_params_default(void)
{
    return (tdm_score_params){TDM_SCORING_BM25, TDM_BM25_K1_DEFAULT, TDM_BM25_B_DEFAULT};
}

tdm_score_params tdm_score_params_for(const tdm_ireader *r, int scoring, double k1, double b)
{
    int impact = scoring == TDM_SCORE_IMPACT ||
                 (scoring == TDM_SCORE_AUTO && tdm_ireader_info_get(r)->impact);
    return (tdm_score_params){impact ? TDM_SCORING_IMPACT : TDM_SCORING_BM25, k1, b};
}

double tdm_score_idf(uint64_t ndocs, uint32_t df)
{
    /* bm25.c's expression, verbatim, so the oracle's scores equal tdm_bm25. */
    return log(1.0 + ((double)ndocs - df + 0.5) / (df + 0.5));
}

static int check_params(const tdm_score_params *p, tdm_err *err)
{
    if (p->kind == TDM_SCORING_IMPACT)
        return TDM_OK;
    if (p->kind != TDM_SCORING_BM25)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "scoring %d: neither BM25 nor impact",
                           p->kind);
    if (!(p->k1 >= 0 && p->k1 <= TDM_BM25_K1_MAX))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "BM25 k1 = %g: must lie in [0, %g]",
                           p->k1, TDM_BM25_K1_MAX);
    if (!(p->b >= 0 && p->b <= 1))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "BM25 b = %g: must be in [0, 1]", p->b);
    return TDM_OK;
}

int tdm_scorer_init(tdm_scorer *s, const tdm_ireader *r, const tdm_query *q,
                    const tdm_score_params *p, tdm_err *err)
{
    *s = (tdm_scorer){0};
    int rc = check_params(p, err);
    if (!rc && p->kind == TDM_SCORING_BM25 && tdm_ireader_info_get(r)->impact)
        rc = tdm_err_set(err, TDM_ERR_INVALID_ARG, "%s is an impact index (learned sparse "
                         "weights): BM25 needs term frequencies; search it with impact "
                         "scoring (the default, --scoring auto or impact)",
                         tdm_ireader_path(r));
    if (rc)
        return rc;
    if (!q->finished)
        return tdm_err_set(err, TDM_ERR_INTERNAL, "scorer: query not finished");
    const tdm_ireader_info *info = tdm_ireader_info_get(r);
    s->kind = p->kind;
    s->k1 = p->k1;
    s->b = p->b;
    s->avgdl = info->avg_doclen;
    s->ndocs = info->ndocs;
    s->c0 = (float)(s->avgdl > 0 ? p->k1 * (1.0 - p->b) : p->k1);
    s->c1 = (float)(s->avgdl > 0 ? p->k1 * p->b / s->avgdl : 0.0);
    s->nterms = q->nterms;
    s->wd = malloc((q->nterms ? q->nterms : 1) * sizeof *s->wd);
    s->qw = malloc((q->nterms ? q->nterms : 1) * sizeof *s->qw);
    if (!s->wd || !s->qw) {
        tdm_scorer_free(s);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    for (size_t t = 0; t < q->nterms; t++) {
        double w = q->terms[t].weight;
        if (p->kind == TDM_SCORING_IMPACT) {
            s->wd[t] = w;
            s->qw[t] = (float)w;
        } else {
            /* the whole index's df on a shard (its list's df counts only
               the shard's postings): the same idf as the whole index's */
            s->wd[t] = w * tdm_score_idf(s->ndocs, tdm_ireader_score_df(r, q->terms[t].id));
            s->qw[t] = (float)(s->wd[t] * (p->k1 + 1.0));
        }
    }
    return TDM_OK;
}

void tdm_scorer_free(tdm_scorer *s)
{
    free(s->wd);
    free(s->qw);
    s->wd = NULL;
    s->qw = NULL;
    s->nterms = 0;
}
