/* Writing a PISA binary collection from an index: one pass over the lexicon
 * writes .docs, .freqs and .terms together; .sizes and .documents come from
 * the document table; BASE.analyzer carries the stemmer and stopwords
 * (analyzer.h). Each file goes to a temporary name first and all six are
 * renamed into place only when every one is complete. */
#include "pisa.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index/analyzer.h"
#include "common/fsutil.h"
#include "tandem.h"

enum { F_DOCS, F_FREQS, F_SIZES, F_TERMS, F_NAMES, F_ANALYZER, F_COUNT };
static const char *const exts[F_COUNT] = {".docs",  ".freqs",     ".sizes",
                                          ".terms", ".documents", TDM_ANALYZER_EXT};

/* Each file a tdm_outfile: an unpredictable temporary name created
 * exclusively, removed on a signal, fsynced and renamed (fsutil.h). */
typedef tdm_outfile outf;

typedef struct exporter {
    outf o[F_COUNT];
    uint32_t *docids, *freqs;
    size_t cap;
} exporter;

static int put32(outf *o, uint32_t v, tdm_err *err)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    if (fwrite(b, 1, 4, o->f) != 4)
        return tdm_err_set(err, TDM_ERR_IO, "%s: write: %s", o->path, strerror(errno));
    return TDM_OK;
}

static int put_seq(outf *o, const uint32_t *v, uint32_t n, tdm_err *err)
{
    int rc = put32(o, n, err);
    for (uint32_t k = 0; rc == TDM_OK && k < n; k++)
        rc = put32(o, v[k], err);
    return rc;
}

static int put_line(outf *o, const char *s, size_t len, const char *what, uint64_t i,
                    tdm_err *err)
{
    if (memchr(s, '\n', len))
        return tdm_err_set(err, TDM_ERR_UNSUPPORTED,
                           "%s: %s %llu holds a newline, which %s cannot carry", o->path, what,
                           (unsigned long long)i, o->path);
    if (fwrite(s, 1, len, o->f) != len || fputc('\n', o->f) == EOF)
        return tdm_err_set(err, TDM_ERR_IO, "%s: write: %s", o->path, strerror(errno));
    return TDM_OK;
}

static int open_all(exporter *x, const char *base, const char *src, tdm_err *err)
{
    for (int k = 0; k < F_COUNT; k++) {
        size_t n = strlen(base) + strlen(exts[k]) + 1;
        char *path = malloc(n);
        if (!path)
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        snprintf(path, n, "%s%s", base, exts[k]);
        int rc = tdm_output_check(path, &src, 1, err); /* not the index read */
        if (rc == TDM_OK)
            rc = tdm_outfile_open(&x->o[k], path, err);
        free(path);
        if (rc != TDM_OK)
            return rc;
    }
    return TDM_OK;
}

static int put_list(exporter *x, const tdm_ireader *r, uint64_t i, tdm_err *err)
{
    size_t len;
    uint32_t df;
    const char *term = tdm_ireader_term(r, i, &len, &df, NULL);
    if (!term)
        return tdm_err_set(err, TDM_ERR_INTERNAL, "term %llu missing", (unsigned long long)i);
    if (df > x->cap) {
        free(x->docids);
        free(x->freqs);
        x->docids = malloc(df * sizeof *x->docids);
        x->freqs = malloc(df * sizeof *x->freqs);
        x->cap = x->docids && x->freqs ? df : 0;
        if (!x->cap)
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for a list of %u", df);
    }
    int rc = tdm_ireader_decode(r, i, x->docids, x->freqs, err);
    if (rc == TDM_OK)
        rc = put_seq(&x->o[F_DOCS], x->docids, df, err);
    if (rc == TDM_OK)
        rc = put_seq(&x->o[F_FREQS], x->freqs, df, err);
    if (rc == TDM_OK)
        rc = put_line(&x->o[F_TERMS], term, len, "term", i, err);
    return rc;
}

static int put_docs(exporter *x, const tdm_ireader *r, uint32_t ndocs, tdm_err *err)
{
    uint32_t head[1] = {ndocs};
    int rc = put_seq(&x->o[F_DOCS], head, 1, err);
    if (rc == TDM_OK)
        rc = put_seq(&x->o[F_SIZES], tdm_ireader_doclens(r), ndocs, err);
    for (uint32_t d = 0; rc == TDM_OK && d < ndocs; d++) {
        const char *name = tdm_ireader_docname(r, d);
        if (!name)
            return tdm_err_set(err, TDM_ERR_CORRUPT, "document %u has no name", d);
        rc = put_line(&x->o[F_NAMES], name, strlen(name), "document", d, err);
    }
    return rc;
}

static int write_all(exporter *x, const tdm_ireader *r, const char *base, tdm_err *err)
{
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    if (in->ndocs > UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT, "%s: %llu documents exceed PISA's u32", base,
                           (unsigned long long)in->ndocs);
    /* A damaged payload must not be passed on: its checksums first (and
     * every list's decode checks it against its cf and block ends). */
    int rc = tdm_ireader_check_payload(r, err);
    if (rc == TDM_OK)
        rc = open_all(x, base, tdm_ireader_path(r), err);
    if (rc == TDM_OK)
        rc = put_docs(x, r, (uint32_t)in->ndocs, err);
    /* PISA has no place for the analyzer: a side file that import reads
     * (empty for an index whose analyzer is unknown). */
    char *an = rc == TDM_OK ? tdm_analyzer_of_index(r, err) : NULL;
    if (rc == TDM_OK && !an)
        rc = TDM_ERR_NOMEM;
    if (an && fputs(an, x->o[F_ANALYZER].f) == EOF)
        rc = tdm_err_set(err, TDM_ERR_IO, "%s: write: %s", x->o[F_ANALYZER].path,
                         strerror(errno));
    free(an);
    for (uint64_t i = 0; rc == TDM_OK && i < in->nterms; i++)
        rc = put_list(x, r, i, err);
    return rc;
}

int tdm_pisa_export(const tdm_ireader *r, const char *basename, tdm_err *err)
{
    exporter x = {0};
    int rc = write_all(&x, r, basename, err);
    /* Every file written out before the first is renamed into place. */
    for (int k = 0; rc == TDM_OK && k < F_COUNT; k++)
        if (fflush(x.o[k].f) != 0 || ferror(x.o[k].f))
            rc = tdm_err_set(err, TDM_ERR_IO, "%s: write: %s", x.o[k].path, strerror(errno));
    for (int k = 0; k < F_COUNT; k++) {
        if (rc == TDM_OK)
            rc = tdm_outfile_commit(&x.o[k], err);
        else
            tdm_outfile_abort(&x.o[k]);
    }
    free(x.docids);
    free(x.freqs);
    return rc;
}
