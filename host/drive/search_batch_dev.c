/* One device batch (drive/search.h, tdm_search_dev_batch): many queries of one
 * algorithm, k and scoring in one set of launches (cl/search_batch.cl).
 *
 * Host: each query's term table and decode jobs (one a list) are appended
 * to the batch's (term word 0 and the jobs' outputs shifted by the postings
 * before it, word 3 by the block bounds before it), with a query table of
 * where its ranges, heaps and cursors begin. Block bounds are not uploaded
 * where the device can make them (4 bytes a block: ~112 KB a query on the
 * 10M collection): WAND, BMW and MaxScore compute them from the resident
 * stored bounds when every query's are the stored ones (stored_apply; a row
 * of 16 bytes a term goes up, and the terms' bounds and order, which the
 * host has), or from the postings when the request's k1, b are not the
 * index's and no bounds cache gave them, then each query's term bounds and
 * MaxScore order (device_bounds_enqueue). Bounds from the handle's cache
 * (bounds.h), and those of a device without fp64, are uploaded; so are all
 * of them with TANDEM_BATCH_BOUNDS=host (the planner's tdm_splan.bounds).
 * Device, on the compute queue in order: the uploads, one decode launch per
 * codec for every list of the batch, the bounds, tdm_search_range_batch (a
 * work-item per (query, docid range),
 * Huang 2017's unit of work), tdm_search_merge_batch (a work-group per
 * query), and one copy back of every query's header and keys.
 *
 * Ranges: a count of the device's is shared by the batch's queries in
 * proportion to their postings (a GPU's 16,384 ranges per compute unit, a
 * CPU's 4 per core: the tuning table's batch_ranges_per_cu), at least one each, so a big CPU
 * batch runs about one work-item per query and a GPU's thousands of short
 * ranges a query; at large k fewer (ranges of at least 8k documents, and
 * at most batch_merge_keys / k of them, but never longer than the row's
 * batch_merge_rlen documents) so the merge of each query reads few heap
 * entries, yet a k = 1,000 query keeps enough ranges for the GPU. A
 * query's results do not depend on its ranges (each range keeps its exact
 * top min(k, length)).
 * TANDEM_BATCH_RANGES_PER_CU overrides the ranges a compute unit (timing).
 *
 * Compressed batches on CPU devices (TANDEM_BATCH_QUEUE): the queue,
 * tdm_search_zrange_queue, whose few work-items (TDM_TUNE_QUEUE_ITEMS_PER_CU
 * a compute unit) take the batch's ranges from a counter, longest first (order_units),
 * each running whole ranges as a PISA thread runs whole queries; a query gets
 * enough ranges that none is over 1 / (ranges a compute unit x compute units)
 * of the batch's estimated work (query_cost), so a big batch is about a range
 * a query and only its long queries are cut (size_query, SIZE_QUEUE).
 *
 * Ranked AND comes here at k <= 128; above, or with TANDEM_BATCH_AND=wu, it
 * takes Wu's mapping, a work-item per element of each query's shortest list
 * (search_batch_and.h; the planner's tdm_splan.and_wu). */
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "codec/layout.h"
#include "resident/listcache.h"
#include "search.h"
#include "search_batch_and.h"
#include "search_batch_dev.h"
#include "search_testing.h"
#include "runtime/tune_table.h"


enum { D_DOCS, D_FREQS, D_TERMS, D_BMAX, D_CUR, D_ORD, D_HS, D_HD, D_HN, D_QTAB, D_OUT,
       D_STATUS, D_SB, D_UNITS, D_COUNT };

typedef struct host_side {
    uint32_t *terms, *qtab, *sb;
    int bmode;
    tdm_decode_job *jobs[TDM_CODEC_COUNT];
    uint32_t njobs[TDM_CODEC_COUNT];
    uint64_t *out;
    size_t nterms, nbmax, npost, ncur, nheap, nranges;
    int zr;             /* the compressed variant: cursors read the index, no decode */
    uint32_t bw;        /* its cursors' buffer width: the largest block size */
    uint32_t zlayout;   /* its scratch layout (TDM_ZR_*: the planner's, the same for
                           every query of a device) */
    int queue;          /* compressed, tdm_search_zrange_queue: a work-item a compute
                           unit takes the ranges in the order of units */
    int asleep;         /* the results waited for asleep (the planner's batch_sleep) */
    int upload;         /* how the uploads go, TDM_TUNE_UPLOAD_* (the planner's) */
    uint32_t *units;    /* [nranges] global range ids, longest first (queue) */
    float *hs;          /* the queue's heaps as the device left them: [nheap] */
    uint32_t *hd;       /* [nheap] */
    uint32_t *hn;       /* [nranges + 1]: entries a range, then the status word */
} host_side;

static void host_free(host_side *h)
{
    free(h->terms);
    free(h->qtab);
    free(h->sb);
    free(h->out);
    free(h->units);
    free(h->hs);
    free(h->hd);
    free(h->hn);
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        free(h->jobs[c]);
}

/* The tuning switches of device d (runtime/settings.h: the environment,
 * read at engine open; every one 0 where unset). */
static const tdm_tuning *tuning(const tdm_device *d)
{
    return tdm_settings_tuning(d->settings);
}

/* Device d's row of the tuning table (runtime/tune_table.h): the
 * batches' constants and why. */
static const tdm_tune_row *row(const tdm_device *d)
{
    return tdm_tune_row_of(&d->info);
}

/* Ranges a compute unit: TANDEM_BATCH_RANGES_PER_CU (to time others) or
 * the row's. */
static uint32_t ranges_per_cu(const tdm_device *d)
{
    uint32_t v = tuning(d)->batch_ranges_per_cu;
    return v ? v : row(d)->batch_ranges_per_cu;
}

/* A query's heap slots at most: TANDEM_BATCH_MERGE_KEYS or the row's (0:
 * any). */
static uint32_t merge_keys(const tdm_device *d)
{
    uint32_t v = tuning(d)->batch_merge_keys;
    return v ? v : row(d)->batch_merge_keys;
}

/* A query's work, estimated for the queue's ranges and order: ranked AND
 * walks its shortest list and seeks the others (terms x the shortest), the
 * others read every list (pruning skips parts). Only an estimate: the
 * results do not depend on it. */
static uint64_t query_cost(const tdm_sprep *p, int salg)
{
    return 1 + (salg == TDM_SALG_AND ? (uint64_t)p->min_df * p->nt : (uint64_t)p->npost);
}

/* Ranges of one query of a batch on device d: its share of the device's
 * ranges in proportion to its work `post` of the batch's `allpost` (so that
 * a long query's work-items are not the ones everybody waits for), at least
 * one. For the queue, enough that none is more than 1 / (ranges a compute
 * unit x compute units) of the batch's work (rounded up): a batch of many
 * queries runs one range a query, as PISA runs one thread a query, and
 * only its long queries are cut. */
enum { SIZE_SHARE, SIZE_QUEUE, SIZE_ONE }; /* size_query's modes: SIZE_ONE a range */

/* A batch query's ranges are never longer than this many documents at k
 * where the merge's keys would leave fewer (0: no floor):
 * TANDEM_BATCH_MERGE_RLEN or the row's. */
