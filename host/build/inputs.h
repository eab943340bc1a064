/* A build's inputs as files: a directory among them stands for every regular
 * file under it, as Anserini's and Pyserini's `-input DIR` reads a
 * collection folder. */
#ifndef TDM_BUILD_INPUTS_H
#define TDM_BUILD_INPUTS_H

#include <stddef.h>

#include "common/error.h"

/* The inputs with each directory replaced by the regular files under it:
 * recursively, in byte order of their paths (so docids do not depend on the
 * file system's order), skipping names that start with '.' (hidden files
 * and directories) and entries that are neither files nor directories
 * (FIFOs, sockets, devices); symbolic links are followed, and a file
 * reached by two paths is read once, at the first. Files and "-" are kept
 * as they are, in their place. Errors (every one naming the path): a
 * directory with no file to read (TDM_ERR_NOT_FOUND); a directory or file
 * under one that cannot be read, a dangling link, a link that leads back to
 * a directory it lies in (TDM_ERR_IO); `out` inside an input directory
 * (TDM_ERR_INVALID_ARG: a rebuild would read the index as a document file).
 * *files (an array of malloc'd strings, freed with tdm_build_inputs_free)
 * and *nfiles are set on success. */
int tdm_build_inputs(const char *const *inputs, size_t ninputs, const char *out,
                     char ***files, size_t *nfiles, tdm_err *err);

void tdm_build_inputs_free(char **files, size_t nfiles);

#endif
