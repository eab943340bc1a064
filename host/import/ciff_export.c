/* Writing CIFF from an index: Header, one PostingsList per term in lexicon
 * order (docids as d-gaps), one DocRecord per document, each message packed
 * by protobuf-c and preceded by its varint length. The output goes to a
 * temporary file that is renamed into place at the end (tdm_outfile). */
#include "ciff.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ciff.pb-c.h"
#include "common/fsutil.h"
#include "index/analyzer.h"
#include "tandem.h"

typedef struct out {
    const char *path;
    FILE *f;
    uint8_t *buf;          /* packed message */
    size_t cap;
    uint32_t *docids, *freqs;
    Io__Osirrc__Ciff__Posting *postings;
    Io__Osirrc__Ciff__Posting **ptrs;
    size_t list_cap;
} out;

static int put_message(out *o, const ProtobufCMessage *m, tdm_err *err)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    if (n > o->cap) {
        uint8_t *p = realloc(o->buf, n);
        if (!p)
            return tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory (%zu-byte message)",
                               o->path, n);
        o->buf = p;
        o->cap = n;
    }
    protobuf_c_message_pack(m, o->buf);
    uint8_t len[10];
    size_t k = 0;
    for (uint64_t v = n; ; v >>= 7) {
        len[k++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        if (v < 0x80)
            break;
    }
    if (fwrite(len, 1, k, o->f) != k || fwrite(o->buf, 1, n, o->f) != n)
        return tdm_err_set(err, TDM_ERR_IO, "%s: write: %s", o->path, strerror(errno));
    return TDM_OK;
}

static int put_header(out *o, const tdm_ireader_info *in, const char *description,
                      tdm_err *err)
{
    if (in->nterms > INT32_MAX || in->ndocs > INT32_MAX || in->total_doclen > INT64_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT,
                           "%s: %llu terms and %llu documents exceed CIFF's int32 counts",
                           o->path, (unsigned long long)in->nterms,
                           (unsigned long long)in->ndocs);
    char desc[128];
    if (!description) {
        snprintf(desc, sizeof desc, "tandem %s export", tdm_version());
        description = desc;
    }
    Io__Osirrc__Ciff__Header h = IO__OSIRRC__CIFF__HEADER__INIT;
    h.version = 1;
    h.num_postings_lists = h.total_postings_lists = (int32_t)in->nterms;
    h.num_docs = h.total_docs = (int32_t)in->ndocs;
    h.total_terms_in_collection = (int64_t)in->total_doclen;
    h.average_doclength = in->ndocs ? (double)in->total_doclen / (double)in->ndocs : 0.0;
    h.description = (char *)description;
    return put_message(o, &h.base, err);
}

static int grow_list(out *o, size_t n, tdm_err *err)
{
    if (n <= o->list_cap)
        return TDM_OK;
    free(o->docids);
    free(o->freqs);
    free(o->postings);
    free(o->ptrs);
    o->docids = malloc(n * sizeof *o->docids);
    o->freqs = malloc(n * sizeof *o->freqs);
    o->postings = malloc(n * sizeof *o->postings);
    o->ptrs = malloc(n * sizeof *o->ptrs);
    o->list_cap = n;
    if (!o->docids || !o->freqs || !o->postings || !o->ptrs) {
        o->list_cap = 0;
        return tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory for a list of %zu", o->path,
                           n);
    }
    return TDM_OK;
}

