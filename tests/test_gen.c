/* Generators: the Uniform and Clustered lists (sorted, distinct, inside the
 * universe, deterministic, clustered gaps smaller) and the synthetic
 * collection (deterministic, mean length, Zipf shape, names by query-log
 * rank, and an index built from it), and its learned sparse form (JSON
 * vectors: distinct terms, impacts 1..255, names from a query log's tokens,
 * gzip, an impact index built from it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "common/buf.h"
#include "common/fsutil.h"
#include "import/ciff.h"
#include "support/collection_gen.h"
#include "import/pisa.h"
#include "index/reader.h"
#include "support/listgen.h"
#include "testutil.h"

/* ---- lists */

static void assert_valid_list(const uint32_t *v, size_t n, uint32_t universe)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i] >= universe)
            fail_msg("value %u at %zu outside [0, %u)", v[i], i, universe);
        if (i && v[i] <= v[i - 1])
            fail_msg("not increasing at %zu: %u after %u", i, v[i], v[i - 1]);
    }
}

static double mean_log_gap(const uint32_t *v, size_t n)
{
    double s = 0;
    for (size_t i = 1; i < n; i++)
        s += log2((double)(v[i] - v[i - 1]));
    return s / (double)(n - 1);
}

static void lists_valid_and_deterministic(void **state)
{
    (void)state;
    static const struct { size_t n; uint32_t u; } cases[] = {
        {1, 1}, {1, 1u << 29}, {9, 10}, {10, 10}, {1000, 1000}, {1000, 1001}, {1000, 2001},
        {1u << 10, 1u << 29}, {1u << 16, 1u << 29}, {1u << 16, 1u << 17}, {60000, 65536},
        {1u << 20, 1u << 29}, {100, UINT32_C(1) << 31},
    };
    size_t big = tdm_test_small() ? (1u << 16) : (1u << 20);
    uint32_t *a = malloc(big * sizeof *a), *b = malloc(big * sizeof *b);
    for (int dist = 0; dist < 2; dist++)
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            size_t n = cases[c].n;
            if (n > big)
                continue;
            assert_int_equal(tdm_listgen(dist, a, n, cases[c].u, 42), TDM_OK);
            assert_valid_list(a, n, cases[c].u);
            assert_int_equal(tdm_listgen(dist, b, n, cases[c].u, 42), TDM_OK);
            assert_memory_equal(a, b, n * sizeof *a);
            if (n == cases[c].u) /* full universe: 0 .. u-1 */
                assert_int_equal(a[n - 1], n - 1);
            if (n >= 1000 && n < cases[c].u) {
                assert_int_equal(tdm_listgen(dist, b, n, cases[c].u, 43), TDM_OK);
                assert_true(memcmp(a, b, n * sizeof *a) != 0);
            }
        }
    free(a);
    free(b);
}

static void lists_api_edges(void **state)
{
    (void)state;
    uint32_t v[4];
    assert_int_equal(tdm_listgen_uniform(v, 5, 4, 1), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_listgen_clustered(NULL, 1, 4, 1), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_listgen_uniform(NULL, 0, 4, 1), TDM_OK);
    assert_int_equal(tdm_listgen(7, v, 1, 4, 1), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_listgen_uniform(v, 1, UINT32_MAX, 1), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_listgen_dist_by_name("uniform"), TDM_LISTGEN_UNIFORM);
    assert_int_equal(tdm_listgen_dist_by_name("clustered"), TDM_LISTGEN_CLUSTERED);
    assert_int_equal(tdm_listgen_dist_by_name("zipf"), -1);
}

/* Uniform gaps of a sparse list are near-exponential, so log2 of a gap
 * averages log2(u/n) - 0.83; clustered
 * lists pack runs, so their gaps are markedly smaller (Anh & Moffat). */
