/* Griffin's intra-query migration (Liu et al. 2018; docs/SCHED.md): a
 * ranked AND runs step by step (drive/and_step.h) and after each step the
 * rest of the query may move to the lane the cost model now prefers,
 * carrying only the candidates and their score columns. */
#include <stdlib.h>
#include <string.h>

#include "plan/and_select.h"
#include "drive/and_step.h"
#include "sched_priv.h"

/* Move only when the other lane's finish (its wait, the carrying, the rest
 * there) is below this share of the rest where the query is: a prediction
 * is noisy, and a move costs a round trip through host memory. */
#define MARGIN 0.8
/* Carrying between host and a device, one way: a GPU behind PCIe, a CPU
 * device (host memory: a copy). Latency per copy, bandwidth. */
#define GPU_LAT_S 20e-6
#define GPU_GBS 12.0
#define CPU_LAT_S 5e-6
#define CPU_GBS 8.0

double tdm_migrate_cost(const struct tdm_sched *sc, int from, int to, double bytes)
{
    const slane *f = &sc->lanes[from], *t = &sc->lanes[to];
    /* down: the candidates and each column, a copy each (their count known) */
    double down = (f->gpu ? GPU_LAT_S : CPU_LAT_S) * 2 + bytes / ((f->gpu ? GPU_GBS : CPU_GBS) * 1e9);
    double up = (t->gpu ? GPU_LAT_S : CPU_LAT_S) * 2 + bytes / ((t->gpu ? GPU_GBS : CPU_GBS) * 1e9);
    return down + up;
}

int tdm_migrate_choose(const tdm_mig_in *in)
{
    int cur = in->cur;
    if (in->force) {
        for (int s = 1; s < in->nl; s++) {
            int i = (cur + s) % in->nl;
            if (in->ok[i])
                return i;
        }
        return cur;
    }
    double stay = in->rest[cur], bt = stay;
    int best = cur;
    for (int i = 0; i < in->nl; i++) {
        if (i == cur || !in->ok[i])
            continue;
        double t = in->wait[i] + in->move[i] + in->rest[i];
        if (t < bt) {
            bt = t;
            best = i;
        }
    }
    return best != cur && bt < MARGIN * stay ? best : cur;
}

/* Whether the rest of j may go to lane l: alive, never failed it, of the
 * policy's kind. */
static int lane_ok(const sjob *j, const slane *l)
{
    if (!l->alive || (j->tried & (1u << l->index)))
        return 0;
    if (j->policy == TDM_POLICY_CPU_ONLY)
        return !l->gpu;
    if (j->policy == TDM_POLICY_GPU_ONLY)
        return l->gpu;
    return 1;
}

/* Griffin: the rest of an AND moves to the CPU once the candidates are few
 * against the lists left, which needs lists of very different lengths; with
 * the longest under TDM_SEL_RATIO times the shortest, the AND kernel (block
 * selection, one launch chain) beats any sequence of steps, so auto runs it
 * whole. */
static int lengths_differ(const tdm_query *q)
{
    uint64_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < q->nterms; i++) {
        uint64_t df = q->terms[i].df;
        lo = df < lo ? df : lo;
        hi = df > hi ? df : hi;
    }
    return hi >= (lo ? lo : 1) * (uint64_t)TDM_SEL_RATIO;
}

/* A copy of the finished query q into *c (the steps take theirs over; the
 * prepared query keeps its own for a whole run). */
