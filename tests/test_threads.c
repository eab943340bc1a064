/* One engine, many threads: several threads decode the same resident lists
 * at once (whole lists, block selections, random access), upload and free
 * lists of their own, run the engine's selfcheck on every device, and some
 * make mistakes whose errors must stay theirs.
 * Every result is checked against the reference decoder. Worker threads
 * never call cmocka: they count failures and keep the first message. */
#include <pthread.h>
#include <stdio.h>

#include "engine/engine.h"
#include "codec_cases.h"

enum { NTHREADS = 6, NLISTS = 4 };

/* Lists every thread decodes, resident on one device. */
typedef struct shared {
    tdm_engine *engine;
    tdm_device *dev;
    int codec[NLISTS];
    ccase_list list[NLISTS];
    tdm_encoded enc[NLISTS];
    tdm_codec_dev_list dl[NLISTS];
    int rounds;
} shared;

typedef struct worker {
    shared *sh;
    int id;
    pthread_t th;
    int failures;
    char first[512];
} worker;

static void failed(worker *w, const char *fmt, const char *a, const char *b)
{
    if (w->failures++ == 0)
        snprintf(w->first, sizeof w->first, fmt, a, b);
}

/* Whole list on the device against the list itself. */
static void whole(worker *w, int k)
{
    shared *sh = w->sh;
    const ccase_list *l = &sh->list[k];
    uint32_t *got = malloc((l->n + 1) * 4);
    tdm_err err = {0};
    size_t nv = 0;
    if (tdm_codec_dev_decode(&sh->dl[k], NULL, 0, NULL, got, &nv, NULL, &err) != TDM_OK)
        failed(w, "%s: decode: %s", l->name, tdm_err_msg(&err));
    else if (nv != l->n || memcmp(got, l->v, l->n * 4) != 0)
        failed(w, "%s: %s", l->name, "decoded values differ from the list");
    free(got);
    tdm_err_clear(&err);
}

/* A random selection of blocks against the reference decoder. */
static void selection(worker *w, int k, tdm_rng *r)
{
    shared *sh = w->sh;
    const tdm_encoded *enc = &sh->enc[k];
    uint32_t ids[16];
    size_t m = 1 + tdm_rng_range(r, 0, 15), nv = 0, want_n = 0;
    for (size_t i = 0; i < m; i++) {
        ids[i] = tdm_rng_range(r, 0, enc->nblocks - 1);
        want_n += tdm_encoded_block_len(enc, ids[i]);
    }
    uint32_t *want = malloc(want_n * 4 + 4), *got = malloc(want_n * 4 + 4);
    tdm_err err = {0};
    if (tdm_codec_decode_blocks(enc, ids, m, want, &err) != TDM_OK)
        failed(w, "%s: reference: %s", sh->list[k].name, tdm_err_msg(&err));
    else if (tdm_codec_dev_decode(&sh->dl[k], ids, m, NULL, got, &nv, NULL, &err) != TDM_OK)
        failed(w, "%s: decode blocks: %s", sh->list[k].name, tdm_err_msg(&err));
    else if (nv != want_n || memcmp(got, want, want_n * 4) != 0)
        failed(w, "%s: %s", sh->list[k].name, "block selection differs from the reference");
    free(want);
    free(got);
    tdm_err_clear(&err);
}

/* Random access where the codec has it. */
static void gather(worker *w, int k, tdm_rng *r)
{
    shared *sh = w->sh;
    const ccase_list *l = &sh->list[k];
    if (!tdm_codec_gather_supported(sh->codec[k]))
        return;
    uint32_t idx[64], got[64];
    for (int q = 0; q < 64; q++)
        idx[q] = tdm_rng_range(r, 0, (uint32_t)l->n - 1);
    tdm_err err = {0};
    if (tdm_codec_gather(&sh->dl[k], idx, 64, got, &err) != TDM_OK)
        failed(w, "%s: gather: %s", l->name, tdm_err_msg(&err));
    for (int q = 0; q < 64 && w->failures == 0; q++)
        if (got[q] != l->v[idx[q]])
            failed(w, "%s: %s", l->name, "gathered value differs from the list");
    tdm_err_clear(&err);
}

/* A mistake: a block id past the list. The error is this thread's, and
 * says so; the shared lists stay usable by the others. */
static void mistake(worker *w, int k)
{
    shared *sh = w->sh;
    uint32_t bad = sh->enc[k].nblocks + (uint32_t)w->id, out[1024];
    char want[64];
    snprintf(want, sizeof want, "block %u out of range", bad);
    tdm_err err = {0};
    int rc = tdm_codec_dev_decode(&sh->dl[k], &bad, 1, NULL, out, NULL, NULL, &err);
    if (rc != TDM_ERR_INVALID_ARG || !strstr(tdm_err_msg(&err), want))
        failed(w, "bad block: got '%s', want '%s'", tdm_err_msg(&err), want);
    tdm_err_clear(&err);
}

