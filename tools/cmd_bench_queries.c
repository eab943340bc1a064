/* `tandem bench queries INDEX --queries FILE`: per algorithm, k and device,
 * the latency of single queries one after another (wall clock around each
 * tdm_search_* call, after a warm-up), and with --threads and --batch of many
 * queries in flight (queries per second, the latency of each query's call),
 * kernel launches and bytes moved per query, and every answer checked against
 * the oracle, which is timed in the same run (cmd_bench_queries.h lists the
 * files). This file: options, queries, the oracle pass, outputs. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_bench_queries.h"
#include "common/fsutil.h"
#include "index/index_priv.h"
#include "index/tokpool.h"
#include "harness/oracle.h"
#include "harness/queryfile.h"
#include "tandem.h"

static const char C[] = "bench queries";

#define BATCH_MAX 65536
#define THREADS_MAX 1024

typedef tdm_bq_opts opts;
typedef tdm_bq bq;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: tandem bench queries INDEX --queries FILE [options]\n"
        "  Latency of single queries, one after another (wall clock around each search\n"
        "  call, after a warm-up), for every algorithm, k and device of the engine: mean,\n"
        "  p50, p90, p99, max; queries per second; kernel launches and bytes moved\n"
        "  host<->device per query. With --threads, single queries from several threads\n"
        "  at once (the engine may batch them: the 'shared' column); with --batch, series\n"
        "  of tdm_search_batch calls of N queries (a query's latency is its batch call's).\n"
        "  Every answer is checked against the exhaustive host oracle (the same documents\n"
        "  in the same order, the same float scores bit for bit); the oracle is timed in\n"
        "  the same run. A mismatch makes the exit status 1. BM25 (default 1.2, 0.75).\n"
        "  Queries without a term in the index are left out (and counted).\n"
        "options:\n"
        "  --queries FILE     id:text lines, id<TAB>text, TREC topics, SMART, JSON lines\n"
        "  --format F         auto (default), colon, tab, trec, smart, jsonl,\n"
        "                     tokens (id<TAB>terms, repeated: the default for\n"
        "                     colon and tab lines on an impact index)\n"
        "  --fields LIST      TREC topics: title,desc,narr (title)\n"
        "  --limit N          the first N queries of the file (default: all)\n"
        "  --algorithms LIST  comma-separated: or, and, and_or, wand, bmw, maxscore, auto,\n"
        "                     or all (default: or,and,and_or,wand,bmw,maxscore)\n"
        "  -k LIST            comma-separated k, 1..10000 (default 10,1000)\n"
        "  --devices SPEC     as TANDEM_DEVICES (default: TANDEM_DEVICES, else all)\n"
        "  --spread POLICY    instead of a series a device, one series over all the\n"
        "                     devices together: queries and batches unpinned, placed\n"
        "                     by the scheduler under POLICY (gpu-only, hybrid, ...);\n"
        "                     a batch call is split over the lanes (several GPUs);\n"
        "                     with TANDEM_PARTITION=split a long single query runs on\n"
        "                     every device's shard at once (docs/PARTITION.md);\n"
        "                     each series' work a lane (queries, runs, share of\n"
        "                     the series' time busy) goes to stderr\n"
        "  --threads LIST     single-query series with T threads sending queries at\n"
        "                     once, for each T of the list, 1..1024 (default 1)\n"
        "  --batch LIST       also a series of batch calls of N queries for each N of\n"
        "                     the list, 1..65536 (e.g. 1,8,64,512; default none)\n"
        "  --batch-threads T  threads sending batch calls at once (default 1)\n"
        "  --warmup N         queries run untimed before each series (default 100; a\n"
        "                     batched series at least a batch a sender thread)\n"
        "  --budget S         seconds of timed queries a series may take: a slow device\n"
        "                     stops early, on the first queries (the table's count),\n"
        "                     at the end of a batch call\n"
        "  --oracle-threads N threads running the oracle, each on its share of the\n"
        "                     queries one at a time (default 1); the oracle runs once a\n"
        "                     query and matching mode, at the largest k (a smaller k's\n"
        "                     answer is its prefix), and its row shows that k\n"
        "  --oracle-cache FILE  keep the oracle's answers (and times) in FILE: a later\n"
        "                     run on the same index, queries, k and scoring reads them\n"
        "                     instead of running the oracle (the row says 'cached');\n"
        "                     a file for another index, k or scoring, or damaged, is\n"
        "                     refused and left alone\n"
        "  --oracle-only      run (or read) the oracle only, no device series\n"
        "  --k1 X, --b Y      BM25 parameters (default 1.2, 0.75)\n"
        "  --build-options S  extra kernel build options, for experiments (e.g.\n"
        "                     -DTDM_SR_PRIV=0: the range kernels' cursors in global\n"
        "                     memory); the answers are checked as always\n"
        "  --csv FILE         every series as CSV\n"
        "  --per-query FILE   a CSV row per timed query of every series (the oracle's\n"
        "                     too; warm-up queries are not rows): the series (algorithm,\n"
        "                     k, device, mode, batch, threads), the query's 0-based\n"
        "                     position among the file's queries (the same in every run\n"
        "                     on the same file) and id, latency_us (the summary's: of a\n"
        "                     batched series, the batch call's wall time for each of its\n"
        "                     queries), the query's features (distinct known terms; the\n"
        "                     shortest, second-shortest and longest list and their sum;\n"
        "                     Wu's UBOC as the scheduler computes it), the algorithm\n"
        "                     and variant that answered, and the partitions it ran on\n"
        "                     at once (TANDEM_PARTITION=split or on; 0: whole)\n"
        "  --plot FILE.svg    the latency distribution (CDF) of the single-query series\n"
        "                     of the fewest threads, one panel per k\n"
        "  --throughput-plot FILE.svg  queries per second against batch size (and\n"
        "                     threads of single queries), a panel per k and device\n"
        "Progress goes to stderr, the table to stdout.\n");
}

static int parse_algos(const char *v, opts *o)
{
    static const int all[] = {TDM_ALGO_OR,  TDM_ALGO_AND,      TDM_ALGO_AND_OR, TDM_ALGO_WAND,
                              TDM_ALGO_BMW, TDM_ALGO_MAXSCORE, TDM_ALGO_AUTO};
    o->nalgos = 0;
    if (!strcmp(v, "all")) {
        memcpy(o->algos, all, sizeof all);
        o->nalgos = sizeof all / sizeof *all;
        return 0;
    }
    char buf[256];
    if (!*v || strlen(v) >= sizeof buf)
        return tdm_cli_fail(C, "--algorithms '%s': expected a comma-separated list", v);
    strcpy(buf, v);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int a;
        if (tdm_algorithm_parse(t, &a) != TDM_OK)
            return tdm_cli_fail(C, "--algorithms: %s", tdm_last_error());
        for (size_t i = 0; i < o->nalgos; i++)
            if (o->algos[i] == a)
                return tdm_cli_fail(C, "--algorithms: '%s' given twice", t);
        if (o->nalgos == TDM_BQ_MAX_ALGOS)
            return tdm_cli_fail(C, "--algorithms: too many");
        o->algos[o->nalgos++] = a;
    }
    return o->nalgos ? 0 : tdm_cli_fail(C, "--algorithms '%s': no algorithm", v);
}

/* A comma-separated list of distinct whole numbers in [lo, hi] for option
 * `opt`, kept ascending in out[*n]. */
