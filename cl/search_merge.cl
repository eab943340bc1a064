/* The query's top k from every range's heap (search_range.cl,
   search_group.cl): no sort of every candidate, a filter that keeps about k
   of them, then a bitonic sort of those in local memory.

   A candidate's key is (score bits << 32) | (0xffffffff - docid): scores are
   >= 0 (weights > 0), whose float bits order as unsigned integers, so a
   larger key is a better hit, ties broken by the smaller docid, and keys are
   distinct. The filter (tdm_merge_filtered) reads the candidates once: each
   work-item keeps its best TDM_MERGE_TOPT keys in registers; the k-th best of
   the work-items' best few is a key no better than the query's k-th, and the
   candidates at least that good, about k of them, are sorted in local memory.
   Where they do not fit there (TDM_MERGE_LKEYS), the radix select takes the
   k-th best key a byte at a time from the top (eight histogram passes over
   the candidates in local memory, tdm_merge_kth), as it did for every merge
   before the filter; every candidate with a key at least that large is in
   the top k.

   With many ranges (a GPU) the select runs in stages so that one
   work-group never reads every candidate: tdm_search_select gives each of G
   groups a slice of the ranges and writes the slice's top k as a
   heap-shaped array (G slices of k entries and their counts); further
   stages reduce those G slices a few at a time while more than a few are
   left (at k = 1,000 the first stage's G x k keys are too many for one
   group); then tdm_search_merge selects and sorts the query's top k from
   the last stage's slices, exactly as it does from the range heaps when
   there are few ranges (TANDEM_MERGE_DIRECT_KEYS). The top k of the query
   is within the union of any stage's slices' top k. On a GPU these kernels
   run in groups of up to 1,024 work-items, 256 on NVIDIA's driver (the
   kernels' CL_KERNEL_WORK_GROUP_SIZE there).

   out_n[0] = keys written (min(k, candidates)), out_n[1] = candidates (the
   sum of min(k, entries) over the inputs: at least k exactly when the query
   matched at least k documents, which AND-then-OR reads), out_n[2] = the
   decode launches' status word (codec/layout.h). The same go to the head of
   out (out[0] = keys written | candidates << 32, out[1] = status), the keys
   after them (out + 2), so that one copy brings everything back. */

#define TDM_MERGE_KEY(s, d) (((ulong)as_uint(s) << 32) | (ulong)(0xffffffffu - (d)))

ulong tdm_merge_key(__global const float *hs, __global const uint *hd, uint i)
{
    return TDM_MERGE_KEY(hs[i], hd[i]);
}

/* The digit of this pass: the largest dg with (keys of digits >= dg) >=
   want, into shared[1], and want less the keys of digits > dg into
   shared[2]. In groups of 256 or more, a parallel suffix sum of the
   histogram (8 steps, in hist[256 ..]) instead of one work-item's walk over
   256 bins, which cost a select or merge on the H200 ~40 us (eight passes).
   Every barrier is reached by every work-item whatever the group size
   (PoCL miscompiled a version that returned early before them). */
void tdm_merge_digit(__local uint *hist, uint want, __local uint *shared)
{
    uint lid = get_local_id(0), ls = get_local_size(0);
    __local uint *scan = hist + 256;
    uint own = lid < 256u ? hist[lid] : 0u, suf = own;
    if (lid < 256u)
        scan[lid] = own;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1u; off < 256u; off <<= 1) {
        uint add = lid < 256u && lid + off < 256u ? scan[lid + off] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        suf += add;
        if (lid < 256u)
            scan[lid] = suf;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (ls >= 256u && lid < 256u) {
        /* suf = keys of digits >= lid; digit 0 when none reaches want (the
           walk's answer too) */
        uint above = suf - own;
        if ((suf >= want && above < want) || (lid == 0u && suf < want)) {
            shared[1] = lid;
            shared[2] = want - above;
        }
    } else if (ls < 256u && lid == 0u) {
        uint cum = 0, dg = 255u;
        for (;; dg--) {
            if (cum + hist[dg] >= want || dg == 0u)
                break;
            cum += hist[dg];
        }
        shared[1] = dg;
        shared[2] = want - cum;
    }
}

