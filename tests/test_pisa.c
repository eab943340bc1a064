/* PISA binary collection import and export: exact round trips (index and
 * file bytes) and an error naming file and offset for each malformed file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "import/ciff.h"
#include "import/pisa.h"
#include "randcoll.h"
#include "testutil.h"

static const char *const exts[] = {".docs", ".freqs", ".sizes", ".terms", ".documents"};

static void import_ok(const char *base, const char *index)
{
    tdm_err err = {0};
    if (tdm_pisa_import(base, index, NULL, &err) != TDM_OK)
        fail_msg("import %s: %s", base, tdm_err_msg(&err));
    tdm_err_clear(&err);
}

static void export_ok(const char *index, const char *base)
{
    tdm_err err = {0};
    tdm_ireader *r = open_index(index);
    if (tdm_pisa_export(r, base, &err) != TDM_OK)
        fail_msg("export %s: %s", index, tdm_err_msg(&err));
    tdm_ireader_close(r);
    tdm_err_clear(&err);
}

static void assert_same_files(const char *a, const char *b)
{
    for (size_t k = 0; k < sizeof exts / sizeof *exts; k++) {
        char pa[1100], pb[1100];
        snprintf(pa, sizeof pa, "%s%s", a, exts[k]);
        snprintf(pb, sizeof pb, "%s%s", b, exts[k]);
        tdm_test_same_file(pa, pb);
    }
}

/* index -> PISA -> index -> PISA: same index, same five files. */
static void roundtrip(const char *index, const char *dir)
{
    char *b1 = path_in(dir, "one"), *i1 = path_in(dir, "one.tdm");
    char *b2 = path_in(dir, "two"), *i2 = path_in(dir, "two.tdm");
    export_ok(index, b1);
    import_ok(b1, i1);
    assert_same_index(index, i1);
    export_ok(i1, b2);
    assert_same_files(b1, b2);
    import_ok(b2, i2);
    assert_same_index(i1, i2);
}

static void random_roundtrip(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("pisa_rt");
    for (uint64_t seed = 1; seed <= 3; seed++) {
        randcoll rc;
        randcoll_init(&rc, seed + 10, seed == 1 ? 1 : 250 * (uint32_t)seed, 40 * seed);
        tdm_coll_source src;
        randcoll_source(&rc, &src);
        tdm_err err = {0};
        char *i0 = path_in(dir, "orig.tdm");
        if (tdm_collection_write(&src, i0, NULL, &err) != TDM_OK)
            fail_msg("write: %s", tdm_err_msg(&err));
        roundtrip(i0, dir);
        randcoll_free(&rc);
    }
}

static void toy_ciff_through_pisa(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("pisa_toy");
    char *i0 = path_in(dir, "toy.tdm");
    tdm_err err = {0};
    if (tdm_ciff_import(tdm_test_data("ciff/toy-complete-20200309.ciff"), i0, NULL, &err))
        fail_msg("%s", tdm_err_msg(&err));
    roundtrip(i0, dir);
    size_t n;
    char *terms = (char *)tdm_read_file(path_in(dir, "one.terms"), &n);
    assert_non_null(terms);
    assert_int_equal(n, strlen("01\n03\n30\ncontent\nenough\nhead\nsimpl\ntext\nveri\n"));
    assert_memory_equal(terms, "01\n03\n30\ncontent\nenough\nhead\nsimpl\ntext\nveri\n", n);
    free(terms);
}

/* ---- hand-made collections: [1,3] docs, two lists "b" {0,2} and "a" {1} */

typedef struct pfiles {
    uint32_t docs[16], freqs[16], sizes[8];
    size_t nd, nf, ns;
    const char *terms, *names;
    size_t cut_docs;            /* bytes to drop from the end of .docs */
} pfiles;

static void good(pfiles *p)
{
    static const uint32_t d[] = {1, 3, 2, 0, 2, 1, 1}, f[] = {2, 1, 4, 1, 7}, s[] = {3, 5, 6, 7};
    memset(p, 0, sizeof *p);
    memcpy(p->docs, d, sizeof d);
    memcpy(p->freqs, f, sizeof f);
    memcpy(p->sizes, s, sizeof s);
    p->nd = 7;
    p->nf = 5;
    p->ns = 4;
    p->terms = "b\na\n";
    p->names = "x\ny\nz";
}

