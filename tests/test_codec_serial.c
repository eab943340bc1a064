/* Serial block decoders (cl/codec_serial.cl: tdm_zs_block, one block by one
 * work-item) against the host reference (tdm_ireader_decode), on every
 * device of the engine, through the test kernel tdm_zs_test: every block of
 * every list, docids and frequencies, for every codec, mixed codecs in one
 * index, one-posting lists, lists at block boundaries, last partial blocks;
 * requests out of range flagged as bad; damaged block tables and payloads
 * flagged corrupt with nothing decoded; no write past a block's B values
 * (a guard after each output region stays untouched; Oclgrind and ASan
 * catch stray reads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "codec/layout.h"
#include "index/format.h"
#include "resident/resident.h"
#include "residx.h"
#include "runtime/runtime.h"
#include "testutil.h"

#define GUARD 8u
#define SENTINEL 0xDEADBEEFu

static tdm_engine *E;
static int serial_devices; /* devices of E that run codec_serial.cl */

static int setup(void **state)
{
    (void)state;
    E = tdm_test_engine();
    serial_devices = 0;
    for (int dv = 0; E && dv < tdm_engine_device_count(E); dv++)
        if (!tdm_engine_device(E, dv)->no_zcur)
            serial_devices++;
        else
            printf("[ SKIPPED  ] device %d (%s): codec_serial.cl is not run there (no_zcur)\n",
                   dv, tdm_engine_device(E, dv)->info.name);
    return E ? 0 : -1;
}

/* Whether device dv runs codec_serial.cl: not rusticl's (no_zcur), whose
 * compiler inlines every codec into tdm_zs_test, which llvmpipe then takes
 * minutes and GBs to compile; the engine never runs these decoders there. */
static int runs_serial(int dv)
{
    return !tdm_engine_device(E, dv)->no_zcur;
}

static int teardown(void **state)
{
    (void)state;
    tdm_engine_close(E);
    return 0;
}

/* A request as the test kernel reads it: {list, block, want docs, out}. */
typedef struct zreq {
    uint32_t list, block, docs, out;
} zreq;

typedef struct zres {
    uint32_t *vals, *counts, *stats;
    size_t nvals;
} zres;

static void zres_free(zres *z)
{
    free(z->vals);
    free(z->counts);
    free(z->stats);
}

static cl_mem make_buf(tdm_device *d, size_t values, const uint32_t *init, uint32_t fill)
{
    tdm_err err = {0};
    cl_mem m = NULL;
    size_t n = values ? values : 1;
    assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_WRITE, n * 4, NULL, &m, &err), TDM_OK);
    uint32_t *h = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        h[i] = init && i < values ? init[i] : fill;
    assert_int_equal(tdm_upload(d, m, 0, n * 4, h, 0, NULL, NULL, &err), TDM_OK);
    free(h);
    return m;
}

/* Runs the requests on d, each with an output region of B + GUARD values. */
static void run(tdm_device *d, const tdm_resident *res, zreq *req, size_t n, zres *z)
{
    tdm_err err = {0};
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        req[i].out = (uint32_t)at;
        at += 1024 + GUARD;
    }
    z->nvals = at;
    cl_mem rq = make_buf(d, n * 4, (const uint32_t *)req, 0);
    cl_mem ov = make_buf(d, at, NULL, SENTINEL);
    cl_mem oc = make_buf(d, n, NULL, SENTINEL), os = make_buf(d, n, NULL, SENTINEL);
    cl_uint nreq = (cl_uint)n;
    tdm_karg args[] = {
        TDM_KARG_MEM(&res->arena),      TDM_KARG_MEM(&res->lists),
        TDM_KARG_MEM(&res->codecs),     TDM_KARG_MEM(&res->block_last),
        TDM_KARG_MEM(&res->block_docs), TDM_KARG_MEM(&res->block_freqs),
        TDM_KARG_U32(&res->nlists),     TDM_KARG_U32(&res->arena_words),
        TDM_KARG_U32(&res->spans),      TDM_KARG_MEM(&rq),
        TDM_KARG_U32(&nreq),            TDM_KARG_MEM(&ov),
        TDM_KARG_MEM(&oc),              TDM_KARG_MEM(&os),
    };
    cl_event ev = NULL;
    if (tdm_kernel_launch(d, "tdm_zs_test", args, sizeof args / sizeof *args, n ? n : 1, 1, 1,
                          &res->ready, &ev, &err) != TDM_OK)
        fail_msg("launch: %s", tdm_err_msg(&err));
    z->vals = malloc(at * 4 + 4);
    z->counts = malloc(n * 4 + 4);
    z->stats = malloc(n * 4 + 4);
    assert_int_equal(tdm_download(d, ov, 0, at * 4, z->vals, 1, &ev, NULL, &err), TDM_OK);
    assert_int_equal(tdm_download(d, oc, 0, n * 4, z->counts, 1, &ev, NULL, &err), TDM_OK);
    assert_int_equal(tdm_download(d, os, 0, n * 4, z->stats, 1, &ev, NULL, &err), TDM_OK);
    clReleaseEvent(ev);
    clReleaseMemObject(rq);
    clReleaseMemObject(ov);
    clReleaseMemObject(oc);
    clReleaseMemObject(os);
}

