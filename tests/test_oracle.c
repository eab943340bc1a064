/* The oracle, queries and scoring: the oracle's top k against a brute-force
 * double loop over the raw collection (not through the reader) on random
 * indexes, in OR and AND, double and device-exact float, BM25 with several
 * parameters and impact scores; k = 1, 10, 1000, 10000, k above the number of
 * matches; repeated, unknown and stopword terms; ties; limits; the float
 * formula as score.h writes it; the tokenizer pool. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/bm25.h"
#include "index/tokpool.h"
#include "query/bounds.h"
#include "harness/oracle.h"
#include "randcoll.h"
#include "testutil.h"

/* ---- the brute-force reference, over the randcoll arrays */

typedef struct bterm {
    uint64_t list;      /* randcoll list index = lexicon id */
    double w;
} bterm;

typedef struct bhit {
    uint32_t docid;
    double score;
} bhit;

static int bhit_cmp(const void *a, const void *b)
{
    const bhit *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return x->docid < y->docid ? -1 : x->docid > y->docid;
}

static const uint32_t *find_tf(const randcoll *c, uint64_t l, uint32_t d)
{
    size_t lo = 0, hi = c->n[l];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->docids[l][mid] < d)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n[l] && c->docids[l][lo] == d ? &c->freqs[l][lo] : NULL;
}

static double avgdl_of(const randcoll *c)
{
    uint64_t tot = 0;
    for (uint32_t d = 0; d < c->ndocs; d++)
        tot += c->doclens[d];
    return c->ndocs ? (double)tot / c->ndocs : 0;
}

/* The float formula exactly as score.h's comment states it. */
static float formula_f(const tdm_score_params *p, double avgdl, uint64_t n, uint32_t df,
                       double w, uint32_t tf, uint32_t dl)
{
    float f = (float)tf;
    if (p->kind == TDM_SCORING_IMPACT)
        return (float)w * f;
    float c0 = (float)(avgdl > 0 ? p->k1 * (1 - p->b) : p->k1);
    float c1 = (float)(avgdl > 0 ? p->k1 * p->b / avgdl : 0);
    float qw = (float)(w * log(1.0 + ((double)n - df + 0.5) / (df + 0.5)) * (p->k1 + 1));
    float k = c0 + c1 * (float)dl;
    float num = qw * f, den = f + k;
    return num / den;
}

/* The double form as score.h states it: tdm_bm25's expression with idf
 * replaced by w * idf (at w = 1, tdm_bm25 itself: score_formulas checks). */
static double formula_d(const tdm_score_params *p, double avgdl, uint64_t n, uint32_t df,
                        double w, uint32_t tf, uint32_t dl)
{
    double wi = w * log(1.0 + ((double)n - df + 0.5) / (df + 0.5));
    double norm = avgdl > 0 ? 1.0 - p->b + p->b * dl / avgdl : 1.0;
    return wi * tf * (p->k1 + 1.0) / (tf + p->k1 * norm);
}

/* Every document scored by a double loop; all matches sorted; *nm = matches. */
static bhit *brute(const randcoll *c, const bterm *t, size_t nt, const tdm_score_params *p,
                   int match, int precision, size_t *nm)
{
    bhit *h = malloc((c->ndocs + 1) * sizeof *h);
    double avgdl = avgdl_of(c);
    size_t m = 0;
    for (uint32_t d = 0; d < c->ndocs; d++) {
        double sd = 0;
        float sf = 0;
        size_t held = 0;
        for (size_t i = 0; i < nt; i++) {
            const uint32_t *tf = find_tf(c, t[i].list, d);
            if (!tf)
                continue;
            held++;
            uint32_t df = (uint32_t)c->n[t[i].list];
            if (p->kind == TDM_SCORING_IMPACT)
                sd += t[i].w * *tf;
            else
                sd += formula_d(p, avgdl, c->ndocs, df, t[i].w, *tf, c->doclens[d]);
            sf = sf + formula_f(p, avgdl, c->ndocs, df, t[i].w, *tf, c->doclens[d]);
        }
        if (held && (match == TDM_MATCH_OR || held == nt))
            h[m++] = (bhit){d, precision == TDM_ORACLE_FLOAT ? (double)sf : sd};
    }
    qsort(h, m, sizeof *h, bhit_cmp);
    *nm = m;
    return h;
}

/* ---- helpers */

