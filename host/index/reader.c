/* The index reader: maps the file and validates everything it will later
 * trust, so that no accessor can read outside the mapping (FORMAT.md). */
#include "reader.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/mapfile.h"
#include "format.h"
#include "reader_priv.h"
#include "tandem.h"

static const char *const section_names[TDM_SEC_SHARD_COUNT] = {
    "arena",     "lists",     "codecs",    "block_last", "block_docs",
    "block_freqs", "block_max", "doclens", "term_offs",  "term_cf",
    "terms",     "docname_offs", "docnames", "stopwords", "shard", "term_gdf"};

const char *tdm_ireader_section_name(unsigned id)
{
    return id < TDM_SEC_SHARD_COUNT ? section_names[id] : NULL;
}

static int host_is_le(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Where the section table ends: after the header (r->hsize) a plain file has
 * TDM_SEC_COUNT entries, a shard TDM_SEC_SHARD_COUNT (r->nsec; both set by
 * check_version). */
static size_t table_end(const tdm_ireader *r)
{
    return r->hsize + r->nsec * sizeof(tdm_idx_section_entry);
}

/* A NUL-padded name: terminated, and zero after its terminator. */
static int padded_name(const char *s, size_t n)
{
    const char *nul = memchr(s, 0, n);
    for (const char *p = nul; p && p < s + n; p++)
        if (*p)
            return 0;
    return nul != NULL;
}

/* The version and the sizes it implies; reads only the first 24 bytes,
 * which every version lays out alike. */
static int check_version(tdm_ireader *r, const tdm_idx_header *h, tdm_err *err)
{
    const char *p = r->path;
    if (h->version == 1)
        return tdm_err_set(err, TDM_ERR_VERSION, "%s: offset 8: index format version 1, which "
                           "this tandem no longer reads (it reads versions %u to %u): rebuild "
                           "the index from its collection (tandem build), or export it to CIFF "
                           "with the tandem that wrote it and import that (tandem import)",
                           p, TDM_IDX_VERSION_OLDEST, TDM_IDX_VERSION);
    if (h->version > TDM_IDX_VERSION)
        return tdm_err_set(err, TDM_ERR_VERSION, "%s: offset 8: format version %u is newer "
                           "than this library reads (%u)", p, h->version, TDM_IDX_VERSION);
    uint32_t want = h->version == 2 ? TDM_IDX_HEADER_V2 : (uint32_t)sizeof *h;
    if (h->version < TDM_IDX_VERSION_OLDEST || h->header_size != want ||
        (h->nsections != TDM_SEC_COUNT && h->nsections != TDM_SEC_SHARD_COUNT))
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset 8: bad version %u, header size "
                           "%u or section count %u", p, h->version, h->header_size,
                           h->nsections);
    r->hsize = want;
    r->nsec = h->nsections; /* a shard has two more (format.h) */
    return TDM_OK;
}

/* A version 2 impact index kept its rule's scale and largest weight in k1
 * and b: moved to their own fields, so that everything past the header's
 * check reads one layout (FORMAT.md, "Compatibility"). */
static void upgrade_header(tdm_idx_header *h)
{
    if (h->version != 2 || !(h->flags & TDM_IDX_FLAG_IMPACT))
        return;
    h->quant_scale = h->k1;
    h->quant_max = h->b;
    h->k1 = h->b = 0;
}

/* The fields only version 3 has: zero where they do not apply. */
static int check_v3_fields(const tdm_idx_header *h, const char *p, tdm_err *err)
{
    if (h->version < 3)
        return TDM_OK;
    for (unsigned k = 0; k < sizeof h->reserved / sizeof *h->reserved; k++)
        if (h->reserved[k])
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: reserved header words "
                               "not zero", p, offsetof(tdm_idx_header, reserved));
    if ((h->flags & TDM_IDX_FLAG_IMPACT) && (h->k1 != 0 || h->b != 0))
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: BM25 parameters (k1 %g, "
                           "b %g) in an impact index (0 there)", p,
                           offsetof(tdm_idx_header, k1), h->k1, h->b);
    if (!(h->flags & TDM_IDX_FLAG_IMPACT) && (h->quant_scale != 0 || h->quant_max != 0))
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: quantization scale %g and "
                           "largest weight %g in an index that is not an impact index (0 "
                           "there)", p, offsetof(tdm_idx_header, quant_scale),
                           h->quant_scale, h->quant_max);
    return TDM_OK;
}

