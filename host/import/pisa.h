/* PISA's binary collection: import and export.
 *
 * A collection is five files sharing a basename:
 *   BASE.docs       u32 sequences [length, values...]: first [1, num_docs],
 *                   then one sequence of docids per term (strictly increasing)
 *   BASE.freqs      one sequence of term frequencies per term, same lengths
 *   BASE.sizes      one sequence: the num_docs document lengths
 *   BASE.terms      the lexicon, one term a line, in list order (optional on
 *                   import: terms default to the decimal list number)
 *   BASE.documents  document names, one a line (optional on import: names
 *                   default to the decimal docid)
 * Integers are little-endian. Import maps .docs and .freqs, checks every
 * sequence against the end of its file and against its twin, and hands the
 * lists out in term byte order; errors name the file and the byte offset.
 *
 * Threads: a tdm_pisa handle is used by one thread at a time.
 */
#ifndef TDM_IMPORT_PISA_H
#define TDM_IMPORT_PISA_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "import/collection.h"
#include "index/reader.h"
#include "index/writer.h"

typedef struct tdm_pisa tdm_pisa;

/* Opens BASE.docs, .freqs, .sizes and (if present) .terms and .documents and
 * checks their structure; list contents are checked as each list is read. */
int tdm_pisa_open(const char *basename, tdm_pisa **out, tdm_err *err);
void tdm_pisa_close(tdm_pisa *p);

/* The collection view (documents; lists in term order, each checked: docids
 * strictly increasing and below num_docs, freqs >= 1). Valid while open. */
void tdm_pisa_source(tdm_pisa *p, tdm_coll_source *src);

/* Opens BASE and writes its collection to a new index at `index_path`. */
int tdm_pisa_import(const char *basename, const char *index_path,
                    const tdm_iwriter_options *opts, tdm_err *err);

/* Writes the index as BASE.docs/.freqs/.sizes/.terms/.documents, lists in
 * lexicon order; each file appears atomically. Deterministic. Fails with
 * TDM_ERR_UNSUPPORTED if a term or document name holds a newline (the text
 * files cannot carry it). */
int tdm_pisa_export(const tdm_ireader *r, const char *basename, tdm_err *err);

#endif
