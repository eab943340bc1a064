/* Batched decode of a resident index: one launch decodes any set of jobs
   (list, block_begin, block_end, out) across lists of one codec, to docids
   and to frequencies (host/resident/decode_jobs.h has the contract, docs/FORMAT.md
   the layout of the arena, descriptors and block table).

   A launch is three kernels: tdm_jobs_count checks every job and gives the
   blocks before it within its tile of TDM_WG_SIZE * TDM_JOBS_PER_ITEM jobs,
   tdm_jobs_scan (only for more than one tile) the blocks before each tile,
   then the codec's kernel walks the blocks of all jobs as one flat range
   (TDM_JOBS_KERNEL), each block slot finding its job and the job's list in
   a window of the table held in local memory, its block-table entries a
   round ahead, and decodes each block with the codec's own work-group block
   decoder (GPU-BP: docids and frequencies in one pass). A job that is bad (list out of
   range, another codec, a block range past the list, an output past its
   buffer) decodes nothing and sets TDM_CODEC_ST_BADJOB; a block table entry
   or payload found inconsistent sets TDM_CODEC_ST_CORRUPT, and no read
   leaves the list's span of the arena. */

#define TDM_JOBS_TILE (TDM_WG_SIZE * TDM_JOBS_PER_ITEM)

/* The arguments of every per-codec batched decode kernel, in order
   (host/resident/decode_jobs.c sets them). */
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

/* Jobs a window holds: the group's size, at most 128 (the window is
   TDM_JOBS_WIN * 52 bytes of local memory beside the codec's own). */
#define TDM_JOBS_WIN (TDM_WG_SIZE < 128u ? TDM_WG_SIZE : 128u)

/* A list as a window entry holds it (tdm_jobs_list_info). */
#define TDM_JL_OK 0u
#define TDM_JL_BAD 1u     /* list out of range: a bad job */
#define TDM_JL_SPAN 2u    /* a cache span out of the arena: corrupt, nothing read */
#define TDM_JL_UNSOUND 4u /* block-table totals against the span: corrupt */

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

/* What every block of list x needs from its descriptor, the list's last
   block-table entries and its parameter words: *li = {first payload word,
   df, first block-table entry (or a one-block list's docid words), flags},
   *le = {docid words, frequency words, docid and frequency parameter}.
   The descriptors were checked when the index was opened (FORMAT.md): spans
   in order inside the arena, each at least 2P words, a one-block list's
   payload sizes inside its span. The block table was not. With `spans` (a
   list cache, host/resident/listcache.h) the arena is the cache and d.w the
   list's span in it; the host wrote them, checked anyway. */
void tdm_jobs_list_info(uint x, const uint block, const uint P, uint4 *li, uint4 *le,
                        TDM_JOBS_ARGS)
{
    *li = (uint4)(0u, 0u, 0u, TDM_JL_BAD);
    *le = (uint4)(0u);
    if (x >= nlists)
        return;
    uint4 d = lists[x];
    uint nb = tdm_jobs_nblocks(d.y, block);
    uint end = spans ? d.x + d.w : x + 1u < nlists ? lists[x + 1u].x : arena_words;
    if (spans && (d.w < 2u * P || end < d.x || end > arena_words)) {
        li->w = TDM_JL_SPAN;
        return;
    }
    uint room = end - d.x - 2u * P, ndw = d.z, nfw = room - d.z, flags = TDM_JL_OK;
    if (nb > 1u) {
        ndw = block_docs[d.z + nb];
        nfw = block_freqs[d.z + nb];
        flags = (ulong)ndw + nfw == (ulong)room ? TDM_JL_OK : TDM_JL_UNSOUND;
    }
    *li = (uint4)(d.x + 2u * P, d.y, d.z, flags);
    *le = (uint4)(ndw, nfw, P ? arena[d.x] : 0u, P ? arena[d.x + P] : 0u);
}

/* The window: jobs jb .. jb + TDM_JOBS_WIN - 1, for each the blocks of the
   launch before it (the launch's total past the table), the job and its
   list (tdm_jobs_list_info), loaded together so that a round finds its
   blocks' jobs and lists in local memory, where a search of the table and
   the descriptor behind each job would be chains of dependent global
   loads. Called by the whole group. */
