/* The range kernel as C (prune_sim.h). */
#include "prune_sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drive/search.h"
#include "drive/search_seed.h"
#include "plan/search_hseed.h"
#include "tandem.h"

/* ---- OpenCL C to C */
typedef uint32_t uint;
#define __kernel
#define __global
#define __local
#define cl_khr_fp64 1
#define TDM_NV_PTX 0
static size_t sim_gid;
#define get_global_id(d) sim_gid
#define get_local_id(d) 0u
#define get_local_size(d) 1u
#define barrier(x)
#define CLK_GLOBAL_MEM_FENCE 0
#define CLK_LOCAL_MEM_FENCE 0
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
static float as_float(uint u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static uint as_uint(float f)
{
    uint u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static uint atomic_max(uint *p, uint v)
{
    uint o = *p;
    if (v > o)
        *p = v;
    return o;
}
static float tdm_fmul(float a, float b) { return a * b; }
static float tdm_fadd(float a, float b) { return a + b; }
static prune_counts sim_c;
#define TDM_SR_COUNT(what, n) (sim_c.what += (n))
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#include "../cl/search_range.cl"
#pragma GCC diagnostic pop

/* ---- the host side */

static int desc_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

typedef struct sim_bufs {
    uint32_t *docs, *freqs, *terms, *cur, *ord, *hd, *hn;
    float *bmax, *hs;
    uint64_t *all;
} sim_bufs;

static void bufs_free(sim_bufs *b)
{
    free(b->docs);
    free(b->freqs);
    free(b->terms);
    free(b->cur);
    free(b->ord);
    free(b->hd);
    free(b->hn);
    free(b->bmax);
    free(b->hs);
    free(b->all);
}

/* The query's lists decoded into their segments; bounds, order (and seed). */
static int prepare(const tdm_ireader *r, const tdm_query *q, const tdm_sprep *p,
                   const prune_opts *o, sim_bufs *b, tdm_err *err)
{
    size_t np = p->npost ? p->npost : 1, nb = p->nbmax ? p->nbmax : 1;
    b->docs = malloc(np * 4);
    b->freqs = malloc(np * 4);
    b->terms = malloc((size_t)(p->nt ? p->nt : 1) * TDM_SEARCH_TW * 4);
    b->bmax = malloc(nb * 4);
    if (!b->docs || !b->freqs || !b->terms || !b->bmax)
        return tdm_err_set(err, TDM_ERR_NOMEM, "sim: out of memory");
    for (uint32_t t = 0; t < p->nt; t++) {
        int rc = tdm_ireader_decode(r, q->terms[t].id, b->docs + p->batch.out[t],
                                    b->freqs + p->batch.out[t], err);
        if (rc)
            return rc;
    }
    memcpy(b->terms, p->terms, (size_t)p->nt * TDM_SEARCH_TW * 4);
    const uint32_t *dl = tdm_ireader_doclens(r);
    if (p->device_bounds) {
        for (sim_gid = 0; sim_gid < p->nbmax; sim_gid++)
            tdm_search_bounds(b->docs, b->freqs, b->terms, dl,
                              (uint)tdm_ireader_info_get(r)->ndocs, b->bmax, p->nt,
                              (uint)p->nbmax, (uint)p->kind, p->c0, p->c1);
    } else {
        memcpy(b->bmax, p->bmax, p->nbmax * 4);
    }
    tdm_search_order(b->terms, b->bmax, p->nt);
    if (o->seed == 2) { /* the compressed variant's host seed (search_hseed.c) */
        uint32_t g;
        int rc = tdm_search_hseed(p, r, NULL, o->k, &g, err);
        if (rc)
            return rc;
        b->terms[TDM_TW_SHARED] = g;
    } else if (o->seed) {
        uint32_t g;
        if (tdm_search_seed_ref(b->terms, p->nt, b->docs, b->freqs, dl, (uint32_t)p->kind, p->c0,
                                p->c1, o->k, &g))
            return tdm_err_set(err, TDM_ERR_NOMEM, "sim: out of memory");
        b->terms[TDM_TW_SHARED] = g;
        sim_c.seeded += p->npost;
    }
    return TDM_OK;
}

/* Every range in waves, then the merge. */
static int run_ranges(const tdm_ireader *r, const tdm_sprep *p, const prune_opts *o,
                      sim_bufs *b, uint64_t *keys, uint32_t *n, tdm_err *err)
{
    uint32_t ndocs = (uint32_t)tdm_ireader_info_get(r)->ndocs;
    uint32_t want = o->ranges ? o->ranges : 1;
    uint32_t rlen = (uint32_t)(((uint64_t)ndocs + want - 1) / want);
    rlen = rlen ? rlen : 1;
    uint32_t nr = (uint32_t)(((uint64_t)ndocs + rlen - 1) / rlen), cap = min(o->k, rlen);
    nr = nr ? nr : 1;
    size_t cells = (size_t)nr * (p->nt ? p->nt : 1), heap = (size_t)nr * cap;
    b->cur = malloc(cells * 4);
    b->ord = malloc(cells * 4);
    b->hs = malloc(heap * 4);
    b->hd = malloc(heap * 4);
    b->hn = calloc(nr, 4);
    b->all = malloc(heap * 8);
    if (!b->cur || !b->ord || !b->hs || !b->hd || !b->hn || !b->all)
        return tdm_err_set(err, TDM_ERR_NOMEM, "sim: out of memory");
    uint32_t seed = b->terms[TDM_TW_SHARED], vis = seed, wave_max = seed, gate = 0;
    uint32_t wave = o->wave ? o->wave : 1;
    for (uint32_t i = 0; i < nr; i++) {
        if (i % wave == 0)
            vis = max(vis, wave_max);
        b->terms[TDM_TW_SHARED] = o->share ? vis : seed;
        sim_gid = i;
        tdm_search_range(b->docs, b->freqs, b->terms, b->bmax, tdm_ireader_doclens(r), b->cur,
                         b->ord, b->hs, b->hd, b->hn, p->nt, nr, rlen, ndocs, cap,
                         (uint)o->salg, (uint)p->kind, p->c0, p->c1, &gate, 0);
        wave_max = max(wave_max, b->terms[TDM_TW_SHARED]);
    }
    size_t m = 0;
    for (uint32_t i = 0; i < nr; i++)
        for (uint32_t j = 0; j < b->hn[i]; j++) {
            size_t x = (size_t)i * cap + j;
            b->all[m++] = (uint64_t)as_uint(b->hs[x]) << 32 | (uint32_t)~b->hd[x];
        }
    qsort(b->all, m, 8, desc_key);
    *n = (uint32_t)min(m, (size_t)o->k);
    memcpy(keys, b->all, (size_t)*n * 8);
    return TDM_OK;
}

int prune_sim(const tdm_ireader *r, const tdm_query *q, const tdm_score_params *sp,
              const prune_opts *o, uint64_t *keys, uint32_t *n, prune_counts *c, tdm_err *err)
{
    tdm_sprep p;
    *n = 0;
    int rc = tdm_sprep_build(&p, r, q, sp, err);
    if (rc)
        return rc;
    sim_bufs b = {0};
    memset(&sim_c, 0, sizeof sim_c);
    sim_c.decoded = p.npost;
    if (p.nt)
        rc = prepare(r, q, &p, o, &b, err);
    if (rc == TDM_OK && p.nt)
        rc = run_ranges(r, &p, o, &b, keys, n, err);
    c->decoded += sim_c.decoded;
    c->seeded += sim_c.seeded;
    c->scored += sim_c.scored;
    c->docs += sim_c.docs;
    c->pushed += sim_c.pushed;
    c->skips += sim_c.skips;
    bufs_free(&b);
    tdm_sprep_free(&p);
    return rc;
}
