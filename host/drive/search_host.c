/* The host path (search_host.h): a small query's lists decoded whole on the
 * host, ranked document at a time, its top k kept in a heap of k keys.
 *
 * OR merges the lists through a heap of their cursors ordered by (docid,
 * term), so a document's postings come out in term order and are summed in
 * that order, as the oracle's windows and the kernels sum them. AND walks
 * its shortest list and steps every other list's cursor to each of its
 * documents (the lists are short: the host path's postings are few), then
 * sums the document's postings in term order. */
#include <stdlib.h>
#include <string.h>

#include "plan/search_prof.h"
#include "search_host.h"
#include "tandem.h"

/* Postings and terms whose scratch fits on the stack (about 18 KiB): no
 * allocation for the queries the host path is for. */
#define STACK_POSTINGS 2048u
#define STACK_TERMS 64u

/* A query's decoded lists and cursors. */
typedef struct hlists {
    const tdm_scorer *sc;
    const uint32_t *dl;     /* document lengths */
    uint32_t *docs, *tfs;   /* every list back to back, in term order */
    size_t *pos, *end;      /* [nt] each term's cursor and end in docs */
    uint32_t *heap;         /* [nt] OR's cursors by (docid, term) */
    size_t nt;
} hlists;

/* The top k: a min-heap of the kernels' keys, the worst at h[0]. */
typedef struct htop {
    uint64_t *h;
    uint32_t n, k;
    uint64_t matched;
} htop;

static void top_down(uint64_t *h, uint32_t n, uint32_t i)
{
    uint64_t v = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1] < h[c])
            c++;
        if (h[c] >= v)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

/* Document d scored acc: a match, kept if it ranks among the k best. */
static void top_push(htop *t, uint32_t d, float acc)
{
    uint64_t key = (uint64_t)tdm_f2u(acc) << 32 | (uint32_t)~d;
    t->matched++;
    if (t->n < t->k) {
        uint32_t i = t->n++;
        for (; i > 0 && t->h[(i - 1) / 2] > key; i = (i - 1) / 2)
            t->h[i] = t->h[(i - 1) / 2];
        t->h[i] = key;
    } else if (key > t->h[0]) {
        t->h[0] = key;
        top_down(t->h, t->n, 0);
    }
}

/* The heap sorted in place, best first (each step moves the worst left to
 * the end). */
static void top_sort(htop *t)
{
    for (uint32_t m = t->n; m > 1; m--) {
        uint64_t w = t->h[0];
        t->h[0] = t->h[m - 1];
        t->h[m - 1] = w;
        top_down(t->h, m - 1, 0);
    }
}

static inline float score(const hlists *l, size_t t, size_t p, uint32_t d)
{
    return tdm_score_f(l->sc, t, l->tfs[p], l->dl[d]);
}

/* Cursor a before cursor b: smaller docid, then smaller term. */
static inline int cur_before(const hlists *l, uint32_t a, uint32_t b)
{
    uint32_t da = l->docs[l->pos[a]], db = l->docs[l->pos[b]];
    return da < db || (da == db && a < b);
}

static void cur_down(hlists *l, uint32_t n, uint32_t i)
{
    uint32_t *h = l->heap, v = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && cur_before(l, h[c + 1], h[c]))
            c++;
        if (!cur_before(l, h[c], v))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

/* Every document holding a term. */
static void rank_or(hlists *l, htop *top)
{
    uint32_t n = 0;
    for (size_t t = 0; t < l->nt; t++)
        if (l->pos[t] < l->end[t])
            l->heap[n++] = (uint32_t)t;
    for (uint32_t i = n / 2; i-- > 0;)
        cur_down(l, n, i);
    while (n) {
        uint32_t d = l->docs[l->pos[l->heap[0]]];
        float acc = 0.0f;
        do {
            uint32_t t = l->heap[0];
            acc = acc + score(l, t, l->pos[t], d);
            if (++l->pos[t] == l->end[t])
                l->heap[0] = l->heap[--n];
            cur_down(l, n, 0);
        } while (n && l->docs[l->pos[l->heap[0]]] == d);
        top_push(top, d, acc);
    }
}

/* Every document holding every term: the shortest list's documents, each
 * looked for in the others (cursors only move forward). */
