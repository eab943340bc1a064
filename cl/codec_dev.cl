/* What every codec kernel shares: the standard arguments (host/codec/codec_dev.h
   has the contract), job resolution, a segmented work-group scan, the d-gap
   sum and coalesced stores.

   Geometry: a work-item holds VPT consecutive values of one block (VPT = 4,
   or more where the work-group is smaller than a quarter block), so a block
   takes TPB = block / VPT work-items and a work-group decodes
   TDM_WG_SIZE / TPB blocks side by side. Four consecutive values per
   work-item let each store one uint4: a warp writes 512 contiguous bytes. */

#define TDM_CODEC_ARGS                                                             \
    __global const uint *words, __global const uint *offsets,                     \
        __global const uint *bases, __global const uint *params, uint nblocks,     \
        uint n, uint delta, __global const uint *sel, uint njobs, uint use_sel,    \
        __global uint *out, uint out_cap, __global uint *status

#define TDM_CODEC_PASS                                                             \
    words, offsets, bases, params, nblocks, n, delta, sel, njobs, use_sel, out,    \
        out_cap, status

/* Status bits a kernel ORs into *status. */
#define TDM_CODEC_ST_CORRUPT 1u
#define TDM_CODEC_ST_BADJOB 2u

/* Values a work-item decodes: TDM_CODEC_VPT_MIN (a multiple of 4; 4 unless
   the build says otherwise, for experiments), more where the work-group is
   too small for a block. */
#ifndef TDM_CODEC_VPT_MIN
#define TDM_CODEC_VPT_MIN 4
#endif
#define TDM_CODEC_VPT(B)                                                           \
    ((B) / TDM_WG_SIZE > TDM_CODEC_VPT_MIN ? (B) / TDM_WG_SIZE : TDM_CODEC_VPT_MIN)
#define TDM_CODEC_TPB(B) ((B) / TDM_CODEC_VPT(B))
/* Private arrays are sized for the largest block (1024) on this device. */
#define TDM_CODEC_VPT_MAX TDM_CODEC_VPT(1024)

/* Grid-stride loop over the launch's jobs, TDM_WG_SIZE / TPB(block) at a
   time: `job` is this work-item's job. Correct for any number of groups (the
   driver caps it for codecs that set grid_stride); the bound is the same for
   the whole group, so barriers inside are reached by all. */
#define TDM_CODEC_FOR_JOBS(job, block)                                             \
    for (uint job##_0 = get_group_id(0) * (TDM_WG_SIZE / TDM_CODEC_TPB(block)),     \
              job = job##_0 + get_local_id(0) / TDM_CODEC_TPB(block);               \
         job##_0 < njobs;                                                          \
         job##_0 += get_num_groups(0) * (TDM_WG_SIZE / TDM_CODEC_TPB(block)),       \
              job = job##_0 + get_local_id(0) / TDM_CODEC_TPB(block))

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
   (seg a power of two dividing the work-group size); *total gets the
   segment's sum. Every work-item of the group must call it with the same
   seg. scratch holds 2 * TDM_WG_SIZE uints.

   Radix-8 raking: each level sums up to 7 entries to the left within a
   piece of 8 (local reads that a piece shares: broadcasts), and one
   work-item per piece writes the piece's total for the next level. No
   lockstep is assumed, so each level ends in a barrier; a scan of 64 costs
   3 barriers where Hillis-Steele costs 13. */
uint tdm_seg_scan_excl(uint v, uint seg, __local uint *scratch, uint *total)
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
    *total = tot;
    barrier(CLK_LOCAL_MEM_FENCE); /* scratch may be reused right after */
    return excl;
}

/* Turns the d-gaps v[0..vpt) of work-item t of a block (tpb work-items)
   into docids: base + the block's prefix sum. Called by the whole group. */
void tdm_codec_delta(uint *v, uint vpt, uint tpb, uint base, __local uint *scratch)
{
    uint acc = 0;
    for (uint j = 0; j < vpt; j++) {
        acc += v[j];
        v[j] = acc;
    }
    uint total;
    uint excl = base + tdm_seg_scan_excl(acc, tpb, scratch, &total);
    for (uint j = 0; j < vpt; j++)
        v[j] += excl;
}

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
   its end; from global memory, or from a copy in local memory. */
#define TDM_BITS_GET(NAME, SPACE)                                                  \
    uint NAME(SPACE const uint *w, uint nw, uint bit, uint width)                 \
    {                                                                              \
        uint wi = bit >> 5, sh = bit & 31u;                                        \
        uint lo = wi < nw ? w[wi] : 0u;                                            \
        uint hi = wi + 1 < nw ? w[wi + 1] : 0u;                                    \
        uint x = (uint)((((ulong)hi << 32) | lo) >> sh);                           \
        return width >= 32 ? x : x & ((1u << width) - 1u);                         \
    }
TDM_BITS_GET(tdm_bits_get, __global)
TDM_BITS_GET(tdm_bits_get_local, __local)

/* Staging: with TDM_CODEC_STAGE=1 a block's words are first copied to local
   memory by its work-items together (coalesced), and values are read from
   there. An experiment: 0 (read global memory through the cache) unless the
   build says otherwise. */
#ifndef TDM_CODEC_STAGE
#define TDM_CODEC_STAGE 0
#endif

void tdm_codec_stage(__global const uint *src, uint nw, __local uint *dst, uint t, uint tpb)
{
    for (uint k = t; k < nw; k += tpb)
        dst[k] = src[k];
}
