/* Serial block decoders: ONE block of a resident index decoded by ONE
   work-item, for every codec (host/codec/codec.h), no barrier, no local
   memory. What a CPU device (PoCL) runs well, where the work-group decoders
   of the codec files cost a loop over the group's work-items a barrier;
   and what a kernel that walks lists itself (a DAAT cursor entering a block)
   calls for whatever block it needs.

   Entry points (the index arguments are TDM_ZS_IDX, in this order: the
   buffers of host/resident/resident.h, then nlists, arena_words and spans):

     uint tdm_zs_block(TDM_ZS_IDX, uint list, uint j, uint want_docs,
                       __global uint *out, uint os, uint *status);
         Block j of list `list`: its docids (absolute: the block's base and
         gaps applied) when want_docs, else its frequencies (tf, not tf - 1),
         into out[i * os] for i in [0, n) (os = 1: contiguous; a larger
         stride interleaves the blocks of neighbouring work-items, so that a
         GPU's lanes store to consecutive words: cl/search_zrange.cl);
         returns n (B, or fewer for a list's last block).
         A list or block out of range (j >= the list's blocks; in CACHED mode
         a list not in the cache, df 0) ORs TDM_CODEC_ST_BADJOB into
         *status and returns 0; a damaged block table or payload ORs
         TDM_CODEC_ST_CORRUPT and returns 0. Never reads outside the list's
         words of the arena (its span in CACHED mode) nor writes past
         out[(B - 1) * os]. *status is private: the caller ORs it into a
         launch's word.

     uint tdm_zs_block_size(uint codec);   B of a codec's blocks (0: none)

     int  tdm_zs_locate(TDM_ZS_IDX, uint list, uint j, tdm_zs_blk *k, uint *status);
     uint tdm_zs_decode(__global const uint *arena, const tdm_zs_blk *k,
                        uint want_docs, __global uint *out, uint os,
                        uint *status);
         The two halves of tdm_zs_block: find the block (payload words,
         base, codec parameters, checked against the list's span; 1 if
         found), then decode it. A caller that wants both docids and
         frequencies of a block locates it once and decodes twice.

   Results are those of the work-group decoders bit for bit, which
   tests/test_codec_serial.c checks against the host's reference decoders.
   Each decoder flags at least what its work-group twin flags, and a few
   inconsistencies more (a BP block whose word count no width gives, a PEF
   packed partition of the wrong size, PFOR inner exceptions out of order). */

#define TDM_ZS_IDX                                                                 \
    __global const uint *arena, __global const uint4 *lists,                       \
        __global const uchar *codecs, __global const uint *block_last,             \
        __global const uint *block_docs, __global const uint *block_freqs,         \
        uint nlists, uint arena_words, uint spans
#define TDM_ZS_IDX_PASS                                                            \
    arena, lists, codecs, block_last, block_docs, block_freqs, nlists, arena_words, spans

uint tdm_zs_block_size(uint codec)
{
    switch (codec) {
    case 0u: return TDM_RAW_BLOCK;  /* TDM_CODEC_RAW */
    case 1u: return 128u;           /* BP128 */
    case 2u: return 256u;           /* BP256 */
    case 3u: return 128u;           /* VBYTE128 */
    case 4u: return 1024u;          /* VBYTE1024 */
    case 5u: return TDM_PEF_BLOCK;  /* PEF */
    case 6u: return TDM_PFOR_BLOCK; /* PFOR */
    case 7u: return 128u;           /* NEWPFD128 */
    case 8u: return TDM_RICE_BLOCK; /* RICE */
    case 9u: return 64u;            /* NEWPFD64 */
    default: return 0u;
    }
}

/* A located block: payload words arena[dstart .. dstart + dnw) (docids),
   arena[fstart .. fstart + fnw) (frequencies), the docid before it, the
   list's codec parameter words. */
typedef struct tdm_zs_blk {
    uint codec, block, len;
    uint dstart, dnw, fstart, fnw;
    uint base, dpar, fpar;
} tdm_zs_blk;

