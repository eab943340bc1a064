/* Shared cases and checks for the codec tests: see codec_cases.h. */
#include "engine/engine.h"
#include "engine/program.h"
#include "codec_cases.h"

#include <stdio.h>

void ccase_ok(int rc, const tdm_err *err, const char *what)
{
    if (rc != TDM_OK)
        fail_msg("%s: %s (%d)", what, tdm_err_msg(err), rc);
}

ccase_list *ccase_add(ccase_list *ls, size_t *count, const char *kind, size_t n, int delta)
{
    assert_true(*count < CCASE_MAX_LISTS);
    ccase_list *l = &ls[(*count)++];
    snprintf(l->name, sizeof l->name, "%s/%zu", kind, n);
    l->v = malloc((n ? n : 1) * sizeof *l->v);
    assert_non_null(l->v);
    l->n = n;
    l->delta = delta;
    return l;
}

/* Docids from gaps: v[i] = gaps[0] + ... + gaps[i] (the first gap is the
 * first docid, so a first gap of 0 starts the list at 0). */
static void ccase_from_gaps(uint32_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        v[i] += v[i - 1];
}

void ccase_docids(tdm_rng *r, uint32_t *v, size_t n, uint32_t first, uint32_t lo,
                  uint32_t hi)
{
    uint64_t x = first;
    for (size_t i = 0; i < n; i++) {
        v[i] = (uint32_t)x;
        if (i + 1 == n)
            break;
        uint64_t room = CCASE_MAXDOC - x - (n - 2 - i); /* the rest need 1 each */
        uint64_t g = tdm_rng_range(r, lo, hi);
        x += g > room ? room : g;
    }
}

void ccase_mixed(tdm_rng *r, uint32_t *v, size_t n)
{
    uint64_t budget = CCASE_MAXDOC - (n > 1 ? (UINT64_C(1) << 31) : 0) - n, used = 0;
    unsigned wcap = 31;
    while (wcap > 4 && ((uint64_t)n << wcap) / (wcap + 1) > budget)
        wcap--;
    for (size_t i = 0; i < n; i++) {
        uint32_t w = tdm_rng_range(r, 0, wcap); /* its own statement: a fixed draw order */
        uint32_t g = 1 + (tdm_rng_u32(r) >> (31 - w));
        g = g > (UINT32_C(1) << 31) ? UINT32_C(1) << 31 : g;
        if (used + g > budget)
            g = 1;
        used += g;
        v[i] = g;
    }
    v[0] = 0;
    if (n > 1)
        v[1 + tdm_rng_range(r, 0, (uint32_t)(n - 2))] = UINT32_C(1) << 31;
    ccase_from_gaps(v, n);
}

/* Random gaps around (2^32 - 1) / n, the list ending at 0xFFFFFFFF. */
static void ccase_uniform_to_max(tdm_rng *r, uint32_t *v, size_t n)
{
    uint64_t avg = CCASE_MAXDOC / (n + 1), used = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t g = 1 + tdm_rng_u32(r) % (2 * avg - 1 ? 2 * avg - 1 : 1);
        if (used + g > CCASE_MAXDOC - (n - i))
            g = 1;
        used += g;
        v[i] = (uint32_t)g;
    }
    ccase_from_gaps(v, n);
    v[n - 1] = CCASE_MAXDOC;
}

void ccase_freq(tdm_rng *r, uint32_t *v, size_t n, int wide)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t x = tdm_rng_u32(r);
        if (wide) /* widths 0..31, with 2^31 and 2^32 - 1 now and then */
            v[i] = x % 97 == 0 ? UINT32_C(1) << 31 : x % 89 == 0 ? CCASE_MAXDOC : x >> (x % 32);
        else /* mostly small, a few large ones: what tf lists look like */
            v[i] = x % 64 ? 1 + (x >> 8) % 7 : (x >> 8) % 100000;
    }
}

/* Every list the codec tests run: sizes 0, 1, block - 1, block, block + 1,
 * a few blocks and 10^6 (fewer under TANDEM_TEST_SMALL), docids and
 * frequencies, plus the extremes. */
