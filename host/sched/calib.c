/* Start-up calibration of the lanes' cost models (sched_priv.h): a small
 * sample of queries built from the index's own lexicon, from rare terms to
 * frequent ones and one to three terms, each run on every lane (a warm-up
 * run of each size first, not counted: the driver compiles kernels on first
 * use), the times observed by each lane's model. Runs at tdm_search_open
 * when a device has no stored model. */
#include <stdlib.h>

#include "common/rng.h"
#include "sched_priv.h"

#define CAL_TERMS 3

typedef struct cterm {
    uint64_t id;
    uint32_t df;
} cterm;

static int by_df(const void *a, const void *b)
{
    uint32_t x = ((const cterm *)a)->df, y = ((const cterm *)b)->df;
    return (x > y) - (x < y);
}

/* Observes one sample query on lane l (no lock needed: no worker runs yet). */
static void run_sample(struct tdm_sched *sc, slane *l, const tdm_search_query *q, int observe)
{
    tdm_search_options o;
    tdm_err e = {0};
    tdm_search_options_check(NULL, &o, &e);
    o.device = l->index;
    tdm_sbq it, *one = &it;
    tdm_qfeat f;
    int rc = tdm_search_prepare(sc->s, q, &o, &it);
    tdm_qfeat_from(&it.q, o.k, &f);
    tdm_search_result *r = NULL;
    double t0 = tdm_sched_now();
    if (rc == TDM_OK)
        rc = tdm_search_run_prepared(sc->s, &one, 1, l->index, &r, &e);
    double dt = tdm_sched_now() - t0;
    if (rc == TDM_OK && r->status == TDM_OK && r->device >= 0 && tdm_lane_warm(l, r->algorithm) &&
        observe)
        tdm_model_observe(&l->model, r->algorithm, &f, dt);
    tdm_search_result_release(r);
    tdm_sbq_free(&it);
    tdm_err_clear(&e);
}

void tdm_sched_calibrate(struct tdm_sched *sc, int n)
{
    const tdm_ireader_info *info = tdm_ireader_info_get(sc->s->r);
    if (info->nterms == 0 || info->ndocs == 0)
        return;
    size_t m = (size_t)n * 4;
    cterm *pool = malloc(m * sizeof *pool);
    tdm_search_term *terms = malloc((size_t)n * CAL_TERMS * sizeof *terms);
    if (!pool || !terms) {
        free(pool);
        free(terms);
        return;
    }
    tdm_rng rng;
    tdm_rng_seed(&rng, 0x5c4ed); /* the same sample every run */
    for (size_t i = 0; i < m; i++) {
        uint64_t id = tdm_rng_next(&rng) % info->nterms;
        size_t len;
        uint64_t cf;
        pool[i].id = id;
        pool[i].df = 0;
        tdm_ireader_term(sc->s->r, id, &len, &pool[i].df, &cf);
    }
    qsort(pool, m, sizeof *pool, by_df); /* quantiles of df: rare to frequent */
    for (int lane = 0; lane < sc->nl; lane++) {
        slane *l = &sc->lanes[lane];
        for (int i = -CAL_TERMS; i < n; i++) { /* first one query of each size, not observed */
            int qi = i < 0 ? i + CAL_TERMS : i, nt = 1 + qi % CAL_TERMS;
            tdm_search_term *t = &terms[(size_t)qi * CAL_TERMS];
            for (int k = 0; k < nt; k++) {
                size_t pos = ((size_t)qi * m / (size_t)n + (size_t)k * m / CAL_TERMS) % m;
                t[k] = (tdm_search_term){NULL, pool[pos].id, 1.0};
            }
            tdm_search_query q = {NULL, t, (size_t)nt};
            run_sample(sc, l, &q, i >= 0);
        }
    }
    free(pool);
    free(terms);
}
