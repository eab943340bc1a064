/* A partitioned search handle (partition.h, docs/PARTITION.md): open,
 * fan-out and exact merge of single queries and batches, counters; and
 * the split handle, which keeps the whole index beside the partitions and
 * chooses per query. */
#include "partition.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/engine.h"
#include "index/index_priv.h"
#include "index/shard.h"
#include "drive/search.h"
#include "drive/search_run.h"
#include "resident/resident.h"
#include "runtime/settings.h"
#include "runtime/tune_table.h"
#include "sched.h"
#include "sched_priv.h"

/* What a partitioned handle keeps besides its partitions' handles. */
struct tdm_part {
    uint32_t bounds[TDM_SCHED_MAX_LANES + 1]; /* partition i: documents [bounds[i], bounds[i+1]) */
    int files;  /* the shards are a split's files (tdm_index_open_shards): the handle's own
                   reader is shard 0's, not the whole index's */
    /* A split handle (TDM_PARTITION_SPLIT): the handle itself also holds
     * the whole index on every device, with its lanes (s->sched), which
     * run batches and the short single queries; the partitions run the
     * long ones. */
    int split;
    uint64_t split_min;  /* postings from which a single query splits */
    int split_off;       /* a partition's lane died: every query whole from then on
                            (atomic) */
    uint64_t nsplit;     /* single queries run on every partition (atomic) */
    uint64_t nfallback;  /* split queries a failing partition sent whole (atomic) */
};

/* ---- open and close */

/* Partition p's error as the call's: named. */
static int part_fail(const tdm_search *s, int p, int rc, tdm_err *from, tdm_err *err)
{
    rc = tdm_err_set(err, rc, "partition %d (device %d): %s", p,
                     s->parts[p] ? s->parts[p]->device_base : p, tdm_err_msg(from));
    tdm_err_clear(from);
    return rc;
}


/* Whether engine device i runs a GPU lane: its item of the test switch
 * TANDEM_LANE_KINDS, else its type, as sched.c's lane_kinds reads them (a
 * malformed switch is refused there, when the scheduler opens). */
static int device_gpu(tdm_engine *engine, int i)
{
    const tdm_device *d = tdm_engine_device(engine, i);
    const tdm_device *d0 = tdm_engine_device(engine, 0);
    const char *p = d0->settings && d0->settings->lane_kinds ? d0->settings->lane_kinds : "";
    for (int k = 0; k < i && *p; k++) {
        p += strcspn(p, ",");
        p += *p == ',';
    }
    if (*p && !strncasecmp(p, "gpu", 3))
        return 1;
    if (*p && !strncasecmp(p, "cpu", 3))
        return 0;
    return d->info.type != TDM_DEVICE_CPU;
}

/* A shard's device sections (size[0 .. 7]) estimated from the whole
 * index's before any shard is made (making them costs a decode and an
 * encode of every list): the lists' sections (ARENA and the block table)
 * split n ways with an eighth more (the split is by document length, not
 * postings), plus a row a list in the block table and 64 bytes a list in
 * the arena (the block the cut falls in, a list's parameters), at most the
 * whole's; the descriptors, the codecs and DOCLENS whole (every shard keeps
 * them). An estimate: a shard that turns out larger than its budget takes
 * the list cache, as any index does. */
static void shard_sizes(const tdm_ireader *r, int n, uint64_t *size)
{
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    uint64_t rows = in->block_entries ? in->block_entries : 1;
    for (unsigned s = 0; s <= TDM_SEC_DOCLENS; s++) {
        uint64_t v = in->section_size[s], share = v / (uint64_t)n + v / (8u * (uint64_t)n);
        size[s] = v;
        if (s == TDM_SEC_ARENA)
            size[s] = share + in->nterms * 64; /* a list's parameters, a cut block's padding */
        else if (s >= TDM_SEC_BLOCK_LAST && s <= TDM_SEC_BLOCK_MAX)
            size[s] = share + in->nterms * (v / rows); /* a cut block's row */
        if (size[s] > v)
            size[s] = v;
    }
}

