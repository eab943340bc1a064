/* `tandem bench queries`: the latency and throughput of search algorithms
 * on every device, single queries and batches, every answer checked against
 * the oracle, the oracle timed in the same run.
 *
 * Files: cmd_bench_queries.c (options, queries, the oracle pass),
 * cmd_bench_qseries.c (the device series: timed runs through qrun.h and the
 * checks), cmd_bench_qoracle.c (the oracle's answers and its time),
 * cmd_bench_qout.c (statistics, table, CSV), cmd_bench_qplot.c (the CDF
 * plot), cmd_bench_qtput.c (throughput against batch size plot),
 * cmd_bench_qcache.c (the oracle-answer cache file, --oracle-cache),
 * cmd_bench_qperq.c (a row per timed query, --per-query). */
#ifndef TDM_CMD_BENCH_QUERIES_H
#define TDM_CMD_BENCH_QUERIES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/fsutil.h"
#include "index/reader.h"
#include "query/query.h"
#include "query/score.h"
#include "harness/queryfile.h"
#include "tandem.h"

int tdm_bench_queries(int argc, char **argv);

/* What --per-query keeps of one timed query beside its latency. */
typedef struct tdm_bq_qrec {
    double us;            /* latency, microseconds (copied by tdm_bq_stats) */
    int ran;              /* tdm_search_result.algorithm (what ran) */
    int variant;          /* tdm_search_result.variant */
    uint32_t partitions;  /* tdm_search_result.partitions: split across them (0: whole) */
} tdm_bq_qrec;

/* One measured series: an algorithm at one k on one device, sent as single
 * queries from `threads` threads or as batches of `batch` queries, or the
 * oracle (device -1) with one matching mode. */
typedef struct tdm_bq_series {
    char algorithm[24];   /* tdm_algorithm_name(algo), or "oracle-or" / "oracle-and" */
    int algo;             /* enum tdm_algorithm; -1 for the oracle */
    int color;            /* position in the requested algorithm list (plot colour);
                             -1 for the OR oracle, -2 for the AND oracle */
    uint32_t k;
    int device;           /* engine device index; -1: the host oracle; the
                             engine's device count: spread (below) */
    int spread;           /* enum tdm_policy: the series' queries were left
                             unpinned for the scheduler to place over every
                             lane that policy allows (--spread); 0: pinned */
    char device_name[64];
    double *us;           /* [n] latency of each query, microseconds */
    size_t n;             /* queries timed */
    double mean, p50, p90, p99, max;          /* set by tdm_bq_stats */
    double launches, bytes_up, bytes_down;    /* means per query */
    uint64_t mismatches;  /* answers that differ from the oracle's */
    uint32_t batch;       /* queries per tdm_search_batch call; 0: single calls */
    unsigned threads;     /* threads sending calls at once */
    double qps;           /* queries answered per second of wall time */
    double shared;        /* mean queries that shared a query's launches
                             (tdm_search_result.batch) */
    double queue_us;      /* mean time queued in the scheduler before a lane
                             started the query (tdm_search_result.queue_seconds) */
    uint64_t sched_batches; /* runs of several queries the scheduler's lanes made
                             (tdm_sched_stats.batches; 0 for batch calls,
                             which bypass it) */
    double window_us;     /* lanes' wait in the batching window per query */
    double cpu_us;        /* the process's CPU time (all its threads, the device's
                             PoCL threads among them) per query timed: the work a
                             query costs, which other load on the machine changes
                             less than the wall clock */
    int cdf;              /* drawn in the latency CDF plot */
    size_t split;         /* queries answered on several partitions at once
                             (tdm_search_result.partitions > 0) */
    tdm_bq_qrec *perq;    /* [n] per query in query order, for --per-query (NULL: not kept) */
} tdm_bq_series;

typedef struct tdm_bq_set {
    tdm_bq_series *v;
    size_t n, cap;
    int per_query;        /* give each new series a perq array */
} tdm_bq_set;

/* A new zeroed series with room for n latencies (and n perq records when
 * s->per_query); NULL out of memory. The set owns it (tdm_bq_set_free). */
tdm_bq_series *tdm_bq_add(tdm_bq_set *s, size_t n);
void tdm_bq_set_free(tdm_bq_set *s);

/* Sorts r->us and fills mean and the percentiles (nearest rank); first,
 * with r->perq, copies r->us[0, n) (in query order until then) into it. */
void tdm_bq_stats(tdm_bq_series *r);

