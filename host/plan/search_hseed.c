/* The compressed variant's seed of the shared threshold, made on the host
 * (search_seed.h, tdm_search_hseed): the compressed variant decodes no list
 * before its range kernel, so the device seed (cl/search_seed.cl, which
 * scores every decoded posting) cannot run; instead the host decodes the few
 * best blocks of each list.
 *
 * Why it is exact: a document's float score, summed from 0 in term order
 * over non-negative terms, is >= each of its terms' scores (float addition
 * is monotone), and a list's postings are distinct documents, so if k
 * postings of term t score >= x then k documents of the query score >= x:
 * x is a valid G (the range kernels compare it strictly, so documents that
 * score exactly G still reach the heaps). x is found by visiting the list's
 * blocks by descending block bound (the bounds the query prunes with, >=
 * every float score of their block), keeping the k best scores in a heap:
 * once the heap holds k scores and its least is >= the next block's bound,
 * no unvisited posting scores above it, so it is the list's k-th best score.
 * Stopped earlier (the cap below), the heap's least is the k-th best of the
 * postings visited: lower, still valid. */
#include <stdlib.h>
#include <string.h>

#include "query/bounds.h"
#include "codec/codec.h"
#include "search_hseed.h"
#include "search_plan.h"
#include "search_prof.h"
#include "sprep.h"
#include "tandem.h"

