/* Batches of queries on the devices (search.h, tdm_search_dev_batches):
 * the runnable queries of a call grouped by what their launches must share
 * (device, algorithm, k, scoring and its constants), each group of two or
 * more run as device batches (search_batch_dev.c), the others alone through
 * the single-query path (tdm_search_dev_run), which is also what AND-then-OR,
 * pruning with device-computed bounds and k above BATCH_MAX_K take. */
#include <stdlib.h>
#include <string.h>

#include "search.h"

/* Postings and queries of one device batch at most (device memory: eight
 * bytes a decoded posting). */
#define BATCH_MAX_POSTINGS (1ull << 26)
#define BATCH_MAX_QUERIES 8192u
/* Above this k queries run alone: on the H200 (1M documents, terabyte05)
 * MaxScore at k = 1,000 answered 2,852 lone queries/s and 1,599/s in
 * batches of 512 (the lone path's select stages and shared-threshold seed
 * beat the batch's few long ranges per query); at k = 10 batches won (12,314
 * against 3,539). */
#define BATCH_MAX_K 128u

/* Errors that end the whole batch (the others belong to one query). */
static int fatal(int rc)
{
    return rc == TDM_ERR_NOMEM || rc == TDM_ERR_OPENCL || rc == TDM_ERR_DEVICE_MEMORY ||
           rc == TDM_ERR_NO_DEVICE || rc == TDM_ERR_BUILD || rc == TDM_ERR_INTERNAL;
}

static int run_alone(const struct tdm_search *s, tdm_sbq *it, tdm_err *err)
{
    int rc = tdm_search_dev_run(&s->dev[it->pl.dev], &it->p, s->ndocs, &it->pl, it->salg, it->k,
                                &it->so, &it->err);
    it->batch = 1;
    if (rc && fatal(rc))
        return tdm_err_copy(err, &it->err);
    it->rc = rc;
    return TDM_OK;
}

static int batchable(const tdm_sbq *it)
{
    if (it->salg == TDM_SALG_AND_OR || it->k > BATCH_MAX_K)
        return 0;
    return !it->p.device_bounds || it->salg == TDM_SALG_OR || it->salg == TDM_SALG_AND;
}

static int same_launches(const tdm_sbq *a, const tdm_sbq *b)
{
    return a->pl.dev == b->pl.dev && a->salg == b->salg && a->k == b->k &&
           a->p.kind == b->p.kind && memcmp(&a->p.c0, &b->p.c0, sizeof a->p.c0) == 0 &&
           memcmp(&a->p.c1, &b->p.c1, sizeof a->p.c1) == 0;
}

/* Runs group g[0..n) in device batches of bounded size. */
static int run_group(const struct tdm_search *s, tdm_sbq **g, size_t n, tdm_err *err)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        uint64_t post = 0;
        while (j < n && j - i < BATCH_MAX_QUERIES &&
               (j == i || post + g[j]->p.npost <= BATCH_MAX_POSTINGS))
            post += g[j++]->p.npost;
        if (j - i == 1) {
            int rc = run_alone(s, g[i], err);
            if (rc)
                return rc;
            i = j;
            continue;
        }
        tdm_err e = {0};
        int rc = tdm_search_dev_batch(&s->dev[g[i]->pl.dev], s->ndocs, g + i, (uint32_t)(j - i),
                                      g[i]->salg, g[i]->k, &e);
        /* a list cache too small for the batch's lists together: each alone */
        int cache_full = rc == TDM_ERR_DEVICE_MEMORY && s->dev[g[i]->pl.dev].res.cache;
        if (rc && fatal(rc) && !cache_full) {
            tdm_err_copy(err, &e);
            tdm_err_clear(&e);
            return rc;
        }
        tdm_err_clear(&e);
        /* a damaged list: each query alone says whose */
        for (size_t q = i; rc && q < j; q++) {
            int r2 = run_alone(s, g[q], err);
            if (r2)
                return r2;
        }
        i = j;
    }
    return TDM_OK;
}

int tdm_search_dev_batches(const struct tdm_search *s, tdm_sbq *items, size_t n, tdm_err *err)
{
    tdm_sbq **g = malloc((n ? n : 1) * sizeof *g);
    char *done = calloc(n ? n : 1, 1);
    int rc = g && done ? TDM_OK : tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (size_t i = 0; rc == TDM_OK && i < n; i++) {
        tdm_sbq *it = &items[i];
        if (done[i] || !it->run || it->rc)
            continue;
        if (!batchable(it)) {
            rc = run_alone(s, it, err);
            continue;
        }
        size_t m = 0;
        for (size_t j = i; j < n; j++)
            if (!done[j] && items[j].run && !items[j].rc && batchable(&items[j]) &&
                same_launches(it, &items[j])) {
                g[m++] = &items[j];
                done[j] = 1;
            }
        rc = run_group(s, g, m, err);
    }
    free(g);
    free(done);
    return rc;
}
