/* The public tdm_index_* functions (include/tandem.h) over the internal reader. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "common/error.h"
#include "common/strutil.h"
#include "reader.h"
#include "tandem.h"
#include "tokenize.h"

struct tdm_index {
    tdm_ireader *r;
    pthread_mutex_t lock;   /* guards err: one index may be shared by threads */
    tdm_err err;
};

#define MSG_MAX 2048
static _Thread_local char open_msg[MSG_MAX];   /* last failed open/build on this thread */
static _Thread_local char copy_msg[MSG_MAX];   /* what tdm_index_errmsg hands out */

/* Keeps the message for tdm_index_errmsg(NULL); returns the status. */
static int set_open_err(tdm_err *e, int rc)
{
    tdm_strlcpy(open_msg, e->msg ? e->msg : tdm_strerror(rc), sizeof open_msg);
    tdm_err_clear(e);
    return rc;
}

/* Records a failure on a shared handle. */
static int fail(const tdm_index *ix, tdm_err *e, int rc)
{
    tdm_index *m = (tdm_index *)ix;   /* the message is the only mutable state */
    pthread_mutex_lock(&m->lock);
    tdm_err_copy(&m->err, e);
    pthread_mutex_unlock(&m->lock);
    tdm_err_clear(e);
    return rc;
}

TDM_API int tdm_index_open(const char *path, tdm_index **out)
{
    tdm_err e = {0};
    if (!out)
        return TDM_ERR_INVALID_ARG;
    *out = NULL;
    if (!path) {
        tdm_err_set(&e, TDM_ERR_INVALID_ARG, "no index path");
        return set_open_err(&e, TDM_ERR_INVALID_ARG);
    }
    tdm_index *ix = calloc(1, sizeof *ix);
    if (!ix) {
        tdm_err_set(&e, TDM_ERR_NOMEM, "out of memory");
        return set_open_err(&e, TDM_ERR_NOMEM);
    }
    int rc = tdm_ireader_open(path, &ix->r, &e);
    if (rc != TDM_OK) {
        free(ix);
        return set_open_err(&e, rc);
    }
    pthread_mutex_init(&ix->lock, NULL);
    *out = ix;
    return TDM_OK;
}

TDM_API void tdm_index_close(tdm_index *ix)
{
    if (!ix)
        return;
    tdm_ireader_close(ix->r);
    tdm_err_clear(&ix->err);
    pthread_mutex_destroy(&ix->lock);
    free(ix);
}

TDM_API const char *tdm_index_errmsg(const tdm_index *ix)
{
    if (!ix)
        return open_msg;
    tdm_index *m = (tdm_index *)ix;
    pthread_mutex_lock(&m->lock);
    tdm_strlcpy(copy_msg, tdm_err_msg(&m->err), sizeof copy_msg);
    pthread_mutex_unlock(&m->lock);
    return copy_msg;
}

TDM_API int tdm_index_stats_get(const tdm_index *ix, tdm_index_stats *s)
{
    if (!ix || !s)
        return TDM_ERR_INVALID_ARG;
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
    tdm_strlcpy(s->codec, i->codec, sizeof s->codec);
    tdm_strlcpy(s->stemmer, i->stemmer, sizeof s->stemmer);
    s->stopwords = i->nstopwords;
    s->file_bytes = i->file_size;
    return TDM_OK;
}

TDM_API int tdm_index_term(const tdm_index *ix, const char *term, uint32_t *df, uint64_t *cf)
{
    if (!ix || !term)
        return TDM_ERR_INVALID_ARG;
    uint64_t i;
    if (tdm_ireader_find(ix->r, term, strlen(term), &i) != TDM_OK)
        return TDM_ERR_NOT_FOUND;
    tdm_ireader_term(ix->r, i, NULL, df, cf);
    return TDM_OK;
}

TDM_API int tdm_index_normalize(const tdm_index *ix, const char *word, char *term, size_t cap)
{
    if (!ix || !word || !term || cap == 0)
        return TDM_ERR_INVALID_ARG;
    const tdm_ireader_info *info = tdm_ireader_info_get(ix->r);
    const char **stops = malloc((info->nstopwords + 1) * sizeof *stops);
    tdm_err e = {0};
    if (!stops)
        return TDM_ERR_NOMEM;
    for (uint32_t i = 0; i < info->nstopwords; i++)
        stops[i] = tdm_ireader_stopword(ix->r, i);
    tdm_tokenizer *t = NULL;
    int rc = tdm_tokenizer_open(info->stemmer, stops, info->nstopwords, &t, &e);
    free(stops);
    if (rc)
        return fail(ix, &e, rc);
    char buf[2 * TDM_TERM_MAX_BYTES + 1];
    size_t len = tdm_tokenize_first(t, word, strlen(word), buf);
    tdm_tokenizer_free(t);
    if (len == 0)
        return TDM_ERR_NOT_FOUND;
    if (len >= cap)
        return TDM_ERR_LIMIT;
    memcpy(term, buf, len + 1);
    return TDM_OK;
}

TDM_API int tdm_index_postings(const tdm_index *ix, const char *term, uint32_t *docids,
                               uint32_t *freqs, size_t cap, size_t *n)
{
    if (!ix || !term || !n)
        return TDM_ERR_INVALID_ARG;
    *n = 0;
    uint64_t i;
    uint32_t df;
    if (tdm_ireader_find(ix->r, term, strlen(term), &i) != TDM_OK)
        return TDM_ERR_NOT_FOUND;
    tdm_ireader_term(ix->r, i, NULL, &df, NULL);
    *n = df;
    if (cap < df)
        return TDM_ERR_LIMIT;
    tdm_err e = {0};
    int rc = tdm_ireader_decode(ix->r, i, docids, freqs, &e);
    return rc == TDM_OK ? TDM_OK : fail(ix, &e, rc);
}

TDM_API const char *tdm_index_docname(const tdm_index *ix, uint32_t docid)
{
    return ix ? tdm_ireader_docname(ix->r, docid) : NULL;
}

TDM_API uint32_t tdm_index_doclen(const tdm_index *ix, uint32_t docid)
{
    if (!ix || docid >= tdm_ireader_info_get(ix->r)->ndocs)
        return 0;
    return tdm_ireader_doclens(ix->r)[docid];
}

TDM_API int tdm_index_verify(const tdm_index *ix)
{
    if (!ix)
        return TDM_ERR_INVALID_ARG;
    tdm_err e = {0};
    int rc = tdm_ireader_verify(ix->r, &e);
    return rc == TDM_OK ? TDM_OK : fail(ix, &e, rc);
}

TDM_API int tdm_index_build(const char *const *inputs, size_t ninputs, const char *out_path,
                            const tdm_index_build_options *opts)
{
    tdm_err e = {0};
    if (!inputs && ninputs) {
        tdm_err_set(&e, TDM_ERR_INVALID_ARG, "no inputs");
        return set_open_err(&e, TDM_ERR_INVALID_ARG);
    }
    int rc = tdm_build_index(inputs, ninputs, out_path, opts, &e);
    return rc == TDM_OK ? TDM_OK : set_open_err(&e, rc);
}
