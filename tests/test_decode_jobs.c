/* Batched decode of a resident index (resident/decode_jobs.h) against the host
 * reference (tdm_ireader_decode), on every device of the engine: every
 * codec, mixed codecs in one index, whole lists, partial block ranges,
 * one-posting lists and lists at block boundaries, empty jobs and tables,
 * one output only, tables of several tiles, bad jobs and damaged block
 * tables and payloads flagged in the status word. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "codec/codec_dev.h"
#include "resident/decode_jobs.h"
#include "resident/resident.h"
#include "residx.h"
#include "runtime/runtime.h"
#include "testutil.h"

static tdm_engine *E;
static const char *forced;  /* TANDEM_DECODE_VARIANT of this round */
static int serial_devices; /* devices of the last engine that may run the serial kernel */

static int setup(void **state)
{
    (void)state;
    E = tdm_test_engine();
    serial_devices = 0;
    for (int d = 0; E && d < tdm_engine_device_count(E); d++)
        serial_devices += !tdm_engine_device(E, d)->no_zcur;
    return E ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tdm_engine_close(E);
    return 0;
}

static uint64_t nlists_for(uint64_t big)
{
    return tdm_test_small() ? 12 : big;
}

static cl_mem make_buf(tdm_device *d, size_t values, uint32_t fill)
{
    tdm_err err = {0};
    cl_mem m = NULL;
    size_t n = values ? values : 1;
    assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_WRITE, n * 4, NULL, &m, &err), TDM_OK);
    uint32_t *h = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        h[i] = fill;
    assert_int_equal(tdm_upload(d, m, 0, n * 4, h, 0, NULL, NULL, &err), TDM_OK);
    free(h);
    return m;
}

static void read_buf(tdm_device *d, cl_mem m, uint32_t *h, size_t values, cl_event after)
{
    tdm_err err = {0};
    if (values)
        assert_int_equal(tdm_download(d, m, 0, values * 4, h, after ? 1 : 0, &after, NULL, &err),
                         TDM_OK);
}

/* Where b's jobs are all of one codec: the host's prefix sums
 * (tdm_decode_prefix_fill) are the count and scan kernels' (made on d into a
 * scratch by the device's path), word for word, and the decode alone on them
 * (tdm_decode_batch_enqueue_pre) writes what the device's path wrote (od,
 * of: its outputs, np values, read into hd, hf). */
