/* `tandem eval`: a TREC run against relevance judgments (tools/harness/eval.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "eval_measures.h"
#include "harness/eval.h"
#include "tandem.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tandem eval [options] QRELS RUN\n"
            "  QRELS: TREC qrels (qid iter docno rel) or Cranfield cranqrel (qid docno grade:\n"
            "         1 most relevant .. 4 all relevant, gain 5 - grade; -1 none)\n"
            "  RUN:   TREC run (qid Q0 docno rank score tag); ties ordered as trec_eval\n"
            "         (score descending, then docno descending)\n"
            "  --per-query            each query's measures before the means\n"
            "  --gain linear|exp      nDCG gain: the level (default) or 2^level - 1\n"
            "  --qrels-format auto|trec|cranfield   (default auto: by column count)\n"
            "  -c, --complete         average judged queries missing from the run as 0\n"
            "  -m MEASURE             print only the measures asked for (repeatable), named\n"
            "                         as trec_eval names them: map, map_cut.K, P.K (or P_K;\n"
            "                         P.5,10 for two), recall.K, ndcg, ndcg_cut.K,\n"
            "                         recip_rank, Rprec, num_ret, num_rel, num_rel_ret\n"
            "measures: map, P_10, ndcg_cut_10, recall_1000, recip_rank_10 (as trec_eval);\n"
            "queries of the run without judgments are left out (num_unjudged_q)\n");
}

static void print_metrics(const char *qid, const tdm_eval_metrics *m)
{
    printf("map\t%s\t%.4f\n", qid, m->map);
    printf("P_10\t%s\t%.4f\n", qid, m->p10);
    printf("ndcg_cut_10\t%s\t%.4f\n", qid, m->ndcg10);
    printf("recall_1000\t%s\t%.4f\n", qid, m->recall1000);
    printf("recip_rank_10\t%s\t%.4f\n", qid, m->mrr10);
    printf("num_ret\t%s\t%llu\n", qid, (unsigned long long)m->retrieved);
    printf("num_rel\t%s\t%llu\n", qid, (unsigned long long)m->relevant);
    printf("num_rel_ret\t%s\t%llu\n", qid, (unsigned long long)m->rel_retrieved);
}

static int run_eval(const char *qpath, const char *rpath, int format,
                    const tdm_eval_options *o, int per_query, const tdm_eval_measure *ms,
                    size_t nms)
{
    tdm_err err = {0};
    tdm_qrels *q = NULL;
    tdm_run *r = NULL;
    tdm_eval_result res;
    int rc = tdm_qrels_read(qpath, format, &q, &err);
    if (rc == TDM_OK)
        rc = tdm_run_read(rpath, &r, &err);
    if (rc == TDM_OK)
        rc = tdm_eval(q, r, o, &res, &err);
    if (rc != TDM_OK) {
        tdm_cli_fail("eval", "%s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        tdm_qrels_free(q);
        tdm_run_free(r);
        return 1;
    }
    if (nms) {
        if (tdm_eval_print_measures(stdout, q, r, &res, ms, nms, o->gain, per_query) != TDM_OK)
            rc = tdm_cli_fail("eval", "out of memory");
    } else {
        if (per_query)
            for (size_t i = 0; i < res.nqueries; i++)
                print_metrics(res.queries[i].qid, &res.queries[i].m);
        printf("num_q\tall\t%zu\n", res.nqueries);
        printf("num_unjudged_q\tall\t%zu\n", res.unjudged);
        printf("num_missing_q\tall\t%zu\n", res.missing);
        print_metrics("all", &res.mean);
    }
    if (res.unjudged)
        fprintf(stderr, "tandem eval: %zu quer%s of the run without judgments left out\n",
                res.unjudged, res.unjudged == 1 ? "y" : "ies");
    if (res.missing && !o->complete)
        fprintf(stderr, "tandem eval: %zu judged quer%s not in the run left out "
                        "(-c averages them in as 0)\n", res.missing,
                res.missing == 1 ? "y" : "ies");
    tdm_eval_result_free(&res);
    tdm_qrels_free(q);
    tdm_run_free(r);
    return rc == TDM_OK ? 0 : 1;
}

int tdm_cmd_eval(int argc, char **argv)
{
    tdm_eval_options o = {TDM_EVAL_GAIN_LINEAR, 0};
    int per_query = 0, format = TDM_QRELS_AUTO;
    const char *pos[2] = {NULL, NULL}, *v;
    int npos = 0;
    tdm_eval_measure ms[64];
    size_t nms = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--per-query") || !strcmp(argv[i], "-q")) {
            per_query = 1;
        } else if (!strcmp(argv[i], "--complete") || !strcmp(argv[i], "-c")) {
            o.complete = 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "-m"))) {
            tdm_err err = {0};
            if (tdm_eval_measure_parse(v, ms, sizeof ms / sizeof *ms, &nms, &err) != TDM_OK) {
                tdm_cli_fail("eval", "%s", tdm_err_msg(&err));
                tdm_err_clear(&err);
                return TDM_CLI_EXIT_USAGE;
            }
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--gain"))) {
            if (strcmp(v, "linear") && strcmp(v, "exp"))
                return tdm_cli_usage("eval", "--gain %s: want linear or exp", v);
            o.gain = !strcmp(v, "exp") ? TDM_EVAL_GAIN_EXP : TDM_EVAL_GAIN_LINEAR;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--qrels-format"))) {
            format = !strcmp(v, "auto") ? TDM_QRELS_AUTO : !strcmp(v, "trec") ? TDM_QRELS_TREC
                   : !strcmp(v, "cranfield") ? TDM_QRELS_CRANFIELD : -1;
            if (format < 0)
                return tdm_cli_usage("eval", "--qrels-format %s: want auto, trec or cranfield", v);
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return tdm_cli_usage("eval", "unknown option '%s' (--help lists them)", argv[i]);
        } else if (npos < 2) {
            pos[npos++] = argv[i];
        } else {
            return tdm_cli_usage("eval", "one QRELS and one RUN, not '%s' too", argv[i]);
        }
    }
    if (npos != 2) {
        usage(stderr);
        return TDM_CLI_EXIT_USAGE;
    }
    return run_eval(pos[0], pos[1], format, &o, per_query, ms, nms);
}
