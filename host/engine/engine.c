/* The engine: selected devices, each with a context, a queue and kernels.cl.
 * tdm_engine_open opens the devices concurrently, a thread each (open_devices);
 * the engine is read-only after that (runtime.h). */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "engine.h"
#include "first_kernel.h"
#include "program.h"
#include "runtime/kcache.h"
#include "runtime/launch_guard.h"
#include "runtime/probe.h"
#include "runtime/runtime.h"
#include "runtime/serial.h"

struct tdm_engine {
    tdm_device *dev;
    int ndev;
    tdm_settings settings; /* resolved once at open; devices point to it */
    tdm_err warnings;      /* only its message: the devices skipped at open */
};

/* Whether the ';'-separated list `names` holds `name` exactly. */
static int has_kernel(const char *names, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = names; (p = strstr(p, name)) != NULL; p += n)
        if ((p == names || p[-1] == ';') && (p[n] == ';' || p[n] == '\0'))
            return 1;
    return 0;
}

/* The preferred work-group multiple, read from tdm_first_kernel, else (a
 * caller's own source) from the program's first kernel. Not simply the
 * first: rusticl lists a program's kernels in an order that changes from
 * one process to the next (a hash map's), and creating a kernel there
 * compiles it; when the first was a compressed cursors' kernel (no_zcur)
 * the engine open spun for minutes past 3 GB (test_sched, 2 runs in 4). */
static size_t probe_wg_multiple(tdm_device *d)
{
    size_t m = 0, len = 0;
    char *names = NULL;
    if (clGetProgramInfo(d->program, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &len) != CL_SUCCESS ||
        !(names = calloc(len + 1, 1)) ||
        clGetProgramInfo(d->program, CL_PROGRAM_KERNEL_NAMES, len, names, NULL) != CL_SUCCESS) {
        free(names);
        return 0;
    }
    char *semi = strchr(names, ';');
    if (has_kernel(names, "tdm_first_kernel"))
        strcpy(names, "tdm_first_kernel"); /* it is in the list: room for it */
    else if (semi)
        *semi = '\0';
    cl_int rc;
    cl_kernel k = clCreateKernel(d->program, names, &rc);
    free(names);
    if (rc != CL_SUCCESS)
        return 0;
    clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof m,
                             &m, NULL);
    clReleaseKernel(k);
    return m;
}

static void device_release(tdm_device *d)
{
    if (d->hung) {
        /* Its queues may never drain, and releasing or finishing them could
         * wait as long: they, the context and the program are abandoned.
         * Host memory goes (a stuck command holds its own kernel reference). */
        tdm_kcache_free(d->kcache);
        tdm_probe_free(d->probe);
        tdm_serial_free(d);
        free((char *)d->info.extensions);
        memset(d, 0, sizeof *d);
        return;
    }
    tdm_device_stop(d);
    tdm_serial_free(d);
    if (d->program) clReleaseProgram(d->program);
    if (d->queue) clReleaseCommandQueue(d->queue);
    if (d->ctx) clReleaseContext(d->ctx);
    free((char *)d->info.extensions);
    memset(d, 0, sizeof *d);
}

static int build_kernels(tdm_device *d, const tdm_settings *s, tdm_err *err)
{
    char options[2048];
    tdm_build_options(&d->info, d->wg_size, d->nv_shuffle, s->build_options, options,
                      sizeof options);
    tdm_cache_cfg cache;
    tdm_cache_config(s, &d->info, &cache);
    const char *src = s->kernel_source ? s->kernel_source : tdm_kernels_source;
    size_t len = s->kernel_source ? s->kernel_source_len : tdm_kernels_source_len;
    return tdm_program_get(&cache, d->ctx, d->id, &d->info, src, len, options, &d->program,
                           &d->from_cache, err);
}

