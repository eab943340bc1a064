/* The host path (search_host.h): a small query ranked on the host.
 *
 * OR (and the pruning algorithms, whose exact answer is OR's) decodes and
 * scores every list a block at a time (search_host_dec.h), then sums term
 * at a time into a dense window of accumulators: for each window of
 * docids, every term's postings in it in term order, so each document's
 * sum is 0.0f + s_t0 + s_t1 ... in ascending term order, the kernels' order.
 * A window's touched documents go to the top k (search_host_topk.h) and
 * their accumulators back to 0.0f. No merge heap, no hash: a posting costs
 * one add, one store and one flag.
 *
 * AND filters the shortest list's blocks list by list (search_host_and.h).
 *
 * MaxScore, WAND and BMW prune with MaxScore's cursors (search_host_ms.h)
 * where that was faster than OR (want_ms): their exact answer is one top k,
 * OR's, whichever evaluator finds it. A one-term query of AND or a pruning
 * algorithm passes the blocks its k-th score rules out by their stored
 * bounds (search_host_one.h). Ranked OR stays exhaustive. */
#include <stdlib.h>
#include <string.h>

#include "plan/search_plan.h"
#include "plan/search_prof.h"
#include "query/bounds.h"
#include "search_host.h"
#include "search_host_and.h"
#include "search_host_dec.h"
#include "search_host_ms.h"
#include "search_host_one.h"
#include "search_host_score.h"
#include "search_host_topk.h"
#include "tandem.h"

/* Scratch that fits on the stack: no allocation for the queries the host
 * path is for at small k. */
#define STACK_BYTES 16384u
/* The accumulator window: 16 KiB of floats at most (L1), at least enough for
 * a small query's postings to share a few windows. */
#define WIN_MAX 4096u
#define WIN_MIN 256u
/* Terms whose lists' views fit on the stack (about 4 KiB). */
#define STACK_TERMS 16u

/* A query on the host: its lists, scoring, top k and scratch. */
typedef struct hq {
    const tdm_scorer *sc;
    const uint32_t *dl; /* document lengths */
    tdm_hlist *lists;   /* [nt] in term order */
    float *bound;       /* [nt] each term's score bound; NULL: none (no MaxScore) */
    int one;            /* one term, ranked by its blocks' bounds (search_host_one.h) */
    int stored;         /* the stored bounds bound the scoring (bounds.h) */
    size_t nt, npost;
    uint32_t maxbs;     /* the largest block of the lists' codecs */
    tdm_htopk top;
    tdm_err *err;
} hq;

/* ---- OR: every list decoded and scored, summed term at a time by windows */

typedef struct orscratch {
    uint32_t *docs;     /* [npost] every list's docids, back to back in term order */
    float *sc;          /* [npost] their scores */
    uint32_t *tfs;      /* [maxbs] a block's frequencies */
    uint32_t *dls;      /* [maxbs] its documents' lengths */
    size_t *pos, *end;  /* [nt] each term's cursor and end in docs */
    float *acc;         /* [win] 0.0f between windows */
    uint8_t *seen;      /* [win] 0 between windows */
    uint16_t *cand;     /* [win + 1] a window's touched documents (+ 1: each
                           posting writes its slot before the count moves) */
    uint32_t win;
} orscratch;

/* Block b of list t decoded and scored into docs and sc (s->tfs and s->dls
 * its scratch): *n postings. */
static int score_block(hq *x, orscratch *s, size_t t, uint32_t b, uint32_t *docs, float *sc,
                       uint32_t *n)
{
    const tdm_hlist *h = &x->lists[t];
    *n = tdm_hlist_block_len(h, b);
    int rc = tdm_hlist_docs(h, b, docs, x->err);
    if (!rc)
        rc = tdm_hlist_tfs(h, b, s->tfs, x->err);
    if (!rc)
        tdm_hscore_block(x->sc, t, x->dl, docs, s->tfs, *n, s->dls, sc);
    return rc;
}

static int decode_all(hq *x, orscratch *s)
{
    size_t off = 0;
    for (size_t t = 0; t < x->nt; t++) {
        s->pos[t] = off;
        for (uint32_t b = 0; b < x->lists[t].l.nblocks; b++) {
            uint32_t n;
            int rc = score_block(x, s, t, b, s->docs + off, s->sc + off, &n);
            if (rc)
                return rc;
            off += n;
        }
        s->end[t] = off;
    }
    return TDM_OK;
}