static uint32_t merge_rlen(const tdm_device *d)
{
    uint32_t v = tuning(d)->batch_merge_rlen;
    return v ? v : row(d)->batch_merge_rlen;
}

/* A query's ranges at most at k (size_query's caps but the share's and the
 * cursors'). */
static uint64_t most_ranges(const tdm_device *d, uint32_t ndocs, uint32_t k)
{
    uint64_t r = ndocs / row(d)->batch_min_rlen, klim = ndocs / (8ull * k);
    uint64_t mkeys = merge_keys(d), kcap = mkeys / k;
    if (r > klim)
        r = klim;
    uint32_t mrlen = merge_rlen(d); /* the merge's keys, but ranges no longer */
    if (mrlen && kcap < ndocs / mrlen)
        kcap = ndocs / mrlen;
    if (mkeys && r > kcap)
        r = kcap;
    return r;
}

uint64_t tdm_search_batch_heap_keys(const tdm_device *d, uint32_t ndocs, uint32_t k, uint64_t nq)
{
    uint64_t r = most_ranges(d, ndocs, k), cus = d->info.compute_units ? d->info.compute_units : 1;
    uint64_t each = nq * (r ? r : 1), shared = cus * ranges_per_cu(d) + nq; /* shares round down */
    return (each < shared ? each : shared) * k;
}

static void size_query(const tdm_device *d, uint32_t ndocs, uint64_t post, uint64_t allpost,
                       uint32_t n, uint32_t nt, uint32_t k, int mode, double scale,
                       tdm_splan *pl)
{
    uint32_t cus = d->info.compute_units ? d->info.compute_units : 1;
    uint64_t total = (uint64_t)((double)cus * ranges_per_cu(d) * scale);
    double share = allpost ? (double)total * (double)post / (double)allpost : (double)total / n;
    uint64_t r = mode == SIZE_ONE ? 1 : (uint64_t)share;
    if (mode == SIZE_QUEUE && (double)r < share)
        r++;
    uint64_t most = most_ranges(d, ndocs, k);
    if (r > most)
        r = most;
    if (r > (1u << 22) / (nt ? nt : 1))
        r = (1u << 22) / (nt ? nt : 1);
    if (r < 1)
        r = 1;
    pl->rlen = (uint32_t)(((uint64_t)ndocs + r - 1) / r);
    pl->ranges = (uint32_t)(((uint64_t)ndocs + pl->rlen - 1) / pl->rlen);
    pl->variant = TDM_VARIANT_ITEM;
    pl->local = row(d)->item_local;
}

typedef struct unit_key {
    uint64_t cost;
    uint32_t g;
} unit_key;

static int unit_cmp(const void *a, const void *b)
{
    const unit_key *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? 1 : -1;
    return x->g < y->g ? -1 : x->g > y->g;
}

/* The queue's order, h->units: the batch's ranges by their estimated work
 * (their query's over its ranges), longest first (LPT: the cores finish
 * within about the shortest ranges' time of each other). */
static int order_units(tdm_sbq *const *qs, uint32_t n, int salg, host_side *h, tdm_err *err)
{
    unit_key *u = malloc((h->nranges ? h->nranges : 1) * sizeof *u);
    h->units = malloc((h->nranges ? h->nranges : 1) * 4);
    if (!u || !h->units) {
        free(u);
        return tdm_err_set(err, TDM_ERR_NOMEM, "search batch: out of memory for %u queries", n);
    }
    uint32_t g = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t c = query_cost(&qs[i]->p, salg) / qs[i]->pl.ranges;
        for (uint32_t r = 0; r < qs[i]->pl.ranges; r++, g++)
            u[g] = (unit_key){c, g};
    }
    qsort(u, g, sizeof *u, unit_cmp);
    for (uint32_t i = 0; i < g; i++)
        h->units[i] = u[i].g;
    free(u);
    return TDM_OK;
}

/* The batch's host tables from its queries' preparations. */
/* Query it's rows of the stored-bounds table (TDM_SB_W words a term,
 * search_layout.h). */
static int stored_rows(const tdm_ireader *r, const tdm_sbq *it, uint32_t *sb, tdm_err *err)
{
    for (uint32_t t = 0; t < it->p.nt; t++) {
        /* the descriptor alone: the preparation checked the list (a view,
           tdm_ireader_list, read its first arena words: a cache miss a term) */
        uint32_t nb, entry;
        float max_score;
        if (tdm_ireader_list_meta(r, it->q.terms[t].id, &nb, &entry, &max_score))
            return tdm_err_set(err, TDM_ERR_INTERNAL, "search batch: term %llu out of range",
                               (unsigned long long)it->q.terms[t].id);
        tdm_sb_row(sb + (size_t)t * TDM_SB_W, entry, max_score, it->q.terms[t].weight);
    }
    return TDM_OK;
}

/* Every query's ranges (size_query in `mode`, from `scale` of the device's
 * ranges: 1, or less to fit the cursors, fit_scale) and the batch's counts
 * in h (terms, bounds, postings, cursors, heap entries, ranges, decode
 * jobs). */
static void size_all(const tdm_sdev *sd, uint32_t ndocs, tdm_sbq *const *qs, uint32_t n,
                     int salg, uint32_t k, int mode, double scale, host_side *h)
{
    uint64_t allpost = 0;
    for (uint32_t i = 0; i < n; i++)
        allpost += mode == SIZE_QUEUE ? query_cost(&qs[i]->p, salg) : qs[i]->p.npost;
    h->nterms = h->nbmax = h->npost = h->ncur = h->nheap = h->nranges = 0;
    memset(h->njobs, 0, sizeof h->njobs);
    for (uint32_t i = 0; i < n; i++) {
        tdm_sbq *it = qs[i];
        size_query(sd->d, ndocs, mode == SIZE_QUEUE ? query_cost(&it->p, salg) : it->p.npost,
                   allpost, n, it->p.nt, k, mode, scale, &it->pl);
        uint32_t cap = k < it->pl.rlen ? k : it->pl.rlen;
        h->nterms += it->p.nt;
        h->nbmax += it->p.nbmax;
        h->npost += it->p.npost;
        h->nheap += (size_t)it->pl.ranges * cap;
        h->ncur += (size_t)it->pl.ranges * it->p.nt;
        h->nranges += it->pl.ranges;
        for (int c = 0; c < TDM_CODEC_COUNT; c++)
            h->njobs[c] += it->p.batch.njobs[c];
    }
}

/* Whether the batch's compressed cursors fit the device's budget. */
static int zr_fits(const tdm_device *d, const host_side *h)
{
    return (uint64_t)h->ncur * (TDM_ZR_CW + 2ull * h->bw) <= tdm_search_zr_words(d);
}

static uint64_t forced_limit; /* tdm_search_batch_limit_force; 0: none */

void tdm_search_batch_limit_force(uint64_t limit)
{
    __atomic_store_n(&forced_limit, limit, __ATOMIC_RELAXED);
}

/* Whether the batch's tables pass 32-bit offsets: those of every batch, and
   with `decoded` the decoded postings too. */
