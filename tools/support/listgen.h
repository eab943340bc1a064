/* Synthetic docid lists for codec benchmarks: the Uniform and Clustered
 * generators of Anh & Moffat (2010), as Mallia et al. (2019) use them
 * (universe up to 2^29, lengths 2^10 ... 2^25). Built into the CLI and the
 * tests (tandem_tools_support), not into libtandem.
 *
 * Both write n distinct values in [0, universe), sorted strictly increasing,
 * and are deterministic: the same (n, universe, seed) gives the same list on
 * every platform. Reentrant; no global state.
 */
#ifndef TDM_TOOLS_LISTGEN_H
#define TDM_TOOLS_LISTGEN_H

#include <stddef.h>
#include <stdint.h>

/* Largest universe the generators accept (2^31: values fit an int32). */
#define TDM_LISTGEN_MAX_UNIVERSE (UINT32_C(1) << 31)

enum tdm_listgen_dist {
    TDM_LISTGEN_UNIFORM = 0,
    TDM_LISTGEN_CLUSTERED = 1
};

/* Uniform model: n distinct values drawn uniformly from [0, universe).
 * out must hold n values. Returns TDM_OK, TDM_ERR_INVALID_ARG when n >
 * universe or universe > TDM_LISTGEN_MAX_UNIVERSE (or out is NULL with
 * n > 0), TDM_ERR_NOMEM when scratch memory (n values, freed before return)
 * cannot be had. */
int tdm_listgen_uniform(uint32_t *out, size_t n, uint32_t universe, uint64_t seed);

/* Clustered model: the range is split recursively at a random point, half of
 * the values going to each side, and each side is filled uniformly or
 * clustered again, so runs of the list hold values packed close together.
 * Same arguments and results as tdm_listgen_uniform. */
int tdm_listgen_clustered(uint32_t *out, size_t n, uint32_t universe, uint64_t seed);

/* Dispatch on enum tdm_listgen_dist. */
int tdm_listgen(int dist, uint32_t *out, size_t n, uint32_t universe, uint64_t seed);

/* "uniform" / "clustered" -> enum value, or -1. */
int tdm_listgen_dist_by_name(const char *name);

#endif
