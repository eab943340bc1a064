/* The document-at-a-time algorithms of a range (OR, AND, WAND, Block-Max
   WAND, MaxScore), its heap and the shared threshold G, written once for
   both range kernels: included by cl/search_range.cl (cursors over decoded
   postings, names tdm_sr_*) and cl/search_zcur.cl (cursors over the
   compressed index, names tdm_zr_* and tdm_zr1_*). The includer defines
     TDM_SA_S        its state type, with the fields these use: terms, ord,
                     hs, hd, shared, nt, nr, r, rend, cap, n, kind, c0, c1,
                     pub, gth, hw
     TDM_SA(name)    the name of this copy's function `name`
   and, before the include, its cursor accessors:
     TDM_SA(term)(s, t, w)   word w of term t's table entry
     TDM_SA(order)(s, i)     the term of the i-th smallest bound (MaxScore's
                             order: word 6 of term i)
     TDM_SA(doc)(s, t)       docid under term t's cursor (NODOC past its list
                             or the range)
     TDM_SA(seek)(s, t, d)   moves the cursor to its first posting >= d
     TDM_SA(next)(s, t)      moves it one posting on
     TDM_SA(at)(s, t)        score.h's float score of the posting under it
     TDM_SA(block)(s, t, d, &last)  the bound of the block from the
                             cursor's on that holds docid d, its last docid
     TDM_SA(oget)(s, i), TDM_SA(oset)(s, i, v)  word i of the range's `ord`
                             scratch, read and written
   and, if it wants, TDM_SA_WARM(s, d): a hint that document d is likely
   to be scored soon (a prefetch of what scoring it reads; nothing if
   undefined), and TDM_SA_CPU 1 for the traversal steps measured on CPUs
   only (0 if undefined; wand, pivot and maxscore below). Both copies run the same float
   operations in the same order, so they give the same bits (search_range.cl's
   header says why that is exact). The file is included once per copy; the
   macros are undefined at its end. */
#ifndef TDM_SA_WARM
#define TDM_SA_WARM(s, d)
#endif
#ifndef TDM_SA_CPU
#define TDM_SA_CPU 0
#endif

/* The threshold a document must beat: the heap's worst once it is full,
   or the float below the shared G when that is larger. The worst is kept
   in s->hw (read once a push, not at every step: on a GPU the lanes' heaps
   lie apart, a load each of them). */
float TDM_SA(theta)(const TDM_SA_S *s)
{
    float own = s->n < s->cap ? -1.0f : s->hw;
    return fmax(own, s->gth);
}

/* After an insertion: a heap of k documents raises G to its worst, unless
   G is known to be as high already (an atomic that could change nothing). */
void TDM_SA(publish)(TDM_SA_S *s)
{
    if (!s->pub || s->n < s->cap)
        return;
    uint w = as_uint(s->hw);
    if (s->gth >= 0.0f && w <= as_uint(s->gth) + 1u)
        return;
    uint g = atomic_max(s->shared, w);
    s->gth = tdm_sr_below(max(g, w));
}

/* Offers document d with score sc to the range's heap (worst at the root).
   Documents come in ascending docid, so sc must beat the worst strictly. */
void TDM_SA(push)(TDM_SA_S *s, uint d, float sc)
{
    __global float *hs = s->hs + s->r * s->cap;
    __global uint *hd = s->hd + s->r * s->cap;
    uint i;
    if (!(sc > s->gth))
        return; /* below the shared G: not in the query's top k */
    TDM_SR_COUNT(pushed, 1);
    if (s->n < s->cap) {
        i = s->n++;
        while (i > 0u) {
            uint p = (i - 1u) / 2u;
            if (!tdm_sr_worse(sc, d, hs[p], hd[p]))
                break;
            hs[i] = hs[p];
            hd[i] = hd[p];
            i = p;
        }
        hs[i] = sc;
        hd[i] = d;
        if (s->n == s->cap)
            s->hw = hs[0];
        TDM_SA(publish)(s);
        return;
    }
    if (!(sc > s->hw))
        return;
    i = 0u;
    for (;;) {
        uint l = 2u * i + 1u, m = i;
        float ms = sc;
        uint md = d;
        if (l < s->n && tdm_sr_worse(hs[l], hd[l], ms, md)) {
            m = l;
            ms = hs[l];
            md = hd[l];
        }
        if (l + 1u < s->n && tdm_sr_worse(hs[l + 1u], hd[l + 1u], ms, md))
            m = l + 1u;
        if (m == i)
            break;
        hs[i] = hs[m];
        hd[i] = hd[m];
        i = m;
    }
    hs[i] = sc;
    hd[i] = d;
    s->hw = hs[0];
    TDM_SA(publish)(s);
}

