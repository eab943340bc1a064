/* Ranked AND step by step, with the rest of the query free to move to
 * another device between steps (Griffin, Liu et al. 2018; docs/SCHED.md,
 * "Intra-query migration").
 *
 * The query's lists are taken shortest first. Step 0 decodes the shortest
 * list on the device into the candidates (docids) with one score column;
 * each further step decodes the next list and keeps the candidates found in
 * it (a binary search per candidate), adding that list's score column. The
 * last step sums each candidate's columns in the query's term order (so the
 * score is score.h's device-exact sum, bit for bit the oracle's and the AND
 * kernel's) and the merge kernel takes the top k. Kernels: cl/and_step.cl;
 * plain-C references: and_step_ref.c.
 *
 * After each step that leaves work, a callback (the scheduler's) says on
 * which engine device the rest runs. To move, the segment downloads the
 * intermediate (candidate docids and the columns so far: 4 + 4 x steps bytes
 * a candidate) into a pending slot and returns; the caller commits it
 * (tdm_astep_commit) once it knows the segment counts (a run failing after
 * the fact, a lost device, is never committed: the query resumes from the
 * last committed intermediate, or from the start). The next segment, on the
 * other device, uploads it and goes on.
 *
 * Threads: a tdm_astep belongs to one query; one segment runs at a time. */
#ifndef TDM_QUERY_AND_STEP_H
#define TDM_QUERY_AND_STEP_H

#include <stdint.h>

#include "common/error.h"
#include "drive/search.h"
#include "tandem.h"

/* An intermediate on the host: n candidates, `done` columns of n floats. */
typedef struct tdm_astep_mid {
    uint32_t done, n;
    uint32_t *cand;     /* [n] */
    float *cols;        /* [done * n], column j = the j-th list taken */
} tdm_astep_mid;

typedef struct tdm_astep {
    tdm_query q;        /* the finished query */
    uint32_t nt, k;
    int kind;           /* enum tdm_scoring_kind */
    float c0, c1;
    float *qw;          /* [nt] score.h's per-term factor */
    uint32_t *order;    /* [nt] term indices, shortest list first (ties: term order) */
    uint32_t *sum_col;  /* [nt] the column of term t (its position in order) */
    tdm_astep_mid mid;  /* committed */
    tdm_astep_mid next; /* a segment's, until tdm_astep_commit */
    /* accounting of the whole query, every segment */
    uint32_t launches, segments;
    uint64_t bytes_up, bytes_down;
    uint64_t carried;   /* intermediate bytes moved between devices (down + up) */
} tdm_astep;

/* Features of the rest of the query after `done` steps with n candidates
 * (for the cost model): the remaining lists' lengths. */
static inline uint32_t tdm_astep_rest_df(const tdm_astep *a, uint32_t i)
{
    return a->q.terms[a->order[i]].df;
}

/* Whether the query (finished, with its request) can run step by step:
 * ranked AND (or AND-then-OR's AND stage) of at least 2 terms. */
int tdm_astep_applies(const tdm_query *q, int algorithm);

/* a for the finished query *q (taken over: *q is left empty) with the
 * request's options; TDM_OK or the query's own error (k1/b). */
int tdm_astep_open(tdm_search *s, tdm_query *q, const tdm_search_options *o, tdm_astep *a,
                   tdm_err *err);
void tdm_astep_free(tdm_astep *a);

/* The engine device for the rest of the query after `done` steps left n
 * candidates on device dev: dev to stay. */
typedef int (*tdm_astep_decide_fn)(void *user, const tdm_astep *a, uint32_t done, uint32_t n,
                                   int dev);

/* One segment on engine device dev: uploads the committed intermediate (if
 * any), runs steps, and after each one that leaves work asks decide. Either
 * the query ends here (*moved = -1, *res the result: hits, device dev,
 * algorithm AND) or decide named another device (*moved = it, the
 * intermediate in a->next). A failure leaves a->mid as it was. Blocking. */
int tdm_astep_run(tdm_search *s, tdm_astep *a, int dev, tdm_astep_decide_fn decide, void *user,
                  int *moved, tdm_search_result **res, tdm_err *err);
/* Makes a->next the committed intermediate. */
void tdm_astep_commit(tdm_astep *a);

/* ---- plain-C references of the kernels (and_step_ref.c) */
float tdm_astep_score(float qw, uint32_t tf, uint32_t dl, int kind, float c0, float c1);
void tdm_astep_ref_lead(const uint32_t *docs, const uint32_t *freqs, uint32_t m,
                        const uint32_t *doclens, float qw, int kind, float c0, float c1,
                        uint32_t *cand, float *cols);
/* Survivors in candidate order; returns how many. */
uint32_t tdm_astep_ref_probe(const uint32_t *cand, const float *cols, uint32_t n, uint32_t stride,
                             uint32_t done, const uint32_t *docs, const uint32_t *freqs,
                             uint32_t m, const uint32_t *doclens, float qw, int kind, float c0,
                             float c1, uint32_t *out_cand, float *out_cols, uint32_t ostride);
void tdm_astep_ref_final(const float *cols, uint32_t n, uint32_t stride, uint32_t nt,
                         const uint32_t *sum_col, float *hs);

#endif
