/* The kernel pool's lifetime (runtime.h has the borrow/return interface). */
#ifndef TDM_RUNTIME_KCACHE_H
#define TDM_RUNTIME_KCACHE_H

#include "runtime.h"

/* An empty pool for d's program. */
int tdm_kcache_new(tdm_device *d, struct tdm_kcache **out, tdm_err *err);
/* Releases every kernel (none may be lent out); the pool stays usable.
 * Accepts NULL. */
void tdm_kcache_clear(struct tdm_kcache *c);
/* Releases every kernel and the pool; none may be lent out. Accepts NULL. */
void tdm_kcache_free(struct tdm_kcache *c);

#endif
