/* Reading qrels and runs (eval.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "eval_priv.h"
#include "text/linereader.h"
#include "tandem.h"

/* Splits line in place at spaces and tabs; up to max fields; returns the
 * count (max + 1 if there are more). */
static int split(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (!*p)
            return n;
        if (n == max)
            return max + 1;
        f[n++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r')
            p++;
        if (*p)
            *p++ = 0;
    }
}

static int parse_long(const char *s, long *v)
{
    char *e;
    errno = 0;
    *v = strtol(s, &e, 10);
    return e != s && !*e && errno == 0;
}

static int parse_double(const char *s, double *v)
{
    char *e;
    errno = 0;
    *v = strtod(s, &e);
    return e != s && !*e && isfinite(*v);
}

/* ---- qrels */

static int judg_cmp(const void *a, const void *b)
{
    const tdm_judgment *x = a, *y = b;
    int c = strcmp(x->qid, y->qid);
    return c ? c : strcmp(x->docno, y->docno);
}

typedef struct qrels_ctx {
    tdm_qrels *q;
    size_t cap;
    int format;
    const char *path;
} qrels_ctx;

static int qrels_line(qrels_ctx *c, char *line, uint64_t lineno, tdm_err *err)
{
    char *f[5];
    int n = split(line, f, 4);
    if (n == 0)
        return TDM_OK; /* blank lines are harmless */
    if (c->format == TDM_QRELS_AUTO)
        c->format = n == 3 ? TDM_QRELS_CRANFIELD : TDM_QRELS_TREC;
    int want = c->format == TDM_QRELS_CRANFIELD ? 3 : 4;
    if (n != want)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: line %llu: %d columns, want %d (%s)",
                           c->path, (unsigned long long)lineno, n > 4 ? 5 : n, want,
                           want == 3 ? "qid docno grade" : "qid iter docno rel");
    /* A decimal ("0.000000", written by some tools) counts by its integer
     * part, as trec_eval's atol reads it. */
    double relv;
    if (!parse_double(f[want - 1], &relv) || relv < -1000000 || relv > 1000000)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: line %llu: relevance '%s' is not a number",
                           c->path, (unsigned long long)lineno, f[want - 1]);
    long rel = (long)relv;
    if (want == 3) {
        if (rel != -1 && (rel < 1 || rel > 4))
            return tdm_err_set(err, TDM_ERR_FORMAT,
                               "%s: line %llu: Cranfield grade %ld (want 1..4 or -1)", c->path,
                               (unsigned long long)lineno, rel);
        rel = rel == -1 ? 0 : 5 - rel;
    }
    tdm_judgment *grown = tdm_array_grow(c->q->j, &c->cap, c->q->n + 1, sizeof *grown);
    if (!grown)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    c->q->j = grown;
    tdm_judgment *j = &c->q->j[c->q->n];
    j->qid = tdm_arena_strdup(&c->q->strs, f[0], strlen(f[0]));
    j->docno = tdm_arena_strdup(&c->q->strs, f[want - 2], strlen(f[want - 2]));
    if (!j->qid || !j->docno)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    j->level = (int)rel;
    j->line = lineno;
    c->q->n++;
    return TDM_OK;
}

int tdm_qrels_read(const char *path, int format, tdm_qrels **out, tdm_err *err)
{
    *out = NULL;
    if (format < TDM_QRELS_AUTO || format > TDM_QRELS_CRANFIELD)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "qrels format %d", format);
    tdm_linereader *lr;
    int rc = tdm_lr_open(path, &lr, err);
    if (rc)
        return rc;
    qrels_ctx c = {calloc(1, sizeof(tdm_qrels)), 0, format, path};
    char *line;
    size_t len;
    if (!c.q)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    while (rc == TDM_OK && (rc = tdm_lr_next(lr, &line, &len, err)) == 1)
        rc = qrels_line(&c, line, tdm_lr_lineno(lr), err);
    tdm_lr_close(lr);
    if (rc == TDM_OK && c.q->n == 0)
        rc = tdm_err_set(err, TDM_ERR_FORMAT, "%s: no judgments", path);
    if (rc == TDM_OK) {
        qsort(c.q->j, c.q->n, sizeof *c.q->j, judg_cmp);
        for (size_t i = 1; i < c.q->n && rc == TDM_OK; i++)
            if (!judg_cmp(&c.q->j[i - 1], &c.q->j[i]))
                rc = tdm_err_set(err, TDM_ERR_FORMAT,
                                 "%s: lines %llu and %llu: query %s judges %s twice%s", path,
                                 (unsigned long long)c.q->j[i - 1].line,
                                 (unsigned long long)c.q->j[i].line, c.q->j[i].qid,
                                 c.q->j[i].docno,
                                 c.format == TDM_QRELS_TREC
                                     ? " (read as TREC qrels `qid iter docno rel`: is it?"
                                       " CACM's qrels.text is not; use qrels.cacm.trec.txt)"
                                     : "");
    }
    if (rc != TDM_OK) {
        tdm_qrels_free(c.q);
        return rc;
    }
    *out = c.q;
    return TDM_OK;
}