static void check_host_prefix(tdm_device *d, const tdm_resident *res, const tdm_decode_batch *b,
                              cl_mem const bufs[TDM_CODEC_COUNT], int outs, size_t np,
                              const uint32_t *hd, const uint32_t *hf)
{
    int c = -1, n = 0;
    for (int i = 0; i < TDM_CODEC_COUNT; i++)
        if (b->njobs[i]) {
            c = i;
            n++;
        }
    if (n != 1)
        return;
    tdm_err err = {0};
    uint32_t nj = b->njobs[c], tiles = tdm_decode_prefix_tiles(d, nj);
    uint32_t *jpre = malloc(nj * 4ull), *tsum = malloc((tiles + 1ull) * 4);
    uint32_t *dj = malloc(nj * 4ull), *dt = malloc((tiles + 1ull) * 4);
    uint32_t cap = (uint32_t)(np ? np : 1);
    assert_int_equal(tdm_decode_prefix_fill(res, b, c, (uint32_t)outs, cap, cap, jpre, tsum, &err),
                     TDM_OK);
    /* the device's sums, in a scratch */
    cl_mem od = outs & 1 ? make_buf(d, np, 0) : NULL, of = outs & 2 ? make_buf(d, np, 0) : NULL;
    cl_mem st = make_buf(d, 1, 0);
    tdm_decode_scratch scr = {0};
    cl_event done = NULL;
    assert_int_equal(tdm_decode_batch_enqueue_in(res, NULL, b, bufs, od, of, st, &scr, 0, NULL,
                                                 &done, &err), TDM_OK);
    read_buf(d, scr.jpre, dj, nj, done);
    read_buf(d, scr.tsum, dt, tiles + 1u, done);
    clReleaseEvent(done);
    assert_memory_equal(jpre, dj, nj * 4ull);
    assert_memory_equal(tsum, dt, (tiles + 1ull) * 4);
    /* the decode alone on the host's sums: the same outputs */
    cl_mem mj = NULL, mt = NULL;
    assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_WRITE, nj * 4ull, NULL, &mj, &err), TDM_OK);
    assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_WRITE, (tiles + 1ull) * 4, NULL, &mt, &err),
                     TDM_OK);
    assert_int_equal(tdm_upload(d, mj, 0, nj * 4ull, jpre, 0, NULL, NULL, &err), TDM_OK);
    assert_int_equal(tdm_upload(d, mt, 0, (tiles + 1ull) * 4, tsum, 0, NULL, NULL, &err), TDM_OK);
    cl_mem pd = outs & 1 ? make_buf(d, np, 0xDEADBEEF) : NULL;
    cl_mem pf = outs & 2 ? make_buf(d, np, 0xDEADBEEF) : NULL;
    assert_int_equal(tdm_decode_batch_enqueue_pre(res, NULL, b, c, bufs[c], mj, mt, pd, pf, st, 0,
                                                  NULL, &done, &err), TDM_OK);
    uint32_t *g = malloc(np * 4 + 4), status = 1;
    if (pd) {
        read_buf(d, pd, g, np, done);
        assert_memory_equal(g, hd, np * 4);
    }
    if (pf) {
        read_buf(d, pf, g, np, done);
        assert_memory_equal(g, hf, np * 4);
    }
    read_buf(d, st, &status, 1, done);
    assert_int_equal(status, 0);
    /* an output past its buffer: refused on the host, naming the job */
    if (np && (outs & 1)) {
        assert_int_equal(tdm_decode_prefix_fill(res, b, c, 1u, cap - 1, cap, jpre, tsum, &err),
                         TDM_ERR_INVALID_ARG);
        assert_non_null(strstr(tdm_err_msg(&err), "refused"));
        tdm_err_clear(&err);
    }
    clReleaseEvent(done);
    tdm_decode_scratch_free(&scr);
    cl_mem all[] = {od, of, st, mj, mt, pd, pf};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (all[i])
            clReleaseMemObject(all[i]);
    free(g);
    free(jpre);
    free(tsum);
    free(dj);
    free(dt);
}

/* Decodes requests req[0..n) on device d (both outputs, or one) and checks
 * every posting against the reference, then the host's prefix sums where
 * the jobs are of one codec (check_host_prefix); returns the status word. */
