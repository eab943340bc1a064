/* Where a query runs (sched_priv.h): policies, the three queues of the
 * hybrid policy, what an idle lane takes next (its queue, the shared queue,
 * deadline promotion, stealing) and batches under load. Ding 2009, section
 * "Query Stealing and Scheduling"; Wu 2010 for the load modes. */
#include "sched_priv.h"

#include <math.h>
#include <string.h>

#define SUITED 2.0       /* a query is GPU- (CPU-) suited when the other kind takes 2x as long */
#define PROMOTE 0.5      /* promoted once half the time to its deadline has passed */
#define WU_BLOCKS 128.0  /* Wu's B: batch cost cap = compute units x work-group x B postings */
#define OVERDUE_S 1e-6  /* work left of a run past its predicted end: an idle lane wins the tie */

static double qpred(const sjob *j, int where)
{
    return where >= 0 ? j->pred[where] : j->pred[j->pref];
}

void tdm_place_predict(struct tdm_sched *sc, sjob *j)
{
    for (int i = 0; i < sc->nl; i++)
        j->pred[i] = tdm_model_predict(&sc->lanes[i].model, j->alg, &j->f);
}

int tdm_lane_free_slot(const slane *l)
{
    for (int k = 0; l->running < l->slots && k < l->slots; k++)
        if (!l->used[k])
            return k;
    return -1;
}

void tdm_lane_claim(slane *l, int k, double end)
{
    l->used[k] = 1;
    l->run_end[k] = end;
    l->running++;
}

void tdm_lane_release(slane *l, int k)
{
    l->used[k] = 0;
    l->running--;
}

double tdm_lane_rest(const slane *l, double now)
{
    if (l->running < l->slots)
        return 0;
    double first = INFINITY;
    for (int k = 0; k < l->slots; k++)
        if (l->used[k] && l->run_end[k] < first)
            first = l->run_end[k];
    return first > now ? first - now : 0;
}

double tdm_place_backlog(const struct tdm_sched *sc, const slane *l, double now)
{
    (void)sc;
    /* the queue drains through every slot */
    return tdm_lane_rest(l, now) + l->q.backlog / (l->slots > 0 ? l->slots : 1);
}

/* Whether lane l may run j: alive, not failed it before, and (strict) the
 * policy's kind and the request's pin. */
static int allowed(const sjob *j, const slane *l, int strict)
{
    if (!l->alive || (j->tried & (1u << l->index)))
        return 0;
    if (!strict)
        return 1;
    if (j->pin >= 0)
        return l->index == j->pin;
    if (j->policy == TDM_POLICY_CPU_ONLY)
        return !l->gpu;
    if (j->policy == TDM_POLICY_GPU_ONLY)
        return l->gpu;
    return 1;
}

/* The allowed lane (of kind `gpu`, or any when gpu < 0) finishing j first;
 * by prediction alone for the best-device policy. -1 if none. */
static int earliest(const struct tdm_sched *sc, const sjob *j, int strict, int gpu, double now)
{
    int best = -1;
    double bt = INFINITY;
    for (int i = 0; i < sc->nl; i++) {
        const slane *l = &sc->lanes[i];
        if (!allowed(j, l, strict) || (gpu >= 0 && l->gpu != gpu))
            continue;
        double t = j->pred[i] + (j->policy == TDM_POLICY_BEST ? 0 : tdm_place_backlog(sc, l, now));
        if (t < bt) {
            bt = t;
            best = i;
        }
    }
    return best;
}

static void wake_all(struct tdm_sched *sc)
{
    for (int i = 0; i < sc->nl; i++)
        if (sc->lanes[i].alive)
            pthread_cond_signal(&sc->lanes[i].cv);
}

/* The hybrid policy's queue for j: GPU-suited, CPU-suited or either. */
static int classify(const struct tdm_sched *sc, const sjob *j, int strict, double now)
{
    int g = earliest(sc, j, strict, 1, now), c = earliest(sc, j, strict, 0, now);
    if (g < 0 || c < 0)
        return CLASS_EITHER; /* one kind of lane: one shared queue */
    double r = j->pred[c] / j->pred[g];
    return r >= SUITED ? CLASS_GPU : r <= 1.0 / SUITED ? CLASS_CPU : CLASS_EITHER;
}

