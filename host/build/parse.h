/* Input collections: one document per line, TREC, SMART, JSON lines; each from
 * a file, stdin ("-") or a gzip file (zlib reads plain files transparently).
 *
 * A parser yields (name, text) pairs; both buffers belong to the parser and
 * stay valid until the next call. One parser per thread.
 */
#ifndef TDM_BUILD_PARSE_H
#define TDM_BUILD_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "tandem.h"
#include "vector.h"

/* Formats are enum tdm_build_format (include/tandem.h). */

typedef struct tdm_parser tdm_parser;

/* Opens `path` ("-" = stdin). format AUTO guesses from the first bytes (after
 * a UTF-8 byte-order mark, which is skipped). */
int tdm_parser_open(const char *path, int format, tdm_parser **out, tdm_err *err);
/* Whether an input with no documents is fine (default: an error). */
void tdm_parser_allow_empty(tdm_parser *p, int allow);
/* Whether a lines input may hold lines without a TAB, each a document named
 * by its ordinal (default: an error naming the line). */
void tdm_parser_allow_unnamed(tdm_parser *p, int allow);
/* The next document: 1 with *name and *text set (both NUL-terminated; the
 * text may hold NUL bytes from a JSON \u0000), 0 at the end, < 0 on error.
 * Every error names the file and line. Malformed input is an error, never a
 * silent partial result: a truncated gzip stream, a NUL byte, TREC markup
 * that does not nest (<DOC> inside a document, </DOC> or </DOCNO> missing),
 * JSON that is not an object of the expected shape, and (unless
 * tdm_parser_allow_empty) an input that yields no document at all.
 * TREC text: only tag-shaped markup is blanked (< then an optional / ! or ?,
 * a letter, a name, then > or white space and attributes up to the next >
 * within 1 KiB with no < between; and <!-- comments -->), so a stray '<' in
 * text stays text. */
int tdm_parser_next(tdm_parser *p, const char **name, const char **text, size_t *text_len,
                    tdm_err *err);
/* JSON vectors: the rule their weights become impacts by (default:
 * integers as they are; TDM_QUANT_SCAN only checks them and keeps the
 * largest, tdm_parser_max_weight). The text of a JSON vector document is
 * its packed vector (vector.h). */
void tdm_parser_set_quant(tdm_parser *p, const tdm_quant *q);
double tdm_parser_max_weight(const tdm_parser *p);
/* Compressed bytes consumed so far (for progress). */
uint64_t tdm_parser_bytes(const tdm_parser *p);
int tdm_parser_format(const tdm_parser *p);
void tdm_parser_close(tdm_parser *p);

/* "auto", "lines", "trec", "smart", "jsonl", "jsonvector" <-> enum; -1 if unknown. */
int tdm_format_by_name(const char *name);
const char *tdm_format_name(int format);

#endif
