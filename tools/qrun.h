/* Many queries in flight, for `tandem run` and `tandem bench queries`:
 * `threads` threads each take the next chunk of queries and send it, as one
 * tdm_search_batch call of up to `batch` queries, or (batch 0) as single
 * tdm_search_text / tdm_search_terms calls one after another; the answers
 * come back to the calling thread strictly in query order, whatever order
 * the chunks finish in. Threads run at most a bounded window of queries
 * ahead of the one the caller is waiting for, so memory stays bounded
 * however long the query file. With one thread nothing is started: the
 * calling thread sends the queries itself. */
#ifndef TDM_CLI_QRUN_H
#define TDM_CLI_QRUN_H

#include <stddef.h>
#include <stdint.h>

#include "tandem.h"

/* One query: `text`, or (text NULL) `nterms` weighted terms. */
typedef struct tdm_qr_query {
    const char *text;
    const tdm_search_term *terms;
    size_t nterms;
} tdm_qr_query;

/* What one query got. */
typedef struct tdm_qr_answer {
    const tdm_search_result *r; /* NULL when the query failed */
    int status;           /* TDM_OK, or the query's error code */
    const char *error;    /* the query's error message, or NULL */
    double seconds;       /* wall time of the call that answered it (for a
                             batch, the whole batch call: every query of it
                             waited that long) */
    double t_done;        /* tdm_cli_now() when that call returned */
    uint32_t calls_batch; /* queries sent in that call (1 for a single call) */
} tdm_qr_answer;

/* Called in query order on the thread that called tdm_qr_run; the answer
 * (and its result) lives only during the call. Returns 0 to go on, nonzero
 * to stop: no further query is sent or delivered. */
typedef int (*tdm_qr_sink)(void *ctx, size_t i, const tdm_qr_answer *a);

typedef struct tdm_qr_job {
    tdm_search *s;
    const tdm_qr_query *q;        /* [n] */
    size_t n;
    const tdm_search_options *opts;
    size_t batch;                 /* 0: single calls; else queries per batch call */
    unsigned threads;             /* 1 or more */
    tdm_qr_sink sink;
    void *ctx;
} tdm_qr_job;

/* Sends every query of the job and delivers its answers. *delivered (may be
 * NULL) is the number of answers the sink received. Returns 0 (per-query
 * errors are answers, not a failure of the run), or -1 after a message on
 * stderr naming `cmd` (threads or memory could not be had). */
int tdm_qr_run(const tdm_qr_job *j, const char *cmd, size_t *delivered);

#endif
