/* The index reader: maps the file and validates everything it will later
 * trust, so that no accessor can read outside the mapping (FORMAT.md). */
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/mapfile.h"
#include "format.h"
#include "reader_priv.h"
#include "tandem.h"


static int host_is_le(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

static int check_header(tdm_ireader *r, tdm_err *err)
{
    const char *p = r->path;
    if (r->size < sizeof(tdm_idx_header))
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: truncated: %zu bytes, the "
                           "header alone needs %zu", p, r->size, r->size,
                           sizeof(tdm_idx_header));
    const tdm_idx_header *h = (const void *)r->base;
    if (memcmp(h->magic, TDM_IDX_MAGIC, 8) != 0)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset 0: wrong magic (not a tandem "
                           "index)", p);
    if (h->version > TDM_IDX_VERSION)
        return tdm_err_set(err, TDM_ERR_VERSION, "%s: offset 8: format version %u is newer "
                           "than this library reads (%u)", p, h->version, TDM_IDX_VERSION);
    if (h->version == 0 || h->header_size != sizeof *h || h->nsections != TDM_SEC_COUNT)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset 8: bad version %u, header size "
                           "%u or section count %u", p, h->version, h->header_size,
                           h->nsections);
    size_t end = sizeof *h + TDM_SEC_COUNT * sizeof(tdm_idx_section_entry);
    if (h->file_size != r->size || r->size < end)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: truncated or extended: the "
                           "header says %llu bytes, the file has %zu", p, r->size,
                           OFF(h->file_size), r->size);
    tdm_idx_header copy = *h;
    copy.checksum = 0;
    XXH64_state_t *st = XXH64_createState();
    if (!st)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    XXH64_reset(st, 0);
    XXH64_update(st, &copy, sizeof copy);
    XXH64_update(st, r->base + sizeof *h, end - sizeof *h);
    uint64_t sum = XXH64_digest(st);
    XXH64_freeState(st);
    if (sum != h->checksum)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: offset %zu: header checksum mismatch",
                           p, offsetof(tdm_idx_header, checksum));
    if (memchr(h->codec, 0, sizeof h->codec) == NULL ||
        memchr(h->stemmer, 0, sizeof h->stemmer) == NULL)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset 80: unterminated codec or "
                           "stemmer name", p);
    return TDM_OK;
}

static int check_sections(tdm_ireader *r, tdm_err *err)
{
    const tdm_idx_header *h = (const void *)r->base;
    size_t end = sizeof *h + TDM_SEC_COUNT * sizeof(tdm_idx_section_entry);
    r->sec = (const void *)(r->base + sizeof *h);
    for (uint32_t i = 0; i < TDM_SEC_COUNT; i++) {
        const tdm_idx_section_entry *s = &r->sec[i];
        size_t at = sizeof *h + i * sizeof *s;
        if (s->id != i || s->offset % 8 || s->offset < end || s->offset > r->size ||
            s->size > r->size - s->offset)
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: section %u (id %u) at "
                               "%llu, %llu bytes, lies outside the file (%zu bytes) or is "
                               "misaligned", r->path, at, i, s->id, OFF(s->offset),
                               OFF(s->size), r->size);
        if (i != TDM_SEC_POSTINGS && XXH64(r->base + s->offset, s->size, 0) != s->checksum)
            return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: offset %llu: checksum mismatch in "
                               "section %u", r->path, OFF(s->offset), i);
        r->info.section_size[i] = s->size;
    }
    return TDM_OK;
}

/* Section sizes must match the counts in the header; this also bounds the
 * counts by the file size, so no count can be absurd past this point. */
static int check_counts(tdm_ireader *r, tdm_err *err)
{
    const tdm_idx_header *h = (const void *)r->base;
    const tdm_idx_section_entry *s = r->sec;
    struct { int sec; uint64_t count, unit; const char *what; } want[] = {
        {TDM_SEC_LEXICON, h->nterms, sizeof(tdm_idx_term), "terms"},
        {TDM_SEC_DOCLENS, h->ndocs, 4, "documents"},
        {TDM_SEC_DOCNAME_OFFS, h->ndocs + 1, 8, "documents (+1)"},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (want[i].count > r->size / want[i].unit ||
            s[want[i].sec].size != want[i].count * want[i].unit)
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: %llu %s do not fit "
                               "section %d of %llu bytes", r->path, OFF(s[want[i].sec].offset),
                               OFF(want[i].count), want[i].what, want[i].sec,
                               OFF(s[want[i].sec].size));
    if (h->ndocs > UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT, "%s: offset 40: %llu documents exceed 2^32-1",
                           r->path, OFF(h->ndocs));
    r->lex = (const void *)(r->base + s[TDM_SEC_LEXICON].offset);
    r->terms = (const char *)(r->base + s[TDM_SEC_TERMS].offset);
    r->doclens = (const void *)(r->base + s[TDM_SEC_DOCLENS].offset);
    r->nameoffs = (const void *)(r->base + s[TDM_SEC_DOCNAME_OFFS].offset);
    r->names = (const char *)(r->base + s[TDM_SEC_DOCNAMES].offset);
    r->postings = r->base + s[TDM_SEC_POSTINGS].offset;
    return TDM_OK;
}

