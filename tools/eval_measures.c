/* `tandem eval -m` output (eval_measures.h). */
#include "eval_measures.h"

#include "tandem.h"

static void print_value(FILE *f, const tdm_eval_measure *m, const char *qid, double v)
{
    if (tdm_eval_measure_is_count(m))
        fprintf(f, "%s\t%s\t%.0f\n", m->name, qid, v);
    else
        fprintf(f, "%s\t%s\t%.4f\n", m->name, qid, v);
}

int tdm_eval_print_measures(FILE *f, const tdm_qrels *q, const tdm_run *r,
                            const tdm_eval_result *res, const tdm_eval_measure *m, size_t n,
                            int gain, int per_query)
{
    for (size_t k = 0; k < n; k++) {
        double sum = 0, v;
        /* The queries evaluated are tdm_eval's (judged; missing ones with -c). */
        for (size_t i = 0; i < res->nqueries; i++) {
            if (tdm_eval_measure_query(q, r, res->queries[i].qid, &m[k], gain, &v) != TDM_OK)
                return TDM_ERR_NOMEM;
            if (per_query)
                print_value(f, &m[k], res->queries[i].qid, v);
            sum += v;
        }
        if (!tdm_eval_measure_is_count(&m[k]) && res->nqueries)
            sum /= (double)res->nqueries;
        print_value(f, &m[k], "all", sum);
    }
    return TDM_OK;
}
