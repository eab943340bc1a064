/* Shards by docid range (docs/PARTITION.md): from an index, the sub-index of
 * documents [lo, hi) that keeps their GLOBAL docids and the whole index's
 * statistics (document count, total and so average length, every term's df,
 * BM25's k1 and b), so that a document's score on its shard is bit for bit
 * its score in the whole index, and every shard's top k merged (score
 * descending, docid ascending) is the whole index's top k.
 *
 * A shard is an index file (format.h: two more sections, the shard record
 * and the whole index's dfs) that the reader opens like any other. Every
 * list is decoded, cut to the range and encoded again with its own codec
 * (the format's blocks hold B postings from a list's first: a block that
 * straddles an edge shifts every block after it, so no block of a cut list
 * can be copied); block-max bounds are recomputed from the whole index's
 * statistics (BM25), or, for bounds this file cannot recompute (an impact
 * index's), taken from the source blocks each new block overlaps, with the
 * list's bound kept (valid, a little looser).
 *
 * Both ways of use go through one function: `tandem shard` writes the
 * images to files (tdm_shard_write), the partitioned engine opens them in
 * memory (tdm_shard_open_mem). Thread-safe: the source reader is only read.
 */
#ifndef TDM_INDEX_SHARD_H
#define TDM_INDEX_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "reader.h"

#define TDM_SHARDS_MAX 1024u

/* bounds[0 .. n] of n shards: bounds[0] = 0, bounds[n] = ndocs, each range
 * non-empty, cut where the documents' cumulative length (about the postings)
 * crosses i / n of the total. TDM_ERR_INVALID_ARG when n is 0, above
 * TDM_SHARDS_MAX or above the documents, or r is a shard already. */
int tdm_shard_bounds(const tdm_ireader *r, uint32_t n, uint32_t *bounds, tdm_err *err);

/* The identifier of the split of r into n shards at bounds. */
uint64_t tdm_shard_split_id(const tdm_ireader *r, uint32_t n, const uint32_t *bounds);

/* Shard i of the split (n, bounds) of r as a complete index file image in
 * memory (*image malloc'd, *size bytes), its lists prepared on up to
 * `threads` threads (0: one per CPU). */
int tdm_shard_make(const tdm_ireader *r, uint32_t n, const uint32_t *bounds, uint32_t i,
                   unsigned threads, void **image, size_t *size, tdm_err *err);

/* The same, opened as a reader (named "<source> shard i/n") that owns it
 * and shares r's lexicon hash (tdm_ireader_share_lexicon): one table for
 * the whole index and all its shards, whoever of them asks first. */
int tdm_shard_open_mem(const tdm_ireader *r, uint32_t n, const uint32_t *bounds, uint32_t i,
                       unsigned threads, tdm_ireader **out, tdm_err *err);

/* Writes the n shards of r to PREFIX.0 .. PREFIX.<n-1>, each through an
 * exclusively created temporary file renamed into place (fsutil.h's
 * tdm_outfile). */
int tdm_shard_write(const tdm_ireader *r, uint32_t n, const char *prefix, unsigned threads,
                    tdm_err *err);

/* Shards opened together: rs[0 .. n) must be shards of one split, each
 * shard of it exactly once, in order (rs[i] is shard i), their ranges
 * covering the documents; TDM_ERR_FORMAT naming what differs (a plain
 * index, another split, a missing or repeated shard). */
int tdm_shard_set_check(const tdm_ireader *const *rs, size_t n, tdm_err *err);

#endif
