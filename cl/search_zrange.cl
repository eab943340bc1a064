/* Top-k search over docid ranges on the COMPRESSED index: the CPU variant
   of the range kernel (include/tandem.h, TDM_VARIANT_COMPRESSED). As
   tdm_search_range (cl/search_range.cl), a work-item owns the docid range
   [r * rlen, min((r + 1) * rlen, ndocs)) and runs the query document at a
   time with its own heap; the algorithms, the heap and the shared threshold
   are the same code (cl/search_algo.cl), so the two variants give the same
   bits. What differs is the cursor: it reads the resident index
   (resident/resident.h) itself, as PISA's cursors do, instead of postings a
   decode launch wrote for every block of every list:
   - a seek past the cursor's block finds the block by galloping over the
     block table's last docids (BLOCK_LAST), which needs no decoding, and
     decodes that block's docids (cl/codec_serial.cl, tdm_zs_block) into the
     cursor's buffer; blocks skipped are never decoded;
   - a block's frequencies are decoded only when a posting of it is scored;
   - Block-Max WAND reads block ends from the block table, and a block
     starting at or past the range's end is not decoded.
   So a query is one launch (then the merge), whatever its lists' lengths,
   and AND needs no block selection: the shortest list leads, the others
   seek.

   Scratch layout (argument `layout`, TDM_ZR_* of host/plan/search_layout.h):
   word w of term t of range r (of R ranges; W words a term: TDM_ZR_CW in
   cur, bw in docs and freqs, 1 in ord) is at
     TDM_ZR_RANGE (0, CPUs):       (r * nt + t) * W + w   range-major
     TDM_ZR_INTERLEAVED (1, GPUs): (t * W + w) * R + r    interleaved
   so a range's words are contiguous on a CPU (one core a range: words of
   neighbouring ranges in one cache line would be shared between cores), and
   on a GPU the lanes r, r + 1, ... of a warp, which run in lockstep, touch
   consecutive words (a block's decode: 128 coalesced stores instead of 128
   stores to as many cache lines). Both are s->X + (t * W + w) * s->ws, X
   the range's first word and ws its word stride (1 or R): tdm_zr_scratch.
   The cursor code (cl/search_zcur.cl) is compiled for any stride
   (tdm_zr_*) and, but on NVIDIA, again for a literal stride of 1
   (tdm_zr1_*), which range-major scratch runs (tdm_zr_search).

   Cursor of term t, word w (TDM_ZC(s, c, w), c = tdm_zr_cur(s, t)):
     0 block: the block the cursor is in (nb once past the list's end)
     1 position in that block
     2 postings of the block decoded in its docs buffer (0: none)
     3 1 + the block whose frequencies are in its freqs buffer (0: none)
     4 docid under the cursor (NODOC past the list or the range)
     5 last docid of the block
     6 the list's first block-table entry (descriptor word ext)
     7 the list's blocks nb
   docs and freqs: bw words a cursor (value i of term t's block at
   tdm_zr_buf(s->docs, s, t)[i * ws]), bw the largest block size among the
   query's lists. Term table: search_range.cl's, but word 0 is the term's
   list id (the index's term id) instead of a position in decoded postings.

   A block whose decoding fails or whose docids disagree with the block table
   (not ascending, not above the block's base, count or last docid not the
   table's) sets TDM_CODEC_ST_CORRUPT in the status word (the merge returns
   it; the host fails the search) and ends the cursor, so a damaged index
   gives an error, never an answer. */

typedef struct tdm_zrange {
    __global const uint *arena;
    __global const uint4 *lists;
    __global const uchar *codecs;
    __global const uint *block_last;
    __global const uint *block_docs;
    __global const uint *block_freqs;
    uint nlists, arena_words, spans;
    __global uint *docs;  /* the range's cursors' decoded docids, bw a cursor */
    __global uint *freqs; /* the range's cursors' decoded frequencies */
    __global const uint *terms;
    __global const float *bmax;
    __global const uint *doclens;
    __global uint *cur; /* the range's first cursor word */
    __global uint *ord; /* the range's first ord word */
    uint ws;            /* word stride: 1 (TDM_ZR_RANGE) or nr (TDM_ZR_INTERLEAVED) */
    __global float *hs;
    __global uint *hd;
    __global uint *shared; /* the shared threshold G (term 0, word 7) */
    uint bw, nt, nr, r, rend, cap, n, kind;
    uint pub;
    float c0, c1;
    float gth;
    float hw; /* the heap's worst score once it is full (search_algo.cl) */
    uint st;  /* TDM_CODEC_ST_* found by this work-item */
} tdm_zrange;

/* The range's scratch (the layout above) from the launch's buffers, which
   start at its query's first cursor: s->r, nr, nt and bw set. */
void tdm_zr_scratch(tdm_zrange *s, __global uint *cur, __global uint *docs,
                    __global uint *freqs, __global uint *ord, uint layout)
{
    uint il = layout == TDM_ZR_INTERLEAVED;
    uint rt = il ? s->r : s->r * s->nt; /* the range's first term slot */
    s->ws = il ? s->nr : 1u;
    s->cur = cur + rt * (il ? 1u : TDM_ZR_CW);
    s->docs = docs + rt * (il ? 1u : s->bw);
    s->freqs = freqs + rt * (il ? 1u : s->bw);
    s->ord = ord + rt;
}

