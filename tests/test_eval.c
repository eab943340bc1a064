/* Evaluation (tools/harness/eval.h and `tandem eval`): hand-made qrels and runs
 * whose measures are worked out by hand below, in TREC and Cranfield form;
 * trec_eval's tie order; the cut-offs at 10 and 1000; queries without
 * judgments and judged queries missing from the run; malformed input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/reader.h"
#include "index/tokpool.h"
#include "harness/eval.h"
#include "harness/eval_measure.h"
#include "harness/oracle.h"
#include "harness/queryfile.h"
#include "testutil.h"

static void eval_files(const char *qrels, const char *run, int format, const tdm_eval_options *o,
                       tdm_eval_result *res, tdm_qrels **q, tdm_run **r)
{
    tdm_err err = {0};
    if (tdm_qrels_read(qrels, format, q, &err) != TDM_OK)
        fail_msg("%s", tdm_err_msg(&err));
    if (tdm_run_read(run, r, &err) != TDM_OK)
        fail_msg("%s", tdm_err_msg(&err));
    assert_int_equal(tdm_eval(*q, *r, o, res, &err), TDM_OK);
    tdm_err_clear(&err);
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-12)

static const char *QRELS = "q1 0 d1 1\n"
                           "q1 0 d2 2\n"
                           "q1 0 d3 0\n"
                           "q1 0 d9 1\n"
                           "q2 0 x1 1\n"
                           "q3\t0\ty1\t0\n"   /* judged, nothing relevant */
                           "q4 0 z1 3\n";     /* not in the run */
/* The rank column contradicts the scores: it must be ignored. d5 and d2 tie
 * at 3.0: trec_eval puts the larger docno first, so d5 ranks 3 and d2 4. */
static const char *RUN = "q1 Q0 d2 1 3.0 t\n"
                         "q1 Q0 d7 2 1 t\n"
                         "q1 Q0 d1 3 4.0 t\n"
                         "q1 Q0 d5 4 3 t\n"
                         "q1 Q0 d3 5 5e0 t\n"
                         "q2 Q0 x1 1 1 t\n"
                         "q2 Q0 x2 2 2 t\n"
                         "q3 Q0 y1 1 1 t\n"
                         "q5 Q0 w 1 1 t\n";   /* no judgments */

static void trec_by_hand(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("eval_trec");
    const char *qp = tdm_test_write(dir, "qrels", QRELS), *rp = tdm_test_write(dir, "run", RUN);
    tdm_eval_result res;
    tdm_qrels *q;
    tdm_run *r;
    eval_files(qp, rp, TDM_QRELS_AUTO, NULL, &res, &q, &r);
    assert_int_equal(res.nqueries, 3);
    assert_int_equal(res.unjudged, 1);
    assert_int_equal(res.missing, 1);
    /* q1 ranks d3 (0), d1 (1), d5 (unjudged), d2 (2), d7 (unjudged); R = 3 */
    const tdm_eval_metrics *m = &res.queries[0].m;
    assert_string_equal(res.queries[0].qid, "q1");
    NEAR(m->map, (1.0 / 2 + 2.0 / 4) / 3);
    NEAR(m->p10, 0.2);
    NEAR(m->recall1000, 2.0 / 3);
    NEAR(m->mrr10, 0.5);
    NEAR(m->ndcg10, (1 / log2(3) + 2 / log2(5)) / (2 + 1 / log2(3) + 1 / log2(4)));
    assert_int_equal(m->relevant, 3);
    assert_int_equal(m->rel_retrieved, 2);
    assert_int_equal(m->retrieved, 5);
    /* q2: x2 (2.0) then x1, relevant, at rank 2 */
    m = &res.queries[1].m;
    NEAR(m->map, 0.5);
    NEAR(m->p10, 0.1);
    NEAR(m->recall1000, 1);
    NEAR(m->mrr10, 0.5);
    NEAR(m->ndcg10, 1 / log2(3));
    /* q3: judged, nothing relevant: zeros, averaged in */
    m = &res.queries[2].m;
    NEAR(m->map + m->p10 + m->ndcg10 + m->recall1000 + m->mrr10, 0);
    NEAR(res.mean.map, (1.0 / 3 + 0.5) / 3);
    NEAR(res.mean.p10, 0.1);
    NEAR(res.mean.mrr10, 1.0 / 3);
    tdm_eval_result_free(&res);
    /* exponential gain: levels 1 and 2 weigh 1 and 3 */
    tdm_eval_options o = {TDM_EVAL_GAIN_EXP, 0};
    tdm_err err = {0};
    assert_int_equal(tdm_eval(q, r, &o, &res, &err), TDM_OK);
    NEAR(res.queries[0].m.ndcg10, (1 / log2(3) + 3 / log2(5)) / (3 + 1 / log2(3) + 0.5));
    NEAR(res.queries[0].m.map, (1.0 / 2 + 2.0 / 4) / 3);
    tdm_eval_result_free(&res);
    /* complete: q4 averaged in as zeros */
    o = (tdm_eval_options){TDM_EVAL_GAIN_LINEAR, 1};
    assert_int_equal(tdm_eval(q, r, &o, &res, &err), TDM_OK);
    assert_int_equal(res.nqueries, 4);
    assert_string_equal(res.queries[3].qid, "q4");
    NEAR(res.mean.map, (1.0 / 3 + 0.5) / 4);
    tdm_eval_result_free(&res);
    tdm_qrels_free(q);
    tdm_run_free(r);
}