static int too_big(const host_side *h, int decoded)
{
    uint64_t f = __atomic_load_n(&forced_limit, __ATOMIC_RELAXED), lim = f ? f : UINT32_MAX;
    return (decoded && h->npost > lim) || h->nbmax > lim || h->nheap > lim || h->ncur > lim ||
           h->nterms > lim / TDM_SEARCH_TW;
}

/* The share of the device's ranges at which the cursors sized now would fit
   (with a margin: ranges round up per query). */
static double fit_scale(const tdm_device *d, const host_side *h)
{
    double need = (double)h->ncur * (TDM_ZR_CW + 2.0 * h->bw);
    return need > 0 ? 0.9 * (double)tdm_search_zr_words(d) / need : 1.0;
}

static int build_host(const tdm_sdev *sd, uint32_t ndocs, tdm_sbq *const *qs, uint32_t n,
                      int salg, uint32_t k, int bmode, host_side *h, tdm_err *err)
{
    memset(h, 0, sizeof *h);
    h->bmode = bmode;
    /* compressed when the planner chose it for every query (a CPU device)
       and no bounds come from decoded postings */
    int zr = bmode != TDM_SBOUNDS_POSTINGS;
    for (uint32_t i = 0; i < n; i++) {
        zr = zr && qs[i]->pl.variant == TDM_VARIANT_COMPRESSED && qs[i]->p.max_block;
        h->bw = qs[i]->p.max_block > h->bw ? qs[i]->p.max_block : h->bw;
    }
    int queue = zr && n && qs[0]->pl.batch_queue; /* the planner's */
    h->zlayout = n ? qs[0]->pl.zlayout : TDM_ZR_RANGE;
    size_all(sd, ndocs, qs, n, salg, k, queue ? SIZE_QUEUE : SIZE_SHARE, 1.0, h);
    /* the queue's extra ranges over the cursor budget: a range each (the
       batch's cut, search_batch.c, keeps that within it) */
    if (queue && !zr_fits(sd->d, h))
        size_all(sd, ndocs, qs, n, salg, k, SIZE_ONE, 1.0, h);
    /* a compressed batch over the budget keeps its cursors, with fewer
       ranges (the decoded path would decode every list whole: the 10M
       collection's 2,000 queries hold 8G postings) */
    if (zr && !queue && !zr_fits(sd->d, h))
        size_all(sd, ndocs, qs, n, salg, k, SIZE_SHARE, fit_scale(sd->d, h), h);
    h->zr = zr && zr_fits(sd->d, h);
    if (too_big(h, !h->zr))
        return tdm_err_set(err, TDM_ERR_LIMIT, "search batch: %u queries hold %llu postings "
                           "(at most %u a batch)", n, (unsigned long long)h->npost, UINT32_MAX);
    for (uint32_t i = 0; h->zr && i < n; i++)
        qs[i]->pl.variant = TDM_VARIANT_COMPRESSED;
    h->queue = h->zr && queue;
    h->asleep = n && qs[0]->pl.batch_sleep;
    h->upload = n ? qs[0]->pl.batch_upload : TDM_TUNE_UPLOAD_PAGEABLE;
    uint32_t p2 = tdm_pow2_at_least(k);
    h->terms = malloc((h->nterms ? h->nterms : 1) * TDM_SEARCH_TW * 4);
    h->qtab = malloc((size_t)n * TDM_SBQ_W * 4);
    h->out = malloc((size_t)n * (p2 + 2) * 8);
    h->sb = malloc((h->nterms ? h->nterms : 1) * TDM_SB_W * 4);
    int ok = h->terms && h->qtab && h->out && h->sb;
    if (ok && h->queue) {
        h->hs = malloc((h->nheap ? h->nheap : 1) * 4);
        h->hd = malloc((h->nheap ? h->nheap : 1) * 4);
        h->hn = malloc((h->nranges + 1) * 4);
        ok = h->hs && h->hd && h->hn;
    }
    for (int c = 0; ok && c < TDM_CODEC_COUNT; c++)
        if (h->njobs[c] && !(h->jobs[c] = malloc((size_t)h->njobs[c] * sizeof(tdm_decode_job))))
            ok = 0;
    if (!ok)
        return tdm_err_set(err, TDM_ERR_NOMEM, "search batch: out of memory for %u queries", n);
    size_t tb = 0, bb = 0, pb = 0, hb = 0, cb = 0, rb = 0; /* positions so far */
    uint32_t jb[TDM_CODEC_COUNT] = {0};
    for (uint32_t i = 0; i < n; i++) {
        const tdm_sprep *p = &qs[i]->p;
        const tdm_splan *pl = &qs[i]->pl;
        if (bmode == TDM_SBOUNDS_HOST || bmode == TDM_SBOUNDS_STORED) /* the bounds' host copy */
            tdm_sprep_host_order(p);
        int rc = bmode == TDM_SBOUNDS_STORED
                     ? stored_rows(sd->res.r, qs[i], h->sb + tb * TDM_SB_W, err)
                     : TDM_OK;
        if (rc)
            return rc;
        uint32_t *w = h->terms + tb * TDM_SEARCH_TW;
        memcpy(w, p->terms, (size_t)p->nt * TDM_SEARCH_TW * 4);
        for (uint32_t t = 0; t < p->nt; t++) {
            /* word 0: the first posting in the decoded batch, or the list */
            uint32_t *x = w + t * TDM_SEARCH_TW;
            x[TDM_TW_POS] = h->zr ? p->ids[t] : x[TDM_TW_POS] + (uint32_t)pb;
            x[TDM_TW_BMAX] += (uint32_t)bb;
        }
        for (int c = 0; c < TDM_CODEC_COUNT; c++) {
            for (uint32_t j = 0; j < p->batch.njobs[c]; j++) {
                tdm_decode_job jo = p->batch.jobs[c][j];
                jo.out += (uint32_t)pb;
                h->jobs[c][jb[c]++] = jo;
            }
        }
        uint32_t cap = k < pl->rlen ? k : pl->rlen;
        uint32_t *q = h->qtab + (size_t)i * TDM_SBQ_W;
        q[TDM_SBQ_TERM] = (uint32_t)tb;
        q[TDM_SBQ_NT] = p->nt;
        q[TDM_SBQ_RANGE] = (uint32_t)rb;
        q[TDM_SBQ_NR] = pl->ranges;
        q[TDM_SBQ_RLEN] = pl->rlen;
        q[TDM_SBQ_CAP] = cap;
        q[TDM_SBQ_HEAP] = (uint32_t)hb;
        q[TDM_SBQ_CUR] = (uint32_t)cb;
        tb += p->nt;
        bb += p->nbmax;
        pb += p->npost;
        hb += (size_t)pl->ranges * cap;
        cb += (size_t)pl->ranges * p->nt;
        rb += pl->ranges;
    }
    return h->queue ? order_units(qs, n, salg, h, err) : TDM_OK;
}

/* A batch's device buffers, kept in the device's batch pool between
 * batches (grown when too small). NVIDIA allocates a buffer at the first
 * launch that uses it and frees it at its release: on the H200 a batch of
 * 512 queries of the 10M collection (16 GB of decoded postings) spent ~10
 * ms in its enqueue and ~5 ms after its download doing so. */