/* Whether the engine has a lane of the kind j's policy (or pin) asks for,
 * dead or alive. */
static int kind_exists(const struct tdm_sched *sc, const sjob *j)
{
    for (int i = 0; i < sc->nl; i++) {
        const slane *l = &sc->lanes[i];
        if (j->pin >= 0 ? l->index == j->pin
            : j->policy == TDM_POLICY_CPU_ONLY ? !l->gpu
            : j->policy == TDM_POLICY_GPU_ONLY ? l->gpu : 1)
            return 1;
    }
    return 0;
}

int tdm_place_lanes(const struct tdm_sched *sc, const sjob *j, int *ok)
{
    int any = 0;
    for (int strict = 1; strict >= 0 && !any; strict--) {
        for (int i = 0; i < sc->nl; i++)
            any += ok[i] = allowed(j, &sc->lanes[i], strict);
        if (!any && !kind_exists(sc, j))
            break; /* as tdm_place: no fallback to another kind */
    }
    return any;
}

int tdm_place(struct tdm_sched *sc, sjob *j, double now, int caller_may_run)
{
    int strict = j->tried == 0;
    int b = earliest(sc, j, strict, -1, now);
    if (b < 0 && strict && kind_exists(sc, j))
        b = earliest(sc, j, strict = 0, -1, now); /* the policy's lanes have all failed */
    if (b < 0)
        return -2;
    slane *l = &sc->lanes[b];
    j->pref = b;
    int k = tdm_lane_free_slot(l);
    if (caller_may_run && k >= 0 && l->q.n == 0 && (!l->batch || sc->mode == TDM_LOAD_SINGLE)) {
        tdm_lane_claim(l, k, now + j->pred[b]);
        j->slot = k;
        return b;
    }
    j->cls = j->policy == TDM_POLICY_HYBRID && j->pin < 0 ? classify(sc, j, strict, now)
                                                           : CLASS_EITHER;
    int where = b;
    if (j->policy == TDM_POLICY_HYBRID && j->pin < 0) {
        where = j->cls == CLASS_GPU ? earliest(sc, j, strict, 1, now)
              : j->cls == CLASS_CPU ? earliest(sc, j, strict, 0, now) : -1;
        if (where >= 0)
            j->pref = where;
    }
    if (j->handovers && where >= 0) /* older than what waits there */
        tdm_squeue_push_front(tdm_squeue_of(sc, where), j, where, qpred(j, where));
    else
        tdm_squeue_push(tdm_squeue_of(sc, where), j, where, qpred(j, where));
    wake_all(sc);
    return -1;
}

static int urgent(const struct tdm_sched *sc, const sjob *j, double now)
{
    (void)sc;
    return now - j->arrive >= PROMOTE * (j->deadline - j->arrive);
}

static sjob *take(struct tdm_sched *sc, sjob *j)
{
    tdm_squeue_remove(tdm_squeue_of(sc, j->where), j, qpred(j, j->where));
    return j;
}

/* Whether `thief` may take j from the queue of lane v, and gains by it:
 * it would start now and finish before v could. */
static int worth_stealing(const sjob *j, const slane *v, const slane *thief, double now)
{
    if (j->pin >= 0 || j->policy == TDM_POLICY_BEST || !allowed(j, thief, 0))
        return 0;
    if (j->migrations) /* the rest of a query moved here by the model (migrate.c) */
        return 0;
    if (!allowed(j, thief, 1) && v->alive)
        return 0;
    return j->pred[thief->index] < tdm_lane_rest(v, now) + j->pred[v->index];
}

/* One job for lane l, in Ding's order: an urgent shared job that prefers l
 * (promotion), l's own queue, the shared queue, else a steal. */