static int device_init(tdm_device *d, const tdm_found_device *f, size_t index,
                       const tdm_settings *s, tdm_err *err)
{
    cl_int rc;
    memset(d, 0, sizeof *d);
    d->platform = f->platform;
    d->id = f->device;
    d->info = f->info;
    d->settings = s;
    if (!(d->info.extensions = strdup(f->info.extensions)))
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory opening a device");
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)f->platform, 0};
    d->ctx = clCreateContext(props, 1, &d->id, NULL, NULL, &rc);
    if (rc != CL_SUCCESS)
        return tdm_cl_fail(err, rc, "clCreateContext");
    int st = tdm_queue_create(d, &d->queue, err);
    if (st == TDM_OK)
        st = tdm_device_start(d, err); /* transfer queue, kernel pool, probes */
    if (st != TDM_OK)
        return st;
    d->wg_size = tdm_choose_wg_size(s, &d->info);
    d->nv_shuffle = tdm_nv_shuffle_ok(s, d->id, &d->info);
    st = build_kernels(d, s, err);
    if (st == TDM_ERR_BUILD && d->nv_shuffle) {
        /* a driver that rejects the inline PTX still gets the portable kernels */
        d->nv_shuffle = 0;
        tdm_err_clear(err);
        st = build_kernels(d, s, err);
    }
    if (st != TDM_OK)
        return st;
    d->info.preferred_wg_multiple = probe_wg_multiple(d);
    d->launch_guard = tdm_launch_guard_needed(&d->info, s);
    d->no_zcur = strstr(d->info.platform, "rusticl") != NULL;
    if ((st = tdm_serial_init(d, err)) != TDM_OK)
        return st;
    if (s->kernel_source_copy) /* a caller's own kernels: no tdm_first_kernel in them */
        return TDM_OK;
    st = tdm_first_kernel_run(d, s->first_kernel_ms, s->test_hang == (long)index, err);
    d->hung = st == TDM_ERR_TIMEOUT;
    return st;
}

/* One chosen device's open (open_devices): device_init on a thread of its
 * own, into a slot of the engine's array that no other job touches. */
typedef struct open_job {
    tdm_device *dev;
    const tdm_found_device *found;
    const tdm_settings *settings;
    size_t index;     /* in discovery order: the warnings name it */
    int st;
    tdm_err err;
    pthread_t thread;
    int threaded;     /* st and err are ready after pthread_join */
} open_job;

static void *open_job_run(void *arg)
{
    open_job *j = arg;
    j->st = device_init(j->dev, j->found, j->index, j->settings, &j->err);
    if (j->st != TDM_OK)
        device_release(j->dev);
    return NULL;
}

/* Starts job j on a thread; a thread that cannot be made (or a stack size
 * that cannot be set) runs it here instead, so the open never fails for it.
 * LLVM-based compilers recurse deeply: at least 8 MiB of stack, as a main
 * thread usually has (musl's default is 128 KiB). */
static void open_job_start(open_job *j)
{
    pthread_attr_t attr;
    size_t stack = 0;
    if (pthread_attr_init(&attr) == 0) {
        if (pthread_attr_getstacksize(&attr, &stack) == 0 && stack < ((size_t)8 << 20))
            pthread_attr_setstacksize(&attr, (size_t)8 << 20);
        j->threaded = pthread_create(&j->thread, &attr, open_job_run, j) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!j->threaded)
        open_job_run(j);
}

/* Takes job j's result into the engine, after the earlier jobs' (discovery
 * order): a device opened goes to the next free slot (down over a failed,
 * released one's: a tdm_device holds no pointer into itself, so it may
 * move), a failure to the warnings. */
static void open_job_take(tdm_engine *e, open_job *j, int *first_fail)
{
    if (j->threaded)
        pthread_join(j->thread, NULL);
    if (j->st == TDM_OK) {
        if (j->dev != &e->dev[e->ndev]) {
            e->dev[e->ndev] = *j->dev;
            memset(j->dev, 0, sizeof *j->dev);
        }
        e->ndev++;
    } else {
        if (*first_fail == TDM_OK)
            *first_fail = j->st;
        tdm_err_append(&e->warnings, "%sdevice [%zu] %s (%s) skipped: %s: %s",
                       e->warnings.msg ? "\n" : "", j->index, j->found->info.name,
                       j->found->info.platform, tdm_strerror(j->st), tdm_err_msg(&j->err));
    }
    tdm_err_clear(&j->err);
}

/* Opens every chosen device, each on a thread of its own when there are
 * several (a cold build takes seconds on PoCL and over a minute on NVIDIA's
 * driver; each device has its own context, queues and program), then takes
 * the results in discovery order, so e->dev, the warnings and the error are
 * those of a one-by-one open. A device that fails is skipped and named in
 * the engine's warnings, so one broken driver does not take the others
 * down. */
static int open_devices(tdm_engine *e, const tdm_found_device *found, size_t n,
                        const unsigned char *chosen, tdm_err *err)
{
    size_t nj = 0;
    for (size_t i = 0; i < n; i++)
        nj += chosen[i] != 0;
    open_job *jobs = calloc(nj ? nj : 1, sizeof *jobs);
    if (!jobs)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory opening the engine");
    for (size_t i = 0, j = 0; i < n; i++)
        if (chosen[i]) {
            jobs[j] = (open_job){.dev = &e->dev[j], .found = &found[i],
                                 .settings = &e->settings, .index = i};
            j++;
        }
    for (size_t j = 0; j < nj; j++) {
        if (nj > 1)
            open_job_start(&jobs[j]);
        else
            open_job_run(&jobs[j]); /* one device: no thread */
    }
    int first_fail = TDM_OK;
    for (size_t j = 0; j < nj; j++)
        open_job_take(e, &jobs[j], &first_fail);
    free(jobs);
    if (e->ndev == 0)
        return tdm_err_set(err, first_fail != TDM_OK ? first_fail : TDM_ERR_NO_DEVICE,
                           "no selected device could be opened:\n%s",
                           tdm_err_msg(&e->warnings));
    return TDM_OK;
}