static void lists_shape(void **state)
{
    (void)state;
    size_t n = 1u << 16;
    uint32_t u = 1u << 29, *a = malloc(n * sizeof *a);
    assert_int_equal(tdm_listgen_uniform(a, n, u, 5), TDM_OK);
    double gu = mean_log_gap(a, n);
    assert_true(gu > 11.9 && gu < 12.4); /* log2(2^13) - Euler gamma / ln 2 */
    uint64_t low = 0; /* uniform: each half of the universe holds about half */
    for (size_t i = 0; i < n; i++)
        low += a[i] < u / 2;
    assert_true(low > n / 2 - n / 50 && low < n / 2 + n / 50);
    double gc = 0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        assert_int_equal(tdm_listgen_clustered(a, n, u, seed), TDM_OK);
        gc += mean_log_gap(a, n) / 8;
    }
    assert_true(gc < gu - 0.5);
    free(a);
}

/* ---- collections */

static char *generate(const tdm_gen_options *o, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    tdm_err err = {0};
    if (tdm_gen_collection(o, f, "memory", &err) != TDM_OK)
        fail_msg("%s", tdm_err_msg(&err));
    fclose(f);
    return buf;
}

/* Token counts by word over a lines-format collection; returns the word
 * with the highest count, and fills top[0..2] with the three highest counts
 * and *tokens, *docs. */
typedef struct tally {
    char word[3][65];
    uint64_t count[3];
    uint64_t tokens, docs;
} tally;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void count_tokens(char *text, tally *t)
{
    memset(t, 0, sizeof *t);
    size_t cap = 0, n = 0;
    char **w = tdm_array_grow(NULL, &cap, 1 << 16, sizeof *w);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        t->docs++;
        char *tab = strchr(line, '\t');
        assert_non_null(tab);
        char *save;
        for (char *tok = strtok_r(tab + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
            w = tdm_array_grow(w, &cap, n + 1, sizeof *w);
            assert_non_null(w);
            w[n++] = tok;
        }
    }
    t->tokens = n;
    qsort(w, n, sizeof *w, cmp_str);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && !strcmp(w[i], w[j]); j++)
            ;
        uint64_t c = j - i;
        for (int k = 0; k < 3; k++)
            if (c > t->count[k]) {
                for (int m = 2; m > k; m--) {
                    t->count[m] = t->count[m - 1];
                    strcpy(t->word[m], t->word[m - 1]);
                }
                t->count[k] = c;
                snprintf(t->word[k], sizeof t->word[k], "%s", w[i]);
                break;
            }
    }
    free(w);
}

static const char *write_querylog(void)
{
    static char path[1100];
    snprintf(path, sizeof path, "%s/q.txt", tdm_test_tmpdir("gen_q"));
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    /* apple 4, banana 3, Cherry 2 (lowercased), baa 1 (the first synthetic
     * name, which the generator must then skip), a 70-letter run (dropped) */
    fputs("1:apple banana\n2:APPLE cherry-banana\n3:apple banana cherry\n4:apple baa\n"
          "5:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n", f);
    fclose(f);
    return path;
}