int tdm_zs_locate(TDM_ZS_IDX, uint list, uint j, tdm_zs_blk *k, uint *status)
{
    k->len = 0u;
    if (list >= nlists) {
        *status |= TDM_CODEC_ST_BADJOB;
        return 0;
    }
    uint4 d = lists[list];
    uint codec = codecs[list], block = tdm_zs_block_size(codec);
    uint nb = block ? d.y / block + (d.y % block != 0u) : 0u;
    if (j >= nb) {
        *status |= TDM_CODEC_ST_BADJOB;
        return 0;
    }
    uint P = codec == 6u ? 1u : 0u; /* PFOR: one parameter word each */
    uint end = spans ? d.x + d.w : list + 1u < nlists ? lists[list + 1u].x : arena_words;
    /* Checked at open (FORMAT.md) but for the cache's spans, which the host
       wrote: checked all the same, they bound every read below. */
    if (end < d.x || end > arena_words || end - d.x < 2u * P) {
        *status |= TDM_CODEC_ST_CORRUPT;
        return 0;
    }
    uint room = end - d.x - 2u * P, ndw = d.z, nfw = 0u;
    uint dlo = 0u, dhi = d.z, flo = 0u, fhi = 0u, base = 0u;
    if (nb == 1u) {
        if (d.z > room) {
            *status |= TDM_CODEC_ST_CORRUPT;
            return 0;
        }
        nfw = fhi = room - d.z;
    } else {
        uint e = d.z + j;
        ndw = block_docs[d.z + nb];
        nfw = block_freqs[d.z + nb];
        dlo = block_docs[e];
        dhi = block_docs[e + 1u];
        flo = block_freqs[e];
        fhi = block_freqs[e + 1u];
        base = block_last[e];
        if ((ulong)ndw + nfw != (ulong)room || dlo > dhi || dhi > ndw || flo > fhi ||
            fhi > nfw) {
            *status |= TDM_CODEC_ST_CORRUPT;
            return 0;
        }
    }
    uint first = d.x + 2u * P;
    k->codec = codec;
    k->block = block;
    k->len = min(block, d.y - j * block);
    k->dstart = first + dlo;
    k->dnw = dhi - dlo;
    k->fstart = first + ndw + flo;
    k->fnw = fhi - flo;
    k->base = base;
    k->dpar = P ? arena[d.x] : 0u;
    k->fpar = P ? arena[d.x + 1u] : 0u;
    return 1;
}

/* A sequential bit reader in scalar locals (N_b: bits not yet taken, N_h of
   them, N_i: the next word), for fields of 0 to 32 bits; words past NW read
   as 0. (Not tdm_bitwin: a struct returned by value, whose address the
   loops take, leaves an alias-scope intrinsic in code that Oclgrind cannot
   run.) */
#define TDM_ZS_RD(N) ulong N##_b = 0ul; uint N##_h = 0u, N##_i = 0u
#define TDM_ZS_TAKE(N, P, NW, W, M, X)                                             \
    {                                                                              \
        if (N##_h < (W)) {                                                         \
            N##_b |= (ulong)(N##_i < (NW) ? (P)[N##_i] : 0u) << N##_h;             \
            N##_i++;                                                               \
            N##_h += 32u;                                                          \
        }                                                                          \
        X = (uint)N##_b & (M);                                                     \
        N##_b >>= (W);                                                             \
        N##_h -= (W);                                                              \
    }

/* ---- the last step every codec but BP and PEF shares: gaps onto the base
   (docids), or tf - 1 to tf */
void tdm_zs_finish(__global uint *out, uint os, uint len, uint docs, uint base)
{
    if (docs) {
        uint acc = base;
        for (uint i = 0; i < len; i++) {
            acc += out[i * os];
            out[i * os] = acc;
        }
    } else {
        for (uint i = 0; i < len; i++)
            out[i * os] += 1u;
    }
}

/* ---- RAW: a word a value */
uint tdm_zs_raw(__global const uint *p, uint nw, uint len, uint docs, uint base,
                __global uint *out, uint os, uint *status)
{
    if (nw != len) {
        *status |= TDM_CODEC_ST_CORRUPT;
        return 0u;
    }
    uint acc = base;
    for (uint i = 0; i < len; i++) {
        uint x = p[i];
        acc += x;
        out[i * os] = docs ? acc : x + 1u;
    }
    return len;
}

/* ---- GPU-BP: 32 values at width W fill exactly W words, so a block
   unpacks by groups of 32 with constant shifts (W a literal: the loops
   unroll), the gaps summed as they come. A group's words are loaded into
   private memory first: the output is global memory too, so a store
   between two reads of the payload would make the compiler read it again.
   DOCS (a literal) picks docids (the sum onto ACC) or tf; OS: O's stride. */