/* An impact index's quantization rule (FORMAT.md, "Impact indexes"): a
 * known kind, its bits and scale in range; any other index has none. On the
 * upgraded header (upgrade_header). */
static int check_quant(const tdm_idx_header *h, const char *p, tdm_err *err)
{
    size_t at = offsetof(tdm_idx_header, quant);
    if (!(h->flags & TDM_IDX_FLAG_IMPACT)) {
        if (h->quant)
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: quantization rule 0x%x "
                               "in an index that is not an impact index (reserved fields "
                               "not zero)", p, at, h->quant);
        return TDM_OK;
    }
    unsigned kind = h->quant & 0xffu, bits = h->quant >> 8 & 0xffu;
    double scale = h->quant_scale, max = h->quant_max;
    int ok = h->quant >> 16 == 0 && isfinite(scale) && scale > 0 && isfinite(max) && max >= 0;
    if (kind == TDM_QUANT_INTEGER)
        ok = ok && bits == 0 && scale == 1 && max == 0;
    else if (kind == TDM_QUANT_SCALE)
        ok = ok && bits == 0 && max == 0;
    else if (kind == TDM_QUANT_LINEAR)
        ok = ok && bits >= TDM_QUANT_BITS_MIN && bits <= TDM_QUANT_BITS_MAX && max > 0;
    else
        ok = 0;
    if (!ok)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: impact index with a bad "
                           "quantization rule (kind %u, %u bits, scale %g, largest weight %g)",
                           p, at, kind, bits, scale, max);
    return TDM_OK;
}

static int check_header(tdm_ireader *r, tdm_err *err)
{
    const char *p = r->path;
    if (r->size < TDM_IDX_HEADER_V2)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: truncated: %zu bytes, the "
                           "header alone needs %u", p, r->size, r->size, TDM_IDX_HEADER_V2);
    const tdm_idx_header *h = (const void *)r->base; /* its first 160 bytes only */
    if (memcmp(h->magic, TDM_IDX_MAGIC, 8) != 0)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset 0: wrong magic (not a tandem "
                           "index)", p);
    int rc = check_version(r, h, err);
    if (rc)
        return rc;
    if (h->file_size != r->size || r->size < table_end(r))
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: truncated or extended: the "
                           "header says %llu bytes, the file has %zu", p, r->size,
                           OFF(h->file_size), r->size);
    /* the file's header in version 3's layout, its missing fields 0 */
    memset(&r->hdr, 0, sizeof r->hdr);
    memcpy(&r->hdr, r->base, r->hsize);
    tdm_idx_header copy = r->hdr;
    copy.checksum = 0;
    XXH64_state_t *st = XXH64_createState();
    if (!st)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    XXH64_reset(st, 0);
    XXH64_update(st, &copy, r->hsize);
    XXH64_update(st, r->base + r->hsize, table_end(r) - r->hsize);
    uint64_t sum = XXH64_digest(st);
    XXH64_freeState(st);
    h = &r->hdr;
    if (sum != h->checksum)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: offset %zu: header checksum mismatch",
                           p, offsetof(tdm_idx_header, checksum));
    if (!padded_name(h->codec, sizeof h->codec) || !padded_name(h->stemmer, sizeof h->stemmer))
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: codec or stemmer name "
                           "unterminated or not zero-padded", p, offsetof(tdm_idx_header, codec));
    if (h->flags & ~TDM_IDX_FLAGS_KNOWN)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: unknown header flags 0x%x "
                           "(reserved bits not zero)", p, offsetof(tdm_idx_header, flags),
                           h->flags & ~TDM_IDX_FLAGS_KNOWN);
    rc = check_v3_fields(h, p, err);
    if (rc)
        return rc;
    upgrade_header(&r->hdr);
    return check_quant(h, p, err);
}

/* Padding before section i (from `from`) must be zero. */
static int check_padding(const tdm_ireader *r, uint64_t from, uint64_t to, tdm_err *err)
{
    for (uint64_t at = from; at < to; at++)
        if (r->base[at])
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: padding byte 0x%02x is "
                               "not zero", r->path, OFF(at), r->base[at]);
    return TDM_OK;
}

/* The arena grows with the postings: its checksum is checked before its
 * first use (tdm_ireader_check_list), not at open. The block table is a
 * few percent of the file (one entry per block of a long list), cheap
 * enough to hash here, so no list's metadata is ever read unchecked. */
