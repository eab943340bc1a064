/* Rice (host/codec/rice.c has the layout): blocks of 128 with a parameter k
   per block, binary remainders of k bits and a unary vector where value i's
   terminating one sits at bit q[0] + ... + q[i] + i.

   Two localized prefix sums, as Ding et al. decode Rice on a GPU. The first
   finds every value's terminator: the block's unary words (at most 12 when
   valid) go to local memory, and each work-item counts ones word by word
   (popcount) up to the word that holds its first value's terminator, selects
   it inside the word by halving and walks on to the next ones. Its
   quotient is the distance to the previous terminator, so each work-item
   also locates the one before its first value. The second is the
   segmented work-group scan over the gaps q * 2^k + r (cl/codec_dev.cl),
   for docids only. */

#define RICE_BLOCK 128u
#define RICE_UMAX 16u /* unary words a valid block never exceeds (12) */
#define RICE_VPT TDM_CODEC_VPT(128)
#define RICE_TPB (RICE_BLOCK / RICE_VPT)
#define RICE_BPG (TDM_WG_SIZE / RICE_TPB)

/* Bit position of the r-th set bit (r from 0) of w, which has more than r. */
uint rice_select32(uint w, uint r)
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
uint rice_ctz(uint w) { return 31u - clz(w & (0u - w)); }

/* Bit positions of the ones of rank r0 .. r0 + c - 1 of u[0 .. nu) (nu <=
   RICE_UMAX, the rest of u zero) into at[]; a one that is not there (a
   corrupt block) reads as position 0. Returns how many ones u holds. */
uint rice_ones(__local const uint *u, uint nu, uint r0, uint c, uint *at)
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
        uint q = rice_select32(cur, r0 - before);
        cur &= ~((2u << q) - 1u);
        at[0] = 32u * j + q;
    }
    for (uint v = 1; v < c; v++) {
        while (cur == 0u && j + 1u < RICE_UMAX)
            cur = u[++j];
        at[v] = cur ? 32u * j + rice_ctz(cur) : 0u;
        cur &= cur - 1u;
    }
    return total;
}

/* Decodes the jobs j0 .. j0 + RICE_BPG - 1 of a launch (one round of the kernel). */
void rice_round(uint j0, TDM_CODEC_ARGS, __local uint *scratch, __local uint *ul)
{
    const uint vpt = RICE_VPT, tpb = RICE_TPB;
    uint lid = get_local_id(0), s = lid / tpb, t = lid % tpb, b, pos, len;
    int ok = tdm_codec_job(j0 + s, RICE_BLOCK, sel, njobs, use_sel, nblocks, n, out_cap, status,
                           &b, &pos, &len);
    uint start = ok ? offsets[b] : 0u, np = ok ? offsets[b + 1] - start : 0u;
    __global const uint *p = words + start;
    uint k = np ? p[0] : 0xFFFFFFFFu;
    uint nbin = (len * min(k, 31u) + 31u) >> 5;
    int sound = ok && k <= 31u && 1u + nbin < np;
    uint nu = sound ? np - 1u - nbin : 0u;
    k &= 31u;
    if (ok && !sound && t == 0u)
        atomic_or(status, TDM_CODEC_ST_CORRUPT);

    for (uint j = t; j < RICE_UMAX; j += tpb)
        ul[s * RICE_UMAX + j] = j < nu ? p[1u + nbin + j] : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Terminators of values i0 - 1 .. i0 + vpt - 1 (from i0 for the first
       work-item of a block, whose previous terminator is at bit -1). */
    uint at[TDM_CODEC_VPT_MAX + 1], i0 = t * vpt, o = t ? 1u : 0u;
    uint ones = rice_ones(ul + s * RICE_UMAX, min(nu, RICE_UMAX), i0 - o, vpt + o, at);
    if (sound && t == 0u && (ones != len || nu > RICE_UMAX))
        atomic_or(status, TDM_CODEC_ST_CORRUPT);
    uint g[TDM_CODEC_VPT_MAX], prev = o ? at[0] : 0xFFFFFFFFu;
    for (uint v = 0; v < vpt; v++) {
        uint i = i0 + v, q = at[v + o] - prev - 1u;
        uint r = sound && i < len ? tdm_bits_get(p + 1, nbin, i * k, k) : 0u;
        g[v] = (q << k) + r;
        prev = at[v + o];
    }
    if (delta)
        tdm_codec_delta(g, vpt, tpb, ok ? bases[b] : 0u, scratch);
    if (ok)
        tdm_codec_store(out, pos, t, vpt, g, len);
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_rice_decode(TDM_CODEC_ARGS)
{
    __local uint scratch[2 * TDM_WG_SIZE];
    __local uint ul[RICE_BPG * RICE_UMAX];
    /* Any number of work-groups: each takes rounds of RICE_BPG jobs. */
    for (uint j0 = get_group_id(0) * RICE_BPG; j0 < njobs; j0 += get_num_groups(0) * RICE_BPG) {
        rice_round(j0, TDM_CODEC_PASS, scratch, ul);
        barrier(CLK_LOCAL_MEM_FENCE); /* the next round reuses local memory */
    }
}
