/* The index writer (FORMAT.md): streams every list's payload into the ARENA
 * section of a temporary file next to PATH (tempfile.h) and its block-table
 * rows into an anonymous spill file, keeps the per-term and per-document
 * arrays in memory, appends every other section at finish, writes the
 * header and section table last, and renames the file into place. */
#include "writer.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/codec.h"
#include "common/fsutil.h"
#include "common/tempfile.h"
#include "tandem.h"
#include "writer_priv.h"

_Static_assert(sizeof(tdm_idx_header) == 192, "header layout");
_Static_assert(offsetof(tdm_idx_header, checksum) + 8 == TDM_IDX_HEADER_V2,
               "version 2's header is version 3's first 160 bytes");
_Static_assert(sizeof(tdm_idx_section_entry) == 32, "section entry layout");
_Static_assert(sizeof(tdm_idx_list) == 16, "list descriptor layout");

int tdm_iw_fail_io(tdm_iwriter *w, tdm_err *err, const char *what)
{
    w->failed = 1;
    return tdm_err_set(err, TDM_ERR_IO, "%s: %s: %s", w->path, what, strerror(errno));
}

/* Appends n bytes to the open section, hashing them. */
int tdm_iw_put(tdm_iwriter *w, const void *p, size_t n, tdm_err *err)
{
    if (n && fwrite(p, 1, n, w->f) != n)
        return tdm_iw_fail_io(w, err, "write");
    XXH64_update(w->hash, p, n);
    w->pos += n;
    return TDM_OK;
}

/* Zero padding up to the next section boundary (covered by no checksum:
 * readers check it is zero). */
static int pad_section(tdm_iwriter *w, tdm_err *err)
{
    static const char zeros[TDM_IDX_ALIGN];
    size_t n = (size_t)((TDM_IDX_ALIGN - w->pos % TDM_IDX_ALIGN) % TDM_IDX_ALIGN);
    if (n && fwrite(zeros, 1, n, w->f) != n)
        return tdm_iw_fail_io(w, err, "write");
    w->pos += n;
    return TDM_OK;
}

static int begin_section(tdm_iwriter *w, uint32_t id, tdm_err *err)
{
    int rc = pad_section(w, err);
    w->sec[id].id = id;
    w->sec[id].offset = w->pos;
    XXH64_reset(w->hash, 0);
    return rc;
}

static void end_section(tdm_iwriter *w, uint32_t id)
{
    w->sec[id].size = w->pos - w->sec[id].offset;
    w->sec[id].checksum = XXH64_digest(w->hash);
}

static int put_section(tdm_iwriter *w, uint32_t id, const void *p, size_t n, tdm_err *err)
{
    int rc = begin_section(w, id, err);
    if (!rc)
        rc = tdm_iw_put(w, p, n, err);
    end_section(w, id);
    return rc;
}

static int nomem(tdm_iwriter *w, tdm_err *err)
{
    tdm_iwriter_free(w);
    return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
}

/* The block-table spill: a file next to the output, unlinked at once so
 * that nothing is left behind however the process ends. */
static int open_spill(tdm_iwriter *w, tdm_err *err)
{
    char *name;
    int fd = tdm_temp_create(w->path, &name);
    if (fd >= 0 && !(w->spill = fdopen(fd, "w+b")))
        close(fd);
    int rc = w->spill ? TDM_OK : tdm_err_set(err, errno == ENOMEM ? TDM_ERR_NOMEM : TDM_ERR_IO,
                                             "%s: block spill: %s", w->path, strerror(errno));
    tdm_temp_discard(name);
    return rc;
}

static int set_options(tdm_iwriter *w, const tdm_iwriter_options *o, tdm_err *err)
{
    w->k1 = o->bm25_as_given || o->k1 > 0 ? o->k1 : TDM_IDX_DEFAULT_K1;
    w->b = o->bm25_as_given || o->b > 0 ? o->b : TDM_IDX_DEFAULT_B;
    snprintf(w->stemmer, sizeof w->stemmer, "%s", o->stemmer ? o->stemmer : "none");
    w->impact = o->impact != 0;
    if (w->impact) {
        w->quant = (uint32_t)o->quant | (uint32_t)o->quant_bits << 8;
        w->quant_scale = o->quant == TDM_QUANT_INTEGER ? 1 : o->quant_scale;
        w->quant_max = o->quant == TDM_QUANT_LINEAR ? o->quant_max : 0;
    }
    uint64_t zero = 0;
    uint32_t zero32 = 0;
    if (tdm_buf_append(&w->nameoffs, &zero, 8) || tdm_buf_append(&w->termoffs, &zero32, 4))
        return TDM_ERR_NOMEM;
    for (size_t i = 0; i < o->nstopwords; i++) {
        if (!o->stopwords[i] || !*o->stopwords[i])
            continue;
        if (tdm_buf_append(&w->stopwords, o->stopwords[i], strlen(o->stopwords[i]) + 1))
            return TDM_ERR_NOMEM;
        w->nstopwords++;
    }
    (void)err;
    return TDM_OK;
}