static int parse_list(const char *opt, const char *v, uint64_t lo, uint64_t hi, uint32_t *out,
                      size_t *n)
{
    char buf[256];
    *n = 0;
    if (!*v || strlen(v) >= sizeof buf || v[strlen(v) - 1] == ',')
        return tdm_cli_fail(C, "%s '%s': expected a comma-separated list of numbers", opt, v);
    strcpy(buf, v);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        uint64_t x;
        if (tdm_cli_uint(C, opt, t, lo, hi, &x))
            return 1;
        if (*n == TDM_BQ_MAX_LIST)
            return tdm_cli_fail(C, "%s: at most %d values", opt, TDM_BQ_MAX_LIST);
        size_t i = (*n)++;
        for (; i > 0 && out[i - 1] > x; i--) /* keep ascending */
            out[i] = out[i - 1];
        if (i > 0 && out[i - 1] == x)
            return tdm_cli_fail(C, "%s: %s given twice", opt, t);
        out[i] = (uint32_t)x;
    }
    return *n ? 0 : tdm_cli_fail(C, "%s '%s': no value", opt, v);
}

static int parse_ks(const char *v, opts *o)
{
    return parse_list("-k", v, 1, TDM_SEARCH_K_MAX, o->ks, &o->nk);
}

/* Whether a file can be made beside output `path` (a temporary, removed at
 * once), so that a missing or read-only directory fails before a long run,
 * not after it. 0, or 1 after a message. */
