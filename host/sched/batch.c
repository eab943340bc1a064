/* tdm_search_batch through the lanes (sched_priv.h, docs/SCHED.md): the
 * batch is placed like single queries are, by policy and the lanes' cost
 * models. best, or a pin, sends it whole to one lane; hybrid, cpu-only and
 * gpu-only split it over the lanes they allow, each query to the lane that
 * would finish it first given what that lane has already (its predicted
 * work left and the part of the batch it took); each lane's part runs
 * there as one run (drive/search_run.h), so GPU lanes take theirs as a
 * batch. A part is one job, queued on its lane (a call whole on one lane
 * may be stolen by a lane that goes idle and would finish it first, unless
 * the request pinned it), handed over whole when its lane fails. The
 * batch's queries are prepared once, here, before they are placed. A part
 * whose run the watchdog abandoned (its lane hung) is prepared again and
 * placed on a live lane (reroute_part): the stuck run may still read the
 * old one. */
#include <stdlib.h>
#include <string.h>

#include "runtime/settings.h"
#include "runtime/tune_table.h"
#include "sched_priv.h"

typedef struct bquery {
    tdm_qfeat f;
    int alg;
} bquery;

/* The fewest queries worth a part of its own on lane l (the tuning row's
 * batch_min_part, or TANDEM_BATCH_MIN_PART): below it a part's fixed cost
 * (launches, the merge, the host's tables) outweighs another lane's help. */
static uint32_t min_part(const struct tdm_sched *sc, const slane *l)
{
    const tdm_device *d = sc->s->dev[l->index].d;
    uint32_t v = tdm_settings_tuning(d->settings)->batch_min_part;
    return v ? v : tdm_tune_row_of(&d->info)->batch_min_part;
}

/* Each query's predicted time on every lane, pq[q * nl + i] (lock held:
 * the models are the lanes'), computed once for the split and the parts;
 * twin lanes get their models' mean (tdm_place_predict_twins). */
static void predict_all(const struct tdm_sched *sc, const bquery *bq, size_t n, double *pq)
{
    int grp[TDM_SCHED_MAX_LANES];
    tdm_place_twins(sc, grp);
    for (size_t q = 0; q < n; q++)
        tdm_place_predict_twins(sc, grp, bq[q].alg, &bq[q].f, pq + q * (size_t)sc->nl);
}

/* Lane i's predicted time for the whole batch. */
static double batch_pred(const struct tdm_sched *sc, const double *pq, size_t n, int i)
{
    double t = 0;
    for (size_t q = 0; q < n; q++)
        t += pq[q * (size_t)sc->nl + i];
    return t;
}

/* Keeps in ok[] only the lanes a batch of n queries is worth splitting over
 * (n / their largest min_part, at least one): those that would finish the
 * whole batch first, given their work left end[] (ties: the lower index). */
static void fewest_lanes(const struct tdm_sched *sc, const double *pq, size_t n,
                         const double *end, int *ok)
{
    size_t most = 0, nok = 0;
    double fin[TDM_SCHED_MAX_LANES];
    for (int i = 0; i < sc->nl; i++) {
        if (!ok[i])
            continue;
        nok++;
        size_t m = min_part(sc, &sc->lanes[i]);
        most = m > most ? m : most;
    }
    size_t keep = most ? n / most : nok;
    if (keep >= nok)
        return;
    for (int i = 0; i < sc->nl; i++) {
        const slane *l = &sc->lanes[i];
        double t = ok[i] ? batch_pred(sc, pq, n, i) : 0;
        fin[i] = end[i] + t / (l->slots > 0 ? l->slots : 1);
    }
    for (keep = keep < 1 ? 1 : keep; nok > keep; nok--) { /* drop the lane finishing last */
        int last = -1;
        for (int i = 0; i < sc->nl; i++)
            if (ok[i] && (last < 0 || fin[i] >= fin[last]))
                last = i;
        ok[last] = 0;
    }
}

/* Each query's lane into lane[] (lock held) among the lanes ok[] (more
 * than one; ok[] may lose some). A lane's load is all its predicted work
 * left (tdm_place_work_left), not its backlog, which is 0 while one of its
 * slots is free: with two senders of whole calls on four PoCL lanes, the
 * lane predicted fastest took 7,952 of 10,000 queries, its two slots
 * sharing its device, and two lanes took none. */