void tdm_jobs_window(uint jb, uint total, __local uint *win, __local uint4 *wjob,
                     __local uint4 *wli, __local uint4 *wle, const uint block, const uint P,
                     TDM_JOBS_ARGS)
{
    barrier(CLK_LOCAL_MEM_FENCE); /* the last round's reads of the window are done */
    for (uint i = get_local_id(0); i < TDM_JOBS_WIN; i += TDM_WG_SIZE) {
        uint j = jb + i;
        uint4 job = (uint4)(0u), li = (uint4)(0u, 0u, 0u, TDM_JL_BAD), le = (uint4)(0u);
        if (j < ntab) {
            job = jobs[j];
            tdm_jobs_list_info(job.x, block, P, &li, &le, TDM_JOBS_PASS);
        }
        win[i] = j < ntab ? tdm_jobs_before(j, jpre, tsum) : total;
        wjob[i] = job;
        wli[i] = li;
        wle[i] = le;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

#ifndef TDM_JOBS_HINT
#define TDM_JOBS_HINT 1 /* 0: every block's job by a search of the window (A/B runs) */
#endif

/* One block of a launch between its two steps: found (tdm_jobs_fetch,
   a round ahead, its block-table loads in flight) and resolved
   (tdm_jobs_finish). */
typedef struct tdm_jpend {
    uint ok;                /* 1: a block to decode and store */
    uint pos, len;          /* output position, postings */
    uint first, flags;      /* the list's first payload word, TDM_JL_* */
    uint ndw, nfw;          /* the list's docid and frequency words */
    uint dpar, fpar;        /* its codec parameter words (P = 1), else 0 */
    uint dlo, dhi, flo, fhi, base; /* the block's endpoints and docid base */
} tdm_jpend;

/* One block, resolved. */
typedef struct tdm_jblock {
    uint ok;            /* 1: a block to decode and store */
    uint pos, len;      /* output position, postings */
    uint dstart, dnw;   /* docid words: arena[dstart .. dstart + dnw) */
    uint fstart, fnw;   /* frequency words */
    uint base;          /* docid before the block */
    uint dpar, fpar;    /* the list's codec parameter words (P = 1), else 0 */
} tdm_jblock;

/* Block f of the launch (when valid): its job from the window (or, for a
   job past it, which a run of empty jobs can make, from the table), the
   output place, and the loads of its block-table entries, whose values
   tdm_jobs_finish reads. */
tdm_jpend tdm_jobs_fetch(uint f, int valid, uint jb, uint *hint, __local const uint *win,
                         __local const uint4 *wjob, __local const uint4 *wli,
                         __local const uint4 *wle, const uint block, const uint P,
                         TDM_JOBS_ARGS)
{
    tdm_jpend p = {0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u};
    if (!valid)
        return p;
    /* The slot's last job (*hint, whose blocks start at or before f) is
       most often this one too: one local load, a search only past it. */
    uint lo = TDM_JOBS_HINT ? *hint : 0u;
    if (lo + 1u < TDM_JOBS_WIN && win[lo + 1u] <= f) {
        uint hi = TDM_JOBS_WIN;
        lo++;
        while (hi - lo > 1u) {
            uint mid = (lo + hi) / 2u;
            if (win[mid] <= f)
                lo = mid;
            else
                hi = mid;
        }
    }
    *hint = lo;
    uint4 job, li, le;
    uint before;
    if (lo + 1u < TDM_JOBS_WIN || jb + lo + 1u >= ntab) {
        before = win[lo];
        job = wjob[lo];
        li = wli[lo];
        le = wle[lo];
    } else {
        uint j = tdm_jobs_find(f, ntab, jpre, tsum, ntiles);
        before = tdm_jobs_before(j, jpre, tsum);
        job = jobs[j];
        tdm_jobs_list_info(job.x, block, P, &li, &le, TDM_JOBS_PASS);
    }
    uint b = job.y + (f - before), nb = tdm_jobs_nblocks(li.y, block);
    if (li.w == TDM_JL_BAD || b >= job.z || b >= nb) {
        atomic_or(status, TDM_CODEC_ST_BADJOB); /* the table changed under the launch */
        return p;
    }
    if (li.w == TDM_JL_SPAN) {
        atomic_or(status, TDM_CODEC_ST_CORRUPT);
        return p;
    }
    p.ok = 1u;
    p.len = min(block, li.y - b * block);
    p.pos = job.w + (b - job.y) * block;
    p.first = li.x;
    p.flags = li.w;
    p.ndw = le.x;
    p.nfw = le.y;
    p.dpar = P ? le.z : 0u;
    p.fpar = P ? le.w : 0u;
    p.dhi = le.x;
    p.fhi = le.y;
    if (nb > 1u) {
        uint e = li.z + b;
        p.dlo = block_docs[e];
        p.dhi = block_docs[e + 1u];
        p.flo = block_freqs[e];
        p.fhi = block_freqs[e + 1u];
        p.base = block_last[e];
    }
    return p;
}

/* The block's payload words, checked against the list's span: a block
   table found inconsistent sets the corrupt bit and reads nothing. */
tdm_jblock tdm_jobs_finish(tdm_jpend p, __global uint *status)
{
    tdm_jblock m = {p.ok, p.pos, p.len, 0u, 0u, 0u, 0u, p.base, p.dpar, p.fpar};
    if (!p.ok)
        return m;
    if (p.flags != TDM_JL_OK || p.dlo > p.dhi || p.dhi > p.ndw || p.flo > p.fhi ||
        p.fhi > p.nfw) {
        atomic_or(status, TDM_CODEC_ST_CORRUPT);
        p.dlo = p.dhi = p.flo = p.fhi = p.ndw = 0u; /* read nothing */
    }
    m.dstart = p.first + p.dlo;
    m.dnw = p.dhi - p.dlo;
    m.fstart = p.first + p.ndw + p.flo;
    m.fnw = p.fhi - p.flo;
    return m;
}

/* Stores work-item t's vpt values (block positions t*vpt ..) of a block of
   len values at out + pos, where ok. Called by the whole group. With warp
   shuffles (a block within a warp, vpt a multiple of 4) every work-item
   stores whole uint4s at 16-byte boundaries whatever pos is, filling its
   last quad with the next work-item's first values (outputs laid out back
   to back start 3 lists in 4 off the boundary, and tdm_codec_store writes
   those a value at a time); elsewhere tdm_codec_store. */
#ifndef TDM_JOBS_ALIGN
#define TDM_JOBS_ALIGN 1 /* 0: tdm_codec_store everywhere (for A/B runs) */
#endif
void tdm_jobs_store(__global uint *out, uint ok, uint pos, uint t, const uint tpb,
                    const uint vpt, const uint *v, uint len)
{
#if TDM_NV_SHFL && TDM_JOBS_ALIGN
    if (tpb <= 32u && vpt >= 4u && vpt % 4u == 0u) {
        uint src = min(tdm_lane() + 1u, 31u);
        uint n0 = tdm_shfl_idx(v[0], src), n1 = tdm_shfl_idx(v[1], src);
        uint n2 = tdm_shfl_idx(v[2], src);
        if (!ok)
            return;
        uint s = (4u - (pos & 3u)) & 3u, i0 = t * vpt + s;
        if (t == 0u)
            for (uint j = 0; j < 3u; j++)
                if (j < s && j < len)
                    out[pos + j] = v[j];
        for (uint q = 0; q < vpt / 4u; q++) {
            uint w[4];
            for (uint k = 0; k < 4u; k++) {
                uint j = 4u * q + k; /* w[k] is value t * vpt + j + s */
                uint x1 = j + 1u < vpt ? v[min(j + 1u, vpt - 1u)] : n0;
                uint x2 = j + 2u < vpt ? v[min(j + 2u, vpt - 1u)] : j + 2u == vpt ? n0 : n1;
                uint x3 = j + 3u < vpt ? v[min(j + 3u, vpt - 1u)]
                          : j + 3u == vpt ? n0 : j + 3u == vpt + 1u ? n1 : n2;
                w[k] = s == 0u ? v[j] : s == 1u ? x1 : s == 2u ? x2 : x3;
            }
            uint i = i0 + 4u * q;
            if (i + 4u <= len) {
                *(__global uint4 *)(out + pos + i) = (uint4)(w[0], w[1], w[2], w[3]);
            } else {
                for (uint k = 0; k < 4u; k++)
                    if (i + k < len)
                        out[pos + i + k] = w[k];
            }
        }
        return;
    }
#endif
    if (ok)
        tdm_codec_store(out, pos, t, vpt, v, len);
}

/* The kernel of one codec: blocks of BLOCK values, TPB work-items a block,
   P parameter words. BODY is a statement that decodes the block `m`
   (tdm_jblock) of work-item t's slot and stores its docids where outs & 1
   and its frequencies where outs & 2; it is run by the whole group
   (barriers allowed), `round` counts the loop's rounds.

   The loop is TDM_CODEC_FOR_JOBS_TPB's in a blocked order: group g takes
   the `per` consecutive rounds of blocks from g * per * slots, so that each
   round's jobs follow the last round's: a round finds them in a window of
   the job table and their lists (tdm_jobs_window), loaded again only when
   a round may pass its last job. Each round's blocks are found a round
   ahead and their block-table loads issued before the round before
   decodes, so a round waits only for its payload (not for the chain job,
   descriptor, block table, payload). */
#ifndef TDM_JOBS_PIPE
#define TDM_JOBS_PIPE 1 /* 0: each round found when it starts (for A/B runs) */
#endif

/* Round R's blocks: a new window first when they may leave this one (the
   same for the whole group), then found into nxt. */
#define TDM_JOBS_ADVANCE(R, P)                                                     \
    if ((R) > 0u && (R) < njobs && f0 + min((R) + slots, njobs) - 1u >= wlast &&   \
        jb + TDM_JOBS_WIN < ntab) {                                                \
        uint lo = 0u, hi = TDM_JOBS_WIN, f = f0 + (R);                             \
        while (hi - lo > 1u) {                                                     \
            uint mid = (lo + hi) / 2u;                                             \
            if (win[mid] <= f)                                                     \
                lo = mid;                                                          \
            else                                                                   \
                hi = mid;                                                          \
        }                                                                          \
        jb = lo + 1u < TDM_JOBS_WIN ? jb + lo : tdm_jobs_find(f, ntab, jpre, tsum, ntiles); \
        tdm_jobs_window(jb, total, win, wjob, wli, wle, block, (P), TDM_JOBS_PASS); \
        wlast = win[TDM_JOBS_WIN - 1u];                                            \
        hint = 0u;                                                                 \
    }                                                                              \
    nxt = tdm_jobs_fetch(f0 + (R) + slot, (R) + slot < njobs, jb, &hint, win, wjob, wli, \
                         wle, block, (P), TDM_JOBS_PASS);

#define TDM_JOBS_KERNEL(NAME, BLOCK, TPB, P, LOCALS, BODY)                          \
    __kernel __attribute__((reqd_work_group_size(TDM_WG_SIZE, 1, 1)))              \
    void NAME(TDM_JOBS_ARGS)                                                       \
    {                                                                              \
        LOCALS                                                                     \
        __local uint win[TDM_JOBS_WIN];                                            \
        __local uint4 wjob[TDM_JOBS_WIN], wli[TDM_JOBS_WIN], wle[TDM_JOBS_WIN];    \
        const uint block = (BLOCK), tpb = (TPB), slots = TDM_WG_SIZE / (TPB);      \
        uint t = get_local_id(0) % tpb, slot = get_local_id(0) / tpb, round = 0u;  \
        uint total = tsum[ntiles]; /* blocks in the launch */                      \
        ulong per = ((ulong)total + (ulong)get_num_groups(0) * slots - 1u) /       \
                    ((ulong)get_num_groups(0) * slots);                            \
        ulong g0 = get_group_id(0) * per * slots;                                  \
        uint njobs = (uint)min((ulong)total - min((ulong)total, g0), per * slots); \
        uint f0 = (uint)min(g0, (ulong)total), jb = 0u, wlast = 0u, hint = 0u;     \
        tdm_jpend nxt;                                                             \
        (void)slot;                                                                \
        if (njobs) { /* the same for the whole group */                           \
            jb = tdm_jobs_find(f0, ntab, jpre, tsum, ntiles);                      \
            tdm_jobs_window(jb, total, win, wjob, wli, wle, block, (P), TDM_JOBS_PASS); \
            wlast = win[TDM_JOBS_WIN - 1u];                                        \
        }                                                                          \
        if (TDM_JOBS_PIPE) {                                                       \
            TDM_JOBS_ADVANCE(0u, P)                                                \
        }                                                                          \
        for (uint r0 = 0u; r0 < njobs; r0 += slots) {                              \
            if (!TDM_JOBS_PIPE) {                                                  \
                TDM_JOBS_ADVANCE(r0, P)                                            \
            }                                                                      \
            tdm_jblock m = tdm_jobs_finish(nxt, status);                           \
            if (TDM_JOBS_PIPE) {                                                   \
                TDM_JOBS_ADVANCE(r0 + slots, P)                                    \
            }                                                                      \
            BODY                                                                   \
            round++;                                                               \
        }                                                                          \
    }

/* A BODY of two statements run one after the other: DOCS (where outs & 1)
   and FREQS (where outs & 2), each decoding into its own v[]. */
#define TDM_JOBS_SPLIT(DOCS, FREQS)                                                \
    if (outs & 1u) {                                                               \
        uint v[TDM_CODEC_VPT_MAX];                                                 \
        DOCS                                                                       \
    }                                                                              \
    if (outs & 2u) {                                                               \
        uint v[TDM_CODEC_VPT_MAX];                                                 \
        FREQS                                                                      \
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
    TDM_JOBS_SPLIT(
    tdm_jobs_raw_values(arena + m.dstart, m.dnw, m.len, m.ok, t, status, v);
    tdm_codec_delta(v, TDM_RAW_VPT, tpb, m.base, scratch);
    tdm_jobs_store(out_docs, m.ok, m.pos, t, tpb, TDM_RAW_VPT, v, m.len);,
    tdm_jobs_raw_values(arena + m.fstart, m.fnw, m.len, m.ok, t, status, v);
    tdm_jobs_tf(v, TDM_RAW_VPT);
    tdm_jobs_store(out_freqs, m.ok, m.pos, t, tpb, TDM_RAW_VPT, v, m.len);))

/* ---- GPU-BP: docids and frequencies of a block unpacked together (both
   bit windows opened before either is read, so the two payloads' loads
   are in flight at once), then stored; scans alternate two scratch
   buffers (no closing barrier), as tdm_bp128_decode's. */
#ifndef TDM_JOBS_BP_PAIR
#define TDM_JOBS_BP_PAIR 1
#endif

/* Work-item t's vpt values of two blocks packed as tdm_bp_unpack reads
   them (a: len values in na words, b likewise), the loads of both issued
   first. */
void tdm_jobs_bp_unpack2(__global const uint *a, uint na, __global const uint *b, uint nb,
                         uint len, const uint block, uint t, const uint vpt, uint *va,
                         uint *vb)
{
    uint wa = tdm_bp_width(na, len, block), wb = tdm_bp_width(nb, len, block);
    uint ma = wa >= 32u ? 0xFFFFFFFFu : (1u << wa) - 1u;
    uint mb = wb >= 32u ? 0xFFFFFFFFu : (1u << wb) - 1u;
    tdm_bitwin xa = tdm_bitwin_open(a, na, t * vpt * wa);
    tdm_bitwin xb = tdm_bitwin_open(b, nb, t * vpt * wb);
    for (uint j = 0; j < vpt; j++) {
        uint i = t * vpt + j;
        uint x = tdm_bitwin_take(&xa, a, na, wa, ma), y = tdm_bitwin_take(&xb, b, nb, wb, mb);
        va[j] = i < len ? x : 0u;
        vb[j] = i < len ? y : 0u;
    }
}

#if TDM_JOBS_BP_PAIR
#define TDM_JOBS_BP_BODY(B)                                                        \
    if (outs == 3u) {                                                              \
        uint v[TDM_WIDE_VPT(B)], u[TDM_WIDE_VPT(B)];                               \
        tdm_jobs_bp_unpack2(arena + m.dstart, m.dnw, arena + m.fstart, m.fnw, m.len, B, t, \
                            TDM_WIDE_VPT(B), v, u);                                \
        tdm_codec_delta_nb(v, TDM_WIDE_VPT(B), tpb, m.base, scratch[round & 1u]);  \
        tdm_jobs_store(out_docs, m.ok, m.pos, t, tpb, TDM_WIDE_VPT(B), v, m.len);  \
        tdm_jobs_tf(u, TDM_WIDE_VPT(B));                                           \
        tdm_jobs_store(out_freqs, m.ok, m.pos, t, tpb, TDM_WIDE_VPT(B), u, m.len); \
    } else {                                                                       \
        TDM_JOBS_BP_ONE(B)                                                         \
    }
#else
#define TDM_JOBS_BP_BODY(B) TDM_JOBS_BP_ONE(B)
#endif

#define TDM_JOBS_BP_ONE(B)                                                         \
    TDM_JOBS_SPLIT(                                                                \
        tdm_bp_unpack(arena + m.dstart, m.dnw, m.len, B, t, TDM_WIDE_VPT(B), v);   \
        tdm_codec_delta_nb(v, TDM_WIDE_VPT(B), tpb, m.base, scratch[round & 1u]);  \
        tdm_jobs_store(out_docs, m.ok, m.pos, t, tpb, TDM_WIDE_VPT(B), v, m.len);, \
        tdm_bp_unpack(arena + m.fstart, m.fnw, m.len, B, t, TDM_WIDE_VPT(B), v);   \
        tdm_jobs_tf(v, TDM_WIDE_VPT(B));                                           \
        tdm_jobs_store(out_freqs, m.ok, m.pos, t, tpb, TDM_WIDE_VPT(B), v, m.len);)

#define TDM_JOBS_BP(NAME, B)                                                       \
    TDM_JOBS_KERNEL(NAME, B, TDM_WIDE_TPB(B), 0u,                                  \
        __local uint scratch[2][2 * TDM_WG_SIZE];, TDM_JOBS_BP_BODY(B))
TDM_JOBS_BP(tdm_jobs_bp128, 128u)
TDM_JOBS_BP(tdm_jobs_bp256, 256u)

/* ---- GPU-VByte: byte lengths scanned in scratch[0], gaps in scratch[1],
   as tdm_vbyte_block. */
#define TDM_JOBS_VBYTE(NAME, B)                                                    \
    TDM_JOBS_KERNEL(NAME, B, TDM_WIDE_TPB(B), 0u,                                  \
        __local uint scratch[2][2 * TDM_WG_SIZE];,                                 \
        TDM_JOBS_SPLIT(                                                            \
        tdm_vbyte_unpack(arena + m.dstart, m.dnw, m.len, m.ok, t, TDM_WIDE_VPT(B), \
                         tpb, v, scratch[0], status);                              \
        tdm_codec_delta_nb(v, TDM_WIDE_VPT(B), tpb, m.base, scratch[1]);           \
        tdm_jobs_store(out_docs, m.ok, m.pos, t, tpb, TDM_WIDE_VPT(B), v, m.len);, \
        tdm_vbyte_unpack(arena + m.fstart, m.fnw, m.len, m.ok, t, TDM_WIDE_VPT(B), \
                         tpb, v, scratch[0], status);                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                              \
        tdm_jobs_tf(v, TDM_WIDE_VPT(B));                                           \
        tdm_jobs_store(out_freqs, m.ok, m.pos, t, tpb, TDM_WIDE_VPT(B), v, m.len);))
TDM_JOBS_VBYTE(tdm_jobs_vbyte128, 128u)
TDM_JOBS_VBYTE(tdm_jobs_vbyte1024, 1024u)

/* ---- Rice */
TDM_JOBS_KERNEL(tdm_jobs_rice, TDM_RICE_BLOCK, RICE_TPB, 0u,
    __local uint scratch[2 * TDM_WG_SIZE];,
    TDM_JOBS_SPLIT(
    rice_gaps(arena + m.dstart, m.dnw, m.ok, m.len, t, status, v);
    tdm_codec_delta(v, RICE_VPT, tpb, m.base, scratch);
    tdm_jobs_store(out_docs, m.ok, m.pos, t, tpb, RICE_VPT, v, m.len);,
    rice_gaps(arena + m.fstart, m.fnw, m.ok, m.len, t, status, v);
    tdm_jobs_tf(v, RICE_VPT);
    tdm_jobs_store(out_freqs, m.ok, m.pos, t, tpb, RICE_VPT, v, m.len);))

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
    TDM_JOBS_SPLIT(
    tdm_jobs_pef_values(arena + m.dstart, m.dnw, m.len, m.ok, t, 1u, m.base, status, v);
    tdm_jobs_store(out_docs, m.ok, m.pos, t, tpb, PEF_VPT, v, m.len);,
    tdm_jobs_pef_values(arena + m.fstart, m.fnw, m.len, m.ok, t, 0u, 0u, status, v);
    tdm_jobs_tf(v, PEF_VPT);
    tdm_jobs_store(out_freqs, m.ok, m.pos, t, tpb, PEF_VPT, v, m.len);))

/* ---- PForDelta: one slot width a list (its parameter word), blocks of
   512; the block decoder is tdm_pfor_decode's (pfor_slot). Every block
   ends in a barrier: the next one reuses the local arrays. */
TDM_JOBS_KERNEL(tdm_jobs_pfor, TDM_PFOR_BLOCK, PFOR_TPB, 1u,
    __local uint scratch[2 * TDM_WG_SIZE];
    __local uint gl[PFOR_BPG * TDM_PFOR_BLOCK]; __local uint ol[PFOR_BPG * TDM_PFOR_BLOCK];
    __local uint hl[PFOR_BPG * TDM_PFOR_BLOCK];,
    TDM_JOBS_SPLIT(
    pfor_slot(arena + m.dstart, m.dnw, m.ok, m.len, m.dpar, slot, t, scratch, gl, ol, hl,
              status, v);
    tdm_codec_delta(v, PFOR_VPT, tpb, m.base, scratch);
    tdm_jobs_store(out_docs, m.ok, m.pos, t, tpb, PFOR_VPT, v, m.len);
    barrier(CLK_LOCAL_MEM_FENCE);,
    pfor_slot(arena + m.fstart, m.fnw, m.ok, m.len, m.fpar, slot, t, scratch, gl, ol, hl,
              status, v);
    tdm_jobs_tf(v, PFOR_VPT);
    tdm_jobs_store(out_freqs, m.ok, m.pos, t, tpb, PFOR_VPT, v, m.len);
    barrier(CLK_LOCAL_MEM_FENCE);))

/* ---- NewPFD: a width a block, blocks of 128 or 64 (npfd_gaps). */
#define TDM_JOBS_NPFD(NAME, B)                                                     \
    TDM_JOBS_KERNEL(NAME, B, TDM_WIDE_TPB(B), 0u,                                  \
        __local uint scratch[2 * TDM_WG_SIZE];                                     \
        __local uint G[TDM_WG_SIZE * TDM_WIDE_VPT(B)];,                           \
        TDM_JOBS_SPLIT(                                                            \
        npfd_gaps(arena + m.dstart, m.dnw, m.ok, m.len, t, TDM_WIDE_VPT(B), tpb,    \
                  G + slot * (B), status, v);                                      \
        tdm_codec_delta(v, TDM_WIDE_VPT(B), tpb, m.base, scratch);                 \
        tdm_jobs_store(out_docs, m.ok, m.pos, t, tpb, TDM_WIDE_VPT(B), v, m.len);  \
        barrier(CLK_LOCAL_MEM_FENCE);,                                             \
        npfd_gaps(arena + m.fstart, m.fnw, m.ok, m.len, t, TDM_WIDE_VPT(B), tpb,    \
                  G + slot * (B), status, v);                                      \
        tdm_jobs_tf(v, TDM_WIDE_VPT(B));                                           \
        tdm_jobs_store(out_freqs, m.ok, m.pos, t, tpb, TDM_WIDE_VPT(B), v, m.len); \
        barrier(CLK_LOCAL_MEM_FENCE);))
TDM_JOBS_NPFD(tdm_jobs_newpfd128, 128u)
TDM_JOBS_NPFD(tdm_jobs_newpfd64, 64u)

/* ---- The serial variant (CPU devices, host/resident/decode_jobs.c picks it).

   tdm_jobs_count and tdm_jobs_scan as plain loops, with the same results:
   work-item g counts tile g (TDM_JOBS_TILE jobs), one work-item sums the
   tiles. Launched in groups of one. */
__kernel void tdm_jobs_count_serial(__global const uint4 *jobs, uint ntab,
                                    __global const uint4 *lists, __global const uchar *codecs,
                                    uint nlists, uint codec, uint block, uint outs,
                                    uint docs_cap, uint freqs_cap, __global uint *jpre,
                                    __global uint *tsum, __global uint *status)
{
    uint g = get_global_id(0), j0 = g * TDM_JOBS_TILE;
    if (j0 >= ntab)
        return;
    uint j1 = min(ntab, j0 + TDM_JOBS_TILE);
    ulong sum = 0;
    for (uint j = j0; j < j1; j++) {
        jpre[j] = (uint)sum;
        sum += tdm_jobs_count_one(jobs[j], lists, codecs, nlists, codec, block, outs, docs_cap,
                                  freqs_cap, status);
    }
    if (sum > 0xFFFFFFFFul) { /* refused as bad jobs: the tile decodes nothing */
        atomic_or(status, TDM_CODEC_ST_BADJOB);
        for (uint j = j0; j < j1; j++)
            jpre[j] = 0u;
        sum = 0;
    }
    tsum[g + 1u] = (uint)sum;
    if (g == 0u)
        tsum[0] = 0u;
}

__kernel void tdm_jobs_scan_serial(__global uint *tsum, uint ntiles, __global uint *status)
{
    if (get_global_id(0) != 0u)
        return;
    ulong carry = 0;
    for (uint i = 1; i <= ntiles; i++) {
        carry += tsum[i];
        if (carry > 0xFFFFFFFFul) {
            atomic_or(status, TDM_CODEC_ST_BADJOB);
            tsum[ntiles] = 0u;
            return;
        }
        tsum[i] = (uint)carry;
    }
}

/* The decode:
   work-item g of G decodes the launch's blocks [g * per, (g + 1) * per),
   per = ceil(total / G), each block whole and alone (cl/codec_serial.cl),
   its docids and frequencies straight to the outputs: no barrier, no local
   memory, which a CPU driver runs as plain loops (PoCL turns a work-group's
   barriers into loops over its work-items). The jobs are counted and
   summed as above, so a table made on the device works alike; the first
   block's job is found by the same search, the next ones
   by walking the table. Bad jobs and damaged data are flagged as the
   work-group kernels flag them. */
__kernel void tdm_jobs_serial(TDM_JOBS_ARGS, uint codec)
{
    uint total = tsum[ntiles];
    ulong n = get_global_size(0), per = ((ulong)total + n - 1u) / n;
    ulong f0 = get_global_id(0) * per, f1 = min(f0 + per, (ulong)total);
    if (f0 >= f1)
        return;
    uint j = tdm_jobs_find((uint)f0, ntab, jpre, tsum, ntiles), st = 0u;
    uint before = tdm_jobs_before(j, jpre, tsum);
    uint next = j + 1u < ntab ? tdm_jobs_before(j + 1u, jpre, tsum) : total;
    uint4 job = jobs[j];
    for (uint f = (uint)f0; f < (uint)f1; f++) {
        while (f >= next && j + 1u < ntab) { /* the next job with blocks */
            j++;
            before = next;
            next = j + 1u < ntab ? tdm_jobs_before(j + 1u, jpre, tsum) : total;
            job = jobs[j];
        }
        uint b = job.y + (f - before);
        tdm_zs_blk k;
        if (f >= next || b >= job.z || job.x >= nlists || codecs[job.x] != codec) {
            st |= TDM_CODEC_ST_BADJOB; /* the table changed under the launch */
            continue;
        }
        if (!tdm_zs_locate(arena, lists, codecs, block_last, block_docs, block_freqs, nlists,
                           arena_words, spans, job.x, b, &k, &st))
            continue;
        uint pos = job.w + (b - job.y) * k.block;
        if (outs & 1u)
            tdm_zs_decode(arena, &k, 1u, out_docs + pos, 1u, &st);
        if (outs & 2u)
            tdm_zs_decode(arena, &k, 0u, out_freqs + pos, 1u, &st);
    }
    if (st)
        atomic_or(status, st);
}
