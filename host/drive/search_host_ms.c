/* MaxScore on the host path (search_host_ms.h). */
#include "search_host_ms.h"

#include <string.h>

#include "query/bounds.h"
#include "search_host_score.h"
#include "tandem.h"

#define END UINT32_MAX /* past a list's end (docids are below ndocs <= 2^32 - 1) */
/* A window of docids whose essential postings are summed list at a time
 * (window()); 4,096 beat 1,024 by 3 % on msmarco (2-core VM). */
#define WIN 4096u
/* A list of more blocks than this gets a table of its blocks' bounds
 * (blk_bound): 256 bounds computed once, well below the cost of a long
 * list's blocks' (test_search_host's larger lists have some). */
#define BT_MIN_BLOCKS 64u

int tdm_hms_bounds(const tdm_ireader *r, const tdm_query *q, const tdm_scorer *sc,
                   const tdm_hlist *lists, float *bound)
{
    for (size_t t = 0; t < q->nterms; t++) {
        /* the list's max_score: a block's bound, max_score * (q + 1) /
           256, is never above it (the scan of the blocks' bytes for a
           larger one that was here could find none) */
        bound[t] = tdm_score_stored_bound(r, q, sc, t, lists[t].l.max_score);
        if (bound[t] < 0)
            return 0;
    }
    return 1;
}

/* A list's cursor: its block's docids decoded when a candidate needs it,
 * its frequencies and scores too while the list is essential (every
 * posting of it is a candidate then). */
typedef struct mcur {
    const tdm_hlist *h;
    uint32_t *dbuf, *fbuf;
    float *sbuf;
    uint32_t d;                /* the current docid, END past the end */
    uint32_t blk, nb, pos, len;
    uint32_t dblk, fblk, sblk; /* the blocks in dbuf, fbuf, sbuf (END: none) */
    uint32_t last1;            /* a one-block list's last docid (it stores none) */
    uint32_t t;                /* its term */
    int cheap;                 /* a frequency reads alone cheaply (tdm_hlist_tf_cheap) */
    uint32_t gblk, ngot;       /* the block whose frequencies were read alone, how many */
    uint32_t bblk;             /* the block whose bound is bb (END: none) */
    const double *bt;          /* [256] a block's bound by its quantized byte
                                  (NULL: each computed when asked for) */
    uint32_t wp, we;           /* a window's postings in dbuf not yet passed by
                                  its candidates, and their end (window()) */
    double bb;
    double w;                  /* its weight (the stored bounds' scale) */
} mcur;

/* Block b's bound, tdm_hlist_block_bound's value: from the list's table of
 * the 256 quantized bytes' bounds (cur_init), a load instead of the
 * conversions and products a block (8 % of a msmarco MaxScore batch's
 * time on the build VM, perf). */
static inline double blk_bound(const mcur *c, uint32_t b)
{
    return c->bt ? c->bt[c->h->l.block_maxq[b]] : tdm_hlist_block_bound(c->h, b, c->w);
}

typedef struct ms {
    const tdm_hms *m;
    mcur *cs;        /* [nt] in term order */
    uint32_t *ord;   /* [nt] terms by ascending bound */
    double *pre;     /* [nt] pre[i]: the bounds of ord[0..i] summed */
    double mult;     /* a margin over a float sum's rounding (tdm_hms_rank) */
    float *s;        /* [nt] a candidate's scores in term order where sd says so */
    uint32_t *sd;    /* [nt] the candidate s[t] is of (END: none): candidates come
                        in ascending docid order, so no score is ever cleared */
    uint32_t *wdoc;  /* [WIN] a window's documents that may beat the threshold */
    double *wpart;   /* [WIN] their essential sums */
    double *wpre;    /* [WIN * nt] document j's non-essential block bounds at
                        it summed over ord[0..i] at [j * ne + i] (win_blocks) */
    float *wsc;      /* [WIN * nt] its score in ord[i] at [j * ne + i] (win_lists) */
    uint32_t *widx;  /* [WIN] the documents j left (win_lists) */
    double *acc;     /* [WIN] a window's essential sums, 0 between windows */
    uint64_t *bits;  /* [WIN / 64] its documents with an essential posting */
    uint32_t *dls;   /* [maxbs] a block's documents' lengths (load_scores) */
} ms;

