/* The scheduler of a search handle (sched.h): open and close, a query's way
 * through the lanes, the counters. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drive/and_step.h"
#include "sched_priv.h"

/* ---- open */

static int resolve_policy(const tdm_settings *st, int *policy, tdm_err *err)
{
    *policy = TDM_POLICY_HYBRID;
    if (st->policy) {
        if (!tdm_policy_name(st->policy))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "engine option policy: %d is unknown",
                               st->policy);
        *policy = st->policy;
    } else if (st->policy_name && tdm_policy_parse(st->policy_name, policy) != TDM_OK) {
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "TANDEM_POLICY=%s: expected cpu-only, gpu-only, best, hybrid or direct",
                           st->policy_name);
    }
    if (*policy == TDM_POLICY_DEFAULT)
        *policy = TDM_POLICY_HYBRID;
    return TDM_OK;
}

/* Each lane's kind: the test switch's items, else the device's type. */
static int lane_kinds(const char *spec, struct tdm_sched *sc, tdm_err *err)
{
    /* every item is checked, also those past the engine's lanes: a bad
       value is an error whatever the machine */
    int item = 0;
    for (const char *p = spec; *p; item++) {
        size_t len = strcspn(p, ",");
        if (len != 3 || (strncasecmp(p, "cpu", 3) && strncasecmp(p, "gpu", 3)))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "lane kinds (TANDEM_LANE_KINDS) '%s': item %d is not cpu or gpu",
                               spec, item);
        p += len + (p[len] == ',');
    }
    const char *p = spec;
    for (int i = 0; i < sc->s->device_base && *p; i++) /* a partition's: its device's item */
        p += 3 + (p[3] == ',');
    for (int i = 0; i < sc->nl; i++) {
        slane *l = &sc->lanes[i];
        l->gpu = sc->s->dev[i].d->info.type != TDM_DEVICE_CPU;
        if (!*p)
            continue;
        l->gpu = !strncasecmp(p, "gpu", 3);
        p += 3 + (p[3] == ',');
    }
    /* Wu's synchronous mode is the GPU's; an engine without one batches on
     * what it has (PoCL runs a batch a work-item per query) */
    int gpus = 0;
    for (int i = 0; i < sc->nl; i++)
        gpus += sc->lanes[i].gpu;
    for (int i = 0; i < sc->nl; i++)
        sc->lanes[i].batch = sc->lanes[i].gpu || gpus == 0;
    return TDM_OK;
}

static int open_lane(struct tdm_sched *sc, int i, const tdm_settings *st)
{
    slane *l = &sc->lanes[i];
    l->sc = sc;
    l->index = i;
    l->alive = 1;
    l->st.device = i;
    l->st.gpu = l->gpu;
    l->st.alive = 1;
    l->slots = (int)st->lane_slots;
    tdm_model_init(&l->model, l->gpu);
    const tdm_device_info *info = &sc->s->dev[i].d->info;
    if (st->cache_mode != TDM_CACHE_OFF &&
        tdm_model_path(st->cache_dir, info->platform, info->name, info->driver_version,
                       info->device_version, info->index, l->model_path, sizeof l->model_path))
        return tdm_model_load(&l->model, l->model_path);
    l->model_path[0] = 0;
    return 0;
}

/* Lanes the engine's devices make (faults name them by engine device). */
static int engine_lanes(const tdm_search *s)
{
    int n = tdm_engine_device_count(s->engine);
    return n < TDM_SCHED_MAX_LANES ? n : TDM_SCHED_MAX_LANES;
}

static void free_sched(struct tdm_sched *sc)
{
    for (int i = 0; i < sc->nl; i++)
        pthread_cond_destroy(&sc->lanes[i].cv);
    pthread_cond_destroy(&sc->wd_cv);
    pthread_mutex_destroy(&sc->mu);
    free(sc->lanes);
    free(sc);
}

