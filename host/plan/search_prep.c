/* A query prepared for the search kernels on the host (sprep.h): the jobs
 * that decode its lists on the device, one segment each, its block bounds
 * (where the stored ones apply) and its term table. No posting is read on
 * the host. */
#include <stdlib.h>
#include <string.h>

#include "query/bounds.h"
#include "index/format.h"
#include "search_prof.h"
#include "sprep.h"
#include "tandem.h"

void tdm_sprep_free(tdm_sprep *p)
{
    free(p->terms);
    free(p->ids);
    tdm_decode_batch_free(&p->batch);
    free(p->bmax);
    free(p->bsrc);
    tdm_and_sel_free(&p->andsel);
    memset(p, 0, sizeof *p);
}

/* Where a term's block bounds come from when the index's stored bounds
 * apply (bounds.h): its list's quantized bounds and largest score, and the
 * term's weight. */
struct tdm_sbsrc {
    const uint8_t *maxq; /* NULL: one block, bound max_score */
    float max_score;
    uint32_t nblocks;
    double w;
    uint32_t entry;      /* the list's first block-table entry (its maxq's on the device) */
};

void tdm_sb_row(uint32_t *x, uint32_t entry, float max_score, double weight)
{
    uint64_t wb;
    memcpy(&wb, &weight, 8);
    x[TDM_SB_ENTRY] = entry;
    memcpy(&x[TDM_SB_MAXSCORE], &max_score, 4);
    x[TDM_SB_WT_LO] = (uint32_t)wb;
    x[TDM_SB_WT_HI] = (uint32_t)(wb >> 32);
}

void tdm_sprep_stored_rows(const tdm_sprep *p, uint32_t *sb)
{
    for (uint32_t t = 0; p->bsrc && t < p->nt; t++)
        tdm_sb_row(sb + (size_t)t * TDM_SB_W, p->bsrc[t].entry, p->bsrc[t].max_score,
                   p->bsrc[t].w);
}

/* The bounds of a term's blocks from the index's stored bounds into out:
 * O(blocks), nothing decoded. Returns the largest (the term's bound, as
 * tdm_sprep_host_order takes it). */
static float stored_bounds(const tdm_sbsrc *src, float *out)
{
    float m = 0.0f;
    if (src->maxq && src->nblocks > 256) {
        /* a block's stored bound is one of 256 quantized values: each
           computed once (the same function of the same inputs, so the same
           bits), then looked up a block (the H200's host spent ~14 us a
           query here, computing every block's) */
        float tab[256];
        for (unsigned v = 0; v < 256; v++)
            tab[v] = tdm_score_stored_scale(tdm_idx_block_bound(src->max_score, (uint8_t)v),
                                            src->w);
        for (uint32_t b = 0; b < src->nblocks; b++) {
            float v = tab[src->maxq[b]];
            out[b] = v;
            m = v > m ? v : m;
        }
        return m;
    }
    for (uint32_t b = 0; b < src->nblocks; b++) {
        float v = tdm_score_stored_scale(
            src->maxq ? tdm_idx_block_bound(src->max_score, src->maxq[b]) : src->max_score,
            src->w);
        out[b] = v;
        m = v > m ? v : m;
    }
    return m;
}

/* The largest of stored_bounds' values without the others: a block's bound
 * rises with its quantized value (products of positive floats and their
 * rounding are monotone), so it is the bound of the largest value, 255 in
 * the block of the list's best score (memchr finds it). */
static float stored_bound_max(const tdm_sbsrc *src)
{
    if (!src->maxq)
        return tdm_score_stored_scale(src->max_score, src->w);
    uint8_t top = 0;
    if (memchr(src->maxq, 255, src->nblocks))
        top = 255;
    else
        for (uint32_t b = 0; b < src->nblocks; b++)
            top = src->maxq[b] > top ? src->maxq[b] : top;
    float v = tdm_score_stored_scale(tdm_idx_block_bound(src->max_score, top), src->w);
    return v > 0.0f ? v : 0.0f;
}

