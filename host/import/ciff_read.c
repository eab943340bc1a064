/* Reading CIFF: frames every message with a bounded varint reader, unpacks
 * with protobuf-c (through an arena, since a PostingsList unpacks into one
 * allocation per posting), and checks each count, docid and tf before the
 * data reaches the index writer. */
#include "ciff.h"
#include "common/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ciff.pb-c.h"
#include "common/buf.h"
#include "index/format.h"
#include "tandem.h"

/* ---- an arena for protobuf-c: reset before each message */

typedef struct chunk {
    struct chunk *next;
    size_t size, used;
    max_align_t data[];
} chunk;

typedef struct arena {
    chunk *head;
} arena;

static void *arena_alloc(void *self, size_t size)
{
    arena *a = self;
    size = (size + 15) & ~(size_t)15;
    chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t want = c ? 2 * c->size : 65536;
        if (want < size)
            want = size;
        chunk *n = malloc(sizeof *n + want);
        if (!n)
            return NULL;
        n->next = c;
        n->size = want;
        n->used = 0;
        a->head = c = n;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    return p;
}

static void arena_free(void *self, void *p)
{
    (void)self;
    (void)p; /* everything goes at the next reset */
}

/* Keeps only the newest (largest) chunk, emptied. */
static void arena_reset(arena *a, int all)
{
    chunk *c = a->head;
    if (!c)
        return;
    chunk *rest = all ? c : c->next;
    if (!all) {
        c->next = NULL;
        c->used = 0;
    } else {
        a->head = NULL;
    }
    while (rest) {
        chunk *n = rest->next;
        free(rest);
        rest = n;
    }
}

/* ---- the handle */

struct tdm_ciff {
    char *name;
    const uint8_t *data;
    size_t size;
    void *map;                 /* mmap'd file, or NULL for open_mem */
    tdm_ciff_info info;
    char *description;
    arena arena;
    ProtobufCAllocator pa;
    /* non-empty lists in file order */
    uint64_t nlists;
    uint64_t *msg_off;         /* offset of each list's length varint */
    uint64_t *term_off;        /* into terms: a compact copy, so that sorting does not
                                  touch every page of the file */
    uint32_t *term_len;
    char *terms;
    size_t terms_len, terms_cap;
    uint64_t *order;           /* list positions in term order */
    /* documents */
    uint32_t ndocs;
    uint32_t *doclens;
    char **names;
    char *name_bytes;
    /* the current list */
    uint32_t *docids, *freqs;
    size_t cap;
    uint64_t drop_from;        /* tdm_collection_drop_read's cursor */
};

static int fail(const tdm_ciff *c, tdm_err *err, int code, uint64_t off, const char *fmt, ...)
    TDM_PRINTF(5, 6);

static int fail(const tdm_ciff *c, tdm_err *err, int code, uint64_t off, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tdm_err_set(err, code, "%s: offset %llu: %s", c->name, (unsigned long long)off, msg);
}

/* 0 ok, 1 runs past `end`, 2 longer than 10 bytes or over 64 bits. */
static int varint(const uint8_t *p, size_t end, size_t *pos, uint64_t *v)
{
    uint64_t r = 0;
    size_t i = *pos;
    for (int k = 0; k < 10; k++) {
        if (i >= end)
            return 1;
        uint8_t b = p[i++];
        if (k == 9 && b > 1)
            return 2;
        r |= (uint64_t)(b & 0x7f) << (7 * k);
        if (!(b & 0x80)) {
            *pos = i;
            *v = r;
            return 0;
        }
    }
    return 2;
}

/* Reads one frame at *pos: the varint length, then the body. */
static int frame(tdm_ciff *c, size_t *pos, size_t *body, size_t *len, const char *what,
                 tdm_err *err)
{
    uint64_t v;
    size_t at = *pos;
    int bad = varint(c->data, c->size, pos, &v);
    if (bad)
        return fail(c, err, TDM_ERR_FORMAT, at, "%s: length varint %s", what,
                    bad == 1 ? "runs past the end of the file" : "is longer than 10 bytes");
    if (v > TDM_CIFF_MAX_MESSAGE || v > c->size - *pos)
        return fail(c, err, TDM_ERR_FORMAT, at,
                    "%s: length %llu runs past the end of the file (%zu bytes left)", what,
                    (unsigned long long)v, c->size - *pos);
    *body = *pos;
    *len = (size_t)v;
    *pos += (size_t)v;
    return TDM_OK;
}

/* Walks a PostingsList's fields without unpacking: finds the term (field 1),
 * the df (field 2) and whether any posting (field 4) is there. */
