/* The meeting point of importers and the index writer, plus the structural
 * comparison that round-trip checks use. */
#include "collection.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tandem.h"

int tdm_term_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c)
        return c;
    return alen < blen ? -1 : alen > blen;
}

int tdm_collection_write(const tdm_coll_source *src, const char *path,
                         const tdm_iwriter_options *opts, tdm_err *err)
{
    tdm_iwriter_options defaults = {0};
    tdm_iwriter *w = NULL;
    /* The writer registers its temporary file for removal on a signal and
     * removes what killed imports into this path left (tempfile.h). */
    int rc = tdm_iwriter_open(path, opts ? opts : &defaults, &w, err);
    if (rc == TDM_OK)
        rc = tdm_iwriter_set_docs(w, src->ndocs, src->doclens, src->docnames, err);
    for (uint64_t i = 0; rc == TDM_OK && i < src->nlists; i++) {
        tdm_coll_list l = {0};
        rc = src->list(src->self, i, &l, err);
        if (rc == TDM_OK)
            rc = tdm_iwriter_add_list(w, l.term, l.term_len, l.docids, l.freqs, l.n, err);
    }
    if (rc == TDM_OK)
        rc = tdm_iwriter_finish(w, err);
    tdm_iwriter_free(w);
    return rc;
}

void tdm_collection_drop_pages(const void *map, size_t off, size_t len)
{
    static size_t page;
    if (!page) {
        long p = sysconf(_SC_PAGESIZE);
        page = p > 0 ? (size_t)p : 4096;
    }
    size_t start = (off + page - 1) / page * page, end = (off + len) / page * page;
    if (map && end > start)
        madvise((char *)map + start, end - start, MADV_DONTNEED);
}

void tdm_collection_drop_read(const void *map, uint64_t *cursor, uint64_t start, uint64_t end)
{
    if (!map)
        return;
    if (start < *cursor) {
        tdm_collection_drop_pages(map, (size_t)start, (size_t)(end - start));
    } else if (end - *cursor >= ((uint64_t)1 << 20)) {
        tdm_collection_drop_pages(map, (size_t)*cursor, (size_t)(end - *cursor));
        *cursor = end;
    }
}

/* ---- sorting list indexes by term (a stable merge sort: qsort has no
 * context argument in C11) */

typedef struct sorter {
    tdm_coll_term_fn get;
    const void *self;
} sorter;

static int sorter_cmp(const sorter *s, uint64_t x, uint64_t y)
{
    size_t xl, yl;
    const char *xs = s->get(s->self, x, &xl), *ys = s->get(s->self, y, &yl);
    return tdm_term_cmp(xs, xl, ys, yl);
}

static void merge_sort(uint64_t *a, uint64_t *tmp, uint64_t n, const sorter *s)
{
    if (n < 2)
        return;
    uint64_t h = n / 2;
    merge_sort(a, tmp, h, s);
    merge_sort(a + h, tmp, n - h, s);
    if (sorter_cmp(s, a[h - 1], a[h]) <= 0)
        return; /* already in order: the common case for sorted inputs */
    uint64_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = sorter_cmp(s, a[j], a[i]) < 0 ? a[j++] : a[i++];
    while (i < h)
        tmp[k++] = a[i++];
    memcpy(a, tmp, k * sizeof *a);
}

int tdm_collection_sort_terms(uint64_t *idx, uint64_t n, tdm_coll_term_fn get,
                              const void *self, uint64_t dup[2])
{
    sorter s = {get, self};
    uint64_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return TDM_ERR_NOMEM;
    merge_sort(idx, tmp, n, &s);
    free(tmp);
    for (uint64_t i = 1; i < n; i++)
        if (sorter_cmp(&s, idx[i - 1], idx[i]) == 0) {
            dup[0] = idx[i - 1];
            dup[1] = idx[i];
            return TDM_ERR_FORMAT;
        }
    return TDM_OK;
}

/* ---- structural comparison */