/* cranqrel: grade 1 most relevant .. 4, -1 none: levels 5 - grade, 0. */
static void cranfield_by_hand(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("eval_cran");
    const char *qp = tdm_test_write(dir, "cranqrel",
                                    "1 184 2 \n1 29 1 \n1 31 4 \n1 486 -1 \n2 12 3 \n");
    const char *rp = tdm_test_write(dir, "run", "1 Q0 486 1 9 x\n1 Q0 31 2 8 x\n1 Q0 29 3 7 x\n"
                                                "1 Q0 5 4 6 x\n1 Q0 184 5 5 x\n2 Q0 12 1 1 x\n");
    tdm_eval_result res;
    tdm_qrels *q;
    tdm_run *r;
    eval_files(qp, rp, TDM_QRELS_AUTO, NULL, &res, &q, &r);
    assert_int_equal(res.nqueries, 2);
    /* query 1: 486 (judged non-relevant), 31 (level 1), 29 (4), 5 (unjudged), 184 (3) */
    const tdm_eval_metrics *m = &res.queries[0].m;
    assert_int_equal(m->relevant, 3);
    NEAR(m->map, (1.0 / 2 + 2.0 / 3 + 3.0 / 5) / 3);
    NEAR(m->p10, 0.3);
    NEAR(m->mrr10, 0.5);
    NEAR(m->ndcg10, (1 / log2(3) + 4 / log2(4) + 3 / log2(6)) / (4 + 3 / log2(3) + 1 / log2(4)));
    NEAR(res.queries[1].m.map, 1);
    NEAR(res.queries[1].m.ndcg10, 1);
    tdm_eval_result_free(&res);
    tdm_qrels_free(q);
    tdm_run_free(r);
    /* the same file read as TREC is a column-count error */
    tdm_err err = {0};
    assert_int_equal(tdm_qrels_read(qp, TDM_QRELS_TREC, &q, &err), TDM_ERR_FORMAT);
    assert_non_null(strstr(tdm_err_msg(&err), "line 1"));
    tdm_err_clear(&err);
}

/* Cut-offs: relevant documents at ranks 11 and 1001 of 1005. */
static void cutoffs(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("eval_cut");
    char *run = malloc(1005 * 40), *p = run;
    for (int i = 1; i <= 1005; i++)
        p += sprintf(p, "7 Q0 doc%04d %d %d tag\n", i, i, 2000 - i);
    const char *qp = tdm_test_write(dir, "qrels", "7 0 doc0011 1\n7 0 doc1001 1\n7 0 doc0003 0\n");
    const char *rp = tdm_test_write(dir, "run", run);
    free(run);
    tdm_eval_result res;
    tdm_qrels *q;
    tdm_run *r;
    eval_files(qp, rp, TDM_QRELS_AUTO, NULL, &res, &q, &r);
    const tdm_eval_metrics *m = &res.queries[0].m;
    NEAR(m->map, (1.0 / 11 + 2.0 / 1001) / 2);
    NEAR(m->p10, 0);
    NEAR(m->mrr10, 0);
    NEAR(m->ndcg10, 0);
    NEAR(m->recall1000, 0.5);
    assert_int_equal(m->retrieved, 1005);
    tdm_eval_result_free(&res);
    tdm_qrels_free(q);
    tdm_run_free(r);
}

static void expect_error(int qrels, const char *text, const char *what)
{
    const char *dir = tdm_test_tmpdir("eval_bad");
    const char *path = tdm_test_write(dir, "f", text);
    tdm_err err = {0};
    tdm_qrels *q = NULL;
    tdm_run *r = NULL;
    int rc = qrels ? tdm_qrels_read(path, TDM_QRELS_AUTO, &q, &err)
                   : tdm_run_read(path, &r, &err);
    if (rc != TDM_ERR_FORMAT || !strstr(tdm_err_msg(&err), what) ||
        !strstr(tdm_err_msg(&err), path))
        fail_msg("'%s': rc %d, message '%s', want '%s'", text, rc, tdm_err_msg(&err), what);
    assert_null(q);
    assert_null(r);
    tdm_err_clear(&err);
}

