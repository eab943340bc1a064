/* A batch call's queries that run alone (search_alone.h).
 *
 * Why several at once: a query alone is, on a GPU, mostly host time (its
 * uploads and launches enqueued, the blocking download waited for, the
 * checks) around a short device run; one after the other, the device idles
 * through each query's host part (H200: MaxScore k 1,000 in batches reached
 * 0.72x PISA's 16 threads, one query alone 9x PISA's one thread).
 *
 * Why it is safe: the single path already runs on several threads at once
 * on one device (a lane's slots, TANDEM_LANE_SLOTS): each run takes its own
 * scratch from the device's locked pool, borrows its kernels from the
 * device's locked kernel pool (clSetKernelArg is the one OpenCL call that
 * is not thread-safe on a shared kernel: OpenCL 3.0, "Shared Objects and
 * Thread Safety"), and enqueues on the device's in-order latency queue,
 * which OpenCL lets several threads use (since 1.1); a run waits only for
 * its own commands' ends (its blocking download, in order after its own
 * kernels; its markers' events), never clFinish, so another thread's
 * commands interleaved on the queue delay it but never change what it
 * reads. PoCL's basic driver is the exception (runtime/serial.c): there a
 * batch call holds the device's serial lock and its runs take one thread. */
#include "search_alone.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/workers.h"
#include "runtime/tune_table.h"
#include "search_testing.h"

int tdm_search_fatal(int rc)
{
    return tdm_err_reach(rc) != TDM_REACH_REQUEST;
}

/* tdm_search_alone_fail_force: 0, or the terms of the queries whose runs
 * fail, and with which code. */
static uint32_t fail_nterms;
static int fail_code;

void tdm_search_alone_fail_force(uint32_t nterms, int code)
{
    __atomic_store_n(&fail_code, code, __ATOMIC_RELAXED);
    __atomic_store_n(&fail_nterms, nterms, __ATOMIC_RELEASE);
}

static int forced_fail(const tdm_sbq *it, tdm_err *err)
{
    uint32_t n = __atomic_load_n(&fail_nterms, __ATOMIC_ACQUIRE);
    if (!n || it->p.nt != n)
        return TDM_OK;
    return tdm_err_set(err, __atomic_load_n(&fail_code, __ATOMIC_RELAXED),
                       "injected fault: a query of %u terms run alone (test hook)", n);
}

int tdm_search_alone_run(const struct tdm_search *s, tdm_sbq *it, int salg, tdm_err *err)
{
    /* the block bounds where the preparation left them, unless the device
       makes them (only pruning reads them; made already where the run was
       planned alone: search_run.c) */
    int rc = forced_fail(it, &it->err);
    if (rc == TDM_OK && tdm_search_reads_blocks(&it->p, salg) &&
        it->pl.bounds != TDM_SBOUNDS_STORED)
        rc = tdm_sprep_bounds_fill(&it->p, &it->err);
    if (rc == TDM_OK)
        rc = tdm_search_dev_run(&s->dev[it->pl.dev], &it->p, s->ndocs, &it->pl, salg, it->k,
                                &it->so, &it->err);
    it->batch = 1;
    if (rc && tdm_search_fatal(rc))
        return tdm_err_copy(err, &it->err);
    it->rc = rc;
    return TDM_OK;
}

unsigned tdm_search_alone_threads(const tdm_sdev *sd)
{
    /* one where the driver takes one thread at a time, whatever the
       setting (PoCL basic's lock is the call's thread's) */
    if (tdm_search_dev_one_thread(sd->d))
        return 1;
    uint32_t t = tdm_settings_tuning(sd->d->settings)->batch_alone_threads;
    if (!t)
        t = tdm_tune_row_of(&sd->d->info)->alone_threads;
    return t ? t : 1;
}

/* One device's queries of a call, run at once by a few threads. */
typedef struct alone_work {
    const struct tdm_search *s;
    tdm_sbq **items;
    size_t *pos;        /* each one's place among the call's items */
    atomic_int stop;    /* an error ended the call: start no more */
    pthread_mutex_t mu; /* bad, rc, err */
    size_t bad;         /* the place of the call-ending error kept, or SIZE_MAX */
    int rc;
    tdm_err *err;
} alone_work;

static void alone_one(void *ctx, size_t i, unsigned worker)
{
    (void)worker;
    alone_work *w = ctx;
    if (atomic_load_explicit(&w->stop, memory_order_acquire))
        return;
    tdm_err e = {0};
    int rc = tdm_search_alone_run(w->s, w->items[i], w->items[i]->salg, &e);
    if (rc) {
        atomic_store_explicit(&w->stop, 1, memory_order_release);
        pthread_mutex_lock(&w->mu);
        if (w->pos[i] < w->bad) { /* the first in the call's order among those that ran */
            if (w->rc)
                tdm_err_clear(w->err);
            w->bad = w->pos[i];
            w->rc = rc;
            tdm_err_copy(w->err, &e);
        }
        pthread_mutex_unlock(&w->mu);
    }
    tdm_err_clear(&e);
}

int tdm_search_alone_all(const struct tdm_search *s, tdm_sbq *const *items, size_t n,
                         tdm_err *err)
{
    if (n <= 1) /* a single query's call: no lists to make */
        return n ? tdm_search_alone_run(s, items[0], items[0]->salg, err) : TDM_OK;
    tdm_sbq **mine = malloc((n ? n : 1) * sizeof *mine);
    size_t *pos = malloc((n ? n : 1) * sizeof *pos);
    int rc = mine && pos ? TDM_OK : tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    /* a device at a time, each within its own bound (a call's queries are
       mostly one device's: a lane's) */
    for (int d = 0; rc == TDM_OK && d < s->ndev; d++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (items[i]->pl.dev == d) {
                pos[m] = i;
                mine[m++] = items[i];
            }
        if (!m)
            continue;
        alone_work w = {.s = s, .items = mine, .pos = pos, .bad = SIZE_MAX, .err = err};
        atomic_init(&w.stop, 0);
        pthread_mutex_init(&w.mu, NULL);
        tdm_pool_for(tdm_search_alone_threads(&s->dev[d]), m, alone_one, &w);
        pthread_mutex_destroy(&w.mu);
        rc = w.rc;
    }
    free(mine);
    free(pos);
    return rc;
}
