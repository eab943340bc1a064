/* The compressed variant's cursors (cl/search_zrange.cl, which says what
   their words and buffers hold) and, on them, the algorithms of
   cl/search_algo.cl: included once for each word stride. The includer
   defines
     TDM_ZR(name)   this copy's name of function `name`
     TDM_ZR_WS(s)   the word stride of s's scratch: s->ws, or a literal 1
                    for the range-major copy a CPU runs (with the stride a
                    run-time 1 a bench run on PoCL took 10-30 % more CPU
                    time: an index multiply for every cursor word and
                    decoded value, the decoders' stores no longer combined)
     TDM_ZR_CPU     1 in the copy a CPU runs (the stride a literal 1): the
                    algorithms' CPU-only steps (search_algo.cl)
   and all three are undefined at the end. */

uint TDM_ZR(term)(const tdm_zrange *s, uint t, uint w) { return s->terms[t * TDM_SEARCH_TW + w]; }

/* Word w of cursor c (of the range of s). */
#define TDM_ZC(s, c, w) ((c)[(w) * TDM_ZR_WS(s)])

__global uint *TDM_ZR(cur)(const tdm_zrange *s, uint t)
{
    return s->cur + t * TDM_ZR_CW * TDM_ZR_WS(s);
}

__global uint *TDM_ZR(buf)(__global uint *b, const tdm_zrange *s, uint t)
{
    return b + t * s->bw * TDM_ZR_WS(s);
}

uint TDM_ZR(order)(const tdm_zrange *s, uint i) { return TDM_ZR(term)(s, i, TDM_TW_ORDER); }

/* Word i of the range's ord scratch. */
uint TDM_ZR(oget)(const tdm_zrange *s, uint i) { return s->ord[i * TDM_ZR_WS(s)]; }
void TDM_ZR(oset)(tdm_zrange *s, uint i, uint v) { s->ord[i * TDM_ZR_WS(s)] = v; }

uint TDM_ZR(doc)(const tdm_zrange *s, uint t) { return TDM_ZC(s, TDM_ZR(cur)(s, t), 4u); }

/* As tdm_sr_lower and tdm_sr_gallop (cl/search_range.cl), over a cursor's
   decoded docids (value i at a[i * ws]). */
uint TDM_ZR(lower)(__global const uint *a, uint ws, uint lo, uint e, uint target)
{
    /* branch-free halving (a select, not a jump a probe: the probes'
       outcomes are random, and a mispredicted jump each cost PoCL's seeks
       more than the probes) */
    uint n = e - lo;
    while (n > 1u) {
        uint h = n >> 1;
        lo = a[(lo + h) * ws] < target ? lo + h : lo;
        n -= h;
    }
    return n && a[lo * ws] < target ? lo + 1u : lo;
}

uint TDM_ZR(gallop)(__global const uint *a, uint ws, uint p, uint e, uint target)
{
    uint step = 1u;
    while (step < e - p && a[(p + step) * ws] < target) {
        p += step;
        step <<= 1;
    }
    uint hi = step < e - p ? p + step : e;
    return TDM_ZR(lower)(a, ws, p + 1u, hi, target);
}

/* Block j of term t's list decoded into out: docids (want_docs) or
   frequencies; the count, 0 on failure (flagged in s->st). The decoder gets
   a status word of its own: s's address given to the out-of-line decoder
   would move the whole range state from registers to memory. */
uint TDM_ZR(load)(tdm_zrange *s, uint t, uint j, uint want_docs, __global uint *out)
{
    uint st = 0u;
    uint n = tdm_zs_block(s->arena, s->lists, s->codecs, s->block_last, s->block_docs,
                          s->block_freqs, s->nlists, s->arena_words, s->spans,
                          TDM_ZR(term)(s, t, TDM_TW_LIST), j, want_docs, out, TDM_ZR_WS(s), &st);
    s->st |= st;
    return n;
}

/* The cursor on position i of its decoded block. */
void TDM_ZR(set)(const tdm_zrange *s, __global uint *c, __global const uint *zd, uint i)
{
    TDM_ZC(s, c, 1u) = i;
    uint d = zd[i * TDM_ZR_WS(s)];
    TDM_ZC(s, c, 4u) = d < s->rend ? d : TDM_SEARCH_NODOC;
}

/* The cursor past its list (at = nb) or past the range (at = its block). */
void TDM_ZR(end)(const tdm_zrange *s, __global uint *c, uint at)
{
    TDM_ZC(s, c, 0u) = at;
    TDM_ZC(s, c, 4u) = TDM_SEARCH_NODOC;
}

