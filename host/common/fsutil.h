/* File helpers: whole-file reads, atomic writes, mkdir -p. Thread-safe. */
#ifndef TDM_COMMON_FSUTIL_H
#define TDM_COMMON_FSUTIL_H

#include <stddef.h>

/* Reads a whole file; returns a malloc'd buffer (caller frees) or NULL with
 * errno set. *size gets its length. */
unsigned char *tdm_read_file(const char *path, size_t *size);

/* Writes the concatenation of `n` parts to `path` through a temporary file in
 * the same directory, fsync and rename, so the file is either the old one or
 * the whole new one. Returns 0, or -1 with errno set. */
int tdm_write_file_atomic(const char *path, const void *const *parts, const size_t *sizes,
                          size_t n);

/* Creates a directory and its parents (mode 0755); 0 if it exists after. */
int tdm_mkdirs(const char *dir);

#endif