static uint32_t run_reqs(const residx *x, tdm_device *d, const tdm_resident *res,
                         const tdm_decode_req *req, size_t n, int outs)
{
    tdm_err err = {0};
    tdm_decode_batch b;
    if (tdm_decode_batch_build(x->r, req, n, &b, &err) != TDM_OK)
        fail_msg("batch: %s", tdm_err_msg(&err));
    cl_mem bufs[TDM_CODEC_COUNT];
    assert_int_equal(tdm_decode_batch_upload(res, &b, bufs, &err), TDM_OK);
    size_t np = (size_t)b.npostings;
    cl_mem od = outs & 1 ? make_buf(d, np, 0xDEADBEEF) : NULL;
    cl_mem of = outs & 2 ? make_buf(d, np, 0xDEADBEEF) : NULL;
    cl_mem st = make_buf(d, 1, 0);
    cl_event done = NULL;
    if (tdm_decode_batch_enqueue(res, NULL, &b, bufs, od, of, st, 0, NULL, &done, &err) != TDM_OK)
        fail_msg("enqueue: %s", tdm_err_msg(&err));
    assert_non_null(done);
    uint32_t *hd = malloc(np * 4 + 4), *hf = malloc(np * 4 + 4), status = 0;
    if (od)
        read_buf(d, od, hd, np, done);
    if (of)
        read_buf(d, of, hf, np, done);
    read_buf(d, st, &status, 1, done);
    for (size_t i = 0; status == 0 && i < n; i++) {
        const tdm_codec_ops *ops = residx_codec(x, req[i].list);
        uint32_t df = residx_df(x, req[i].list), nb = (df + ops->block_size - 1) / ops->block_size;
        uint32_t end = req[i].block_end == TDM_DECODE_TO_END ? nb : req[i].block_end;
        uint32_t first = req[i].block_begin * ops->block_size;
        uint32_t cnt = tdm_decode_range_postings(df, ops->block_size, req[i].block_begin, end);
        for (uint32_t k = 0; k < cnt; k++) {
            uint32_t o = b.out[i] + k;
            if (od && hd[o] != x->docs[req[i].list][first + k])
                fail_msg("%s on %s: request %zu (list %u, blocks %u-%u): docid %u is %u, want %u",
                         ops->name, d->info.name, i, req[i].list, req[i].block_begin, end, k,
                         hd[o], x->docs[req[i].list][first + k]);
            if (of && hf[o] != x->freqs[req[i].list][first + k])
                fail_msg("%s on %s: request %zu (list %u): freq %u is %u, want %u", ops->name,
                         d->info.name, i, req[i].list, k, hf[o], x->freqs[req[i].list][first + k]);
        }
    }
    if (status == 0)
        check_host_prefix(d, res, &b, bufs, outs, np, hd, hf);
    clReleaseEvent(done);
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        if (bufs[c])
            clReleaseMemObject(bufs[c]);
    if (od)
        clReleaseMemObject(od);
    if (of)
        clReleaseMemObject(of);
    clReleaseMemObject(st);
    free(hd);
    free(hf);
    tdm_decode_batch_free(&b);
    return status;
}

/* Every list whole (in a shuffled order), then random partial ranges. */
static void check_index(const residx *x, tdm_rng *g)
{
    tdm_err err = {0};
    size_t n = (size_t)x->nlists * 2;
    tdm_decode_req *req = malloc(n * sizeof *req);
    for (uint64_t i = 0; i < x->nlists; i++)
        req[i] = (tdm_decode_req){(uint32_t)(x->nlists - 1 - i), 0, TDM_DECODE_TO_END};
    for (uint64_t i = 0; i < x->nlists; i++) {
        uint32_t l = tdm_rng_range(g, 0, (uint32_t)x->nlists - 1);
        uint32_t bs = residx_codec(x, l)->block_size, df = residx_df(x, l);
        uint32_t nb = (df + bs - 1) / bs, a = tdm_rng_range(g, 0, nb), e = tdm_rng_range(g, a, nb);
        req[x->nlists + i] = (tdm_decode_req){l, a, e};
    }
    for (int dv = 0; dv < tdm_engine_device_count(E); dv++) {
        tdm_device *d = tdm_engine_device(E, dv);
        tdm_resident res;
        if (tdm_resident_upload(x->r, d, &res, &err) != TDM_OK)
            fail_msg("upload: %s", tdm_err_msg(&err));
        for (int outs = 1; outs <= 3; outs++)
            assert_int_equal(run_reqs(x, d, &res, req, n, outs), 0);
        tdm_resident_release(&res);
    }
    free(req);
}

static void every_codec(void **state)
{
    (void)state;
    size_t count;
    const tdm_codec_ops *const *all = tdm_codec_all(&count);
    tdm_rng g;
    tdm_rng_seed(&g, 11);
    for (size_t c = 0; c < count; c++) {
        if (!all[c]->dev)
            continue;
        residx x;
        const char *names[1] = {all[c]->name};
        uint32_t ndocs = all[c]->block_size * 5 + 3;
        residx_make(&x, "jobs-codec", names, 1, nlists_for(24), ndocs, 100 + c);
        check_index(&x, &g);
        residx_free(&x);
    }
}