static inline uint32_t block_last(const mcur *c, uint32_t b)
{
    return c->h->l.block_last ? c->h->l.block_last[b] : c->last1;
}

static int load_docs(const ms *x, mcur *c)
{
    if (c->dblk == c->blk)
        return TDM_OK;
    int rc = tdm_hlist_docs(c->h, c->blk, c->dbuf, x->m->err);
    c->dblk = c->blk;
    c->len = tdm_hlist_block_len(c->h, c->blk);
    c->pos = 0;
    return rc;
}

static int load_tfs(const ms *x, mcur *c)
{
    if (c->fblk == c->blk)
        return TDM_OK;
    c->fblk = c->blk;
    return tdm_hlist_tfs(c->h, c->blk, c->fbuf, x->m->err);
}

/* The block's scores at once (independent divisions overlap). */
static int load_scores(const ms *x, mcur *c)
{
    int rc = load_tfs(x, c);
    if (rc)
        return rc;
    tdm_hscore_block(x->m->sc, c->t, x->m->dl, c->dbuf, c->fbuf, c->len, x->dls, c->sbuf);
    c->sblk = c->blk;
    return TDM_OK;
}

/* The score of the cursor's document: from its block's scores or
 * frequencies where decoded, else its frequency read alone for the first
 * few lookups that find a document in the block (a long non-essential
 * list: one or two a block), then the block's frequencies decoded. */
static int cur_score(const ms *x, mcur *c, float *out)
{
    if (c->sblk == c->blk) {
        *out = c->sbuf[c->pos];
        return TDM_OK;
    }
    uint32_t tf = 0;
    int rc;
    if (c->fblk != c->blk && c->cheap && (c->gblk != c->blk || c->ngot < TDM_HLIST_FEW)) {
        c->ngot = c->gblk == c->blk ? c->ngot + 1 : 1;
        c->gblk = c->blk;
        rc = tdm_hlist_tf_at(c->h, c->blk, c->pos, &tf, x->m->err);
    } else {
        rc = load_tfs(x, c);
        tf = c->fbuf[c->pos];
    }
    const tdm_scorer *sc = x->m->sc;
    *out = tdm_score_f(sc, c->t, tf, sc->kind == TDM_SCORING_IMPACT ? 0 : x->m->dl[c->d]);
    return rc;
}

/* An essential cursor's next posting (a new block scored whole). */
static int cur_next(const ms *x, mcur *c)
{
    if (++c->pos < c->len) {
        c->d = c->dbuf[c->pos];
        return TDM_OK;
    }
    if (++c->blk == c->nb) {
        c->d = END;
        return TDM_OK;
    }
    int rc = load_docs(x, c);
    if (!rc)
        rc = load_scores(x, c);
    c->d = c->dbuf[0];
    return rc;
}

/* The cursor's block at the first that may hold d, undecoded. */
static void cur_skip(mcur *c, uint32_t d)
{
    c->blk = tdm_hlist_skip(c->h, c->blk, c->last1, d);
}

/* A bound of the scores in the cursor's block (tdm_hms_bounds checked that
 * the stored bounds apply). */
static double block_bound(mcur *c)
{
    if (c->bblk != c->blk) { /* one_essential asks it again while a block is passed */
        c->bblk = c->blk;
        c->bb = blk_bound(c, c->blk);
    }
    return c->bb;
}

/* The cursor at its list's first docid >= d (END where none is); whole
 * blocks below d passed undecoded. */
static int cur_seek(const ms *x, mcur *c, uint32_t d)
{
    if (c->d >= d)
        return TDM_OK;
    cur_skip(c, d);
    if (c->blk == c->nb) {
        c->d = END;
        return TDM_OK;
    }
    int rc = load_docs(x, c);
    if (rc)
        return rc;
    c->pos = tdm_hscan(c->dbuf, c->pos, c->len, d); /* the block ends at or above d */
    c->d = c->dbuf[c->pos];
    return TDM_OK;
}

/* The cursor of term t: its block buffers at mem, its bounds' table at bt
 * (filled here where the list has many blocks). */