int tdm_part_wanted(tdm_engine *engine, const tdm_index *index)
{
    int n = tdm_engine_device_count(engine);
    tdm_device *d0 = tdm_engine_device(engine, 0);
    int mode = d0->settings ? d0->settings->partition : TDM_PARTITION_AUTO;
    if (n < 2 || mode == TDM_PARTITION_OFF)
        return 0;
    if (mode == TDM_PARTITION_ON || mode == TDM_PARTITION_SPLIT)
        return mode;
    if (n > TDM_SCHED_MAX_LANES)
        n = TDM_SCHED_MAX_LANES;
    /* auto: GPUs only (a CPU beside them would hold a partition every
       query waits for, and cpu-only or gpu-only would exclude a
       partition's only lane) */
    for (int i = 0; i < n; i++)
        if (!device_gpu(engine, i))
            return 0;
    /* ... when the whole index does not fit one of them (else each holds
       it whole, and its lanes share the queries) ... */
    const tdm_ireader *r = tdm_index_ireader(index);
    int whole = 1;
    for (int i = 0; i < n; i++)
        whole &= tdm_resident_fits_full(r, tdm_engine_device(engine, i));
    if (whole)
        return 0;
    /* ... and a shard fits every one (else the list cache, which serves
       an index of any size, on each device) */
    uint64_t size[TDM_SEC_DOCLENS + 1];
    shard_sizes(r, n, size);
    for (int i = 0; i < n; i++)
        if (!tdm_resident_fits_sizes(size, tdm_engine_device(engine, i)))
            return 0;
    return TDM_PARTITION_ON;
}

/* Whether the whole index r and a shard of device sections size[] (an
 * estimate, or the shard made) fit device d together, as a split handle
 * holds them; else TDM_ERR_DEVICE_MEMORY saying so and what to use. */
static int split_fits(const tdm_ireader *r, const uint64_t *size, int est, tdm_device *d,
                      tdm_err *err)
{
    uint64_t whole = tdm_resident_bytes_needed(r), shard = 0;
    if (tdm_resident_fits_full(r, d) && tdm_resident_fits_beside(size, whole, d))
        return TDM_OK;
    for (unsigned s = 0; s <= TDM_SEC_DOCLENS; s++)
        shard += size[s];
    return tdm_err_set(err, TDM_ERR_DEVICE_MEMORY,
                       "partition split: %s: the whole index (%llu bytes) and a shard "
                       "(%s%llu bytes) do not fit %s together (%llu bytes of memory, budget "
                       "%llu, 0: none): use partition on (a shard a device) or off (the whole "
                       "index on each), TANDEM_PARTITION or the engine option "
                       "(docs/PARTITION.md)",
                       tdm_ireader_path(r), (unsigned long long)whole, est ? "about " : "",
                       (unsigned long long)shard, d->info.name,
                       (unsigned long long)d->info.global_mem_bytes,
                       (unsigned long long)(d->settings ? d->settings->device_memory : 0));
}

/* A split handle's threshold: TANDEM_SPLIT_MIN_POSTINGS, else the largest
 * of its devices' rows (a query splits only where every kind would). */
static uint64_t split_threshold(tdm_engine *engine, int n)
{
    uint64_t t = tdm_settings_tuning(tdm_engine_device(engine, 0)->settings)->split_min_postings;
    if (t)
        return t;
    for (int i = 0; i < n; i++) {
        uint64_t v = tdm_tune_row_of(&tdm_engine_device(engine, i)->info)->split_min_postings;
        t = v > t ? v : t;
    }
    return t;
}

/* s's partitions from the whole index r: shard p made in memory and
 * resident on engine device p with its own lane, for p < n (a split
 * handle's each checked to fit beside the whole index). s->nparts counts
 * those opened; the first failure is returned, naming its partition. */
static int open_parts(tdm_engine *engine, tdm_search *s, const tdm_ireader *r, int n,
                      tdm_err *err)
{
    int rc = tdm_shard_bounds(r, (uint32_t)n, s->part->bounds, err);
    for (int p = 0; rc == TDM_OK && p < n; p++) {
        tdm_ireader *sr = NULL;
        rc = tdm_shard_open_mem(r, (uint32_t)n, s->part->bounds, (uint32_t)p, 0, &sr, err);
        if (rc == TDM_OK && s->part->split &&
            (rc = split_fits(r, tdm_ireader_info_get(sr)->section_size, 0,
                             tdm_engine_device(engine, p), err)) != TDM_OK)
            tdm_ireader_close(sr);
        if (rc == TDM_OK)
            rc = tdm_search_handle_open_part(engine, sr, p, &s->parts[p], err);
        if (rc == TDM_OK) {
            s->nparts = p + 1;
            rc = tdm_sched_open(s->parts[p], &s->parts[p]->sched, err);
        }
        if (rc) {
            tdm_err e = {0};
            tdm_err_copy(&e, err);
            rc = part_fail(s, p, rc, &e, err);
        }
    }
    return rc;
}

/* s's partitioned state for n partitions. */
static int alloc_parts(tdm_search *s, int n, tdm_err *err)
{
    s->part = calloc(1, sizeof *s->part);
    s->parts = calloc((size_t)n, sizeof *s->parts);
    if (!s->part || !s->parts)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    return TDM_OK;
}

