/* Checksums recomputed over a damaged index (header-only), for the tests
 * and fuzz targets that must get a damage past the checksums into the
 * structural checks and the kernels: what a forged file, not a flipped bit,
 * looks like. */
#ifndef TDM_TEST_FORGE_H
#define TDM_TEST_FORGE_H

#include <stdio.h>
#include <stdlib.h>
#include <xxhash.h>

#include "common/fsutil.h"
#include "index/format.h"

/* Every section's checksum (those inside the buffer) and the header's. */
static inline void forge_sums(unsigned char *b, size_t n)
{
    size_t table = sizeof(tdm_idx_header) + TDM_SEC_COUNT * sizeof(tdm_idx_section_entry);
    if (n < table)
        return;
    tdm_idx_section_entry *s = (tdm_idx_section_entry *)(b + sizeof(tdm_idx_header));
    for (int i = 0; i < TDM_SEC_COUNT; i++)
        if (s[i].offset <= n && s[i].size <= n - s[i].offset)
            s[i].checksum = XXH64(b + s[i].offset, s[i].size, 0);
    tdm_idx_header *h = (tdm_idx_header *)b;
    h->file_size = n;
    h->checksum = 0;
    h->checksum = XXH64(b, table, 0);
}

/* The same on a file, in place; 0 on success. */
static inline int forge_file(const char *path)
{
    size_t n;
    unsigned char *b = tdm_read_file(path, &n);
    if (!b)
        return -1;
    forge_sums(b, n);
    FILE *f = fopen(path, "r+b");
    int rc = f && fwrite(b, 1, n, f) == n ? 0 : -1;
    if (f && fclose(f))
        rc = -1;
    free(b);
    return rc;
}

#endif
