/* What every codec kernel shares: the standard arguments (host/codec/codec_dev.h
   has the contract), job resolution, a segmented work-group scan, the d-gap
   sum and coalesced stores.

   Geometry: a work-item holds VPT consecutive values of one block (VPT = 4
   for RAW, 8 in the wide geometry of every other codec, or more where the
   work-group is small for a block), so a block takes TPB = block / VPT
   work-items and a work-group decodes TDM_WG_SIZE / TPB blocks side by side.
   Four consecutive values per work-item make one uint4 store: a warp writes
   whole cache lines. */

#define TDM_CODEC_ARGS                                                             \
    __global const uint *words, __global const uint *offsets,                      \
        __global const uint *bases, __global const uint *params, uint nblocks,     \
        uint n, uint delta, __global const uint *sel, uint njobs, uint use_sel,    \
        __global uint *out, uint out_cap, __global uint *status

#define TDM_CODEC_PASS                                                             \
    words, offsets, bases, params, nblocks, n, delta, sel, njobs, use_sel, out,    \
        out_cap, status

/* Status bits (TDM_CODEC_ST_*), block sizes and the least values a
   work-item decodes (TDM_CODEC_VPT_MIN, TDM_WIDE_VPT_MIN) come from
   host/codec/layout.h, which the host codecs share. */

/* Values a work-item decodes: the least for the geometry, more where the
   work-group is too small for a block. host/codec/codec_dev.c:
   tdm_codec_dev_bpg_vpt and tdm_codec_dev_bpg_wide are the host's twins. */
#define TDM_CODEC_VPTN(B, M) ((B) / TDM_WG_SIZE > (M) ? (B) / TDM_WG_SIZE : (M))
#define TDM_CODEC_VPT(B) TDM_CODEC_VPTN(B, TDM_CODEC_VPT_MIN)

/* The wide geometry of every codec but RAW: TDM_WIDE_VPT_MIN values a
   work-item (8: amortises a work-item's fixed costs, its job and its share
   of the scan, best on an H200); the host's twin is
   host/codec/codec_dev.c: tdm_codec_dev_bpg_wide. */
#define TDM_WIDE_VPT(B) TDM_CODEC_VPTN(B, TDM_WIDE_VPT_MIN)
#define TDM_WIDE_TPB(B) ((B) / TDM_WIDE_VPT(B))

/* Private arrays are sized for the largest block (1024) on this device, in
   either geometry (codecs of other files rely on this size). */
#define TDM_CODEC_VPT_MAX                                                          \
    TDM_CODEC_VPTN(1024, (TDM_WIDE_VPT_MIN > TDM_CODEC_VPT_MIN ? TDM_WIDE_VPT_MIN  \
                                                               : TDM_CODEC_VPT_MIN))
#define TDM_WIDE_VPT_MAX TDM_WIDE_VPT(1024)

/* The one job loop of every decode kernel: grid-stride over the launch's
   jobs, TDM_WG_SIZE / tpb at a time (tpb work-items a block): `job` is this
   work-item's job, job_0 the round's first. Correct for any number of
   groups (the driver caps them: host/codec/codec_dev.h); the bound is the
   same for the whole group, so barriers inside are reached by all. */
