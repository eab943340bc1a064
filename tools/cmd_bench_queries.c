/* `tandem bench queries INDEX --queries FILE`: per algorithm, k and device,
 * the latency of single queries one after another (wall clock around each
 * tdm_search_* call, after a warm-up), kernel launches and bytes moved per
 * query, and every answer checked against the oracle, which is timed in the
 * same run (cmd_bench_queries.h lists the files). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_bench_queries.h"
#include "index/index_priv.h"
#include "index/tokpool.h"
#include "query/oracle.h"
#include "query/queryfile.h"
#include "tandem.h"

#define MAX_ALGOS 16
#define MAX_KS 8
#define MAX_REPORTED 5 /* mismatches described per series */

static const char C[] = "bench queries";

typedef struct opts {
    const char *index, *queries, *devices, *csv, *plot;
    uint64_t limit;       /* 0: every query */
    int algos[MAX_ALGOS];
    size_t nalgos;
    uint32_t ks[MAX_KS];  /* ascending */
    size_t nk;
    uint64_t warmup, threads;
    double budget;        /* seconds of timed queries a series may take; 0: no limit */
    tdm_qf_options qo;
} opts;

/* The queries that have at least one term in the index, ready for both sides. */
typedef struct bq {
    opts o;
    tdm_qfile *qf;
    const tdm_ireader *r;
    size_t nq;            /* usable queries */
    size_t *pos;          /* [nq] position in qf */
    tdm_query *q;         /* [nq] for the oracle */
    tdm_search_term **terms; /* [nq] weighted queries' terms, NULL for text */
    size_t empty;         /* queries without a known term, left out */
    tdm_bq_answers ans_or, ans_and;
    tdm_bq_set set;
    uint64_t mismatches;
} bq;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: tandem bench queries INDEX --queries FILE [options]\n"
        "  Latency of single queries, one after another (wall clock around each search\n"
        "  call, after a warm-up), for every algorithm, k and device of the engine: mean,\n"
        "  p50, p90, p99, max; kernel launches and bytes moved host<->device per query.\n"
        "  Every answer is checked against the exhaustive host oracle (the same documents\n"
        "  in the same order, the same float scores bit for bit); the oracle is timed in\n"
        "  the same run. A mismatch makes the exit status 1. BM25 (1.2, 0.75).\n"
        "  Queries without a term in the index are left out (and counted).\n"
        "options:\n"
        "  --queries FILE     id:text lines, id<TAB>text, TREC topics, SMART, JSON lines\n"
        "  --format F         auto (default), colon, tab, trec, smart, jsonl\n"
        "  --fields LIST      TREC topics: title,desc,narr (title)\n"
        "  --limit N          the first N queries of the file (default: all)\n"
        "  --algorithms LIST  comma-separated: or, and, and_or, wand, bmw, maxscore, auto,\n"
        "                     or all (default: or,and,and_or,wand,bmw,maxscore)\n"
        "  -k LIST            comma-separated k, 1..10000 (default 10,1000)\n"
        "  --devices SPEC     as TANDEM_DEVICES (default: TANDEM_DEVICES, else all)\n"
        "  --warmup N         queries run untimed before each series (default 100)\n"
        "  --budget S         seconds of timed queries a series may take: a slow device\n"
        "                     stops early, on the first queries (the table's count)\n"
        "  --oracle-threads N threads running the oracle, each on its share of the\n"
        "                     queries one at a time (default 1)\n"
        "  --csv FILE         every series as CSV\n"
        "  --plot FILE.svg    the latency distribution (CDF), one panel per k\n"
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
        if (o->nalgos == MAX_ALGOS)
            return tdm_cli_fail(C, "--algorithms: too many");
        o->algos[o->nalgos++] = a;
    }
    return o->nalgos ? 0 : tdm_cli_fail(C, "--algorithms '%s': no algorithm", v);
}