typedef struct tdm_bscratch {
    cl_mem b[D_COUNT];
    size_t cap[D_COUNT];
    cl_mem jobs[TDM_CODEC_COUNT];
    size_t jcap[TDM_CODEC_COUNT];
    /* the decode launches' prefix sums: made and released at each launch,
       their release waited for the decode (NVIDIA), ~8 ms of a 10M batch's
       enqueue during which a second sending thread's batch could not go in */
    tdm_decode_scratch dsc;
    tdm_spinned pin; /* the uploads' pinned staging (TDM_TUNE_UPLOAD_PINNED) */
    struct tdm_bscratch *next;
} dev_side;

static void dev_free(tdm_device *d, dev_side *ds)
{
    if (!ds)
        return;
    tdm_spinned_free(d, &ds->pin);
    for (int i = 0; i < D_COUNT; i++)
        if (ds->b[i])
            clReleaseMemObject(ds->b[i]);
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        if (ds->jobs[c])
            clReleaseMemObject(ds->jobs[c]);
    tdm_decode_scratch_free(&ds->dsc);
    free(ds);
}

static dev_side *bpool_take(tdm_sdev *sd)
{
    tdm_search_pool_lock(sd);
    dev_side *ds = sd->bpool;
    if (ds)
        sd->bpool = ds->next;
    tdm_search_pool_unlock(sd);
    return ds ? ds : calloc(1, sizeof *ds);
}

/* Only buffers whose commands are all done go back. */
static void bpool_give(tdm_sdev *sd, dev_side *ds)
{
    tdm_search_pool_lock(sd);
    ds->next = sd->bpool;
    sd->bpool = ds;
    tdm_search_pool_unlock(sd);
}

/* Releases the pool's idle buffers (other threads' batches keep theirs). */
static void bpool_drop(const tdm_sdev *sd)
{
    tdm_sdev *w = (tdm_sdev *)sd;
    tdm_search_pool_lock(w);
    dev_side *idle = w->bpool;
    w->bpool = NULL;
    tdm_search_pool_unlock(w);
    while (idle) {
        dev_side *next = idle->next;
        dev_free(sd->d, idle);
        idle = next;
    }
}

void tdm_search_bpool_free(tdm_sdev *sd)
{
    bpool_drop(sd);
}

/* tdm_search_buffer_fit; out of device memory, the pool's idle buffers are
 * released and the size asked is tried once more. */
static int fit(const tdm_sdev *sd, cl_mem_flags flags, cl_mem *m, size_t *cap, size_t bytes,
               tdm_err *err)
{
    int rc = tdm_search_buffer_fit(sd->d, flags, m, cap, bytes, err);
    if (rc == TDM_ERR_DEVICE_MEMORY) {
        tdm_err_clear(err);
        bpool_drop(sd);
        bytes = bytes < 4 ? 4 : bytes;
        rc = tdm_buffer_create(sd->d, flags, bytes, NULL, m, err);
        *cap = rc == TDM_OK ? bytes : 0;
    }
    return rc;
}

/* The host's block bounds, each query's straight from its preparation
 * (TDM_SBOUNDS_HOST), in the batch's order (its term tables' word 3). Gathered
 * first into one host table, the 10M collection's 512 queries (60 MB of
 * bounds) cost the H200's host 40 ms a batch, mostly the fresh table's page
 * faults. */
static int upload_bounds(tdm_device *d, tdm_sbq *const *qs, uint32_t n, cl_mem m, uint64_t *up,
                         tdm_err *err)
{
    size_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        const tdm_sprep *p = &qs[i]->p;
        cl_int rc = p->nbmax ? clEnqueueWriteBuffer(d->queue, m, CL_FALSE, at * 4, p->nbmax * 4,
                                                    p->bmax, 0, NULL, NULL)
                             : CL_SUCCESS;
        if (rc != CL_SUCCESS)
            return tdm_cl_fail(err, rc, "search batch: clEnqueueWriteBuffer");
        at += p->nbmax;
    }
    *up += at * 4;
    return TDM_OK;
}

/* The uploads of h's tables (but the block bounds, which go from each
 * preparation) in order, table and bytes, n in all. */
typedef struct upload {
    cl_mem m;
    size_t bytes;
    const void *src;
} upload;

static size_t uploads(const host_side *h, const dev_side *ds, const size_t *bytes, upload *u)
{
    static const cl_uint zero[2] = {0, 0}; /* status, the queue's counter */
    size_t n = 0;
    u[n++] = (upload){ds->b[D_TERMS], bytes[D_TERMS], h->terms};
    if (h->bmode == TDM_SBOUNDS_STORED)
        u[n++] = (upload){ds->b[D_SB], bytes[D_SB], h->sb};
    u[n++] = (upload){ds->b[D_QTAB], bytes[D_QTAB], h->qtab};
    u[n++] = (upload){ds->b[D_STATUS], sizeof zero, zero};
    if (h->queue)
        u[n++] = (upload){ds->b[D_UNITS], bytes[D_UNITS], h->units};
    for (int c = 0; !h->zr && c < TDM_CODEC_COUNT; c++)
        if (h->njobs[c])
            u[n++] = (upload){ds->jobs[c], (size_t)h->njobs[c] * sizeof(tdm_decode_job),
                              h->jobs[c]};
    return n;
}

/* The uploads u[0..n) (non-blocking, on the compute queue) from the host's
 * tables or from their copies in ds's pinned staging (the planner's
 * batch_upload); the block bounds of the preparations (TDM_SBOUNDS_HOST,
 * rare) from the preparations. */
static int send(tdm_device *d, const host_side *h, tdm_sbq *const *qs, uint32_t nq, dev_side *ds,
                const upload *u, size_t n, uint64_t *up, tdm_err *err)
{
    int pin = h->upload == TDM_TUNE_UPLOAD_PINNED;
    size_t all = 0;
    for (size_t i = 0; pin && i < n; i++)
        all += tdm_spinned_size(u[i].bytes);
    int rc = pin ? tdm_spinned_fit(d, &ds->pin, all, err) : TDM_OK;
    if (rc == TDM_OK && h->bmode == TDM_SBOUNDS_HOST)
        rc = upload_bounds(d, qs, nq, ds->b[D_BMAX], up, err);
    for (size_t i = 0; rc == TDM_OK && i < n; i++) {
        const void *src = pin ? tdm_spinned_put(&ds->pin, u[i].src, u[i].bytes) : u[i].src;
        rc = tdm_search_batch_upload(d, u[i].m, u[i].bytes, src, up, err);
    }
    return rc;
}

/* Buffers and uploads (send; h and the queries' preparations outlive the
 * batch's last command, the download). */