int tdm_iwriter_open(const char *path, const tdm_iwriter_options *opts, tdm_iwriter **out,
                     tdm_err *err)
{
    *out = NULL;
    tdm_iwriter_options o = {0};
    if (opts)
        o = *opts;
    int guard = tdm_output_check(path, NULL, 0, err); /* a device or FIFO stays */
    if (guard != TDM_OK)
        return guard;
    const tdm_codec_ops *codec = tdm_codec_by_name(o.codec ? o.codec : TDM_CODEC_DEFAULT);
    if (!codec)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "unknown codec '%s'", o.codec);
    if (o.stemmer && strlen(o.stemmer) >= TDM_IDX_NAME_MAX)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "stemmer name too long");
    tdm_iwriter *w = calloc(1, sizeof *w);
    if (!w)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    w->codec = w->list_codec = codec;
    w->path = strdup(path);
    w->hash = XXH64_createState();
    if (!w->path || !w->hash || set_options(w, &o, err))
        return nomem(w, err);
    /* An unpredictable name created exclusively, registered for cleanup on
     * a signal (tempfile.h); what killed writers left there goes first. */
    int fd = tdm_temp_create(path, &w->tmp);
    if (fd >= 0 && !(w->f = fdopen(fd, "wb")))
        close(fd);
    if (!w->f) {
        int e = errno;
        tdm_iwriter_free(w);
        return e == ENOMEM ? tdm_err_set(err, TDM_ERR_NOMEM, "out of memory")
                           : tdm_err_set(err, TDM_ERR_IO, "%s: %s", path, strerror(e));
    }
    /* Room for the header and section table, written at finish; the arena
     * streams from the first section boundary. */
    char zeros[sizeof(tdm_idx_header) + TDM_SEC_COUNT * sizeof(tdm_idx_section_entry)] = {0};
    int rc = fwrite(zeros, 1, sizeof zeros, w->f) == sizeof zeros
                 ? TDM_OK : tdm_iw_fail_io(w, err, "write");
    w->pos = sizeof zeros;
    if (!rc)
        rc = open_spill(w, err);
    if (!rc)
        rc = begin_section(w, TDM_SEC_ARENA, err);
    if (rc) {
        tdm_iwriter_free(w);
        return rc;
    }
    *out = w;
    return TDM_OK;
}

int tdm_iwriter_set_codec(tdm_iwriter *w, const char *codec, tdm_err *err)
{
    const tdm_codec_ops *c = tdm_codec_by_name(codec);
    if (!c)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "unknown codec '%s'", codec);
    w->list_codec = c;
    return TDM_OK;
}

int tdm_iwriter_add_doc(tdm_iwriter *w, uint32_t length, const char *name, tdm_err *err)
{
    if (w->docs_frozen)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "documents must come before the lists");
    if (w->ndocs >= UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT, "more than 2^32-1 documents");
    char num[24];
    if (!name) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)w->ndocs);
        name = num;
    }
    uint64_t end = w->names.len + strlen(name) + 1;
    if (tdm_buf_append(&w->doclens, &length, 4) ||
        tdm_buf_append(&w->names, name, strlen(name) + 1) ||
        tdm_buf_append(&w->nameoffs, &end, 8))
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory storing document names");
    w->ndocs++;
    w->total_doclen += length;
    return TDM_OK;
}

int tdm_iwriter_set_docs(tdm_iwriter *w, uint32_t ndocs, const uint32_t *lengths,
                         const char *const *names, tdm_err *err)
{
    for (uint32_t d = 0; d < ndocs; d++) {
        int rc = tdm_iwriter_add_doc(w, lengths ? lengths[d] : 0, names ? names[d] : NULL, err);
        if (rc)
            return rc;
    }
    return TDM_OK;
}

/* One block-table column from the spill rows: 4-byte fields, or the byte. */
static int put_column(tdm_iwriter *w, uint32_t id, size_t field, tdm_err *err)
{
    int rc = begin_section(w, id, err);
    if (!rc && fseek(w->spill, 0, SEEK_SET) != 0)
        rc = tdm_iw_fail_io(w, err, "seek in the block spill");
    tdm_iw_row rows[1024];
    uint32_t vals[1024];
    uint8_t bytes[1024];
    for (uint64_t left = w->nentries; !rc && left;) {
        size_t n = left < 1024 ? (size_t)left : 1024;
        if (fread(rows, sizeof *rows, n, w->spill) != n)
            return tdm_iw_fail_io(w, err, "read back the block spill");
        for (size_t i = 0; i < n; i++) {
            if (id == TDM_SEC_BLOCK_MAX)
                bytes[i] = rows[i].maxq;
            else
                memcpy(&vals[i], (const char *)&rows[i] + field, 4);
        }
        rc = id == TDM_SEC_BLOCK_MAX ? tdm_iw_put(w, bytes, n, err)
                                     : tdm_iw_put(w, vals, n * 4, err);
        left -= n;
    }
    end_section(w, id);
    return rc;
}

