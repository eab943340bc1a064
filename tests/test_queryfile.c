/* Query files (tools/harness/queryfile.h): each format on small hand-made files,
 * format guessing, TREC field choice, SMART numbering by position, weighted
 * JSON queries, an error naming file and line for each kind of malformed
 * input, and the real files under ../shared/data when present. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/queryfile.h"
#include "testutil.h"

static const char *put(const char *name, const char *text)
{
    return tdm_test_write(tdm_test_tmpdir("queryfile"), name, text);
}

static tdm_qfile *read_ok(const char *text, int format, unsigned fields, int bypos)
{
    tdm_qf_options o = {format, fields, bypos, 0};
    tdm_qfile *f = NULL;
    tdm_err err = {0};
    if (tdm_qfile_read(put("q", text), &o, &f, &err) != TDM_OK)
        fail_msg("%s", tdm_err_msg(&err));
    tdm_err_clear(&err);
    return f;
}

static void expect_error(const char *text, int format, const char *what)
{
    tdm_qf_options o = {format, 0, 0, 0};
    tdm_qfile *f = NULL;
    tdm_err err = {0};
    const char *path = put("bad", text);
    int rc = tdm_qfile_read(path, &o, &f, &err);
    if (rc != TDM_ERR_FORMAT || !strstr(tdm_err_msg(&err), what) ||
        !strstr(tdm_err_msg(&err), path))
        fail_msg("rc %d, message '%s', want '%s'", rc, tdm_err_msg(&err), what);
    assert_null(f);
    tdm_err_clear(&err);
}

static void assert_query(const tdm_qfile *f, size_t i, const char *id, const char *text)
{
    assert_true(i < f->n);
    assert_string_equal(f->q[i].id, id);
    assert_non_null(f->q[i].text);
    assert_string_equal(f->q[i].text, text);
}

static void colon_and_tab(void **state)
{
    (void)state;
    tdm_qfile *f = read_ok("1:pierson s twin lakes marina\n\n2: nurseries: in nj \r\n3:\n", 0, 0, 0);
    assert_int_equal(f->format, TDM_QF_COLON);
    assert_int_equal(f->n, 3);
    assert_query(f, 0, "1", "pierson s twin lakes marina");
    assert_query(f, 1, "2", "nurseries: in nj");
    assert_query(f, 2, "3", ""); /* an empty query: allowed */
    assert_int_equal(f->q[1].line, 3);
    tdm_qfile_free(f);
    f = read_ok("q1\tfoo: bar\nq2\tbaz\n", 0, 0, 0);
    assert_int_equal(f->format, TDM_QF_TAB);
    assert_query(f, 0, "q1", "foo: bar");
    assert_query(f, 1, "q2", "baz");
    tdm_qfile_free(f);
    f = read_ok("", 0, 0, 0);
    assert_int_equal(f->n, 0);
    tdm_qfile_free(f);
    expect_error("1:a\nno separator\n", TDM_QF_COLON, "line 2: no ':'");
    expect_error("1\ta\n2 b\n", TDM_QF_TAB, "line 2: no '\\t'");
    expect_error(":text\n", TDM_QF_COLON, "line 1: empty query id");
    expect_error("1:a\n2:b\n1:c\n", TDM_QF_COLON, "line 3: query id '1' again (first at line 1)");
    expect_error("a b:c\n", TDM_QF_COLON, "white space");
}

static const char *TOPICS =
    "<top>\n"
    "<num> Number: 301\n"
    "<title> International Organized Crime\n"
    "\n"
    "<desc> Description:\n"
    "Identify organizations that participate in\n"
    "international criminal activity.\n"
    "\n"
    "<narr> Narrative:\n"
    "A relevant document must <b>name</b> the organization.\n"
    "</top>\n"
    "\n"
    "<top>\n"
    "<num> 302 </num>\n"
    "<title>Poliomyelitis and Post-Polio</title>\n"
    "<desc>Is the disease under control?</desc>\n"
    "<narr>Relevant: cases.</narr>\n"
    "<dom>Medical</dom>\n"
    "</top>\n";