static void malformed(void **state)
{
    (void)state;
    expect_error(1, "q1 0 d1 1\nq1 0 d2 1 extra\n", "line 2");
    expect_error(1, "q1 0 d1 1\nq1 d2 1\n", "line 2: 3 columns");
    expect_error(1, "q1 0 d1 x\n", "relevance 'x'");
    expect_error(1, "1 184 5\n", "grade 5");
    expect_error(1, "1 184 0\n", "grade 0");
    expect_error(1, "q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 0\n", "lines 1 and 3");
    expect_error(1, "\n\n", "no judgments");
    expect_error(0, "q1 Q0 d1 1 2.0\n", "line 1: fewer columns");
    expect_error(0, "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 1 2.0 t x\n", "line 2: more than 6");
    expect_error(0, "q1 Q0 d1 1 nan t\n", "score 'nan'");
    expect_error(0, "q1 Q0 d1 1 1.5x t\n", "score '1.5x'");
    expect_error(0, "q1 Q0 d1 one 1 t\n", "rank 'one'");
    expect_error(0, "q1 Q0 d1 1 1 t\nq1 Q0 d1 2 0.5 t\n", "lines 1 and 2");
    tdm_err err = {0};
    tdm_qrels *q = NULL;
    assert_int_equal(tdm_qrels_read("/nonexistent/qrels", TDM_QRELS_AUTO, &q, &err) < 0, 1);
    assert_non_null(strstr(tdm_err_msg(&err), "/nonexistent/qrels"));
    tdm_err_clear(&err);
}

/* `tandem eval`: the summary, --per-query and --gain exp, and bad usage. */
static void cli(void **state)
{
    (void)state;
    const char *cli = getenv("TANDEM_CLI");
    if (!cli) {
        skip();
        return;
    }
    const char *dir = tdm_test_tmpdir("eval_cli");
    const char *qp = tdm_test_write(dir, "qrels", QRELS), *rp = tdm_test_write(dir, "run", RUN);
    char cmd[4096], out[8192];
    snprintf(cmd, sizeof cmd, "%s eval --per-query %s %s 2>&1", cli, qp, rp);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = 0;
    assert_int_equal(pclose(f), 0);
    char want[128];
    snprintf(want, sizeof want, "map\tall\t%.4f", (1.0 / 3 + 0.5) / 3);
    if (!strstr(out, want) || !strstr(out, "map\tq1\t0.3333") || !strstr(out, "P_10\tall\t0.1000") ||
        !strstr(out, "num_q\tall\t3") || !strstr(out, "num_unjudged_q\tall\t1") ||
        !strstr(out, "num_missing_q\tall\t1") || !strstr(out, "recip_rank_10\tq2\t0.5000"))
        fail_msg("output:\n%s", out);
    snprintf(cmd, sizeof cmd, "%s eval --gain exp %s %s 2>&1", cli, qp, rp);
    f = popen(cmd, "r");
    n = fread(out, 1, sizeof out - 1, f);
    out[n] = 0;
    assert_int_equal(pclose(f), 0);
    snprintf(want, sizeof want, "ndcg_cut_10\tall\t%.4f",
             ((1 / log2(3) + 3 / log2(5)) / (3 + 1 / log2(3) + 0.5) + 1 / log2(3)) / 3);
    if (!strstr(out, want) || strstr(out, "\tq1\t"))
        fail_msg("output:\n%s\nwant %s", out, want);
    snprintf(cmd, sizeof cmd, "%s eval --gain cubic %s %s >/dev/null 2>&1", cli, qp, rp);
    assert_int_not_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s eval %s >/dev/null 2>&1", cli, qp);
    assert_int_not_equal(system(cmd), 0);
}

