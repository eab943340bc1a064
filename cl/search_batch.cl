/* Batches of queries in one set of launches (host/drive/search_batch_dev.c,
   docs/SEARCH.md "Batches"): the queries' term tables, block bounds, decoded
   postings, cursors and heaps lie one after another in shared buffers, and
   a query table says where each query's part begins.

   Query table (uint words, TDM_SBQ_W per query, ascending first range;
   the words' names, TDM_SBQ_*, in host/plan/search_layout.h):
     0 first term of the query in the batch's term table
     1 terms
     2 first range (the query's ranges are global ranges w[2] .. w[2] + w[3])
     3 ranges
     4 range length in docids
     5 heap entries a range (min(k, range length))
     6 first heap entry of the query in hs/hd
     7 first cursor word of the query in cur/ord (terms x ranges words)
   Term words 0 (first posting) and 3 (first block bound) are positions in
   the batch's buffers. A query's ranges and heaps are exactly those of a
   lone query with that many ranges, so its top k is the same. */

/* The query whose ranges hold global range g. */
uint tdm_sb_query(__global const uint *qtab, uint nq, uint g)
{
    uint lo = 0, hi = nq;
    while (hi - lo > 1u) {
        uint mid = (lo + hi) / 2u;
        if (qtab[mid * TDM_SBQ_W + TDM_SBQ_RANGE] <= g)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* G's bits for the batch's global range g, as tdm_sr_begin takes them:
   the query of the work-group's first work-item has them read once for the
   group (tdm_sr_group_g says why), a work-item of another query reads its
   own (TDM_SR_G_READ). Every work-item of the group calls it (a barrier),
   g past the batch's ranges too; lq is the kernel's two local words. */
uint tdm_sb_group_g(__global const uint *qtab, uint nq, uint nranges, __global uint *terms,
                    uint alg, uint g, __local uint *lq)
{
    uint q = tdm_sb_query(qtab, nq, min(g, nranges - 1u));
    if (get_local_id(0) == 0u)
        lq[0] = q; /* ordered by tdm_sr_group_g's barrier */
    uint gv = tdm_sr_group_g(terms + qtab[q * TDM_SBQ_W + TDM_SBQ_TERM] * TDM_SEARCH_TW, alg,
                             lq + 1);
    return q == lq[0] ? gv : TDM_SR_G_READ;
}

/* One work-item per (query, docid range): what tdm_search_range does for
   one query, over every query of the batch. */
__kernel void tdm_search_range_batch(__global const uint *docs, __global const uint *freqs,
                                     __global uint *terms, __global const float *bmax,
                                     __global const uint *doclens, __global uint *cur,
                                     __global uint *ord, __global float *hs, __global uint *hd,
                                     __global uint *hn, __global const uint *qtab, uint nq,
                                     uint nranges, uint ndocs, uint alg, uint kind, float c0,
                                     float c1)
{
    __local uint lq[2];
    uint g = get_global_id(0), gv = tdm_sb_group_g(qtab, nq, nranges, terms, alg, g, lq);
    if (g >= nranges)
        return;
    __global const uint *w = qtab + tdm_sb_query(qtab, nq, g) * TDM_SBQ_W;
    uint r = g - w[TDM_SBQ_RANGE], nr = w[TDM_SBQ_NR], rlen = w[TDM_SBQ_RLEN], cap = w[TDM_SBQ_CAP],
         nt = w[TDM_SBQ_NT];
    __global uint *qterms = terms + w[TDM_SBQ_TERM] * TDM_SEARCH_TW;
    tdm_srange s;
    s.docs = docs;
    s.freqs = freqs;
    s.bmax = bmax;
    s.doclens = doclens;
    s.cur = cur + w[TDM_SBQ_CUR];
    s.ord = ord + w[TDM_SBQ_CUR];
    uint rbeg = tdm_sr_begin(&s, qterms, hs + w[TDM_SBQ_HEAP], hd + w[TDM_SBQ_HEAP], nt, nr, r,
                             rlen, ndocs, cap, alg, kind, c0, c1, gv);
    tdm_sr_starts(&s, rbeg);
    tdm_sr_run(&s, alg);
    hn[g] = s.n;
}

/* One work-group per query: its top k, sorted, to out + q * (pow2 + 2)
   (a header of keys written | candidates << 32 and the decode status, then
   pow2 key slots), as tdm_search_merge does for one query. */
__kernel void tdm_search_merge_batch(__global const float *hs, __global const uint *hd,
                                     __global const uint *hn, __global const uint *qtab, uint k,
                                     uint pow2, __global ulong *out, __global const uint *status)
{
    __local uint hist[512]; /* histogram, scan (tdm_merge_digit) */
    __local uint shared[4];
    __local ulong lkeys[TDM_MERGE_LKEYS];
    __global const uint *w = qtab + get_group_id(0) * TDM_SBQ_W;
    uint m, total;
    tdm_merge_top(hs + w[TDM_SBQ_HEAP], hd + w[TDM_SBQ_HEAP], hn + w[TDM_SBQ_RANGE], w[TDM_SBQ_NR],
                  w[TDM_SBQ_CAP], k, pow2, out + (size_t)get_group_id(0) * (pow2 + 2u), status[0],
                  hist, shared, lkeys, &m, &total);
}

/* Device-computed bounds for a batch (requests whose k1, b are not the
   index's): after tdm_search_bounds over every block of the batch (term
   word 3 numbers the batch's blocks), a work-item per query sets its
   terms' bounds (word 5) and MaxScore order (word 6, term indices within
   the query) exactly as tdm_search_order does for one query. */
__kernel void tdm_search_order_batch(__global uint *terms, __global const float *bmax,
                                     __global const uint *qtab, uint nq)
{
    uint q = get_global_id(0);
    if (q >= nq)
        return;
    __global const uint *w = qtab + q * TDM_SBQ_W;
    __global uint *qt = terms + w[TDM_SBQ_TERM] * TDM_SEARCH_TW;
    uint nt = w[TDM_SBQ_NT];
    for (uint t = 0; t < nt; t++) {
        __global uint *x = qt + t * TDM_SEARCH_TW;
        uint nb = (x[TDM_TW_DF] + x[TDM_TW_BSIZE] - 1u) / x[TDM_TW_BSIZE];
        float m = 0.0f;
        for (uint b = 0; b < nb; b++)
            m = fmax(m, bmax[x[TDM_TW_BMAX] + b]);
        x[TDM_TW_BOUND] = as_uint(m);
    }
    for (uint i = 0; i < nt; i++)
        qt[i * TDM_SEARCH_TW + TDM_TW_ORDER] = i;
    for (uint i = 1; i < nt; i++) {
        uint t = qt[i * TDM_SEARCH_TW + TDM_TW_ORDER];
        float u = as_float(qt[t * TDM_SEARCH_TW + TDM_TW_BOUND]);
        uint j = i;
        while (j > 0u) {
            uint p = qt[(j - 1u) * TDM_SEARCH_TW + TDM_TW_ORDER];
            if (as_float(qt[p * TDM_SEARCH_TW + TDM_TW_BOUND]) <= u)
                break;
            qt[j * TDM_SEARCH_TW + TDM_TW_ORDER] = p;
            j--;
        }
        qt[j * TDM_SEARCH_TW + TDM_TW_ORDER] = t;
    }
}

/* The stored bounds (BM25's, or an impact index's) of every block of a
   batch (bounds.h's tdm_score_stored_bound of tdm_ilist_block_max,
   operation for operation:
   the quantized bound max_score * (q + 1) * 2^-8 in float, one-block lists
   max_score, times the term's weight and TDM_SCORE_BOUND_SLACK in double,
   rounded to float), so that the host uploads 16 bytes a term instead of 4
   a block. sb: TDM_SB_W words a term (first block-table entry, max_score
   bits, weight as a double's low and high words). Launched only on devices
   with cl_khr_fp64 (the product is a double's). */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
__kernel void tdm_search_stored_bounds_batch(__global const uint *terms, __global const uint *sb,
                                             __global const uchar *block_max,
                                             __global float *bmax, uint nt, uint nblocks)
{
    uint g = get_global_id(0);
    if (g >= nblocks)
        return;
    uint lo = 0, hi = nt; /* the last term whose first block is <= g */
    while (hi - lo > 1u) {
        uint mid = (lo + hi) / 2u;
        if (terms[mid * TDM_SEARCH_TW + TDM_TW_BMAX] <= g)
            lo = mid;
        else
            hi = mid;
    }
    __global const uint *w = terms + lo * TDM_SEARCH_TW, *x = sb + lo * TDM_SB_W;
    uint b = g - w[TDM_TW_BMAX], nb = (w[TDM_TW_DF] + w[TDM_TW_BSIZE] - 1u) / w[TDM_TW_BSIZE];
    float ms = as_float(x[TDM_SB_MAXSCORE]);
    float stored = nb > 1u ? ms * (float)((uint)block_max[x[TDM_SB_ENTRY] + b] + 1u) * 0x1p-8f : ms;
#ifdef cl_khr_fp64
    double wt = as_double(((ulong)x[TDM_SB_WT_HI] << 32) | (ulong)x[TDM_SB_WT_LO]);
    bmax[g] = (float)((double)stored * wt * (1.0 + 1.0 / 131072.0));
#else
    bmax[g] = stored; /* never launched: the host uploads bounds instead */
#endif
}

/* The compressed variant's batch (cl/search_zrange.cl, CPU devices): what
   tdm_search_range_batch does, with cursors that read the resident index;
   term word 0 is the list id, each (query, range)'s cursors start at qtab
   word 7: cur at 8 words a cursor (TDM_ZR_CW), zdocs and zfreqs at bw a
   cursor, laid out within the query as `layout` says (cl/search_zrange.cl:
   R its ranges). status: the batch's (TDM_CODEC_ST_*), which the merge
   reports; status[1] is tdm_search_zrange_queue's counter. */
#define TDM_ZB_ARGS                                                                          \
    TDM_ZS_IDX, __global uint *zdocs, __global uint *zfreqs, uint bw, __global uint *terms, \
        __global const float *bmax, __global const uint *doclens, __global uint *cur,       \
        __global uint *ord, __global float *hs, __global uint *hd, __global uint *hn,       \
        __global const uint *qtab, uint nq, uint nranges, uint ndocs, uint alg, uint kind,  \
        float c0, float c1, __global uint *status, uint layout
#define TDM_ZB_PASS                                                                          \
    TDM_ZS_IDX_PASS, zdocs, zfreqs, bw, terms, bmax, doclens, cur, ord, hs, hd, hn, qtab, nq, \
        nranges, ndocs, alg, kind, c0, c1, status, layout

/* Global range g of the batch (< nranges); gv: G's bits as tdm_zr_begin
   takes them. */
void tdm_zb_range(TDM_ZB_ARGS, uint g, uint gv)
{
    __global const uint *w = qtab + tdm_sb_query(qtab, nq, g) * TDM_SBQ_W;
    uint r = g - w[TDM_SBQ_RANGE], nr = w[TDM_SBQ_NR], rlen = w[TDM_SBQ_RLEN], cap = w[TDM_SBQ_CAP],
         nt = w[TDM_SBQ_NT];
    tdm_zrange s;
    tdm_zr_index(&s, arena, lists, codecs, block_last, block_docs, block_freqs, nlists,
                 arena_words, spans);
    s.bw = bw;
    s.bmax = bmax;
    s.doclens = doclens;
    uint rbeg = tdm_zr_begin(&s, terms + w[TDM_SBQ_TERM] * TDM_SEARCH_TW, hs + w[TDM_SBQ_HEAP],
                             hd + w[TDM_SBQ_HEAP], nt, nr, r, rlen, ndocs, cap, alg, kind, c0, c1,
                             gv);
    tdm_zr_scratch(&s, cur + w[TDM_SBQ_CUR] * TDM_ZR_CW, zdocs + w[TDM_SBQ_CUR] * bw,
                   zfreqs + w[TDM_SBQ_CUR] * bw, ord + w[TDM_SBQ_CUR], layout);
    tdm_zr_search(&s, rbeg, alg);
    hn[g] = s.n;
    if (s.st)
        atomic_or(status, s.st);
}

/* A work-item per range of the batch. */
__kernel void tdm_search_zrange_batch(TDM_ZB_ARGS)
{
    __local uint lq[2];
    uint g = get_global_id(0), gv = tdm_sb_group_g(qtab, nq, nranges, terms, alg, g, lq);
    if (g < nranges)
        tdm_zb_range(TDM_ZB_PASS, g, gv);
}

/* CPU devices: a few work-items (one a core) take the batch's ranges in the
   host's order, units[0 .. nranges) (longest first), from the counter
   status[1], each running whole ranges (PISA's thread a query) until none
   is left: the cores stay busy to the end whatever the ranges' lengths, and
   the last ranges taken are the short ones. A launch of a work-item per
   range left the balance to PoCL 3.1, whose threads take consecutive
   work-groups in chunks of ceil(left / threads), up to 32 x threads: a batch
   of 64 queries on 2 cores ran as two halves of 32, one a core. Which
   work-item runs a range does not change its heap. */
__kernel void tdm_search_zrange_queue(TDM_ZB_ARGS, __global const uint *units)
{
    for (;;) {
        uint i = atomic_inc(status + 1);
        if (i >= nranges)
            return;
        tdm_zb_range(TDM_ZB_PASS, units[i], TDM_SR_G_READ);
    }
}

#undef TDM_ZB_ARGS
#undef TDM_ZB_PASS
