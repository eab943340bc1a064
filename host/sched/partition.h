/* A partitioned search handle (docs/PARTITION.md): the index split by docid
 * range into one shard per engine device (index/shard.h, made in memory at
 * open), each shard a handle of its own on its device with its own lane
 * (drive/search_run.h's tdm_search_handle_open_part, this area's
 * tdm_sched_open). A query goes to every partition's lane at once (one job
 * each, tdm_sched_begin; the caller's thread runs the last), and their top
 * k lists merge into the whole index's top k, bit for bit: the shards score
 * with the whole index's statistics. A batch goes to every partition at
 * once (a thread each) and merges query by query. A partition that fails
 * fails the call (its error, naming the partition and device): never a
 * partial answer. A request whose policy excludes a partition's lane
 * (cpu-only, gpu-only) is refused up front (TDM_ERR_INVALID_ARG): that lane
 * is the only one holding the partition's documents. The public calls in
 * search_api.c come here when the handle is partitioned (s->part). The
 * files that hold it are listed in partition_priv.h.
 *
 * Threads: as the public calls: any number at once on an open handle;
 * tdm_hits_merge touches only its arguments. */
#ifndef TDM_SCHED_PARTITION_H
#define TDM_SCHED_PARTITION_H

#include "common/error.h"
#include "tandem.h"

/* How tdm_search_open holds `index` on `engine`: 0 (whole on every
 * device), TDM_PARTITION_ON (partitioned) or TDM_PARTITION_SPLIT (both),
 * by the engine's setting with two devices or more: on, split, off, or
 * auto: partitioned when every device is a GPU lane (by type, or
 * TANDEM_LANE_KINDS), the whole index does not fit one device's memory
 * budget, and an estimated shard fits every device's (docs/PARTITION.md). */
int tdm_part_wanted(tdm_engine *engine, const tdm_index *index);
/* The partitioned handle: shards made, resident, their lanes open. */
int tdm_part_open(tdm_engine *engine, const tdm_index *index, tdm_search **out, tdm_err *err);
/* The split handle (TDM_PARTITION_SPLIT): the whole index resident on
 * every device with a lane each (as an unpartitioned handle), and a shard
 * on each beside it with its own lane. A single query whose lists hold
 * the threshold's postings or more (TANDEM_SPLIT_MIN_POSTINGS, else the
 * tuning table's split_min_postings) runs on every partition at once and
 * merges; the rest, and every batch, run whole on the lanes. A split
 * query a partition fails on its device runs whole instead (counted in
 * split_fallbacks); after a partition's lane died every query does.
 * TDM_ERR_DEVICE_MEMORY, before anything is uploaded, where the whole
 * index and a shard do not fit a device together. */
int tdm_part_open_split(tdm_engine *engine, const tdm_index *index, tdm_search **out,
                        tdm_err *err);
/* The same over a split's shard files opened as one index
 * (tdm_index_open_shards): shard i, as the index's reader (a reference
 * taken), on engine device i % devices; at most TDM_SCHED_MAX_LANES. */
int tdm_part_open_shards(tdm_engine *engine, const tdm_index *index, tdm_search **out,
                         tdm_err *err);
void tdm_part_close(tdm_search *s);

int tdm_part_search(tdm_search *s, const tdm_search_query *q, const tdm_search_options *opts,
                    tdm_search_result **out, tdm_err *err);
/* o checked (tdm_search_options_check). */
int tdm_part_batch(tdm_search *s, const tdm_search_query *queries, size_t n,
                   const tdm_search_options *o, tdm_search_result **results, tdm_err *err);
/* The partitions' counters added up; lane i is partition i's (its device).
 * A split handle: its whole index's lanes, then the partitions' (lane
 * lanes + p partition p's), the counters of both added up. */
void tdm_part_stats(tdm_search *s, tdm_sched_stats *st);

/* The exact merge of answers to one query from disjoint document sets
 * (partitions, shards, tandem-mpi's ranks): the best k of lists[0 .. m),
 * each ns[l] hits best first (score descending, docid ascending: every
 * answer's order, the oracle's), into out[0 .. return), which holds
 * min(k, the lists' total) hits. at[0 .. m) is the caller's scratch (a
 * cursor a list). A hit is copied as it is: its name stays its list's. */
size_t tdm_hits_merge(const tdm_search_hit *const *lists, const size_t *ns, size_t m, size_t k,
                      size_t *at, tdm_search_hit *out);

#endif
