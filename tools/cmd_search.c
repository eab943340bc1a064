/* `tandem search` (one query, its top k with names and scores, the device
 * and time) and `tandem run` (a query file to a TREC run), over the public
 * search API (tandem.h, tdm_search_*). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "query/queryfile.h"
#include "tandem.h"

/* Options both commands take. */
typedef struct sopts {
    const char *index;
    tdm_search_options o;
    int json;
} sopts;

/* Parses one shared option at argv[*i]: 1 taken, 0 not this, -1 bad value. */
static int shared_opt(const char *cmd, int argc, char **argv, int *i, sopts *s)
{
    const char *v;
    uint64_t u;
    if ((v = tdm_cli_opt(argc, argv, i, "-k")) || (v = tdm_cli_opt(argc, argv, i, "--k"))) {
        if (tdm_cli_uint(cmd, "-k", v, 1, TDM_SEARCH_K_MAX, &u))
            return -1;
        s->o.k = (uint32_t)u;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--algorithm"))) {
        if (tdm_algorithm_parse(v, &s->o.algorithm) != TDM_OK) {
            tdm_cli_fail(cmd, "--algorithm: %s", tdm_last_error());
            return -1;
        }
    } else if ((v = tdm_cli_opt(argc, argv, i, "--device"))) {
        if (!strcmp(v, "auto")) {
            s->o.device = -1;
        } else {
            if (tdm_cli_uint(cmd, "--device", v, 0, 1023, &u))
                return -1;
            s->o.device = (int)u;
        }
    } else if ((v = tdm_cli_opt(argc, argv, i, "--scoring"))) {
        if (!strcmp(v, "bm25"))
            s->o.scoring = TDM_SCORE_BM25;
        else if (!strcmp(v, "impact"))
            s->o.scoring = TDM_SCORE_IMPACT;
        else {
            tdm_cli_fail(cmd, "--scoring '%s': expected bm25 or impact", v);
            return -1;
        }
    } else if ((v = tdm_cli_opt(argc, argv, i, "--k1"))) {
        if (tdm_cli_real(cmd, "--k1", v, 0, 0, TDM_CLI_MAX_K1, &s->o.k1))
            return -1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--b"))) {
        if (tdm_cli_real(cmd, "--b", v, 0, 0, 1, &s->o.b))
            return -1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--ranges"))) {
        if (tdm_cli_uint(cmd, "--ranges", v, 1, UINT32_MAX, &u))
            return -1;
        s->o.ranges = (uint32_t)u;
    } else {
        return 0;
    }
    return 1;
}

static const char shared_help[] =
    "  -k N             results wanted, 1..10000\n"
    "  --algorithm A    auto (default), or, and, and_or, wand, bmw, maxscore: all exact\n"
    "  --device D       an engine device index ('tandem devices'), or auto\n"
    "  --scoring S      bm25 (default) or impact (stored frequencies are impacts)\n"
    "  --k1 X --b X     BM25 parameters (1.2, 0.75); any values stay exact\n"
    "  --ranges N       docid ranges a device splits the work into (planner's choice)\n"
    "The devices are TANDEM_DEVICES's ('tandem --help').\n";

/* Opens engine, index and search handle; prints why on failure. */
static int open_all(const char *cmd, const char *path, tdm_engine **e, tdm_index **ix,
                    tdm_search **s)
{
    *e = NULL;
    *ix = NULL;
    *s = NULL;
    if (tdm_index_open(path, ix) != TDM_OK)
        return tdm_cli_fail(cmd, "%s", tdm_last_error());
    if (tdm_engine_open(NULL, e) != TDM_OK)
        return tdm_cli_fail(cmd, "%s", tdm_last_error());
    if (tdm_search_open(*e, *ix, s) != TDM_OK)
        return tdm_cli_fail(cmd, "%s", tdm_last_error());
    return 0;
}

static void close_all(tdm_engine *e, tdm_index *ix, tdm_search *s)
{
    tdm_search_close(s);
    tdm_engine_close(e);
    tdm_index_close(ix);
}

static const char *device_name(tdm_engine *e, int d, tdm_device_info *info)
{
    if (d < 0 || tdm_engine_device_info_get(e, d, info) != TDM_OK)
        return "none";
    return info->name;
}

