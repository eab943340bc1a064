/* A self-check: run tdm_delta_decode on every device against the C reference.
 * Also the smallest complete kernel driver: buffers, uploads on the transfer
 * queue, a pooled kernel launched after them, the result read back after
 * the kernel, every failure reported. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "common/strutil.h"
#include "engine.h"
#include "runtime/runtime.h"
#include "selfcheck.h"

void tdm_delta_decode_ref(const uint32_t *gaps, const uint32_t *bases, uint32_t *out, size_t n,
                          size_t block)
{
    for (size_t b = 0; b * block < n; b++) {
        uint32_t acc = bases[b];
        size_t end = (b + 1) * block < n ? (b + 1) * block : n;
        for (size_t i = b * block; i < end; i++)
            out[i] = acc += gaps[i];
    }
}

int tdm_delta_decode_device(tdm_device *d, const uint32_t *gaps, const uint32_t *bases,
                            uint32_t *out, size_t n, size_t block, tdm_err *err)
{
    if (block == 0 || n > UINT32_MAX || block > UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "delta decode: bad sizes");
    if (n == 0)
        return TDM_OK;
    size_t nblocks = (n + block - 1) / block;
    cl_mem bg = NULL, bb = NULL, bo = NULL;
    cl_event up[2] = {NULL, NULL}, kev = NULL;
    int st = tdm_buffer_create(d, CL_MEM_READ_ONLY, n * 4, NULL, &bg, err);
    if (st == TDM_OK)
        st = tdm_buffer_create(d, CL_MEM_READ_ONLY, nblocks * 4, NULL, &bb, err);
    if (st == TDM_OK)
        st = tdm_buffer_create(d, CL_MEM_WRITE_ONLY, n * 4, NULL, &bo, err);
    if (st == TDM_OK)
        st = tdm_upload(d, bg, 0, n * 4, gaps, 0, NULL, &up[0], err);
    if (st == TDM_OK)
        st = tdm_upload(d, bb, 0, nblocks * 4, bases, 0, NULL, &up[1], err);
    cl_uint un = (cl_uint)n, ub = (cl_uint)block;
    tdm_karg args[] = {TDM_KARG_MEM(&bg), TDM_KARG_MEM(&bb), TDM_KARG_MEM(&bo),
                       TDM_KARG_U32(&un), TDM_KARG_U32(&ub)};
    size_t local = d->wg_size;
    if (st == TDM_OK) /* the kernel waits for both uploads */
        st = tdm_kernel_launch(d, "tdm_delta_decode", args, 5, nblocks * local, local, 2, up,
                               &kev, err);
    if (st == TDM_OK) /* blocking: waits for this kernel alone */
        st = tdm_download(d, bo, 0, n * 4, out, 1, &kev, NULL, err);
    for (int i = 0; i < 2; i++)
        if (up[i]) {
            clWaitForEvents(1, &up[i]); /* the copies read the caller's arrays until then */
            clReleaseEvent(up[i]);
        }
    if (kev)
        clReleaseEvent(kev);
    if (bo) clReleaseMemObject(bo);
    if (bb) clReleaseMemObject(bb);
    if (bg) clReleaseMemObject(bg);
    return st;
}

int tdm_engine_selfcheck(tdm_engine *e, char *report, size_t report_len)
{
    tdm_api_enter();
    if (!e)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_engine_selfcheck: engine is NULL");
    enum { N = 10007, BLOCK = 1000 };
    uint32_t *gaps = malloc(N * 4), *bases = malloc(((N + BLOCK - 1) / BLOCK) * 4),
             *want = malloc(N * 4), *got = malloc(N * 4);
    tdm_err errv = {0}, *err = &errv;
    int st = gaps && bases && want && got ? TDM_OK : tdm_err_set(err, TDM_ERR_NOMEM, "selfcheck");
    tdm_rng rng = {0x9e3779b97f4a7c15ull};
    for (size_t i = 0; st == TDM_OK && i < N; i++)
        gaps[i] = tdm_rng_range(&rng, 1, 1000);
    for (size_t b = 0; st == TDM_OK && b * BLOCK < N; b++)
        bases[b] = tdm_rng_below(&rng, 100000);
    if (st == TDM_OK)
        tdm_delta_decode_ref(gaps, bases, want, N, BLOCK);
    size_t pos = 0;
    if (report && report_len)
        report[0] = '\0';
    for (int i = 0; st == TDM_OK && i < tdm_engine_device_count(e); i++) {
        tdm_device *d = tdm_engine_device(e, i);
        memset(got, 0, N * 4);
        st = tdm_delta_decode_device(d, gaps, bases, got, N, BLOCK, err);
        if (st == TDM_OK && memcmp(got, want, N * 4) != 0)
            st = tdm_err_set(err, TDM_ERR_INTERNAL,
                             "selfcheck: device %d (%s) disagrees with the reference", i,
                             d->info.name);
        if (report && report_len)
            tdm_bufprintf(report, report_len, &pos, "%d %s: %s (%d values)\n", i, d->info.name,
                          st == TDM_OK ? "ok" : "FAILED", (int)N);
    }
    free(gaps);
    free(bases);
    free(want);
    free(got);
    return tdm_api_result(st, err);
}
