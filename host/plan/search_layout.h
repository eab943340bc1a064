/* The tables the search kernels (the cl folder) and their host drivers
 * (host/drive) share, one statement for both languages, as
 * host/codec/layout.h is for the codecs: plain macros only, valid C and
 * OpenCL C. kernels.cl includes this file and the embed step
 * (cmake/embed_cl.cmake) pastes it into the kernel source; the host
 * includes it through search.h. A table is an array of uint words, W words
 * a row; a field is named by its word's index in the row. What each field
 * means to the kernels is told where they use it (cl/search_range.cl for
 * the term table). */
#ifndef TDM_QUERY_SEARCH_LAYOUT_H
#define TDM_QUERY_SEARCH_LAYOUT_H

/* ---- the term table: TDM_SEARCH_TW words a term of the query */
#define TDM_SEARCH_TW 8u
#define TDM_TW_POS 0u    /* first position of the term's postings in docs/freqs */
#define TDM_TW_LIST 0u   /* the compressed variant's word 0: the term's list id */
#define TDM_TW_DF 1u     /* postings (df) */
#define TDM_TW_BSIZE 2u  /* block size of the list (the unit of its block bounds) */
#define TDM_TW_BMAX 3u   /* first entry of its block bounds in bmax */
#define TDM_TW_QW 4u     /* the per-term factor of score.h (float bits) */
#define TDM_TW_BOUND 5u  /* upper bound of the term's scores (float bits) */
#define TDM_TW_ORDER 6u  /* MaxScore order: row i holds the i-th term by ascending bound */
#define TDM_TW_SHARED 7u /* row 0 only: the shared threshold G (float bits) */
/* Ranked AND's batch (cl/search_batch_and.cl) reads neither bound nor
   order, and keeps the list's block table there instead. */
#define TDM_TW_AND_ENTRY 5u /* the list's first block-table entry */
#define TDM_TW_AND_NB 6u    /* the list's blocks */

/* ---- the kernels' algorithm codes (the host's TDM_SALG_* up to MaxScore) */
#define TDM_ALG_OR 0u
#define TDM_ALG_AND 1u
#define TDM_ALG_WAND 2u
#define TDM_ALG_BMW 3u
#define TDM_ALG_MAXSCORE 4u

/* ---- the compressed variant's cursors (cl/search_zrange.cl) */
#define TDM_ZR_CW 8u /* words a cursor */
/* Its scratch layouts: word w of term t of range r, W words a term, R
   ranges, at (r * nt + t) * W + w (RANGE: a range's words contiguous, for
   CPU cores) or (t * W + w) * R + r (INTERLEAVED: a GPU warp's lanes on
   consecutive words). */
#define TDM_ZR_RANGE 0u
#define TDM_ZR_INTERLEAVED 1u

/* ---- the shared threshold's seed (cl/search_seed.cl): histogram buckets
   a term */
#define TDM_SEED_BUCKETS 1024u

/* ---- a batch's query table (cl/search_batch.cl): TDM_SBQ_W words a query,
   ascending first range */
#define TDM_SBQ_W 8u
#define TDM_SBQ_TERM 0u  /* first term of the query in the batch's term table */
#define TDM_SBQ_NT 1u    /* terms */
#define TDM_SBQ_RANGE 2u /* first range: the query's are global ranges RANGE .. RANGE + NR */
#define TDM_SBQ_NR 3u    /* ranges */
#define TDM_SBQ_RLEN 4u  /* range length in docids */
#define TDM_SBQ_CAP 5u   /* heap entries a range (min(k, range length)) */
#define TDM_SBQ_HEAP 6u  /* first heap entry of the query in hs/hd */
#define TDM_SBQ_CUR 7u   /* first cursor word of the query in cur/ord */
/* Ranked AND's batch (cl/search_batch_and.cl): each lead element is a
   "range" of one heap entry. */
#define TDM_SBQ_LEAD0 2u   /* first lead element of the query in the batch */
#define TDM_SBQ_MATCHES 3u /* matches: 0 from the host, counted by tdm_sband_score */
#define TDM_SBQ_LEAD 4u    /* the lead's term index */

/* ---- a batch's stored bounds (tdm_search_stored_bounds_batch):
   TDM_SB_W words a term */
#define TDM_SB_W 4u
#define TDM_SB_ENTRY 0u    /* the list's first block-table entry */
#define TDM_SB_MAXSCORE 1u /* the list's max_score (float bits) */
#define TDM_SB_WT_LO 2u    /* the term's weight as a double: low word */
#define TDM_SB_WT_HI 3u    /* and high word */

/* ---- ranked AND's batch select table (cl/search_batch_and.cl):
   TDM_SBA_W words a non-lead term, ascending SBA_JOB0 within a codec's
   launch */
#define TDM_SBA_W 8u
#define TDM_SBA_JOB0 0u    /* first block of the term in its codec's job table */
#define TDM_SBA_LIST 1u    /* list id */
#define TDM_SBA_NB 2u      /* blocks */
#define TDM_SBA_ENTRY 3u   /* first block-table entry */
#define TDM_SBA_POS 4u     /* position of the list's postings */
#define TDM_SBA_BSIZE 5u   /* block size */
#define TDM_SBA_LEADPOS 6u /* position of the query's lead */
#define TDM_SBA_LEADLEN 7u /* lead length */

/* ---- ranked AND's block selection (cl/search_select.cl,
   plan/and_select.c): TDM_SEL_TW words a term */
#define TDM_SEL_TW 10u
#define TDM_SEL_LIST 0u  /* list id */
#define TDM_SEL_DF 1u    /* df */
#define TDM_SEL_NB 2u    /* blocks */
#define TDM_SEL_BSIZE 3u /* block size */
#define TDM_SEL_ENTRY 4u /* first block-table entry */
#define TDM_SEL_MODE 5u  /* TDM_SEL_M_*: how the term's blocks are selected */
#define TDM_SEL_TASK 6u  /* first task of the term */
#define TDM_SEL_FLAG 7u  /* first selection flag */
#define TDM_SEL_CODEC 8u /* codec */
#define TDM_SEL_JOB 9u   /* first job slot in its codec's job table */
#define TDM_SEL_M_LEAD 0u  /* the lead, decoded whole */
#define TDM_SEL_M_BLOCK 1u /* per block: a binary search of the lead per block */
#define TDM_SEL_M_DOC 2u   /* per lead docid: a binary search of the block lasts */
#define TDM_SEL_M_ONE 3u   /* one block, kept */

#endif