static int probe(const char *opt, const char *path)
{
    tdm_outfile out;
    tdm_err err = {0};
    if (tdm_outfile_open(&out, path, &err) != TDM_OK) {
        tdm_cli_fail(C, "%s: %s", opt, tdm_err_msg(&err));
        tdm_err_clear(&err);
        return 1;
    }
    tdm_outfile_abort(&out);
    return 0;
}

/* 0 parsed, -1 --help printed, or the exit status after an error message. */
static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){.warmup = 100, .oracle_threads = 1, .batch_threads = 1,
                .k1 = TDM_BM25_K1_DEFAULT, .b = TDM_BM25_B_DEFAULT,
                .threads = {1}, .nthreads = 1, .qo = {TDM_QF_AUTO, 0, 0}};
    parse_algos("or,and,and_or,wand,bmw,maxscore", o);
    parse_ks("10,1000", o);
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return -1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--queries"))) {
            o->queries = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--format"))) {
            if (tdm_qf_options_by_name(v, &o->qo) < 0)
                return tdm_cli_usage(C, "--format '%s': expected auto, colon, tab, trec, smart "
                                        "or jsonl", v);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--fields"))) {
            if (!(o->qo.trec_fields = tdm_qf_fields_by_names(v)))
                return tdm_cli_usage(C, "--fields '%s': expected a comma list of title, desc, "
                                        "narr", v);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--limit"))) {
            if (tdm_cli_uint(C, "--limit", v, 1, UINT32_MAX, &o->limit))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--algorithms"))) {
            if (parse_algos(v, o))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "-k")) ||
                   (v = tdm_cli_opt(argc, argv, &i, "--k"))) {
            if (parse_ks(v, o))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--devices"))) {
            o->devices = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--spread"))) {
            if (tdm_policy_parse(v, &o->spread) != TDM_OK || o->spread == TDM_POLICY_DEFAULT)
                return tdm_cli_usage(C, "--spread '%s': expected cpu-only, gpu-only, best, "
                                        "hybrid or direct", v);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--warmup"))) {
            if (tdm_cli_uint(C, "--warmup", v, 0, UINT32_MAX, &o->warmup))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--budget"))) {
            if (tdm_cli_real(C, "--budget", v, 0, 1, 1e6, &o->budget))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--oracle-threads"))) {
            if (tdm_cli_uint(C, "--oracle-threads", v, 1, 1024, &o->oracle_threads))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--oracle-cache"))) {
            o->oracle_cache = v;
        } else if (!strcmp(argv[i], "--oracle-only")) {
            o->oracle_only = 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--k1"))) {
            if (tdm_cli_real(C, "--k1", v, 0, 0, TDM_CLI_MAX_K1, &o->k1))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--b"))) {
            if (tdm_cli_real(C, "--b", v, 0, 0, 1, &o->b))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--batch"))) {
            if (parse_list("--batch", v, 1, BATCH_MAX, o->batches, &o->nbatches))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--threads"))) {
            if (parse_list("--threads", v, 1, THREADS_MAX, o->threads, &o->nthreads))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--batch-threads"))) {
            if (tdm_cli_uint(C, "--batch-threads", v, 1, THREADS_MAX, &o->batch_threads))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--throughput-plot"))) {
            o->tput_plot = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--csv"))) {
            o->csv = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--per-query"))) {
            o->per_query = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--build-options"))) {
            o->build_options = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--plot"))) {
            o->plot = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return tdm_cli_usage(C, "unknown or incomplete option '%s' (see --help)", argv[i]);
        } else if (!o->index) {
            o->index = argv[i];
        } else {
            return tdm_cli_usage(C, "unexpected argument '%s'", argv[i]);
        }
    }
    if (!o->index || !o->queries)
        return tdm_cli_usage(C, "need INDEX and --queries FILE ('tandem bench queries --help')");
    const char *in[2] = {o->index, o->queries};
    const char *outs[5] = {o->csv, o->plot, o->tput_plot, o->oracle_cache, o->per_query};
    static const char *const names[5] = {"--csv", "--plot", "--throughput-plot",
                                         "--oracle-cache", "--per-query"};
    for (int a = 0; a < 5; a++) {
        int bad = outs[a] ? tdm_cli_output(C, names[a], outs[a], 0, in, 2, NULL) : 0;
        if (bad || (outs[a] && probe(names[a], outs[a])))
            return bad ? bad : TDM_CLI_EXIT_FAIL;
        for (int c = 0; c < a; c++)
            if (outs[a] && outs[c] && !strcmp(outs[a], outs[c]))
                return tdm_cli_usage(C, "%s and %s name the same file '%s'", names[c], names[a],
                                     outs[a]);
    }
    return 0;
}