static int lazy_section(unsigned id)
{
    return id == TDM_SEC_ARENA;
}

/* Sections in id order, each at the first aligned offset after the last,
 * the last ending the file: the layout is canonical. */
static int check_sections(tdm_ireader *r, tdm_err *err)
{
    r->sec = (const void *)(r->base + r->hsize);
    uint64_t end = table_end(r);
    for (uint32_t i = 0; i < r->nsec; i++) {
        const tdm_idx_section_entry *s = &r->sec[i];
        size_t at = r->hsize + i * sizeof *s;
        uint64_t want = (end + TDM_IDX_ALIGN - 1) / TDM_IDX_ALIGN * TDM_IDX_ALIGN;
        if (s->id != i || s->reserved || s->offset != want || s->offset > r->size ||
            s->size > r->size - s->offset)
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: section %s (id %u) at "
                               "%llu, %llu bytes: not where it belongs (%llu) or outside the "
                               "file (%zu bytes)", r->path, at, section_names[i], s->id,
                               OFF(s->offset), OFF(s->size), OFF(want), r->size);
        int rc = check_padding(r, end, s->offset, err);
        if (rc)
            return rc;
        if (!lazy_section(i) && XXH64(r->base + s->offset, s->size, 0) != s->checksum)
            return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: offset %llu: checksum mismatch in "
                               "section %s", r->path, OFF(s->offset), section_names[i]);
        if (i < TDM_SEC_COUNT)
            r->info.section_size[i] = s->size;
        end = s->offset + s->size;
    }
    if (end != r->size)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: %llu bytes after the last "
                           "section", r->path, OFF(end), OFF(r->size - end));
    return TDM_OK;
}

static int size_fail(const tdm_ireader *r, unsigned id, uint64_t count, const char *what,
                     tdm_err *err)
{
    return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: %llu %s do not fit section %s "
                       "of %llu bytes", r->path, OFF(r->sec[id].offset), OFF(count), what,
                       section_names[id], OFF(r->sec[id].size));
}

/* Section sizes must match the counts in the header; this also bounds the
 * counts by the file size, so no count can be absurd past this point. */
static int check_counts(tdm_ireader *r, tdm_err *err)
{
    const tdm_idx_header *h = &r->hdr;
    const tdm_idx_section_entry *s = r->sec;
    struct { unsigned sec; uint64_t count, unit; const char *what; } want[] = {
        {TDM_SEC_LISTS, h->nterms, sizeof(tdm_idx_list), "terms"},
        {TDM_SEC_CODECS, h->nterms, 1, "terms"},
        {TDM_SEC_TERM_OFFS, h->nterms + 1, 4, "terms (+1)"},
        {TDM_SEC_TERM_CF, h->nterms, 4, "terms"},
        {TDM_SEC_DOCLENS, h->ndocs, 4, "documents"},
        {TDM_SEC_DOCNAME_OFFS, h->ndocs + 1, 8, "documents (+1)"},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (want[i].count > r->size / want[i].unit ||
            s[want[i].sec].size != want[i].count * want[i].unit)
            return size_fail(r, want[i].sec, want[i].count, want[i].what, err);
    if (h->ndocs > UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT, "%s: offset 32: %llu documents exceed 2^32-1",
                           r->path, OFF(h->ndocs));
    uint64_t words = s[TDM_SEC_ARENA].size / 4, nent = s[TDM_SEC_BLOCK_LAST].size / 4;
    if (s[TDM_SEC_ARENA].size % 4 || words > UINT32_MAX)
        return size_fail(r, TDM_SEC_ARENA, words, "words", err);
    if (s[TDM_SEC_BLOCK_LAST].size % 4 || nent > UINT32_MAX)
        return size_fail(r, TDM_SEC_BLOCK_LAST, nent, "block entries", err);
    for (unsigned id = TDM_SEC_BLOCK_DOCS; id <= TDM_SEC_BLOCK_MAX; id++)
        if (s[id].size != nent * (id == TDM_SEC_BLOCK_MAX ? 1 : 4))
            return size_fail(r, id, nent, "block entries", err);
    r->info.arena_words = words;
    r->info.block_entries = nent;
    return TDM_OK;
}

static void set_pointers(tdm_ireader *r)
{
#define SEC(id) (r->base + r->sec[id].offset)
    r->arena = (const uint32_t *)SEC(TDM_SEC_ARENA);
    r->lists = (const tdm_idx_list *)SEC(TDM_SEC_LISTS);
    r->codecs = SEC(TDM_SEC_CODECS);
    r->blk_last = (const uint32_t *)SEC(TDM_SEC_BLOCK_LAST);
    r->blk_docs = (const uint32_t *)SEC(TDM_SEC_BLOCK_DOCS);
    r->blk_freqs = (const uint32_t *)SEC(TDM_SEC_BLOCK_FREQS);
    r->blk_max = SEC(TDM_SEC_BLOCK_MAX);
    r->doclens = (const uint32_t *)SEC(TDM_SEC_DOCLENS);
    r->termoffs = (const uint32_t *)SEC(TDM_SEC_TERM_OFFS);
    r->cfs = (const uint32_t *)SEC(TDM_SEC_TERM_CF);
    r->terms = (const char *)SEC(TDM_SEC_TERMS);
    r->nameoffs = (const uint64_t *)SEC(TDM_SEC_DOCNAME_OFFS);
    r->names = (const char *)SEC(TDM_SEC_DOCNAMES);
#undef SEC
}

static int check_docs(tdm_ireader *r, tdm_err *err)
{
    const tdm_idx_header *h = &r->hdr;
    uint64_t total = 0, nsize = r->sec[TDM_SEC_DOCNAMES].size;
    for (uint64_t d = 0; d < h->ndocs; d++)
        total += r->doclens[d];
    if (total != h->total_doclen)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: offset 56: total document length %llu "
                           "but the lengths sum to %llu", r->path, OFF(h->total_doclen),
                           OFF(total));
    if (r->nameoffs[0] != 0 || r->nameoffs[h->ndocs] != nsize)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: document name offsets do "
                           "not span the names section", r->path,
                           tdm_ir_at(r, TDM_SEC_DOCNAME_OFFS, 0));
    for (uint64_t d = 0; d < h->ndocs; d++)
        if (r->nameoffs[d + 1] <= r->nameoffs[d] || r->nameoffs[d + 1] > nsize ||
            r->names[r->nameoffs[d + 1] - 1] != '\0')
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: bad name entry of "
                               "document %llu", r->path,
                               tdm_ir_at(r, TDM_SEC_DOCNAME_OFFS, 8 * (d + 1)), OFF(d));
    return TDM_OK;
}

