/* CIFF import and export: the toy file's counts, exact round trips (index
 * and CIFF bytes), and a clear error with file and offset for every kind of
 * malformed input, including every truncation and byte flip of the toy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/fsutil.h"
#include "import/ciff.h"
#include "import/ciff.pb-c.h"
#include "randcoll.h"
#include "testutil.h"

#define TOY "ciff/toy-complete-20200309.ciff"

static void import_ok(const char *ciff, const char *index)
{
    tdm_err err = {0};
    if (tdm_ciff_import(ciff, index, NULL, &err) != TDM_OK)
        fail_msg("import %s: %s", ciff, tdm_err_msg(&err));
    tdm_err_clear(&err);
}

static void export_ok(const char *index, const char *ciff)
{
    tdm_err err = {0};
    tdm_ireader *r = open_index(index);
    if (tdm_ciff_export(r, ciff, NULL, &err) != TDM_OK)
        fail_msg("export %s: %s", index, tdm_err_msg(&err));
    tdm_ireader_close(r);
    tdm_err_clear(&err);
}

/* ---- the toy file */

static void toy_header_and_docs(void **state)
{
    (void)state;
    tdm_err err = {0};
    tdm_ciff *c = NULL;
    if (tdm_ciff_open(tdm_test_data(TOY), &c, &err) != TDM_OK)
        fail_msg("%s", tdm_err_msg(&err));
    const tdm_ciff_info *in = tdm_ciff_info_get(c);
    assert_int_equal(in->version, 1);
    assert_int_equal(in->num_postings_lists, 9);
    assert_int_equal(in->num_docs, 3);
    assert_int_equal(in->total_terms_in_collection, 16);
    assert_true(in->average_doclength > 5.33 && in->average_doclength < 5.34);
    assert_non_null(strstr(in->description, "Anserini"));
    assert_int_equal(in->empty_lists, 0);
    tdm_coll_source src;
    tdm_ciff_source(c, &src);
    assert_int_equal(src.ndocs, 3);
    assert_int_equal(src.nlists, 9);
    assert_string_equal(src.docnames[0], "WSJ_1");
    assert_string_equal(src.docnames[1], "TREC_DOC_1");
    assert_string_equal(src.docnames[2], "DOC222");
    assert_int_equal(src.doclens[0], 6);
    assert_int_equal(src.doclens[1], 4);
    assert_int_equal(src.doclens[2], 6);
    tdm_coll_list l;
    assert_int_equal(src.list(src.self, 7, &l, &err), TDM_OK); /* "text" */
    assert_int_equal(l.term_len, 4);
    assert_memory_equal(l.term, "text", 4);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.docids[0], 0);
    assert_int_equal(l.docids[2], 2);
    assert_int_equal(l.freqs[2], 3);
    tdm_ciff_close(c);
    tdm_err_clear(&err);
}

static void toy_imports_with_its_counts(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("ciff_toy");
    char *idx = path_in(dir, "toy.tdm");
    import_ok(tdm_test_data(TOY), idx);
    tdm_ireader *r = open_index(idx);
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    assert_int_equal(in->ndocs, 3);
    assert_int_equal(in->nterms, 9);
    assert_int_equal(in->npostings, 14);
    assert_int_equal(in->total_doclen, 16);
    assert_true(in->avg_doclen > 5.333 && in->avg_doclen < 5.334);
    assert_string_equal(tdm_ireader_docname(r, 0), "WSJ_1");
    assert_string_equal(tdm_ireader_docname(r, 1), "TREC_DOC_1");
    assert_string_equal(tdm_ireader_docname(r, 2), "DOC222");
    assert_int_equal(tdm_ireader_doclens(r)[1], 4);
    uint64_t i;
    assert_int_equal(tdm_ireader_find(r, "head", 4, &i), TDM_OK);
    uint32_t d[3], f[3];
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_decode(r, i, d, f, &err), TDM_OK);
    assert_int_equal(d[0], 0);
    assert_int_equal(d[1], 1);
    assert_int_equal(d[2], 2);
    assert_int_equal(tdm_ireader_find(r, "enough", 6, &i), TDM_OK);
    size_t len;
    uint32_t df;
    uint64_t cf;
    tdm_ireader_term(r, i, &len, &df, &cf);
    assert_int_equal(df, 1);
    assert_int_equal(tdm_ireader_decode(r, i, d, f, &err), TDM_OK);
    assert_int_equal(d[0], 2);
    tdm_ireader_close(r);
}