static int compare_docs(const tdm_ireader *a, const tdm_ireader *b, tdm_err *err)
{
    const tdm_ireader_info *ia = tdm_ireader_info_get(a), *ib = tdm_ireader_info_get(b);
    if (ia->ndocs != ib->ndocs)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "documents: %llu vs %llu",
                           (unsigned long long)ia->ndocs, (unsigned long long)ib->ndocs);
    const uint32_t *la = tdm_ireader_doclens(a), *lb = tdm_ireader_doclens(b);
    for (uint64_t d = 0; d < ia->ndocs; d++) {
        const char *na = tdm_ireader_docname(a, d), *nb = tdm_ireader_docname(b, d);
        if (la[d] != lb[d])
            return tdm_err_set(err, TDM_ERR_CORRUPT, "document %llu: length %u vs %u",
                               (unsigned long long)d, la[d], lb[d]);
        if (!na || !nb || strcmp(na, nb))
            return tdm_err_set(err, TDM_ERR_CORRUPT, "document %llu: name '%s' vs '%s'",
                               (unsigned long long)d, na ? na : "(none)", nb ? nb : "(none)");
    }
    return TDM_OK;
}

static int compare_list(const tdm_ireader *a, const tdm_ireader *b, uint64_t i, uint32_t **buf,
                        size_t *cap, tdm_err *err)
{
    size_t alen, blen;
    uint32_t adf, bdf;
    uint64_t acf, bcf;
    const char *at = tdm_ireader_term(a, i, &alen, &adf, &acf);
    const char *bt = tdm_ireader_term(b, i, &blen, &bdf, &bcf);
    if (!at || !bt || tdm_term_cmp(at, alen, bt, blen))
        return tdm_err_set(err, TDM_ERR_CORRUPT, "term %llu: '%.*s' vs '%.*s'",
                           (unsigned long long)i, at ? (int)alen : 0, at ? at : "",
                           bt ? (int)blen : 0, bt ? bt : "");
    if (adf != bdf || acf != bcf)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "term '%.*s': df %u cf %llu vs df %u cf %llu",
                           (int)alen, at, adf, (unsigned long long)acf, bdf,
                           (unsigned long long)bcf);
    if (*cap < 4 * (size_t)adf) {
        uint32_t *p = realloc(*buf, 4 * (size_t)adf * sizeof *p);
        if (!p)
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory comparing lists");
        *buf = p;
        *cap = 4 * (size_t)adf;
    }
    uint32_t *ad = *buf, *af = ad + adf, *bd = af + adf, *bf = bd + adf;
    int rc = tdm_ireader_decode(a, i, ad, af, err);
    if (rc == TDM_OK)
        rc = tdm_ireader_decode(b, i, bd, bf, err);
    if (rc != TDM_OK)
        return rc;
    for (uint32_t k = 0; k < adf; k++)
        if (ad[k] != bd[k] || af[k] != bf[k])
            return tdm_err_set(err, TDM_ERR_CORRUPT,
                               "term '%.*s' posting %u: (%u, %u) vs (%u, %u)", (int)alen, at,
                               k, ad[k], af[k], bd[k], bf[k]);
    return TDM_OK;
}

int tdm_collection_compare(const tdm_ireader *a, const tdm_ireader *b, tdm_err *err)
{
    int rc = compare_docs(a, b, err);
    if (rc != TDM_OK)
        return rc;
    const tdm_ireader_info *ia = tdm_ireader_info_get(a), *ib = tdm_ireader_info_get(b);
    if (ia->nterms != ib->nterms)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "terms: %llu vs %llu",
                           (unsigned long long)ia->nterms, (unsigned long long)ib->nterms);
    uint32_t *buf = NULL;
    size_t cap = 0;
    for (uint64_t i = 0; rc == TDM_OK && i < ia->nterms; i++)
        rc = compare_list(a, b, i, &buf, &cap, err);
    free(buf);
    return rc;
}
