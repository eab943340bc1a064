/* The top-k kernels of every search (cl/search_merge.cl): tdm_search_merge
 * and one tdm_search_select stage, and their small-k kernels where they
 * apply (k <= 16, few keys), against a plain-C reference (sort every
 * candidate's key, keep the best k), on every device, with ties in score,
 * empty and full heaps, and more or fewer candidates than k. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "drive/search.h"
#include "runtime/runtime.h"
#include "testutil.h"

typedef struct mcase {
    uint32_t nranges, cap, k, pow2;
    float *hs;
    uint32_t *hd, *hn;
} mcase;

static uint64_t key_of(float s, uint32_t d)
{
    uint32_t u;
    memcpy(&u, &s, 4);
    return ((uint64_t)u << 32) | (0xffffffffu - d);
}

static int desc_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Heaps r0 .. r1's keys, best first, into *keys (malloc'd); returns how many. */
static uint32_t ref_keys(const mcase *c, uint32_t r0, uint32_t r1, uint64_t **keys)
{
    uint32_t n = 0;
    *keys = malloc(((size_t)(r1 - r0) * c->cap + 1) * 8);
    assert_non_null(*keys);
    for (uint32_t r = r0; r < r1; r++)
        for (uint32_t j = 0; j < c->hn[r]; j++)
            (*keys)[n++] = key_of(c->hs[r * c->cap + j], c->hd[r * c->cap + j]);
    qsort(*keys, n, 8, desc_key);
    return n;
}

static void mcase_make(tdm_rng *r, uint32_t k, mcase *c)
{
    c->k = k;
    c->pow2 = 1;
    while (c->pow2 < k)
        c->pow2 <<= 1;
    uint32_t most = tdm_test_small() ? 300 : 3000;
    c->nranges = 1 + (uint32_t)(tdm_rng_next(r) % most);
    c->cap = 1 + (uint32_t)(tdm_rng_next(r) % (k < 20 ? k : 20));
    size_t n = (size_t)c->nranges * c->cap;
    c->hs = calloc(n, 4);
    c->hd = calloc(n, 4);
    c->hn = calloc(c->nranges, 4);
    assert_true(c->hs && c->hd && c->hn);
    int empty = tdm_rng_next(r) % 4 == 0, full = tdm_rng_next(r) % 4 == 0;
    uint32_t doc = (uint32_t)(tdm_rng_next(r) % 1000); /* distinct docids */
    for (uint32_t g = 0; g < c->nranges; g++) {
        c->hn[g] = empty && g % 3 ? 0 : full ? c->cap : (uint32_t)(tdm_rng_next(r) % (c->cap + 1));
        for (uint32_t j = 0; j < c->hn[g]; j++) {
            /* scores of a few values: many ties, broken by the docid */
            c->hs[g * c->cap + j] = (float)(tdm_rng_next(r) % 16) * 0.25f;
            c->hd[g * c->cap + j] = doc;
            doc += 1 + (uint32_t)(tdm_rng_next(r) % 3);
        }
    }
}

static void mcase_free(mcase *c)
{
    free(c->hs);
    free(c->hd);
    free(c->hn);
}

static cl_mem buffer(tdm_device *d, const void *src, size_t bytes)
{
    cl_mem m = NULL;
    tdm_err err = {0};
    if (tdm_buffer_create(d, CL_MEM_READ_WRITE, bytes < 8 ? 8 : bytes, NULL, &m, &err) != TDM_OK ||
        (src && tdm_upload(d, m, 0, bytes, src, 0, NULL, NULL, &err) != TDM_OK))
        fail_msg("buffer: %s", tdm_err_msg(&err));
    return m;
}

static void launch(tdm_device *d, const char *name, const tdm_karg *a, cl_uint n, size_t groups)
{
    tdm_err err = {0};
    size_t wg = tdm_search_merge_local(d);
    cl_event ev = NULL;
    if (tdm_kernel_launch(d, name, a, n, groups * wg, wg, 0, NULL, &ev, &err) != TDM_OK)
        fail_msg("%s on %s: %s", name, d->info.name, tdm_err_msg(&err));
    clWaitForEvents(1, &ev);
    clReleaseEvent(ev);
}

