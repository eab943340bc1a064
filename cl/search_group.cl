/* Exhaustive OR and AND with a work-group per docid range, the GPU variant
   (search_range.cl has a work-item per range). The group walks its range in
   chunks of TDM_SEARCH_CHUNK documents with dense score accumulators in
   local memory (Ding et al. 2009): for each term in term order, the group's
   work-items add the term's postings of the chunk to the accumulators (a
   document appears once per list, so no two work-items write one slot), a
   barrier between terms keeping every document's sum in term order, the
   same float operations as the range kernel. The chunk's documents that
   match (any term for OR, every term for AND) and beat the range's
   threshold then go to the range's heap in docid order (one work-item: the
   heap is the range kernel's, so tdm_search_merge reads both alike).
   cur[t * nranges + r] carries each term's position from chunk to chunk;
   the work-items move the cursors of up to TDM_GROUP_SPANS terms at once
   (one work-item's binary search a term, one after the other, left a
   SPLADE query's 44 lists at 8.8M documents 3 ms in this kernel), and flag
   the chunk's candidates together before the one work-item pushes them.
   A docid outside the chunk its list's binary search placed it in (a list
   not increasing: a damaged index whose checksums were forged) touches no
   accumulator: it sets TDM_CODEC_ST_CORRUPT in status[0], which the host
   reads back with the results and turns into TDM_ERR_CORRUPT. */

#ifndef TDM_SEARCH_CHUNK
#define TDM_SEARCH_CHUNK 1024u
#endif
/* Terms whose spans in a chunk are found at once, a work-item each. */
#define TDM_GROUP_SPANS 256u

