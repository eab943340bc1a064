/* The top-k kernels of every search (cl/search_merge.cl): tdm_search_merge
 * and one tdm_search_select stage (with the filter, and with the radix
 * select: tdm_search_select_radix), and their small-k kernels where they
 * apply (k <= 16, few keys), against a plain-C reference (sort every
 * candidate's key, keep the best k), on every device, with ties in score,
 * empty and full heaps, and more or fewer candidates than k; and cases
 * made for the merge's filter (merge_edges): candidates around k and
 * around the keys local memory holds, all scores equal, and the best keys
 * all in a few work-items' slots (their registers overflow, and the
 * survivors spill to the radix select). */
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

enum { FILL_FULL, FILL_RANDOM, FILL_SPARSE };
enum { SC_DISTINCT, SC_FEW, SC_EQUAL };

/* A case of nranges heaps of cap slots at k: heaps full, of random counts,
 * or mostly empty; scores distinct, of 16 values, or all equal; with `skew`
 * work-items of a group of wg (those of lid < skew), slot i read by work-item
 * i % wg, holding the best scores of all (0: none). */
static void mcase_shape(tdm_rng *r, uint32_t nranges, uint32_t cap, uint32_t k, int fill,
                        int scores, uint32_t skew, size_t wg, mcase *c)
{
    c->k = k;
    c->pow2 = 1;
    while (c->pow2 < k)
        c->pow2 <<= 1;
    c->nranges = nranges;
    c->cap = cap;
    size_t n = (size_t)nranges * cap;
    c->hs = calloc(n ? n : 1, 4);
    c->hd = calloc(n ? n : 1, 4);
    c->hn = calloc(nranges ? nranges : 1, 4);
    assert_true(c->hs && c->hd && c->hn);
    uint32_t doc = (uint32_t)(tdm_rng_next(r) % 1000); /* distinct docids */
    for (uint32_t g = 0; g < nranges; g++) {
        c->hn[g] = fill == FILL_FULL     ? cap
                   : fill == FILL_SPARSE ? (tdm_rng_next(r) % 8 == 0 ? 1 + (uint32_t)(tdm_rng_next(r) % cap) : 0)
                                         : (uint32_t)(tdm_rng_next(r) % (cap + 1));
        for (uint32_t j = 0; j < c->hn[g]; j++) {
            size_t i = (size_t)g * cap + j;
            float sc = scores == SC_EQUAL ? 1.5f
                       : scores == SC_FEW ? (float)(tdm_rng_next(r) % 16) * 0.25f
                                          : (float)(tdm_rng_double(r) * 100.0);
            if (skew && i % wg < skew)
                sc += 1000.0f;
            c->hs[i] = sc;
            c->hd[i] = doc;
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
                check_select(d, "tdm_search_select_radix", &c, hs, hd, hn, per);
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

/* Every kernel of the case on device d: the merge, a select stage of every
 * heap in one group and one of `per` heaps a group (filter and radix),
 * and the small kernels where the search would take them. */
static void check_all(tdm_device *d, const mcase *c, uint32_t per, int *smalls)
{
    size_t n = (size_t)c->nranges * c->cap, wg = tdm_search_merge_local(d);
    cl_mem hs = buffer(d, c->hs, n * 4), hd = buffer(d, c->hd, n * 4);
    cl_mem hn = buffer(d, c->hn, (size_t)c->nranges * 4);
    check_merge(d, "tdm_search_merge", c, hs, hd, hn);
    check_select(d, "tdm_search_select", c, hs, hd, hn, c->nranges);
    check_select(d, "tdm_search_select", c, hs, hd, hn, per);
    check_select(d, "tdm_search_select_radix", c, hs, hd, hn, per);
    if (tdm_search_small_fits(d, wg, c->k, (uint64_t)n)) {
        check_merge(d, "tdm_search_merge_small", c, hs, hd, hn);
        ++*smalls;
    }
    clReleaseMemObject(hs);
    clReleaseMemObject(hd);
    clReleaseMemObject(hn);
}

/* The merge's filter at its edges (cl/search_merge.cl, tdm_merge_filtered):
 * candidates k - 1, k and k + 1; k 1, 10, 16, 17 and 1,000; the direct
 * merges of the GPU plans (OR at k = 10: 1,056 ranges of 10; k = 1,000: 8
 * slices of 1,000); ties and all-equal scores; fewer candidates than k;
 * survivors around the keys local memory holds (k = 3,000: no filter, so
 * every candidate survives); and the best keys in the slots of a few
 * work-items, which then hold more than their registers' keys (read
 * again) and overflow local memory (the radix select). */
static void merge_edges(void **state)
{
    tdm_engine *eng = *state;
    int small = tdm_test_small(), smalls = 0;
    tdm_rng r;
    tdm_rng_seed(&r, 31415);
    for (int dv = 0; dv < tdm_engine_device_count(eng); dv++) {
        tdm_device *d = tdm_engine_device(eng, dv);
        size_t wg = tdm_search_merge_local(d);
        /* TDM_MERGE_LKEYS of the device's build */
        uint32_t lk = d->info.local_mem_bytes >= 49152 ? 2048 : 1024;
        const struct {
            uint32_t nranges, cap, k;
            int fill, scores;
            uint32_t skew;
        } cs[] = {
            {9, 1, 10, FILL_FULL, SC_DISTINCT, 0},   {10, 1, 10, FILL_FULL, SC_DISTINCT, 0},
            {11, 1, 10, FILL_FULL, SC_DISTINCT, 0},  {11, 1, 10, FILL_FULL, SC_EQUAL, 0},
            {1, 1, 1, FILL_FULL, SC_DISTINCT, 0},    {2, 1, 10, FILL_SPARSE, SC_DISTINCT, 0},
            {500, 1, 1, FILL_FULL, SC_EQUAL, 0},     {300, 5, 1, FILL_RANDOM, SC_FEW, 0},
            {200, 16, 16, FILL_FULL, SC_FEW, 0},     {200, 17, 17, FILL_FULL, SC_EQUAL, 0},
            {3, 17, 17, FILL_RANDOM, SC_DISTINCT, 0}, {1, 17, 16, FILL_FULL, SC_FEW, 0},
            {17, 1, 16, FILL_FULL, SC_DISTINCT, 0},  {15, 1, 16, FILL_FULL, SC_DISTINCT, 0},
            {small ? 300 : 1056, 10, 10, FILL_FULL, SC_DISTINCT, 0},
            {small ? 300 : 1056, 10, 10, FILL_SPARSE, SC_FEW, 0},
            {small ? 300 : 1056, 10, 10, FILL_FULL, SC_EQUAL, 0},
            {small ? 300 : 1056, 10, 10, FILL_FULL, SC_DISTINCT, 1},
            {small ? 300 : 1056, 10, 17, FILL_RANDOM, SC_FEW, 3},
            {small ? 2 : 8, 1000, 1000, FILL_FULL, SC_DISTINCT, 0},
            {small ? 2 : 8, 1000, 1000, FILL_RANDOM, SC_FEW, 0},
            {small ? 2 : 8, 947, 1000, FILL_FULL, SC_EQUAL, 0},
            {5, 150, 1000, FILL_FULL, SC_DISTINCT, 0}, {1, 1000, 1000, FILL_FULL, SC_FEW, 0},
            {999, 1, 1000, FILL_FULL, SC_DISTINCT, 0}, {1001, 1, 1000, FILL_FULL, SC_EQUAL, 0},
            {small ? 4 : 16, 1000, 1000, FILL_FULL, SC_DISTINCT, (uint32_t)wg / 8},
            {small ? 4 : 16, 1000, 1000, FILL_FULL, SC_FEW, 1},
            {lk - 1, 1, 3000, FILL_FULL, SC_DISTINCT, 0}, {lk, 1, 3000, FILL_FULL, SC_FEW, 0},
            {lk + 1, 1, 3000, FILL_FULL, SC_DISTINCT, 0},
        };
        for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
            mcase c;
            mcase_shape(&r, cs[i].nranges, cs[i].cap, cs[i].k, cs[i].fill, cs[i].scores,
                        cs[i].skew, wg, &c);
            uint32_t per = 1 + (uint32_t)(tdm_rng_next(&r) % (c.nranges ? c.nranges : 1));
            check_all(d, &c, per, &smalls);
            mcase_free(&c);
        }
    }
    assert_true(smalls > 0);
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
        cmocka_unit_test(merge_edges),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
