/* `tandem bench queries`: the latency of search algorithms on every device,
 * every answer checked against the oracle, the oracle timed in the same run.
 *
 * Files: cmd_bench_queries.c (options, queries, the timed loop and the
 * checks), cmd_bench_qoracle.c (the oracle's answers and its time),
 * cmd_bench_qout.c (statistics, table, CSV), cmd_bench_qplot.c (the CDF
 * plot). */
#ifndef TDM_CMD_BENCH_QUERIES_H
#define TDM_CMD_BENCH_QUERIES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "index/reader.h"
#include "query/query.h"

int tdm_bench_queries(int argc, char **argv);

/* One measured series: an algorithm at one k on one device, or the oracle
 * (device -1) with one matching mode. */
typedef struct tdm_bq_series {
    char algorithm[24];   /* tdm_algorithm_name(algo), or "oracle-or" / "oracle-and" */
    int algo;             /* enum tdm_algorithm; -1 for the oracle */
    int color;            /* position in the requested algorithm list (plot colour);
                             -1 for the OR oracle, -2 for the AND oracle */
    uint32_t k;
    int device;           /* engine device index; -1: the host oracle */
    char device_name[64];
    double *us;           /* [n] latency of each query, microseconds */
    size_t n;             /* queries timed */
    double mean, p50, p90, p99, max;          /* set by tdm_bq_stats */
    double launches, bytes_up, bytes_down;    /* means per query */
    uint64_t mismatches;  /* answers that differ from the oracle's */
} tdm_bq_series;

typedef struct tdm_bq_set {
    tdm_bq_series *v;
    size_t n, cap;
} tdm_bq_set;

/* A new zeroed series with room for n latencies; NULL out of memory. The
 * set owns it (tdm_bq_set_free). */
tdm_bq_series *tdm_bq_add(tdm_bq_set *s, size_t n);
void tdm_bq_set_free(tdm_bq_set *s);

/* Sorts r->us and fills mean and the percentiles (nearest rank). */
void tdm_bq_stats(tdm_bq_series *r);

void tdm_bq_print_header(FILE *f);
void tdm_bq_print_row(FILE *f, const tdm_bq_series *r);
/* Every series as CSV (columns in cmd_bench_qout.c) / the latency CDFs as
 * SVG, one panel per k; both through the output guard (fsutil.h). Return 0,
 * or -1 after a message on stderr. */
int tdm_bq_write_csv(const char *path, const tdm_bq_set *s);
int tdm_bq_write_svg(const char *path, const tdm_bq_set *s, const char *title);

/* The oracle's exact answers at the largest k asked for (the top k of a
 * smaller k is their prefix: the order, score then docid, is total), in the
 * float precision every device must match bit for bit, for OR and AND. */
typedef struct tdm_bq_answers {
    uint32_t k;
    uint32_t *n;          /* [nq] hits */
    uint32_t *doc;        /* [nq * k] */
    float *score;         /* [nq * k] */
    uint64_t *matched;    /* [nq] documents matched */
} tdm_bq_answers;

void tdm_bq_answers_free(tdm_bq_answers *a);

/* What the oracle pass needs. */
typedef struct tdm_bq_oracle_job {
    const tdm_ireader *r;
    const tdm_query *q;   /* [nq] finished, each with at least one term */
    size_t nq;
    const uint32_t *ks;   /* [nk] ascending */
    size_t nk;
    int match;            /* enum tdm_match */
    unsigned threads;     /* each with its own oracle, queries interleaved */
    size_t warmup;        /* queries run untimed first, per thread */
} tdm_bq_oracle_job;

/* Runs the oracle on every query at every k (the largest first), timing
 * each call: one series per k appended to `set`, and the answers at the
 * largest k in *ans (a smaller k's answers are checked to be their prefix).
 * Returns 0, or -1 after a message on stderr. */
int tdm_bq_oracle_run(const tdm_bq_oracle_job *job, tdm_bq_set *set, tdm_bq_answers *ans);

#endif