static int cur_init(const ms *x, mcur *c, uint32_t t, uint32_t *mem, double *bt)
{
    uint32_t bs = x->m->maxbs;
    *c = (mcur){.h = &x->m->lists[t], .dbuf = mem, .fbuf = mem + bs,
                .sbuf = (float *)(mem + 2 * bs), .nb = x->m->lists[t].l.nblocks,
                .dblk = END, .fblk = END, .sblk = END, .bblk = END, .gblk = END, .t = t,
                .cheap = tdm_hlist_tf_cheap(&x->m->lists[t]),
                .w = x->m->q->terms[t].weight};
    if (c->h->l.block_maxq && c->nb > BT_MIN_BLOCKS) {
        for (uint32_t q = 0; q < 256; q++)
            bt[q] = tdm_hlist_byte_bound(c->h, (uint8_t)q, c->w);
        c->bt = bt;
    }
    if (!c->nb) {
        c->d = END;
        return TDM_OK;
    }
    int rc = load_docs(x, c); /* every list is essential at first */
    if (!rc)
        rc = load_scores(x, c);
    c->d = c->len ? c->dbuf[0] : END;
    c->last1 = c->len ? c->dbuf[c->len - 1] : 0;
    return rc;
}

/* The first essential term of ord: bounds below it, summed, cannot pass
 * thr. A document scoring thr exactly loses the tie too: every key kept
 * has a smaller docid (documents come in docid order). */
static size_t split(const ms *x, size_t ne, float thr)
{
    while (ne < x->m->nt && x->pre[ne] * x->mult <= thr)
        ne++;
    return ne;
}

/* d's score summed as the oracle sums it, to the top k. */
static void push(const ms *x, uint32_t d)
{
    float acc = 0.0f;
    for (size_t t = 0; t < x->m->nt; t++)
        acc = acc + (x->sd[t] == d ? x->s[t] : 0.0f); /* absent: 0.0f, the oracle's no-op */
    tdm_htopk_push(x->m->top, tdm_htopk_key(acc, d));
}

static uint32_t least(const ms *x, size_t ne)
{
    uint32_t d = END;
    for (size_t i = ne; i < x->m->nt; i++)
        d = x->cs[x->ord[i]].d < d ? x->cs[x->ord[i]].d : d;
    return d;
}

/* One essential list c left (the last of ord; the ne = nt - 1 others,
 * whose bounds sum to pre[ne - 1], are looked up): c moved to its first
 * posting at or after its own that may beat thr with them, END where none
 * may (window() from there). A posting that cannot is one win_gather
 * drops (its score the document's whole essential part), and a block
 * whose bound cannot is passed undecoded: no candidate, no top-k change,
 * the same answer. */
static int one_essential(const ms *x, mcur *c, size_t ne, float thr)
{
    double rest = x->pre[ne - 1], mult = x->mult;
    while (c->d != END) {
        if ((block_bound(c) + rest) * mult <= thr) { /* the block passed */
            if (++c->blk == c->nb) {
                c->d = END;
                break;
            }
            continue;
        }
        int rc = load_docs(x, c);
        if (!rc && c->sblk != c->blk)
            rc = load_scores(x, c);
        if (rc)
            return rc;
        uint32_t p = c->pos;
        while (p < c->len && ((double)c->sbuf[p] + rest) * mult <= thr)
            p++;
        if (p < c->len) {
            c->pos = p;
            c->d = c->dbuf[p];
            break;
        }
        if (++c->blk == c->nb)
            c->d = END;
    }
    return TDM_OK;
}

/* A window's document d that goes to the top k: its essential scores
 * into s and sd from the cursors' blocks (each scan goes forward only:
 * such documents come in ascending order). */
static void win_scores(const ms *x, size_t ne, uint32_t d)
{
    for (size_t i = ne; i < x->m->nt; i++) {
        mcur *c = &x->cs[x->ord[i]];
        uint32_t p = c->wp;
        while (p < c->we && c->dbuf[p] < d)
            p++;
        if (p < c->we && c->dbuf[p] == d) {
            x->s[c->t] = c->sbuf[p];
            x->sd[c->t] = d;
        }
        c->wp = p;
    }
}

