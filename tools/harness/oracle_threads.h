/* The oracle over many queries on several threads, as `tandem bench
 * queries` and `tandem-mpi bench queries` run it: each thread its own
 * oracle (harness/oracle.h: one per thread, the reader shared) over its
 * share of the queries. Each query is ranked alone, so the answers are a
 * single thread's, whatever the thread count. */
#ifndef TDM_HARNESS_ORACLE_THREADS_H
#define TDM_HARNESS_ORACLE_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "harness/oracle.h"

/* One query's answer: hits[0 .. n) (n <= the request's k), the documents
 * it matched and the seconds the call took. Called on the thread that ran
 * query q, for each query once: threads never report the same q, so a
 * callback writing q's own slots needs no lock. */
typedef void (*tdm_oracle_each_fn)(void *ctx, size_t q, const tdm_hit *hits, size_t n,
                                   uint64_t matched, double seconds);

typedef struct tdm_oracle_pass {
    const tdm_ireader *r;
    const tdm_query *q;      /* [nq] finished */
    size_t first, nq;        /* the queries run: first .. nq - 1 */
    tdm_oracle_request req;
    unsigned threads;        /* at least 1: thread t runs queries first + t,
                                first + t + threads, ... (interleaved) */
    size_t warmup;           /* per thread, its first queries run untimed and
                                unreported before (they grow the decode
                                buffers), then every one of its share */
    tdm_oracle_each_fn each;
    void *ctx;
} tdm_oracle_pass;

/* Runs the pass; returns when every thread has ended. TDM_OK, or the first
 * failing thread's error (a query's, or a thread that could not start) in
 * err: some answers may then be missing. */
int tdm_oracle_run_threads(const tdm_oracle_pass *p, tdm_err *err);

#endif