static void trec_topics(void **state)
{
    (void)state;
    tdm_qfile *f = read_ok(TOPICS, 0, 0, 0);
    assert_int_equal(f->format, TDM_QF_TREC);
    assert_int_equal(f->n, 2);
    assert_query(f, 0, "301", "International Organized Crime");
    assert_query(f, 1, "302", "Poliomyelitis and Post-Polio");
    assert_int_equal(f->q[1].line, 13);
    tdm_qfile_free(f);
    f = read_ok(TOPICS, TDM_QF_TREC, TDM_QF_TITLE | TDM_QF_DESC, 0);
    assert_query(f, 0, "301", "International Organized Crime Identify organizations that "
                              "participate in international criminal activity.");
    assert_query(f, 1, "302", "Poliomyelitis and Post-Polio Is the disease under control?");
    tdm_qfile_free(f);
    f = read_ok(TOPICS, TDM_QF_TREC, TDM_QF_NARR, 0);
    /* <b> is not a topic field: ignored with its text until the next tag */
    assert_query(f, 0, "301", "A relevant document must");
    assert_query(f, 1, "302", "Relevant: cases.");
    tdm_qfile_free(f);
    assert_int_equal(tdm_qf_fields_by_names("title,desc"), TDM_QF_TITLE | TDM_QF_DESC);
    assert_int_equal(tdm_qf_fields_by_names("title,bogus"), 0);
    expect_error("<top>\n<title> x\n</top>\n", TDM_QF_TREC, "line 3: topic from line 1 has no <num>");
    expect_error("<top>\n<num> 5\n</top>\n", TDM_QF_TREC, "topic 5 (from line 1) has no <title>");
    expect_error("<top>\n<num> 5\n<title> x\n", TDM_QF_TREC, "end of file inside the topic from line 1");
    expect_error("<top>\n<num> 5\n<top>\n", TDM_QF_TREC, "line 3: <top> inside");
    expect_error("stray\n<top>\n", TDM_QF_TREC, "line 1: text outside");
    expect_error("</top>\n", TDM_QF_TREC, "line 1: </top> without <top>");
    expect_error("<top><num>1<title>a<title>b</top>\n", TDM_QF_TREC, "<title> twice");
    expect_error("<top><num>1<title>a</top>\n<top><num>1<title>b</top>\n", TDM_QF_TREC,
                 "line 2: query id '1' again");
}

static const char *SMART = ".I 001\n.W\nwhat similarity laws must be obeyed\nby models .\n"
                           ".I 004\n.T\nheat\n.W\nwhat problems of heat conduction .\n"
                           ".N\n 4. someone\n"
                           ".I 9\n";

static void smart(void **state)
{
    (void)state;
    tdm_qfile *f = read_ok(SMART, 0, 0, 0);
    assert_int_equal(f->format, TDM_QF_SMART);
    assert_int_equal(f->n, 3);
    assert_query(f, 0, "001", "what similarity laws must be obeyed by models .");
    assert_query(f, 1, "004", "heat what problems of heat conduction .");
    assert_query(f, 2, "9", ""); /* no field at all: an empty query */
    tdm_qfile_free(f);
    f = read_ok(SMART, TDM_QF_SMART, 0, 1);
    assert_query(f, 0, "1", "what similarity laws must be obeyed by models .");
    assert_query(f, 1, "2", "heat what problems of heat conduction .");
    assert_query(f, 2, "3", "");
    tdm_qfile_free(f);
    expect_error("text\n.I 1\n.W\nx\n", TDM_QF_SMART, "line 1: text before the first .I");
    expect_error(".I 1\nx\n", TDM_QF_SMART, "line 2: text before the first field");
    expect_error(".I 1\n.Z\nx\n", TDM_QF_SMART, "line 2: unknown field .Z");
    expect_error(".I\n.W\nx\n", TDM_QF_SMART, "line 1: .I without an id");
    expect_error(".I 1\n.A\nsomeone\n.I 2\n.W\nx\n", TDM_QF_SMART, "line 1: query 1 has no .W");
    expect_error(".I 1\n.W\na\n.I 1\n.W\nb\n", TDM_QF_SMART, "line 4: query id '1' again");
}

