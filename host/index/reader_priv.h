/* The reader's state, shared by reader.c (open, lexicon, documents) and
 * reader_list.c (list views, decoding, verification). Not for other files. */
#ifndef TDM_INDEX_READER_PRIV_H
#define TDM_INDEX_READER_PRIV_H

#include "format.h"
#include "reader.h"

#define OFF(x) ((unsigned long long)(x))

struct tdm_ireader {
    char *path;
    const unsigned char *base;  /* the mapping (or a heap copy) */
    size_t size;
    int mapped;                 /* base is an mmap */
    int owned;                  /* base is a heap copy */
    tdm_ireader_info info;
    const tdm_idx_section_entry *sec;  /* [TDM_SEC_COUNT] */
    const tdm_idx_term *lex;
    const char *terms;
    const uint32_t *doclens;
    const uint64_t *nameoffs;
    const char *names;
    const unsigned char *postings;
    const char **stopwords;     /* [nstopwords], into the mapping */
};

#endif