int tdm_part_open(tdm_engine *engine, const tdm_index *index, tdm_search **out, tdm_err *err)
{
    *out = NULL;
    int n = tdm_engine_device_count(engine);
    if (n > TDM_SCHED_MAX_LANES)
        n = TDM_SCHED_MAX_LANES;
    const tdm_ireader *r = tdm_index_ireader(index);
    tdm_search *s = NULL;
    int rc = tdm_search_handle_open_bare(engine, index, &s, err);
    if (rc)
        return rc;
    rc = alloc_parts(s, n, err);
    if (rc == TDM_OK)
        rc = open_parts(engine, s, r, n, err);
    if (rc) {
        tdm_part_close(s);
        return rc;
    }
    *out = s;
    return TDM_OK;
}

int tdm_part_open_split(tdm_engine *engine, const tdm_index *index, tdm_search **out,
                        tdm_err *err)
{
    *out = NULL;
    int n = tdm_engine_device_count(engine);
    if (n > TDM_SCHED_MAX_LANES)
        n = TDM_SCHED_MAX_LANES;
    const tdm_ireader *r = tdm_index_ireader(index);
    /* refused before anything is uploaded where a shard's estimate does
       not fit beside the whole index; the shards made are checked again */
    uint64_t size[TDM_SEC_DOCLENS + 1];
    shard_sizes(r, n, size);
    for (int i = 0; i < n; i++) {
        int rc = split_fits(r, size, 1, tdm_engine_device(engine, i), err);
        if (rc)
            return rc;
    }
    tdm_search *s = NULL;
    int rc = tdm_search_handle_open(engine, index, &s, err); /* whole on every device */
    if (rc)
        return rc;
    if ((rc = alloc_parts(s, n, err)) != TDM_OK) {
        free(s->part);
        s->part = NULL;
        tdm_search_handle_close(s);
        return rc;
    }
    s->part->split = 1;
    s->part->split_min = split_threshold(engine, n);
    rc = tdm_sched_open(s, &s->sched, err);
    if (rc == TDM_OK)
        rc = open_parts(engine, s, r, n, err);
    /* a partition's lane shares its device's stored cost model with the
       whole index's lane there: only the whole one's (its queries are the
       device's whole queries) is written back at close */
    for (int p = 0; rc == TDM_OK && p < n; p++)
        s->parts[p]->sched->lanes[0].model_path[0] = 0;
    if (rc) {
        tdm_part_close(s);
        return rc;
    }
    *out = s;
    return TDM_OK;
}

int tdm_part_open_shards(tdm_engine *engine, const tdm_index *index, tdm_search **out,
                         tdm_err *err)
{
    *out = NULL;
    tdm_ireader *const *rs;
    size_t n = tdm_index_shards(index, &rs);
    int ndev = tdm_engine_device_count(engine);
    if (n > TDM_SCHED_MAX_LANES)
        return tdm_err_set(err, TDM_ERR_LIMIT, "%s: %zu shards: a search handle serves at most "
                           "%d (a lane each); open fewer a process (tandem-mpi, docs/MPI.md)",
                           tdm_ireader_path(rs[0]), n, TDM_SCHED_MAX_LANES);
    if (ndev < 1)
        return tdm_err_set(err, TDM_ERR_NO_DEVICE, "the engine has no device");
    tdm_search *s = NULL;
    int rc = tdm_search_handle_open_bare(engine, index, &s, err); /* shard 0's reader */
    if (rc)
        return rc;
    s->part = calloc(1, sizeof *s->part);
    s->parts = calloc(n, sizeof *s->parts);
    if (!s->part || !s->parts)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (rc == TDM_OK)
        s->part->files = 1;
    for (size_t p = 0; rc == TDM_OK && p < n; p++) {
        const tdm_ireader_info *in = tdm_ireader_info_get(rs[p]);
        s->part->bounds[p] = in->doc_lo;
        s->part->bounds[p + 1] = in->doc_hi;
        /* shard p on device p % ndev: several a device where the shards
           outnumber the devices, each its own handle and lane there */
        rc = tdm_search_handle_open_part(engine, tdm_ireader_ref(rs[p]), (int)(p % (size_t)ndev),
                                         &s->parts[p], err);
        if (rc == TDM_OK) {
            s->nparts = (int)p + 1;
            rc = tdm_sched_open(s->parts[p], &s->parts[p]->sched, err);
        }
        if (rc) {
            tdm_err e = {0};
            tdm_err_copy(&e, err);
            rc = tdm_err_set(err, rc, "shard %zu (%s, device %d): %s", p, tdm_ireader_path(rs[p]),
                             (int)(p % (size_t)ndev), tdm_err_msg(&e));
            tdm_err_clear(&e);
        }
    }
    if (rc) {
        tdm_part_close(s);
        return rc;
    }
    *out = s;
    return TDM_OK;
}