static void put_file(const char *base, const char *ext, const void *data, size_t n)
{
    char path[1100];
    snprintf(path, sizeof path, "%s%s", base, ext);
    if (!data) {
        remove(path);
        return;
    }
    const void *parts[] = {data};
    assert_int_equal(tdm_write_file_atomic(path, parts, &n, 1), 0);
}

/* Writes p under a fresh basename and loads every list; the first error. */
static int load(const pfiles *p, tdm_err *err, char *base_out, size_t len)
{
    const char *dir = tdm_test_tmpdir("pisa_bad");
    snprintf(base_out, len, "%s/c", dir);
    put_file(base_out, ".docs", p->docs, p->nd * 4 - p->cut_docs);
    put_file(base_out, ".freqs", p->freqs, p->nf * 4);
    put_file(base_out, ".sizes", p->sizes, p->ns * 4);
    put_file(base_out, ".terms", p->terms, p->terms ? strlen(p->terms) : 0);
    put_file(base_out, ".documents", p->names, p->names ? strlen(p->names) : 0);
    tdm_pisa *h = NULL;
    int rc = tdm_pisa_open(base_out, &h, err);
    if (rc != TDM_OK)
        return rc;
    tdm_coll_source src;
    tdm_pisa_source(h, &src);
    for (uint64_t i = 0; rc == TDM_OK && i < src.nlists; i++) {
        tdm_coll_list l;
        rc = src.list(src.self, i, &l, err);
    }
    tdm_pisa_close(h);
    return rc;
}

static void expect_error(const pfiles *p, int code, const char *file, const char *needle)
{
    tdm_err err = {0};
    char base[1024], want[1100];
    int rc = load(p, &err, base, sizeof base);
    snprintf(want, sizeof want, "%s%s: ", base, file);
    if (rc != code || !strstr(tdm_err_msg(&err), want) || !strstr(tdm_err_msg(&err), needle))
        fail_msg("want %d '%s' '%s', got %d '%s'", code, want, needle, rc, tdm_err_msg(&err));
    tdm_err_clear(&err);
}

static void good_collection_loads(void **state)
{
    (void)state;
    pfiles p;
    good(&p);
    tdm_err err = {0};
    char base[1024];
    assert_int_equal(load(&p, &err, base, sizeof base), TDM_OK);
    tdm_pisa *h;
    assert_int_equal(tdm_pisa_open(base, &h, &err), TDM_OK);
    tdm_coll_source src;
    tdm_pisa_source(h, &src);
    assert_int_equal(src.ndocs, 3);
    assert_int_equal(src.nlists, 2);
    assert_string_equal(src.docnames[2], "z");
    assert_int_equal(src.doclens[1], 6);
    tdm_coll_list l;
    assert_int_equal(src.list(src.self, 0, &l, &err), TDM_OK); /* "a" sorts first */
    assert_int_equal(l.term_len, 1);
    assert_int_equal(l.term[0], 'a');
    assert_int_equal(l.n, 1);
    assert_int_equal(l.docids[0], 1);
    assert_int_equal(l.freqs[0], 7);
    tdm_pisa_close(h);

    p.terms = NULL; /* .terms is optional: lists are named by number */
    assert_int_equal(load(&p, &err, base, sizeof base), TDM_OK);
    assert_int_equal(tdm_pisa_open(base, &h, &err), TDM_OK);
    tdm_pisa_source(h, &src);
    assert_int_equal(src.list(src.self, 1, &l, &err), TDM_OK);
    assert_int_equal(l.term_len, 1);
    assert_int_equal(l.term[0], '1');
    assert_int_equal(l.docids[0], 1);
    tdm_pisa_close(h);
    good(&p);

    p.terms = "b\r\na\r\n"; /* CRLF line endings: the \r is no part of a term or name */
    p.names = "x\r\ny\r\nz\r\n";
    assert_int_equal(load(&p, &err, base, sizeof base), TDM_OK);
    assert_int_equal(tdm_pisa_open(base, &h, &err), TDM_OK);
    tdm_pisa_source(h, &src);
    assert_string_equal(src.docnames[0], "x");
    assert_string_equal(src.docnames[2], "z");
    assert_int_equal(src.list(src.self, 0, &l, &err), TDM_OK);
    assert_int_equal(l.term_len, 1);
    assert_int_equal(l.term[0], 'a');
    assert_int_equal(src.list(src.self, 1, &l, &err), TDM_OK);
    assert_int_equal(l.term_len, 1);
    assert_int_equal(l.term[0], 'b');
    tdm_pisa_close(h);
    good(&p);

    p.names = NULL; /* .documents is optional */
    assert_int_equal(load(&p, &err, base, sizeof base), TDM_OK);
    char *idx = path_in(tdm_test_tmpdir("pisa_noname"), "x.tdm");
    import_ok(base, idx);
    tdm_ireader *r = open_index(idx);
    assert_string_equal(tdm_ireader_docname(r, 2), "2");
    tdm_ireader_close(r);
}

