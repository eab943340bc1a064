/* The seed of the shared threshold of the pruning algorithms
   (search_range.cl, word 7 of term 0), before the range kernel: a score G
   that at least k distinct documents of the query reach, so that every
   range prunes against the query's k-th score from its first document
   (short ranges, a GPU's, never fill a heap of k). host/drive/search_seed.c
   launches it; tdm_search_seed_ref there is the plain-C reference.

   Why G is a lower bound of the query's k-th score: a document's float
   score is summed from 0 in term order over non-negative terms, and float
   addition is monotone, so it is >= each of its terms' scores. The
   postings of one list are distinct documents: if k postings of term t
   score >= x, then k documents score >= x. G is the largest such x over
   the terms, up to a bucket: the k-th largest score of each list is found
   in a histogram of TDM_SEED_BUCKETS buckets per term, bucket j holding the
   scores whose top 16 bits (sign, exponent, 7 mantissa bits) are the bound's
   (term word 5) minus j, and x is the lower edge of the bucket where the
   count from the top reaches k (>= 99.2 % of the k-th score). Scores 1023
   or more buckets below the bound (a factor 2^-8 below it) are not
   counted. Scores are >= 0, so float bits order as uints. */

/* The bucket of score bits x for a term whose bound has bits ub (the last
   one, TDM_SEED_BUCKETS - 1, is not counted). */
uint tdm_seed_bucket(uint x, uint ub)
{
    uint top = ub >> 16, key = x >> 16;
    return key >= top ? 0u : min(top - key, TDM_SEED_BUCKETS - 1u);
}

/* The term whose segment holds posting p: the last t with word 0 <= p. */
uint tdm_seed_term(__global const uint *terms, uint nt, uint p)
{
    uint lo = 0, hi = nt;
    while (hi - lo > 1u) {
        uint mid = (lo + hi) / 2u;
        if (terms[mid * TDM_SEARCH_TW + TDM_TW_POS] <= p)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* One work-item per posting of the query (npost, the segments back to back
   in term order): hist[t * TDM_SEED_BUCKETS + j] += the postings of term t
   in bucket j (hist zeroed by the host). A group whose postings are all of
   one term counts in local memory first. A docid past the last document
   (only a forged index decodes one; no range ever ranks it) is not
   counted, and its length not read. */
__kernel void tdm_search_seed_hist(__global const uint *docs, __global const uint *freqs,
                                   __global const uint *terms, __global const uint *doclens,
                                   uint ndocs, __global uint *hist, uint nt, uint npost,
                                   uint kind, float c0, float c1)
{
    __local uint lh[TDM_SEED_BUCKETS];
    __local uint lt[2];
    uint p = get_global_id(0), lid = get_local_id(0), ls = get_local_size(0);
    uint g0 = get_group_id(0) * ls;
    tdm_srange s;
    s.docs = docs;
    s.freqs = freqs;
    s.terms = terms;
    s.doclens = doclens;
    s.kind = kind;
    s.c0 = c0;
    s.c1 = c1;
    if (lid == 0u) {
        uint last = min(g0 + ls, npost) - 1u; /* g0 < npost: the grid covers npost */
        lt[0] = tdm_seed_term(terms, nt, g0);
        lt[1] = tdm_seed_term(terms, nt, last);
    }
    for (uint b = lid; b < TDM_SEED_BUCKETS; b += ls)
        lh[b] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint t0 = lt[0], one = lt[0] == lt[1];
    if (p < npost && docs[p] < ndocs) {
        uint t = one ? t0 : tdm_seed_term(terms, nt, p);
        uint b = tdm_seed_bucket(as_uint(tdm_sr_score(&s, t, p)),
                                 terms[t * TDM_SEARCH_TW + TDM_TW_BOUND]);
        if (b < TDM_SEED_BUCKETS - 1u) {
            if (one)
                atomic_inc(&lh[b]);
            else
                atomic_inc(&hist[t * TDM_SEED_BUCKETS + b]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (one)
        for (uint b = lid; b < TDM_SEED_BUCKETS; b += ls)
            if (lh[b])
                atomic_add(&hist[t0 * TDM_SEED_BUCKETS + b], lh[b]);
}

/* One work-group: each term's edge from its histogram, the largest into
   word 7 of term 0 (atomic max: the host uploaded 0 there); then the group
   zeroes the histogram's nt terms, so that the next query's histogram finds
   it zeroed without a fill command of its own. */
__kernel void tdm_search_seed(__global uint *terms, __global uint *hist, uint nt, uint k)
{
    uint lid = get_local_id(0), ls = get_local_size(0);
    for (uint t = lid; t < nt; t += ls) {
        uint top = terms[t * TDM_SEARCH_TW + TDM_TW_BOUND] >> 16, cum = 0;
        for (uint j = 0; j + 1u < TDM_SEED_BUCKETS && j <= top; j++) {
            cum += hist[t * TDM_SEED_BUCKETS + j];
            if (cum >= k) {
                atomic_max(terms + TDM_TW_SHARED, (top - j) << 16);
                break;
            }
        }
    }
    barrier(CLK_GLOBAL_MEM_FENCE); /* every read of hist is done */
    for (uint i = lid; i < nt * TDM_SEED_BUCKETS; i += ls)
        hist[i] = 0u;
}
