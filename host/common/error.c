#include "error.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tandem.h"

static char *vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

int tdm_err_reach(int code)
{
    switch (code) {
    case TDM_ERR_INTERNAL:
        return TDM_REACH_BUG;
    case TDM_ERR_NOMEM:
        return TDM_REACH_HOST;
    case TDM_ERR_DEVICE_MEMORY:
        return TDM_REACH_RUN;
    case TDM_ERR_OPENCL:
    case TDM_ERR_BUILD:
    case TDM_ERR_NO_DEVICE:
        return TDM_REACH_DEVICE;
    default:
        return TDM_REACH_REQUEST;
    }
}

int tdm_err_vset(tdm_err *e, int code, const char *fmt, va_list ap)
{
    if (!e)
        return code;
    char *s = vformat(fmt, ap);
    free(e->msg);
    e->msg = s;
    e->code = code;
    return code;
}

int tdm_err_set(tdm_err *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tdm_err_vset(e, code, fmt, ap);
    va_end(ap);
    return code;
}

void tdm_err_append(tdm_err *e, const char *fmt, ...)
{
    if (!e)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *tail = vformat(fmt, ap);
    va_end(ap);
    if (!tail)
        return;
    size_t a = e->msg ? strlen(e->msg) : 0, b = strlen(tail);
    char *s = realloc(e->msg, a + b + 1);
    if (s) {
        memcpy(s + a, tail, b + 1);
        e->msg = s;
    }
    free(tail);
}

int tdm_err_copy(tdm_err *dst, const tdm_err *src)
{
    return tdm_err_set(dst, src->code, "%s", tdm_err_msg(src));
}

void tdm_err_clear(tdm_err *e)
{
    if (!e)
        return;
    free(e->msg);
    e->msg = NULL;
    e->code = TDM_OK;
}

const char *tdm_err_msg(const tdm_err *e)
{
    return e && e->msg ? e->msg : "";
}

/* ---- the thread-local last error
 *
 * Kept behind a pthread key rather than a _Thread_local pointer so that a
 * thread's message is freed when the thread exits. */

static pthread_key_t last_key;
static pthread_once_t last_once = PTHREAD_ONCE_INIT;
static int last_key_ok;

static void last_free(void *p)
{
    tdm_err *e = p;
    if (e)
        free(e->msg);
    free(e);
}

static void last_init(void) { last_key_ok = pthread_key_create(&last_key, last_free) == 0; }

/* This thread's slot; created on demand when `create` (NULL if that fails). */
static tdm_err *last_slot(int create)
{
    pthread_once(&last_once, last_init);
    if (!last_key_ok)
        return NULL;
    tdm_err *e = pthread_getspecific(last_key);
    if (!e && create && (e = calloc(1, sizeof *e)) && pthread_setspecific(last_key, e) != 0) {
        free(e);
        e = NULL;
    }
    return e;
}

void tdm_api_enter(void)
{
    tdm_err *e = last_slot(0);
    if (e && (e->code != TDM_OK || e->msg))
        tdm_err_clear(e);
}

static int publish(int code, char *msg)
{
    tdm_err *e = last_slot(1);
    if (!e) {
        free(msg);
        return code;
    }
    free(e->msg);
    e->msg = msg ? msg : strdup(tdm_strerror(code)); /* NULL on no memory: "" */
    e->code = code;
    return code;
}

int tdm_api_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(fmt, ap);
    va_end(ap);
    return publish(code, s);
}

int tdm_api_fail_err(tdm_err *e, int code)
{
    char *msg = NULL;
    if (e && e->msg && e->msg[0]) {
        msg = e->msg; /* hand the buffer over */
        e->msg = NULL;
    }
    tdm_err_clear(e);
    return publish(code, msg);
}

int tdm_api_result(int code, tdm_err *e)
{
    if (code == TDM_OK) {
        tdm_err_clear(e);
        return TDM_OK;
    }
    return tdm_api_fail_err(e, code);
}

const char *tdm_last_error(void) { return tdm_err_msg(last_slot(0)); }

int tdm_last_status(void)
{
    tdm_err *e = last_slot(0);
    return e ? e->code : TDM_OK;
}
