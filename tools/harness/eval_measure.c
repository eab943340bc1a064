/* Measures by trec_eval's names (eval_measure.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_measure.h"
#include "eval_priv.h"
#include "tandem.h"

/* How each name takes cut-offs: NONE refuses them, NEED gets trec_eval's
 * defaults when given none, OPT (recip_rank) reads none as "no cut-off". */
enum { CUT_NONE, CUT_NEED, CUT_OPT };

static const struct {
    const char *name;
    int kind, cut;
} NAMES[] = {
    /* Longer names first: "map_cut" before "map", "num_rel_ret" before "num_rel". */
    {"map_cut", TDM_MEASURE_MAP_CUT, CUT_NEED},   {"ndcg_cut", TDM_MEASURE_NDCG_CUT, CUT_NEED},
    {"num_rel_ret", TDM_MEASURE_NUM_REL_RET, CUT_NONE},
    {"recip_rank", TDM_MEASURE_RECIP_RANK, CUT_OPT}, {"num_ret", TDM_MEASURE_NUM_RET, CUT_NONE},
    {"num_rel", TDM_MEASURE_NUM_REL, CUT_NONE},   {"recall", TDM_MEASURE_RECALL, CUT_NEED},
    {"Rprec", TDM_MEASURE_RPREC, CUT_NONE},       {"ndcg", TDM_MEASURE_NDCG, CUT_NONE},
    {"map", TDM_MEASURE_MAP, CUT_NONE},           {"P", TDM_MEASURE_P, CUT_NEED},
};

static const char DEFAULT_CUTS[] = "5,10,15,20,30,100,200,500,1000";

static int add(const char *base, int kind, uint64_t cut, tdm_eval_measure *out, size_t max,
               size_t *n, const char *spec, tdm_err *err)
{
    if (*n >= max)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "measure '%s': more than %zu measures",
                           spec, max);
    tdm_eval_measure *m = &out[(*n)++];
    m->kind = kind;
    m->cutoff = cut;
    if (cut)
        snprintf(m->name, sizeof m->name, "%s_%llu", base, (unsigned long long)cut);
    else
        snprintf(m->name, sizeof m->name, "%s", base);
    return TDM_OK;
}

int tdm_eval_measure_parse(const char *spec, tdm_eval_measure *out, size_t max, size_t *n,
                           tdm_err *err)
{
    for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES; i++) {
        size_t len = strlen(NAMES[i].name);
        const char *rest = spec + len;
        if (strncmp(spec, NAMES[i].name, len))
            continue;
        /* After the name: nothing, or '.' / '_' and cut-offs ("P.10", "P_10"). */
        if (*rest && !((*rest == '.' || *rest == '_') && rest[1] >= '0' && rest[1] <= '9'))
            continue;
        const char *cuts = *rest ? rest + 1 : NULL;
        if (cuts && NAMES[i].cut == CUT_NONE)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "measure '%s': %s takes no cut-off",
                               spec, NAMES[i].name);
        if (!cuts && NAMES[i].cut != CUT_NEED)
            return add(NAMES[i].name, NAMES[i].kind, 0, out, max, n, spec, err);
        for (const char *p = cuts ? cuts : DEFAULT_CUTS;;) {
            char *e;
            errno = 0;
            unsigned long long k = strtoull(p, &e, 10);
            if (e == p || *p == '-' || errno || k == 0 || (*e && *e != ','))
                return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                                   "measure '%s': cut-offs must be positive integers "
                                   "separated by commas", spec);
            int rc = add(NAMES[i].name, NAMES[i].kind, k, out, max, n, spec, err);
            if (rc != TDM_OK)
                return rc;
            if (!*e)
                return TDM_OK;
            p = e + 1;
        }
    }
    return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                       "measure '%s': unknown (map, map_cut.K, P.K, recall.K, ndcg, "
                       "ndcg_cut.K, recip_rank, Rprec, num_ret, num_rel, num_rel_ret)", spec);
}