static int scan_list(tdm_ciff *c, size_t body, size_t len, size_t *toff, size_t *tlen,
                     uint64_t *df, int *has_postings)
{
    size_t pos = body, end = body + len;
    *toff = body;
    *tlen = 0;
    *df = 0;
    *has_postings = 0;
    while (pos < end) {
        uint64_t key, v;
        if (varint(c->data, end, &pos, &key))
            return -1;
        switch (key & 7) {
        case 0:
            if (varint(c->data, end, &pos, &v))
                return -1;
            if (key >> 3 == 2)
                *df = v;
            break;
        case 1:
        case 5:
            if (end - pos < ((key & 7) == 1 ? 8u : 4u))
                return -1;
            pos += (key & 7) == 1 ? 8 : 4;
            break;
        case 2:
            if (varint(c->data, end, &pos, &v) || v > end - pos)
                return -1;
            if (key >> 3 == 1) {
                *toff = pos;
                *tlen = (size_t)v;
            } else if (key >> 3 == 4) {
                *has_postings = 1;
            }
            pos += (size_t)v;
            break;
        default:
            return -1;
        }
    }
    return 0;
}

static int read_header(tdm_ciff *c, size_t *pos, tdm_err *err)
{
    size_t body, len;
    int rc = frame(c, pos, &body, &len, "Header", err);
    if (rc != TDM_OK)
        return rc;
    Io__Osirrc__Ciff__Header *h = io__osirrc__ciff__header__unpack(&c->pa, len, c->data + body);
    if (!h)
        return fail(c, err, TDM_ERR_FORMAT, body, "Header does not unpack (malformed protobuf)");
    tdm_ciff_info *i = &c->info;
    i->version = h->version;
    i->num_postings_lists = h->num_postings_lists;
    i->num_docs = h->num_docs;
    i->total_postings_lists = h->total_postings_lists;
    i->total_docs = h->total_docs;
    i->total_terms_in_collection = h->total_terms_in_collection;
    i->average_doclength = h->average_doclength;
    c->description = strdup(h->description ? h->description : "");
    i->description = c->description;
    arena_reset(&c->arena, 0);
    if (!c->description)
        return tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory", c->name);
    if (i->version != 1)
        return fail(c, err, i->version > 1 ? TDM_ERR_VERSION : TDM_ERR_FORMAT, body,
                    "CIFF version %d (this reader knows version 1)", (int)i->version);
    size_t left = c->size - *pos;
    if (i->num_postings_lists < 0 || i->num_docs < 0 ||
        (uint64_t)i->num_postings_lists + (uint64_t)i->num_docs > left)
        return fail(c, err, TDM_ERR_FORMAT, body,
                    "Header promises %d postings lists and %d documents but %zu bytes follow",
                    (int)i->num_postings_lists, (int)i->num_docs, left);
    return TDM_OK;
}

/* Copies the term of list c->nlists into the compact term buffer. */
static int add_term(tdm_ciff *c, size_t toff, size_t tlen)
{
    char *p = tdm_array_grow(c->terms, &c->terms_cap, c->terms_len + tlen, 1);
    if (!p)
        return -1;
    c->terms = p;
    memcpy(c->terms + c->terms_len, c->data + toff, tlen);
    c->term_off[c->nlists] = c->terms_len;
    c->terms_len += tlen;
    return 0;
}

/* Scanned pages are not needed again until their list is read: dropping them
 * every DROP_STEP bytes keeps the resident size small for big files. */
#define DROP_STEP ((size_t)64 << 20)

