/* AND's block selection before decoding (plan/and_select.h,
 * cl/search_select.cl) on every device against the plain-C reference:
 * random indexes of several codecs, queries of 1 to 8 terms mixing
 * one-block, short and long lists (uniform and clustered), Griffin's ratio at
 * 1 (every longer list per lead docid), 128 and 2^30 (every list per block): the
 * compacted postings and the rewritten term table bit for bit. And the
 * reference against the definition: the intersection of the compacted lists
 * is the intersection of the whole lists, postings and frequencies. */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "index/index_priv.h"
#include "index/writer.h"
#include "plan/and_select.h"
#include "drive/search.h"
#include "randcoll.h"
#include "testutil.h"

static int setup(void **state)
{
    *state = tdm_test_engine();
    return 0;
}

static int teardown(void **state)
{
    tdm_engine_close(*state);
    return 0;
}

/* Every third list clustered (runs of consecutive docids), as test_search. */
static tdm_index *make_index(uint64_t seed, uint32_t ndocs, const char *codec, randcoll *c)
{
    randcoll_init(c, seed, ndocs, 30);
    tdm_rng r;
    tdm_rng_seed(&r, seed + 5);
    for (uint64_t i = 2; i < c->nlists; i += 3) {
        size_t n = 0;
        uint32_t start = tdm_rng_range(&r, 0, ndocs - 1), len = tdm_rng_range(&r, 1, ndocs / 4 + 1);
        for (uint32_t d = start; d < ndocs && d < start + len; d++) {
            c->docids[i][n] = d;
            c->freqs[i][n++] = 1 + d % 7;
        }
        c->n[i] = n;
    }
    tdm_coll_source src;
    randcoll_source(c, &src);
    tdm_iwriter_options o = {.codec = codec};
    tdm_err err = {0};
    char *path = path_in(tdm_test_tmpdir("andsel"), "a.tdm");
    if (tdm_collection_write(&src, path, &o, &err) != TDM_OK)
        fail_msg("write: %s", tdm_err_msg(&err));
    tdm_index *ix;
    if (tdm_index_open(path, &ix) != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    return ix;
}

/* The AND of lists (docs, freqs at pos[t], len[t]) as (docid, freq...) rows. */
static size_t intersect(const uint32_t *docs, const uint32_t *freqs, const uint32_t *pos,
                        const uint32_t *len, uint32_t nt, uint32_t *out)
{
    size_t n = 0;
    for (uint32_t i = 0; nt && i < len[0]; i++) {
        uint32_t d = docs[pos[0] + i], row[16], all = 1;
        row[0] = d;
        row[1] = freqs[pos[0] + i];
        for (uint32_t t = 1; t < nt && all; t++) {
            all = 0;
            for (uint32_t j = 0; j < len[t]; j++)
                if (docs[pos[t] + j] == d) {
                    row[t + 1] = freqs[pos[t] + j];
                    all = 1;
                }
        }
        if (all) {
            memcpy(out + n, row, (nt + 1) * 4);
            n += nt + 1;
        }
    }
    return n;
}

static cl_mem buf(tdm_device *d, size_t bytes)
{
    cl_mem m = NULL;
    tdm_err err = {0};
    if (tdm_buffer_create(d, CL_MEM_READ_WRITE, bytes < 4 ? 4 : bytes, NULL, &m, &err))
        fail_msg("buffer: %s", tdm_err_msg(&err));
    return m;
}

typedef struct refout {
    uint32_t *docs, *freqs, pos[8], len[8];
    uint64_t selected, total;
} refout;

static void check_device(tdm_device *d, const tdm_resident *res, const tdm_and_sel *a,
                         const refout *ref, uint64_t npost, const char *what)
{
    tdm_err err = {0};
    cl_mem tab = buf(d, tdm_and_sel_tab_bytes(a)), lj = buf(d, sizeof a->lead_job);
    cl_mem flags = buf(d, tdm_and_sel_flag_bytes(a)), jobs[TDM_CODEC_COUNT] = {0};
    cl_mem docs = buf(d, npost * 4), freqs = buf(d, npost * 4);
    cl_mem terms = buf(d, (size_t)a->nt * TDM_SEARCH_TW * 4), status = buf(d, 4);
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        if (a->njobs[c])
            jobs[c] = buf(d, tdm_and_sel_job_bytes(a, c));
    uint32_t zero = 0, *tw = calloc((size_t)a->nt * TDM_SEARCH_TW, 4);
    for (uint32_t t = 0; t < a->nt; t++)
        tw[t * TDM_SEARCH_TW + TDM_TW_POS] = tw[t * TDM_SEARCH_TW + TDM_TW_DF] = 0xdeadbeef;
    cl_event ev[2], done = NULL;
    if (tdm_upload(d, status, 0, 4, &zero, 0, NULL, &ev[0], &err) ||
        tdm_upload(d, terms, 0, (size_t)a->nt * TDM_SEARCH_TW * 4, tw, 0, NULL, &ev[1], &err))
        fail_msg("upload: %s", tdm_err_msg(&err));
    uint32_t launches = 0;
    uint64_t up = 0;
    tdm_decode_scratch sc = {0}; /* the decodes' scratch kept, as a search keeps it */
    if (tdm_and_sel_enqueue(res, NULL, &sc, a, 0, tab, lj, flags, jobs, docs, freqs, terms,
                            status, 2, ev, &done, &launches, &up, &err))
        fail_msg("%s: enqueue: %s", what, tdm_err_msg(&err));
    clReleaseEvent(ev[0]);
    clReleaseEvent(ev[1]);
    size_t tot = ref->total ? ref->total : 1;
    uint32_t *gd = malloc(tot * 4), *gf = malloc(tot * 4), st = 0;
    cl_event e1, e2;
    if (tdm_download(d, terms, 0, (size_t)a->nt * TDM_SEARCH_TW * 4, tw, 1, &done, &e1, &err) ||
        tdm_download(d, docs, 0, tot * 4, gd, 1, &e1, &e2, &err) ||
        tdm_download(d, freqs, 0, tot * 4, gf, 1, &e2, NULL, &err) ||
        tdm_download(d, status, 0, 4, &st, 0, NULL, NULL, &err))
        fail_msg("download: %s", tdm_err_msg(&err));
    clReleaseEvent(e1);
    clReleaseEvent(e2);
    clReleaseEvent(done);
    tdm_decode_scratch_free(&sc); /* the commands that used it are done */
    if (st)
        fail_msg("%s: decode status %u", what, st);
    for (uint32_t t = 0; t < a->nt; t++)
        if (tw[t * TDM_SEARCH_TW + TDM_TW_POS] != ref->pos[t] ||
            tw[t * TDM_SEARCH_TW + TDM_TW_DF] != ref->len[t])
            fail_msg("%s: term %u at %u len %u, reference %u len %u", what, t,
                     tw[t * TDM_SEARCH_TW + TDM_TW_POS], tw[t * TDM_SEARCH_TW + TDM_TW_DF], ref->pos[t],
                     ref->len[t]);
    for (uint64_t i = 0; i < ref->total; i++)
        if (gd[i] != ref->docs[i] || gf[i] != ref->freqs[i])
            fail_msg("%s: posting %llu: %u/%u, reference %u/%u", what, (unsigned long long)i,
                     gd[i], gf[i], ref->docs[i], ref->freqs[i]);
    assert_true(launches >= 2); /* lead decode, jobs (a query of one term: no selection) */
    cl_mem all[] = {tab, lj, flags, docs, freqs, terms, status};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        clReleaseMemObject(all[i]);
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        if (jobs[c])
            clReleaseMemObject(jobs[c]);
    free(gd);
    free(gf);
    free(tw);
}

/* The reference's compacted AND equals the whole lists' AND. */
static void check_ref(const tdm_ireader *ir, const tdm_query *q, const refout *ref)
{
    uint32_t nt = (uint32_t)q->nterms, pos[8], len[8], at = 0;
    size_t npost = 0;
    for (uint32_t t = 0; t < nt; t++) {
        tdm_ilist l;
        tdm_err err = {0};
        assert_int_equal(tdm_ireader_list(ir, q->terms[t].id, &l, &err), TDM_OK);
        npost += l.df;
    }
    uint32_t *d = malloc(npost * 4 + 4), *f = malloc(npost * 4 + 4);
    for (uint32_t t = 0; t < nt; t++) {
        tdm_err err = {0};
        tdm_ilist l;
        tdm_ireader_list(ir, q->terms[t].id, &l, &err);
        assert_int_equal(tdm_ireader_decode(ir, q->terms[t].id, d + at, f + at, &err), TDM_OK);
        pos[t] = at;
        len[t] = l.df;
        at += l.df;
    }
    uint32_t *w = malloc((npost + 1) * 9 * 4 + 4), *g = malloc((npost + 1) * 9 * 4 + 4);
    size_t nw = intersect(d, f, pos, len, nt, w);
    size_t ng = intersect(ref->docs, ref->freqs, ref->pos, ref->len, nt, g);
    assert_int_equal(ng, nw);
    assert_memory_equal(g, w, nw * 4);
    assert_true(ref->total <= npost);
    free(d);
    free(f);
    free(w);
    free(g);
}

static void random_queries(void **state)
{
    tdm_engine *eng = *state;
    int small = tdm_test_small();
    static const char *codecs[] = {"bp128", "pef", "vbyte1024", "rice", "newpfd64"};
    static const uint32_t ratios[] = {1, 128, 1u << 30};
    for (uint64_t seed = 1; seed <= 5; seed++) {
        uint32_t ndocs = small ? 300 + 200 * (uint32_t)seed : 5000 * (uint32_t)seed;
        randcoll c;
        tdm_index *ix = make_index(seed, ndocs, codecs[seed - 1], &c);
        const tdm_ireader *ir = tdm_index_ireader(ix);
        tdm_resident res[8];
        int ndev = tdm_engine_device_count(eng);
        assert_true(ndev <= 8);
        tdm_err err = {0};
        for (int dv = 0; dv < ndev; dv++)
            if (tdm_resident_upload(ir, tdm_engine_device(eng, dv), &res[dv], &err))
                fail_msg("resident: %s", tdm_err_msg(&err));
        tdm_rng r;
        tdm_rng_seed(&r, seed * 13);
        tdm_query q;
        tdm_query_init(&q);
        for (int qi = 0; qi < (small ? 4 : 25); qi++) {
            tdm_query_reset(&q);
            uint32_t n = tdm_rng_range(&r, 1, 8);
            for (uint32_t i = 0; i < n; i++) {
                const char *t = c.terms[tdm_rng_range(&r, 0, (uint32_t)c.nlists - 1)];
                assert_int_equal(tdm_query_add_term(&q, ir, t, strlen(t), 1.0, &err), TDM_OK);
            }
            tdm_query_finish(&q);
            uint64_t npost = 0;
            for (size_t t = 0; t < q.nterms; t++) {
                tdm_ilist l;
                tdm_ireader_list(ir, q.terms[t].id, &l, &err);
                npost += l.df;
            }
            for (size_t ri = 0; ri < 3; ri++) {
                tdm_and_sel a;
                assert_int_equal(tdm_and_sel_build(ir, &q, ratios[ri], &a, &err), TDM_OK);
                refout ref = {.docs = malloc(npost * 4), .freqs = malloc(npost * 4)};
                assert_int_equal(tdm_and_sel_ref(ir, &q, &a, ref.docs, ref.freqs, ref.pos,
                                                 ref.len, &ref.selected, &err), TDM_OK);
                for (uint32_t t = 0; t < a.nt; t++)
                    ref.total += ref.len[t];
                if (ri == 1)
                    check_ref(ir, &q, &ref);
                for (int dv = 0; dv < ndev; dv++) {
                    char what[160];
                    snprintf(what, sizeof what, "%s seed %llu query %d (%zu terms) ratio %u dev %d",
                             codecs[seed - 1], (unsigned long long)seed, qi, q.nterms, ratios[ri],
                             dv);
                    check_device(tdm_engine_device(eng, dv), &res[dv], &a, &ref, npost, what);
                }
                free(ref.docs);
                free(ref.freqs);
                tdm_and_sel_free(&a);
            }
        }
        tdm_query_free(&q);
        for (int dv = 0; dv < ndev; dv++)
            tdm_resident_release(&res[dv]);
        tdm_index_close(ix);
        randcoll_free(&c);
    }
}

int main(void)
{
    (void)assert_same_index;
    const struct CMUnitTest tests[] = {cmocka_unit_test(random_queries)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
