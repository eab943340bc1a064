/* Collection parsers: every format, guessing, gzip, stdin, malformed input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "index/json.h"
#include "index/parse.h"
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

/* Parses a file into "name=text|name=text|" (text whitespace squeezed). */
static const char *parse_all(const char *file, int format, int *got_format)
{
    static char out[8192];
    size_t o = 0;
    tdm_parser *p = NULL;
    tdm_err err = {0};
    if (tdm_parser_open(file, format, &p, &err))
        fail_msg("%s", tdm_err_msg(&err));
    if (got_format)
        *got_format = tdm_parser_format(p);
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

static void test_lines(void **state)
{
    (void)state;
    PARSE("a.tsv", "d1\thello world\n\nd2\tsecond doc\r\nno tab here\n", TDM_BUILD_LINES,
          "d1=hello world|d2=second doc|2=no tab here|");
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
    tdm_strbuf id = {0}, text = {0};
    const char *why;
    size_t pos;
    const char *bad[] = {"", "{", "[1]", "{\"id\":}", "{\"id\": \"x\",}", "{\"a\": \"\\q\"}",
                         "{\"a\": \"\\u12\"}", "{} x", "{\"contents\": [\"x\"]}",
                         "{\"a\": \"\x01\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(tdm_json_doc(bad[i], strlen(bad[i]), &id, &text, &why, &pos), -1);
    const char *ok = "{\"contents\": \"\\ud800x\", \"id\": true}";
    assert_int_equal(tdm_json_doc(ok, strlen(ok), &id, &text, &why, &pos), 0);
    assert_string_equal(text.p, "\xef\xbf\xbdx");   /* lone surrogate -> U+FFFD */
    assert_string_equal(id.p, "true");
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
    put("junk.bin", junk, sizeof junk);
    assert_int_equal(tdm_parser_open(path, TDM_BUILD_LINES, &p, &err), TDM_OK);
    const char *name, *text;
    size_t len;
    while (tdm_parser_next(p, &name, &text, &len, &err) == 1)
        assert_non_null(name);
    tdm_parser_close(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),      cmocka_unit_test(test_trec),
        cmocka_unit_test(test_smart),      cmocka_unit_test(test_jsonl),
        cmocka_unit_test(test_json_edge),  cmocka_unit_test(test_gzip_and_stdin),
        cmocka_unit_test(test_names_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
