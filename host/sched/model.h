/* The cost model of one lane (device): a query's predicted time on it from
 * the query's features, per algorithm, fitted online by least squares.
 *
 * Features (Wu 2010; Ding 2009): the shortest and second-shortest list, the
 * sum of the lengths, the number of terms, k, and Wu's UBOC = LOS x sum over
 * the other lists of log2 L (an upper bound of a binary-search intersection's
 * comparisons), each scaled to about 1 for typical queries, plus a constant.
 * Each algorithm has its own fit; a pooled fit over all algorithms stands in
 * until an algorithm has enough observations, and a fixed prior by device
 * kind until the pooled one has.
 *
 * The fit keeps X'X and X'y with exponential forgetting (recent queries
 * weigh more; the device's speed drifts as caches and clocks do) and solves
 * the ridge-regularised normal equations by Cholesky after each observation.
 *
 * Threads: a model is plain data; its lane's scheduler lock guards it. */
#ifndef TDM_SCHED_MODEL_H
#define TDM_SCHED_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "query/query.h"

#define TDM_MODEL_NF 7
#define TDM_MODEL_NALG 7 /* by enum tdm_algorithm; slot 0 (AUTO) is the pooled fit */

typedef struct tdm_qfeat {
    double x[TDM_MODEL_NF];
    uint64_t los;       /* length of the shortest list */
} tdm_qfeat;

typedef struct tdm_model_fit {
    double xtx[TDM_MODEL_NF][TDM_MODEL_NF];
    double xty[TDM_MODEL_NF];
    double n;           /* observations, with forgetting */
    double beta[TDM_MODEL_NF];
    int solved;
} tdm_model_fit;

typedef struct tdm_model {
    int gpu;            /* the prior: GPU or CPU */
    tdm_model_fit fit[TDM_MODEL_NALG];
    uint64_t observed;  /* observations ever (stored ones included) */
} tdm_model;

/* The features of the finished query q asked for its top k. */
void tdm_qfeat_from(const tdm_query *q, uint32_t k, tdm_qfeat *f);
/* The same from the n list lengths len[] (the rest of a query run step by
 * step: its candidates and the lists left). */
void tdm_qfeat_from_lens(const uint64_t *len, size_t n, uint32_t k, tdm_qfeat *f);

void tdm_model_init(tdm_model *m, int gpu);
/* Predicted seconds of algorithm alg (enum tdm_algorithm, not AUTO) for f; > 0. */
double tdm_model_predict(const tdm_model *m, int alg, const tdm_qfeat *f);
/* Seconds the prior by device kind gives f, whatever the fits: a figure
 * from the query's postings that no fit lowers (the run watchdog's
 * allowance for the queries of a batch, watchdog.c). */
double tdm_model_prior(const tdm_model *m, const tdm_qfeat *f);
/* Adds an observed run of alg for f that took `seconds`. */
void tdm_model_observe(tdm_model *m, int alg, const tdm_qfeat *f, double seconds);

/* The model file of a device: <dir>/sched-<hash of the device's identity and
 * its discovery index (two identical devices are two lanes)>.model
 * into out (size n); 0 when dir is "" or the path does not fit. */
int tdm_model_path(const char *dir, const char *platform, const char *device,
                   const char *driver, const char *version, int index, char *out, size_t n);
/* Writes m to path (a temporary file renamed over it); TDM_ERR_IO naming it. */
int tdm_model_save(const tdm_model *m, const char *path, tdm_err *err);
/* Reads path into m; 1 when it held a valid model, 0 otherwise (m untouched). */
int tdm_model_load(tdm_model *m, const char *path);

#endif
