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
 * search_api.c come here when the handle is partitioned (s->part).
 *
 * Threads: as the public calls: any number at once on an open handle. */
#ifndef TDM_SCHED_PARTITION_H
#define TDM_SCHED_PARTITION_H

#include "common/error.h"
#include "tandem.h"

/* Whether tdm_search_open partitions `index` on `engine` (two devices or
 * more): the engine's setting, on, off or auto: when every device is a GPU
 * lane (by type, or TANDEM_LANE_KINDS), the whole index does not fit one
 * device's memory budget, and an estimated shard fits every device's
 * (docs/PARTITION.md). */
int tdm_part_wanted(tdm_engine *engine, const tdm_index *index);
/* The partitioned handle: shards made, resident, their lanes open. */
int tdm_part_open(tdm_engine *engine, const tdm_index *index, tdm_search **out, tdm_err *err);
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
/* The partitions' counters added up; lane i is partition i's (its device). */
void tdm_part_stats(tdm_search *s, tdm_sched_stats *st);

#endif