static size_t ccase_lists(uint32_t block, ccase_list *ls, tdm_rng *r)
{
    size_t count = 0, big = tdm_test_small() ? 3 * (size_t)block + 5 : 1000000;
    size_t sizes[] = {1, block - 1, block, block + 1, 4 * (size_t)block + 3, big};
    size_t nsizes = sizeof sizes / sizeof *sizes;
    ccase_add(ls, &count, "empty", 0, 1);
    ccase_add(ls, &count, "empty-freq", 0, 0);
    ccase_add(ls, &count, "max", 1, 1)->v[0] = CCASE_MAXDOC;
    ccase_add(ls, &count, "zero", 1, 1)->v[0] = 0;
    ccase_list *l = ccase_add(ls, &count, "zero-max", 2, 1);
    l->v[0] = 0;
    l->v[1] = CCASE_MAXDOC;
    for (size_t s = 0; s < nsizes; s++) {
        size_t n = sizes[s];
        if (n == 0)
            continue;
        ccase_mixed(r, ccase_add(ls, &count, "mixed", n, 1)->v, n);
        ccase_uniform_to_max(r, ccase_add(ls, &count, "to-max", n, 1)->v, n);
        l = ccase_add(ls, &count, "dense", n, 1); /* 0, 1, 2, ...: all gaps 1 */
        for (size_t i = 0; i < n; i++)
            l->v[i] = (uint32_t)i;
        uint32_t g = (uint32_t)(CCASE_MAXDOC / n) < 1000 ? (uint32_t)(CCASE_MAXDOC / n) : 1000;
        l = ccase_add(ls, &count, "equal", n, 1); /* all gaps g, the first one too */
        for (size_t i = 0; i < n; i++)
            l->v[i] = (uint32_t)(i + 1) * g;
        ccase_freq(r, ccase_add(ls, &count, "freq", n, 0)->v, n, 0);
        ccase_freq(r, ccase_add(ls, &count, "freq-wide", n, 0)->v, n, 1);
        l = ccase_add(ls, &count, "freq-zero", n, 0);
        memset(l->v, 0, n * sizeof *l->v);
    }
    return count;
}

void ccase_lists_free(ccase_list *ls, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(ls[i].v);
}

void ccase_encode(int codec, const ccase_list *l, tdm_encoded *enc)
{
    tdm_err err = {0};
    int rc = tdm_codec_encode(codec, l->v, l->n, l->delta, enc, &err);
    if (rc != TDM_OK)
        fail_msg("%s: encode: %s", l->name, tdm_err_msg(&err));
    tdm_err_clear(&err);
    assert_int_equal(enc->codec, codec);
    assert_int_equal(enc->n, l->n);
}

/* A random selection of blocks: out of order, with repeats, the last
 * (short) block among them. *count gets its length. */
static uint32_t *ccase_selection(tdm_rng *r, uint32_t nblocks, size_t *count)
{
    size_t k = nblocks ? 1 + tdm_rng_range(r, 0, nblocks < 40 ? 2 * nblocks : 80) : 0;
    uint32_t *sel = malloc((k + 1) * sizeof *sel);
    assert_non_null(sel);
    for (size_t i = 0; i < k; i++)
        sel[i] = tdm_rng_range(r, 0, nblocks - 1);
    if (k > 1)
        sel[tdm_rng_range(r, 0, (uint32_t)(k - 2))] = nblocks - 1;
    *count = k;
    return sel;
}

/* What decoding `sel` must give: the blocks' values, concatenated. */
static size_t ccase_expected(const ccase_list *l, uint32_t block, const uint32_t *sel, size_t k,
                          uint32_t *want)
{
    size_t pos = 0;
    for (size_t i = 0; i < k; i++) {
        size_t start = (size_t)sel[i] * block, end = start + block < l->n ? start + block : l->n;
        memcpy(want + pos, l->v + start, (end - start) * sizeof *want);
        pos += end - start;
    }
    return pos;
}