static int make_device(const tdm_sdev *sd, const host_side *h, tdm_sbq *const *qs, uint32_t n,
                       uint32_t p2, dev_side *ds, uint64_t *up, tdm_err *err)
{
    tdm_device *d = sd->d;
    size_t post = h->zr ? h->ncur * h->bw : h->npost; /* the cursors' buffers, or postings */
    size_t bytes[D_COUNT] = {
        [D_DOCS] = post * 4,      [D_FREQS] = post * 4,
        [D_TERMS] = h->nterms * TDM_SEARCH_TW * 4,
        [D_BMAX] = h->nbmax * 4,  [D_CUR] = h->ncur * (h->zr ? TDM_ZR_CW : 1) * 4,
        [D_ORD] = h->ncur * 4,
        [D_HS] = h->nheap * 4,    [D_HD] = h->nheap * 4, [D_HN] = h->nranges * 4,
        [D_QTAB] = (size_t)n * TDM_SBQ_W * 4,
        [D_OUT] = (size_t)n * (p2 + 2) * 8,     [D_STATUS] = 8,
        [D_SB] = h->bmode == TDM_SBOUNDS_STORED ? h->nterms * TDM_SB_W * 4 : 0,
        [D_UNITS] = h->queue ? h->nranges * 4 : 0,
    };
    int rc = TDM_OK;
    for (int i = 0; rc == TDM_OK && i < D_COUNT; i++)
        rc = fit(sd, CL_MEM_READ_WRITE, &ds->b[i], &ds->cap[i], bytes[i], err);
    for (int c = 0; rc == TDM_OK && !h->zr && c < TDM_CODEC_COUNT; c++)
        if (h->njobs[c])
            rc = fit(sd, CL_MEM_READ_ONLY, &ds->jobs[c], &ds->jcap[c],
                     (size_t)h->njobs[c] * sizeof(tdm_decode_job), err);
    if (rc != TDM_OK)
        return rc;
    upload u[5 + TDM_CODEC_COUNT];
    return send(d, h, qs, n, ds, u, uploads(h, ds, bytes, u), up, err);
}

/* The queue's heaps, their counts and the status word back (in order on
 * the compute queue: the last read blocks). */
static int read_heaps(tdm_device *d, const host_side *h, dev_side *ds, tdm_err *err)
{
    struct {
        cl_mem m;
        size_t bytes;
        void *to;
    } r[] = {{ds->b[D_HS], h->nheap * 4, h->hs},
             {ds->b[D_HD], h->nheap * 4, h->hd},
             {ds->b[D_HN], h->nranges * 4, h->hn},
             {ds->b[D_STATUS], 4, h->hn + h->nranges}};
    for (int i = 0; i < 4; i++) {
        cl_int e = r[i].bytes ? clEnqueueReadBuffer(d->queue, r[i].m, i == 3 ? CL_TRUE : CL_FALSE,
                                                    0, r[i].bytes, r[i].to, 0, NULL, NULL)
                              : CL_SUCCESS;
        if (e != CL_SUCCESS)
            return tdm_cl_fail(err, e, "search batch: clEnqueueReadBuffer");
    }
    return TDM_OK;
}

static int key_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* What tdm_search_merge_batch writes to h->out, made on the host from the
 * queue's heaps: each query's keys (score bits, then ~docid: distinct, so
 * one order) from its ranges' heaps, sorted, the best k after the header
 * (keys written | candidates << 32, status). A query of one range sorts at
 * most k entries; a launch and a work-group a query are saved, whose
 * barriers cost PoCL more than the sort. */
static int host_merge(const host_side *h, uint32_t n, uint32_t k, uint32_t p2, tdm_err *err)
{
    size_t most = 1;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *q = h->qtab + (size_t)i * TDM_SBQ_W;
        size_t keys = (size_t)q[TDM_SBQ_NR] * q[TDM_SBQ_CAP];
        most = keys > most ? keys : most;
    }
    uint64_t *keys = malloc(most * 8);
    if (!keys)
        return tdm_err_set(err, TDM_ERR_NOMEM, "search batch: out of memory for %u queries", n);
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *q = h->qtab + (size_t)i * TDM_SBQ_W;
        uint32_t r0 = q[TDM_SBQ_RANGE], nr = q[TDM_SBQ_NR], cap = q[TDM_SBQ_CAP];
        size_t m = 0;
        uint64_t total = 0;
        for (uint32_t r = 0; r < nr; r++) {
            uint32_t c = h->hn[r0 + r] < cap ? h->hn[r0 + r] : cap;
            size_t at = q[TDM_SBQ_HEAP] + (size_t)r * cap;
            total += c;
            for (uint32_t j = 0; j < c; j++) {
                uint32_t sb;
                memcpy(&sb, &h->hs[at + j], 4);
                keys[m++] = (uint64_t)sb << 32 | (0xffffffffu - h->hd[at + j]);
            }
        }
        qsort(keys, m, 8, key_desc);
        m = m < k ? m : k;
        uint64_t *o = h->out + (size_t)i * (p2 + 2);
        o[0] = (uint64_t)m | total << 32;
        o[1] = h->hn[h->nranges];
        memcpy(o + 2, keys, m * 8);
    }
    free(keys);
    return TDM_OK;
}

/* A batch's kernel arguments, named (each kernel's builder below lists
 * them in its signature's order, cl/search_batch.cl, cl/search_zrange.cl). */
typedef struct batch_args {
    const dev_side *ds;
    const tdm_resident *res;
    cl_uint nq, nranges, ndocs, alg, kind;
    cl_float c0, c1;
    cl_uint bw, nlists, arena_words, spans, layout; /* the compressed kernels' */
    cl_uint k, pow2;                                /* the merge's */
    cl_uint nterms, nblocks; /* the bounds kernels': the batch's term table and blocks */
} batch_args;

#define BATCH_MAX_ARGS 32

/* tdm_search_stored_bounds_batch (cl/search_batch.cl): every block's bound
 * from the stored ones. */
static cl_uint stored_bounds_batch_args(const batch_args *b, tdm_karg *a)
{
    const dev_side *ds = b->ds;
    const tdm_karg args[] = {
        TDM_KARG_MEM(&ds->b[D_TERMS]),     TDM_KARG_MEM(&ds->b[D_SB]),
        TDM_KARG_MEM(&b->res->block_max),  TDM_KARG_MEM(&ds->b[D_BMAX]),
        TDM_KARG_U32(&b->nterms),          TDM_KARG_U32(&b->nblocks),
    };
    memcpy(a, args, sizeof args);
    return sizeof args / sizeof *args;
}

/* tdm_search_bounds (cl/search_range.cl), over the batch's blocks: the
 * postings' bounds for a request whose k1, b are not the index's. Its
 * document count is the resident index's (the doclens it reads). */
static cl_uint bounds_batch_args(const batch_args *b, tdm_karg *a)
{
    const dev_side *ds = b->ds;
    const tdm_karg args[] = {
        TDM_KARG_MEM(&ds->b[D_DOCS]),      TDM_KARG_MEM(&ds->b[D_FREQS]),
        TDM_KARG_MEM(&ds->b[D_TERMS]),     TDM_KARG_MEM(&b->res->doclens),
        TDM_KARG_U32(&b->res->ndocs),      TDM_KARG_MEM(&ds->b[D_BMAX]),
        TDM_KARG_U32(&b->nterms),          TDM_KARG_U32(&b->nblocks),
        TDM_KARG_U32(&b->kind),            {sizeof b->c0, &b->c0},
        {sizeof b->c1, &b->c1},
    };
    memcpy(a, args, sizeof args);
    return sizeof args / sizeof *args;
}

/* tdm_search_order_batch (cl/search_batch.cl): each query's term bounds
 * and MaxScore order. */
