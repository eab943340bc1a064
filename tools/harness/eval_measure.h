/* Measures asked for by name, as trec_eval names them (`tandem eval -m`).
 *
 * A name is trec_eval's, with its cut-offs after '.' or '_' ("P.10", "P_10",
 * "P.5,10,20" for three; "ndcg_cut.10", "recall.1000", "map_cut.100"):
 *   map          average precision over the whole run (eval.h)
 *   map_cut.K    average precision counting only ranks <= K
 *   P.K          relevant in the first K / K
 *   recall.K     relevant in the first K / relevant judged
 *   ndcg         DCG of the whole run / ideal DCG of every judged document
 *   ndcg_cut.K   DCG@K / ideal DCG@K (gain as eval.h's option says)
 *   recip_rank   1 / rank of the first relevant document (0 if none)
 *   Rprec        relevant in the first R / R, R = relevant judged
 *   num_ret, num_rel, num_rel_ret   counts (summed, not averaged, over queries)
 * A measure that takes cut-offs given none gets trec_eval's: 5, 10, 15, 20,
 * 30, 100, 200, 500, 1000. Relevant: level >= 1, as everywhere in eval.h.
 */
#ifndef TDM_HARNESS_EVAL_MEASURE_H
#define TDM_HARNESS_EVAL_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "harness/eval.h"

enum tdm_measure_kind {
    TDM_MEASURE_MAP, TDM_MEASURE_MAP_CUT, TDM_MEASURE_P, TDM_MEASURE_RECALL,
    TDM_MEASURE_NDCG, TDM_MEASURE_NDCG_CUT, TDM_MEASURE_RECIP_RANK, TDM_MEASURE_RPREC,
    TDM_MEASURE_NUM_RET, TDM_MEASURE_NUM_REL, TDM_MEASURE_NUM_REL_RET
};

typedef struct tdm_eval_measure {
    int kind;           /* enum tdm_measure_kind */
    uint64_t cutoff;    /* 0: none */
    char name[48];      /* as trec_eval prints it: "P_10", "ndcg_cut_10", "map" */
} tdm_eval_measure;

/* Appends the measures that spec names (one name, perhaps with several
 * cut-offs) to out[*n..max); an unknown name, a bad cut-off or more than max
 * measures is TDM_ERR_INVALID_ARG naming it. */
int tdm_eval_measure_parse(const char *spec, tdm_eval_measure *out, size_t max, size_t *n,
                           tdm_err *err);

/* Whether the measure is a count (summed over queries, printed as an integer). */
int tdm_eval_measure_is_count(const tdm_eval_measure *m);

/* The measure for query qid of the run (0 where the run lacks it), with
 * gain an enum tdm_eval_gain. TDM_ERR_NOMEM only. */
int tdm_eval_measure_query(const tdm_qrels *q, const tdm_run *r, const char *qid,
                           const tdm_eval_measure *m, int gain, double *value);

#endif
