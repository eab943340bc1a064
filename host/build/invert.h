/* In-memory inversion for the builder: term -> (docid, tf) postings in a
 * hash table, with its memory use accounted so that the builder can flush
 * sorted runs (runs.h) before it exceeds its budget. One per build. */
#ifndef TDM_BUILD_INVERT_H
#define TDM_BUILD_INVERT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

typedef struct tdm_inverter tdm_inverter;

int tdm_inverter_new(tdm_inverter **out, tdm_err *err);
void tdm_inverter_free(tdm_inverter *inv);
/* One occurrence of term in document `doc` (docs arrive in increasing order). */
int tdm_inverter_add(tdm_inverter *inv, const char *term, size_t len, uint32_t doc);
/* `count` (>= 1) occurrences at once (an impact); TDM_ERR_LIMIT when the
 * term's frequency in the document would pass 2^32 - 1. */
int tdm_inverter_add_n(tdm_inverter *inv, const char *term, size_t len, uint32_t doc,
                       uint32_t count);
/* Bytes held now (table, terms, postings). */
size_t tdm_inverter_bytes(const tdm_inverter *inv);
size_t tdm_inverter_terms(const tdm_inverter *inv);

/* Visits every term in increasing byte order with its postings as parallel
 * arrays, then empties the inverter. A non-zero return from fn stops and is
 * returned. */
typedef int (*tdm_invert_fn)(void *user, const char *term, size_t len, const uint32_t *docids,
                             const uint32_t *freqs, size_t n);
int tdm_inverter_drain(tdm_inverter *inv, tdm_invert_fn fn, void *user);

#endif
