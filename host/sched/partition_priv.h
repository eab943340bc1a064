/* Internals of the partitioned and split handles (partition.h,
 * docs/PARTITION.md), shared by the files that hold them:
 *
 *   partition.c        the handles: open (partitioned, split, shard files),
 *                      close, and the entries search_api.c calls
 *   partition_fit.c    which handle an index gets; shards' memory estimates
 *                      and whether a shard fits beside the whole index
 *   partition_run.c    one query on every partition, merged; the whole
 *                      index's view of a query; requests refused up front
 *   partition_batch.c  a batch on every partition, merged query by query
 *   partition_merge.c  the exact top-k merge of the partitions' answers,
 *                      their work and their counters added up
 *   split.c            a split handle's per-query choice: every partition
 *                      or whole, and the fallback to whole
 *
 * Calls go one way only (scripts/circles.sh): partition.c uses the others;
 * split.c and partition_batch.c use partition_run.c; those three use
 * partition_merge.c; partition_fit.c uses none of them.
 *
 * Ownership: the handle (tdm_search) owns its tdm_part (s->part, freed by
 * tdm_part_close) and its partitions' handles (s->parts, closed with it by
 * tdm_search_handle_close); a function handed a result array fills it and
 * the caller owns what it holds. Threads: any number of queries and
 * batches at once on an open handle; a tdm_part's fields are set at open
 * and only read after, but the counters and split_off marked atomic. */
#ifndef TDM_SCHED_PARTITION_PRIV_H
#define TDM_SCHED_PARTITION_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "index/reader.h"
#include "runtime/runtime.h"
#include "sched.h"
#include "tandem.h"

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

/* ---- partition_fit.c */

/* Whether the whole index r and a shard of device sections size[] (est:
 * an estimate, else the shard made) fit device d together, as a split
 * handle holds them; else TDM_ERR_DEVICE_MEMORY saying so and what to
 * use instead. */
int tdm_part_split_fits(const tdm_ireader *r, const uint64_t *size, int est, tdm_device *d,
                        tdm_err *err);
/* The same with an estimated shard of n, on engine devices 0 .. n-1:
 * checked before anything is uploaded. */
int tdm_part_split_fits_est(tdm_engine *engine, const tdm_ireader *r, int n, tdm_err *err);

/* ---- partition_run.c */

/* Partition p's error `from` as the call's, naming the partition and its
 * device, in err; `from` is cleared. Returns rc. */
int tdm_part_fail(const tdm_search *s, int p, int rc, tdm_err *from, tdm_err *err);
/* The whole index's view of q: its distinct known terms (on shard files,
 * the union of the shards'), unknown ones and, postings not NULL, the sum
 * of its lists' lengths added to *postings. */
int tdm_part_whole_query(tdm_search *s, const tdm_search_query *q, size_t *nterms,
                         uint32_t *unknown, uint64_t *postings, tdm_err *err);
/* The first partition whose only lane a request's policy (DEFAULT: the
 * engine's) excludes, else -1. */
int tdm_part_excluded(const tdm_search *s, int policy);
/* A request every partition can run: no pinned device (device >= 0) and
 * no policy excluding a partition's lane; else TDM_ERR_INVALID_ARG saying
 * why. */
int tdm_part_check(const tdm_search *s, int device, int policy, tdm_err *err);
/* q with the checked options o on every partition at once, merged into
 * *out (AND-then-OR decided on the whole); nterms and unknown the whole
 * index's view of q, t0 when the call began. */
int tdm_part_run(tdm_search *s, const tdm_search_query *q, const tdm_search_options *o,
                 size_t nterms, uint32_t unknown, double t0, tdm_search_result **out,
                 tdm_err *err);

/* ---- partition_batch.c */

/* The batch queries[0 .. nq) with the checked options o on every
 * partition at once, results[i] query i's merged answer (its own error,
 * named, where a partition failed it); the call's error where a whole
 * partition failed, results then all NULL. */
int tdm_part_batch_run(tdm_search *s, const tdm_search_query *queries, size_t nq,
                       const tdm_search_options *o, tdm_search_result **results, tdm_err *err);

/* ---- partition_merge.c */

/* The merged result of the partitions' answers res[0 .. s->nparts) to one
 * query (each TDM_OK): the top k of their hits (tdm_hits_merge), their
 * work added up, waits the longest, the device the first partition's.
 * algorithm, terms, unknown and seconds are left to the caller. */
int tdm_part_merge(const tdm_search *s, tdm_search_result *const *res, uint32_t k,
                   tdm_search_result **out, tdm_err *err);
/* Releases res[0 .. n) and sets them NULL (NULLs skipped). */
void tdm_part_results_free(tdm_search_result **res, size_t n);

/* ---- split.c */

/* A split handle's threshold: TANDEM_SPLIT_MIN_POSTINGS, else the largest
 * split_min_postings of engine devices 0 .. n-1's tuning rows. */
uint64_t tdm_split_threshold(tdm_engine *engine, int n);
/* A split handle's single query (o checked from opts, t0 when the call
 * began): on every partition or whole on the lanes (partition.h,
 * tdm_part_open_split). */
int tdm_split_search(tdm_search *s, const tdm_search_query *q, const tdm_search_options *opts,
                     const tdm_search_options *o, double t0, tdm_search_result **out,
                     tdm_err *err);

#endif
