/* tdm_search_batch through the lanes (sched_priv.h, docs/SCHED.md): the
 * batch is placed like single queries are, by policy and the lanes' cost
 * models. best, or a pin, sends it whole to one lane; hybrid, cpu-only and
 * gpu-only split it over the lanes they allow, each query to the lane that
 * would finish it first given what that lane has already (its backlog and
 * the part of the batch it took); each lane's part runs there as one run
 * (drive/search_run.h), so GPU lanes take theirs as a batch. A part is one
 * job: handed over whole when its lane fails. The batch's queries are
 * prepared once, here, before they are placed. */
#include <stdlib.h>
#include <string.h>

#include "sched_priv.h"

/* Whether the batch's policy (or pin) allows lane l; strict as tdm_place. */
static int allows(const struct tdm_sched *sc, int policy, int pin, const slane *l, int strict)
{
    (void)sc;
    if (!l->alive)
        return 0;
    if (!strict)
        return 1;
    if (pin >= 0)
        return l->index == pin;
    if (policy == TDM_POLICY_CPU_ONLY)
        return !l->gpu;
    if (policy == TDM_POLICY_GPU_ONLY)
        return l->gpu;
    return 1;
}

static int kind_exists(const struct tdm_sched *sc, int policy, int pin)
{
    for (int i = 0; i < sc->nl; i++) {
        const slane *l = &sc->lanes[i];
        if (pin >= 0 ? l->index == pin
            : policy == TDM_POLICY_CPU_ONLY ? !l->gpu
            : policy == TDM_POLICY_GPU_ONLY ? l->gpu : 1)
            return 1;
    }
    return 0;
}

typedef struct bquery {
    tdm_qfeat f;
    int alg;
} bquery;

/* The lanes the batch may go to into ok[] (lock held); returns how many. */
static int lanes_ok(const struct tdm_sched *sc, int policy, int pin, int *ok)
{
    int strict = 1, any = 0;
    for (int pass = 0; pass < 2 && !any; pass++) {
        for (int i = 0; i < sc->nl; i++)
            any += ok[i] = allows(sc, policy, pin, &sc->lanes[i], strict);
        if (!any && !kind_exists(sc, policy, pin))
            break; /* the engine lacks the policy's kind: no fallback */
        strict = 0; /* the policy's lanes have all failed: any live lane */
    }
    return any;
}

/* Each query's lane into lane[] (lock held) among the lanes ok[] (more
 * than one). */
static void split(struct tdm_sched *sc, const bquery *bq, size_t n, int policy, int pin,
                  const int *ok, int *lane)
{
    double now = tdm_sched_now(), end[TDM_SCHED_MAX_LANES];
    for (int i = 0; i < sc->nl; i++)
        end[i] = ok[i] ? tdm_place_backlog(sc, &sc->lanes[i], now) : 0;
    if (policy == TDM_POLICY_BEST || pin >= 0) { /* whole, to the fastest by prediction */
        int best = -1;
        double bt = 0;
        for (int i = 0; i < sc->nl; i++) {
            if (!ok[i])
                continue;
            double t = 0;
            for (size_t q = 0; q < n; q++)
                t += tdm_model_predict(&sc->lanes[i].model, bq[q].alg, &bq[q].f);
            if (best < 0 || t < bt) {
                bt = t;
                best = i;
            }
        }
        for (size_t q = 0; q < n; q++)
            lane[q] = best;
        return;
    }
    for (size_t q = 0; q < n; q++) { /* earliest predicted finish, query by query */
        int best = -1;
        double bt = 0, bp = 0;
        for (int i = 0; i < sc->nl; i++) {
            if (!ok[i])
                continue;
            double p = tdm_model_predict(&sc->lanes[i].model, bq[q].alg, &bq[q].f);
            if (best < 0 || end[i] + p < bt) {
                bt = end[i] + p;
                bp = p;
                best = i;
            }
        }
        lane[q] = best;
        end[best] += bp / (sc->lanes[best].slots > 0 ? sc->lanes[best].slots : 1);
    }
}

/* The features and planned algorithm of each prepared query (a query that
 * failed to prepare has no terms: it costs nothing here, and fails alone
 * in its lane's run). */
static void features(tdm_sbq *items, size_t n, const tdm_search_options *o, bquery *bq)
{
    for (size_t q = 0; q < n; q++) {
        tdm_qfeat_from(&items[q].q, o->k, &bq[q].f);
        bq[q].alg = tdm_sched_expected_alg(&items[q]);
    }
}

typedef struct part {
    sjob j;
    tdm_sbq **its;
    tdm_search_result **rs;
    size_t *idx;
} part;

static void part_free(part *p)
{
    free(p->its);
    free(p->rs);
    free(p->idx);
}