static void download(tdm_device *d, cl_mem m, size_t bytes, void *dst)
{
    tdm_err err = {0};
    if (tdm_download(d, m, 0, bytes, dst, 0, NULL, NULL, &err) != TDM_OK)
        fail_msg("download: %s", tdm_err_msg(&err));
}

/* tdm_search_merge: the query's top k, sorted, and the header. */
static void check_merge(tdm_device *d, const char *kn, const mcase *c, cl_mem hs, cl_mem hd,
                        cl_mem hn)
{
    uint32_t status = 0x5a, zero = 0, nr = c->nranges, cap = c->cap, k = c->k, p2 = c->pow2;
    cl_mem out = buffer(d, NULL, ((size_t)p2 + 2) * 8), outn = buffer(d, NULL, 16);
    cl_mem st = buffer(d, &status, 4);
    tdm_karg a[] = {TDM_KARG_MEM(&hs),  TDM_KARG_MEM(&hd),  TDM_KARG_MEM(&hn),
                    TDM_KARG_U32(&zero), TDM_KARG_U32(&nr), TDM_KARG_U32(&cap),
                    TDM_KARG_U32(&k),   TDM_KARG_U32(&p2),  TDM_KARG_MEM(&out),
                    TDM_KARG_MEM(&outn), TDM_KARG_MEM(&st)};
    launch(d, kn, a, sizeof a / sizeof *a, 1);
    uint64_t *got = malloc(((size_t)p2 + 2) * 8), *want;
    assert_non_null(got);
    download(d, out, ((size_t)p2 + 2) * 8, got);
    uint32_t total = ref_keys(c, 0, nr, &want), m = total < k ? total : k;
    if ((uint32_t)got[0] != m || (uint32_t)(got[0] >> 32) != total || got[1] != status)
        fail_msg("%s on %s (ranges %u cap %u k %u): header %u/%u/%u, want %u/%u/%u", kn,
                 d->info.name, nr, cap, k, (uint32_t)got[0], (uint32_t)(got[0] >> 32),
                 (uint32_t)got[1], m, total, status);
    for (uint32_t i = 0; i < p2; i++)
        if (got[2 + i] != (i < m ? want[i] : 0))
            fail_msg("%s on %s (ranges %u cap %u k %u): key %u is %016llx, want %016llx", kn,
                     d->info.name, nr, cap, k, i, (unsigned long long)got[2 + i],
                     (unsigned long long)(i < m ? want[i] : 0));
    free(got);
    free(want);
    clReleaseMemObject(out);
    clReleaseMemObject(outn);
    clReleaseMemObject(st);
}