static int check_stopwords(tdm_ireader *r, tdm_err *err)
{
    const tdm_idx_header *h = &r->hdr;
    const tdm_idx_section_entry *s = &r->sec[TDM_SEC_STOPWORDS];
    const char *p = (const char *)(r->base + s->offset), *end = p + s->size;
    if (h->nstopwords > s->size || (s->size && end[-1] != '\0'))
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: malformed stopword section",
                           r->path, OFF(s->offset));
    r->stopwords = calloc(h->nstopwords ? h->nstopwords : 1, sizeof *r->stopwords);
    if (!r->stopwords)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    uint32_t n = 0;
    for (; p < end && n < h->nstopwords; p += strlen(p) + 1)
        r->stopwords[n++] = p;
    if (n != h->nstopwords || p != end)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: %u stopwords expected",
                           r->path, OFF(s->offset), h->nstopwords);
    return TDM_OK;
}

static void fill_info(tdm_ireader *r)
{
    const tdm_idx_header *h = &r->hdr;
    tdm_ireader_info *i = &r->info;
    i->version = h->version;
    i->ndocs = h->ndocs;
    i->nterms = h->nterms;
    i->npostings = h->npostings;
    i->total_doclen = h->total_doclen;
    i->avg_doclen = h->ndocs ? (double)h->total_doclen / h->ndocs : 0;
    i->impact = (h->flags & TDM_IDX_FLAG_IMPACT) != 0;
    /* the upgraded header: an impact index's k1 and b are 0, its rule in quant_* */
    i->k1 = h->k1;
    i->b = h->b;
    i->quant = i->impact ? (int)(h->quant & 0xffu) : 0;
    i->quant_bits = h->quant >> 8 & 0xffu;
    i->quant_scale = h->quant_scale;
    i->quant_max = h->quant_max;
    memcpy(i->codec, h->codec, sizeof i->codec);
    memcpy(i->stemmer, h->stemmer, sizeof i->stemmer);
    i->nstopwords = h->nstopwords;
    i->file_size = h->file_size;
}

