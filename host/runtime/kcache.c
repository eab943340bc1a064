/* Kernels created once per device and name and lent to one thread at a time
 * (runtime.h says why a locked pool). A handful of kernel names and threads
 * per device: a linear scan under one lock is enough. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "kcache.h"

typedef struct kslot {
    char *name;
    cl_kernel k;
    size_t max_wg; /* CL_KERNEL_WORK_GROUP_SIZE on this device */
    int lent;
} kslot;

struct tdm_kcache {
    pthread_mutex_t lock;
    kslot *slot;
    size_t n, cap;
};

int tdm_kcache_new(tdm_device *d, struct tdm_kcache **out, tdm_err *err)
{
    (void)d;
    struct tdm_kcache *c = calloc(1, sizeof *c);
    if (!c || pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        *out = NULL;
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for a kernel pool");
    }
    *out = c;
    return TDM_OK;
}

void tdm_kcache_clear(struct tdm_kcache *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n; i++) {
        clReleaseKernel(c->slot[i].k);
        free(c->slot[i].name);
    }
    c->n = 0;
    pthread_mutex_unlock(&c->lock);
}

void tdm_kcache_free(struct tdm_kcache *c)
{
    if (!c)
        return;
    tdm_kcache_clear(c);
    free(c->slot);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* A free kernel of that name, marked lent, or NULL. Under the lock. */
static cl_kernel take(struct tdm_kcache *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (!c->slot[i].lent && strcmp(c->slot[i].name, name) == 0) {
            c->slot[i].lent = 1;
            return c->slot[i].k;
        }
    return NULL;
}

/* Adds a lent kernel; 0 when out of memory. Under the lock. */
static int add(struct tdm_kcache *c, const char *name, cl_kernel k, size_t max_wg)
{
    kslot *s = tdm_array_grow(c->slot, &c->cap, c->n + 1, sizeof *s);
    if (!s)
        return 0;
    c->slot = s;
    char *copy = strdup(name);
    if (!copy)
        return 0;
    c->slot[c->n++] = (kslot){.name = copy, .k = k, .max_wg = max_wg, .lent = 1};
    return 1;
}

int tdm_kernel_borrow(tdm_device *d, const char *name, cl_kernel *out, tdm_err *err)
{
    struct tdm_kcache *c = d->kcache;
    pthread_mutex_lock(&c->lock);
    *out = take(c, name);
    pthread_mutex_unlock(&c->lock);
    if (*out)
        return TDM_OK;
    /* Created outside the lock: creation may take a while on some drivers. */
    cl_int rc;
    cl_kernel k = clCreateKernel(d->program, name, &rc);
    if (rc != CL_SUCCESS) {
        tdm_cl_fail(err, rc, "clCreateKernel");
        tdm_err_append(err, " for kernel '%s' on %s", name, d->info.name);
        return err->code;
    }
    /* The specification's limits of this kernel on this device, read once:
     * its largest work-group (may be below the device's: registers) and
     * its local memory, which must fit the device's. */
    size_t max_wg = 0;
    cl_ulong lmem = 0;
    if (clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_wg, &max_wg,
                                 NULL) != CL_SUCCESS)
        max_wg = 0; /* unknown: the launch's own check decides */
    /* rusticl 22.x answers its subgroup size (32 on llvmpipe) for every
     * kernel, even one without local memory or barriers, yet runs groups up to
     * the device's maximum (seen on 22.3.6, answers equal to PoCL's): that
     * value is no limit, so the device's decides (HACKING.md, portability). */
    int rusticl22 = strstr(d->info.platform, "rusticl") &&
                    strncmp(d->info.driver_version, "22.", 3) == 0;
    if (rusticl22)
        max_wg = 0;
    /* rusticl 22.x's local memory figure is not the kernel's either (66,560
     * bytes for tdm_jobs_pfor, which declares 26,624: its lowering counts
     * each inlined use), and llvmpipe runs it (answers equal to the
     * reference): no limit there either */
    if (!rusticl22 &&
        clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL) ==
            CL_SUCCESS && d->info.local_mem_bytes && lmem > d->info.local_mem_bytes) {
        clReleaseKernel(k);
        return tdm_err_set(err, TDM_ERR_UNSUPPORTED,
                           "kernel '%s' needs %llu bytes of local memory; %s has %llu", name,
                           (unsigned long long)lmem, d->info.name,
                           (unsigned long long)d->info.local_mem_bytes);
    }
    pthread_mutex_lock(&c->lock);
    int ok = add(c, name, k, max_wg);
    pthread_mutex_unlock(&c->lock);
    if (!ok) {
        clReleaseKernel(k);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for kernel '%s'", name);
    }
    *out = k;
    return TDM_OK;
}

void tdm_kernel_return(tdm_device *d, cl_kernel k)
{
    struct tdm_kcache *c = d->kcache;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n; i++)
        if (c->slot[i].k == k) {
            c->slot[i].lent = 0;
            break;
        }
    pthread_mutex_unlock(&c->lock);
}

size_t tdm_kernel_max_wg(tdm_device *d, cl_kernel k)
{
    struct tdm_kcache *c = d->kcache;
    size_t m = 0;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n; i++)
        if (c->slot[i].k == k) {
            m = c->slot[i].max_wg;
            break;
        }
    pthread_mutex_unlock(&c->lock);
    return m;
}

size_t tdm_kernel_wg_limit(tdm_device *d, const char *name)
{
    cl_kernel k;
    tdm_err err = {0};
    if (tdm_kernel_borrow(d, name, &k, &err) != TDM_OK) {
        tdm_err_clear(&err);
        return 0;
    }
    size_t m = tdm_kernel_max_wg(d, k);
    tdm_kernel_return(d, k);
    return m;
}

size_t tdm_kcache_count(tdm_device *d, const char *name)
{
    struct tdm_kcache *c = d->kcache;
    size_t count = 0;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n; i++)
        count += strcmp(c->slot[i].name, name) == 0;
    pthread_mutex_unlock(&c->lock);
    return count;
}