/* Whether the n docids of block j (base, table's last docid) at zd[i * ws]
   agree with the block table: ascending, above the base, the last one the
   table's. */
int TDM_ZR(sound)(__global const uint *zd, uint ws, uint n, uint want, uint j, uint base,
                 uint last, uint nb)
{
    if (n != want || n == 0u)
        return 0;
    if ((j > 0u && zd[0] <= base) || (nb > 1u && zd[(n - 1u) * ws] != last))
        return 0;
    /* no early exit: a loop without one vectorizes (PoCL), and a sound
       block, the case that matters, reads every docid anyway */
    uint bad = 0u;
    for (uint i = 1; i < n; i++)
        bad |= zd[i * ws] <= zd[(i - 1u) * ws];
    return !bad;
}

/* Term t's cursor enters block j (< nb) at its first posting >= target,
   which the caller knows to be <= the block's last docid for all but a
   one-block list's block. A block that starts at or past the range's end
   is not decoded. */
void TDM_ZR(enter)(tdm_zrange *s, uint t, __global uint *c, uint j, uint target)
{
    uint nb = TDM_ZC(s, c, 7u), ext = TDM_ZC(s, c, 6u);
    uint bs = TDM_ZR(term)(s, t, TDM_TW_BSIZE), df = TDM_ZR(term)(s, t, TDM_TW_DF);
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
    __global uint *zd = TDM_ZR(buf)(s->docs, s, t);
    uint want = min(bs, df - j * bs);
    uint n = TDM_ZR(load)(s, t, j, 1u, zd);
    if (!TDM_ZR(sound)(zd, TDM_ZR_WS(s), n, want, j, base, last, nb)) {
        s->st |= TDM_CODEC_ST_CORRUPT;
        TDM_ZR(end)(s, c, nb);
        return;
    }
    TDM_ZC(s, c, 2u) = n;
    TDM_ZC(s, c, 5u) = zd[(n - 1u) * TDM_ZR_WS(s)];
    uint i = zd[0] >= target ? 0u : TDM_ZR(gallop)(zd, TDM_ZR_WS(s), 0u, n, target);
    if (i == n) /* only a one-block list's block: past the list */
        TDM_ZR(end)(s, c, nb);
    else
        TDM_ZR(set)(s, c, zd, i);
}

/* The cursor of term t at the range's first posting. */
void TDM_ZR(init)(tdm_zrange *s, uint t, uint rbeg)
{
    __global uint *c = TDM_ZR(cur)(s, t);
    uint list = TDM_ZR(term)(s, t, TDM_TW_LIST), df = TDM_ZR(term)(s, t, TDM_TW_DF),
         bs = TDM_ZR(term)(s, t, TDM_TW_BSIZE);
    TDM_ZC(s, c, 2u) = 0u;
    TDM_ZC(s, c, 3u) = 0u;
    TDM_ZC(s, c, 6u) = 0u;
    TDM_ZC(s, c, 7u) = 0u;
    if (list >= s->nlists || bs == 0u || df == 0u) {
        if (list >= s->nlists || bs == 0u)
            s->st |= TDM_CODEC_ST_BADJOB;
        TDM_ZR(end)(s, c, 0u);
        return;
    }
    uint nb = df / bs + (df % bs != 0u), ext = s->lists[list].z;
    TDM_ZC(s, c, 6u) = ext;
    TDM_ZC(s, c, 7u) = nb;
    if (rbeg >= s->rend) {
        TDM_ZR(end)(s, c, nb);
        return;
    }
    if (nb == 1u) {
        TDM_ZR(enter)(s, t, c, 0u, rbeg);
        return;
    }
    /* the first block whose last docid is >= rbeg */
    __global const uint *last = s->block_last + ext + 1u;
    uint j = last[0] >= rbeg ? 0u : tdm_sr_gallop(last, 0u, nb, rbeg);
    if (j == nb)
        TDM_ZR(end)(s, c, nb);
    else
        TDM_ZR(enter)(s, t, c, j, rbeg);
}

/* Moves term t's cursor to its first posting >= target: in its block when
   target is within it, else in the first block whose last docid is >= target
   (galloping over the block table). */
