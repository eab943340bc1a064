/* Bad index files: every kind fails with a clear message naming the file and
 * the offset, and nothing reads out of bounds (run under ASan too). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "codec/codec.h"
#include "common/fsutil.h"
#include "import/ciff.h"
#include "index/format.h"
#include "import/pisa.h"
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
        const char *m = tdm_last_error();
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
    b[sec(b, TDM_SEC_TERMS)->offset] ^= 1;   /* a small section: caught at open, by name */
    expect_open(b, n, TDM_ERR_CORRUPT, "checksum mismatch in section terms");
    free(b);
    /* The block table: a few percent of the file, caught at open by name. */
    unsigned ids[] = {TDM_SEC_BLOCK_LAST, TDM_SEC_BLOCK_DOCS, TDM_SEC_BLOCK_FREQS,
                      TDM_SEC_BLOCK_MAX};
    for (size_t k = 0; k < sizeof ids / sizeof *ids; k++) {
        b = load(&n);
        b[sec(b, ids[k])->offset + sec(b, ids[k])->size / 2] ^= 0x10;
        char want[64];
        snprintf(want, sizeof want, "checksum mismatch in section %s",
                 tdm_ireader_section_name(ids[k]));
        expect_open(b, n, TDM_ERR_CORRUPT, want);
        free(b);
    }
    /* The arena: open succeeds (O(lexicon)); the first list view, the
     * payload check and verify refuse it, again and again (remembered). */
    b = load(&n);
    b[sec(b, TDM_SEC_ARENA)->offset + sec(b, TDM_SEC_ARENA)->size / 2] ^= 0x10;
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_open_mem(b, n, "bad.idx", &r, &err), TDM_OK);
    for (int again = 0; again < 2; again++) {
        tdm_ilist l;
        assert_int_equal(tdm_ireader_list(r, 0, &l, &err), TDM_ERR_CORRUPT);
        if (!strstr(tdm_err_msg(&err), "bad.idx: offset") ||
            !strstr(tdm_err_msg(&err), "checksum mismatch in section arena"))
            fail_msg("list view: %s", tdm_err_msg(&err));
        assert_int_equal(tdm_ireader_check_list(r, 3, &err), TDM_ERR_CORRUPT);
        assert_int_equal(tdm_ireader_verify(r, &err), TDM_ERR_CORRUPT);
        assert_non_null(strstr(tdm_err_msg(&err), "checksum mismatch in section arena"));
        assert_int_equal(tdm_ireader_check_payload(r, &err), TDM_ERR_CORRUPT);
    }
    tdm_ireader_close(r);
    tdm_err_clear(&err);
    free(b);
}

static tdm_idx_list *lists(unsigned char *b)
{
    return (tdm_idx_list *)(b + sec(b, TDM_SEC_LISTS)->offset);
}

static void *section(unsigned char *b, unsigned id) { return b + sec(b, id)->offset; }

/* The docid payload of list t (the test index uses raw: no parameters). */
static uint32_t *docid_words(unsigned char *b, uint32_t t)
{
    return (uint32_t *)section(b, TDM_SEC_ARENA) + lists(b)[t].words;
}

/* The frequency payload of one-block list t. */
static uint32_t *freq_words(unsigned char *b, uint32_t t)
{
    return docid_words(b, t) + lists(b)[t].ext;
}

/* Opens b (valid checksums) and expects decoding list t to fail naming `part`. */
static void expect_decode(unsigned char *b, size_t n, uint32_t t, const char *part)
{
    fix_sums(b, n);
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_open_mem(b, n, "bad.idx", &r, &err), TDM_OK);
    uint32_t docs[300], freqs[300];
    int rc = tdm_ireader_decode(r, t, docs, freqs, &err);
    if (rc != TDM_ERR_CORRUPT || !strstr(tdm_err_msg(&err), part) ||
        !strstr(tdm_err_msg(&err), "offset") || !strstr(tdm_err_msg(&err), "bad.idx"))
        fail_msg("list %u: want '%s', got %d: %s", t, part, rc, tdm_err_msg(&err));
    assert_int_equal(tdm_ireader_verify(r, &err), TDM_ERR_CORRUPT);
    tdm_ireader_close(r);
    tdm_err_clear(&err);
}

static void test_non_increasing_docids(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = load(&n);
    docid_words(b, 3)[5] = 0;   /* a zero gap: a repeated docid */
    expect_decode(b, n, 3, "not increasing");
    free(b);
    b = load(&n);
    docid_words(b, 3)[5] = 0;
    expect_decode(b, n, 3, "k03");
    free(b);
    b = load(&n);
    docid_words(b, 4)[1] = 0x7fffffff;   /* a gap past the last document */
    expect_decode(b, n, 4, "not increasing or out of range");
    free(b);
    b = load(&n);
    docid_words(b, 1)[127] += 1;   /* list 1 (odd docids, 2 blocks): block 0 ends late */
    expect_decode(b, n, 1, "stored last docid");
    free(b);
}

