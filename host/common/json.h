/* A small strict JSON reader over one buffer (RFC 8259's grammar), for the
 * one-object-per-line files tandem reads: collections (build/json.h) and
 * query files (harness/qf_lines.c). A cursor: callers read the values of the
 * keys they know and skip the rest (any JSON value, nesting bounded).
 * Functions return 1 on success, 0 on failure with `why` (and `pos`, the
 * byte where it went wrong) set. Pure functions over the buffer; a cursor
 * is one thread's. */
#ifndef TDM_COMMON_JSON_H
#define TDM_COMMON_JSON_H

#include <stddef.h>

#include "buf.h"

typedef struct tdm_json {
    const char *s;
    size_t len, pos;
    const char *why;        /* on failure: what is wrong at pos */
    tdm_buf out;            /* the last string or number read (owned; tdm_json_free) */
    int lone_surrogates;    /* 1: a \u escape of a lone surrogate becomes U+FFFD
                               (collections: real text has them); 0: an error */
} tdm_json;

void tdm_json_init(tdm_json *j, const char *s, size_t len);
void tdm_json_free(tdm_json *j);
/* Skips white space; the next byte, or 0 at the end. */
int tdm_json_peek(tdm_json *j);
/* Consumes byte c after white space. */
int tdm_json_expect(tdm_json *j, char c);
/* A string into j->out (UTF-8, NUL-terminated after j->out.len bytes; may
 * hold NUL from \u0000, which callers refuse where it matters). */
int tdm_json_string(tdm_json *j);
/* A number as JSON spells it, its text verbatim into j->out. */
int tdm_json_number_text(tdm_json *j);
/* A number's value into *v (finite; its text in j->out). */
int tdm_json_number(tdm_json *j, double *v);
/* Skips any value. */
int tdm_json_skip(tdm_json *j);

#endif
