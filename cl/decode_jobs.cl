/* Batched decode of a resident index: one launch decodes any set of jobs
   (list, block_begin, block_end, out) across lists of one codec, to docids
   and to frequencies (host/index/decode_jobs.h has the contract, docs/FORMAT.md
   the layout of the arena, descriptors and block table).

   A launch is three kernels: tdm_jobs_count checks every job and gives the
   blocks before it within its tile of TDM_WG_SIZE * TDM_JOBS_PER_ITEM jobs,
   tdm_jobs_scan (only for more than one tile) the blocks before each tile,
   then the codec's kernel walks the blocks of all jobs as one flat range
   (TDM_JOBS_KERNEL), each block slot finding its job in a window of the
   table, and decodes each block with the codec's own work-group block
   decoder. A job that is bad (list out of
   range, another codec, a block range past the list, an output past its
   buffer) decodes nothing and sets TDM_CODEC_ST_BADJOB; a block table entry
   or payload found inconsistent sets TDM_CODEC_ST_CORRUPT, and no read
   leaves the list's span of the arena. */

#define TDM_JOBS_TILE (TDM_WG_SIZE * TDM_JOBS_PER_ITEM)

/* The arguments of every per-codec batched decode kernel, in order
   (host/index/decode_jobs.c sets them). */
#define TDM_JOBS_ARGS                                                              \
    __global const uint *arena, __global const uint4 *lists,                       \
        __global const uchar *codecs, __global const uint *block_last,             \
        __global const uint *block_docs, __global const uint *block_freqs,         \
        uint nlists, uint arena_words, uint spans, __global const uint4 *jobs,     \
        uint ntab, __global const uint *jpre, __global const uint *tsum, uint ntiles,         \
        __global uint *out_docs, __global uint *out_freqs, uint outs,              \
        __global uint *status

#define TDM_JOBS_PASS                                                              \
    arena, lists, codecs, block_last, block_docs, block_freqs, nlists, arena_words, \
        spans, jobs, ntab, jpre, tsum, ntiles, out_docs, out_freqs, outs, status

/* Blocks of a list of df postings in blocks of `block`. */
uint tdm_jobs_nblocks(uint df, uint block) { return df / block + (df % block != 0u); }

/* The sum of v over the work-group, exact in 64 bits (hl: two local words).
   Called by the whole group; ends in a barrier. */