/* Reference decoder: whole list, random selections, random access. */
static void ccase_check_host(int codec, const ccase_list *l, tdm_rng *r)
{
    tdm_encoded enc;
    tdm_err err = {0};
    ccase_encode(codec, l, &enc);
    uint32_t block = enc.block_size;
    uint32_t *got = malloc((l->n + 1) * sizeof *got);
    assert_non_null(got);
    if (tdm_codec_decode(&enc, got, &err) != TDM_OK)
        fail_msg("%s: decode: %s", l->name, tdm_err_msg(&err));
    assert_memory_equal(got, l->v, l->n * sizeof *got);
    free(got);
    size_t k;
    uint32_t *sel = ccase_selection(r, enc.nblocks, &k);
    uint32_t *want = malloc((k * block + 1) * sizeof *want), *sgot = malloc((k * block + 1) * 4);
    size_t m = ccase_expected(l, block, sel, k, want);
    if (tdm_codec_decode_blocks(&enc, sel, k, sgot, &err) != TDM_OK)
        fail_msg("%s: decode_blocks: %s", l->name, tdm_err_msg(&err));
    assert_memory_equal(sgot, want, m * sizeof *want);
    const tdm_codec_ops *ops = tdm_codec_by_id(codec);
    for (size_t t = 0; ops->get && l->n && t < 300; t++) {
        uint32_t last = (uint32_t)l->n - 1, v = 0;
        uint32_t i = t == 0 ? 0 : t == 1 ? last : tdm_rng_range(r, 0, last);
        if (ops->get(&enc, i, &v, &err) != TDM_OK)
            fail_msg("%s: get(%u): %s", l->name, i, tdm_err_msg(&err));
        if (v != l->v[i])
            fail_msg("%s: get(%u) = %u, want %u", l->name, i, v, l->v[i]);
    }
    tdm_err_clear(&err);
    free(sel);
    free(want);
    free(sgot);
    tdm_encoded_free(&enc);
}

/* Random access on the device (gather.h), where the codec has it: random
 * positions, the first and the last, repeats. */
static void ccase_check_gather(tdm_codec_dev_list *dl, const ccase_list *l, tdm_rng *r,
                               const char *at)
{
    tdm_err err = {0};
    if (!tdm_codec_gather_supported(dl->codec) || l->n == 0)
        return;
    size_t most = tdm_test_small() ? 100 : 1000, k = l->n < most ? l->n + 2 : most;
    uint32_t *idx = malloc(k * 4), *got = malloc(k * 4), last = (uint32_t)l->n - 1;
    for (size_t q = 0; q < k; q++)
        idx[q] = q == 0 ? last : q == 1 ? 0 : tdm_rng_range(r, 0, last);
    if (tdm_codec_gather(dl, idx, k, got, &err) != TDM_OK)
        fail_msg("%s: gather: %s", at, tdm_err_msg(&err));
    for (size_t q = 0; q < k; q++)
        if (got[q] != l->v[idx[q]])
            fail_msg("%s: gather of value %u gave %u, want %u", at, idx[q], got[q],
                     l->v[idx[q]]);
    idx[k / 2] = (uint32_t)l->n;
    assert_int_equal(tdm_codec_gather(dl, idx, k, got, &err), TDM_ERR_INVALID_ARG);
    tdm_err_clear(&err);
    free(idx);
    free(got);
}

/* The decode kernel launched with two work-groups for the whole list, so
 * that each takes several rounds of jobs (the kernels loop over the launch). */
