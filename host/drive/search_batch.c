/* Batches of queries on the devices (drive/search.h, tdm_search_dev_batches):
 * the runnable queries of a call grouped by what their launches must share
 * (device, algorithm, k, scoring and its constants), each group of two or
 * more run as device batches (search_batch_dev.c), the others alone through
 * the single-query path (tdm_search_dev_run), which is also what OR, WAND,
 * BMW and MaxScore with k above the tuning table's batch_max_k take (the
 * plan's `alone`), and OR queries of the row's or_alone_terms or more; those
 * run together at the end, several at once (search_alone.c). Ranked AND batches at any
 * k (Wu's mapping: k sizes only the merge); AND-then-OR runs its AND pass
 * as an AND batch and then, for the queries that found fewer than k
 * documents, an OR pass (batched within batch_max_k), which is what the
 * single path returns for them; pruning with device-computed bounds
 * batches with the bounds computed for the whole batch on the device. */
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "search_alone.h"
#include "search_batch_dev.h"
#include "runtime/serial.h"
#include "runtime/tune_table.h"

/* Decoded postings of one device batch at most on device d (8 bytes each,
 * docids and frequencies; a compressed batch decodes none, its cursors'
 * words are bounded instead: tdm_search_zr_words, batch_end): 2^26 on a
 * CPU, whose batches are compressed; on a GPU a quarter of its memory and
 * its largest allocation's worth of docids, within 32-bit offsets. Cut at
 * 2^26, the 10M collection's batches of 512 terabyte05 queries (4M
 * postings a query) ran as ~32 batches of 16: H200, MaxScore k10, 2,116
 * queries/s, while ranked AND, whose 512 ran as one, answered 8,901. */
static uint64_t max_postings(const tdm_device *d)
{
    uint64_t m = TDM_TUNE_BATCH_POSTINGS;
    if (d->info.type == TDM_DEVICE_GPU) {
        uint64_t mem = d->info.global_mem_bytes / TDM_TUNE_BATCH_POSTINGS_GPU_MEM_DIV,
                 one = d->info.max_alloc_bytes / 4; /* a docid's bytes */
        uint64_t g = mem < one ? mem : one;
        g = g < UINT32_MAX ? g : UINT32_MAX;
        m = g > m ? g : m;
    }
    return m;
}

/* Whether item it has device work in this run: not an error, not empty,
 * not answered on the host (a plan made again for its lane's device may
 * say host: search_run.c answers it there). */
static int on_device(const tdm_sbq *it)
{
    return it->run && !it->rc && !it->pl.host;
}

/* The terms from which an OR query runs alone on its device, 0 never:
 * TANDEM_BATCH_OR_ALONE_TERMS, else the row's (tune_table.h says why). */
static uint32_t or_alone_terms(const tdm_sdev *sd)
{
    uint32_t t = tdm_settings_tuning(sd->d->settings)->batch_or_alone_terms;
    return t ? t : tdm_tune_row_of(&sd->d->info)->or_alone_terms;
}

static int batchable(const struct tdm_search *s, const tdm_sbq *it)
{
    if (it->pl.alone) /* the plan's (k above the row's batch_max_k) */
        return 0;
    uint32_t t = it->salg == TDM_SALG_OR ? or_alone_terms(&s->dev[it->pl.dev]) : 0;
    return !t || it->p.nt < t; /* a long OR query: its own ranges and merge */
}

static int same_launches(const tdm_sbq *a, const tdm_sbq *b)
{
    return a->pl.dev == b->pl.dev && a->salg == b->salg && a->k == b->k &&
           a->p.kind == b->p.kind && a->p.device_bounds == b->p.device_bounds &&
           memcmp(&a->p.c0, &b->p.c0, sizeof a->p.c0) == 0 &&
           memcmp(&a->p.c1, &b->p.c1, sizeof a->p.c1) == 0;
}