static int parse_ks(const char *v, opts *o)
{
    char buf[256];
    o->nk = 0;
    if (!*v || strlen(v) >= sizeof buf || v[strlen(v) - 1] == ',')
        return tdm_cli_fail(C, "-k '%s': expected a comma-separated list of k", v);
    strcpy(buf, v);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        uint64_t k;
        if (tdm_cli_uint(C, "-k", t, 1, TDM_SEARCH_K_MAX, &k))
            return 1;
        if (o->nk == MAX_KS)
            return tdm_cli_fail(C, "-k: at most %d values", MAX_KS);
        size_t i = o->nk++;
        for (; i > 0 && o->ks[i - 1] > k; i--) /* keep ascending */
            o->ks[i] = o->ks[i - 1];
        if (i > 0 && o->ks[i - 1] == k)
            return tdm_cli_fail(C, "-k: %s given twice", t);
        o->ks[i] = (uint32_t)k;
    }
    return o->nk ? 0 : tdm_cli_fail(C, "-k '%s': no value", v);
}

/* 0 parsed, 1 after an error message, -1 --help printed. */
static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){.warmup = 100, .threads = 1, .qo = {TDM_QF_AUTO, 0, 0}};
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
            if ((o->qo.format = tdm_qf_format_by_name(v)) < 0)
                return tdm_cli_fail(C, "--format '%s': expected auto, colon, tab, trec, smart "
                                       "or jsonl", v);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--fields"))) {
            if (!(o->qo.trec_fields = tdm_qf_fields_by_names(v)))
                return tdm_cli_fail(C, "--fields '%s': expected a comma list of title, desc, "
                                       "narr", v);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--limit"))) {
            if (tdm_cli_uint(C, "--limit", v, 1, UINT32_MAX, &o->limit))
                return 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--algorithms"))) {
            if (parse_algos(v, o))
                return 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "-k")) ||
                   (v = tdm_cli_opt(argc, argv, &i, "--k"))) {
            if (parse_ks(v, o))
                return 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--devices"))) {
            o->devices = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--warmup"))) {
            if (tdm_cli_uint(C, "--warmup", v, 0, UINT32_MAX, &o->warmup))
                return 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--budget"))) {
            if (tdm_cli_real(C, "--budget", v, 0, 1, 1e6, &o->budget))
                return 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--oracle-threads"))) {
            if (tdm_cli_uint(C, "--oracle-threads", v, 1, 1024, &o->threads))
                return 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--csv"))) {
            o->csv = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--plot"))) {
            o->plot = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return tdm_cli_fail(C, "unknown or incomplete option '%s' (see --help)", argv[i]);
        } else if (!o->index) {
            o->index = argv[i];
        } else {
            return tdm_cli_fail(C, "unexpected argument '%s'", argv[i]);
        }
    }
    if (!o->index || !o->queries)
        return tdm_cli_fail(C, "need INDEX and --queries FILE ('tandem bench queries --help')");
    const char *in[2] = {o->index, o->queries};
    if ((o->csv && tdm_cli_output(C, "--csv", o->csv, 0, in, 2, NULL)) ||
        (o->plot && tdm_cli_output(C, "--plot", o->plot, 0, in, 2, NULL)))
        return 1;
    if (o->csv && o->plot && !strcmp(o->csv, o->plot))
        return tdm_cli_fail(C, "--csv and --plot name the same file '%s'", o->csv);
    return 0;
}

/* ---- the queries */

