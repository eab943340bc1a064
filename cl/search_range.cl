/* Top-k search over docid ranges (Huang et al. 2017): the docid space is
   split into ranges of rlen documents; each work-item owns one range and
   runs the query document-at-a-time over the decoded postings of that range,
   keeping the range's own top cap = min(k, rlen) in a heap in global memory,
   and its own threshold for pruning (WAND, Block-Max WAND, MaxScore).
   tdm_search_merge (search_merge.cl) then takes the query's top k from every
   range's heap. The host side and the layouts are in host/drive/search_dev.c.

   Scores are score.h's device-exact float formula: every operation binary32,
   nothing contracted (the pragma below), a document's score summed in
   ascending term index (the query's term order), the division correctly
   rounded through double (a double quotient rounded to float is the
   correctly rounded float quotient, score.h). The host refuses BM25 on a
   device without cl_khr_fp64. So every device, and the host oracle, give the
   same bits.

   Pruning stays exact. A sum of bounds computed in another order than the
   term order (WAND's docid order, MaxScore's bound order) can be below the
   term-order sum by (n - 1) ulps relative, n <= 1024 terms: under 2^-14.
   Every such sum is multiplied by TDM_SEARCH_SLACK (1 + 2^-11) before it is
   compared with the threshold, which more than covers it. A document is
   skipped only when that bound is <= the range's threshold (the heap's worst
   score once full): documents come in ascending docid within a range, so a
   later document with the same score as the worst ranks below it.

   A threshold shared by the ranges (WAND, BMW, MaxScore; search_seed.cl,
   docs/SEARCH.md): word 7 of term 0 holds the float bits of a score G that
   at least k distinct documents of the query reach, so the query's k-th
   score is >= G. It starts at the seed pass's G (0 without one) and a range
   whose heap holds k documents raises it to its heap's worst (atomic max:
   scores are >= 0, so their bits order as uints); a range starts from G
   as its work-group read it (tdm_sr_group_g). A document of another
   range with a score equal to G may still rank above those k (a smaller
   docid), so G is compared strictly: a document is skipped when its bound
   is < G, i.e. <= the float just below G, which is what the range's
   threshold becomes when it is larger than its own heap's worst.

   Term table (uint words, TDM_SEARCH_TW per term, host: search_dev.c; the
   words' names, TDM_TW_*, in host/plan/search_layout.h):
     0 first position of the term's postings in docs/freqs
     1 df
     2 block size of the list (the unit of its block bounds)
     3 first entry of its block bounds in bmax
     4 qw (float bits): score.h's per-term factor
     5 upper bound of the term's float scores (float bits)
     6 MaxScore order: the index of the term with the 6th-word-rank-th
       smallest bound (word 6 of term i = the i-th term by ascending bound)
   Cursors (cur) and WAND's docid order (ord) of a query of at most
   TDM_SR_PRIV terms live in the work-item's private arrays; a longer
   query's in global scratch, nterms x nranges words each, indexed
   [t * nranges + r]. */

#pragma OPENCL FP_CONTRACT OFF
#if TDM_NV_PTX
#define TDM_SEARCH_DIV(a, b) tdm_fdiv((a), (b))
#elif defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define TDM_SEARCH_DIV(a, b) ((float)((double)(a) / (double)(b)))
#elif defined(__OPENCL_C_VERSION__)
#define TDM_SEARCH_DIV(a, b) tdm_fdiv_rn((a), (b))
#else /* the host's build of this file (tests/prune_sim.c): C's division is exact */
#define TDM_SEARCH_DIV(a, b) ((a) / (b))
#endif

/* The most terms whose cursors and order a work-item keeps in private
   arrays (a cursor step is then no global load or store; on NVIDIA the
   arrays, indexed at run time, sit in the thread's L1-cached local memory
   instead of a round trip to L2). 0: always the global scratch. */
#ifndef TDM_SR_PRIV
#define TDM_SR_PRIV 16u
#endif
#define TDM_SR_PRIV_N (TDM_SR_PRIV > 0u ? TDM_SR_PRIV : 1u)

#define TDM_SEARCH_NODOC 0xffffffffu
#define TDM_SEARCH_SLACK 1.00048828125f

/* Work counters of the host build of this file (tests/prune_sim.c), for
   device-independent measurements; nothing in a device build. */
#ifndef TDM_SR_COUNT
#define TDM_SR_COUNT(what, n)
#endif

