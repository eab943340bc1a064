/* What eval_read.c builds and eval.c reads. Internal to host/query. */
#ifndef TDM_QUERY_EVAL_PRIV_H
#define TDM_QUERY_EVAL_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "query/arena.h"
#include "query/eval.h"

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

#endif