__kernel void tdm_search_group(__global const uint *docs, __global const uint *freqs,
                               __global uint *terms, __global const uint *doclens,
                               __global uint *cur, __global float *hs, __global uint *hd,
                               __global uint *hn, uint nt, uint nranges, uint rlen, uint ndocs,
                               uint cap, uint alg, uint kind, float c0, float c1,
                               __global const uint *gate, uint gate_min,
                               __global uint *status)
{
    if (gate_min && gate[1] >= gate_min)
        return; /* AND-then-OR: AND found k (search_range.cl) */
    __local float acc[TDM_SEARCH_CHUNK];
    __local ushort cnt[TDM_SEARCH_CHUNK];
    __local uint lo[TDM_GROUP_SPANS], hi[TDM_GROUP_SPANS];
    __local uint hit[TDM_SEARCH_CHUNK / 32u];
    __local uint nheap;
    __local float th; /* the heap's threshold after the last chunk's pushes */
    uint r = get_group_id(0), lid = get_local_id(0), ls = get_local_size(0);
    tdm_srange s;
    s.docs = docs;
    s.freqs = freqs;
    s.terms = terms;
    s.doclens = doclens;
    s.cur = cur;
    s.hs = hs;
    s.hd = hd;
    s.nt = nt;
    s.nr = nranges;
    s.r = r;
    s.cap = cap;
    s.kind = kind;
    s.c0 = c0;
    s.c1 = c1;
    uint rbeg = r * rlen;
    uint rend = ndocs - rbeg > rlen ? rbeg + rlen : ndocs;
    /* OR alone seeded by the host (search_hseed.h) shares the threshold G
       (search_range.cl): raised by every full heap, it keeps out of the
       heaps (and the merge) the documents that cannot reach the top k.
       Unseeded, G would rise only from the groups' own heaps of a few
       chunks, not worth its atomics (H200, SPLADE++ at 8.8M, k 1,000: 4.3
       against 4.0 ms); AND's and AND-then-OR's passes keep their own. */
    uint share = 0u; /* work-item 0's, which pushes (below): G is read
                        atomically, other groups raising it meanwhile */
    s.shared = terms + TDM_TW_SHARED;
    s.pub = 0u;
    s.gth = -1.0f;
    s.hw = -1.0f; /* set by a push that fills the heap (search_algo.cl) */
    uint need = alg == TDM_ALG_AND ? nt : 1u;
    for (uint t = lid; t < nt; t += ls) {
        uint seg = tdm_sr_term(&s, t, TDM_TW_POS);
        cur[t * nranges + r] = tdm_sr_lower(docs, seg, seg + tdm_sr_term(&s, t, TDM_TW_DF), rbeg);
    }
    if (lid == 0u) {
        nheap = 0u;
        uint g = alg == TDM_ALG_OR && !gate_min ? atomic_max(s.shared, 0u) : 0u;
        share = g != 0u;
        s.pub = share && cap < rlen;
        s.gth = tdm_sr_below(g); /* -1 for 0 */
        th = s.gth;
    }
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    for (uint cb = rbeg; cb < rend; cb += TDM_SEARCH_CHUNK) {
        uint ce = rend - cb > TDM_SEARCH_CHUNK ? cb + TDM_SEARCH_CHUNK : rend;
        for (uint i = lid; i < TDM_SEARCH_CHUNK; i += ls) {
            acc[i] = 0.0f;
            cnt[i] = 0;
        }
        for (uint i = lid; i < TDM_SEARCH_CHUNK / 32u; i += ls)
            hit[i] = 0u;
        /* the terms' spans in the chunk, TDM_GROUP_SPANS terms at once (a
           cursor moves by galloping: a chunk holds few of a list's postings),
           then each term's postings added in term order */
        for (uint t0 = 0; t0 < nt; t0 += TDM_GROUP_SPANS) {
            uint tn = nt - t0 < TDM_GROUP_SPANS ? nt - t0 : TDM_GROUP_SPANS;
            barrier(CLK_LOCAL_MEM_FENCE); /* the last slab's spans read */
            for (uint j = lid; j < tn; j += ls) {
                uint t = t0 + j;
                uint e = tdm_sr_term(&s, t, TDM_TW_POS) + tdm_sr_term(&s, t, TDM_TW_DF);
                uint p = cur[t * nranges + r];
                uint q = p < e && docs[p] < ce ? tdm_sr_gallop(docs, p, e, ce) : p;
                lo[j] = p;
                hi[j] = q;
                cur[t * nranges + r] = q;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint j = 0; j < tn; j++) {
                uint p0 = lo[j], p1 = hi[j], t = t0 + j;
                if (p0 == p1)
                    continue; /* the same for every work-item: no barrier needed */
                for (uint p = p0 + lid; p < p1; p += ls) {
                    uint slot = docs[p] - cb;
                    if (slot >= ce - cb) { /* only an unsorted list puts it here */
                        atomic_or(status, TDM_CODEC_ST_CORRUPT);
                        continue;
                    }
                    acc[slot] = acc[slot] + tdm_sr_score(&s, t, p);
                    cnt[slot] += 1;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the chunk's candidates, flagged by every work-item against the
           threshold before the chunk (it only rises), pushed in docid order
           by one (the range's heap is the range kernel's) */
        float th0 = th;
        for (uint i = lid; i < ce - cb; i += ls)
            if (cnt[i] >= need && acc[i] > th0)
                atomic_or(&hit[i >> 5], 1u << (i & 31u));
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0u) {
            s.n = nheap;
            if (share) /* G as other groups raised it */
                s.gth = fmax(s.gth, tdm_sr_below(atomic_max(s.shared, 0u)));
            for (uint w = 0; w < TDM_SEARCH_CHUNK / 32u; w++)
                for (uint m = hit[w]; m; m &= m - 1u) {
                    uint i = w * 32u + (31u - clz(m & (0u - m)));
                    if (acc[i] > tdm_sr_theta(&s))
                        tdm_sr_push(&s, cb + i, acc[i]);
                }
            nheap = s.n;
            th = tdm_sr_theta(&s);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0u)
        hn[r] = nheap;
}
