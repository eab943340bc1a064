/* Device characteristics measured once, on first request, and kept with the
 * device: the copy bandwidth that bounds a streaming kernel (the roofline of
 * `tandem bench`), and what a launch costs (what batching saves). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, size_t n)
{
    qsort(t, n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Bytes read + written per second by clEnqueueCopyBuffer between two buffers
 * far larger than any cache, median of 10 after 2 warm-ups. */
static int copy_bandwidth(tdm_device *d, double *gbs, tdm_err *err)
{
    size_t bytes = (size_t)256 << 20;
    while (d->info.max_alloc_bytes && bytes > d->info.max_alloc_bytes / 2)
        bytes /= 2;
    while (d->info.global_mem_bytes && bytes > d->info.global_mem_bytes / 4)
        bytes /= 2;
    cl_mem a = NULL, b = NULL;
    double t[10];
    int st = tdm_buffer_create(d, CL_MEM_READ_WRITE, bytes, NULL, &a, err);
    if (st == TDM_OK)
        st = tdm_buffer_create(d, CL_MEM_READ_WRITE, bytes, NULL, &b, err);
    for (int i = -2; st == TDM_OK && i < 10; i++) {
        cl_event ev;
        cl_int rc = clEnqueueCopyBuffer(d->queue, a, b, 0, 0, bytes, 0, NULL, &ev);
        if (rc == CL_SUCCESS) {
            rc = clWaitForEvents(1, &ev);
            if (i >= 0)
                t[i] = tdm_event_seconds(ev);
            clReleaseEvent(ev);
        }
        if (rc != CL_SUCCESS)
            st = tdm_cl_fail(err, rc, "probing copy bandwidth");
    }
    if (st == TDM_OK) {
        double m = median(t, 10);
        *gbs = m > 0 ? 2.0 * (double)bytes / m / 1e9 : 0;
    }
    if (a)
        clReleaseMemObject(a);
    if (b)
        clReleaseMemObject(b);
    return st;
}

/* Host round trip and device time of an empty kernel: median of 50 after 5
 * warm-ups. */
static int launch_cost(tdm_device *d, double *host_s, double *dev_s, tdm_err *err)
{
    enum { WARM = 5, N = 50 };
    double th[N], td[N];
    size_t local = 1, global = 1;
    int st = TDM_OK;
    for (int i = -WARM; st == TDM_OK && i < N; i++) {
        cl_event ev;
        double t0 = now_s();
        st = tdm_kernel_launch(d, "tdm_nop", NULL, 0, global, local, 0, NULL, &ev, err);
        if (st != TDM_OK)
            break;
        cl_int rc = clWaitForEvents(1, &ev);
        double t1 = now_s();
        if (i >= 0) {
            th[i] = t1 - t0;
            td[i] = tdm_event_seconds(ev);
        }
        clReleaseEvent(ev);
        if (rc != CL_SUCCESS)
            st = tdm_cl_fail(err, rc, "probing launch cost");
    }
    if (st == TDM_OK) {
        *host_s = median(th, N);
        *dev_s = median(td, N);
    }
    return st;
}

int tdm_device_probe_get(tdm_device *d, tdm_device_probe *out, tdm_err *err)
{
    struct tdm_probe *p = d->probe;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&p->lock);
    int st = TDM_OK;
    if (!p->done) {
        tdm_device_probe v = {0};
        st = copy_bandwidth(d, &v.copy_gbs, err);
        if (st == TDM_OK)
            st = launch_cost(d, &v.launch_s, &v.launch_dev_s, err);
        if (st == TDM_OK) {
            p->val = v;
            p->done = 1;
        } else {
            tdm_err_append(err, " (measuring %s)", d->info.name);
        }
    }
    if (st == TDM_OK)
        *out = p->val;
    pthread_mutex_unlock(&p->lock);
    return st;
}