static int put_list(out *o, const tdm_ireader *r, uint64_t i, tdm_err *err)
{
    size_t len;
    uint32_t df;
    uint64_t cf;
    const char *term = tdm_ireader_term(r, i, &len, &df, &cf);
    if (!term)
        return tdm_err_set(err, TDM_ERR_INTERNAL, "term %llu missing", (unsigned long long)i);
    int rc = grow_list(o, df, err);
    if (rc == TDM_OK)
        rc = tdm_ireader_decode(r, i, o->docids, o->freqs, err);
    if (rc != TDM_OK)
        return rc;
    char *t = malloc(len + 1); /* protobuf-c wants a NUL-terminated string */
    if (!t)
        return tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory", o->path);
    memcpy(t, term, len);
    t[len] = 0;
    for (uint32_t k = 0; k < df; k++) {
        if (o->freqs[k] > INT32_MAX) {
            free(t);
            return tdm_err_set(err, TDM_ERR_LIMIT, "%s: term '%.*s': tf %u exceeds CIFF's int32",
                               o->path, (int)len, term, o->freqs[k]);
        }
        Io__Osirrc__Ciff__Posting *p = &o->postings[k];
        io__osirrc__ciff__posting__init(p);
        p->docid = (int32_t)(k ? o->docids[k] - o->docids[k - 1] : o->docids[0]);
        p->tf = (int32_t)o->freqs[k];
        o->ptrs[k] = p;
    }
    Io__Osirrc__Ciff__PostingsList l = IO__OSIRRC__CIFF__POSTINGS_LIST__INIT;
    l.term = t;
    l.df = df;
    l.cf = (int64_t)cf;
    l.n_postings = df;
    l.postings = o->ptrs;
    rc = put_message(o, &l.base, err);
    free(t);
    return rc;
}

static int put_docs(out *o, const tdm_ireader *r, uint64_t ndocs, tdm_err *err)
{
    const uint32_t *lens = tdm_ireader_doclens(r);
    for (uint64_t d = 0; d < ndocs; d++) {
        const char *name = tdm_ireader_docname(r, d);
        if (!name)
            return tdm_err_set(err, TDM_ERR_CORRUPT, "document %llu has no name",
                               (unsigned long long)d);
        if (lens[d] > INT32_MAX)
            return tdm_err_set(err, TDM_ERR_LIMIT, "document %llu: length %u exceeds int32",
                               (unsigned long long)d, lens[d]);
        Io__Osirrc__Ciff__DocRecord m = IO__OSIRRC__CIFF__DOC_RECORD__INIT;
        m.docid = (int32_t)d;
        m.collection_docid = (char *)name;
        m.doclength = (int32_t)lens[d];
        int rc = put_message(o, &m.base, err);
        if (rc != TDM_OK)
            return rc;
    }
    return TDM_OK;
}

static int write_all(out *o, const tdm_ireader *r, const char *description, tdm_err *err)
{
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    /* A damaged payload must not be passed on: its checksums first (and
     * every list's decode checks it against its cf and block ends). */
    int rc = tdm_ireader_check_payload(r, err);
    /* The analyzer rides at the end of the description: CIFF has no field
     * for it, and a reader that does not know the line just shows it. */
    char dflt[128], *an = rc == TDM_OK ? tdm_analyzer_of_index(r, err) : NULL, *desc = NULL;
    if (!description) {
        snprintf(dflt, sizeof dflt, "tandem %s export", tdm_version());
        description = dflt;
    }
    if (an && (desc = malloc(strlen(description) + strlen(an) + 2)))
        sprintf(desc, "%s%s%s", description, *an ? "\n" : "", an);
    else if (rc == TDM_OK)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    free(an);
    if (rc == TDM_OK)
        rc = put_header(o, in, desc, err);
    free(desc);
    for (uint64_t i = 0; rc == TDM_OK && i < in->nterms; i++)
        rc = put_list(o, r, i, err);
    if (rc == TDM_OK)
        rc = put_docs(o, r, in->ndocs, err);
    return rc;
}

int tdm_ciff_export(const tdm_ireader *r, const char *path, const char *description,
                    tdm_err *err)
{
    const char *src = tdm_ireader_path(r);
    int guard = tdm_output_check(path, &src, 1, err); /* not the index read, no device */
    if (guard != TDM_OK)
        return guard;
    /* tdm_outfile: an unpredictable temporary name created exclusively,
     * removed on a signal, fsynced and renamed into place (fsutil.h). */
    tdm_outfile file;
    out o = {.path = path};
    int rc = tdm_outfile_open(&file, path, err);
    if (rc == TDM_OK) {
        o.f = file.f;
        rc = write_all(&o, r, description, err);
        if (rc == TDM_OK)
            rc = tdm_outfile_commit(&file, err);
        else
            tdm_outfile_abort(&file);
    }
    free(o.buf);
    free(o.docids);
    free(o.freqs);
    free(o.postings);
    free(o.ptrs);
    return rc;
}
