/* Format versions (format.h): version 3 writes an impact index's quantizer
 * in fields of its own; a version 2 file (its rule in k1 and b) reads as
 * before, with the same facts, postings and verification; a shard of it is
 * version 3; the fields each version must leave 0 are checked. Version 2
 * files are made from version 3 ones byte for byte as version 2 wrote them
 * (forge.h's forge_v2). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "forge.h"
#include "index/format.h"
#include "index/reader.h"
#include "index/shard.h"
#include "index/writer.h"
#include "testutil.h"

#define NDOCS 300u
#define NLISTS 40u

/* 300 documents, 40 lists of varied lengths (some of several blocks). */
static void write_index(const char *path, const tdm_iwriter_options *o)
{
    tdm_err err = {0};
    tdm_iwriter *w = NULL;
    assert_int_equal(tdm_iwriter_open(path, o, &w, &err), TDM_OK);
    uint32_t dl[NDOCS] = {0}, docs[NLISTS][NDOCS], freqs[NLISTS][NDOCS], n[NLISTS];
    for (uint32_t t = 0; t < NLISTS; t++) {
        n[t] = 0;
        for (uint32_t d = t % 5; d < NDOCS; d += 1 + t % 9) {
            docs[t][n[t]] = d;
            freqs[t][n[t]++] = 1 + (d * 7 + t) % (o->impact ? 200 : 5);
            dl[d] += freqs[t][n[t] - 1];
        }
    }
    for (uint32_t d = 0; d < NDOCS; d++) {
        char name[16];
        snprintf(name, sizeof name, "d%u", d);
        assert_int_equal(tdm_iwriter_add_doc(w, dl[d], name, &err), TDM_OK);
    }
    for (uint32_t t = 0; t < NLISTS; t++) {
        char term[8];
        snprintf(term, sizeof term, "k%02u", t);
        assert_int_equal(tdm_iwriter_add_list(w, term, strlen(term), docs[t], freqs[t], n[t],
                                              &err), TDM_OK);
    }
    assert_int_equal(tdm_iwriter_finish(w, &err), TDM_OK);
    tdm_iwriter_free(w);
}

static unsigned char *load(const char *path, size_t *n)
{
    unsigned char *b = tdm_read_file(path, n);
    assert_non_null(b);
    return b;
}

static tdm_ireader *open_ok(const unsigned char *b, size_t n, const char *name)
{
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    if (tdm_ireader_open_mem(b, n, name, &r, &err) != TDM_OK)
        fail_msg("%s: %s", name, tdm_err_msg(&err));
    if (tdm_ireader_verify(r, &err) != TDM_OK)
        fail_msg("%s: verify: %s", name, tdm_err_msg(&err));
    return r;
}

/* Every fact but the version and the header's own size, and every posting. */
static void assert_same_index(const tdm_ireader *a, const tdm_ireader *b)
{
    const tdm_ireader_info *x = tdm_ireader_info_get(a), *y = tdm_ireader_info_get(b);
    assert_true(x->ndocs == y->ndocs && x->nterms == y->nterms && x->npostings == y->npostings);
    assert_true(x->k1 == y->k1 && x->b == y->b);
    assert_true(x->impact == y->impact && x->quant == y->quant &&
                x->quant_bits == y->quant_bits);
    assert_true(x->quant_scale == y->quant_scale && x->quant_max == y->quant_max);
    assert_string_equal(x->codec, y->codec);
    assert_string_equal(x->stemmer, y->stemmer);
    uint32_t d1[NDOCS], f1[NDOCS], d2[NDOCS], f2[NDOCS];
    tdm_err err = {0};
    for (uint64_t t = 0; t < x->nterms; t++) {
        uint32_t df;
        assert_non_null(tdm_ireader_term(a, t, NULL, &df, NULL));
        assert_int_equal(tdm_ireader_decode(a, t, d1, f1, &err), TDM_OK);
        assert_int_equal(tdm_ireader_decode(b, t, d2, f2, &err), TDM_OK);
        assert_memory_equal(d1, d2, df * sizeof *d1);
        assert_memory_equal(f1, f2, df * sizeof *f1);
    }
}