static int validate(tdm_ireader *r, tdm_err *err)
{
    if (!host_is_le())
        return tdm_err_set(err, TDM_ERR_UNSUPPORTED, "%s: index files are little-endian; "
                           "this host is not", r->path);
    int rc = check_header(r, err);
    if (!rc)
        rc = check_sections(r, err);
    if (!rc)
        rc = check_counts(r, err);
    if (!rc) {
        set_pointers(r);
        fill_info(r);
        rc = check_docs(r, err);
    }
    if (!rc)
        rc = check_stopwords(r, err);
    if (!rc)
        rc = tdm_ir_check_lexicon(r, err);
    if (!rc)
        rc = tdm_ir_check_shard(r, err);
    return rc;
}

static tdm_ireader *new_reader(const char *path, tdm_err *err)
{
    tdm_ireader *r = calloc(1, sizeof *r);
    if (r)
        r->refs = 1;
    if (r && (!(r->path = strdup(path)) || !tdm_ir_lexhash_new(r))) {
        free(r->path);
        free(r);
        r = NULL;
    }
    if (!r)
        tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    return r;
}

int tdm_ireader_open(const char *path, tdm_ireader **out, tdm_err *err)
{
    *out = NULL;
    void *map;
    size_t size;
    int rc = tdm_map_file(path, &map, &size, err);
    if (rc != TDM_OK)
        return rc;
    tdm_ireader *r = new_reader(path, err);
    if (!r) {
        tdm_unmap_file(map, size);
        return TDM_ERR_NOMEM;
    }
    r->size = size;
    r->base = map;
    r->mapped = map != NULL;
    rc = validate(r, err);
    if (rc) {
        tdm_ireader_close(r);
        return rc;
    }
    *out = r;
    return TDM_OK;
}

int tdm_ireader_open_mem(const void *data, size_t size, const char *name, tdm_ireader **out,
                         tdm_err *err)
{
    *out = NULL;
    tdm_ireader *r = new_reader(name ? name : "<memory>", err);
    if (!r)
        return TDM_ERR_NOMEM;
    /* A heap copy is 16-byte aligned, enough for every array the reader reads. */
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy) {
        tdm_ireader_close(r);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    if (size)
        memcpy(copy, data, size);
    r->base = copy;
    r->owned = 1;
    r->size = size;
    int rc = validate(r, err);
    if (rc) {
        tdm_ireader_close(r);
        return rc;
    }
    *out = r;
    return TDM_OK;
}

int tdm_ireader_open_take(void *data, size_t size, const char *name, tdm_ireader **out,
                          tdm_err *err)
{
    *out = NULL;
    tdm_ireader *r = new_reader(name ? name : "<memory>", err);
    if (!r) {
        free(data);
        return TDM_ERR_NOMEM;
    }
    r->base = data; /* malloc's alignment, as open_mem's copy */
    r->owned = 1;
    r->size = size;
    int rc = validate(r, err);
    if (rc) {
        tdm_ireader_close(r);
        return rc;
    }
    *out = r;
    return TDM_OK;
}

tdm_ireader *tdm_ireader_ref(const tdm_ireader *r)
{
    tdm_ireader *w = (tdm_ireader *)r; /* the count is not the file: a reader stays immutable */
    __atomic_add_fetch(&w->refs, 1, __ATOMIC_RELAXED);
    return w;
}

void tdm_ireader_close(tdm_ireader *r)
{
    if (!r || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    if (r->mapped)
        tdm_unmap_file((void *)r->base, r->size);
    else if (r->owned)
        free((void *)r->base);
    free(r->stopwords);
    free(r->list_ok);
    tdm_ir_lexhash_free(r);
    free(r->path);
    free(r);
}

const tdm_ireader_info *tdm_ireader_info_get(const tdm_ireader *r) { return &r->info; }
const char *tdm_ireader_path(const tdm_ireader *r) { return r->path; }
const uint32_t *tdm_ireader_doclens(const tdm_ireader *r) { return r->doclens; }

const void *tdm_ireader_section(const tdm_ireader *r, unsigned id, uint64_t *size)
{
    if (id >= r->nsec)
        return NULL;
    if (size)
        *size = r->sec[id].size;
    return r->base + r->sec[id].offset;
}

const char *tdm_ireader_docname(const tdm_ireader *r, uint64_t d)
{
    return d < r->info.ndocs ? r->names + r->nameoffs[d] : NULL;
}

const char *tdm_ireader_stopword(const tdm_ireader *r, uint32_t i)
{
    return i < r->info.nstopwords ? r->stopwords[i] : NULL;
}
