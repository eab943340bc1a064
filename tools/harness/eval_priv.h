/* What eval_read.c builds and eval.c reads. Internal to the harness. */
#ifndef TDM_HARNESS_EVAL_PRIV_H
#define TDM_HARNESS_EVAL_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "harness/arena.h"
#include "harness/eval.h"

typedef struct tdm_judgment {
    const char *qid, *docno;
    int level;          /* relevant iff >= 1; the nDCG gain level */
    uint64_t line;
} tdm_judgment;

struct tdm_qrels {
    tdm_judgment *j;    /* sorted by qid, then docno */
    size_t n;
    tdm_arena strs;
};

typedef struct tdm_run_entry {
    const char *qid, *docno;
    double score;
    uint64_t line;
} tdm_run_entry;

struct tdm_run {
    tdm_run_entry *e;   /* sorted by qid, score descending, docno descending */
    size_t n;
    tdm_arena strs;
};

/* eval.c's lookups, shared with eval_measure.c: the judgments of qid
 * [*lo, *hi); the level of docno among them (0 unjudged); a level's nDCG gain
 * (enum tdm_eval_gain). */
void tdm_eval_judged_range(const tdm_qrels *q, const char *qid, size_t *lo, size_t *hi);
int tdm_eval_level_of(const tdm_qrels *q, size_t lo, size_t hi, const char *docno);
double tdm_eval_gain(int level, int mode);

#endif
