/* Start-up calibration of the lanes' cost models (sched_priv.h): a small
 * sample of queries built from the index's own lexicon, from rare terms to
 * frequent ones and one to three terms, each run on every lane (a warm-up
 * run of each size first, not counted: the driver compiles kernels on first
 * use), the times observed by each lane's model. Runs at tdm_search_open
 * when a device has no stored model.
 *
 * A lane's samples run on a thread of their own, each watched by the run
 * watchdog (started before): the open waits for that thread, or for the
 * watchdog to abandon its sample (the lane is then dead, its device marked
 * hung, and the thread, stuck in the driver, is left with what it owns:
 * close joins it if it returns), and goes on with the next lane. So a
 * device that stops answering at its first searches fails its lane, not
 * the open. */
#include <stdlib.h>
#include <string.h>

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

/* Runs one sample query on lane l, watched; observes its time (observe).
 * Returns 0 when the watchdog abandoned it: the lane is dead. */
static int run_sample(struct tdm_sched *sc, slane *l, const tdm_search_query *q, int observe)
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
    int armed = rc == TDM_OK && it.run, fault = 0, abandoned = 0;
    double bound = 0, t0 = tdm_sched_now();
    tdm_watch w;
    pthread_mutex_lock(&sc->mu);
    if (armed) {
        int alg = tdm_sched_expected_alg(&it);
        bound = tdm_watchdog_arm(l, &w, NULL, 0, &one, 1, 1u << (alg & 31), 0,
                                 tdm_model_predict(&l->model, alg, &f), t0);
        fault = tdm_watchdog_fault(l);
    }
    pthread_mutex_unlock(&sc->mu);
    if (fault)
        tdm_watchdog_fault_block(fault, bound > 0 ? bound : 1.0); /* a driver call stuck */
    if (rc == TDM_OK)
        rc = tdm_search_run_prepared(sc->s, &one, 1, l->index, &r, &e);
    double dt = tdm_sched_now() - t0;
    pthread_mutex_lock(&sc->mu);
    if (armed) {
        struct tdm_astep *as;
        void (*fns[1])(void *);
        void *args[1];
        int nfn;
        abandoned = tdm_watchdog_returned(&w, &as, fns, args, &nfn);
    }
    /* a sample the host path answered says nothing of the lane */
    if (!abandoned && rc == TDM_OK && r->status == TDM_OK && r->device >= 0 &&
        r->variant != TDM_VARIANT_HOST && tdm_lane_warm(l, r->algorithm) && observe)
        tdm_model_observe(&l->model, r->algorithm, &f, dt);
    pthread_mutex_unlock(&sc->mu);
    tdm_search_result_release(r);
    tdm_sbq_free(&it);
    tdm_err_clear(&e);
    return !abandoned;
}

/* One lane's calibration: its samples, its own copy of their terms. */
typedef struct calrun {
    struct tdm_sched *sc;
    slane *l;
    int n;                  /* samples observed (after CAL_TERMS warm-ups) */
    tdm_search_term *terms; /* query qi's terms at [qi * CAL_TERMS], nt = 1 + qi % CAL_TERMS */
} calrun;

static void *calibrate_lane(void *arg)
{
    calrun *c = arg;
    struct tdm_sched *sc = c->sc;
    uint32_t bit = 1u << c->l->index;
    /* first one query of each size, not observed; stop once abandoned */
    for (int i = -CAL_TERMS, live = 1; i < c->n && live; i++) {
        int qi = i < 0 ? i + CAL_TERMS : i, nt = 1 + qi % CAL_TERMS;
        tdm_search_query q = {NULL, &c->terms[(size_t)qi * CAL_TERMS], (size_t)nt};
        live = run_sample(sc, c->l, &q, i >= 0);
    }
    free(c->terms);
    free(c);
    pthread_mutex_lock(&sc->mu); /* the last touch of sc */
    sc->cal_exited |= bit;
    pthread_cond_broadcast(&sc->wd_cv);
    pthread_mutex_unlock(&sc->mu);
    return NULL;
}

/* Calibrates lane l on a thread of its own: waits for it, or for the
 * watchdog to abandon its sample (then leaves it). */
static void calibrate_one(struct tdm_sched *sc, slane *l, const tdm_search_term *terms, size_t nterms,
                          int n)
{
    calrun *c = malloc(sizeof *c);
    tdm_search_term *mine = malloc(nterms * sizeof *mine);
    if (!c || !mine) {
        free(c);
        free(mine);
        return;
    }
    memcpy(mine, terms, nterms * sizeof *mine);
    *c = (calrun){sc, l, n, mine};
    uint32_t bit = 1u << l->index;
    if (pthread_create(&sc->cal_th[l->index], NULL, calibrate_lane, c) != 0) {
        free(mine);
        free(c);
        return; /* the lane keeps its prior */
    }
    pthread_mutex_lock(&sc->mu);
    sc->cal_started |= bit;
    while (!(sc->cal_exited & bit) && l->alive)
        pthread_cond_wait(&sc->wd_cv, &sc->mu);
    int done = (sc->cal_exited & bit) != 0;
    if (done) { /* joined here; else stuck: tdm_watchdog_stop's */
        sc->cal_started &= ~bit;
        sc->cal_exited &= ~bit;
    }
    pthread_mutex_unlock(&sc->mu);
    if (done)
        pthread_join(sc->cal_th[l->index], NULL);
}

void tdm_sched_calibrate(struct tdm_sched *sc, int n)
{
    const tdm_ireader_info *info = tdm_ireader_info_get(sc->s->r);
    if (info->nterms == 0 || info->ndocs == 0)
        return;
    size_t m = (size_t)n * 4;
    int nq = n > CAL_TERMS ? n : CAL_TERMS; /* the warm-ups are queries 0 .. CAL_TERMS - 1 */
    size_t nterms = (size_t)nq * CAL_TERMS;
    cterm *pool = malloc(m * sizeof *pool);
    tdm_search_term *terms = calloc(nterms, sizeof *terms);
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
    for (int qi = 0; qi < nq; qi++) {
        int nt = 1 + qi % CAL_TERMS;
        for (int k = 0; k < nt; k++) {
            size_t pos = ((size_t)qi * m / (size_t)n + (size_t)k * m / CAL_TERMS) % m;
            terms[(size_t)qi * CAL_TERMS + (size_t)k] = (tdm_search_term){NULL, pool[pos].id, 1.0};
        }
    }
    for (int lane = 0; lane < sc->nl; lane++)
        calibrate_one(sc, &sc->lanes[lane], terms, nterms, n);
    free(pool);
    free(terms);
}
