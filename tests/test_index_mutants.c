/* Issue 27 item 1, tested the way it was found: single-byte mutants of a
 * self-made index (every section, the header and the section table), each
 * searched with every algorithm and variant on every device of the
 * engine, through a resident index and through a list cache, and looked up
 * on the host. A mutant must fail with a clear error naming the file (and,
 * for a section's byte, TDM_ERR_CORRUPT naming the section) before any
 * answer: never a crash, never an answer that differs from the original's.
 * Then the same bytes with every checksum forged (recomputed), which gets
 * a damage past the checksums into the structural checks and the
 * kernels: no crash and no read outside a buffer whatever the bytes say,
 * an error naming the file or an answer (a forged file is another index:
 * its answers have nothing to equal). TANDEM_TEST_SMALL keeps it to a few
 * positions per section. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "common/rng.h"
#include "forge.h"
#include "support/collection_gen.h"
#include "index/format.h"
#include "index/reader.h"
#include "tandem.h"
#include "testutil.h"

#define NQ 5
#define MAXQT 4

typedef struct query {
    tdm_search_term t[MAXQT];
    size_t n;
} query;

static const int algos[] = {TDM_ALGO_OR, TDM_ALGO_AND, TDM_ALGO_AND_OR, TDM_ALGO_WAND,
                            TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
static const int variants[] = {TDM_VARIANT_ITEM, TDM_VARIANT_GROUP, TDM_VARIANT_COMPRESSED};
#define NA (sizeof algos / sizeof *algos)
#define NV (sizeof variants / sizeof *variants)

/* One answer: docids and score bits of the hits. */
typedef struct answer {
    size_t n;
    uint32_t doc[20];
    uint32_t bits[20];
} answer;

static struct {
    char dir[1024], good[1100], bad[1100];
    unsigned char *bytes;
    size_t size;
    query q[NQ];
    int ndev;
    answer want[NQ][NA]; /* every device and variant must give these */
    unsigned caught[3], searched; /* at open, binding, a search; searched through */
    int forged;                   /* the mutants' checksums are recomputed */
    int full;                     /* the engine keeps the whole index resident */
} F;

/* A generated collection (no outside data), built with the defaults:
 * bp128, so lists of one block and of many. */
static void make_index(void)
{
    snprintf(F.dir, sizeof F.dir, "%s", tdm_test_tmpdir("index-mutants"));
    char coll[1100];
    snprintf(coll, sizeof coll, "%s/coll.tsv", F.dir);
    snprintf(F.good, sizeof F.good, "%s/good.idx", F.dir);
    snprintf(F.bad, sizeof F.bad, "%s/bad.idx", F.dir);
    tdm_gen_options g = {.ndocs = 1500, .seed = 27, .mean_len = 40, .threads = 1};
    FILE *f = fopen(coll, "w");
    assert_non_null(f);
    tdm_err err = {0};
    assert_int_equal(tdm_gen_collection(&g, f, coll, &err), TDM_OK);
    assert_int_equal(fclose(f), 0);
    const char *in[] = {coll};
    if (tdm_index_build(in, 1, F.good, NULL) != TDM_OK)
        fail_msg("build: %s", tdm_last_error());
    F.bytes = tdm_read_file(F.good, &F.size);
    assert_non_null(F.bytes);
}

/* Queries of long (many-block) and short (one-block) lists together, so
 * every algorithm walks block tables, bounds and one-block payloads. */
