/* RAW: gaps (or values) stored as they are, blocks of 128. The device side of
   the baseline codec, and the smallest user of the codec kernel contract. */

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_raw_decode(TDM_CODEC_ARGS)
{
    __local uint scratch[2 * TDM_WG_SIZE];
    const uint block = 128u, vpt = TDM_CODEC_VPT(128), tpb = block / vpt;
    const uint bpg = TDM_WG_SIZE / tpb;
    uint lid = get_local_id(0), t = lid % tpb, b, pos, len;
    int ok = tdm_codec_job(get_group_id(0) * bpg + lid / tpb, block, sel, njobs, use_sel,
                           nblocks, n, out_cap, status, &b, &pos, &len);
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
