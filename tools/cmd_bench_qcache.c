/* `tandem bench queries --oracle-cache FILE`: the oracle's answers kept in a
 * file between runs (cmd_bench_queries.h says what it is for and how it is
 * keyed).
 *
 * Layout, little-endian, every field naturally aligned:
 *   header (64 bytes): magic "TDMORCL1", u32 version (1), u32 0x01020304
 *     (byte order), u64 index identity, u32 k, u32 scoring kind, f64 k1,
 *     f64 b, u64 entries, 8 bytes zero;
 *   entries: u32 match (0 OR, 1 AND), u32 query position, u64 query hash,
 *     u32 n (<= k), u32 0, u64 documents matched, f64 microseconds the call
 *     took, u32 docid[n], f32 score[n];
 *   trailer: u64 XXH64 (seed 0) of everything before it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cli.h"
#include "cmd_bench_queries.h"
#include "common/fsutil.h"
#include "index/format.h"
#include "harness/oracle.h"
#include "tandem.h"

static const char C[] = "bench queries";
static const char MAGIC[8] = {'T', 'D', 'M', 'O', 'R', 'C', 'L', '1'};
#define VERSION 1u
#define BOM 0x01020304u
#define HDR 64u
#define ENT 40u  /* an entry's fixed part */

typedef struct entry {
    uint32_t match, pos;
    uint64_t qhash;
    uint32_t n;
    uint64_t matched;
    double us;
    const unsigned char *payload; /* n docids then n scores, in the file's bytes */
} entry;

struct tdm_bq_cache {
    char *path;
    uint64_t index_id;
    uint32_t k;
    tdm_score_params sp;
    unsigned char *data;  /* the file as read, NULL when there was none */
    entry *e;             /* its entries */
    size_t ne;
};

uint64_t tdm_bq_query_hash(const tdm_query *q)
{
    XXH64_state_t *st = XXH64_createState();
    if (!st)
        return 0;
    XXH64_reset(st, 0);
    for (size_t t = 0; t < q->nterms; t++) {
        uint64_t id = q->terms[t].id;
        double w = q->terms[t].weight;
        XXH64_update(st, &id, sizeof id);
        XXH64_update(st, &w, sizeof w);
    }
    uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return h;
}

/* XXH64 of the index file's header and section table: they hold every
 * section's checksum, so two files with the same identity hold the same
 * bytes (the index was opened, so both are there and valid). */
static int index_identity(const char *path, uint64_t *id)
{
    FILE *f = fopen(path, "rb");
    tdm_idx_header h;
    unsigned char buf[sizeof h + 64 * sizeof(tdm_idx_section_entry)];
    size_t got = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    if (got < sizeof h)
        return tdm_cli_fail(C, "%s: cannot read the index's header for --oracle-cache", path);
    memcpy(&h, buf, sizeof h);
    /* the file's own header size: version 2's is shorter */
    size_t n = (h.header_size < sizeof h ? h.header_size : sizeof h) +
               (size_t)(h.nsections > 64 ? 64 : h.nsections) * sizeof(tdm_idx_section_entry);
    *id = XXH64(buf, n < got ? n : got, 0);
    return 0;
}

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static size_t entry_size(uint32_t n)
{
    return ENT + (size_t)n * 8;
}

static int corrupt(const tdm_bq_cache *c, size_t off, const char *why)
{
    return tdm_cli_fail(C, "--oracle-cache %s: offset %zu: %s: not an oracle cache or damaged "
                           "(remove it or name another file)", c->path, off, why);
}

