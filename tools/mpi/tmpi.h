/* tandem-mpi (docs/MPI.md): document-partitioned shards searched by MPI
 * ranks. Every rank opens its shards (shard i on rank i % R) on its own
 * engine; rank 0 reads the queries, broadcasts them a batch at a time,
 * gathers each rank's top k (its shards' merged) and merges them: score
 * descending, global docid ascending, the whole index's top k bit for bit
 * (index/shard.h). A rank that fails, dies or stops answering ends the job
 * with an error naming it and its shards: never a hang, never a partial
 * answer.
 *
 * Files: mpi_main.c (MPI, options, dispatch), mpi_wire.c (collectives with
 * deadlines, packing), mpi_shards.c (each rank's shards, their check as one
 * split), mpi_round.c (one batch: search on a rank, merge on rank 0),
 * mpi_run.c (`run`: the TREC run), mpi_bench.c (`bench queries`: times
 * and the oracle's check), mpi_serve.c (`serve`: tandem serve's HTTP API on
 * rank 0, its requests run as rounds), mpi_terms.c (a query's terms as the
 * whole index counts them, for serve's answers). */
#ifndef TDM_TMPI_H
#define TDM_TMPI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "harness/queryfile.h"
#include "serve.h"
#include "tandem.h"

#define TMPI_MAX_SHARDS 1024

/* What every rank was asked (argv is the same on every rank). */
typedef struct tmpi_opts {
    const char *mode;          /* "run" or "bench" */
    const char *prefix;        /* PREFIX: shards PREFIX.0 .. PREFIX.<N-1> */
    const char *queries, *out, *tag, *docprefix, *oracle, *algorithms;
    tdm_qf_options qo;
    tdm_search_options so;
    uint64_t batch, limit;
    uint64_t oracle_threads;   /* bench: threads running the oracle (default 1) */
    double timeout_s, open_timeout_s;
    /* serve: tandem serve's options and limits (serve.h) */
    tdm_serve_opts serve;
    tdm_serve_limits lim;
    /* --test-fault R:kill|hang|fail@B: rank R, at its B-th batch (tests) */
    int fault_rank, fault_batch;
    char fault_kind[8];
} tmpi_opts;

/* One query as broadcast: text, or (text NULL) weighted terms. */
typedef struct tmpi_query {
    const char *text;
    tdm_search_term *terms;
    size_t nterms;
} tmpi_query;

/* One query's answer on rank 0 (merged) or on a rank (its shards'). */
typedef struct tmpi_answer {
    int status;                /* TDM_OK or the query's error */
    char *error;               /* its message (malloc'd) */
    uint32_t terms;            /* distinct known terms (largest over shards) */
    uint32_t n;
    tdm_search_hit *hits;      /* their names malloc'd, the answer's (freed with it) */
} tmpi_answer;

void tmpi_answer_free(tmpi_answer *a);

/* This rank's world. */
typedef struct tmpi_ctx {
    int rank, size;
    const tmpi_opts *o;
    uint32_t nshards;          /* N, of the whole split */
    uint32_t nmine;            /* shards this rank holds */
    uint32_t mine[TMPI_MAX_SHARDS];
    tdm_index *ix[TMPI_MAX_SHARDS];
    tdm_search *sh[TMPI_MAX_SHARDS];
    tdm_engine *engine;
    int impact;                /* the shards are of an impact index */
    uint64_t rounds;           /* batches this rank has answered */
    /* rank 0's account of the traffic */
    uint64_t bytes_out, bytes_in;
    double merge_s;
} tmpi_ctx;

/* ---- mpi_main.c */
/* Prints a message (rank 0's, or naming another rank) and keeps it as
 * tmpi_last_error's; returns 1. */