static void print_json(tdm_engine *e, const char *text, const tdm_search_result *r)
{
    tdm_device_info info;
    printf("{\"query\": ");
    tdm_json_string(stdout, text);
    printf(", \"device\": %d, \"device_name\": ", r->device);
    tdm_json_string(stdout, device_name(e, r->device, &info));
    printf(", \"algorithm\": \"%s\", \"seconds\": %.6f, \"terms\": %u, \"unknown_terms\": %u, "
           "\"ranges\": %u, \"variant\": \"%s\", \"launches\": %u, \"bytes_up\": %llu, "
           "\"bytes_down\": %llu, \"hits\": [",
           tdm_algorithm_name(r->algorithm), r->seconds, r->terms, r->unknown, r->ranges,
           r->variant == TDM_VARIANT_GROUP ? "group" : "item", r->launches,
           (unsigned long long)r->bytes_up, (unsigned long long)r->bytes_down);
    for (size_t i = 0; i < r->n; i++) {
        printf("%s{\"rank\": %zu, \"docid\": %u, \"name\": ", i ? ", " : "", i + 1,
               r->hits[i].docid);
        tdm_json_string(stdout, r->hits[i].name ? r->hits[i].name : "");
        printf(", \"score\": %.9g}", r->hits[i].score);
    }
    printf("]}\n");
}

int tdm_cmd_search(int argc, char **argv)
{
    sopts s = {0};
    tdm_search_options_init(&s.o);
    const char *text = NULL;
    for (int i = 1; i < argc; i++) {
        int t;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: tandem search INDEX \"query text\" [options]\n"
                   "  the top k documents: rank, score, name (TAB separated), then which\n"
                   "  device and algorithm answered in how long (stderr); text goes through\n"
                   "  the index's own tokenizer, stopwords and stemmer.\n%s"
                   "  --json           one JSON object on stdout instead\n",
                   shared_help);
            return 0;
        } else if ((t = shared_opt("search", argc, argv, &i, &s))) {
            if (t < 0)
                return 1;
        } else if (!strcmp(argv[i], "--json")) {
            s.json = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return tdm_cli_fail("search", "unknown or incomplete option '%s'", argv[i]);
        } else if (!s.index) {
            s.index = argv[i];
        } else if (!text) {
            text = argv[i];
        } else {
            return tdm_cli_fail("search", "unexpected argument '%s' (quote the query)", argv[i]);
        }
    }
    if (!s.index || !text)
        return tdm_cli_fail("search", "need INDEX and the query text ('tandem search --help')");
    tdm_engine *e;
    tdm_index *ix;
    tdm_search *sh;
    int rc = open_all("search", s.index, &e, &ix, &sh);
    tdm_search_result *r = NULL;
    if (rc == 0 && tdm_search_text(sh, text, &s.o, &r) != TDM_OK)
        rc = tdm_cli_fail("search", "%s", tdm_last_error());
    if (rc == 0) {
        tdm_device_info info;
        if (s.json) {
            print_json(e, text, r);
        } else {
            for (size_t i = 0; i < r->n; i++)
                printf("%zu\t%.6f\t%s\n", i + 1, r->hits[i].score,
                       r->hits[i].name ? r->hits[i].name : "");
            fprintf(stderr, "%zu results; %s on device %d (%s), %.3f ms%s\n", r->n,
                    tdm_algorithm_name(r->algorithm), r->device,
                    device_name(e, r->device, &info), r->seconds * 1e3,
                    r->unknown ? "; some terms are not in the index" : "");
        }
    }
    tdm_search_result_free(r);
    close_all(e, ix, sh);
    return rc;
}

/* ---- run */

static int run_one(tdm_search *sh, const tdm_qf_query *q, const tdm_search_options *o,
                   tdm_search_result **r)
{
    if (q->text)
        return tdm_search_text(sh, q->text, o, r);
    tdm_search_term *t = calloc(q->nterms ? q->nterms : 1, sizeof *t);
    if (!t)
        return TDM_ERR_NOMEM;
    for (size_t i = 0; i < q->nterms; i++)
        t[i] = (tdm_search_term){q->terms[i].term, 0, q->terms[i].weight};
    int rc = tdm_search_terms(sh, t, q->nterms, o, r);
    free(t);
    return rc;
}

/* prefix goes before every document name (CACM's qrels say CACM-1410 where
 * the collection says 1410). */
static int write_run(FILE *out, const tdm_qf_query *q, const tdm_search_result *r,
                     const char *tag, const char *prefix)
{
    for (size_t i = 0; i < r->n; i++)
        if (fprintf(out, "%s Q0 %s%s %zu %.6f %s\n", q->id, prefix,
                    r->hits[i].name ? r->hits[i].name : "", i + 1, r->hits[i].score, tag) < 0)
            return -1;
    return 0;
}