static void mixed_codecs(void **state)
{
    (void)state;
    size_t count, k = 0;
    const tdm_codec_ops *const *all = tdm_codec_all(&count);
    const char *names[TDM_CODEC_COUNT];
    for (size_t c = 0; c < count; c++)
        if (all[c]->dev)
            names[k++] = all[c]->name;
    residx x;
    residx_make(&x, "jobs-mixed", names, k, tdm_test_small() ? k + 3 : 6 * k, 3000, 7);
    tdm_rng g;
    tdm_rng_seed(&g, 12);
    check_index(&x, &g);
    residx_free(&x);
}

/* An empty table: a marker, nothing written; empty jobs likewise. More jobs
 * than one tile (the scan kernel), most of them empty. */
static void empty_and_many(void **state)
{
    (void)state;
    const char *names[1] = {"bp128"};
    residx x;
    residx_make(&x, "jobs-empty", names, 1, 10, 700, 3);
    tdm_err err = {0};
    for (int dv = 0; dv < tdm_engine_device_count(E); dv++) {
        tdm_device *d = tdm_engine_device(E, dv);
        tdm_resident res;
        assert_int_equal(tdm_resident_upload(x.r, d, &res, &err), TDM_OK);
        cl_mem jobs = make_buf(d, 4, 0), out = make_buf(d, 4, 7), st = make_buf(d, 1, 0);
        cl_event done = NULL;
        assert_int_equal(tdm_decode_jobs_enqueue(&res, NULL, jobs, 0, TDM_CODEC_BP128, out, out,
                                                 st, 0, NULL, &done, &err), TDM_OK);
        assert_non_null(done);
        uint32_t h[4], s = 1;
        read_buf(d, out, h, 4, done);
        read_buf(d, st, &s, 1, done);
        assert_int_equal(s, 0);
        for (int i = 0; i < 4; i++)
            assert_int_equal(h[i], 7);
        clReleaseEvent(done);
        clReleaseMemObject(jobs);
        clReleaseMemObject(out);
        clReleaseMemObject(st);
        /* Several tiles: 2.5 tiles of jobs, every 97th one a whole list. */
        size_t tile = d->wg_size * TDM_JOBS_PER_ITEM, n = tile * 5 / 2;
        tdm_decode_req *req = malloc(n * sizeof *req);
        for (size_t i = 0; i < n; i++)
            req[i] = i % 97 ? (tdm_decode_req){(uint32_t)(i % 10), 1, 1}
                            : (tdm_decode_req){(uint32_t)(i % 10), 0, TDM_DECODE_TO_END};
        assert_int_equal(run_reqs(&x, d, &res, req, n, 3), 0);
        free(req);
        tdm_resident_release(&res);
    }
    residx_free(&x);
}

/* Bad jobs decode nothing and say so; the good ones beside them are right.
 * An unknown TANDEM_DECODE_VARIANT is refused, naming the variable. */