void tdm_part_close(tdm_search *s)
{
    if (!s)
        return;
    int stuck = 0;
    for (int p = 0; s->parts && p < s->nparts; p++) {
        stuck |= tdm_sched_close(s->parts[p]->sched);
        s->parts[p]->sched = NULL;
    }
    if (s->part && s->part->split) { /* the whole index's lanes */
        stuck |= tdm_sched_close(s->sched);
        s->sched = NULL;
    }
    if (stuck) /* a run stuck in its device may still read the handles: they stay */
        return;
    free(s->part);
    s->part = NULL;
    tdm_search_handle_close(s); /* and the partitions' handles */
}

/* ---- merging */

static int better(const tdm_search_hit *a, const tdm_search_hit *b)
{
    return a->score > b->score || (a->score == b->score && a->docid < b->docid);
}

/* The whole index's top k from the partitions' lists (each best first):
 * score descending, docid ascending. A hit keeps its name from its
 * partition's shard, which holds its own documents' names (the handle's
 * own reader may be shard 0's: tdm_part_open_shards); the shards live as
 * long as the handle. */
static int merge_hits(tdm_search_result *const *res, int n, uint32_t k, tdm_search_result *out,
                      tdm_err *err)
{
    size_t at[TDM_SCHED_MAX_LANES] = {0}, total = 0;
    for (int p = 0; p < n; p++)
        total += res[p]->n;
    size_t m = total < k ? total : k;
    out->hits = calloc(m ? m : 1, sizeof *out->hits);
    if (!out->hits)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for %zu hits", m);
    for (size_t h = 0; h < m; h++) {
        int best = -1;
        for (int p = 0; p < n; p++)
            if (at[p] < res[p]->n &&
                (best < 0 || better(&res[p]->hits[at[p]], &res[best]->hits[at[best]])))
                best = p;
        out->hits[h] = res[best]->hits[at[best]++];
    }
    out->n = m;
    return TDM_OK;
}

/* The merged result's account: the partitions' work added up, waits the
 * longest, the device the first partition's. */
static void merge_account(const tdm_search *s, tdm_search_result *const *res, int n,
                          tdm_search_result *out)
{
    out->device = s->parts[0]->device_base;
    out->partitions = (uint32_t)n;
    out->variant = res[0]->variant;
    out->policy = res[0]->policy;
    out->load_mode = res[0]->load_mode;
    out->first_device = -1;
    for (int p = 0; p < n; p++) {
        const tdm_search_result *r = res[p];
        out->ranges += r->ranges;
        out->launches += r->launches;
        out->bytes_up += r->bytes_up;
        out->bytes_down += r->bytes_down;
        out->handovers += r->handovers;
        out->steps += r->steps;
        out->migrations += r->migrations;
        out->carried_bytes += r->carried_bytes;
        out->batch = r->batch > out->batch ? r->batch : out->batch;
        if (r->queue_seconds > out->queue_seconds)
            out->queue_seconds = r->queue_seconds;
        if (r->predicted_seconds > out->predicted_seconds)
            out->predicted_seconds = r->predicted_seconds;
    }
}

static void free_results(tdm_search_result **res, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tdm_search_result_release(res[i]);
        res[i] = NULL;
    }
}

static size_t hits_of(tdm_search_result *const *res, int n)
{
    size_t t = 0;
    for (int p = 0; p < n; p++)
        t += res[p]->n;
    return t;
}

/* ---- one query */

/* q with o on every partition at once: one job on each partition's lane,
 * the last run in the caller's thread (when its lane is free). Every
 * res[p] is set, or the first failing partition's error is returned. */
static int fan_out(tdm_search *s, const tdm_search_query *q, const tdm_search_options *o,
                   tdm_search_result **res, tdm_err *err)
{
    int n = s->nparts, bad = -1, rc = TDM_OK;
    tdm_sched_call *calls[TDM_SCHED_MAX_LANES] = {0};
    tdm_err e[TDM_SCHED_MAX_LANES];
    int rcs[TDM_SCHED_MAX_LANES] = {0};
    memset(e, 0, sizeof e);
    for (int p = 0; p < n - 1 && bad < 0; p++)
        if ((rcs[p] = tdm_sched_begin(s->parts[p]->sched, q, o, &calls[p], &e[p])))
            bad = p;
    if (bad < 0)
        rcs[n - 1] = tdm_sched_search(s->parts[n - 1]->sched, q, o, &res[n - 1], &e[n - 1]);
    for (int p = 0; p < n - 1; p++)
        if (calls[p])
            rcs[p] = tdm_sched_end(calls[p], &res[p], &e[p]);
    for (int p = 0; p < n; p++)
        if (rcs[p] && rc == TDM_OK)
            rc = part_fail(s, p, rcs[p], &e[p], err);
    for (int p = 0; p < n; p++)
        tdm_err_clear(&e[p]);
    if (rc)
        free_results(res, (size_t)n);
    return rc;
}

