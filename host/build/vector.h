/* Learned sparse collections: Anserini's JSON vector documents
 * ({"id": ..., "contents": ..., "vector": {"term": weight, ...}} a line),
 * the rule that turns their weights into integer impacts (enum tdm_quantize,
 * docs/LEARNED_SPARSE.md), and the packed form in which a parsed document
 * travels through the builder in place of its text.
 *
 * Packed vector: for each term of the document, its bytes, a NUL, then its
 * impact as 4 bytes in host order; the builder's threads walk it with
 * tdm_vector_each instead of tokenizing. Terms are taken as they are: no
 * tokenizer, stopwords or stemmer (WordPieces such as "##ing" stay whole).
 *
 * Threads: pure functions of their arguments.
 */
#ifndef TDM_BUILD_VECTOR_H
#define TDM_BUILD_VECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "tandem.h"

/* The largest impact a posting may have: float-exact, and room for a few
 * hundred terms in a 32-bit document length. */
#define TDM_IMPACT_MAX (1u << 24)

/* A quantization rule (tandem.h enum tdm_quantize). TDM_QUANT_SCAN is the
 * builder's first pass for TDM_QUANT_LINEAR without a given maximum: weights
 * are checked and their largest kept, nothing is quantized. */
#define TDM_QUANT_SCAN (-1)
typedef struct tdm_quant {
    int kind;
    unsigned bits;          /* linear */
    double scale;           /* scale: S; linear: (2^bits - 2) / M as a float */
    double max;             /* linear: M (0 until known) */
} tdm_quant;

/* "integer" (or NULL), "scale:S", "linear:B" or "linear:B:M" into *q; 0, or
 * -1 with the reason in why[cap]. */
int tdm_quant_parse(const char *spec, tdm_quant *q, char *why, size_t cap);
/* Completes a linear rule once its maximum m (> 0) is known. */
void tdm_quant_set_max(tdm_quant *q, double m);
/* One weight (finite, >= 0, checked by the caller) into *impact: 1 with the
 * impact, 0 when the posting is dropped (weight 0, or a scale rounding it to
 * 0), -1 with a reason when the rule cannot take it (a fraction under
 * "integer", above M under "linear", an impact past TDM_IMPACT_MAX). */
int tdm_quant_apply(const tdm_quant *q, double w, uint32_t *impact, const char **why);

/* Parses one JSON vector object s[0..len): the id (string or number, as
 * tdm_json_doc) into *id, the vector packed into *vec by q (with q->kind
 * TDM_QUANT_SCAN: *vec left empty, *maxw raised to the largest weight).
 * "contents" and unknown keys are skipped; "vector" is required, an object
 * of terms (1 .. 1024 bytes, no NUL) to numbers >= 0. A term given twice
 * in one vector gets the sum of its impacts. Returns 0, or -1 with the
 * reason (naming the term where there is one) in why[cap] and the byte
 * position in *pos. */
int tdm_json_vector_doc(const char *s, size_t len, const tdm_quant *q, tdm_buf *id,
                        tdm_buf *vec, double *maxw, char *why, size_t cap, size_t *pos);

/* Calls fn for each (term, impact) of a packed vector; the first nonzero
 * return stops and is returned. */
typedef int (*tdm_vector_fn)(void *user, const char *term, size_t len, uint32_t impact);
int tdm_vector_each(const char *vec, size_t len, tdm_vector_fn fn, void *user);

/* Adds a packed vector to `inv` as document `doc` (each impact as that many
 * occurrences), its length (the sum of its impacts) into *doclen: TDM_OK,
 * TDM_ERR_NOMEM, or TDM_ERR_LIMIT when a frequency or the length would pass
 * 2^32 - 1. */
struct tdm_inverter;
int tdm_vector_invert(struct tdm_inverter *inv, const char *vec, size_t len, uint32_t doc,
                      uint32_t *doclen);

#endif