static int put_sections(tdm_iwriter *w, tdm_err *err)
{
    end_section(w, TDM_SEC_ARENA);
    int rc = fflush(w->spill) ? tdm_iw_fail_io(w, err, "write the block spill") : TDM_OK;
    if (!rc)
        rc = put_section(w, TDM_SEC_LISTS, w->lists.p, w->lists.len, err);
    if (!rc)
        rc = put_section(w, TDM_SEC_CODECS, w->codecs.p, w->codecs.len, err);
    if (!rc)
        rc = put_column(w, TDM_SEC_BLOCK_LAST, offsetof(tdm_iw_row, last), err);
    if (!rc)
        rc = put_column(w, TDM_SEC_BLOCK_DOCS, offsetof(tdm_iw_row, doc), err);
    if (!rc)
        rc = put_column(w, TDM_SEC_BLOCK_FREQS, offsetof(tdm_iw_row, freq), err);
    if (!rc)
        rc = put_column(w, TDM_SEC_BLOCK_MAX, 0, err);
    const struct { uint32_t id; const tdm_buf *b; } rest[] = {
        {TDM_SEC_DOCLENS, &w->doclens},   {TDM_SEC_TERM_OFFS, &w->termoffs},
        {TDM_SEC_TERM_CF, &w->cfs},       {TDM_SEC_TERMS, &w->terms},
        {TDM_SEC_DOCNAME_OFFS, &w->nameoffs}, {TDM_SEC_DOCNAMES, &w->names},
        {TDM_SEC_STOPWORDS, &w->stopwords},
    };
    for (size_t i = 0; !rc && i < sizeof rest / sizeof *rest; i++)
        rc = put_section(w, rest[i].id, rest[i].b->p, rest[i].b->len, err);
    return rc;
}

static void fill_header(const tdm_iwriter *w, tdm_idx_header *h)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, TDM_IDX_MAGIC, 8);
    h->version = TDM_IDX_VERSION;
    h->header_size = sizeof *h;
    h->nsections = TDM_SEC_COUNT;
    h->file_size = w->pos;
    h->ndocs = w->ndocs;
    h->nterms = w->nterms;
    h->npostings = w->npostings;
    h->total_doclen = w->total_doclen;
    /* an impact index has no BM25 bounds (k1, b 0) but a quantization rule */
    h->k1 = w->impact ? 0 : w->k1;
    h->b = w->impact ? 0 : w->b;
    h->flags = w->impact ? TDM_IDX_FLAG_IMPACT : 0;
    h->quant = w->impact ? w->quant : 0;
    h->quant_scale = w->impact ? w->quant_scale : 0;
    h->quant_max = w->impact ? w->quant_max : 0;
    snprintf(h->codec, sizeof h->codec, "%s", w->codec->name);
    memcpy(h->stemmer, w->stemmer, sizeof h->stemmer);
    h->nstopwords = w->nstopwords;
}

int tdm_iwriter_finish(tdm_iwriter *w, tdm_err *err)
{
    if (w->failed || !w->f)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "writer failed earlier");
    int rc = put_sections(w, err);
    if (rc)
        return rc;
    tdm_idx_header h;
    fill_header(w, &h);
    XXH64_reset(w->hash, 0);
    XXH64_update(w->hash, &h, sizeof h);
    XXH64_update(w->hash, w->sec, sizeof w->sec);
    h.checksum = XXH64_digest(w->hash);
    if (fseek(w->f, 0, SEEK_SET) != 0 || fwrite(&h, sizeof h, 1, w->f) != 1 ||
        fwrite(w->sec, sizeof w->sec, 1, w->f) != 1 || fflush(w->f) != 0 || fsync(fileno(w->f)))
        return tdm_iw_fail_io(w, err, "write");
    FILE *f = w->f;
    w->f = NULL;
    if (fclose(f) != 0)
        return tdm_iw_fail_io(w, err, "close");
    if (rename(w->tmp, w->path) != 0)
        return tdm_err_set(err, TDM_ERR_IO, "%s: rename: %s", w->path, strerror(errno));
    tdm_temp_keep(w->tmp);
    w->tmp = NULL;
    return TDM_OK;
}

void tdm_iwriter_free(tdm_iwriter *w)
{
    if (!w)
        return;
    if (w->f)
        fclose(w->f);
    if (w->spill)
        fclose(w->spill);
    tdm_temp_discard(w->tmp);
    free(w->path);
    if (w->hash)
        XXH64_freeState(w->hash);
    tdm_buf *bufs[] = {&w->stopwords, &w->doclens, &w->nameoffs, &w->names, &w->lists,
                       &w->codecs, &w->termoffs, &w->cfs, &w->terms};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        tdm_buf_free(bufs[i]);
    free(w->scratch);
    free(w);
}