static void ccase_check_few_groups(tdm_codec_dev_list *dl, const ccase_list *l, const char *at)
{
    tdm_err err = {0};
    cl_mem out = NULL;
    if (l->n == 0)
        return;
    if (tdm_buffer_create(dl->dev, CL_MEM_READ_WRITE, l->n * 4, NULL, &out, &err) != TDM_OK)
        fail_msg("%s: %s", at, tdm_err_msg(&err));
    tdm_codec_dev_job job = {.sel = NULL, .njobs = dl->nblocks, .out = out, .out_cap = dl->n};
    uint32_t groups = 2, *got = malloc(l->n * 4);
    cl_uint junk = 0xABABABABu; /* not what an earlier decode left in recycled memory */
    int rc = clEnqueueFillBuffer(dl->dev->queue, out, &junk, 4, 0, l->n * 4, 0, NULL, NULL)
                 ? tdm_err_set(&err, TDM_ERR_OPENCL, "clEnqueueFillBuffer")
                 : tdm_codec_dev_launch(dl, &job, groups, 0, NULL, NULL, &err);
    if (rc == TDM_OK && clEnqueueReadBuffer(dl->dev->queue, out, CL_TRUE, 0, l->n * 4, got, 0,
                                            NULL, NULL) != CL_SUCCESS)
        rc = tdm_err_set(&err, TDM_ERR_OPENCL, "reading back");
    if (rc == TDM_OK)
        rc = tdm_codec_dev_status(dl, 0, NULL, &err);
    if (rc != TDM_OK)
        fail_msg("%s: two work-groups: %s", at, tdm_err_msg(&err));
    for (size_t i = 0; i < l->n; i++)
        if (got[i] != l->v[i])
            fail_msg("%s: two work-groups: value %zu is %u, want %u", at, i, got[i], l->v[i]);
    clReleaseMemObject(out);
    free(got);
    tdm_err_clear(&err);
}

/* One device: whole-list decode and a random selection against the list. */
static void ccase_check_device(tdm_device *d, int codec, const ccase_list *l, tdm_rng *r)
{
    tdm_encoded enc;
    tdm_err err = {0};
    tdm_codec_dev_list dl;
    char at[192];
    snprintf(at, sizeof at, "%.60s on %.100s (wg %zu)", l->name, d->info.name, d->wg_size);
    ccase_encode(codec, l, &enc);
    if (tdm_codec_dev_upload(d, &enc, &dl, &err) != TDM_OK)
        fail_msg("%s: upload: %s", at, tdm_err_msg(&err));
    uint32_t *got = malloc((l->n + 1) * sizeof *got);
    memset(got, 0xab, (l->n + 1) * sizeof *got);
    size_t nv = 1;
    if (tdm_codec_dev_decode(&dl, NULL, 0, NULL, got, &nv, NULL, &err) != TDM_OK)
        fail_msg("%s: decode: %s", at, tdm_err_msg(&err));
    assert_int_equal(nv, l->n);
    for (size_t i = 0; i < l->n; i++)
        if (got[i] != l->v[i])
            fail_msg("%s: value %zu is %u, want %u", at, i, got[i],
                     l->v[i]);
    free(got);
    ccase_check_few_groups(&dl, l, at);
    ccase_check_gather(&dl, l, r, at);
    size_t k;
    uint32_t *sel = ccase_selection(r, enc.nblocks, &k);
    size_t cap = k * enc.block_size + 1;
    uint32_t *want = malloc(cap * 4), *sgot = malloc(cap * 4);
    size_t m = ccase_expected(l, enc.block_size, sel, k, want);
    if (k && tdm_codec_dev_decode(&dl, sel, k, NULL, sgot, &nv, NULL, &err) != TDM_OK)
        fail_msg("%s: decode %zu blocks: %s", at, k, tdm_err_msg(&err));
    if (k)
        assert_int_equal(nv, m);
    for (size_t i = 0; i < m; i++)
        if (sgot[i] != want[i])
            fail_msg("%s: selected value %zu is %u, want %u", at, i,
                     sgot[i], want[i]);
    tdm_err_clear(&err);
    free(sel);
    free(want);
    free(sgot);
    tdm_codec_dev_free(&dl);
    tdm_encoded_free(&enc);
}

void ccase_check_everywhere(tdm_engine *e, int codec, const ccase_list *l, tdm_rng *r)
{
    ccase_check_host(codec, l, r);
    for (int d = 0; d < tdm_engine_device_count(e); d++)
        ccase_check_device(tdm_engine_device(e, d), codec, l, r);
}

