#include "error.h"

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
