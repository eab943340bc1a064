/* The writer's state, shared by writer.c (files, sections, documents) and
 * writer_list.c (encoding one list and its block metadata). Not for other
 * files. */
#ifndef TDM_INDEX_WRITER_PRIV_H
#define TDM_INDEX_WRITER_PRIV_H

#include <stdio.h>
#include <xxhash.h>

#include "codec/codec.h"
#include "common/buf.h"
#include "format.h"
#include "writer.h"

/* One block-table entry as spilled; finish writes each field as a column. */
typedef struct tdm_iw_row {
    uint32_t last, doc, freq;
    uint8_t maxq, pad[3];
} tdm_iw_row;

struct tdm_iwriter {
    char *path, *tmp;
    FILE *f;
    uint64_t pos;                 /* bytes written to f */
    XXH64_state_t *hash;          /* running hash of the section being written */
    tdm_idx_section_entry sec[TDM_SEC_COUNT];
    FILE *spill;                  /* tdm_iw_row per block-table entry, unlinked */
    uint64_t nentries;            /* block-table entries so far */
    uint64_t arena_words;         /* ARENA words so far */
    const tdm_codec_ops *codec;   /* named at open, recorded in the header */
    const tdm_codec_ops *list_codec; /* of the lists added now */
    double k1, b;
    int impact;                   /* TDM_IDX_FLAG_IMPACT: bounds are impacts */
    uint32_t quant;               /* header.quant */
    double quant_scale, quant_max;
    char stemmer[TDM_IDX_NAME_MAX];
    tdm_buf stopwords;            /* NUL-terminated words */
    uint32_t nstopwords;
    tdm_buf doclens;              /* uint32 per doc */
    tdm_buf nameoffs;             /* uint64 per doc + 1 */
    tdm_buf names;
    uint64_t ndocs, total_doclen;
    int docs_frozen;              /* a list was added: no more documents */
    tdm_buf lists;                /* tdm_idx_list per term */
    tdm_buf codecs;               /* uint8 per term */
    tdm_buf termoffs;             /* uint32 per term + 1 */
    tdm_buf cfs;                  /* uint32 per term */
    tdm_buf terms;
    uint64_t nterms, npostings;
    uint32_t *scratch;            /* tf - 1 values, then per-block scores, of one list */
    size_t scratch_cap;
    int failed;
};

/* Appends n bytes to the section being written (the ARENA while lists come). */
int tdm_iw_put(tdm_iwriter *w, const void *p, size_t n, tdm_err *err);
/* Marks the writer failed and reports errno on the temporary file. */
int tdm_iw_fail_io(tdm_iwriter *w, tdm_err *err, const char *what);

#endif
