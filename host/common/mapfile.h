/* Read-only memory maps of whole files, for the index and importers. */
#ifndef TDM_COMMON_MAPFILE_H
#define TDM_COMMON_MAPFILE_H

#include <stddef.h>

#include "error.h"

/* Maps the regular file `path` read-only. On success *map is the mapping
 * (NULL for an empty file) of *size bytes, released with tdm_unmap_file.
 * Errors: TDM_ERR_NOT_FOUND, TDM_ERR_IO, each naming the path. Thread-safe. */
int tdm_map_file(const char *path, void **map, size_t *size, tdm_err *err);

/* Releases a mapping from tdm_map_file. Accepts NULL. */
void tdm_unmap_file(void *map, size_t size);

#endif
