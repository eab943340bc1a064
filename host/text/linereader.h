/* Buffered line reading over zlib (gzip or plain, file or stdin), with the
 * bytes consumed for progress reports. A UTF-8 byte-order mark at the start
 * is skipped; a NUL byte (a binary file) and a truncated gzip stream are
 * errors naming the file and line. */
#ifndef TDM_TEXT_LINEREADER_H
#define TDM_TEXT_LINEREADER_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define TDM_LINE_MAX ((size_t)256 << 20)  /* longer lines are an error */

typedef struct tdm_linereader tdm_linereader;

int tdm_lr_open(const char *path, tdm_linereader **out, tdm_err *err);
void tdm_lr_close(tdm_linereader *lr);
/* The next line without its "\n" (or "\r\n"), NUL-terminated at (*line)[*len];
 * 1 on success, 0 at the end, < 0 on error. The line is valid until the next call. */
int tdm_lr_next(tdm_linereader *lr, char **line, size_t *len, tdm_err *err);
/* The first up-to-n bytes of the input without consuming them (for guessing). */
size_t tdm_lr_peek(tdm_linereader *lr, const char **p, tdm_err *err);
uint64_t tdm_lr_lineno(const tdm_linereader *lr);
uint64_t tdm_lr_bytes(const tdm_linereader *lr);
const char *tdm_lr_path(const tdm_linereader *lr);

#endif
