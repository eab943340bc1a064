/* Partitioned Elias-Fano (host/codec/pef.c has the layout): partitions of
   128 values, each a header word (l, kind), the low parts at l bits each and
   the high parts as a unary bit vector where the k-th one sits at bit
   (x[k] >> l) + k.

   A work-item decodes VPT consecutive values (the wide geometry of
   cl/codec_dev.cl). It finds the word holding the one of its first rank
   from the words' popcounts: on NVIDIA each work-item of the partition
   counts one word and a warp-shuffle scan sums them; elsewhere each one
   counts all of them (at most 12 words, read alike by the partition: a
   broadcast). It selects that one inside the word by halving and walks on
   to the next ones, which nearly always lie in that word and the next: the
   walk then runs without a branch or a load (a walk that loaded a word as
   it crossed one cost a fifth of the H200's speed: work-items of a warp
   cross at different steps); its low parts come through a sliding bit
   window.
   Docids are then base + x and frequencies x[i] - x[i - 1] (EF holds their
   running sums): x[i - 1] of the work-item's first value comes by shuffle
   on NVIDIA, else the work-item decodes that value too, so the default
   kernels need no barrier at all. TDM_CODEC_PIPE=1 builds the variant that
   stages each partition in local memory a round ahead (cl/codec_dev.cl's
   pipelined loop), an experiment for the GPU. */

#define PEF_HMAX 16u  /* high words a valid partition never exceeds (12) */
#define PEF_MAXW 137u /* words of a valid partition: 1 + 124 low + 12 high */
#define PEF_VPT TDM_WIDE_VPT(128u)
#define PEF_TPB (TDM_PEF_BLOCK / PEF_VPT)
#define PEF_CMAX (PEF_VPT + 1) /* the most values a work-item decodes */
#ifndef PEF_NEAR
#define PEF_NEAR 1
#endif


/* Where the one of rank r0 sits in a high part of nh words h: *j, the word
   holding it (PEF_HMAX if the part has no such one), *before, the ones in
   the words before it, *word = h[*j] and *next = h[*j + 1] (0 past the
   part), and *total, the ones of all nh words. The scalar way: the bound
   is a constant, so the loop unrolls and its loads issue together. */
#define PEF_LOCATE(NAME, SPACE)                                                    \
    void NAME(SPACE const uint *h, uint nh, uint r0, uint *j, uint *before,        \
              uint *word, uint *next, uint *total)                                 \
    {                                                                              \
        uint tot = 0u, jj = PEF_HMAX, bef = 0u;                                    \
        for (uint k = 0; k < PEF_HMAX; k++) {                                      \
            uint n1 = k < nh ? popcount(h[k]) : 0u;                                \
            if (jj == PEF_HMAX && tot + n1 > r0) {                                 \
                jj = k;                                                            \
                bef = tot;                                                         \
            }                                                                      \
            tot += n1;                                                             \
        }                                                                          \
        *j = jj;                                                                   \
        *before = bef;                                                             \
        *total = tot;                                                              \
        *word = jj < nh ? h[jj] : 0u;                                              \
        *next = jj + 1u < nh ? h[jj + 1u] : 0u;                                    \
    }
PEF_LOCATE(pef_locate, __global)
PEF_LOCATE(pef_locate_local, __local)

/* The warp's way (NVIDIA): the PEF_TPB work-items of a partition (at least
   PEF_HMAX, at most a warp) each count one high word, a shuffle scan sums
   the counts, and a binary search over the sums finds the word: one load
   and 4 + 2 log2(PEF_TPB) shuffles a work-item instead of nh loads. Called
   by the whole warp. */
#define PEF_WARP (TDM_NV_SHFL && PEF_TPB >= PEF_HMAX && PEF_TPB <= 32u)
#if PEF_WARP
void pef_locate_warp(__global const uint *h, uint nh, uint r0, uint *j, uint *before,
                     uint *word, uint *next, uint *total)
{
    uint t = get_local_id(0) % PEF_TPB, seg0 = tdm_lane() - t;
    uint hw = t < nh ? h[t] : 0u, c = popcount(hw);
    uint incl = tdm_warp_scan_incl(c, PEF_TPB), k = 0;
    *total = tdm_shfl_idx(incl, seg0 + PEF_TPB - 1u);
    for (uint step = PEF_TPB / 2u; step; step >>= 1) /* words whose ones end by r0 */
        k += tdm_shfl_idx(incl, seg0 + k + step - 1u) <= r0 ? step : 0u;
    uint ik = tdm_shfl_idx(incl, seg0 + k), ck = tdm_shfl_idx(c, seg0 + k);
    uint nx = tdm_shfl_idx(hw, seg0 + min(k + 1u, PEF_TPB - 1u));
    *word = tdm_shfl_idx(hw, seg0 + k);
    *next = ik > r0 && k + 1u < nh ? nx : 0u;
    *j = ik > r0 ? k : PEF_HMAX;
    *before = ik - ck;
}
#endif