static void jsonl(void **state)
{
    (void)state;
    tdm_qfile *f = read_ok("{\"id\": \"q1\", \"text\": \"caf\\u00e9 \\\"x\\\"\", \"x\": [1, {\"a\": null}]}\n"
                           "\n"
                           "{\"terms\": {\"hello\": 2.5, \"##ing\": 1e-1}, \"id\": 17}\n"
                           "{\"id\": -3, \"terms\": {}}\n",
                           0, 0, 0);
    assert_int_equal(f->format, TDM_QF_JSONL);
    assert_int_equal(f->n, 3);
    assert_query(f, 0, "q1", "caf\xc3\xa9 \"x\"");
    assert_string_equal(f->q[1].id, "17");
    assert_null(f->q[1].text);
    assert_int_equal(f->q[1].nterms, 2);
    assert_string_equal(f->q[1].terms[0].term, "hello");
    assert_true(f->q[1].terms[0].weight == 2.5);
    assert_string_equal(f->q[1].terms[1].term, "##ing");
    assert_true(f->q[1].terms[1].weight == 0.1);
    assert_int_equal(f->q[1].line, 3);
    assert_int_equal(f->q[2].nterms, 0);
    tdm_qfile_free(f);
    /* a key that only starts like "id" is another key */
    f = read_ok("{\"id\\u0000\": 1, \"idx\": 3, \"id\": 2, \"text\": \"a\"}\n", 0, 0, 0);
    assert_query(f, 0, "2", "a");
    tdm_qfile_free(f);
    expect_error("{\"id\": 1, \"text\": \"a\"\n", TDM_QF_JSONL, "line 1: byte");
    expect_error("{\"text\": \"a\"}\n", TDM_QF_JSONL, "line 1: no \"id\"");
    expect_error("{\"id\": 1}\n", TDM_QF_JSONL, "want exactly one of");
    expect_error("{\"id\": 1, \"text\": \"a\", \"terms\": {}}\n", TDM_QF_JSONL, "want exactly one of");
    expect_error("{\"id\": 1, \"id\": 2, \"text\": \"\"}\n", TDM_QF_JSONL, "key \"id\" twice");
    expect_error("{\"id\": true, \"text\": \"a\"}\n", TDM_QF_JSONL, "want a string or a number");
    expect_error("{\"id\": 1, \"terms\": {\"a\": 0}}\n", TDM_QF_JSONL, "weight 0 of 'a'");
    expect_error("{\"id\": 1, \"terms\": {\"a\": -2}}\n", TDM_QF_JSONL, "weight -2");
    expect_error("{\"id\": 1, \"terms\": {\"a\": 1, \"a\": 2}}\n", TDM_QF_JSONL, "'a' twice");
    expect_error("{\"id\": 1, \"terms\": {\"a\": \"1\"}}\n", TDM_QF_JSONL, "expected a value");
    expect_error("{\"id\": 1, \"terms\": {\"a\": 1e999}}\n", TDM_QF_JSONL, "out of range");
    expect_error("{\"id\": 01, \"text\": \"a\"}\n", TDM_QF_JSONL, "expected ',' or '}'");
    expect_error("{\"id\": 1, \"text\": \"a\\u0000b\"}\n", TDM_QF_JSONL, "NUL");
    expect_error("{\"id\": 1, \"text\": \"\\ud800\"}\n", TDM_QF_JSONL, "surrogate");
    expect_error("{\"id\": 1, \"text\": \"a\"} x\n", TDM_QF_JSONL, "text after the object");
    expect_error("{\"id\": 1, \"text\": \"a\"}\n[1]\n", TDM_QF_JSONL, "line 2");
    expect_error("{\"id\": \"1\", \"text\": \"a\"}\n{\"id\": 1, \"text\": \"b\"}\n", TDM_QF_JSONL,
                 "query id '1' again");
}

/* Issue 27 item 5: CR-only line ends merged a colon or tab file's queries
 * into its first; ids with a line end or another control character broke
 * the run's lines; weights past float (or below its normal range) made
 * every score inf (or counted as zero). */
