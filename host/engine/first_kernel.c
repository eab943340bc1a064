/* A device that hangs must not hang the user: engine open launches a tiny
 * kernel on each device after its build and polls for it with a deadline
 * instead of blocking (a blocking wait on a driver that never runs its
 * queue never returns, as rusticl's did before tdm_wait_flush). */
#include <stdlib.h>
#include <time.h>

#include "first_kernel.h"

#define FIRST_WORD 0x74646d31u /* cl/first_kernel.cl */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Polls e until it completes, fails or limit_ms pass: 1 done, 0 late,
 * a negative OpenCL status when the command failed. */
static cl_int wait_until(cl_event e, unsigned limit_ms)
{
    double end = now_ms() + limit_ms;
    struct timespec nap = {0, 100000}; /* 0.1 ms: a launch takes more */
    for (;;) {
        cl_int st = CL_QUEUED;
        cl_int rc = clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
        if (rc != CL_SUCCESS)
            return rc;
        if (st < 0)
            return st;
        if (st == CL_COMPLETE)
            return 1;
        if (now_ms() >= end)
            return 0;
        nanosleep(&nap, NULL);
    }
}

int tdm_first_kernel_run(tdm_device *d, unsigned limit_ms, int hang, tdm_err *err)
{
    /* heap, not stack: a late read still writes here after a timeout */
    cl_uint *word = malloc(sizeof *word);
    cl_mem out = NULL;
    cl_event kev = NULL, rev = NULL;
    if (!word)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for the first kernel");
    *word = 0;
    int st = tdm_buffer_create(d, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &out, err);
    tdm_karg args[] = {TDM_KARG_MEM(&out)};
    if (st == TDM_OK)
        st = tdm_kernel_launch(d, hang ? "tdm_first_kernel_hang" : "tdm_first_kernel", args, 1,
                               1, 1, 0, NULL, &kev, err);
    cl_int rc = CL_SUCCESS;
    if (st == TDM_OK) {
        rc = clEnqueueReadBuffer(d->queue, out, CL_FALSE, 0, sizeof *word, word, 1, &kev, &rev);
        if (rc == CL_SUCCESS)
            rc = clFlush(d->queue);
        if (rc != CL_SUCCESS)
            st = tdm_cl_fail(err, rc, "first kernel's read back");
    }
    if (st == TDM_OK) {
        rc = wait_until(rev, limit_ms);
        if (rc == 0) {
            /* abandoned with the device: its commands may still use them */
            return tdm_err_set(err, TDM_ERR_TIMEOUT,
                               "its first kernel did not finish within %u ms (engine option "
                               "first_kernel_ms, TANDEM_FIRST_KERNEL_MS): the device or its "
                               "driver does not run its queue",
                               limit_ms);
        }
        if (rc < 0)
            st = tdm_cl_fail(err, rc, "first kernel");
        else if (*word != FIRST_WORD)
            st = tdm_err_set(err, TDM_ERR_INTERNAL,
                             "its first kernel wrote 0x%08x, not 0x%08x: the device does not "
                             "run kernels correctly",
                             (unsigned)*word, FIRST_WORD);
    }
    if (rev)
        clReleaseEvent(rev);
    if (kev)
        clReleaseEvent(kev);
    if (out)
        clReleaseMemObject(out);
    free(word);
    return st;
}