static int scan_lists(tdm_ciff *c, size_t *pos, tdm_err *err)
{
    size_t dropped = *pos;
    uint64_t n = (uint64_t)c->info.num_postings_lists;
    c->msg_off = malloc((n ? n : 1) * sizeof *c->msg_off);
    c->term_off = malloc((n ? n : 1) * sizeof *c->term_off);
    c->term_len = malloc((n ? n : 1) * sizeof *c->term_len);
    if (!c->msg_off || !c->term_off || !c->term_len)
        return tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory for %llu lists", c->name,
                           (unsigned long long)n);
    for (uint64_t k = 0; k < n; k++) {
        if (c->map && *pos - dropped >= DROP_STEP) {
            tdm_collection_drop_pages(c->map, dropped, *pos - dropped);
            dropped = *pos;
        }
        size_t at = *pos, body, len, toff, tlen;
        uint64_t df;
        int has;
        if (at == c->size)
            return fail(c, err, TDM_ERR_FORMAT, at,
                        "file ends after %llu of the %llu postings lists the Header promises",
                        (unsigned long long)k, (unsigned long long)n);
        int rc = frame(c, pos, &body, &len, "PostingsList", err);
        if (rc != TDM_OK)
            return rc;
        if (scan_list(c, body, len, &toff, &tlen, &df, &has))
            return fail(c, err, TDM_ERR_FORMAT, at,
                        "PostingsList %llu does not parse (malformed protobuf)",
                        (unsigned long long)k);
        if (!has && df != 0)
            return fail(c, err, TDM_ERR_FORMAT, at,
                        "PostingsList %llu: df %lld but no postings", (unsigned long long)k,
                        (long long)df);
        if (!has) {
            c->info.empty_lists++;
            continue;
        }
        if (tlen == 0 || tlen > TDM_IDX_TERM_MAX || memchr(c->data + toff, 0, tlen))
            return fail(c, err, TDM_ERR_FORMAT, at,
                        "PostingsList %llu: term of %zu bytes (want 1..%u, no NUL)",
                        (unsigned long long)k, tlen, TDM_IDX_TERM_MAX);
        c->msg_off[c->nlists] = at;
        if (add_term(c, toff, tlen))
            return tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory for terms", c->name);
        c->term_len[c->nlists] = (uint32_t)tlen;
        c->nlists++;
    }
    return TDM_OK;
}

/* Appends one name to name_bytes (offsets kept in names[] until the end,
 * since the buffer moves as it grows). */
static int add_name(tdm_ciff *c, uint32_t d, const char *s, size_t *used, size_t *cap)
{
    size_t n = strlen(s) + 1;
    char *p = tdm_array_grow(c->name_bytes, cap, *used + n, 1);
    if (!p)
        return -1;
    c->name_bytes = p;
    memcpy(c->name_bytes + *used, s, n);
    c->names[d] = (char *)(uintptr_t)*used;
    *used += n;
    return 0;
}

/* Records may come in any order, but their docids must be 0 .. n-1, each
 * once (n records and no repeat make a permutation). */
static int check_doc(tdm_ciff *c, const Io__Osirrc__Ciff__DocRecord *r, uint32_t k,
                     size_t at, uint8_t *seen, tdm_err *err)
{
    uint32_t n = (uint32_t)c->info.num_docs;
    if (r->docid < 0 || (uint32_t)r->docid >= n)
        return fail(c, err, TDM_ERR_FORMAT, at, "DocRecord %u: docid %d out of range (%u documents)",
                    k, (int)r->docid, n);
    if (seen[r->docid])
        return fail(c, err, TDM_ERR_FORMAT, at, "DocRecord %u repeats docid %d", k,
                    (int)r->docid);
    if (r->doclength < 0)
        return fail(c, err, TDM_ERR_FORMAT, at, "DocRecord %u: negative doclength %d", k,
                    (int)r->doclength);
    seen[r->docid] = 1;
    return TDM_OK;
}

static int read_doc(tdm_ciff *c, size_t *pos, uint32_t k, uint8_t *seen, size_t *used,
                    size_t *cap, tdm_err *err)
{
    size_t at = *pos, body, len;
    if (at == c->size)
        return fail(c, err, TDM_ERR_FORMAT, at,
                    "file ends after %u of the %d DocRecords the Header promises", k,
                    (int)c->info.num_docs);
    int rc = frame(c, pos, &body, &len, "DocRecord", err);
    if (rc != TDM_OK)
        return rc;
    Io__Osirrc__Ciff__DocRecord *r =
        io__osirrc__ciff__doc_record__unpack(&c->pa, len, c->data + body);
    if (!r)
        return fail(c, err, TDM_ERR_FORMAT, at, "DocRecord %u does not unpack (malformed protobuf)",
                    k);
    rc = check_doc(c, r, k, at, seen, err);
    if (rc == TDM_OK &&
        add_name(c, (uint32_t)r->docid, r->collection_docid ? r->collection_docid : "", used, cap))
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory for names", c->name);
    if (rc == TDM_OK)
        c->doclens[r->docid] = (uint32_t)r->doclength;
    arena_reset(&c->arena, 0);
    return rc;
}