/* x[k] for the values of ranks r0 .. r0 + c - 1 of a partition of len
   values whose payload p has nw readable words (of its np; np > nw only
   for a corrupt one). Returns the kind (0 Elias-Fano, 1 packed, -1 bad).
   report: this work-item flags a corrupt partition in *status. LOCATE finds
   the first one's word; the walk goes on from there. From global memory,
   or from a staged copy. */
#define PEF_DECODE(NAME, SPACE, WIN, LOCATE)                                       \
    int NAME(SPACE const uint *p, uint nw, uint np, uint len, uint r0, uint c,     \
             uint report, __global uint *status, uint *x)                          \
    {                                                                              \
        uint hdr = nw ? p[0] : 0xFFFFFFFFu, l = hdr & 0xFFu, kind = hdr >> 8;      \
        uint nlow = (len * min(l, 32u) + 31u) >> 5;                                \
        int ef = kind == TDM_PEF_EF && l <= 31u && 1u + nlow <= nw;                        \
        int packed = kind == TDM_PEF_PACKED && l <= 32u && 1u + nlow <= nw;                    \
        uint nh = ef ? min(nw - 1u - nlow, PEF_HMAX) : 0u;                         \
        /* The low window first: its loads fly while the high part is counted. */  \
        uint nlw = ef || packed ? nlow : 0u; /* low words inside the payload */    \
        uint mask = l >= 32u ? 0xFFFFFFFFu : (1u << l) - 1u;                       \
        tdm_bitwin win = WIN##_open(p + 1, nlw, r0 * l);                           \
        SPACE const uint *h = p + 1u + nlow;                                       \
        uint total, j, before, cur, nxt;                                           \
        LOCATE(h, nh, r0, &j, &before, &cur, &nxt, &total);                        \
        x[0] = 0u;                                                                 \
        if (j < PEF_HMAX) {                                                        \
            uint q = tdm_select32(cur, r0 - before);                               \
            cur &= ~((2u << q) - 1u); /* drop the ones up to this one */           \
            x[0] = 32u * j + q - r0;                                               \
        }                                                                          \
        if (popcount(cur) + popcount(nxt) + 1u >= c) {                             \
            /* The walk to come lies in cur and nxt: no branch, no load. */        \
            uint at = 32u * j - r0;                                                \
            TDM_UNROLL                                                             \
            for (uint v = 1; v < c; v++) {                                         \
                uint hi = cur == 0u;                                               \
                x[v] = at + (hi ? 32u : 0u) + tdm_ctz(hi ? nxt : cur) - v;         \
                cur &= cur - 1u;                                                   \
                nxt = hi ? nxt & (nxt - 1u) : nxt;                                 \
            }                                                                      \
        } else {                                                                   \
            TDM_UNROLL                                                             \
            for (uint v = 1; v < c; v++) {                                         \
                while (cur == 0u && j + 1u < nh)                                   \
                    cur = h[++j];                                                  \
                x[v] = cur ? 32u * j + tdm_ctz(cur) - (r0 + v) : 0u;               \
                cur &= cur - 1u;                                                   \
            }                                                                      \
        }                                                                          \
        if (report && ((!ef && !packed) || np > nw ||                              \
                       (ef && (total != len || nw - 1u - nlow > PEF_HMAX))))       \
            atomic_or(status, TDM_CODEC_ST_CORRUPT);                               \
        /* c low parts within 32 bits (l <= 4 for 8: dense partitions) lie in      \
           the window's 64: a shift each, no window to move. */                    \
        ulong bits = (((ulong)win.hi << 32) | win.lo) >> win.sh;                   \
        uint low[PEF_CMAX];                                                        \
        if (PEF_NEAR && c * l <= 32u) {                                            \
            TDM_UNROLL                                                             \
            for (uint v = 0; v < c; v++)                                           \
                low[v] = (uint)(bits >> (v * l)) & mask;                           \
        } else {                                                                   \
            TDM_UNROLL                                                             \
            for (uint v = 0; v < c; v++)                                           \
                low[v] = WIN##_take(&win, p + 1, nlw, l, mask);                    \
        }                                                                          \
        /* x << l | low, or low alone for a packed partition: one multiply-add     \
           (on NVIDIA the integer ALU is the busy unit, the FMA unit not). */      \
        uint scale = ef ? 1u << l : 0u;                                            \
        TDM_UNROLL                                                                 \
        for (uint v = 0; v < c; v++)                                               \
            x[v] = x[v] * scale + low[v];                                          \
        return ef ? 0 : packed ? 1 : -1;                                           \
    }
PEF_DECODE(pef_decode, __global, tdm_bitwin0, pef_locate)
PEF_DECODE(pef_decode_local, __local, tdm_bitwin_local, pef_locate_local)
#if PEF_WARP
PEF_DECODE(pef_decode_warp, __global, tdm_bitwin0, pef_locate_warp)
#endif

/* A work-item decodes vpt + 1 values from rank i0 - o (o = 1, the value
   before its first) or from rank 0 (o = 0, the first work-item: one value
   past its last). Its k-th value and the one before it, with k a constant
   once the loop is unrolled, so that x stays in registers (an index that
   varies at run time would put it in memory). */