/* Builds lane l's part: the queries split there, their predictions. Under sc->mu. */
static int make_part(struct tdm_sched *sc, part *p, int l, const int *lane, const bquery *bq,
                     tdm_sbq *items, size_t n, const tdm_search_options *o, int policy,
                     double arrive, tdm_err *err)
{
    size_t m = 0;
    for (size_t q = 0; q < n; q++)
        m += lane[q] == l;
    memset(p, 0, sizeof *p);
    if (!m)
        return TDM_OK;
    p->its = malloc(m * sizeof *p->its);
    p->rs = calloc(m, sizeof *p->rs);
    p->idx = malloc(m * sizeof *p->idx);
    if (!p->its || !p->rs || !p->idx)
        return tdm_err_set(err, TDM_ERR_NOMEM, "search batch: out of memory");
    sjob *j = &p->j;
    j->o = *o;
    j->policy = policy;
    j->pin = l; /* split here: never stolen; a failing lane hands it on */
    j->arrive = arrive;
    j->deadline = arrive + (o->deadline_ms > 0 ? o->deadline_ms * 1e-3 : sc->deadline);
    j->where = -2;
    j->first_dev = -1;
    for (size_t q = 0, x = 0; q < n; q++) {
        if (lane[q] != l)
            continue;
        p->its[x] = &items[q];
        p->idx[x++] = q;
        j->f.los += bq[q].f.los; /* the part fills a batch lane's cap alone */
        j->alg = bq[q].alg;
        for (int i = 0; i < sc->nl; i++)
            j->pred[i] += tdm_model_predict(&sc->lanes[i].model, bq[q].alg, &bq[q].f);
    }
    j->items = p->its;
    j->bres = p->rs;
    j->nq = (uint32_t)m;
    pthread_cond_init(&j->cv, NULL);
    return TDM_OK;
}

/* A batch's memory that a run the watchdog abandoned may still read: its
 * parts and prepared queries, freed by the last such run that returns. */
typedef struct kept {
    int refs;               /* abandoned runs holding it */
    part *parts;
    int nl;
    tdm_sbq *items;
    tdm_sbq **its;
    size_t n;
} kept;

static void parts_free(part *parts, int nl)
{
    for (int l = 0; parts && l < nl; l++) {
        if (parts[l].j.nq)
            pthread_cond_destroy(&parts[l].j.cv);
        tdm_err_clear(&parts[l].j.err);
        part_free(&parts[l]);
    }
    free(parts);
}

