/* Top-k search over docid ranges on the COMPRESSED index: the CPU variant
   of the range kernel (include/tandem.h, TDM_VARIANT_COMPRESSED). As
   tdm_search_range (cl/search_range.cl), a work-item owns the docid range
   [r * rlen, min((r + 1) * rlen, ndocs)) and runs the query document at a
   time with its own heap; the algorithms, the heap and the shared threshold
   are the same code (cl/search_algo.cl), so the two variants give the same
   bits. What differs is the cursor: it reads the resident index
   (index/resident.h) itself, as PISA's cursors do, instead of postings a
   decode launch wrote for every block of every list:
   - a seek past the cursor's block finds the block by galloping over the
     block table's last docids (BLOCK_LAST), which needs no decoding, and
     decodes that block's docids (cl/codec_serial.cl, tdm_zs_block) into the
     cursor's buffer; blocks skipped are never decoded;
   - a block's frequencies are decoded only when a posting of it is scored;
   - Block-Max WAND reads block ends from the block table, and a block
     starting at or past the range's end is not decoded.
   So a query is one launch (then the merge), whatever its lists' lengths,
   and AND needs no block selection: the shortest list leads, the others
   seek.

   Scratch layout (argument `layout`, TDM_ZR_* of host/query/search.h):
   word w of term t of range r (of R ranges; W words a term: TDM_ZR_CW in
   cur, bw in docs and freqs, 1 in ord) is at
     TDM_ZR_RANGE (0, CPUs):       (r * nt + t) * W + w   range-major
     TDM_ZR_INTERLEAVED (1, GPUs): (t * W + w) * R + r    interleaved
   so a range's words are contiguous on a CPU (one core a range: words of
   neighbouring ranges in one cache line would be shared between cores), and
   on a GPU the lanes r, r + 1, ... of a warp, which run in lockstep, touch
   consecutive words (a block's decode: 128 coalesced stores instead of 128
   stores to as many cache lines). Both are s->X + (t * W + w) * s->ws, X
   the range's first word and ws its word stride (1 or R): tdm_zr_scratch.

   Cursor of term t, word w (TDM_ZC(s, c, w), c = tdm_zr_cur(s, t)):
     0 block: the block the cursor is in (nb once past the list's end)
     1 position in that block
     2 postings of the block decoded in its docs buffer (0: none)
     3 1 + the block whose frequencies are in its freqs buffer (0: none)
     4 docid under the cursor (NODOC past the list or the range)
     5 last docid of the block
     6 the list's first block-table entry (descriptor word ext)
     7 the list's blocks nb
   docs and freqs: bw words a cursor (value i of term t's block at
   tdm_zr_buf(s->docs, s, t)[i * ws]), bw the largest block size among the
   query's lists. Term table: search_range.cl's, but word 0 is the term's
   list id (the index's term id) instead of a position in decoded postings.

   A block whose decoding fails or whose docids disagree with the block table
   (not ascending, not above the block's base, count or last docid not the
   table's) sets TDM_CODEC_ST_CORRUPT in the status word (the merge returns
   it; the host fails the search) and ends the cursor, so a damaged index
   gives an error, never an answer. */

#define TDM_ZR_CW 8u
#define TDM_ZR_RANGE 0u
#define TDM_ZR_INTERLEAVED 1u

typedef struct tdm_zrange {
    __global const uint *arena;
    __global const uint4 *lists;
    __global const uchar *codecs;
    __global const uint *block_last;
    __global const uint *block_docs;
    __global const uint *block_freqs;
    uint nlists, arena_words, spans;
    __global uint *docs;  /* the range's cursors' decoded docids, bw a cursor */
    __global uint *freqs; /* the range's cursors' decoded frequencies */
    __global const uint *terms;
    __global const float *bmax;
    __global const uint *doclens;
    __global uint *cur; /* the range's first cursor word */
    __global uint *ord; /* the range's first ord word */
    uint ws;            /* word stride: 1 (TDM_ZR_RANGE) or nr (TDM_ZR_INTERLEAVED) */
    __global float *hs;
    __global uint *hd;
    __global uint *shared; /* the shared threshold G (term 0, word 7) */
    uint bw, nt, nr, r, rend, cap, n, kind;
    uint pub;
    float c0, c1;
    float gth;
    uint st; /* TDM_CODEC_ST_* found by this work-item */
} tdm_zrange;

uint tdm_zr_term(const tdm_zrange *s, uint t, uint w) { return s->terms[t * TDM_SEARCH_TW + w]; }

/* Word w of cursor c (of the range of s). */
#define TDM_ZC(s, c, w) ((c)[(w) * (s)->ws])

