/* `tandem-mpi run`: every query of the file through the shards, in
 * batches, into a TREC run written exactly as `tandem run` writes it on the
 * unsharded index ('qid Q0 docname rank score tag', file order, %.6f
 * scores): the same bytes, since the merged answers are the whole index's.
 * A query that fails is named and left out (exit status 1), as there; a
 * rank that fails ends the run with no RUN written. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/fsutil.h"
#include "tmpi.h"

#define ERRORS_SHOWN 50

/* The file's queries, weighted terms converted. */
static tmpi_query *make_queries(const tdm_qfile *qf, size_t n)
{
    tmpi_query *q = calloc(n ? n : 1, sizeof *q);
    for (size_t i = 0; q && i < n; i++) {
        const tdm_qf_query *fq = &qf->q[i];
        q[i].text = fq->text;
        if (fq->text)
            continue;
        q[i].nterms = fq->nterms;
        q[i].terms = calloc(fq->nterms ? fq->nterms : 1, sizeof *q[i].terms);
        if (!q[i].terms)
            return NULL; /* (a few bytes leak on the way out) */
        for (size_t j = 0; j < fq->nterms; j++)
            q[i].terms[j] = (tdm_search_term){fq->terms[j].term, 0, fq->terms[j].weight};
    }
    return q;
}

static void free_queries(tmpi_query *q, size_t n)
{
    for (size_t i = 0; q && i < n; i++)
        free(q[i].terms);
    free(q);
}

int tmpi_load_queries(tmpi_ctx *c, tdm_qfile **qf, tmpi_query **q, size_t *n)
{
    tdm_err err = {0};
    tdm_qf_options qo = c->o->qo;
    qo.tokens |= c->impact; /* an impact index's query logs are repeated terms */
    *q = NULL;
    if (tdm_qfile_read(c->o->queries, &qo, qf, &err) != TDM_OK) {
        tmpi_fail(c, "%s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return 1;
    }
    *n = (*qf)->n;
    if (c->o->limit && c->o->limit < *n)
        *n = (size_t)c->o->limit;
    if (*n == 0)
        return tmpi_fail(c, "%s: the file has no queries", c->o->queries);
    if (!(*q = make_queries(*qf, *n)))
        return tmpi_fail(c, "out of memory");
    return 0;
}

void tmpi_free_queries(tdm_qfile *qf, tmpi_query *q, size_t n)
{
    free_queries(q, n);
    tdm_qfile_free(qf);
}

typedef struct counts {
    size_t failed, empty;
    int write_failed;
} counts;

static void write_answer(tmpi_ctx *c, FILE *f, const tdm_qf_query *fq, const tmpi_answer *a,
                         counts *k)
{
    if (a->status != TDM_OK) {
        if (k->failed++ < ERRORS_SHOWN)
            fprintf(stderr, "tandem-mpi run: %s: query '%s' (line %llu): %s\n",
                    c->o->queries, fq->id, (unsigned long long)fq->line,
                    a->error ? a->error : "failed");
        return;
    }
    if (a->terms == 0 && k->empty++ < ERRORS_SHOWN)
        fprintf(stderr, "tandem-mpi run: query '%s' has no term in the index: not in the run\n",
                fq->id);
    for (uint32_t h = 0; h < a->n && !k->write_failed; h++)
        if (fprintf(f, "%s Q0 %s%s %u %.6f %s\n", fq->id, c->o->docprefix,
                    a->hits[h].name ? a->hits[h].name : "", h + 1, a->hits[h].score,
                    c->o->tag) < 0)
            k->write_failed = 1;
}

/* Every batch into f; 0, 2 (some queries failed), 1 (the run failed). */
static int run_all(tmpi_ctx *c, const tdm_qfile *qf, const tmpi_query *q, size_t n, FILE *f)
{
    counts k = {0};
    size_t b = (size_t)c->o->batch;
    tmpi_answer *a = calloc(b, sizeof *a);
    if (!a)
        return tmpi_fail(c, "out of memory");
    double t0 = tdm_cli_now();
    int rc = 0;
    for (size_t at = 0; rc == 0 && at < n && !k.write_failed; at += b) {
        size_t m = n - at < b ? n - at : b;
        if (tmpi_search(c, q + at, m, c->o->so.algorithm, a)) {
            rc = 1;
            break;
        }
        for (size_t i = 0; i < m; i++) {
            write_answer(c, f, &qf->q[at + i], &a[i], &k);
            tmpi_answer_free(&a[i]);
        }
    }
    free(a);
    double el = tdm_cli_now() - t0;
    if (rc == 0 && k.write_failed)
        rc = tmpi_fail(c, "%s: write failed", c->o->out);
    if (rc)
        return rc;
    fprintf(stderr, "%zu queries in %.3f s (%.0f queries/s; %d ranks, batches of %zu)\n", n,
            el, el > 0 ? (double)n / el : 0.0, c->size, b);
    if (k.failed == n)
        return tmpi_fail(c, "every query failed; %s not written", c->o->out);
    if (k.failed) {
        tmpi_fail(c, "%zu of %zu queries failed; the run holds the others", k.failed, n);
        return 2;
    }
    return 0;
}

int tmpi_run(tmpi_ctx *c)
{
    const tmpi_opts *o = c->o;
    char first[4096];
    snprintf(first, sizeof first, "%s.0", o->prefix);
    const char *inputs[2] = {first, o->queries};
    int to_stdout = 0;
    if (tdm_cli_output("mpi run", "-o", o->out, 1, inputs, 2, &to_stdout))
        return 1;
    tdm_qfile *qf = NULL;
    tmpi_query *q = NULL;
    size_t n = 0;
    int rc = tmpi_load_queries(c, &qf, &q, &n);
    tdm_outfile out = {0};
    tdm_err err = {0};
    if (rc == 0 && !to_stdout && tdm_outfile_open(&out, o->out, &err) != TDM_OK)
        rc = tmpi_fail(c, "%s", tdm_err_msg(&err));
    if (rc == 0)
        rc = run_all(c, qf, q, n, to_stdout ? stdout : out.f);
    if ((rc == 0 || rc == 2) && out.f && tdm_outfile_commit(&out, &err) != TDM_OK)
        rc = tmpi_fail(c, "%s", tdm_err_msg(&err));
    tdm_outfile_abort(&out);
    tdm_err_clear(&err);
    tmpi_free_queries(qf, q, n);
    return rc ? 1 : 0;
}