void ccase_run_host(int codec, uint64_t seed)
{
    tdm_rng r;
    tdm_rng_seed(&r, seed);
    ccase_list ls[CCASE_MAX_LISTS];
    size_t count = ccase_lists(tdm_codec_by_id(codec)->block_size, ls, &r);
    for (size_t i = 0; i < count; i++)
        ccase_check_host(codec, &ls[i], &r);
    ccase_lists_free(ls, count);
}

/* Lists longer than this run with the default build only. */
#define CCASE_BIG_ONLY_DEFAULT 100000

/* Rebuilds the device's kernels for work-groups of `wg` (0: its own) with
 * `extra` build options and swaps them in (restored by ccase_restore), so
 * that the geometry of small devices (more values per work-item, blocks
 * wider than a group) and experimental variants run here too. */
static void ccase_use_build(tdm_device *d, size_t wg, const char *extra, cl_program *saved,
                            size_t *saved_wg)
{
    char opts[512];
    wg = wg ? wg : d->wg_size;
    tdm_build_options(&d->info, wg, d->nv_shuffle, extra, opts, sizeof opts);
    tdm_err err = {0};
    cl_program prog;
    if (tdm_program_build(d->ctx, d->id, tdm_kernels_source, tdm_kernels_source_len, opts,
                          &prog, &err) != TDM_OK)
        fail_msg("kernels for work-groups of %zu (%s): %s", wg, extra ? extra : "",
                 tdm_err_msg(&err));
    tdm_device_swap_program(d, prog, wg, saved, saved_wg);
}

static void ccase_restore(tdm_device *d, cl_program saved, size_t saved_wg)
{
    cl_program prog;
    size_t wg;
    tdm_device_swap_program(d, saved, saved_wg, &prog, &wg);
    clReleaseProgram(prog);
}

void ccase_run_devices_with(int codec, uint64_t seed, const char *const *extra)
{
    tdm_engine *e = tdm_test_engine();
    tdm_rng r;
    tdm_rng_seed(&r, seed);
    ccase_list ls[CCASE_MAX_LISTS];
    size_t count = ccase_lists(tdm_codec_by_id(codec)->block_size, ls, &r);
    struct ccase_run { size_t wg; const char *opts; } runs[16] = {{0, NULL}, {32, NULL}, {8, NULL}};
    size_t nruns = 3;
    for (size_t x = 0; extra && extra[x] && nruns + 2 <= 16; x++) {
        runs[nruns++] = (struct ccase_run){0, extra[x]};
        runs[nruns++] = (struct ccase_run){8, extra[x]};
    }
    for (int d = 0; d < tdm_engine_device_count(e); d++) {
        tdm_device *dev = tdm_engine_device(e, d);
        for (size_t w = 0; w < nruns; w++) {
            cl_program saved = NULL;
            size_t saved_wg = 0;
            int rebuild = runs[w].wg || runs[w].opts;
            if (runs[w].wg && runs[w].wg >= dev->wg_size)
                continue;
            if (rebuild)
                ccase_use_build(dev, runs[w].wg, runs[w].opts, &saved, &saved_wg);
            /* Million-value lists only with the device's own build: other
             * geometries and variants meet every block shape in the
             * smaller lists, and suite time goes to coverage. */
            for (size_t i = 0; i < count; i++)
                if (!rebuild || ls[i].n <= CCASE_BIG_ONLY_DEFAULT)
                    ccase_check_device(dev, codec, &ls[i], &r);
            if (rebuild)
                ccase_restore(dev, saved, saved_wg);
        }
    }
    ccase_lists_free(ls, count);
    tdm_engine_close(e);
}

void ccase_run_devices(int codec, uint64_t seed)
{
    ccase_run_devices_with(codec, seed, NULL);
}

void ccase_expect_ref_corrupt(const tdm_encoded *enc, uint32_t b, const char *what)
{
    uint32_t out[1024];
    tdm_err err = {0};
    assert_true(enc->block_size <= 1024);
    int rc = tdm_codec_by_id(enc->codec)->decode_block(enc, b, out, &err);
    if (rc != TDM_ERR_CORRUPT)
        fail_msg("%s: reference decoder gave %d, want TDM_ERR_CORRUPT", what, rc);
    tdm_err_clear(&err);
}

