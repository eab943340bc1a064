/* Checksums recomputed over a damaged index (header-only), for the tests
 * and fuzz targets that must get a damage past the checksums into the
 * structural checks and the kernels: what a forged file, not a flipped bit,
 * looks like; and a version 2 file made from a version 3 one. */
#ifndef TDM_TEST_FORGE_H
#define TDM_TEST_FORGE_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/fsutil.h"
#include "index/format.h"

/* Where the header ends: the file's own header size where it is a known
 * version's (version 2's is shorter), else the current one's. */
static inline size_t forge_header_size(const unsigned char *b, size_t n)
{
    uint32_t hs = 0;
    if (n >= 16)
        memcpy(&hs, b + 12, 4);
    return hs == TDM_IDX_HEADER_V2 ? hs : sizeof(tdm_idx_header);
}

/* Every section's checksum (those inside the buffer) and the header's. */
static inline void forge_sums(unsigned char *b, size_t n)
{
    size_t hs = forge_header_size(b, n);
    size_t table = hs + TDM_SEC_COUNT * sizeof(tdm_idx_section_entry);
    if (n < table || n < sizeof(tdm_idx_header))
        return;
    tdm_idx_section_entry *s = (tdm_idx_section_entry *)(b + hs);
    for (int i = 0; i < TDM_SEC_COUNT; i++)
        if (s[i].offset <= n && s[i].size <= n - s[i].offset)
            s[i].checksum = XXH64(b + s[i].offset, s[i].size, 0);
    tdm_idx_header *h = (tdm_idx_header *)b;
    h->file_size = n;
    h->checksum = 0;
    h->checksum = XXH64(b, table, 0);
}

/* A version 3 index (plain or shard) rewritten in place as version 2 wrote
 * it: the header's first 160 bytes, an impact index's rule back in k1 and
 * b, the section table moved up to offset 160. The sections stay where they
 * are: both versions put the first one at the same multiple of 64. */
static inline void forge_v2(unsigned char *b, size_t n)
{
    tdm_idx_header h;
    if (n < sizeof h)
        return;
    memcpy(&h, b, sizeof h);
    size_t table = (size_t)h.nsections * sizeof(tdm_idx_section_entry);
    if (h.nsections > TDM_SEC_SHARD_COUNT || n < sizeof h + table)
        return;
    memmove(b + TDM_IDX_HEADER_V2, b + sizeof h, table);
    memset(b + TDM_IDX_HEADER_V2 + table, 0, sizeof h - TDM_IDX_HEADER_V2);
    if (h.flags & TDM_IDX_FLAG_IMPACT) {
        h.k1 = h.quant_scale;
        h.b = h.quant_max;
    }
    h.version = 2;
    h.header_size = TDM_IDX_HEADER_V2;
    h.checksum = 0;
    memcpy(b, &h, TDM_IDX_HEADER_V2);
    h.checksum = XXH64(b, TDM_IDX_HEADER_V2 + table, 0);
    memcpy(b + offsetof(tdm_idx_header, checksum), &h.checksum, 8);
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