/* One tdm_search_select stage: each group's slice's top k, as a set. */
static void check_select(tdm_device *d, const char *kn, const mcase *c, cl_mem hs, cl_mem hd,
                         cl_mem hn, uint32_t per)
{
    uint32_t zero = 0, nr = c->nranges, cap = c->cap, k = c->k;
    uint32_t ng = (nr + per - 1) / per;
    cl_mem os = buffer(d, NULL, (size_t)ng * k * 4), od = buffer(d, NULL, (size_t)ng * k * 4);
    cl_mem on = buffer(d, NULL, (size_t)ng * 4);
    tdm_karg a[] = {TDM_KARG_MEM(&hs),  TDM_KARG_MEM(&hd),  TDM_KARG_MEM(&hn),
                    TDM_KARG_U32(&zero), TDM_KARG_U32(&nr), TDM_KARG_U32(&cap),
                    TDM_KARG_U32(&k),   TDM_KARG_U32(&per), TDM_KARG_MEM(&os),
                    TDM_KARG_MEM(&od),  TDM_KARG_MEM(&on),  TDM_KARG_U32(&zero)};
    launch(d, kn, a, sizeof a / sizeof *a, ng);
    float *gs = malloc((size_t)ng * k * 4);
    uint32_t *gd = malloc((size_t)ng * k * 4), *gn = malloc((size_t)ng * 4);
    uint64_t *keys = malloc((size_t)k * 8);
    assert_true(gs && gd && gn && keys);
    download(d, os, (size_t)ng * k * 4, gs);
    download(d, od, (size_t)ng * k * 4, gd);
    download(d, on, (size_t)ng * 4, gn);
    for (uint32_t g = 0; g < ng; g++) {
        uint32_t r1 = nr - g * per > per ? (g + 1) * per : nr;
        uint64_t *want;
        uint32_t total = ref_keys(c, g * per, r1, &want), m = total < k ? total : k;
        if (gn[g] != m)
            fail_msg("%s on %s (ranges %u cap %u k %u per %u): group %u wrote %u, want %u",
                     kn, d->info.name, nr, cap, k, per, g, gn[g], m);
        for (uint32_t i = 0; i < m; i++)
            keys[i] = key_of(gs[(size_t)g * k + i], gd[(size_t)g * k + i]);
        qsort(keys, m, 8, desc_key);
        for (uint32_t i = 0; i < m; i++)
            if (keys[i] != want[i])
                fail_msg("%s on %s (ranges %u cap %u k %u per %u): group %u key %u is "
                         "%016llx, want %016llx", kn, d->info.name, nr, cap, k, per, g, i,
                         (unsigned long long)keys[i], (unsigned long long)want[i]);
        free(want);
    }
    free(gs);
    free(gd);
    free(gn);
    free(keys);
    clReleaseMemObject(os);
    clReleaseMemObject(od);
    clReleaseMemObject(on);
}

static void merge_vs_ref(void **state)
{
    tdm_engine *eng = *state;
    /* 1000: sorted in local memory; 3000: in global memory (TDM_MERGE_LKEYS) */
    static const uint32_t ks[] = {1, 2, 3, 10, 16, 17, 64, 1000, 3000};
    tdm_rng r;
    tdm_rng_seed(&r, 2718);
    int rounds = tdm_test_small() ? 2 : 6, smalls = 0;
    for (int round = 0; round < rounds; round++)
        for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
            mcase c;
            mcase_make(&r, ks[ki], &c);
            size_t n = (size_t)c.nranges * c.cap;
            for (int dv = 0; dv < tdm_engine_device_count(eng); dv++) {
                tdm_device *d = tdm_engine_device(eng, dv);
                cl_mem hs = buffer(d, c.hs, n * 4), hd = buffer(d, c.hd, n * 4);
                cl_mem hn = buffer(d, c.hn, (size_t)c.nranges * 4);
                size_t wg = tdm_search_merge_local(d);
                uint32_t per = 1 + (uint32_t)(tdm_rng_next(&r) % 200);
                check_merge(d, "tdm_search_merge", &c, hs, hd, hn);
                check_select(d, "tdm_search_select", &c, hs, hd, hn, per);
                /* the small-k kernels where the search would take them */
                if (tdm_search_small_fits(d, wg, c.k, (uint64_t)c.nranges * c.cap)) {
                    check_merge(d, "tdm_search_merge_small", &c, hs, hd, hn);
                    smalls++;
                }
                if (tdm_search_small_fits(d, wg, c.k, (uint64_t)per * c.cap)) {
                    check_select(d, "tdm_search_select_small", &c, hs, hd, hn, per);
                    smalls++;
                }
                clReleaseMemObject(hs);
                clReleaseMemObject(hd);
                clReleaseMemObject(hn);
            }
            mcase_free(&c);
        }
    assert_true(smalls > 0); /* the small kernels ran */
}

static int setup(void **state)
{
    *state = tdm_test_engine();
    return 0;
}

static int teardown(void **state)
{
    tdm_engine_close(*state);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(merge_vs_ref),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