/* The documents in [lo, lo + win) of every list, summed in term order. */
static void or_window(hq *x, orscratch *s, uint32_t lo)
{
    uint64_t hi = (uint64_t)lo + s->win;
    uint32_t nc = 0;
    for (size_t t = 0; t < x->nt; t++) {
        size_t p = s->pos[t], e = s->end[t];
        for (; p < e && s->docs[p] < hi; p++) {
            uint32_t o = s->docs[p] - lo; /* every cursor is at or above lo */
            s->acc[o] = s->acc[o] + s->sc[p];
            s->cand[nc] = (uint16_t)o;
            nc += !s->seen[o];
            s->seen[o] = 1;
        }
        s->pos[t] = p;
    }
    for (uint32_t c = 0; c < nc; c++) {
        uint32_t o = s->cand[c];
        tdm_htopk_push(&x->top, tdm_htopk_key(s->acc[o], lo + o));
        s->acc[o] = 0.0f;
        s->seen[o] = 0;
    }
}

/* One term: each document's sum is its one score, so a block at a time,
 * keeping no posting (lay_out gives docs and sc a block): a batch call's
 * one-term query goes to the host at any size (plan/search_plan.h). */
static int rank_or_one(hq *x, orscratch *s)
{
    for (uint32_t b = 0; b < x->lists[0].l.nblocks; b++) {
        uint32_t n;
        int rc = score_block(x, s, 0, b, s->docs, s->sc, &n);
        if (rc)
            return rc;
        for (uint32_t i = 0; i < n; i++)
            tdm_htopk_push(&x->top, tdm_htopk_key(0.0f + s->sc[i], s->docs[i]));
    }
    return TDM_OK;
}

static int rank_or(hq *x, orscratch *s)
{
    if (x->nt == 1)
        return rank_or_one(x, s);
    int rc = decode_all(x, s);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < s->win; i++) {
        s->acc[i] = 0.0f;
        s->seen[i] = 0;
    }
    for (;;) {
        uint32_t lo = UINT32_MAX;
        int any = 0;
        for (size_t t = 0; t < x->nt; t++)
            if (s->pos[t] < s->end[t]) {
                uint32_t d = s->docs[s->pos[t]];
                lo = d < lo ? d : lo;
                any = 1;
            }
        if (!any)
            return TDM_OK;
        or_window(x, s, lo);
    }
}

/* ---- one query */

/* Scratch of a query, carved from one block: sizes first (mem NULL), then
 * the pointers. */
typedef struct carve {
    char *mem;
    size_t at;
} carve;

static void *take(carve *c, size_t bytes)
{
    void *p = c->mem ? c->mem + c->at : NULL;
    c->at += (bytes + 15) & ~(size_t)15;
    return p;
}

typedef struct scratch {
    uint64_t *topk;
    void *and;          /* AND's (search_host_and.h) */
    orscratch o;
    void *ms;           /* MaxScore's (search_host_ms.h) */
    void *one;          /* one term's (search_host_one.h) */
} scratch;

static void lay_out(carve *c, const hq *x, uint32_t k, int and, int or, scratch *s)
{
    size_t nt = x->nt;
    s->topk = take(c, tdm_htopk_words(k) * sizeof *s->topk);
    if (x->one) {
        s->one = take(c, tdm_hone_bytes(x->maxbs));
        return;
    }
    if (!and && !or) /* MaxScore (use_ms) */
        s->ms = take(c, tdm_hms_bytes(nt, x->maxbs));
    if (and)
        s->and = take(c, tdm_hand_bytes(nt, x->maxbs));
    if (or) {
        orscratch *o = &s->o;
        size_t kept = nt == 1 ? x->maxbs : x->npost; /* one term: a block (rank_or_one) */
        o->docs = take(c, kept * sizeof *o->docs);
        o->sc = take(c, kept * sizeof *o->sc);
        o->tfs = take(c, x->maxbs * sizeof *o->tfs);
        o->dls = take(c, x->maxbs * sizeof *o->dls);
        o->pos = take(c, nt * sizeof *o->pos);
        o->end = take(c, nt * sizeof *o->end);
        uint32_t w = WIN_MIN;
        while (w < WIN_MAX && w < x->npost)
            w *= 2;
        o->win = nt > 1 ? w : 0;
        o->acc = take(c, o->win * sizeof *o->acc);
        o->seen = take(c, o->win * sizeof *o->seen);
        o->cand = take(c, (o->win + 1) * sizeof *o->cand);
    }
}

