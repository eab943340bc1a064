/* RAW: gaps (or values) stored as they are, blocks of 128. The device side of
   the baseline codec, and the smallest user of the codec kernel contract.
   Four values a work-item: its loads then cover whole cache lines. */
#define TDM_RAW_VPT TDM_CODEC_VPT(TDM_RAW_BLOCK)

void tdm_raw_block(uint job, TDM_CODEC_ARGS, __local uint *scratch)
{
    const uint block = TDM_RAW_BLOCK, vpt = TDM_RAW_VPT, tpb = block / vpt;
    uint t = get_local_id(0) % tpb, b, pos, len;
    int ok = tdm_codec_job(job, block, sel, njobs, use_sel, nblocks, n, out_cap, status, &b,
                           &pos, &len);
    uint start = ok ? offsets[b] : 0u;
    uint v[TDM_CODEC_VPT_MAX];
    for (uint j = 0; j < vpt; j++) {
        uint i = t * vpt + j;
        v[j] = i < len ? words[start + i] : 0u;
    }
    if (delta)
        tdm_codec_delta(v, vpt, tpb, ok ? bases[b] : 0u, scratch);
    if (ok)
        tdm_codec_store(out, pos, t, vpt, v, len);
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_raw_decode(TDM_CODEC_ARGS)
{
    __local uint scratch[2 * TDM_WG_SIZE];
    TDM_CODEC_FOR_JOBS_TPB(job, TDM_RAW_BLOCK / TDM_RAW_VPT)
        tdm_raw_block(job, TDM_CODEC_PASS, scratch);
}