static void pick_queries(void)
{
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_open(F.good, &r, &err), TDM_OK);
    uint64_t nt = tdm_ireader_info_get(r)->nterms, top[3] = {0, 0, 0}, one = 0, mid = 0;
    uint32_t dtop[3] = {0, 0, 0};
    for (uint64_t i = 0; i < nt; i++) {
        uint32_t df;
        tdm_ireader_term(r, i, NULL, &df, NULL);
        for (int k = 0; k < 3; k++)
            if (df > dtop[k]) {
                for (int m = 2; m > k; m--) {
                    dtop[m] = dtop[m - 1];
                    top[m] = top[m - 1];
                }
                dtop[k] = df;
                top[k] = i;
                break;
            }
        if (df >= 3 && df < 100)
            one = i;
        if (df >= 150 && df < 600)
            mid = i;
    }
    assert_true(dtop[2] > 256); /* several blocks of bp128 */
    tdm_ireader_close(r);
    uint64_t qs[NQ][MAXQT + 1] = {{2, top[0], top[1]}, {3, top[0], one, mid},
                                  {1, top[2]}, {2, mid, one}, {4, top[1], top[2], mid, one}};
    for (int q = 0; q < NQ; q++) {
        F.q[q].n = qs[q][0];
        for (size_t t = 0; t < F.q[q].n; t++)
            F.q[q].t[t] = (tdm_search_term){NULL, qs[q][t + 1], 1.0 + 0.5 * (double)t};
    }
}

static int search(tdm_search *s, int q, int algo, int variant, int dev, answer *a)
{
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.algorithm = algo;
    o.variant = variant;
    o.device = dev;
    o.k = 20;
    tdm_search_result *res = NULL;
    int rc = tdm_search_terms(s, F.q[q].t, F.q[q].n, &o, &res);
    if (rc != TDM_OK)
        return rc;
    memset(a, 0, sizeof *a);
    a->n = res->n;
    for (size_t i = 0; i < res->n && i < 20; i++) {
        a->doc[i] = res->hits[i].docid;
        memcpy(&a->bits[i], &res->hits[i].score, 4);
    }
    tdm_search_result_free(res);
    return TDM_OK;
}

static void baseline(tdm_engine *e)
{
    tdm_index *ix = NULL;
    assert_int_equal(tdm_index_open(F.good, &ix), TDM_OK);
    tdm_search *s = NULL;
    if (tdm_search_open(e, ix, &s) != TDM_OK)
        fail_msg("search_open: %s", tdm_last_error());
    for (int q = 0; q < NQ; q++)
        for (size_t a = 0; a < NA; a++) {
            if (search(s, q, algos[a], TDM_VARIANT_ITEM, 0, &F.want[q][a]) != TDM_OK)
                fail_msg("baseline %d/%zu: %s", q, a, tdm_last_error());
            assert_true(a > 0 || F.want[q][a].n > 0); /* AND may match nothing */
        }
    tdm_search_close(s);
    tdm_index_close(ix);
}

/* Where a mutant failed, and whether the message says what it must. */
static void check_error(int rc, const char *stage, const char *sec, size_t at)
{
    const char *m = tdm_last_error();
    int ok = strstr(m, F.bad) != NULL;
    if (F.forged) {
        /* any error that names the file */
    } else if (sec) { /* a section's byte: its checksum, by the section's name */
        char want[96];
        snprintf(want, sizeof want, "section %s", sec);
        ok = ok && rc == TDM_ERR_CORRUPT && strstr(m, want);
    } else { /* the header or the section table: any clear refusal */
        ok = ok && (rc == TDM_ERR_CORRUPT || rc == TDM_ERR_FORMAT || rc == TDM_ERR_VERSION);
    }
    if (!ok)
        fail_msg("byte %zu (%s): %s: %s: %s", at, sec ? sec : "header", stage,
                 tdm_strerror(rc), m);
}

/* Every search of the mutant: an error as check_error wants, or exactly
 * the original answer. 1 when some search failed. */
