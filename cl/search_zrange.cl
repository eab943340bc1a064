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

   Cursor of term t in range r (i = r * nt + t): cur[i * TDM_ZR_CW + w]
     0 block: the block the cursor is in (nb once past the list's end)
     1 position in that block
     2 postings of the block decoded in docs[i * bw ..] (0: none)
     3 1 + the block whose frequencies are in freqs[i * bw ..] (0: none)
     4 docid under the cursor (NODOC past the list or the range)
     5 last docid of the block
     6 the list's first block-table entry (descriptor word ext)
     7 the list's blocks nb
   docs and freqs: bw words a cursor, bw the largest block size among the
   query's lists. Term table: search_range.cl's, but word 0 is the term's
   list id (the index's term id) instead of a position in decoded postings.

   A block whose decoding fails or whose docids disagree with the block table
   (not ascending, not above the block's base, count or last docid not the
   table's) sets TDM_CODEC_ST_CORRUPT in the status word (the merge returns
   it; the host fails the search) and ends the cursor, so a damaged index
   gives an error, never an answer. */

#define TDM_ZR_CW 8u

typedef struct tdm_zrange {
    __global const uint *arena;
    __global const uint4 *lists;
    __global const uchar *codecs;
    __global const uint *block_last;
    __global const uint *block_docs;
    __global const uint *block_freqs;
    uint nlists, arena_words, spans;
    __global uint *docs;  /* cursors' decoded docids, bw a cursor */
    __global uint *freqs; /* cursors' decoded frequencies */
    __global const uint *terms;
    __global const float *bmax;
    __global const uint *doclens;
    __global uint *cur;
    __global uint *ord;
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

/* A range's cursors, buffers and ord words are contiguous ([r * nt + t],
   range-major): each range runs on one CPU core, and the term-major layout
   of the ITEM kernel (made for a GPU's coalescing) put the words that
   neighbouring ranges write on every step into shared cache lines. */
__global uint *tdm_zr_cur(const tdm_zrange *s, uint t)
{
    return s->cur + (s->r * s->nt + t) * TDM_ZR_CW;
}

__global uint *tdm_zr_buf(__global uint *b, const tdm_zrange *s, uint t)
{
    return b + (s->r * s->nt + t) * s->bw;
}

uint tdm_zr_oi(const tdm_zrange *s, uint i) { return s->r * s->nt + i; }

uint tdm_zr_doc(const tdm_zrange *s, uint t) { return tdm_zr_cur(s, t)[4]; }

/* Block j of term t's list decoded into out: docids (want_docs) or
   frequencies; the count, 0 on failure (flagged in s->st). */
uint tdm_zr_load(tdm_zrange *s, uint t, uint j, uint want_docs, __global uint *out)
{
    return tdm_zs_block(s->arena, s->lists, s->codecs, s->block_last, s->block_docs,
                        s->block_freqs, s->nlists, s->arena_words, s->spans,
                        tdm_zr_term(s, t, 0), j, want_docs, out, &s->st);
}

/* The cursor on position i of its decoded block. */
void tdm_zr_set(const tdm_zrange *s, __global uint *c, __global const uint *zd, uint i)
{
    c[1] = i;
    uint d = zd[i];
    c[4] = d < s->rend ? d : TDM_SEARCH_NODOC;
}

/* The cursor past its list (at = nb) or past the range (at = its block). */
void tdm_zr_end(__global uint *c, uint at)
{
    c[0] = at;
    c[4] = TDM_SEARCH_NODOC;
}

/* Whether the n docids of block j (base, table's last docid) agree with
   the block table: ascending, above the base, the last one the table's. */
int tdm_zr_sound(__global const uint *zd, uint n, uint want, uint j, uint base, uint last,
                 uint nb)
{
    if (n != want || n == 0u || (j > 0u && zd[0] <= base) || (nb > 1u && zd[n - 1u] != last))
        return 0;
    for (uint i = 1; i < n; i++)
        if (zd[i] <= zd[i - 1u])
            return 0;
    return 1;
}

/* Term t's cursor enters block j (< nb) at its first posting >= target,
   which the caller knows to be <= the block's last docid for all but a
   one-block list's block. A block that starts at or past the range's end
   is not decoded. */
void tdm_zr_enter(tdm_zrange *s, uint t, __global uint *c, uint j, uint target)
{
    uint nb = c[7], ext = c[6], bs = tdm_zr_term(s, t, 2), df = tdm_zr_term(s, t, 1);
    uint base = nb > 1u ? s->block_last[ext + j] : 0u;
    c[0] = j;
    c[2] = 0u;
    c[3] = 0u;
    if (nb > 1u) {
        c[5] = s->block_last[ext + j + 1u];
        if (j > 0u && base + 1u >= s->rend) { /* every docid of it is past the range */
            c[4] = TDM_SEARCH_NODOC;
            return;
        }
    }
    __global uint *zd = tdm_zr_buf(s->docs, s, t);
    uint want = min(bs, df - j * bs);
    uint n = tdm_zr_load(s, t, j, 1u, zd);
    if (!tdm_zr_sound(zd, n, want, j, base, c[5], nb)) {
        s->st |= TDM_CODEC_ST_CORRUPT;
        tdm_zr_end(c, nb);
        return;
    }
    c[2] = n;
    c[5] = zd[n - 1u];
    uint i = zd[0] >= target ? 0u : tdm_sr_gallop(zd, 0u, n, target);
    if (i == n) /* only a one-block list's block: past the list */
        tdm_zr_end(c, nb);
    else
        tdm_zr_set(s, c, zd, i);
}

/* The cursor of term t at the range's first posting. */
void tdm_zr_init(tdm_zrange *s, uint t, uint rbeg)
{
    __global uint *c = tdm_zr_cur(s, t);
    uint list = tdm_zr_term(s, t, 0), df = tdm_zr_term(s, t, 1), bs = tdm_zr_term(s, t, 2);
    c[2] = 0u;
    c[3] = 0u;
    c[6] = 0u;
    c[7] = 0u;
    if (list >= s->nlists || bs == 0u || df == 0u) {
        if (list >= s->nlists || bs == 0u)
            s->st |= TDM_CODEC_ST_BADJOB;
        tdm_zr_end(c, 0u);
        return;
    }
    uint nb = df / bs + (df % bs != 0u);
    c[6] = s->lists[list].z;
    c[7] = nb;
    if (rbeg >= s->rend) {
        tdm_zr_end(c, nb);
        return;
    }
    if (nb == 1u) {
        tdm_zr_enter(s, t, c, 0u, rbeg);
        return;
    }
    /* the first block whose last docid is >= rbeg */
    __global const uint *last = s->block_last + c[6] + 1u;
    uint j = last[0] >= rbeg ? 0u : tdm_sr_gallop(last, 0u, nb, rbeg);
    if (j == nb)
        tdm_zr_end(c, nb);
    else
        tdm_zr_enter(s, t, c, j, rbeg);
}

/* Moves term t's cursor to its first posting >= target: in its block when
   target is within it, else in the first block whose last docid is >= target
   (galloping over the block table). */
void tdm_zr_seek(tdm_zrange *s, uint t, uint target)
{
    __global uint *c = tdm_zr_cur(s, t);
    if (c[4] >= target)
        return;
    if (target >= s->rend) {
        c[4] = TDM_SEARCH_NODOC;
        return;
    }
    if (target <= c[5]) {
        __global const uint *zd = tdm_zr_buf(s->docs, s, t);
        tdm_zr_set(s, c, zd, tdm_sr_gallop(zd, c[1], c[2], target));
        return;
    }
    uint nb = c[7];
    if (nb == 1u) {
        tdm_zr_end(c, nb);
        return;
    }
    uint j = tdm_sr_gallop(s->block_last + c[6] + 1u, c[0], nb, target);
    if (j == nb)
        tdm_zr_end(c, nb);
    else
        tdm_zr_enter(s, t, c, j, target);
}

void tdm_zr_next(tdm_zrange *s, uint t)
{
    __global uint *c = tdm_zr_cur(s, t);
    uint i = c[1] + 1u;
    if (i < c[2]) {
        tdm_zr_set(s, c, tdm_zr_buf(s->docs, s, t), i);
        return;
    }
    uint j = c[0] + 1u;
    if (j >= c[7])
        tdm_zr_end(c, c[7]);
    else
        tdm_zr_enter(s, t, c, j, 0u);
}

/* The score of the posting under term t's cursor: its block's frequencies
   decoded first if they are not in the cursor's buffer yet. */
float tdm_zr_at(tdm_zrange *s, uint t)
{
    __global uint *c = tdm_zr_cur(s, t);
    __global uint *zf = tdm_zr_buf(s->freqs, s, t);
    if (c[3] != c[0] + 1u) {
        if (tdm_zr_load(s, t, c[0], 0u, zf) != c[2])
            s->st |= TDM_CODEC_ST_CORRUPT;
        c[3] = c[0] + 1u;
    }
    return tdm_sr_formula(s->kind, s->c0, s->c1, as_float(tdm_zr_term(s, t, 4)), zf[c[1]],
                          s->doclens, c[4]);
}

/* Block-Max: as tdm_sr_block, from the block table (a one-block list's
   last docid from its decoded block). */
float tdm_zr_block(const tdm_zrange *s, uint t, uint d, uint *last)
{
    __global const uint *c = tdm_zr_cur(s, t);
    uint nb = c[7];
    for (uint b = c[0]; b < nb; b++) {
        uint l = nb == 1u ? c[5] : s->block_last[c[6] + b + 1u];
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
   status word (TDM_CODEC_ST_*), which the merge reports. */
__kernel void tdm_search_zrange(TDM_ZS_IDX, __global uint *zdocs, __global uint *zfreqs,
                                uint bw, __global uint *terms, __global const float *bmax,
                                __global const uint *doclens, __global uint *cur,
                                __global uint *ord, __global float *hs, __global uint *hd,
                                __global uint *hn, uint nt, uint nranges, uint rlen, uint ndocs,
                                uint cap, uint alg, uint kind, float c0, float c1,
                                __global const uint *gate, uint gate_min,
                                __global uint *status)
{
    uint r = get_global_id(0);
    if (r >= nranges || (gate_min && gate[1] >= gate_min))
        return;
    tdm_zrange s;
    tdm_zr_index(&s, arena, lists, codecs, block_last, block_docs, block_freqs, nlists,
                 arena_words, spans);
    s.docs = zdocs;
    s.freqs = zfreqs;
    s.bw = bw;
    s.bmax = bmax;
    s.doclens = doclens;
    s.cur = cur;
    s.ord = ord;
    uint rbeg = tdm_zr_begin(&s, terms, hs, hd, nt, nranges, r, rlen, ndocs, cap, alg, kind, c0,
                             c1);
    for (uint t = 0; t < nt; t++)
        tdm_zr_init(&s, t, rbeg);
    tdm_zr_run(&s, alg);
    hn[r] = s.n;
    if (s.st)
        atomic_or(status, s.st);
}
