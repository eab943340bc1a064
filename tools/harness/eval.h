/* Evaluating a TREC run against relevance judgments, as trec_eval does.
 *
 * Judgments (tdm_qrels_read):
 *   TREC qrels   `qid iter docno rel` (4 columns): rel >= 1 is relevant, and
 *                is the gain nDCG uses; rel <= 0 is judged non-relevant.
 *   Cranfield    `qid docno grade` (3 columns, cranqrel): grades 1 (a
 *                complete answer) .. 4 (minimum interest) are relevant and
 *                map to the TREC-style level 5 - grade (1 -> 4, 2 -> 3,
 *                3 -> 2, 4 -> 1), so that the most relevant documents carry
 *                the largest gain; -1 ("no relevant documents") is judged
 *                non-relevant (level 0). Every grade 1-4 counts as relevant,
 *                as in the Xapian reference figures of ../shared/data/README.md.
 *   A duplicate (qid, docno), a bad number or a wrong column count is an error
 *   naming the file and line. Columns are separated by spaces or tabs.
 * Runs (tdm_run_read): `qid iter docno rank score tag` (6 columns). The rank
 * column is ignored; documents are ordered as trec_eval orders them: score
 * descending, then docno descending (strcmp). A docno twice for one query is
 * an error.
 *
 * Metrics (tdm_eval), per query then averaged over the queries evaluated:
 *   map          average precision over the whole run: the sum over relevant
 *                retrieved documents of precision at their rank, divided by
 *                the number of relevant documents in the qrels;
 *   P_10         relevant documents in the first 10, divided by 10;
 *   ndcg_cut_10  sum of gain / log2(rank + 1) over ranks 1..10, divided by
 *                the same for the ideal ranking of every judged document
 *                (from the qrels); gain = the level (linear, trec_eval's), or
 *                2^level - 1 with TDM_EVAL_GAIN_EXP;
 *   recall_1000  relevant documents in the first 1000 / relevant in qrels;
 *   recip_rank_10  1 / rank of the first relevant document if in the first
 *                10, else 0 (trec_eval -M 10 -m recip_rank; MS MARCO's MRR@10).
 * Binary relevance (level >= 1) for all but nDCG; unjudged documents are
 * non-relevant. A query of the run without judgments is left out (counted in
 * unjudged); a query of the qrels missing from the run is left out too
 * (counted in missing), as trec_eval does by default, unless `complete` asks
 * to average it in with zeros (trec_eval -c). A query with judgments but no
 * relevant document scores 0 everywhere and is averaged in (as trec_eval).
 *
 * Checked against ../shared/data's reference (Xapian 1.4.22, BM25 1.2/0.75,
 * OR, top 1000): tandem's oracle with these measures gives on Cranfield MAP
 * 0.304, P@10 0.231, nDCG@10 0.367 with linear gain (0.357 with exp) against
 * Xapian's 0.300, 0.232, 0.353 (the README does not say which gain Xapian's
 * nDCG used; grades 1-4 relevant as it says), and on CACM (52 judged
 * queries, qrels.cacm.trec.txt with docnos stripped of "CACM-") MAP 0.311,
 * P@10 0.323, nDCG@10 0.463 against 0.310, 0.317, 0.458 (2026-11-23).
 *
 * Threads: the objects are immutable once read.
 */
#ifndef TDM_HARNESS_EVAL_H
#define TDM_HARNESS_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

enum tdm_qrels_format { TDM_QRELS_AUTO = 0, TDM_QRELS_TREC = 1, TDM_QRELS_CRANFIELD = 2 };
enum tdm_eval_gain { TDM_EVAL_GAIN_LINEAR = 0, TDM_EVAL_GAIN_EXP = 1 };

typedef struct tdm_qrels tdm_qrels;
typedef struct tdm_run tdm_run;

/* AUTO takes the column count of the first line (4: TREC, 3: Cranfield);
 * every line must then have it. */
int tdm_qrels_read(const char *path, int format, tdm_qrels **out, tdm_err *err);
void tdm_qrels_free(tdm_qrels *q);
int tdm_run_read(const char *path, tdm_run **out, tdm_err *err);
void tdm_run_free(tdm_run *r);

typedef struct tdm_eval_metrics {
    double map, p10, ndcg10, recall1000, mrr10;
    uint64_t retrieved, relevant, rel_retrieved;
} tdm_eval_metrics;

typedef struct tdm_eval_query {
    const char *qid;        /* owned by the run or qrels it came from */
    tdm_eval_metrics m;
} tdm_eval_query;

typedef struct tdm_eval_result {
    tdm_eval_query *queries;    /* [nqueries] evaluated, by qid (strcmp) */
    size_t nqueries;
    tdm_eval_metrics mean;      /* means; counts summed */
    size_t unjudged;            /* run queries without judgments: left out */
    size_t missing;             /* judged queries absent from the run */
} tdm_eval_result;

typedef struct tdm_eval_options {
    int gain;       /* enum tdm_eval_gain */
    int complete;   /* average missing queries in as zeros (trec_eval -c) */
} tdm_eval_options;

/* Evaluates; free the result with tdm_eval_result_free (the qrels and run
 * must outlive it: qids point into them). opts may be NULL. */
int tdm_eval(const tdm_qrels *qrels, const tdm_run *run, const tdm_eval_options *opts,
             tdm_eval_result *out, tdm_err *err);
void tdm_eval_result_free(tdm_eval_result *r);

#endif