ulong tdm_jobs_group_sum64(ulong v, __local uint *hl)
{
    if (get_local_id(0) == 0) {
        hl[0] = 0u;
        hl[1] = 0u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint lo = (uint)v, old = atomic_add(hl, lo);
    uint hi = (uint)(v >> 32) + (old + lo < old ? 1u : 0u);
    if (hi)
        atomic_add(hl + 1, hi);
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong s = ((ulong)hl[1] << 32) | hl[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return s;
}

/* Blocks job j decodes, 0 for a bad job (which sets the status). */
uint tdm_jobs_count_one(uint4 j, __global const uint4 *lists, __global const uchar *codecs,
                        uint nlists, uint codec, uint block, uint outs, uint docs_cap,
                        uint freqs_cap, __global uint *status)
{
    int bad = j.x >= nlists;
    uint df = bad ? 0u : lists[j.x].y;
    bad = bad || codecs[j.x] != codec || j.y > j.z || j.z > tdm_jobs_nblocks(df, block);
    ulong first = (ulong)j.y * block, last = min((ulong)j.z * block, (ulong)df);
    ulong end = (ulong)j.w + (j.y < j.z ? last - first : 0ul); /* first < df then */
    bad = bad || ((outs & 1u) && end > docs_cap) || ((outs & 2u) && end > freqs_cap);
    if (bad) {
        atomic_or(status, TDM_CODEC_ST_BADJOB);
        return 0u;
    }
    return j.z - j.y;
}

/* Tile g (one work-group) of the job table: jpre[j] = the blocks of the
   tile's jobs before j, tsum[g + 1] = the tile's blocks (tsum[0] = 0). A
   tile of 2^32 blocks or more is refused as bad jobs. */
__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_jobs_count(__global const uint4 *jobs, uint ntab, __global const uint4 *lists,
                    __global const uchar *codecs, uint nlists, uint codec, uint block,
                    uint outs, uint docs_cap, uint freqs_cap, __global uint *jpre,
                    __global uint *tsum, __global uint *status)
{
    __local uint scratch[2 * TDM_WG_SIZE], hl[2];
    uint lid = get_local_id(0), j0 = get_group_id(0) * TDM_JOBS_TILE + lid * TDM_JOBS_PER_ITEM;
    uint c[TDM_JOBS_PER_ITEM], mine = 0u;
    ulong sum = 0;
    for (uint k = 0; k < TDM_JOBS_PER_ITEM; k++) {
        uint j = j0 + k;
        c[k] = j < ntab ? tdm_jobs_count_one(jobs[j], lists, codecs, nlists, codec, block, outs,
                                             docs_cap, freqs_cap, status)
                        : 0u;
        sum += c[k];
    }
    mine = (uint)sum;
    if (tdm_jobs_group_sum64(sum, hl) > 0xFFFFFFFFul) { /* the same for the whole group */
        if (lid == 0)
            atomic_or(status, TDM_CODEC_ST_BADJOB);
        mine = 0u;
        for (uint k = 0; k < TDM_JOBS_PER_ITEM; k++)
            c[k] = 0u;
    }
    uint total, at = tdm_seg_scan_excl(mine, TDM_WG_SIZE, scratch, &total);
    for (uint k = 0; k < TDM_JOBS_PER_ITEM; k++) {
        if (j0 + k < ntab)
            jpre[j0 + k] = at;
        at += c[k];
    }
    if (lid == 0) {
        tsum[get_group_id(0) + 1] = total;
        if (get_group_id(0) == 0)
            tsum[0] = 0u;
    }
}

/* One work-group: tsum[1..ntiles] (each tile's blocks) becomes the blocks
   before each tile, tsum[ntiles] the launch's total. A total of 2^32 blocks
   or more is refused: the total becomes 0 and the status says bad job. */
__kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))
void tdm_jobs_scan(__global uint *tsum, uint ntiles, __global uint *status)
{
    __local uint scratch[2 * TDM_WG_SIZE], hl[2];
    uint lid = get_local_id(0);
    ulong carry = 0;
    for (uint c0 = 0; c0 < ntiles; c0 += TDM_WG_SIZE) { /* c0 is the same for the group */
        uint i = c0 + lid, v = i < ntiles ? tsum[1 + i] : 0u;
        ulong chunk = tdm_jobs_group_sum64(v, hl);
        uint total, at = tdm_seg_scan_excl(v, TDM_WG_SIZE, scratch, &total);
        if (carry + chunk > 0xFFFFFFFFul) {
            if (lid == 0) {
                atomic_or(status, TDM_CODEC_ST_BADJOB);
                tsum[ntiles] = 0u;
            }
            return; /* the whole group, together */
        }
        if (i < ntiles)
            tsum[1 + i] = (uint)carry + at + v;
        carry += chunk;
    }
}

/* One block of a launch, as a block slot resolves it. */
typedef struct tdm_jblock {
    uint ok;            /* 1: a block to decode and store */
    uint pos, len;      /* output position, postings */
    uint dstart, dnw;   /* docid words: arena[dstart .. dstart + dnw) */
    uint fstart, fnw;   /* frequency words */
    uint base;          /* docid before the block */
    uint dpar, fpar;    /* the list's codec parameter words (P = 1), else 0 */
} tdm_jblock;