/* 11.4: a damaged frequency decodes, but not to a wrong answer: the sum
 * against cf catches it, in a one-block list and in a longer one. */
static void test_damaged_frequency(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = load(&n);
    freq_words(b, 3)[7] ^= 2;
    expect_decode(b, n, 3, "cf");
    free(b);
    b = load(&n);
    uint32_t *blk_docs = section(b, TDM_SEC_BLOCK_DOCS);
    docid_words(b, 0)[blk_docs[lists(b)[0].ext + 3] + 250] ^= 4;   /* past the 3 docid blocks */
    expect_decode(b, n, 0, "cf");
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
    sec(b, TDM_SEC_DOCNAMES)->offset = n + 64;   /* a section past the end */
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_FORMAT, "section docnames");
    free(b);
    b = load(&n);
    sec(b, TDM_SEC_DOCLENS)->size = UINT64_MAX - 4;   /* offset + size overflows */
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_FORMAT, "outside the file");
    free(b);
    b = load(&n);
    hdr(b)->npostings += 1;
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_CORRUPT, "postings in the header");
    free(b);
    b = load(&n);
    hdr(b)->total_doclen += 1;
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_CORRUPT, "total document length");
    free(b);
    b = load(&n);
    ((uint64_t *)section(b, TDM_SEC_DOCNAME_OFFS))[10] = 1ull << 40;
    fix_sums(b, n);
    expect_open(b, n, TDM_ERR_FORMAT, "name entry");
    free(b);
}

/* A damage to b (checksums then fixed) that open must refuse with `part`. */
typedef void (*damage_fn)(unsigned char *b);
static void expect_damage(damage_fn f, int code, const char *part)
{
    size_t n;
    unsigned char *b = load(&n);
    f(b);
    fix_sums(b, n);
    expect_open(b, n, code, part);
    free(b);
}

static void d_df_zero(unsigned char *b) { lists(b)[7].df = 0; }
static void d_df_big(unsigned char *b) { lists(b)[7].df = 1000000; }
static void d_cf_small(unsigned char *b) { ((uint32_t *)section(b, TDM_SEC_TERM_CF))[7] = 1; }
static void d_codec(unsigned char *b) { ((uint8_t *)section(b, TDM_SEC_CODECS))[2] = 200; }
static void d_nan(unsigned char *b) { lists(b)[5].max_score = NAN; }
static void d_zero_max(unsigned char *b) { lists(b)[5].max_score = 0; }
static void d_words_back(unsigned char *b) { lists(b)[6].words = lists(b)[5].words - 1; }
static void d_words_first(unsigned char *b) { lists(b)[0].words = 1; }
static void d_words_past(unsigned char *b) { lists(b)[39].words = 0x7fffffff; }
static void d_ext_big(unsigned char *b) { lists(b)[4].ext += 1000; }
static void d_ext_max(unsigned char *b) { lists(b)[4].ext = TDM_IDX_SHORT_MAXW + 1; }
static void d_entry(unsigned char *b) { lists(b)[9].ext += 1; }
static void d_entries(unsigned char *b) { sec(b, TDM_SEC_BLOCK_MAX)->size -= 1; }
static void d_arena_odd(unsigned char *b) { sec(b, TDM_SEC_ARENA)->size -= 2; }
static void d_term_empty(unsigned char *b)
{
    uint32_t *o = section(b, TDM_SEC_TERM_OFFS);
    o[4] = o[3];
}
static void d_term_order(unsigned char *b)
{
    char *t = section(b, TDM_SEC_TERMS);
    t[((uint32_t *)section(b, TDM_SEC_TERM_OFFS))[6] + 2] = '0';   /* k06 -> k00 */
}
static void d_term_span(unsigned char *b) { ((uint32_t *)section(b, TDM_SEC_TERM_OFFS))[40]++; }
static void d_pad(unsigned char *b) { b[sec(b, TDM_SEC_LISTS)->offset - 1] = 7; }
static void d_reserved(unsigned char *b) { hdr(b)->quant = 1; }
static void d_name_pad(unsigned char *b) { hdr(b)->codec[30] = 'x'; }
static void d_sec_id(unsigned char *b) { sec(b, 3)->id = 4; }
static void d_sec_moved(unsigned char *b) { sec(b, TDM_SEC_STOPWORDS)->offset += 64; }

