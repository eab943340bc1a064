/* A query prepared for the device kernels (cl/search_range.cl,
 * cl/search_merge.cl), on the host (search_prep.c): its lists' decoding,
 * one batched launch per codec (resident/decode_jobs.h) into scratch
 * buffers, one segment per term in the query's term order (docids
 * ascending, tf); the term table (TDM_SEARCH_TW words a term, named in
 * search_layout.h); the block bounds. Only the term table, the decode jobs
 * and (for the index's own BM25 parameters) the block bounds go up; k
 * results come down. */
#ifndef TDM_PLAN_SPREP_H
#define TDM_PLAN_SPREP_H

#include <stddef.h>
#include <stdint.h>
#include "common/error.h"
#include "index/reader.h"
#include "plan/and_select.h"
#include "plan/search_layout.h" /* the kernels' tables: TDM_SEARCH_TW, TDM_ZR_*, ... */
#include "query/query.h"
#include "query/score.h"
#include "resident/decode_jobs.h"

struct tdm_bcache;
typedef struct tdm_sbsrc tdm_sbsrc; /* search_prep.c */

/* A query prepared for the kernels, on the host. */
typedef struct tdm_sprep {
    uint32_t nt;
    uint32_t *terms;    /* [nt * TDM_SEARCH_TW] */
    tdm_decode_batch batch; /* decode jobs: term t's postings at batch.out[t] */
    size_t npost;
    float *bmax;
    size_t nbmax;
    int kind;           /* enum tdm_scoring_kind */
    int device_bounds;  /* bmax is computed on the device (tdm_search_bounds):
                           the stored bounds do not apply to the request */
    float c0, c1;
    uint32_t min_df, max_df;
    tdm_and_sel andsel; /* AND's block selection (and_select.h), for 2+ terms */
    int term_bounds;    /* word 5 of each term holds its bound already (the
                           largest of its stored block bounds) */
    uint32_t *ids;      /* [nt] each term's list (the compressed variant's word 0) */
    uint32_t max_block; /* the largest block size among the lists (its cursor buffers) */
    tdm_sbsrc *bsrc;    /* [nt] where the stored block bounds come from while bmax
                           waits for tdm_sprep_bounds_fill (NULL: bmax is made) */
} tdm_sprep;

/* Plans the decoding of q's lists and fills the term table (words 0-4) and, when the
 * stored bounds apply (BM25 at the index's k1, b; impact scores on an impact
 * index: bounds.h), each block's bound from them; else device_bounds is set
 * and the device recomputes them from the postings (exact maxima). */
int tdm_sprep_build(tdm_sprep *p, const tdm_ireader *r, const tdm_query *q,
                    const tdm_score_params *sp, tdm_err *err);
/* The same; where the stored bounds do not apply and bc is not NULL, the
 * bounds come from the handle's cache of exact recomputed ones (bounds.h:
 * computed on the host at a term's first use with these parameters) and
 * device_bounds stays 0. */
int tdm_sprep_build_cached(tdm_sprep *p, const tdm_ireader *r, const tdm_query *q,
                           const tdm_score_params *sp, struct tdm_bcache *bc, tdm_err *err);
/* The same, but the stored block bounds (not the terms' bounds, word 5) are
 * left for tdm_sprep_bounds_fill, for whoever reads bmax: ranked AND and OR
 * never do, a GPU's pruning makes them on the device (TDM_SBOUNDS_STORED:
 * tdm_sprep_stored_rows)
 * and its host seed reads them only for a term whose k-th score the handle
 * has not cached. O(blocks) a term saved: most of a preparation's host time
 * on the 1M collection. */
int tdm_sprep_build_defer(tdm_sprep *p, const tdm_ireader *r, const tdm_query *q,
                          const tdm_score_params *sp, struct tdm_bcache *bc, tdm_err *err);
/* bmax made where tdm_sprep_build_defer left it (the same floats the other
 * builds make); nothing otherwise. Call before reading bmax. */
int tdm_sprep_bounds_fill(tdm_sprep *p, tdm_err *err);
/* The stored-bounds table of a query whose bmax waits (p->bsrc: TDM_SB_W
 * words a term into sb, search_layout.h), from which
 * tdm_search_stored_bounds_batch makes bmax on the device, the same floats
 * as tdm_sprep_bounds_fill. */
void tdm_sprep_stored_rows(const tdm_sprep *p, uint32_t *sb);
/* One row of that table: a list's first block-table entry and max_score, a
 * term's weight. */
void tdm_sb_row(uint32_t *x, uint32_t entry, float max_score, double weight);
/* Term t's block bounds: in bmax where it is made, else made into scratch
 * (room for the term's blocks) alone. */
const float *tdm_sprep_term_bounds(const tdm_sprep *p, uint32_t t, float *scratch);
void tdm_sprep_free(tdm_sprep *p);

#endif
