/* Ranked AND for a batch of queries with Wu 2010's mapping
   (host/drive/search_batch_and.c drives it and holds the plain-C
   reference): one work-item per element of each query's shortest list (the
   lead), the leads of every query of the batch one after another.

   Lists lie in the batch's docs/freqs buffers at their full-list positions
   (term word 0), but only the blocks that can hold a lead docid are
   decoded: the leads whole first, then tdm_sband_select makes a decode job
   per block of every other list (empty when no lead docid falls in the
   block's docid span, from the resident block table), one launch per codec,
   the blocks of that codec's lists numbered one after another. Then
   tdm_sband_score: a work-item takes lead element i of its query, finds for
   every other term the one block that can hold the docid (a binary search
   of the block table), searches that block's decoded postings, and sums
   the terms' scores in term order, exactly as tdm_sr_full does, so the
   bits are the single-query path's. A match is appended to its query's
   candidates (an atomic count in the query table's word 3, so the merge
   reads the matches only, not every lead element: on the H200 the merge of
   every element took 2.8 of 4.3 ms of a batch of 2,048 queries), each a
   "range" of one heap entry (hn = 1) that tdm_search_merge_batch reads as
   it reads range heaps of capacity 1. The order of the candidates varies
   from run to run; the merge's top k does not (keys are distinct).

   Query table: search_batch.cl's layout (TDM_SBQ_W words) with
     0 first term, 1 terms, 2 first lead element of the batch,
     3 matches (0 from the host, counted by tdm_sband_score), 4 the lead's
     term index, 5 heap capacity (1),
     6 first heap entry (= word 2), 7 unused.
   Term table: search_range.cl's words 0 to 4; for AND word 5 is the list's
   first block-table entry and word 6 its number of blocks (AND reads
   neither bound nor order).
   Select table (TDM_SBA_W words a non-lead term, ascending word 0 within a
   codec's launch):
     0 first block of the term in its codec's job table, 1 list id,
     2 blocks, 3 first block-table entry, 4 position of the list's postings,
     5 block size, 6 position of the query's lead, 7 lead length. */

/* The last row in [0, n) of a table of w-word rows whose word 0 is <= x. */
uint tdm_sba_find(__global const uint *tab, uint n, uint x)
{
    uint lo = 0, hi = n;
    while (hi - lo > 1u) {
        uint mid = (lo + hi) / 2u;
        if (tab[mid * TDM_SBA_W + TDM_SBA_JOB0] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* One work-item per block of the batch's non-lead lists of one codec:
   rows [row0, row0 + nrows) of tab (the codec's), blocks
   [0, nblocks). Job g decodes the block (to its full-list position) when a
   lead docid lies in its span (bl[j], bl[j + 1]] (block 0 from docid 0),
   else it is empty. A one-block list is always decoded. */
__kernel void tdm_sband_select(__global const uint *block_last, __global const uint *tab,
                               uint row0, uint nrows, uint nblocks, __global const uint *docs,
                               __global uint4 *jobs)
{
    uint g = get_global_id(0);
    if (g >= nblocks)
        return;
    tab += row0 * TDM_SBA_W;
    __global const uint *w = tab + tdm_sba_find(tab, nrows, g) * TDM_SBA_W;
    uint j = g - w[TDM_SBA_JOB0], sel = 1u;
    if (w[TDM_SBA_NB] > 1u) {
        __global const uint *bl = block_last + w[TDM_SBA_ENTRY];
        uint lo = j ? bl[j] + 1u : 0u, hi = bl[j + 1u];
        uint p =
            tdm_sr_lower(docs, w[TDM_SBA_LEADPOS], w[TDM_SBA_LEADPOS] + w[TDM_SBA_LEADLEN], lo);
        sel = p < w[TDM_SBA_LEADPOS] + w[TDM_SBA_LEADLEN] && docs[p] <= hi;
    }
    jobs[g] = (uint4)(w[TDM_SBA_LIST], j, j + sel, w[TDM_SBA_POS] + j * w[TDM_SBA_BSIZE]);
}

/* Position of docid d in term t's decoded postings (terms: the query's
   term table), or NODOC when the list does not hold d. */
uint tdm_sba_find_doc(__global const uint *docs, __global const uint *terms,
                      __global const uint *block_last, uint t, uint d)
{
    __global const uint *w = terms + t * TDM_SEARCH_TW;
    uint seg = w[TDM_TW_POS], df = w[TDM_TW_DF], bs = w[TDM_TW_BSIZE], nb = w[TDM_TW_AND_NB], j = 0;
    if (df == 0u)
        return TDM_SEARCH_NODOC;
    if (nb > 1u) {
        __global const uint *bl = block_last + w[TDM_TW_AND_ENTRY];
        uint hi = nb;
        while (j < hi) { /* the first block whose last docid is >= d */
            uint mid = j + (hi - j) / 2u;
            if (bl[mid + 1u] < d)
                j = mid + 1u;
            else
                hi = mid;
        }
        if (j == nb)
            return TDM_SEARCH_NODOC;
    }
    uint b = seg + j * bs, e = seg + min(df, (j + 1u) * bs);
    uint p = tdm_sr_lower(docs, b, e, d);
    return p < e && docs[p] == d ? p : TDM_SEARCH_NODOC;
}

/* One work-item per lead element of the batch (nelem in all): when every
   term of its query holds its docid, the docid and its score go to the
   query's next candidate slot (from word 6, counted in word 3). */
__kernel void tdm_sband_score(__global const uint *docs, __global const uint *freqs,
                              __global const uint *terms, __global const uint *doclens,
                              uint ndocs, __global const uint *block_last, __global uint *qtab,
                              uint nq, uint nelem, uint kind, float c0, float c1,
                              __global float *hs, __global uint *hd, __global uint *hn)
{
    uint g = get_global_id(0);
    if (g >= nelem)
        return;
    __global uint *w = qtab + tdm_sb_query(qtab, nq, g) * TDM_SBQ_W;
    __global const uint *qt = terms + w[TDM_SBQ_TERM] * TDM_SEARCH_TW;
    uint nt = w[TDM_SBQ_NT], lead = w[TDM_SBQ_LEAD];
    uint lp = qt[lead * TDM_SEARCH_TW + TDM_TW_POS] + (g - w[TDM_SBQ_LEAD0]);
    uint d = docs[lp];
    if (d >= ndocs)
        return; /* past the last document: a forged index's, never a hit */
    tdm_srange s; /* what tdm_sr_score reads */
    s.docs = docs;
    s.freqs = freqs;
    s.terms = qt;
    s.doclens = doclens;
    s.kind = kind;
    s.c0 = c0;
    s.c1 = c1;
    float acc = 0.0f;
    uint hit = 1u;
    for (uint t = 0; t < nt; t++) {
        uint p = t == lead ? lp : tdm_sba_find_doc(docs, qt, block_last, t, d);
        if (p == TDM_SEARCH_NODOC) {
            hit = 0u;
            break;
        }
        acc = acc + tdm_sr_score(&s, t, p);
    }
    if (!hit)
        return;
    uint at = w[TDM_SBQ_HEAP] + atomic_inc(&w[TDM_SBQ_MATCHES]);
    hs[at] = acc;
    hd[at] = d;
    hn[at] = 1u;
}
