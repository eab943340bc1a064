/* A search call's packed upload (search_pack.c): the small tables a query
 * sends to the device (status word, term table, decode jobs, AND selection,
 * block bounds) live as regions of one device buffer, each a sub-buffer the
 * kernels take as before, and are staged on the host in the same layout, so
 * that one write moves them all (on the H200 each write costs ~3 us of host
 * time, more than the bytes). The layout changes only when a region must
 * grow. One call at a time (a scratch set is one call's). */
#ifndef TDM_QUERY_SEARCH_PACK_H
#define TDM_QUERY_SEARCH_PACK_H

#include <stddef.h>

#include "common/error.h"
#include "runtime/runtime.h"

#define TDM_SPACK_MAX 20

typedef struct tdm_spack {
    cl_mem parent;
    cl_mem sub[TDM_SPACK_MAX]; /* NULL: no room for the region yet */
    size_t off[TDM_SPACK_MAX], cap[TDM_SPACK_MAX];
    size_t total;              /* bytes of parent and host */
    unsigned char *host;       /* the staging copy, laid out as parent */
} tdm_spack;

/* Gives each region i < n at least need[i] bytes (0: not needed now; its
 * room, if any, is kept), laying the buffer out anew (regions in index
 * order, at the device's base address alignment, with room to grow) when
 * one is short. Sub-buffers made earlier are released then: take
 * pk->sub[i] after this call. */
int tdm_spack_ensure(tdm_device *d, tdm_spack *pk, const size_t *need, int n, tdm_err *err);

/* Host staging of region i. */
static inline void *tdm_spack_host(tdm_spack *pk, int i) { return pk->host + pk->off[i]; }

void tdm_spack_free(tdm_spack *pk);

#endif
