/* Collection parsers: every format, guessing, gzip, stdin, malformed input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "build/json.h"
#include "build/parse.h"
#include "testutil.h"

static char path[1100];

static const char *put(const char *name, const char *text, size_t len)
{
    snprintf(path, sizeof path, "%s/%s", tdm_test_tmpdir("parse"), name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(text, 1, len, f);
    fclose(f);
    return path;
}

static int allow_unnamed; /* tdm_parser_allow_unnamed for parse_all */

/* Parses a file into "name=text|name=text|" (text whitespace squeezed). */
static const char *parse_all(const char *file, int format, int *got_format)
{
    static char out[8192];
    size_t o = 0;
    tdm_parser *p = NULL;
    tdm_err err = {0};
    if (tdm_parser_open(file, format, &p, &err)) {
        snprintf(out, sizeof out, "ERROR %s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return out;
    }
    if (got_format)
        *got_format = tdm_parser_format(p);
    tdm_parser_allow_unnamed(p, allow_unnamed);
    const char *name, *text;
    size_t len;
    int rc;
    while ((rc = tdm_parser_next(p, &name, &text, &len, &err)) == 1) {
        if (o > sizeof out - 256)
            continue;   /* keep reading to the end; the start is what tests compare */
        o += (size_t)snprintf(out + o, sizeof out - o, "%s=", name);
        int space = 1;
        for (size_t i = 0; i < len && o + 2 < sizeof out; i++) {
            int ws = text[i] == ' ' || text[i] == '\n' || text[i] == '\t';
            if (ws && !space)
                out[o++] = ' ';
            else if (!ws)
                out[o++] = text[i];
            space = ws;
        }
        if (o && out[o - 1] == ' ')
            o--;
        out[o++] = '|';
        out[o] = '\0';
    }
    if (rc < 0)
        snprintf(out, sizeof out, "ERROR %s", tdm_err_msg(&err));
    tdm_parser_close(p);
    tdm_err_clear(&err);
    return out;
}

#define PARSE(name, text, fmt, want)                                                     \
    do {                                                                                 \
        int g;                                                                           \
        assert_string_equal(parse_all(put(name, text, sizeof text - 1), fmt, &g), want); \
    } while (0)

static void expect_error(const char *file, int format, const char *n1, const char *n2);
#define BAD(name, text, fmt, n1, n2) expect_error(put(name, text, sizeof text - 1), fmt, n1, n2)

static void test_lines(void **state)
{
    (void)state;
    /* A line without a TAB (a qrels file given by mistake) is refused,
     * unless asked for: then it is named by its position. */
    BAD("a.tsv", "d1\thello world\n\nd2\tsecond doc\r\nno tab here\n", TDM_BUILD_LINES,
        "line 4: no TAB", "--unnamed-lines");
    allow_unnamed = 1;
    PARSE("a.tsv", "d1\thello world\n\nd2\tsecond doc\r\nno tab here\n", TDM_BUILD_LINES,
          "d1=hello world|d2=second doc|2=no tab here|");
    allow_unnamed = 0;
}

static void test_trec(void **state)
{
    (void)state;
    const char t[] = "<DOC>\n<DOCNO> FT-1 </DOCNO>\n<TEXT>Alpha <b>beta</b></TEXT>\n</DOC>\n"
                     "junk between\n<DOC><DOCNO>FT-2</DOCNO>gamma</DOC>\n";
    int g;
    assert_string_equal(parse_all(put("t.trec", t, sizeof t - 1), TDM_BUILD_AUTO, &g),
                        "FT-1=Alpha beta|FT-2=gamma|");
    assert_int_equal(g, TDM_BUILD_TREC);
    const char lower[] = "<doc><docno>ap-1</docno>Delta</doc>\n<Doc><DocNo>ap-2</DocNo>eps</DOC>\n";
    assert_string_equal(parse_all(put("l.trec", lower, sizeof lower - 1), TDM_BUILD_AUTO, &g),
                        "ap-1=Delta|ap-2=eps|");
    const char b[] = "<DOC><DOCNO>x</DOCNO>never closed\n";
    const char *out = parse_all(put("bad.trec", b, sizeof b - 1), TDM_BUILD_TREC, NULL);
    assert_non_null(strstr(out, "bad.trec: line 1: document without </DOC>"));
}

static void test_smart(void **state)
{
    (void)state;
    const char s[] = ".I 1\n.T\nA title\n.A\nAuthor Name\n.W\nthe words\n.X\n1 2 3\n"
                     ".I 2\n.W\nsecond\n.B\nbib\n";
    int g;
    assert_string_equal(parse_all(put("s.all", s, sizeof s - 1), TDM_BUILD_AUTO, &g),
                        "1=A title the words|2=second|");
    assert_int_equal(g, TDM_BUILD_SMART);
    /* A record with no indexed field after one with text: empty text, still
     * NUL-terminated (the buffer held the previous record's text; fuzz_parse_smart). */
    const char e[] = ".I 1\n.W\nsome words\n.I 2\n.X\nnot indexed\n";
    tdm_parser *p = NULL;
    assert_int_equal(tdm_parser_open(put("e.all", e, sizeof e - 1), TDM_BUILD_SMART, &p, NULL), 0);
    const char *name, *text;
    size_t len;
    assert_int_equal(tdm_parser_next(p, &name, &text, &len, NULL), 1);
    assert_int_equal(tdm_parser_next(p, &name, &text, &len, NULL), 1);
    assert_string_equal(name, "2");
    assert_int_equal(len, 0);
    assert_int_equal(text[0], '\0');
    tdm_parser_close(p);
}

static void test_jsonl(void **state)
{
    (void)state;
    const char j[] = "{\"id\": \"doc1\", "
                     "\"contents\": \"caf\\u00e9 \\\"q\\\" a\\nb \\ud83d\\ude00\"}\n"
                     "{\"meta\": {\"x\": [1, {\"y\": null}], \"s\": \"}\"}, \"id\": 42, "
                     "\"contents\": \"tab\\there\"}\n"
                     "  \n{\"contents\": \"no id\"}\n";
    int g;
    assert_string_equal(parse_all(put("j.jsonl", j, sizeof j - 1), TDM_BUILD_AUTO, &g),
                        "doc1=caf\xc3\xa9 \"q\" a b \xf0\x9f\x98\x80|42=tab here|2=no id|");
    assert_int_equal(g, TDM_BUILD_JSONL);
    const char *bj = "{\"id\": \"x\"}\n{\"id\": \"y\", \"contents\": \"oops}\n";
    const char *bad = parse_all(put("bad.jsonl", bj, strlen(bj)), TDM_BUILD_JSONL, NULL);
    assert_non_null(strstr(bad, "ERROR"));
    assert_non_null(strstr(bad, "line 2"));
    assert_non_null(strstr(bad, "unterminated string"));
}

static void test_json_edge(void **state)
{
    (void)state;
    tdm_buf id = {0}, text = {0};
    const char *why;
    size_t pos;
    const char *bad[] = {"", "{", "[1]", "{\"id\":}", "{\"id\": \"x\",}", "{\"a\": \"\\q\"}",
                         "{\"a\": \"\\u12\"}", "{} x", "{\"contents\": [\"x\"]}",
                         "{\"a\": \"\x01\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(tdm_json_doc(bad[i], strlen(bad[i]), &id, &text, &why, &pos), -1);
    const char *ok = "{\"contents\": \"\\ud800x\", \"id\": -12.5e+3}";
    assert_int_equal(tdm_json_doc(ok, strlen(ok), &id, &text, &why, &pos), 0);
    assert_string_equal(text.p, "\xef\xbf\xbdx");   /* lone surrogate -> U+FFFD */
    assert_string_equal(id.p, "-12.5e+3");
    /* Deep nesting is refused, not recursed into without end. */
    char deep[400];
    strcpy(deep, "{\"a\": ");
    for (int i = 0; i < 100; i++)
        strcat(deep, "[");
    assert_int_equal(tdm_json_doc(deep, strlen(deep), &id, &text, &why, &pos), -1);
    assert_string_equal(why, "nested too deeply");
    free(id.p);
    free(text.p);
}

static void test_gzip_and_stdin(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "%s/c.jsonl.gz", tdm_test_tmpdir("parse"));
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    for (int i = 0; i < 3000; i++)
        gzprintf(gz, "{\"id\": \"g%d\", \"contents\": \"word%d\"}\n", i, i % 10);
    gzclose(gz);
    const char *out = parse_all(path, TDM_BUILD_AUTO, NULL);
    assert_int_equal(strncmp(out, "g0=word0|g1=word1|", 18), 0);
    tdm_parser *p = NULL;
    assert_int_equal(tdm_parser_open(path, TDM_BUILD_AUTO, &p, NULL), TDM_OK);
    int n = 0;
    const char *name, *text;
    size_t len;
    while (tdm_parser_next(p, &name, &text, &len, NULL) == 1)
        n++;
    assert_int_equal(n, 3000);
    assert_true(tdm_parser_bytes(p) > 0);
    tdm_parser_close(p);
    /* "-" reads stdin: point fd 0 at a file for the test. */
    const char *f = put("stdin.txt", "s1\tfrom stdin\n", 14);
    int saved = dup(0);
    FILE *in = fopen(f, "rb");
    dup2(fileno(in), 0);
    out = parse_all("-", TDM_BUILD_AUTO, NULL);
    dup2(saved, 0);
    close(saved);
    fclose(in);
    assert_string_equal(out, "s1=from stdin|");
}

static void test_names_and_errors(void **state)
{
    (void)state;
    assert_int_equal(tdm_format_by_name("TREC"), TDM_BUILD_TREC);
    assert_int_equal(tdm_format_by_name("jsonl"), TDM_BUILD_JSONL);
    assert_int_equal(tdm_format_by_name("xml"), -1);
    assert_string_equal(tdm_format_name(TDM_BUILD_SMART), "smart");
    tdm_parser *p = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_parser_open("/nonexistent/x", 0, &p, &err), TDM_ERR_NOT_FOUND);
    assert_non_null(strstr(tdm_err_msg(&err), "/nonexistent/x"));
    tdm_err_clear(&err);
    /* Binary junk parses as lines without crashing. */
    char junk[3000];
    tdm_rng r;
    tdm_rng_seed(&r, 3);
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)tdm_rng_u32(&r);
    junk[100] = 0;   /* and a NUL byte early, as every binary file has */
    put("junk.bin", junk, sizeof junk);
    assert_int_equal(tdm_parser_open(path, TDM_BUILD_LINES, &p, &err), TDM_OK);
    const char *name, *text;
    size_t len;
    int rc;
    while ((rc = tdm_parser_next(p, &name, &text, &len, &err)) == 1)
        assert_non_null(name);
    assert_int_equal(rc, TDM_ERR_FORMAT);
    assert_non_null(strstr(tdm_err_msg(&err), "NUL byte"));
    tdm_parser_close(p);
    tdm_err_clear(&err);
}

