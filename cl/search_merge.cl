/* The query's top k from every range's heap (search_range.cl), in one
   work-group: no sort of every candidate, a radix select of the k-th best
   key, then a bitonic sort of the k selected.

   A candidate's key is (score bits << 32) | (0xffffffff - docid): scores are
   >= 0 (weights > 0), whose float bits order as unsigned integers, so a
   larger key is a better hit, ties broken by the smaller docid, and keys are
   distinct. The select takes the k-th largest key a byte at a time from the
   top (eight histogram passes over the candidates in local memory); every
   candidate with a key at least that large is the top k. Those are then
   sorted (descending) in `out`, which holds pow2 >= k keys.

   out_n[0] = keys written (min(k, candidates)), out_n[1] = candidates (the
   sum of the heaps: at least k exactly when the query matched at least k
   documents, which AND-then-OR reads), out_n[2] = the decode launches'
   status word (codec/layout.h), so that one copy brings everything back. */

#define TDM_MERGE_KEY(s, d) (((ulong)as_uint(s) << 32) | (ulong)(0xffffffffu - (d)))

ulong tdm_merge_key(__global const float *hs, __global const uint *hd, uint i)
{
    return TDM_MERGE_KEY(hs[i], hd[i]);
}

__kernel void tdm_search_merge(__global const float *hs, __global const uint *hd,
                               __global const uint *hn, uint nranges, uint cap, uint k,
                               uint pow2, __global ulong *out, __global uint *out_n,
                               __global const uint *status)
{
    __local uint hist[256];
    __local uint shared[4];
    uint lid = get_local_id(0), ls = get_local_size(0);
    uint total = 0;
    if (lid == 0u)
        shared[0] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint r = lid; r < nranges; r += ls)
        total += hn[r];
    atomic_add(&shared[0], total);
    barrier(CLK_LOCAL_MEM_FENCE);
    total = shared[0];
    uint ncand = nranges * cap;
    ulong prefix = 0, mask = 0;
    if (total > k) {
        uint want = k;
        for (int shift = 56; shift >= 0; shift -= 8) {
            for (uint b = lid; b < 256u; b += ls)
                hist[b] = 0u;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint i = lid; i < ncand; i += ls) {
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
    }
    /* prefix is now the k-th largest key (0: take every candidate) */
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
