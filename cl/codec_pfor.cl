/* PForDelta (host/codec/pfor.c and newpfd.c have the layouts).

   TDM_CODEC_PFOR: one slot width b for the list (params[0]), blocks of 512,
   and per block two exception arrays (position gaps, high parts), each
   bit-packed with its own width plus a few plain (index, high) pairs.
   TDM_CODEC_NEWPFD128 / NEWPFD64: a width per block, blocks of 128 or 64,
   exception positions as bytes and high parts bit-packed.

   Geometry as cl/codec_dev.cl: a work-item decodes VPT consecutive values
   (the wide 8: a block of 512 spans 64 work-items, or all of a smaller
   group with more values each). Slots are unpacked into local memory, the
   exceptions' high parts ORed into their slots there (atomically, so that a
   corrupt payload naming one position twice is no race), then the localized
   prefix sum turns gaps into docids.
   Positions of PFOR exceptions are gaps, so they take one segmented scan of
   their own. Both kernels loop over the launch's jobs (grid-stride). */

/* The wide geometry (8 values a work-item: 19.6 -> 23.8 % of the copy
   bandwidth on an H200) where the three local block arrays fit, else 4
   (work-groups of 512 on a 48 KB device; the host sizes the launch for 8,
   and the grid-stride loop gives each group two rounds). PFOR_NARROW=1
   forces 4 (for the tests). */
#if !PFOR_NARROW && 12u * TDM_WG_SIZE * TDM_WIDE_VPT(512u) + 8u * TDM_WG_SIZE <= TDM_LOCAL_MEM
#define PFOR_VPT TDM_WIDE_VPT(512u)
#else
#define PFOR_VPT TDM_CODEC_VPT(512)
#endif
#define PFOR_TPB (TDM_PFOR_BLOCK / PFOR_VPT)
#define PFOR_BPG (TDM_WG_SIZE / PFOR_TPB)

/* Words that hold n values of w bits (w <= 32). */
uint pfor_words(uint n, uint w) { return (n * w + 31u) >> 5; }

/* ORs the plain inner exceptions (pairs index, high) of an exception array
   into a[0..e); returns 0 if one is out of range. */
int pfor_patch(__global const uint *pairs, uint count, uint e, uint w, __local uint *a,
               uint t, uint tpb)
{
    int good = 1;
    for (uint k = t; k < count; k += tpb) {
        uint j = pairs[2u * k], hi = pairs[2u * k + 1u];
        if (j < e && w < 32u)
            atomic_or(a + j, hi << w);
        else
            good = 0;
    }
    return good;
}

/* Work-item t's values g[0..PFOR_VPT) (gaps for docids) of the block in
   slot s of the group: len values in the np words at p, slot width bw.
   Called by the whole group (barriers); ok = 0 for a slot without a block
   (np = 0). Shared with the batched decode of a resident index. */