static const char *write_index(randcoll *c, const char *dir, const char *codec)
{
    tdm_coll_source src;
    randcoll_source(c, &src);
    tdm_iwriter_options o = {.codec = codec};
    tdm_err err = {0};
    char *path = path_in(dir, "r.tdm");
    if (tdm_collection_write(&src, path, &o, &err) != TDM_OK)
        fail_msg("write %s: %s", path, tdm_err_msg(&err));
    tdm_err_clear(&err);
    return path;
}

static void add_term_ok(tdm_query *q, const tdm_ireader *r, const char *s, double w)
{
    tdm_err err = {0};
    if (tdm_query_add_term(q, r, s, strlen(s), w, &err) != TDM_OK)
        fail_msg("add %s: %s", s, tdm_err_msg(&err));
    tdm_err_clear(&err);
}

/* Runs the oracle and compares with the brute force: same docids in the same
 * order; double scores within 1e-12 relative, float scores bit for bit. */
static void check_one(const randcoll *c, tdm_oracle *o, const tdm_query *q, const bterm *bt,
                      size_t nbt, const tdm_oracle_request *req)
{
    size_t nm = 0, n = 0;
    uint64_t matched = 0;
    bhit *want = brute(c, bt, nbt, &req->score, req->match, req->precision, &nm);
    tdm_hit *got = malloc(req->k * sizeof *got);
    tdm_err err = {0};
    if (tdm_oracle_search(o, q, req, got, &n, &matched, &err) != TDM_OK)
        fail_msg("oracle: %s", tdm_err_msg(&err));
    assert_int_equal(matched, nm);
    assert_int_equal(n, nm < req->k ? nm : req->k);
    for (size_t i = 0; i < n; i++) {
        if (got[i].docid != want[i].docid)
            fail_msg("k=%u match=%d prec=%d rank %zu: docid %u, want %u (scores %.17g / %.17g)",
                     req->k, req->match, req->precision, i, got[i].docid, want[i].docid,
                     got[i].score, want[i].score);
        if (req->precision == TDM_ORACLE_FLOAT)
            assert_true(got[i].score == want[i].score);
        else if (fabs(got[i].score - want[i].score) > 1e-12 * fabs(want[i].score))
            fail_msg("rank %zu: score %.17g, want %.17g", i, got[i].score, want[i].score);
    }
    free(want);
    free(got);
    tdm_err_clear(&err);
}

/* A random query over c's lexicon: terms by string, some repeated, some
 * unknown, random weights (or 1). Fills bt with the distinct known terms and
 * their summed weights, in ascending id. */
static size_t random_query(tdm_rng *r, const randcoll *c, const tdm_ireader *ir, tdm_query *q,
                           bterm *bt, int weighted)
{
    size_t want = tdm_rng_range(r, 1, 8), nbt = 0;
    tdm_query_reset(q);
    for (size_t i = 0; i < want; i++) {
        if (tdm_rng_range(r, 0, 9) == 0) {
            add_term_ok(q, ir, "no-such-term", 1.0);
            continue;
        }
        uint64_t l = (nbt > 0 && tdm_rng_range(r, 0, 4) == 0) ? bt[tdm_rng_range(r, 0, (uint32_t)nbt - 1)].list
                                               : tdm_rng_range(r, 0, (uint32_t)c->nlists - 1);
        double w = weighted ? tdm_rng_range(r, 1, 1000) / 64.0 : 1.0;
        add_term_ok(q, ir, c->terms[l], w);
        size_t j = 0;
        while (j < nbt && bt[j].list != l)
            j++;
        if (j == nbt)
            bt[nbt++] = (bterm){l, 0};
        bt[j].w += w;
    }
    tdm_query_finish(q);
    /* ascending id: the oracle's summation order, which the brute force follows */
    for (size_t i = 1; i < nbt; i++)
        for (size_t j = i; j > 0 && bt[j].list < bt[j - 1].list; j--) {
            bterm x = bt[j];
            bt[j] = bt[j - 1];
            bt[j - 1] = x;
        }
    assert_int_equal(q->nterms, nbt);
    return nbt;
}

static const tdm_score_params params[] = {
    {TDM_SCORING_BM25, 1.2, 0.75}, {TDM_SCORING_BM25, 0.9, 0.4}, {TDM_SCORING_BM25, 1.2, 0},
    {TDM_SCORING_BM25, 0, 0.75},   {TDM_SCORING_BM25, 3, 1},     {TDM_SCORING_IMPACT, 0, 0},
};

