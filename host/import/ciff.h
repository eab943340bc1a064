/* CIFF, the Common Index File Format (Lin et al. 2020): import and export.
 *
 * A CIFF file is a stream of varint-length-delimited protobuf messages
 * (ciff.proto): one Header, num_postings_lists PostingsList (docids as
 * d-gaps), num_docs DocRecord. Reading is bounded: every varint, length and
 * count is checked against the bytes that remain, and every error names the
 * file and the byte offset of the offending message.
 *
 * Import holds the documents, one entry per list (its offset and term) and
 * one decoded list at a time; lists are handed out in term byte order
 * whatever order the file has. Lists with no postings are skipped (an index
 * cannot hold them) and counted in tdm_ciff_info.empty_lists.
 *
 * Threads: a tdm_ciff handle is used by one thread at a time.
 */
#ifndef TDM_IMPORT_CIFF_H
#define TDM_IMPORT_CIFF_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "import/collection.h"
#include "index/reader.h"
#include "index/writer.h"

/* Longest message the reader accepts (a PostingsList of ~100M postings). */
#define TDM_CIFF_MAX_MESSAGE (UINT64_C(1) << 31)

typedef struct tdm_ciff tdm_ciff;

/* The Header message plus what the scan found. Strings owned by the handle. */
typedef struct tdm_ciff_info {
    int32_t version;
    int32_t num_postings_lists, num_docs;
    int32_t total_postings_lists, total_docs;
    int64_t total_terms_in_collection;
    double average_doclength;
    const char *description;
    uint64_t empty_lists;      /* lists with no postings, skipped */
    uint64_t file_size;
} tdm_ciff_info;

/* Maps `path`, reads the header and every DocRecord, and indexes the
 * PostingsList messages (their contents are checked when each list is read). */
int tdm_ciff_open(const char *path, tdm_ciff **out, tdm_err *err);
/* The same over a buffer that must outlive the handle; `name` labels errors. */
int tdm_ciff_open_mem(const void *data, size_t size, const char *name, tdm_ciff **out,
                      tdm_err *err);
void tdm_ciff_close(tdm_ciff *c);

const tdm_ciff_info *tdm_ciff_info_get(const tdm_ciff *c);

/* The collection view of an open file: documents, and lists in term order
 * (each list checked: df, cf, increasing docids below num_docs, tf >= 1).
 * Valid while `c` is open. */
void tdm_ciff_source(tdm_ciff *c, tdm_coll_source *src);

/* Opens `ciff_path` and writes its collection to a new index at `index_path`. */
int tdm_ciff_import(const char *ciff_path, const char *index_path,
                    const tdm_iwriter_options *opts, tdm_err *err);

/* Writes the whole index as CIFF to `path` (atomically: a temporary file,
 * then rename). Deterministic: the same index gives the same bytes.
 * `description` goes into the Header (NULL: "tandem <version> export"). */
int tdm_ciff_export(const tdm_ireader *r, const char *path, const char *description,
                    tdm_err *err);

#endif