/* The range's scratch (the layout above) from the launch's buffers, which
   start at its query's first cursor: s->r, nr, nt and bw set. */
void tdm_zr_scratch(tdm_zrange *s, __global uint *cur, __global uint *docs,
                    __global uint *freqs, __global uint *ord, uint layout)
{
    uint il = layout == TDM_ZR_INTERLEAVED;
    uint rt = il ? s->r : s->r * s->nt; /* the range's first term slot */
    s->ws = il ? s->nr : 1u;
    s->cur = cur + rt * (il ? 1u : TDM_ZR_CW);
    s->docs = docs + rt * (il ? 1u : s->bw);
    s->freqs = freqs + rt * (il ? 1u : s->bw);
    s->ord = ord + rt;
}

__global uint *tdm_zr_cur(const tdm_zrange *s, uint t)
{
    return s->cur + t * TDM_ZR_CW * s->ws;
}

__global uint *tdm_zr_buf(__global uint *b, const tdm_zrange *s, uint t)
{
    return b + t * s->bw * s->ws;
}

uint tdm_zr_oi(const tdm_zrange *s, uint i) { return i * s->ws; }

uint tdm_zr_doc(const tdm_zrange *s, uint t) { return TDM_ZC(s, tdm_zr_cur(s, t), 4u); }

/* As tdm_sr_lower and tdm_sr_gallop (cl/search_range.cl), over a cursor's
   decoded docids (value i at a[i * ws]). */
uint tdm_zr_lower(__global const uint *a, uint ws, uint lo, uint e, uint target)
{
    uint hi = e;
    while (lo < hi) {
        uint mid = lo + (hi - lo) / 2u;
        if (a[mid * ws] < target)
            lo = mid + 1u;
        else
            hi = mid;
    }
    return lo;
}

uint tdm_zr_gallop(__global const uint *a, uint ws, uint p, uint e, uint target)
{
    uint step = 1u;
    while (step < e - p && a[(p + step) * ws] < target) {
        p += step;
        step <<= 1;
    }
    uint hi = step < e - p ? p + step : e;
    return tdm_zr_lower(a, ws, p + 1u, hi, target);
}

/* Block j of term t's list decoded into out: docids (want_docs) or
   frequencies; the count, 0 on failure (flagged in s->st). */
uint tdm_zr_load(tdm_zrange *s, uint t, uint j, uint want_docs, __global uint *out)
{
    return tdm_zs_block(s->arena, s->lists, s->codecs, s->block_last, s->block_docs,
                        s->block_freqs, s->nlists, s->arena_words, s->spans,
                        tdm_zr_term(s, t, 0), j, want_docs, out, s->ws, &s->st);
}

/* The cursor on position i of its decoded block. */
void tdm_zr_set(const tdm_zrange *s, __global uint *c, __global const uint *zd, uint i)
{
    TDM_ZC(s, c, 1u) = i;
    uint d = zd[i * s->ws];
    TDM_ZC(s, c, 4u) = d < s->rend ? d : TDM_SEARCH_NODOC;
}

/* The cursor past its list (at = nb) or past the range (at = its block). */
void tdm_zr_end(const tdm_zrange *s, __global uint *c, uint at)
{
    TDM_ZC(s, c, 0u) = at;
    TDM_ZC(s, c, 4u) = TDM_SEARCH_NODOC;
}

/* Whether the n docids of block j (base, table's last docid) at zd[i * ws]
   agree with the block table: ascending, above the base, the last one the
   table's. */
int tdm_zr_sound(__global const uint *zd, uint ws, uint n, uint want, uint j, uint base,
                 uint last, uint nb)
{
    if (n != want || n == 0u)
        return 0;
    uint prev = zd[0];
    if ((j > 0u && prev <= base) || (nb > 1u && zd[(n - 1u) * ws] != last))
        return 0;
    for (uint i = 1; i < n; i++) {
        uint d = zd[i * ws];
        if (d <= prev)
            return 0;
        prev = d;
    }
    return 1;
}

/* Term t's cursor enters block j (< nb) at its first posting >= target,
   which the caller knows to be <= the block's last docid for all but a
   one-block list's block. A block that starts at or past the range's end
   is not decoded. */
