/* File helpers: whole-file reads, atomic writes, the output-path guard,
 * mkdir -p. Thread-safe. */
#ifndef TDM_COMMON_FSUTIL_H
#define TDM_COMMON_FSUTIL_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"

/* Reads a whole regular file; returns a malloc'd buffer (caller frees) or
 * NULL with errno set (EINVAL: not a regular file; a FIFO never blocks).
 * *size gets its length. */
unsigned char *tdm_read_file(const char *path, size_t *size);

/* Writes the concatenation of `n` parts to `path` through a temporary file
 * in the same directory (tempfile.h), fsync and rename, so the file is
 * either the old one or the whole new one. Returns 0, or -1 with errno set. */
int tdm_write_file_atomic(const char *path, const void *const *parts, const size_t *sizes,
                          size_t n);

/* The guard every writer runs before it writes anything: whether `out` may
 * be created or replaced by a writer that reads `inputs` (NULL entries and
 * paths that do not exist are skipped; "-" is standard input). `out` must
 * be a non-empty path; if it exists it must be a regular file (not a
 * directory, device node, FIFO or socket: a rename over it would destroy
 * it) and not the same file (st_dev and st_ino) as any input. Writes
 * nothing. Returns TDM_OK, or TDM_ERR_INVALID_ARG with a message naming
 * `out` (and the input). */
int tdm_output_check(const char *out, const char *const *inputs, size_t ninputs,
                     tdm_err *err);

/* A stream that becomes `path` only when complete: writes go to a temporary
 * file in the same directory, renamed over `path` by tdm_outfile_commit; on
 * any failure (or tdm_outfile_abort) the temporary file is removed and an
 * existing `path` is left as it was. Errors name `path`, not the temporary. */
typedef struct tdm_outfile {
    FILE *f;
    char *path, *tmp;
} tdm_outfile;

/* Opens the temporary file (tempfile.h: an unpredictable name, created
 * exclusively, mode 0644 less the umask; what dead processes left next to
 * `path` is removed first). */
int tdm_outfile_open(tdm_outfile *o, const char *path, tdm_err *err);
/* Flushes, checks for write errors, fsyncs, closes and renames; always
 * releases `o`. */
int tdm_outfile_commit(tdm_outfile *o, tdm_err *err);
/* Closes and removes the temporary file; accepts a zeroed or released `o`. */
void tdm_outfile_abort(tdm_outfile *o);

/* Creates a directory and its parents (mode 0755); 0 if it exists after. */
int tdm_mkdirs(const char *dir);

#endif