static int id_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* On shard files, the distinct terms of q that some shard holds: shard 0
 * lacks (`absent`) the terms without postings in it, which other shards
 * may hold; every shard has the whole lexicon, in the same order, so the
 * union of their ids is the whole index's known terms. */
static int union_terms(tdm_search *s, const tdm_search_query *q, size_t *nterms, tdm_err *err)
{
    uint64_t *ids = NULL;
    size_t n = 0, cap = 0;
    int rc = TDM_OK;
    for (int p = 0; rc == TDM_OK && p < s->nparts; p++) {
        tdm_query pq;
        tdm_query_init(&pq);
        rc = tdm_search_query_build(s->parts[p], q, &pq, err);
        if (rc == TDM_OK && n + pq.nterms > cap) {
            cap = 2 * (n + pq.nterms);
            uint64_t *g = realloc(ids, cap * sizeof *ids);
            if (!g)
                rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
            else
                ids = g;
        }
        for (size_t t = 0; rc == TDM_OK && t < pq.nterms; t++)
            ids[n++] = pq.terms[t].id;
        tdm_query_free(&pq);
    }
    if (rc == TDM_OK && n)
        qsort(ids, n, sizeof *ids, id_cmp);
    size_t d = 0;
    for (size_t i = 0; rc == TDM_OK && i < n; i++)
        d += i == 0 || ids[i] != ids[i - 1];
    free(ids);
    *nterms = d;
    return rc;
}

/* The whole index's view of q: its distinct known terms, unknown ones,
 * and (postings not NULL) the sum of its lists' lengths. */
static int whole_query(tdm_search *s, const tdm_search_query *q, size_t *nterms,
                       uint32_t *unknown, uint64_t *postings, tdm_err *err)
{
    tdm_query wq;
    tdm_query_init(&wq);
    int rc = tdm_search_query_build(s, q, &wq, err);
    *nterms = wq.nterms;
    *unknown = wq.unknown;
    for (size_t t = 0; postings && t < wq.nterms; t++)
        *postings += wq.terms[t].df;
    if (rc == TDM_OK && s->part->files && wq.absent)
        rc = union_terms(s, q, nterms, err);
    tdm_query_free(&wq);
    return rc;
}

/* The first partition whose only lane a request's policy (DEFAULT: the
 * engine's) excludes, else -1. */
static int excluded_part(const tdm_search *s, int policy)
{
    if (policy == TDM_POLICY_DEFAULT)
        policy = s->parts[0]->sched->policy;
    for (int p = 0; p < s->nparts; p++) {
        int gpu = s->parts[p]->sched->lanes[0].gpu;
        if ((policy == TDM_POLICY_CPU_ONLY && gpu) || (policy == TDM_POLICY_GPU_ONLY && !gpu))
            return p;
    }
    return -1;
}

/* A request's policy may not exclude a partition's lane: it is the only
 * one holding the partition's documents, so the call is refused up front,
 * saying why, rather than failing in a partition. */
static int check_policy(const tdm_search *s, int policy, tdm_err *err)
{
    int p = excluded_part(s, policy);
    if (p < 0)
        return TDM_OK;
    if (policy == TDM_POLICY_DEFAULT)
        policy = s->parts[0]->sched->policy;
    int gpu = s->parts[p]->sched->lanes[0].gpu;
    return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                       "policy %s: the search handle is partitioned (every query runs "
                       "on every partition; docs/PARTITION.md) and partition %d's only "
                       "lane, device %d, is a %s lane: use hybrid, best or direct, or "
                       "TANDEM_PARTITION=off",
                       tdm_policy_name(policy), p, s->parts[p]->device_base,
                       gpu ? "GPU" : "CPU");
}

/* q with the checked options o on every partition at once, merged; nterms
 * and unknown the whole index's view of it, t0 when the call began. */