static cl_uint order_batch_args(const batch_args *b, tdm_karg *a)
{
    const dev_side *ds = b->ds;
    const tdm_karg args[] = {
        TDM_KARG_MEM(&ds->b[D_TERMS]), TDM_KARG_MEM(&ds->b[D_BMAX]),
        TDM_KARG_MEM(&ds->b[D_QTAB]),  TDM_KARG_U32(&b->nq),
    };
    memcpy(a, args, sizeof args);
    return sizeof args / sizeof *args;
}

/* tdm_search_range_batch (cl/search_batch.cl). */
static cl_uint range_batch_args(const batch_args *b, tdm_karg *a)
{
    const dev_side *ds = b->ds;
    const tdm_karg args[] = {
        TDM_KARG_MEM(&ds->b[D_DOCS]),    TDM_KARG_MEM(&ds->b[D_FREQS]),
        TDM_KARG_MEM(&ds->b[D_TERMS]),   TDM_KARG_MEM(&ds->b[D_BMAX]),
        TDM_KARG_MEM(&b->res->doclens),  TDM_KARG_MEM(&ds->b[D_CUR]),
        TDM_KARG_MEM(&ds->b[D_ORD]),     TDM_KARG_MEM(&ds->b[D_HS]),
        TDM_KARG_MEM(&ds->b[D_HD]),      TDM_KARG_MEM(&ds->b[D_HN]),
        TDM_KARG_MEM(&ds->b[D_QTAB]),    TDM_KARG_U32(&b->nq),
        TDM_KARG_U32(&b->nranges),       TDM_KARG_U32(&b->ndocs),
        TDM_KARG_U32(&b->alg),           TDM_KARG_U32(&b->kind),
        {sizeof b->c0, &b->c0},          {sizeof b->c1, &b->c1},
    };
    _Static_assert(sizeof args / sizeof *args <= BATCH_MAX_ARGS, "range batch args");
    memcpy(a, args, sizeof args);
    return sizeof args / sizeof *args;
}

/* tdm_search_zrange_batch, and with `queue` tdm_search_zrange_queue, which
 * takes the units table last (cl/search_zrange.cl): the resident index, the
 * cursors' block buffers in docs and freqs. */
static cl_uint zrange_batch_args(const batch_args *b, int queue, tdm_karg *a)
{
    const dev_side *ds = b->ds;
    const tdm_resident *rs = b->res;
    const tdm_karg args[] = {
        TDM_KARG_MEM(&rs->arena),        TDM_KARG_MEM(&rs->lists),
        TDM_KARG_MEM(&rs->codecs),       TDM_KARG_MEM(&rs->block_last),
        TDM_KARG_MEM(&rs->block_docs),   TDM_KARG_MEM(&rs->block_freqs),
        TDM_KARG_U32(&b->nlists),        TDM_KARG_U32(&b->arena_words),
        TDM_KARG_U32(&b->spans),         TDM_KARG_MEM(&ds->b[D_DOCS]),
        TDM_KARG_MEM(&ds->b[D_FREQS]),   TDM_KARG_U32(&b->bw),
        TDM_KARG_MEM(&ds->b[D_TERMS]),   TDM_KARG_MEM(&ds->b[D_BMAX]),
        TDM_KARG_MEM(&rs->doclens),      TDM_KARG_MEM(&ds->b[D_CUR]),
        TDM_KARG_MEM(&ds->b[D_ORD]),     TDM_KARG_MEM(&ds->b[D_HS]),
        TDM_KARG_MEM(&ds->b[D_HD]),      TDM_KARG_MEM(&ds->b[D_HN]),
        TDM_KARG_MEM(&ds->b[D_QTAB]),    TDM_KARG_U32(&b->nq),
        TDM_KARG_U32(&b->nranges),       TDM_KARG_U32(&b->ndocs),
        TDM_KARG_U32(&b->alg),           TDM_KARG_U32(&b->kind),
        {sizeof b->c0, &b->c0},          {sizeof b->c1, &b->c1},
        TDM_KARG_MEM(&ds->b[D_STATUS]),
        TDM_KARG_U32(&b->layout),        TDM_KARG_MEM(&ds->b[D_UNITS]), /* the queue's only */
    };
    _Static_assert(sizeof args / sizeof *args <= BATCH_MAX_ARGS, "zrange batch args");
    size_t n = sizeof args / sizeof *args - (queue ? 0 : 1);
    memcpy(a, args, n * sizeof *args);
    return (cl_uint)n;
}

/* tdm_search_merge_batch (cl/search_batch.cl): each query's heaps to its
 * best k. */
static cl_uint merge_batch_args(const batch_args *b, tdm_karg *a)
{
    const dev_side *ds = b->ds;
    const tdm_karg args[] = {
        TDM_KARG_MEM(&ds->b[D_HS]),   TDM_KARG_MEM(&ds->b[D_HD]), TDM_KARG_MEM(&ds->b[D_HN]),
        TDM_KARG_MEM(&ds->b[D_QTAB]), TDM_KARG_U32(&b->k),        TDM_KARG_U32(&b->pow2),
        TDM_KARG_MEM(&ds->b[D_OUT]),  TDM_KARG_MEM(&ds->b[D_STATUS]),
    };
    memcpy(a, args, sizeof args);
    return sizeof args / sizeof *args;
}

/* Block bounds made on the device: every block's bound of the batch (its
 * term table's word 3 numbering the batch's blocks) from the stored bounds
 * (tdm_search_stored_bounds_batch: tdm_score_stored_bound's arithmetic) or,
 * for requests whose k1, b are not the index's, from the postings
 * (tdm_search_bounds), then each query's term bounds and MaxScore order
 * (tdm_search_order_batch), as the single path computes them; the stored
 * ones' term bounds and order come up with the term table (the host's copy
 * of the same bounds, build_host). */
static int device_bounds_enqueue(const tdm_sdev *sd, const host_side *h, const batch_args *ba,
                                 uint32_t *launches, tdm_sprof *pf, tdm_err *err)
{
    tdm_device *d = sd->d;
    cl_event ev = NULL, *evp = pf->on ? &ev : NULL;
    size_t wg = d->wg_size;
    tdm_karg a[BATCH_MAX_ARGS];
    int rc = TDM_OK;
    if (ba->nblocks && h->bmode == TDM_SBOUNDS_STORED) {
        rc = tdm_kernel_launch(d, "tdm_search_stored_bounds_batch", a,
                               stored_bounds_batch_args(ba, a), tdm_round_up(ba->nblocks, wg), wg,
                               0, NULL, evp, err);
        tdm_sprof_take(pf, "tdm_search_stored_bounds_batch", &ev);
        ++*launches;
    } else if (ba->nblocks) {
        rc = tdm_kernel_launch(d, "tdm_search_bounds", a, bounds_batch_args(ba, a),
                               tdm_round_up(ba->nblocks, wg), wg, 0, NULL, evp, err);
        tdm_sprof_take(pf, "tdm_search_bounds (batch)", &ev);
        ++*launches;
    }
    if (h->bmode == TDM_SBOUNDS_STORED)
        return rc;
    if (rc == TDM_OK)
        rc = tdm_kernel_launch(d, "tdm_search_order_batch", a, order_batch_args(ba, a),
                               tdm_round_up(ba->nq, wg), wg, 0, NULL, evp, err);
    tdm_sprof_take(pf, "tdm_search_order_batch", &ev);
    ++*launches;
    return rc;
}

