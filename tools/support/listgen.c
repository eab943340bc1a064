/* Uniform and Clustered docid lists (Anh & Moffat 2010), following the
 * generators of Lemire's FastPFor benchmarks that Mallia et al. (2019) reuse:
 * Uniform draws distinct values with a sort-and-deduplicate loop (drawing the
 * complement when the list is denser than half the universe); Clustered cuts
 * the range at a random point, sends half of the values to each side and
 * recurses, filling a side uniformly with probability 1/4 each.
 *
 * The random stream is common/rng.h (splitmix64 with Lemire's bounded
 * multiply), so a seed gives the same list everywhere. */
#include "listgen.h"

#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "tandem.h"

/* LSD radix sort of a[0..n) with tmp[0..n); four 8-bit passes end in a. */
static void radix_sort(uint32_t *a, uint32_t *tmp, size_t n)
{
    uint32_t *src = a, *dst = tmp;
    for (int shift = 0; shift < 32; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++)
            count[((src[i] >> shift) & 0xFF) + 1]++;
        for (int b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & 0xFF]++] = src[i];
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
}

static size_t unique(uint32_t *a, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (w == 0 || a[w - 1] != a[i])
            a[w++] = a[i];
    return w;
}

/* Merges sorted a[0..k) and a[k..m) through tmp back into a, dropping
 * duplicates; returns the new count. */
static size_t merge_unique(uint32_t *a, uint32_t *tmp, size_t k, size_t m)
{
    size_t i = 0, j = k, w = 0;
    while (i < k || j < m) {
        uint32_t v = (j >= m || (i < k && a[i] <= a[j])) ? a[i++] : a[j++];
        if (w == 0 || tmp[w - 1] != v)
            tmp[w++] = v;
    }
    memcpy(a, tmp, w * sizeof *a);
    return w;
}

/* m distinct sorted values in [0, range) into a; m <= range / 2 keeps the
 * expected number of redraw rounds small. Later rounds sort only the
 * redrawn values and merge them in. */
static void sample_sparse(uint32_t *a, uint32_t *tmp, size_t m, uint32_t range, tdm_rng *r)
{
    size_t have = 0;
    while (have < m) {
        for (size_t i = have; i < m; i++)
            a[i] = tdm_rng_below(r, range);
        radix_sort(a + have, tmp, m - have);
        have = have ? merge_unique(a, tmp, have, m) : unique(a, m);
    }
}

/* n distinct sorted values in [lo, lo + range) into out; tmp holds n. */
static void fill_uniform(uint32_t *out, uint32_t *tmp, size_t n, uint32_t lo, uint32_t range,
                         tdm_rng *r)
{
    if (n == 0)
        return;
    if (n <= range / 2) {
        sample_sparse(out, tmp, n, range, r);
        for (size_t i = 0; i < n; i++)
            out[i] += lo;
        return;
    }
    /* Dense: draw the m values to leave out, then emit everything else. */
    size_t m = range - n;
    sample_sparse(out, tmp, m, range, r);
    memcpy(tmp, out, m * sizeof *out);
    size_t w = 0, j = 0;
    for (uint32_t v = 0; v < range && w < n; v++) {
        if (j < m && tmp[j] == v)
            j++;
        else
            out[w++] = lo + v;
    }
}

static void fill_clustered(uint32_t *out, uint32_t *tmp, size_t n, uint32_t lo, uint32_t range,
                           tdm_rng *r)
{
    if (range == n || n < 10) {
        fill_uniform(out, tmp, n, lo, range, r);
        return;
    }
    size_t half = n / 2;
    /* Left gets half values in [lo, lo+cut), right n-half in [lo+cut, lo+range). */
    uint32_t cut = (uint32_t)half + tdm_rng_below(r, (uint32_t)(range - n) + 1u);
    double p = tdm_rng_double(r);
    if (p <= 0.25)
        fill_uniform(out, tmp, half, lo, cut, r);
    else
        fill_clustered(out, tmp, half, lo, cut, r);
    if (p > 0.25 && p <= 0.5)
        fill_uniform(out + half, tmp, n - half, lo + cut, range - cut, r);
    else
        fill_clustered(out + half, tmp, n - half, lo + cut, range - cut, r);
}

int tdm_listgen(int dist, uint32_t *out, size_t n, uint32_t universe, uint64_t seed)
{
    if ((dist != TDM_LISTGEN_UNIFORM && dist != TDM_LISTGEN_CLUSTERED) || n > universe ||
        universe > TDM_LISTGEN_MAX_UNIVERSE || (n > 0 && !out))
        return TDM_ERR_INVALID_ARG;
    if (n == 0)
        return TDM_OK;
    uint32_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return TDM_ERR_NOMEM;
    tdm_rng r = {seed};
    if (dist == TDM_LISTGEN_UNIFORM)
        fill_uniform(out, tmp, n, 0, universe, &r);
    else
        fill_clustered(out, tmp, n, 0, universe, &r);
    free(tmp);
    return TDM_OK;
}

int tdm_listgen_uniform(uint32_t *out, size_t n, uint32_t universe, uint64_t seed)
{
    return tdm_listgen(TDM_LISTGEN_UNIFORM, out, n, universe, seed);
}

int tdm_listgen_clustered(uint32_t *out, size_t n, uint32_t universe, uint64_t seed)
{
    return tdm_listgen(TDM_LISTGEN_CLUSTERED, out, n, universe, seed);
}

int tdm_listgen_dist_by_name(const char *name)
{
    if (name && !strcmp(name, "uniform"))
        return TDM_LISTGEN_UNIFORM;
    if (name && !strcmp(name, "clustered"))
        return TDM_LISTGEN_CLUSTERED;
    return -1;
}