int tdm_sched_open(tdm_search *s, tdm_sched **out, tdm_err *err)
{
    *out = NULL;
    const tdm_settings *st = s->dev[0].d->settings;
    struct tdm_sched *sc = calloc(1, sizeof *sc);
    if (!sc)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    sc->s = s;
    sc->nl = s->ndev < TDM_SCHED_MAX_LANES ? s->ndev : TDM_SCHED_MAX_LANES;
    sc->lanes = calloc((size_t)sc->nl, sizeof *sc->lanes);
    pthread_mutex_init(&sc->mu, NULL);
    pthread_cond_init(&sc->wd_cv, NULL);
    sc->timeout_ms = st->run_timeout_ms;
    if (!sc->lanes) {
        free_sched(sc);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < sc->nl; i++)
        pthread_cond_init(&sc->lanes[i].cv, NULL);
    sc->window = (double)st->batch_window_us * 1e-6;
    sc->threshold = st->load_threshold;
    sc->deadline = st->deadline_ms * 1e-3;
    sc->batch_max = TDM_SCHED_BATCH_MAX;
    sc->migrate = st->migrate ? st->migrate : TDM_MIGRATE_AUTO;
    tdm_fault faults[TDM_SCHED_MAX_LANES];
    int rc = resolve_policy(st, &sc->policy, err);
    if (rc == TDM_OK)
        rc = lane_kinds(st->lane_kinds, sc, err);
    if (rc == TDM_OK)
        rc = tdm_fault_parse(st->fault_inject, "fault injection (TANDEM_FAULT_INJECT)", faults,
                             engine_lanes(s), err);
    if (rc) {
        free_sched(sc);
        return rc;
    }
    int loaded = 1;
    for (int i = 0; i < sc->nl; i++) {
        loaded &= open_lane(sc, i, st);
        /* by engine device: a partition's handle has one lane, on its device */
        int dev = s->device_base + i;
        sc->lanes[i].fault = dev < TDM_SCHED_MAX_LANES ? faults[dev] : (tdm_fault){0};
    }
    rc = tdm_watchdog_start(sc, err); /* calibration's samples are watched too */
    if (rc == TDM_OK && !loaded && sc->nl > 1 && st->calibrate > 0)
        tdm_sched_calibrate(sc, st->calibrate);
    for (int i = 0; i < sc->nl && rc == TDM_OK; i++)
        rc = tdm_lane_start(&sc->lanes[i], err);
    if (rc) {
        tdm_sched_close(sc);
        return rc;
    }
    *out = sc;
    return TDM_OK;
}

int tdm_sched_close(tdm_sched *sc)
{
    if (!sc)
        return 0;
    int stuck = tdm_watchdog_stop(sc);
    for (int i = 0; i < sc->nl; i++) {
        slane *l = &sc->lanes[i];
        tdm_err e = {0};
        if (l->model_path[0] && l->model.observed)
            tdm_model_save(&l->model, l->model_path, &e); /* best effort: a cache */
        tdm_err_clear(&e);
    }
    if (stuck) /* a run stuck in its device may return into it: it stays */
        return 1;
    free_sched(sc);
    return 0;
}

/* ---- one query */

static int check_request(const tdm_search_options *o, int nl, tdm_err *err)
{
    if (o->policy < TDM_POLICY_DEFAULT || o->policy > TDM_POLICY_DIRECT)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "search options: policy = %d is unknown",
                           o->policy);
    if (!(o->deadline_ms >= 0 && o->deadline_ms <= 3.6e6))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "search options: deadline_ms = %g is not in [0, 3600000]",
                           o->deadline_ms);
    if (o->device >= nl && o->policy != TDM_POLICY_DIRECT)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "device = %d: the engine has devices 0 .. %d",
                           o->device, nl - 1);
    return TDM_OK;
}