/* Decode, range and merge launches, then the copy of h->out (the
 * queue: of the heaps, which host_merge then reads). */
static int run_device(const tdm_sdev *sd, uint32_t ndocs, const host_side *h, uint32_t n,
                      int salg, uint32_t kind, float c0, float c1, uint32_t k, uint32_t p2,
                      dev_side *ds, uint32_t *launches, tdm_sprof *pf, tdm_err *err)
{
    cl_event ev = NULL, *evp = pf->on ? &ev : NULL;
    double t = tdm_sprof_now();
    tdm_device *d = sd->d;
    tdm_decode_batch db;
    memset(&db, 0, sizeof db);
    for (int c = 0; c < TDM_CODEC_COUNT; c++) {
        db.jobs[c] = h->jobs[c];
        db.njobs[c] = h->njobs[c];
        *launches += h->njobs[c] && !h->zr ? 1 : 0;
    }
    db.npostings = h->npost;
    cl_event lev = NULL; /* a list cache holds the batch's lists (resident/listcache.h) */
    tdm_listcache_hold *hold = NULL;
    int rc = tdm_resident_acquire_batch(&sd->res, &db, &lev, &hold, NULL, err);
    if (rc == TDM_OK && h->zr) /* the cursors decode what they enter */
        rc = tdm_search_after_index(sd, d->queue, lev ? 1 : 0, &lev, err);
    else if (rc == TDM_OK)
        rc = tdm_decode_batch_enqueue_in(&sd->res, NULL, &db, ds->jobs, ds->b[D_DOCS],
                                         ds->b[D_FREQS], ds->b[D_STATUS], &ds->dsc, lev ? 1 : 0,
                                         lev ? &lev : NULL, evp, err);
    if (lev)
        clReleaseEvent(lev);
    tdm_sprof_take(pf, "batch decode (last kernel)", &ev);
    batch_args ba = {.ds = ds, .res = &sd->res, .nq = n, .nranges = (cl_uint)h->nranges,
                     .ndocs = ndocs, .alg = (cl_uint)salg, .kind = kind, .c0 = c0, .c1 = c1,
                     .bw = h->bw, .nlists = sd->res.nlists, .arena_words = sd->res.arena_words,
                     .spans = sd->res.spans, .layout = h->zlayout, .k = k, .pow2 = p2,
                     .nterms = (cl_uint)h->nterms, .nblocks = (cl_uint)h->nbmax};
    cl_uint nr = ba.nranges;
    if (rc == TDM_OK && (h->bmode == TDM_SBOUNDS_STORED || h->bmode == TDM_SBOUNDS_POSTINGS))
        rc = device_bounds_enqueue(sd, h, &ba, launches, pf, err);
    tdm_karg a[BATCH_MAX_ARGS];
    const char *kn = h->queue ? "tdm_search_zrange_queue"
                     : h->zr  ? "tdm_search_zrange_batch"
                              : "tdm_search_range_batch";
    size_t local = d->info.type == TDM_DEVICE_GPU ? 64u : 1u;
    size_t cu = d->info.compute_units ? d->info.compute_units : 1;
    size_t items = h->queue ? TDM_TUNE_QUEUE_ITEMS_PER_CU * cu : nr;
    if (h->queue)
        local = 1;
    if (rc == TDM_OK && h->zr)
        rc = tdm_kernel_launch(d, kn, a, zrange_batch_args(&ba, h->queue, a),
                               tdm_round_up(items, local), local, 0, NULL, evp, err);
    else if (rc == TDM_OK)
        rc = tdm_kernel_launch(d, kn, a, range_batch_args(&ba, a), tdm_round_up(nr, local), local,
                               0, NULL, evp, err);
    tdm_sprof_take(pf, kn, &ev);
    size_t ml = tdm_search_merge_local(d);
    if (rc == TDM_OK && !h->queue) /* the queue's heaps are merged on the host */
        rc = tdm_kernel_launch(d, "tdm_search_merge_batch", a, merge_batch_args(&ba, a),
                               (size_t)n * ml, ml, 0, NULL, evp, err);
    tdm_sprof_take(pf, "tdm_search_merge_batch", &ev);
    *launches += h->queue ? 1 : 2;
    tdm_sprof_host(pf, "batch: enqueue decode, range, merge", t);
    t = tdm_sprof_now();
    if (rc == TDM_OK && h->queue) {
        rc = read_heaps(d, h, ds, err);
    } else if (rc == TDM_OK) {
        cl_int e = tdm_read_wait(d->queue, ds->b[D_OUT], (size_t)n * (p2 + 2) * 8, h->out,
                                 h->asleep);
        if (e != CL_SUCCESS)
            rc = tdm_cl_fail(err, e, "search batch: clEnqueueReadBuffer");
    }
    tdm_sprof_host(pf, h->asleep ? "batch: download (asleep)" : "batch: download (blocking)", t);
    if (rc)
        tdm_search_batch_drain(d); /* before the lists' hold goes */
    tdm_resident_unhold(&sd->res, hold, NULL);
    return rc;
}

/* The term table and block bounds back (blocking), for the tests. */
static int read_back(tdm_device *d, const host_side *h, dev_side *ds, uint32_t **terms,
                     float **bmax, tdm_err *err)
{
    size_t tb = h->nterms * TDM_SEARCH_TW * 4, bb = h->nbmax * 4;
    *terms = malloc(tb ? tb : 4);
    *bmax = malloc(bb ? bb : 4);
    if (!*terms || !*bmax)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    cl_int e = tb ? clEnqueueReadBuffer(d->queue, ds->b[D_TERMS], CL_TRUE, 0, tb, *terms, 0, NULL,
                                        NULL)
                  : CL_SUCCESS;
    if (e == CL_SUCCESS && bb)
        e = clEnqueueReadBuffer(d->queue, ds->b[D_BMAX], CL_TRUE, 0, bb, *bmax, 0, NULL, NULL);
    return e == CL_SUCCESS ? TDM_OK : tdm_cl_fail(err, e, "search batch: reading tables back");
}

/* Whether query it's bounds may be the index's stored ones: impact scores
 * on an impact index (the bound is the stored one times the term's weight
 * alone, bounds.h), or BM25 whose float constants (c0, c1 and every term's
 * qw, all that the float score reads) are those of the index's k1, b. Its
 * bounds may also be a cache's exact recomputed ones (bounds.h) at other
 * k1, b, or of impact scores on a BM25 index: those the host uploads. */
static int stored_apply(const tdm_ireader *r, const tdm_sbq *it)
{
    const tdm_sprep *p = &it->p;
    const tdm_ireader_info *info = tdm_ireader_info_get(r);
    if (p->device_bounds)
        return 0;
    if (p->kind == TDM_SCORING_IMPACT)
        return info->impact && p->term_bounds;
    if (p->kind != TDM_SCORING_BM25)
        return 0;
    /* the stored bounds were taken (bounds.h): the request's k1, b are the
       index's, so are its float constants (a scorer a query a batch was
       most of a MaxScore batch's host tables) */
    if (p->term_bounds && !info->impact)
        return 1;
    tdm_score_params sp = {TDM_SCORING_BM25, info->k1, info->b};
    tdm_scorer sc;
    tdm_err e = {0};
    if (tdm_scorer_init(&sc, r, &it->q, &sp, &e) != TDM_OK) {
        tdm_err_clear(&e);
        return 0;
    }
    int ok = sc.nterms == p->nt && memcmp(&sc.c0, &p->c0, 4) == 0 &&
             memcmp(&sc.c1, &p->c1, 4) == 0;
    for (uint32_t t = 0; ok && t < p->nt; t++)
        ok = memcmp(&sc.qw[t], &p->terms[(size_t)t * TDM_SEARCH_TW + TDM_TW_QW], 4) == 0;
    tdm_scorer_free(&sc);
    return ok;
}