/* CIFF -> index -> CIFF -> index -> CIFF: the indexes match and the two
 * exports are the same bytes. */
static void roundtrip_files(const char *ciff, const char *dir)
{
    char *i1 = path_in(dir, "a.tdm"), *c1 = path_in(dir, "a.ciff");
    char *i2 = path_in(dir, "b.tdm"), *c2 = path_in(dir, "b.ciff");
    import_ok(ciff, i1);
    export_ok(i1, c1);
    import_ok(c1, i2);
    assert_same_index(i1, i2);
    export_ok(i2, c2);
    tdm_test_same_file(c1, c2);
}

static void toy_roundtrip(void **state)
{
    (void)state;
    roundtrip_files(tdm_test_data(TOY), tdm_test_tmpdir("ciff_toy_rt"));
}

static void random_roundtrip(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("ciff_rand_rt");
    for (uint64_t seed = 1; seed <= 3; seed++) {
        randcoll rc;
        randcoll_init(&rc, seed, seed == 1 ? 1 : 300 * (uint32_t)seed, 50 * seed);
        tdm_coll_source src;
        randcoll_source(&rc, &src);
        tdm_err err = {0};
        char *i0 = path_in(dir, "orig.tdm"), *c0 = path_in(dir, "orig.ciff");
        if (tdm_collection_write(&src, i0, NULL, &err) != TDM_OK)
            fail_msg("write: %s", tdm_err_msg(&err));
        export_ok(i0, c0);
        roundtrip_files(c0, dir);
        assert_same_index(i0, path_in(dir, "a.tdm"));
        tdm_test_same_file(c0, path_in(dir, "a.ciff"));
        randcoll_free(&rc);
        tdm_err_clear(&err);
    }
}

/* The comparison the round trips rely on does see differences. */
static void compare_finds_differences(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("ciff_cmp");
    static const char *const what[] = {"document 3: name", "document 5: length",
                                       "posting", "df"};
    char *base = path_in(dir, "base.tdm"), *other = path_in(dir, "other.tdm");
    randcoll rc;
    randcoll_init(&rc, 77, 40, 20);
    tdm_coll_source src;
    randcoll_source(&rc, &src);
    tdm_err err = {0};
    assert_int_equal(tdm_collection_write(&src, base, NULL, &err), TDM_OK);
    for (int k = 0; k < 4; k++) {
        randcoll c2;
        randcoll_init(&c2, 77, 40, 20);
        if (k == 0)
            c2.names[3][0] ^= 1;
        if (k == 1)
            c2.doclens[5]++;
        if (k == 2)
            c2.docids[1][0] = 1; /* list 1 is {0, 39}: same df and cf */
        if (k == 3)
            c2.n[0]--; /* list 0 holds every document (mode 0) */
        randcoll_source(&c2, &src);
        assert_int_equal(tdm_collection_write(&src, other, NULL, &err), TDM_OK);
        tdm_ireader *a = open_index(base), *b = open_index(other);
        assert_int_equal(tdm_collection_compare(a, b, &err), TDM_ERR_CORRUPT);
        if (!strstr(tdm_err_msg(&err), what[k]))
            fail_msg("case %d: '%s'", k, tdm_err_msg(&err));
        tdm_ireader_close(a);
        tdm_ireader_close(b);
        randcoll_free(&c2);
    }
    randcoll_free(&rc);
    tdm_err_clear(&err);
}

/* ---- hand-made CIFF streams */

typedef tdm_buf cbuf;

static void put_bytes(cbuf *b, const void *p, size_t n)
{
    assert_int_equal(tdm_buf_append(b, p, n), 0);
}

static void put_varint(cbuf *b, uint64_t v)
{
    do {
        uint8_t c = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        put_bytes(b, &c, 1);
        v >>= 7;
    } while (v);
}

static void put_msg(cbuf *b, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *tmp = malloc(n + 1);
    protobuf_c_message_pack(m, tmp);
    put_varint(b, n);
    put_bytes(b, tmp, n);
    free(tmp);
}