void tdm_zr_enter(tdm_zrange *s, uint t, __global uint *c, uint j, uint target)
{
    uint nb = TDM_ZC(s, c, 7u), ext = TDM_ZC(s, c, 6u);
    uint bs = tdm_zr_term(s, t, 2), df = tdm_zr_term(s, t, 1);
    uint base = nb > 1u ? s->block_last[ext + j] : 0u, last = 0u;
    TDM_ZC(s, c, 0u) = j;
    TDM_ZC(s, c, 2u) = 0u;
    TDM_ZC(s, c, 3u) = 0u;
    if (nb > 1u) {
        last = s->block_last[ext + j + 1u];
        TDM_ZC(s, c, 5u) = last;
        if (j > 0u && base + 1u >= s->rend) { /* every docid of it is past the range */
            TDM_ZC(s, c, 4u) = TDM_SEARCH_NODOC;
            return;
        }
    }
    __global uint *zd = tdm_zr_buf(s->docs, s, t);
    uint want = min(bs, df - j * bs);
    uint n = tdm_zr_load(s, t, j, 1u, zd);
    if (!tdm_zr_sound(zd, s->ws, n, want, j, base, last, nb)) {
        s->st |= TDM_CODEC_ST_CORRUPT;
        tdm_zr_end(s, c, nb);
        return;
    }
    TDM_ZC(s, c, 2u) = n;
    TDM_ZC(s, c, 5u) = zd[(n - 1u) * s->ws];
    uint i = zd[0] >= target ? 0u : tdm_zr_gallop(zd, s->ws, 0u, n, target);
    if (i == n) /* only a one-block list's block: past the list */
        tdm_zr_end(s, c, nb);
    else
        tdm_zr_set(s, c, zd, i);
}

/* The cursor of term t at the range's first posting. */
void tdm_zr_init(tdm_zrange *s, uint t, uint rbeg)
{
    __global uint *c = tdm_zr_cur(s, t);
    uint list = tdm_zr_term(s, t, 0), df = tdm_zr_term(s, t, 1), bs = tdm_zr_term(s, t, 2);
    TDM_ZC(s, c, 2u) = 0u;
    TDM_ZC(s, c, 3u) = 0u;
    TDM_ZC(s, c, 6u) = 0u;
    TDM_ZC(s, c, 7u) = 0u;
    if (list >= s->nlists || bs == 0u || df == 0u) {
        if (list >= s->nlists || bs == 0u)
            s->st |= TDM_CODEC_ST_BADJOB;
        tdm_zr_end(s, c, 0u);
        return;
    }
    uint nb = df / bs + (df % bs != 0u), ext = s->lists[list].z;
    TDM_ZC(s, c, 6u) = ext;
    TDM_ZC(s, c, 7u) = nb;
    if (rbeg >= s->rend) {
        tdm_zr_end(s, c, nb);
        return;
    }
    if (nb == 1u) {
        tdm_zr_enter(s, t, c, 0u, rbeg);
        return;
    }
    /* the first block whose last docid is >= rbeg */
    __global const uint *last = s->block_last + ext + 1u;
    uint j = last[0] >= rbeg ? 0u : tdm_sr_gallop(last, 0u, nb, rbeg);
    if (j == nb)
        tdm_zr_end(s, c, nb);
    else
        tdm_zr_enter(s, t, c, j, rbeg);
}

/* Moves term t's cursor to its first posting >= target: in its block when
   target is within it, else in the first block whose last docid is >= target
   (galloping over the block table). */
void tdm_zr_seek(tdm_zrange *s, uint t, uint target)
{
    __global uint *c = tdm_zr_cur(s, t);
    if (TDM_ZC(s, c, 4u) >= target)
        return;
    if (target >= s->rend) {
        TDM_ZC(s, c, 4u) = TDM_SEARCH_NODOC;
        return;
    }
    if (target <= TDM_ZC(s, c, 5u)) {
        __global const uint *zd = tdm_zr_buf(s->docs, s, t);
        tdm_zr_set(s, c, zd,
                   tdm_zr_gallop(zd, s->ws, TDM_ZC(s, c, 1u), TDM_ZC(s, c, 2u), target));
        return;
    }
    uint nb = TDM_ZC(s, c, 7u);
    if (nb == 1u) {
        tdm_zr_end(s, c, nb);
        return;
    }
    uint j = tdm_sr_gallop(s->block_last + TDM_ZC(s, c, 6u) + 1u, TDM_ZC(s, c, 0u), nb, target);
    if (j == nb)
        tdm_zr_end(s, c, nb);
    else
        tdm_zr_enter(s, t, c, j, target);
}

void tdm_zr_next(tdm_zrange *s, uint t)
{
    __global uint *c = tdm_zr_cur(s, t);
    uint i = TDM_ZC(s, c, 1u) + 1u;
    if (i < TDM_ZC(s, c, 2u)) {
        tdm_zr_set(s, c, tdm_zr_buf(s->docs, s, t), i);
        return;
    }
    uint j = TDM_ZC(s, c, 0u) + 1u, nb = TDM_ZC(s, c, 7u);
    if (j >= nb)
        tdm_zr_end(s, c, nb);
    else
        tdm_zr_enter(s, t, c, j, 0u);
}