void tdm_bq_print_header(FILE *f);
void tdm_bq_print_row(FILE *f, const tdm_bq_series *r);
/* An output of the benchmark through the output guard (fsutil.h): open
 * returns 0 or -1 after a message on stderr; commit renames it over path
 * (only when complete), returns 0 or -1 after a message. */
int tdm_bq_open(tdm_outfile *out, const char *path);
int tdm_bq_commit(tdm_outfile *out);
/* Every series as CSV (columns in cmd_bench_qout.c) / the latency CDFs as
 * SVG, one panel per k; both through the output guard (fsutil.h). Return 0,
 * or -1 after a message on stderr. */
int tdm_bq_write_csv(const char *path, const tdm_bq_set *s);
int tdm_bq_write_svg(const char *path, const tdm_bq_set *s, const char *title);
/* Throughput against queries in flight as SVG: a panel per k and device, a
 * line per algorithm, solid for batches (x = batch size), dashed for single
 * queries (x = threads sending them). */
int tdm_bq_write_tput_svg(const char *path, const tdm_bq_set *s, const char *title);

/* The oracle's exact answers at the largest k asked for (the top k of a
 * smaller k is their prefix: the order, score then docid, is total, see
 * harness/oracle.h; test_oracle checks it), in the float precision every
 * device must match bit for bit, for OR and AND. */
typedef struct tdm_bq_answers {
    uint32_t k;
    uint32_t *n;          /* [nq] hits */
    uint32_t *doc;        /* [nq * k] */
    float *score;         /* [nq * k] */
    uint64_t *matched;    /* [nq] documents matched */
} tdm_bq_answers;

void tdm_bq_answers_free(tdm_bq_answers *a);

/* 0 if r is the oracle's answer to query q at k, taken from and_ans (ranked
 * AND, and AND-then-OR where the AND matched k) or or_ans (the others); else 1 with
 * the first difference described into why[cap]. */
int tdm_bq_answers_check(const tdm_bq_answers *and_ans, const tdm_bq_answers *or_ans,
                         const tdm_search_result *r, size_t q, uint32_t k, char *why, size_t cap);

struct tdm_bq_cache;

/* What the oracle pass needs. */
typedef struct tdm_bq_oracle_job {
    const tdm_ireader *r;
    const tdm_query *q;   /* [nq] finished, each with at least one term */
    size_t nq;
    uint32_t k;           /* the largest k asked for */
    int match;            /* enum tdm_match */
    tdm_score_params sp;  /* the scoring the devices are asked for */
    unsigned threads;     /* each with its own oracle, queries interleaved */
    size_t warmup;        /* queries run untimed first, per thread */
    struct tdm_bq_cache *cache; /* answers of earlier runs (NULL: none) */
    const uint64_t *qhash;      /* [nq] tdm_bq_query_hash, with a cache */
    double *us;           /* [nq] out: each query's time in query order (NULL: not kept) */
} tdm_bq_oracle_job;

/* Runs the oracle once per query at k (a smaller k's answers are the
 * prefix), timing each call: one series appended to `set`, the answers in
 * *ans. Queries the cache holds are not run: their answers and the time
 * the run that computed them measured come from it. Returns the number of
 * queries run (not cached), or -1 after a message on stderr. */
long tdm_bq_oracle_run(const tdm_bq_oracle_job *job, tdm_bq_set *set, tdm_bq_answers *ans);


/* ---- the oracle-answer cache (cmd_bench_qcache.c)
 *
 * A file of the oracle's answers (top k, float scores, matches, the time
 * of the call) per query and matching mode, so that a later run on the same
 * index and queries (a second device command on a warm machine) checks its
 * answers without running the oracle again. Keyed by the index's identity
 * (XXH64 of its header and section table, which carry every section's
 * checksum), k, the scoring and its parameters, and per entry the query's
 * position and a hash of its terms and weights; the file ends with an XXH64
 * of all of it. A file whose key differs, or that is damaged, is refused
 * with a message naming it and what differs, and left as it is. */
typedef struct tdm_bq_cache tdm_bq_cache;

/* XXH64 of the finished query's term ids and weights. */
uint64_t tdm_bq_query_hash(const tdm_query *q);
/* Opens `path` for an index file, k and scoring: loaded if it exists (and
 * is for them), else empty. Returns 0, or -1 after a message. */
int tdm_bq_cache_open(const char *path, const char *index_path, uint32_t k,
                      const tdm_score_params *sp, tdm_bq_cache **out);
/* The answers the cache has for `match` of queries [0, nq) (qhash[i] the
 * run's query i), into ans (allocated at the run's k) and us[]: returns
 * how many leading queries it served; -1 after a message when an entry's
 * query is not the run's. */
