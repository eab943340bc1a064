/* The partitioned and split handles (partition.h, docs/PARTITION.md):
 * their open (shards made in memory or a split's files, each a handle
 * with its own lane; a split handle's whole index beside them), close,
 * and the calls search_api.c hands them. A query runs in partition_run.c
 * or, on a split handle, as split.c chooses; a batch in
 * partition_batch.c; partition_priv.h lists the files. */
#include "partition.h"

#include <stdlib.h>

#include "engine/engine.h"
#include "index/index_priv.h"
#include "index/shard.h"
#include "drive/search.h"
#include "drive/search_run.h"
#include "partition_priv.h"
#include "sched.h"
#include "sched_priv.h"

/* ---- open and close */

/* s's partitioned state for n partitions. */
static int alloc_parts(tdm_search *s, int n, tdm_err *err)
{
    s->part = calloc(1, sizeof *s->part);
    s->parts = calloc((size_t)n, sizeof *s->parts);
    if (!s->part || !s->parts)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    return TDM_OK;
}

/* Partition p of s: the shard sr (the handle takes it) resident on engine
 * device dev, with its own lane. */
static int open_part(tdm_engine *engine, tdm_search *s, tdm_ireader *sr, int p, int dev,
                     tdm_err *err)
{
    int rc = tdm_search_handle_open_part(engine, sr, dev, &s->parts[p], err);
    if (rc == TDM_OK) {
        s->nparts = p + 1;
        rc = tdm_sched_open(s->parts[p], &s->parts[p]->sched, err);
    }
    return rc;
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
            (rc = tdm_part_split_fits(r, tdm_ireader_info_get(sr)->section_size, 0,
                                      tdm_engine_device(engine, p), err)) != TDM_OK)
            tdm_ireader_close(sr);
        if (rc == TDM_OK)
            rc = open_part(engine, s, sr, p, p, err);
        if (rc) {
            tdm_err e = {0};
            tdm_err_copy(&e, err);
            rc = tdm_part_fail(s, p, rc, &e, err);
        }
    }
    return rc;
}

/* The engine's devices, at most a lane each. */
static int part_count(tdm_engine *engine)
{
    int n = tdm_engine_device_count(engine);
    return n > TDM_SCHED_MAX_LANES ? TDM_SCHED_MAX_LANES : n;
}

int tdm_part_open(tdm_engine *engine, const tdm_index *index, tdm_search **out, tdm_err *err)
{
    *out = NULL;
    int n = part_count(engine);
    tdm_search *s = NULL;
    int rc = tdm_search_handle_open_bare(engine, index, &s, err);
    if (rc)
        return rc;
    rc = alloc_parts(s, n, err);
    if (rc == TDM_OK)
        rc = open_parts(engine, s, tdm_index_ireader(index), n, err);
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
    int n = part_count(engine);
    const tdm_ireader *r = tdm_index_ireader(index);
    /* refused before anything is uploaded where a shard's estimate does
       not fit beside the whole index; the shards made are checked again */
    int rc = tdm_part_split_fits_est(engine, r, n, err);
    if (rc)
        return rc;
    tdm_search *s = NULL;
    rc = tdm_search_handle_open(engine, index, &s, err); /* whole on every device */
    if (rc)
        return rc;
    if ((rc = alloc_parts(s, n, err)) != TDM_OK) {
        free(s->part);
        s->part = NULL;
        tdm_search_handle_close(s);
        return rc;
    }
    s->part->split = 1;
    s->part->split_min = tdm_split_threshold(engine, n);
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

/* Partition p of s from shard file sr, on engine device p % ndev: several
 * a device where the shards outnumber the devices, each its own handle and
 * lane there. A failure names the shard. */
static int open_shard(tdm_engine *engine, tdm_search *s, tdm_ireader *sr, size_t p, int ndev,
                      tdm_err *err)
{
    const tdm_ireader_info *in = tdm_ireader_info_get(sr);
    int dev = (int)(p % (size_t)ndev);
    s->part->bounds[p] = in->doc_lo;
    s->part->bounds[p + 1] = in->doc_hi;
    int rc = open_part(engine, s, tdm_ireader_ref(sr), (int)p, dev, err);
    if (rc) {
        tdm_err e = {0};
        tdm_err_copy(&e, err);
        rc = tdm_err_set(err, rc, "shard %zu (%s, device %d): %s", p, tdm_ireader_path(sr),
                         dev, tdm_err_msg(&e));
        tdm_err_clear(&e);
    }
    return rc;
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
    rc = alloc_parts(s, (int)n, err);
    if (rc == TDM_OK)
        s->part->files = 1;
    for (size_t p = 0; rc == TDM_OK && p < n; p++)
        rc = open_shard(engine, s, rs[p], p, ndev, err);
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

/* ---- the calls */

int tdm_part_search(tdm_search *s, const tdm_search_query *q, const tdm_search_options *opts,
                    tdm_search_result **out, tdm_err *err)
{
    *out = NULL;
    double t0 = tdm_sched_now();
    tdm_search_options o;
    int rc = tdm_search_options_check(opts, &o, err);
    if (rc == TDM_OK && s->part->split)
        return tdm_split_search(s, q, opts, &o, t0, out, err);
    if (rc == TDM_OK)
        rc = tdm_part_check(s, o.device, o.policy, err);
    size_t nterms;
    uint32_t unknown;
    if (rc || (rc = tdm_part_whole_query(s, q, &nterms, &unknown, NULL, err)))
        return rc;
    return tdm_part_run(s, q, &o, nterms, unknown, t0, out, err);
}

int tdm_part_batch(tdm_search *s, const tdm_search_query *queries, size_t nq,
                   const tdm_search_options *o, tdm_search_result **results, tdm_err *err)
{
    if (s->part->split) /* a split handle's batches run whole on its lanes */
        return tdm_sched_batch_search(s->sched, queries, nq, o, results, err);
    int rc = tdm_part_check(s, o->device, o->policy, err);
    return rc ? rc : tdm_part_batch_run(s, queries, nq, o, results, err);
}