/* ---- the queries */

/* *q made and finished from fq's text (through a tokenizer of tp) or terms,
 * and, for a file of terms with at least one known, *st the request's term
 * array (malloc'ed, its strings fq's; NULL otherwise). A query of no known
 * term comes back with q->nterms == 0. On an error q is freed, *st NULL. */
static int query_make(const tdm_qf_query *fq, const tdm_ireader *r, tdm_tokpool *tp,
                      tdm_query *q, tdm_search_term **st, tdm_err *err)
{
    tdm_query_init(q);
    *st = NULL;
    int rc = TDM_OK;
    if (fq->text) {
        tdm_tokenizer *t = tdm_tokpool_get(tp, err);
        rc = t ? tdm_query_add_text(q, r, t, fq->text, strlen(fq->text), 1.0, err)
               : (err->code ? err->code : TDM_ERR_NOMEM);
        if (t)
            tdm_tokpool_put(tp, t);
    } else {
        for (size_t j = 0; rc == TDM_OK && j < fq->nterms; j++)
            rc = tdm_query_add_term(q, r, fq->terms[j].term, strlen(fq->terms[j].term),
                                    fq->terms[j].weight, err);
    }
    if (rc == TDM_OK)
        tdm_query_finish(q);
    if (rc == TDM_OK && q->nterms > 0 && !fq->text) {
        *st = calloc(fq->nterms, sizeof **st);
        if (!*st)
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        for (size_t j = 0; *st && j < fq->nterms; j++)
            (*st)[j] = (tdm_search_term){fq->terms[j].term, 0, fq->terms[j].weight};
    }
    if (rc != TDM_OK)
        tdm_query_free(q);
    return rc;
}

static int add_query(tdm_bq_queries *s, const tdm_ireader *r, tdm_tokpool *tp, size_t i,
                     tdm_err *err)
{
    const tdm_qf_query *fq = &s->qf->q[i];
    tdm_query *q = &s->q[s->nq];
    tdm_search_term *st;
    int rc = query_make(fq, r, tp, q, &st, err);
    if (rc != TDM_OK)
        return rc;
    if (q->nterms == 0) { /* nothing to rank: no device runs it, nothing to time */
        tdm_query_free(q);
        s->empty++;
        return TDM_OK;
    }
    s->terms[s->nq] = st;
    s->sq[s->nq] = (tdm_search_query){fq->text, st, fq->text ? 0 : fq->nterms};
    s->pos[s->nq++] = i;
    return TDM_OK;
}