static void bad_docs(void **state)
{
    (void)state;
    pfiles p;
    good(&p);
    p.cut_docs = 2;
    expect_error(&p, TDM_ERR_FORMAT, ".docs", "not whole u32 values");
    good(&p);
    p.cut_docs = 4;
    expect_error(&p, TDM_ERR_FORMAT, ".docs", "runs past the end of the file");
    good(&p);
    p.docs[2] = 1000;
    expect_error(&p, TDM_ERR_FORMAT, ".docs", "offset 8: sequence of 1000 values runs past");
    good(&p);
    p.docs[0] = 2;
    expect_error(&p, TDM_ERR_FORMAT, ".docs", "offset 0: first sequence has 2 values");
    good(&p);
    p.nd = 0;
    expect_error(&p, TDM_ERR_FORMAT, ".docs", "empty file");
    good(&p);
    p.docs[5] = 0; /* "a" becomes empty: and .freqs no longer pairs up */
    p.nd = 6;
    p.freqs[3] = 0;
    p.nf = 4;
    expect_error(&p, TDM_ERR_FORMAT, ".docs", "sequence 1 is empty");
    good(&p);
    p.docs[4] = 0; /* {0, 0} */
    expect_error(&p, TDM_ERR_FORMAT, ".docs", "offset 16: list 0: docid 0 after 0");
    good(&p);
    p.docs[6] = 3;
    expect_error(&p, TDM_ERR_FORMAT, ".docs", "docid 3 out of range (3 documents)");
}

static void bad_freqs(void **state)
{
    (void)state;
    pfiles p;
    good(&p);
    p.nf = 3;
    expect_error(&p, TDM_ERR_FORMAT, ".freqs", "ends after 1 sequences");
    good(&p);
    p.freqs[5] = 1;
    p.freqs[6] = 1;
    p.nf = 7;
    expect_error(&p, TDM_ERR_FORMAT, ".freqs", "has sequences after the 2");
    good(&p);
    p.freqs[0] = 1; /* [1, 4] [1, 7]: lengths disagree with .docs */
    p.freqs[1] = 4;
    p.freqs[2] = 1;
    p.freqs[3] = 7;
    p.nf = 4;
    expect_error(&p, TDM_ERR_FORMAT, ".freqs", "sequence 0 has 1 values but its docids");
    good(&p);
    p.freqs[2] = 0;
    expect_error(&p, TDM_ERR_FORMAT, ".freqs", "offset 8: list 0: zero frequency");
}

