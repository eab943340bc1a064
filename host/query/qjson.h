/* A small strict JSON reader for one-object-per-line query files: values of
 * known keys are decoded, the rest skipped (any JSON value). Internal to
 * host/query. Pure functions over a buffer; thread-safe. */
#ifndef TDM_QUERY_QJSON_H
#define TDM_QUERY_QJSON_H

#include <stddef.h>

#include "common/buf.h"

typedef struct tdm_qjson {
    const char *s;
    size_t len, pos;
    const char *why;    /* on error: what is wrong at pos */
    tdm_buf out;        /* decoded string (owned; tdm_qjson_free) */
} tdm_qjson;

void tdm_qjson_init(tdm_qjson *j, const char *s, size_t len);
void tdm_qjson_free(tdm_qjson *j);
/* Skips white space; returns the next byte or 0 at the end. */
int tdm_qjson_peek(tdm_qjson *j);
/* Consumes byte c (after white space); 0 if it is not there (why set). */
int tdm_qjson_expect(tdm_qjson *j, char c);
/* A string into j->out (UTF-8, NUL-terminated, j->out.len bytes; may hold NUL
 * from \u0000, which callers refuse where it matters). 0 on error. */
int tdm_qjson_string(tdm_qjson *j);
/* A number in JSON's grammar into *v (its text also in j->out). 0 on error. */
int tdm_qjson_number(tdm_qjson *j, double *v);
/* Skips any value. 0 on error. */
int tdm_qjson_skip(tdm_qjson *j);

#endif