static void collection_deterministic(void **state)
{
    (void)state;
    tdm_gen_options o = {.ndocs = 300, .seed = 9};
    size_t n1, n2, n3;
    char *a = generate(&o, &n1), *b = generate(&o, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    o.seed = 10;
    char *c = generate(&o, &n3);
    assert_true(n1 != n3 || memcmp(a, c, n1));
    assert_memory_equal(a, "doc0\t", 5);
    free(a);
    free(b);
    free(c);
    o.format = TDM_GEN_JSONL;
    o.ndocs = 2;
    a = generate(&o, &n1);
    assert_memory_equal(a, "{\"id\": \"doc0\", \"contents\": \"", 28);
    size_t nl = strcspn(a, "\n"); /* an index: GCC 12 saw a pointer into a as dangling */
    assert_true(a[nl] == '\n' && nl >= 2);
    assert_memory_equal(a + nl - 2, "\"}", 2);
    free(a);
    tdm_err err = {0};
    o.ndocs = 0;
    assert_int_equal(tdm_gen_collection(&o, stdout, "x", &err), TDM_ERR_INVALID_ARG);
    o.ndocs = 1;
    o.vocab_from = "/nonexistent/q.txt";
    assert_int_equal(tdm_gen_collection(&o, stdout, "x", &err), TDM_ERR_NOT_FOUND);
    tdm_err_clear(&err);
}

/* Option values out of range, nan or inf are refused before anything is
 * written; they used to read out of bounds (a mean length of 1e31 made the
 * default vocabulary 0), hang (zipf inf) or become defaults (nan). */
static void collection_options_checked(void **state)
{
    (void)state;
    const double bad[] = {NAN, INFINITY, -INFINITY, -1};
    tdm_err err = {0};
    char buf[64];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    assert_non_null(f);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tdm_gen_options o = {.ndocs = 1, .zipf_s = bad[i]};
        assert_int_equal(tdm_gen_collection(&o, f, "x", &err), TDM_ERR_INVALID_ARG);
        o = (tdm_gen_options){.ndocs = 1, .mean_len = bad[i]};
        assert_int_equal(tdm_gen_collection(&o, f, "x", &err), TDM_ERR_INVALID_ARG);
        o = (tdm_gen_options){.ndocs = 1, .sigma = bad[i]};
        assert_int_equal(tdm_gen_collection(&o, f, "x", &err), TDM_ERR_INVALID_ARG);
    }
    tdm_gen_options o = {.ndocs = 1, .mean_len = 1e31};
    assert_int_equal(tdm_gen_collection(&o, f, "x", &err), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_err_msg(&err), "mean length"));
    o = (tdm_gen_options){.ndocs = 1, .zipf_s = TDM_GEN_MAX_ZIPF * 1.01};
    assert_int_equal(tdm_gen_collection(&o, f, "x", &err), TDM_ERR_INVALID_ARG);
    o = (tdm_gen_options){.ndocs = 1, .vocab = TDM_GEN_MAX_VOCAB + 1};
    assert_int_equal(tdm_gen_collection(&o, f, "x", &err), TDM_ERR_LIMIT);
    assert_int_equal(ftell(f), 0); /* nothing written */
    fclose(f);
    tdm_err_clear(&err);
    /* The default vocabulary stays in range however large the collection. */
    assert_int_equal(tdm_gen_default_vocab(UINT64_MAX, TDM_GEN_MAX_MEAN_LEN), TDM_GEN_MAX_VOCAB);
    assert_int_equal(tdm_gen_default_vocab(1, 1e31), TDM_GEN_MAX_VOCAB);
    assert_int_equal(tdm_gen_default_vocab(1, 1), 1000);
    /* The edges of the ranges generate (no hang at a large exponent). */
    const double zipf[] = {0.001, 1, TDM_GEN_MAX_ZIPF};
    for (size_t i = 0; i < 4; i++) {
        tdm_gen_options e = {.ndocs = 20, .zipf_s = zipf[i % 3], .sigma = TDM_GEN_MAX_SIGMA,
                             .mean_len = 0.001};
        if (i == 3) /* one document of a million tokens */
            e = (tdm_gen_options){.ndocs = 1, .sigma = 0.001, .mean_len = TDM_GEN_MAX_MEAN_LEN};
        size_t n;
        char *text = generate(&e, &n);
        assert_true(n > 0);
        free(text);
    }
}

static void collection_shape(void **state)
{
    (void)state;
    tdm_gen_options o = {.ndocs = tdm_test_small() ? 500 : 4000, .seed = 1, .vocab = 50000};
    size_t n;
    char *text = generate(&o, &n);
    tally t;
    count_tokens(text, &t);
    assert_int_equal(t.docs, o.ndocs);
    double mean = (double)t.tokens / (double)t.docs;
    assert_true(mean > 225 && mean < 275);
    /* Zipf s = 1: rank 1 is twice rank 2 and three times rank 3 */
    double r12 = (double)t.count[0] / (double)t.count[1];
    double r13 = (double)t.count[0] / (double)t.count[2];
    assert_true(r12 > 1.8 && r12 < 2.2);
    assert_true(r13 > 2.7 && r13 < 3.3);
    /* P(rank 1) = 1 / H(50000) ~ 0.0889 */
    double p1 = (double)t.count[0] / (double)t.tokens;
    assert_true(p1 > 0.080 && p1 < 0.098);
    free(text);
}