/* The k best scores: a min-heap of n <= k floats, the least at h[0]. */
static void best_push(float *h, uint32_t *n, uint32_t k, float v)
{
    uint32_t i;
    if (*n < k) {
        for (i = (*n)++; i > 0 && h[(i - 1) / 2] > v; i = (i - 1) / 2)
            h[i] = h[(i - 1) / 2];
        h[i] = v;
        return;
    }
    if (!(v > h[0]))
        return;
    for (i = 0;;) {
        uint32_t l = 2 * i + 1, m = i;
        float mv = v;
        if (l < k && h[l] < mv)
            mv = h[m = l];
        if (l + 1 < k && h[l + 1] < mv)
            m = l + 1;
        if (m == i)
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = v;
}

/* Blocks by descending bound (ties: the lower block first): a max-heap of
 * block numbers. */
static int blk_above(const float *bd, uint32_t a, uint32_t b)
{
    return bd[a] > bd[b] || (bd[a] == bd[b] && a < b);
}

static void blk_down(uint32_t *h, uint32_t n, const float *bd, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        if (l < n && blk_above(bd, h[l], h[m]))
            m = l;
        if (l + 1 < n && blk_above(bd, h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        uint32_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Scratch of one seed computation. */
typedef struct hs_work {
    float *best;      /* [k] */
    uint32_t *blk;    /* [largest block count] */
    float *bounds;    /* [largest block count]: a term's bounds not made yet */
    uint32_t *d, *f;  /* [largest block size] */
} hs_work;

/* Block b of list l decoded and scored into the heap; 0 when its postings
 * are not what the block table says (the range kernel would flag the
 * list as damaged; no seed then). */
static int score_block(const tdm_ireader *r, const tdm_ilist *l, uint32_t b,
                       const tdm_scorer *sc, hs_work *w, uint32_t *n, uint32_t k)
{
    const tdm_codec_ops *ops = tdm_codec_by_id(l->docs.codec);
    tdm_err e = {0};
    uint32_t len = tdm_encoded_block_len(&l->docs, b);
    if (!ops || len == 0 || ops->decode_block(&l->docs, b, w->d, &e) ||
        ops->decode_block(&l->freqs, b, w->f, &e)) {
        tdm_err_clear(&e);
        return 0;
    }
    uint64_t ndocs = tdm_ireader_info_get(r)->ndocs;
    const uint32_t *dl = tdm_ireader_doclens(r);
    if ((b > 0 && w->d[0] <= l->docs.bases[b]) ||
        (l->block_last && w->d[len - 1] != l->block_last[b]))
        return 0;
    for (uint32_t i = 0; i < len; i++) {
        if (w->d[i] >= ndocs || (i && w->d[i] <= w->d[i - 1]) || w->f[i] == UINT32_MAX)
            return 0;
        float s = tdm_score_f(sc, 0, w->f[i] + 1, dl[w->d[i]]);
        if (!(s >= 0)) /* NaN: no order to trust */
            return 0;
        best_push(w->best, n, k, s);
    }
    return 1;
}

/* The k-th best float score of list `id` (bounds[nb] its blocks' bounds,
 * sc its scorer for term 0), or 0 with none: fewer than k postings, a
 * damaged block, or none above `floor` (another term's value: once the next
 * block's bound is <= floor, this term's k-th score cannot pass it). */
static int term_kth(const tdm_ireader *r, uint64_t id, const float *bounds,
                    const tdm_scorer *sc, uint32_t k, float floor, hs_work *w, float *out)
{
    tdm_ilist l;
    tdm_err e = {0};
    if (tdm_ireader_list(r, id, &l, &e)) {
        tdm_err_clear(&e);
        return 0;
    }
    uint32_t nb = l.nblocks, bs = l.docs.block_size;
    if (l.df < k || nb == 0 || bs == 0)
        return 0;
    for (uint32_t b = 0; b < nb; b++)
        w->blk[b] = b;
    for (uint32_t i = nb / 2; i-- > 0;)
        blk_down(w->blk, nb, bounds, i);
    uint32_t m = nb, n = 0, used = 0;
    /* the most blocks a term decodes (runtime/tune_table.h says why) */
    uint32_t cap = TDM_TUNE_HSEED_K_TIMES * (k / bs + 1) + TDM_TUNE_HSEED_EXTRA_BLOCKS;
    while (m > 0 && used < cap) {
        uint32_t b = w->blk[0];
        if (n == k && w->best[0] >= bounds[b])
            break;
        if (bounds[b] <= floor)
            return 0;
        w->blk[0] = w->blk[--m];
        blk_down(w->blk, m, bounds, 0);
        if (!score_block(r, &l, b, sc, w, &n, k))
            return 0;
        used++;
    }
    if (n < k)
        return 0;
    *out = w->best[0];
    return 1;
}

static void work_free(hs_work *w)
{
    free(w->best);
    free(w->blk);
    free(w->bounds);
    free(w->d);
    free(w->f);
}

/* The scratch of term_kth for k and the query's largest list (once). */
static int work_alloc(hs_work *w, uint32_t k, uint32_t maxnb, uint32_t maxbs, tdm_err *err)
{
    if (w->best)
        return TDM_OK;
    w->best = malloc((size_t)k * sizeof(float));
    w->blk = malloc((maxnb ? maxnb : 1) * 4ull);
    w->bounds = malloc((maxnb ? maxnb : 1) * 4ull);
    w->d = malloc((maxbs ? maxbs : 1) * 4ull);
    w->f = malloc((maxbs ? maxbs : 1) * 4ull);
    if (w->best && w->blk && w->bounds && w->d && w->f)
        return TDM_OK;
    work_free(w);
    *w = (hs_work){0};
    return tdm_err_set(err, TDM_ERR_NOMEM, "search seed: out of memory for k = %u", k);
}

/* Terms of a query the seed's tables hold on the stack. */
#define HSEED_STACK_TERMS 64u

int tdm_search_hseed(const tdm_sprep *p, const tdm_ireader *r, struct tdm_bcache *bc,
                     uint32_t k, uint32_t *seed, tdm_err *err)
{
    *seed = 0;
    if (k == 0 || p->nt == 0 || p->device_bounds) /* no host bounds to order blocks by */
        return TDM_OK;
    /* each term's bound (the largest of its block bounds) */
    float tb_stack[HSEED_STACK_TERMS];
    uint32_t order_stack[HSEED_STACK_TERMS];
    int heap = p->nt > HSEED_STACK_TERMS;
    float *tb = heap ? malloc((size_t)p->nt * sizeof *tb) : tb_stack;
    uint32_t *order = heap ? malloc((size_t)p->nt * sizeof *order) : order_stack;
    uint32_t maxnb = 0, maxbs = 0;
    if (!tb || !order) {
        free(heap ? tb : NULL);
        free(heap ? order : NULL);
        return tdm_err_set(err, TDM_ERR_NOMEM, "search seed: out of memory");
    }
    float g = 0; /* the best value so far */
    int any = 0;
    for (uint32_t t = 0; t < p->nt; t++) {
        const uint32_t *w = p->terms + (size_t)t * TDM_SEARCH_TW;
        uint32_t bs = w[TDM_TW_BSIZE];
        uint32_t nb = bs ? (uint32_t)(((uint64_t)w[TDM_TW_DF] + bs - 1) / bs) : 0;
        float m = 0, v;
        if (p->term_bounds) /* word 5: the same largest block bound */
            m = tdm_u2f(w[TDM_TW_BOUND]);
        else
            for (uint32_t b = 0; b < nb; b++)
                m = p->bmax[w[TDM_TW_BMAX] + b] > m ? p->bmax[w[TDM_TW_BMAX] + b] : m;
        tb[t] = m;
        order[t] = t;
        maxnb = nb > maxnb ? nb : maxnb;
        maxbs = w[TDM_TW_BSIZE] > maxbs ? w[TDM_TW_BSIZE] : maxbs;
        if (w[TDM_TW_DF] >= k && bc &&
            tdm_bcache_kth_get(bc, p->kind, p->c0, p->c1, p->ids[t], tdm_u2f(w[TDM_TW_QW]), k,
                               &v)) {
            tb[t] = -1; /* known: not computed again */
            if (v >= 0 && (!any || v > g)) {
                g = v;
                any = 1;
            }
        }
    }
    /* the others by descending bound: a term whose bound is <= the best
       value so far cannot raise it (its k-th score is below its bound) */
    for (uint32_t i = 1; i < p->nt; i++) {
        uint32_t t = order[i], j = i;
        for (; j > 0 && tb[order[j - 1]] < tb[t]; j--)
            order[j] = order[j - 1];
        order[j] = t;
    }
    hs_work wk = {0}; /* made for the first term computed: none, once all are cached */
    int rc = TDM_OK;
    for (uint32_t i = 0; rc == TDM_OK && i < p->nt; i++) {
        uint32_t t = order[i];
        const uint32_t *w = p->terms + (size_t)t * TDM_SEARCH_TW;
        if (tb[t] < 0 || w[TDM_TW_DF] < k || (any && tb[t] <= g))
            continue;
        if ((rc = work_alloc(&wk, k, maxnb, maxbs, err)) != TDM_OK)
            break;
        /* this term's block bounds, made for it alone where the preparation
           left them (tdm_sprep_build_defer): with the k-th scores cached,
           rarely */
        const float *bounds = tdm_sprep_term_bounds(p, t, wk.bounds);
        float qw = tdm_u2f(w[TDM_TW_QW]), v;
        tdm_scorer sc = {.kind = p->kind, .c0 = p->c0, .c1 = p->c1, .nterms = 1, .qw = &qw};
        /* with a cache, the term's whole value, kept for every later query
           of the term (no floor: where the floor would stop, the value is
           below the best so far and changes nothing) */
        float floor = any && !bc ? g : -1.0f;
        if (!term_kth(r, p->ids[t], bounds, &sc, k, floor, &wk, &v))
            continue;
        if (bc)
            tdm_bcache_kth_put(bc, p->kind, p->c0, p->c1, p->ids[t], qw, k, v);
        if (!any || v > g) {
            g = v;
            any = 1;
        }
    }
    work_free(&wk);
    if (heap) {
        free(tb);
        free(order);
    }
    if (rc == TDM_OK && any && g > 0)
        *seed = tdm_f2u(g);
    return rc;
}

/* The rule (the row's constants: runtime/tune_table.h says why): on the
 * compressed variant k >= hseed_min_k, where each range must fill its own
 * heap of k before it prunes; any k on a GPU's plan (groups of ranges of a
 * few documents that never fill a heap; the device seed's rule) and on
 * plans of hseed_min_ranges ranges or more; on the decoded ones in a batch
 * always, alone below the row's hseed_alone_below_k. */
int tdm_search_hseeded(const tdm_splan *pl, int salg, uint32_t k, int batched)
{
    int prunes = salg == TDM_SALG_WAND || salg == TDM_SALG_BMW || salg == TDM_SALG_MAXSCORE;
    int zr = pl->variant == TDM_VARIANT_COMPRESSED;
    int group_or = salg == TDM_SALG_OR && pl->variant == TDM_VARIANT_GROUP;
    if (!group_or && !prunes)
        return 0;
    /* TANDEM_ZR_SEED: 0 never, 1 always (for A/B runs), unset the rule */
    if (pl->zr_seed != TDM_TUNE_RULE)
        return pl->zr_seed == TDM_TUNE_ON;
    const tdm_tune_row *rw = pl->row ? pl->row : tdm_tune_row_get(TDM_KIND_OTHER);
    if (group_or) /* in a batch call: its lone runs' seeds overlap the device */
        return batched && k >= rw->hseed_min_k;
    if (!zr)
        return batched || k < rw->hseed_alone_below_k;
    return k >= rw->hseed_min_k || pl->local > 1 || pl->ranges >= rw->hseed_min_ranges;
}

int tdm_search_hseed_plan(tdm_sprep *p, const tdm_ireader *r, struct tdm_bcache *bc,
                          const tdm_splan *pl, int salg, uint32_t k, tdm_err *err)
{
    if (!pl->hseeded || p->nt == 0)
        return TDM_OK;
    /* profiled (search_prof.h, TANDEM_SEARCH_PROFILE): "host: host seed" */
    tdm_sprof pf = {.on = tdm_sprof_on(), .salg = salg, .k = k};
    if (pf.on)
        pf.t0 = tdm_sprof_now();
    uint32_t g;
    int rc = tdm_search_hseed(p, r, bc, k, &g, err);
    /* scores >= 0: float bits order as integers */
    if (rc == TDM_OK && g > p->terms[TDM_TW_SHARED])
        p->terms[TDM_TW_SHARED] = g;
    tdm_sprof_host(&pf, "host seed", pf.t0);
    return rc;
}