int tdm_bq_queries_load(tdm_bq_queries *s, const char *cmd, const char *path,
                        const tdm_qf_options *qo, uint64_t limit, const tdm_ireader *r,
                        const char *index)
{
    tdm_err err = {0};
    tdm_qf_options q2 = qo ? *qo : (tdm_qf_options){0};
    /* an impact index's colon and tab query logs are repeated terms */
    q2.tokens |= tdm_ireader_info_get(r)->impact;
    if (tdm_qfile_read(path, &q2, &s->qf, &err) != TDM_OK) {
        tdm_cli_fail(cmd, "%s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return 1;
    }
    size_t n = s->qf->n;
    if (limit && limit < n)
        n = (size_t)limit;
    s->pos = calloc(n ? n : 1, sizeof *s->pos);
    s->q = calloc(n ? n : 1, sizeof *s->q);
    s->terms = calloc(n ? n : 1, sizeof *s->terms);
    s->sq = calloc(n ? n : 1, sizeof *s->sq);
    if (!s->pos || !s->q || !s->terms || !s->sq)
        return tdm_cli_fail(cmd, "out of memory");
    tdm_tokpool *tp = NULL;
    int rc = tdm_tokpool_open(r, &tp, &err);
    if (rc != TDM_OK)
        tdm_cli_fail(cmd, "%s: %s", index, tdm_err_msg(&err));
    for (size_t i = 0; rc == TDM_OK && i < n; i++)
        if ((rc = add_query(s, r, tp, i, &err)) != TDM_OK)
            tdm_cli_fail(cmd, "%s: query '%s' (line %llu): %s", path, s->qf->q[i].id,
                         (unsigned long long)s->qf->q[i].line, tdm_err_msg(&err));
    tdm_tokpool_free(tp);
    tdm_err_clear(&err);
    if (rc != TDM_OK)
        return 1;
    fprintf(stderr, "%zu queries of %s: %zu ranked, %zu without a term in the index left out\n",
            n, path, s->nq, s->empty);
    return 0;
}

void tdm_bq_queries_free(tdm_bq_queries *s)
{
    for (size_t i = 0; s->q && i < s->nq; i++) {
        tdm_query_free(&s->q[i]);
        free(s->terms[i]);
    }
    free(s->q);
    free(s->terms);
    free(s->sq);
    free(s->pos);
    tdm_qfile_free(s->qf);
}

/* ---- the oracle */

/* Touches every page of the index's mapping once, so that no timed call
 * (the oracle's or a search's host side) pays a first-touch page fault. */
static void prefault(const tdm_ireader *r)
{
    volatile unsigned char sink = 0;
    for (unsigned id = 0; id < TDM_SEC_COUNT; id++) {
        uint64_t size = 0;
        const unsigned char *p = tdm_ireader_section(r, id, &size);
        for (uint64_t off = 0; p && off < size; off += 4096)
            sink ^= p[off];
    }
    (void)sink;
}

static int run_oracles(bq *b)
{
    int need_or = 0, need_and = 0;
    for (size_t i = 0; i < b->o.nalgos; i++) {
        int a = b->o.algos[i];
        need_or |= a != TDM_ALGO_AND;
        need_and |= a == TDM_ALGO_AND || a == TDM_ALGO_AND_OR || a == TDM_ALGO_AUTO;
    }
    /* the index's own scoring, as the searches' (TDM_SCORE_AUTO) */
    tdm_score_params sp = tdm_score_params_for(b->r, TDM_SCORE_AUTO, b->o.k1, b->o.b);
    uint32_t k = b->o.ks[b->o.nk - 1]; /* the others are its prefixes */
    size_t nq = b->qs.nq ? b->qs.nq : 1;
    tdm_bq_cache *cache = NULL;
    b->us_or = calloc(nq, sizeof *b->us_or);
    b->us_and = calloc(nq, sizeof *b->us_and);
    if (!b->us_or || !b->us_and)
        return tdm_cli_fail(C, "out of memory");
    if (b->o.oracle_cache) {
        if (tdm_bq_cache_open(b->o.oracle_cache, b->o.index, k, &sp, &cache))
            return 1;
        if (!(b->qhash = malloc(nq * sizeof *b->qhash))) {
            tdm_bq_cache_free(cache);
            return tdm_cli_fail(C, "out of memory");
        }
        for (size_t q = 0; q < b->qs.nq; q++)
            b->qhash[q] = tdm_bq_query_hash(&b->qs.q[q]);
    }
    tdm_bq_oracle_job j = {b->r, b->qs.q, b->qs.nq, k, TDM_MATCH_OR, sp,
                           (unsigned)b->o.oracle_threads, (size_t)b->o.warmup, cache, b->qhash,
                           b->us_or};
    size_t first = b->set.n;
    long ran = 0, r = 0;
    prefault(b->r);
    if (need_or && (ran = tdm_bq_oracle_run(&j, &b->set, &b->ans_or)) < 0)
        r = -1;
    j.match = TDM_MATCH_AND;
    j.us = b->us_and;
    long ran2 = 0;
    if (r == 0 && need_and && (ran2 = tdm_bq_oracle_run(&j, &b->set, &b->ans_and)) < 0)
        r = -1;
    if (r == 0 && cache && ran + ran2 > 0 &&
        tdm_bq_cache_write(cache, b->qhash, b->qs.nq, need_or ? &b->ans_or : NULL, b->us_or,
                           need_and ? &b->ans_and : NULL, b->us_and))
        r = -1;
    tdm_bq_cache_free(cache);
    if (r)
        return 1;
    for (size_t i = first; i < b->set.n; i++)
        tdm_bq_print_row(stdout, &b->set.v[i]);
    return 0;
}

static int write_outputs(const bq *b)
{
    int rc = 0;
    if (b->o.csv && tdm_bq_write_csv(b->o.csv, &b->set))
        rc = 1;
    if (b->o.per_query && tdm_bq_write_perq(b->o.per_query, &b->set, &b->qs))
        rc = 1;
    const char *base = strrchr(b->o.index, '/');
    char title[256];
    snprintf(title, sizeof title, "tandem bench queries: %s, %zu queries, BM25 (%g, %g)",
             base ? base + 1 : b->o.index, b->qs.nq, b->o.k1, b->o.b);
    if (b->o.plot && tdm_bq_write_svg(b->o.plot, &b->set, title))
        rc = 1;
    if (b->o.tput_plot && tdm_bq_write_tput_svg(b->o.tput_plot, &b->set, title))
        rc = 1;
    return rc;
}

int tdm_bench_queries(int argc, char **argv)
{
    bq b = {0};
    int rc = parse(argc, argv, &b.o);
    if (rc)
        return rc < 0 ? 0 : rc;
    b.set.per_query = b.o.per_query != NULL;
    tdm_index *ix = NULL;
    if (tdm_index_open(b.o.index, &ix) != TDM_OK)
        return tdm_cli_fail(C, "%s", tdm_last_error());
    b.r = tdm_index_ireader(ix);
    rc = tdm_bq_queries_load(&b.qs, C, b.o.queries, &b.o.qo, b.o.limit, b.r, b.o.index);
    if (rc == 0) {
        tdm_bq_print_header(stdout);
        rc = run_oracles(&b);
    }
    if (rc == 0 && !b.o.oracle_only)
        rc = tdm_bq_run_devices(&b, ix);
    if (rc == 0)
        tdm_bq_print_tput(stdout, &b.set, &b.o);
    if (rc == 0)
        rc = write_outputs(&b);
    if (rc == 0 && b.mismatches)
        rc = tdm_cli_fail(C, "%llu answers differ from the oracle's",
                          (unsigned long long)b.mismatches);
    else if (rc == 0)
        fprintf(stderr, "every answer is the oracle's\n");
    free(b.qhash);
    free(b.us_or);
    free(b.us_and);
    tdm_bq_answers_free(&b.ans_or);
    tdm_bq_answers_free(&b.ans_and);
    tdm_bq_set_free(&b.set);
    tdm_bq_queries_free(&b.qs);
    tdm_index_close(ix);
    return rc ? TDM_CLI_EXIT_FAIL : 0; /* past the options, every failure is 1 */
}