/* The call's answer from the finished job. */
static int finish(struct tdm_sched *sc, sjob *j, tdm_search_result **out, tdm_err *err)
{
    (void)sc;
    if (j->rc) {
        int rc = tdm_err_copy(err, &j->err);
        tdm_err_clear(&j->err);
        return rc;
    }
    tdm_search_result *r = j->res;
    if (r->status) {
        int rc = tdm_err_set(err, r->status, "%s", r->error ? r->error : "search failed");
        tdm_search_result_release(r);
        return rc;
    }
    r->policy = j->policy;
    r->load_mode = j->mode;
    r->queue_seconds = j->started - j->arrive;
    r->predicted_seconds = r->device >= 0 && r->device < sc->nl ? j->pred[r->device] : 0;
    r->handovers = j->handovers;
    if (j->as && r->steps > 0) { /* ran step by step (not whole in a batch) */
        r->migrations = j->migrations;
        r->first_device = j->first_dev >= 0 ? j->first_dev : r->device;
        r->carried_bytes = j->as->carried;
        r->launches = j->as->launches;
        r->bytes_up = j->as->bytes_up;
        r->bytes_down = j->as->bytes_down;
    }
    r->seconds = tdm_sched_now() - j->arrive;
    *out = r;
    return TDM_OK;
}

/* The lane whose device a direct run of items[0 .. n) takes (lock held):
 * the planned device's, else (that lane failed) the first live lane; -1
 * when none of them goes to a device (or its device has no lane), -2 when
 * no lane lives. *planned: the planned device's lane. */
static int direct_lane(const struct tdm_sched *sc, tdm_sbq *const *items, size_t n, int *planned)
{
    int dev = -1;
    for (size_t i = 0; i < n && dev < 0; i++)
        if (items[i]->prc == TDM_OK && items[i]->run)
            dev = items[i]->pl.dev;
    *planned = dev;
    if (dev < 0 || dev >= sc->nl)
        return -1;
    if (sc->lanes[dev].alive)
        return dev;
    for (int i = 0; i < sc->nl; i++)
        if (sc->lanes[i].alive)
            return i; /* as a pin to a failed lane: never the hung device again */
    return -2;
}

/* Arms w for a direct run of items on lane l, from t0 (lock held):
 * returns the injected watchdog fault, if any, and its bound in *bound. */
static int direct_arm(slane *l, tdm_watch *w, tdm_sbq *const *items, size_t n, double t0,
                      double *bound)
{
    uint32_t algs = 0;
    double pred = 0;
    for (size_t i = 0; i < n; i++) {
        if (items[i]->prc || !items[i]->run)
            continue;
        tdm_qfeat f;
        tdm_qfeat_from(&items[i]->q, items[i]->k, &f);
        int alg = tdm_sched_expected_alg(items[i]);
        algs |= 1u << (alg & 31);
        pred += tdm_model_predict(&l->model, alg, &f);
    }
    *bound = tdm_watchdog_arm(l, w, NULL, 0, items, n, algs, 1, pred, t0);
    return tdm_watchdog_fault(l);
}

int tdm_sched_run_direct(struct tdm_sched *sc, tdm_sbq *const *items, int policy, size_t n,
                         tdm_search_result **out, int *stuck, tdm_err *err)
{
    *stuck = 0;
    pthread_mutex_lock(&sc->mu);
    sc->st.submitted += n;
    sc->st.direct += n;
    pthread_mutex_unlock(&sc->mu);
    int rc;
    uint32_t again = 0; /* runs after an abandoned one */
    for (;;) {
        tdm_watch w;
        double bound = 0;
        int fault = 0, planned;
        pthread_mutex_lock(&sc->mu);
        int lane = direct_lane(sc, items, n, &planned);
        if (lane >= 0)
            fault = direct_arm(&sc->lanes[lane], &w, items, n, tdm_sched_now(), &bound);
        pthread_mutex_unlock(&sc->mu);
        if (lane == -2) {
            rc = again ? TDM_ERR_TIMEOUT /* its message in err */
                       : tdm_err_set(err, TDM_ERR_NO_DEVICE,
                                     "search: policy direct: every lane has failed");
            break;
        }
        if (fault)
            tdm_watchdog_fault_block(fault, bound > 0 ? bound : 1.0); /* a driver call stuck */
        int dev = lane >= 0 && lane != planned ? sc->s->dev[lane].index : -1;
        rc = tdm_search_run_prepared(sc->s, items, n, dev, out, err);
        if (lane < 0)
            break;
        struct tdm_astep *as;
        void (*fns[1])(void *);
        void *args[1];
        int nfn, live = 0;
        pthread_mutex_lock(&sc->mu);
        int abandoned = tdm_watchdog_returned(&w, &as, fns, args, &nfn);
        for (int i = 0; abandoned && !sc->stop && i < sc->nl; i++)
            live |= sc->lanes[i].alive; /* none once the handle closes */
        if (abandoned && live)
            sc->st.handovers += n;
        pthread_mutex_unlock(&sc->mu);
        if (!abandoned)
            break;
        /* it returned late: its answers dropped, as every abandoned run's */
        (*stuck)++;
        for (size_t i = 0; rc == TDM_OK && i < n; i++) {
            tdm_search_result_release(out[i]);
            out[i] = NULL;
        }
        rc = tdm_err_set(err, TDM_ERR_TIMEOUT, "%s", w.msg);
        if (!live)
            break;
        again++;
    }
    if (rc == TDM_OK && n == 1 && out[0]->status) {
        rc = tdm_err_set(err, out[0]->status, "%s", out[0]->error ? out[0]->error : "search failed");
        tdm_search_result_release(out[0]);
        out[0] = NULL;
    }
    for (size_t i = 0; rc == TDM_OK && i < n; i++) {
        out[i]->policy = policy;
        out[i]->handovers = again;
    }
    pthread_mutex_lock(&sc->mu);
    if (rc)
        sc->st.failed += n;
    else
        sc->st.answered += n;
    pthread_mutex_unlock(&sc->mu);
    return rc;
}