long tdm_bq_cache_get(tdm_bq_cache *c, int match, const uint64_t *qhash, size_t nq,
                      tdm_bq_answers *ans, double *us);
/* Writes the file anew: the run's answers (either may be NULL / have no
 * entries), plus the entries the file held beyond the run's queries or for a
 * mode the run did not ask. Atomic (a temporary renamed over it). 0 or -1
 * after a message. */
int tdm_bq_cache_write(tdm_bq_cache *c, const uint64_t *qhash, size_t nq,
                       const tdm_bq_answers *ans_or, const double *us_or,
                       const tdm_bq_answers *ans_and, const double *us_and);
void tdm_bq_cache_free(tdm_bq_cache *c);

/* ---- the run as a whole (cmd_bench_queries.c), for the device series */

#define TDM_BQ_MAX_ALGOS 16
#define TDM_BQ_MAX_LIST 16  /* values of -k, --batch, --threads */

typedef struct tdm_bq_opts {
    const char *index, *queries, *devices, *csv, *plot, *tput_plot;
    const char *oracle_cache; /* --oracle-cache FILE, or NULL */
    const char *per_query; /* --per-query FILE, or NULL */
    const char *build_options; /* --build-options S: extra kernel build options, or NULL */
    int oracle_only;      /* --oracle-only: no device series */
    int spread;           /* --spread POLICY (enum tdm_policy): series over
                             every lane together instead of one a device; 0 */
    double k1, b;         /* BM25 parameters (--k1, --b) */
    uint64_t limit;       /* 0: every query */
    int algos[TDM_BQ_MAX_ALGOS];
    size_t nalgos;
    uint32_t ks[TDM_BQ_MAX_LIST];       /* ascending */
    size_t nk;
    uint32_t batches[TDM_BQ_MAX_LIST];  /* ascending; none: no batched series */
    size_t nbatches;
    uint32_t threads[TDM_BQ_MAX_LIST];  /* of the single-query series, ascending */
    size_t nthreads;
    uint64_t batch_threads; /* threads sending batches */
    uint64_t warmup, oracle_threads;
    double budget;        /* seconds of timed queries a series may take; 0: no limit */
    tdm_qf_options qo;
} tdm_bq_opts;

/* The queries of a file that have at least one term in the index, as bench
 * queries and bench load read them. */
typedef struct tdm_bq_queries {
    tdm_qfile *qf;
    size_t nq;            /* usable queries */
    size_t *pos;          /* [nq] position in qf */
    tdm_query *q;         /* [nq] for the oracle */
    tdm_search_term **terms; /* [nq] weighted queries' terms, NULL for text */
    tdm_search_query *sq; /* [nq] as the search calls take them */
    size_t empty;         /* queries without a known term, left out */
} tdm_bq_queries;

/* Reads the first `limit` (0: all) queries of `path` into *s (zeroed before)
 * through r's tokenizer and lexicon, and says on stderr how many are usable.
 * 0, or 1 after a message naming cmd, the file and the query. */
int tdm_bq_queries_load(tdm_bq_queries *s, const char *cmd, const char *path,
                        const tdm_qf_options *qo, uint64_t limit, const tdm_ireader *r,
                        const char *index);
void tdm_bq_queries_free(tdm_bq_queries *s);

/* A row per timed query of every series of s (queries qs), with the query's
 * position in the file and its features (cmd_bench_qperq.c lists the
 * columns), through the output guard. 0, or -1 after a message on stderr. */
int tdm_bq_write_perq(const char *path, const tdm_bq_set *s, const tdm_bq_queries *qs);

/* The queries that have at least one term in the index, ready for both sides. */
typedef struct tdm_bq {
    tdm_bq_opts o;
    const tdm_ireader *r;
    tdm_bq_queries qs;
    uint64_t *qhash;      /* [nq] tdm_bq_query_hash, with --oracle-cache */
    tdm_bq_answers ans_or, ans_and;
    double *us_or, *us_and; /* the oracle series' times in query order (for the cache) */
    tdm_bq_set set;
    uint64_t mismatches;
} tdm_bq;

/* With several thread counts or batch sizes: a table of queries per second,
 * a line per algorithm, k and device, a column per mode, and the best mode's
 * speed-up over the first single-query series. */
void tdm_bq_print_tput(FILE *f, const tdm_bq_set *s, const tdm_bq_opts *o);

/* Every series of every algorithm, k, mode and device of b->o on the
 * engine's devices, appended to b->set and printed as they finish; answers
 * checked against b->ans_*. Returns 0, or 1 after a message. */
int tdm_bq_run_devices(tdm_bq *b, tdm_index *ix);

#endif