static void collection_names_follow_query_log(void **state)
{
    (void)state;
    const char *q = write_querylog();
    char **words;
    size_t nw;
    uint64_t *counts;
    tdm_err err = {0};
    assert_int_equal(tdm_gen_query_words(q, &words, &nw, &counts, &err), TDM_OK);
    assert_int_equal(nw, 4);
    assert_string_equal(words[0], "apple");
    assert_string_equal(words[1], "banana");
    assert_string_equal(words[2], "cherry");
    assert_string_equal(words[3], "baa");
    assert_int_equal(counts[0], 4);
    free(words);
    free(counts);
    tdm_gen_options o = {.ndocs = 2000, .seed = 2, .vocab = 1000, .vocab_from = q};
    size_t n;
    char *text = generate(&o, &n);
    tally t;
    count_tokens(text, &t);
    assert_string_equal(t.word[0], "apple");
    assert_string_equal(t.word[1], "banana");
    assert_string_equal(t.word[2], "cherry");
    free(text);
}

static void real_query_log_ranks(void **state)
{
    (void)state;
    char **words;
    size_t nw;
    uint64_t *counts;
    tdm_err err = {0};
    const char *q = tdm_test_data("queries/terabyte05-efficiency.txt");
    if (tdm_gen_query_words(q, &words, &nw, &counts, &err) != TDM_OK)
        fail_msg("%s", tdm_err_msg(&err));
    assert_true(nw > 10000);
    for (size_t i = 1; i < nw; i++) {
        assert_true(counts[i] <= counts[i - 1]);
        if (counts[i] == counts[i - 1])
            assert_true(strcmp(words[i - 1], words[i]) < 0);
    }
    free(words);
    free(counts);
}

/* A generated collection builds, and its most frequent list is the query
 * log's most frequent word. */
static void collection_builds(void **state)
{
    (void)state;
    const char *q = write_querylog();
    char qpath[1100], coll[1100], idx[1100];
    snprintf(qpath, sizeof qpath, "%s", q);
    const char *dir = tdm_test_tmpdir("gen_build");
    snprintf(coll, sizeof coll, "%s/c.txt", dir);
    snprintf(idx, sizeof idx, "%s/c.tdm", dir);
    FILE *f = fopen(coll, "w");
    tdm_gen_options o = {.ndocs = 500, .seed = 4, .vocab_from = qpath};
    tdm_err err = {0};
    assert_int_equal(tdm_gen_collection(&o, f, coll, &err), TDM_OK);
    fclose(f);
    tdm_index_build_options b;
    tdm_index_build_options_init(&b);
    b.stemmer = "none";
    b.format = TDM_BUILD_LINES;
    const char *inputs[] = {coll};
    if (tdm_index_build(inputs, 1, idx, &b) != TDM_OK)
        fail_msg("build: %s", tdm_last_error());
    tdm_ireader *r;
    assert_int_equal(tdm_ireader_open(idx, &r, &err), TDM_OK);
    assert_int_equal(tdm_ireader_info_get(r)->ndocs, 500);
    uint64_t best = 0, bestcf = 0;
    for (uint64_t i = 0; i < tdm_ireader_info_get(r)->nterms; i++) {
        uint64_t cf;
        tdm_ireader_term(r, i, NULL, NULL, &cf);
        if (cf > bestcf) {
            bestcf = cf;
            best = i;
        }
    }
    size_t len;
    const char *term = tdm_ireader_term(r, best, &len, NULL, NULL);
    assert_int_equal(len, 5);
    assert_memory_equal(term, "apple", 5);
    tdm_ireader_close(r);
}

/* Whether the file at path holds exactly `want` (n bytes). */
static void assert_file_is(const char *path, const void *want, size_t n)
{
    size_t got_n;
    unsigned char *got = tdm_read_file(path, &got_n);
    assert_non_null(got);
    assert_int_equal(got_n, n);
    assert_memory_equal(got, want, n);
    free(got);
}

/* The library's own writers refuse to replace an input, a device or a FIFO
 * (the CLI checks first, so only this test reaches the library's guard). */