/* The score of the posting under term t's cursor: its block's frequencies
   decoded first if they are not in the cursor's buffer yet. */
float tdm_zr_at(tdm_zrange *s, uint t)
{
    __global uint *c = tdm_zr_cur(s, t);
    __global uint *zf = tdm_zr_buf(s->freqs, s, t);
    uint b = TDM_ZC(s, c, 0u);
    if (TDM_ZC(s, c, 3u) != b + 1u) {
        if (tdm_zr_load(s, t, b, 0u, zf) != TDM_ZC(s, c, 2u))
            s->st |= TDM_CODEC_ST_CORRUPT;
        TDM_ZC(s, c, 3u) = b + 1u;
    }
    return tdm_sr_formula(s->kind, s->c0, s->c1, as_float(tdm_zr_term(s, t, 4)),
                          zf[TDM_ZC(s, c, 1u) * s->ws], s->doclens, TDM_ZC(s, c, 4u));
}

/* Block-Max: as tdm_sr_block, from the block table (a one-block list's
   last docid from its decoded block). */
float tdm_zr_block(const tdm_zrange *s, uint t, uint d, uint *last)
{
    __global const uint *c = tdm_zr_cur(s, t);
    uint nb = TDM_ZC(s, c, 7u), b = TDM_ZC(s, c, 0u);
    if (nb == 1u && b == 0u) { /* its last docid from its decoded block */
        uint l = TDM_ZC(s, c, 5u);
        *last = l >= d ? l : TDM_SEARCH_NODOC;
        return l >= d ? s->bmax[tdm_zr_term(s, t, 3)] : 0.0f;
    }
    __global const uint *bl = s->block_last + TDM_ZC(s, c, 6u) + 1u;
    for (; nb > 1u && b < nb; b++) {
        uint l = bl[b];
        if (l >= d) {
            *last = l;
            return s->bmax[tdm_zr_term(s, t, 3) + b];
        }
    }
    *last = TDM_SEARCH_NODOC;
    return 0.0f;
}

/* The resident index's sections (TDM_ZS_IDX) into s, its status cleared. */
void tdm_zr_index(tdm_zrange *s, TDM_ZS_IDX)
{
    s->arena = arena;
    s->lists = lists;
    s->codecs = codecs;
    s->block_last = block_last;
    s->block_docs = block_docs;
    s->block_freqs = block_freqs;
    s->nlists = nlists;
    s->arena_words = arena_words;
    s->spans = spans;
    s->st = 0u;
}

/* The algorithms, on these cursors (tdm_zr_or, _and, _wand, _maxscore). */
#define TDM_SA_S tdm_zrange
#define TDM_SA(name) tdm_zr_##name
#include "cl/search_algo.cl"

/* One work-item per docid range, as tdm_search_range (the same heaps, counts
   in hn, shared threshold, AND-then-OR gate); the index's sections instead
   of decoded postings, and the cursors' buffers. status: the search's
   status word (TDM_CODEC_ST_*), which the merge reports; layout: the
   scratch's (TDM_ZR_RANGE or TDM_ZR_INTERLEAVED, above). */
__kernel void tdm_search_zrange(TDM_ZS_IDX, __global uint *zdocs, __global uint *zfreqs,
                                uint bw, __global uint *terms, __global const float *bmax,
                                __global const uint *doclens, __global uint *cur,
                                __global uint *ord, __global float *hs, __global uint *hd,
                                __global uint *hn, uint nt, uint nranges, uint rlen, uint ndocs,
                                uint cap, uint alg, uint kind, float c0, float c1,
                                __global const uint *gate, uint gate_min,
                                __global uint *status, uint layout)
{
    uint r = get_global_id(0);
    if (r >= nranges || (gate_min && gate[1] >= gate_min))
        return;
    tdm_zrange s;
    tdm_zr_index(&s, arena, lists, codecs, block_last, block_docs, block_freqs, nlists,
                 arena_words, spans);
    s.bw = bw;
    s.bmax = bmax;
    s.doclens = doclens;
    uint rbeg = tdm_zr_begin(&s, terms, hs, hd, nt, nranges, r, rlen, ndocs, cap, alg, kind, c0,
                             c1);
    tdm_zr_scratch(&s, cur, zdocs, zfreqs, ord, layout);
    for (uint t = 0; t < nt; t++)
        tdm_zr_init(&s, t, rbeg);
    tdm_zr_run(&s, alg);
    hn[r] = s.n;
    if (s.st)
        atomic_or(status, s.st);
}
