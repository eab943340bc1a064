/* `tandem run INDEX --queries FILE -o RUN`: every query of a file to a TREC
 * run, many queries in flight (batches of --batch through tdm_search_batch,
 * --threads senders; qrun.h), written in file order: the same bytes whatever
 * the batch size and thread count. A query that fails is reported with its
 * id and left out; the others are written and the exit status is 1. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_search.h"
#include "common/fsutil.h"
#include "progress.h"
#include "qrun.h"
#include "harness/queryfile.h"
#include "tandem.h"

#define BATCH_DEFAULT 64
#define BATCH_MAX 65536
#define THREADS_MAX 256
#define ERRORS_SHOWN 50 /* per-query errors printed; the rest are counted */

static const char C[] = "run";

typedef struct ropts {
    tdm_cli_sopts s;
    const char *qpath, *out, *tag, *prefix;
    tdm_qf_options qo;
    uint64_t batch, threads;
} ropts;

/* What the sink needs to write answers in order. */
typedef struct sink_ctx {
    const ropts *o;
    const tdm_qfile *qf;
    FILE *f;
    tdm_progress bar;
    size_t failed;
    int write_failed;
    size_t empty, empty_ids[ERRORS_SHOWN]; /* answered with no known term */
} sink_ctx;

static void usage(void)
{
    printf("usage: tandem run INDEX|--shards PREFIX --queries FILE -o RUN [options]\n"
           "  every query of FILE to a TREC run: 'qid Q0 docname rank score tag', in file\n"
           "  order. FILE: id:text lines, id<TAB>text, TREC topics, SMART .I/.W, JSON lines\n"
           "  ({\"id\", \"text\"} or weighted {\"id\", \"terms\": {term: weight}}).\n"
           "  -o RUN           output file, '-' for stdout\n"
           "  --tag T          run tag (tandem)\n"
           "  --docname-prefix P  P before every document name (CACM-, to match\n"
           "                   qrels.cacm.trec.txt)\n"
           "  --format F       auto (default), colon, tab, trec, smart, jsonl,\n"
           "                   tokens (id<TAB>terms, repeated: the default for\n"
           "                   colon and tab lines on an impact index)\n"
           "  --fields LIST    TREC topics: title,desc,narr (title)\n"
           "  --by-position    SMART: number queries 1, 2, 3 ... in file order\n"
           "  --batch N        queries a search call carries (tdm_search_batch), 1..%d;\n"
           "                   0: one tdm_search_text call a query (default %d)\n"
           "  --threads T      threads sending calls at once, 1..%d (default 1)\n"
           "  (--policy places calls on devices; a batch call may be split over them)\n"
           "  (-k defaults to 1000 here, not 10)\n%s"
           "The run is the same bytes for any --batch and --threads. A query that fails\n"
           "is named on stderr and left out of the run; the others are written, and the\n"
           "exit status is 1. A progress bar is drawn when stderr is a terminal.\n",
           BATCH_MAX, BATCH_DEFAULT, THREADS_MAX, tdm_cli_search_help);
}

/* 0 parsed, -1 --help printed, or the exit status (2) after an error message. */
static int parse(int argc, char **argv, ropts *o)
{
    *o = (ropts){.tag = "tandem", .prefix = "", .qo = {TDM_QF_AUTO, 0, 0},
                 .batch = BATCH_DEFAULT, .threads = 1};
    tdm_search_options_init(&o->s.o);
    o->s.o.k = 1000;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int t;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage();
            return -1;
        } else if ((t = tdm_cli_search_opt(C, argc, argv, &i, &o->s))) {
            if (t < 0)
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--queries"))) {
            o->qpath = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "-o"))) {
            o->out = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--tag"))) {
            o->tag = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--docname-prefix"))) {
            o->prefix = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--format"))) {
            if (tdm_qf_options_by_name(v, &o->qo) < 0)
                return tdm_cli_usage(C, "--format '%s': expected auto, colon, tab, trec, "
                                        "smart, jsonl or tokens", v);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--fields"))) {
            if (!(o->qo.trec_fields = tdm_qf_fields_by_names(v)))
                return tdm_cli_usage(C, "--fields '%s': expected a comma list of title, "
                                        "desc, narr", v);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--batch"))) {
            if (tdm_cli_uint(C, "--batch", v, 0, BATCH_MAX, &o->batch))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--threads"))) {
            if (tdm_cli_uint(C, "--threads", v, 1, THREADS_MAX, &o->threads))
                return TDM_CLI_EXIT_USAGE;
        } else if (!strcmp(argv[i], "--by-position")) {
            o->qo.number_by_position = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return tdm_cli_usage(C, "unknown or incomplete option '%s'", argv[i]);
        } else if (!o->s.index) {
            o->s.index = argv[i];
        } else {
            return tdm_cli_usage(C, "unexpected argument '%s'", argv[i]);
        }
    }
    if (!o->s.index || !o->qpath || !o->out)
        return tdm_cli_usage(C, "need INDEX (or --shards PREFIX), --queries FILE and -o RUN "
                                "('tandem run --help')");
    if (!*o->tag || strpbrk(o->tag, " \t\n"))
        return tdm_cli_usage(C, "--tag '%s': must be non-empty, without white space", o->tag);
    if (strpbrk(o->prefix, " \t\n"))
        return tdm_cli_usage(C, "--docname-prefix '%s': must be without white space",
                             o->prefix);
    return 0;
}