/* One term by its blocks' bounds (x->one): AND matched every document of
 * the list, scored or not. */
static int rank_one(hq *x, const tdm_query *q, int and, void *mem)
{
    tdm_hone o = {.sc = x->sc, .dl = x->dl, .h = &x->lists[0], .weight = q->terms[0].weight,
                  .top = &x->top, .err = x->err};
    int rc = tdm_hone_rank(&o, mem);
    if (!rc && and)
        x->top.matched = x->lists[0].l.df;
    return rc;
}

static int rank(hq *x, const tdm_query *q, int alg, scratch *s, tdm_sout *out)
{
    /* AND needs every term: on a shard, one without postings here is
       absent from q (query.h), and no document matches */
    int and = alg == TDM_ALGO_AND || alg == TDM_ALGO_AND_OR, rc = TDM_OK;
    if (s->one)
        rc = rank_one(x, q, and, s->one);
    else if (and && !q->absent) {
        tdm_hand a = {.q = q, .sc = x->sc, .dl = x->dl, .lists = x->lists, .nt = x->nt,
                      .maxbs = x->maxbs, .top = &x->top, .err = x->err};
        rc = tdm_hand_rank(&a, s->and);
    }
    if (s->ms) {
        tdm_hms m = {.q = q, .sc = x->sc, .dl = x->dl, .lists = x->lists, .bound = x->bound,
                     .nt = x->nt, .maxbs = x->maxbs, .top = &x->top, .err = x->err};
        rc = tdm_hms_rank(&m, s->ms);
    } else if (!rc && !s->one &&
               (!and || (alg == TDM_ALGO_AND_OR && x->top.matched < x->top.k))) {
        tdm_htopk_reset(&x->top); /* the OR pass the device runs then */
        rc = rank_or(x, &s->o);
    }
    if (rc)
        return rc;
    out->n = tdm_htopk_finish(&x->top, out->keys);
    out->total = x->top.matched > UINT32_MAX ? UINT32_MAX : (uint32_t)x->top.matched;
    return TDM_OK;
}

/* The query's lists opened into x->lists, and the largest block among
 * their codecs. */
static int open_lists(hq *x, const tdm_ireader *r, const tdm_query *q)
{
    for (size_t t = 0; t < x->nt; t++) {
        int rc = tdm_hlist_open(&x->lists[t], r, q->terms[t].id, x->err);
        if (rc)
            return rc;
        uint32_t bs = x->lists[t].l.docs.block_size;
        x->maxbs = bs > x->maxbs ? bs : x->maxbs;
    }
    return TDM_OK;
}

/* alg MS_ANY: MaxScore at any size (tdm_search_host_maxscore) */
#define MS_ANY (-1)

static int want_ms(const hq *x, int alg, uint32_t k)
{
    return x->nt > 1 && (alg == MS_ANY || tdm_search_host_ms(alg, x->nt, x->npost, k));
}

/* x->bound is set only where want_ms held and the terms have bounds. */
static int use_ms(const hq *x)
{
    return x->bound != NULL;
}

static int run_lists(hq *x, const tdm_query *q, int alg, uint32_t k, tdm_sout *out)
{
    int and = alg == TDM_ALGO_AND || alg == TDM_ALGO_AND_OR;
    int or = alg != TDM_ALGO_AND && !use_ms(x);
    scratch s = {0};
    carve c = {0};
    lay_out(&c, x, k, and, or, &s);
    _Alignas(16) char stack[STACK_BYTES];
    c.mem = c.at <= sizeof stack ? stack : malloc(c.at);
    if (!c.mem)
        return tdm_err_set(x->err, TDM_ERR_NOMEM, "search: out of host memory for %zu "
                           "postings", x->npost);
    c.at = 0;
    lay_out(&c, x, k, and, or, &s);
    if (use_ms(x)) /* it prunes by the threshold: kept close to the k-th key */
        tdm_htopk_init_tight(&x->top, k, s.topk);
    else
        tdm_htopk_init(&x->top, k, s.topk);
    int rc = rank(x, q, alg, &s, out);
    if (c.mem != stack)
        free(c.mem);
    return rc;
}

/* x->bound: each term's score bound where MaxScore is wanted and the
 * stored bounds apply, in fewb or in *mem (the caller frees it); else NULL,
 * and OR answers. */