static void kept_release(void *arg)
{
    kept *k = arg;
    if (__atomic_sub_fetch(&k->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    parts_free(k->parts, k->nl);
    for (size_t q = 0; q < k->n; q++)
        tdm_sbq_free(&k->items[q]);
    free(k->items);
    free(k->its);
    free(k);
}

static int placed(struct tdm_sched *sc, tdm_sbq *items, size_t n, const tdm_search_options *o,
                  int policy, double arrive, tdm_search_result **results, kept **keep,
                  tdm_err *err);

int tdm_sched_batch_search(struct tdm_sched *sc, const tdm_search_query *queries, size_t n,
                           const tdm_search_options *o, tdm_search_result **results,
                           tdm_err *err)
{
    for (size_t i = 0; i < n; i++)
        results[i] = NULL;
    if (n == 0)
        return TDM_OK;
    int policy = o->policy ? o->policy : sc->policy;
    int direct = policy == TDM_POLICY_DIRECT || sc->s->ndocs == 0 || n > UINT32_MAX;
    if (!direct && o->device >= sc->nl)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "device = %d: the engine has devices 0 .. %d",
                           o->device, sc->nl - 1);
    double arrive = tdm_sched_now();
    /* prepared once, here (on several threads for a big batch): the
       scheduler reads them, the lanes run them */
    tdm_sbq *items = calloc(n, sizeof *items);
    tdm_sbq **its = malloc(n * sizeof *its);
    if (!items || !its) {
        free(items);
        free(its);
        return tdm_err_set(err, TDM_ERR_NOMEM, "search batch: out of memory for %zu queries", n);
    }
    tdm_search_prepare_all(sc->s, queries, o, n, items);
    for (size_t q = 0; q < n; q++)
        its[q] = &items[q];
    kept *keep = NULL;
    int rc = direct ? tdm_sched_run_direct(sc, its, policy, n, results, err)
                    : placed(sc, items, n, o, policy, arrive, results, &keep, err);
    if (keep) { /* a stuck run may still read them: it frees them if it returns */
        keep->items = items;
        keep->its = its;
        keep->n = n;
        pthread_mutex_lock(&sc->mu);
        int refs = keep->refs;
        for (int l = 0; l < keep->nl; l++)
            if (keep->parts[l].j.hung > 0) {
                keep->parts[l].j.orphan_fn = kept_release;
                keep->parts[l].j.orphan_arg = keep;
            } else if (keep->parts[l].j.timed_out) {
                refs--; /* returned meanwhile */
            }
        keep->refs = refs;
        pthread_mutex_unlock(&sc->mu);
        if (refs == 0) {
            keep->refs = 1;
            kept_release(keep);
        }
        return rc;
    }
    for (size_t q = 0; q < n; q++)
        tdm_sbq_free(&items[q]);
    free(items);
    free(its);
    return rc;
}

/* The prepared batch items[0 .. n) through the lanes (tdm_sched_batch_search). */
static int placed(struct tdm_sched *sc, tdm_sbq *items, size_t n, const tdm_search_options *o,
                  int policy, double arrive, tdm_search_result **results, kept **keep,
                  tdm_err *err)
{
    *keep = NULL;
    for (size_t q = 0; q < n; q++)
        if (tdm_search_prep_fatal(items[q].prc)) { /* host trouble: no lane does better */
            pthread_mutex_lock(&sc->mu);
            sc->st.submitted += n;
            sc->st.failed += n;
            pthread_mutex_unlock(&sc->mu);
            return tdm_err_copy(err, &items[q].err);
        }
    bquery *bq = calloc(n, sizeof *bq);
    int *lane = malloc(n * sizeof *lane);
    part *parts = calloc((size_t)sc->nl, sizeof *parts);
    int rc = bq && lane && parts ? TDM_OK : tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    int ok[TDM_SCHED_MAX_LANES], nok = 0, only = -1;
    if (rc == TDM_OK) {
        pthread_mutex_lock(&sc->mu);
        nok = lanes_ok(sc, policy, o->device, ok);
        pthread_mutex_unlock(&sc->mu);
        for (int i = 0; i < sc->nl && nok == 1; i++)
            only = ok[i] ? i : only;
        if (!nok)
            rc = tdm_err_set(err, TDM_ERR_NO_DEVICE,
                             "search batch: policy %s: no lane can run it (the engine has no "
                             "lane of its kind, or every lane has failed)", tdm_policy_name(policy));
    }
    if (rc == TDM_OK && nok > 1) { /* lanes to choose from: the models decide */
        features(items, n, o, bq);
        pthread_mutex_lock(&sc->mu);
        split(sc, bq, n, policy, o->device, ok, lane);
        pthread_mutex_unlock(&sc->mu);
    } else if (rc == TDM_OK) { /* one lane: nothing to predict */
        for (size_t q = 0; q < n; q++)
            lane[q] = only;
    }
    if (rc == TDM_OK) { /* the models are the lanes' too: read them under the lock */
        pthread_mutex_lock(&sc->mu);
        for (int l = 0; rc == TDM_OK && l < sc->nl; l++)
            rc = make_part(sc, &parts[l], l, lane, bq, items, n, o, policy, arrive, err);
        pthread_mutex_unlock(&sc->mu);
    }
    if (rc == TDM_OK) {
        pthread_mutex_lock(&sc->mu);
        for (int l = 0; l < sc->nl; l++) {
            sjob *j = &parts[l].j;
            if (!j->nq)
                continue;
            sc->st.submitted += j->nq;
            sc->st.in_flight += j->nq;
            tdm_sched_update_mode(sc);
            if (tdm_place(sc, j, arrive, 0) == -2) {
                j->rc = tdm_err_set(&j->err, TDM_ERR_NO_DEVICE,
                                    "search batch: no lane can run it (every lane has failed)");
                j->done = 1;
                sc->st.in_flight -= j->nq;
                sc->st.failed += j->nq;
            }
        }
        int timed_out = 0;
        for (int l = 0; l < sc->nl; l++) {
            while (parts[l].j.nq && !parts[l].j.done)
                pthread_cond_wait(&parts[l].j.cv, &sc->mu);
            if (parts[l].j.timed_out) { /* not run again: the batch fails, naming the device */
                sc->st.failed += parts[l].j.nq;
                timed_out++;
            }
        }
        pthread_mutex_unlock(&sc->mu);
        if (timed_out && (*keep = calloc(1, sizeof **keep)) != NULL) {
            (*keep)->refs = timed_out;
            (*keep)->parts = parts;
            (*keep)->nl = sc->nl;
        }
        for (int l = 0; rc == TDM_OK && l < sc->nl; l++)
            if (parts[l].j.nq && parts[l].j.rc)
                rc = tdm_err_copy(err, &parts[l].j.err);
        double now = tdm_sched_now();
        for (int l = 0; l < sc->nl; l++) {
            sjob *j = &parts[l].j;
            for (uint32_t x = 0; x < j->nq; x++) {
                tdm_search_result *r = parts[l].rs[x];
                if (!r)
                    continue;
                if (rc) {
                    tdm_search_result_release(r);
                    continue;
                }
                r->policy = policy;
                r->load_mode = j->mode;
                r->queue_seconds = j->started - arrive;
                r->handovers = j->handovers;
                r->seconds = now - arrive;
                results[parts[l].idx[x]] = r;
            }
        }
    }
    if (!*keep)
        parts_free(parts, sc->nl);
    free(bq);
    free(lane);
    return rc;
}