/* The file's queries as the runner takes them; weighted terms converted. */
static tdm_qr_query *make_queries(const tdm_qfile *qf, tdm_search_term **terms)
{
    size_t nt = 0;
    for (size_t i = 0; i < qf->n; i++)
        nt += qf->q[i].text ? 0 : qf->q[i].nterms;
    tdm_qr_query *q = calloc(qf->n ? qf->n : 1, sizeof *q);
    *terms = calloc(nt ? nt : 1, sizeof **terms);
    if (!q || !*terms) {
        free(q);
        free(*terms);
        return NULL;
    }
    tdm_search_term *t = *terms;
    for (size_t i = 0; i < qf->n; i++) {
        const tdm_qf_query *fq = &qf->q[i];
        q[i] = (tdm_qr_query){fq->text, t, fq->text ? 0 : fq->nterms};
        for (size_t j = 0; !fq->text && j < fq->nterms; j++)
            *t++ = (tdm_search_term){fq->terms[j].term, 0, fq->terms[j].weight};
    }
    return q;
}

/* One answer, in file order: its lines, or its error. */
static int sink(void *ctx, size_t i, const tdm_qr_answer *a)
{
    sink_ctx *c = ctx;
    const tdm_qf_query *q = &c->qf->q[i];
    if (!a->r) {
        if (c->failed++ < ERRORS_SHOWN) {
            tdm_progress_clear(&c->bar);
            fprintf(stderr, "tandem run: %s: query '%s' (line %llu): %s\n", c->o->qpath, q->id,
                    (unsigned long long)q->line, a->error ? a->error : "failed");
        }
    } else {
        const tdm_search_result *r = a->r;
        if (r->terms == 0 && c->empty++ < ERRORS_SHOWN)
            c->empty_ids[c->empty - 1] = i;
        for (size_t h = 0; h < r->n && !c->write_failed; h++)
            if (fprintf(c->f, "%s Q0 %s%s %zu %.6f %s\n", q->id, c->o->prefix,
                        r->hits[h].name ? r->hits[h].name : "", h + 1, r->hits[h].score,
                        c->o->tag) < 0)
                c->write_failed = 1;
    }
    tdm_progress_update(&c->bar, i + 1);
    return c->write_failed; /* a failed write stops the run */
}

/* Names the queries left out of the run for having no term the index
 * holds (a TREC run has no line for a query without results). */
static void name_empty(const sink_ctx *c, int unknown_analyzer)
{
    if (!c->empty)
        return;
    fprintf(stderr, "tandem run: %zu quer%s with no term in the index, so not in the run:",
            c->empty, c->empty == 1 ? "y" : "ies");
    for (size_t k = 0; k < c->empty && k < ERRORS_SHOWN; k++)
        fprintf(stderr, "%s '%s'", k ? "," : "", c->qf->q[c->empty_ids[k]].id);
    fprintf(stderr, "%s\n", c->empty > ERRORS_SHOWN ? ", ..." : "");
    if (unknown_analyzer)
        fprintf(stderr, "tandem run: %s: the index's analyzer is unknown (imported without "
                        "one): re-import it with the --stemmer and --stopwords its terms "
                        "were made with\n", c->o->s.index);
}

/* Runs every query into f: 0 all answered; 2 some queries failed (named,
 * the run holds the others); 1 the run failed (after a message). */