static void library_outputs_guarded(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("gen_guard");
    char coll[1100], stop[1100], idx[1100], ciff[1100], fifo[1100], pisa[1100];
    snprintf(coll, sizeof coll, "%s/c.txt", dir);
    snprintf(stop, sizeof stop, "%s/stop.txt", dir);
    snprintf(idx, sizeof idx, "%s/c.tdm", dir);
    snprintf(ciff, sizeof ciff, "%s/c.ciff", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(pisa, sizeof pisa, "%s/p", dir);
    size_t n, sn;
    tdm_gen_options g = {.ndocs = 50, .seed = 2};
    char *text = generate(&g, &n);
    FILE *f = fopen(coll, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    f = fopen(stop, "wb");
    assert_non_null(f);
    fputs("the\n", f);
    assert_int_equal(fclose(f), 0);
    char *stoptext = (char *)tdm_read_file(stop, &sn);
    assert_int_equal(mkfifo(fifo, 0644), 0);

    tdm_index_build_options b;
    tdm_index_build_options_init(&b);
    b.format = TDM_BUILD_LINES;
    const char *in[] = {coll};
    assert_int_equal(tdm_index_build(in, 1, coll, &b), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "same file as input"));
    assert_file_is(coll, text, n);
    b.stopwords = stop;
    assert_int_equal(tdm_index_build(in, 1, stop, &b), TDM_ERR_INVALID_ARG);
    assert_file_is(stop, stoptext, sn);
    assert_int_equal(tdm_index_build(in, 1, fifo, &b), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "FIFO"));
    assert_int_equal(tdm_index_build(in, 1, "/dev/null", &b), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_index_build(in, 1, dir, &b), TDM_ERR_INVALID_ARG);
    if (tdm_index_build(in, 1, idx, &b) != TDM_OK)
        fail_msg("build: %s", tdm_last_error());

    /* Export: not over the index it reads, not over a FIFO. */
    tdm_ireader *r;
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_open(idx, &r, &err), TDM_OK);
    assert_int_equal(tdm_ciff_export(r, idx, NULL, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_ciff_export(r, fifo, NULL, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_ciff_export(r, ciff, NULL, &err), TDM_OK);
    assert_int_equal(tdm_pisa_export(r, pisa, &err), TDM_OK);
    tdm_ireader_close(r);
    tdm_err_clear(&err);

    /* Import: not over the CIFF file or a file of the PISA collection. */
    size_t cn, pn;
    unsigned char *ciffbytes = tdm_read_file(ciff, &cn);
    char docs[1200];
    snprintf(docs, sizeof docs, "%s.docs", pisa);
    unsigned char *docsbytes = tdm_read_file(docs, &pn);
    tdm_index_import_options io;
    tdm_index_import_options_init(&io);
    assert_int_equal(tdm_index_import(ciff, ciff, &io), TDM_ERR_INVALID_ARG);
    assert_file_is(ciff, ciffbytes, cn);
    io.format = TDM_IMPORT_PISA;
    assert_int_equal(tdm_index_import(pisa, docs, &io), TDM_ERR_INVALID_ARG);
    assert_file_is(docs, docsbytes, pn);
    assert_int_equal(tdm_index_import(pisa, fifo, &io), TDM_ERR_INVALID_ARG);
    free(ciffbytes);
    free(docsbytes);
    free(stoptext);
    free(text);
}

/* ---- the CLI (TANDEM_CLI) */

static int run_cli(const char *args)
{
    const char *cli = getenv("TANDEM_CLI");
    if (!cli || !*cli)
        skip();
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>/dev/null", cli, args);
    return system(cmd);
}

static void cli_gen_lists(void **state)
{
    (void)state;
    char dir[1024], args[2048], path[1100];
    snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("gen_cli"));
    snprintf(path, sizeof path, "%s/l.bin", dir);
    snprintf(args, sizeof args, "gen lists --dist clustered --n 2^12 --universe 1M --seed 3 -o '%s'",
             path);
    assert_int_equal(run_cli(args), 0);
    size_t n;
    uint8_t *b = tdm_read_file(path, &n);
    assert_non_null(b);
    assert_int_equal(n, 4 + 4 * 4096);
    uint32_t want[4096];
    assert_int_equal(tdm_listgen_clustered(want, 4096, 1000000, 3), TDM_OK);
    assert_int_equal(b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24, 4096);
    for (size_t i = 0; i < 4096; i++) {
        const uint8_t *p = b + 4 + 4 * i;
        assert_int_equal(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24, want[i]);
    }
    free(b);
    snprintf(args, sizeof args, "gen lists --dist uniform --n 5 --universe 5 --format text -o '%s'",
             path);
    assert_int_equal(run_cli(args), 0);
    b = tdm_read_file(path, &n);
    assert_non_null(b);
    assert_int_equal(n, 10);
    assert_memory_equal(b, "0\n1\n2\n3\n4\n", 10);
    free(b);
    snprintf(args, sizeof args, "gen lists --dist zipf --n 5 --universe 5 -o '%s'", path);
    assert_int_not_equal(run_cli(args), 0);
    snprintf(args, sizeof args, "gen lists --dist uniform --n 6 --universe 5 -o '%s'", path);
    assert_int_not_equal(run_cli(args), 0);
    b = tdm_read_file(path, &n); /* the failed runs left the file as it was */
    assert_non_null(b);
    assert_memory_equal(b, "0\n1\n2\n3\n4\n", 10);
    free(b);
}

