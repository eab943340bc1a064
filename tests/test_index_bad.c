/* Bad index files: every kind fails with a clear message naming the file and
 * the offset, and nothing reads out of bounds (run under ASan too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "codec/codec.h"
#include "common/fsutil.h"
#include "index/format.h"
#include "index/reader.h"
#include "index/writer.h"
#include "testutil.h"

static char good_path[1100];

/* A small index: 300 documents, 40 lists of varied lengths, with `codec`. */
static void make_index(const char *path, const char *codec)
{
    tdm_err err = {0};
    tdm_iwriter *w = NULL;
    tdm_iwriter_options o = {.codec = codec};
    assert_int_equal(tdm_iwriter_open(path, &o, &w, &err), TDM_OK);
    for (uint32_t d = 0; d < 300; d++) {
        char name[16];
        snprintf(name, sizeof name, "d%u", d);
        assert_int_equal(tdm_iwriter_add_doc(w, 10 + d % 17, name, &err), TDM_OK);
    }
    uint32_t docs[300], freqs[300];
    for (uint32_t t = 0; t < 40; t++) {
        size_t n = 0;
        for (uint32_t d = t % 5; d < 300; d += 1 + t % 9)
            docs[n] = d, freqs[n++] = 1 + (d * 7 + t) % 5;
        char term[8];
        snprintf(term, sizeof term, "k%02u", t);
        assert_int_equal(tdm_iwriter_add_list(w, term, strlen(term), docs, freqs, n, &err),
                         TDM_OK);
    }
    assert_int_equal(tdm_iwriter_finish(w, &err), TDM_OK);
    tdm_iwriter_free(w);
}

static int setup(void **state)
{
    (void)state;
    snprintf(good_path, sizeof good_path, "%s/good.idx", tdm_test_tmpdir("index-bad"));
    make_index(good_path, "raw");
    return 0;
}

static unsigned char *load(size_t *n)
{
    unsigned char *b = tdm_read_file(good_path, n);
    assert_non_null(b);
    return b;
}

static tdm_idx_header *hdr(unsigned char *b) { return (tdm_idx_header *)b; }
static tdm_idx_section_entry *sec(unsigned char *b, int i)
{
    return (tdm_idx_section_entry *)(b + sizeof(tdm_idx_header)) + i;
}

/* Recomputes every checksum, so that a test reaches the check it aims at. */
static void fix_sums(unsigned char *b, size_t n)
{
    for (int i = 0; i < TDM_SEC_COUNT; i++) {
        tdm_idx_section_entry *s = sec(b, i);
        if (s->offset <= n && s->size <= n - s->offset)
            s->checksum = XXH64(b + s->offset, s->size, 0);
    }
    hdr(b)->checksum = 0;
    hdr(b)->checksum = XXH64(b, sizeof(tdm_idx_header) + TDM_SEC_COUNT * 32, 0);
}

/* Opens a buffer; expects `code` and a message with the name, "offset" and `part`. */
static void expect_open(unsigned char *b, size_t n, int code, const char *part)
{
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    int rc = tdm_ireader_open_mem(b, n, "bad.idx", &r, &err);
    if (rc != code)
        fail_msg("want %d, got %d: %s", code, rc, tdm_err_msg(&err));
    assert_null(r);
    const char *m = tdm_err_msg(&err);
    if (!strstr(m, "bad.idx") || !strstr(m, "offset") || (part && !strstr(m, part)))
        fail_msg("message lacks the file, offset or '%s': %s", part ? part : "", m);
    tdm_err_clear(&err);
}

static void test_good(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = load(&n);
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_open_mem(b, n, "good", &r, &err), TDM_OK);
    assert_int_equal(tdm_ireader_verify(r, &err), TDM_OK);
    tdm_ireader_close(r);
    free(b);
}

static void test_truncated(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = load(&n);
    size_t cuts[] = {0, 7, 100, sizeof(tdm_idx_header) - 1, sizeof(tdm_idx_header) + 40,
                     n / 2, n - 8, n - 1};
    char path[1200];
    snprintf(path, sizeof path, "%s.cut", good_path);
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        const void *parts[] = {b};
        size_t sizes[] = {cuts[i]};
        assert_int_equal(tdm_write_file_atomic(path, parts, sizes, 1), 0);
        tdm_index *ix = NULL;
        assert_int_equal(tdm_index_open(path, &ix), TDM_ERR_FORMAT);
        assert_null(ix);
        const char *m = tdm_index_errmsg(NULL);
        if (!strstr(m, path) || !strstr(m, "offset") || !strstr(m, "truncated"))
            fail_msg("cut at %zu: %s", cuts[i], m);
    }
    free(b);
}