typedef struct tdm_srange {
    __global const uint *docs;
    __global const uint *freqs;
    __global const uint *terms;
    __global const float *bmax;
    __global const uint *doclens;
    __global uint *cur;
    __global uint *ord;
    __global float *hs;
    __global uint *hd;
    __global uint *shared; /* the shared threshold G (term 0, word 7) */
    uint nt, nr, r, rend, cap, n, kind;
    uint pub;              /* a full heap holds k documents: publish its worst */
    float c0, c1;
    float gth;             /* the float just below G (-1: no G) */
    float hw;              /* the heap's worst score once it is full (search_algo.cl) */
    uint priv;             /* nt <= TDM_SR_PRIV: each term's cursor, its list's end,
                              MaxScore's order and the ord scratch in pc, pe, pm, po */
    uint pc[TDM_SR_PRIV_N], pe[TDM_SR_PRIV_N], pm[TDM_SR_PRIV_N], po[TDM_SR_PRIV_N];
} tdm_srange;

uint tdm_sr_term(const tdm_srange *s, uint t, uint w) { return s->terms[t * TDM_SEARCH_TW + w]; }

/* Word i of a range's scratch: private array p where s->priv, else the
   global scratch g, term-major ([i * nranges + r]: a GPU's neighbouring
   work-items touch neighbouring words). */
uint tdm_sr_get(const tdm_srange *s, __global const uint *g, const uint *p, uint i)
{
    return s->priv ? p[i] : g[i * s->nr + s->r];
}

void tdm_sr_put(const tdm_srange *s, __global uint *g, uint *p, uint i, uint v)
{
    if (s->priv)
        p[i] = v;
    else
        g[i * s->nr + s->r] = v;
}

/* Term t's cursor: a position in docs/freqs. */
uint tdm_sr_cur(const tdm_srange *s, uint t) { return tdm_sr_get(s, s->cur, s->pc, t); }
void tdm_sr_setcur(tdm_srange *s, uint t, uint p) { tdm_sr_put(s, s->cur, s->pc, t, p); }

/* Word i of the range's order scratch (WAND's docid order, MaxScore's
   prefix sums). */
uint tdm_sr_oget(const tdm_srange *s, uint i) { return tdm_sr_get(s, s->ord, s->po, i); }
void tdm_sr_oset(tdm_srange *s, uint i, uint v) { tdm_sr_put(s, s->ord, s->po, i, v); }

/* The end of term t's postings in docs/freqs. */
uint tdm_sr_end(const tdm_srange *s, uint t)
{
    return s->priv ? s->pe[t] : tdm_sr_term(s, t, TDM_TW_POS) + tdm_sr_term(s, t, TDM_TW_DF);
}

uint tdm_sr_order(const tdm_srange *s, uint i)
{
    return s->priv ? s->pm[i] : tdm_sr_term(s, i, TDM_TW_ORDER);
}

/* The docid under term t's cursor, NODOC past its list or the range. */
uint tdm_sr_doc(const tdm_srange *s, uint t)
{
    uint p = tdm_sr_cur(s, t);
    if (p >= tdm_sr_end(s, t))
        return TDM_SEARCH_NODOC;
    uint d = s->docs[p];
    return d < s->rend ? d : TDM_SEARCH_NODOC;
}

/* score.h's float formula: weight factor qw, frequency tf, document d
   (its length read only for BM25). */
float tdm_sr_formula(uint kind, float c0, float c1, float qw, uint tf,
                     __global const uint *doclens, uint d)
{
    TDM_SR_COUNT(scored, 1);
    float f = (float)tf;
    if (kind == 1u)
        return tdm_fmul(qw, f);
    float dl = (float)doclens[d];
    float k = tdm_fadd(c0, tdm_fmul(c1, dl));
    float num = tdm_fmul(qw, f);
    float den = tdm_fadd(f, k);
    return TDM_SEARCH_DIV(num, den);
}

/* The score of the posting at position p of term t. */
float tdm_sr_score(const tdm_srange *s, uint t, uint p)
{
    return tdm_sr_formula(s->kind, s->c0, s->c1, as_float(tdm_sr_term(s, t, TDM_TW_QW)),
                          s->freqs[p], s->doclens, s->docs[p]);
}

/* First position in [lo, e) whose docid is >= target (e if none). */
uint tdm_sr_lower(__global const uint *docs, uint lo, uint e, uint target)
{
    uint hi = e;
    while (lo < hi) {
        uint mid = lo + (hi - lo) / 2u;
        if (docs[mid] < target)
            lo = mid + 1u;
        else
            hi = mid;
    }
    return lo;
}

