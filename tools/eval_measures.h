/* `tandem eval -m`: the measures asked for, printed as trec_eval prints them. */
#ifndef TDM_TOOLS_EVAL_MEASURES_H
#define TDM_TOOLS_EVAL_MEASURES_H

#include <stdio.h>

#include "harness/eval.h"
#include "harness/eval_measure.h"

/* Prints `name<TAB>qid<TAB>value` for each measure of m[0..n): each query's
 * of res (when per_query), then "all" (the mean; counts summed). Returns
 * TDM_OK or TDM_ERR_NOMEM. */
int tdm_eval_print_measures(FILE *f, const tdm_qrels *q, const tdm_run *r,
                            const tdm_eval_result *res, const tdm_eval_measure *m, size_t n,
                            int gain, int per_query);

#endif