static void random_vs_brute(void **state)
{
    (void)state;
    static const char *codecs[] = {"bp128", "vbyte128", "pef", "newpfd64"};
    static const uint32_t ks[] = {1, 10, 1000, 10000};
    const char *dir = tdm_test_tmpdir("oracle_rand");
    int small = tdm_test_small();
    for (uint64_t seed = 1; seed <= 8; seed++) {
        randcoll c;
        uint32_t ndocs = seed == 1 ? 1 : seed == 2 ? 3 : (uint32_t)(small ? 200 : 400 * seed);
        randcoll_init(&c, seed, ndocs, 20 + 5 * seed);
        tdm_ireader *ir = open_index(write_index(&c, dir, codecs[seed % 4]));
        tdm_oracle *o;
        tdm_err err = {0};
        assert_int_equal(tdm_oracle_open(ir, &o, &err), TDM_OK);
        tdm_rng r;
        tdm_rng_seed(&r, seed * 77);
        tdm_query q;
        tdm_query_init(&q);
        bterm bt[16];
        for (int iter = 0; iter < (small ? 6 : 24); iter++) {
            const tdm_score_params *p = &params[iter % 6];
            size_t nbt = random_query(&r, &c, ir, &q, bt, iter % 3 == 0);
            for (int match = 0; match < 2; match++)
                for (int prec = 0; prec < 2; prec++) {
                    tdm_oracle_request req = {ks[(iter + match) % 4], match, prec, *p};
                    check_one(&c, o, &q, bt, nbt, &req);
                }
        }
        tdm_query_free(&q);
        tdm_oracle_close(o);
        tdm_ireader_close(ir);
        randcoll_free(&c);
    }
}

/* The oracle's accumulators cover a window of docids at a time: on an index
 * of several windows (documents past 2 * 32768) it is still the brute
 * force's answer, and the top k of every k <= K is the prefix of the top K
 * (what `tandem bench queries` relies on to run the oracle once a query, at
 * its largest k): OR and AND, both precisions, several scorings. */
static void windows_and_prefixes(void **state)
{
    (void)state;
    static const uint32_t ks[] = {1, 2, 7, 10, 100, 999};
    const char *dir = tdm_test_tmpdir("oracle_windows");
    int small = tdm_test_small();
    randcoll c;
    randcoll_init(&c, 42, small ? 70000 : 100000, 12);
    tdm_ireader *ir = open_index(write_index(&c, dir, "bp128"));
    tdm_oracle *o;
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(ir, &o, &err), TDM_OK);
    tdm_rng r;
    tdm_rng_seed(&r, 4242);
    tdm_query q;
    tdm_query_init(&q);
    bterm bt[16];
    tdm_hit *big = malloc(1000 * sizeof *big), *part = malloc(1000 * sizeof *part);
    for (int iter = 0; iter < (small ? 4 : 10); iter++) {
        const tdm_score_params *p = &params[iter % 6];
        size_t nbt = random_query(&r, &c, ir, &q, bt, iter % 2);
        for (int match = 0; match < 2; match++)
            for (int prec = 0; prec < 2; prec++) {
                tdm_oracle_request req = {1000, match, prec, *p};
                check_one(&c, o, &q, bt, nbt, &req);
                size_t nbig = 0, n = 0;
                uint64_t mbig = 0, m = 0;
                assert_int_equal(tdm_oracle_search(o, &q, &req, big, &nbig, &mbig, &err), TDM_OK);
                for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
                    req.k = ks[i];
                    assert_int_equal(tdm_oracle_search(o, &q, &req, part, &n, &m, &err), TDM_OK);
                    assert_int_equal(m, mbig);
                    assert_int_equal(n, nbig < ks[i] ? nbig : ks[i]);
                    for (size_t j = 0; j < n; j++) {
                        assert_int_equal(part[j].docid, big[j].docid);
                        assert_true(part[j].score == big[j].score);
                    }
                }
            }
    }
    free(big);
    free(part);
    tdm_query_free(&q);
    tdm_oracle_close(o);
    tdm_ireader_close(ir);
    randcoll_free(&c);
}

/* Float scores are within 1e-5 relative of the double ones, for the same
 * documents (the check every device's results get against the oracle). */