static sjob *next_job(struct tdm_sched *sc, slane *l, double now)
{
    sjob *own = l->q.head;
    for (sjob *j = sc->either.head; j; j = j->next)
        if (j->pref == l->index && urgent(sc, j, now) && allowed(j, l, 0) &&
            (!own || own->arrive > j->arrive)) {
            sc->st.promoted++;
            return take(sc, j);
        }
    if (own)
        return take(sc, own);
    for (sjob *j = sc->either.head; j; j = j->next)
        if (allowed(j, l, 0))
            return take(sc, j);
    sjob *vj = NULL;
    for (int i = 0; i < sc->nl; i++) {
        slane *v = &sc->lanes[i];
        if (v == l || !v->q.head || !worth_stealing(v->q.head, v, l, now))
            continue;
        if (!vj || v->q.head->arrive < vj->arrive)
            vj = v->q.head;
    }
    if (!vj)
        return NULL;
    l->st.stolen++;
    sc->st.stolen++;
    return take(sc, vj);
}

int tdm_place_pick(struct tdm_sched *sc, slane *l, sjob **jobs, int max, double now)
{
    if (!l->alive || max <= 0)
        return 0;
    int n = 0;
    int batching = l->batch && sc->mode == TDM_LOAD_BATCH;
    const tdm_device_info *info = &sc->s->dev[l->index].d->info;
    double cap = (double)(info->compute_units ? info->compute_units : 1) *
                 (double)sc->s->dev[l->index].d->wg_size * WU_BLOCKS;
    double cost = 0;
    while (n < max) {
        sjob *j = next_job(sc, l, now);
        if (!j)
            break;
        jobs[n++] = j;
        cost += (double)j->f.los;
        if (!batching || cost >= cap)
            break;
    }
    return n;
}

/* Whether lanes a and b are of one kind on one model of device (platform,
 * name, driver, compute units). */
static int twins(const struct tdm_sched *sc, int a, int b)
{
    const tdm_device_info *x = &sc->s->dev[sc->lanes[a].index].d->info,
                          *y = &sc->s->dev[sc->lanes[b].index].d->info;
    return sc->lanes[a].gpu == sc->lanes[b].gpu && x->compute_units == y->compute_units &&
           strcmp(x->platform, y->platform) == 0 && strcmp(x->name, y->name) == 0 &&
           strcmp(x->driver_version, y->driver_version) == 0;
}

void tdm_place_twins(const struct tdm_sched *sc, int *grp)
{
    for (int i = 0; i < sc->nl; i++) {
        grp[i] = i;
        for (int j = 0; j < i && grp[i] == i; j++)
            if (twins(sc, i, j))
                grp[i] = grp[j];
    }
}

void tdm_place_predict_twins(const struct tdm_sched *sc, const int *grp, int alg,
                             const tdm_qfeat *f, double *p)
{
    double sum[TDM_SCHED_MAX_LANES] = {0};
    int size[TDM_SCHED_MAX_LANES] = {0};
    for (int i = 0; i < sc->nl; i++) {
        p[i] = tdm_model_predict(&sc->lanes[i].model, alg, f);
        sum[grp[i]] += p[i];
        size[grp[i]]++;
    }
    for (int i = 0; i < sc->nl; i++)
        if (size[grp[i]] > 1)
            p[i] = sum[grp[i]] / size[grp[i]];
}

double tdm_place_work_left(const slane *l, double now)
{
    double w = l->q.backlog;
    for (int k = 0; k < l->slots; k++) /* a run past its predicted end still holds its device */
        if (l->used[k])
            w += l->run_end[k] > now ? l->run_end[k] - now : OVERDUE_S;
    return w / (l->slots > 0 ? l->slots : 1);
}

void tdm_place_on(struct tdm_sched *sc, sjob *j, int lane)
{
    j->pref = lane;
    j->cls = CLASS_EITHER;
    tdm_squeue_push(&sc->lanes[lane].q, j, lane, j->pred[lane]);
    wake_all(sc);
}