static void bad_jobs(void **state)
{
    (void)state;
    const char *names[2] = {"bp128", "vbyte128"};
    residx x;
    residx_make(&x, "jobs-bad", names, 2, 8, 900, 5);
    tdm_err err = {0};
    /* lists alternate bp128, vbyte128; list 6 is bp128 with 129 postings (2 blocks) */
    assert_int_equal(residx_df(&x, 6), 129);
    tdm_decode_job jobs[] = {
        {6, 0, 2, 0},       /* good: 129 postings at 0 */
        {99, 0, 1, 200},    /* list out of range */
        {1, 0, 1, 200},     /* a vbyte128 list */
        {6, 1, 3, 200},     /* past the list's blocks */
        {6, 2, 1, 200},     /* reversed */
        {6, 0, 1, 290},     /* output past the buffer (300 values) */
    };
    for (int dv = 0; dv < tdm_engine_device_count(E); dv++) {
        tdm_device *d = tdm_engine_device(E, dv);
        tdm_resident res;
        assert_int_equal(tdm_resident_upload(x.r, d, &res, &err), TDM_OK);
        for (size_t k = 1; k < sizeof jobs / sizeof *jobs; k++) {
            cl_mem jb = NULL, out = make_buf(d, 300, 0), st = make_buf(d, 1, 0);
            tdm_decode_job two[2] = {jobs[0], jobs[k]};
            assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_ONLY, sizeof two, NULL, &jb, &err),
                             TDM_OK);
            assert_int_equal(tdm_upload(d, jb, 0, sizeof two, two, 0, NULL, NULL, &err), TDM_OK);
            cl_event done = NULL;
            assert_int_equal(tdm_decode_jobs_enqueue(&res, NULL, jb, 2, TDM_CODEC_BP128, out,
                                                     NULL, st, 0, NULL, &done, &err), TDM_OK);
            uint32_t h[300];
            read_buf(d, out, h, 300, done);
            assert_int_equal(tdm_decode_jobs_status(&res, st, 1, &done, &err),
                             TDM_ERR_INVALID_ARG);
            assert_non_null(strstr(tdm_err_msg(&err), "batched decode"));
            assert_memory_equal(h, x.docs[6], 129 * 4);
            for (int i = 129; i < 300; i++)
                assert_int_equal(h[i], 0);
            clReleaseEvent(done);
            clReleaseMemObject(jb);
            clReleaseMemObject(out);
            clReleaseMemObject(st);
        }
        /* Buffers too small for the table: refused on the host. */
        cl_mem small = make_buf(d, 4, 0), st = make_buf(d, 1, 0);
        assert_int_equal(tdm_decode_jobs_enqueue(&res, NULL, small, 2, TDM_CODEC_BP128, small,
                                                 NULL, st, 0, NULL, NULL, &err),
                         TDM_ERR_INVALID_ARG);
        assert_int_equal(tdm_decode_jobs_enqueue(&res, NULL, small, 1, 77, small, NULL, st, 0,
                                                 NULL, NULL, &err), TDM_ERR_INVALID_ARG);
        clReleaseMemObject(small);
        clReleaseMemObject(st);
        tdm_resident_release(&res);
    }
    tdm_decode_req bad[] = {{0, 0, 2}, {99, 0, 1}};
    tdm_decode_batch b;
    assert_int_equal(tdm_decode_batch_build(x.r, bad, 1, &b, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_decode_batch_build(x.r, bad + 1, 1, &b, &err), TDM_ERR_INVALID_ARG);
    tdm_err_clear(&err);
    residx_free(&x);
}

/* Damaged block tables (every codec) and a damaged VByte payload set the
 * corrupt bit, and nothing reads out of bounds (Oclgrind, ASan). */
