/* Launch guard for PoCL's CPU drivers (docs/SCHED.md, "PoCL's work-group
 * function cache").
 *
 * The bug. PoCL's CPU drivers (pthread, basic, ...) keep one process-wide
 * cache of loaded work-group functions (lib/CL/devices/common.c:
 * pocl_check_kernel_dlhandle_cache / pocl_release_dlhandle_cache). An item
 * is keyed by the kernel's hash (program build and kernel name: the same for
 * two identical PoCL devices), the local size, whether the global offset is
 * zero and the widest grid it serves (max_grid_dim_width). When a command is
 * prepared, the first item that matches all of those is taken (ref_count++)
 * and moved to the front; a launch whose grid is wider than every item's
 * gets a new item, at the front. When the command completes, the release
 * looks the item up again by hash and local size only, and decrements the
 * first it finds. So a command prepared while another command of the same
 * kernel and local size is in flight, with a grid wider than that one's
 * item, makes the other's release decrement the new item: one item's count
 * leaks, the other's goes below its users and the second release aborts:
 *   pocl_release_dlhandle_cache: Assertion `found->ref_count > 0' failed.
 * PoCL 3.1's pthread driver takes two references per command (it calls the
 * check twice) and releases one, which hides this unless three or more
 * commands of the kernel are in flight when a wider one is prepared (seen
 * here with 16 worker threads: POCL_MAX_PTHREAD_COUNT=16); PoCL 5.0 takes
 * one, and two lanes running the same kernels on the 16-core GPU machine
 * aborted test_sched_batch every time. Later PoCL sources release the item
 * the command took (kept in the command's device_data); the release that
 * fixed it is not pinned down, so the guard is on for every PoCL CPU device
 * (TANDEM_LAUNCH_GUARD=off turns it off).
 *
 * The guard. Within one in-order queue PoCL prepares a command only after
 * the previous one completed (and was released), so the hazard needs two
 * queues. The guard keeps every launch of one (kernel name, local size) in
 * flight on one queue at a time, process-wide (PoCL's cache is): a launch on
 * another queue waits until they have completed. Then at most one command
 * of a kernel and local size is between its prepare and its release, and
 * the release finds the item the command took. Keyed by name rather than by
 * PoCL's hash, so two programs with a kernel of the same name share a slot
 * (more waiting, never less). Cost: a mutex and a completion callback per
 * launch; a wait only when two queues launch the same kernel at once (two
 * PoCL lanes, or a profiled and an unprofiled run on one device). */
#include "launch_guard.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 1024 /* (name, local) pairs: kernels.cl has about 50 kernels */

typedef struct slot {
    char *name;         /* NULL: free */
    size_t local;
    cl_command_queue q; /* the queue of the launches in flight, when inflight > 0 */
    unsigned inflight;
} slot;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static slot tab[SLOTS];
static size_t waits;

int tdm_launch_guard_needed(const tdm_device_info *info, const tdm_settings *s)
{
    return s && s->launch_guard && tdm_is_pocl(info) && info->type == TDM_DEVICE_CPU;
}

static size_t hash(const char *name, size_t local)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    h = (h ^ local) * 1099511628211ull;
    return (size_t)(h % SLOTS);
}

/* The slot of (name, local), made if new. With the table full (or no memory
 * for the name) the key shares its first probed slot with whatever key holds
 * it: those two then wait for each other, which is safe. Under mu. */
static int find(const char *name, size_t local)
{
    size_t h = hash(name, local);
    for (size_t i = 0; i < SLOTS; i++) {
        slot *s = &tab[(h + i) % SLOTS];
        if (!s->name) {
            if (!(s->name = strdup(name)))
                return (int)h;
            s->local = local;
            return (int)((h + i) % SLOTS);
        }
        if (s->local == local && strcmp(s->name, name) == 0)
            return (int)((h + i) % SLOTS);
    }
    return (int)h;
}

int tdm_launch_guard_enter(cl_command_queue q, const char *name, size_t local)
{
    pthread_mutex_lock(&mu);
    int i = find(name, local);
    slot *s = &tab[i];
    if (s->inflight && s->q != q) {
        waits++;
        /* PoCL submits a command when it is enqueued, so the other queue's
           launches complete without its threads' help (they may be this
           thread's own: e.g. a profiled launch after an unprofiled one) */
        while (s->inflight && s->q != q)
            pthread_cond_wait(&cv, &mu);
    }
    s->q = q;
    s->inflight++;
    pthread_mutex_unlock(&mu);
    return i;
}

void tdm_launch_guard_left(int i)
{
    pthread_mutex_lock(&mu);
    if (tab[i].inflight && --tab[i].inflight == 0)
        pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

/* PoCL calls it after the command's release of its cache item. */
static void CL_CALLBACK on_complete(cl_event e, cl_int status, void *user)
{
    (void)e;
    (void)status;
    tdm_launch_guard_left((int)(intptr_t)user);
}

void tdm_launch_guard_armed(int i, cl_event e)
{
    cl_int status = CL_QUEUED;
    if (clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL) ==
            CL_SUCCESS && status <= CL_COMPLETE) {
        tdm_launch_guard_left(i); /* done already: not every driver calls back then */
        return;
    }
    tdm_event_flush(e);
    if (clSetEventCallback(e, CL_COMPLETE, on_complete, (void *)(intptr_t)i) != CL_SUCCESS) {
        clWaitForEvents(1, &e);
        tdm_launch_guard_left(i);
    }
}

size_t tdm_launch_guard_waits(void)
{
    pthread_mutex_lock(&mu);
    size_t n = waits;
    pthread_mutex_unlock(&mu);
    return n;
}
