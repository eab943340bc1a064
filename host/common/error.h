/* Per-handle error state: a status code plus a heap message with the detail.
 * Every handle that can fail embeds one tdm_err. Not thread-safe: it lives
 * inside a handle that is used by one thread at a time. */
#ifndef TDM_COMMON_ERROR_H
#define TDM_COMMON_ERROR_H

#include <stdarg.h>

#if defined(__GNUC__)
#define TDM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TDM_PRINTF(f, a)
#endif

typedef struct tdm_err {
    int code;   /* last status, TDM_OK if none */
    char *msg;  /* owned; NULL means "" */
} tdm_err;

/* Sets code and message (printf-style) and returns `code`, so that a failing
 * path reads `return tdm_err_set(&h->err, TDM_ERR_IO, "open %s: %s", ...)`. */
int tdm_err_set(tdm_err *e, int code, const char *fmt, ...) TDM_PRINTF(3, 4);
int tdm_err_vset(tdm_err *e, int code, const char *fmt, va_list ap);
/* Appends text to the current message (e.g. a compiler log). Keeps the code. */
void tdm_err_append(tdm_err *e, const char *fmt, ...) TDM_PRINTF(2, 3);
/* Copies src's code and message into dst; returns the code. */
int tdm_err_copy(tdm_err *dst, const tdm_err *src);
void tdm_err_clear(tdm_err *e);
/* The message, "" if none; owned by `e`. */
const char *tdm_err_msg(const tdm_err *e);

#endif