/* One index written as version 3, the same as version 2: the same facts. */
static void same_in_both(const char *dir, const char *name, const tdm_iwriter_options *o)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s.idx", dir, name);
    write_index(path, o);
    size_t n;
    unsigned char *b3 = load(path, &n), *b2 = load(path, &n);
    forge_v2(b2, n);
    tdm_ireader *r3 = open_ok(b3, n, "v3.idx"), *r2 = open_ok(b2, n, "v2.idx");
    assert_int_equal(tdm_ireader_info_get(r3)->version, 3);
    assert_int_equal(tdm_ireader_info_get(r2)->version, 2);
    assert_same_index(r3, r2);
    const tdm_idx_header *h3 = tdm_ireader_header(r3), *h2 = tdm_ireader_header(r2);
    if (o->impact) { /* the file keeps the rule where each version put it */
        tdm_idx_header raw2, raw3;
        memcpy(&raw3, b3, sizeof raw3);
        memcpy(&raw2, b2, TDM_IDX_HEADER_V2);
        assert_true(raw3.k1 == 0 && raw3.b == 0);
        assert_true(raw2.k1 == raw3.quant_scale && raw2.b == raw3.quant_max);
        assert_true(h2->k1 == 0 && h2->b == 0 && h2->quant_scale == h3->quant_scale &&
                    h2->quant_max == h3->quant_max);
    } else {
        assert_true(h3->quant_scale == 0 && h3->quant_max == 0);
    }
    tdm_ireader_close(r3);
    tdm_ireader_close(r2);
    free(b3);
    free(b2);
}

static void reads_version2(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("index-v2");
    tdm_iwriter_options bm25 = {.codec = "bp128"};
    same_in_both(dir, "bm25", &bm25);
    tdm_iwriter_options k = {.codec = "raw", .k1 = 0.9, .b = 0.4};
    same_in_both(dir, "bm25k", &k);
    tdm_iwriter_options integer = {.codec = "bp128", .impact = 1, .quant = TDM_QUANT_INTEGER};
    same_in_both(dir, "int", &integer);
    tdm_iwriter_options scale = {.codec = "pfor", .impact = 1, .quant = TDM_QUANT_SCALE,
                                 .quant_scale = 10};
    same_in_both(dir, "scale", &scale);
    tdm_iwriter_options linear = {.codec = "vbyte128", .impact = 1, .quant = TDM_QUANT_LINEAR,
                                  .quant_bits = 8, .quant_scale = 254.0f / 3.5f,
                                  .quant_max = 3.5};
    same_in_both(dir, "linear", &linear);
}

/* A shard of a version 2 impact index is version 3, its rule in the new
 * fields, its postings those of the same shard of the version 3 index. */
static void shard_of_version2(void **state)
{
    (void)state;
    char path[1100];
    snprintf(path, sizeof path, "%s/s.idx", tdm_test_tmpdir("index-v2-shard"));
    tdm_iwriter_options o = {.codec = "bp128", .impact = 1, .quant = TDM_QUANT_LINEAR,
                             .quant_bits = 9, .quant_scale = 510.0f / 2.0f, .quant_max = 2};
    write_index(path, &o);
    size_t n;
    unsigned char *b3 = load(path, &n), *b2 = load(path, &n);
    forge_v2(b2, n);
    tdm_ireader *r3 = open_ok(b3, n, "v3.idx"), *r2 = open_ok(b2, n, "v2.idx");
    uint32_t bounds[3];
    tdm_err err = {0};
    assert_int_equal(tdm_shard_bounds(r2, 2, bounds, &err), TDM_OK);
    for (uint32_t i = 0; i < 2; i++) {
        void *img2, *img3;
        size_t s2, s3;
        assert_int_equal(tdm_shard_make(r2, 2, bounds, i, 1, &img2, &s2, &err), TDM_OK);
        assert_int_equal(tdm_shard_make(r3, 2, bounds, i, 1, &img3, &s3, &err), TDM_OK);
        tdm_ireader *sh2 = open_ok(img2, s2, "shard2"), *sh3 = open_ok(img3, s3, "shard3");
        assert_int_equal(tdm_ireader_info_get(sh2)->version, TDM_IDX_VERSION);
        assert_int_equal(tdm_ireader_header(sh2)->header_size, sizeof(tdm_idx_header));
        assert_true(tdm_ireader_header(sh2)->k1 == 0 && tdm_ireader_header(sh2)->b == 0);
        assert_same_index(sh3, sh2);
        /* the shard of version 2 forged back to version 2 reads the same too */
        forge_v2(img2, s2);
        tdm_ireader *sh22 = open_ok(img2, s2, "shard22");
        assert_same_index(sh3, sh22);
        tdm_ireader_close(sh22);
        tdm_ireader_close(sh2);
        tdm_ireader_close(sh3);
        free(img2);
        free(img3);
    }
    tdm_ireader_close(r3);
    tdm_ireader_close(r2);
    free(b3);
    free(b2);
}