/* Heap slots (8 bytes each) of one device batch at most on device d: a
 * TDM_TUNE_BATCH_HEAP_MEM_DIV share of its memory, within 32-bit offsets. */
static uint64_t max_heap(const tdm_device *d)
{
    uint64_t m = d->info.global_mem_bytes / 8 / TDM_TUNE_BATCH_HEAP_MEM_DIV;
    return m < UINT32_MAX ? m : UINT32_MAX;
}

/* Where the device batch of group g[0..n) that starts at i ends: at most
 * TDM_TUNE_BATCH_MAX_QUERIES queries, their heaps within max_heap, and
 * max_postings decoded postings, or, when zr (every query compressed:
 * tdm_search_batch_zr), their cursors of a range each within the device's
 * budget, tdm_search_zr_words. */
static size_t batch_end(const struct tdm_search *s, tdm_sbq **g, size_t n, size_t i, int zr)
{
    size_t j = i;
    const tdm_device *d = s->dev[g[i]->pl.dev].d;
    uint64_t post = 0, terms = 0, zmax = tdm_search_zr_words(d), pmax = max_postings(d);
    uint64_t hmax = max_heap(d);
    uint32_t bw = 0;
    while (j < n && j - i < TDM_TUNE_BATCH_MAX_QUERIES) {
        const tdm_sprep *p = &g[j]->p;
        uint32_t b = p->max_block > bw ? p->max_block : bw;
        int fits = zr ? (terms + p->nt) * (TDM_ZR_CW + 2ull * b) <= zmax
                      : post + p->npost <= pmax;
        if (j > i && (!fits || tdm_search_batch_heap_keys(d, s->ndocs, g[i]->k, j - i + 1) > hmax))
            break;
        post += p->npost;
        terms += p->nt;
        bw = b;
        j++;
    }
    return j;
}

/* Runs group g[0..n) in device batches of bounded size with algorithm
 * `salg`; a batch of one runs alone with `salg_alone`, and the queries of a
 * batch that failed on a damaged list rerun alone with their own algorithm
 * (each alone says whose list it is). */
static int run_group(const struct tdm_search *s, tdm_sbq **g, size_t n, int salg, int salg_alone,
                     tdm_err *err)
{
    int zr = 1;
    for (size_t q = 0; q < n; q++)
        zr = zr && tdm_search_batch_zr(g[q], salg);
    size_t i = 0;
    while (i < n) {
        size_t j = batch_end(s, g, n, i, zr);
        if (j - i == 1) {
            int rc = tdm_search_alone_run(s, g[i], salg_alone, err);
            if (rc)
                return rc;
            i = j;
            continue;
        }
        tdm_err e = {0};
        int rc = tdm_search_dev_batch(&s->dev[g[i]->pl.dev], s->ndocs, g + i, (uint32_t)(j - i),
                                      salg, g[i]->k, &e);
        /* a list cache too small for the batch's lists together: each alone */
        int cache_full = rc == TDM_ERR_DEVICE_MEMORY && s->dev[g[i]->pl.dev].res.cache;
        if (rc && tdm_search_fatal(rc) && !cache_full) {
            tdm_err_copy(err, &e);
            tdm_err_clear(&e);
            return rc;
        }
        tdm_err_clear(&e);
        for (size_t q = i; rc && q < j; q++) {
            int r2 = tdm_search_alone_run(s, g[q], g[q]->salg, err);
            if (r2)
                return r2;
        }
        i = j;
    }
    return TDM_OK;
}

/* AND-then-OR over group g[0..n): the AND pass as AND batches; then the
 * queries whose AND pass ran in a batch and found fewer than k documents
 * (the single path's test: its candidates count) take the OR pass, whose
 * result is theirs; their counters add both passes. */
