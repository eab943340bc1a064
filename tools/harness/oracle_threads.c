/* The oracle on several threads (oracle_threads.h). */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "harness/oracle_threads.h"
#include "tandem.h"

typedef struct worker {
    const tdm_oracle_pass *p;
    unsigned id;
    tdm_hit *hits; /* [k] */
    tdm_err err;
    int rc;
} worker;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int one(worker *w, tdm_oracle *o, size_t q, int report)
{
    const tdm_oracle_pass *p = w->p;
    size_t n = 0;
    uint64_t matched = 0;
    double t0 = now();
    int rc = tdm_oracle_search(o, &p->q[q], &p->req, w->hits, &n, &matched, &w->err);
    double t1 = now();
    if (rc == TDM_OK && report)
        p->each(p->ctx, q, w->hits, n, matched, t1 - t0);
    return rc;
}

static void *work(void *arg)
{
    worker *w = arg;
    const tdm_oracle_pass *p = w->p;
    tdm_oracle *o = NULL;
    w->rc = tdm_oracle_open(p->r, &o, &w->err);
    size_t step = p->threads, done = 0, q0 = p->first + w->id;
    for (size_t q = q0; w->rc == TDM_OK && q < p->nq && done < p->warmup; q += step, done++)
        w->rc = one(w, o, q, 0);
    for (size_t q = q0; w->rc == TDM_OK && q < p->nq; q += step)
        w->rc = one(w, o, q, 1);
    tdm_oracle_close(o);
    return NULL;
}

int tdm_oracle_run_threads(const tdm_oracle_pass *p, tdm_err *err)
{
    unsigned nt = p->threads ? p->threads : 1;
    tdm_oracle_pass pp = *p;
    pp.threads = nt;
    worker *w = calloc(nt, sizeof *w);
    pthread_t *th = calloc(nt, sizeof *th);
    int rc = w && th ? TDM_OK
                     : tdm_err_set(err, TDM_ERR_NOMEM, "oracle: out of memory for %u threads", nt);
    unsigned started = 0;
    for (unsigned t = 0; rc == TDM_OK && t < nt; t++) {
        w[t] = (worker){.p = &pp, .id = t,
                        .hits = malloc((p->req.k ? p->req.k : 1) * sizeof(tdm_hit))};
        if (!w[t].hits || pthread_create(&th[t], NULL, work, &w[t]) != 0) {
            free(w[t].hits);
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "oracle: cannot start thread %u of %u", t + 1,
                             nt);
            break;
        }
        started++;
    }
    for (unsigned t = 0; t < started; t++) {
        pthread_join(th[t], NULL);
        if (w[t].rc != TDM_OK && rc == TDM_OK)
            rc = tdm_err_set(err, w[t].rc, "%s", tdm_err_msg(&w[t].err));
        free(w[t].hits);
        tdm_err_clear(&w[t].err);
    }
    free(w);
    free(th);
    return rc;
}