static void put_header(cbuf *b, int version, int nlists, int ndocs)
{
    Io__Osirrc__Ciff__Header h = IO__OSIRRC__CIFF__HEADER__INIT;
    h.version = version;
    h.num_postings_lists = h.total_postings_lists = nlists;
    h.num_docs = h.total_docs = ndocs;
    put_msg(b, &h.base);
}

/* A list of n postings given as gaps and tfs; df and cf as given (-1: right). */
static void put_list(cbuf *b, const char *term, const int *gaps, const int *tfs, size_t n,
                     long df, long cf)
{
    Io__Osirrc__Ciff__Posting p[16], *pp[16];
    long sum = 0;
    for (size_t k = 0; k < n; k++) {
        io__osirrc__ciff__posting__init(&p[k]);
        p[k].docid = gaps[k];
        p[k].tf = tfs[k];
        sum += tfs[k];
        pp[k] = &p[k];
    }
    Io__Osirrc__Ciff__PostingsList l = IO__OSIRRC__CIFF__POSTINGS_LIST__INIT;
    l.term = (char *)term;
    l.df = df < 0 ? (long)n : df;
    l.cf = cf < 0 ? sum : cf;
    l.n_postings = n;
    l.postings = pp;
    put_msg(b, &l.base);
}

static void put_doc(cbuf *b, int docid, const char *name, int len)
{
    Io__Osirrc__Ciff__DocRecord d = IO__OSIRRC__CIFF__DOC_RECORD__INIT;
    d.docid = docid;
    d.collection_docid = (char *)name;
    d.doclength = len;
    put_msg(b, &d.base);
}

static void put_docs(cbuf *b, int n)
{
    for (int d = 0; d < n; d++)
        put_doc(b, d, "d", 3);
}

/* Opens b and reads every list; returns the first error (TDM_OK if none). */
/* Opens a copy of exactly b->len bytes, so ASan sees any read past them. */
static int load(const cbuf *b, tdm_err *err)
{
    tdm_ciff *c = NULL;
    uint8_t *exact = malloc(b->len ? b->len : 1);
    assert_non_null(exact);
    if (b->len)
        memcpy(exact, b->p, b->len);
    int rc = tdm_ciff_open_mem(exact, b->len, "made.ciff", &c, err);
    if (rc != TDM_OK) {
        free(exact);
        return rc;
    }
    tdm_coll_source src;
    tdm_ciff_source(c, &src);
    for (uint64_t i = 0; rc == TDM_OK && i < src.nlists; i++) {
        tdm_coll_list l;
        rc = src.list(src.self, i, &l, err);
    }
    tdm_ciff_close(c);
    free(exact);
    return rc;
}

static void expect_error(cbuf *b, int code, const char *needle)
{
    tdm_err err = {0};
    int rc = load(b, &err);
    if (rc != code || !strstr(tdm_err_msg(&err), "made.ciff: offset ") ||
        !strstr(tdm_err_msg(&err), needle))
        fail_msg("want %d '%s', got %d '%s'", code, needle, rc, tdm_err_msg(&err));
    tdm_err_clear(&err);
    tdm_buf_free(b);
}

static const int g1[] = {0, 1, 1}, t1[] = {1, 1, 1};

static void good_stream_loads(void **state)
{
    (void)state;
    cbuf b = {0};
    put_header(&b, 1, 3, 3);
    put_list(&b, "zeta", g1, t1, 3, -1, -1);
    put_list(&b, "alpha", g1, t1, 1, -1, -1); /* out of order: sorted on import */
    put_list(&b, "empty", NULL, NULL, 0, -1, -1); /* skipped */
    put_doc(&b, 2, "two", 7); /* records in any order */
    put_doc(&b, 0, "zero", 5);
    put_doc(&b, 1, "one", 6);
    tdm_err err = {0};
    tdm_ciff *c = NULL;
    if (tdm_ciff_open_mem(b.p, b.len, "made.ciff", &c, &err) != TDM_OK)
        fail_msg("%s", tdm_err_msg(&err));
    assert_int_equal(tdm_ciff_info_get(c)->empty_lists, 1);
    tdm_coll_source src;
    tdm_ciff_source(c, &src);
    assert_int_equal(src.nlists, 2);
    assert_string_equal(src.docnames[0], "zero");
    assert_string_equal(src.docnames[2], "two");
    assert_int_equal(src.doclens[1], 6);
    tdm_coll_list l;
    assert_int_equal(src.list(src.self, 0, &l, &err), TDM_OK);
    assert_memory_equal(l.term, "alpha", 5);
    assert_int_equal(src.list(src.self, 1, &l, &err), TDM_OK);
    assert_memory_equal(l.term, "zeta", 4);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.docids[2], 2);
    tdm_ciff_close(c);
    tdm_buf_free(&b);
}