/* Checks the header against the run's key and indexes the entries. */
static int parse(tdm_bq_cache *c, size_t size)
{
    const unsigned char *d = c->data;
    if (size < HDR + 8 || memcmp(d, MAGIC, 8))
        return corrupt(c, 0, "no oracle-cache header");
    if (rd32(d + 8) != VERSION || rd32(d + 12) != BOM)
        return corrupt(c, 8, "another version or byte order");
    if (XXH64(d, size - 8, 0) != rd64(d + size - 8))
        return corrupt(c, size - 8, "checksum mismatch");
    double k1, b;
    memcpy(&k1, d + 32, 8);
    memcpy(&b, d + 40, 8);
    uint32_t kind = rd32(d + 28);
    if (rd64(d + 16) != c->index_id)
        return tdm_cli_fail(C, "--oracle-cache %s: answers for another index (identity "
                               "%016llx; this index's is %016llx): remove it or name another "
                               "file", c->path, (unsigned long long)rd64(d + 16),
                            (unsigned long long)c->index_id);
    if (rd32(d + 24) != c->k)
        return tdm_cli_fail(C, "--oracle-cache %s: answers at k = %u; this run's largest k is "
                               "%u: remove it or name another file", c->path, rd32(d + 24), c->k);
    if ((int)kind != c->sp.kind || k1 != c->sp.k1 || b != c->sp.b)
        return tdm_cli_fail(C, "--oracle-cache %s: answers for scoring %u (k1 %g, b %g); this "
                               "run's is %d (k1 %g, b %g): remove it or name another file",
                            c->path, kind, k1, b, c->sp.kind, c->sp.k1, c->sp.b);
    uint64_t ne = rd64(d + 48);
    if (ne > (size - HDR - 8) / ENT)
        return corrupt(c, 48, "more entries than the file holds");
    c->e = calloc(ne ? ne : 1, sizeof *c->e);
    if (!c->e)
        return tdm_cli_fail(C, "out of memory");
    size_t off = HDR;
    for (size_t i = 0; i < ne; i++) {
        if (size - 8 - off < ENT)
            return corrupt(c, off, "truncated entry");
        entry *e = &c->e[i];
        const unsigned char *p = d + off;
        *e = (entry){rd32(p), rd32(p + 4), rd64(p + 8), rd32(p + 16), rd64(p + 24), 0, p + ENT};
        memcpy(&e->us, p + 32, 8);
        if (e->match > 1 || e->n > c->k || (uint64_t)e->n > e->matched)
            return corrupt(c, off, "bad entry");
        if (size - 8 - off < entry_size(e->n))
            return corrupt(c, off, "truncated entry");
        off += entry_size(e->n);
    }
    if (off != size - 8)
        return corrupt(c, off, "bytes after the last entry");
    c->ne = ne;
    return 0;
}

int tdm_bq_cache_open(const char *path, const char *index_path, uint32_t k,
                      const tdm_score_params *sp, tdm_bq_cache **out)
{
    *out = NULL;
    tdm_bq_cache *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(path))) {
        free(c);
        return tdm_cli_fail(C, "out of memory");
    }
    c->k = k;
    c->sp = *sp;
    int rc = index_identity(index_path, &c->index_id);
    size_t size = 0;
    if (rc == 0) {
        errno = 0;
        c->data = tdm_read_file(path, &size);
        if (!c->data && errno != ENOENT)
            rc = tdm_cli_fail(C, "--oracle-cache %s: %s", path, strerror(errno));
    }
    if (rc == 0 && c->data)
        rc = parse(c, size);
    if (rc) {
        tdm_bq_cache_free(c);
        return -1;
    }
    if (c->data)
        fprintf(stderr, "oracle cache %s: %zu answers\n", path, c->ne);
    *out = c;
    return 0;
}

void tdm_bq_cache_free(tdm_bq_cache *c)
{
    if (!c)
        return;
    free(c->path);
    free(c->data);
    free(c->e);
    free(c);
}

/* The entry of (match, pos), or NULL. Entries are written in (match, pos)
 * order, so entry i of a mode is usually at its first entry + pos. */
static const entry *find(const tdm_bq_cache *c, uint32_t match, size_t pos)
{
    for (size_t i = 0; i < c->ne; i++)
        if (c->e[i].match == match && c->e[i].pos == pos)
            return &c->e[i];
    return NULL;
}

static size_t first_of(const tdm_bq_cache *c, uint32_t match)
{
    size_t i = 0;
    while (i < c->ne && c->e[i].match != match)
        i++;
    return i;
}

static const entry *lookup(const tdm_bq_cache *c, uint32_t match, size_t pos)
{
    size_t i = first_of(c, match) + pos;
    if (i < c->ne && c->e[i].match == match && c->e[i].pos == pos)
        return &c->e[i];
    return find(c, match, pos);
}

long tdm_bq_cache_get(tdm_bq_cache *c, int match, const uint64_t *qhash, size_t nq,
                      tdm_bq_answers *ans, double *us)
{
    size_t q = 0;
    for (; q < nq; q++) {
        const entry *e = lookup(c, (uint32_t)match, q);
        if (!e)
            break;
        if (e->qhash != qhash[q]) {
            tdm_cli_fail(C, "--oracle-cache %s: its query %zu is not this run's (another query "
                            "log, or another tokenizer): remove it or name another file",
                         c->path, q + 1);
            return -1;
        }
        ans->n[q] = e->n;
        ans->matched[q] = e->matched;
        memcpy(&ans->doc[q * ans->k], e->payload, (size_t)e->n * 4);
        memcpy(&ans->score[q * ans->k], e->payload + (size_t)e->n * 4, (size_t)e->n * 4);
        us[q] = e->us;
    }
    return (long)q;
}

