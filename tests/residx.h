/* Random index files for the resident-index tests (test_resident,
 * test_decode_jobs): lists of every awkward length for a codec's blocks
 * (one posting, a block less one, exactly one block, one more, several
 * blocks, every document), one codec or several cycling per list, and the
 * host reference of each list. Header-only: static functions. */
#ifndef TDM_TEST_RESIDX_H
#define TDM_TEST_RESIDX_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "forge.h"
#include "index/reader.h"
#include "index/writer.h"
#include "testutil.h"

typedef struct residx {
    char path[512];
    tdm_ireader *r;
    uint32_t ndocs;
    uint64_t nlists;
    uint32_t **docs, **freqs; /* the reference: tdm_ireader_decode of each list */
} residx;

/* Length of list i: the edge cases around block size b first, then random. */
static uint32_t residx_len(tdm_rng *g, uint64_t i, uint32_t b, uint32_t ndocs)
{
    const uint32_t edge[] = {1, b - 1, b, b + 1, 2 * b, 2 * b + 1, 3 * b - 1, ndocs, 2, 7};
    uint32_t n = i < sizeof edge / sizeof *edge ? edge[i] : tdm_rng_range(g, 1, 5 * b);
    return n < 1 ? 1 : n > ndocs ? ndocs : n;
}

/* n distinct sorted docids below ndocs (every one when n = ndocs). */
static void residx_docids(tdm_rng *g, uint32_t *d, uint32_t n, uint32_t ndocs)
{
    uint32_t k = 0;
    for (uint32_t x = 0; x < ndocs && k < n; x++) /* selection sampling */
        if (tdm_rng_u32(g) % (ndocs - x) < n - k)
            d[k++] = x;
}

/* Writes `nlists` random lists (codec names cycling per list) and opens
 * the index with the reference decoded. `tag` names the file. */
static void residx_make(residx *x, const char *tag, const char *const *codecs, size_t ncodecs,
                        uint64_t nlists, uint32_t ndocs, uint64_t seed)
{
    tdm_err err = {0};
    tdm_rng g;
    tdm_rng_seed(&g, seed);
    memset(x, 0, sizeof *x);
    snprintf(x->path, sizeof x->path, "%s/%s.idx", tdm_test_tmpdir(tag), tag);
    x->ndocs = ndocs;
    x->nlists = nlists;
    tdm_iwriter *w = NULL;
    tdm_iwriter_options o = {.codec = codecs[0]};
    int rc = tdm_iwriter_open(x->path, &o, &w, &err);
    for (uint32_t d = 0; rc == TDM_OK && d < ndocs; d++)
        rc = tdm_iwriter_add_doc(w, tdm_rng_range(&g, 1, 300), NULL, &err);
    uint32_t *d = malloc(ndocs * 4), *f = malloc(ndocs * 4);
    for (uint64_t i = 0; rc == TDM_OK && i < nlists; i++) {
        const tdm_codec_ops *ops = tdm_codec_by_name(codecs[i % ncodecs]);
        uint32_t n = residx_len(&g, i / ncodecs, ops->block_size, ndocs);
        residx_docids(&g, d, n, ndocs);
        for (uint32_t k = 0; k < n; k++)
            f[k] = tdm_rng_range(&g, 0, 9) ? tdm_rng_range(&g, 1, 4) : tdm_rng_range(&g, 1, 3000);
        char term[32];
        snprintf(term, sizeof term, "t%06llu", (unsigned long long)i);
        rc = tdm_iwriter_set_codec(w, ops->name, &err);
        if (rc == TDM_OK)
            rc = tdm_iwriter_add_list(w, term, strlen(term), d, f, n, &err);
    }
    free(d);
    free(f);
    if (rc == TDM_OK)
        rc = tdm_iwriter_finish(w, &err);
    tdm_iwriter_free(w);
    if (rc == TDM_OK)
        rc = tdm_ireader_open(x->path, &x->r, &err);
    if (rc != TDM_OK)
        fail_msg("index %s: %s", x->path, tdm_err_msg(&err));
    x->docs = calloc(nlists, sizeof *x->docs);
    x->freqs = calloc(nlists, sizeof *x->freqs);
    for (uint64_t i = 0; i < nlists; i++) {
        uint32_t df;
        uint64_t cf;
        size_t len;
        tdm_ireader_term(x->r, i, &len, &df, &cf);
        x->docs[i] = malloc(df * 4);
        x->freqs[i] = malloc(df * 4);
        if (tdm_ireader_decode(x->r, i, x->docs[i], x->freqs[i], &err) != TDM_OK)
            fail_msg("reference of list %llu: %s", (unsigned long long)i, tdm_err_msg(&err));
    }
}

static void residx_free(residx *x)
{
    for (uint64_t i = 0; x->docs && i < x->nlists; i++) {
        free(x->docs[i]);
        free(x->freqs[i]);
    }
    free(x->docs);
    free(x->freqs);
    tdm_ireader_close(x->r);
    memset(x, 0, sizeof *x);
}

/* df and codec of list i. */
static inline uint32_t residx_df(const residx *x, uint64_t i)
{
    uint32_t df = 0;
    uint64_t cf;
    size_t len;
    tdm_ireader_term(x->r, i, &len, &df, &cf);
    return df;
}

static inline const tdm_codec_ops *residx_codec(const residx *x, uint64_t i)
{
    uint64_t sz;
    const uint8_t *c = tdm_ireader_section(x->r, TDM_SEC_CODECS, &sz);
    return tdm_codec_by_id(c[i]);
}

/* A copy of the index file with the u32 at index `at` of section `sec`
 * replaced and its checksums forged (forge.h), opened from memory: the
 * damaged-index cases, which the kernels must refuse on their own. */
static inline tdm_ireader *residx_patched(const residx *x, unsigned sec, uint64_t at,
                                          uint32_t value)
{
    FILE *f = fopen(x->path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)size);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    uint64_t off;
    memcpy(&off, buf + sizeof(tdm_idx_header) + 32 * sec + 8, 8);
    memcpy(buf + off + 4 * at, &value, 4);
    forge_sums(buf, (size_t)size);
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    if (tdm_ireader_open_mem(buf, (size_t)size, "patched", &r, &err) != TDM_OK)
        fail_msg("patched index: %s", tdm_err_msg(&err));
    free(buf);
    return r;
}

#endif
