/* Learned sparse collections (host/build/vector.h): quantization rules, JSON
 * vector documents (good and malformed: JSON, weights non-numeric, negative,
 * NaN, huge, fractional), the parser's guess and gzip (whole and damaged),
 * and impact indexes built from them: the rule recorded, the impacts stored,
 * the stored bounds checked, plain and gzip input giving the same file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "build/build.h"
#include "build/parse.h"
#include "build/vector.h"
#include "index/reader.h"
#include "testutil.h"

static char dir[1024];   /* this test's files (tdm_test_tmpdir empties it) */

static void fresh_dir(void) { snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("vector")); }

/* The path of a new file (kept: tdm_test_write's buffer is reused). */
static const char *put(const char *name, const char *text)
{
    static char paths[8][1100];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 1100, "%s", tdm_test_write(dir, name, text));
    return p;
}

static void quant_rules(void **state)
{
    (void)state;
    tdm_quant q;
    char why[256];
    uint32_t imp = 0;
    const char *w = NULL;
    assert_int_equal(tdm_quant_parse(NULL, &q, why, sizeof why), 0);
    assert_int_equal(q.kind, TDM_QUANT_INTEGER);
    assert_int_equal(tdm_quant_apply(&q, 7, &imp, &w), 1);
    assert_int_equal(imp, 7);
    assert_int_equal(tdm_quant_apply(&q, 0, &imp, &w), 0);        /* no posting */
    assert_int_equal(tdm_quant_apply(&q, 2.5, &imp, &w), -1);     /* a fraction */
    assert_non_null(strstr(w, "not an integer"));
    assert_int_equal(tdm_quant_apply(&q, 1e12, &imp, &w), -1);    /* past 2^24 */
    assert_int_equal(tdm_quant_parse("scale:100", &q, why, sizeof why), 0);
    assert_int_equal(tdm_quant_apply(&q, 0.125, &imp, &w), 1);
    assert_int_equal(imp, 13);                                    /* 12.5 away from zero */
    assert_int_equal(tdm_quant_apply(&q, 0.004, &imp, &w), 0);    /* rounds to 0 */
    assert_int_equal(tdm_quant_parse("linear:8:2", &q, why, sizeof why), 0);
    assert_int_equal(q.bits, 8);
    assert_int_equal(tdm_quant_apply(&q, 2, &imp, &w), 1);
    assert_int_equal(imp, 255);                                   /* PISA: 2^8 - 1 */
    assert_int_equal(tdm_quant_apply(&q, 1, &imp, &w), 1);
    assert_int_equal(imp, 128);                                   /* round(127) + 1 */
    assert_int_equal(tdm_quant_apply(&q, 1e-9, &imp, &w), 1);
    assert_int_equal(imp, 1);
    assert_int_equal(tdm_quant_apply(&q, 2.5, &imp, &w), -1);     /* above M */
    const char *bad[] = {"scale:0", "scale:-1", "scale:x", "scale:nan", "linear:1",
                         "linear:25", "linear:8:0", "linear:8:-3", "linear:", "pisa", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(tdm_quant_parse(bad[i], &q, why, sizeof why), -1);
}

/* Parses one line; returns the error text or "" and the packed vector. */
static const char *doc(const char *line, const char *rule, tdm_buf *vec)
{
    static char why[256];
    tdm_quant q;
    assert_int_equal(tdm_quant_parse(rule, &q, why, sizeof why), 0);
    tdm_buf id = {0};
    double m = 0;
    size_t pos;
    why[0] = 0;
    int rc = tdm_json_vector_doc(line, strlen(line), &q, &id, vec, &m, why, sizeof why, &pos);
    tdm_buf_free(&id);
    return rc ? why : "";
}

static int count(void *user, const char *term, size_t len, uint32_t impact)
{
    char *out = user;
    size_t n = strlen(out);
    snprintf(out + n, 256 - n, "%.*s=%u ", (int)len, term, impact);
    return 0;
}

static void json_docs(void **state)
{
    (void)state;
    tdm_buf v = {0};
    char got[256] = "";
    assert_string_equal(doc("{\"id\": \"d\", \"contents\": \"x\", \"vector\": {\"##ing\": 3, "
                            "\"a\": 0, \"b\": 7}}", NULL, &v), "");
    tdm_vector_each(v.p, v.len, count, got);
    assert_string_equal(got, "##ing=3 b=7 ");
    const struct { const char *line, *why; } bad[] = {
        {"{\"id\": 1, \"vector\": {\"a\": -2}}", "term 'a' is negative"},
        {"{\"id\": 1, \"vector\": {\"a\": \"3\"}}", "term 'a' must be a number"},
        {"{\"id\": 1, \"vector\": {\"a\": NaN}}", "term 'a' must be a number"},
        {"{\"id\": 1, \"vector\": {\"a\": 1e999}}", "number out of range"},
        {"{\"id\": 1, \"vector\": {\"a\": 1.5}}", "not an integer"},
        {"{\"id\": 1, \"vector\": {\"a\": 1}", "expected"},
        {"{\"id\": 1, \"vector\": [1, 2]}", "must be an object"},
        {"{\"id\": 1, \"contents\": \"x\"}", "no \"vector\""},
        {"{\"id\": 1, \"vector\": {}, \"vector\": {}}", "twice"},
        {"{\"id\": 1, \"vector\": {\"\": 1}}", "empty term"},
        {"{\"id\": 1, \"vector\": {\"a\\u0000b\": 1}}", "\\u0000"},
        {"{\"id\": null, \"vector\": {}}", "id must be"},
        {"{\"id\": 1, \"vector\": {}} x", "trailing"},
        {"[1]", "expected '{'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *w = doc(bad[i].line, NULL, &v);
        if (!strstr(w, bad[i].why))
            fail_msg("%s: '%s', want '%s'", bad[i].line, w, bad[i].why);
    }
    /* a huge line: 200,000 terms */
    size_t cap = 8u << 20, n = 0;
    char *big = malloc(cap);
    assert_non_null(big);
    n += (size_t)snprintf(big, cap, "{\"id\": \"big\", \"vector\": {");
    for (int i = 0; i < 200000; i++)
        n += (size_t)snprintf(big + n, cap - n, "%s\"t%d\": %d", i ? ", " : "", i, i % 100 + 1);
    snprintf(big + n, cap - n, "}}");
    assert_string_equal(doc(big, NULL, &v), "");
    assert_int_equal(v.len, 200000 * 5 + (size_t)(10 * 2 + 90 * 3 + 900 * 4 + 9000 * 5 +
                                                  90000 * 6 + 100000 * 7));
    free(big);
    tdm_buf_free(&v);
}

static tdm_ireader *build(const char *input, const char *quantize, int threads, const char *out)
{
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    o.quantize = quantize;
    o.threads = (unsigned)threads;
    tdm_err err = {0};
    if (tdm_build_index(&input, 1, out, &o, &err) != TDM_OK)
        fail_msg("build %s: %s", input, tdm_err_msg(&err));
    tdm_ireader *r = NULL;
    if (tdm_ireader_open(out, &r, &err) != TDM_OK)
        fail_msg("open: %s", tdm_err_msg(&err));
    return r;
}

static const char *build_error(const char *input, const char *quantize, int format)
{
    static char msg[512];
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    o.quantize = quantize;
    o.format = format;
    tdm_err err = {0};
    char out[1100];
    snprintf(out, sizeof out, "%s/bad.idx", dir);
    int rc = tdm_build_index(&input, 1, out, &o, &err);
    snprintf(msg, sizeof msg, "%s", rc ? tdm_err_msg(&err) : "ok");
    tdm_err_clear(&err);
    return msg;
}

static uint32_t impact_of(const tdm_ireader *r, const char *term, uint32_t docid)
{
    uint64_t id;
    assert_int_equal(tdm_ireader_find(r, term, strlen(term), &id), TDM_OK);
    uint32_t df = 0, docs[16], freqs[16];
    tdm_ireader_term(r, id, NULL, &df, NULL);
    assert_true(df <= 16);
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_decode(r, id, docs, freqs, &err), TDM_OK);
    for (size_t i = 0; i < df; i++)
        if (docs[i] == docid)
            return freqs[i];
    return 0;
}

static int same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb, ca, cb;
    while (same && ((ca = getc(fa)) != EOF) | ((cb = getc(fb)) != EOF))
        same = ca == cb;
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

static const char COLL[] =
    "{\"id\": \"d0\", \"contents\": \"a\", \"vector\": {\"##ing\": 1.5, \"cat\": 0.25}}\n"
    "\n"
    "{\"id\": \"d1\", \"vector\": {\"cat\": 3.0, \"dog\": 0.001}}\n"
    "{\"id\": 2, \"vector\": {\"dog\": 2}}\n";

static void impact_index(void **state)
{
    (void)state;
    fresh_dir();
    char out[1100], out2[1100];
    snprintf(out, sizeof out, "%s/s.idx", dir);
    const char *in = put("c.jsonl", COLL);
    tdm_ireader *r = build(in, "scale:10", 1, out);
    const tdm_ireader_info *i = tdm_ireader_info_get(r);
    assert_true(i->impact);
    assert_int_equal(i->quant, TDM_QUANT_SCALE);
    assert_true(i->quant_scale == 10);
    assert_true(i->k1 == 0 && i->b == 0);
    assert_string_equal(i->stemmer, "none");
    assert_int_equal(i->ndocs, 3);
    assert_int_equal(impact_of(r, "##ing", 0), 15);
    assert_int_equal(impact_of(r, "cat", 0), 3);        /* 2.5 away from zero */
    assert_int_equal(impact_of(r, "cat", 1), 30);
    assert_int_equal(impact_of(r, "dog", 1), 0);        /* 0.01 rounds to no posting */
    assert_int_equal(impact_of(r, "dog", 2), 20);
    assert_int_equal(tdm_ireader_doclens(r)[0], 18);
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_verify(r, &err), TDM_OK);
    tdm_ireader_close(r);
    /* linear: the largest weight from a first pass; gzip and 2 threads: the same file */
    snprintf(out, sizeof out, "%s/l.idx", dir);
    r = build(in, "linear:8", 1, out);
    i = tdm_ireader_info_get(r);
    assert_int_equal(i->quant, TDM_QUANT_LINEAR);
    assert_int_equal(i->quant_bits, 8);
    assert_true(i->quant_max == 3);
    assert_int_equal(impact_of(r, "cat", 1), 255);
    assert_int_equal(impact_of(r, "##ing", 0), 128);
    tdm_ireader_close(r);
    char gzp[1100];
    snprintf(gzp, sizeof gzp, "%s/c.jsonl.gz", dir);
    gzFile gz = gzopen(gzp, "wb");
    assert_non_null(gz);
    gzwrite(gz, COLL, sizeof COLL - 1);
    gzclose(gz);
    snprintf(out2, sizeof out2, "%s/l2.idx", dir);
    tdm_ireader_close(build(gzp, "linear:8", 2, out2));
    assert_true(same_file(out, out2));
    /* integers as they are, and the errors */
    const char *ints = put("i.jsonl", "{\"id\": \"a\", \"vector\": {\"x\": 3, \"y\": 200}}\n");
    snprintf(out, sizeof out, "%s/i.idx", dir);
    r = build(ints, NULL, 1, out);
    assert_int_equal(tdm_ireader_info_get(r)->quant, TDM_QUANT_INTEGER);
    assert_int_equal(impact_of(r, "y", 0), 200);
    tdm_ireader_close(r);
    assert_non_null(strstr(build_error(in, NULL, 0), "line 1, column"));
    assert_non_null(strstr(build_error(in, NULL, 0), "not an integer"));
    assert_non_null(strstr(build_error(in, "linear:8:2", 0), "above the largest weight"));
    assert_non_null(strstr(build_error(in, "bits", 0), "quantize 'bits'"));
    const char *text = put("t.txt", "d1\thello world\n");
    assert_non_null(strstr(build_error(text, "scale:2", 0), "JSON vector collections only"));
    assert_non_null(strstr(build_error(text, NULL, TDM_BUILD_JSON_VECTOR), "line 1"));
    /* damaged gzip: cut short */
    char cut[1100];
    snprintf(cut, sizeof cut, "%s/cut.jsonl.gz", dir);
    gz = gzopen(cut, "wb");
    for (int k = 0; k < 2000; k++)
        gzprintf(gz, "{\"id\": \"d%d\", \"vector\": {\"t%d\": %d}}\n", k, k % 97, k % 13 + 1);
    gzclose(gz);
    FILE *f = fopen(cut, "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    assert_int_equal(truncate(cut, size / 2), 0);
    const char *e = build_error(cut, NULL, 0);
    if (!strstr(e, cut))
        fail_msg("damaged gzip: '%s'", e);
}

/* The parser's guess: a first line with a "vector" key is a JSON vector. */
static void guess(void **state)
{
    (void)state;
    fresh_dir();
    tdm_parser *p = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_parser_open(put("g.jsonl", COLL), TDM_BUILD_AUTO, &p, &err), TDM_OK);
    assert_int_equal(tdm_parser_format(p), TDM_BUILD_JSON_VECTOR);
    tdm_parser_close(p);
    assert_int_equal(tdm_parser_open(put("h.jsonl", "{\"id\": 1, \"contents\": \"x\"}\n"),
                                     TDM_BUILD_AUTO, &p, &err), TDM_OK);
    assert_int_equal(tdm_parser_format(p), TDM_BUILD_JSONL);
    tdm_parser_close(p);
    assert_int_equal(tdm_format_by_name("jsonvector"), TDM_BUILD_JSON_VECTOR);
    assert_int_equal(tdm_format_by_name("vector"), TDM_BUILD_JSON_VECTOR);
    assert_string_equal(tdm_format_name(TDM_BUILD_JSON_VECTOR), "jsonvector");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quant_rules),
        cmocka_unit_test(json_docs),
        cmocka_unit_test(impact_index),
        cmocka_unit_test(guess),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