static void test_bad_lexicon(void **state)
{
    (void)state;
    const struct { damage_fn f; int code; const char *part; } cases[] = {
        {d_df_zero, TDM_ERR_FORMAT, "absurd df"},
        {d_df_big, TDM_ERR_FORMAT, "absurd df"},
        {d_cf_small, TDM_ERR_FORMAT, "absurd df or cf"},
        {d_codec, TDM_ERR_FORMAT, "section codecs: list 2: unknown codec 200"},
        {d_nan, TDM_ERR_FORMAT, "max_score"},
        {d_zero_max, TDM_ERR_FORMAT, "max_score"},
        {d_words_back, TDM_ERR_FORMAT, "section lists: list 5: arena span"},
        {d_words_first, TDM_ERR_FORMAT, "list 0: arena span"},
        {d_words_past, TDM_ERR_FORMAT, "section lists: list 38"},
        {d_ext_big, TDM_ERR_FORMAT, "one-block payload sizes"},
        {d_ext_max, TDM_ERR_FORMAT, "one-block payload sizes"},
        {d_entry, TDM_ERR_FORMAT, "block-table entries"},
        {d_entries, TDM_ERR_FORMAT, "block entries"},
        {d_arena_odd, TDM_ERR_FORMAT, "section arena"},
        {d_term_empty, TDM_ERR_FORMAT, "term 3 is empty"},
        {d_term_order, TDM_ERR_FORMAT, "increasing order"},
        {d_term_span, TDM_ERR_FORMAT, "do not span"},
        {d_pad, TDM_ERR_FORMAT, "padding byte"},
        {d_reserved, TDM_ERR_FORMAT, "reserved"},
        {d_name_pad, TDM_ERR_FORMAT, "zero-padded"},
        {d_sec_id, TDM_ERR_FORMAT, "section block_last (id 4)"},
        {d_sec_moved, TDM_ERR_FORMAT, "section stopwords"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_damage(cases[i].f, cases[i].code, cases[i].part);
}

/* Block-table damage with its checksums recomputed: open passes (it does
 * not read the table's entries), the list view refuses it with the
 * section's name. */
static void expect_list(unsigned char *b, size_t n, uint32_t t, const char *part)
{
    fix_sums(b, n);
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_open_mem(b, n, "bad.idx", &r, &err), TDM_OK);
    tdm_ilist l;
    int rc = tdm_ireader_list(r, t, &l, &err);
    if (rc != TDM_ERR_CORRUPT || !strstr(tdm_err_msg(&err), part) ||
        !strstr(tdm_err_msg(&err), "offset"))
        fail_msg("list %u: want '%s', got %d: %s", t, part, rc, tdm_err_msg(&err));
    assert_int_equal(tdm_ireader_verify(r, &err), TDM_ERR_CORRUPT);
    tdm_ireader_close(r);
    tdm_err_clear(&err);
}

static void test_bad_block_table(void **state)
{
    (void)state;
    size_t n;
    struct { unsigned sec; int at; uint32_t value; const char *part; } cases[] = {
        {TDM_SEC_BLOCK_LAST, 0, 5, "section block_last: list of term 'k00': first base"},
        {TDM_SEC_BLOCK_LAST, 2, 0, "block last docids not increasing"},
        {TDM_SEC_BLOCK_LAST, 3, 300, "block last docids not increasing or out of range"},
        {TDM_SEC_BLOCK_DOCS, 3, 1, "section block_docs: list of term 'k00': payload sizes"},
        {TDM_SEC_BLOCK_DOCS, 1, 1000, "section arena: list of term 'k00': encoded list"},
        {TDM_SEC_BLOCK_FREQS, 0, 1, "endpoints"},
        {TDM_SEC_BLOCK_MAX, 3, 9, "section block_max: list of term 'k00': closing entry"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unsigned char *b = load(&n);
        uint32_t k = lists(b)[0].ext + (uint32_t)cases[i].at;
        if (cases[i].sec == TDM_SEC_BLOCK_MAX)
            ((uint8_t *)section(b, cases[i].sec))[k] = (uint8_t)cases[i].value;
        else
            ((uint32_t *)section(b, cases[i].sec))[k] = cases[i].value;
        expect_list(b, n, 0, cases[i].part);
        free(b);
    }
}

/* A quantized bound lowered below its block's best score: only verify can
 * tell, and it does. */
static void test_understated_bound(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = load(&n);
    uint8_t *q = section(b, TDM_SEC_BLOCK_MAX);
    uint32_t k = lists(b)[9].ext;
    q[k + 1] = q[k + 1] ? (uint8_t)(q[k + 1] / 2) : 0;
    lists(b)[2].max_score /= 2;   /* a one-block list's bound is its max_score */
    fix_sums(b, n);
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_open_mem(b, n, "bad.idx", &r, &err), TDM_OK);
    assert_int_equal(tdm_ireader_verify(r, &err), TDM_ERR_CORRUPT);
    assert_non_null(strstr(tdm_err_msg(&err), "bound below a score"));
    assert_non_null(strstr(tdm_err_msg(&err), "'k02'"));
    tdm_ireader_close(r);
    free(b);
    b = load(&n);
    q = section(b, TDM_SEC_BLOCK_MAX);
    q[lists(b)[9].ext + 1] = 0;
    fix_sums(b, n);
    assert_int_equal(tdm_ireader_open_mem(b, n, "bad.idx", &r, &err), TDM_OK);
    assert_int_equal(tdm_ireader_verify(r, &err), TDM_ERR_CORRUPT);
    assert_non_null(strstr(tdm_err_msg(&err), "section block_max: list of term 'k09'"));
    tdm_ireader_close(r);
    tdm_err_clear(&err);
    free(b);
}

/* 11.4: an index with a damaged frequency is not passed on. Exports to CIFF
 * and PISA fail naming the damage and leave no output: by the payload
 * checksum, and with the checksums recomputed by the cf check of the list's
 * decode. `tandem lookup` of the term exits non-zero. */
static void test_damage_not_exported(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("index-bad-export");
    char path[1100], out[1200], pisa[1200], cmd[4096];
    snprintf(path, sizeof path, "%s/damaged.idx", dir);
    snprintf(out, sizeof out, "%s/out.ciff", dir);
    snprintf(pisa, sizeof pisa, "%s/out", dir);
    for (int fixed = 0; fixed < 2; fixed++) {
        size_t n;
        unsigned char *b = load(&n);
        freq_words(b, 3)[7] ^= 2;
        if (fixed)
            fix_sums(b, n);
        const void *parts[] = {b};
        size_t sizes[] = {n};
        assert_int_equal(tdm_write_file_atomic(path, parts, sizes, 1), 0);
        tdm_ireader *r = NULL;
        tdm_err err = {0};
        assert_int_equal(tdm_ireader_open(path, &r, &err), TDM_OK);
        const char *want = fixed ? "cf" : "checksum mismatch in section arena";
        assert_int_equal(tdm_ciff_export(r, out, NULL, &err), TDM_ERR_CORRUPT);
        if (!strstr(tdm_err_msg(&err), want) || !strstr(tdm_err_msg(&err), path))
            fail_msg("CIFF export: want '%s': %s", want, tdm_err_msg(&err));
        assert_int_not_equal(access(out, F_OK), 0);
        assert_int_equal(tdm_pisa_export(r, pisa, &err), TDM_ERR_CORRUPT);
        assert_non_null(strstr(tdm_err_msg(&err), want));
        snprintf(cmd, sizeof cmd, "%s.docs", pisa);
        assert_int_not_equal(access(cmd, F_OK), 0);
        tdm_ireader_close(r);
        tdm_err_clear(&err);
        free(b);
        const char *cli = getenv("TANDEM_CLI");
        if (!cli) {
            print_message("skipped: lookup (no TANDEM_CLI)\n");
            continue;
        }
        snprintf(cmd, sizeof cmd, "'%s' lookup '%s' k03 > '%s/lookup.txt' 2>&1", cli, path, dir);
        assert_int_not_equal(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "grep -q '%s' '%s/lookup.txt'",
                 fixed ? "frequencies do not sum" : want, dir);
        assert_int_equal(system(cmd), 0);
    }
}

/* A file of format 1 (its header as version 1 wrote it) is refused with a
 * message that says how to convert it. */
static void test_version1(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = load(&n);
    hdr(b)->version = 1;
    hdr(b)->nsections = 7;
    fix_sums(b, n);
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_open_mem(b, n, "old.idx", &r, &err), TDM_ERR_VERSION);
    const char *m = tdm_err_msg(&err);
    if (!strstr(m, "old.idx") || !strstr(m, "version 1") || !strstr(m, "tandem build") ||
        !strstr(m, "CIFF"))
        fail_msg("%s", m);
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
        cmocka_unit_test(test_damaged_frequency),
        cmocka_unit_test(test_damage_not_exported),
        cmocka_unit_test(test_bad_lexicon),
        cmocka_unit_test(test_bad_block_table),
        cmocka_unit_test(test_understated_bound),
        cmocka_unit_test(test_version1),
        cmocka_unit_test(test_random_damage),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
