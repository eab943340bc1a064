/* A pool of an index's tokenizers (tokpool.h). */
#include "tokpool.h"

#include <pthread.h>
#include <stdlib.h>

#include "tandem.h"

struct tdm_tokpool {
    const tdm_ireader *r;
    pthread_mutex_t mu;
    tdm_tokenizer **free_list;  /* idle tokenizers */
    size_t nfree, cap;
    size_t opened;
};

static int open_one(const tdm_ireader *r, tdm_tokenizer **out, tdm_err *err)
{
    const tdm_ireader_info *info = tdm_ireader_info_get(r);
    const char **stops = malloc((info->nstopwords + 1) * sizeof *stops);
    if (!stops)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < info->nstopwords; i++)
        stops[i] = tdm_ireader_stopword(r, i);
    int rc = tdm_tokenizer_open(info->stemmer, stops, info->nstopwords, out, err);
    free(stops);
    return rc;
}

int tdm_tokpool_open(const tdm_ireader *r, tdm_tokpool **out, tdm_err *err)
{
    tdm_tokpool *p = calloc(1, sizeof *p);
    *out = NULL;
    if (!p || pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    p->r = r;
    tdm_tokenizer *t = tdm_tokpool_get(p, err);
    if (!t) {
        tdm_tokpool_free(p);
        return err->code ? err->code : TDM_ERR_NOMEM;
    }
    tdm_tokpool_put(p, t);
    *out = p;
    return TDM_OK;
}

void tdm_tokpool_free(tdm_tokpool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nfree; i++)
        tdm_tokenizer_free(p->free_list[i]);
    free(p->free_list);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

tdm_tokenizer *tdm_tokpool_get(tdm_tokpool *p, tdm_err *err)
{
    tdm_tokenizer *t = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->nfree)
        t = p->free_list[--p->nfree];
    pthread_mutex_unlock(&p->mu);
    if (t)
        return t;
    /* Opened outside the lock: the stemmer's set-up is the slow part. */
    if (open_one(p->r, &t, err) != TDM_OK)
        return NULL;
    pthread_mutex_lock(&p->mu);
    p->opened++;
    pthread_mutex_unlock(&p->mu);
    return t;
}

void tdm_tokpool_put(tdm_tokpool *p, tdm_tokenizer *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&p->mu);
    if (p->nfree == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 4;
        tdm_tokenizer **l = realloc(p->free_list, cap * sizeof *l);
        if (!l) { /* cannot keep it: close it instead of leaking */
            p->opened--;
            pthread_mutex_unlock(&p->mu);
            tdm_tokenizer_free(t);
            return;
        }
        p->free_list = l;
        p->cap = cap;
    }
    p->free_list[p->nfree++] = t;
    pthread_mutex_unlock(&p->mu);
}

size_t tdm_tokpool_size(tdm_tokpool *p)
{
    pthread_mutex_lock(&p->mu);
    size_t n = p->opened;
    pthread_mutex_unlock(&p->mu);
    return n;
}
