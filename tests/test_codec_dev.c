/* The shared device decode driver, on the RAW codec: whole lists, block
 * selections, device-resident selections, bad jobs, structural checks and
 * out-of-memory, on every device of the engine. */
#include <stdio.h>

#include "engine/engine.h"
#include "codec_cases.h"

static void raw_matches_reference(void **state)
{
    (void)state;
    ccase_run_host(TDM_CODEC_RAW, 11);
    ccase_refuses_unsorted(TDM_CODEC_RAW);
    ccase_run_devices(TDM_CODEC_RAW, 11);
}

static void structure_is_checked_at_upload(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_rng r;
    tdm_rng_seed(&r, 5);
    uint32_t *v = malloc(1000 * 4);
    ccase_docids(&r, v, 1000, 0, 1, 100);
    tdm_encoded enc;
    tdm_err err = {0};
    ccase_ok(tdm_codec_encode(TDM_CODEC_RAW, v, 1000, 1, &enc, &err), &err, "encode");
    tdm_codec_dev_list l;
    enc.offsets[3] += 1; /* block 2 one word short, block 3 one long */
    assert_int_equal(tdm_codec_dev_upload(tdm_engine_device(e, 0), &enc, &l, &err),
                     TDM_ERR_CORRUPT);
    assert_null(l.words);
    tdm_codec_dev_free(&l); /* an empty handle frees fine */
    enc.offsets[3] -= 1;
    enc.offsets[enc.nblocks] += 1; /* endpoints past the payload */
    assert_int_equal(tdm_codec_dev_upload(tdm_engine_device(e, 0), &enc, &l, &err),
                     TDM_ERR_CORRUPT);
    enc.offsets[enc.nblocks] -= 1;
    /* Block ids out of range are refused before any launch. */
    ccase_ok(tdm_codec_dev_upload(tdm_engine_device(e, 0), &enc, &l, &err), &err, "upload");
    uint32_t ids[] = {0, enc.nblocks}, out[256];
    assert_int_equal(tdm_codec_dev_decode(&l, ids, 2, NULL, out, NULL, NULL, &err),
                     TDM_ERR_INVALID_ARG);
    tdm_codec_dev_free(&l);
    tdm_encoded_free(&enc);
    free(v);
    tdm_err_clear(&err);
    tdm_engine_close(e);
}

/* A selection made on the device: pairs (block, position), with a bad block
 * id and an output past the buffer flagged, not written, and not crashing. */
