/* The launch guard (runtime/launch_guard.c) against PoCL's work-group
 * function cache bug (issue 16): many threads on two PoCL devices and two
 * queues each launch the same kernel with grids that keep growing, the
 * pattern that made PoCL abort in pocl_release_dlhandle_cache
 * ('found->ref_count > 0'). ctest runs it with 16 PoCL worker threads
 * (POCL_MAX_PTHREAD_COUNT), with which PoCL 3.1 aborts here too when the
 * guard is off (TANDEM_LAUNCH_GUARD=off). Every result is checked against
 * the plain-C reference; the guard must have made launches wait. Skips
 * where no device is a PoCL CPU device (the guard is off there); with
 * TANDEM_LAUNCH_GUARD=off the same launches run unguarded. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "runtime/launch_guard.h"
#include "runtime/runtime.h"
#include "testutil.h"

static const char *src =
    "__kernel void tdm_test_spin(__global uint *out, uint n, uint iters, uint seed)\n"
    "{\n"
    "    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {\n"
    "        uint x = i ^ seed;\n"
    "        for (uint j = 0; j < iters; j++)\n"
    "            x = x * 1664525u + 1013904223u;\n"
    "        out[i] = x;\n"
    "    }\n"
    "}\n";

/* The kernel's plain-C reference. */
static uint32_t spin_ref(uint32_t i, uint32_t iters, uint32_t seed)
{
    uint32_t x = i ^ seed;
    for (uint32_t j = 0; j < iters; j++)
        x = x * 1664525u + 1013904223u;
    return x;
}

#define THREADS 8
#define ROUNDS 24
#define MAX_GROUPS 96

typedef struct worker {
    tdm_device *d;
    int id;
    int bad;      /* results that differ from the reference */
    int failed;   /* launches or copies that failed */
    char msg[256];
} worker;

/* One round: a grid of `groups` work-groups over 2x as many values, on the
 * device's compute queue or its latency queue, then the values read back. */
static void round_run(worker *w, cl_mem buf, uint32_t *host, int round)
{
    tdm_device *d = w->d;
    size_t local = d->wg_size;
    /* growing with the round, staggered per thread: new widest grids keep
       arriving while the other threads' launches run */
    uint32_t groups = 1 + (uint32_t)((round * MAX_GROUPS) / ROUNDS + (w->id * 5) % 11);
    uint32_t n = groups * (uint32_t)local * 2, iters = 64 + (uint32_t)(w->id % 3) * 200;
    uint32_t seed = (uint32_t)(w->id * 7919 + round);
    tdm_karg args[] = {TDM_KARG_MEM(&buf), TDM_KARG_U32(&n), TDM_KARG_U32(&iters),
                       TDM_KARG_U32(&seed)};
    cl_command_queue q = (round + w->id) % 2 ? d->lat : d->queue;
    cl_event ev = NULL;
    tdm_err err = {0};
    int st = tdm_kernel_launch_on(d, q, "tdm_test_spin", args, 4, groups * local, local, 0,
                                  NULL, &ev, &err);
    if (st == TDM_OK)
        st = tdm_download(d, buf, 0, (size_t)n * 4, host, 1, &ev, NULL, &err);
    if (ev)
        clReleaseEvent(ev);
    if (st != TDM_OK) {
        if (!w->failed++)
            snprintf(w->msg, sizeof w->msg, "%s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        w->bad += host[i] != spin_ref(i, iters, seed);
}

static void *worker_run(void *arg)
{
    worker *w = arg;
    size_t cap = (size_t)(MAX_GROUPS + 12) * w->d->wg_size * 2;
    cl_int rc;
    cl_mem buf = clCreateBuffer(w->d->ctx, CL_MEM_READ_WRITE, cap * 4, NULL, &rc);
    uint32_t *host = malloc(cap * 4);
    if (rc != CL_SUCCESS || !host) {
        w->failed++;
        snprintf(w->msg, sizeof w->msg, "no buffer (%d)", rc);
    } else {
        for (int r = 0; r < ROUNDS; r++)
            round_run(w, buf, host, r);
    }
    if (buf)
        clReleaseMemObject(buf);
    free(host);
    return NULL;
}

static tdm_engine *open_spin(void)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.kernel_source = src;
    o.devices = "cpu";
    tdm_engine *e = NULL;
    return tdm_engine_open(&o, &e) == TDM_OK ? e : NULL;
}

/* Devices of e that launch through the guard. */
static int guarded_devices(tdm_engine *e)
{
    int n = 0;
    for (int i = 0; i < tdm_engine_device_count(e); i++)
        n += tdm_engine_device(e, i)->launch_guard;
    return n;
}

/* Devices of e that PoCL's CPU drivers run (the bug's). */
static int pocl_cpu_devices(tdm_engine *e)
{
    int n = 0;
    for (int i = 0; e && i < tdm_engine_device_count(e); i++)
        n += tdm_is_pocl(&tdm_engine_device(e, i)->info) &&
             tdm_engine_device(e, i)->info.type == TDM_DEVICE_CPU;
    return n;
}

static void threads_on_two_devices_and_queues(void **state)
{
    (void)state;
    tdm_engine *e = open_spin();
    if (!pocl_cpu_devices(e)) {
        tdm_engine_close(e);
        skip();
    }
    int ndev = tdm_engine_device_count(e);
    worker w[THREADS];
    pthread_t th[THREADS];
    size_t waits0 = tdm_launch_guard_waits();
    for (int t = 0; t < THREADS; t++) {
        w[t] = (worker){.d = tdm_engine_device(e, t % ndev), .id = t};
        assert_int_equal(pthread_create(&th[t], NULL, worker_run, &w[t]), 0);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    size_t waits = tdm_launch_guard_waits() - waits0;
    printf("%d device(s), %d threads x %d rounds: %zu launches waited for another queue's\n",
           ndev, THREADS, ROUNDS, waits);
    for (int t = 0; t < THREADS; t++) {
        if (w[t].failed || w[t].bad)
            print_error("thread %d: %d failed (%s), %d wrong values\n", t, w[t].failed,
                        w[t].msg, w[t].bad);
        assert_int_equal(w[t].failed, 0);
        assert_int_equal(w[t].bad, 0);
    }
    /* two queues per device, eight threads: launches of the one kernel met
       (TANDEM_LAUNCH_GUARD=off runs the same launches unguarded) */
    assert_true(guarded_devices(e) == ndev ? waits > 0 : waits == 0);
    tdm_engine_close(e);
}

static void setting_turns_it_off(void **state)
{
    (void)state;
    tdm_engine *e = open_spin();
    if (!pocl_cpu_devices(e) || !guarded_devices(e)) {
        tdm_engine_close(e);
        skip();
    }
    tdm_engine_close(e);
    setenv("TANDEM_LAUNCH_GUARD", "off", 1);
    e = open_spin();
    assert_non_null(e);
    assert_int_equal(guarded_devices(e), 0);
    tdm_engine_close(e);
    setenv("TANDEM_LAUNCH_GUARD", "sometimes", 1);
    e = open_spin();
    assert_null(e);
    assert_non_null(strstr(tdm_last_error(), "TANDEM_LAUNCH_GUARD=sometimes"));
    unsetenv("TANDEM_LAUNCH_GUARD");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_on_two_devices_and_queues),
        cmocka_unit_test(setting_turns_it_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