static void split(struct tdm_sched *sc, const double *pq, size_t n, int policy, int pin, int *ok,
                  int *lane)
{
    double now = tdm_sched_now(), end[TDM_SCHED_MAX_LANES];
    for (int i = 0; i < sc->nl; i++)
        end[i] = ok[i] ? tdm_place_work_left(&sc->lanes[i], now) : 0;
    if (policy != TDM_POLICY_BEST && pin < 0)
        fewest_lanes(sc, pq, n, end, ok);
    if (policy == TDM_POLICY_BEST || pin >= 0) { /* whole, to the fastest by prediction */
        int best = -1;
        double bt = 0;
        for (int i = 0; i < sc->nl; i++) {
            if (!ok[i])
                continue;
            double t = batch_pred(sc, pq, n, i);
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
            double p = pq[q * (size_t)sc->nl + i];
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
    tdm_sbq *fresh;         /* a rerouted part's own prepared queries ([j.nq]) */
    struct part *retry;     /* the part run again after this one's lane hung */
} part;

static void part_free(part *p)
{
    for (uint32_t x = 0; p->fresh && x < p->j.nq; x++)
        tdm_sbq_free(&p->fresh[x]);
    free(p->fresh);
    free(p->its);
    free(p->rs);
    free(p->idx);
}

/* The fields of part j every part sets (its queries and predictions aside). */
static void job_init(const struct tdm_sched *sc, sjob *j, const tdm_search_options *o,
                     int policy, int pin, double arrive)
{
    j->o = *o;
    j->policy = policy;
    j->pin = pin; /* unpinned, a lane that goes idle may steal it (place_part) */
    j->arrive = arrive;
    j->deadline = arrive + (o->deadline_ms > 0 ? o->deadline_ms * 1e-3 : sc->deadline);
    j->where = -2;
    j->first_dev = -1;
}

/* Builds lane l's part: the queries split there, their predictions pq;
 * pinned to pin (-1: none). */
static int make_part(struct tdm_sched *sc, part *p, int l, const int *lane, const bquery *bq,
                     const double *pq, tdm_sbq *items, size_t n, const tdm_search_options *o,
                     int policy, int pin, double arrive, tdm_err *err)
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
    job_init(sc, j, o, policy, pin, arrive);
    for (size_t q = 0, x = 0; q < n; q++) {
        if (lane[q] != l)
            continue;
        p->its[x] = &items[q];
        p->idx[x++] = q;
        j->f.los += bq[q].f.los; /* the part fills a batch lane's cap alone */
        j->alg = bq[q].alg;
        for (int i = 0; i < sc->nl; i++)
            j->pred[i] += pq[q * (size_t)sc->nl + i];
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
        for (part *p = &parts[l], *next; p; p = next) {
            next = p->retry;
            if (p->j.nq)
                pthread_cond_destroy(&p->j.cv);
            tdm_err_clear(&p->j.err);
            part_free(p);
            if (p != &parts[l])
                free(p);
        }
    }
    free(parts);
}

/* Part old again, its queries freshly prepared (the run the watchdog
 * abandoned may still read old's), ready to place: NULL when out of
 * memory. No lock held. */
static part *reroute_part(struct tdm_sched *sc, const part *old, const tdm_search_query *queries)
{
    size_t m = old->j.nq;
    part *p = calloc(1, sizeof *p);
    tdm_search_query *qs = malloc(m * sizeof *qs);
    if (p) {
        p->fresh = calloc(m, sizeof *p->fresh);
        p->its = malloc(m * sizeof *p->its);
        p->rs = calloc(m, sizeof *p->rs);
        p->idx = malloc(m * sizeof *p->idx);
    }
    if (!p || !qs || !p->fresh || !p->its || !p->rs || !p->idx) {
        if (p)
            part_free(p);
        free(p);
        free(qs);
        return NULL;
    }
    for (size_t x = 0; x < m; x++) {
        p->idx[x] = old->idx[x];
        qs[x] = queries[old->idx[x]];
        p->its[x] = &p->fresh[x];
    }
    tdm_search_prepare_all(sc->s, qs, &old->j.o, m, p->fresh);
    free(qs);
    sjob *j = &p->j;
    job_init(sc, j, &old->j.o, old->j.policy, old->j.pin, old->j.arrive);
    j->handovers = old->j.handovers + 1;
    j->items = p->its;
    j->bres = p->rs;
    j->nq = (uint32_t)m;
    pthread_mutex_lock(&sc->mu);
    for (size_t x = 0; x < m; x++) { /* the models are the lanes': under the lock */
        tdm_qfeat f;
        tdm_qfeat_from(&p->fresh[x].q, old->j.o.k, &f);
        int alg = tdm_sched_expected_alg(&p->fresh[x]);
        j->f.los += f.los;
        j->alg = alg;
        for (int i = 0; i < sc->nl; i++)
            j->pred[i] += tdm_model_predict(&sc->lanes[i].model, alg, &f);
    }
    pthread_mutex_unlock(&sc->mu);
    pthread_cond_init(&j->cv, NULL);
    return p;
}

/* Whether a lane lives (lock held). */
static int any_live(const struct tdm_sched *sc)
{
    for (int i = 0; i < sc->nl; i++)
        if (sc->lanes[i].alive)
            return 1;
    return 0;
}

/* Places part j (lock held) on lane `home`, the split's (-1: where
 * tdm_place says); when no lane can take it, fails it with error `why`
 * (NULL: every lane has failed). A whole call's part is queued there
 * unpinned (unless the request pinned it): an idle lane steals it when it
 * would finish it first, as a single query. Pinned, whole calls stayed on
 * the lanes the models chose: a fit predicting one PoCL lane fastest kept
 * two of four lanes idle under four senders of batch calls. */
static void place_part(struct tdm_sched *sc, sjob *j, double now, const tdm_err *why, int home)
{
    sc->st.in_flight += j->nq;
    tdm_sched_update_mode(sc);
    if (home >= 0 && sc->lanes[home].alive) {
        tdm_place_on(sc, j, home);
        return;
    }
    if (tdm_place(sc, j, now, 0) == -2) {
        j->rc = why ? tdm_err_copy(&j->err, why)
                    : tdm_err_set(&j->err, TDM_ERR_NO_DEVICE,
                                  "search batch: no lane can run it (every lane has failed)");
        j->done = 1;
        sc->st.in_flight -= j->nq;
        sc->st.failed += j->nq;
    }
}

/* Waits for the parts (lock held): a part the watchdog ended on a hung
 * lane runs again on a live lane (else it fails with the watchdog's
 * TDM_ERR_TIMEOUT). last[l]: the last attempt of part l. Returns the
 * number of abandoned attempts (their memory kept for their runs). */
static int wait_parts(struct tdm_sched *sc, part *parts, const tdm_search_query *queries,
                      part **last)
{
    int timed_out = 0;
    for (int l = 0; l < sc->nl; l++) {
        part *p = last[l] = &parts[l];
        while (p->j.nq) {
            while (!p->j.done)
                pthread_cond_wait(&p->j.cv, &sc->mu);
            if (!p->j.timed_out)
                break;
            timed_out++;
            part *again = NULL;
            if (any_live(sc) && !sc->stop) {
                pthread_mutex_unlock(&sc->mu);
                again = reroute_part(sc, p, queries);
                pthread_mutex_lock(&sc->mu);
            }
            if (!again) { /* no lane left (or no memory): the batch fails, naming the device */
                sc->st.failed += p->j.nq;
                break;
            }
            p->retry = again;
            last[l] = again;
            /* the timeout's error if no lane takes it after all */
            place_part(sc, &again->j, tdm_sched_now(), &p->j.err, -1);
            p = again;
        }
    }
    return timed_out;
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

static int placed(struct tdm_sched *sc, const tdm_search_query *queries, tdm_sbq *items, size_t n,
                  const tdm_search_options *o, int policy, double arrive,
                  tdm_search_result **results, kept **keep, tdm_err *err);

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
    int stuck = 0; /* direct runs of this thread's that the watchdog abandoned */
    int rc = direct ? tdm_sched_run_direct(sc, its, policy, n, results, &stuck, err)
                    : placed(sc, queries, items, n, o, policy, arrive, results, &keep, err);
    if (keep) { /* a stuck run may still read them: it frees them if it returns */
        keep->items = items;
        keep->its = its;
        keep->n = n;
        pthread_mutex_lock(&sc->mu);
        int refs = keep->refs;
        for (int l = 0; l < keep->nl; l++)
            for (part *p = &keep->parts[l]; p; p = p->retry)
                if (p->j.hung > 0) {
                    p->j.orphan_fn = kept_release;
                    p->j.orphan_arg = keep;
                } else if (p->j.timed_out) {
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
    if (stuck) /* the last touch of sc */
        tdm_watchdog_leave(sc, stuck);
    return rc;
}

/* The batch queries[0 .. n), prepared in items, through the lanes
 * (tdm_sched_batch_search). */
static int placed(struct tdm_sched *sc, const tdm_search_query *queries, tdm_sbq *items, size_t n,
                  const tdm_search_options *o, int policy, double arrive,
                  tdm_search_result **results, kept **keep, tdm_err *err)
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
    double *pq = malloc(n * (size_t)sc->nl * sizeof *pq);
    int *lane = malloc(n * sizeof *lane);
    part *parts = calloc((size_t)sc->nl, sizeof *parts);
    int rc = bq && pq && lane && parts ? TDM_OK
                                       : tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    int ok[TDM_SCHED_MAX_LANES], nok = 0, only = -1;
    if (rc == TDM_OK) {
        pthread_mutex_lock(&sc->mu);
        nok = tdm_place_lanes(sc, &(sjob){.policy = policy, .pin = o->device}, ok);
        pthread_mutex_unlock(&sc->mu);
        for (int i = 0; i < sc->nl && nok == 1; i++)
            only = ok[i] ? i : only;
        if (!nok)
            rc = tdm_err_set(err, TDM_ERR_NO_DEVICE,
                             "search batch: policy %s: no lane can run it (the engine has no "
                             "lane of its kind, or every lane has failed)", tdm_policy_name(policy));
    }
    if (rc == TDM_OK && nok > 1) /* lanes to choose from: the models decide */
        features(items, n, o, bq);
    if (rc == TDM_OK) {
        /* predicted, split, made and placed under one hold of the lock (the
           models are the lanes'): split and placed apart, two callers at
           once both saw the same idle lane and both went there */
        pthread_mutex_lock(&sc->mu);
        predict_all(sc, bq, n, pq);
        if (nok > 1) {
            split(sc, pq, n, policy, o->device, ok, lane);
        } else { /* one lane: nothing to choose */
            for (size_t q = 0; q < n; q++)
                lane[q] = only;
        }
        /* a call split over lanes keeps its parts there (the split weighed
           them against each other: stolen, a CPU lane done with its part
           took the GPU lane's before that lane woke); a call whole on one
           lane is pinned only by the request */
        int whole = 1;
        for (size_t q = 1; q < n; q++)
            whole = whole && lane[q] == lane[0];
        for (int l = 0; rc == TDM_OK && l < sc->nl; l++)
            rc = make_part(sc, &parts[l], l, lane, bq, pq, items, n, o, policy,
                           whole ? o->device : l, arrive, err);
        if (rc)
            pthread_mutex_unlock(&sc->mu);
    }
    if (rc == TDM_OK) {
        for (int l = 0; l < sc->nl; l++) {
            sjob *j = &parts[l].j;
            if (!j->nq)
                continue;
            sc->st.submitted += j->nq;
            place_part(sc, j, arrive, NULL, l);
        }
        part *last[TDM_SCHED_MAX_LANES];
        int timed_out = wait_parts(sc, parts, queries, last);
        pthread_mutex_unlock(&sc->mu);
        if (timed_out && (*keep = calloc(1, sizeof **keep)) != NULL) {
            (*keep)->refs = timed_out;
            (*keep)->parts = parts;
            (*keep)->nl = sc->nl;
        }
        for (int l = 0; rc == TDM_OK && l < sc->nl; l++)
            if (last[l]->j.nq && last[l]->j.rc)
                rc = tdm_err_copy(err, &last[l]->j.err);
        double now = tdm_sched_now();
        for (int l = 0; l < sc->nl; l++) {
            sjob *j = &last[l]->j;
            for (uint32_t x = 0; x < j->nq; x++) {
                tdm_search_result *r = last[l]->rs[x];
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
                results[last[l]->idx[x]] = r;
            }
        }
    }
    if (!*keep)
        parts_free(parts, sc->nl);
    free(bq);
    free(pq);
    free(lane);
    return rc;
}
