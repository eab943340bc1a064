/* The public tdm_index_* functions (include/tandem.h) over the internal reader.
 * Each clears the calling thread's last error on entry and sets it on
 * failure (common/error.h); an open index holds no mutable state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_priv.h"
#include "common/error.h"
#include "reader.h"
#include "tandem.h"
#include "text/tokenize.h"

struct tdm_index {
    tdm_ireader *r;
};

static int null_arg(const char *fn, const char *what)
{
    return tdm_api_fail(TDM_ERR_INVALID_ARG, "%s: %s is NULL", fn, what);
}

TDM_API int tdm_index_open(const char *path, tdm_index **out)
{
    tdm_api_enter();
    if (!out)
        return null_arg("tdm_index_open", "out");
    *out = NULL;
    if (!path)
        return null_arg("tdm_index_open", "path");
    tdm_index *ix = calloc(1, sizeof *ix);
    if (!ix)
        return tdm_api_fail(TDM_ERR_NOMEM, "%s: out of memory", path);
    tdm_err e = {0};
    int rc = tdm_ireader_open(path, &ix->r, &e);
    if (rc != TDM_OK) {
        free(ix);
        return tdm_api_fail_err(&e, rc);
    }
    *out = ix;
    return tdm_api_result(TDM_OK, &e);
}

TDM_API void tdm_index_close(tdm_index *ix)
{
    tdm_api_enter();
    if (!ix)
        return;
    tdm_ireader_close(ix->r);
    free(ix);
}

TDM_API int tdm_index_stats_get(const tdm_index *ix, tdm_index_stats *s)
{
    tdm_api_enter();
    if (!ix || !s)
        return null_arg("tdm_index_stats_get", !ix ? "index" : "stats");
    const tdm_ireader_info *i = tdm_ireader_info_get(ix->r);
    memset(s, 0, sizeof *s);
    s->format_version = i->version;
    s->documents = i->ndocs;
    s->terms = i->nterms;
    s->postings = i->npostings;
    s->total_doclen = i->total_doclen;
    s->avg_doclen = i->avg_doclen;
    s->k1 = i->k1;
    s->b = i->b;
    snprintf(s->codec, sizeof s->codec, "%s", i->codec);
    snprintf(s->stemmer, sizeof s->stemmer, "%s", i->stemmer);
    s->stopwords = i->nstopwords;
    s->file_bytes = i->file_size;
    return TDM_OK;
}

int tdm_index_impact_get(const tdm_index *ix, tdm_index_impact *out)
{
    tdm_api_enter();
    if (!ix || !out)
        return null_arg("tdm_index_impact_get", !ix ? "index" : "impact");
    const tdm_ireader_info *i = tdm_ireader_info_get(ix->r);
    memset(out, 0, sizeof *out);
    out->impact = i->impact;
    out->quantize = i->quant;
    out->bits = i->quant_bits;
    out->scale = i->quant_scale;
    out->max_weight = i->quant_max;
    return TDM_OK;
}

/* Finds `term`; TDM_ERR_NOT_FOUND naming it when absent. */
static int find_term(const tdm_index *ix, const char *term, uint64_t *i)
{
    if (tdm_ireader_find(ix->r, term, strlen(term), i) != TDM_OK)
        return tdm_api_fail(TDM_ERR_NOT_FOUND, "term '%.200s' is not in the index", term);
    return TDM_OK;
}

TDM_API int tdm_index_term_get(const tdm_index *ix, const char *term, uint32_t *df,
                               uint64_t *cf)
{
    tdm_api_enter();
    if (!ix || !term)
        return null_arg("tdm_index_term_get", !ix ? "index" : "term");
    uint64_t i;
    int rc = find_term(ix, term, &i);
    if (rc == TDM_OK)
        tdm_ireader_term(ix->r, i, NULL, df, cf);
    return rc;
}

