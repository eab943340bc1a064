/* GPU-VByte (Mallia et al. 2019), blocks of 128 and 1024: per block 2-bit
   length selectors, then each value's 1..4 bytes (host/codec/vbyte.c
   describes the format). A work-item reads the selectors of its VPT values
   (one selector byte for four), a segmented work-group scan of the byte
   counts gives each work-item where its bytes start, then it reads its
   values; docids take a second scan, of the gaps. The data length the
   selectors imply must match the block's words, else the list is flagged
   corrupt, and no read leaves the block. */

/* Work-item t's values of a block of len values in nw words; called by the
   whole group (a scan). Flags the list corrupt when the selectors do not
   match the block's length. */
#define TDM_VBYTE_UNPACK(NAME, SPACE, WIN, SCAN)                                         \
    void NAME(SPACE const uint *w, uint nw, uint len, uint ok, uint t, uint vpt,   \
              uint tpb, uint *v, __local uint *scratch, __global uint *status)     \
    {                                                                              \
        uint sb = (len + 3u) / 4u; /* selector bytes */                            \
        uint l[TDM_WIDE_VPT_MAX], mine = 0;                                        \
        for (uint q = 0; q < vpt / 4; q++) { /* a selector byte: four values */    \
            uint byte = t * (vpt / 4) + q, i0 = 4 * byte;                          \
            uint s = byte < sb && (byte >> 2) < nw ? w[byte >> 2] >> (8u * (byte & 3u)) \
                                                   : 0u;                           \
            for (uint j = 0; j < 4; j++) {                                         \
                l[4 * q + j] = i0 + j < len ? ((s >> (2 * j)) & 3u) + 1u : 0u;     \
                mine += l[4 * q + j];                                              \
            }                                                                      \
        }                                                                          \
        uint total, k = sb + SCAN(mine, tpb, scratch, &total);                     \
        if (ok && t == 0 && (sb + total + 3u) / 4u != nw)                          \
            atomic_or(status, TDM_CODEC_ST_CORRUPT);                               \
        /* The work-item's bytes are contiguous: read them with a window that \
           never leaves the block (a corrupt block reads zeros, and is        \
           flagged above). */                                                  \
        tdm_bitwin win = WIN##_open(w, nw, 8u * k);                                \
        for (uint j = 0; j < vpt; j++) {                                           \
            uint x = WIN##_take(&win, w, nw, 8u * l[j],                            \
                                l[j] >= 4 ? 0xFFFFFFFFu : (1u << (8u * l[j])) - 1u); \
            v[j] = l[j] ? x : 0u;                                                  \
        }                                                                          \
    }
/* The kernels alternate scratch buffers: no closing barrier. */
TDM_VBYTE_UNPACK(tdm_vbyte_unpack, __global, tdm_bitwin, tdm_seg_scan_excl_nb)

/* Scans the byte lengths in scan_len and the gaps in scan_gap, so that
   neither needs a closing barrier: every reuse of a buffer is separated by
   a barrier of the other's scan (or, for plain values, the one below). */
void tdm_vbyte_block(const uint block, uint job, TDM_CODEC_ARGS, __local uint *scan_len,
                     __local uint *scan_gap)
{
    const uint vpt = TDM_WIDE_VPT(block), tpb = block / vpt;
    uint t = get_local_id(0) % tpb, b, pos, len;
    int ok = tdm_codec_job(job, block, sel, njobs, use_sel, nblocks, n, out_cap, status, &b,
                           &pos, &len);
    uint start = ok ? offsets[b] : 0u;
    uint nw = ok ? offsets[b + 1] - start : 0u;
    uint v[TDM_WIDE_VPT_MAX];
    tdm_vbyte_unpack(words + start, nw, len, (uint)ok, t, vpt, tpb, v, scan_len, status);
    if (delta)
        tdm_codec_delta_nb(v, vpt, tpb, ok ? bases[b] : 0u, scan_gap);
    else
        barrier(CLK_LOCAL_MEM_FENCE);
    if (ok)
        tdm_codec_store(out, pos, t, vpt, v, len);
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_vbyte128_decode(TDM_CODEC_ARGS)
{
    __local uint scratch[2][2 * TDM_WG_SIZE];
    TDM_CODEC_FOR_JOBS_TPB(job, TDM_WIDE_TPB(128u))
        tdm_vbyte_block(128u, job, TDM_CODEC_PASS, scratch[0], scratch[1]);
}

__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_vbyte1024_decode(TDM_CODEC_ARGS)
{
    __local uint scratch[2][2 * TDM_WG_SIZE];
    TDM_CODEC_FOR_JOBS_TPB(job, TDM_WIDE_TPB(1024u))
        tdm_vbyte_block(1024u, job, TDM_CODEC_PASS, scratch[0], scratch[1]);
}