static int run_all(const ropts *o, const tdm_qfile *qf, tdm_search *sh, FILE *f,
                   int unknown_analyzer)
{
    tdm_search_term *terms = NULL;
    tdm_qr_query *q = make_queries(qf, &terms);
    if (!q)
        return tdm_cli_fail(C, "out of memory");
    sink_ctx c = {o, qf, f, {0}, 0, 0, 0, {0}};
    tdm_progress_begin(&c.bar, "run", "queries", qf->n, 0);
    tdm_qr_job j = {sh, q, qf->n, &o->s.o, (size_t)o->batch, (unsigned)o->threads, sink, &c};
    double t0 = tdm_cli_now();
    size_t done = 0;
    int rc = tdm_qr_run(&j, C, &done) ? 1 : 0;
    double el = tdm_cli_now() - t0;
    tdm_progress_end(&c.bar, done);
    free(q);
    free(terms);
    if (rc == 0 && c.write_failed)
        rc = tdm_cli_fail(C, "%s: write failed", o->out);
    if (rc)
        return rc;
    fprintf(stderr, "%zu queries in %.3f s (%.0f queries/s; %s, %llu thread%s)\n", done, el,
            el > 0 ? (double)done / el : 0.0, o->batch ? "batch calls" : "single calls",
            (unsigned long long)o->threads, o->threads == 1 ? "" : "s");
    name_empty(&c, unknown_analyzer);
    if (c.failed == qf->n) /* nothing worth replacing an old RUN with */
        return tdm_cli_fail(C, "every query failed (%s above); %s not written", c.failed >
                            ERRORS_SHOWN ? "the first named" : "named", o->out);
    if (c.failed) {
        tdm_cli_fail(C, "%zu of %zu queries failed (%s above); the run holds the others",
                     c.failed, qf->n, c.failed > ERRORS_SHOWN ? "the first named" : "named");
        return 2;
    }
    return 0;
}

/* On an impact index, colon and tab query lines are learned sparse query
 * logs: terms as stored, repeated as often as their weight. */
static void impact_tokens(const tdm_cli_sopts *s, tdm_qf_options *qo)
{
    tdm_index *ix;
    tdm_index_impact im;
    if (tdm_cli_index_open(s, &ix) != TDM_OK)
        return;   /* said again when the search opens it */
    if (tdm_index_impact_get(ix, &im) == TDM_OK && im.impact)
        qo->tokens = 1;
    tdm_index_close(ix);
}

int tdm_cmd_run(int argc, char **argv)
{
    ropts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    int to_stdout = 0;
    const char *inputs[2] = {o.s.index, o.qpath};
    if ((rc = tdm_cli_output(C, "-o", o.out, 1, inputs, 2, &to_stdout)))
        return rc;
    tdm_err err = {0};
    tdm_qfile *qf = NULL;
    impact_tokens(&o.s, &o.qo);
    if (tdm_qfile_read(o.qpath, &o.qo, &qf, &err) != TDM_OK) {
        tdm_cli_fail(C, "%s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return 1;
    }
    if (qf->n == 0) { /* not "every query failed": there was none */
        tdm_cli_fail(C, "%s: the file has no queries (read as %s); %s not written", o.qpath,
                     tdm_qf_format_name(qf->format), o.out);
        tdm_qfile_free(qf);
        return 1;
    }
    tdm_engine *e;
    tdm_index *ix;
    tdm_search *sh;
    tdm_outfile out = {0};
    rc = tdm_cli_search_open(C, &o.s, &e, &ix, &sh);
    if (rc == 0 && !to_stdout && tdm_outfile_open(&out, o.out, &err) != TDM_OK)
        rc = tdm_cli_fail(C, "%s", tdm_err_msg(&err));
    tdm_index_stats st;
    int unknown = rc == 0 && tdm_index_stats_get(ix, &st) == TDM_OK &&
                  !strcmp(st.stemmer, "unknown");
    if (rc == 0)
        rc = run_all(&o, qf, sh, to_stdout ? stdout : out.f, unknown);
    /* renamed into place when complete, also when some queries failed (the
     * others are not lost); an old RUN is left as it was otherwise */
    if ((rc == 0 || rc == 2) && out.f && tdm_outfile_commit(&out, &err) != TDM_OK)
        rc = tdm_cli_fail(C, "%s", tdm_err_msg(&err));
    tdm_outfile_abort(&out);
    tdm_err_clear(&err);
    tdm_cli_search_close(e, ix, sh);
    tdm_qfile_free(qf);
    return rc ? 1 : 0;
}