static int check_docs(tdm_ireader *r, tdm_err *err)
{
    const tdm_idx_header *h = (const void *)r->base;
    uint64_t total = 0, nsize = r->sec[TDM_SEC_DOCNAMES].size;
    for (uint64_t d = 0; d < h->ndocs; d++)
        total += r->doclens[d];
    if (total != h->total_doclen)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: offset 56: total document length %llu "
                           "but the lengths sum to %llu", r->path, OFF(h->total_doclen),
                           OFF(total));
    uint64_t off0 = r->sec[TDM_SEC_DOCNAME_OFFS].offset;
    if (r->nameoffs[0] != 0 || r->nameoffs[h->ndocs] != nsize)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: document name offsets do "
                           "not span the names section", r->path, OFF(off0));
    for (uint64_t d = 0; d < h->ndocs; d++)
        if (r->nameoffs[d + 1] <= r->nameoffs[d] || r->nameoffs[d + 1] > nsize ||
            r->names[r->nameoffs[d + 1] - 1] != '\0')
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: bad name entry of "
                               "document %llu", r->path, OFF(off0 + 8 * (d + 1)), OFF(d));
    return TDM_OK;
}

static int check_stopwords(tdm_ireader *r, tdm_err *err)
{
    const tdm_idx_header *h = (const void *)r->base;
    const tdm_idx_section_entry *s = &r->sec[TDM_SEC_STOPWORDS];
    const char *p = (const char *)(r->base + s->offset), *end = p + s->size;
    if (h->nstopwords > s->size || (s->size && end[-1] != '\0'))
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: malformed stopword section",
                           r->path, OFF(s->offset));
    r->stopwords = calloc(h->nstopwords ? h->nstopwords : 1, sizeof *r->stopwords);
    if (!r->stopwords)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    uint32_t n = 0;
    for (; p < end && n < h->nstopwords; p += strlen(p) + 1)
        r->stopwords[n++] = p;
    if (n != h->nstopwords || p != end)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: %u stopwords expected",
                           r->path, OFF(s->offset), h->nstopwords);
    return TDM_OK;
}

static int term_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

/* O(lexicon): terms in bounds and strictly increasing, lists in bounds,
 * ordered and disjoint, counts consistent. */
static int check_lexicon(tdm_ireader *r, tdm_err *err)
{
    const tdm_idx_header *h = (const void *)r->base;
    uint64_t tsize = r->sec[TDM_SEC_TERMS].size, psize = r->sec[TDM_SEC_POSTINGS].size;
    uint64_t next_list = 0, postings = 0;
    for (uint64_t i = 0; i < h->nterms; i++) {
        const tdm_idx_term *t = &r->lex[i];
        unsigned long long at = OFF(r->sec[TDM_SEC_LEXICON].offset + i * sizeof *t);
        if (t->term_len == 0 || t->term_len > TDM_IDX_TERM_MAX || t->term_off > tsize ||
            t->term_len > tsize - t->term_off)
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: term %llu lies outside "
                               "the terms section", r->path, at, OFF(i));
        if (i && term_cmp(r->terms + r->lex[i - 1].term_off, r->lex[i - 1].term_len,
                          r->terms + t->term_off, t->term_len) >= 0)
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: term %llu is not in "
                               "increasing order", r->path, at, OFF(i));
        if (t->df == 0 || t->df > h->ndocs || t->cf < t->df)
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: term %llu: absurd df %u "
                               "/ cf %llu for %llu documents", r->path, at, OFF(i), t->df,
                               OFF(t->cf), OFF(h->ndocs));
        if (t->list_off % 8 || t->list_off < next_list || t->list_off > psize ||
            t->list_size > psize - t->list_off || t->list_size < sizeof(tdm_idx_list))
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: list of term %llu at "
                               "%llu (%llu bytes) overlaps or lies outside the postings",
                               r->path, at, OFF(i), OFF(t->list_off), OFF(t->list_size));
        next_list = t->list_off + t->list_size;
        postings += t->df;
    }
    if (postings != h->npostings)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: offset 48: %llu postings in the header, "
                           "%llu in the lexicon", r->path, OFF(h->npostings), OFF(postings));
    return TDM_OK;
}