static void cli_gen_collection(void **state)
{
    (void)state;
    char dir[1024], args[2048], path[1100];
    snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("gen_cli2"));
    snprintf(path, sizeof path, "%s/c.jsonl", dir);
    snprintf(args, sizeof args, "gen collection --docs 50 --seed 8 --format jsonl --quiet -o '%s'",
             path);
    assert_int_equal(run_cli(args), 0);
    size_t n, m;
    char *got = (char *)tdm_read_file(path, &n);
    tdm_gen_options o = {.ndocs = 50, .seed = 8, .format = TDM_GEN_JSONL};
    char *want = generate(&o, &m);
    assert_non_null(got);
    assert_int_equal(n, m);
    assert_memory_equal(got, want, n);
    free(got);
    free(want);
    snprintf(args, sizeof args, "gen collection --docs 0 -o '%s'", path);
    assert_int_not_equal(run_cli(args), 0);
    snprintf(args, sizeof args, "gen collection --docs 5 --vocab-from /nonexistent -o '%s'", path);
    assert_int_not_equal(run_cli(args), 0);
    got = (char *)tdm_read_file(path, &n); /* the failed runs left the file as it was */
    assert_non_null(got);
    assert_int_equal(n, m);
    free(got);
}

/* ---- learned sparse vectors */

/* The bytes of a gzip (or plain) file, through zlib; *n its length. */
static char *read_gz(const char *path, size_t *n)
{
    gzFile f = gzopen(path, "rb");
    assert_non_null(f);
    tdm_buf b = {0};
    char chunk[65536];
    int got;
    while ((got = gzread(f, chunk, sizeof chunk)) > 0)
        assert_int_equal(tdm_buf_append(&b, chunk, (size_t)got), 0);
    assert_int_equal(got, 0);
    gzclose(f);
    *n = b.len;
    return b.p;
}

/* Seeded and reproducible: the same bytes for any thread count, and the
 * bytes of seed 7 are these for good (the collection of a seed is a
 * benchmark's input). */
