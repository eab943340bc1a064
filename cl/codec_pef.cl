/* Partitioned Elias-Fano (host/codec/pef.c has the layout): partitions of
   128 values, each a header word (l, kind), the low parts at l bits each and
   the high parts as a unary bit vector where the k-th one sits at bit
   (x[k] >> l) + k.

   Geometry as cl/codec_dev.cl: a work-item decodes VPT consecutive values of
   one partition. The partition's high part (at most 12 words when valid)
   goes to local memory; each work-item counts ones word by word (popcount,
   a prefix over at most PEF_HMAX words) to find the word holding its first
   value's one, selects that one inside the word by halving, and walks on to
   the next ones for its other values. Low parts are read straight from
   global memory, so neighbouring work-items read neighbouring words. */

#define PEF_BLOCK 128u
#define PEF_HMAX 16u  /* high words a valid partition never exceeds (12) */
#define PEF_VPT TDM_CODEC_VPT(128)
#define PEF_TPB (PEF_BLOCK / PEF_VPT)
#define PEF_BPG (TDM_WG_SIZE / PEF_TPB)

/* Bit position of the r-th set bit (r from 0) of w, which has more than r. */
uint pef_select32(uint w, uint r)
{
    uint pos = 0u, c;
    c = popcount(w & 0xFFFFu);
    if (r >= c) { r -= c; w >>= 16; pos += 16u; }
    c = popcount(w & 0xFFu);
    if (r >= c) { r -= c; w >>= 8; pos += 8u; }
    c = popcount(w & 0xFu);
    if (r >= c) { r -= c; w >>= 4; pos += 4u; }
    c = popcount(w & 0x3u);
    if (r >= c) { r -= c; w >>= 2; pos += 2u; }
    return pos + (r >= (w & 1u) ? 1u : 0u);
}

/* Index of the lowest set bit of w != 0 (ctz is OpenCL C 2.0). */
uint pef_ctz(uint w) { return 31u - clz(w & (0u - w)); }

/* High parts of values i0 .. i0 + vpt - 1 of a partition whose high words
   are h[0 .. nh), nh <= PEF_HMAX, the rest of h zero. Returns the number of
   ones in h (the partition's value count when it is sound). The count stops
   at nh (about 8 words for gaps near 16) since a warp pays for every step. */
uint pef_highs(__local const uint *h, uint nh, uint i0, uint vpt, uint *x)
{
    uint total = 0u, j = PEF_HMAX, before = 0u;
    for (uint k = 0; k < nh; k++) {
        uint c = popcount(h[k]);
        if (j == PEF_HMAX && total + c > i0) {
            j = k;
            before = total;
        }
        total += c;
    }
    uint cur = 0u;
    if (j < PEF_HMAX) {
        cur = h[j];
        uint q = pef_select32(cur, i0 - before);
        cur &= ~((2u << q) - 1u); /* drop the ones up to this value's */
        x[0] = 32u * j + q - i0;
    } else {
        x[0] = 0u;
    }
    for (uint v = 1; v < vpt; v++) {
        while (cur == 0u && j + 1u < PEF_HMAX)
            cur = h[++j];
        if (cur == 0u) {
            x[v] = 0u; /* fewer ones than values: corrupt, flagged by the caller */
            continue;
        }
        x[v] = 32u * j + pef_ctz(cur) - (i0 + v);
        cur &= cur - 1u;
    }
    return total;
}

