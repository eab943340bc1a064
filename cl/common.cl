/* Work-group building blocks shared by codecs and query kernels. */

/* Inclusive prefix sum of one value per work-item over the whole work-group
 * (a power of two). Every work-item of the group must call it. scratch holds
 * get_local_size(0) uints; *total receives the group's sum.
 *
 * Radix-8 raking in place: at each level a work-item adds up to 7 entries to
 * its left within its piece of 8 (reads a piece shares: broadcasts), then one
 * work-item a piece overwrites the level with the piece totals for the next
 * one. Nothing assumes warps in lockstep, so each level takes two barriers:
 * 6 for 256 work-items, where Hillis-Steele takes 18. */
uint tdm_wg_scan_incl(uint v, __local uint *scratch, uint *total)
{
    uint lid = get_local_id(0), entries = get_local_size(0);
    uint excl = 0, idx = lid, span = 1;
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (;;) { /* the same trip count for the whole group */
        uint piece = entries < 8 ? entries : 8u;
        uint g = idx & ~(piece - 1u), r = idx & (piece - 1u), p = 0, all = 0;
        for (uint j = 0; j < 8; j++) {
            uint x = j < piece ? scratch[g + j] : 0u;
            p += j < r ? x : 0u;
            all += x;
        }
        excl += p;
        if (entries <= 8) {
            *total = all;
            break;
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* this level read by all */
        if (r == 7 && lid % span == 0)
            scratch[idx >> 3] = all;
        barrier(CLK_LOCAL_MEM_FENCE);
        idx >>= 3;
        entries >>= 3;
        span <<= 3;
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* scratch may be reused right after */
    return excl + v;
}

/* D-gaps to values, one work-group per block of `block` gaps:
 * out[i] = bases[b] + gaps[start_b] + ... + gaps[i] for i in block b.
 * Launched with TDM_WG_SIZE work-items per group and one group per block. */
__kernel void tdm_delta_decode(__global const uint *gaps, __global const uint *bases,
                               __global uint *out, uint n, uint block)
{
    __local uint scratch[TDM_WG_SIZE];
    uint b = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    uint start = b * block;
    uint end = min(start + block, n);
    uint carry = bases[b];
    for (uint i = start; i < end; i += wg) { /* same trip count for the whole group */
        uint idx = i + lid, total;
        uint p = tdm_wg_scan_incl(idx < end ? gaps[idx] : 0u, scratch, &total);
        if (idx < end)
            out[idx] = carry + p;
        carry += total;
    }
}