static void cr_ids_weights(void **state)
{
    (void)state;
    for (int fmt = 0; fmt <= TDM_QF_JSONL; fmt++) {
        if (fmt == TDM_QF_TREC)
            continue; /* topics take CR as white space: every field still found */
        const char *cr = fmt == TDM_QF_JSONL ? "{\"id\":1,\"text\":\"a\"}\r{\"id\":2,\"text\":\"b\"}\r"
                       : fmt == TDM_QF_SMART ? ".I 1\r.W\rflow\r.I 2\r.W\rair\r"
                       : fmt == TDM_QF_TAB   ? "1\tflow\r2\tair\r"
                                             : "1:flow\r2:air\r3:heat\r";
        expect_error(cr, fmt, "line 1: a carriage return (CR) at byte");
    }
    tdm_qfile *f = read_ok("1:flow\r\n2:air\r\n", 0, 0, 0); /* CR LF: fine */
    assert_int_equal(f->n, 2);
    assert_query(f, 1, "2", "air");
    tdm_qfile_free(f);
    f = read_ok("<top>\r<num> Number: 1\r<title> flow\r</top>\r<top>\r<num> 2\r<title> air"
                "\r</top>\r", 0, 0, 0);
    assert_int_equal(f->n, 2);
    tdm_qfile_free(f);
    static const char *const ids[] = {"1\x0bx:a\n", "1\x0cx:a\n", "1\x01x:a\n", "1\x7fx:a\n"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
        expect_error(ids[i], TDM_QF_COLON, "a control character");
    expect_error("{\"id\": \"a\\nb\", \"text\": \"x\"}\n", TDM_QF_JSONL,
                 "a control character (byte 0x0a at 2), which a TREC run cannot carry");
    expect_error("{\"id\": \"a\\rb\", \"text\": \"x\"}\n", TDM_QF_JSONL, "byte 0x0d");
    expect_error("{\"id\": \"a b\", \"text\": \"x\"}\n", TDM_QF_JSONL, "white space");
    expect_error(".I 1\x0c" "2\n.W\nflow\n", TDM_QF_SMART, "a control character");
    expect_error("<top>\n<num> 1\x0b" "2\n<title> a\n</top>\n", TDM_QF_TREC, "a control character");
    static const char *const w[] = {"3e38", "1e10", "1e-39", "1e-10", "1.0000001e9"};
    for (size_t i = 0; i < sizeof w / sizeof *w; i++) {
        char q[128];
        snprintf(q, sizeof q, "{\"id\": 1, \"terms\": {\"a\": 1, \"b\": %s}}\n", w[i]);
        expect_error(q, TDM_QF_JSONL, "terms: weight");
    }
    f = read_ok("{\"id\": 1, \"terms\": {\"a\": 1e9, \"b\": 1e-9}}\n", 0, 0, 0);
    assert_true(f->q[0].terms[0].weight == 1e9 && f->q[0].terms[1].weight == 1e-9);
    tdm_qfile_free(f);
}

static void bad_options(void **state)
{
    (void)state;
    tdm_qf_options o = {99, 0, 0, 0};
    tdm_qfile *f = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_qfile_read(put("q", "1:a\n"), &o, &f, &err), TDM_ERR_INVALID_ARG);
    o = (tdm_qf_options){0, 8, 0, 0};
    assert_int_equal(tdm_qfile_read(put("q", "1:a\n"), &o, &f, &err), TDM_ERR_INVALID_ARG);
    assert_true(tdm_qfile_read("/nonexistent/queries", NULL, &f, &err) < 0);
    assert_non_null(strstr(tdm_err_msg(&err), "/nonexistent/queries"));
    assert_int_equal(tdm_qf_format_by_name("smart"), TDM_QF_SMART);
    assert_int_equal(tdm_qf_format_by_name("xml"), -1);
    assert_string_equal(tdm_qf_format_name(TDM_QF_JSONL), "jsonl");
    tdm_err_clear(&err);
}

static tdm_qfile *read_real(const char *rel, int bypos)
{
    const char *path = tdm_test_data(rel);
    tdm_qf_options o = {0, 0, bypos, 0};
    tdm_qfile *f = NULL;
    tdm_err err = {0};
    if (tdm_qfile_read(path, &o, &f, &err) != TDM_OK)
        fail_msg("%s", tdm_err_msg(&err));
    return f;
}