/* Document d's score: the terms whose cursor is on d, in term order; those
   cursors then move past d when `advance`. */
float TDM_SA(full)(TDM_SA_S *s, uint d, int advance)
{
    TDM_SR_COUNT(docs, 1);
    float acc = 0.0f;
    for (uint t = 0; t < s->nt; t++)
        if (TDM_SA(doc)(s, t) == d) {
            acc = acc + TDM_SA(at)(s, t);
            if (advance)
                TDM_SA(next)(s, t);
        }
    return acc;
}

void TDM_SA(or)(TDM_SA_S *s)
{
    for (;;) {
        uint d = TDM_SEARCH_NODOC;
        for (uint t = 0; t < s->nt; t++)
            d = min(d, TDM_SA(doc)(s, t));
        if (d == TDM_SEARCH_NODOC)
            return;
        TDM_SA(push)(s, d, TDM_SA(full)(s, d, 1));
    }
}

void TDM_SA(and)(TDM_SA_S *s)
{
    uint lead = 0;
    for (uint t = 1; t < s->nt; t++)
        if (TDM_SA(term)(s, t, TDM_TW_DF) < TDM_SA(term)(s, lead, TDM_TW_DF))
            lead = t;
    uint d = TDM_SA(doc)(s, lead);
    while (d != TDM_SEARCH_NODOC) {
        TDM_SA_WARM(s, d);
        uint miss = 0u;
        for (uint t = 0; t < s->nt && !miss; t++) {
            if (t == lead)
                continue;
            TDM_SA(seek)(s, t, d);
            uint dt = TDM_SA(doc)(s, t);
            if (dt != d)
                miss = dt;
        }
        if (miss == TDM_SEARCH_NODOC)
            return;
        if (miss) {
            TDM_SA(seek)(s, lead, miss);
        } else {
            TDM_SA(push)(s, d, TDM_SA(full)(s, d, 0));
            TDM_SA(next)(s, lead);
        }
        d = TDM_SA(doc)(s, lead);
    }
}

/* WAND's order: term indices sorted by the docid under their cursor
   (insertion sort: it is nearly sorted after each step). */
void TDM_SA(sort)(TDM_SA_S *s)
{
    for (uint i = 1; i < s->nt; i++) {
        uint t = TDM_SA(oget)(s, i), dt = TDM_SA(doc)(s, t);
        uint j = i;
        while (j > 0u) {
            uint u = TDM_SA(oget)(s, j - 1u);
            if (TDM_SA(doc)(s, u) <= dt)
                break;
            TDM_SA(oset)(s, j, u);
            j--;
        }
        TDM_SA(oset)(s, j, t);
    }
}

/* WAND's pivot pd, whose cursors are all on it, offered to the heap, and
   those cursors moved on. With bmw where TDM_SA_CPU, scoring stops at the
   first term (in term order) where the score so far and the bounds of the
   blocks holding pd of the terms left cannot beat th (as MaxScore's test:
   the bounds are upper bounds, SLACK covers the sums' rounding), so such a
   document, which the heap would refuse (its score <= th, the threshold
   push applies), is not offered. */
void TDM_SA(pivot)(TDM_SA_S *s, uint pd, float th, int bmw)
{
    if (!TDM_SA_CPU || !bmw) {
        TDM_SA(push)(s, pd, TDM_SA(full)(s, pd, 1));
        return;
    }
    TDM_SR_COUNT(docs, 1);
    float acc = 0.0f;
    int cut = 0, first = 1; /* the first term's test is the pivot's own */
    for (uint t = 0; t < s->nt; t++) {
        if (TDM_SA(doc)(s, t) != pd)
            continue;
        if (first) {
            first = 0;
            acc = acc + TDM_SA(at)(s, t); /* as full's: 0 + x, not x (-0) */
        } else if (!cut) {
            float rest = 0.0f;
            for (uint u = t; u < s->nt; u++) {
                uint last;
                if (TDM_SA(doc)(s, u) == pd)
                    rest = rest + TDM_SA(block)(s, u, pd, &last);
            }
            cut = (acc + rest) * TDM_SEARCH_SLACK <= th;
            if (!cut)
                acc = acc + TDM_SA(at)(s, t);
        }
        TDM_SA(next)(s, t);
    }
    if (!cut)
        TDM_SA(push)(s, pd, acc);
}