void pfor_slot(__global const uint *p, uint np, int ok, uint len, uint bw, uint s, uint t,
               __local uint *scratch, __local uint *gl, __local uint *ol, __local uint *hl,
               __global uint *status, uint *g)
{
    const uint vpt = PFOR_VPT, tpb = PFOR_TPB;
    uint hdr = np ? p[0] : 0u;
    uint e = hdr & 0x3FFu, wo = (hdr >> 10) & 0x3Fu, wh = (hdr >> 16) & 0x3Fu;
    uint nslots = pfor_words(len, min(bw, 32u));
    uint xw = e && np > 1u + nslots ? p[1u + nslots] : 0u;
    uint xo = xw & 0xFFFFu, xh = xw >> 16;
    uint no = pfor_words(e, min(wo, 32u)), nh = pfor_words(e, min(wh, 32u));
    uint need = 1u + nslots + (e ? 1u + no + nh + 2u * (xo + xh) : 0u);
    int sound = ok && np == need && bw <= 32u && (hdr >> 22) == 0u && e <= len && wo <= 32u &&
                wh <= 32u && (bw < 32u || e == 0u) && xo <= e && xh <= e;
    int bad = ok && !sound;
    if (!sound)
        e = xo = xh = no = nh = 0u; /* read nothing past the payload */

    __local uint *G = gl + s * TDM_PFOR_BLOCK, *O = ol + s * TDM_PFOR_BLOCK, *H = hl + s * TDM_PFOR_BLOCK;
    __global const uint *q = p + 2u + nslots; /* the O slots, then H slots, then pairs */
    uint c[PFOR_VPT], i0 = t * vpt;
    /* Sliding windows over the slots and both exception arrays: each word
       loaded once. Entries past len (or e) are read but never used, and the
       exception arrays (about a tenth of a block) only by the work-items
       that hold some of their entries. */
    uint ns = sound ? nslots : 0u, mb = bw >= 32u ? 0xFFFFFFFFu : (1u << bw) - 1u;
    tdm_bitwin ws = tdm_bitwin_open(p + 1, ns, i0 * bw);
    for (uint v = 0; v < vpt; v++)
        G[i0 + v] = tdm_bitwin_take(&ws, p + 1, ns, bw, mb);
    if (i0 < e) {
        uint mo = wo >= 32u ? 0xFFFFFFFFu : (1u << wo) - 1u;
        uint mh = wh >= 32u ? 0xFFFFFFFFu : (1u << wh) - 1u;
        tdm_bitwin wos = tdm_bitwin_open(q, no, i0 * wo);
        tdm_bitwin whs = tdm_bitwin_open(q + no, nh, i0 * wh);
        for (uint v = 0; v < vpt; v++) {
            O[i0 + v] = tdm_bitwin_take(&wos, q, no, wo, mo);
            H[i0 + v] = tdm_bitwin_take(&whs, q + no, nh, wh, mh);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    bad |= !pfor_patch(q + no + nh, xo, e, wo, O, t, tpb);
    bad |= !pfor_patch(q + no + nh + 2u * xo, xh, e, wh, H, t, tpb);
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Exception j sits at (O[0] + 1) + ... + (O[j] + 1) - 1. */
    uint acc = 0u, total;
    for (uint v = 0; v < vpt; v++) {
        c[v] = i0 + v < e ? O[i0 + v] + 1u : 0u;
        acc += c[v];
    }
    uint at = tdm_seg_scan_excl(acc, tpb, scratch, &total);
    for (uint v = 0; v < vpt; v++) {
        at += c[v];
        if (i0 + v < e) {
            if (at - 1u < len)
                atomic_or(G + (at - 1u), (H[i0 + v] + 1u) << bw);
            else
                bad = 1; /* exception offsets past the block */
        }
    }
    if (bad)
        atomic_or(status, TDM_CODEC_ST_CORRUPT);
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint v = 0; v < vpt; v++)
        g[v] = G[i0 + v];
}

/* Decodes the jobs j0 .. j0 + PFOR_BPG - 1 of a launch (one round of the kernel). */
void pfor_round(uint j0, TDM_CODEC_ARGS, __local uint *scratch, __local uint *gl,
                __local uint *ol, __local uint *hl)
{
    const uint vpt = PFOR_VPT, tpb = PFOR_TPB;
    uint lid = get_local_id(0), s = lid / tpb, t = lid % tpb, b, pos, len;
    int ok = tdm_codec_job(j0 + s, TDM_PFOR_BLOCK, sel, njobs, use_sel, nblocks, n, out_cap, status,
                           &b, &pos, &len);
    uint start = ok ? offsets[b] : 0u, np = ok ? offsets[b + 1] - start : 0u, g[PFOR_VPT];
    pfor_slot(words + start, np, ok, len, params[0], s, t, scratch, gl, ol, hl, status, g);
    if (delta)
        tdm_codec_delta(g, vpt, tpb, ok ? bases[b] : 0u, scratch);
    if (ok)
        tdm_codec_store(out, pos, t, vpt, g, len);
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_pfor_decode(TDM_CODEC_ARGS)
{
    __local uint scratch[2 * TDM_WG_SIZE];
    __local uint gl[PFOR_BPG * TDM_PFOR_BLOCK], ol[PFOR_BPG * TDM_PFOR_BLOCK], hl[PFOR_BPG * TDM_PFOR_BLOCK];
    /* A round of PFOR_BPG jobs works on them together: it takes the round's
       first job (job_0), not the work-item's own. */
    TDM_CODEC_FOR_JOBS_TPB(job, PFOR_TPB) {
        (void)job;
        pfor_round(job_0, TDM_CODEC_PASS, scratch, gl, ol, hl);
        barrier(CLK_LOCAL_MEM_FENCE); /* the next round reuses local memory */
    }
}

/* Work-item t's vpt gaps (values for frequencies) of a NEWPFD block of len
   values whose payload p has np words, tpb work-items a block: slots into G
   (the block's local words) through a sliding bit window, the exceptions'
   high parts ORed in there, read back. Called by the whole group. */
void npfd_gaps(__global const uint *p, uint np, uint ok, uint len, uint t, const uint vpt,
               const uint tpb, __local uint *G, __global uint *status, uint *v)
{
    uint i0 = t * vpt;
    uint hdr = np ? p[0] : 0xFFFFFFFFu;
    uint bw = hdr & 0x3Fu, e = (hdr >> 6) & 0xFFu, hw = (hdr >> 14) & 0x3Fu;
    uint nslots = pfor_words(len, min(bw, 32u)), npos = (e + 3u) >> 2;
    uint nhigh = pfor_words(e, min(hw, 32u));
    int sound = ok && (hdr >> 20) == 0u && bw <= 32u && hw <= 32u && e <= len &&
                (bw < 32u || e == 0u) && np == 1u + nslots + npos + nhigh;
    int bad = ok && !sound;
    if (!sound)
        e = nslots = 0u;
    uint mask = bw >= 32u ? 0xFFFFFFFFu : (1u << bw) - 1u;
    tdm_bitwin win = tdm_bitwin0_open(p + 1, nslots, i0 * bw);
    for (uint k = 0; k < vpt; k++)
        G[i0 + k] = tdm_bitwin0_take(&win, p + 1, nslots, bw, mask);
    barrier(CLK_LOCAL_MEM_FENCE);
    __global const uint *bytes = p + 1u + nslots, *highs = bytes + npos;
    for (uint j = t; j < e; j += tpb) {
        uint at = (bytes[j >> 2] >> (8u * (j & 3u))) & 0xFFu;
        uint hi = tdm_bits_get(highs, nhigh, j * hw, hw) + 1u;
        if (at < len)
            atomic_or(G + at, hi << bw);
        else
            bad = 1;
    }
    if (bad)
        atomic_or(status, TDM_CODEC_ST_CORRUPT);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < vpt; k++)
        v[k] = G[i0 + k];
}

/* Job `job` of a NEWPFD launch with blocks of `block` values; G is the
   work-group's local slot array, one block's worth per block slot. */
void npfd_block(const uint block, uint job, TDM_CODEC_ARGS, __local uint *scratch,
                __local uint *G)
{
    const uint vpt = TDM_WIDE_VPT(block), tpb = block / vpt;
    uint t = get_local_id(0) % tpb, slot = get_local_id(0) / tpb, b, pos, len;
    int ok = tdm_codec_job(job, block, sel, njobs, use_sel, nblocks, n, out_cap, status, &b,
                           &pos, &len);
    uint start = ok ? offsets[b] : 0u, np = ok ? offsets[b + 1] - start : 0u;
    uint g[TDM_WIDE_VPT(128u)];
    npfd_gaps(words + start, np, ok, len, t, vpt, tpb, G + slot * block, status, g);
    if (delta) /* the same for the whole group, and so is the scan's barrier */
        tdm_codec_delta(g, vpt, tpb, ok ? bases[b] : 0u, scratch);
    if (ok)
        tdm_codec_store(out, pos, t, vpt, g, len);
    barrier(CLK_LOCAL_MEM_FENCE); /* the next round rewrites G */
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_newpfd128_decode(TDM_CODEC_ARGS)
{
    __local uint scratch[2 * TDM_WG_SIZE], G[TDM_WG_SIZE * TDM_WIDE_VPT(128u)];
    TDM_CODEC_FOR_JOBS_TPB(job, TDM_WIDE_TPB(128u))
        npfd_block(128u, job, TDM_CODEC_PASS, scratch, G);
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_newpfd64_decode(TDM_CODEC_ARGS)
{
    __local uint scratch[2 * TDM_WG_SIZE], G[TDM_WG_SIZE * TDM_WIDE_VPT(64u)];
    TDM_CODEC_FOR_JOBS_TPB(job, TDM_WIDE_TPB(64u))
        npfd_block(64u, job, TDM_CODEC_PASS, scratch, G);
}

/* Plain inner exception for index j of an exception array: pairs are in
   index order, *c is a cursor over them. Returns the high part to OR in at
   bit w, or 0. */
uint pfor_pair(__global const uint *pairs, uint count, uint *c, uint j, uint w)
{
    while (*c < count && pairs[2u * *c] < j)
        (*c)++;
    if (*c < count && pairs[2u * *c] == j)
        return pairs[2u * (*c)++ + 1u] << w;
    return 0u;
}

/* Value k of a PFOR block of len values (sum = 0) or the sum of its values
   0 .. k (sum = 1: the gap sum of a docid), walking the exception arrays in
   order; 0 with *bad set where the payload is inconsistent. */
uint pfor_block_get(__global const uint *p, uint np, uint len, uint bw, uint k, int sum,
                    int *bad)
{
    uint hdr = np ? p[0] : 0u;
    uint e = hdr & 0x3FFu, wo = (hdr >> 10) & 0x3Fu, wh = (hdr >> 16) & 0x3Fu;
    uint nslots = pfor_words(len, min(bw, 32u));
    uint xw = e && np > 1u + nslots ? p[1u + nslots] : 0u;
    uint xo = xw & 0xFFFFu, xh = xw >> 16;
    uint no = pfor_words(e, min(wo, 32u)), nh = pfor_words(e, min(wh, 32u));
    uint need = 1u + nslots + (e ? 1u + no + nh + 2u * (xo + xh) : 0u);
    if (!(np == need && bw <= 32u && (hdr >> 22) == 0u && e <= len && wo <= 32u &&
          wh <= 32u && (bw < 32u || e == 0u) && xo <= e && xh <= e)) {
        *bad = 1;
        return 0u;
    }
    uint v = 0u;
    for (uint j = sum ? 0u : k; j <= k; j++)
        v += tdm_bits_get(p + 1, nslots, j * bw, bw);
    __global const uint *q = p + 2u + nslots, *po = q + no + nh, *ph = po + 2u * xo;
    uint co = 0u, ch = 0u, at = 0u;
    for (uint j = 0; j < e; j++) {
        at += tdm_bits_get(q, no, j * wo, wo) | pfor_pair(po, xo, &co, j, wo);
        if (at > k)
            break;
        uint h = tdm_bits_get(q + no, nh, j * wh, wh) | pfor_pair(ph, xh, &ch, j, wh);
        v = sum ? v + ((h + 1u) << bw) : at == k ? v | ((h + 1u) << bw) : v;
        at++;
    }
    return v;
}

/* Value k of a NEWPFD block, or the sum of values 0 .. k, as above. */
uint npfd_block_get(__global const uint *p, uint np, uint len, uint k, int sum, int *bad)
{
    uint hdr = np ? p[0] : 0xFFFFFFFFu;
    uint bw = hdr & 0x3Fu, e = (hdr >> 6) & 0xFFu, hw = (hdr >> 14) & 0x3Fu;
    uint nslots = pfor_words(len, min(bw, 32u)), npos = (e + 3u) >> 2;
    uint nhigh = pfor_words(e, min(hw, 32u));
    if (!((hdr >> 20) == 0u && bw <= 32u && hw <= 32u && e <= len && (bw < 32u || e == 0u) &&
          np == 1u + nslots + npos + nhigh)) {
        *bad = 1;
        return 0u;
    }
    uint v = 0u;
    for (uint j = sum ? 0u : k; j <= k; j++)
        v += tdm_bits_get(p + 1, nslots, j * bw, bw);
    __global const uint *bytes = p + 1u + nslots, *highs = bytes + npos;
    for (uint j = 0; j < e; j++) {
        uint at = (bytes[j >> 2] >> (8u * (j & 3u))) & 0xFFu;
        if (at > k)
            break;
        uint hi = (tdm_bits_get(highs, nhigh, j * hw, hw) + 1u) << bw;
        v = sum ? v + hi : at == k ? v | hi : v;
    }
    return v;
}

/* Random access (host/codec/gather.h has the contract): out[q] = value
   idx[q] of the list, one work-item each. A frequency is its slot plus, if
   it is an exception, its high part; a docid sums its block's gaps up to it
   from the block's base. */
__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_pfor_get(TDM_GET_ARGS)
{
    uint i, q = get_global_id(0);
    if (!tdm_codec_get_pos(n, idx, count, out, status, &i))
        return;
    uint b = i / TDM_PFOR_BLOCK, start = offsets[b];
    int bad = 0;
    uint v = pfor_block_get(words + start, offsets[b + 1] - start,
                            min(TDM_PFOR_BLOCK, n - b * TDM_PFOR_BLOCK), params[0], i % TDM_PFOR_BLOCK,
                            delta != 0u, &bad);
    if (bad)
        atomic_or(status, TDM_CODEC_ST_CORRUPT);
    out[q] = delta ? bases[b] + v : v;
}

void npfd_get(const uint block, __global const uint *words, __global const uint *offsets,
              __global const uint *bases, uint n, uint delta, __global const uint *idx,
              uint count, __global uint *out, __global uint *status)
{
    uint i, q = get_global_id(0);
    if (!tdm_codec_get_pos(n, idx, count, out, status, &i))
        return;
    uint b = i / block, start = offsets[b];
    int bad = 0;
    uint v = npfd_block_get(words + start, offsets[b + 1] - start, min(block, n - b * block),
                            i % block, delta != 0u, &bad);
    if (bad)
        atomic_or(status, TDM_CODEC_ST_CORRUPT);
    out[q] = delta ? bases[b] + v : v;
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_newpfd128_get(TDM_GET_ARGS)
{
    npfd_get(128u, words, offsets, bases, n, delta, idx, count, out, status);
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_newpfd64_get(TDM_GET_ARGS)
{
    npfd_get(64u, words, offsets, bases, n, delta, idx, count, out, status);
}