#define TDM_CODEC_FOR_JOBS_TPB(job, tpb)                                           \
    for (uint job##_0 = get_group_id(0) * (TDM_WG_SIZE / (tpb)),                   \
              job = job##_0 + get_local_id(0) / (tpb);                             \
         job##_0 < njobs;                                                          \
         job##_0 += get_num_groups(0) * (TDM_WG_SIZE / (tpb)),                     \
              job = job##_0 + get_local_id(0) / (tpb))

/* Resolves job `job` of a launch to its block, output position and length.
   Returns 0 (and len 0) when there is nothing to decode: past the last job,
   or a bad job (block out of range, output past out_cap), which sets
   status. Every work-item of a block slot gets the same answer. */
int tdm_codec_job(uint job, uint block, __global const uint *sel, uint njobs, uint use_sel,
                  uint nblocks, uint n, uint out_cap, __global uint *status, uint *b,
                  uint *pos, uint *len)
{
    *b = 0;
    *pos = 0;
    *len = 0;
    if (job >= njobs)
        return 0;
    uint bb = use_sel ? sel[2 * job] : job;
    uint p = use_sel ? sel[2 * job + 1] : job * block;
    if (bb >= nblocks) {
        atomic_or(status, TDM_CODEC_ST_BADJOB);
        return 0;
    }
    uint l = min(block, n - bb * block);
    if (p > out_cap || l > out_cap - p) {
        atomic_or(status, TDM_CODEC_ST_BADJOB);
        return 0;
    }
    *b = bb;
    *pos = p;
    *len = l;
    return 1;
}

/* Exclusive prefix sum of v over segments of `seg` consecutive work-items
   (seg a power of two dividing the work-group size); *total (unless NULL) gets the
   segment's sum. Every work-item of the group must call it with the same
   seg. scratch holds 2 * TDM_WG_SIZE uints.

   Radix-8 raking: each level sums up to 7 entries to the left within a
   piece of 8 (local reads that a piece shares: broadcasts), and one
   work-item per piece writes the piece's total for the next level. No
   lockstep is assumed, so each level but the last ends in a barrier; a scan
   of 64 costs 2 barriers (3 with the closing one of tdm_seg_scan_excl) where
   Hillis-Steele costs 14. */
#if TDM_NV_SHFL
/* With warp shuffles: a scan of each warp, then, for segments of several
   warps, one barrier to add the totals of the warps before (at most
   TDM_WG_SIZE / 32 of them). total may be NULL. */
uint tdm_seg_scan_excl_nb(uint v, uint seg, __local uint *scratch, uint *total)
{
    uint lid = get_local_id(0), incl = tdm_warp_scan_incl(v, min(seg, 32u));
    if (seg <= 32u) {
        if (total)
            *total = tdm_shfl_idx(incl, tdm_lane() | (seg - 1u));
        return incl - v;
    }
    uint warp = lid >> 5, nw = seg >> 5, first = warp & ~(nw - 1u), before = 0, all = 0;
    if (tdm_lane() == 31u)
        scratch[warp] = incl;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < nw; k++) {
        uint s = scratch[first + k];
        before += first + k < warp ? s : 0u;
        all += s;
    }
    if (total)
        *total = all;
    return before + incl - v;
}
#else
uint tdm_seg_scan_excl_nb(uint v, uint seg, __local uint *scratch, uint *total)
{
    uint lid = get_local_id(0);
    __local uint *a = scratch;
    a[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint excl = 0, idx = lid, span = 1, width = TDM_WG_SIZE, tot = v;
    while (span < seg) {
        uint entries = seg / span;                 /* entries of this level per segment */
        uint piece = entries < 8 ? entries : 8u;   /* entries summed together */
        uint g = idx & ~(piece - 1u), r = idx & (piece - 1u);
        uint p = 0, all = 0;
        for (uint j = 0; j < 8; j++) {
            uint x = j < piece ? a[g + j] : 0u;
            p += j < r ? x : 0u;
            all += x;
        }
        excl += p;
        tot = all;
        __local uint *next = a + width;
        if (piece == 8 && entries > 8 && r == 7 && lid % span == 0)
            next[idx >> 3] = all;
        a = next;
        width >>= 3;
        idx >>= 3;
        span <<= 3;
        if (entries > 8)   /* the same for the whole group: seg is uniform */
            barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (total)
        *total = tot;
    return excl;
}
#endif

/* The same, ending in a barrier so that scratch may be reused right after.
   tdm_seg_scan_excl_nb leaves that out: a caller that alternates two scratch
   buffers (a barrier of the next scan separates every reuse) saves it. */
uint tdm_seg_scan_excl(uint v, uint seg, __local uint *scratch, uint *total)
{
    uint excl = tdm_seg_scan_excl_nb(v, seg, scratch, total);
    barrier(CLK_LOCAL_MEM_FENCE);
    return excl;
}

/* Turns the d-gaps v[0..vpt) of work-item t of a block (tpb work-items)
   into docids: base + the block's prefix sum. Called by the whole group. */
#define TDM_CODEC_DELTA(NAME, SCAN)                                                \
    void NAME(uint *v, uint vpt, uint tpb, uint base, __local uint *scratch)       \
    {                                                                              \
        uint acc = 0;                                                              \
        for (uint j = 0; j < vpt; j++) {                                           \
            acc += v[j];                                                           \
            v[j] = acc;                                                            \
        }                                                                          \
        uint excl = base + SCAN(acc, tpb, scratch, NULL);                          \
        for (uint j = 0; j < vpt; j++)                                             \
            v[j] += excl;                                                          \
    }
TDM_CODEC_DELTA(tdm_codec_delta, tdm_seg_scan_excl)
/* Without the closing barrier: see tdm_seg_scan_excl_nb. */
TDM_CODEC_DELTA(tdm_codec_delta_nb, tdm_seg_scan_excl_nb)

/* Stores work-item t's values (block positions t*vpt ..) at out + pos:
   uint4 stores where the run is whole and 16-byte aligned, else one by one. */
void tdm_codec_store(__global uint *out, uint pos, uint t, uint vpt, const uint *v, uint len)
{
    uint i0 = t * vpt;
    if (i0 + vpt <= len && (pos & 3u) == 0) {
        __global uint4 *o = (__global uint4 *)(out + pos + i0);
        for (uint k = 0; k < vpt / 4; k++)
            o[k] = (uint4)(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]);
    } else {
        for (uint j = 0; j < vpt; j++)
            if (i0 + j < len)
                out[pos + i0 + j] = v[j];
    }
}

/* Reads `width` bits (0..32) at bit `bit` of a block of nw words, never past
   its end. */
uint tdm_bits_get(__global const uint *w, uint nw, uint bit, uint width)
{
    uint wi = bit >> 5, sh = bit & 31u;
    uint lo = wi < nw ? w[wi] : 0u;
    uint hi = wi + 1 < nw ? w[wi + 1] : 0u;
    uint x = (uint)((((ulong)hi << 32) | lo) >> sh);
    return width >= 32 ? x : x & ((1u << width) - 1u);
}

/* A sequential reader of consecutive fields: a window of two words (lo, hi)
   at bit sh of lo; taking a field of up to 32 bits moves the window by at
   most one word, so each word of the stream is loaded once (not twice a
   value) and no index is computed per value. AHEAD (0..2) more words are
   loaded ahead of the window: opening issues all its loads at once, and a
   word that enters the window was loaded steps before, so a work-item does
   not wait on a load per word crossed (GPU-BP: from 64 to 70 % of the
   H200's copy bandwidth). They cost registers, which PEF cannot spare:
   tdm_bitwin looks 2 words ahead, tdm_bitwin0 and the local one none. */
typedef struct tdm_bitwin {
    uint lo, hi, a0, a1, sh, k; /* k: the word lo was loaded from */
} tdm_bitwin;

#define TDM_BITWIN(NAME, SPACE, AHEAD)                                             \
    tdm_bitwin NAME##_open(SPACE const uint *w, uint nw, uint bit)                 \
    {                                                                              \
        tdm_bitwin b;                                                              \
        b.k = bit >> 5;                                                            \
        b.sh = bit & 31u;                                                          \
        b.lo = b.k < nw ? w[b.k] : 0u;                                             \
        b.hi = b.k + 1 < nw ? w[b.k + 1] : 0u;                                     \
        b.a0 = (AHEAD) > 0 && b.k + 2 < nw ? w[b.k + 2] : 0u;                      \
        b.a1 = (AHEAD) > 1 && b.k + 3 < nw ? w[b.k + 3] : 0u;                      \
        return b;                                                                  \
    }                                                                              \
    uint NAME##_take(tdm_bitwin *b, SPACE const uint *w, uint nw, uint width,      \
                     uint mask)                                                    \
    {                                                                              \
        uint x = (uint)((((ulong)b->hi << 32) | b->lo) >> b->sh) & mask;           \
        b->sh += width;                                                            \
        if (b->sh >= 32) {                                                         \
            uint next = b->k + 2 + (AHEAD); /* the word to load now */             \
            b->sh -= 32;                                                           \
            b->k++;                                                                \
            b->lo = b->hi;                                                         \
            b->hi = (AHEAD) ? b->a0 : next < nw ? w[next] : 0u;                    \
            b->a0 = (AHEAD) > 1 ? b->a1 : next < nw ? w[next] : 0u;                \
            b->a1 = next < nw ? w[next] : 0u;                                      \
        }                                                                          \
        return x;                                                                  \
    }