/* WAND (bmw 0) and Block-Max WAND (bmw 1). Where TDM_SA_CPU, a pivot is
   scored as soon as the cursors moved to it all land on it, instead of in
   an iteration that would find the same pivot again (the answer is exact
   either way: a document scored that cannot enter the heap is not
   pushed; only the work differs). */
void TDM_SA(wand)(TDM_SA_S *s, int bmw)
{
    for (uint i = 0; i < s->nt; i++)
        TDM_SA(oset)(s, i, i);
    for (;;) {
        TDM_SA(sort)(s);
        float th = TDM_SA(theta)(s), acc = 0.0f;
        uint piv = s->nt;
        for (uint i = 0; i < s->nt; i++) {
            uint t = TDM_SA(oget)(s, i);
            if (TDM_SA(doc)(s, t) == TDM_SEARCH_NODOC)
                break;
            acc = acc + as_float(TDM_SA(term)(s, t, TDM_TW_BOUND));
            if (acc * TDM_SEARCH_SLACK > th) {
                piv = i;
                break;
            }
        }
        if (piv == s->nt)
            return;
        uint pd = TDM_SA(doc)(s, TDM_SA(oget)(s, piv));
        TDM_SA_WARM(s, pd);
        while (piv + 1u < s->nt && TDM_SA(doc)(s, TDM_SA(oget)(s, piv + 1u)) == pd)
            piv++;
        if (bmw) {
            /* the bound of the blocks that hold pd; documents in [pd, nxt)
               hold no other term and lie in those same blocks */
            uint nxt = piv + 1u < s->nt ? TDM_SA(doc)(s, TDM_SA(oget)(s, piv + 1u))
                                        : TDM_SEARCH_NODOC;
            float bsum = 0.0f;
            for (uint i = 0; i <= piv; i++) {
                uint last;
                bsum = bsum + TDM_SA(block)(s, TDM_SA(oget)(s, i), pd, &last);
                if (last != TDM_SEARCH_NODOC)
                    nxt = min(nxt, last + 1u);
            }
            if (bsum * TDM_SEARCH_SLACK <= th) {
                TDM_SR_COUNT(skips, 1);
                for (uint i = 0; i <= piv; i++)
                    TDM_SA(seek)(s, TDM_SA(oget)(s, i), nxt);
                continue;
            }
        }
        if (TDM_SA(doc)(s, TDM_SA(oget)(s, 0)) == pd) {
            TDM_SA(pivot)(s, pd, th, bmw);
        } else {
            uint land = 1u;
            for (uint i = 0; i < piv; i++) {
                uint t = TDM_SA(oget)(s, i);
                TDM_SA(seek)(s, t, pd);
                land &= TDM_SA(doc)(s, t) == pd;
            }
            if (TDM_SA_CPU && land) /* all on pd (those after are past it) */
                TDM_SA(pivot)(s, pd, th, bmw);
        }
    }
}

/* MaxScore: terms by ascending bound (term word 6); the shortest prefix
   whose bounds cannot beat the threshold together is non-essential: a
   document is only found through the essential terms, and the non-essential
   ones are looked up only while the bound still beats the threshold.
   ord holds the prefix sums of the bounds in that order (float bits). */
uint TDM_SA(split)(TDM_SA_S *s, float th)
{
    float acc = 0.0f;
    uint ne = 0;
    for (uint i = 0; i < s->nt; i++) {
        acc = acc + as_float(TDM_SA(term)(s, TDM_SA(order)(s, i), TDM_TW_BOUND));
        TDM_SA(oset)(s, i, as_uint(acc));
        if (acc * TDM_SEARCH_SLACK <= th)
            ne = i + 1u;
    }
    return ne;
}