/* Term t's segment [*lo, *hi) of the decoded postings (empty: t >= nt). */
void tdm_sr_span(__global const uint *terms, uint t, uint nt, uint *lo, uint *hi)
{
    *lo = t < nt ? terms[t * TDM_SEARCH_TW + TDM_TW_POS] : 0u;
    *hi = t < nt ? *lo + terms[t * TDM_SEARCH_TW + TDM_TW_DF] : 0u;
}

/* One step of a binary search for target in [l, h): v = docs[m], m its middle. */
#define TDM_SR_STEP(l, h, m, v, target)                                          \
    do {                                                                         \
        if ((l) < (h)) {                                                         \
            if ((v) < (target))                                                  \
                (l) = (m) + 1u;                                                  \
            else                                                                 \
                (h) = (m);                                                       \
        }                                                                        \
    } while (0)

/* Each term's cursor of the range at its first posting >= rbeg, as
   tdm_sr_lower finds it: four terms' searches at a time in lockstep, their
   loads independent so that they overlap (one search after another was a
   chain of ~17 dependent loads a term before a range reached its first
   document). Chooses where the cursors live (s->priv) and, where that
   is in private arrays, copies the terms' ends and order there. */
void tdm_sr_starts(tdm_srange *s, uint rbeg)
{
    __global const uint *docs = s->docs, *terms = s->terms;
    uint nt = s->nt;
    s->priv = TDM_SR_PRIV > 0u && nt <= TDM_SR_PRIV;
    for (uint t = 0; s->priv && t < nt; t++) {
        s->pe[t] = tdm_sr_term(s, t, TDM_TW_POS) + tdm_sr_term(s, t, TDM_TW_DF);
        s->pm[t] = tdm_sr_term(s, t, TDM_TW_ORDER);
    }
    for (uint t = 0; t < nt; t += 4u) {
        uint l0, h0, l1, h1, l2, h2, l3, h3;
        tdm_sr_span(terms, t, nt, &l0, &h0);
        tdm_sr_span(terms, t + 1u, nt, &l1, &h1);
        tdm_sr_span(terms, t + 2u, nt, &l2, &h2);
        tdm_sr_span(terms, t + 3u, nt, &l3, &h3);
        while (l0 < h0 || l1 < h1 || l2 < h2 || l3 < h3) {
            uint m0 = l0 + (h0 - l0) / 2u, m1 = l1 + (h1 - l1) / 2u;
            uint m2 = l2 + (h2 - l2) / 2u, m3 = l3 + (h3 - l3) / 2u;
            uint v0 = l0 < h0 ? docs[m0] : 0u, v1 = l1 < h1 ? docs[m1] : 0u;
            uint v2 = l2 < h2 ? docs[m2] : 0u, v3 = l3 < h3 ? docs[m3] : 0u;
            TDM_SR_STEP(l0, h0, m0, v0, rbeg);
            TDM_SR_STEP(l1, h1, m1, v1, rbeg);
            TDM_SR_STEP(l2, h2, m2, v2, rbeg);
            TDM_SR_STEP(l3, h3, m3, v3, rbeg);
        }
        tdm_sr_setcur(s, t, l0);
        if (t + 1u < nt)
            tdm_sr_setcur(s, t + 1u, l1);
        if (t + 2u < nt)
            tdm_sr_setcur(s, t + 2u, l2);
        if (t + 3u < nt)
            tdm_sr_setcur(s, t + 3u, l3);
    }
}

/* First position in (p, e] whose value is >= target (e if none), given
   a[p] < target: galloping from p, then a binary search. */
uint tdm_sr_gallop(__global const uint *a, uint p, uint e, uint target)
{
    uint step = 1u;
    while (step < e - p && a[p + step] < target) {
        p += step;
        step <<= 1;
    }
    uint hi = step < e - p ? p + step : e;
    return tdm_sr_lower(a, p + 1u, hi, target);
}

/* Moves term t's cursor to its first posting >= target (galloping). */
void tdm_sr_seek(tdm_srange *s, uint t, uint target)
{
    uint p = tdm_sr_cur(s, t), e = tdm_sr_end(s, t);
    if (p >= e || s->docs[p] >= target)
        return;
    tdm_sr_setcur(s, t, tdm_sr_gallop(s->docs, p, e, target));
}