static int search_all(tdm_search *s, const char *sec, size_t at)
{
    int failed = 0;
    for (int dev = 0; dev < F.ndev; dev++)
        for (int q = 0; q < NQ; q++)
            for (size_t a = 0; a < NA; a++)
                for (size_t v = 0; v < NV; v++) {
                    answer got;
                    int rc = search(s, q, algos[a], variants[v], dev, &got);
                    if (rc != TDM_OK) {
                        check_error(rc, "search", sec, at);
                        failed = 1;
                    } else if (!F.forged && memcmp(&got, &F.want[q][a], sizeof got) != 0) {
                        fail_msg("byte %zu (%s): query %d, %s, variant %d, device %d: a "
                                 "different answer, no error", at, sec ? sec : "header", q,
                                 tdm_algorithm_name(algos[a]), variants[v], dev);
                    }
                }
    return failed;
}

/* The mutant at `at` (xor x) on engine e: refused at open, at binding, at
 * the first search or lookup, never answered differently. */
static void one_mutant(tdm_engine *e, size_t at, unsigned x, const char *sec)
{
    unsigned char *b = malloc(F.size);
    assert_non_null(b);
    memcpy(b, F.bytes, F.size);
    b[at] ^= (unsigned char)x;
    if (F.forged)
        forge_sums(b, F.size);
    const void *parts[] = {b};
    size_t sizes[] = {F.size};
    int wrote = tdm_write_file_atomic(F.bad, parts, sizes, 1);
    free(b);
    assert_int_equal(wrote, 0);
    tdm_index *ix = NULL;
    int rc = tdm_index_open(F.bad, &ix);
    if (rc != TDM_OK) {
        check_error(rc, "open", sec, at);
        F.caught[0]++;
        return;
    }
    /* the host path first: a lookup reads the list on the host */
    for (int q = 0; q < NQ; q++) {
        tdm_ireader *r = NULL;
        tdm_err err = {0};
        if (tdm_ireader_open(F.bad, &r, &err) != TDM_OK)
            fail_msg("byte %zu: tdm_index_open passed, tdm_ireader_open: %s", at,
                     tdm_err_msg(&err));
        uint32_t *d = malloc(F.size), *f = malloc(F.size);
        rc = tdm_ireader_decode(r, F.q[q].t[0].id, d, f, &err);
        free(d);
        free(f);
        tdm_ireader_close(r);
        if (rc != TDM_OK && (!strstr(tdm_err_msg(&err), F.bad) ||
                             (!F.forged && sec && !strstr(tdm_err_msg(&err), sec))))
            fail_msg("byte %zu (%s): decode: %s", at, sec ? sec : "header", tdm_err_msg(&err));
        tdm_err_clear(&err);
    }
    tdm_search *s = NULL;
    rc = tdm_search_open(e, ix, &s);
    int failed = rc != TDM_OK;
    if (failed) {
        check_error(rc, "search_open", sec, at);
        F.caught[1]++;
    } else {
        failed = search_all(s, sec, at);
        F.caught[2] += failed;
        F.searched += !failed;
    }
    tdm_search_close(s);
    if (!F.forged && tdm_index_verify(ix) == TDM_OK && failed)
        fail_msg("byte %zu: a search failed, verify passes: %s", at, tdm_last_error());
    tdm_index_close(ix);
}

/* Positions of a section [off, off + size): both ends, the middle and some
 * random ones (seeded: the same sweep every run). */
static size_t positions(tdm_rng *g, uint64_t off, uint64_t size, size_t *out, size_t max)
{
    size_t n = 0;
    if (!size)
        return 0;
    out[n++] = off;
    out[n++] = off + size - 1;
    out[n++] = off + size / 2;
    while (n < max)
        out[n++] = off + tdm_rng_u32(g) % size;
    return n;
}