/* The essential cursors past hi, each then at its next posting (a new
 * block decoded and scored). */
static int win_pass(const ms *x, size_t ne)
{
    for (size_t i = ne; i < x->m->nt; i++) {
        mcur *c = &x->cs[x->ord[i]];
        if (c->d == END || c->we == c->pos)
            continue;
        c->pos = c->we - 1;
        int rc = cur_next(x, c);
        if (rc)
            return rc;
    }
    return TDM_OK;
}

/* The window's documents (offsets to span) in ascending order, acc and
 * bits cleared: those whose sum with the non-essential bounds may beat
 * the threshold into wdoc and wpart (counted without a branch: about half
 * pass), their count returned. */
static uint32_t win_gather(const ms *x, size_t ne, uint32_t span)
{
    double rest = ne ? x->pre[ne - 1] : 0, mult = x->mult, *acc = x->acc;
    float thr = tdm_htopk_score_thr(x->m->top);
    uint64_t *bits = x->bits;
    uint32_t n = 0;
    for (uint32_t w = 0; w <= span >> 6; w++) {
        for (uint64_t m = bits[w]; m; m &= m - 1) {
            uint32_t o = w * 64 + (uint32_t)__builtin_ctzll(m);
            double part = acc[o];
            acc[o] = 0;
            x->wdoc[n] = o;
            x->wpart[n] = part;
            n += (part + rest) * mult > thr;
        }
        bits[w] = 0;
    }
    return n;
}

/* One essential list c (ne = nt - 1 >= 1): its postings to hi are the
 * window's documents, gathered as win_gather gathers them, without the
 * accumulators; c->we set, their count returned. */
static uint32_t win_one(const ms *x, size_t ne, mcur *c, uint32_t lo, uint32_t hi)
{
    double rest = x->pre[ne - 1], mult = x->mult;
    float thr = tdm_htopk_score_thr(x->m->top);
    uint32_t n = 0, p = c->pos;
    for (; p < c->len && c->dbuf[p] <= hi; p++) {
        double part = c->sbuf[p];
        x->wdoc[n] = c->dbuf[p] - lo;
        x->wpart[n] = part;
        n += (part + rest) * mult > thr;
    }
    c->we = p;
    return n;
}

/* win_blocks' block b moved to the first whose last docid *last is at or
 * past d (last END past the list: no docid is END), its bound returned
 * (0 past the list). bl is read only where the list has several blocks
 * (a one-block list stores none). */
static inline double block_past(const mcur *c, const uint32_t *bl, uint32_t *b,
                                uint32_t *last, uint32_t d)
{
    uint32_t k = *b, nb = c->nb;
    while (++k < nb && bl[k] < d)
        ;
    *b = k;
    *last = k < nb ? bl[k] : END;
    return k < nb ? blk_bound(c, k) : 0;
}

/* wpre[j * ne + i]: the non-essential lists' block bounds at the window's
 * document j summed over ord[0..i] (in ord's order; a list past its end
 * adds 0), each list's blocks walked once over the window, undecoded; the
 * cursors' blocks moved to lo's. */
static void win_blocks(const ms *x, size_t ne, uint32_t lo, uint32_t n)
{
    double *wp = x->wpre;
    const uint32_t *wd = x->wdoc;
    for (size_t i = 0; i < ne; i++) {
        mcur *c = &x->cs[x->ord[i]];
        cur_skip(c, lo);
        uint32_t b = c->blk, nb = c->nb;
        const uint32_t *bl = c->h->l.block_last;
        uint32_t last = b < nb ? block_last(c, b) : END;
        double bb = b < nb ? block_bound(c) : 0;
        double *w = wp + i;
        if (i == 0) {
            for (uint32_t j = 0; j < n; j++) {
                uint32_t d = lo + wd[j];
                if (d > last)
                    bb = block_past(c, bl, &b, &last, d);
                w[j * ne] = bb;
            }
            continue;
        }
        for (uint32_t j = 0; j < n; j++) {
            uint32_t d = lo + wd[j];
            if (d > last)
                bb = block_past(c, bl, &b, &last, d);
            w[j * ne] = w[j * ne - 1] + bb;
        }
    }
}