int tdm_cmd_run(int argc, char **argv)
{
    sopts s = {0};
    tdm_search_options_init(&s.o);
    s.o.k = 1000;
    const char *qpath = NULL, *out = NULL, *tag = "tandem", *v;
    const char *prefix = "";
    tdm_qf_options qo = {TDM_QF_AUTO, 0, 0};
    for (int i = 1; i < argc; i++) {
        int t;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: tandem run INDEX --queries FILE -o RUN [options]\n"
                   "  every query of FILE to a TREC run: 'qid Q0 docname rank score tag'.\n"
                   "  FILE: id:text lines, id<TAB>text, TREC topics, SMART .I/.W, JSON lines\n"
                   "  ({\"id\", \"text\"} or weighted {\"id\", \"terms\": {term: weight}}).\n"
                   "  -o RUN           output file, '-' for stdout\n"
                   "  --tag T          run tag (tandem)\n"
                   "  --docname-prefix P  P before every document name (CACM-, to match\n"
                   "                   qrels.cacm.trec.txt)\n"
                   "  --format F       auto (default), colon, tab, trec, smart, jsonl\n"
                   "  --fields LIST    TREC topics: title,desc,narr (title)\n"
                   "  --by-position    SMART: number queries 1, 2, 3 ... in file order\n"
                   "  (k defaults to 1000 here)\n%s",
                   shared_help);
            return 0;
        } else if ((t = shared_opt("run", argc, argv, &i, &s))) {
            if (t < 0)
                return 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--queries"))) {
            qpath = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "-o"))) {
            out = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--tag"))) {
            tag = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--docname-prefix"))) {
            prefix = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--format"))) {
            if ((qo.format = tdm_qf_format_by_name(v)) < 0)
                return tdm_cli_fail("run", "--format '%s': expected auto, colon, tab, trec, "
                                           "smart or jsonl", v);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--fields"))) {
            if (!(qo.trec_fields = tdm_qf_fields_by_names(v)))
                return tdm_cli_fail("run", "--fields '%s': expected a comma list of title, "
                                           "desc, narr", v);
        } else if (!strcmp(argv[i], "--by-position")) {
            qo.number_by_position = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return tdm_cli_fail("run", "unknown or incomplete option '%s'", argv[i]);
        } else if (!s.index) {
            s.index = argv[i];
        } else {
            return tdm_cli_fail("run", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!s.index || !qpath || !out)
        return tdm_cli_fail("run", "need INDEX, --queries FILE and -o RUN ('tandem run --help')");
    if (!*tag || strpbrk(tag, " \t\n"))
        return tdm_cli_fail("run", "--tag '%s': must be non-empty, without white space", tag);
    if (strpbrk(prefix, " \t\n"))
        return tdm_cli_fail("run", "--docname-prefix '%s': must be without white space", prefix);
    int to_stdout = 0;
    const char *inputs[2] = {s.index, qpath};
    if (tdm_cli_output("run", "-o", out, 1, inputs, 2, &to_stdout))
        return 1;
    tdm_err err = {0};
    tdm_qfile *qf = NULL;
    if (tdm_qfile_read(qpath, &qo, &qf, &err) != TDM_OK) {
        tdm_cli_fail("run", "%s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return 1;
    }
    tdm_engine *e;
    tdm_index *ix;
    tdm_search *sh;
    int rc = open_all("run", s.index, &e, &ix, &sh);
    FILE *f = NULL;
    if (rc == 0 && !(f = to_stdout ? stdout : fopen(out, "w")))
        rc = tdm_cli_fail("run", "%s: cannot write", out);
    double t0 = tdm_cli_now(), busy = 0;
    int tty = isatty(2);
    for (size_t i = 0; rc == 0 && i < qf->n; i++) {
        tdm_search_result *r = NULL;
        if (run_one(sh, &qf->q[i], &s.o, &r) != TDM_OK) {
            rc = tdm_cli_fail("run", "%s: query '%s' (line %llu): %s", qpath, qf->q[i].id,
                              (unsigned long long)qf->q[i].line, tdm_last_error());
            break;
        }
        busy += r->seconds;
        if (write_run(f, &qf->q[i], r, tag, prefix))
            rc = tdm_cli_fail("run", "%s: write failed", out);
        tdm_search_result_free(r);
        if (tty && (i % 16 == 15 || i + 1 == qf->n))
            fprintf(stderr, "\r%zu/%zu queries", i + 1, qf->n);
    }
    if (tty && qf->n)
        fputc('\n', stderr);
    if (f && !to_stdout && fclose(f) != 0 && rc == 0)
        rc = tdm_cli_fail("run", "%s: write failed", out);
    if (rc == 0)
        fprintf(stderr, "%zu queries in %.3f s (%.3f ms a query in search calls)\n", qf->n,
                tdm_cli_now() - t0, qf->n ? busy * 1e3 / qf->n : 0.0);
    close_all(e, ix, sh);
    tdm_qfile_free(qf);
    return rc;
}