static void fill_info(tdm_ireader *r)
{
    const tdm_idx_header *h = (const void *)r->base;
    tdm_ireader_info *i = &r->info;
    i->version = h->version;
    i->ndocs = h->ndocs;
    i->nterms = h->nterms;
    i->npostings = h->npostings;
    i->total_doclen = h->total_doclen;
    i->avg_doclen = h->ndocs ? (double)h->total_doclen / h->ndocs : 0;
    i->k1 = h->k1;
    i->b = h->b;
    memcpy(i->codec, h->codec, sizeof i->codec);
    memcpy(i->stemmer, h->stemmer, sizeof i->stemmer);
    i->nstopwords = h->nstopwords;
    i->file_size = h->file_size;
}

static int validate(tdm_ireader *r, tdm_err *err)
{
    if (!host_is_le())
        return tdm_err_set(err, TDM_ERR_UNSUPPORTED, "%s: index files are little-endian; "
                           "this host is not", r->path);
    int rc = check_header(r, err);
    if (!rc)
        rc = check_sections(r, err);
    if (!rc)
        rc = check_counts(r, err);
    if (!rc)
        rc = check_docs(r, err);
    if (!rc)
        rc = check_stopwords(r, err);
    if (!rc)
        rc = check_lexicon(r, err);
    if (!rc)
        fill_info(r);
    return rc;
}

static tdm_ireader *new_reader(const char *path, tdm_err *err)
{
    tdm_ireader *r = calloc(1, sizeof *r);
    if (r && !(r->path = strdup(path))) {
        free(r);
        r = NULL;
    }
    if (!r)
        tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    return r;
}

int tdm_ireader_open(const char *path, tdm_ireader **out, tdm_err *err)
{
    *out = NULL;
    void *map;
    size_t size;
    int rc = tdm_map_file(path, &map, &size, err);
    if (rc != TDM_OK)
        return rc;
    tdm_ireader *r = new_reader(path, err);
    if (!r) {
        tdm_unmap_file(map, size);
        return TDM_ERR_NOMEM;
    }
    r->size = size;
    r->base = map;
    r->mapped = map != NULL;
    rc = validate(r, err);
    if (rc) {
        tdm_ireader_close(r);
        return rc;
    }
    *out = r;
    return TDM_OK;
}

int tdm_ireader_open_mem(const void *data, size_t size, const char *name, tdm_ireader **out,
                         tdm_err *err)
{
    *out = NULL;
    tdm_ireader *r = new_reader(name ? name : "<memory>", err);
    if (!r)
        return TDM_ERR_NOMEM;
    /* A heap copy is 8-byte aligned, as the mapping would be. */
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy) {
        tdm_ireader_close(r);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    if (size)
        memcpy(copy, data, size);
    r->base = copy;
    r->owned = 1;
    r->size = size;
    int rc = validate(r, err);
    if (rc) {
        tdm_ireader_close(r);
        return rc;
    }
    *out = r;
    return TDM_OK;
}

void tdm_ireader_close(tdm_ireader *r)
{
    if (!r)
        return;
    if (r->mapped)
        tdm_unmap_file((void *)r->base, r->size);
    else if (r->owned)
        free((void *)r->base);
    free(r->stopwords);
    free(r->path);
    free(r);
}

const tdm_ireader_info *tdm_ireader_info_get(const tdm_ireader *r) { return &r->info; }
const char *tdm_ireader_path(const tdm_ireader *r) { return r->path; }
const uint32_t *tdm_ireader_doclens(const tdm_ireader *r) { return r->doclens; }

const char *tdm_ireader_docname(const tdm_ireader *r, uint64_t d)
{
    return d < r->info.ndocs ? r->names + r->nameoffs[d] : NULL;
}

const char *tdm_ireader_stopword(const tdm_ireader *r, uint32_t i)
{
    return i < r->info.nstopwords ? r->stopwords[i] : NULL;
}

int tdm_ireader_find(const tdm_ireader *r, const char *term, size_t len, uint64_t *index)
{
    uint64_t lo = 0, hi = r->info.nterms;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        const tdm_idx_term *t = &r->lex[mid];
        int c = term_cmp(r->terms + t->term_off, t->term_len, term, len);
        if (c == 0) {
            *index = mid;
            return TDM_OK;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return TDM_ERR_NOT_FOUND;
}

const char *tdm_ireader_term(const tdm_ireader *r, uint64_t i, size_t *len, uint32_t *df,
                             uint64_t *cf)
{
    if (i >= r->info.nterms)
        return NULL;
    const tdm_idx_term *t = &r->lex[i];
    if (len)
        *len = t->term_len;
    if (df)
        *df = t->df;
    if (cf)
        *cf = t->cf;
    return r->terms + t->term_off;
}
