/* Query files as people have them, read whole into a list of queries.
 *
 * Formats (TDM_QF_AUTO guesses from the first bytes: '<' TREC topics, ".I"
 * SMART, '{' JSON lines, a first line with a TAB tab-separated, else
 * colon-separated):
 *   colon   `id:text` a line (PISA's form; ../shared/data/queries): the id is
 *           everything before the first ':', the text the rest;
 *   tab     `id<TAB>text` a line (MS MARCO, Anserini's TSV topics);
 *   colon and tab lines with `tokens` set (learned sparse query logs, such
 *           as Anserini's SPLADE and uniCOIL TSV topics): the text is terms
 *           as stored in the index, separated by white space, each repeated
 *           as often as its integer weight: read as a weighted query of
 *           each distinct term and its count (at most TDM_QF_MAX_TERMS
 *           distinct terms; any number of repetitions);
 *   trec    TREC topics: <top> <num> ... <title> ... <desc> ... <narr> ...
 *           </top>; "Number:", "Topic:", "Description:", "Narrative:"
 *           prefixes dropped, closing tags (</title>) allowed; the text is
 *           the chosen fields (TDM_QF_TITLE by default) joined by a space;
 *           other tags (<dom>, <con>, ...) are ignored;
 *   smart   SMART `.I id` records (Cranfield, CACM): the text is the .T and
 *           .W fields; .A .B .N .X .K .C are ignored; with number_by_position
 *           the ids are 1, 2, 3 ... in file order (Cranfield's qrels number
 *           its queries so, not by .I); a record with no field at all (CACM's
 *           trailing `.I 0`) is an empty query;
 *   jsonl   one object a line: {"id": "q1" or 7, "text": "..."} or, weighted,
 *           {"id": ..., "terms": {"term": weight, ...}} ("vector" as in
 *           Anserini's JSON vector topics is the same key; weights in
 *           [TDM_WEIGHT_MIN, TDM_WEIGHT_MAX], integer or not, at most
 *           TDM_QF_MAX_TERMS terms; the terms are used as stored in the
 *           index, not tokenized); other keys are skipped.
 * Strict: a malformed line, a missing field, an empty id, an id holding
 * white space or a control character (a TREC run cannot carry it), a CR not
 * ending a line (CR-only line ends, but in TREC topics, where it is white
 * space) or a duplicate id is an error naming the file and line
 * (TDM_ERR_FORMAT). Blank lines between
 * queries are allowed. Empty query text is allowed (a query with no results).
 * Files may be gzip-compressed.
 *
 * Threads: a read file is immutable.
 */
#ifndef TDM_HARNESS_QUERYFILE_H
#define TDM_HARNESS_QUERYFILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "harness/arena.h"

enum tdm_qf_format {
    TDM_QF_AUTO = 0,
    TDM_QF_COLON,
    TDM_QF_TAB,
    TDM_QF_TREC,
    TDM_QF_SMART,
    TDM_QF_JSONL,
};

enum { TDM_QF_TITLE = 1, TDM_QF_DESC = 2, TDM_QF_NARR = 4 };

/* Distinct terms a weighted query may have (the engine's TDM_SEARCH_MAX_TERMS). */
#define TDM_QF_MAX_TERMS 1024

typedef struct tdm_qf_options {
    int format;                 /* enum tdm_qf_format */
    unsigned trec_fields;       /* TDM_QF_TITLE | ...; 0 = title */
    int number_by_position;     /* smart: ids 1, 2, 3, ... */
    int tokens;                 /* colon, tab: the text is repeated terms (above) */
} tdm_qf_options;

typedef struct tdm_qf_term {
    const char *term;
    double weight;
} tdm_qf_term;

typedef struct tdm_qf_query {
    const char *id;
    const char *text;           /* NULL for a weighted query */
    const tdm_qf_term *terms;   /* weighted: [nterms] */
    size_t nterms;
    uint64_t line;              /* where the query starts */
} tdm_qf_query;

typedef struct tdm_qfile {
    tdm_qf_query *q;
    size_t n;
    int format;                 /* the one read (AUTO resolved) */
    /* internal */
    size_t cap;
    tdm_arena strs;
    tdm_qf_term **termblocks;
    size_t ntermblocks;
} tdm_qfile;

/* The format named "auto", "colon", "tab", "trec", "smart", "jsonl"; -1 if none.
 * ("tokens" is tab with tokens set: tdm_qf_options_by_name.) */
int tdm_qf_format_by_name(const char *name);
const char *tdm_qf_format_name(int format);
/* The fields named in a comma list of "title", "desc", "narr"; 0 if bad. */
unsigned tdm_qf_fields_by_names(const char *list);
/* A --format value into o->format and o->tokens: a name above, or "tokens"
 * (tab, tokens set); -1 if unknown. */
int tdm_qf_options_by_name(const char *name, tdm_qf_options *o);

/* Reads path ('-' for stdin; gzip ok). opts may be NULL (auto, title). */
int tdm_qfile_read(const char *path, const tdm_qf_options *opts, tdm_qfile **out,
                   tdm_err *err);
void tdm_qfile_free(tdm_qfile *f);

#endif
