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
 * whole index counts them, for serve's answers), mpi_probe.c (a probe of
 * every rank's shards between rounds), mpi_health.c and mpi_metrics.c
 * (serve's /health and /metrics from the probes). */
#ifndef TDM_TMPI_H
#define TDM_TMPI_H

#include <stdatomic.h>
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
    uint64_t round_queries;    /* queries the rounds carried */
    double round_s;            /* the rounds' wall time */
    /* rank 0: 1 for each rank whose answer the exchange under way still
     * waits for (serve's /health reads them from its own threads) */
    atomic_uchar waiting[TMPI_MAX_SHARDS];
    /* serve: when this rank's shards were open (tdm_cli_now()), and the
     * batch sizes of their answers by device (nmine rows, mpi_probe.c) */
    double opened_at;
    tdm_serve_histo (*batch_sizes)[TDM_SCHED_MAX_LANES];
} tmpi_ctx;

/* What a message from rank 0 asks (its first word). */
enum { TMPI_OP_STOP = 0, TMPI_OP_BATCH = 1, TMPI_OP_PROBE = 2 };

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
/* Rank 0, before sending an exchange's message: every other rank is
 * waited for (c->waiting) until tmpi_gather has its answer. */
void tmpi_expect_all(tmpi_ctx *c);

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
/* Rank 0: rank r's answer begins with its status: 0, or 1 after naming
 * the rank and its error ("rank R failed: PREFIX.S: ..."). */
int tmpi_read_status(tmpi_ctx *c, int r, tmpi_rd *rd);

/* ---- mpi_probe.c: what every rank's shards can do, asked between rounds
 * (serve's /health and /metrics): a rank answers at once, since it waits
 * for rank 0's next message while rank 0 is between rounds; one that does
 * not is named by tmpi_gather's deadline as in a round. */
typedef struct tmpi_shard_state {
    uint32_t shard;            /* its number in the split */
    int lanes, alive;          /* its scheduler's lanes, and those alive */
    char *error;               /* why it cannot answer (malloc'd), NULL when it can */
    tdm_serve_shard *stats;    /* its counters (a probe with stats), else NULL */
} tmpi_shard_state;

typedef struct tmpi_rank_state {
    long pid;
    char host[256];
    uint64_t rounds;           /* batches it has answered */
    double up;                 /* seconds since its shards opened */
    uint32_t nshards;
    tmpi_shard_state *sh;
} tmpi_rank_state;

/* One probe's answers, read by several threads (refs, atomic). */
typedef struct tmpi_snap {
    atomic_int refs;
    double at;                 /* tdm_cli_now() when it ended */
    double took;               /* its round trip, seconds */
    int stats;                 /* the shards' counters came too */
    int size;
    tmpi_rank_state *rank;     /* size of them */
} tmpi_snap;

/* Rank 0: every rank's state (*out, one reference). 0, or -1 after a
 * message (a rank that does not answer within --rank-timeout ends the
 * job, as in a round). */
int tmpi_probe(tmpi_ctx *c, int stats, tmpi_snap **out);
/* A rank's answer to a probe (the message's rest in rd). */
void tmpi_probe_answer(tmpi_ctx *c, tmpi_rd *rd, tmpi_buf *b);
tmpi_snap *tmpi_snap_ref(tmpi_snap *s);
void tmpi_snap_unref(tmpi_snap *s); /* accepts NULL */
/* The batch sizes of shard s's answers res[0 .. nq) (serve). */
void tmpi_probe_observe(tmpi_ctx *c, uint32_t s, tdm_search_result *const *res, uint32_t nq);

/* ---- the modes, on rank 0 */
/* The query file (--limit applied; weighted terms converted). 0 or 1. */
int tmpi_load_queries(tmpi_ctx *c, tdm_qfile **qf, tmpi_query **q, size_t *n);
void tmpi_free_queries(tdm_qfile *qf, tmpi_query *q, size_t n);
int tmpi_run(tmpi_ctx *c);
int tmpi_bench(tmpi_ctx *c);
/* mpi_serve.c: tandem serve's HTTP API over every shard. */
int tmpi_serve(tmpi_ctx *c);

/* ---- mpi_serve.c, for /health and /metrics (HTTP threads) */
#define TMPI_STATUS_WAIT_S 1.0 /* the most /health or /metrics waits for a probe */
enum { TMPI_IDLE, TMPI_ROUND, TMPI_PROBING };
/* The broker's counters as of its last round or probe. */
typedef struct tmpi_counters {
    uint64_t requests, request_failures, rounds, round_queries, probes, bytes_out, bytes_in;
    double round_s, merge_s;
} tmpi_counters;
typedef struct tmpi_view {
    int fresh;                 /* a probe ended while waiting */
    tmpi_snap *last;           /* the latest probe's (a reference, or NULL) */
    tmpi_snap *last_stats;     /* the latest with the shards' counters (or NULL) */
    char *probe_error;         /* the latest probe's failure (malloc'd), else NULL */
    int phase;                 /* what rank 0's main thread is doing now */
    double phase_s;            /* for how long */
    int closed;                /* no more rounds: why */
    char why[1024];
    tmpi_counters cnt;
} tmpi_view;
/* Asks rank 0's main thread for a probe (stats: with the shards'
 * counters) and waits up to wait_s for one to end (wait_s 0: none asked). */
void tmpi_serve_view(int stats, double wait_s, tmpi_view *v);
void tmpi_view_free(tmpi_view *v);
/* Whether rank r has been silent to a probe under way for half the wait
 * or more (an idle rank answers one in microseconds). */
int tmpi_silent(const tmpi_ctx *c, const tmpi_view *v, int r);
/* mpi_health.c, mpi_metrics.c: the backend's hooks (ctx: the tmpi_ctx). */
json_t *tmpi_health(void *ctx, double uptime, int *status);
size_t tmpi_metrics_shards(void *ctx, tdm_serve_shard **out);
void tmpi_metrics_text(void *ctx, FILE *f);

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