static int part_run(tdm_search *s, const tdm_search_query *q, const tdm_search_options *o,
                    size_t nterms, uint32_t unknown, double t0, tdm_search_result **out,
                    tdm_err *err)
{
    int alg = tdm_search_auto_alg(o->algorithm, nterms), ran = alg;
    tdm_search_result *res[TDM_SCHED_MAX_LANES] = {0};
    tdm_search_options po = *o;
    po.algorithm = alg == TDM_ALGO_AND_OR ? TDM_ALGO_AND : alg;
    int rc = fan_out(s, q, &po, res, err);
    if (rc == TDM_OK && alg == TDM_ALGO_AND_OR) {
        /* AND-then-OR: AND when the partitions' AND matches reach k
           together (each answers min(k, its matches)), else OR */
        if (hits_of(res, s->nparts) < o->k) {
            free_results(res, (size_t)s->nparts);
            po.algorithm = TDM_ALGO_OR;
            rc = fan_out(s, q, &po, res, err);
        }
    }
    tdm_search_result *r = rc ? NULL : calloc(1, sizeof *r);
    if (rc == TDM_OK && !r)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (rc == TDM_OK && (rc = merge_hits(res, s->nparts, o->k, r, err)) == TDM_OK) {
        merge_account(s, res, s->nparts, r);
        r->algorithm = ran;
        r->terms = (uint32_t)nterms;
        r->unknown = unknown;
        r->seconds = tdm_sched_now() - t0;
        *out = r;
        __atomic_add_fetch(&s->part->nsplit, 1, __ATOMIC_RELAXED);
    } else if (r) {
        tdm_search_result_release(r);
    }
    free_results(res, (size_t)s->nparts); /* NULL after a failed fan-out */
    return rc;
}

/* Errors of a partition's device rather than of the query: a split
 * query failing so is answered whole instead. */
static int device_fault(int rc)
{
    return rc == TDM_ERR_OPENCL || rc == TDM_ERR_BUILD || rc == TDM_ERR_NO_DEVICE ||
           rc == TDM_ERR_DEVICE_MEMORY || rc == TDM_ERR_TIMEOUT || rc == TDM_ERR_INTERNAL;
}

/* Whether some partition's lane has died (its documents have no other). */
static int part_dead(tdm_search *s)
{
    for (int p = 0; p < s->nparts; p++) {
        tdm_sched_stats st;
        memset(&st, 0, sizeof st);
        st.struct_size = sizeof st;
        tdm_sched_stats_get(s->parts[p]->sched, &st);
        if (!st.lanes[0].alive)
            return 1;
    }
    return 0;
}

/* A split handle's single query (o checked from opts): on every partition
 * at once when its lists hold split_min postings or more and nothing asks
 * for one lane (a pin, the direct policy, a policy that excludes a
 * partition's lane), else whole on the lanes as an unpartitioned handle
 * runs it. A split query whose partition fails on its device runs whole
 * (never a partial answer), and once a partition's lane is dead every
 * query does. */
static int split_search(tdm_search *s, const tdm_search_query *q, const tdm_search_options *opts,
                        const tdm_search_options *o, double t0, tdm_search_result **out,
                        tdm_err *err)
{
    struct tdm_part *pt = s->part;
    size_t nterms = 0;
    uint32_t unknown = 0;
    uint64_t postings = 0;
    tdm_err e = {0};
    int policy = o->policy ? o->policy : s->sched->policy;
    int split = !__atomic_load_n(&pt->split_off, __ATOMIC_RELAXED) && o->device < 0 &&
                policy != TDM_POLICY_DIRECT && excluded_part(s, policy) < 0;
    /* a query the whole index cannot build fails on the lanes, as there */
    split = split && whole_query(s, q, &nterms, &unknown, &postings, &e) == TDM_OK &&
            postings >= pt->split_min;
    tdm_err_clear(&e);
    if (split) {
        int rc = part_run(s, q, o, nterms, unknown, t0, out, &e);
        if (rc == TDM_OK || !device_fault(rc)) {
            if (rc)
                rc = tdm_err_copy(err, &e);
            tdm_err_clear(&e);
            return rc;
        }
        tdm_err_clear(&e);
        if (part_dead(s))
            __atomic_store_n(&pt->split_off, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&pt->nfallback, 1, __ATOMIC_RELAXED);
    }
    return tdm_sched_search(s->sched, q, opts, out, err);
}

int tdm_part_search(tdm_search *s, const tdm_search_query *q, const tdm_search_options *opts,
                    tdm_search_result **out, tdm_err *err)
{
    *out = NULL;
    double t0 = tdm_sched_now();
    tdm_search_options o;
    int rc = tdm_search_options_check(opts, &o, err);
    if (rc == TDM_OK && s->part->split)
        return split_search(s, q, opts, &o, t0, out, err);
    if (rc == TDM_OK && o.device >= 0)
        rc = tdm_err_set(err, TDM_ERR_INVALID_ARG, "device = %d: a partitioned search handle "
                         "runs every query on every partition's device", o.device);
    if (rc == TDM_OK)
        rc = check_policy(s, o.policy, err);
    size_t nterms;
    uint32_t unknown;
    if (rc || (rc = whole_query(s, q, &nterms, &unknown, NULL, err)))
        return rc;
    return part_run(s, q, &o, nterms, unknown, t0, out, err);
}

/* ---- batches */