/* Nothing written past the block's B values (nor past its count). */
static void check_guard(const zres *z, const zreq *q, uint32_t from, const char *what)
{
    for (uint32_t k = from; k < 1024 + GUARD; k++)
        if (z->vals[q->out + k] != SENTINEL)
            fail_msg("%s: list %u block %u: value %u written (%#x)", what, q->list, q->block, k,
                     z->vals[q->out + k]);
}

/* Every block of every list, docids and frequencies, in a shuffled order. */
static void check_index(const residx *x, uint64_t seed)
{
    tdm_err err = {0};
    size_t n = 0, cap = 64;
    zreq *req = malloc(cap * sizeof *req);
    for (uint64_t l = 0; l < x->nlists; l++) {
        uint32_t bs = residx_codec(x, l)->block_size, nb = (residx_df(x, l) + bs - 1) / bs;
        for (uint32_t b = 0; b < nb; b++)
            for (uint32_t w = 0; w < 2; w++) {
                if (n == cap)
                    req = realloc(req, (cap *= 2) * sizeof *req);
                req[n++] = (zreq){(uint32_t)l, b, w, 0};
            }
    }
    tdm_rng g;
    tdm_rng_seed(&g, seed);
    for (size_t i = n; i > 1; i--) {
        size_t j = tdm_rng_range(&g, 0, (uint32_t)(i - 1));
        zreq t = req[i - 1];
        req[i - 1] = req[j];
        req[j] = t;
    }
    for (int dv = 0; dv < tdm_engine_device_count(E); dv++) {
        if (!runs_serial(dv))
            continue;
        tdm_device *d = tdm_engine_device(E, dv);
        tdm_resident res;
        if (tdm_resident_upload(x->r, d, &res, &err) != TDM_OK)
            fail_msg("upload: %s", tdm_err_msg(&err));
        zres z;
        run(d, &res, req, n, &z);
        for (size_t i = 0; i < n; i++) {
            const zreq *q = &req[i];
            const tdm_codec_ops *ops = residx_codec(x, q->list);
            uint32_t bs = ops->block_size, df = residx_df(x, q->list);
            uint32_t want = df - q->block * bs < bs ? df - q->block * bs : bs;
            if (z.counts[i] != want || z.stats[i] != 0)
                fail_msg("%s on %s: list %u (df %u) block %u %s: %u values, status %u; want %u",
                         ops->name, d->info.name, q->list, df, q->block,
                         q->docs ? "docids" : "freqs", z.counts[i], z.stats[i], want);
            const uint32_t *ref = (q->docs ? x->docs : x->freqs)[q->list] + q->block * bs;
            for (uint32_t k = 0; k < want; k++)
                if (z.vals[q->out + k] != ref[k])
                    fail_msg("%s on %s: list %u block %u %s: value %u is %u, want %u", ops->name,
                             d->info.name, q->list, q->block, q->docs ? "docids" : "freqs", k,
                             z.vals[q->out + k], ref[k]);
            check_guard(&z, q, want, ops->name);
        }
        zres_free(&z);
        tdm_resident_release(&res);
    }
    free(req);
}

static void every_codec(void **state)
{
    (void)state;
    size_t count;
    const tdm_codec_ops *const *all = tdm_codec_all(&count);
    for (size_t c = 0; c < count; c++) {
        residx x;
        const char *names[1] = {all[c]->name};
        uint32_t ndocs = all[c]->block_size * 5 + 3;
        residx_make(&x, "zs-codec", names, 1, tdm_test_small() ? 12 : 30, ndocs, 200 + c);
        check_index(&x, 300 + c);
        residx_free(&x);
    }
}

static void mixed_codecs(void **state)
{
    (void)state;
    size_t count;
    const tdm_codec_ops *const *all = tdm_codec_all(&count);
    const char *names[TDM_CODEC_COUNT];
    for (size_t c = 0; c < count; c++)
        names[c] = all[c]->name;
    residx x;
    residx_make(&x, "zs-mixed", names, count, tdm_test_small() ? count + 3 : 5 * count, 3000, 17);
    check_index(&x, 18);
    residx_free(&x);
}