const float *tdm_sprep_term_bounds(const tdm_sprep *p, uint32_t t, float *scratch)
{
    if (!p->bsrc)
        return p->bmax + p->terms[(size_t)t * TDM_SEARCH_TW + TDM_TW_BMAX];
    stored_bounds(&p->bsrc[t], scratch);
    return scratch;
}

int tdm_sprep_bounds_fill(tdm_sprep *p, tdm_err *err)
{
    if (!p->bsrc)
        return TDM_OK;
    if (!(p->bmax = malloc((p->nbmax ? p->nbmax : 1) * sizeof *p->bmax)))
        return tdm_err_set(err, TDM_ERR_NOMEM, "search: out of memory for %zu block bounds",
                           p->nbmax);
    for (uint32_t t = 0; t < p->nt; t++)
        stored_bounds(&p->bsrc[t], p->bmax + p->terms[(size_t)t * TDM_SEARCH_TW + TDM_TW_BMAX]);
    free(p->bsrc);
    p->bsrc = NULL;
    return TDM_OK;
}

/* defer: the block bounds' sources, not the bounds (tdm_sprep_bounds_fill). */
static int alloc_all(tdm_sprep *p, size_t npost, size_t nblocks, int defer, tdm_err *err)
{
    p->terms = calloc((size_t)p->nt * TDM_SEARCH_TW, sizeof *p->terms);
    p->ids = calloc(p->nt ? p->nt : 1, sizeof *p->ids);
    if (defer)
        p->bsrc = malloc((p->nt ? p->nt : 1) * sizeof *p->bsrc);
    else
        p->bmax = malloc((nblocks ? nblocks : 1) * sizeof *p->bmax);
    if (!p->terms || !p->ids || !(defer ? (void *)p->bsrc : (void *)p->bmax))
        return tdm_err_set(err, TDM_ERR_NOMEM, "search: out of memory for %zu postings", npost);
    p->npost = npost;
    p->nbmax = nblocks;
    return TDM_OK;
}

static int build(tdm_sprep *p, const tdm_ireader *r, const tdm_query *q,
                 const tdm_score_params *sp, tdm_bcache *bc, int defer, tdm_err *err);

int tdm_sprep_build(tdm_sprep *p, const tdm_ireader *r, const tdm_query *q,
                    const tdm_score_params *sp, tdm_err *err)
{
    return build(p, r, q, sp, NULL, 0, err);
}

int tdm_sprep_build_cached(tdm_sprep *p, const tdm_ireader *r, const tdm_query *q,
                           const tdm_score_params *sp, tdm_bcache *bc, tdm_err *err)
{
    return build(p, r, q, sp, bc, 0, err);
}

int tdm_sprep_build_defer(tdm_sprep *p, const tdm_ireader *r, const tdm_query *q,
                          const tdm_score_params *sp, tdm_bcache *bc, tdm_err *err)
{
    return build(p, r, q, sp, bc, 1, err);
}