static void corrupt(void **state)
{
    (void)state;
    size_t count;
    const tdm_codec_ops *const *all = tdm_codec_all(&count);
    tdm_err err = {0};
    for (size_t c = 0; c < count; c++) {
        if (!all[c]->dev)
            continue;
        const char *names[1] = {all[c]->name};
        residx x;
        residx_make(&x, "jobs-corrupt", names, 1, 5, all[c]->block_size * 3, 9);
        /* list 4 has 2b postings (2 blocks) and is the only long list: entries 0..2 */
        tdm_ilist l;
        assert_int_equal(tdm_ireader_list(x.r, 4, &l, &err), TDM_OK);
        assert_true(l.nblocks == 2);
        struct { unsigned sec; uint64_t at; uint32_t v; } dmg[] = {
            {TDM_SEC_BLOCK_DOCS, l.first_entry + 1, 0x7FFFFFFFu},
            {TDM_SEC_BLOCK_FREQS, l.first_entry + 2, 0x7FFFFFFFu},
            {TDM_SEC_BLOCK_DOCS, l.first_entry + 2, 1u},
        };
        for (size_t k = 0; k < sizeof dmg / sizeof *dmg; k++) {
            tdm_ireader *r = residx_patched(&x, dmg[k].sec, dmg[k].at, dmg[k].v);
            for (int dv = 0; dv < tdm_engine_device_count(E); dv++) {
                tdm_device *d = tdm_engine_device(E, dv);
                tdm_resident res;
                assert_int_equal(tdm_resident_upload(r, d, &res, &err), TDM_OK);
                tdm_decode_req req[] = {{4, 0, 2}, {3, 0, 1}};
                tdm_decode_batch b;
                assert_int_equal(tdm_decode_batch_build(r, req, 2, &b, &err), TDM_OK);
                cl_mem bufs[TDM_CODEC_COUNT];
                assert_int_equal(tdm_decode_batch_upload(&res, &b, bufs, &err), TDM_OK);
                cl_mem od = make_buf(d, b.npostings, 0), of = make_buf(d, b.npostings, 0);
                cl_mem st = make_buf(d, 1, 0);
                cl_event done = NULL;
                assert_int_equal(tdm_decode_batch_enqueue(&res, NULL, &b, bufs, od, of, st, 0,
                                                          NULL, &done, &err), TDM_OK);
                if (tdm_decode_jobs_status(&res, st, 1, &done, &err) != TDM_ERR_CORRUPT)
                    fail_msg("%s, damage %zu on %s: not flagged corrupt", all[c]->name, k,
                             d->info.name);
                assert_non_null(strstr(tdm_err_msg(&err), "corrupt"));
                clReleaseEvent(done);
                for (int i = 0; i < TDM_CODEC_COUNT; i++)
                    if (bufs[i])
                        clReleaseMemObject(bufs[i]);
                clReleaseMemObject(od);
                clReleaseMemObject(of);
                clReleaseMemObject(st);
                tdm_decode_batch_free(&b);
                tdm_resident_release(&res);
            }
            tdm_ireader_close(r);
        }
        tdm_err_clear(&err);
        residx_free(&x);
    }
}

/* The forced variant on every device but rusticl's (no_zcur), which always
 * runs the work-group kernels: its compiler inlines every codec into the
 * serial kernel, which llvmpipe took minutes and GBs to compile. */
static void variant_chosen(void **state)
{
    (void)state;
    for (int dv = 0; dv < tdm_engine_device_count(E); dv++) {
        tdm_device *d = tdm_engine_device(E, dv);
        int want = d->no_zcur || !strcmp(forced, "group") ? TDM_DECODE_GROUP : TDM_DECODE_SERIAL;
        if (tdm_decode_jobs_variant(d) != want)
            fail_msg("%s: decode variant %d, expected %d (forced %s)", d->info.name,
                     tdm_decode_jobs_variant(d), want, forced);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_codec),
        cmocka_unit_test(mixed_codecs),
        cmocka_unit_test(empty_and_many),
        cmocka_unit_test(bad_jobs),
        cmocka_unit_test(corrupt),
        cmocka_unit_test(variant_chosen),
    };
    /* Both kernels of the batched decode on every device: the work-group
     * kernels (the GPUs' default) and the serial one (the CPUs'). */
    int failed = 0;
    const char *variants[] = {"group", "serial"};
    for (int v = 0; v < 2; v++) {
        if (v && !serial_devices) { /* the same work-group kernels again */
            printf("[ SKIPPED  ] decode variant serial: no device of the engine runs it "
                   "(rusticl's: no_zcur)\n");
            break;
        }
        forced = variants[v];
        setenv("TANDEM_DECODE_VARIANT", forced, 1);
        print_message("decode variant %s\n", forced);
        failed += cmocka_run_group_tests(tests, setup, teardown);
    }
    return failed;
}