/* The real Cranfield and CACM judgments read (when ../shared/data is there). */
static void real_qrels(void **state)
{
    (void)state;
    const char *cran = tdm_test_data("cranfield/cranqrel");
    tdm_err err = {0};
    tdm_qrels *q;
    tdm_run *r;
    if (tdm_qrels_read(cran, TDM_QRELS_AUTO, &q, &err) != TDM_OK)
        fail_msg("%s", tdm_err_msg(&err));
    /* a run that returns every judged document in qrels order scores > 0 */
    const char *dir = tdm_test_tmpdir("eval_real");
    char path[1024];
    snprintf(path, sizeof path, "%s/run", dir);
    FILE *f = fopen(path, "w");
    for (int qid = 1; qid <= 225; qid++)
        fprintf(f, "%d Q0 1 1 1 t\n", qid);
    fclose(f);
    assert_int_equal(tdm_run_read(path, &r, &err), TDM_OK);
    tdm_eval_result res;
    assert_int_equal(tdm_eval(q, r, NULL, &res, &err), TDM_OK);
    assert_int_equal(res.nqueries, 225);
    assert_int_equal(res.missing, 0);
    tdm_eval_result_free(&res);
    tdm_qrels_free(q);
    tdm_run_free(r);
    const char *cacm = tdm_test_data("cacm/qrels.cacm.trec.txt");
    assert_int_equal(tdm_qrels_read(cacm, TDM_QRELS_AUTO, &q, &err), TDM_OK);
    tdm_qrels_free(q);
    tdm_err_clear(&err);
}

/* A TREC run of the oracle's top 1000 (BM25 1.2/0.75, OR) for every query. */
static void oracle_run(const char *index, const char *queries, int precision, const char *out)
{
    tdm_err err = {0};
    tdm_ireader *r;
    tdm_tokpool *pool;
    tdm_oracle *o;
    tdm_qfile *qf;
    tdm_qf_options qo = {TDM_QF_SMART, 0, 1, 0};
    if (tdm_ireader_open(index, &r, &err) || tdm_tokpool_open(r, &pool, &err) ||
        tdm_oracle_open(r, &o, &err) || tdm_qfile_read(queries, &qo, &qf, &err))
        fail_msg("%s", tdm_err_msg(&err));
    tdm_tokenizer *t = tdm_tokpool_get(pool, &err);
    tdm_query q;
    tdm_query_init(&q);
    tdm_hit *h = malloc(1000 * sizeof *h);
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    for (size_t i = 0; i < qf->n; i++) {
        tdm_oracle_request req = {1000, TDM_MATCH_OR, precision, tdm_score_params_default()};
        size_t n;
        if (tdm_query_from_text(&q, r, t, qf->q[i].text, strlen(qf->q[i].text), &err) ||
            tdm_oracle_search(o, &q, &req, h, &n, NULL, &err))
            fail_msg("query %s: %s", qf->q[i].id, tdm_err_msg(&err));
        for (size_t k = 0; k < n; k++)
            fprintf(f, "%s Q0 %s %zu %.9g oracle\n", qf->q[i].id,
                    tdm_ireader_docname(r, h[k].docid), k + 1, h[k].score);
    }
    fclose(f);
    free(h);
    tdm_query_free(&q);
    tdm_tokpool_put(pool, t);
    tdm_tokpool_free(pool);
    tdm_oracle_close(o);
    tdm_qfile_free(qf);
    tdm_ireader_close(r);
    tdm_err_clear(&err);
}

/* End to end on Cranfield: index (title + text, Snowball English), the
 * queries numbered by position, the oracle's BM25 top 1000, evaluation.
 * ../shared/data/README.md's Xapian reference: MAP 0.300, P@10 0.232,
 * nDCG@10 0.353; a correct BM25 lands within a few hundredths (tandem:
 * 0.304, 0.231, 0.367), and the float and double oracles agree. */
static void cranfield_effectiveness(void **state)
{
    (void)state;
    char docpath[1024], queries[1024], qrels[1024];
    snprintf(docpath, sizeof docpath, "%s", tdm_test_data("cranfield/cran.all.1400"));
    const char *docs = docpath;
    snprintf(queries, sizeof queries, "%s", tdm_test_data("cranfield/cran.qry"));
    snprintf(qrels, sizeof qrels, "%s", tdm_test_data("cranfield/cranqrel"));
    const char *dir = tdm_test_tmpdir("eval_cranfield");
    char index[1024], run[2][1024];
    snprintf(index, sizeof index, "%s/cran.tdm", dir);
    tdm_index_build_options bo;
    tdm_index_build_options_init(&bo);
    if (tdm_index_build(&docs, 1, index, &bo) != TDM_OK)
        fail_msg("build: %s", tdm_last_error());
    double map[2];
    for (int prec = 0; prec < 2; prec++) {
        snprintf(run[prec], sizeof run[prec], "%s/run%d", dir, prec);
        oracle_run(index, queries, prec, run[prec]);
        tdm_eval_result res;
        tdm_qrels *q;
        tdm_run *r;
        eval_files(qrels, run[prec], TDM_QRELS_AUTO, NULL, &res, &q, &r);
        assert_int_equal(res.nqueries, 225);
        map[prec] = res.mean.map;
        if (res.mean.map < 0.29 || res.mean.p10 < 0.222 || res.mean.ndcg10 < 0.343)
            fail_msg("MAP %.4f P@10 %.4f nDCG@10 %.4f: below Xapian's 0.300/0.232/0.353 - 0.01",
                     res.mean.map, res.mean.p10, res.mean.ndcg10);
        tdm_eval_result_free(&res);
        tdm_qrels_free(q);
        tdm_run_free(r);
    }
    assert_true(fabs(map[0] - map[1]) < 1e-4);
}