static void bad_framing(void **state)
{
    (void)state;
    cbuf b = {0};
    static const uint8_t long_varint[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                          0xff, 0xff, 0xff, 0xff, 0x01};
    put_bytes(&b, long_varint, sizeof long_varint);
    expect_error(&b, TDM_ERR_FORMAT, "longer than 10 bytes");

    put_bytes(&b, "\x80", 1);
    expect_error(&b, TDM_ERR_FORMAT, "runs past the end");

    put_varint(&b, 1000); /* length past the end */
    put_bytes(&b, "abc", 3);
    expect_error(&b, TDM_ERR_FORMAT, "runs past the end of the file (3 bytes left)");

    put_header(&b, 1, 1, 1);
    put_varint(&b, 50);
    put_bytes(&b, "xyz", 3);
    expect_error(&b, TDM_ERR_FORMAT, "PostingsList: length 50 runs past");

    put_varint(&b, 3); /* a Header that does not unpack: wire type 7 */
    put_bytes(&b, "\x0f\x01\x01", 3);
    expect_error(&b, TDM_ERR_FORMAT, "Header does not unpack");

    put_header(&b, 1, 1, 0); /* a PostingsList with a truncated field */
    put_varint(&b, 2);
    put_bytes(&b, "\x0a\x05", 2);
    expect_error(&b, TDM_ERR_FORMAT, "PostingsList 0 does not parse");

    put_header(&b, 1, 0, 1); /* a DocRecord that does not unpack */
    put_varint(&b, 2);
    put_bytes(&b, "\x12\x09", 2);
    expect_error(&b, TDM_ERR_FORMAT, "DocRecord 0 does not unpack");

    put_bytes(&b, "", 0);
    expect_error(&b, TDM_ERR_FORMAT, "Header: length varint runs past");
}

static void bad_counts(void **state)
{
    (void)state;
    cbuf b = {0};
    put_header(&b, 2, 0, 0);
    {
        tdm_err err = {0};
        assert_int_equal(load(&b, &err), TDM_ERR_VERSION);
        tdm_err_clear(&err);
        tdm_buf_free(&b);
    }
    put_header(&b, 1, 2000000000, 5);
    expect_error(&b, TDM_ERR_FORMAT, "Header promises 2000000000 postings lists");

    put_header(&b, 1, -1, 0);
    expect_error(&b, TDM_ERR_FORMAT, "Header promises -1");

    put_header(&b, 1, 2, 1); /* one list short: the DocRecord is read as a list */
    put_list(&b, "a", g1, t1, 1, -1, -1);
    put_docs(&b, 1);
    expect_error(&b, TDM_ERR_FORMAT, "file ends after 0 of the 1 DocRecords");

    put_header(&b, 1, 1, 3);
    put_list(&b, "a", g1, t1, 1, -1, -1);
    put_docs(&b, 2);
    expect_error(&b, TDM_ERR_FORMAT, "file ends after 2 of the 3 DocRecords");

    put_header(&b, 1, 1, 1);
    put_list(&b, "a", g1, t1, 1, -1, -1);
    put_docs(&b, 2);
    expect_error(&b, TDM_ERR_FORMAT, "bytes after the last DocRecord");

    put_header(&b, 1, 1, 3);
    put_list(&b, "a", g1, t1, 3, 2, -1);
    put_docs(&b, 3);
    expect_error(&b, TDM_ERR_FORMAT, "df 2 cf 3 but its postings give df 3 cf 3");

    put_header(&b, 1, 1, 3);
    put_list(&b, "a", g1, t1, 3, -1, 7);
    put_docs(&b, 3);
    expect_error(&b, TDM_ERR_FORMAT, "cf 7");

    put_header(&b, 1, 1, 3);
    put_list(&b, "a", NULL, NULL, 0, 4, 0);
    put_docs(&b, 3);
    expect_error(&b, TDM_ERR_FORMAT, "df 4 but no postings");

    put_header(&b, 1, 0, 2);
    put_doc(&b, 0, "x", 1);
    put_doc(&b, 5, "y", 1);
    expect_error(&b, TDM_ERR_FORMAT, "DocRecord 1: docid 5 out of range (2 documents)");

    put_header(&b, 1, 0, 2);
    put_doc(&b, 1, "x", 1);
    put_doc(&b, 1, "y", 1);
    expect_error(&b, TDM_ERR_FORMAT, "DocRecord 1 repeats docid 1");

    put_header(&b, 1, 0, 1);
    put_doc(&b, 0, "x", -4);
    expect_error(&b, TDM_ERR_FORMAT, "negative doclength -4");
}