static void float_close_to_double(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("oracle_fd");
    randcoll c;
    randcoll_init(&c, 42, 3000, 30);
    tdm_ireader *ir = open_index(write_index(&c, dir, NULL));
    tdm_oracle *o;
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(ir, &o, &err), TDM_OK);
    tdm_query q;
    tdm_query_init(&q);
    tdm_rng r;
    tdm_rng_seed(&r, 5);
    bterm bt[16];
    tdm_hit *hf = malloc(10000 * sizeof *hf), *hd = malloc(10000 * sizeof *hd);
    for (int iter = 0; iter < 30; iter++) {
        random_query(&r, &c, ir, &q, bt, iter & 1);
        tdm_oracle_request rf = {10000, TDM_MATCH_OR, TDM_ORACLE_FLOAT, params[iter % 6]};
        tdm_oracle_request rd = rf;
        rd.precision = TDM_ORACLE_DOUBLE;
        size_t nf, nd;
        assert_int_equal(tdm_oracle_search(o, &q, &rf, hf, &nf, NULL, &err), TDM_OK);
        assert_int_equal(tdm_oracle_search(o, &q, &rd, hd, &nd, NULL, &err), TDM_OK);
        assert_int_equal(nf, nd);
        /* all matches are in both: compare by docid */
        double *byd = calloc(c.ndocs, sizeof *byd);
        for (size_t i = 0; i < nd; i++)
            byd[hd[i].docid] = hd[i].score;
        for (size_t i = 0; i < nf; i++) {
            double want = byd[hf[i].docid];
            assert_true(fabs(hf[i].score - want) <= 1e-5 * want);
        }
        free(byd);
    }
    free(hf);
    free(hd);
    tdm_query_free(&q);
    tdm_oracle_close(o);
    tdm_ireader_close(ir);
    randcoll_free(&c);
}

/* A hand-made collection: lists given as strings "term:doc/tf,doc/tf". */
static tdm_ireader *hand_index(const char *tag, uint32_t ndocs, const uint32_t *lens,
                               const char *const *lists, size_t nlists, const char *stemmer,
                               const char *const *stops, size_t nstops)
{
    const char *dir = tdm_test_tmpdir(tag);
    char *path = path_in(dir, "h.tdm");
    tdm_iwriter_options o = {.stemmer = stemmer, .stopwords = stops, .nstopwords = nstops};
    tdm_iwriter *w;
    tdm_err err = {0};
    assert_int_equal(tdm_iwriter_open(path, &o, &w, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_set_docs(w, ndocs, lens, NULL, &err), TDM_OK);
    for (size_t i = 0; i < nlists; i++) {
        char term[64];
        uint32_t d[256], f[256];
        size_t n = 0;
        const char *p = strchr(lists[i], ':');
        memcpy(term, lists[i], (size_t)(p - lists[i]));
        term[p - lists[i]] = 0;
        for (p++; *p; n++) {
            char *e;
            d[n] = (uint32_t)strtoul(p, &e, 10);
            f[n] = (uint32_t)strtoul(e + 1, &e, 10);
            p = *e ? e + 1 : e;
        }
        if (tdm_iwriter_add_list(w, term, strlen(term), d, f, n, &err) != TDM_OK)
            fail_msg("%s: %s", term, tdm_err_msg(&err));
    }
    assert_int_equal(tdm_iwriter_finish(w, &err), TDM_OK);
    tdm_iwriter_free(w);
    return open_index(path);
}

/* Equal scores come out by ascending docid, and k above the matches. */
static void ties_by_docid(void **state)
{
    (void)state;
    uint32_t lens[100];
    char list[2048] = "same:";
    size_t pos = strlen(list);
    for (uint32_t d = 0; d < 100; d++) {
        lens[d] = 10;
        pos += (size_t)snprintf(list + pos, sizeof list - pos, "%s%u/2", d ? "," : "", d);
    }
    const char *lists[] = {list, "zz:7/1,93/1"};
    tdm_ireader *ir = hand_index("oracle_ties", 100, lens, lists, 2, NULL, NULL, 0);
    tdm_oracle *o;
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(ir, &o, &err), TDM_OK);
    tdm_query q;
    tdm_query_init(&q);
    add_term_ok(&q, ir, "same", 1);
    tdm_query_finish(&q);
    tdm_hit h[200];
    size_t n;
    for (int prec = 0; prec < 2; prec++) {
        tdm_oracle_request req = {10, TDM_MATCH_OR, prec, tdm_score_params_default()};
        assert_int_equal(tdm_oracle_search(o, &q, &req, h, &n, NULL, &err), TDM_OK);
        assert_int_equal(n, 10);
        for (uint32_t i = 0; i < 10; i++) {
            assert_int_equal(h[i].docid, i);
            assert_true(h[i].score == h[0].score);
        }
        tdm_hit h10[10];
        memcpy(h10, h, sizeof h10);
        req.k = 150; /* more than the 100 matches */
        assert_int_equal(tdm_oracle_search(o, &q, &req, h, &n, NULL, &err), TDM_OK);
        assert_int_equal(n, 100);
        assert_int_equal(h[99].docid, 99);
        for (uint32_t i = 0; i < 10; i++) /* a tie across the cut: k = 10 is the prefix */
            assert_true(h[i].docid == h10[i].docid && h[i].score == h10[i].score);
    }
    /* "zz" lifts 7 and 93 above the tie, then the tie by docid; AND keeps those two */
    add_term_ok(&q, ir, "zz", 1);
    tdm_query_finish(&q);
    tdm_oracle_request req = {4, TDM_MATCH_OR, TDM_ORACLE_DOUBLE, tdm_score_params_default()};
    assert_int_equal(tdm_oracle_search(o, &q, &req, h, &n, NULL, &err), TDM_OK);
    assert_int_equal(n, 4);
    assert_int_equal(h[0].docid, 7);
    assert_int_equal(h[1].docid, 93);
    assert_int_equal(h[2].docid, 0);
    assert_int_equal(h[3].docid, 1);
    req.match = TDM_MATCH_AND;
    uint64_t matched;
    assert_int_equal(tdm_oracle_search(o, &q, &req, h, &n, &matched, &err), TDM_OK);
    assert_int_equal(n, 2);
    assert_int_equal(matched, 2);
    tdm_query_free(&q);
    tdm_oracle_close(o);
    tdm_ireader_close(ir);
}