/* The window's n documents of win_gather looked up list at a time,
 * highest bound first (each list sought once a window, in ascending docid
 * order, a block decoded only where a document falls): a document leaves
 * once its sum with the block bounds at it of the lists left cannot beat
 * thr (no push comes before the last list: thr stays). wpart[j] becomes
 * its sum, wsc its scores (0.0f: absent); those left into widx, their
 * count returned, or an error. */
static int win_lists(const ms *x, size_t ne, uint32_t lo, uint32_t n, float thr)
{
    double mult = x->mult, *part = x->wpart;
    const double *wp = x->wpre;
    uint32_t *w = x->widx, m = 0;
    for (uint32_t j = 0; j < n; j++) {
        w[m] = j;
        m += (part[j] + (ne ? wp[(size_t)j * ne + ne - 1] : 0)) * mult > thr;
    }
    for (size_t i = ne; i-- > 0 && m;) {
        mcur *c = &x->cs[x->ord[i]];
        uint32_t left = 0;
        for (uint32_t q = 0; q < m; q++) {
            uint32_t j = w[q], d = lo + x->wdoc[j];
            float s = 0.0f;
            int rc = cur_seek(x, c, d);
            if (!rc && c->d == d)
                rc = cur_score(x, c, &s);
            if (rc)
                return rc;
            x->wsc[(size_t)j * ne + i] = s;
            part[j] += s;
            w[left] = j;
            left += (part[j] + (i ? wp[(size_t)j * ne + i - 1] : 0)) * mult > thr;
        }
        m = left;
    }
    return (int)m;
}

/* The essential lists (one or more): the documents of [lo, hi] (lo the least
 * essential docid, hi at most the first end of the essential cursors'
 * blocks, so each list's postings there are in its cursor's scored block)
 * summed list at a time in ord's order into acc (each sum in double: no
 * branch a posting), then the documents in
 * ascending order: those whose sum cannot beat the threshold with the
 * non-essential lists' bounds, then with their blocks' at the document,
 * are passed; the others looked up list at a time (win_lists), then
 * pushed in ascending order. The threshold may rise with the pushes: ne
 * stays (its essential lists a superset of the new ones), the last test
 * uses the new threshold. */
static int window(const ms *x, size_t ne, uint32_t lo)
{
    size_t nt = x->m->nt;
    uint64_t top = (uint64_t)lo + WIN - 1;
    for (size_t i = ne; i < nt; i++) {
        mcur *c = &x->cs[x->ord[i]];
        uint32_t l = c->d == END ? END : block_last(c, c->blk);
        top = l < top ? l : top;
    }
    uint32_t hi = (uint32_t)top;
    double *acc = x->acc;
    uint64_t *bits = x->bits;
    uint32_t n = 0;
    for (size_t i = ne; i < nt; i++) {
        mcur *c = &x->cs[x->ord[i]];
        uint32_t p = c->pos;
        c->wp = p;
        if (c->d == END) {
            c->we = p;
            continue;
        }
        if (c->sblk != c->blk) { /* scored from its start (cur_next) */
            int rc = load_scores(x, c);
            if (rc)
                return rc;
        }
        if (ne + 1 == nt) {
            n = win_one(x, ne, c, lo, hi);
            break;
        }
        for (; p < c->len && c->dbuf[p] <= hi; p++) {
            uint32_t o = c->dbuf[p] - lo;
            acc[o] += c->sbuf[p];
            bits[o >> 6] |= (uint64_t)1 << (o & 63);
        }
        c->we = p;
    }
    if (ne + 1 < nt)
        n = win_gather(x, ne, hi - lo);
    win_blocks(x, ne, lo, n);
    int m = win_lists(x, ne, lo, n, tdm_htopk_score_thr(x->m->top));
    if (m < 0)
        return m;
    for (int q = 0; q < m; q++) {
        uint32_t j = x->widx[q], d = lo + x->wdoc[j];
        if (x->wpart[j] * x->mult <= tdm_htopk_score_thr(x->m->top))
            continue;
        for (size_t i = 0; i < ne; i++) {
            x->s[x->ord[i]] = x->wsc[(size_t)j * ne + i];
            x->sd[x->ord[i]] = d;
        }
        win_scores(x, ne, d);
        push(x, d);
    }
    return win_pass(x, ne);
}

