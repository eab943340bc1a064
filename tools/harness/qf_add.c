/* Adding a query to a query file, and the readers' errors (qf_priv.h): what
 * queryfile.c and every reader (qf_*.c) share, apart from both so that the
 * readers never call back into queryfile.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "qf_priv.h"
#include "tandem.h"

int tdm_qf_bare_cr(tdm_qf_ctx *c, const char *line, size_t len, uint64_t ln)
{
    const char *cr = memchr(line, '\r', len);
    if (!cr)
        return TDM_OK;
    return tdm_qf_fail(c, ln, "a carriage return (CR) at byte %zu: lines end with LF or CR LF "
                       "(a file with CR-only line ends? convert them to LF)",
                       (size_t)(cr - line) + 1);
}

int tdm_qf_fail(tdm_qf_ctx *c, uint64_t line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tdm_err_set(c->err, TDM_ERR_FORMAT, "%s: line %llu: %s", c->path,
                       (unsigned long long)line, msg);
}

static int copy_terms(tdm_qf_ctx *c, const tdm_qf_term *terms, size_t n, tdm_qf_term **out)
{
    tdm_qfile *f = c->f;
    tdm_qf_term **b = realloc(f->termblocks, (f->ntermblocks + 1) * sizeof *b);
    if (!b)
        return TDM_ERR_NOMEM;
    f->termblocks = b;
    tdm_qf_term *t = malloc((n ? n : 1) * sizeof *t);
    if (!t)
        return TDM_ERR_NOMEM;
    b[f->ntermblocks++] = t;
    for (size_t i = 0; i < n; i++) {
        t[i].weight = terms[i].weight;
        if (!(t[i].term = tdm_arena_strdup(&f->strs, terms[i].term, strlen(terms[i].term))))
            return TDM_ERR_NOMEM;
    }
    *out = t;
    return TDM_OK;
}

int tdm_qf_add(tdm_qf_ctx *c, const char *id, size_t idlen, const char *text, size_t tlen,
               const tdm_qf_term *terms, size_t nterms, uint64_t line)
{
    tdm_qfile *f = c->f;
    while (idlen && (*id == ' ' || *id == '\t'))
        id++, idlen--;
    while (idlen && (id[idlen - 1] == ' ' || id[idlen - 1] == '\t'))
        idlen--;
    if (idlen == 0)
        return tdm_qf_fail(c, line, "empty query id");
    /* A TREC run's columns are split at white space, and its lines at line
     * ends: an id carries neither, nor any other control character. */
    for (size_t i = 0; i < idlen; i++) {
        unsigned char ch = (unsigned char)id[i];
        if (ch <= ' ' || ch == 0x7f)
            return tdm_qf_fail(c, line, "query id '%.*s...' holds %s (byte 0x%02x at %zu), "
                               "which a TREC run cannot carry", (int)(i > 64 ? 64 : i), id,
                               ch == ' ' || ch == '\t' ? "white space" : "a control character",
                               ch, i + 1);
    }
    tdm_qf_query *grown = tdm_array_grow(f->q, &f->cap, f->n + 1, sizeof *grown);
    if (!grown)
        return tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory");
    f->q = grown;
    tdm_qf_query *q = &f->q[f->n];
    memset(q, 0, sizeof *q);
    q->line = line;
    q->id = tdm_arena_strdup(&f->strs, id, idlen);
    int rc = q->id ? TDM_OK : TDM_ERR_NOMEM;
    if (rc == TDM_OK && text && !(q->text = tdm_arena_strdup(&f->strs, text, tlen)))
        rc = TDM_ERR_NOMEM;
    if (rc == TDM_OK && !text) {
        tdm_qf_term *t = NULL;
        rc = copy_terms(c, terms, nterms, &t);
        q->terms = t;
        q->nterms = nterms;
    }
    if (rc)
        return tdm_err_set(c->err, rc, "out of memory");
    f->n++;
    return TDM_OK;
}