TDM_API int tdm_index_normalize(const tdm_index *ix, const char *word, char *term, size_t cap)
{
    tdm_api_enter();
    if (!ix || !word || !term)
        return null_arg("tdm_index_normalize", !ix ? "index" : !word ? "word" : "term");
    if (cap == 0)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_index_normalize: cap is 0");
    const tdm_ireader_info *info = tdm_ireader_info_get(ix->r);
    const char **stops = malloc((info->nstopwords + 1) * sizeof *stops);
    tdm_err e = {0};
    if (!stops)
        return tdm_api_fail(TDM_ERR_NOMEM, "tdm_index_normalize: out of memory");
    for (uint32_t i = 0; i < info->nstopwords; i++)
        stops[i] = tdm_ireader_stopword(ix->r, i);
    tdm_tokenizer *t = NULL;
    int rc = tdm_tokenizer_open(info->stemmer, stops, info->nstopwords, &t, &e);
    free(stops);
    if (rc)
        return tdm_api_fail_err(&e, rc);
    char buf[2 * TDM_TERM_MAX_BYTES + 1];
    size_t len = tdm_tokenize_first(t, word, strlen(word), buf);
    tdm_tokenizer_free(t);
    if (len == 0)
        return tdm_api_fail(TDM_ERR_NOT_FOUND, "'%.200s' yields no term (a stopword?)", word);
    if (len >= cap)
        return tdm_api_fail(TDM_ERR_LIMIT, "tdm_index_normalize: the term needs %zu bytes, cap is %zu",
                            len + 1, cap);
    memcpy(term, buf, len + 1);
    return TDM_OK;
}

TDM_API int tdm_index_postings_get(const tdm_index *ix, const char *term, uint32_t *docids,
                                   uint32_t *freqs, size_t cap, size_t *n)
{
    tdm_api_enter();
    if (!ix || !term || !n)
        return null_arg("tdm_index_postings_get", !ix ? "index" : !term ? "term" : "n");
    *n = 0;
    uint64_t i;
    uint32_t df;
    int rc = find_term(ix, term, &i);
    if (rc != TDM_OK)
        return rc;
    tdm_ireader_term(ix->r, i, NULL, &df, NULL);
    *n = df;
    if (cap < df)
        return tdm_api_fail(TDM_ERR_LIMIT, "term '%.200s' has %u postings, cap is %zu", term, df,
                            cap);
    tdm_err e = {0};
    return tdm_api_result(tdm_ireader_decode(ix->r, i, docids, freqs, &e), &e);
}

static int bad_docid(const tdm_index *ix, uint32_t docid)
{
    if (!ix)
        return null_arg("tdm_index_doc*", "index");
    if (docid >= tdm_ireader_info_get(ix->r)->ndocs)
        return tdm_api_fail(TDM_ERR_NOT_FOUND, "docid %u is out of range (%llu documents)",
                            docid, (unsigned long long)tdm_ireader_info_get(ix->r)->ndocs);
    return TDM_OK;
}

TDM_API const char *tdm_index_docname(const tdm_index *ix, uint32_t docid)
{
    tdm_api_enter();
    return bad_docid(ix, docid) == TDM_OK ? tdm_ireader_docname(ix->r, docid) : NULL;
}

TDM_API int tdm_index_doclen_get(const tdm_index *ix, uint32_t docid, uint32_t *len)
{
    tdm_api_enter();
    int rc = bad_docid(ix, docid);
    if (rc == TDM_OK && !len)
        rc = null_arg("tdm_index_doclen_get", "len");
    if (rc == TDM_OK)
        *len = tdm_ireader_doclens(ix->r)[docid];
    return rc;
}

TDM_API int tdm_index_verify(const tdm_index *ix)
{
    tdm_api_enter();
    if (!ix)
        return null_arg("tdm_index_verify", "index");
    tdm_err e = {0};
    return tdm_api_result(tdm_ireader_verify(ix->r, &e), &e);
}

/* index_priv.h: the reader, for the query area. */
const tdm_ireader *tdm_index_ireader(const tdm_index *ix)
{
    return ix ? ix->r : NULL;
}