/* Requests out of range: bad, nothing decoded or written. */
static void bad_requests(void **state)
{
    (void)state;
    const char *names[1] = {"bp128"};
    residx x;
    residx_make(&x, "zs-bad", names, 1, 6, 700, 5);
    tdm_err err = {0};
    uint32_t df5 = residx_df(&x, 5), nb5 = (df5 + 127) / 128;
    zreq req[] = {{6, 0, 1, 0}, {99, 0, 0, 0}, {5, nb5, 1, 0}, {0, 1, 1, 0}, {5, 0, 1, 0}};
    for (int dv = 0; dv < tdm_engine_device_count(E); dv++) {
        if (!runs_serial(dv))
            continue;
        tdm_device *d = tdm_engine_device(E, dv);
        tdm_resident res;
        assert_int_equal(tdm_resident_upload(x.r, d, &res, &err), TDM_OK);
        zres z;
        run(d, &res, req, 5, &z);
        for (size_t i = 0; i < 4; i++) {
            assert_int_equal(z.counts[i], 0);
            assert_int_equal(z.stats[i], TDM_CODEC_ST_BADJOB);
            check_guard(&z, &req[i], 0, "bad request");
        }
        assert_int_equal(z.counts[4], df5 < 128 ? df5 : 128);
        assert_int_equal(z.stats[4], 0);
        assert_memory_equal(z.vals + req[4].out, x.docs[5], z.counts[4] * 4);
        zres_free(&z);
        tdm_resident_release(&res);
    }
    residx_free(&x);
}

/* Damaged block tables (every codec) and damaged block headers (the codecs
 * that have one) flag the block corrupt and decode nothing; the other
 * blocks of the launch are right. */
static void corrupt(void **state)
{
    (void)state;
    size_t count;
    const tdm_codec_ops *const *all = tdm_codec_all(&count);
    tdm_err err = {0};
    for (size_t c = 0; c < count; c++) {
        const char *names[1] = {all[c]->name};
        int id = all[c]->id, header = id != TDM_CODEC_RAW && id != TDM_CODEC_BP128 &&
                                      id != TDM_CODEC_BP256;
        residx x;
        uint32_t bs = all[c]->block_size;
        residx_make(&x, "zs-corrupt", names, 1, 5, bs * 3, 9);
        /* list 4 has 2b postings (2 blocks), the only long list: entries 0..2 */
        tdm_ilist l;
        assert_int_equal(tdm_ireader_list(x.r, 4, &l, &err), TDM_OK);
        assert_true(l.nblocks == 2);
        uint32_t P = id == TDM_CODEC_PFOR ? 1 : 0;
        struct { unsigned sec; uint64_t at; uint32_t v; } dmg[] = {
            {TDM_SEC_BLOCK_DOCS, l.first_entry + 1, 0x7FFFFFFFu},   /* docids of 0, 1 */
            {TDM_SEC_BLOCK_FREQS, l.first_entry + 2, 0x7FFFFFFFu},  /* totals: all */
            {TDM_SEC_BLOCK_DOCS, l.first_entry + 1, 1u},            /* sizes: docids */
            {TDM_SEC_ARENA, l.arena_word + 2 * P + l.docs.offsets[1], 0xFFFFFFFFu},
        };
        size_t ndmg = header ? 4 : 3;
        for (size_t k = 0; k < ndmg; k++) {
            tdm_ireader *r = residx_patched(&x, dmg[k].sec, dmg[k].at, dmg[k].v);
            zreq req[] = {{4, 0, 1, 0}, {4, 1, 1, 0}, {4, 0, 0, 0}, {4, 1, 0, 0}, {3, 0, 1, 0}};
            for (int dv = 0; dv < tdm_engine_device_count(E); dv++) {
                if (!runs_serial(dv))
                    continue;
                tdm_device *d = tdm_engine_device(E, dv);
                tdm_resident res;
                assert_int_equal(tdm_resident_upload(r, d, &res, &err), TDM_OK);
                zres z;
                run(d, &res, req, 5, &z);
                uint32_t flagged = 0;
                for (size_t i = 0; i < 5; i++) {
                    if (z.stats[i] == TDM_CODEC_ST_CORRUPT) {
                        assert_int_equal(z.counts[i], 0);
                        check_guard(&z, &req[i], 0, all[c]->name);
                        flagged |= 1u << i;
                        continue;
                    }
                    if (z.stats[i] != 0)
                        fail_msg("%s damage %zu: request %zu status %u", all[c]->name, k, i,
                                 z.stats[i]);
                    const uint32_t *ref = (req[i].docs ? x.docs : x.freqs)[req[i].list] +
                                          req[i].block * bs;
                    uint32_t left = residx_df(&x, req[i].list) - req[i].block * bs;
                    assert_int_equal(z.counts[i], left < bs ? left : bs);
                    assert_memory_equal(z.vals + req[i].out, ref, z.counts[i] * 4);
                }
                /* which blocks each damage must spoil (at least) */
                uint32_t must[] = {0x3, 0xF, 0x1, 0x2};
                if ((flagged & must[k]) != must[k] || (flagged & 0x10))
                    fail_msg("%s damage %zu on %s: flagged %#x, want %#x", all[c]->name, k,
                             d->info.name, flagged, must[k]);
                zres_free(&z);
                tdm_resident_release(&res);
            }
            tdm_ireader_close(r);
        }
        tdm_err_clear(&err);
        residx_free(&x);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_codec),
        cmocka_unit_test(mixed_codecs),
        cmocka_unit_test(bad_requests),
        cmocka_unit_test(corrupt),
    };
    int failed = cmocka_run_group_tests(tests, setup, teardown);
    return failed || serial_devices ? failed : TDM_TEST_SKIPPED; /* ran on no device */
}