TDM_BITWIN(tdm_bitwin, __global, 2)
TDM_BITWIN(tdm_bitwin0, __global, 0)
TDM_BITWIN(tdm_bitwin_local, __local, 0)

/* ---- the pipelined decode loop

   A work-group decodes TDM_WG_SIZE / TPB blocks at a time and loops over the
   launch's jobs (grid-stride). Each block's words are copied to local memory
   (coalesced), where the codec reads its values; the copy of the next round's
   blocks is loaded into registers one round ahead, and their offsets and
   bases two rounds ahead, so no round waits for global memory: the loads of
   round k+1 are in flight while round k unpacks, scans and stores (a direct
   round waits for two dependent loads: endpoints, then words). For GPU-BP
   and GPU-VByte it lost on an H200 to reading global memory directly (by
   10-25%: the copy and its barrier cost more than the latency it hides), and
   their pipelined kernels were removed; PEF keeps it as an experiment
   (TDM_CODEC_PIPE=1, which tests/test_codec_pef.c runs). */
#ifndef TDM_CODEC_PIPE
#define TDM_CODEC_PIPE 0
#endif

/* One job's block, as the loop carries it ahead of its words. */
typedef struct tdm_codec_meta {
    uint ok, pos, len, start, nw, base;
} tdm_codec_meta;