#define TDM_ZS_BP32(P, O, OS, W, ACC, DOCS)                                        \
    {                                                                              \
        uint w_[(W) + 1u];                                                         \
        TDM_UNROLL                                                                 \
        for (uint q_ = 0; q_ < (W); q_++)                                          \
            w_[q_] = (P)[q_];                                                      \
        w_[W] = 0u;                                                                \
        TDM_UNROLL                                                                 \
        for (uint k_ = 0; k_ < 32u; k_++) {                                        \
            uint b_ = k_ * (W), i_ = b_ >> 5, s_ = b_ & 31u, x_ = 0u;              \
            if ((W) != 0u) {                                                       \
                /* as a 64-bit shift: the 32-bit funnel shift clang makes of   \
                   two shifts and an OR is an intrinsic Oclgrind lacks */      \
                ulong y_ = w_[i_];                                                 \
                if (s_ + (W) > 32u)                                                \
                    y_ |= (ulong)w_[i_ + 1u] << 32;                                \
                x_ = (uint)(y_ >> s_);                                             \
                if ((W) < 32u)                                                     \
                    x_ &= (1u << ((W) & 31u)) - 1u;                                \
            }                                                                      \
            ACC += x_;                                                             \
            (O)[k_ * (OS)] = (DOCS) ? ACC : x_ + 1u;                               \
        }                                                                          \
    }

/* Docids and tf instantiated apart (a select a value cost 10-35 % of the
   decode's CPU time on PoCL); a list's last block's short group through a
   bit reader (as fast as a group of 32 with bounded loads, in half the
   code). */
