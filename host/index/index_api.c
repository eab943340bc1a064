/* The public tdm_index_* functions (include/tandem.h) over the internal reader,
 * or over the readers of a split's shards opened together (one collection:
 * the whole index's statistics, names and postings; docs/PARTITION.md).
 * Each clears the calling thread's last error on entry and sets it on
 * failure (common/error.h); an open index holds no mutable state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_priv.h"
#include "common/error.h"
#include "reader.h"
#include "shard.h"
#include "tandem.h"
#include "text/tokenize.h"

struct tdm_index {
    tdm_ireader *r;          /* the index file, or shard 0 of a split opened whole */
    tdm_ireader **shards;    /* [nshards] a split's shards in order (shards[0] is r), or NULL */
    size_t nshards;
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
    if (!ix->shards)
        tdm_ireader_close(ix->r);
    for (size_t i = 0; i < ix->nshards; i++)
        tdm_ireader_close(ix->shards[i]);
    free(ix->shards);
    free(ix);
}

/* ---- a split's shards opened together */

static int by_shard(const void *a, const void *b)
{
    uint32_t x = tdm_ireader_info_get(*(tdm_ireader *const *)a)->shard_index;
    uint32_t y = tdm_ireader_info_get(*(tdm_ireader *const *)b)->shard_index;
    return (x > y) - (x < y);
}

/* rs[0 .. n) (taken: closed here on failure) as one index: put in shard
 * order (paths may come in any order, as a shell's PREFIX.* sorts 10
 * before 2), then checked as one split, every shard once; the shards
 * share shard 0's lexicon hash. */
static int open_set(tdm_ireader **rs, size_t n, tdm_index **out, tdm_err *err)
{
    qsort(rs, n, sizeof *rs, by_shard);
    int rc = tdm_shard_set_check((const tdm_ireader *const *)rs, n, err);
    tdm_index *ix = rc ? NULL : calloc(1, sizeof *ix);
    if (rc == TDM_OK && !ix)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (rc) {
        for (size_t i = 0; i < n; i++)
            tdm_ireader_close(rs[i]);
        free(rs);
        return rc;
    }
    for (size_t i = 1; i < n; i++) /* one split: every shard has the whole's terms */
        tdm_ireader_share_lexicon(rs[i], rs[0]);
    ix->r = rs[0];
    ix->shards = rs;
    ix->nshards = n;
    *out = ix;
    return TDM_OK;
}

TDM_API int tdm_index_open_shards(const char *const *paths, size_t n, tdm_index **out)
{
    tdm_api_enter();
    if (!out)
        return null_arg("tdm_index_open_shards", "out");
    *out = NULL;
    if (!paths)
        return null_arg("tdm_index_open_shards", "paths");
    if (n == 0 || n > TDM_SHARDS_MAX)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_index_open_shards: %zu shards (1 to %u)",
                            n, TDM_SHARDS_MAX);
    tdm_ireader **rs = calloc(n, sizeof *rs);
    if (!rs)
        return tdm_api_fail(TDM_ERR_NOMEM, "tdm_index_open_shards: out of memory");
    tdm_err e = {0};
    int rc = TDM_OK;
    for (size_t i = 0; rc == TDM_OK && i < n; i++)
        rc = paths[i] ? tdm_ireader_open(paths[i], &rs[i], &e)
                      : tdm_err_set(&e, TDM_ERR_INVALID_ARG, "tdm_index_open_shards: paths[%zu] "
                                    "is NULL", i);
    if (rc) {
        for (size_t i = 0; i < n; i++)
            tdm_ireader_close(rs[i]);
        free(rs);
        return tdm_api_fail_err(&e, rc);
    }
    return tdm_api_result(open_set(rs, n, out, &e), &e);
}