static int run_and_or(const struct tdm_search *s, tdm_sbq **g, size_t n, tdm_err *err)
{
    int rc = run_group(s, g, n, TDM_SALG_AND, TDM_SALG_AND_OR, err);
    size_t m = 0;
    for (size_t i = 0; rc == TDM_OK && i < n; i++)
        if (g[i]->batch > 1 && g[i]->rc == TDM_OK && g[i]->so.total < g[i]->k)
            g[m++] = g[i]; /* g's own order is no longer needed */
    if (rc || !m)
        return rc;
    tdm_sout *and_pass = malloc(m * sizeof *and_pass);
    if (!and_pass)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < m; i++) {
        and_pass[i] = g[i]->so;
        g[i]->so.launches = 0;
        g[i]->so.bytes_up = g[i]->so.bytes_down = 0;
    }
    /* the OR pass's, as OR's plan */
    int or_batch = g[0]->k <= tdm_search_batch_max_k(&s->dev[g[0]->pl.dev]);
    if (or_batch)
        rc = run_group(s, g, m, TDM_SALG_OR, TDM_SALG_OR, err);
    for (size_t i = 0; rc == TDM_OK && !or_batch && i < m; i++)
        rc = tdm_search_alone_run(s, g[i], TDM_SALG_OR, err);
    for (size_t i = 0; i < m; i++) {
        g[i]->so.launches += and_pass[i].launches;
        g[i]->so.bytes_up += and_pass[i].bytes_up;
        g[i]->so.bytes_down += and_pass[i].bytes_down;
    }
    free(and_pass);
    return rc;
}

/* The groups of two or more as device batches, in the items' order; then
 * the queries alone (the plan's, long OR, groups of one) together, several
 * at once (search_alone.h). */
static int dev_batches(const struct tdm_search *s, tdm_sbq *const *items, size_t n, tdm_err *err)
{
    tdm_sbq **g = malloc((n ? n : 1) * sizeof *g), **alone = malloc((n ? n : 1) * sizeof *alone);
    char *done = calloc(n ? n : 1, 1);
    size_t na = 0;
    int rc = g && alone && done ? TDM_OK : tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (size_t i = 0; rc == TDM_OK && i < n; i++) {
        tdm_sbq *it = items[i];
        if (done[i] || !on_device(it))
            continue;
        if (!batchable(s, it)) {
            alone[na++] = it;
            continue;
        }
        size_t m = 0;
        for (size_t j = i; j < n; j++)
            if (!done[j] && on_device(items[j]) && batchable(s, items[j]) &&
                same_launches(it, items[j])) {
                g[m++] = items[j];
                done[j] = 1;
            }
        if (m == 1) /* as run_group and run_and_or would: alone, its own algorithm */
            alone[na++] = it;
        else
            rc = it->salg == TDM_SALG_AND_OR ? run_and_or(s, g, m, err)
                                             : run_group(s, g, m, it->salg, it->salg, err);
    }
    if (rc == TDM_OK)
        rc = tdm_search_alone_all(s, alone, na, err);
    free(g);
    free(alone);
    free(done);
    return rc;
}

int tdm_search_dev_batches(const struct tdm_search *s, tdm_sbq *const *items, size_t n,
                           tdm_err *err)
{
    /* PoCL's basic driver: one thread at a time (runtime/serial.c); taken
       in device order, so two calls never wait for each other's. Which
       devices, fixed before the run (it changes the items' status). */
    char *lock = calloc(s->ndev > 0 ? (size_t)s->ndev : 1, 1);
    if (!lock)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (on_device(items[i]) && items[i]->pl.dev >= 0 && items[i]->pl.dev < s->ndev)
            lock[items[i]->pl.dev] = s->dev[items[i]->pl.dev].d->serial != NULL;
    for (int d = 0; d < s->ndev; d++)
        if (lock[d])
            tdm_serial_enter(s->dev[d].d);
    int rc = dev_batches(s, items, n, err);
    for (int d = s->ndev - 1; d >= 0; d--)
        if (lock[d])
            tdm_serial_leave(s->dev[d].d);
    free(lock);
    return rc;
}