/* A list of the thread's own: upload, decode, free. */
static void own_list(worker *w, tdm_rng *r)
{
    uint32_t v[3000], got[3000];
    size_t n = 500 + tdm_rng_range(r, 0, 2500);
    ccase_docids(r, v, n, (uint32_t)w->id, 1, 5000);
    tdm_encoded enc = {0};
    tdm_codec_dev_list dl;
    tdm_err err = {0};
    int codec = w->sh->codec[w->id % NLISTS];
    int rc = tdm_codec_encode(codec, v, n, 1, &enc, &err);
    if (rc == TDM_OK && (rc = tdm_codec_dev_upload(w->sh->dev, &enc, &dl, &err)) == TDM_OK) {
        rc = tdm_codec_dev_decode(&dl, NULL, 0, NULL, got, NULL, NULL, &err);
        tdm_codec_dev_free(&dl);
    }
    if (rc != TDM_OK)
        failed(w, "own list: %s%s", tdm_err_msg(&err), "");
    else if (memcmp(got, v, n * 4) != 0)
        failed(w, "own list: %s%s", "decoded values differ", "");
    tdm_encoded_free(&enc);
    tdm_err_clear(&err);
}

static void *work(void *arg)
{
    worker *w = arg;
    tdm_rng r;
    tdm_rng_seed(&r, 1000 + (uint64_t)w->id);
    for (int i = 0; i < w->sh->rounds; i++) {
        int k = (w->id + i) % NLISTS;
        whole(w, k);
        selection(w, k, &r);
        gather(w, k, &r);
        if ((w->id + i) % 3 == 0)
            mistake(w, k);
        if (i % 4 == w->id % 4)
            own_list(w, &r);
        if (i % 6 == w->id % 6 && tdm_engine_selfcheck(w->sh->engine, NULL, 0) != TDM_OK)
            failed(w, "selfcheck: %s%s", tdm_last_error(), "");
    }
    return NULL;
}

static void setup_lists(shared *sh, tdm_rng *r)
{
    const int codecs[NLISTS] = {TDM_CODEC_BP128, TDM_CODEC_VBYTE1024, TDM_CODEC_PEF,
                                TDM_CODEC_NEWPFD128};
    size_t count = 0, n = tdm_test_small() ? 3000 : 200000;
    for (int k = 0; k < NLISTS; k++) {
        sh->codec[k] = codecs[k];
        ccase_list *l = ccase_add(sh->list, &count, tdm_codec_by_id(codecs[k])->name, n, 1);
        ccase_docids(r, l->v, n, (uint32_t)k, 1, 3000);
        ccase_encode(codecs[k], l, &sh->enc[k]);
        tdm_err err = {0};
        ccase_ok(tdm_codec_dev_upload(sh->dev, &sh->enc[k], &sh->dl[k], &err), &err, "upload");
    }
}

static void many_threads_decode_one_engine(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_rng r;
    tdm_rng_seed(&r, 77);
    for (int d = 0; d < tdm_engine_device_count(e); d++) {
        shared sh = {.engine = e, .dev = tdm_engine_device(e, d), .rounds = tdm_test_small() ? 3 : 12};
        setup_lists(&sh, &r);
        worker w[NTHREADS];
        for (int t = 0; t < NTHREADS; t++) {
            w[t] = (worker){.sh = &sh, .id = t};
            assert_int_equal(pthread_create(&w[t].th, NULL, work, &w[t]), 0);
        }
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(w[t].th, NULL);
        for (int t = 0; t < NTHREADS; t++)
            if (w[t].failures)
                fail_msg("device %d, thread %d: %d failures, first: %s", d, t, w[t].failures,
                         w[t].first);
        /* Kernels come from the pool: never more of one than threads used it. */
        size_t nk = tdm_kcache_count(sh.dev, "tdm_bp128_decode");
        if (nk < 1 || nk > NTHREADS)
            fail_msg("device %d: %zu pooled tdm_bp128_decode kernels for %d threads", d, nk,
                     NTHREADS);
        for (int k = 0; k < NLISTS; k++) {
            tdm_codec_dev_free(&sh.dl[k]);
            tdm_encoded_free(&sh.enc[k]);
        }
        ccase_lists_free(sh.list, NLISTS);
    }
    tdm_engine_close(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_threads_decode_one_engine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