void tdm_sr_next(tdm_srange *s, uint t) { tdm_sr_setcur(s, t, tdm_sr_cur(s, t) + 1u); }

/* The score of the posting under term t's cursor. */
float tdm_sr_at(const tdm_srange *s, uint t)
{
    return tdm_sr_score(s, t, tdm_sr_cur(s, t));
}

/* The float just below the shared threshold's bits g (-1 for g = 0). */
float tdm_sr_below(uint g) { return g ? as_float(g - 1u) : -1.0f; }

/* Whether algorithm alg shares the threshold G. */
uint tdm_sr_shares(uint alg)
{
    return alg == TDM_ALG_WAND || alg == TDM_ALG_BMW || alg == TDM_ALG_MAXSCORE;
}

/* tdm_sr_begin's g: read G itself (an atomic). */
#define TDM_SR_G_READ 0xffffffffu

/* G's bits (of the query whose term table is terms) for every range of
   the work-group, read by one atomic of its first work-item (every
   work-item of the group must call it: a barrier; g0 is the kernel's
   local word). A range's own atomic read, atomic_max(G, 0), serialized
   with every other range's on the one word: 31,250 of them took 23 of the
   54 us of the H200's range kernel (MaxScore k 10, 1M documents). A plain
   load would race with the ranges' publishing atomics (OpenCL's memory
   model; Oclgrind reports it). */
uint tdm_sr_group_g(__global uint *terms, uint alg, __local uint *g0)
{
    if (get_local_id(0) == 0u)
        *g0 = tdm_sr_shares(alg) ? atomic_max(terms + TDM_TW_SHARED, 0u) : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    return *g0;
}

/* Heap order: a ranks below b (lower score, or equal and larger docid). */
int tdm_sr_worse(float as, uint ad, float bs, uint bd)
{
    return as < bs || (as == bs && ad > bd);
}

/* Block-Max: the bound of term t's block holding docid d (0 when its list
   ends before d), and in *last that block's last docid. */
float tdm_sr_block(const tdm_srange *s, uint t, uint d, uint *last)
{
    uint seg = tdm_sr_term(s, t, TDM_TW_POS), df = tdm_sr_term(s, t, TDM_TW_DF),
         bs = tdm_sr_term(s, t, TDM_TW_BSIZE);
    uint nb = (df + bs - 1u) / bs;
    uint b = (tdm_sr_cur(s, t) - seg) / bs;
    while (b < nb) {
        uint l = s->docs[seg + min((b + 1u) * bs, df) - 1u];
        if (l >= d) {
            *last = l;
            return s->bmax[tdm_sr_term(s, t, TDM_TW_BMAX) + b];
        }
        b++;
    }
    *last = TDM_SEARCH_NODOC;
    return 0.0f;
}

/* The algorithms, on these cursors (tdm_sr_or, _and, _wand, _maxscore,
   _push, _theta, ...). */
#define TDM_SA_S tdm_srange
#define TDM_SA(name) tdm_sr_##name
#include "cl/search_algo.cl"

/* One work-item per docid range [r * rlen, min((r + 1) * rlen, ndocs)).
   hn[r] gets the number of entries of the range's heap. The pruning
   algorithms read and raise the shared threshold in terms (word 7 of term
   0); a heap of cap < rlen entries holds k, cap = min(k, rlen). AND-then-OR's OR
   pass has gate_min = k: it does nothing when the AND pass's merge counted
   at least k candidates (gate[1], tdm_search_merge's out_n), leaving the AND
   heaps for the next merge, so the choice costs no round trip to the host. */
#define TDM_SR_ARGS                                                              \
    __global const uint *docs, __global const uint *freqs, __global uint *terms,   \
        __global const float *bmax, __global const uint *doclens, __global uint *cur, \
        __global uint *ord, __global float *hs, __global uint *hd, __global uint *hn, \
        uint nt, uint nranges, uint rlen, uint ndocs, uint cap, uint alg, uint kind,  \
        float c0, float c1
#define TDM_SR_PASS                                                              \
    docs, freqs, terms, bmax, doclens, cur, ord, hs, hd, hn, nt, nranges, rlen, ndocs, cap, \
        alg, kind, c0, c1

/* Range r's heap and its count hn[r] (tdm_search_range, _range_sel); g:
   G's bits as tdm_sr_begin takes them. */