static void device_selection_and_bad_jobs(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_rng r;
    tdm_rng_seed(&r, 6);
    size_t n = 700;
    uint32_t *v = malloc(n * 4);
    ccase_docids(&r, v, n, 3, 1, 1000);
    tdm_encoded enc;
    tdm_err err = {0};
    ccase_ok(tdm_codec_encode(TDM_CODEC_RAW, v, n, 1, &enc, &err), &err, "encode");
    for (int d = 0; d < tdm_engine_device_count(e); d++) {
        tdm_device *dev = tdm_engine_device(e, d);
        tdm_codec_dev_list l;
        ccase_ok(tdm_codec_dev_upload(dev, &enc, &l, &err), &err, "upload");
        /* block 5 (60 values) at 0, block 1 at 60, block 5 again at 300 */
        uint32_t pairs[] = {5, 0, 1, 60, 5, 300};
        cl_mem sel, out;
        ccase_ok(tdm_buffer_create(dev, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                     sizeof pairs, pairs, &sel, &err), &err, "sel");
        ccase_ok(tdm_buffer_create(dev, CL_MEM_READ_WRITE, 400 * 4, NULL, &out, &err), &err,
                   "out");
        uint32_t fill = 0xdeadbeef, got[400];
        clEnqueueFillBuffer(dev->queue, out, &fill, 4, 0, sizeof got, 0, NULL, NULL);
        cl_event ev;
        ccase_ok(tdm_codec_dev_decode_sel(&l, sel, 3, out, 400, 0, NULL, &ev, &err), &err, "sel");
        assert_non_null(ev);
        clReleaseEvent(ev);
        clEnqueueReadBuffer(dev->queue, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
        assert_memory_equal(got, v + 640, 60 * 4);
        assert_memory_equal(got + 60, v + 128, 128 * 4);
        assert_memory_equal(got + 300, v + 640, 60 * 4);
        assert_int_equal(got[188], 0xdeadbeef);
        assert_int_equal(tdm_codec_dev_status(&l, 0, NULL, &err), TDM_OK);
        /* a block id out of range, then an output past the end */
        uint32_t bad[] = {9, 0, 1, 350};
        clEnqueueWriteBuffer(dev->queue, sel, CL_TRUE, 0, sizeof bad, bad, 0, NULL, NULL);
        ccase_ok(tdm_codec_dev_decode_sel(&l, sel, 2, out, 400, 0, NULL, NULL, &err), &err, "sel");
        assert_int_equal(tdm_codec_dev_status(&l, 0, NULL, &err), TDM_ERR_INVALID_ARG);
        /* an output buffer smaller than it is said to be is refused */
        assert_int_equal(tdm_codec_dev_decode_sel(&l, sel, 2, out, 401, 0, NULL, NULL, &err),
                         TDM_ERR_INVALID_ARG);
        assert_int_equal(tdm_codec_dev_decode_sel(&l, sel, 4, out, 400, 0, NULL, NULL, &err),
                         TDM_ERR_INVALID_ARG); /* 4 jobs, 3 pairs */
        assert_int_equal(tdm_codec_dev_decode(&l, NULL, 0, sel, NULL, NULL, NULL, &err),
                         TDM_ERR_INVALID_ARG);
        clEnqueueReadBuffer(dev->queue, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
        assert_memory_equal(got + 300, v + 640, 60 * 4); /* untouched */
        clReleaseMemObject(sel);
        clReleaseMemObject(out);
        tdm_codec_dev_free(&l);
    }
    tdm_encoded_free(&enc);
    free(v);
    tdm_err_clear(&err);
    tdm_engine_close(e);
}

/* A list larger than the device's memory fails with TDM_ERR_DEVICE_MEMORY and
 * the device's name, before anything is allocated. */
static void too_large_is_device_memory(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_device *d = tdm_engine_device(e, 0);
    tdm_encoded enc;
    tdm_err err = {0};
    uint32_t one = 1;
    ccase_ok(tdm_codec_encode(TDM_CODEC_RAW, &one, 1, 1, &enc, &err), &err, "encode");
    tdm_codec_dev_list l;
    /* A device with 2 bytes of memory: refused before any allocation. */
    tdm_device fake = *d;
    fake.info.global_mem_bytes = 2;
    int rc = tdm_codec_dev_upload(&fake, &enc, &l, &err);
    assert_int_equal(rc, TDM_ERR_DEVICE_MEMORY);
    assert_non_null(strstr(tdm_err_msg(&err), d->info.name));
    tdm_encoded_free(&enc);
    tdm_err_clear(&err);
    tdm_engine_close(e);
}

/* `tandem bench codecs` (TANDEM_CLI) runs end to end on a small case and
 * writes its table, CSV and SVG. */
static void cli_bench_codecs(void **state)
{
    (void)state;
    const char *cli = getenv("TANDEM_CLI"), *og = getenv("TANDEM_TEST_OCLGRIND");
    if (!cli || !*cli || (og && *og == '1'))
        skip(); /* under Oclgrind the child would run unchecked, and slowly */
    char dir[1024], cmd[4096], csv[1100], svg[1100], out[1100];
    snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("bench_cli"));
    snprintf(csv, sizeof csv, "%s/b.csv", dir);
    snprintf(svg, sizeof svg, "%s/b.svg", dir);
    snprintf(out, sizeof out, "%s/b.txt", dir);
    snprintf(cmd, sizeof cmd,
             "'%s' bench codecs --sizes 10,11 --dist uniform,clustered --reps 2 --e2e-reps 1 "
             "--budget 0.1 --codecs raw,bp128,vbyte1024 --csv '%s' --plot '%s' > '%s' 2>/dev/null",
             cli, csv, svg, out);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(csv, "r");
    assert_non_null(f);
    char line[1024];
    int rows = 0, bp = 0;
    while (fgets(line, sizeof line, f)) {
        rows++;
        bp += strstr(line, ",bp128,") != NULL;
    }
    fclose(f);
    int nd = 0;
    tdm_engine *e = tdm_test_engine();
    nd = tdm_engine_device_count(e);
    tdm_engine_close(e);
    assert_int_equal(bp, 4 * nd); /* 2 distributions x 2 sizes x devices */
    assert_true(rows >= 1 + 4 * 3 * nd);
    f = fopen(svg, "r");
    assert_non_null(f);
    size_t n = fread(line, 1, sizeof line - 1, f);
    line[n] = '\0';
    fclose(f);
    assert_non_null(strstr(line, "<svg"));
}

/* An upload that does not wait: the decode waits for it (and for the
 * caller's own copy of the selection) through events; the list's buffers
 * and the decode's output are right. */
static void async_upload_and_wait_lists(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_rng r;
    tdm_rng_seed(&r, 9);
    enum { N = 3000 };
    uint32_t *v = malloc(N * 4), got[256];
    ccase_docids(&r, v, N, 7, 1, 500);
    for (int d = 0; d < tdm_engine_device_count(e); d++) {
        tdm_device *dev = tdm_engine_device(e, d);
        tdm_encoded enc;
        tdm_err err = {0};
        ccase_ok(tdm_codec_encode(TDM_CODEC_BP128, v, N, 1, &enc, &err), &err, "encode");
        tdm_codec_dev_list l;
        cl_event up = NULL, sel_up = NULL, k = NULL;
        ccase_ok(tdm_codec_dev_upload_async(dev, &enc, &l, &up, &err), &err, "upload");
        assert_non_null(up);
        uint32_t pairs[] = {20, 0, 3, 128}; /* block 20 at 0, block 3 at 128 */
        cl_mem sel, out;
        ccase_ok(tdm_buffer_create(dev, CL_MEM_READ_ONLY, sizeof pairs, NULL, &sel, &err), &err,
                 "sel");
        ccase_ok(tdm_buffer_create(dev, CL_MEM_READ_WRITE, sizeof got, NULL, &out, &err), &err,
                 "out");
        ccase_ok(tdm_upload(dev, sel, 0, sizeof pairs, pairs, 0, NULL, &sel_up, &err), &err,
                 "pairs");
        ccase_ok(tdm_codec_dev_decode_sel(&l, sel, 2, out, 256, 1, &sel_up, &k, &err), &err,
                 "decode");
        ccase_ok(tdm_download(dev, out, 0, sizeof got, got, 1, &k, NULL, &err), &err, "read");
        assert_memory_equal(got, v + 20 * 128, 128 * 4);
        assert_memory_equal(got + 128, v + 3 * 128, 128 * 4);
        assert_int_equal(tdm_codec_dev_status(&l, 1, &k, &err), TDM_OK);
        /* A wait list without events is refused. */
        assert_int_equal(tdm_codec_dev_decode_sel(&l, sel, 2, out, 256, 1, NULL, NULL, &err),
                         TDM_ERR_INVALID_ARG);
        clReleaseEvent(up);
        clReleaseEvent(sel_up);
        clReleaseEvent(k);
        clReleaseMemObject(sel);
        clReleaseMemObject(out);
        tdm_codec_dev_free(&l); /* waits for the upload: enc may go after */
        tdm_encoded_free(&enc);
        tdm_err_clear(&err);
    }
    free(v);
    tdm_engine_close(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(raw_matches_reference),
        cmocka_unit_test(structure_is_checked_at_upload),
        cmocka_unit_test(device_selection_and_bad_jobs),
        cmocka_unit_test(too_large_is_device_memory),
        cmocka_unit_test(async_upload_and_wait_lists),
        cmocka_unit_test(cli_bench_codecs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
