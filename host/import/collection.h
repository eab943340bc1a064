/* A collection in transit between a foreign format and the index: what the
 * importers (CIFF, PISA) produce and the exporters consume.
 *
 * A source exposes the documents (lengths, names) up front and the lists one
 * at a time in strictly increasing term byte order, so that an import holds
 * the documents, the lexicon and one list in memory, never the postings.
 * tdm_collection_write is the one place where an import meets the index
 * writer (writer.h).
 *
 * Threads: a source is used by one thread at a time.
 */
#ifndef TDM_IMPORT_COLLECTION_H
#define TDM_IMPORT_COLLECTION_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "index/reader.h"
#include "index/writer.h"

/* One list as a source hands it out; the arrays belong to the source and are
 * valid until its next list call. Docids strictly increasing, freqs >= 1. */
typedef struct tdm_coll_list {
    const char *term;       /* term_len bytes, not NUL-terminated */
    size_t term_len;
    const uint32_t *docids;
    const uint32_t *freqs;
    size_t n;
} tdm_coll_list;

typedef struct tdm_coll_source {
    uint32_t ndocs;
    const uint32_t *doclens;         /* [ndocs] */
    const char *const *docnames;     /* [ndocs]; NULL (or a NULL entry): decimal docid */
    uint64_t nlists;
    /* The i-th list in term order, 0 <= i < nlists. */
    int (*list)(void *self, uint64_t i, tdm_coll_list *out, tdm_err *err);
    void *self;
} tdm_coll_source;

/* Writes every document and list of `src` to a new index at `path` (opts as
 * for tdm_iwriter_open; NULL for defaults). The file appears atomically; its
 * temporary file is registered with common/cleanup.h, and leftovers of killed
 * writes into `path` are removed first. */
int tdm_collection_write(const tdm_coll_source *src, const char *path,
                         const tdm_iwriter_options *opts, tdm_err *err);

/* Compares two open indexes structurally: documents (count, lengths, names)
 * and lists (terms, docids, freqs). TDM_OK if equal, else TDM_ERR_CORRUPT
 * with the first difference in the message. Codecs may differ. */
int tdm_collection_compare(const tdm_ireader *a, const tdm_ireader *b, tdm_err *err);

/* Sorts idx[0..n) so that their terms (bytes via get) are in memcmp order,
 * a prefix first. TDM_OK; TDM_ERR_NOMEM; or TDM_ERR_FORMAT when two terms are
 * equal, with their idx values in dup[0] and dup[1] for the caller's message.
 * get(self, i, &len) returns the bytes of term i. */
typedef const char *(*tdm_coll_term_fn)(const void *self, uint64_t i, size_t *len);
int tdm_collection_sort_terms(uint64_t *idx, uint64_t n, tdm_coll_term_fn get,
                              const void *self, uint64_t dup[2]);

/* Tells the kernel that the whole pages inside map[off, off + len) of a
 * read-only file mapping will not be needed again, so that an import's
 * resident memory does not grow with the input file (pages read again are
 * simply read from the file). No-op for ranges under a page. */
void tdm_collection_drop_pages(const void *map, size_t off, size_t len);

/* For a list just read from map[start, end): hands back, when lists come in
 * file order, everything from *cursor to end (batched by the megabyte; the
 * cursor advances), and otherwise the list's own whole pages. */
void tdm_collection_drop_read(const void *map, uint64_t *cursor, uint64_t start, uint64_t end);

/* Byte-order comparison of two terms, a prefix first. */
int tdm_term_cmp(const char *a, size_t alen, const char *b, size_t blen);

#endif