/* Decodes the jobs j0 .. j0 + PEF_BPG - 1 of a launch (one round of the kernel). */
void pef_round(uint j0, TDM_CODEC_ARGS, __local uint *hw, __local uint *lastx)
{
    const uint vpt = PEF_VPT, tpb = PEF_TPB;
    uint lid = get_local_id(0), s = lid / tpb, t = lid % tpb, b, pos, len;
    int ok = tdm_codec_job(j0 + s, PEF_BLOCK, sel, njobs, use_sel, nblocks, n, out_cap, status,
                           &b, &pos, &len);
    uint start = ok ? offsets[b] : 0u, end = ok ? offsets[b + 1] : 0u;
    uint np = end - start; /* the driver checked that offsets never decrease */
    __global const uint *p = words + start;
    uint hdr = np ? p[0] : 0xFFFFFFFFu, l = hdr & 0xFFu, kind = hdr >> 8;
    uint nlow = (len * min(l, 32u) + 31u) >> 5;
    int ef = ok && kind == 0u && l <= 31u && 1u + nlow <= np;
    int packed = ok && kind == 1u && l <= 32u && 1u + nlow <= np;
    uint nh = ef ? np - 1u - nlow : 0u;
    if (ok && !ef && !packed && t == 0u)
        atomic_or(status, TDM_CODEC_ST_CORRUPT);

    for (uint j = t; j < PEF_HMAX; j += tpb)
        hw[s * PEF_HMAX + j] = j < nh ? p[1u + nlow + j] : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);

    uint x[TDM_CODEC_VPT_MAX], i0 = t * vpt;
    uint ones = pef_highs(hw + s * PEF_HMAX, min(nh, PEF_HMAX), i0, vpt, x);
    if (ef && t == 0u && (ones != len || nh > PEF_HMAX))
        atomic_or(status, TDM_CODEC_ST_CORRUPT);
    uint nlw = ef || packed ? nlow : 0u; /* low words that lie inside the payload */
    for (uint v = 0; v < vpt; v++) {
        uint low = i0 + v < len ? tdm_bits_get(p + 1, nlw, (i0 + v) * l, l) : 0u;
        x[v] = ef ? (x[v] << l) | low : low;
    }

    /* Frequencies: EF holds running sums, so a value is x[i] - x[i - 1].
       The barrier stays unconditional even though delta is uniform: PoCL
       lost the value of prev across a barrier inside if (!delta). */
    lastx[lid] = x[vpt - 1u];
    barrier(CLK_LOCAL_MEM_FENCE);
    uint base = ok && delta ? bases[b] : 0u;
    uint prev = t ? lastx[lid - 1u] : 0u;
    for (uint v = 0; v < vpt; v++) {
        uint xv = x[v];
        x[v] = delta ? base + xv : ef ? xv - prev : xv;
        prev = xv;
    }
    if (ok)
        tdm_codec_store(out, pos, t, vpt, x, len);
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_pef_decode(TDM_CODEC_ARGS)
{
    __local uint hw[PEF_BPG * PEF_HMAX];
    __local uint lastx[TDM_WG_SIZE];
    /* Any number of work-groups: each takes rounds of PEF_BPG jobs. */
    for (uint j0 = get_group_id(0) * PEF_BPG; j0 < njobs; j0 += get_num_groups(0) * PEF_BPG) {
        pef_round(j0, TDM_CODEC_PASS, hw, lastx);
    }
}

/* Bit position of the one of rank r among the nh words at h, or 0xFFFFFFFF
   when they hold no more than r ones. */
uint pef_select_global(__global const uint *h, uint nh, uint r)
{
    for (uint j = 0; j < nh; j++) {
        uint w = h[j], c = popcount(w);
        if (r < c)
            return 32u * j + pef_select32(w, r);
        r -= c;
    }
    return 0xFFFFFFFFu;
}

/* x[k] of an EF partition: its low bits and (rank-k one's position - k) as
   the high part; 0 with *bad set if the one is missing. */
uint pef_x(__global const uint *p, uint nlow, uint nh, uint l, uint k, int *bad)
{
    uint at = pef_select_global(p + 1u + nlow, nh, k);
    *bad |= at == 0xFFFFFFFFu;
    return ((at - k) << l) | tdm_bits_get(p + 1, nlow, k * l, l);
}

/* Random access (host/codec/gather.h has the contract): out[q] = value
   idx[q] of the list, one work-item each, by select on the partition's high
   part in global memory (frequencies: two selects, x[k] - x[k - 1]). */
__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_pef_get(__global const uint *words, __global const uint *offsets,
                 __global const uint *bases, __global const uint *params, uint nblocks,
                 uint n, uint delta, __global const uint *idx, uint count,
                 __global uint *out, __global uint *status)
{
    uint q = get_global_id(0);
    if (q >= count)
        return;
    uint i = idx[q];
    if (i >= n) {
        out[q] = 0u;
        atomic_or(status, TDM_CODEC_ST_BADJOB);
        return;
    }
    uint b = i / PEF_BLOCK, k = i % PEF_BLOCK, len = min(PEF_BLOCK, n - b * PEF_BLOCK);
    uint start = offsets[b], np = offsets[b + 1] - start;
    __global const uint *p = words + start;
    uint hdr = np ? p[0] : 0xFFFFFFFFu, l = hdr & 0xFFu, kind = hdr >> 8;
    uint nlow = (len * min(l, 32u) + 31u) >> 5;
    int ef = kind == 0u && l <= 31u && 1u + nlow <= np;
    int packed = kind == 1u && l <= 32u && 1u + nlow <= np;
    int bad = !ef && !packed;
    uint x = 0u, prev = 0u;
    if (packed) {
        x = tdm_bits_get(p + 1, nlow, k * l, l);
    } else if (ef) {
        uint nh = min(np - 1u - nlow, PEF_HMAX);
        x = pef_x(p, nlow, nh, l, k, &bad);
        if (!delta && k)
            prev = pef_x(p, nlow, nh, l, k - 1u, &bad);
    }
    if (bad)
        atomic_or(status, TDM_CODEC_ST_CORRUPT);
    out[q] = delta ? bases[b] + x : x - prev;
}