typedef struct bwork {
    tdm_search *s;
    const tdm_search_query *qs;
    size_t nq;
    tdm_search_options o;
    tdm_search_result **res;  /* [nparts * nq] partition p's at p * nq */
    int rc[TDM_SCHED_MAX_LANES];
    tdm_err e[TDM_SCHED_MAX_LANES];
} bwork;

static void batch_one(void *ctx, size_t p)
{
    bwork *w = ctx;
    w->rc[p] = tdm_sched_batch_search(w->s->parts[p]->sched, w->qs, w->nq, &w->o,
                                      w->res + p * w->nq, &w->e[p]);
}

/* The batch qs[0 .. nq) with o on every partition at once (a thread
 * each); w->res filled, or the first failing partition's error. */
static int batch_fan_out(bwork *w, tdm_err *err)
{
    int n = w->s->nparts, rc = TDM_OK;
    memset(w->rc, 0, sizeof w->rc);
    memset(w->e, 0, sizeof w->e);
    tdm_search_parallel((size_t)n, 1, batch_one, w);
    for (int p = 0; p < n; p++)
        if (w->rc[p] && rc == TDM_OK)
            rc = part_fail(w->s, p, w->rc[p], &w->e[p], err);
    for (int p = 0; p < n; p++)
        tdm_err_clear(&w->e[p]);
    if (rc)
        free_results(w->res, (size_t)n * w->nq);
    return rc;
}

/* Query i's merged result from the partitions' (its own error if any
 * partition failed it, named). */
static tdm_search_result *merge_one(tdm_search *s, tdm_search_result **res, size_t nq, size_t i,
                                    uint32_t k, int *rc, tdm_err *err)
{
    int n = s->nparts;
    tdm_search_result *pr[TDM_SCHED_MAX_LANES], *r = calloc(1, sizeof *r);
    if (!r) {
        *rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int p = 0; p < n; p++)
        pr[p] = res[(size_t)p * nq + i];
    for (int p = 0; p < n; p++)
        if (pr[p]->status) {
            char msg[1024];
            snprintf(msg, sizeof msg, "partition %d (device %d): %s", p,
                     s->parts[p]->device_base, pr[p]->error ? pr[p]->error : "search failed");
            r->status = pr[p]->status;
            r->error = strdup(msg);
            r->hits = calloc(1, sizeof *r->hits);
            r->device = -1;
            return r;
        }
    tdm_err e = {0};
    if ((*rc = merge_hits(pr, n, k, r, &e)) != TDM_OK) {
        tdm_err_copy(err, &e);
        tdm_err_clear(&e);
        tdm_search_result_release(r);
        return NULL;
    }
    merge_account(s, pr, n, r);
    r->algorithm = pr[0]->algorithm;
    r->terms = pr[0]->terms;
    r->unknown = pr[0]->unknown;
    return r;
}

/* The queries AND-then-OR must run again as OR (the partitions' AND
 * matches below k together): their indexes into idx, how many. */
static size_t short_of_k(const bwork *w, size_t *idx)
{
    size_t m = 0;
    for (size_t i = 0; i < w->nq; i++) {
        size_t hits = 0;
        int ok = 1;
        for (int p = 0; p < w->s->nparts; p++) {
            const tdm_search_result *r = w->res[(size_t)p * w->nq + i];
            ok &= r->status == TDM_OK;
            hits += r->n;
        }
        if (ok && hits < w->o.k)
            idx[m++] = i;
    }
    return m;
}

/* AND-then-OR's second pass: the queries short of k as OR, their merged
 * results in place of the AND's. */
static int or_pass(bwork *w, tdm_search_result **results, tdm_err *err)
{
    size_t *idx = malloc((w->nq ? w->nq : 1) * sizeof *idx);
    if (!idx)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    size_t m = short_of_k(w, idx), n = (size_t)w->s->nparts;
    int rc = TDM_OK;
    tdm_search_query *sub = m ? malloc(m * sizeof *sub) : NULL;
    bwork *v = m ? malloc(sizeof *v) : NULL;
    if (m && (!sub || !v || !(v->res = calloc(n * m, sizeof *v->res))))
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (m && rc == TDM_OK) {
        for (size_t j = 0; j < m; j++)
            sub[j] = w->qs[idx[j]];
        v->s = w->s;
        v->qs = sub;
        v->nq = m;
        v->o = w->o;
        v->o.algorithm = TDM_ALGO_OR;
        rc = batch_fan_out(v, err);
        for (size_t j = 0; rc == TDM_OK && j < m; j++) {
            tdm_search_result *r = merge_one(w->s, v->res, m, j, w->o.k, &rc, err);
            if (r) {
                r->algorithm = TDM_ALGO_AND_OR;
                tdm_search_result_release(results[idx[j]]);
                results[idx[j]] = r;
            }
        }
        free_results(v->res, n * m);
    }
    if (v)
        free(v->res);
    free(v);
    free(sub);
    free(idx);
    return rc;
}