/* Opens a header damaged (checksums resealed); expects `code` and `part`. */
static void expect_refused(const unsigned char *good, size_t n, int v2,
                           void (*damage)(tdm_idx_header *h), int code, const char *part)
{
    unsigned char *b = malloc(n);
    assert_non_null(b);
    memcpy(b, good, n);
    if (v2)
        forge_v2(b, n);
    tdm_idx_header h;
    memcpy(&h, b, sizeof h);
    damage(&h);
    memcpy(b, &h, v2 ? TDM_IDX_HEADER_V2 : sizeof h);
    forge_sums(b, n);
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    int rc = tdm_ireader_open_mem(b, n, "bad.idx", &r, &err);
    if (rc != code || !strstr(tdm_err_msg(&err), "bad.idx: offset") ||
        !strstr(tdm_err_msg(&err), part))
        fail_msg("want %d '%s', got %d: %s", code, part, rc, tdm_err_msg(&err));
    assert_null(r);
    tdm_err_clear(&err);
    free(b);
}

static void d_reserved(tdm_idx_header *h) { h->reserved[1] = 1; }
static void d_k1_in_impact(tdm_idx_header *h) { h->k1 = 1.2; }
static void d_b_in_impact(tdm_idx_header *h) { h->b = 0.75; }
static void d_scale_in_bm25(tdm_idx_header *h) { h->quant_scale = 1; }
static void d_max_in_bm25(tdm_idx_header *h) { h->quant_max = 2; }
static void d_bad_scale(tdm_idx_header *h) { h->quant_scale = -1; }
static void d_bad_max(tdm_idx_header *h) { h->quant_max = 0; }
static void d_v2_bad_scale(tdm_idx_header *h) { h->k1 = 0; }
static void d_v2_nan_max(tdm_idx_header *h) { h->b = NAN; }
static void d_size_160(tdm_idx_header *h) { h->header_size = TDM_IDX_HEADER_V2; }
static void d_size_192(tdm_idx_header *h) { h->header_size = sizeof *h; }

static void refused(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("index-v2-bad");
    char bpath[1100], ipath[1100];
    snprintf(bpath, sizeof bpath, "%s/b.idx", dir);
    snprintf(ipath, sizeof ipath, "%s/i.idx", dir);
    tdm_iwriter_options bm25 = {.codec = "raw"};
    tdm_iwriter_options lin = {.codec = "raw", .impact = 1, .quant = TDM_QUANT_LINEAR,
                               .quant_bits = 8, .quant_scale = 254.0f / 3, .quant_max = 3};
    write_index(bpath, &bm25);
    write_index(ipath, &lin);
    size_t nb, ni;
    unsigned char *b = load(bpath, &nb), *im = load(ipath, &ni);
    expect_refused(b, nb, 0, d_reserved, TDM_ERR_FORMAT, "reserved header words");
    expect_refused(im, ni, 0, d_k1_in_impact, TDM_ERR_FORMAT, "BM25 parameters");
    expect_refused(im, ni, 0, d_b_in_impact, TDM_ERR_FORMAT, "in an impact index");
    expect_refused(b, nb, 0, d_scale_in_bm25, TDM_ERR_FORMAT, "not an impact index");
    expect_refused(b, nb, 0, d_max_in_bm25, TDM_ERR_FORMAT, "not an impact index");
    expect_refused(im, ni, 0, d_bad_scale, TDM_ERR_FORMAT, "bad quantization rule");
    expect_refused(im, ni, 0, d_bad_max, TDM_ERR_FORMAT, "bad quantization rule");
    expect_refused(im, ni, 1, d_v2_bad_scale, TDM_ERR_FORMAT, "bad quantization rule");
    expect_refused(im, ni, 1, d_v2_nan_max, TDM_ERR_FORMAT, "bad quantization rule");
    expect_refused(b, nb, 0, d_size_160, TDM_ERR_FORMAT, "header size 160");
    expect_refused(b, nb, 1, d_size_192, TDM_ERR_FORMAT, "header size 192");
    /* cut inside version 3's header, past version 2's: truncated */
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_open_mem(b, sizeof(tdm_idx_header) - 8, "cut.idx", &r, &err),
                     TDM_ERR_FORMAT);
    assert_non_null(strstr(tdm_err_msg(&err), "truncated"));
    tdm_err_clear(&err);
    free(b);
    free(im);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_version2),
        cmocka_unit_test(shard_of_version2),
        cmocka_unit_test(refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