void tdm_qrels_free(tdm_qrels *q)
{
    if (!q)
        return;
    free(q->j);
    tdm_arena_free(&q->strs);
    free(q);
}

/* ---- runs */

static int run_docno_cmp(const void *a, const void *b)
{
    const tdm_run_entry *x = a, *y = b;
    int c = strcmp(x->qid, y->qid);
    return c ? c : strcmp(x->docno, y->docno);
}

/* trec_eval's order: score descending, then docno descending. */
static int run_rank_cmp(const void *a, const void *b)
{
    const tdm_run_entry *x = a, *y = b;
    int c = strcmp(x->qid, y->qid);
    if (c)
        return c;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return strcmp(y->docno, x->docno);
}

static int run_line(tdm_run *r, size_t *cap, const char *path, char *line, uint64_t lineno,
                    tdm_err *err)
{
    char *f[7];
    int n = split(line, f, 6);
    if (n == 0)
        return TDM_OK;
    long rank;
    double score;
    if (n != 6)
        return tdm_err_set(err, TDM_ERR_FORMAT,
                           "%s: line %llu: %s columns, want 6 (qid Q0 docno rank score tag)",
                           path, (unsigned long long)lineno, n > 6 ? "more than 6" : "fewer");
    if (!parse_long(f[3], &rank))
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: line %llu: rank '%s' is not an integer",
                           path, (unsigned long long)lineno, f[3]);
    if (!parse_double(f[4], &score))
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: line %llu: score '%s' is not a finite number",
                           path, (unsigned long long)lineno, f[4]);
    tdm_run_entry *grown = tdm_array_grow(r->e, cap, r->n + 1, sizeof *grown);
    if (!grown)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    r->e = grown;
    tdm_run_entry *e = &r->e[r->n];
    e->qid = tdm_arena_strdup(&r->strs, f[0], strlen(f[0]));
    e->docno = tdm_arena_strdup(&r->strs, f[2], strlen(f[2]));
    if (!e->qid || !e->docno)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    e->score = score;
    e->line = lineno;
    r->n++;
    return TDM_OK;
}

int tdm_run_read(const char *path, tdm_run **out, tdm_err *err)
{
    *out = NULL;
    tdm_linereader *lr;
    int rc = tdm_lr_open(path, &lr, err);
    if (rc)
        return rc;
    tdm_run *r = calloc(1, sizeof *r);
    size_t cap = 0, len;
    char *line;
    if (!r)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    while (rc == TDM_OK && (rc = tdm_lr_next(lr, &line, &len, err)) == 1)
        rc = run_line(r, &cap, path, line, tdm_lr_lineno(lr), err);
    tdm_lr_close(lr);
    if (rc == TDM_OK) {
        qsort(r->e, r->n, sizeof *r->e, run_docno_cmp);
        for (size_t i = 1; i < r->n && rc == TDM_OK; i++)
            if (!run_docno_cmp(&r->e[i - 1], &r->e[i]))
                rc = tdm_err_set(err, TDM_ERR_FORMAT,
                                 "%s: lines %llu and %llu: query %s retrieves %s twice", path,
                                 (unsigned long long)r->e[i - 1].line,
                                 (unsigned long long)r->e[i].line, r->e[i].qid, r->e[i].docno);
        qsort(r->e, r->n, sizeof *r->e, run_rank_cmp);
    }
    if (rc != TDM_OK) {
        tdm_run_free(r);
        return rc;
    }
    *out = r;
    return TDM_OK;
}

void tdm_run_free(tdm_run *r)
{
    if (!r)
        return;
    free(r->e);
    tdm_arena_free(&r->strs);
    free(r);
}
