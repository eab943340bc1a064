/* The host path's top k (search_host_topk.h): a threshold buffer cut by
 * radix selection, radix sorted at the end. */
#include "search_host_topk.h"

#include <string.h>

/* Room for at least 256 keys above the k kept between two cuts: a cut
 * costs O(cap), so it comes at most once every max(k, 256) keys. */
static uint32_t topk_cap(uint32_t k)
{
    return k <= TDM_HTOPK_HEAP_MAX ? k : k + (k < 256 ? 256 : k);
}

/* A pruning pass's (tdm_htopk_init_tight): at most topk_cap(k) (the
 * words asked for). MaxScore on the host, 1M documents, 1,000 queries of
 * each log one at a time on the 2-core VM, ms summed over the queries it
 * answers (search_host.c's rule), the buffer of topk_cap / a heap / cuts
 * every 128 keys: k 100 msmarco 1,357-1,398 / 1,119-1,129 / 1,282-1,329,
 * terabyte05 442-470 / 433-435 / 479-488; k 1,000 msmarco 1,918-2,104 /
 * 1,932-2,000 / 1,851-1,918 (every 64: 1,857-1,892, 32: 2,008-2,064),
 * terabyte05 500-546 / 517-528 / 483-496 (one run of four 692). k 300, a
 * heap / cuts every 128, alike: msmarco 1,576-1,717 / 1,658-1,760,
 * terabyte05 478-577 / 542-547; batches of 1,000 from 2 threads, CPU us a
 * query, msmarco 1,309-1,467 / 1,333-1,436, terabyte05 532-568 / 536-568. */
static uint32_t tight_cap(uint32_t k)
{
    return k <= TDM_HTOPK_TIGHT_HEAP_MAX ? k : k + TDM_HTOPK_TIGHT_SLACK;
}

size_t tdm_htopk_words(uint32_t k)
{
    return 2 * (size_t)topk_cap(k);
}

static void init_cap(tdm_htopk *t, uint32_t k, uint32_t cap, uint64_t *mem)
{
    t->k = k;
    t->cap = cap;
    t->buf = mem;
    t->tmp = mem + t->cap;
    t->heap = cap == k;
    tdm_htopk_reset(t);
}

void tdm_htopk_init(tdm_htopk *t, uint32_t k, uint64_t *mem)
{
    init_cap(t, k, topk_cap(k), mem);
}

void tdm_htopk_init_tight(tdm_htopk *t, uint32_t k, uint64_t *mem)
{
    uint32_t c = tight_cap(k), most = topk_cap(k);
    init_cap(t, k, c < most ? c : most, mem);
}

void tdm_htopk_reset(tdm_htopk *t)
{
    t->n = 0;
    t->full = 0;
    t->thr = 0;
    t->matched = 0;
}

/* The bits in which the keys a[0..n) differ. */
static uint64_t differing(const uint64_t *a, uint32_t n)
{
    uint64_t o = 0, z = ~0ull;
    for (uint32_t i = 0; i < n; i++) {
        o |= a[i];
        z &= a[i];
    }
    return o ^ z;
}

/* The k largest of the distinct keys a[0..n) (n > k >= 1) into a[0..k), in
 * no order. Each round histograms the 8 bits from the highest bit in which
 * the keys still in question differ: the keys of the digits above the
 * boundary digit are in (to tmp), those of the boundary digit go on to the
 * next round, the rest are out. */
static void select_k(uint64_t *a, uint32_t n, uint32_t k, uint64_t *tmp)
{
    uint32_t in = 0, m = n, need = k;
    while (m > need) {
        uint64_t diff = differing(a, m);
        int hb = 63 - __builtin_clzll(diff); /* m >= 2 distinct keys: diff != 0 */
        int sh = hb >= 7 ? hb - 7 : 0;
        uint32_t h[256] = {0};
        for (uint32_t i = 0; i < m; i++)
            h[(a[i] >> sh) & 255]++;
        uint32_t above = 0, b = 255;
        while (above + h[b] < need) /* the digits' counts sum to m > need */
            above += h[b--];
        uint32_t nb = 0;
        for (uint32_t i = 0; i < m; i++) { /* no branch: the digits are random */
            uint64_t v = a[i];
            uint32_t d = (uint32_t)(v >> sh) & 255;
            tmp[in] = v;
            in += d > b;
            a[nb] = v;
            nb += d == b;
        }
        need -= above;
        m = nb; /* >= need: the boundary digit's keys reach it */
    }
    memcpy(a + m, tmp, in * sizeof *a); /* m == need, m + in == k */
}

/* a[0..n) sorted descending (distinct keys): insertion for a few, else LSD
 * radix over the bytes in which they differ (each pass stable, its digits
 * descending). */
static void sort_desc(uint64_t *a, uint32_t n, uint64_t *tmp)
{
    if (n <= 32) {
        for (uint32_t i = 1; i < n; i++) {
            uint64_t v = a[i];
            uint32_t j = i;
            for (; j > 0 && a[j - 1] < v; j--)
                a[j] = a[j - 1];
            a[j] = v;
        }
        return;
    }
    uint64_t diff = differing(a, n), *src = a, *dst = tmp;
    for (int sh = 0; sh < 64; sh += 8) {
        if (!((diff >> sh) & 255))
            continue;
        uint32_t h[256] = {0}, at[256];
        for (uint32_t i = 0; i < n; i++)
            h[(src[i] >> sh) & 255]++;
        at[255] = 0;
        for (int b = 254; b >= 0; b--)
            at[b] = at[b + 1] + h[b + 1];
        for (uint32_t i = 0; i < n; i++)
            dst[at[(src[i] >> sh) & 255]++] = src[i];
        uint64_t *w = src;
        src = dst;
        dst = w;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

/* The buffer cut to its k largest keys, the threshold to the smallest. */
static void cut(tdm_htopk *t)
{
    if (t->n <= t->k)
        return;
    select_k(t->buf, t->n, t->k, t->tmp);
    t->n = t->k;
    uint64_t min = t->buf[0];
    for (uint32_t i = 1; i < t->n; i++)
        min = t->buf[i] < min ? t->buf[i] : min;
    t->thr = min;
    t->full = 1;
}

static void heap_down(uint64_t *h, uint32_t n, uint32_t i)
{
    uint64_t v = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1] < h[c])
            c++;
        if (h[c] >= v)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

/* Into the min-heap of k keys, the worst at buf[0] (the threshold once
 * full). */
static void heap_add(tdm_htopk *t, uint64_t key)
{
    uint64_t *h = t->buf;
    if (t->n < t->k) {
        uint32_t i = t->n++;
        for (; i > 0 && h[(i - 1) / 2] > key; i = (i - 1) / 2)
            h[i] = h[(i - 1) / 2];
        h[i] = key;
    } else {
        h[0] = key;
        heap_down(h, t->n, 0);
    }
    t->full = t->n == t->k;
    t->thr = h[0];
}

void tdm_htopk_add(tdm_htopk *t, uint64_t key)
{
    if (t->heap) {
        heap_add(t, key);
        return;
    }
    t->buf[t->n++] = key;
    if (t->n == t->cap)
        cut(t);
}

uint32_t tdm_htopk_finish(tdm_htopk *t, uint64_t *out)
{
    cut(t);
    sort_desc(t->buf, t->n, t->tmp);
    memcpy(out, t->buf, t->n * sizeof *out);
    return t->n;
}