int tmpi_fail(const tmpi_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *tmpi_last_error(void);
/* Called by tmpi_abort before the job ends (serve answers what waits). */
extern void (*tmpi_before_abort)(void);

/* ---- mpi_wire.c: messages to and from every rank that rank 0 waits for at most a deadline
 * (seconds; after it the job is aborted with a message naming who has not
 * answered); other ranks wait for rank 0 without one. 0 or -1. */
int tmpi_bcast(tmpi_ctx *c, const void *buf, size_t n, double timeout_s);
/* Ranks other than 0: the next message from rank 0 (*buf malloc'd). */
int tmpi_recv(tmpi_ctx *c, char **buf, size_t *n);
/* Every rank's `len` bytes to rank 0: *all (malloc'd on rank 0) holds
 * them in rank order, lens[r] and offs[r] (size entries) each's. */
int tmpi_gather(tmpi_ctx *c, const void *buf, size_t len, double timeout_s, char **all,
                size_t *lens, size_t *offs);
/* Rank 0 ends the job after a message: every rank stops (MPI_Abort). */
void tmpi_abort(tmpi_ctx *c, int code) __attribute__((noreturn));

/* A growable byte buffer for the wire. */
typedef struct tmpi_buf {
    char *p;
    size_t n, cap;
    int nomem;
} tmpi_buf;
void tmpi_put(tmpi_buf *b, const void *v, size_t n);
void tmpi_put_u32(tmpi_buf *b, uint32_t v);
void tmpi_put_str(tmpi_buf *b, const char *s);
/* A reader over received bytes: fails (bad = 1) rather than read past. */
typedef struct tmpi_rd {
    const char *p;
    size_t n, at;
    int bad;
} tmpi_rd;
void tmpi_get(tmpi_rd *r, void *v, size_t n);
uint32_t tmpi_get_u32(tmpi_rd *r);
/* A string of the buffer (malloc'd copy), NULL if bad. */
char *tmpi_get_str(tmpi_rd *r);

/* ---- mpi_shards.c: every rank opens its shards, rank 0 checks they are
 * one split, each shard once, the rank count fits; then engines open. 0 on
 * every rank, or 1 on every rank after rank 0's message. */
int tmpi_shards_open(tmpi_ctx *c);
void tmpi_shards_close(tmpi_ctx *c);

/* ---- mpi_round.c */
/* Rank 0: queries q[0 .. n) with algorithm alg on every shard; answers
 * merged into a[0 .. n) (k each at most). 0, or aborts the job. */
int tmpi_round(tmpi_ctx *c, const tmpi_query *q, size_t n, int alg, tmpi_answer *a);
/* Rank 0: AND-then-OR (AND, and OR where the shards' AND matches fall short
 * of k together) or any other algorithm, into a[0 .. n). */
int tmpi_search(tmpi_ctx *c, const tmpi_query *q, size_t n, int alg, tmpi_answer *a);
/* The same two with a round's own options (algorithm, k, scoring, k1, b:
 * what the message carries; the rest are the command line's). */
int tmpi_round_o(tmpi_ctx *c, const tmpi_query *q, size_t n, const tdm_search_options *o,
                 tmpi_answer *a);
int tmpi_search_o(tmpi_ctx *c, const tmpi_query *q, size_t n, const tdm_search_options *o,
                  tmpi_answer *a);
/* Rank 0: tells every rank to stop (after the last batch, or a failure),
 * with the exit status they are to end with. */
int tmpi_stop(tmpi_ctx *c, int status);
/* Ranks other than 0: answer batches until told to stop. 0 or 1. */
int tmpi_serve_rounds(tmpi_ctx *c);

/* ---- the modes, on rank 0 */
/* The query file (--limit applied; weighted terms converted). 0 or 1. */
int tmpi_load_queries(tmpi_ctx *c, tdm_qfile **qf, tmpi_query **q, size_t *n);
void tmpi_free_queries(tdm_qfile *qf, tmpi_query *q, size_t n);
int tmpi_run(tmpi_ctx *c);
int tmpi_bench(tmpi_ctx *c);
/* mpi_serve.c: tandem serve's HTTP API over every shard. */
int tmpi_serve(tmpi_ctx *c);

/* ---- mpi_terms.c, rank 0 (serve): a query's terms as the unsharded index
 * counts them, from rank 0's first shard (a shard's search counts only the
 * terms with postings in it). */
typedef struct tmpi_terms tmpi_terms;
/* 0, or 1 after a message. */
int tmpi_terms_open(const tmpi_ctx *c, tmpi_terms **out);
void tmpi_terms_close(tmpi_terms *t);
/* Sets r->terms and r->unknown to the whole index's counts for q, and an
 * AUTO r->algorithm to the whole index's choice; leaves r as it is where q
 * cannot be built (the shards failed it too). Thread-safe. */
void tmpi_terms_whole(tmpi_terms *t, const tmpi_query *q, tdm_search_result *r);

#endif
