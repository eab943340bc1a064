/* The tokenizer: ASCII alphanumeric terms, safe on any bytes, stopwords, stemming. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/tokenize.h"
#include "testutil.h"

typedef struct terms {
    char buf[4096];
    size_t len;
    int n;
} terms;

/* Collects terms as "a b c". */
static int collect(void *user, const char *term, size_t len)
{
    terms *t = user;
    if (t->len + len + 2 < sizeof t->buf) {
        if (t->n++)
            t->buf[t->len++] = ' ';
        memcpy(t->buf + t->len, term, len);
        t->len += len;
        t->buf[t->len] = '\0';
    }
    return 0;
}

static const char *tok(const char *stemmer, const char *const *stops, size_t nstops,
                       const char *text, size_t len)
{
    static terms t;
    memset(&t, 0, sizeof t);
    tdm_tokenizer *k = NULL;
    tdm_err err = {0};
    int rc = tdm_tokenizer_open(stemmer, stops, nstops, &k, &err);
    if (rc)
        fail_msg("tokenizer: %s", tdm_err_msg(&err));
    assert_int_equal(tdm_tokenize(k, text, len, collect, &t), 0);
    tdm_tokenizer_free(k);
    return t.buf;
}

static void test_basic(void **state)
{
    (void)state;
    const char *s = "Hello, World! x86_64 AT&T 3.14 e-mail";
    assert_string_equal(tok("none", NULL, 0, s, strlen(s)),
                        "hello world x86 64 at t 3 14 e mail");
    assert_string_equal(tok("none", NULL, 0, "", 0), "");
    assert_string_equal(tok("none", NULL, 0, "  ,,, ", 6), "");
}

static void test_non_ascii(void **state)
{
    (void)state;
    /* UTF-8 "café naïve" and stray bytes: every byte >= 0x80 separates. */
    const char s[] = "caf\xc3\xa9 na\xc3\xafve \xff\xfe" "abc\x00" "def\x80";
    assert_string_equal(tok("none", NULL, 0, s, sizeof s - 1), "caf na ve abc def");
    /* Random binary input never crashes and yields only [a-z0-9] terms. */
    tdm_rng r;
    tdm_rng_seed(&r, 7);
    char bin[4000];
    for (size_t i = 0; i < sizeof bin; i++)
        bin[i] = (char)tdm_rng_u32(&r);
    const char *out = tok("english", NULL, 0, bin, sizeof bin);
    for (const char *p = out; *p; p++)
        assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == ' ');
}

static void test_long_terms(void **state)
{
    (void)state;
    char s[200];
    memset(s, 'a', 64);
    s[64] = ' ';
    memset(s + 65, 'b', 65);
    strcpy(s + 130, " ok");
    const char *out = tok("none", NULL, 0, s, strlen(s));
    /* 64 bytes is kept, 65 is skipped. */
    assert_int_equal(strlen(out), 64 + 3);
    assert_string_equal(out + 64, " ok");
}

static void test_stem_and_stop(void **state)
{
    (void)state;
    const char *stops[] = {"The", "of"};
    const char *s = "The running of the Boundary Layers";
    assert_string_equal(tok("english", stops, 2, s, strlen(s)), "run boundari layer");
    assert_string_equal(tok(NULL, NULL, 0, s, strlen(s)), "the run of the boundari layer");
    assert_string_equal(tok("none", stops, 2, s, strlen(s)), "running boundary layers");
    assert_string_equal(tok("french", NULL, 0, "continuellement", 15), "continuel");
    tdm_tokenizer *k = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_tokenizer_open("klingon", NULL, 0, &k, &err), TDM_ERR_INVALID_ARG);
    assert_null(k);
    assert_non_null(strstr(tdm_err_msg(&err), "klingon"));
    tdm_err_clear(&err);
}