#define TDM_ZS_BPC(W)                                                              \
    case W:                                                                        \
        for (uint g = 0; g < ng; g++) {                                            \
            if (docs)                                                              \
                TDM_ZS_BP32(p + g * (W), out + 32u * g * os, os, W##u, acc, 1)     \
            else                                                                   \
                TDM_ZS_BP32(p + g * (W), out + 32u * g * os, os, W##u, acc, 0)     \
        }                                                                          \
        break;

uint tdm_zs_bp(__global const uint *p, uint nw, uint len, const uint block, uint docs,
               uint base, __global uint *out, uint os, uint *status)
{
    uint w = tdm_bp_width(nw, len, block);
    if (nw > len || ((len * w + 31u) >> 5) != nw) { /* no width gives nw words */
        *status |= TDM_CODEC_ST_CORRUPT;
        return 0u;
    }
    uint ng = len >> 5, acc = base;
    switch (w) {
        TDM_ZS_BPC(0) TDM_ZS_BPC(1) TDM_ZS_BPC(2) TDM_ZS_BPC(3) TDM_ZS_BPC(4)
        TDM_ZS_BPC(5) TDM_ZS_BPC(6) TDM_ZS_BPC(7) TDM_ZS_BPC(8) TDM_ZS_BPC(9)
        TDM_ZS_BPC(10) TDM_ZS_BPC(11) TDM_ZS_BPC(12) TDM_ZS_BPC(13) TDM_ZS_BPC(14)
        TDM_ZS_BPC(15) TDM_ZS_BPC(16) TDM_ZS_BPC(17) TDM_ZS_BPC(18) TDM_ZS_BPC(19)
        TDM_ZS_BPC(20) TDM_ZS_BPC(21) TDM_ZS_BPC(22) TDM_ZS_BPC(23) TDM_ZS_BPC(24)
        TDM_ZS_BPC(25) TDM_ZS_BPC(26) TDM_ZS_BPC(27) TDM_ZS_BPC(28) TDM_ZS_BPC(29)
        TDM_ZS_BPC(30) TDM_ZS_BPC(31) TDM_ZS_BPC(32)
    default:
        break;
    }
    /* the short last group of a list's last block */
    uint mask = w >= 32u ? 0xFFFFFFFFu : (1u << w) - 1u;
    __global const uint *t = p + ng * w; /* whole groups end at a word */
    TDM_ZS_RD(r);
    for (uint i = ng << 5; i < len; i++) {
        uint x;
        TDM_ZS_TAKE(r, t, nw - ng * w, w, mask, x)
        acc += x;
        out[i * os] = docs ? acc : x + 1u;
    }
    return len;
}

/* ---- GPU-VByte: the selectors must imply the block's words exactly */
uint tdm_zs_vbyte(__global const uint *p, uint nw, uint len, uint docs, uint base,
                  __global uint *out, uint os, uint *status)
{
    uint sb = (len + 3u) >> 2, bytes = sb;
    if (sb > 4u * nw) {
        *status |= TDM_CODEC_ST_CORRUPT;
        return 0u;
    }
    for (uint q = 0; q < sb; q++) { /* four 2-bit selectors a byte, each length - 1 */
        uint s = (p[q >> 2] >> (8u * (q & 3u))) & 0xFFu, m = min(4u, len - 4u * q);
        s &= m >= 4u ? 0xFFu : (1u << (2u * m)) - 1u; /* selectors past len: unread */
        s = (s & 0x33u) + ((s >> 2) & 0x33u);
        bytes += (s & 0x0Fu) + (s >> 4) + m;
    }
    if (((bytes + 3u) >> 2) != nw) {
        *status |= TDM_CODEC_ST_CORRUPT;
        return 0u;
    }
    uint k = sb, acc = base;
    for (uint i = 0; i < len; i++) {
        uint l = ((p[i >> 4] >> (2u * (i & 15u))) & 3u) + 1u, wi = k >> 2, sh = 8u * (k & 3u);
        ulong two = (ulong)p[wi] | (wi + 1u < nw ? (ulong)p[wi + 1u] << 32 : 0ul);
        uint x = (uint)(two >> sh) & (l >= 4u ? 0xFFFFFFFFu : (1u << (8u * l)) - 1u);
        k += l;
        acc += x;
        out[i * os] = docs ? acc : x + 1u;
    }
    return len;
}

/* ---- PEF: an Elias-Fano partition (low parts, unary high parts) or a
   packed one; docids are base + x, frequencies x[k] - x[k - 1] (EF holds
   their running sums) or the packed values. */
uint tdm_zs_pef(__global const uint *p, uint nw, uint len, uint docs, uint base,
                __global uint *out, uint os, uint *status)
{
    uint hdr = nw ? p[0] : 0xFFFFFFFFu, l = hdr & 0xFFu, kind = hdr >> 8;
    uint nlow = (len * min(l, 32u) + 31u) >> 5;
    int ef = kind == TDM_PEF_EF && l <= 31u && 1u + nlow <= nw;
    int packed = kind == TDM_PEF_PACKED && l <= 32u && 1u + nlow == nw;
    uint nh = ef ? nw - 1u - nlow : 0u;
    if ((!ef && !packed) || nh > PEF_HMAX) {
        *status |= TDM_CODEC_ST_CORRUPT;
        return 0u;
    }
    uint mask = l >= 32u ? 0xFFFFFFFFu : (1u << l) - 1u;
    TDM_ZS_RD(r);
    if (packed) {
        for (uint i = 0; i < len; i++) {
            uint x;
            TDM_ZS_TAKE(r, p + 1, nlow, l, mask, x)
            out[i * os] = docs ? base + x : x + 1u;
        }
        return len;
    }
    __global const uint *h = p + 1u + nlow;
    uint k = 0u, total = 0u, prev = 0u;
    for (uint i = 0; i < nh; i++) {
        uint word = h[i];
        total += popcount(word);
        for (; word && k < len; word &= word - 1u, k++) {
            uint lo;
            TDM_ZS_TAKE(r, p + 1, nlow, l, mask, lo)
            uint x = ((32u * i + tdm_ctz(word) - k) << l) | lo;
            out[k * os] = docs ? base + x : x - prev + 1u;
            prev = x;
        }
    }
    if (total != len) {
        *status |= TDM_CODEC_ST_CORRUPT;
        return 0u;
    }
    return len;
}

/* ---- Rice: remainders of k bits, quotients as the distances between the
   ones of the unary part */
uint tdm_zs_rice(__global const uint *p, uint nw, uint len, uint docs, uint base,
                 __global uint *out, uint os, uint *status)
{
    uint k = nw ? p[0] : 0xFFFFFFFFu;
    uint nbin = (len * min(k, 31u) + 31u) >> 5;
    uint nu = k <= 31u && 1u + nbin < nw ? nw - 1u - nbin : 0u;
    if (nu == 0u || nu > RICE_UMAX) {
        *status |= TDM_CODEC_ST_CORRUPT;
        return 0u;
    }
    uint mask = k ? (1u << k) - 1u : 0u, i = 0u, total = 0u, prev = 0xFFFFFFFFu, acc = base;
    __global const uint *u = p + 1u + nbin;
    TDM_ZS_RD(r);
    for (uint j = 0; j < nu; j++) {
        uint word = u[j];
        total += popcount(word);
        for (; word && i < len; word &= word - 1u, i++) {
            uint at = 32u * j + tdm_ctz(word);
            uint rem;
            TDM_ZS_TAKE(r, p + 1, nbin, k, mask, rem)
            uint x = ((at - prev - 1u) << k) + rem;
            prev = at;
            acc += x;
            out[i * os] = docs ? acc : x + 1u;
        }
    }
    if (total != len) {
        *status |= TDM_CODEC_ST_CORRUPT;
        return 0u;
    }
    return len;
}

/* ---- PForDelta, one slot width bw a list (its parameter word): slots
   into out, then each exception's high part ORed into its slot, its
   position the running sum of the position gaps, each array's plain
   inner exceptions taken in index order (pfor_pair). */
uint tdm_zs_pfor(__global const uint *p, uint nw, uint len, uint bw, uint docs, uint base,
                 __global uint *out, uint os, uint *status)
{
    uint hdr = nw ? p[0] : 0u;
    uint e = hdr & 0x3FFu, wo = (hdr >> 10) & 0x3Fu, wh = (hdr >> 16) & 0x3Fu;
    uint nslots = pfor_words(len, min(bw, 32u));
    uint xw = e && nw > 1u + nslots ? p[1u + nslots] : 0u;
    uint xo = xw & 0xFFFFu, xh = xw >> 16;
    uint no = pfor_words(e, min(wo, 32u)), nh = pfor_words(e, min(wh, 32u));
    uint need = 1u + nslots + (e ? 1u + no + nh + 2u * (xo + xh) : 0u);
    int sound = nw == need && bw <= 32u && (hdr >> 22) == 0u && e <= len && wo <= 32u &&
                wh <= 32u && (bw < 32u || e == 0u) && xo <= e && xh <= e &&
                (wo < 32u || xo == 0u) && (wh < 32u || xh == 0u);
    if (!sound) {
        *status |= TDM_CODEC_ST_CORRUPT;
        return 0u;
    }
    uint mb = bw >= 32u ? 0xFFFFFFFFu : (1u << bw) - 1u;
    TDM_ZS_RD(rs);
    for (uint i = 0; i < len; i++)
        TDM_ZS_TAKE(rs, p + 1, nslots, bw, mb, out[i * os])
    __global const uint *q = p + 2u + nslots, *po = q + no + nh, *ph = po + 2u * xo;
    uint mo = wo >= 32u ? 0xFFFFFFFFu : (1u << wo) - 1u;
    uint mh = wh >= 32u ? 0xFFFFFFFFu : (1u << wh) - 1u;
    TDM_ZS_RD(ro);
    TDM_ZS_RD(rh);
    uint co = 0u, ch = 0u;
    ulong at = 0ul;
    int bad = 0;
    for (uint j = 0; j < e; j++) {
        uint o, hi;
        TDM_ZS_TAKE(ro, q, no, wo, mo, o)
        TDM_ZS_TAKE(rh, q + no, nh, wh, mh, hi)
        o |= pfor_pair(po, xo, &co, j, wo);
        hi |= pfor_pair(ph, xh, &ch, j, wh);
        at += (ulong)o + 1ul;
        if (at > len) {
            bad = 1;
            break;
        }
        out[((uint)at - 1u) * os] |= (hi + 1u) << bw;
    }
    if (bad || co != xo || ch != xh) {
        *status |= TDM_CODEC_ST_CORRUPT;
        return 0u;
    }
    tdm_zs_finish(out, os, len, docs, base);
    return len;
}

/* ---- NewPFD: a width a block, exception positions as bytes */
uint tdm_zs_npfd(__global const uint *p, uint nw, uint len, uint docs, uint base,
                 __global uint *out, uint os, uint *status)
{
    uint hdr = nw ? p[0] : 0xFFFFFFFFu;
    uint bw = hdr & 0x3Fu, e = (hdr >> 6) & 0xFFu, hw = (hdr >> 14) & 0x3Fu;
    uint nslots = pfor_words(len, min(bw, 32u)), npos = (e + 3u) >> 2;
    uint nhigh = pfor_words(e, min(hw, 32u));
    if (!((hdr >> 20) == 0u && bw <= 32u && hw <= 32u && e <= len && (bw < 32u || e == 0u) &&
          nw == 1u + nslots + npos + nhigh)) {
        *status |= TDM_CODEC_ST_CORRUPT;
        return 0u;
    }
    uint mask = bw >= 32u ? 0xFFFFFFFFu : (1u << bw) - 1u;
    TDM_ZS_RD(rs);
    for (uint i = 0; i < len; i++)
        TDM_ZS_TAKE(rs, p + 1, nslots, bw, mask, out[i * os])
    __global const uint *bytes = p + 1u + nslots, *highs = bytes + npos;
    uint mh = hw >= 32u ? 0xFFFFFFFFu : (1u << hw) - 1u;
    TDM_ZS_RD(rh);
    for (uint j = 0; j < e; j++) {
        uint at = (bytes[j >> 2] >> (8u * (j & 3u))) & 0xFFu, hi;
        TDM_ZS_TAKE(rh, highs, nhigh, hw, mh, hi)
        hi += 1u;
        if (at >= len) {
            *status |= TDM_CODEC_ST_CORRUPT;
            return 0u;
        }
        out[at * os] |= hi << bw;
    }
    tdm_zs_finish(out, os, len, docs, base);
    return len;
}

/* Out of line (TDM_NOINLINE): a cursor calls it from every algorithm of
   every range kernel, and each inlined copy holds every codec. */
TDM_NOINLINE uint tdm_zs_decode(__global const uint *arena, const tdm_zs_blk *k,
                                uint want_docs, __global uint *out, uint os, uint *status)
{
    if (!k->len)
        return 0u;
    uint docs = want_docs ? 1u : 0u, base = docs ? k->base : 0u;
    __global const uint *p = arena + (docs ? k->dstart : k->fstart);
    uint nw = docs ? k->dnw : k->fnw, len = k->len;
    switch (k->codec) {
    case 0u: return tdm_zs_raw(p, nw, len, docs, base, out, os, status);
    case 1u: return tdm_zs_bp(p, nw, len, 128u, docs, base, out, os, status);
    case 2u: return tdm_zs_bp(p, nw, len, 256u, docs, base, out, os, status);
    case 3u:
    case 4u: return tdm_zs_vbyte(p, nw, len, docs, base, out, os, status);
    case 5u: return tdm_zs_pef(p, nw, len, docs, base, out, os, status);
    case 6u:
        return tdm_zs_pfor(p, nw, len, docs ? k->dpar : k->fpar, docs, base, out, os, status);
    case 7u:
    case 9u: return tdm_zs_npfd(p, nw, len, docs, base, out, os, status);
    case 8u: return tdm_zs_rice(p, nw, len, docs, base, out, os, status);
    default:
        *status |= TDM_CODEC_ST_BADJOB;
        return 0u;
    }
}

uint tdm_zs_block(TDM_ZS_IDX, uint list, uint j, uint want_docs, __global uint *out,
                  uint os, uint *status)
{
    tdm_zs_blk k;
    if (!tdm_zs_locate(TDM_ZS_IDX_PASS, list, j, &k, status))
        return 0u;
    return tdm_zs_decode(arena, &k, want_docs, out, os, status);
}

/* Test kernel (tests/test_codec_serial.c): request r = {list, block, want,
   out} decodes block `block` of `list` (docids if want, else frequencies)
   to out_vals[out ..], its count to counts[r] and its status bits to
   stats[r]. One work-item a request. */
__kernel void tdm_zs_test(TDM_ZS_IDX, __global const uint4 *reqs, uint nreq,
                          __global uint *out_vals, __global uint *counts, __global uint *stats)
{
    uint r = get_global_id(0);
    if (r >= nreq)
        return;
    uint4 q = reqs[r];
    uint st = 0u;
    counts[r] = tdm_zs_block(TDM_ZS_IDX_PASS, q.x, q.y, q.z, out_vals + q.w, 1u, &st);
    stats[r] = st;
}