TDM_API int tdm_index_open_split(const char *prefix, tdm_index **out)
{
    tdm_api_enter();
    if (!out)
        return null_arg("tdm_index_open_split", "out");
    *out = NULL;
    if (!prefix)
        return null_arg("tdm_index_open_split", "prefix");
    size_t len = strlen(prefix) + 16;
    char *path = malloc(len);
    if (!path)
        return tdm_api_fail(TDM_ERR_NOMEM, "tdm_index_open_split: out of memory");
    snprintf(path, len, "%s.0", prefix);
    tdm_err e = {0};
    tdm_ireader *first = NULL, **rs = NULL;
    int rc = tdm_ireader_open(path, &first, &e);
    const tdm_ireader_info *in = rc ? NULL : tdm_ireader_info_get(first);
    uint32_t n = in ? in->nshards : 0;
    if (rc == TDM_OK && !in->shard)
        rc = tdm_err_set(&e, TDM_ERR_FORMAT, "%s: not a shard (tandem shard makes them)", path);
    if (rc == TDM_OK && !(rs = calloc(n, sizeof *rs)))
        rc = tdm_err_set(&e, TDM_ERR_NOMEM, "tdm_index_open_split: out of memory");
    if (rc == TDM_OK)
        rs[0] = first, first = NULL;
    for (uint32_t i = 1; rc == TDM_OK && i < n; i++) {
        snprintf(path, len, "%s.%u", prefix, i);
        rc = tdm_ireader_open(path, &rs[i], &e);
    }
    free(path);
    if (rc) {
        tdm_ireader_close(first);
        for (uint32_t i = 0; rs && i < n; i++)
            tdm_ireader_close(rs[i]);
        free(rs);
        return tdm_api_fail_err(&e, rc);
    }
    return tdm_api_result(open_set(rs, n, out, &e), &e);
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
    if (ix->shards) { /* the whole collection's: every shard's file */
        s->postings = i->whole_npostings;
        s->file_bytes = 0;
        for (size_t k = 0; k < ix->nshards; k++)
            s->file_bytes += tdm_ireader_info_get(ix->shards[k])->file_size;
    }
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
    if (rc == TDM_OK && !ix->shards)
        tdm_ireader_term(ix->r, i, NULL, df, cf);
    if (rc == TDM_OK && ix->shards) { /* the whole collection's: df stored, cf summed */
        uint64_t sum = 0, one = 0;
        for (size_t k = 0; k < ix->nshards; k++, sum += one)
            tdm_ireader_term(ix->shards[k], i, NULL, NULL, &one);
        if (df)
            *df = tdm_ireader_score_df(ix->r, i);
        if (cf)
            *cf = sum;
    }
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
    if (ix->shards)
        df = tdm_ireader_score_df(ix->r, i);
    *n = df;
    if (cap < df)
        return tdm_api_fail(TDM_ERR_LIMIT, "term '%.200s' has %u postings, cap is %zu", term, df,
                            cap);
    tdm_err e = {0};
    if (!ix->shards)
        return tdm_api_result(tdm_ireader_decode(ix->r, i, docids, freqs, &e), &e);
    /* a split: the shards' lists one after another (docid ranges in order) */
    size_t at = 0;
    for (size_t k = 0; k < ix->nshards; k++) {
        uint32_t sdf = 0;
        tdm_ireader_term(ix->shards[k], i, NULL, &sdf, NULL);
        if (sdf == 0)
            continue;
        rc = tdm_ireader_decode(ix->shards[k], i, docids ? docids + at : NULL,
                                freqs ? freqs + at : NULL, &e);
        if (rc)
            return tdm_api_fail_err(&e, rc);
        at += sdf;
    }
    return TDM_OK;
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
    if (bad_docid(ix, docid) != TDM_OK)
        return NULL;
    const tdm_ireader *r = ix->r;
    for (size_t k = 0; k < ix->nshards; k++) /* a split: the shard holding its name */
        if (docid < tdm_ireader_info_get(ix->shards[k])->doc_hi) {
            r = ix->shards[k];
            break;
        }
    return tdm_ireader_docname(r, docid);
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
    int rc = TDM_OK;
    for (size_t k = 0; rc == TDM_OK && k < (ix->shards ? ix->nshards : 1); k++)
        rc = tdm_ireader_verify(ix->shards ? ix->shards[k] : ix->r, &e);
    return tdm_api_result(rc, &e);
}

/* index_priv.h: the reader, for the query area. */
const tdm_ireader *tdm_index_ireader(const tdm_index *ix)
{
    return ix ? ix->r : NULL;
}

size_t tdm_index_shards(const tdm_index *ix, tdm_ireader *const **rs)
{
    *rs = ix ? ix->shards : NULL;
    return ix ? ix->nshards : 0;
}