static void sweep(tdm_engine *e, int per_section)
{
    tdm_rng g;
    tdm_rng_seed(&g, 1127);
    const tdm_idx_section_entry *st =
        (const tdm_idx_section_entry *)(F.bytes + sizeof(tdm_idx_header));
    size_t pos[64];
    for (unsigned id = 0; id < TDM_SEC_COUNT; id++) {
        size_t n = positions(&g, st[id].offset, st[id].size, pos, (size_t)per_section);
        for (size_t k = 0; k < n; k++)
            one_mutant(e, pos[k], 1 + tdm_rng_u32(&g) % 255, tdm_ireader_section_name(id));
    }
    /* the header and the section table */
    size_t table = sizeof(tdm_idx_header) + TDM_SEC_COUNT * sizeof(tdm_idx_section_entry);
    for (int k = 0; k < per_section; k++)
        one_mutant(e, tdm_rng_u32(&g) % table, 1 + tdm_rng_u32(&g) % 255, NULL);
    print_message("%s mutants refused at open %u, at binding %u, at a search %u; "
                  "answered %u (%d devices)\n", F.forged ? "forged" : "flipped", F.caught[0],
                  F.caught[1], F.caught[2], F.searched, F.ndev);
    /* a whole index goes to a device only once its arena's checksum matched */
    if (F.full && !F.forged && F.caught[2])
        fail_msg("%u damaged arenas were bound to a device", F.caught[2]);
    memset(F.caught, 0, sizeof F.caught);
    F.searched = 0;
}

static void setup_all(void)
{
    if (getenv("TANDEM_TEST_OCLGRIND"))
        skip(); /* thousands of searches: days in a simulator */
    if (F.bytes)
        return;
    make_index();
    pick_queries();
}

/* The index resident on every device (FULL). */
static void test_mutants_resident(void **state)
{
    (void)state;
    setup_all();
    tdm_engine *e = tdm_test_engine();
    F.ndev = tdm_engine_device_count(e);
    assert_true(F.ndev > 0);
    baseline(e);
    F.full = 1;
    sweep(e, tdm_test_small() ? 3 : 6);
    F.full = 0;
    tdm_engine_close(e);
}

/* The same through a list cache: the device memory allowed holds the small
 * sections and a fraction of the arena, so lists are uploaded on demand. */
static void test_mutants_cached(void **state)
{
    (void)state;
    setup_all();
    const tdm_idx_section_entry *st =
        (const tdm_idx_section_entry *)(F.bytes + sizeof(tdm_idx_header));
    uint64_t small = 0;
    for (unsigned id = 1; id <= TDM_SEC_DOCLENS; id++)
        small += st[id].size + 64;
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.device_memory = small + st[TDM_SEC_ARENA].size / 2;
    tdm_engine *e = NULL;
    if (tdm_engine_open(&o, &e) != TDM_OK)
        fail_msg("engine: %s", tdm_last_error());
    F.ndev = tdm_engine_device_count(e);
    baseline(e);
    sweep(e, 3);
    tdm_engine_close(e);
}

/* The mutants with their checksums forged, resident and cached. */
static void test_mutants_forged(void **state)
{
    (void)state;
    setup_all();
    F.forged = 1;
    tdm_engine *e = tdm_test_engine();
    F.ndev = tdm_engine_device_count(e);
    sweep(e, tdm_test_small() ? 3 : 6);
    tdm_engine_close(e);
    const tdm_idx_section_entry *st =
        (const tdm_idx_section_entry *)(F.bytes + sizeof(tdm_idx_header));
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.device_memory = st[TDM_SEC_ARENA].size / 2;
    for (unsigned id = 1; id <= TDM_SEC_DOCLENS; id++)
        o.device_memory += st[id].size + 64;
    if (tdm_engine_open(&o, &e) != TDM_OK)
        fail_msg("engine: %s", tdm_last_error());
    sweep(e, 3);
    tdm_engine_close(e);
    F.forged = 0;
}

/* The issue's reproductions on Cranfield (`tandem build -o cran.idx
 * cran.all.1400`, skipped without the data): each flip, as it is and with
 * its checksums forged, is an error naming the file, never a crash or the
 * wrong rank it gave before. */