void TDM_ZR(seek)(tdm_zrange *s, uint t, uint target)
{
    __global uint *c = TDM_ZR(cur)(s, t);
    if (TDM_ZC(s, c, 4u) >= target)
        return;
    if (target >= s->rend) {
        TDM_ZC(s, c, 4u) = TDM_SEARCH_NODOC;
        return;
    }
    if (target <= TDM_ZC(s, c, 5u)) {
        __global const uint *zd = TDM_ZR(buf)(s->docs, s, t);
        TDM_ZR(set)(s, c, zd,
                   TDM_ZR(gallop)(zd, TDM_ZR_WS(s), TDM_ZC(s, c, 1u), TDM_ZC(s, c, 2u), target));
        return;
    }
    uint nb = TDM_ZC(s, c, 7u);
    if (nb == 1u) {
        TDM_ZR(end)(s, c, nb);
        return;
    }
    uint j = tdm_sr_gallop(s->block_last + TDM_ZC(s, c, 6u) + 1u, TDM_ZC(s, c, 0u), nb, target);
    if (j == nb)
        TDM_ZR(end)(s, c, nb);
    else
        TDM_ZR(enter)(s, t, c, j, target);
}

void TDM_ZR(next)(tdm_zrange *s, uint t)
{
    __global uint *c = TDM_ZR(cur)(s, t);
    uint i = TDM_ZC(s, c, 1u) + 1u;
    if (i < TDM_ZC(s, c, 2u)) {
        TDM_ZR(set)(s, c, TDM_ZR(buf)(s->docs, s, t), i);
        return;
    }
    uint j = TDM_ZC(s, c, 0u) + 1u, nb = TDM_ZC(s, c, 7u);
    if (j >= nb)
        TDM_ZR(end)(s, c, nb);
    else
        TDM_ZR(enter)(s, t, c, j, 0u);
}

/* The score of the posting under term t's cursor: its block's frequencies
   decoded first if they are not in the cursor's buffer yet. */
float TDM_ZR(at)(tdm_zrange *s, uint t)
{
    __global uint *c = TDM_ZR(cur)(s, t);
    __global uint *zf = TDM_ZR(buf)(s->freqs, s, t);
    uint b = TDM_ZC(s, c, 0u);
    if (TDM_ZC(s, c, 3u) != b + 1u) {
        if (TDM_ZR(load)(s, t, b, 0u, zf) != TDM_ZC(s, c, 2u))
            s->st |= TDM_CODEC_ST_CORRUPT;
        TDM_ZC(s, c, 3u) = b + 1u;
    }
    return tdm_sr_formula(s->kind, s->c0, s->c1, as_float(TDM_ZR(term)(s, t, TDM_TW_QW)),
                          zf[TDM_ZC(s, c, 1u) * TDM_ZR_WS(s)], s->doclens, TDM_ZC(s, c, 4u));
}

/* Block-Max: as tdm_sr_block, from the block table (a one-block list's
   last docid from its decoded block). */
float TDM_ZR(block)(const tdm_zrange *s, uint t, uint d, uint *last)
{
    __global const uint *c = TDM_ZR(cur)(s, t);
    uint nb = TDM_ZC(s, c, 7u), b = TDM_ZC(s, c, 0u);
    if (nb == 1u && b == 0u) { /* its last docid from its decoded block */
        uint l = TDM_ZC(s, c, 5u);
        *last = l >= d ? l : TDM_SEARCH_NODOC;
        return l >= d ? s->bmax[TDM_ZR(term)(s, t, TDM_TW_BMAX)] : 0.0f;
    }
    __global const uint *bl = s->block_last + TDM_ZC(s, c, 6u) + 1u;
    for (; nb > 1u && b < nb; b++) {
        uint l = bl[b];
        if (l >= d) {
            *last = l;
            return s->bmax[TDM_ZR(term)(s, t, TDM_TW_BMAX) + b];
        }
    }
    *last = TDM_SEARCH_NODOC;
    return 0.0f;
}

/* The algorithms, on these cursors (TDM_ZR(or), _and, _wand, _maxscore).
   A pivot's document length is fetched ahead on a CPU (TDM_ZR_FETCH): the
   length read when it is scored missed the cache, the scattered documents'
   lengths being the largest array a query reads at random. */
#define TDM_SA_S tdm_zrange
#define TDM_SA_WARM(s, d) TDM_ZR_FETCH((s)->doclens + (d))
#define TDM_SA_CPU TDM_ZR_CPU
#define TDM_SA(name) TDM_ZR(name)
#include "cl/search_algo.cl"

#undef TDM_ZC
#undef TDM_ZR
#undef TDM_ZR_WS
#undef TDM_ZR_CPU