static int walk(const ms *x)
{
    size_t nt = x->m->nt;
    float thr = tdm_htopk_score_thr(x->m->top);
    size_t ne = split(x, 0, thr);
    uint32_t d = least(x, ne);
    while (ne < nt && d != END) {
        if (ne + 1 == nt) { /* its postings and blocks that cannot beat thr passed first */
            mcur *c = &x->cs[x->ord[ne]];
            int rc = one_essential(x, c, ne, thr);
            if (rc)
                return rc;
            if ((d = c->d) == END)
                break;
        }
        int rc = window(x, ne, d);
        if (rc)
            return rc;
        float nthr = tdm_htopk_score_thr(x->m->top);
        if (nthr != thr)
            ne = split(x, ne, thr = nthr);
        d = least(x, ne);
    }
    return TDM_OK;
}

static size_t up16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

size_t tdm_hms_bytes(size_t nt, uint32_t maxbs)
{
    return up16(nt * sizeof(mcur)) + up16(nt * sizeof(uint32_t)) + up16(nt * sizeof(double)) +
           up16(nt * sizeof(float)) + up16(nt * sizeof(uint32_t)) +
           WIN * ((2 + nt) * sizeof(double) + nt * sizeof(float) + 2 * sizeof(uint32_t)) +
           WIN / 64 * sizeof(uint64_t) + nt * 256 * sizeof(double) +
           (3 * nt + 1) * maxbs * sizeof(uint32_t);
}

/* ord: terms by ascending bound; pre: their running sums. */
static void order(const ms *x)
{
    const float *b = x->m->bound;
    for (uint32_t t = 0; t < x->m->nt; t++) {
        uint32_t i = t;
        for (; i > 0 && b[x->ord[i - 1]] > b[t]; i--)
            x->ord[i] = x->ord[i - 1];
        x->ord[i] = t;
    }
    double sum = 0;
    for (size_t i = 0; i < x->m->nt; i++)
        x->pre[i] = sum += x->m->bound[x->ord[i]];
}

int tdm_hms_rank(const tdm_hms *m, void *mem)
{
    size_t nt = m->nt;
    char *p = mem;
    ms x = {.m = m, .cs = (mcur *)p};
    p += up16(nt * sizeof *x.cs);
    x.ord = (uint32_t *)p;
    p += up16(nt * sizeof *x.ord);
    x.pre = (double *)p;
    p += up16(nt * sizeof *x.pre);
    x.s = (float *)p;
    p += up16(nt * sizeof *x.s);
    x.sd = (uint32_t *)p;
    p += up16(nt * sizeof *x.sd);
    x.acc = (double *)p;
    p += WIN * sizeof *x.acc;
    x.wpart = (double *)p;
    p += WIN * sizeof *x.wpart;
    x.wpre = (double *)p;
    p += WIN * nt * sizeof *x.wpre;
    x.wdoc = (uint32_t *)p;
    p += WIN * sizeof *x.wdoc;
    x.wsc = (float *)p;
    p += WIN * nt * sizeof *x.wsc;
    x.widx = (uint32_t *)p;
    p += WIN * sizeof *x.widx;
    x.bits = (uint64_t *)p;
    p += WIN / 64 * sizeof *x.bits;
    double *bt = (double *)p;
    p += nt * 256 * sizeof *bt;
    x.dls = (uint32_t *)p;
    p += m->maxbs * sizeof *x.dls;
    memset(x.acc, 0, WIN * sizeof *x.acc);
    memset(x.bits, 0, WIN / 64 * sizeof *x.bits);
    /* a float sum of nt non-negative terms is within (nt - 1) 2^-24 of the
       real sum (relative); the double sums here add far less */
    x.mult = 1.0 + (double)(nt + 1) / 8388608.0;
    order(&x);
    for (size_t t = 0; t < nt; t++) {
        x.s[t] = 0.0f;
        x.sd[t] = END;
        int rc = cur_init(&x, &x.cs[t], (uint32_t)t, (uint32_t *)p + 3 * t * m->maxbs,
                          bt + t * 256);
        if (rc)
            return rc;
    }
    return walk(&x);
}