static void test_wrong_magic(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = load(&n);
    memcpy(b, "PK\x03\x04", 4);
    expect_open(b, n, TDM_ERR_FORMAT, "magic");
    free(b);
}

static void test_future_version(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = load(&n);
    hdr(b)->version = TDM_IDX_VERSION + 1;
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_VERSION, "newer");
    hdr(b)->version = 0;
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_FORMAT, "version");
    free(b);
}

static void test_bad_checksums(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = load(&n);
    hdr(b)->k1 = 2.0;   /* header checksum */
    expect_open(b, n, TDM_ERR_CORRUPT, "header checksum");
    free(b);
    b = load(&n);
    b[sec(b, TDM_SEC_TERMS)->offset] ^= 1;   /* a small section: caught at open */
    expect_open(b, n, TDM_ERR_CORRUPT, "checksum mismatch in section 1");
    free(b);
    /* POSTINGS: open succeeds (O(lexicon)), verify catches it. */
    b = load(&n);
    b[sec(b, TDM_SEC_POSTINGS)->offset + 200] ^= 0x10;
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_open_mem(b, n, "bad.idx", &r, &err), TDM_OK);
    assert_int_equal(tdm_ireader_verify(r, &err), TDM_ERR_CORRUPT);
    assert_non_null(strstr(tdm_err_msg(&err), "postings section"));
    assert_non_null(strstr(tdm_err_msg(&err), "offset"));
    tdm_ireader_close(r);
    tdm_err_clear(&err);
    free(b);
}

/* The raw docid payload of list t, found through the format structs. */
static uint32_t *raw_docid_words(unsigned char *b, uint32_t t)
{
    tdm_idx_term *lex = (tdm_idx_term *)(b + sec(b, TDM_SEC_LEXICON)->offset);
    uint64_t at = sec(b, TDM_SEC_POSTINGS)->offset + lex[t].list_off;
    tdm_idx_list *h = (tdm_idx_list *)(b + at);
    uint64_t cur = at + sizeof *h;
    cur = (cur + 7) / 8 * 8 + h->nblocks * 4;
    cur = (cur + 7) / 8 * 8 + (h->nblocks + 1) * 4;
    return (uint32_t *)(b + (cur + 7) / 8 * 8);
}

static void test_non_increasing_docids(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = load(&n);
    raw_docid_words(b, 3)[5] = 0;   /* a zero gap: a repeated docid */
    fix_sums(b, n);                 /* even with valid checksums */
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_open_mem(b, n, "bad.idx", &r, &err), TDM_OK);
    uint32_t docs[300], freqs[300];
    assert_int_equal(tdm_ireader_decode(r, 3, docs, freqs, &err), TDM_ERR_CORRUPT);
    assert_non_null(strstr(tdm_err_msg(&err), "not increasing"));
    assert_non_null(strstr(tdm_err_msg(&err), "k03"));
    assert_int_equal(tdm_ireader_verify(r, &err), TDM_ERR_CORRUPT);
    tdm_ireader_close(r);
    /* A gap that jumps past the last document. */
    free(b);
    b = load(&n);
    raw_docid_words(b, 4)[1] = 0x7fffffff;
    fix_sums(b, n);
    assert_int_equal(tdm_ireader_open_mem(b, n, "bad.idx", &r, &err), TDM_OK);
    assert_int_equal(tdm_ireader_decode(r, 4, docs, freqs, &err), TDM_ERR_CORRUPT);
    tdm_ireader_close(r);
    tdm_err_clear(&err);
    free(b);
}

static void test_absurd_counts(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = load(&n);
    hdr(b)->ndocs = 1ull << 40;   /* more documents than bytes allow */
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_FORMAT, "do not fit");
    free(b);
    b = load(&n);
    hdr(b)->nterms = UINT64_MAX / 2;
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_FORMAT, "terms");
    free(b);
    b = load(&n);
    sec(b, TDM_SEC_DOCNAMES)->offset = n + 8;   /* a section past the end */
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_FORMAT, "outside the file");
    free(b);
    b = load(&n);
    sec(b, TDM_SEC_DOCLENS)->size = UINT64_MAX - 4;   /* offset + size overflows */
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_FORMAT, "outside the file");
    free(b);
    b = load(&n);
    tdm_idx_term *lex = (tdm_idx_term *)(b + sec(b, TDM_SEC_LEXICON)->offset);
    lex[7].df = 1000000;   /* df above the number of documents */
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_FORMAT, "absurd df");
    free(b);
    b = load(&n);
    lex = (tdm_idx_term *)(b + sec(b, TDM_SEC_LEXICON)->offset);
    lex[39].list_off = sec(b, TDM_SEC_POSTINGS)->size;   /* list past the postings */
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_FORMAT, "outside the postings");
    free(b);
    b = load(&n);
    lex = (tdm_idx_term *)(b + sec(b, TDM_SEC_LEXICON)->offset);
    lex[5].term_off = 1ull << 50;
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_FORMAT, "terms section");
    free(b);
    b = load(&n);
    hdr(b)->total_doclen += 1;
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_CORRUPT, "total document length");
    free(b);
    b = load(&n);
    ((uint64_t *)(b + sec(b, TDM_SEC_DOCNAME_OFFS)->offset))[10] = 1ull << 40;
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_FORMAT, "name entry");
    free(b);
}