static int query_copy(const tdm_query *q, tdm_query *c, tdm_err *err)
{
    *c = *q;
    c->cap = q->nterms;
    c->terms = malloc((q->nterms ? q->nterms : 1) * sizeof *c->terms);
    if (!c->terms) {
        tdm_query_init(c);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    memcpy(c->terms, q->terms, q->nterms * sizeof *c->terms);
    return TDM_OK;
}

int tdm_migrate_prepare(struct tdm_sched *sc, sjob *j, tdm_err *err)
{
    const tdm_query *q = &j->one->q;
    int mig = j->o.migrate ? j->o.migrate : sc->migrate;
    if (mig == TDM_MIGRATE_OFF || (mig == TDM_MIGRATE_AUTO && j->policy != TDM_POLICY_HYBRID))
        return TDM_OK;
    if (!tdm_astep_applies(q, j->o.algorithm) || j->pin >= 0 || sc->nl < 2)
        return TDM_OK;
    if (mig == TDM_MIGRATE_AUTO) { /* Griffin's case: a GPU lane and a CPU lane */
        int kinds = 0;
        for (int i = 0; i < sc->nl; i++)
            kinds |= sc->lanes[i].alive ? 1 << sc->lanes[i].gpu : 0;
        if (kinds != 3)
            return TDM_OK; /* lanes of one kind: the AND kernel, whole */
        if (!lengths_differ(q))
            return TDM_OK; /* no step can move profitably: the AND kernel, whole */
    }
    tdm_astep *a = calloc(1, sizeof *a);
    if (!a)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    tdm_query c;
    int rc = query_copy(q, &c, err);
    if (rc == TDM_OK)
        rc = tdm_astep_open(sc->s, &c, &j->o, a, err);
    tdm_query_free(&c); /* empty when the steps took it over */
    if (rc) {
        tdm_astep_free(a);
        free(a);
        return rc;
    }
    j->as = a;
    j->mig = mig;
    j->first_dev = -1;
    return TDM_OK;
}

typedef struct decide_ctx {
    slane *l;
    sjob *j;
} decide_ctx;

/* After a step on lane dev (the query's own run, no lock held): where the
 * rest goes. Also leaves the rest's predictions in j->pred for the queue
 * it may join. */
static int decide(void *user, const tdm_astep *a, uint32_t done, uint32_t n, int dev)
{
    decide_ctx *c = user;
    struct tdm_sched *sc = c->l->sc;
    sjob *j = c->j;
    uint64_t len[TDM_SEARCH_MAX_TERMS + 1];
    size_t nl = 0;
    len[nl++] = n;
    for (uint32_t i = done; i < a->nt && nl < TDM_SEARCH_MAX_TERMS + 1; i++)
        len[nl++] = tdm_astep_rest_df(a, i);
    tdm_qfeat f;
    tdm_qfeat_from_lens(len, nl, a->k, &f);
    double bytes = (double)n * 4.0 * (1.0 + done);
    tdm_mig_in in = {.nl = sc->nl, .cur = dev, .force = j->mig == TDM_MIGRATE_FORCE};
    pthread_mutex_lock(&sc->mu);
    double now = tdm_sched_now();
    for (int i = 0; i < sc->nl; i++) {
        slane *l = &sc->lanes[i];
        in.ok[i] = lane_ok(j, l);
        in.rest[i] = tdm_model_predict(&l->model, TDM_ALGO_AND, &f);
        in.wait[i] = i == dev ? 0 : tdm_place_backlog(sc, l, now);
        in.move[i] = i == dev ? 0 : tdm_migrate_cost(sc, dev, i, bytes);
        j->pred[i] = in.rest[i] + in.move[i];
    }
    int to = tdm_migrate_choose(&in);
    pthread_mutex_unlock(&sc->mu);
    return to;
}

/* AND-then-OR after its AND stage ran step by step into *res: the AND's
 * top k when it matched k documents, else the OR's, run whole on lane l
 * (as the device path's gated OR pass does). */
static int and_then_or(slane *l, sjob *j, tdm_search_result **res, tdm_err *err)
{
    tdm_search_result *r = *res;
    tdm_astep *a = j->as;
    uint32_t steps = r->steps;
    if (r->n < j->o.k) {
        /* the prepared query again, as OR (planned for it: its plan was
           AND-then-OR's) */
        tdm_sbq *it = j->one;
        tdm_search_result *orr = NULL;
        tdm_splan pl = it->pl;
        int pb = it->pl_batched;
        it->o.algorithm = TDM_ALGO_OR;
        it->pl_batched = -1; /* not this run's: planned again */
        int rc = tdm_search_run_prepared(l->sc->s, &j->one, 1, l->index, &orr, err);
        it->o.algorithm = j->o.algorithm;
        it->pl = pl;
        it->pl_batched = pb;
        if (rc)
            return rc; /* *res stays the caller's to free */
        tdm_search_result_release(r);
        *res = r = orr;
        a->launches += r->launches;
        a->bytes_up += r->bytes_up;
        a->bytes_down += r->bytes_down;
    }
    r->algorithm = TDM_ALGO_AND_OR;
    r->steps = steps;
    return TDM_OK;
}

int tdm_migrate_run(slane *l, sjob *j, int *moved, tdm_search_result **res, tdm_err *err)
{
    decide_ctx c = {l, j};
    int rc = tdm_astep_run(l->sc->s, j->as, l->index, decide, &c, moved, res, err);
    if (rc == TDM_OK && *moved < 0 && j->o.algorithm == TDM_ALGO_AND_OR &&
        (rc = and_then_or(l, j, res, err))) {
        tdm_search_result_release(*res);
        *res = NULL;
    }
    return rc;
}

int tdm_migrate_move(struct tdm_sched *sc, sjob *j, int from, int to, double now)
{
    tdm_astep_commit(j->as);
    if (j->first_dev < 0)
        j->first_dev = from;
    j->migrations++;
    sc->st.migrations++;
    slane *t = &sc->lanes[to];
    if (t->alive && !(j->tried & (1u << to))) {
        /* the front of its queue: the query is older than what waits there */
        j->pref = to;
        tdm_squeue_push_front(&t->q, j, to, j->pred[to]);
        pthread_cond_broadcast(&t->cv);
        return 0;
    }
    /* the lane died since the decision: placed again like a new query
     * (tdm_place never picks a dead lane) */
    return tdm_place(sc, j, now, 0) == -2 ? -1 : 0;
}