static void test_issue_reproductions(void **state)
{
    (void)state;
    if (getenv("TANDEM_TEST_OCLGRIND"))
        skip();
    const char *in[] = {tdm_test_data("cranfield/cran.all.1400")};
    char good[1100], bad[1100];
    snprintf(good, sizeof good, "%s/cran.idx", tdm_test_tmpdir("index-mutants-cran"));
    snprintf(bad, sizeof bad, "%s/cran.idx", tdm_test_tmpdir("index-mutants-cran-bad"));
    /* the issue's index: built before the default stopword list was
     * Lucene's, so with none (the byte offsets are that index's) */
    tdm_index_build_options bo;
    tdm_index_build_options_init(&bo);
    bo.stopwords = "none";
    if (tdm_index_build(in, 1, good, &bo) != TDM_OK)
        fail_msg("build: %s", tdm_last_error());
    size_t n;
    unsigned char *b = tdm_read_file(good, &n);
    assert_non_null(b);
    const tdm_idx_section_entry *st =
        (const tdm_idx_section_entry *)(b + sizeof(tdm_idx_header));
    /* forged_err: with its checksums forged the damage is still refused
     * (a list decoded out of order); the others forge another valid index,
     * whose answer is all that can come (the point is no crash) */
    struct { size_t at; unsigned x, sec; const char *text; int algo, variant, forged_err; }
    cases[] = {
        {102826, 111, TDM_SEC_ARENA, "rate", TDM_ALGO_OR, TDM_VARIANT_GROUP, 1}, /* SEGV */
        {102826, 111, TDM_SEC_ARENA, "rate", TDM_ALGO_AND, TDM_VARIANT_GROUP, 1},
        {28932, 103, TDM_SEC_ARENA, "circumferential", TDM_ALGO_AUTO, TDM_VARIANT_AUTO, 0},
        {237753, 119, TDM_SEC_BLOCK_MAX, "flow boundary layer", TDM_ALGO_BMW,
         TDM_VARIANT_AUTO, 0},
    };
    tdm_engine *e = tdm_test_engine();
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int forged = 0; forged < 2; forged++) {
            const tdm_idx_section_entry *x = &st[cases[c].sec];
            if (cases[c].at < x->offset || cases[c].at >= x->offset + x->size)
                fail_msg("byte %zu is not in section %s: the index is not the issue's",
                         cases[c].at, tdm_ireader_section_name(cases[c].sec));
            unsigned char *m = malloc(n);
            assert_non_null(m);
            memcpy(m, b, n);
            m[cases[c].at] ^= (unsigned char)cases[c].x;
            if (forged)
                forge_sums(m, n);
            const void *parts[] = {m};
            size_t sizes[] = {n};
            assert_int_equal(tdm_write_file_atomic(bad, parts, sizes, 1), 0);
            free(m);
            tdm_index *ix = NULL;
            int rc = tdm_index_open(bad, &ix);
            tdm_search *s = NULL;
            if (rc == TDM_OK)
                rc = tdm_search_open(e, ix, &s);
            tdm_search_options o;
            tdm_search_options_init(&o);
            o.algorithm = cases[c].algo;
            o.variant = cases[c].variant;
            o.k = 10;
            tdm_search_result *res = NULL;
            if (rc == TDM_OK)
                rc = tdm_search_text(s, cases[c].text, &o, &res);
            int want_err = !forged || cases[c].forged_err;
            if (want_err && (rc != TDM_ERR_CORRUPT || !strstr(tdm_last_error(), bad)))
                fail_msg("case %zu (forged %d): %s: %s", c, forged, tdm_strerror(rc),
                         rc ? tdm_last_error() : "an answer");
            if (!forged && !strstr(tdm_last_error(), "checksum mismatch in section"))
                fail_msg("case %zu: %s", c, tdm_last_error());
            tdm_search_result_free(res);
            tdm_search_close(s);
            tdm_index_close(ix);
        }
    tdm_engine_close(e);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutants_resident),
        cmocka_unit_test(test_mutants_cached),
        cmocka_unit_test(test_mutants_forged),
        cmocka_unit_test(test_issue_reproductions),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(F.bytes);
    return rc;
}