static int read_docs(tdm_ciff *c, size_t *pos, tdm_err *err)
{
    uint32_t n = (uint32_t)c->info.num_docs;
    size_t used = 0, cap = 0;
    c->doclens = malloc((n ? n : 1) * sizeof *c->doclens);
    c->names = calloc(n ? n : 1, sizeof *c->names);
    uint8_t *seen = calloc(n ? n : 1, 1);
    int rc = TDM_OK;
    if (!c->doclens || !c->names || !seen)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory for %u documents", c->name, n);
    for (uint32_t k = 0; rc == TDM_OK && k < n; k++)
        rc = read_doc(c, pos, k, seen, &used, &cap, err);
    free(seen);
    if (rc != TDM_OK)
        return rc;
    for (uint32_t k = 0; k < n; k++)
        c->names[k] = c->name_bytes + (uintptr_t)c->names[k];
    c->ndocs = n;
    return TDM_OK;
}

static const char *term_at(const void *self, uint64_t i, size_t *len)
{
    const tdm_ciff *c = self;
    *len = c->term_len[i];
    return c->terms + c->term_off[i];
}

static int load(tdm_ciff *c, tdm_err *err)
{
    size_t pos = 0;
    c->info.file_size = c->size;
    c->pa.alloc = arena_alloc;
    c->pa.free = arena_free;
    c->pa.allocator_data = &c->arena;
    int rc = read_header(c, &pos, err);
    if (rc == TDM_OK)
        rc = scan_lists(c, &pos, err);
    if (rc == TDM_OK)
        rc = read_docs(c, &pos, err);
    if (rc == TDM_OK && pos != c->size)
        rc = fail(c, err, TDM_ERR_FORMAT, pos, "%zu bytes after the last DocRecord",
                  c->size - pos);
    if (rc != TDM_OK)
        return rc;
    c->order = malloc((c->nlists ? c->nlists : 1) * sizeof *c->order);
    if (!c->order)
        return tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory", c->name);
    for (uint64_t i = 0; i < c->nlists; i++)
        c->order[i] = i;
    uint64_t dup[2];
    rc = tdm_collection_sort_terms(c->order, c->nlists, term_at, c, dup);
    if (rc == TDM_ERR_NOMEM)
        return tdm_err_set(err, rc, "%s: out of memory sorting terms", c->name);
    if (rc != TDM_OK)
        return fail(c, err, rc, c->msg_off[dup[1]],
                    "term '%.*s' appears twice (first list at offset %llu)",
                    (int)(c->term_len[dup[1]] > 64 ? 64 : c->term_len[dup[1]]),
                    c->terms + c->term_off[dup[1]],
                    (unsigned long long)c->msg_off[dup[0]]);
    return TDM_OK;
}

static tdm_ciff *new_handle(const char *name, tdm_err *err)
{
    tdm_ciff *c = calloc(1, sizeof *c);
    if (c && !(c->name = strdup(name))) {
        free(c);
        c = NULL;
    }
    if (!c)
        tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory", name);
    return c;
}

int tdm_ciff_open_mem(const void *data, size_t size, const char *name, tdm_ciff **out,
                      tdm_err *err)
{
    *out = NULL;
    tdm_ciff *c = new_handle(name ? name : "(memory)", err);
    if (!c)
        return TDM_ERR_NOMEM;
    c->data = data;
    c->size = data ? size : 0;
    int rc = load(c, err);
    if (rc != TDM_OK) {
        tdm_ciff_close(c);
        return rc;
    }
    *out = c;
    return TDM_OK;
}

int tdm_ciff_open(const char *path, tdm_ciff **out, tdm_err *err)
{
    *out = NULL;
    void *map;
    size_t size;
    int rc = tdm_map_file(path, &map, &size, err);
    if (rc != TDM_OK)
        return rc;
    if (map)
        madvise(map, size, MADV_SEQUENTIAL);
    tdm_ciff *c = new_handle(path, err);
    if (!c) {
        tdm_unmap_file(map, size);
        return TDM_ERR_NOMEM;
    }
    c->map = map;
    c->data = map;
    c->size = size;
    rc = load(c, err);
    if (rc != TDM_OK) {
        tdm_ciff_close(c);
        return rc;
    }
    *out = c;
    return TDM_OK;
}

void tdm_ciff_close(tdm_ciff *c)
{
    if (!c)
        return;
    if (c->map)
        tdm_unmap_file(c->map, c->size);
    arena_reset(&c->arena, 1);
    free(c->name);
    free(c->description);
    free(c->msg_off);
    free(c->term_off);
    free(c->term_len);
    free(c->terms);
    free(c->order);
    free(c->doclens);
    free(c->names);
    free(c->name_bytes);
    free(c->docids);
    free(c->freqs);
    free(c);
}

const tdm_ciff_info *tdm_ciff_info_get(const tdm_ciff *c) { return &c->info; }

/* ---- one list */