uint pef_pick(const uint *x, uint k, uint o) { return o ? x[k + 1u] : x[k]; }
uint pef_pick_prev(const uint *x, uint k, uint o) { return o ? x[k] : k ? x[k - 1u] : 0u; }

#if TDM_CODEC_PIPE

/* Work-item t's values as the pipelined loop wants them: differences
   x[i] - x[i - 1], which its scan sums back onto the base for docids (the
   values themselves for a packed frequency partition). */
void pef_stage_values(__local const uint *lw, uint nw, uint np, uint ok, uint len, uint t,
                      uint delta, __global uint *status, uint *v)
{
    uint o = t ? 1u : 0u, x[PEF_VPT + 1];
    int kind = pef_decode_local(lw, nw, np, len, t * PEF_VPT - o, PEF_VPT + 1u,
                                ok && t == 0u, status, x);
    for (uint k = 0; k < PEF_VPT; k++) {
        uint xk = pef_pick(x, k, o), prev = pef_pick_prev(x, k, o);
        v[k] = kind == TDM_PEF_EF || delta ? xk - prev : xk;
    }
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_pef_decode(TDM_CODEC_ARGS)
{
    TDM_CODEC_PIPELINE(TDM_PEF_BLOCK, PEF_VPT, PEF_MAXW,
                       pef_stage_values(lw, nw, cur.nw, cur.ok, cur.len, t, delta, status, v))
}

#elif PEF_WARP /* NVIDIA: shuffles find the first one, and pass each value on */

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_pef_decode(TDM_CODEC_ARGS)
{
    const uint vpt = PEF_VPT;
    uint t = get_local_id(0) % PEF_TPB;
    TDM_CODEC_FOR_JOBS_TPB(job, PEF_TPB) {
        uint b, pos, len;
        int ok = tdm_codec_job(job, TDM_PEF_BLOCK, sel, njobs, use_sel, nblocks, n, out_cap,
                               status, &b, &pos, &len);
        uint start = ok ? offsets[b] : 0u, np = ok ? offsets[b + 1] - start : 0u;
        uint x[PEF_VPT], v[PEF_VPT];
        int kind = pef_decode_warp(words + start, np, np, len, t * vpt, vpt, ok && t == 0u,
                                   status, x);
        uint prev = tdm_shfl_up(x[vpt - 1u], 1u); /* the work-item before's last */
        uint base = ok && delta ? bases[b] : 0u;
        for (uint k = 0; k < vpt; k++) {
            uint before = k ? x[k - 1u] : t ? prev : 0u;
            v[k] = delta ? base + x[k] : kind == TDM_PEF_EF ? x[k] - before : x[k];
        }
        if (ok)
            tdm_codec_store(out, pos, t, vpt, v, len);
    }
}

#else /* read global memory directly: no barrier, no local memory */

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_pef_decode(TDM_CODEC_ARGS)
{
    const uint vpt = PEF_VPT;
    uint t = get_local_id(0) % PEF_TPB, o = t ? 1u : 0u;
    TDM_CODEC_FOR_JOBS_TPB(job, PEF_TPB) {
        uint b, pos, len;
        int ok = tdm_codec_job(job, TDM_PEF_BLOCK, sel, njobs, use_sel, nblocks, n, out_cap,
                               status, &b, &pos, &len);
        uint start = ok ? offsets[b] : 0u, np = ok ? offsets[b + 1] - start : 0u;
        uint x[PEF_VPT + 1], v[PEF_VPT];
        int kind = pef_decode(words + start, np, np, len, t * vpt - o, vpt + 1u, ok && t == 0u,
                              status, x);
        uint base = ok && delta ? bases[b] : 0u;
        for (uint k = 0; k < vpt; k++) {
            uint xk = pef_pick(x, k, o), prev = pef_pick_prev(x, k, o);
            v[k] = delta ? base + xk : kind == TDM_PEF_EF ? xk - prev : xk;
        }
        if (ok)
            tdm_codec_store(out, pos, t, vpt, v, len);
    }
}

#endif

/* Random access (host/codec/gather.h has the contract): out[q] = value
   idx[q] of the list, one work-item each: x[k] by select (and x[k - 1] for
   a frequency: the walk takes one step more; two values either way). */
__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_pef_get(TDM_GET_ARGS)
{
    uint i, q = get_global_id(0);
    if (!tdm_codec_get_pos(n, idx, count, out, status, &i))
        return;
    uint b = i / TDM_PEF_BLOCK, k = i % TDM_PEF_BLOCK, len = min(TDM_PEF_BLOCK, n - b * TDM_PEF_BLOCK);
    uint start = offsets[b], np = offsets[b + 1] - start, o = !delta && k ? 1u : 0u, x[2];
    int kind = pef_decode(words + start, np, np, len, k - o, 2u, 1u, status, x);
    out[q] = delta ? bases[b] + x[o] : kind == TDM_PEF_EF && o ? x[1] - x[0] : x[o];
}