static int build(tdm_sprep *p, const tdm_ireader *r, const tdm_query *q,
                 const tdm_score_params *sp, tdm_bcache *bc, int defer, tdm_err *err)
{
    memset(p, 0, sizeof *p);
    /* profiled (search_prof.h): the steps of a preparation, series "?" */
    tdm_sprof pf = {.on = tdm_sprof_on(), .salg = -1};
    double tp = pf.on ? (pf.t0 = tdm_sprof_now()) : 0;
    tdm_scorer sc;
    int rc = tdm_scorer_init(&sc, r, q, sp, err);
    tdm_sprof_host(&pf, "prep: scorer", tp);
    tp = pf.on ? tdm_sprof_now() : 0;
    if (rc)
        return rc;
    p->nt = (uint32_t)q->nterms;
    p->kind = sc.kind;
    p->c0 = sc.c0;
    p->c1 = sc.c1;
    p->device_bounds = q->nterms && tdm_score_stored_bound(r, q, &sc, 0, 1.0f) < 0;
    int cached = p->device_bounds && bc; /* the handle's cache of exact recomputed bounds */
    if (cached)
        p->device_bounds = 0;
    p->term_bounds = !p->device_bounds && !cached; /* word 5 set with the stored bounds */
    defer = defer && p->term_bounds; /* only the stored bounds wait */
    tdm_ilist *lists = calloc(q->nterms ? q->nterms : 1, sizeof *lists);
    tdm_decode_req *req = calloc(q->nterms ? q->nterms : 1, sizeof *req);
    size_t npost = 0, nblocks = 0;
    if (!lists || !req)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "search: out of memory");
    for (size_t t = 0; rc == TDM_OK && t < q->nterms; t++) {
        rc = tdm_ireader_list(r, q->terms[t].id, &lists[t], err);
        npost += lists[t].df;
        nblocks += lists[t].nblocks;
        req[t] = (tdm_decode_req){(uint32_t)q->terms[t].id, 0, TDM_DECODE_TO_END};
    }
    if (rc == TDM_OK)
        rc = tdm_decode_batch_build(r, req, q->nterms, &p->batch, err);
    if (rc == TDM_OK && p->batch.npostings != npost)
        rc = tdm_err_set(err, TDM_ERR_INTERNAL, "search: %llu postings to decode, lists hold %zu",
                         (unsigned long long)p->batch.npostings, npost);
    if (rc == TDM_OK)
        rc = alloc_all(p, npost, nblocks, defer, err);
    tdm_sprof_host(&pf, "prep: lists, decode jobs", tp);
    tp = pf.on ? tdm_sprof_now() : 0;
    size_t pos = 0, boff = 0;
    p->min_df = UINT32_MAX;
    for (size_t t = 0; rc == TDM_OK && t < q->nterms; t++) {
        const tdm_ilist *l = &lists[t];
        pos = p->batch.out[t];
        uint32_t *w = p->terms + t * TDM_SEARCH_TW;
        tdm_sbsrc src = {l->block_maxq, l->max_score, l->nblocks, q->terms[t].weight,
                         l->first_entry};
        if (cached)
            rc = tdm_bcache_bounds(bc, r, q, &sc, t, p->bmax + boff, err);
        else if (defer) {
            p->bsrc[t] = src;
            w[TDM_TW_BOUND] = tdm_f2u(stored_bound_max(&src));
        }
        else if (!p->device_bounds)
            w[TDM_TW_BOUND] = tdm_f2u(stored_bounds(&src, p->bmax + boff));
        w[TDM_TW_POS] = (uint32_t)pos;
        w[TDM_TW_DF] = l->df;
        w[TDM_TW_BSIZE] = l->docs.block_size;
        w[TDM_TW_BMAX] = (uint32_t)boff;
        w[TDM_TW_QW] = tdm_f2u(sc.qw[t]);
        p->ids[t] = (uint32_t)q->terms[t].id;
        p->max_block = l->docs.block_size > p->max_block ? l->docs.block_size : p->max_block;
        /* words 5 and 6 (bound, MaxScore order): tdm_search_order, on the device */
        p->min_df = l->df < p->min_df ? l->df : p->min_df;
        p->max_df = l->df > p->max_df ? l->df : p->max_df;
        boff += l->nblocks;
    }
    tdm_sprof_host(&pf, "prep: term table, stored bounds", tp);
    tp = pf.on ? tdm_sprof_now() : 0;
    /* AND's block selection table: O(terms), used only by ranked AND */
    if (rc == TDM_OK && q->nterms > 1)
        rc = tdm_and_sel_build_lists(r, q, lists, 0, &p->andsel, err);
    tdm_sprof_host(&pf, "prep: AND selection table", tp);
    if (rc == TDM_OK && (npost > UINT32_MAX || nblocks > UINT32_MAX))
        rc = tdm_err_set(err, TDM_ERR_LIMIT, "search: %zu postings in one query (at most %u)",
                         npost, UINT32_MAX);
    free(lists);
    free(req);
    tdm_scorer_free(&sc);
    if (rc)
        tdm_sprep_free(p);
    return rc;
}
