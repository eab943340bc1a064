/* A bounded min-heap of the k best hits (oracle.h). */
#include "oracle.h"

#include <stdlib.h>

#include "tandem.h"

/* a ranks below b: lower score, or the same score and a larger docid. */
static int worse(const tdm_hit *a, const tdm_hit *b)
{
    return a->score < b->score || (a->score == b->score && a->docid > b->docid);
}

int tdm_topk_init(tdm_topk *t, size_t k)
{
    t->h = malloc((k ? k : 1) * sizeof *t->h);
    t->n = 0;
    t->k = k;
    return t->h ? TDM_OK : TDM_ERR_NOMEM;
}

void tdm_topk_free(tdm_topk *t)
{
    free(t->h);
    t->h = NULL;
    t->n = t->k = 0;
}

static void sift_down(tdm_hit *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && worse(&h[l], &h[m]))
            m = l;
        if (l + 1 < n && worse(&h[l + 1], &h[m]))
            m = l + 1;
        if (m == i)
            return;
        tdm_hit x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

void tdm_topk_push(tdm_topk *t, uint32_t docid, double score)
{
    tdm_hit x = {docid, score};
    if (t->n < t->k) {
        size_t i = t->n++;
        while (i > 0 && worse(&x, &t->h[(i - 1) / 2])) {
            t->h[i] = t->h[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        t->h[i] = x;
    } else if (t->k && worse(&t->h[0], &x)) {
        t->h[0] = x;
        sift_down(t->h, t->n, 0);
    }
}

size_t tdm_topk_drain(tdm_topk *t, tdm_hit *out)
{
    size_t n = t->n;
    for (size_t i = n; i-- > 0;) { /* the worst comes out first: fill from the back */
        out[i] = t->h[0];
        t->h[0] = t->h[--t->n];
        sift_down(t->h, t->n, 0);
    }
    return n;
}
