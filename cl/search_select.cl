/* Ranked AND's block selection before decoding (Ding 2009, Griffin): the
   shortest list (the lead) is decoded alone; then the blocks of every other
   list are selected by the lead's docids against the resident block table
   (block_last, docs/FORMAT.md), and only the selected blocks are decoded,
   each list's compacted into its segment. A document of the intersection is
   a lead docid that lies in one block of every other list, and that block is
   selected: AND over the selected postings is AND over the lists.
   host/plan/and_select.c drives it and holds the plain-C reference.

   Per term, the host picks how (Griffin's ratio): a list more than `ratio`
   times longer than the lead is searched per lead docid (a binary search of
   its block lasts per lead docid); otherwise per block (a binary search of
   the lead per block of the list, the blocks being the merge-path partition
   of the list at block granularity). One launch (tdm_and_select) runs every
   term's tasks; one work-group (tdm_and_jobs) then scans the selections in
   term order into decode jobs (resident/decode_jobs.h: {list, b, b + selected,
   out}, unselected blocks empty jobs) and rewrites the term table's
   position and length of each list (words 0 and 1 of search_range.cl's
   table) for the compacted layout: the lead at 0, then the other terms in
   term order.

   Selection table (TDM_SEL_TW uints a term; TDM_SEL_* in
   host/plan/search_layout.h):
     0 list id, 1 df, 2 blocks, 3 block size, 4 first block-table entry,
     5 mode: 0 the lead, 1 per block, 2 per lead docid, 3 one block (kept),
     6 first task of the term, 7 first selection flag, 8 codec,
     9 first job slot in its codec's job table. */

/* The last term t whose word w is <= x (words w ascend with t). */
uint tdm_sel_find(__global const uint *tab, uint nt, uint w, uint x)
{
    uint lo = 0, hi = nt;
    while (hi - lo > 1u) {
        uint mid = (lo + hi) / 2u;
        if (tab[mid * TDM_SEL_TW + w] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* One work-item per task: flags[term's first flag + j] = 1 when block j of
   the term holds a docid of the lead (lead[0 .. lead_df), ascending). The
   per-block flags are written whole; the per-docid ones must be zero before
   (the host fills them). */
__kernel void tdm_and_select(__global const uint *block_last, __global const uint *tab, uint nt,
                             uint ntasks, __global const uint *lead, uint lead_df,
                             __global uint *flags)
{
    uint g = get_global_id(0);
    if (g >= ntasks)
        return;
    __global const uint *w = tab + tdm_sel_find(tab, nt, TDM_SEL_TASK, g) * TDM_SEL_TW;
    uint i = g - w[TDM_SEL_TASK];
    __global const uint *bl = block_last + w[TDM_SEL_ENTRY];
    if (w[TDM_SEL_MODE] == TDM_SEL_M_BLOCK) {
        /* block i holds (bl[i], bl[i + 1]], block 0 from docid 0 */
        uint lo = i ? bl[i] + 1u : 0u, hi = bl[i + 1u];
        uint p = tdm_sr_lower(lead, 0u, lead_df, lo);
        flags[w[TDM_SEL_FLAG] + i] = p < lead_df && lead[p] <= hi;
    } else if (w[TDM_SEL_MODE] == TDM_SEL_M_DOC) {
        uint d = lead[i], lo = 0, hi = w[TDM_SEL_NB];
        while (lo < hi) { /* the first block whose last docid is >= d */
            uint mid = lo + (hi - lo) / 2u;
            if (bl[mid + 1u] < d)
                lo = mid + 1u;
            else
                hi = mid;
        }
        if (lo < w[TDM_SEL_NB])
            atomic_or(&flags[w[TDM_SEL_FLAG] + lo], 1u);
    }
}

/* One work-group. The jobs of the terms of codec `codec` into jobs (slots
   from word 9), and with `write_terms` words 0 and 1 of every term of the
   search term table (terms, TDM_SEARCH_TW a term). A launch per codec
   present: each scans every term (the outputs' positions depend on all). */
__kernel void tdm_and_jobs(__global const uint *tab, uint nt, __global const uint *flags,
                           __global uint4 *jobs, uint codec, __global uint *terms,
                           uint write_terms)
{
    __local uint scratch[TDM_WG_SIZE];
    uint lid = get_local_id(0), ls = get_local_size(0);
    uint base = 0;
    for (uint t = 0; t < nt; t++)
        if (tab[t * TDM_SEL_TW + TDM_SEL_MODE] == TDM_SEL_M_LEAD)
            base = tab[t * TDM_SEL_TW + TDM_SEL_DF]; /* the lead, at 0 */
    for (uint t = 0; t < nt; t++) {
        __global const uint *w = tab + t * TDM_SEL_TW;
        uint start = base;
        if (w[TDM_SEL_MODE] == TDM_SEL_M_LEAD) {
            if (write_terms && lid == 0u) {
                terms[t * TDM_SEARCH_TW + TDM_TW_POS] = 0u;
                terms[t * TDM_SEARCH_TW + TDM_TW_DF] = w[TDM_SEL_DF];
            }
            continue;
        }
        uint nb = w[TDM_SEL_NB], bs = w[TDM_SEL_BSIZE], df = w[TDM_SEL_DF];
        for (uint c0 = 0; c0 < nb; c0 += ls) {
            uint j = c0 + lid, sel = 0, n = 0;
            if (j < nb) {
                sel = w[TDM_SEL_MODE] == TDM_SEL_M_ONE ? 1u : flags[w[TDM_SEL_FLAG] + j];
                n = sel ? min(df - j * bs, bs) : 0u;
            }
            uint total, incl = tdm_wg_scan_incl(n, scratch, &total);
            if (j < nb && w[TDM_SEL_CODEC] == codec)
                jobs[w[TDM_SEL_JOB] + j] = (uint4)(w[TDM_SEL_LIST], j, j + sel, base + incl - n);
            base += total;
        }
        if (write_terms && lid == 0u) {
            terms[t * TDM_SEARCH_TW + TDM_TW_POS] = start;
            terms[t * TDM_SEARCH_TW + TDM_TW_DF] = base - start;
        }
    }
}