/* With terms/bmax not NULL: the batch's term table and block bounds as the
 * device left them (malloc'ed), for the tests. */
static int batch_run(const tdm_sdev *sd, uint32_t ndocs, tdm_sbq *const *qs, uint32_t n,
                     int salg, uint32_t k, uint32_t **terms, float **bmax, tdm_err *err)
{
    if (salg == TDM_SALG_AND && qs[0]->pl.and_wu) /* Wu's mapping: a work-item per lead element */
        return tdm_search_dev_batch_and(sd, qs, n, k, NULL, err);
    host_side h;
    uint32_t p2 = tdm_pow2_at_least(k), launches = 0;
    uint64_t up = 0;
    const tdm_sprep *p0 = &qs[0]->p;
    tdm_sprof pf; /* TANDEM_SEARCH_PROFILE: rows "batch: ..." */
    tdm_sprof_begin(&pf, salg, k);
    double t = tdm_sprof_now();
    int bmode = qs[0]->pl.bounds; /* the planner's (tdm_splan.bounds) */
    for (uint32_t i = 0; bmode == TDM_SBOUNDS_STORED && i < n; i++)
        if (!stored_apply(sd->res.r, qs[i]))
            bmode = TDM_SBOUNDS_HOST;
    /* the host's bounds go up: made where the preparation left them */
    for (uint32_t i = 0; bmode == TDM_SBOUNDS_HOST && i < n; i++) {
        int rc = tdm_sprep_bounds_fill(&qs[i]->p, err);
        if (rc)
            return rc;
    }
    /* the queries' own plans, given back if the batch fails: the caller
       reruns them alone, and the batch's ranges (size_query) are not theirs
       (on the H200 a 10M batch refused by its size reran its 2,000 AND
       queries at 14 ms each on the batch's plans) */
    tdm_splan *own = malloc((size_t)n * sizeof *own);
    if (!own)
        return tdm_err_set(err, TDM_ERR_NOMEM, "search batch: out of memory for %u queries", n);
    for (uint32_t i = 0; i < n; i++)
        own[i] = qs[i]->pl;
    int rc = build_host(sd, ndocs, qs, n, salg, k, bmode, &h, err);
    tdm_sprof_host(&pf, "batch: host tables", t);
    t = tdm_sprof_now();
    dev_side *dsp = bpool_take((tdm_sdev *)sd);
    if (!dsp) {
        free(own);
        host_free(&h);
        return tdm_err_set(err, TDM_ERR_NOMEM, "search batch: out of memory");
    }
    dev_side ds = *dsp; /* a copy: the pool entry is updated at the end */
    if (rc == TDM_OK)
        rc = make_device(sd, &h, qs, n, p2, &ds, &up, err);
    tdm_sprof_host(&pf, "batch: buffers and uploads", t);
    if (rc == TDM_OK)
        rc = run_device(sd, ndocs, &h, n, salg, (uint32_t)p0->kind, p0->c0, p0->c1, k, p2,
                        &ds, &launches, &pf, err);
    if (rc == TDM_OK && h.queue) {
        t = tdm_sprof_now();
        rc = host_merge(&h, n, k, p2, err);
        tdm_sprof_host(&pf, "batch: host merge (queue)", t);
    }
    if (rc == TDM_OK && terms)
        rc = read_back(sd->d, &h, &ds, terms, bmax, err);
    tdm_sprof_end(&pf, rc == TDM_OK);
    if (rc)
        tdm_search_batch_drain(sd->d);
    for (uint32_t i = 0; rc == TDM_OK && i < n; i++) {
        const uint64_t *o = h.out + (size_t)i * (p2 + 2);
        tdm_sout *so = &qs[i]->so;
        uint32_t m = (uint32_t)o[0], st = (uint32_t)o[1];
        if (st) /* a damaged list somewhere in the batch: the caller reruns them alone */
            rc = tdm_err_set(err, TDM_ERR_CORRUPT, "search batch: decode status %u", st);
        else if (m > k)
            rc = tdm_err_set(err, TDM_ERR_INTERNAL, "search merge: %u results for k = %u", m, k);
        if (rc)
            break;
        memcpy(so->keys, o + 2, (size_t)m * 8);
        so->n = m;
        so->total = (uint32_t)(o[0] >> 32);
        so->launches = launches;
        so->bytes_up = up;
        so->bytes_down = h.queue ? (uint64_t)h.nheap * 8 + (h.nranges + 1) * 4
                                 : (uint64_t)n * (p2 + 2) * 8;
        qs[i]->batch = n;
    }
    for (uint32_t i = 0; rc && i < n; i++)
        qs[i]->pl = own[i];
    free(own);
    /* its commands are done (the download blocked, or the drain above); out
       of device memory, no buffer is kept for the next batch */
    *dsp = ds;
    if (rc == TDM_ERR_DEVICE_MEMORY) {
        dev_free(sd->d, dsp);
        bpool_drop(sd);
    } else {
        bpool_give((tdm_sdev *)sd, dsp);
    }
    host_free(&h);
    return rc;
}

int tdm_search_batch_zr(const tdm_sbq *it, int salg)
{
    int pruning = salg == TDM_SALG_WAND || salg == TDM_SALG_BMW || salg == TDM_SALG_MAXSCORE;
    return !(salg == TDM_SALG_AND && it->pl.and_wu) && !(pruning && it->p.device_bounds) &&
           it->pl.variant == TDM_VARIANT_COMPRESSED && it->p.max_block;
}

int tdm_search_dev_batch(const tdm_sdev *sd, uint32_t ndocs, tdm_sbq *const *qs, uint32_t n,
                         int salg, uint32_t k, tdm_err *err)
{
    return batch_run(sd, ndocs, qs, n, salg, k, NULL, NULL, err);
}

int tdm_search_dev_batch_tables(const tdm_sdev *sd, uint32_t ndocs, tdm_sbq *const *qs,
                                uint32_t n, int salg, uint32_t k, uint32_t **terms, float **bmax,
                                size_t *nterms, size_t *nbmax, tdm_err *err)
{
    *terms = NULL;
    *bmax = NULL;
    *nterms = *nbmax = 0;
    for (uint32_t i = 0; i < n; i++) {
        *nterms += qs[i]->p.nt;
        *nbmax += qs[i]->p.nbmax;
    }
    int rc = batch_run(sd, ndocs, qs, n, salg, k, terms, bmax, err);
    if (rc) {
        free(*terms);
        free(*bmax);
        *terms = NULL;
        *bmax = NULL;
    }
    return rc;
}