static void real_files(void **state)
{
    (void)state;
    tdm_qfile *f = read_real("queries/terabyte05-efficiency.txt", 0);
    assert_int_equal(f->format, TDM_QF_COLON);
    assert_int_equal(f->n, 50000);
    assert_query(f, 0, "1", "pierson s twin lakes marina");
    tdm_qfile_free(f);
    f = read_real("cranfield/cran.qry", 1);
    assert_int_equal(f->format, TDM_QF_SMART);
    assert_int_equal(f->n, 225);
    assert_string_equal(f->q[224].id, "225");
    assert_non_null(strstr(f->q[0].text, "aeroelastic models"));
    tdm_qfile_free(f);
    f = read_real("cacm/query.text", 0);
    assert_int_equal(f->n, 65); /* 64 queries and the trailing empty `.I 0` */
    assert_string_equal(f->q[63].id, "64");
    assert_string_equal(f->q[64].text, "");
    tdm_qfile_free(f);
}

/* Issue 27 item 6: a TAB in a colon file's text made the file a tab file
 * and blamed the id; a file that reads neither way says what it was read as. */
static void tab_in_colon_file(void **state)
{
    (void)state;
    tdm_qfile *f = read_ok("1:boundary layer\tflow\n2:heat transfer\n", 0, 0, 0);
    assert_int_equal(f->format, TDM_QF_COLON);
    assert_query(f, 0, "1", "boundary layer\tflow");
    assert_query(f, 1, "2", "heat transfer");
    tdm_qfile_free(f);
    f = read_ok("7:flow\tair\n", 0, 0, 0); /* both ways: the first separator */
    assert_int_equal(f->format, TDM_QF_COLON);
    assert_query(f, 0, "7", "flow\tair");
    tdm_qfile_free(f);
    f = read_ok("q1\ttime: 10:30\nq2\tratio 3:1\n", 0, 0, 0);
    assert_int_equal(f->format, TDM_QF_TAB);
    assert_query(f, 1, "q2", "ratio 3:1");
    tdm_qfile_free(f);
    f = read_ok("  q1\tflow\n", 0, 0, 0);
    assert_int_equal(f->format, TDM_QF_TAB);
    tdm_qfile_free(f);
    expect_error("bad id\tflow\n", 0, "read as a colon file, id:text, detected");
    expect_error("1:a\nno separator\n", 0, "line 2: no ':'");
}

/* Learned sparse query logs (SPLADE, uniCOIL TSV): repeated tokens are one
 * term weighing its count, WordPieces whole, the limit on distinct terms. */
