/* GPU-BP (Mallia et al. 2019), blocks of 128 and 256: each block packs its
   values at one bit width, which follows from the block's word count
   (host/codec/bp.c describes the format). A work-item unpacks VPT
   consecutive values; for docids the block's gaps are then summed by a
   segmented work-group scan onto the block base. */

/* The width a block of nw words and len values is packed at; a shift, not
   a division, for every block but a list's last. */
uint tdm_bp_width(uint nw, uint len, const uint block)
{
    if (len == block)
        return min(32u, (nw * 32u) / block);
    return len ? min(32u, (nw * 32u) / len) : 0u;
}

/* Work-item t's vpt values of a block (len values in nw words), read with a
   sliding window. (Staging blocks in local memory first, as PEF's
   TDM_CODEC_PIPE variant does, lost here on an H200 by 10-25 %.) */
void tdm_bp_unpack(__global const uint *src, uint nw, uint len, const uint block, uint t,
                   uint vpt, uint *v)
{
    uint w = tdm_bp_width(nw, len, block);
    uint mask = w >= 32 ? 0xFFFFFFFFu : (1u << w) - 1u;
    tdm_bitwin win = tdm_bitwin_open(src, nw, t * vpt * w);
    for (uint j = 0; j < vpt; j++) {
        uint x = tdm_bitwin_take(&win, src, nw, w, mask);
        v[j] = t * vpt + j < len ? x : 0u;
    }
}

void tdm_bp_block(const uint block, uint job, TDM_CODEC_ARGS, __local uint *scratch)
{
    const uint vpt = TDM_WIDE_VPT(block), tpb = block / vpt;
    uint t = get_local_id(0) % tpb, b, pos, len;
    int ok = tdm_codec_job(job, block, sel, njobs, use_sel, nblocks, n, out_cap, status, &b,
                           &pos, &len);
    uint start = ok ? offsets[b] : 0u;
    uint nw = ok ? offsets[b + 1] - start : 0u;
    uint v[TDM_WIDE_VPT_MAX];
    tdm_bp_unpack(words + start, nw, len, block, t, vpt, v);
    if (delta) /* the kernel alternates scratch buffers: no closing barrier */
        tdm_codec_delta_nb(v, vpt, tpb, ok ? bases[b] : 0u, scratch);
    if (ok)
        tdm_codec_store(out, pos, t, vpt, v, len);
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_bp128_decode(TDM_CODEC_ARGS)
{
    __local uint scratch[2][2 * TDM_WG_SIZE];
    uint round = 0;
    TDM_CODEC_FOR_JOBS_TPB(job, TDM_WIDE_TPB(128u))
        tdm_bp_block(128u, job, TDM_CODEC_PASS, scratch[round++ & 1]);
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_bp256_decode(TDM_CODEC_ARGS)
{
    __local uint scratch[2][2 * TDM_WG_SIZE];
    uint round = 0;
    TDM_CODEC_FOR_JOBS_TPB(job, TDM_WIDE_TPB(256u))
        tdm_bp_block(256u, job, TDM_CODEC_PASS, scratch[round++ & 1]);
}


/* Random access (host/codec/gather.h has the contract): out[q] = value
   idx[q], one work-item each: one field at its block's width; a docid adds
   the fields before it in its block to the block base. */
void tdm_bp_get(const uint block, __global const uint *words, __global const uint *offsets,
                __global const uint *bases, uint n, uint delta, __global const uint *idx,
                uint count, __global uint *out, __global uint *status)
{
    uint i, q = get_global_id(0);
    if (!tdm_codec_get_pos(n, idx, count, out, status, &i))
        return;
    uint b = i / block, j = i % block, len = min(block, n - b * block);
    uint start = offsets[b], nw = offsets[b + 1] - start, w = tdm_bp_width(nw, len, block);
    __global const uint *src = words + start;
    uint x = tdm_bits_get(src, nw, j * w, w);
    for (uint k = 0; delta && k < j; k++)
        x += tdm_bits_get(src, nw, k * w, w);
    out[q] = delta ? bases[b] + x : x;
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_bp128_get(TDM_GET_ARGS)
{
    tdm_bp_get(128u, words, offsets, bases, n, delta, idx, count, out, status);
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_bp256_get(TDM_GET_ARGS)
{
    tdm_bp_get(256u, words, offsets, bases, n, delta, idx, count, out, status);
}