static int add_query(bq *b, tdm_tokpool *tp, size_t i, tdm_err *err)
{
    const tdm_qf_query *fq = &b->qf->q[i];
    tdm_query *q = &b->q[b->nq];
    tdm_query_init(q);
    int rc = TDM_OK;
    if (fq->text) {
        tdm_tokenizer *t = tdm_tokpool_get(tp, err);
        rc = t ? tdm_query_add_text(q, b->r, t, fq->text, strlen(fq->text), 1.0, err)
               : (err->code ? err->code : TDM_ERR_NOMEM);
        if (t)
            tdm_tokpool_put(tp, t);
    } else {
        for (size_t j = 0; rc == TDM_OK && j < fq->nterms; j++)
            rc = tdm_query_add_term(q, b->r, fq->terms[j].term, strlen(fq->terms[j].term),
                                    fq->terms[j].weight, err);
    }
    if (rc != TDM_OK) {
        tdm_query_free(q);
        return rc;
    }
    tdm_query_finish(q);
    if (q->nterms == 0) { /* nothing to rank: no device runs, nothing to time */
        tdm_query_free(q);
        b->empty++;
        return TDM_OK;
    }
    if (!fq->text) {
        tdm_search_term *st = calloc(fq->nterms, sizeof *st);
        if (!st) {
            tdm_query_free(q);
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        }
        for (size_t j = 0; j < fq->nterms; j++)
            st[j] = (tdm_search_term){fq->terms[j].term, 0, fq->terms[j].weight};
        b->terms[b->nq] = st;
    }
    b->pos[b->nq++] = i;
    return TDM_OK;
}