static void bad_postings(void **state)
{
    (void)state;
    cbuf b = {0};
    static const int dup[] = {0, 1, 0}, neg[] = {1, -1}, negfirst[] = {-3}, far[] = {0, 3};
    static const int ntf[] = {1, -2, 1}, ztf[] = {0};
    put_header(&b, 1, 1, 3);
    put_list(&b, "t", dup, t1, 3, -1, -1);
    put_docs(&b, 3);
    expect_error(&b, TDM_ERR_FORMAT, "posting 2: docids not increasing (gap 0)");

    put_header(&b, 1, 1, 3);
    put_list(&b, "t", neg, t1, 2, -1, -1);
    put_docs(&b, 3);
    expect_error(&b, TDM_ERR_FORMAT, "docids not increasing (gap -1)");

    put_header(&b, 1, 1, 3);
    put_list(&b, "t", negfirst, t1, 1, -1, -1);
    put_docs(&b, 3);
    expect_error(&b, TDM_ERR_FORMAT, "gap -3");

    put_header(&b, 1, 1, 3);
    put_list(&b, "t", far, t1, 2, -1, -1);
    put_docs(&b, 3);
    expect_error(&b, TDM_ERR_FORMAT, "docid 3 out of range (3 documents)");

    put_header(&b, 1, 1, 3);
    put_list(&b, "t", g1, ntf, 3, 3, 0);
    put_docs(&b, 3);
    expect_error(&b, TDM_ERR_FORMAT, "posting 1: negative tf -2");

    put_header(&b, 1, 1, 3);
    put_list(&b, "t", g1, ztf, 1, -1, -1);
    put_docs(&b, 3);
    expect_error(&b, TDM_ERR_FORMAT, "zero tf");

    put_header(&b, 1, 2, 3);
    put_list(&b, "t", g1, t1, 1, -1, -1);
    put_list(&b, "t", g1, t1, 2, -1, -1);
    put_docs(&b, 3);
    expect_error(&b, TDM_ERR_FORMAT, "term 't' appears twice");

    put_header(&b, 1, 1, 3);
    put_list(&b, "", g1, t1, 1, -1, -1);
    put_docs(&b, 3);
    expect_error(&b, TDM_ERR_FORMAT, "term of 0 bytes");
}

/* Every prefix of the toy fails cleanly; every byte flip fails cleanly or
 * loads (a flipped tf, say), and never reads out of bounds (ASan). */
static void toy_truncated_and_flipped(void **state)
{
    (void)state;
    size_t n;
    uint8_t *toy = tdm_read_file(tdm_test_data(TOY), &n);
    assert_non_null(toy);
    for (size_t keep = 0; keep < n; keep++) {
        uint8_t *cut = malloc(keep + 1); /* exactly keep bytes for ASan */
        memcpy(cut, toy, keep);
        cbuf b = {(char *)cut, keep, keep};
        tdm_err err = {0};
        if (load(&b, &err) == TDM_OK)
            fail_msg("prefix of %zu bytes loaded", keep);
        assert_non_null(strstr(tdm_err_msg(&err), "offset"));
        tdm_err_clear(&err);
        free(cut);
    }
    for (size_t at = 0; at < n; at++)
        for (int bit = 0; bit < 8; bit++) {
            uint8_t *copy = malloc(n);
            memcpy(copy, toy, n);
            copy[at] ^= (uint8_t)(1u << bit);
            cbuf b = {(char *)copy, n, n};
            tdm_err err = {0};
            load(&b, &err);
            tdm_err_clear(&err);
            free(copy);
        }
    free(toy);
}