/* The error of a request no lane can take under its policy. */
static int no_lane(tdm_err *err, int policy)
{
    return tdm_err_set(err, TDM_ERR_NO_DEVICE,
                       "search: policy %s: no lane can run the query (the engine has no lane "
                       "of its kind, or every lane has failed)", tdm_policy_name(policy));
}

/* Counts j in and places it; returns with the lock held: the lane whose
 * slot the caller runs it in, or -1 (queued, or failed: j->done with
 * TDM_ERR_NO_DEVICE). */
static int place_counted(struct tdm_sched *sc, sjob *j, int may_run)
{
    pthread_mutex_lock(&sc->mu);
    sc->st.submitted += j->nq;
    sc->st.in_flight += j->nq;
    sc->st.stepped += j->as != NULL;
    tdm_sched_update_mode(sc);
    tdm_place_predict(sc, j);
    int lane = tdm_place(sc, j, j->arrive, may_run);
    if (lane == -2) {
        j->rc = no_lane(&j->err, j->policy);
        j->done = 1;
        sc->st.in_flight--;
        sc->st.failed++;
        return -1;
    }
    sc->st.direct += lane >= 0;
    return lane;
}

static int submit(struct tdm_sched *sc, sjob *j)
{
    int lane = place_counted(sc, j, 1); /* never under the watchdog (tdm_sched_search) */
    if (lane >= 0) {
        pthread_mutex_unlock(&sc->mu);
        sjob *one[1] = {j};
        tdm_lane_run(&sc->lanes[lane], j->slot, one, 1, 1); /* unwatched: never abandoned */
        pthread_mutex_lock(&sc->mu);
    }
    while (!j->done)
        pthread_cond_wait(&j->cv, &sc->mu);
    pthread_mutex_unlock(&sc->mu);
    return j->rc;
}

static void count_failed(struct tdm_sched *sc)
{
    pthread_mutex_lock(&sc->mu);
    sc->st.submitted++;
    sc->st.failed++;
    pthread_mutex_unlock(&sc->mu);
}

/* A query with nothing for a lane to do (the host path, an empty query):
 * TDM_OK where its policy and pin allow a live lane, as if it were placed
 * (*dev: that lane's device, -1 for the direct policy); else the error
 * tdm_place's -2 gives. */