tdm_codec_meta tdm_codec_meta_load(uint job, uint block, TDM_CODEC_ARGS)
{
    tdm_codec_meta m;
    uint b;
    m.ok = (uint)tdm_codec_job(job, block, sel, njobs, use_sel, nblocks, n, out_cap, status,
                               &b, &m.pos, &m.len);
    m.start = m.ok ? offsets[b] : 0u;
    m.nw = m.ok ? offsets[b + 1] - m.start : 0u;
    m.base = m.ok && delta ? bases[b] : 0u;
    return m;
}

/* Loads word t + k * tpb of the block, k < pf, into r (0 past its end). */
void tdm_codec_prefetch(__global const uint *words, const tdm_codec_meta *m, uint t, uint tpb,
                        uint pf, uint *r)
{
    for (uint k = 0; k < pf; k++) {
        uint i = t + k * tpb;
        r[k] = i < m->nw ? words[m->start + i] : 0u;
    }
}

/* Stores what tdm_codec_prefetch loaded into the block's local copy. */
void tdm_codec_commit(__local uint *lw, uint nw, uint t, uint tpb, uint pf, const uint *r)
{
    for (uint k = 0; k < pf; k++) {
        uint i = t + k * tpb;
        if (i < nw)
            lw[i] = r[k];
    }
}

/* The loop, for a kernel of block size B, VPT values a work-item, whose
   blocks take at most MAXW words. DECODE is a statement that fills
   v[0..vpt) from the local copy lw (nw words, of which no read may leave),
   with cur the block's metadata; it is run by the whole group and may use
   barriers. */
