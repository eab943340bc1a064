/* The query's top k from every range's heap (search_range.cl,
   search_group.cl): no sort of every candidate, a radix select of the k-th
   best key, then a bitonic sort of the k selected.

   A candidate's key is (score bits << 32) | (0xffffffff - docid): scores are
   >= 0 (weights > 0), whose float bits order as unsigned integers, so a
   larger key is a better hit, ties broken by the smaller docid, and keys are
   distinct. The select takes the k-th largest key a byte at a time from the
   top (eight histogram passes over the candidates in local memory); every
   candidate with a key at least that large is in the top k.

   With many ranges (a GPU) the select runs in two stages so that one
   work-group never reads every candidate: tdm_search_select gives each of G
   groups a slice of the ranges and writes the slice's top k (unsorted) as a
   heap-shaped array (G slices of k entries and their counts); then
   tdm_search_merge selects and sorts the query's top k from those, exactly
   as it does from the range heaps when there are few ranges. The top k of
   the query is within the union of the slices' top k.

   out_n[0] = keys written (min(k, candidates)), out_n[1] = candidates (the
   sum of min(k, entries) over the inputs: at least k exactly when the query
   matched at least k documents, which AND-then-OR reads), out_n[2] = the
   decode launches' status word (codec/layout.h), so that one copy brings
   everything back. */

#define TDM_MERGE_KEY(s, d) (((ulong)as_uint(s) << 32) | (ulong)(0xffffffffu - (d)))

ulong tdm_merge_key(__global const float *hs, __global const uint *hd, uint i)
{
    return TDM_MERGE_KEY(hs[i], hd[i]);
}

/* Over the heaps r0 .. r1 (cap entries each, hn[r] used): the k-th largest
   key, or 0 when they hold at most k entries; *total gets how many they
   hold. Every work-item of the group calls it and gets the same values. */
ulong tdm_merge_kth(__global const float *hs, __global const uint *hd, __global const uint *hn,
                    uint r0, uint r1, uint cap, uint k, __local uint *hist,
                    __local uint *shared, uint *total)
{
    uint lid = get_local_id(0), ls = get_local_size(0);
    uint t = 0;
    if (lid == 0u)
        shared[0] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint r = r0 + lid; r < r1; r += ls)
        t += hn[r];
    atomic_add(&shared[0], t);
    barrier(CLK_LOCAL_MEM_FENCE);
    *total = shared[0];
    ulong prefix = 0, mask = 0;
    if (*total <= k)
        return 0;
    uint want = k;
    for (int shift = 56; shift >= 0; shift -= 8) {
        for (uint b = lid; b < 256u; b += ls)
            hist[b] = 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint i = r0 * cap + lid; i < r1 * cap; i += ls) {
            if (i % cap >= hn[i / cap])
                continue;
            ulong key = tdm_merge_key(hs, hd, i);
            if ((key & mask) == prefix)
                atomic_inc(&hist[(uint)(key >> shift) & 255u]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0u) {
            uint cum = 0, dg = 255u;
            for (;; dg--) {
                if (cum + hist[dg] >= want || dg == 0u)
                    break;
                cum += hist[dg];
            }
            shared[1] = dg;
            shared[2] = want - cum;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        prefix |= (ulong)shared[1] << shift;
        mask |= (ulong)255u << shift;
        want = shared[2];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return prefix;
}

/* Stage one: group g takes ranges [g * per, (g + 1) * per) and writes their
   top k to os/od[g * k ..] and the count to on[g]. */
__kernel void tdm_search_select(__global const float *hs, __global const uint *hd,
                                __global const uint *hn, uint nranges, uint cap, uint k,
                                uint per, __global float *os, __global uint *od,
                                __global uint *on)
{
    __local uint hist[256];
    __local uint shared[4];
    uint g = get_group_id(0), lid = get_local_id(0), ls = get_local_size(0);
    uint r0 = g * per;
    uint r1 = nranges - r0 > per ? r0 + per : nranges;
    uint total;
    ulong kth = tdm_merge_kth(hs, hd, hn, r0, r1, cap, k, hist, shared, &total);
    if (lid == 0u)
        shared[3] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = r0 * cap + lid; i < r1 * cap; i += ls) {
        if (i % cap >= hn[i / cap])
            continue;
        if (tdm_merge_key(hs, hd, i) >= kth) {
            uint j = g * k + atomic_inc(&shared[3]);
            os[j] = hs[i];
            od[j] = hd[i];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0u)
        on[g] = shared[3];
}

/* Stage two (or the only one): the top k of heaps 0 .. nranges, sorted, to
   out (pow2 >= k keys). */
__kernel void tdm_search_merge(__global const float *hs, __global const uint *hd,
                               __global const uint *hn, uint nranges, uint cap, uint k,
                               uint pow2, __global ulong *out, __global uint *out_n,
                               __global const uint *status)
{
    __local uint hist[256];
    __local uint shared[4];
    uint lid = get_local_id(0), ls = get_local_size(0);
    uint total;
    ulong prefix = tdm_merge_kth(hs, hd, hn, 0, nranges, cap, k, hist, shared, &total);
    uint ncand = nranges * cap;
    if (lid == 0u)
        shared[3] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < ncand; i += ls) {
        if (i % cap >= hn[i / cap])
            continue;
        ulong key = tdm_merge_key(hs, hd, i);
        if (key >= prefix)
            out[atomic_inc(&shared[3])] = key;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    uint m = shared[3];
    for (uint i = m + lid; i < pow2; i += ls)
        out[i] = 0;
    barrier(CLK_GLOBAL_MEM_FENCE);
    /* bitonic sort of out[0 .. pow2), descending */
    for (uint size = 2u; size <= pow2; size <<= 1) {
        for (uint stride = size >> 1; stride > 0u; stride >>= 1) {
            for (uint i = lid; i < pow2; i += ls) {
                uint j = i ^ stride;
                if (j > i) {
                    ulong a = out[i], b = out[j];
                    int desc = (i & size) == 0u;
                    if (desc ? a < b : a > b) {
                        out[i] = b;
                        out[j] = a;
                    }
                }
            }
            barrier(CLK_GLOBAL_MEM_FENCE);
        }
    }
    if (lid == 0u) {
        out_n[0] = m;
        out_n[1] = total;
        out_n[2] = status[0];
    }
}