/* An error (never a partial result) whose message holds every needle. */
static void expect_error(const char *file, int format, const char *n1, const char *n2)
{
    const char *out = parse_all(file, format, NULL);
    if (strncmp(out, "ERROR ", 6) || !strstr(out, file) || !strstr(out, n1) ||
        (n2 && !strstr(out, n2)))
        fail_msg("%s: want an error with '%s' '%s', got '%s'", file, n1, n2 ? n2 : "", out);
}

#define BAD(name, text, fmt, n1, n2) expect_error(put(name, text, sizeof text - 1), fmt, n1, n2)

/* A gzip file of `text`, then cut to `keep` bytes (0: whole). */
static const char *gz_file(const char *name, const char *text, size_t n, size_t keep)
{
    snprintf(path, sizeof path, "%s/%s", tdm_test_tmpdir("parse"), name);
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, text, (unsigned)n), (int)n);
    assert_int_equal(gzclose(gz), Z_OK);
    if (keep)
        assert_int_equal(truncate(path, (off_t)keep), 0);
    return path;
}

static void test_gzip_truncated(void **state)
{
    (void)state;
    size_t n = 0, cap = 200000;
    char *big = malloc(cap);
    assert_non_null(big);
    for (int i = 0; n + 64 < cap; i++)
        n += (size_t)snprintf(big + n, cap - n, "d%d\tword%d and some text %d\n", i, i % 97, i);
    const char *f = gz_file("whole.gz", big, n, 0);
    struct stat st;
    assert_int_equal(stat(f, &st), 0);
    assert_int_equal(strncmp(parse_all(f, TDM_BUILD_AUTO, NULL), "d0=word0", 8), 0);
    /* Cut in half, cut in the trailer, header only: all errors. */
    off_t cuts[] = {st.st_size / 2, st.st_size - 4, 10};
    for (size_t k = 0; k < 3; k++) {
        f = gz_file("cut.gz", big, n, (size_t)cuts[k]);
        expect_error(f, TDM_BUILD_AUTO, "truncated", "line ");
    }
    free(big);
    /* A gzip of nothing is an empty input: an error unless allowed. */
    f = gz_file("empty.gz", "", 0, 0);
    expect_error(f, TDM_BUILD_AUTO, "empty input", NULL);
    tdm_parser *p = NULL;
    const char *name, *text;
    size_t len;
    assert_int_equal(tdm_parser_open(f, TDM_BUILD_AUTO, &p, NULL), 0);
    tdm_parser_allow_empty(p, 1);
    assert_int_equal(tdm_parser_next(p, &name, &text, &len, NULL), 0);
    tdm_parser_close(p);
}

