/* Small OpenCL helpers shared by every kernel driver. */
#include <pthread.h>

#include "runtime.h"

const char *tdm_cl_errname(cl_int code)
{
    switch (code) {
#define E(x) case x: return #x
    E(CL_SUCCESS); E(CL_DEVICE_NOT_FOUND); E(CL_DEVICE_NOT_AVAILABLE);
    E(CL_COMPILER_NOT_AVAILABLE); E(CL_MEM_OBJECT_ALLOCATION_FAILURE);
    E(CL_OUT_OF_RESOURCES); E(CL_OUT_OF_HOST_MEMORY); E(CL_PROFILING_INFO_NOT_AVAILABLE);
    E(CL_MEM_COPY_OVERLAP); E(CL_IMAGE_FORMAT_MISMATCH); E(CL_IMAGE_FORMAT_NOT_SUPPORTED);
    E(CL_BUILD_PROGRAM_FAILURE); E(CL_MAP_FAILURE); E(CL_MISALIGNED_SUB_BUFFER_OFFSET);
    E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST); E(CL_COMPILE_PROGRAM_FAILURE);
    E(CL_LINKER_NOT_AVAILABLE); E(CL_LINK_PROGRAM_FAILURE); E(CL_DEVICE_PARTITION_FAILED);
    E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE); E(CL_INVALID_VALUE); E(CL_INVALID_DEVICE_TYPE);
    E(CL_INVALID_PLATFORM); E(CL_INVALID_DEVICE); E(CL_INVALID_CONTEXT);
    E(CL_INVALID_QUEUE_PROPERTIES); E(CL_INVALID_COMMAND_QUEUE); E(CL_INVALID_HOST_PTR);
    E(CL_INVALID_MEM_OBJECT); E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR); E(CL_INVALID_IMAGE_SIZE);
    E(CL_INVALID_SAMPLER); E(CL_INVALID_BINARY); E(CL_INVALID_BUILD_OPTIONS);
    E(CL_INVALID_PROGRAM); E(CL_INVALID_PROGRAM_EXECUTABLE); E(CL_INVALID_KERNEL_NAME);
    E(CL_INVALID_KERNEL_DEFINITION); E(CL_INVALID_KERNEL); E(CL_INVALID_ARG_INDEX);
    E(CL_INVALID_ARG_VALUE); E(CL_INVALID_ARG_SIZE); E(CL_INVALID_KERNEL_ARGS);
    E(CL_INVALID_WORK_DIMENSION); E(CL_INVALID_WORK_GROUP_SIZE); E(CL_INVALID_WORK_ITEM_SIZE);
    E(CL_INVALID_GLOBAL_OFFSET); E(CL_INVALID_EVENT_WAIT_LIST); E(CL_INVALID_EVENT);
    E(CL_INVALID_OPERATION); E(CL_INVALID_GL_OBJECT); E(CL_INVALID_BUFFER_SIZE);
    E(CL_INVALID_MIP_LEVEL); E(CL_INVALID_GLOBAL_WORK_SIZE); E(CL_INVALID_PROPERTY);
    E(CL_INVALID_COMPILER_OPTIONS); E(CL_INVALID_LINKER_OPTIONS);
    E(CL_INVALID_DEVICE_PARTITION_COUNT); E(CL_PLATFORM_NOT_FOUND_KHR);
#undef E
    default: return "unknown OpenCL error";
    }
}

int tdm_cl_fail(tdm_err *err, cl_int code, const char *what)
{
    int st = (code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_OUT_OF_RESOURCES ||
              code == CL_INVALID_BUFFER_SIZE)
                 ? TDM_ERR_DEVICE_MEMORY
                 : TDM_ERR_OPENCL;
    return tdm_err_set(err, st, "%s: %s (%d)", what, tdm_cl_errname(code), (int)code);
}

int tdm_buffer_create(tdm_device *d, cl_mem_flags flags, size_t bytes, void *host,
                      cl_mem *out, tdm_err *err)
{
    cl_int rc;
    *out = NULL;
    if (bytes > d->info.max_alloc_bytes && d->info.max_alloc_bytes)
        return tdm_err_set(err, TDM_ERR_DEVICE_MEMORY,
                           "buffer of %zu bytes exceeds %s's largest allocation (%llu bytes)",
                           bytes, d->info.name, (unsigned long long)d->info.max_alloc_bytes);
    *out = clCreateBuffer(d->ctx, flags, bytes ? bytes : 1, host, &rc);
    if (rc != CL_SUCCESS) {
        tdm_cl_fail(err, rc, "clCreateBuffer");
        tdm_err_append(err, " (%zu bytes on %s)", bytes, d->info.name);
        return err->code;
    }
    return TDM_OK;
}

double tdm_event_seconds(cl_event ev)
{
    cl_ulong t0 = 0, t1 = 0;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) !=
            CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) !=
            CL_SUCCESS)
        return 0.0;
    return t1 > t0 ? (double)(t1 - t0) * 1e-9 : 0.0;
}

void tdm_wait_flush(cl_command_queue q, cl_uint nwait, const cl_event *wait)
{
    cl_command_queue flushed[4];
    size_t nf = 0;
    for (cl_uint i = 0; wait && i < nwait; i++) {
        cl_command_queue eq = NULL;
        if (!wait[i] || clGetEventInfo(wait[i], CL_EVENT_COMMAND_QUEUE, sizeof eq, &eq, NULL) !=
                            CL_SUCCESS || !eq || eq == q)
            continue; /* a user event has no queue; q's own are in order */
        size_t j = 0;
        while (j < nf && flushed[j] != eq)
            j++;
        if (j < nf)
            continue;
        clFlush(eq);
        if (nf < sizeof flushed / sizeof *flushed)
            flushed[nf++] = eq;
    }
}

void tdm_event_flush(cl_event e)
{
    if (e)
        tdm_wait_flush(NULL, 1, &e);
}

/* A sleeping waiter: the completion callback's last touch of it is the
 * unlock, after which the waiter may return and its stack go. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
} sleeper;

static void CL_CALLBACK wake(cl_event e, cl_int status, void *arg)
{
    (void)e;
    (void)status;
    sleeper *s = arg;
    pthread_mutex_lock(&s->mu);
    s->done = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static cl_int sleep_on(cl_command_queue q, cl_event e)
{
    sleeper s = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    cl_int rc = clFlush(q); /* a callback fires only for submitted commands */
    if (rc == CL_SUCCESS)
        rc = clSetEventCallback(e, CL_COMPLETE, wake, &s);
    if (rc != CL_SUCCESS)
        return clWaitForEvents(1, &e);
    pthread_mutex_lock(&s.mu);
    while (!s.done)
        pthread_cond_wait(&s.cv, &s.mu);
    pthread_mutex_unlock(&s.mu);
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    cl_int st = CL_COMPLETE;
    rc = clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    return rc != CL_SUCCESS ? rc : st < 0 ? st : CL_SUCCESS;
}

cl_int tdm_read_wait(cl_command_queue q, cl_mem m, size_t bytes, void *host, int asleep)
{
    if (!asleep)
        return clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
    cl_event e = NULL;
    cl_int rc = clEnqueueReadBuffer(q, m, CL_FALSE, 0, bytes, host, 0, NULL, &e);
    if (rc != CL_SUCCESS)
        return rc;
    rc = sleep_on(q, e);
    clReleaseEvent(e);
    return rc;
}