static int ms_bounds(hq *x, const tdm_ireader *r, const tdm_query *q, int alg, uint32_t k,
                     float *fewb, float **mem)
{
    x->bound = NULL;
    if (!want_ms(x, alg, k))
        return TDM_OK;
    float *b = x->nt <= STACK_TERMS ? fewb : (*mem = malloc(x->nt * sizeof *b));
    if (!b)
        return tdm_err_set(x->err, TDM_ERR_NOMEM, "search: out of host memory for %zu terms",
                           x->nt);
    if (tdm_hms_bounds(r, q, x->sc, x->lists, b))
        x->bound = b;
    return TDM_OK;
}

/* A one-term query ranked by its blocks' bounds (search_host_one.h): AND
 * (not where a shard lacks a term: nothing matches), AND-then-OR and the
 * pruning algorithms; ranked OR, the exhaustive baseline, and MaxScore at
 * any size (MS_ANY, the tests' evaluator) score every posting. */
static int one_term(const hq *x, const tdm_query *q, int alg)
{
    int want = alg == TDM_ALGO_AND_OR || tdm_search_prunes(alg) ||
               (alg == TDM_ALGO_AND && !q->absent);
    return x->nt == 1 && want && x->stored;
}

static int run(const tdm_ireader *r, const tdm_query *q, const tdm_scorer *sc, int alg,
               uint32_t k, tdm_sout *out, tdm_err *err)
{
    hq x = {.sc = sc, .dl = tdm_ireader_doclens(r), .nt = q->nterms, .err = err};
    for (size_t t = 0; t < x.nt; t++)
        x.npost += q->terms[t].df;
    tdm_hlist few[STACK_TERMS];
    float fewb[STACK_TERMS], *bmem = NULL;
    x.lists = x.nt <= STACK_TERMS ? few : malloc(x.nt * sizeof *x.lists);
    if (!x.lists)
        return tdm_err_set(err, TDM_ERR_NOMEM, "search: out of host memory for %zu terms",
                           x.nt);
    int rc = open_lists(&x, r, q);
    if (!rc) {
        x.stored = tdm_score_stored_bound(r, q, sc, 0, x.lists[0].l.max_score) >= 0;
        x.one = one_term(&x, q, alg);
    }
    if (!rc)
        rc = ms_bounds(&x, r, q, alg, k, fewb, &bmem);
    if (!rc)
        rc = run_lists(&x, q, alg, k, out);
    if (x.lists != few)
        free(x.lists);
    free(bmem);
    return rc;
}

static int search(const tdm_ireader *r, const tdm_query *q, const tdm_score_params *sp, int alg,
                  uint32_t k, tdm_sout *out, tdm_err *err)
{
    out->n = out->total = out->launches = 0;
    out->bytes_up = out->bytes_down = 0;
    if (k == 0 || q->nterms == 0)
        return TDM_OK;
    tdm_scorer sc;
    int rc = tdm_scorer_init(&sc, r, q, sp, err);
    if (!rc)
        rc = run(r, q, &sc, alg, k, out, err);
    tdm_scorer_free(&sc);
    return rc;
}

int tdm_search_host(const tdm_ireader *r, const tdm_query *q, const tdm_score_params *sp,
                    int alg, uint32_t k, tdm_sout *out, tdm_err *err)
{
    return search(r, q, sp, alg, k, out, err);
}

int tdm_search_host_maxscore(const tdm_ireader *r, const tdm_query *q,
                             const tdm_score_params *sp, uint32_t k, tdm_sout *out, tdm_err *err)
{
    return search(r, q, sp, MS_ANY, k, out, err);
}

void tdm_search_host_item(const tdm_ireader *r, tdm_sbq *it)
{
    /* profiled (search_prof.h): the host path as one host phase */
    tdm_sprof pf = {.on = tdm_sprof_on(), .salg = it->pl.salg, .k = it->k};
    double tp = pf.on ? (pf.t0 = tdm_sprof_now()) : 0;
    it->batch = 1;
    if (!it->so.keys && !(it->so.keys = malloc((size_t)it->k * sizeof *it->so.keys))) {
        it->rc = tdm_err_set(&it->err, TDM_ERR_NOMEM, "out of memory");
        return;
    }
    tdm_score_params sp = tdm_score_params_for(r, it->o.scoring, it->o.k1, it->o.b);
    it->rc = tdm_search_host(r, &it->q, &sp, it->pl.alg, it->k, &it->so, &it->err);
    tdm_sprof_host(&pf, "host path (decode, score, top k)", tp);
}
