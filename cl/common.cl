/* Work-group building blocks shared by codecs and query kernels. */

/* Inclusive prefix sum of one value per work-item over the whole work-group
 * (Hillis-Steele in local memory). Every work-item of the group must call it.
 * scratch holds get_local_size(0) uints; *total receives the group's sum. */
uint tdm_wg_scan_incl(uint v, __local uint *scratch, uint *total)
{
    uint lid = get_local_id(0), n = get_local_size(0);
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < n; off <<= 1) {
        uint t = lid >= off ? scratch[lid - off] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        scratch[lid] += t;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint r = scratch[lid];
    *total = scratch[n - 1];
    barrier(CLK_LOCAL_MEM_FENCE); /* scratch may be reused right after */
    return r;
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