void tdm_engine_options_init(tdm_engine_options *o)
{
    tdm_api_enter();
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->cache_mode = TDM_CACHE_DEFAULT;
    o->nv_shuffle = -1;
    o->batch_window_us = -1;
    o->calibrate = -1;
}

/* The caller's options over the defaults, as far as the caller's struct goes. */
static int copy_options(const tdm_engine_options *opts, tdm_engine_options *o, tdm_err *err)
{
    tdm_engine_options_init(o);
    if (!opts)
        return TDM_OK;
    if (opts->struct_size < offsetof(tdm_engine_options, devices) + sizeof opts->devices ||
        opts->struct_size > sizeof *o)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "tdm_engine_open: options struct_size %zu is not that of a "
                           "tdm_engine_options (%zu): initialise it with tdm_engine_options_init",
                           opts->struct_size, sizeof *o);
    memcpy(o, opts, opts->struct_size);
    return TDM_OK;
}

static int open_engine(const tdm_engine_options *opts, tdm_engine *e, tdm_err *err)
{
    tdm_engine_options o;
    tdm_found_device *found = NULL;
    unsigned char *chosen = NULL;
    size_t n = 0;
    int st = copy_options(opts, &o, err);
    if (st == TDM_OK)
        st = tdm_settings_resolve(&o, &e->settings, err);
    if (st == TDM_OK)
        st = tdm_discover(&found, &n, err);
    if (st == TDM_OK) {
        chosen = calloc(n ? n : 1, 1);
        e->dev = calloc(n ? n : 1, sizeof *e->dev);
        if (!chosen || !e->dev)
            st = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory opening the engine");
    }
    if (st == TDM_OK)
        st = tdm_select_devices(e->settings.devices, e->settings.devices_from, found, n,
                                chosen, err);
    if (st == TDM_OK)
        st = open_devices(e, found, n, chosen, err);
    free(found);
    free(chosen);
    return st;
}

int tdm_engine_open(const tdm_engine_options *opts, tdm_engine **out)
{
    tdm_api_enter();
    if (!out)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_engine_open: out is NULL");
    *out = NULL;
    tdm_engine *e = calloc(1, sizeof *e);
    if (!e)
        return tdm_api_fail(TDM_ERR_NOMEM, "out of memory opening the engine");
    tdm_err err = {0};
    int st = open_engine(opts, e, &err);
    if (st != TDM_OK) {
        tdm_engine_close(e);
        return tdm_api_fail_err(&err, st);
    }
    *out = e;
    return tdm_api_result(TDM_OK, &err);
}

void tdm_engine_close(tdm_engine *e)
{
    tdm_api_enter();
    if (!e)
        return;
    for (int i = 0; i < e->ndev; i++)
        device_release(&e->dev[i]);
    free(e->dev);
    tdm_settings_free(&e->settings);
    tdm_err_clear(&e->warnings);
    free(e);
}

const char *tdm_engine_warnings(const tdm_engine *e)
{
    tdm_api_enter();
    return e ? tdm_err_msg(&e->warnings) : "";
}

int tdm_engine_device_count(const tdm_engine *e)
{
    tdm_api_enter();
    return e ? e->ndev : 0;
}

static int bad_device(const tdm_engine *e, int i, const char *fn)
{
    if (!e)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "%s: engine is NULL", fn);
    return tdm_api_fail(TDM_ERR_INVALID_ARG, "%s: device %d is out of range (the engine has %d)",
                        fn, i, e->ndev);
}

int tdm_engine_device_info_get(const tdm_engine *e, int i, tdm_device_info *info)
{
    tdm_api_enter();
    if (!e || i < 0 || i >= e->ndev)
        return bad_device(e, i, "tdm_engine_device_info_get");
    if (!info)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_engine_device_info_get: info is NULL");
    *info = e->dev[i].info;
    return TDM_OK;
}

int tdm_engine_device_cached(const tdm_engine *e, int i)
{
    tdm_api_enter();
    if (!e || i < 0 || i >= e->ndev)
        return bad_device(e, i, "tdm_engine_device_cached");
    return e->dev[i].from_cache;
}

tdm_device *tdm_engine_device(tdm_engine *e, int i)
{
    return e && i >= 0 && i < e->ndev ? &e->dev[i] : NULL;
}