static int host_allowed(struct tdm_sched *sc, sjob *j, int *dev, tdm_err *err)
{
    j->pin = j->o.device;
    *dev = -1;
    if (j->policy == TDM_POLICY_DIRECT)
        return TDM_OK;
    int ok[TDM_SCHED_MAX_LANES], l = 0;
    pthread_mutex_lock(&sc->mu);
    int any = tdm_place_lanes(sc, j, ok);
    while (any && !ok[l])
        l++;
    *dev = any ? sc->lanes[l].index : -1;
    pthread_mutex_unlock(&sc->mu);
    if (any)
        return TDM_OK;
    count_failed(sc);
    return no_lane(err, j->policy);
}

/* A host answer says the device of the lane its policy allowed (dev >= 0). */
static void host_device(tdm_search_result *r, int dev)
{
    if (r && dev >= 0 && r->variant == TDM_VARIANT_HOST)
        r->device = dev;
}

/* The job of the prepared query j->one, ready to place. */
static int job_ready(struct tdm_sched *sc, sjob *j, tdm_err *err)
{
    tdm_sbq *it = j->one;
    tdm_qfeat_from(&it->q, j->o.k, &j->f);
    j->alg = tdm_sched_expected_alg(it);
    j->pin = j->o.device;
    int rc = tdm_migrate_prepare(sc, j, err);
    if (rc) {
        count_failed(sc);
        return rc;
    }
    j->items = &j->one;
    j->deadline = j->arrive + (j->o.deadline_ms > 0 ? j->o.deadline_ms * 1e-3 : sc->deadline);
    j->where = -2;
    j->nq = 1;
    pthread_cond_init(&j->cv, NULL);
    return TDM_OK;
}

/* The answer of a placed job that is done. */
static int job_finish(struct tdm_sched *sc, sjob *j, tdm_search_result **out, tdm_err *err)
{
    pthread_cond_destroy(&j->cv);
    int rc = finish(sc, j, out, err);
    if (j->as) {
        tdm_astep_free(j->as);
        free(j->as);
    }
    return rc;
}

/* Places the prepared query j->one and waits for its answer. */
static int place_one(struct tdm_sched *sc, sjob *j, tdm_search_result **out, tdm_err *err)
{
    int rc = job_ready(sc, j, err);
    if (rc)
        return rc;
    submit(sc, j);
    return job_finish(sc, j, out, err);
}

static int call_start(tdm_sched *sc, const tdm_search_query *q, const tdm_search_options *opts,
                      int may_run, tdm_sched_call **out, tdm_err *err);

int tdm_sched_search(tdm_sched *sc, const tdm_search_query *q, const tdm_search_options *opts,
                     tdm_search_result **out, tdm_err *err)
{
    *out = NULL;
    if (tdm_watchdog_on(sc)) {
        /* on memory that a run the watchdog abandons may keep
         * (tdm_sched_end); run in this thread where tdm_place says */
        tdm_sched_call *c;
        int rc = call_start(sc, q, opts, 1, &c, err);
        return rc ? rc : tdm_sched_end(c, out, err);
    }
    sjob j;
    memset(&j, 0, sizeof j);
    j.arrive = tdm_sched_now();
    int rc = tdm_search_options_check(opts, &j.o, err);
    if (rc == TDM_OK)
        rc = check_request(&j.o, sc->nl, err);
    if (rc)
        return rc;
    j.policy = j.o.policy ? j.o.policy : sc->policy;
    /* prepared once, here: the scheduler reads it, a lane runs it */
    tdm_sbq it;
    j.one = &it;
    tdm_search_prepare(sc->s, q, &j.o, &it);
    j.o.algorithm = it.o.algorithm; /* a shard may turn AND-then-OR into OR */
    if (j.policy == TDM_POLICY_DIRECT || (it.prc == TDM_OK && !it.run)) {
        /* the direct policy, or nothing for a device to do */
        int stuck; /* never here: the watchdog is off */
        int dev;
        rc = host_allowed(sc, &j, &dev, err);
        if (rc == TDM_OK)
            rc = tdm_sched_run_direct(sc, &j.one, j.policy, 1, out, &stuck, err);
        host_device(*out, dev);
    } else if (it.prc) {
        rc = tdm_err_copy(err, &it.err);
        count_failed(sc);
    } else {
        rc = place_one(sc, &j, out, err);
    }
    tdm_sbq_free(&it);
    return rc;
}