/* Appends `extra` raw bytes to file f. */
static void append_bytes(const char *f, const void *extra, size_t n)
{
    FILE *fp = fopen(f, "ab");
    assert_non_null(fp);
    assert_int_equal(fwrite(extra, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

/* Members one after another (cat a.gz b.gz) are one input; anything after a
 * member that is not another whole member is an error, never dropped. */
static void test_gzip_members(void **state)
{
    (void)state;
    const char *a = "d1\tone\n", *b = "d2\ttwo\nd3\tthree\n";
    char two[4096];
    snprintf(two, sizeof two, "%s", gz_file("b.gz", b, strlen(b), 0));
    FILE *fp = fopen(two, "rb");
    assert_non_null(fp);
    unsigned char mb[256];
    size_t nb = fread(mb, 1, sizeof mb, fp);
    fclose(fp);
    assert_true(nb > 20 && nb < sizeof mb);
    const char *f = gz_file("ab.gz", a, strlen(a), 0);
    append_bytes(f, mb, nb);
    assert_string_equal(parse_all(f, TDM_BUILD_AUTO, NULL), "d1=one|d2=two|d3=three|");
    /* the second member's magic damaged, or cut short, or junk after all */
    unsigned char bad[256];
    memcpy(bad, mb, nb);
    bad[1] = 0x00;
    f = gz_file("ab.gz", a, strlen(a), 0);
    append_bytes(f, bad, nb);
    expect_error(f, TDM_BUILD_AUTO, "not another gzip member", "byte ");
    f = gz_file("ab.gz", a, strlen(a), 0);
    append_bytes(f, mb, nb - 6);
    expect_error(f, TDM_BUILD_AUTO, "truncated", NULL);
    f = gz_file("ab.gz", a, strlen(a), 0);
    append_bytes(f, "\0\0\0\0", 4);
    expect_error(f, TDM_BUILD_AUTO, "not another gzip member", NULL);
    /* corrupt deflate data inside a member */
    memcpy(bad, mb, nb);
    for (size_t i = 12; i < nb - 8; i++)
        bad[i] ^= 0x5a;
    f = gz_file("ab.gz", a, strlen(a), 0);
    append_bytes(f, bad, nb);
    expect_error(f, TDM_BUILD_AUTO, "line ", NULL);
}

static void test_trec_markup(void **state)
{
    (void)state;
    /* Only tags are markup: a stray '<' stays text, not a blank to the next '>'. */
    PARSE("stray.trec", "<DOC><DOCNO>d1</DOCNO><TEXT>a < b and x<5, c<d e <b>bold</b> "
          "<!-- note --> <a href=\"u\">link</a> <br/>z</TEXT></DOC>\n"
          "<DOC>\n<DOCNO>d2</DOCNO>\nif (i<n) y = 2 > 1;\n</DOC>\n", TDM_BUILD_AUTO,
          "d1=a < b and x<5, c<d e bold link z|d2=if (i<n) y = 2 > 1;|");
    /* Several documents on one line, and after the last one on it. */
    PARSE("oneline.trec", "<DOC><DOCNO>a</DOCNO>x</DOC><DOC><DOCNO>b</DOCNO>y</DOC> <DOC>\n"
          "<DOCNO>c</DOCNO>z</DOC>\n", TDM_BUILD_TREC, "a=x|b=y|c=z|");
    BAD("nodoc.trec", "<HTML>\nno documents here\n</HTML>\n", TDM_BUILD_TREC, "line 3",
        "no <DOC>");
    BAD("nested.trec", "<DOC><DOCNO>a</DOCNO>x\n<DOC><DOCNO>b</DOCNO>y</DOC>\n",
        TDM_BUILD_TREC, "line 2", "<DOC> inside a document");
    BAD("close.trec", "<DOC>x</DOC>\n</DOC>\n", TDM_BUILD_TREC, "line 2",
        "</DOC> outside");
    BAD("docno.trec", "<DOC>\n<DOCNO>a\nx</DOC>\n", TDM_BUILD_TREC, "line 1",
        "<DOCNO> without </DOCNO>");
    BAD("docno2.trec", "<DOC>\n<DOCNO>a\nb</DOCNO>x</DOC>\n", TDM_BUILD_TREC, "line 1",
        "spans lines");
}

static void test_empty_and_binary(void **state)
{
    (void)state;
    /* No line to name: not "line 0". */
    BAD("empty.txt", "", TDM_BUILD_AUTO, "empty.txt: empty input", ": no documents");
    BAD("blank.txt", "\n  \n\n", TDM_BUILD_LINES, "no documents", "line 3");
    BAD("blank.jsonl", "\n \n", TDM_BUILD_JSONL, "no documents", NULL);
    BAD("noi.all", ".T\nA title\n.W\nwords\n", TDM_BUILD_SMART, "no .I", "line 4");
    static const char elf[] = "\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0";
    BAD("a.out", elf, TDM_BUILD_AUTO, "line 1", "NUL byte");
    BAD("utf16.txt", "\xff\xfe" "d\0o\0c\0", TDM_BUILD_AUTO, "line 1", "NUL byte");
    /* Empty is fine when asked for. */
    put("empty2.txt", "", 0);
    tdm_parser *p = NULL;
    const char *name, *text;
    size_t len;
    assert_int_equal(tdm_parser_open(path, TDM_BUILD_AUTO, &p, NULL), 0);
    tdm_parser_allow_empty(p, 1);
    assert_int_equal(tdm_parser_next(p, &name, &text, &len, NULL), 0);
    tdm_parser_close(p);
}

static void test_bom(void **state)
{
    (void)state;
    static const char *const cases[][3] = {
        {"bom.trec", "\xef\xbb\xbf<DOC><DOCNO>b1</DOCNO>text</DOC>\n", "b1=text|"},
        {"bom.jsonl", "\xef\xbb\xbf{\"id\": \"j\", \"contents\": \"x\"}\n", "j=x|"},
        {"bom.tsv", "\xef\xbb\xbfn1\tone\n", "n1=one|"},
        {"bom.all", "\xef\xbb\xbf.I 7\n.W\nseven\n", "7=seven|"},
    };
    static const int formats[] = {TDM_BUILD_TREC, TDM_BUILD_JSONL, TDM_BUILD_LINES,
                                  TDM_BUILD_SMART};
    for (int k = 0; k < 4; k++) {
        int g = -1;
        assert_string_equal(parse_all(put(cases[k][0], cases[k][1], strlen(cases[k][1])),
                                      TDM_BUILD_AUTO, &g), cases[k][2]);
        assert_int_equal(g, formats[k]);
    }
    /* Only at the start: elsewhere it is text. */
    PARSE("bom2.tsv", "n1\t\xef\xbb\xbfone\n", TDM_BUILD_LINES, "n1=\xef\xbb\xbfone|");
}

static void test_json_strict(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"{\"id\": null, \"contents\": \"x\"}", "the id must be a string or a number"},
        {"{\"id\": true, \"contents\": \"x\"}", "the id must be a string or a number"},
        {"{\"id\": ---}", "expected a value"},
        {"{\"id\": -}", "expected a value"},
        {"{\"id\": 1.}", "bad number: no digit after '.'"},
        {"{\"id\": 1e+}", "bad number: no digit in the exponent"},
        {"{\"id\": 01}", "expected ',' or '}'"},
        {"{\"id\": \"a\\u0000b\"}", "\\u0000 in the id"},
        {"{\"id\": \"a\\nb\"}", "control character in the id"},
        {"{\"id\": [\"a\"]}", "the id must be a string or a number"},
        {"{\"contents\": null}", "the contents must be a string"},
        {"{\"contents\": 5}", "the contents must be a string"},
        {"{\"x\": nul}", "expected a value"},
        {"{\"x\": truex}", "expected ',' or '}'"},
        {"{\"x\": [1, tru]}", "expected a value"},
        {"{\"x\": +1}", "expected a value"},
    };
    tdm_buf id = {0}, text = {0};
    const char *why;
    size_t pos;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = tdm_json_doc(bad[i][0], strlen(bad[i][0]), &id, &text, &why, &pos);
        if (rc != -1 || strcmp(why, bad[i][1]))
            fail_msg("%s: want '%s', got %d '%s'", bad[i][0], bad[i][1], rc, rc ? why : "");
    }
    const char *ok = "{\"x\": [true, false, null, -0.5e-3, 0, {}], \"id\": 0, "
                     "\"contents\": \"a\\u0000b\"}";
    assert_int_equal(tdm_json_doc(ok, strlen(ok), &id, &text, &why, &pos), 0);
    assert_string_equal(id.p, "0");
    assert_int_equal(text.len, 3);
    free(id.p);
    free(text.p);
    /* Through the parser: file and line in the message. */
    BAD("null.jsonl", "{\"id\": \"a\", \"contents\": \"x\"}\n{\"id\": null}\n",
        TDM_BUILD_JSONL, "line 2, column 8", "string or a number");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),      cmocka_unit_test(test_trec),
        cmocka_unit_test(test_smart),      cmocka_unit_test(test_jsonl),
        cmocka_unit_test(test_json_edge),  cmocka_unit_test(test_gzip_and_stdin),
        cmocka_unit_test(test_names_and_errors), cmocka_unit_test(test_gzip_truncated),
        cmocka_unit_test(test_gzip_members),
        cmocka_unit_test(test_trec_markup), cmocka_unit_test(test_empty_and_binary),
        cmocka_unit_test(test_bom),         cmocka_unit_test(test_json_strict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