int tdm_part_batch(tdm_search *s, const tdm_search_query *queries, size_t nq,
                   const tdm_search_options *o, tdm_search_result **results, tdm_err *err)
{
    double t0 = tdm_sched_now();
    if (s->part->split) /* a split handle's batches run whole on its lanes */
        return tdm_sched_batch_search(s->sched, queries, nq, o, results, err);
    if (o->device >= 0)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "device = %d: a partitioned search handle "
                           "runs every query on every partition's device", o->device);
    int rc = check_policy(s, o->policy, err);
    if (rc)
        return rc;
    size_t n = (size_t)s->nparts;
    bwork w = {.s = s, .qs = queries, .nq = nq, .o = *o};
    w.res = calloc(n * (nq ? nq : 1), sizeof *w.res);
    if (!w.res)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (o->algorithm == TDM_ALGO_AND_OR)
        w.o.algorithm = TDM_ALGO_AND;
    rc = batch_fan_out(&w, err);
    for (size_t i = 0; rc == TDM_OK && i < nq; i++)
        results[i] = merge_one(s, w.res, nq, i, o->k, &rc, err);
    if (rc == TDM_OK && o->algorithm == TDM_ALGO_AND_OR)
        rc = or_pass(&w, results, err);
    for (size_t i = 0; rc == TDM_OK && o->algorithm == TDM_ALGO_AND_OR && i < nq; i++)
        if (results[i]->status == TDM_OK)
            results[i]->algorithm = TDM_ALGO_AND_OR; /* as the whole index says */
    for (size_t i = 0; rc == TDM_OK && i < nq; i++) {
        /* the whole index's terms (a shard counts only those it holds) */
        size_t nterms;
        uint32_t unknown;
        if (whole_query(s, &queries[i], &nterms, &unknown, NULL, err) == TDM_OK) {
            results[i]->terms = (uint32_t)nterms;
            results[i]->unknown = unknown;
            if (o->algorithm == TDM_ALGO_AUTO && results[i]->status == TDM_OK)
                results[i]->algorithm = tdm_search_auto_alg(TDM_ALGO_AUTO, nterms);
        } else {
            tdm_err_clear(err);
        }
        results[i]->seconds = tdm_sched_now() - t0;
    }
    free_results(w.res, n * nq);
    if (rc)
        free_results(results, nq);
    free(w.res);
    return rc;
}

/* ---- counters */

/* one's counters added to st's. */
static void add_counters(tdm_sched_stats *st, const tdm_sched_stats *one)
{
    st->submitted += one->submitted;
    st->answered += one->answered;
    st->failed += one->failed;
    st->in_flight += one->in_flight;
    st->direct += one->direct;
    st->stolen += one->stolen;
    st->promoted += one->promoted;
    st->handovers += one->handovers;
    st->batches += one->batches;
    st->batched += one->batched;
    st->mode_switches += one->mode_switches;
    st->window_wait += one->window_wait;
    st->deadline_misses += one->deadline_misses;
    st->stepped += one->stepped;
    st->migrations += one->migrations;
    st->carried_bytes += one->carried_bytes;
    st->pred_n += one->pred_n;
}

void tdm_part_stats(tdm_search *s, tdm_sched_stats *out)
{
    tdm_sched_stats st, one;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    int base = 0; /* a split handle: its whole index's lanes first */
    if (s->part->split) {
        tdm_sched_stats_get(s->sched, &st);
        base = st.nlanes;
    }
    for (int p = 0; p < s->nparts; p++) {
        memset(&one, 0, sizeof one);
        one.struct_size = sizeof one;
        tdm_sched_stats_get(s->parts[p]->sched, &one);
        if (p == 0 && !base)
            st = one;
        else
            add_counters(&st, &one);
        if (base + p < TDM_SCHED_MAX_LANES) {
            st.lanes[base + p] = one.lanes[0];
            st.lanes[base + p].device = s->parts[p]->device_base;
        }
    }
    st.nlanes = base + s->nparts < TDM_SCHED_MAX_LANES ? base + s->nparts : TDM_SCHED_MAX_LANES;
    st.split = __atomic_load_n(&s->part->nsplit, __ATOMIC_RELAXED);
    st.split_fallbacks = __atomic_load_n(&s->part->nfallback, __ATOMIC_RELAXED);
    st.struct_size = sizeof st;
    size_t n = out->struct_size < sizeof st ? out->struct_size : sizeof st;
    memcpy(out, &st, n);
    out->struct_size = n;
}