/* Bad requests, empty and unknown-only queries, the term limit. */
static void requests_and_limits(void **state)
{
    (void)state;
    uint32_t lens[3] = {5, 6, 7};
    const char *lists[] = {"a:0/1,2/3", "b:1/1"};
    tdm_ireader *ir = hand_index("oracle_lim", 3, lens, lists, 2, NULL, NULL, 0);
    tdm_oracle *o;
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(ir, &o, &err), TDM_OK);
    tdm_query q;
    tdm_query_init(&q);
    add_term_ok(&q, ir, "a", 1);
    tdm_query_finish(&q);
    tdm_hit h[4];
    size_t n = 9;
    tdm_oracle_request req = {0, TDM_MATCH_OR, TDM_ORACLE_DOUBLE, tdm_score_params_default()};
    assert_int_equal(tdm_oracle_search(o, &q, &req, h, &n, NULL, &err), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_err_msg(&err), "k = 0"));
    assert_int_equal(n, 0);
    req.k = TDM_TOPK_MAX + 1;
    assert_int_equal(tdm_oracle_search(o, &q, &req, h, &n, NULL, &err), TDM_ERR_INVALID_ARG);
    req.k = 4;
    req.match = 7;
    assert_int_equal(tdm_oracle_search(o, &q, &req, h, &n, NULL, &err), TDM_ERR_INVALID_ARG);
    req.match = TDM_MATCH_OR;
    req.score.b = 1.5;
    assert_int_equal(tdm_oracle_search(o, &q, &req, h, &n, NULL, &err), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_err_msg(&err), "b = 1.5"));
    req.score.b = 0.75;
    req.score.k1 = -1;
    assert_int_equal(tdm_oracle_search(o, &q, &req, h, &n, NULL, &err), TDM_ERR_INVALID_ARG);
    req.score.k1 = NAN;
    assert_int_equal(tdm_oracle_search(o, &q, &req, h, &n, NULL, &err), TDM_ERR_INVALID_ARG);
    req.score.k1 = 1.2;
    /* empty, and only unknown terms: no results, no error */
    tdm_query_reset(&q);
    tdm_query_finish(&q);
    assert_int_equal(tdm_oracle_search(o, &q, &req, h, &n, NULL, &err), TDM_OK);
    assert_int_equal(n, 0);
    add_term_ok(&q, ir, "zzz", 1);
    add_term_ok(&q, ir, "", 1);
    tdm_query_finish(&q);
    assert_int_equal(q.unknown, 2);
    assert_int_equal(tdm_oracle_search(o, &q, &req, h, &n, NULL, &err), TDM_OK);
    assert_int_equal(n, 0);
    /* weights, ids */
    assert_int_equal(tdm_query_add_term(&q, ir, "a", 1, 0, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_query_add_term(&q, ir, "a", 1, -1, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_query_add_term(&q, ir, "a", 1, INFINITY, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_query_add_id(&q, ir, 2, 1, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_query_add_id(&q, ir, 1, 1, &err), TDM_OK);
    /* 1024 terms given is fine, the 1025th is not (unknown ones count too) */
    tdm_query_reset(&q);
    for (int i = 0; i < TDM_QUERY_MAX_TERMS; i++)
        assert_int_equal(tdm_query_add_term(&q, ir, i & 1 ? "a" : "x", 1, 1, &err), TDM_OK);
    assert_int_equal(tdm_query_add_term(&q, ir, "b", 1, 1, &err), TDM_ERR_LIMIT);
    assert_non_null(strstr(tdm_err_msg(&err), "1024"));
    tdm_query_finish(&q);
    assert_int_equal(q.nterms, 1);
    assert_int_equal(q.terms[0].count, 512);
    assert_true(q.terms[0].weight == 512);
    tdm_query_free(&q);
    tdm_oracle_close(o);
    tdm_ireader_close(ir);
    tdm_err_clear(&err);
}

/* Text through the index's tokenizer (stemmer and stopwords recorded in the
 * index): repeats count, stopwords and unknown words vanish, and a repeated
 * term scores exactly as its weight times one occurrence. */
static void text_queries(void **state)
{
    (void)state;
    uint32_t lens[4] = {10, 20, 30, 40};
    const char *lists[] = {"run:0/1,1/2,3/1", "walk:1/1,2/5"};
    const char *stops[] = {"the"};
    tdm_ireader *ir = hand_index("oracle_text", 4, lens, lists, 2, "english", stops, 1);
    tdm_tokpool *pool;
    tdm_err err = {0};
    assert_int_equal(tdm_tokpool_open(ir, &pool, &err), TDM_OK);
    tdm_tokenizer *t = tdm_tokpool_get(pool, &err);
    assert_non_null(t);
    tdm_query q, q2;
    tdm_query_init(&q);
    tdm_query_init(&q2);
    const char *text = "Running THE walks, running! unknownword";
    assert_int_equal(tdm_query_from_text(&q, ir, t, text, strlen(text), &err), TDM_OK);
    tdm_tokpool_put(pool, t);
    assert_int_equal(q.given, 4); /* running walks running unknownword; "the" stopped */
    assert_int_equal(q.unknown, 1);
    assert_int_equal(q.nterms, 2);
    assert_int_equal(q.terms[0].count, 2); /* run */
    assert_true(q.terms[0].weight == 2);
    assert_int_equal(q.terms[1].count, 1);
    /* the same as weights {run: 2, walk: 1}, bit for bit */
    add_term_ok(&q2, ir, "walk", 1);
    add_term_ok(&q2, ir, "run", 2);
    tdm_query_finish(&q2);
    tdm_oracle *o;
    assert_int_equal(tdm_oracle_open(ir, &o, &err), TDM_OK);
    for (int prec = 0; prec < 2; prec++) {
        tdm_hit a[10], b[10];
        size_t na, nb;
        tdm_oracle_request req = {10, TDM_MATCH_OR, prec, tdm_score_params_default()};
        assert_int_equal(tdm_oracle_search(o, &q, &req, a, &na, NULL, &err), TDM_OK);
        assert_int_equal(tdm_oracle_search(o, &q2, &req, b, &nb, NULL, &err), TDM_OK);
        assert_int_equal(na, 4);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, na * sizeof *a);
    }
    /* a document holding only run: twice the one-occurrence score */
    tdm_query_reset(&q2);
    add_term_ok(&q2, ir, "run", 1);
    tdm_query_finish(&q2);
    tdm_hit a[10], b[10];
    size_t na, nb;
    tdm_oracle_request req = {10, TDM_MATCH_OR, TDM_ORACLE_DOUBLE, tdm_score_params_default()};
    assert_int_equal(tdm_oracle_search(o, &q, &req, a, &na, NULL, &err), TDM_OK);
    assert_int_equal(tdm_oracle_search(o, &q2, &req, b, &nb, NULL, &err), TDM_OK);
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++)
            if (a[i].docid == b[j].docid && (a[i].docid == 0 || a[i].docid == 3))
                assert_true(fabs(a[i].score - 2 * b[j].score) < 1e-12 * a[i].score);
    tdm_oracle_close(o);
    tdm_query_free(&q);
    tdm_query_free(&q2);
    tdm_tokpool_free(pool);
    tdm_ireader_close(ir);
    tdm_err_clear(&err);
}

/* score.h's double form equals tdm_bm25 bit for bit at weight 1; its float
 * form is within 8 ulps of it. */
static void score_formulas(void **state)
{
    (void)state;
    uint32_t lens[2] = {1, 1};
    const char *lists[] = {"a:0/1"};
    tdm_ireader *ir = hand_index("oracle_score", 2, lens, lists, 1, NULL, NULL, 0);
    tdm_rng r;
    tdm_rng_seed(&r, 9);
    for (int i = 0; i < 20000; i++) {
        tdm_scorer s = {0};
        double wd = 1, k1 = tdm_rng_range(&r, 0, 400) / 100.0, b = tdm_rng_range(&r, 0, 100) / 100.0;
        uint64_t n = tdm_rng_range(&r, 1, 4000000);
        uint32_t df = tdm_rng_range(&r, 1, (uint32_t)n), tf = tdm_rng_range(&r, 1, i & 1 ? 5 : 70000);
        uint32_t dl = tdm_rng_range(&r, 0, 5000);
        double avgdl = tdm_rng_range(&r, 1, 2000000) / 1000.0;
        float qw = (float)(tdm_score_idf(n, df) * (k1 + 1));
        s = (tdm_scorer){.kind = TDM_SCORING_BM25, .k1 = k1, .b = b, .avgdl = avgdl, .ndocs = n,
                         .c0 = (float)(k1 * (1 - b)), .c1 = (float)(k1 * b / avgdl),
                         .nterms = 1, .wd = &wd, .qw = &qw};
        wd = tdm_score_idf(n, df);
        double want = tdm_bm25(k1, b, n, df, tf, dl, avgdl);
        assert_true(tdm_score_d(&s, 0, tf, dl) == want);
        float f = tdm_score_f(&s, 0, tf, dl);
        assert_true(fabs(f - want) <= 8 * 0x1p-24 * want);
        tdm_score_params p = {TDM_SCORING_BM25, k1, b};
        assert_true(f == formula_f(&p, avgdl, n, df, 1, tf, dl));
    }
    tdm_ireader_close(ir);
}

/* The top-k heap against a full sort, with many equal scores. */
static void topk_heap(void **state)
{
    (void)state;
    tdm_rng r;
    tdm_rng_seed(&r, 3);
    for (int iter = 0; iter < 200; iter++) {
        size_t n = tdm_rng_range(&r, 0, 3000), k = tdm_rng_range(&r, 1, 200);
        bhit *all = malloc((n + 1) * sizeof *all);
        tdm_topk t;
        assert_int_equal(tdm_topk_init(&t, k), TDM_OK);
        for (size_t i = 0; i < n; i++) {
            all[i] = (bhit){tdm_rng_u32(&r) % 100000, (double)tdm_rng_range(&r, 0, 20)};
            tdm_topk_push(&t, all[i].docid, all[i].score);
        }
        qsort(all, n, sizeof *all, bhit_cmp);
        tdm_hit *out = malloc((k + 1) * sizeof *out);
        size_t m = tdm_topk_drain(&t, out);
        assert_int_equal(m, n < k ? n : k);
        for (size_t i = 0; i < m; i++) {
            assert_int_equal(out[i].docid, all[i].docid);
            assert_true(out[i].score == all[i].score);
        }
        free(out);
        free(all);
        tdm_topk_free(&t);
    }
}

/* Recomputed block bounds hold every float score of their block and equal
 * the largest; bounds from the stored ones (default parameters) are never
 * below them; document sums stay below the sums of bounds in term order. */
static void block_bounds(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("oracle_bounds");
    static const char *codecs[] = {"bp128", "newpfd64", "vbyte1024", "pef"};
    for (uint64_t seed = 1; seed <= 4; seed++) {
        randcoll c;
        randcoll_init(&c, seed + 100, 500 * (uint32_t)seed, 15);
        tdm_ireader *ir = open_index(write_index(&c, dir, codecs[seed - 1]));
        const uint32_t *dl = tdm_ireader_doclens(ir);
        tdm_err err = {0};
        tdm_query q;
        tdm_query_init(&q);
        for (uint64_t l = 0; l < c.nlists; l++)
            assert_int_equal(tdm_query_add_id(&q, ir, l, 1 + (double)(l % 3) / 2, &err), TDM_OK);
        tdm_query_finish(&q);
        for (size_t pi = 0; pi < sizeof params / sizeof *params; pi++) {
            tdm_scorer s;
            assert_int_equal(tdm_scorer_init(&s, ir, &q, &params[pi], &err), TDM_OK);
            float *ub = calloc(c.ndocs, sizeof *ub), *sum = calloc(c.ndocs, sizeof *sum);
            for (size_t t = 0; t < q.nterms; t++) {
                tdm_ilist il;
                assert_int_equal(tdm_ireader_list(ir, q.terms[t].id, &il, &err), TDM_OK);
                float *b = malloc(il.nblocks * sizeof *b), mx;
                assert_int_equal(tdm_score_block_bounds(ir, &q, &s, t, b, &mx, &err), TDM_OK);
                uint64_t li = q.terms[t].id;
                uint32_t bs = il.docs.block_size;
                int *hit = calloc(il.nblocks, sizeof *hit);
                for (size_t i = 0; i < c.n[li]; i++) {
                    uint32_t d = c.docids[li][i];
                    float sc = tdm_score_f(&s, t, c.freqs[li][i], dl[d]);
                    assert_true(sc <= b[i / bs] && b[i / bs] <= mx);
                    hit[i / bs] |= sc == b[i / bs];
                    sum[d] = sum[d] + sc;
                    ub[d] = ub[d] + b[i / bs];
                    float st = tdm_score_stored_bound(ir, &q, &s, t, tdm_ilist_block_max(&il, (uint32_t)(i / bs)));
                    if (pi == 0)
                        assert_true(st >= b[i / bs]);
                    else
                        assert_true(st == -1);
                }
                for (uint32_t k = 0; k < il.nblocks; k++)
                    assert_true(hit[k]);
                free(hit);
                free(b);
            }
            for (uint32_t d = 0; d < c.ndocs; d++)
                assert_true(sum[d] <= ub[d]);
            free(ub);
            free(sum);
            tdm_scorer_free(&s);
        }
        tdm_query_free(&q);
        tdm_ireader_close(ir);
        randcoll_free(&c);
        tdm_err_clear(&err);
    }
}

typedef struct pool_job {
    tdm_tokpool *pool;
    const tdm_ireader *ir;
    int bad;
} pool_job;

static void *pool_worker(void *arg)
{
    pool_job *j = arg;
    tdm_err err = {0};
    tdm_query q;
    tdm_query_init(&q);
    for (int i = 0; i < 300; i++) {
        tdm_tokenizer *t = tdm_tokpool_get(j->pool, &err);
        if (!t || tdm_query_from_text(&q, j->ir, t, "runs walking", 12, &err) != TDM_OK ||
            q.nterms != 2)
            j->bad = 1;
        tdm_tokpool_put(j->pool, t);
    }
    tdm_query_free(&q);
    tdm_err_clear(&err);
    return NULL;
}

/* Many threads share one pool: each gets its own tokenizer, the pool never
 * holds more than the threads, and a bad stemmer fails at open. */
static void tokpool_threads(void **state)
{
    (void)state;
    uint32_t lens[3] = {5, 6, 7};
    const char *lists[] = {"run:0/1", "walk:1/1"};
    tdm_ireader *ir = hand_index("oracle_pool", 3, lens, lists, 2, "english", NULL, 0);
    tdm_tokpool *pool;
    tdm_err err = {0};
    assert_int_equal(tdm_tokpool_open(ir, &pool, &err), TDM_OK);
    assert_int_equal(tdm_tokpool_size(pool), 1);
    pthread_t th[4];
    pool_job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (pool_job){pool, ir, 0};
        assert_int_equal(pthread_create(&th[i], NULL, pool_worker, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].bad, 0);
    }
    assert_true(tdm_tokpool_size(pool) >= 1 && tdm_tokpool_size(pool) <= 4);
    tdm_tokpool_free(pool);
    tdm_ireader_close(ir);
    ir = hand_index("oracle_pool2", 3, lens, lists, 2, "klingon", NULL, 0);
    assert_int_equal(tdm_tokpool_open(ir, &pool, &err), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_err_msg(&err), "klingon"));
    tdm_ireader_close(ir);
    tdm_err_clear(&err);
}

int main(void)
{
    (void)assert_same_index; /* randcoll.h's, for other tests */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_vs_brute),    cmocka_unit_test(float_close_to_double),
        cmocka_unit_test(ties_by_docid),      cmocka_unit_test(requests_and_limits),
        cmocka_unit_test(text_queries),       cmocka_unit_test(score_formulas),
        cmocka_unit_test(topk_heap),          cmocka_unit_test(tokpool_threads),
        cmocka_unit_test(block_bounds),       cmocka_unit_test(windows_and_prefixes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