static void rank_and(hlists *l, htop *top)
{
    size_t lead = 0;
    for (size_t t = 1; t < l->nt; t++)
        if (l->end[t] - l->pos[t] < l->end[lead] - l->pos[lead])
            lead = t;
    for (size_t p = l->pos[lead]; p < l->end[lead]; p++) {
        uint32_t d = l->docs[p];
        int all = 1;
        for (size_t t = 0; t < l->nt && all; t++) {
            if (t == lead)
                continue;
            size_t q = l->pos[t];
            while (q < l->end[t] && l->docs[q] < d)
                q++;
            l->pos[t] = q;
            if (q == l->end[t])
                return; /* a list ended: no later document has every term */
            all = l->docs[q] == d;
        }
        if (!all)
            continue;
        float acc = 0.0f;
        for (size_t t = 0; t < l->nt; t++)
            acc = acc + score(l, t, t == lead ? p : l->pos[t], d);
        top_push(top, d, acc);
    }
}

/* Decodes every list of q into l (its arrays laid out in mem). */
static int decode(const tdm_ireader *r, const tdm_query *q, hlists *l, size_t *start,
                  tdm_err *err)
{
    size_t off = 0;
    for (size_t t = 0; t < q->nterms; t++) {
        int rc = tdm_ireader_decode(r, q->terms[t].id, l->docs + off, l->tfs + off, err);
        if (rc)
            return rc;
        start[t] = off;
        off += q->terms[t].df;
        l->end[t] = off;
    }
    return TDM_OK;
}

/* One pass (AND or OR) from the lists' starts into top. */
static void pass(hlists *l, const size_t *start, int and, htop *top)
{
    memcpy(l->pos, start, l->nt * sizeof *start);
    top->n = 0;
    top->matched = 0;
    if (and)
        rank_and(l, top);
    else
        rank_or(l, top);
}

static int rank(const tdm_ireader *r, const tdm_query *q, const tdm_scorer *sc, int alg,
                uint32_t k, void *mem, tdm_sout *out, tdm_err *err)
{
    size_t nt = q->nterms, npost = 0;
    for (size_t t = 0; t < nt; t++)
        npost += q->terms[t].df;
    /* mem: docs, tfs [npost] each; pos, end, start [nt] each; heap [nt] */
    size_t *sz = mem;
    hlists l = {.sc = sc, .dl = tdm_ireader_doclens(r), .nt = nt};
    l.pos = sz;
    l.end = sz + nt;
    size_t *start = sz + 2 * nt;
    l.docs = (uint32_t *)(sz + 3 * nt);
    l.tfs = l.docs + npost;
    l.heap = l.tfs + npost;
    int rc = decode(r, q, &l, start, err);
    if (rc)
        return rc;
    htop top = {.h = out->keys, .k = k};
    /* AND needs every term: on a shard, one without postings here is
       absent from q (query.h), and no document matches */
    int and = alg == TDM_ALGO_AND || alg == TDM_ALGO_AND_OR;
    if (!(and && q->absent))
        pass(&l, start, and, &top);
    if (alg == TDM_ALGO_AND_OR && top.matched < k) /* the OR pass the device runs then */
        pass(&l, start, 0, &top);
    top_sort(&top);
    out->n = top.n;
    out->total = top.matched > UINT32_MAX ? UINT32_MAX : (uint32_t)top.matched;
    return TDM_OK;
}

int tdm_search_host(const tdm_ireader *r, const tdm_query *q, const tdm_score_params *sp,
                    int alg, uint32_t k, tdm_sout *out, tdm_err *err)
{
    out->n = out->total = out->launches = 0;
    out->bytes_up = out->bytes_down = 0;
    if (k == 0 || q->nterms == 0)
        return TDM_OK;
    tdm_scorer sc;
    int rc = tdm_scorer_init(&sc, r, q, sp, err);
    if (rc)
        return rc;
    size_t nt = q->nterms, npost = 0;
    for (size_t t = 0; t < nt; t++)
        npost += q->terms[t].df;
    size_t stack[(3 * STACK_TERMS * sizeof(size_t) + (2 * STACK_POSTINGS + STACK_TERMS) * 4) /
                 sizeof(size_t)];
    size_t bytes = 3 * nt * sizeof(size_t) + (2 * npost + nt) * 4;
    void *mem = bytes <= sizeof stack ? (void *)stack : malloc(bytes);
    if (!mem)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "search: out of host memory for %zu postings",
                         npost);
    else
        rc = rank(r, q, &sc, alg, k, mem, out, err);
    if (mem != (void *)stack)
        free(mem);
    tdm_scorer_free(&sc);
    return rc;
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