/* The resident index's sections (TDM_ZS_IDX) into s, its status cleared. */
void tdm_zr_index(tdm_zrange *s, TDM_ZS_IDX)
{
    s->arena = arena;
    s->lists = lists;
    s->codecs = codecs;
    s->block_last = block_last;
    s->block_docs = block_docs;
    s->block_freqs = block_freqs;
    s->nlists = nlists;
    s->arena_words = arena_words;
    s->spans = spans;
    s->st = 0u;
}

/* A prefetch of the word at global address p on an x86-64 CPU (PoCL,
   whose OpenCL prefetch() does nothing; clang's builtin is an instruction
   there, and an intrinsic Oclgrind lacks), else nothing. */
#if defined(__clang__) && defined(__x86_64__)
#define TDM_ZR_FETCH(p) __builtin_prefetch(p)
#else
#define TDM_ZR_FETCH(p)
#endif

/* The cursors and the algorithms for any word stride (tdm_zr_*), and on a
   CPU a copy for range-major scratch whose stride is a literal 1
   (tdm_zr1_*; NVIDIA builds, whose planner picks interleaved, leave it out:
   tdm_zr_* runs both layouts there). */
#define TDM_ZR(name) tdm_zr_##name
#define TDM_ZR_WS(s) ((s)->ws)
#define TDM_ZR_CPU 0
#include "cl/search_zcur.cl"
#if !TDM_NV_PTX
#define TDM_ZR(name) tdm_zr1_##name
#define TDM_ZR_WS(s) 1u
#define TDM_ZR_CPU 1
#include "cl/search_zcur.cl"
#endif

/* The range's search: its cursors at its first posting (rbeg), then
   algorithm alg, through the copy for its scratch's stride (a word stride
   of 1 is range-major, or interleaved over one range: the same words). */
void tdm_zr_search(tdm_zrange *s, uint rbeg, uint alg)
{
#if !TDM_NV_PTX
    if (s->ws == 1u) {
        for (uint t = 0; t < s->nt; t++)
            tdm_zr1_init(s, t, rbeg);
        tdm_zr1_run(s, alg);
        return;
    }
#endif
    for (uint t = 0; t < s->nt; t++)
        tdm_zr_init(s, t, rbeg);
    tdm_zr_run(s, alg);
}

/* One work-item per docid range, as tdm_search_range (the same heaps, counts
   in hn, shared threshold, AND-then-OR gate); the index's sections instead
   of decoded postings, and the cursors' buffers. status: the search's
   status word (TDM_CODEC_ST_*), which the merge reports; layout: the
   scratch's (TDM_ZR_RANGE or TDM_ZR_INTERLEAVED, above). */
#define TDM_ZRK_ARGS                                                             \
    TDM_ZS_IDX, __global uint *zdocs, __global uint *zfreqs, uint bw, __global uint *terms, \
        __global const float *bmax, __global const uint *doclens, __global uint *cur,      \
        __global uint *ord, __global float *hs, __global uint *hd, __global uint *hn,      \
        uint nt, uint nranges, uint rlen, uint ndocs, uint cap, uint alg, uint kind,       \
        float c0, float c1
#define TDM_ZRK_PASS                                                             \
    TDM_ZS_IDX_PASS, zdocs, zfreqs, bw, terms, bmax, doclens, cur, ord, hs, hd, hn, nt,   \
        nranges, rlen, ndocs, cap, alg, kind, c0, c1

/* Range r's heap and its count hn[r] (tdm_search_zrange, _zrange_sel); g:
   G's bits as tdm_zr_begin takes them. */
void tdm_zr_range(TDM_ZRK_ARGS, __global uint *status, uint layout, uint r, uint g)
{
    tdm_zrange s;
    tdm_zr_index(&s, arena, lists, codecs, block_last, block_docs, block_freqs, nlists,
                 arena_words, spans);
    s.bw = bw;
    s.bmax = bmax;
    s.doclens = doclens;
    uint rbeg = tdm_zr_begin(&s, terms, hs, hd, nt, nranges, r, rlen, ndocs, cap, alg, kind, c0,
                             c1, g);
    tdm_zr_scratch(&s, cur, zdocs, zfreqs, ord, layout);
    tdm_zr_search(&s, rbeg, alg);
    hn[r] = s.n;
    if (s.st)
        atomic_or(status, s.st);
}

__kernel void tdm_search_zrange(TDM_ZRK_ARGS, __global const uint *gate, uint gate_min,
                                __global uint *status, uint layout)
{
    __local uint g0;
    uint g = tdm_sr_group_g(terms, alg, &g0), r = get_global_id(0);
    if (r < nranges && !(gate_min && gate[1] >= gate_min))
        tdm_zr_range(TDM_ZRK_PASS, status, layout, r, g);
}