void tdm_sr_range(TDM_SR_ARGS, uint r, uint g)
{
    tdm_srange s;
    s.docs = docs;
    s.freqs = freqs;
    s.bmax = bmax;
    s.doclens = doclens;
    s.cur = cur;
    s.ord = ord;
    uint rbeg = tdm_sr_begin(&s, terms, hs, hd, nt, nranges, r, rlen, ndocs, cap, alg, kind, c0,
                             c1, g);
    tdm_sr_starts(&s, rbeg);
    tdm_sr_run(&s, alg);
    hn[r] = s.n;
}

__kernel void tdm_search_range(TDM_SR_ARGS, __global const uint *gate, uint gate_min)
{
    __local uint g0;
    uint g = tdm_sr_group_g(terms, alg, &g0), r = get_global_id(0);
    if (r < nranges && !(gate_min && gate[1] >= gate_min))
        tdm_sr_range(TDM_SR_PASS, r, g);
}

/* Block bounds recomputed on the device, for requests whose parameters are
   not those of the index's stored bounds (other k1 or b, impact scores): one
   work-item per block of the query's lists, the largest float score of its
   postings (exact: the same formula as the range kernel). bmax[g] is block
   g of all the query's lists in term order (term word 3 is a term's first). */
__kernel void tdm_search_bounds(__global const uint *docs, __global const uint *freqs,
                                __global const uint *terms, __global const uint *doclens,
                                uint ndocs, __global float *bmax, uint nt, uint nblocks,
                                uint kind, float c0, float c1)
{
    uint g = get_global_id(0);
    if (g >= nblocks)
        return;
    tdm_srange s;
    s.docs = docs;
    s.freqs = freqs;
    s.terms = terms;
    s.doclens = doclens;
    s.kind = kind;
    s.c0 = c0;
    s.c1 = c1;
    uint lo = 0, hi = nt; /* the last term whose first block is <= g */
    while (hi - lo > 1u) {
        uint mid = (lo + hi) / 2u;
        if (terms[mid * TDM_SEARCH_TW + TDM_TW_BMAX] <= g)
            lo = mid;
        else
            hi = mid;
    }
    uint t = lo, seg = tdm_sr_term(&s, t, TDM_TW_POS), df = tdm_sr_term(&s, t, TDM_TW_DF);
    uint bs = tdm_sr_term(&s, t, TDM_TW_BSIZE), b = g - tdm_sr_term(&s, t, TDM_TW_BMAX);
    uint end = min((b + 1u) * bs, df);
    float m = 0.0f;
    for (uint i = b * bs; i < end; i++) /* a docid past the last: a forged index's, */
        if (docs[seg + i] < ndocs)          /* never ranked; its length is not read */
            m = fmax(m, tdm_sr_score(&s, t, seg + i));
    bmax[g] = m;
}

/* Each term's bound (word 5: the largest of its block bounds) and
   MaxScore's order (word 6: terms by ascending bound, then index), in one
   work-group. */
__kernel void tdm_search_order(__global uint *terms, __global const float *bmax, uint nt)
{
    uint lid = get_local_id(0), ls = get_local_size(0);
    for (uint t = lid; t < nt; t += ls) {
        __global uint *w = terms + t * TDM_SEARCH_TW;
        uint nb = (w[TDM_TW_DF] + w[TDM_TW_BSIZE] - 1u) / w[TDM_TW_BSIZE];
        float m = 0.0f;
        for (uint b = 0; b < nb; b++)
            m = fmax(m, bmax[w[TDM_TW_BMAX] + b]);
        w[TDM_TW_BOUND] = as_uint(m);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (lid == 0u) {
        for (uint i = 0; i < nt; i++)
            terms[i * TDM_SEARCH_TW + TDM_TW_ORDER] = i;
        for (uint i = 1; i < nt; i++) {
            uint t = terms[i * TDM_SEARCH_TW + TDM_TW_ORDER];
            float u = as_float(terms[t * TDM_SEARCH_TW + TDM_TW_BOUND]);
            uint j = i;
            while (j > 0u) {
                uint p = terms[(j - 1u) * TDM_SEARCH_TW + TDM_TW_ORDER];
                if (as_float(terms[p * TDM_SEARCH_TW + TDM_TW_BOUND]) <= u)
                    break;
                terms[j * TDM_SEARCH_TW + TDM_TW_ORDER] = p;
                j--;
            }
            terms[j * TDM_SEARCH_TW + TDM_TW_ORDER] = t;
        }
    }
}