static void test_first(void **state)
{
    (void)state;
    tdm_tokenizer *k = NULL;
    const char *stops[] = {"a"};
    assert_int_equal(tdm_tokenizer_open("english", stops, 1, &k, NULL), TDM_OK);
    char out[2 * TDM_TERM_MAX_BYTES + 1];
    assert_int_equal(tdm_tokenize_first(k, "Flows!", 6, out), 4);
    assert_string_equal(out, "flow");
    assert_int_equal(tdm_tokenize_first(k, "a", 1, out), 0);
    assert_int_equal(tdm_tokenize_first(k, "...", 3, out), 0);
    tdm_tokenizer_free(k);
}

static void test_stopword_file(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("tokenize");
    char path[1100];
    snprintf(path, sizeof path, "%s/stop.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("# a comment line\nThe  of\n\tand\n", f);
    fclose(f);
    char **w = NULL;
    size_t n = 0;
    assert_int_equal(tdm_stopwords_load(path, &w, &n, NULL), TDM_OK);
    assert_int_equal(n, 3);
    assert_string_equal(w[0], "the");
    assert_string_equal(w[1], "of");
    assert_string_equal(w[2], "and");
    free(w);
    tdm_err err = {0};
    assert_int_equal(tdm_stopwords_load("/nonexistent/stop", &w, &n, &err), TDM_ERR_IO);
    assert_non_null(strstr(tdm_err_msg(&err), "No such file"));
    tdm_err_clear(&err);
    /* A byte-order mark is skipped (and a comment may follow it). */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("\xef\xbb\xbf# comment\nthe\r\nof\n", f);
    fclose(f);
    assert_int_equal(tdm_stopwords_load(path, &w, &n, NULL), TDM_OK);
    assert_int_equal(n, 2);
    assert_string_equal(w[0], "the");
    assert_string_equal(w[1], "of");
    free(w);
    /* A binary file (an index given by mistake) is an error, not words. */
    f = fopen(path, "wb");
    assert_non_null(f);
    fwrite("TDMINDEX\1\0\0\0the", 1, 15, f);
    fclose(f);
    assert_int_equal(tdm_stopwords_load(path, &w, &n, &err), TDM_ERR_FORMAT);
    assert_non_null(strstr(tdm_err_msg(&err), "offset 9: NUL byte"));
    tdm_err_clear(&err);
}

/* The shipped lists by name, /dev/null as the empty list, and a directory
 * refused. */
static void test_named_lists(void **state)
{
    (void)state;
    char **w = NULL;
    size_t n = 99;
    assert_int_equal(tdm_stopwords_load("lucene", &w, &n, NULL), TDM_OK);
    assert_int_equal(n, 33);
    assert_string_equal(w[0], "a");
    assert_string_equal(w[32], "with");
    const char *s = "the fox and the dog are in it";
    assert_string_equal(tok("english", (const char *const *)w, n, s, strlen(s)), "fox dog");
    free(w);
    assert_int_equal(tdm_stopwords_load("snowball", &w, &n, NULL), TDM_OK);
    assert_int_equal(n, 174);
    assert_string_equal(w[0], "i");
    assert_string_equal(w[173], "very");
    assert_string_equal(tok("english", (const char *const *)w, n, s, strlen(s)), "fox dog");
    free(w);
    assert_int_equal(tdm_stopwords_load("none", &w, &n, NULL), TDM_OK);
    assert_int_equal(n, 0);
    free(w);
    n = 99;
    assert_int_equal(tdm_stopwords_load("/dev/null", &w, &n, NULL), TDM_OK);
    assert_int_equal(n, 0);
    free(w);
    tdm_err err = {0};
    assert_int_equal(tdm_stopwords_load("/", &w, &n, &err), TDM_ERR_IO);
    assert_non_null(strstr(tdm_err_msg(&err), "lucene, snowball, none"));
    tdm_err_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),          cmocka_unit_test(test_non_ascii),
        cmocka_unit_test(test_long_terms),     cmocka_unit_test(test_stem_and_stop),
        cmocka_unit_test(test_first),          cmocka_unit_test(test_stopword_file),
        cmocka_unit_test(test_named_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