static void missing_file(void **state)
{
    (void)state;
    tdm_err err = {0};
    tdm_ciff *c = NULL;
    assert_int_equal(tdm_ciff_open("/nonexistent/x.ciff", &c, &err), TDM_ERR_NOT_FOUND);
    assert_null(c);
    assert_non_null(strstr(tdm_err_msg(&err), "/nonexistent/x.ciff"));
    tdm_err_clear(&err);
}

/* A tf that PISA (u32) can carry but CIFF (int32) cannot is refused. */
static void export_refuses_huge_tf(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("ciff_tf");
    static const uint32_t lens[] = {1}, ids[] = {0}, tfs[] = {UINT32_C(0x80000000)};
    tdm_err err = {0};
    tdm_iwriter *w = NULL;
    tdm_iwriter_options o = {0};
    char *idx = path_in(dir, "tf.tdm"), *out = path_in(dir, "tf.ciff");
    assert_int_equal(tdm_iwriter_open(idx, &o, &w, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_set_docs(w, 1, lens, NULL, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_add_list(w, "t", 1, ids, tfs, 1, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_finish(w, &err), TDM_OK);
    tdm_iwriter_free(w);
    tdm_ireader *r = open_index(idx);
    assert_int_equal(tdm_ciff_export(r, out, NULL, &err), TDM_ERR_LIMIT);
    assert_non_null(strstr(tdm_err_msg(&err), "exceeds CIFF's int32"));
    assert_null(fopen(out, "rb"));
    tdm_ireader_close(r);
    tdm_err_clear(&err);
}

/* The CLI (TANDEM_CLI): import, export, import again; a bad file fails with
 * the offset on stderr. */
static void cli_import_export(void **state)
{
    (void)state;
    const char *cli = getenv("TANDEM_CLI");
    if (!cli || !*cli)
        skip();
    const char *dir = tdm_test_tmpdir("ciff_cli");
    char *i1 = path_in(dir, "a.tdm"), *c1 = path_in(dir, "a.ciff"), *i2 = path_in(dir, "b.tdm");
    char *bad = path_in(dir, "bad.ciff"), *log = path_in(dir, "log");
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "'%s' import --from ciff '%s' -o '%s' >/dev/null && '%s' export --to ciff '%s' -o "
             "'%s' >/dev/null && '%s' import --from ciff '%s' -o '%s' --codec raw >/dev/null",
             cli, tdm_test_data(TOY), i1, cli, i1, c1, cli, c1, i2);
    assert_int_equal(system(cmd), 0);
    assert_same_index(i1, i2);
    FILE *f = fopen(bad, "wb");
    fwrite("\x05\x08\x01", 1, 3, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' import --from ciff '%s' -o '%s' 2>'%s'", cli, bad, i2, log);
    assert_int_not_equal(system(cmd), 0);
    size_t n;
    char *msg = (char *)tdm_read_file(log, &n);
    assert_non_null(msg);
    msg = realloc(msg, n + 1);
    msg[n] = 0;
    assert_non_null(strstr(msg, "bad.ciff: offset 0: Header: length 5 runs past"));
    free(msg);
    snprintf(cmd, sizeof cmd, "'%s' import --from nope '%s' -o '%s' 2>/dev/null", cli, bad, i2);
    assert_int_not_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(toy_header_and_docs),
        cmocka_unit_test(toy_imports_with_its_counts),
        cmocka_unit_test(toy_roundtrip),
        cmocka_unit_test(random_roundtrip),
        cmocka_unit_test(compare_finds_differences),
        cmocka_unit_test(good_stream_loads),
        cmocka_unit_test(bad_framing),
        cmocka_unit_test(bad_counts),
        cmocka_unit_test(bad_postings),
        cmocka_unit_test(toy_truncated_and_flipped),
        cmocka_unit_test(missing_file),
        cmocka_unit_test(export_refuses_huge_tf),
        cmocka_unit_test(cli_import_export),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
