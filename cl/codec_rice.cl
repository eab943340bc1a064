/* Rice (host/codec/rice.c has the layout): blocks of 128 with a parameter k
   per block, binary remainders of k bits and a unary vector where value i's
   terminating one sits at bit q[0] + ... + q[i] + i.

   Two localized prefix sums, as Ding et al. decode Rice on a GPU. The first
   finds every value's terminator: a work-item (VPT consecutive values, the
   wide geometry of cl/codec_dev.cl) counts ones word by word over the unary
   part (popcount, a prefix over at most 12 words that every work-item of
   the block reads alike, a broadcast) up to the word holding its first
   value's terminator, selects it inside the word by halving and walks on to
   the next ones. Its quotient is the distance to the previous terminator,
   so each work-item also locates the one before its first value. The
   remainders come through a sliding bit window. The second is the
   segmented work-group scan over the gaps q * 2^k + r, for docids only. */

#define RICE_UMAX 16u /* unary words a valid block never exceeds (12) */
#define RICE_VPT TDM_WIDE_VPT(128u)
#define RICE_TPB (TDM_RICE_BLOCK / RICE_VPT)


/* Bit positions of the ones of rank r0 .. r0 + c - 1 of u[0 .. nu) (nu <=
   RICE_UMAX) into at[]; a one that is not there (a corrupt block) reads as
   position 0. Returns how many ones u holds. */
uint rice_ones(__global const uint *u, uint nu, uint r0, uint c, uint *at)
{
    uint total = 0u, j = RICE_UMAX, before = 0u;
    for (uint k = 0; k < nu; k++) {
        uint n1 = popcount(u[k]);
        if (j == RICE_UMAX && total + n1 > r0) {
            j = k;
            before = total;
        }
        total += n1;
    }
    uint cur = 0u;
    at[0] = 0u;
    if (j < RICE_UMAX) {
        cur = u[j];
        uint q = tdm_select32(cur, r0 - before);
        cur &= ~((2u << q) - 1u);
        at[0] = 32u * j + q;
    }
    for (uint v = 1; v < c; v++) {
        while (cur == 0u && j + 1u < nu)
            cur = u[++j];
        at[v] = cur ? 32u * j + tdm_ctz(cur) : 0u;
        cur &= cur - 1u;
    }
    return total;
}

/* Work-item t's gaps (values for frequencies) q * 2^k + r of a block of
   len values whose payload p has np words. */
void rice_gaps(__global const uint *p, uint np, uint ok, uint len, uint t,
               __global uint *status, uint *v)
{
    const uint vpt = RICE_VPT;
    uint i0 = t * vpt, o = t ? 1u : 0u;
    uint k = np ? p[0] : 0xFFFFFFFFu;
    uint nbin = (len * min(k, 31u) + 31u) >> 5;
    int sound = ok && k <= 31u && 1u + nbin < np;
    uint nu = sound ? np - 1u - nbin : 0u;
    k &= 31u;
    /* Terminators of values i0 - 1 .. i0 + vpt - 1, or 0 .. vpt for the first
       work-item of a block (whose previous terminator is at bit -1): always
       vpt + 1 of them, and indices into at[] that are constants once the
       loops unroll, so that at[] stays in registers. */
    uint at[RICE_VPT + 1];
    uint ones = rice_ones(p + 1u + nbin, min(nu, RICE_UMAX), i0 - o, vpt + 1u, at);
    if (ok && t == 0u && (!sound || ones != len || nu > RICE_UMAX))
        atomic_or(status, TDM_CODEC_ST_CORRUPT);
    uint nbw = sound ? nbin : 0u, mask = k ? (1u << k) - 1u : 0u;
    tdm_bitwin win = tdm_bitwin0_open(p + 1, nbw, i0 * k);
    for (uint j = 0; j < vpt; j++) {
        uint here = o ? at[j + 1u] : at[j], prev = o ? at[j] : j ? at[j - 1u] : 0xFFFFFFFFu;
        v[j] = ((here - prev - 1u) << k) + tdm_bitwin0_take(&win, p + 1, nbw, k, mask);
    }
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_rice_decode(TDM_CODEC_ARGS)
{
    __local uint scratch[2 * TDM_WG_SIZE];
    const uint vpt = RICE_VPT, tpb = RICE_TPB;
    uint t = get_local_id(0) % tpb;
    TDM_CODEC_FOR_JOBS_TPB(job, RICE_TPB) {
        uint b, pos, len;
        int ok = tdm_codec_job(job, TDM_RICE_BLOCK, sel, njobs, use_sel, nblocks, n, out_cap,
                               status, &b, &pos, &len);
        uint start = ok ? offsets[b] : 0u, np = ok ? offsets[b + 1] - start : 0u;
        uint g[RICE_VPT];
        rice_gaps(words + start, np, ok, len, t, status, g);
        if (delta) /* the same for the whole group, and so is the scan's barrier */
            tdm_codec_delta(g, vpt, tpb, ok ? bases[b] : 0u, scratch);
        if (ok)
            tdm_codec_store(out, pos, t, vpt, g, len);
    }
}