void TDM_SA(maxscore)(TDM_SA_S *s)
{
    float th = TDM_SA(theta)(s);
    uint ne = TDM_SA(split)(s, th);
    for (;;) {
        if (ne == s->nt)
            return;
        uint d = TDM_SEARCH_NODOC;
        for (uint i = ne; i < s->nt; i++)
            d = min(d, TDM_SA(doc)(s, TDM_SA(order)(s, i)));
        if (d == TDM_SEARCH_NODOC)
            return;
        float part = 0.0f;
        for (uint i = ne; i < s->nt; i++) {
            uint t = TDM_SA(order)(s, i);
            if (TDM_SA(doc)(s, t) == d)
                part = part + TDM_SA(at)(s, t);
        }
        int keep = 1;
        for (uint i = ne; i-- > 0u;) {
            float bound = part + as_float(TDM_SA(oget)(s, i));
            if (bound * TDM_SEARCH_SLACK <= th) {
                TDM_SR_COUNT(skips, 1);
                keep = 0;
                break;
            }
            uint t = TDM_SA(order)(s, i);
            TDM_SA(seek)(s, t, d);
            if (TDM_SA(doc)(s, t) == d)
                part = part + TDM_SA(at)(s, t);
        }
        /* part is then the document's score summed in another order: one
           that cannot beat th (SLACK covering the orders' rounding), which
           the heap would refuse, is not scored again in term order where
           TDM_SA_CPU */
        int rescore = !TDM_SA_CPU || part * TDM_SEARCH_SLACK > th;
        if (keep && rescore) /* not `keep && (constant || ...)`: clang warns */
            TDM_SA(push)(s, d, TDM_SA(full)(s, d, 0));
        for (uint i = ne; i < s->nt; i++) {
            uint t = TDM_SA(order)(s, i);
            if (TDM_SA(doc)(s, t) == d)
                TDM_SA(next)(s, t);
        }
        float nth = TDM_SA(theta)(s);
        if (nth != th) {
            th = nth;
            ne = TDM_SA(split)(s, th);
        }
    }
}

/* The fields every range sets alike: range r of nr (rlen documents of
   ndocs) of a query of nt terms (table `terms`, whose term 0 word 7 is the
   shared threshold), its heap of cap entries at hs, hd, algorithm alg,
   scoring kind, c0, c1; g: G's bits as the caller read them, or
   TDM_SR_G_READ to read them here (an atomic). The caller sets its
   cursors' fields; returns the range's first docid. */
uint TDM_SA(begin)(TDM_SA_S *s, __global uint *terms, __global float *hs, __global uint *hd,
                   uint nt, uint nr, uint r, uint rlen, uint ndocs, uint cap, uint alg,
                   uint kind, float c0, float c1, uint g)
{
    s->terms = terms;
    s->hs = hs;
    s->hd = hd;
    s->nt = nt;
    s->nr = nr;
    s->r = r;
    uint rbeg = r * rlen;
    s->rend = ndocs - rbeg > rlen ? rbeg + rlen : ndocs;
    s->cap = cap;
    s->n = 0u;
    s->hw = -1.0f;
    s->kind = kind;
    s->c0 = c0;
    s->c1 = c1;
    uint share = tdm_sr_shares(alg);
    s->shared = terms + TDM_TW_SHARED;
    s->pub = share && cap < rlen;
    if (share && g == TDM_SR_G_READ)
        g = atomic_max(s->shared, 0u);
    s->gth = share ? tdm_sr_below(g) : -1.0f;
    return rbeg;
}

/* Runs algorithm alg (TDM_ALG_*) over the range. */
void TDM_SA(run)(TDM_SA_S *s, uint alg)
{
    if (alg == TDM_ALG_AND)
        TDM_SA(and)(s);
    else if (alg == TDM_ALG_WAND)
        TDM_SA(wand)(s, 0);
    else if (alg == TDM_ALG_BMW)
        TDM_SA(wand)(s, 1);
    else if (alg == TDM_ALG_MAXSCORE)
        TDM_SA(maxscore)(s);
    else
        TDM_SA(or)(s);
}

#undef TDM_SA_S
#undef TDM_SA
#undef TDM_SA_WARM
#undef TDM_SA_CPU