/* Largest k in [lo, hi) with a[k] <= x, given a[lo] <= x. */
uint tdm_jobs_search(__global const uint *a, uint lo, uint hi, uint x)
{
    while (hi - lo > 1u) {
        uint mid = lo + (hi - lo) / 2u;
        if (a[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Blocks of the launch before job j. */
uint tdm_jobs_before(uint j, __global const uint *jpre, __global const uint *tsum)
{
    return tsum[j / TDM_JOBS_TILE] + jpre[j];
}

/* The job of block f of the launch (f < its total): two binary searches,
   over the tiles and then the tile's jobs. */
uint tdm_jobs_find(uint f, uint ntab, __global const uint *jpre, __global const uint *tsum,
                   uint ntiles)
{
    uint tile = tdm_jobs_search(tsum, 0u, ntiles, f), r = f - tsum[tile];
    uint a = tile * TDM_JOBS_TILE;
    return tdm_jobs_search(jpre, a, min(ntab, a + TDM_JOBS_TILE), r);
}

/* Block f of the launch, of job j (before: the launch's blocks before j):
   its list's descriptor and block-table entries, checked against the
   list's span of the arena. ok = 0 when there is no such block. */
tdm_jblock tdm_jobs_resolve(uint f, uint j, uint before, int valid, const uint block,
                            const uint P, TDM_JOBS_ARGS)
{
    tdm_jblock m = {0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u};
    if (!valid)
        return m;
    uint4 job = jobs[j];
    uint b = job.y + (f - before);
    uint4 d = job.x < nlists ? lists[job.x] : (uint4)(0u);
    if (job.x >= nlists || b >= job.z || b >= tdm_jobs_nblocks(d.y, block)) {
        atomic_or(status, TDM_CODEC_ST_BADJOB); /* the table changed under the launch */
        return m;
    }
    /* The descriptors were checked when the index was opened (FORMAT.md):
       spans in order inside the arena, each at least 2P words, a one-block
       list's payload sizes inside its span. The block table was not. With
       `spans` (a list cache, host/index/listcache.h) the arena is the cache
       and d.w the list's span in it; the host wrote them, checked anyway. */
    uint nb = tdm_jobs_nblocks(d.y, block);
    uint end = spans ? d.x + d.w : job.x + 1u < nlists ? lists[job.x + 1u].x : arena_words;
    if (spans && (d.w < 2u * P || end < d.x || end > arena_words)) {
        atomic_or(status, TDM_CODEC_ST_CORRUPT);
        return m;
    }
    uint room = end - d.x - 2u * P;
    uint dlo = 0u, dhi = d.z, ndw = d.z, flo = 0u, fhi = room - d.z, nfw = room - d.z;
    int sound = 1;
    if (nb > 1u) {
        uint e = d.z + b, last = d.z + nb;
        dlo = block_docs[e];
        dhi = block_docs[e + 1u];
        ndw = block_docs[last];
        flo = block_freqs[e];
        fhi = block_freqs[e + 1u];
        nfw = block_freqs[last];
        m.base = block_last[e];
        sound = dlo <= dhi && dhi <= ndw && flo <= fhi && fhi <= nfw &&
                (ulong)ndw + nfw == (ulong)room;
    }
    if (!sound) {
        atomic_or(status, TDM_CODEC_ST_CORRUPT);
        dlo = dhi = flo = fhi = ndw = 0u; /* read nothing */
    }
    m.ok = 1u;
    m.len = min(block, d.y - b * block);
    m.pos = job.w + (b - job.y) * block;
    m.dstart = d.x + 2u * P + dlo;
    m.dnw = dhi - dlo;
    m.fstart = d.x + 2u * P + ndw + flo;
    m.fnw = fhi - flo;
    m.dpar = P ? arena[d.x] : 0u;
    m.fpar = P ? arena[d.x + P] : 0u;
    return m;
}

/* Where the next round of a group starts looking: the jobs jb .. jb +
   TDM_WG_SIZE - 1 with the blocks before each, loaded together into win[]
   (the launch's total past the table). Called by the whole group. */
void tdm_jobs_window(uint jb, uint ntab, uint total, __global const uint *jpre,
                     __global const uint *tsum, __local uint *win)
{
    uint j = jb + get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE); /* the last round's reads of win are done */
    win[get_local_id(0)] = j < ntab ? tdm_jobs_before(j, jpre, tsum) : total;
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* The job of block f (>= win[0]'s), from the window when it holds it, else
   by a search of the whole table. */
uint tdm_jobs_locate(uint f, uint jb, uint ntab, uint total, __local const uint *win,
                     __global const uint *jpre, __global const uint *tsum, uint ntiles,
                     uint *before)
{
    uint lo = 0u, hi = TDM_WG_SIZE;
    while (hi - lo > 1u) {
        uint mid = (lo + hi) / 2u;
        if (win[mid] <= f)
            lo = mid;
        else
            hi = mid;
    }
    if (lo + 1u < TDM_WG_SIZE || jb + lo + 1u >= ntab) {
        *before = win[lo];
        return jb + lo;
    }
    uint j = tdm_jobs_find(f, ntab, jpre, tsum, ntiles);
    *before = tdm_jobs_before(j, jpre, tsum);
    return j;
}

/* The kernel of one codec: blocks of BLOCK values, TPB work-items a block,
   P parameter words. DOCS and FREQS are statements that decode the block
   `m` (tdm_jblock) of work-item t's slot into v[] and store it; they are run
   by the whole group (barriers allowed), `round` counts the loop's rounds.

   The loop is TDM_CODEC_FOR_JOBS_TPB's in a blocked order: group g takes
   the `per` consecutive rounds of blocks from g * per * slots, so that each
   round's jobs follow the last round's: a round finds them in a window of
   the job table loaded at once (one coalesced load and a binary search in
   local memory, where a search of the whole table is a chain of dependent
   global loads), loaded again only when a round may pass its last job
   (every TDM_WG_SIZE jobs at most), and only the group's first round
   searches the table. */
#define TDM_JOBS_KERNEL(NAME, BLOCK, TPB, P, LOCALS, DOCS, FREQS)                   \
    __kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))              \
    void NAME(TDM_JOBS_ARGS)                                                       \
    {                                                                              \
        LOCALS                                                                     \
        __local uint win[TDM_WG_SIZE];                                             \
        const uint block = (BLOCK), tpb = (TPB), slots = TDM_WG_SIZE / (TPB);      \
        uint t = get_local_id(0) % tpb, slot = get_local_id(0) / tpb, round = 0u;  \
        uint total = tsum[ntiles]; /* blocks in the launch */                      \
        ulong per = ((ulong)total + (ulong)get_num_groups(0) * slots - 1u) /       \
                    ((ulong)get_num_groups(0) * slots);                            \
        ulong g0 = get_group_id(0) * per * slots;                                  \
        uint njobs = (uint)min((ulong)total - min((ulong)total, g0), per * slots); \
        uint f0 = (uint)min(g0, (ulong)total), jb = 0u, wlast = 0u, before;        \
        if (njobs)                                                                 \
            jb = tdm_jobs_find(f0, ntab, jpre, tsum, ntiles);                      \
        (void)slot;                                                                \
        for (uint r0 = 0u; r0 < njobs; r0 += slots) {                              \
            /* A new window only when this round may leave the last one       \
               (the same for the whole group). */                             \
            uint last = f0 + min(r0 + slots, njobs) - 1u;                          \
            if (r0 == 0u || (last >= wlast && jb + TDM_WG_SIZE < ntab)) {          \
                if (r0)                                                            \
                    jb = tdm_jobs_locate(f0 + r0 - 1u, jb, ntab, total, win, jpre, tsum, \
                                         ntiles, &before);                         \
                tdm_jobs_window(jb, ntab, total, jpre, tsum, win);                 \
                wlast = win[TDM_WG_SIZE - 1u];                                     \
            }                                                                      \
            uint f = f0 + r0 + slot, valid = r0 + slot < njobs;                    \
            uint j = tdm_jobs_locate(valid ? f : f0 + r0, jb, ntab, total, win, jpre, \
                                     tsum, ntiles, &before);                       \
            tdm_jblock m = tdm_jobs_resolve(f, j, before, valid, block, (P), TDM_JOBS_PASS); \
            if (outs & 1u) {                                                       \
                uint v[TDM_CODEC_VPT_MAX];                                         \
                DOCS                                                               \
            }                                                                      \
            if (outs & 2u) {                                                       \
                uint v[TDM_CODEC_VPT_MAX];                                         \
                FREQS                                                              \
            }                                                                      \
            round++;                                                               \
        }                                                                          \
    }

/* Frequencies are stored as tf - 1. */
void tdm_jobs_tf(uint *v, uint vpt)
{
    for (uint j = 0; j < vpt; j++)
        v[j] += 1u;
}

/* ---- RAW: a word a value; a block of another size is corrupt. */
void tdm_jobs_raw_values(__global const uint *w, uint nw, uint len, uint ok, uint t,
                         __global uint *status, uint *v)
{
    const uint vpt = TDM_RAW_VPT;
    if (ok && t == 0u && nw != len)
        atomic_or(status, TDM_CODEC_ST_CORRUPT);
    for (uint j = 0; j < vpt; j++) {
        uint i = t * vpt + j;
        v[j] = i < len && i < nw ? w[i] : 0u;
    }
}

TDM_JOBS_KERNEL(tdm_jobs_raw, TDM_RAW_BLOCK, TDM_RAW_BLOCK / TDM_RAW_VPT, 0u,
    __local uint scratch[2 * TDM_WG_SIZE];,
    tdm_jobs_raw_values(arena + m.dstart, m.dnw, m.len, m.ok, t, status, v);
    tdm_codec_delta(v, TDM_RAW_VPT, tpb, m.base, scratch);
    if (m.ok) tdm_codec_store(out_docs, m.pos, t, TDM_RAW_VPT, v, m.len);,
    tdm_jobs_raw_values(arena + m.fstart, m.fnw, m.len, m.ok, t, status, v);
    tdm_jobs_tf(v, TDM_RAW_VPT);
    if (m.ok) tdm_codec_store(out_freqs, m.pos, t, TDM_RAW_VPT, v, m.len);)

/* ---- GPU-BP: scans alternate two scratch buffers (no closing barrier),
   as tdm_bp128_decode's. */
#define TDM_JOBS_BP(NAME, B)                                                       \
    TDM_JOBS_KERNEL(NAME, B, TDM_WIDE_TPB(B), 0u,                                  \
        __local uint scratch[2][2 * TDM_WG_SIZE];,       \
        tdm_bp_unpack(arena + m.dstart, m.dnw, m.len, B, t, TDM_WIDE_VPT(B), v);   \
        tdm_codec_delta_nb(v, TDM_WIDE_VPT(B), tpb, m.base, scratch[round & 1u]);  \
        if (m.ok) tdm_codec_store(out_docs, m.pos, t, TDM_WIDE_VPT(B), v, m.len);, \
        tdm_bp_unpack(arena + m.fstart, m.fnw, m.len, B, t, TDM_WIDE_VPT(B), v);   \
        tdm_jobs_tf(v, TDM_WIDE_VPT(B));                                           \
        if (m.ok) tdm_codec_store(out_freqs, m.pos, t, TDM_WIDE_VPT(B), v, m.len);)
TDM_JOBS_BP(tdm_jobs_bp128, 128u)
TDM_JOBS_BP(tdm_jobs_bp256, 256u)

/* ---- GPU-VByte: byte lengths scanned in scratch[0], gaps in scratch[1],
   as tdm_vbyte_block. */
#define TDM_JOBS_VBYTE(NAME, B)                                                    \
    TDM_JOBS_KERNEL(NAME, B, TDM_WIDE_TPB(B), 0u,                                  \
        __local uint scratch[2][2 * TDM_WG_SIZE];,       \
        tdm_vbyte_unpack(arena + m.dstart, m.dnw, m.len, m.ok, t, TDM_WIDE_VPT(B), \
                         tpb, v, scratch[0], status);                              \
        tdm_codec_delta_nb(v, TDM_WIDE_VPT(B), tpb, m.base, scratch[1]);           \
        if (m.ok) tdm_codec_store(out_docs, m.pos, t, TDM_WIDE_VPT(B), v, m.len);, \
        tdm_vbyte_unpack(arena + m.fstart, m.fnw, m.len, m.ok, t, TDM_WIDE_VPT(B), \
                         tpb, v, scratch[0], status);                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                              \
        tdm_jobs_tf(v, TDM_WIDE_VPT(B));                                           \
        if (m.ok) tdm_codec_store(out_freqs, m.pos, t, TDM_WIDE_VPT(B), v, m.len);)
TDM_JOBS_VBYTE(tdm_jobs_vbyte128, 128u)
TDM_JOBS_VBYTE(tdm_jobs_vbyte1024, 1024u)

/* ---- Rice */
TDM_JOBS_KERNEL(tdm_jobs_rice, TDM_RICE_BLOCK, RICE_TPB, 0u,
    __local uint scratch[2 * TDM_WG_SIZE];,
    rice_gaps(arena + m.dstart, m.dnw, m.ok, m.len, t, status, v);
    tdm_codec_delta(v, RICE_VPT, tpb, m.base, scratch);
    if (m.ok) tdm_codec_store(out_docs, m.pos, t, RICE_VPT, v, m.len);,
    rice_gaps(arena + m.fstart, m.fnw, m.ok, m.len, t, status, v);
    tdm_jobs_tf(v, RICE_VPT);
    if (m.ok) tdm_codec_store(out_freqs, m.pos, t, RICE_VPT, v, m.len);)

/* ---- PEF: docids base + x, frequencies the differences of the running
   sums of an Elias-Fano partition (or the packed values), as tdm_pef_decode. */
void tdm_jobs_pef_values(__global const uint *p, uint np, uint len, uint ok, uint t, uint delta,
                         uint base, __global uint *status, uint *v)
{
    const uint vpt = PEF_VPT;
#if PEF_WARP
    uint x[PEF_VPT];
    int kind = pef_decode_warp(p, np, np, len, t * vpt, vpt, ok && t == 0u, status, x);
    uint prev = tdm_shfl_up(x[vpt - 1u], 1u);
    for (uint k = 0; k < vpt; k++) {
        uint before = k ? x[k - 1u] : t ? prev : 0u;
        v[k] = delta ? base + x[k] : kind == TDM_PEF_EF ? x[k] - before : x[k];
    }
#else
    uint o = t ? 1u : 0u, x[PEF_VPT + 1];
    int kind = pef_decode(p, np, np, len, t * vpt - o, vpt + 1u, ok && t == 0u, status, x);
    for (uint k = 0; k < vpt; k++) {
        uint xk = pef_pick(x, k, o), prev = pef_pick_prev(x, k, o);
        v[k] = delta ? base + xk : kind == TDM_PEF_EF ? xk - prev : xk;
    }
#endif
}

TDM_JOBS_KERNEL(tdm_jobs_pef, TDM_PEF_BLOCK, PEF_TPB, 0u,
    ,
    tdm_jobs_pef_values(arena + m.dstart, m.dnw, m.len, m.ok, t, 1u, m.base, status, v);
    if (m.ok) tdm_codec_store(out_docs, m.pos, t, PEF_VPT, v, m.len);,
    tdm_jobs_pef_values(arena + m.fstart, m.fnw, m.len, m.ok, t, 0u, 0u, status, v);
    tdm_jobs_tf(v, PEF_VPT);
    if (m.ok) tdm_codec_store(out_freqs, m.pos, t, PEF_VPT, v, m.len);)

/* ---- PForDelta: one slot width a list (its parameter word), blocks of
   512; the block decoder is tdm_pfor_decode's (pfor_slot). Every block
   ends in a barrier: the next one reuses the local arrays. */
TDM_JOBS_KERNEL(tdm_jobs_pfor, TDM_PFOR_BLOCK, PFOR_TPB, 1u,
    __local uint scratch[2 * TDM_WG_SIZE];
    __local uint gl[PFOR_BPG * TDM_PFOR_BLOCK]; __local uint ol[PFOR_BPG * TDM_PFOR_BLOCK];
    __local uint hl[PFOR_BPG * TDM_PFOR_BLOCK];,
    pfor_slot(arena + m.dstart, m.dnw, m.ok, m.len, m.dpar, slot, t, scratch, gl, ol, hl,
              status, v);
    tdm_codec_delta(v, PFOR_VPT, tpb, m.base, scratch);
    if (m.ok) tdm_codec_store(out_docs, m.pos, t, PFOR_VPT, v, m.len);
    barrier(CLK_LOCAL_MEM_FENCE);,
    pfor_slot(arena + m.fstart, m.fnw, m.ok, m.len, m.fpar, slot, t, scratch, gl, ol, hl,
              status, v);
    tdm_jobs_tf(v, PFOR_VPT);
    if (m.ok) tdm_codec_store(out_freqs, m.pos, t, PFOR_VPT, v, m.len);
    barrier(CLK_LOCAL_MEM_FENCE);)

/* ---- NewPFD: a width a block, blocks of 128 or 64 (npfd_gaps). */
#define TDM_JOBS_NPFD(NAME, B)                                                     \
    TDM_JOBS_KERNEL(NAME, B, TDM_WIDE_TPB(B), 0u,                                  \
        __local uint scratch[2 * TDM_WG_SIZE];                                     \
        __local uint G[TDM_WG_SIZE * TDM_WIDE_VPT(B)];, \
        npfd_gaps(arena + m.dstart, m.dnw, m.ok, m.len, t, TDM_WIDE_VPT(B), tpb,    \
                  G + slot * (B), status, v);                                      \
        tdm_codec_delta(v, TDM_WIDE_VPT(B), tpb, m.base, scratch);                 \
        if (m.ok) tdm_codec_store(out_docs, m.pos, t, TDM_WIDE_VPT(B), v, m.len);  \
        barrier(CLK_LOCAL_MEM_FENCE);,                                             \
        npfd_gaps(arena + m.fstart, m.fnw, m.ok, m.len, t, TDM_WIDE_VPT(B), tpb,    \
                  G + slot * (B), status, v);                                      \
        tdm_jobs_tf(v, TDM_WIDE_VPT(B));                                           \
        if (m.ok) tdm_codec_store(out_freqs, m.pos, t, TDM_WIDE_VPT(B), v, m.len); \
        barrier(CLK_LOCAL_MEM_FENCE);)
TDM_JOBS_NPFD(tdm_jobs_newpfd128, 128u)
TDM_JOBS_NPFD(tdm_jobs_newpfd64, 64u)