static int load_queries(bq *b)
{
    tdm_err err = {0};
    if (tdm_qfile_read(b->o.queries, &b->o.qo, &b->qf, &err) != TDM_OK) {
        tdm_cli_fail(C, "%s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return 1;
    }
    size_t n = b->qf->n;
    if (b->o.limit && b->o.limit < n)
        n = (size_t)b->o.limit;
    b->pos = calloc(n ? n : 1, sizeof *b->pos);
    b->q = calloc(n ? n : 1, sizeof *b->q);
    b->terms = calloc(n ? n : 1, sizeof *b->terms);
    if (!b->pos || !b->q || !b->terms)
        return tdm_cli_fail(C, "out of memory");
    tdm_tokpool *tp = NULL;
    int rc = tdm_tokpool_open(b->r, &tp, &err);
    if (rc != TDM_OK)
        tdm_cli_fail(C, "%s: %s", b->o.index, tdm_err_msg(&err));
    for (size_t i = 0; rc == TDM_OK && i < n; i++)
        if ((rc = add_query(b, tp, i, &err)) != TDM_OK)
            tdm_cli_fail(C, "%s: query '%s' (line %llu): %s", b->o.queries, b->qf->q[i].id,
                         (unsigned long long)b->qf->q[i].line, tdm_err_msg(&err));
    tdm_tokpool_free(tp);
    tdm_err_clear(&err);
    if (rc != TDM_OK)
        return 1;
    fprintf(stderr, "%zu queries of %s: %zu ranked, %zu without a term in the index left out\n",
            n, b->o.queries, b->nq, b->empty);
    return 0;
}

static void free_queries(bq *b)
{
    for (size_t i = 0; b->q && i < b->nq; i++) {
        tdm_query_free(&b->q[i]);
        free(b->terms[i]);
    }
    free(b->q);
    free(b->terms);
    free(b->pos);
    tdm_qfile_free(b->qf);
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
    tdm_bq_oracle_job j = {b->r, b->q, b->nq, b->o.ks, b->o.nk, TDM_MATCH_OR,
                           (unsigned)b->o.threads, (size_t)b->o.warmup};
    size_t first = b->set.n;
    prefault(b->r);
    if (need_or && tdm_bq_oracle_run(&j, &b->set, &b->ans_or))
        return 1;
    j.match = TDM_MATCH_AND;
    if (need_and && tdm_bq_oracle_run(&j, &b->set, &b->ans_and))
        return 1;
    for (size_t i = first; i < b->set.n; i++)
        tdm_bq_print_row(stdout, &b->set.v[i]);
    return 0;
}

/* ---- the devices */

/* The oracle's answer for what ran. */
static const tdm_bq_answers *expected(const bq *b, int ran, size_t q, uint32_t k)
{
    if (ran == TDM_ALGO_AND)
        return &b->ans_and;
    if (ran == TDM_ALGO_AND_OR)
        return b->ans_and.matched[q] >= k ? &b->ans_and : &b->ans_or;
    return &b->ans_or;
}

/* 0 if r is the oracle's answer for query q at k; else describes the first
 * difference into why[]. */
static int check(const bq *b, const tdm_search_result *r, size_t q, uint32_t k, int device,
                 char *why, size_t cap)
{
    if (r->device != device) {
        snprintf(why, cap, "answered by device %d", r->device);
        return 1;
    }
    const tdm_bq_answers *a = expected(b, r->algorithm, q, k);
    if (!a->n) {
        snprintf(why, cap, "%s ran, for which the oracle was not asked",
                 tdm_algorithm_name(r->algorithm));
        return 1;
    }
    size_t want = a->n[q] < k ? a->n[q] : k;
    if (r->n != want) {
        snprintf(why, cap, "%zu hits, the oracle has %zu", r->n, want);
        return 1;
    }
    for (size_t i = 0; i < want; i++) {
        uint32_t d = a->doc[q * a->k + i];
        float s = a->score[q * a->k + i];
        if (r->hits[i].docid != d || r->hits[i].score != s) {
            snprintf(why, cap, "rank %zu: doc %u score %.9g, the oracle's doc %u score %.9g",
                     i + 1, r->hits[i].docid, r->hits[i].score, d, s);
            return 1;
        }
    }
    return 0;
}

static int search_one(tdm_search *sh, const bq *b, size_t q, const tdm_search_options *o,
                      tdm_search_result **r)
{
    const tdm_qf_query *fq = &b->qf->q[b->pos[q]];
    if (fq->text)
        return tdm_search_text(sh, fq->text, o, r);
    return tdm_search_terms(sh, b->terms[q], fq->nterms, o, r);
}

/* One series: algorithm a at k on device d. */
static int run_series(bq *b, tdm_search *sh, int d, const char *dname, size_t ai, uint32_t k)
{
    tdm_bq_series *s = tdm_bq_add(&b->set, b->nq);
    if (!s)
        return tdm_cli_fail(C, "out of memory");
    int a = b->o.algos[ai];
    snprintf(s->algorithm, sizeof s->algorithm, "%s", tdm_algorithm_name(a));
    s->algo = a;
    s->color = (int)ai;
    s->k = k;
    s->device = d;
    snprintf(s->device_name, sizeof s->device_name, "%.63s", dname);
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.algorithm = a;
    o.k = k;
    o.device = d;
    int tty = isatty(2);
    size_t warm = b->o.warmup < b->nq ? (size_t)b->o.warmup : b->nq, timed = 0;
    double start = 0;
    for (size_t i = 0; i < warm + b->nq; i++) {
        if (i == warm)
            start = tdm_cli_now();
        else if (i > warm && b->o.budget > 0 && tdm_cli_now() - start > b->o.budget)
            break; /* out of time: the first `timed` queries */
        size_t q = i < warm ? i : i - warm;
        tdm_search_result *r = NULL;
        double t0 = tdm_cli_now();
        int rc = search_one(sh, b, q, &o, &r);
        double t1 = tdm_cli_now();
        if (rc != TDM_OK)
            return tdm_cli_fail(C, "%s, k %u, device %d: query '%s': %s", s->algorithm, k, d,
                                b->qf->q[b->pos[q]].id, tdm_last_error());
        if (i >= warm) {
            char why[160];
            s->us[q] = (t1 - t0) * 1e6;
            timed++;
            s->launches += r->launches;
            s->bytes_up += (double)r->bytes_up;
            s->bytes_down += (double)r->bytes_down;
            if (check(b, r, q, k, d, why, sizeof why) && ++s->mismatches <= MAX_REPORTED)
                fprintf(stderr, "MISMATCH %s k %u device %d query '%s': %s\n", s->algorithm, k,
                        d, b->qf->q[b->pos[q]].id, why);
        }
        tdm_search_result_free(r);
        if (tty && (i % 64 == 63 || i + 1 == warm + b->nq))
            fprintf(stderr, "\r%s k %u device %d: %zu/%zu ", s->algorithm, k, d, i + 1,
                    warm + b->nq);
    }
    if (tty)
        fputc('\n', stderr);
    s->n = timed;
    if (s->n) {
        s->launches /= (double)s->n;
        s->bytes_up /= (double)s->n;
        s->bytes_down /= (double)s->n;
    }
    tdm_bq_stats(s);
    b->mismatches += s->mismatches;
    tdm_bq_print_row(stdout, s);
    return 0;
}

static int run_devices(bq *b, tdm_index *ix)
{
    tdm_engine_options eo;
    tdm_engine_options_init(&eo);
    eo.devices = b->o.devices;
    tdm_engine *e = NULL;
    tdm_search *sh = NULL;
    int rc = 0;
    if (tdm_engine_open(&eo, &e) != TDM_OK || tdm_search_open(e, ix, &sh) != TDM_OK)
        rc = tdm_cli_fail(C, "%s", tdm_last_error());
    if (rc == 0 && *tdm_engine_warnings(e))
        fprintf(stderr, "%s\n", tdm_engine_warnings(e));
    int nd = rc == 0 ? tdm_engine_device_count(e) : 0;
    for (int d = 0; rc == 0 && d < nd; d++) {
        tdm_device_info info;
        tdm_engine_device_info_get(e, d, &info);
        fprintf(stderr, "device %d: %s (%s, %u compute units)\n", d, info.name, info.platform,
                info.compute_units);
        for (size_t ki = 0; rc == 0 && ki < b->o.nk; ki++)
            for (size_t ai = 0; rc == 0 && ai < b->o.nalgos; ai++)
                rc = run_series(b, sh, d, info.name, ai, b->o.ks[ki]);
    }
    tdm_search_close(sh);
    tdm_engine_close(e);
    return rc;
}

static int write_outputs(const bq *b)
{
    int rc = 0;
    if (b->o.csv && tdm_bq_write_csv(b->o.csv, &b->set))
        rc = 1;
    if (b->o.plot) {
        const char *base = strrchr(b->o.index, '/');
        char title[256];
        snprintf(title, sizeof title, "tandem bench queries: %s, %zu queries, BM25",
                 base ? base + 1 : b->o.index, b->nq);
        if (tdm_bq_write_svg(b->o.plot, &b->set, title))
            rc = 1;
    }
    return rc;
}

int tdm_bench_queries(int argc, char **argv)
{
    bq b = {0};
    int rc = parse(argc, argv, &b.o);
    if (rc)
        return rc < 0 ? 0 : rc;
    tdm_index *ix = NULL;
    if (tdm_index_open(b.o.index, &ix) != TDM_OK)
        return tdm_cli_fail(C, "%s", tdm_last_error());
    b.r = tdm_index_ireader(ix);
    rc = load_queries(&b);
    if (rc == 0) {
        tdm_bq_print_header(stdout);
        rc = run_oracles(&b);
    }
    if (rc == 0)
        rc = run_devices(&b, ix);
    if (rc == 0)
        rc = write_outputs(&b);
    if (rc == 0 && b.mismatches)
        rc = tdm_cli_fail(C, "%llu answers differ from the oracle's",
                          (unsigned long long)b.mismatches);
    else if (rc == 0)
        fprintf(stderr, "every answer is the oracle's\n");
    tdm_bq_answers_free(&b.ans_or);
    tdm_bq_answers_free(&b.ans_and);
    tdm_bq_set_free(&b.set);
    free_queries(&b);
    tdm_index_close(ix);
    return rc;
}
