/* The range kernels with the first select stage in the same launch (host:
   drive/search_dev.c, fused(); docs/SEARCH.md): a GPU's single query at
   small k has tens of thousands of short ranges, whose heaps a select stage
   reduces before the merge. Here each work-group, once its work-items have
   written their ranges' heaps (the barrier orders a group's global writes),
   takes its ranges' top k into os/od/on[group], exactly as
   tdm_search_select's group g does for ranges g * per .. with per = the
   group's size: the merge (or a next stage) reads the same kind of slices,
   and the query has one launch fewer. No AND-then-OR gate: its two passes
   keep the separate kernels. The local arrays are tdm_search_select's. */

__kernel void tdm_search_range_sel(TDM_SR_ARGS, uint k, __global float *os, __global uint *od,
                                   __global uint *on)
{
    __local uint hist[512];
    __local uint shared[4];
    __local ulong lkeys[TDM_MERGE_LKEYS];
    __local uint g0;
    uint g = tdm_sr_group_g(terms, alg, &g0), r = get_global_id(0);
    if (r < nranges)
        tdm_sr_range(TDM_SR_PASS, r, g);
    barrier(CLK_GLOBAL_MEM_FENCE);
    tdm_select_stage(hs, hd, hn, 0, nranges, cap, k, get_local_size(0), os, od, on, 0, hist,
                     shared, lkeys);
}

__kernel void tdm_search_zrange_sel(TDM_ZRK_ARGS, __global uint *status, uint layout, uint k,
                                    __global float *os, __global uint *od, __global uint *on)
{
    __local uint hist[512];
    __local uint shared[4];
    __local ulong lkeys[TDM_MERGE_LKEYS];
    __local uint g0;
    uint g = tdm_sr_group_g(terms, alg, &g0), r = get_global_id(0);
    if (r < nranges)
        tdm_zr_range(TDM_ZRK_PASS, status, layout, r, g);
    barrier(CLK_GLOBAL_MEM_FENCE);
    tdm_select_stage(hs, hd, hn, 0, nranges, cap, k, get_local_size(0), os, od, on, 0, hist,
                     shared, lkeys);
}