/* ---- a query placed without waiting for it (tdm_sched_begin) */

struct tdm_sched_call {
    struct tdm_sched *sc;
    const tdm_search_query *q; /* the caller's, until tdm_sched_end: run again from it */
    tdm_search_options opts;
    sjob j;
    tdm_sbq it;
    int placed;             /* placed on a lane: wait for it */
    int stuck;              /* runs of it in this thread that the watchdog abandoned:
                               leave the scheduler through tdm_watchdog_leave */
    int rc;                 /* else the answer: rc, res, err */
    tdm_search_result *res;
    tdm_err err;
};

/* Places j on a lane; may_run: this (the caller's) thread runs it at
 * once where tdm_place says, watched as a lane's run. Returns 1 when the
 * watchdog abandoned that run (it returned late: j ended with
 * TDM_ERR_TIMEOUT, timed_out set). */
static int submit_call(struct tdm_sched *sc, sjob *j, int may_run)
{
    int lane = place_counted(sc, j, may_run);
    if (lane >= 0) {
        pthread_mutex_unlock(&sc->mu);
        sjob *one[1] = {j};
        return tdm_lane_run(&sc->lanes[lane], j->slot, one, 1, 1);
    }
    pthread_mutex_unlock(&sc->mu);
    return 0;
}

/* tdm_sched_begin; may_run: the caller's thread may run it (tdm_sched_search). */
static int call_start(tdm_sched *sc, const tdm_search_query *q, const tdm_search_options *opts,
                      int may_run, tdm_sched_call **out, tdm_err *err)
{
    *out = NULL;
    tdm_sched_call *c = calloc(1, sizeof *c);
    if (!c)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    c->sc = sc;
    c->q = q;
    if (opts)
        c->opts = *opts;
    sjob *j = &c->j;
    j->arrive = tdm_sched_now();
    int rc = tdm_search_options_check(opts, &j->o, &c->err);
    if (rc == TDM_OK)
        rc = check_request(&j->o, sc->nl, &c->err);
    *out = c;
    if ((c->rc = rc))
        return TDM_OK;
    j->policy = j->o.policy ? j->o.policy : sc->policy;
    j->one = &c->it;
    tdm_search_prepare(sc->s, q, &j->o, &c->it);
    j->o.algorithm = c->it.o.algorithm;
    if (j->policy == TDM_POLICY_DIRECT || (c->it.prc == TDM_OK && !c->it.run)) {
        int dev;
        c->rc = host_allowed(sc, j, &dev, &c->err);
        if (c->rc == TDM_OK)
            c->rc = tdm_sched_run_direct(sc, &j->one, j->policy, 1, &c->res, &c->stuck,
                                         &c->err);
        host_device(c->res, dev);
    } else if (c->it.prc) {
        c->rc = tdm_err_copy(&c->err, &c->it.err);
        count_failed(sc);
    } else if ((c->rc = job_ready(sc, j, &c->err)) == TDM_OK) {
        c->placed = 1;
        c->stuck = submit_call(sc, j, may_run);
    }
    return TDM_OK;
}

int tdm_sched_begin(tdm_sched *sc, const tdm_search_query *q, const tdm_search_options *opts,
                    tdm_sched_call **out, tdm_err *err)
{
    return call_start(sc, q, opts, 0, out, err);
}

static void call_free(void *arg)
{
    tdm_sched_call *c = arg;
    tdm_err_clear(&c->err);
    tdm_err_clear(&c->j.err);
    if (c->j.one)
        tdm_sbq_free(&c->it);
    free(c);
}

/* Waits for c's placed job; one the watchdog took from a stuck lane runs
 * again, freshly prepared, while a live lane is left (and the handle is
 * not closing): the old call goes to the stuck run, which frees it if it
 * returns (a stuck run of this thread's own returned already). Returns the
 * call to end. */