static void tokens(void **state)
{
    (void)state;
    tdm_qf_options o = {TDM_QF_AUTO, 0, 0, 1};
    tdm_qfile *f = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_qfile_read(put("t", "q1\tcat ##s cat cat  ##s\tdog\nq2\t\n"), &o, &f,
                                    &err), TDM_OK);
    assert_int_equal(f->format, TDM_QF_TAB);
    assert_int_equal(f->n, 2);
    assert_null(f->q[0].text);
    assert_int_equal(f->q[0].nterms, 3);
    assert_string_equal(f->q[0].terms[0].term, "cat");
    assert_true(f->q[0].terms[0].weight == 3);
    assert_string_equal(f->q[0].terms[1].term, "##s");
    assert_true(f->q[0].terms[1].weight == 2);
    assert_string_equal(f->q[0].terms[2].term, "dog");
    assert_true(f->q[0].terms[2].weight == 1);
    assert_int_equal(f->q[1].nterms, 0);
    tdm_qfile_free(f);
    /* "tokens" as a --format name */
    tdm_qf_options t = {0};
    assert_int_equal(tdm_qf_options_by_name("tokens", &t), 0);
    assert_int_equal(t.format, TDM_QF_TAB);
    assert_true(t.tokens);
    assert_int_equal(tdm_qf_options_by_name("jsonl", &t), 0);
    assert_false(t.tokens);
    assert_int_equal(tdm_qf_options_by_name("splade", &t), -1);
    /* 100,000 tokens of 1,024 distinct terms: fine; a 1,025th term: an error
       naming the query, the line and the rule */
    size_t cap = 2u << 20, n = 0;
    char *big = malloc(cap);
    assert_non_null(big);
    n += (size_t)snprintf(big + n, cap - n, "x\tfirst\nbig\t");
    for (int i = 0; i < 100000; i++)
        n += (size_t)snprintf(big + n, cap - n, "t%d ", i % 1024);
    n += (size_t)snprintf(big + n, cap - n, "\n");
    f = NULL;
    assert_int_equal(tdm_qfile_read(put("big", big), &o, &f, &err), TDM_OK);
    assert_int_equal(f->q[1].nterms, 1024);
    double sum = 0;
    for (size_t i = 0; i < f->q[1].nterms; i++)
        sum += f->q[1].terms[i].weight;
    assert_true(sum == 100000);
    tdm_qfile_free(f);
    n -= 1;
    n += (size_t)snprintf(big + n, cap - n, "t_more\n");
    const char *bad = put("big2", big);
    assert_int_equal(tdm_qfile_read(bad, &o, &f, &err), TDM_ERR_FORMAT);
    assert_non_null(strstr(tdm_err_msg(&err), "line 2"));
    assert_non_null(strstr(tdm_err_msg(&err), "query 'big'"));
    assert_non_null(strstr(tdm_err_msg(&err), "more than 1024 distinct terms"));
    tdm_err_clear(&err);
    free(big);
    /* colon lines too */
    o.format = TDM_QF_COLON;
    assert_int_equal(tdm_qfile_read(put("c", "7:a a b\n"), &o, &f, &err), TDM_OK);
    assert_int_equal(f->q[0].nterms, 2);
    assert_true(f->q[0].terms[0].weight == 2);
    tdm_qfile_free(f);
}

/* JSON queries: "vector" as "terms" (Anserini's JSON vector topics); weights
 * checked; at most 1024 terms. */
static void json_vector_queries(void **state)
{
    (void)state;
    tdm_qfile *f = read_ok("{\"id\": \"1\", \"vector\": {\"##ing\": 2.5, \"cat\": 3}}\n", 0, 0,
                           0);
    assert_int_equal(f->format, TDM_QF_JSONL);
    assert_int_equal(f->q[0].nterms, 2);
    assert_string_equal(f->q[0].terms[0].term, "##ing");
    assert_true(f->q[0].terms[0].weight == 2.5);
    tdm_qfile_free(f);
    expect_error("{\"id\": 1, \"vector\": {\"a\": -1}}\n", 0, "weight -1");
    expect_error("{\"id\": 1, \"vector\": {\"a\": 0}}\n", 0, "weight 0");
    expect_error("{\"id\": 1, \"vector\": {\"a\": \"NaN\"}}\n", 0, "line 1");
    expect_error("{\"id\": 1, \"vector\": {\"a\": NaN}}\n", 0, "line 1");
    expect_error("{\"id\": 1, \"vector\": {\"a\": 1e999}}\n", 0, "line 1");
    expect_error("{\"id\": 1, \"vector\": {\"a\": 1}, \"terms\": {\"b\": 1}}\n", 0,
                 "twice");
    expect_error("{\"id\": 1, \"vector\": {\"a\": 1}\n", 0, "line 1");
    char *big = malloc(64u << 10);
    assert_non_null(big);
    size_t n = (size_t)sprintf(big, "{\"id\": 1, \"terms\": {");
    for (int i = 0; i < 1025; i++)
        n += (size_t)sprintf(big + n, "%s\"t%d\": 1", i ? ", " : "", i);
    sprintf(big + n, "}}\n");
    expect_error(big, 0, "more than 1024 distinct terms");
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(colon_and_tab), cmocka_unit_test(trec_topics),
        cmocka_unit_test(smart),         cmocka_unit_test(jsonl),
        cmocka_unit_test(bad_options),   cmocka_unit_test(real_files),
        cmocka_unit_test(cr_ids_weights), cmocka_unit_test(tab_in_colon_file),
        cmocka_unit_test(tokens),        cmocka_unit_test(json_vector_queries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