/* Measures by trec_eval's names (eval_measure.h) on q1 of RUN, with qrels
 * written as decimals. q1 ranks d3 (0), d1 (1), d5, d2 (2), d7; 3 relevant. */
static void measures_by_name(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("eval_named");
    const char *qp = tdm_test_write(dir, "qrels", "q1 0 d1 1.000000\nq1 0 d2 2.0\n"
                                                  "q1 0 d3 0.000000\nq1 0 d9 1\n");
    const char *rp = tdm_test_write(dir, "run", RUN);
    tdm_eval_result res;
    tdm_qrels *q;
    tdm_run *r;
    eval_files(qp, rp, TDM_QRELS_AUTO, NULL, &res, &q, &r);
    static const struct { const char *spec; double want; } cases[] = {
        {"P.2", 0.5},          {"P_4", 0.5},        {"recall.4", 2.0 / 3},
        {"map", 1.0 / 3},      {"map_cut.2", 1.0 / 6}, {"recip_rank", 0.5},
        {"Rprec", 1.0 / 3},    {"num_rel_ret", 2},  {"num_rel", 3},
        {"num_ret", 5},        {"recip_rank.1", 0},
        /* DCG@4 = 1/log2(3) + 2/log2(5); ideal 2 + 1/log2(3) + 1/log2(4) */
        {"ndcg_cut.4", (1 / log2(3) + 2 / log2(5)) / (2 + 1 / log2(3) + 0.5)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tdm_eval_measure m[16];
        size_t n = 0;
        tdm_err err = {0};
        assert_int_equal(tdm_eval_measure_parse(cases[i].spec, m, 16, &n, &err), TDM_OK);
        assert_int_equal(n, 1);
        double v = -1;
        assert_int_equal(tdm_eval_measure_query(q, r, "q1", &m[0], TDM_EVAL_GAIN_LINEAR, &v),
                         TDM_OK);
        if (fabs(v - cases[i].want) > 1e-12)
            fail_msg("%s: %.6f, want %.6f", cases[i].spec, v, cases[i].want);
    }
    tdm_eval_measure m[16];
    size_t n = 0;
    tdm_err err = {0};
    assert_int_equal(tdm_eval_measure_parse("P.5,10", m, 16, &n, &err), TDM_OK);
    assert_int_equal(tdm_eval_measure_parse("ndcg_cut_10", m, 16, &n, &err), TDM_OK);
    assert_int_equal(n, 3);
    assert_string_equal(m[0].name, "P_5");
    assert_string_equal(m[1].name, "P_10");
    assert_string_equal(m[2].name, "ndcg_cut_10");
    n = 0;
    assert_int_equal(tdm_eval_measure_parse("P", m, 16, &n, &err), TDM_OK);
    assert_int_equal(n, 9);   /* trec_eval's cut-offs 5 .. 1000 */
    assert_string_equal(m[8].name, "P_1000");
    static const char *bad[] = {"map.5", "P.x", "P.0", "P.5,", "Px", "foo", "P.-1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        n = 0;
        if (tdm_eval_measure_parse(bad[i], m, 16, &n, &err) != TDM_ERR_INVALID_ARG ||
            !strstr(tdm_err_msg(&err), bad[i]))
            fail_msg("'%s' accepted or unnamed: '%s'", bad[i], tdm_err_msg(&err));
        tdm_err_clear(&err);
    }
    n = 0;
    assert_int_equal(tdm_eval_measure_parse("P", m, 4, &n, &err), TDM_ERR_INVALID_ARG);
    tdm_err_clear(&err);
    tdm_eval_result_free(&res);
    tdm_qrels_free(q);
    tdm_run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(trec_by_hand), cmocka_unit_test(cranfield_by_hand),
        cmocka_unit_test(cutoffs),      cmocka_unit_test(malformed),
        cmocka_unit_test(cli),          cmocka_unit_test(real_qrels),
        cmocka_unit_test(cranfield_effectiveness), cmocka_unit_test(measures_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