static tdm_sched_call *wait_placed(tdm_sched_call *c)
{
    struct tdm_sched *sc = c->sc;
    for (;;) {
        pthread_mutex_lock(&sc->mu);
        while (!c->j.done)
            pthread_cond_wait(&c->j.cv, &sc->mu);
        int live = 0;
        for (int i = 0; i < sc->nl; i++)
            live |= sc->lanes[i].alive; /* a pinned one too (tdm_place's fallback) */
        if (!c->j.timed_out || !live || sc->stop) {
            if (c->j.timed_out)
                sc->st.failed++; /* ended by the watchdog (not counted there) */
            pthread_mutex_unlock(&sc->mu);
            return c;
        }
        pthread_mutex_unlock(&sc->mu);
        tdm_sched_call *again;
        tdm_err e = {0};
        tdm_search_options o = c->opts;
        if (tdm_sched_begin(sc, c->q, c->opts.struct_size ? &o : NULL, &again, &e) != TDM_OK) {
            tdm_err_clear(&e);
            pthread_mutex_lock(&sc->mu);
            sc->st.failed++;
            pthread_mutex_unlock(&sc->mu);
            return c; /* out of memory: the timeout is the answer */
        }
        again->stuck += c->stuck;
        pthread_mutex_lock(&sc->mu);
        sc->st.submitted--; /* the same query, counted once */
        again->j.handovers = c->j.handovers + 1;
        int left_to_run = c->j.hung > 0;
        if (left_to_run) {
            c->j.orphan_fn = call_free;
            c->j.orphan_arg = c;
        }
        pthread_mutex_unlock(&sc->mu);
        if (!left_to_run) /* the stuck run returned meanwhile */
            call_free(c);
        c = again;
        if (!c->placed)
            return c;
    }
}

int tdm_sched_end(tdm_sched_call *c, tdm_search_result **out, tdm_err *err)
{
    *out = NULL;
    if (c->placed)
        c = wait_placed(c);
    struct tdm_sched *sc = c->sc;
    int rc = c->rc, stuck = c->stuck;
    if (c->placed) {
        rc = job_finish(sc, &c->j, out, err);
        pthread_mutex_lock(&sc->mu);
        int left = c->j.hung > 0;
        if (left) { /* a stuck run may still read it: freed when it returns */
            c->j.orphan_fn = call_free;
            c->j.orphan_arg = c;
        }
        pthread_mutex_unlock(&sc->mu);
        if (left)
            c = NULL;
    } else if (rc) {
        rc = tdm_err_copy(err, &c->err);
    } else {
        *out = c->res;
    }
    if (c) {
        tdm_err_clear(&c->err);
        if (c->j.one)
            tdm_sbq_free(&c->it);
        free(c);
    }
    if (stuck) /* the last touch of sc by a caller whose run was abandoned */
        tdm_watchdog_leave(sc, stuck);
    return rc;
}

/* ---- counters */

void tdm_sched_stats_get(tdm_sched *sc, tdm_sched_stats *out)
{
    tdm_sched_stats st;
    pthread_mutex_lock(&sc->mu);
    st = sc->st;
    st.struct_size = sizeof st;
    st.policy = sc->policy;
    st.load_mode = sc->mode;
    st.batch_window = sc->window;
    st.load_threshold = sc->threshold;
    st.nlanes = sc->nl;
    double err_sum = 0;
    uint64_t err_n = 0;
    for (int i = 0; i < sc->nl; i++) {
        const slane *l = &sc->lanes[i];
        tdm_lane_stats *ls = &st.lanes[i];
        *ls = l->st;
        ls->gpu = l->gpu;
        ls->queued = l->q.n;
        ls->model_n = l->model.observed;
        ls->slots = l->slots;
        if (l->active) /* the run going now counts to now */
            ls->active_seconds += tdm_sched_now() - l->active_t0;
        ls->pred_error = l->st.pred_n ? l->err_sum / (double)l->st.pred_n : 0;
        err_sum += l->err_sum;
        err_n += l->st.pred_n;
    }
    st.pred_error = err_n ? err_sum / (double)err_n : 0;
    st.pred_n = err_n;
    pthread_mutex_unlock(&sc->mu);
    size_t n = out->struct_size < sizeof st ? out->struct_size : sizeof st;
    memcpy(out, &st, n);
    out->struct_size = n;
}