static void bad_text_and_sizes(void **state)
{
    (void)state;
    pfiles p;
    good(&p);
    p.ns = 3;
    expect_error(&p, TDM_ERR_FORMAT, ".sizes", "want one sequence of the 3 document lengths");
    good(&p);
    p.sizes[0] = 4;
    expect_error(&p, TDM_ERR_FORMAT, ".sizes", "offset 0:");
    good(&p);
    p.terms = "b\n";
    expect_error(&p, TDM_ERR_FORMAT, ".terms", "1 lines, want one per list (2)");
    good(&p);
    p.terms = "b\na\nc\n";
    expect_error(&p, TDM_ERR_FORMAT, ".terms", "3 lines");
    good(&p);
    p.terms = "b\n\n";
    expect_error(&p, TDM_ERR_FORMAT, ".terms", "offset 2: term 1 has 0 bytes");
    good(&p);
    p.terms = "b\nb\n";
    expect_error(&p, TDM_ERR_FORMAT, ".terms", "term 'b' (line 2) repeats line 1");
    good(&p);
    /* a CR left after CRLF's is no part of a term or name (fuzz_pisa found
       "heat\r\r...\r\n" taken as a term ending in '\r') */
    p.terms = "b\r\r\na\n";
    expect_error(&p, TDM_ERR_FORMAT, ".terms", "offset 0: carriage return inside line 1");
    good(&p);
    p.terms = "b\na\rz\n";
    expect_error(&p, TDM_ERR_FORMAT, ".terms", "carriage return inside line 2");
    good(&p);
    p.names = "x\ny\r\r\nz\n";
    expect_error(&p, TDM_ERR_FORMAT, ".documents", "carriage return inside line 2");
    good(&p);
    p.names = "x\ny\n";
    expect_error(&p, TDM_ERR_FORMAT, ".documents", "2 lines, want one per document (3)");
    good(&p);
    p.ns = 0;
    expect_error(&p, TDM_ERR_FORMAT, ".sizes", "0 bytes");
    tdm_pisa *h = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_pisa_open("/nonexistent/base", &h, &err), TDM_ERR_NOT_FOUND);
    assert_null(h);
    assert_non_null(strstr(tdm_err_msg(&err), "/nonexistent/base.docs"));
    tdm_err_clear(&err);
}

/* Every truncation of .docs and .freqs fails cleanly (ASan watches reads). */
static void every_truncation(void **state)
{
    (void)state;
    pfiles p;
    for (size_t cut = 1; cut <= 7 * 4; cut++) {
        good(&p);
        p.cut_docs = cut;
        tdm_err err = {0};
        char base[1024];
        assert_int_not_equal(load(&p, &err, base, sizeof base), TDM_OK);
        assert_non_null(strstr(tdm_err_msg(&err), "offset"));
        tdm_err_clear(&err);
    }
    for (size_t nf = 0; nf < 5; nf++) {
        good(&p);
        p.nf = nf;
        tdm_err err = {0};
        char base[1024];
        assert_int_not_equal(load(&p, &err, base, sizeof base), TDM_OK);
        tdm_err_clear(&err);
    }
}

static void export_refuses_newlines(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("pisa_nl");
    static const uint32_t lens[] = {1}, ids[] = {0}, tfs[] = {1};
    const char *names[] = {"two\nlines"};
    tdm_err err = {0};
    tdm_iwriter *w = NULL;
    tdm_iwriter_options o = {0};
    char *idx = path_in(dir, "nl.tdm");
    assert_int_equal(tdm_iwriter_open(idx, &o, &w, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_set_docs(w, 1, lens, names, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_add_list(w, "t", 1, ids, tfs, 1, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_finish(w, &err), TDM_OK);
    tdm_iwriter_free(w);
    tdm_ireader *r = open_index(idx);
    assert_int_equal(tdm_pisa_export(r, path_in(dir, "out"), &err), TDM_ERR_UNSUPPORTED);
    assert_non_null(strstr(tdm_err_msg(&err), "newline"));
    tdm_ireader_close(r);
    FILE *f = fopen(path_in(dir, "out.docs"), "rb");
    assert_null(f); /* nothing left behind */
    tdm_err_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_roundtrip),
        cmocka_unit_test(toy_ciff_through_pisa),
        cmocka_unit_test(good_collection_loads),
        cmocka_unit_test(bad_docs),
        cmocka_unit_test(bad_freqs),
        cmocka_unit_test(bad_text_and_sizes),
        cmocka_unit_test(every_truncation),
        cmocka_unit_test(export_refuses_newlines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