static void vector_deterministic(void **state)
{
    (void)state;
    tdm_gen_options o = {.ndocs = 2, .seed = 7, .vocab = 40, .mean_len = 6,
                         .format = TDM_GEN_VECTORS, .threads = 1};
    size_t n;
    char *a = generate(&o, &n);
    const char *want =
        "{\"id\": \"doc0\", \"contents\": \"\", \"vector\": {\"bbf\": 77, \"baf\": 43, "
        "\"bao\": 27, \"bag\": 43, \"bae\": 28, \"bay\": 32}}\n"
        "{\"id\": \"doc1\", \"contents\": \"\", \"vector\": {\"bab\": 9, \"bay\": 40, "
        "\"baw\": 125, \"bai\": 34, \"bak\": 27}}\n";
    assert_int_equal(n, strlen(want));
    assert_memory_equal(a, want, n);
    free(a);
    o = (tdm_gen_options){.ndocs = 3000, .seed = 5, .format = TDM_GEN_VECTORS, .threads = 1};
    size_t n1, n3;
    a = generate(&o, &n1);
    o.threads = 3;
    char *b = generate(&o, &n3);
    assert_int_equal(n1, n3);
    assert_memory_equal(a, b, n1);
    free(b);
    /* gzip: members a block each, the same bytes inflated */
    char path[1100];
    snprintf(path, sizeof path, "%s/v.jsonl.gz", tdm_test_tmpdir("gen_vec"));
    FILE *f = fopen(path, "wb");
    o.gzip = 1;
    tdm_err err = {0};
    assert_int_equal(tdm_gen_collection(&o, f, path, &err), TDM_OK);
    long zbytes = ftell(f);
    fclose(f);
    size_t nz;
    char *z = read_gz(path, &nz);
    assert_int_equal(nz, n1);
    assert_memory_equal(z, a, n1);
    assert_true(zbytes > 0 && (size_t)zbytes < n1 / 2);
    free(z);
    free(a);
}

/* Every document: distinct terms, impacts in 1..255; about 100 terms a
 * document and most impacts small. */
static void vector_shape(void **state)
{
    (void)state;
    tdm_gen_options o = {.ndocs = tdm_test_small() ? 300 : 2000, .seed = 2,
                         .format = TDM_GEN_VECTORS};
    size_t n;
    char *text = generate(&o, &n);
    uint64_t docs = 0, postings = 0, small = 0, cap = 0;
    char *save;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *v = strstr(line, "\"vector\": {");
        assert_non_null(v);
        v += 11;
        char seen[64][16];
        size_t ns = 0;
        for (char *p = v; *p == '"';) {
            char *q = strchr(p + 1, '"');
            assert_non_null(q);
            size_t len = (size_t)(q - p - 1);
            assert_true(len > 0 && len < 16);
            for (size_t i = 0; i < ns && i < 64; i++) /* distinct (the first 64 checked) */
                assert_false(strlen(seen[i]) == len && !memcmp(seen[i], p + 1, len));
            if (ns < 64) {
                memcpy(seen[ns], p + 1, len);
                seen[ns][len] = 0;
            }
            ns++;
            assert_memory_equal(q, "\": ", 3);
            long x = strtol(q + 3, &p, 10);
            assert_true(x >= 1 && x <= TDM_GEN_IMPACT_MAX);
            small += x <= 40;
            cap += x == TDM_GEN_IMPACT_MAX;
            postings++;
            if (*p == ',')
                p += 2;
        }
        assert_true(ns >= 1);
        docs++;
    }
    assert_int_equal(docs, o.ndocs);
    double mean = (double)postings / (double)docs;
    assert_true(mean > 90 && mean < 110);
    assert_true(small > postings / 2);      /* median about 35 */
    assert_true(cap > 0 && cap < postings / 100);
    free(text);
}

static const char *write_token_log(void)
{
    static char path[1100];
    snprintf(path, sizeof path, "%s/q.tsv.gz", tdm_test_tmpdir("gen_tok"));
    gzFile f = gzopen(path, "wb");
    assert_non_null(f);
    /* cat in 3 queries; ##ing 2 (repeated: a weight, counted once a query);
     * "x and dog 1 each, ties in byte order; a JSON line skipped */
    gzputs(f, "1\t##ing ##ing ##ing cat \"x\n2:cat  dog ##ing\r\n"
              "{\"id\": \"3\", \"terms\": {\"zz\": 1}}\n4\tcat cat\n5\t\n");
    gzclose(f);
    return path;
}

static void vector_names_follow_query_tokens(void **state)
{
    (void)state;
    const char *q = write_token_log();
    char **words;
    size_t nw;
    uint64_t *counts;
    tdm_err err = {0};
    assert_int_equal(tdm_gen_query_tokens(q, &words, &nw, &counts, &err), TDM_OK);
    assert_int_equal(nw, 4);
    assert_string_equal(words[0], "cat");
    assert_string_equal(words[1], "##ing");
    assert_string_equal(words[2], "\"x");
    assert_string_equal(words[3], "dog");
    assert_int_equal(counts[0], 3);
    assert_int_equal(counts[1], 2);
    free(words);
    free(counts);
    assert_int_equal(tdm_gen_query_tokens("/nonexistent/q.tsv", &words, &nw, NULL, &err),
                     TDM_ERR_NOT_FOUND);
    tdm_err_clear(&err);
}