/* The entries heaps r0 .. r1 hold (the sum of hn), for every work-item. */
uint tdm_merge_total(__global const uint *hn, uint r0, uint r1, __local uint *shared)
{
    uint lid = get_local_id(0), ls = get_local_size(0), t = 0;
    if (lid == 0u)
        shared[0] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint r = r0 + lid; r < r1; r += ls)
        t += hn[r];
    atomic_add(&shared[0], t);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint total = shared[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

/* Over the heaps r0 .. r1 (cap entries each, hn[r] used): the k-th largest
   key, or 0 when they hold at most k entries; *total gets how many they
   hold. Every work-item of the group calls it and gets the same values. */
ulong tdm_merge_kth(__global const float *hs, __global const uint *hd, __global const uint *hn,
                    uint r0, uint r1, uint cap, uint k, __local uint *hist,
                    __local uint *shared, uint *total)
{
    uint lid = get_local_id(0), ls = get_local_size(0);
    *total = tdm_merge_total(hn, r0, r1, shared);
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
        tdm_merge_digit(hist, want, shared);
        barrier(CLK_LOCAL_MEM_FENCE);
        prefix |= (ulong)shared[1] << shift;
        mask |= (ulong)255u << shift;
        want = shared[2];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return prefix;
}

/* Keys a merge sorts in local memory (8 bytes each): the filter's
   survivors (about k), or the radix select's top k of k up to that, k =
   1,000 included; larger k sort in global memory, a global barrier a
   step. On the H200 the k = 1,000 merge took 42 us with the
   global sort, 39 us with this one (BENCHMARKS.md, fifth session; two
   machines): the radix select's passes are most of it. (Oclgrind, 32 KB,
   counts a kernel's local arrays twice.) */
#if TDM_LOCAL_MEM >= 49152
#define TDM_MERGE_LKEYS 2048u
#else
#define TDM_MERGE_LKEYS 1024u
#endif

/* Compare-exchange step (size, stride) of a descending bitonic sort of n
   keys (a power of two), by every work-item of the group, a work-item a pair
   of keys (n / 2 pairs), in local or in global memory. */
#define TDM_BITONIC_STEP(keys, n, size, stride)                                  \
    for (uint p = get_local_id(0); p < (n) / 2u; p += get_local_size(0)) {       \
        /* pair p: i with the stride bit clear, j = i + stride */                \
        uint i = ((p & ~((stride) - 1u)) << 1) | (p & ((stride) - 1u));          \
        uint j = i | (stride);                                                   \
        ulong a = keys[i], b = keys[j];                                          \
        if ((i & (size)) == 0u ? a < b : a > b) {                                \
            keys[i] = b;                                                         \
            keys[j] = a;                                                         \
        }                                                                        \
    }

void tdm_bitonic_local(__local ulong *keys, uint n)
{
    for (uint size = 2u; size <= n; size <<= 1)
        for (uint stride = size >> 1; stride > 0u; stride >>= 1) {
            TDM_BITONIC_STEP(keys, n, size, stride)
            barrier(CLK_LOCAL_MEM_FENCE);
        }
}

void tdm_bitonic_global(__global ulong *keys, uint n)
{
    for (uint size = 2u; size <= n; size <<= 1)
        for (uint stride = size >> 1; stride > 0u; stride >>= 1) {
            TDM_BITONIC_STEP(keys, n, size, stride)
            barrier(CLK_GLOBAL_MEM_FENCE);
        }
}

/* ---- the filter: a group's top k from one read of its candidates */

/* The best keys a work-item keeps in registers in the filter's pass (a
   constant, so that its array is registers, never indexed at run time). */
#define TDM_MERGE_TOPT 8u
/* tdm_merge_filtered's answer where its survivors overflow local memory */
#define TDM_MERGE_SPILL 0xffffffffu

/* The work-item's best keys, descending (top[TDM_MERGE_TOPT - 1] the
   least), with key in its place where it beats the least. */
void tdm_mtop_push(ulong *top, ulong key)
{
    if (key <= top[TDM_MERGE_TOPT - 1u])
        return;
    for (uint t = 0; t < TDM_MERGE_TOPT; t++) {
        ulong hi = max(top[t], key);
        key = min(top[t], key);
        top[t] = hi;
    }
}

/* A work-item's walk over the slots of heaps r0 .. r1 (cap a heap): slot lid
   first, then every ls-th, as (heap r, entry j) stepped by (dr, dj) = ls's
   quotient and remainder by cap, no division a slot. */
#define TDM_MWALK_NEXT(r, j, dr, dj, cap)                                        \
    do {                                                                         \
        (j) += (dj);                                                             \
        (r) += (dr);                                                             \
        if ((j) >= (cap)) {                                                      \
            (j) -= (cap);                                                        \
            (r)++;                                                               \
        }                                                                        \
    } while (0)

/* The filter's pass: this work-item's slots of heaps r0 .. r1 (entry j of
   heap r holds a key where j < hn[r]); its best TDM_MERGE_TOPT keys into top
   (descending, 0 past its count); returns how many keys it read. Four slots
   a step, their loads independent, so that they overlap: at 256 work-items a
   work-item reads ~40 slots of the direct merge's ~10,000, and a chain of
   dependent loads was the radix select's cost. */
uint tdm_mtop_scan(__global const float *hs, __global const uint *hd, __global const uint *hn,
                   uint r0, uint r1, uint cap, ulong *top)
{
    uint lid = get_local_id(0), ls = get_local_size(0), n = 0;
    for (uint t = 0; t < TDM_MERGE_TOPT; t++)
        top[t] = 0ul;
    if (cap == 0u)
        return 0u;
    uint r = r0 + lid / cap, j = lid % cap, dr = ls / cap, dj = ls % cap, last = r1 - 1u;
    while (r < r1) {
        uint ra = r, ja = j;
        TDM_MWALK_NEXT(r, j, dr, dj, cap);
        uint rb = r, jb = j;
        TDM_MWALK_NEXT(r, j, dr, dj, cap);
        uint rc = r, jc = j;
        TDM_MWALK_NEXT(r, j, dr, dj, cap);
        uint rd = r, jd = j;
        TDM_MWALK_NEXT(r, j, dr, dj, cap);
        /* heaps past r1 read as r1 - 1's count, then dropped */
        uint na = hn[ra], nb = hn[min(rb, last)], nc = hn[min(rc, last)], nd = hn[min(rd, last)];
        int va = ja < na, vb = rb < r1 && jb < nb, vc = rc < r1 && jc < nc,
            vd = rd < r1 && jd < nd;
        ulong ka = va ? tdm_merge_key(hs, hd, ra * cap + ja) : 0ul;
        ulong kb = vb ? tdm_merge_key(hs, hd, rb * cap + jb) : 0ul;
        ulong kc = vc ? tdm_merge_key(hs, hd, rc * cap + jc) : 0ul;
        ulong kd = vd ? tdm_merge_key(hs, hd, rd * cap + jd) : 0ul;
        n += (uint)va + (uint)vb + (uint)vc + (uint)vd;
        /* an empty slot's 0 never beats top's least: nothing to insert */
        tdm_mtop_push(top, ka);
        tdm_mtop_push(top, kb);
        tdm_mtop_push(top, kc);
        tdm_mtop_push(top, kd);
    }
    return n;
}

/* One survivor of the filter into lkeys (only counted past TDM_MERGE_LKEYS). */
void tdm_mtop_keep(ulong key, __local ulong *lkeys, __local uint *count)
{
    uint at = atomic_inc(count);
    if (at < TDM_MERGE_LKEYS)
        lkeys[at] = key;
}

/* The filter's survivors of this work-item (n keys read, top its best):
   every key at least lo, into lkeys. Where it read at most
   TDM_MERGE_TOPT keys, or its least kept one is below lo, they are all in
   top; else (rare: more than TDM_MERGE_TOPT of its keys reach lo) it reads
   its slots again. */
void tdm_mtop_emit(__global const float *hs, __global const uint *hd, __global const uint *hn,
                   uint r0, uint r1, uint cap, const ulong *top, uint n, ulong lo,
                   __local ulong *lkeys, __local uint *count)
{
    if (n <= TDM_MERGE_TOPT || top[TDM_MERGE_TOPT - 1u] < lo) {
        for (uint t = 0; t < TDM_MERGE_TOPT; t++)
            if (t < n && top[t] >= lo)
                tdm_mtop_keep(top[t], lkeys, count);
        return;
    }
    uint lid = get_local_id(0), ls = get_local_size(0);
    uint r = r0 + lid / cap, j = lid % cap, dr = ls / cap, dj = ls % cap;
    while (r < r1) {
        if (j < hn[r]) {
            ulong key = tdm_merge_key(hs, hd, r * cap + j);
            if (key >= lo)
                tdm_mtop_keep(key, lkeys, count);
        }
        TDM_MWALK_NEXT(r, j, dr, dj, cap);
    }
}

/* The top k of heaps r0 .. r1 (cap entries each, hn[r] used), sorted
   descending, into lkeys[0 .. m); returns m = min(k, entries), or
   TDM_MERGE_SPILL where more candidates passed the filter than lkeys holds
   (lkeys then holds nothing of use: the caller runs the radix select).
   *total gets the entries (the sum of hn). Every work-item of the group
   calls it and gets the same values; it uses shared[0] and shared[3].

   The filter: the work-items' best tt keys each (U, tt x ls of them, tt
   from 1 to TDM_MERGE_TOPT: about 2 k, within lkeys) are sorted in lkeys;
   U's k-th best, lo, is at most the query's k-th best key (U's best k are k
   distinct candidates at least lo), so the top k are among the candidates
   at least lo: at least k of them, and about k (few work-items hold more
   than tt of the top k), each work-item's from its registers but where more
   than TDM_MERGE_TOPT of its keys reach lo. Those go to lkeys and are
   sorted. With k above tt x ls, or no more entries than k or than U
   holds, every candidate passes (lo = 0). */
uint tdm_merge_filtered(__global const float *hs, __global const uint *hd,
                        __global const uint *hn, uint r0, uint r1, uint cap, uint k,
                        __local ulong *lkeys, __local uint *shared, uint *total)
{
    uint lid = get_local_id(0), ls = get_local_size(0);
    ulong top[TDM_MERGE_TOPT];
    uint n = tdm_mtop_scan(hs, hd, hn, r0, r1, cap, top), held = 0;
    for (uint r = r0 + lid; r < r1; r += ls)
        held += hn[r];
    if (lid == 0u) {
        shared[0] = 0u;
        shared[3] = 0u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&shared[0], held);
    /* U: tt keys a work-item at lkeys[lid * tt ..), zeros up to nu (a power
       of two, for the sort); nu = 0: no filter */
    uint lp = 1u, tt = 1u;
    while (lp < ls)
        lp <<= 1;
    while (tt < TDM_MERGE_TOPT && tt * ls < 2u * k && 2u * tt * lp <= TDM_MERGE_LKEYS)
        tt <<= 1;
    uint nu = tt * lp <= TDM_MERGE_LKEYS && k && k <= tt * ls ? tt * lp : 0u;
    for (uint t = 0; t < TDM_MERGE_TOPT; t++)
        if (t < tt && nu)
            lkeys[lid * tt + t] = top[t];
    for (uint i = ls * tt + lid; i < nu; i += ls)
        lkeys[i] = 0ul;
    barrier(CLK_LOCAL_MEM_FENCE);
    *total = shared[0];
    /* at most k: every key is in the top k; at most nu: one sort of them
       all costs less than U's sort and the survivors' */
    if (*total <= k || *total <= nu)
        nu = 0u;
    tdm_bitonic_local(lkeys, nu);
    /* a 0 in U's first k (fewer keys than k there): lo = 0, no filter */
    ulong lo = nu ? lkeys[k - 1u] : 0ul;
    barrier(CLK_LOCAL_MEM_FENCE); /* every lo read before lkeys takes the survivors */
    tdm_mtop_emit(hs, hd, hn, r0, r1, cap, top, n, lo, lkeys, &shared[3]);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint s = shared[3], ns = 0u;
    if (s <= TDM_MERGE_LKEYS)
        for (ns = s ? 1u : 0u; ns < s; ns <<= 1)
            ;
    for (uint i = s + lid; i < ns; i += ls)
        lkeys[i] = 0ul;
    barrier(CLK_LOCAL_MEM_FENCE);
    tdm_bitonic_local(lkeys, ns);
    return s > TDM_MERGE_LKEYS ? TDM_MERGE_SPILL : min(s, k);
}

/* Every key of heaps [r0, r1) at least kth (the k-th key: k of them at
   most) to os/od, in no order; their count, for every work-item. */
uint tdm_select_gather(__global const float *hs, __global const uint *hd, __global const uint *hn,
                       uint r0, uint r1, uint cap, ulong kth, __global float *os,
                       __global uint *od, __local uint *shared)
{
    uint lid = get_local_id(0), ls = get_local_size(0);
    if (lid == 0u)
        shared[3] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = r0 * cap + lid; i < r1 * cap; i += ls) {
        if (i % cap >= hn[i / cap])
            continue;
        if (tdm_merge_key(hs, hd, i) >= kth) {
            uint j = atomic_inc(&shared[3]);
            os[j] = hs[i];
            od[j] = hd[i];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return shared[3];
}

/* A select stage: group g takes heaps [g * per, (g + 1) * per) of the input
   (heaps of cap entries from heap in_off on, counts from hn[in_off]) and
   writes their top k to os/od[(out_off + g) * k ..] and the count to
   on[out_off + g]. Stages repeat (each output the next one's input, two
   areas of the same buffers in turn) until few slices are left for the
   merge. tdm_search_select takes the filter (tdm_merge_filtered),
   tdm_search_select_radix the radix select alone: the host's choice,
   merge_filter_max_k of the tuning table (a CPU runs a group's work-items
   one after the other, and there the filter's sorts of ~2 k keys in each of
   ~128 groups cost more than the radix passes at k = 1,000). (A radix
   twin of tdm_search_merge beside it made Oclgrind count 39,232 bytes of
   local memory for tdm_search_merge, more than its 32 KB device: the
   merge has none.) */
void tdm_select_stage(__global const float *hs, __global const uint *hd, __global const uint *hn,
                      uint in_off, uint nranges, uint cap, uint k, uint per,
                      __global float *os, __global uint *od, __global uint *on, uint out_off,
                      __local uint *hist, __local uint *shared, __local ulong *lkeys)
{
    uint g = get_group_id(0), lid = get_local_id(0), ls = get_local_size(0);
    hs += (size_t)in_off * cap;
    hd += (size_t)in_off * cap;
    hn += in_off;
    os += (size_t)out_off * k;
    od += (size_t)out_off * k;
    on += out_off;
    uint r0 = g * per;
    uint r1 = nranges - r0 > per ? r0 + per : nranges;
    uint total;
    uint m = tdm_merge_filtered(hs, hd, hn, r0, r1, cap, k, lkeys, shared, &total);
    int spill = m == TDM_MERGE_SPILL;
    for (uint i = lid; !spill && i < m; i += ls) {
        ulong key = lkeys[i];
        os[g * k + i] = as_float((uint)(key >> 32));
        od[g * k + i] = 0xffffffffu - (uint)key;
    }
    /* spilled: the radix select's k-th key and every key at least that
       (otherwise over no heaps: no barrier under a branch) */
    uint rs = spill ? r1 : r0;
    ulong kth = tdm_merge_kth(hs, hd, hn, r0, rs, cap, k, hist, shared, &total);
    uint n = tdm_select_gather(hs, hd, hn, r0, rs, cap, kth, os + g * k, od + g * k, shared);
    if (lid == 0u)
        on[g] = spill ? n : m;
}

__kernel void tdm_search_select(__global const float *hs, __global const uint *hd,
                                __global const uint *hn, uint in_off, uint nranges, uint cap,
                                uint k, uint per, __global float *os, __global uint *od,
                                __global uint *on, uint out_off)
{
    __local uint hist[512]; /* histogram, scan (tdm_merge_digit) */
    __local uint shared[4];
    __local ulong lkeys[TDM_MERGE_LKEYS];
    tdm_select_stage(hs, hd, hn, in_off, nranges, cap, k, per, os, od, on, out_off, hist, shared,
                     lkeys);
}

__kernel void tdm_search_select_radix(__global const float *hs, __global const uint *hd,
                                      __global const uint *hn, uint in_off, uint nranges,
                                      uint cap, uint k, uint per, __global float *os,
                                      __global uint *od, __global uint *on, uint out_off)
{
    __local uint hist[512]; /* histogram, scan (tdm_merge_digit) */
    __local uint shared[4];
    uint g = get_group_id(0), lid = get_local_id(0);
    hs += (size_t)in_off * cap;
    hd += (size_t)in_off * cap;
    hn += in_off;
    os += (size_t)out_off * k;
    od += (size_t)out_off * k;
    on += out_off;
    uint r0 = g * per;
    uint r1 = nranges - r0 > per ? r0 + per : nranges;
    uint total;
    ulong kth = tdm_merge_kth(hs, hd, hn, r0, r1, cap, k, hist, shared, &total);
    uint n = tdm_select_gather(hs, hd, hn, r0, r1, cap, kth, os + g * k, od + g * k, shared);
    if (lid == 0u)
        on[g] = n;
}

/* Small k (<= TDM_SMALLK, the top 10 of a web search) over few candidates
   (at most 32 a scanning work-item: the host's tdm_search_small_fits, which
   mirrors TDM_SMALLK and TDM_SMALLK_ITEMS): one pass over them
   instead of the radix select's eight, each of up to TDM_SMALLK_ITEMS
   work-items keeping its best k in a local list, then a tree of pairwise
   merges of those sorted lists (log2 of the work-items rounds, two areas in
   turn). The radix select's passes and their scans' barriers cost a merge
   ~20 us on the H200 at k = 10; with more candidates a work-item's serial
   scan costs more than that (the direct merges of OR and AND, ~10,000 keys
   at k = 10, were 16 us slower than the radix select of 1,024 work-items),
   so those take the filter (tdm_merge_filtered). The lists
   live in local memory, not in private arrays indexed at run time (which
   GPUs spill to off-chip memory anyway). Keys are distinct, so the top k
   is the same set and order either way. Kernels of their own: with both
   paths in one kernel behind a branch, PoCL 3.1 returned wrong radix-select
   results for the branch not taken (Oclgrind did not). */
#define TDM_SMALLK 16u
/* (Oclgrind, 32 KB, counts a kernel's local arrays twice) */
#if TDM_LOCAL_MEM >= 98304
#define TDM_SMALLK_ITEMS 256u
#elif TDM_LOCAL_MEM >= 40960
#define TDM_SMALLK_ITEMS 128u
#else
#define TDM_SMALLK_ITEMS 32u
#endif
/* the local arrays of a kernel that calls tdm_merge_small */
#define TDM_SMALLK_LOCALS                                                        \
    __local ulong tk[2u * TDM_SMALLK_ITEMS * TDM_SMALLK];                       \
    __local uint tn[2u * TDM_SMALLK_ITEMS]

/* The top min(k, entries) keys of heaps r0 .. r1 (cap entries each, hn[r]
   used), sorted descending, into tk[0 ..); returns how many. Every
   work-item of the group calls it and gets the same value. */
uint tdm_merge_small(__global const float *hs, __global const uint *hd, __global const uint *hn,
                     uint r0, uint r1, uint cap, uint k, __local ulong *tk, __local uint *tn)
{
    uint lid = get_local_id(0), ls = get_local_size(0);
    uint a = ls < TDM_SMALLK_ITEMS ? ls : TDM_SMALLK_ITEMS; /* work-items that scan */
    if (lid < a) {
        __local ulong *mine = tk + lid * TDM_SMALLK;
        uint n = 0;
        for (uint i = r0 * cap + lid; i < r1 * cap; i += a) {
            if (i % cap >= hn[i / cap])
                continue;
            ulong key = tdm_merge_key(hs, hd, i);
            if (n == k && key <= mine[k - 1u])
                continue;
            uint j = n < k ? n++ : k - 1u;
            for (; j > 0u && mine[j - 1u] < key; j--)
                mine[j] = mine[j - 1u];
            mine[j] = key;
        }
        tn[lid] = n;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint src = 0; /* the area holding the lists: tk + src * a * TDM_SMALLK */
    for (uint s = 1u; s < a; s <<= 1) {
        if (lid < a && (lid & (2u * s - 1u)) == 0u) {
            __local const ulong *x = tk + (src * a + lid) * TDM_SMALLK, *y = x + s * TDM_SMALLK;
            __local ulong *o = tk + ((src ^ 1u) * a + lid) * TDM_SMALLK;
            uint nx = tn[src * a + lid], ny = lid + s < a ? tn[src * a + lid + s] : 0u;
            uint ix = 0, iy = 0, m = 0;
            for (; m < k && (ix < nx || iy < ny); m++)
                o[m] = iy >= ny || (ix < nx && x[ix] > y[iy]) ? x[ix++] : y[iy++];
            tn[(src ^ 1u) * a + lid] = m;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        src ^= 1u;
    }
    uint m = tn[src * a];
    if (src) /* the result to the front */
        for (uint j = lid; j < m; j += ls)
            tk[j] = tk[a * TDM_SMALLK + j];
    barrier(CLK_LOCAL_MEM_FENCE);
    return m;
}

/* The radix select's top k of heaps 0 .. nranges, sorted, to keys (pow2 >=
   k slots); returns the keys written, *total the entries. Every work-item
   of the group calls it
   (over no heaps and no slots where the filter's answer stands); lkeys holds
   TDM_MERGE_LKEYS keys (the sort's, when pow2 fits: pow2 is the same for the
   whole group). */
uint tdm_merge_radix(__global const float *hs, __global const uint *hd, __global const uint *hn,
                     uint nranges, uint cap, uint k, uint pow2, __global ulong *keys,
                     __local uint *hist, __local uint *shared, __local ulong *lkeys,
                     uint *total)
{
    uint lid = get_local_id(0), ls = get_local_size(0);
    int loc = pow2 <= TDM_MERGE_LKEYS;
    ulong prefix = tdm_merge_kth(hs, hd, hn, 0, nranges, cap, k, hist, shared, total);
    uint ncand = nranges * cap;
    if (lid == 0u)
        shared[3] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < ncand; i += ls) {
        if (i % cap >= hn[i / cap])
            continue;
        ulong key = tdm_merge_key(hs, hd, i);
        if (key >= prefix) {
            uint j = atomic_inc(&shared[3]);
            if (loc)
                lkeys[j] = key;
            else
                keys[j] = key;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    /* both sorts run, one of them over no keys, so no barrier is under a
       branch: with the two sorts behind `if (loc)`, test_merge aborted on
       PoCL 3.1 with a corrupted heap (Oclgrind passed) */
    uint m = shared[3], nl = loc ? pow2 : 0u, ng = loc ? 0u : pow2;
    for (uint i = m + lid; i < nl; i += ls)
        lkeys[i] = 0;
    for (uint i = m + lid; i < ng; i += ls)
        keys[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    tdm_bitonic_local(lkeys, nl);
    tdm_bitonic_global(keys, ng);
    for (uint i = lid; i < nl; i += ls)
        keys[i] = lkeys[i];
    return m;
}

/* The top k of heaps 0 .. nranges, sorted, to out + 2 (pow2 >= k keys), with
   out's header; *m and *total get the keys written and the candidates.
   Every work-item of the group calls it; lkeys holds TDM_MERGE_LKEYS keys:
   the filter's, else (spilled) the radix select's. */
void tdm_merge_top(__global const float *hs, __global const uint *hd, __global const uint *hn,
                   uint nranges, uint cap, uint k, uint pow2, __global ulong *out, uint status,
                   __local uint *hist, __local uint *shared, __local ulong *lkeys,
                   uint *m_out, uint *total_out)
{
    uint lid = get_local_id(0), ls = get_local_size(0);
    __global ulong *keys = out + 2; /* after the header (counts, status) */
    uint total;
    uint m = tdm_merge_filtered(hs, hd, hn, 0, nranges, cap, k, lkeys, shared, &total);
    int spill = m == TDM_MERGE_SPILL;
    for (uint i = lid; !spill && i < pow2; i += ls)
        keys[i] = i < m ? lkeys[i] : 0ul;
    uint tr;
    uint mr = tdm_merge_radix(hs, hd, hn, spill ? nranges : 0u, cap, k, spill ? pow2 : 0u,
                              keys, hist, shared, lkeys, &tr);
    m = spill ? mr : m;
    if (lid == 0u) {
        out[0] = (ulong)m | ((ulong)total << 32);
        out[1] = status;
    }
    *m_out = m;
    *total_out = total;
}

/* The last stage (or the only one): the top k of heaps 0 .. nranges (from
   heap in_off on), sorted, to out + 2 (pow2 >= k keys). With the filter on
   every device: its one merge group's sorts cost a CPU no more than the
   radix passes (PoCL, k = 1,000, 8 to 16 slices: OR 360 -> 265 us, AND 127
   -> 94). */
void tdm_merge_last(__global const float *hs, __global const uint *hd, __global const uint *hn,
                    uint in_off, uint nranges, uint cap, uint k, uint pow2,
                    __global ulong *out, __global uint *out_n, __global const uint *status,
                    __local uint *hist, __local uint *shared, __local ulong *lkeys)
{
    uint m, total, st = status[0];
    tdm_merge_top(hs + (size_t)in_off * cap, hd + (size_t)in_off * cap, hn + in_off, nranges,
                  cap, k, pow2, out, st, hist, shared, lkeys, &m, &total);
    if (get_local_id(0) == 0u) {
        out_n[0] = m;
        out_n[1] = total;
        out_n[2] = st;
    }
}

__kernel void tdm_search_merge(__global const float *hs, __global const uint *hd,
                               __global const uint *hn, uint in_off, uint nranges, uint cap,
                               uint k, uint pow2, __global ulong *out, __global uint *out_n,
                               __global const uint *status)
{
    __local uint hist[512]; /* histogram, scan (tdm_merge_digit) */
    __local uint shared[4];
    __local ulong lkeys[TDM_MERGE_LKEYS];
    tdm_merge_last(hs, hd, hn, in_off, nranges, cap, k, pow2, out, out_n, status, hist, shared,
                   lkeys);
}

/* tdm_search_select for k <= TDM_SMALLK and at most TDM_SMALLK_PER x
   tdm_merge_small_items(group size) keys a group (same arguments). */
__kernel void tdm_search_select_small(__global const float *hs, __global const uint *hd,
                                      __global const uint *hn, uint in_off, uint nranges,
                                      uint cap, uint k, uint per, __global float *os,
                                      __global uint *od, __global uint *on, uint out_off)
{
    TDM_SMALLK_LOCALS;
    uint g = get_group_id(0), lid = get_local_id(0), ls = get_local_size(0);
    uint r0 = g * per;
    uint r1 = nranges - r0 > per ? r0 + per : nranges;
    uint m = tdm_merge_small(hs + (size_t)in_off * cap, hd + (size_t)in_off * cap, hn + in_off,
                             r0, r1, cap, k, tk, tn);
    os += (size_t)(out_off + g) * k;
    od += (size_t)(out_off + g) * k;
    for (uint j = lid; j < m; j += ls) {
        ulong key = tk[j];
        os[j] = as_float((uint)(key >> 32));
        od[j] = 0xffffffffu - (uint)key;
    }
    if (lid == 0u)
        on[out_off + g] = m;
}

/* tdm_search_merge for k <= TDM_SMALLK and at most TDM_SMALLK_PER x
   tdm_merge_small_items(group size) keys (same arguments). */
__kernel void tdm_search_merge_small(__global const float *hs, __global const uint *hd,
                                     __global const uint *hn, uint in_off, uint nranges,
                                     uint cap, uint k, uint pow2, __global ulong *out,
                                     __global uint *out_n, __global const uint *status)
{
    TDM_SMALLK_LOCALS;
    __local uint shared[4];
    uint lid = get_local_id(0), ls = get_local_size(0), st = status[0];
    hn += in_off;
    uint m = tdm_merge_small(hs + (size_t)in_off * cap, hd + (size_t)in_off * cap, hn, 0,
                             nranges, cap, k, tk, tn);
    uint total = tdm_merge_total(hn, 0, nranges, shared);
    for (uint i = lid; i < pow2; i += ls)
        out[2 + i] = i < m ? tk[i] : 0ul;
    if (lid == 0u) {
        out[0] = (ulong)m | ((ulong)total << 32);
        out[1] = st;
        out_n[0] = m;
        out_n[1] = total;
        out_n[2] = st;
    }
}