static int grow(tdm_ciff *c, size_t n, tdm_err *err)
{
    if (n <= c->cap)
        return TDM_OK;
    uint32_t *d = realloc(c->docids, n * sizeof *d);
    if (d)
        c->docids = d;
    uint32_t *f = d ? realloc(c->freqs, n * sizeof *f) : NULL;
    if (f)
        c->freqs = f;
    if (!d || !f)
        return tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory for a list of %zu", c->name,
                           n);
    c->cap = n;
    return TDM_OK;
}

/* Gaps to docids, with every check that the index writer would otherwise
 * report without the file offset. */
static int check_postings(tdm_ciff *c, const Io__Osirrc__Ciff__PostingsList *l, size_t at,
                          const char *term, int tlen, tdm_err *err)
{
    int64_t doc = -1, cf = 0;
    for (size_t k = 0; k < l->n_postings; k++) {
        const Io__Osirrc__Ciff__Posting *p = l->postings[k];
        if (p->docid < 0 || (k > 0 && p->docid == 0))
            return fail(c, err, TDM_ERR_FORMAT, at,
                        "list '%.*s' posting %zu: docids not increasing (gap %d)", tlen, term,
                        k, (int)p->docid);
        doc = k ? doc + p->docid : p->docid;
        if (doc >= (int64_t)c->ndocs)
            return fail(c, err, TDM_ERR_FORMAT, at,
                        "list '%.*s' posting %zu: docid %lld out of range (%u documents)",
                        tlen, term, k, (long long)doc, c->ndocs);
        if (p->tf < 1)
            return fail(c, err, TDM_ERR_FORMAT, at, "list '%.*s' posting %zu: %s tf %d", tlen,
                        term, k, p->tf < 0 ? "negative" : "zero", (int)p->tf);
        c->docids[k] = (uint32_t)doc;
        c->freqs[k] = (uint32_t)p->tf;
        cf += p->tf;
    }
    if (l->df != (int64_t)l->n_postings || l->cf != cf)
        return fail(c, err, TDM_ERR_FORMAT, at,
                    "list '%.*s': df %lld cf %lld but its postings give df %zu cf %lld", tlen,
                    term, (long long)l->df, (long long)l->cf, l->n_postings, (long long)cf);
    return TDM_OK;
}

static int ciff_list(void *self, uint64_t i, tdm_coll_list *out, tdm_err *err)
{
    tdm_ciff *c = self;
    if (i >= c->nlists)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "%s: list %llu out of range", c->name,
                           (unsigned long long)i);
    uint64_t j = c->order[i];
    size_t pos = (size_t)c->msg_off[j], at = pos, body, len;
    int rc = frame(c, &pos, &body, &len, "PostingsList", err);
    if (rc != TDM_OK)
        return rc;
    arena_reset(&c->arena, 0);
    Io__Osirrc__Ciff__PostingsList *l =
        io__osirrc__ciff__postings_list__unpack(&c->pa, len, c->data + body);
    const char *term = c->terms + c->term_off[j];
    int tlen = (int)c->term_len[j];
    if (!l)
        return fail(c, err, TDM_ERR_FORMAT, at,
                    "PostingsList '%.*s' does not unpack (malformed protobuf or out of memory)",
                    tlen, term);
    tdm_collection_drop_read(c->map, &c->drop_from, at, body + len); /* unpacked: done */
    rc = grow(c, l->n_postings, err);
    if (rc == TDM_OK)
        rc = check_postings(c, l, at, term, tlen, err);
    if (rc != TDM_OK)
        return rc;
    out->term = term;
    out->term_len = (size_t)tlen;
    out->docids = c->docids;
    out->freqs = c->freqs;
    out->n = l->n_postings;
    return TDM_OK;
}

void tdm_ciff_source(tdm_ciff *c, tdm_coll_source *src)
{
    memset(src, 0, sizeof *src);
    src->ndocs = c->ndocs;
    src->doclens = c->doclens;
    src->docnames = (const char *const *)c->names;
    src->nlists = c->nlists;
    src->list = ciff_list;
    src->self = c;
}

int tdm_ciff_import(const char *ciff_path, const char *index_path,
                    const tdm_iwriter_options *opts, tdm_err *err)
{
    tdm_ciff *c;
    int rc = tdm_ciff_open(ciff_path, &c, err);
    if (rc != TDM_OK)
        return rc;
    tdm_coll_source src;
    tdm_ciff_source(c, &src);
    rc = tdm_collection_write(&src, index_path, opts, err);
    tdm_ciff_close(c);
    return rc;
}