static void test_bad_list_header(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = load(&n);
    tdm_idx_term *lex = (tdm_idx_term *)(b + sec(b, TDM_SEC_LEXICON)->offset);
    tdm_idx_list *h = (tdm_idx_list *)(b + sec(b, TDM_SEC_POSTINGS)->offset + lex[2].list_off);
    h->doc_nwords = 1ull << 33;   /* payload larger than the list */
    fix_sums(b, n);
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_open_mem(b, n, "bad.idx", &r, &err), TDM_OK);
    tdm_ilist l;
    assert_int_equal(tdm_ireader_list(r, 2, &l, &err), TDM_ERR_CORRUPT);
    assert_non_null(strstr(tdm_err_msg(&err), "offset"));
    h->doc_nwords = 3;
    h->codec = 999;
    fix_sums(b, n);
    tdm_ireader_close(r);
    assert_int_equal(tdm_ireader_open_mem(b, n, "bad.idx", &r, &err), TDM_OK);
    assert_int_equal(tdm_ireader_list(r, 2, &l, &err), TDM_ERR_CORRUPT);
    assert_non_null(strstr(tdm_err_msg(&err), "unknown codec"));
    tdm_ireader_close(r);
    tdm_err_clear(&err);
    free(b);
}

/* Random damage with checksums recomputed, so that the mutations reach the
 * structural checks and the decoders of every registered codec. */
static void test_random_damage(void **state)
{
    (void)state;
    size_t nc;
    const tdm_codec_ops *const *all = tdm_codec_all(&nc);
    tdm_rng rng;
    tdm_rng_seed(&rng, 1234);
    int rounds = tdm_test_small() ? 100 : 600;
    char path[1200];
    snprintf(path, sizeof path, "%s.codec", good_path);
    uint32_t *docs = malloc(400 * 4), *freqs = malloc(400 * 4);
    for (size_t c = 0; c < nc; c++) {
        make_index(path, all[c]->name);
        size_t n;
        unsigned char *orig = tdm_read_file(path, &n), *b = malloc(n);
        for (int k = 0; k < rounds; k++) {
            memcpy(b, orig, n);
            int flips = (int)tdm_rng_range(&rng, 1, 4);
            for (int f = 0; f < flips; f++) {
                size_t at = tdm_rng_range(&rng, 0, (uint32_t)n - 1);
                b[at] = k % 3 ? (unsigned char)tdm_rng_u32(&rng) : b[at] ^ (1u << (k % 8));
            }
            if (k % 4)
                fix_sums(b, n);
            tdm_ireader *r = NULL;
            tdm_err err = {0};
            if (tdm_ireader_open_mem(b, n, "fuzz", &r, &err) == TDM_OK) {
                const tdm_ireader_info *in = tdm_ireader_info_get(r);
                for (uint64_t i = 0; i < in->nterms; i++) {
                    uint32_t df;
                    tdm_ireader_term(r, i, NULL, &df, NULL);
                    if (df <= 400)
                        tdm_ireader_decode(r, i, docs, freqs, &err);
                }
                for (uint64_t d = 0; d < in->ndocs; d++)
                    assert_non_null(tdm_ireader_docname(r, d));
                tdm_ireader_verify(r, &err);
                tdm_ireader_close(r);
            }
            tdm_err_clear(&err);
        }
        free(b);
        free(orig);
    }
    free(docs);
    free(freqs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_wrong_magic),
        cmocka_unit_test(test_future_version),
        cmocka_unit_test(test_bad_checksums),
        cmocka_unit_test(test_non_increasing_docids),
        cmocka_unit_test(test_absurd_counts),
        cmocka_unit_test(test_bad_list_header),
        cmocka_unit_test(test_random_damage),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