/* Appends one entry to the stream; 0 or -1. */
static int put(FILE *f, XXH64_state_t *st, uint32_t match, uint32_t pos, uint64_t qhash,
               uint32_t n, uint64_t matched, double us, const void *docs, const void *scores)
{
    unsigned char h[ENT] = {0};
    memcpy(h, &match, 4);
    memcpy(h + 4, &pos, 4);
    memcpy(h + 8, &qhash, 8);
    memcpy(h + 16, &n, 4);
    memcpy(h + 24, &matched, 8);
    memcpy(h + 32, &us, 8);
    XXH64_update(st, h, ENT);
    XXH64_update(st, docs, (size_t)n * 4);
    XXH64_update(st, scores, (size_t)n * 4);
    return fwrite(h, 1, ENT, f) == ENT && fwrite(docs, 4, n, f) == n &&
                   fwrite(scores, 4, n, f) == n ? 0 : -1;
}

/* The entries of one mode: the run's queries from `a`, beyond them (or all,
 * when the run has none of this mode) the file's. Counts into *ne. */
static int put_mode(const tdm_bq_cache *c, FILE *f, XXH64_state_t *st, uint32_t match,
                    const uint64_t *qhash, size_t nq, const tdm_bq_answers *a, const double *us,
                    uint64_t *ne)
{
    size_t have = a && a->n ? nq : 0;
    for (size_t q = 0; q < have; q++, (*ne)++)
        if (put(f, st, match, (uint32_t)q, qhash[q], a->n[q], a->matched[q], us[q],
                &a->doc[q * a->k], &a->score[q * a->k]))
            return -1;
    for (size_t i = 0; i < c->ne; i++) {
        const entry *e = &c->e[i];
        if (e->match != match || e->pos < have)
            continue;
        if (put(f, st, match, e->pos, e->qhash, e->n, e->matched, e->us, e->payload,
                e->payload + (size_t)e->n * 4))
            return -1;
        (*ne)++;
    }
    return 0;
}

int tdm_bq_cache_write(tdm_bq_cache *c, const uint64_t *qhash, size_t nq,
                       const tdm_bq_answers *ans_or, const double *us_or,
                       const tdm_bq_answers *ans_and, const double *us_and)
{
    unsigned char h[HDR] = {0};
    uint32_t v = VERSION, bom = BOM, kind = (uint32_t)c->sp.kind;
    memcpy(h, MAGIC, 8);
    memcpy(h + 8, &v, 4);
    memcpy(h + 12, &bom, 4);
    memcpy(h + 16, &c->index_id, 8);
    memcpy(h + 24, &c->k, 4);
    memcpy(h + 28, &kind, 4);
    memcpy(h + 32, &c->sp.k1, 8);
    memcpy(h + 40, &c->sp.b, 8);
    /* the entry count is in the header: counted ahead of writing */
    uint64_t ne = 0;
    for (int m = 0; m < 2; m++) {
        const tdm_bq_answers *a = m ? ans_and : ans_or;
        size_t have = a && a->n ? nq : 0;
        ne += have;
        for (size_t i = 0; i < c->ne; i++)
            ne += c->e[i].match == (uint32_t)m && c->e[i].pos >= have;
    }
    memcpy(h + 48, &ne, 8);
    tdm_err err = {0};
    tdm_outfile out;
    XXH64_state_t *st = XXH64_createState();
    if (!st || tdm_outfile_open(&out, c->path, &err) != TDM_OK) {
        XXH64_freeState(st);
        tdm_cli_fail(C, "--oracle-cache: %s", st ? tdm_err_msg(&err) : "out of memory");
        tdm_err_clear(&err);
        return -1;
    }
    XXH64_reset(st, 0);
    XXH64_update(st, h, HDR);
    uint64_t wrote = 0;
    int rc = fwrite(h, 1, HDR, out.f) == HDR ? 0 : -1;
    if (rc == 0)
        rc = put_mode(c, out.f, st, TDM_MATCH_OR, qhash, nq, ans_or, us_or, &wrote);
    if (rc == 0)
        rc = put_mode(c, out.f, st, TDM_MATCH_AND, qhash, nq, ans_and, us_and, &wrote);
    uint64_t sum = XXH64_digest(st);
    XXH64_freeState(st);
    if (rc == 0 && wrote != ne)
        rc = -1;
    if (rc == 0 && fwrite(&sum, 1, 8, out.f) != 8)
        rc = -1;
    if (rc) {
        tdm_outfile_abort(&out);
        tdm_cli_fail(C, "--oracle-cache %s: write failed", c->path);
        return -1;
    }
    if (tdm_outfile_commit(&out, &err) != TDM_OK) {
        tdm_cli_fail(C, "--oracle-cache: %s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return -1;
    }
    fprintf(stderr, "oracle cache %s: %llu answers written\n", c->path, (unsigned long long)ne);
    return 0;
}