#define TDM_CODEC_PIPELINE(B, VPT, MAXW, DECODE)                                   \
    __local uint scratch[2 * TDM_WG_SIZE];                                         \
    __local uint stage[TDM_WG_SIZE / ((B) / (VPT)) * (MAXW)];                      \
    const uint vpt = (VPT), tpb = (B) / (VPT), slots = TDM_WG_SIZE / tpb;          \
    const uint pf = ((MAXW) + tpb - 1) / tpb;                                      \
    uint t = get_local_id(0) % tpb, slot = get_local_id(0) / tpb;                  \
    uint stride = get_num_groups(0) * slots, j0 = get_group_id(0) * slots;         \
    __local uint *lw = stage + slot * (MAXW);                                      \
    uint r[((MAXW) + (B) / (VPT) - 1) / ((B) / (VPT))];                            \
    uint v[TDM_CODEC_VPT_MAX];                                                     \
    tdm_codec_meta cur = tdm_codec_meta_load(j0 + slot, B, TDM_CODEC_PASS);        \
    tdm_codec_meta nxt = tdm_codec_meta_load(j0 + slot + stride, B, TDM_CODEC_PASS); \
    tdm_codec_prefetch(words, &cur, t, tpb, pf, r);                                \
    tdm_codec_commit(lw, min(cur.nw, (uint)(MAXW)), t, tpb, pf, r);                \
    barrier(CLK_LOCAL_MEM_FENCE);                                                  \
    tdm_codec_prefetch(words, &nxt, t, tpb, pf, r);                                \
    tdm_codec_meta nxt2 =                                                          \
        tdm_codec_meta_load(j0 + slot + 2 * stride, B, TDM_CODEC_PASS);            \
    for (; j0 < njobs; j0 += stride) {                                             \
        uint nw = min(cur.nw, (uint)(MAXW));                                       \
        DECODE;                                                                    \
        if (delta)                                                                 \
            tdm_codec_delta(v, vpt, tpb, cur.base, scratch);                       \
        else                                                                       \
            barrier(CLK_LOCAL_MEM_FENCE); /* every read of lw done */              \
        if (cur.ok)                                                                \
            tdm_codec_store(out, cur.pos, t, vpt, v, cur.len);                     \
        tdm_codec_commit(lw, min(nxt.nw, (uint)(MAXW)), t, tpb, pf, r);            \
        barrier(CLK_LOCAL_MEM_FENCE);                                              \
        cur = nxt;                                                                 \
        nxt = nxt2;                                                                \
        tdm_codec_prefetch(words, &nxt, t, tpb, pf, r);                            \
        nxt2 = tdm_codec_meta_load(j0 + slot + 3 * stride, B, TDM_CODEC_PASS);     \
    }

/* Bit position of the r-th set bit (r from 0) of w, which has more than r. */
uint tdm_select32(uint w, uint r)
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
uint tdm_ctz(uint w) { return 31u - clz(w & (0u - w)); }

/* The arguments of every random-access kernel (host/codec/gather.h sets them). */
#define TDM_GET_ARGS                                                               \
    __global const uint *words, __global const uint *offsets,                      \
        __global const uint *bases, __global const uint *params, uint nblocks,     \
        uint n, uint delta, __global const uint *idx, uint count,                  \
        __global uint *out, __global uint *status

/* The start every random-access kernel shares (host/codec/gather.h): the
   position *i that work-item q reads; 0 when there is nothing to do (q past
   count, or a position past the list: then out[q] = 0 and the list's status
   says bad job). */
int tdm_codec_get_pos(uint n, __global const uint *idx, uint count, __global uint *out,
                      __global uint *status, uint *i)
{
    uint q = get_global_id(0);
    if (q >= count)
        return 0;
    *i = idx[q];
    if (*i >= n) {
        out[q] = 0u;
        atomic_or(status, TDM_CODEC_ST_BADJOB);
        return 0;
    }
    return 1;
}