int tdm_eval_measure_is_count(const tdm_eval_measure *m)
{
    return m->kind == TDM_MEASURE_NUM_RET || m->kind == TDM_MEASURE_NUM_REL ||
           m->kind == TDM_MEASURE_NUM_REL_RET;
}

/* The run's entries of qid, [*a, *b) (sorted by qid first). */
static void run_range(const tdm_run *r, const char *qid, size_t *a, size_t *b)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (strcmp(r->e[m].qid, qid) < 0)
            lo = m + 1;
        else
            hi = m;
    }
    *a = lo;
    while (lo < r->n && !strcmp(r->e[lo].qid, qid))
        lo++;
    *b = lo;
}

static int desc_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? 1 : a > b ? -1 : 0;
}

/* The ideal DCG of the first `cut` (0: all) judged gains, best first. */
static int ideal_dcg(const tdm_qrels *q, size_t lo, size_t hi, int gain, uint64_t cut,
                     double *out)
{
    size_t n = hi - lo;
    double *g = malloc((n ? n : 1) * sizeof *g);
    if (!g)
        return TDM_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        g[i] = tdm_eval_gain(q->j[lo + i].level, gain);
    qsort(g, n, sizeof *g, desc_double);
    *out = 0;
    for (size_t i = 0; i < n && (!cut || i < cut); i++)
        *out += g[i] / log2((double)i + 2);
    free(g);
    return TDM_OK;
}

int tdm_eval_measure_query(const tdm_qrels *q, const tdm_run *r, const char *qid,
                           const tdm_eval_measure *m, int gain, double *value)
{
    size_t lo, hi, a, b;
    tdm_eval_judged_range(q, qid, &lo, &hi);
    run_range(r, qid, &a, &b);
    uint64_t nrel = 0, relret = 0, cut = m->cutoff;
    for (size_t i = lo; i < hi; i++)
        nrel += q->j[i].level >= 1;
    if (m->kind == TDM_MEASURE_RPREC)
        cut = nrel;
    double sum = 0, dcg = 0, rr = 0;
    for (size_t i = a; i < b; i++) {
        uint64_t rank = i - a + 1;
        int lv = tdm_eval_level_of(q, lo, hi, r->e[i].docno);
        int in = !cut || rank <= cut;
        if (in)
            dcg += tdm_eval_gain(lv, gain) / log2((double)rank + 1);
        if (lv < 1)
            continue;
        if (in) {
            relret++;
            sum += (double)relret / (double)rank;   /* precision at this rank */
            if (rr == 0)
                rr = 1.0 / (double)rank;
        }
    }
    switch (m->kind) {
    case TDM_MEASURE_MAP:
    case TDM_MEASURE_MAP_CUT:
        *value = nrel ? sum / (double)nrel : 0;
        return TDM_OK;
    case TDM_MEASURE_P:
        *value = (double)relret / (double)cut;
        return TDM_OK;
    case TDM_MEASURE_RPREC:
        *value = nrel ? (double)relret / (double)nrel : 0;
        return TDM_OK;
    case TDM_MEASURE_RECALL:
        *value = nrel ? (double)relret / (double)nrel : 0;
        return TDM_OK;
    case TDM_MEASURE_RECIP_RANK:
        *value = rr;
        return TDM_OK;
    case TDM_MEASURE_NUM_RET:
        *value = (double)(b - a);
        return TDM_OK;
    case TDM_MEASURE_NUM_REL:
        *value = (double)nrel;
        return TDM_OK;
    case TDM_MEASURE_NUM_REL_RET:
        *value = (double)relret;
        return TDM_OK;
    default: { /* nDCG, cut or not */
        double idcg;
        if (ideal_dcg(q, lo, hi, gain, cut, &idcg) != TDM_OK)
            return TDM_ERR_NOMEM;
        *value = idcg > 0 ? dcg / idcg : 0;
        return TDM_OK;
    }
    }
}
