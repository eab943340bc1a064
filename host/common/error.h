/* Error plumbing.
 *
 * Internally a failing function fills a caller-provided tdm_err (a status
 * plus a heap message); a tdm_err belongs to one thread at a time.
 * The public layer (the TDM_API functions) publishes the outcome into the
 * calling thread's last error, which tdm_last_error()/tdm_last_status()
 * read: tdm_api_enter() on entry, tdm_api_fail*() on every failure path,
 * tdm_api_result() to finish a call that used a tdm_err. */
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

/* ---- what a failure reaches (tdm_err_reach): the one classifier every
 * layer asks to tell a request's own failure from its batch's, and a run
 * that may pass on another try from a device that is gone. Ordered: a
 * larger reach takes down more. */
enum tdm_err_reach {
    TDM_REACH_REQUEST = 0, /* the request's own: its input, its index data, a limit */
    TDM_REACH_BUG = 1,     /* TDM_ERR_INTERNAL, a bug of tandem's: the work that raised it
                              (a query's preparation: that query; a device run: the run),
                              and another run may pass */
    TDM_REACH_HOST = 2,    /* host memory: the whole run, and no device does better */
    TDM_REACH_RUN = 3,     /* device memory: the whole run; another run may pass */
    TDM_REACH_DEVICE = 4,  /* the device failed (OpenCL, build, none): retire it */
};
/* The reach of status `code` (TDM_OK: TDM_REACH_REQUEST). */
int tdm_err_reach(int code);

/* ---- the thread-local last error of the public API (error.c) */

/* Clears the calling thread's last error; every public function calls it first. */
void tdm_api_enter(void);
/* Sets the calling thread's last error to `code` and a printf-style message;
 * returns `code`. */
int tdm_api_fail(int code, const char *fmt, ...) TDM_PRINTF(2, 3);
/* Publishes `code` with e's message (tdm_strerror(code) if it has none) as
 * the last error, clears e and returns `code`. */
int tdm_api_fail_err(tdm_err *e, int code);
/* The end of a public call that used a tdm_err: TDM_OK clears e and returns
 * TDM_OK (the last error stays clear); anything else is tdm_api_fail_err. */
int tdm_api_result(int code, tdm_err *e);

#endif