int ccase_device_survives(tdm_engine *e, const tdm_encoded *enc, const char *what)
{
    int noticed = 0;
    uint32_t *got = malloc(((size_t)enc->n + 1) * 4);
    for (int d = 0; d < tdm_engine_device_count(e); d++) {
        tdm_codec_dev_list dl;
        tdm_err err = {0};
        int rc = tdm_codec_dev_upload(tdm_engine_device(e, d), enc, &dl, &err);
        if (rc == TDM_OK)
            rc = tdm_codec_dev_decode(&dl, NULL, 0, NULL, got, NULL, NULL, &err);
        if (rc != TDM_OK && rc != TDM_ERR_CORRUPT)
            fail_msg("%s: device %d: %s", what, d, tdm_err_msg(&err));
        noticed += rc == TDM_ERR_CORRUPT;
        /* Random access reads the same payload: it too stays in bounds. */
        for (uint32_t i = 0; dl.dev && tdm_codec_gather_supported(enc->codec) && i < enc->n;
             i += 1 + enc->n / 64) {
            uint32_t v;
            int g = tdm_codec_gather(&dl, &i, 1, &v, &err);
            if (g != TDM_OK && g != TDM_ERR_CORRUPT)
                fail_msg("%s: device %d: gather: %s", what, d, tdm_err_msg(&err));
        }
        tdm_codec_dev_free(&dl);
        tdm_err_clear(&err);
    }
    free(got);
    return noticed;
}

void ccase_fuzz(tdm_engine *e, int codec, const ccase_list *l, int rounds, uint64_t seed)
{
    tdm_rng r;
    tdm_rng_seed(&r, seed);
    tdm_encoded enc;
    ccase_encode(codec, l, &enc);
    uint32_t *got = malloc((l->n + 1) * 4);
    for (int i = 0; i < rounds && enc.nwords; i++) {
        size_t w = tdm_rng_range(&r, 0, (uint32_t)enc.nwords - 1);
        uint32_t flip = 1u << tdm_rng_range(&r, 0, 31);
        enc.words[w] ^= flip;
        tdm_err err = {0};
        int rc = tdm_codec_decode(&enc, got, &err);
        assert_true(rc == TDM_OK || rc == TDM_ERR_CORRUPT);
        tdm_err_clear(&err);
        if (e && i % 8 == 0)
            ccase_device_survives(e, &enc, l->name);
        enc.words[w] ^= flip;
    }
    free(got);
    tdm_encoded_free(&enc);
}

void ccase_fuzz_lists(tdm_engine *e, int codec, uint64_t seed)
{
    tdm_rng r;
    tdm_rng_seed(&r, seed);
    size_t B = tdm_codec_by_id(codec)->block_size, count = 0;
    int rounds = tdm_test_small() ? 24 : 400;
    ccase_list ls[2];
    ccase_list *l = ccase_add(ls, &count, "mixed", 3 * B + 17, 1);
    ccase_mixed(&r, l->v, l->n);
    ccase_fuzz(e, codec, l, rounds, seed + 1);
    l = ccase_add(ls, &count, "freq-wide", 2 * B + 1, 0);
    ccase_freq(&r, l->v, l->n, 1);
    ccase_fuzz(e, codec, l, rounds, seed + 2);
    ccase_lists_free(ls, count);
}

void ccase_refuses_unsorted(int codec)
{
    uint32_t v[3] = {5, 9, 9};
    tdm_encoded enc;
    tdm_err err = {0};
    assert_int_equal(tdm_codec_encode(codec, v, 3, 1, &enc, &err), TDM_ERR_INVALID_ARG);
    tdm_err_clear(&err);
    assert_int_equal(tdm_codec_encode(codec, v, 3, 0, &enc, &err), TDM_OK);
    tdm_encoded_free(&enc);
}