/* A generated vector collection (gzip, names from a token log) builds as an
 * impact index whose longest list is the log's most frequent token, and its
 * escaped name ("x) is a term. */
static void vector_collection_builds(void **state)
{
    (void)state;
    char q[1100], coll[1100], idx[1100];
    snprintf(q, sizeof q, "%s", write_token_log());
    const char *dir = tdm_test_tmpdir("gen_vbuild");
    snprintf(coll, sizeof coll, "%s/c.jsonl.gz", dir);
    snprintf(idx, sizeof idx, "%s/c.tdm", dir);
    FILE *f = fopen(coll, "wb");
    tdm_gen_options o = {.ndocs = 700, .seed = 4, .vocab = 2000, .vocab_from = q,
                         .format = TDM_GEN_VECTORS, .gzip = 1};
    tdm_err err = {0};
    assert_int_equal(tdm_gen_collection(&o, f, coll, &err), TDM_OK);
    fclose(f);
    tdm_index_build_options b;
    tdm_index_build_options_init(&b);
    b.format = TDM_BUILD_JSON_VECTOR;
    const char *inputs[] = {coll};
    if (tdm_index_build(inputs, 1, idx, &b) != TDM_OK)
        fail_msg("build: %s", tdm_last_error());
    tdm_ireader *r;
    assert_int_equal(tdm_ireader_open(idx, &r, &err), TDM_OK);
    const tdm_ireader_info *info = tdm_ireader_info_get(r);
    assert_int_equal(info->ndocs, 700);
    assert_int_equal(info->impact, 1);
    uint64_t best = 0, bestdf = 0;
    int quote = 0;
    for (uint64_t i = 0; i < info->nterms; i++) {
        uint32_t df;
        size_t len;
        const char *t = tdm_ireader_term(r, i, &len, &df, NULL);
        quote |= len == 2 && !memcmp(t, "\"x", 2);
        if (df > bestdf) {
            bestdf = df;
            best = i;
        }
    }
    assert_true(quote);
    size_t len;
    const char *term = tdm_ireader_term(r, best, &len, NULL, NULL);
    assert_int_equal(len, 3);
    assert_memory_equal(term, "cat", 3);
    tdm_ireader_close(r);
}

static void cli_gen_vectors(void **state)
{
    (void)state;
    char args[2048], path[1100];
    snprintf(path, sizeof path, "%s/v.jsonl.gz", tdm_test_tmpdir("gen_cli3"));
    snprintf(args, sizeof args, "gen collection --impact --docs 40 --seed 8 --threads 2 --quiet -o '%s'",
             path);
    assert_int_equal(run_cli(args), 0);
    size_t n, m;
    char *got = read_gz(path, &n); /* gzip by the name */
    tdm_gen_options o = {.ndocs = 40, .seed = 8, .format = TDM_GEN_VECTORS};
    char *want = generate(&o, &m);
    assert_int_equal(n, m);
    assert_memory_equal(got, want, n);
    free(got);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lists_valid_and_deterministic),
        cmocka_unit_test(lists_api_edges),
        cmocka_unit_test(lists_shape),
        cmocka_unit_test(collection_deterministic),
        cmocka_unit_test(collection_options_checked),
        cmocka_unit_test(collection_shape),
        cmocka_unit_test(collection_names_follow_query_log),
        cmocka_unit_test(real_query_log_ranks),
        cmocka_unit_test(collection_builds),
        cmocka_unit_test(library_outputs_guarded),
        cmocka_unit_test(cli_gen_lists),
        cmocka_unit_test(cli_gen_collection),
        cmocka_unit_test(vector_deterministic),
        cmocka_unit_test(vector_shape),
        cmocka_unit_test(vector_names_follow_query_tokens),
        cmocka_unit_test(vector_collection_builds),
        cmocka_unit_test(cli_gen_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
