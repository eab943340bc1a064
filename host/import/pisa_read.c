/* Reading a PISA binary collection: .docs and .freqs are mapped and their
 * sequences indexed in one pass each; .sizes, .terms and .documents are read
 * whole (they are O(documents + lexicon)). */
#include "pisa.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/mapfile.h"
#include "index/format.h"
#include "tandem.h"

/* A mapped sequence file. */
typedef struct seqfile {
    char *path;
    const uint8_t *data;
    size_t size;
    void *map;
} seqfile;

/* A text file split into lines (in place). */
typedef struct lines {
    char *path;
    char *buf;
    size_t n;
    char **line;
    size_t *len;
} lines;

struct tdm_pisa {
    seqfile docs, freqs;
    uint32_t ndocs;
    uint32_t *doclens;
    lines terms, names;
    int have_names;
    uint64_t nlists;
    uint64_t *doc_off, *freq_off; /* byte offset of each list's length word */
    uint64_t *order;
    uint32_t *docids, *fbuf;
    size_t cap;
    uint64_t drop_doc, drop_freq; /* tdm_collection_drop_read's cursors */
};

static int fail(int code, tdm_err *err, const char *path, uint64_t off, const char *fmt, ...)
    TDM_PRINTF(5, 6);

static int fail(int code, tdm_err *err, const char *path, uint64_t off, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tdm_err_set(err, code, "%s: offset %llu: %s", path, (unsigned long long)off, msg);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static char *cat(const char *base, const char *ext)
{
    size_t n = strlen(base) + strlen(ext) + 1;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s%s", base, ext);
    return p;
}

static int map_file(seqfile *f, tdm_err *err)
{
    void *map;
    int rc = tdm_map_file(f->path, &map, &f->size, err);
    if (rc != TDM_OK)
        return rc;
    f->map = map;
    f->data = map;
    if (f->size % 4)
        return fail(TDM_ERR_FORMAT, err, f->path, f->size - f->size % 4,
                    "file of %zu bytes is not whole u32 values (truncated?)", f->size);
    return TDM_OK;
}

/* Reads the sequence header at *off: its length, checked against the end. */
static int seq_at(const seqfile *f, uint64_t *off, uint32_t *len, tdm_err *err)
{
    uint64_t at = *off;
    if (f->size - at < 4)
        return fail(TDM_ERR_FORMAT, err, f->path, at, "truncated sequence header");
    *len = le32(f->data + at);
    if (*len > (f->size - at - 4) / 4)
        return fail(TDM_ERR_FORMAT, err, f->path, at,
                    "sequence of %u values runs past the end of the file (%llu bytes left)",
                    *len, (unsigned long long)(f->size - at - 4));
    *off = at + 4 + 4 * (uint64_t)*len;
    return TDM_OK;
}

#define DROP_STEP ((uint64_t)64 << 20)

/* Indexes every sequence of .docs (after [1, num_docs]) and .freqs, which
 * must pair up one to one with equal lengths. */
static int scan_lists(tdm_pisa *p, tdm_err *err)
{
    uint64_t od = 0, of = 0, cap = 0, dropped = 0, fdropped = 0;
    uint32_t len, flen;
    int rc = p->docs.size ? seq_at(&p->docs, &od, &len, err)
                          : fail(TDM_ERR_FORMAT, err, p->docs.path, 0, "empty file");
    if (rc != TDM_OK)
        return rc;
    if (len != 1)
        return fail(TDM_ERR_FORMAT, err, p->docs.path, 0,
                    "first sequence has %u values (want [1, num_docs])", len);
    p->ndocs = le32(p->docs.data + 4);
    while (od < p->docs.size) {
        uint64_t at = od, fat = of;
        if (of >= p->freqs.size)
            return fail(TDM_ERR_FORMAT, err, p->freqs.path, of,
                        "ends after %llu sequences; %s has more",
                        (unsigned long long)p->nlists, p->docs.path);
        if ((rc = seq_at(&p->docs, &od, &len, err)) != TDM_OK ||
            (rc = seq_at(&p->freqs, &of, &flen, err)) != TDM_OK)
            return rc;
        if (len != flen)
            return fail(TDM_ERR_FORMAT, err, p->freqs.path, fat,
                        "sequence %llu has %u values but its docids (%s offset %llu) have %u",
                        (unsigned long long)p->nlists, flen, p->docs.path,
                        (unsigned long long)at, len);
        if (len == 0)
            return fail(TDM_ERR_FORMAT, err, p->docs.path, at, "sequence %llu is empty",
                        (unsigned long long)p->nlists);
        if (p->nlists == cap) {
            cap = cap ? 2 * cap : 1024;
            uint64_t *d = realloc(p->doc_off, cap * sizeof *d);
            if (d)
                p->doc_off = d;
            uint64_t *f = d ? realloc(p->freq_off, cap * sizeof *f) : NULL;
            if (f)
                p->freq_off = f;
            if (!d || !f)
                return tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory", p->docs.path);
        }
        p->doc_off[p->nlists] = at;
        p->freq_off[p->nlists++] = fat;
        if (od - dropped >= DROP_STEP) { /* not needed again until the list is read */
            tdm_collection_drop_pages(p->docs.map, dropped, od - dropped);
            tdm_collection_drop_pages(p->freqs.map, fdropped, of - fdropped);
            dropped = od;
            fdropped = of;
        }
    }
    if (of != p->freqs.size)
        return fail(TDM_ERR_FORMAT, err, p->freqs.path, of,
                    "has sequences after the %llu that %s holds",
                    (unsigned long long)p->nlists, p->docs.path);
    return TDM_OK;
}

static int read_sizes(tdm_pisa *p, const char *path, tdm_err *err)
{
    size_t n;
    uint8_t *b = tdm_read_file(path, &n);
    if (!b)
        return tdm_err_set(err, errno == ENOENT ? TDM_ERR_NOT_FOUND : TDM_ERR_IO, "%s: %s",
                           path, strerror(errno));
    int rc = TDM_OK;
    if (n < 4 || le32(b) != p->ndocs || (n - 4) / 4 != p->ndocs || n % 4)
        rc = fail(TDM_ERR_FORMAT, err, path, 0,
                  "%zu bytes, want one sequence of the %u document lengths (%llu bytes)", n,
                  p->ndocs, 4 + 4 * (unsigned long long)p->ndocs);
    p->doclens = rc == TDM_OK ? malloc((p->ndocs ? p->ndocs : 1) * sizeof *p->doclens) : NULL;
    if (rc == TDM_OK && !p->doclens)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory", path);
    for (uint32_t d = 0; rc == TDM_OK && d < p->ndocs; d++)
        p->doclens[d] = le32(b + 4 + 4 * (size_t)d);
    free(b);
    return rc;
}

/* "0\n1\n...": the lexicon of a collection that comes without .terms. */
static char *numbered(uint64_t count, size_t *n)
{
    char *b = malloc(count * 21 + 1);
    size_t len = 0;
    for (uint64_t i = 0; b && i < count; i++)
        len += (size_t)snprintf(b + len, 22, "%llu\n", (unsigned long long)i);
    if (!b)
        errno = ENOMEM;
    *n = len;
    return b;
}

/* Splits a text file into lines ("\n" or "\r\n"); a last line without '\n' counts. NUL bytes
 * are refused (names and terms are C strings in the index). With `numbers`,
 * a missing file reads as the decimal numbers 0 .. want-1. */
static int read_lines(lines *l, uint64_t want, const char *what, int numbers, tdm_err *err)
{
    size_t n;
    l->buf = (char *)tdm_read_file(l->path, &n);
    if (!l->buf && errno == ENOENT && numbers)
        l->buf = numbered(want, &n);
    if (!l->buf)
        return tdm_err_set(err, errno == ENOENT ? TDM_ERR_NOT_FOUND : TDM_ERR_IO, "%s: %s",
                           l->path, strerror(errno));
    char *t = realloc(l->buf, n + 1); /* room to terminate a last line with no '\n' */
    if (!t)
        return tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory", l->path);
    l->buf = t;
    l->buf[n] = 0;
    char *z = memchr(l->buf, 0, n);
    if (z)
        return fail(TDM_ERR_FORMAT, err, l->path, (uint64_t)(z - l->buf), "NUL byte in text");
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += l->buf[i] == '\n';
    count += n && l->buf[n - 1] != '\n';
    if (count != want)
        return fail(TDM_ERR_FORMAT, err, l->path, n, "%zu lines, want one per %s (%llu)",
                    count, what, (unsigned long long)want);
    l->line = malloc((count ? count : 1) * sizeof *l->line);
    l->len = malloc((count ? count : 1) * sizeof *l->len);
    if (!l->line || !l->len)
        return tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory", l->path);
    for (size_t i = 0, start = 0; i < count; i++) {
        char *nl = memchr(l->buf + start, '\n', n - start);
        size_t end = nl ? (size_t)(nl - l->buf) : n;
        l->line[i] = l->buf + start;
        l->len[i] = end - start;
        if (nl)
            *nl = 0;
        if (l->len[i] && l->line[i][l->len[i] - 1] == '\r')   /* CRLF line endings */
            l->line[i][--l->len[i]] = 0;
        if (memchr(l->line[i], '\r', l->len[i])) /* a term or name cannot hold one */
            return fail(TDM_ERR_FORMAT, err, l->path, (uint64_t)start,
                        "carriage return inside line %zu", i + 1);
        start = end + 1;
    }
    l->n = count;
    return TDM_OK;
}

/* The byte offset of line i, for messages. */
static uint64_t line_off(const lines *l, uint64_t i)
{
    return (uint64_t)(l->line[i] - l->buf);
}

static int check_terms(tdm_pisa *p, tdm_err *err)
{
    for (uint64_t i = 0; i < p->terms.n; i++)
        if (p->terms.len[i] == 0 || p->terms.len[i] > TDM_IDX_TERM_MAX)
            return fail(TDM_ERR_FORMAT, err, p->terms.path, line_off(&p->terms, i),
                        "term %llu has %zu bytes (want 1..%u)", (unsigned long long)i,
                        p->terms.len[i], TDM_IDX_TERM_MAX);
    return TDM_OK;
}

static const char *term_at(const void *self, uint64_t i, size_t *len)
{
    const tdm_pisa *p = self;
    *len = p->terms.len[i];
    return p->terms.line[i];
}

static int sort_terms(tdm_pisa *p, tdm_err *err)
{
    p->order = malloc((p->nlists ? p->nlists : 1) * sizeof *p->order);
    if (!p->order)
        return tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory", p->terms.path);
    for (uint64_t i = 0; i < p->nlists; i++)
        p->order[i] = i;
    uint64_t dup[2];
    int rc = tdm_collection_sort_terms(p->order, p->nlists, term_at, p, dup);
    if (rc == TDM_ERR_NOMEM)
        return tdm_err_set(err, rc, "%s: out of memory sorting terms", p->terms.path);
    if (rc != TDM_OK)
        return fail(rc, err, p->terms.path, line_off(&p->terms, dup[1]),
                    "term '%.*s' (line %llu) repeats line %llu",
                    (int)(p->terms.len[dup[1]] > 64 ? 64 : p->terms.len[dup[1]]),
                    p->terms.line[dup[1]], (unsigned long long)dup[1] + 1,
                    (unsigned long long)dup[0] + 1);
    return TDM_OK;
}

static int load(tdm_pisa *p, const char *base, tdm_err *err)
{
    char *sizes = cat(base, ".sizes");
    p->docs.path = cat(base, ".docs");
    p->freqs.path = cat(base, ".freqs");
    p->terms.path = cat(base, ".terms");
    p->names.path = cat(base, ".documents");
    int rc = TDM_OK;
    if (!sizes || !p->docs.path || !p->freqs.path || !p->terms.path || !p->names.path)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (rc == TDM_OK)
        rc = map_file(&p->docs, err);
    if (rc == TDM_OK)
        rc = map_file(&p->freqs, err);
    if (rc == TDM_OK)
        rc = scan_lists(p, err);
    if (rc == TDM_OK)
        rc = read_sizes(p, sizes, err);
    if (rc == TDM_OK)
        rc = read_lines(&p->terms, p->nlists, "list", 1, err);
    if (rc == TDM_OK)
        rc = check_terms(p, err);
    if (rc == TDM_OK && access(p->names.path, F_OK) == 0) {
        p->have_names = 1;
        rc = read_lines(&p->names, p->ndocs, "document", 0, err);
    }
    if (rc == TDM_OK)
        rc = sort_terms(p, err);
    free(sizes);
    return rc;
}

int tdm_pisa_open(const char *basename, tdm_pisa **out, tdm_err *err)
{
    *out = NULL;
    tdm_pisa *p = calloc(1, sizeof *p);
    if (!p)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    int rc = load(p, basename, err);
    if (rc != TDM_OK) {
        tdm_pisa_close(p);
        return rc;
    }
    *out = p;
    return TDM_OK;
}

static void seqfile_free(seqfile *f)
{
    if (f->map)
        tdm_unmap_file(f->map, f->size);
    free(f->path);
}

static void lines_free(lines *l)
{
    free(l->path);
    free(l->buf);
    free(l->line);
    free(l->len);
}

void tdm_pisa_close(tdm_pisa *p)
{
    if (!p)
        return;
    seqfile_free(&p->docs);
    seqfile_free(&p->freqs);
    lines_free(&p->terms);
    lines_free(&p->names);
    free(p->doclens);
    free(p->doc_off);
    free(p->freq_off);
    free(p->order);
    free(p->docids);
    free(p->fbuf);
    free(p);
}

/* ---- one list */

static int grow(tdm_pisa *p, size_t n, tdm_err *err)
{
    if (n <= p->cap)
        return TDM_OK;
    uint32_t *d = realloc(p->docids, n * sizeof *d);
    if (d)
        p->docids = d;
    uint32_t *f = d ? realloc(p->fbuf, n * sizeof *f) : NULL;
    if (f)
        p->fbuf = f;
    if (!d || !f)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for a list of %zu", n);
    p->cap = n;
    return TDM_OK;
}

static int pisa_list(void *self, uint64_t i, tdm_coll_list *out, tdm_err *err)
{
    tdm_pisa *p = self;
    if (i >= p->nlists)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "list %llu out of range",
                           (unsigned long long)i);
    uint64_t j = p->order[i], od = p->doc_off[j] + 4, of = p->freq_off[j] + 4;
    uint32_t n = le32(p->docs.data + p->doc_off[j]);
    int rc = grow(p, n, err);
    if (rc != TDM_OK)
        return rc;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t d = le32(p->docs.data + od + 4 * (uint64_t)k);
        uint32_t f = le32(p->freqs.data + of + 4 * (uint64_t)k);
        if (k > 0 && d <= p->docids[k - 1])
            return fail(TDM_ERR_FORMAT, err, p->docs.path, od + 4 * (uint64_t)k,
                        "list %llu: docid %u after %u (not increasing)", (unsigned long long)j,
                        d, p->docids[k - 1]);
        if (d >= p->ndocs)
            return fail(TDM_ERR_FORMAT, err, p->docs.path, od + 4 * (uint64_t)k,
                        "list %llu: docid %u out of range (%u documents)",
                        (unsigned long long)j, d, p->ndocs);
        if (f == 0)
            return fail(TDM_ERR_FORMAT, err, p->freqs.path, of + 4 * (uint64_t)k,
                        "list %llu: zero frequency", (unsigned long long)j);
        p->docids[k] = d;
        p->fbuf[k] = f;
    }
    /* copied out: keep the resident size independent of the input's */
    tdm_collection_drop_read(p->docs.map, &p->drop_doc, p->doc_off[j], od + 4 * (uint64_t)n);
    tdm_collection_drop_read(p->freqs.map, &p->drop_freq, p->freq_off[j], of + 4 * (uint64_t)n);
    out->term = p->terms.line[j];
    out->term_len = p->terms.len[j];
    out->docids = p->docids;
    out->freqs = p->fbuf;
    out->n = n;
    return TDM_OK;
}

void tdm_pisa_source(tdm_pisa *p, tdm_coll_source *src)
{
    memset(src, 0, sizeof *src);
    src->ndocs = p->ndocs;
    src->doclens = p->doclens;
    src->docnames = p->have_names ? (const char *const *)p->names.line : NULL;
    src->nlists = p->nlists;
    src->list = pisa_list;
    src->self = p;
}

int tdm_pisa_import(const char *basename, const char *index_path,
                    const tdm_iwriter_options *opts, tdm_err *err)
{
    tdm_pisa *p;
    int rc = tdm_pisa_open(basename, &p, err);
    if (rc != TDM_OK)
        return rc;
    tdm_coll_source src;
    tdm_pisa_source(p, &src);
    rc = tdm_collection_write(&src, index_path, opts, err);
    tdm_pisa_close(p);
    return rc;
}
