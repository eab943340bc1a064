/* Ranked AND step by step (Griffin, Liu et al. 2018): the query's lists are
   taken shortest first; the candidates after each step are the documents
   of every list taken so far, each with one score column per list taken
   (column j: the j-th list's float score of the document). The columns are
   summed only at the end, in the query's term order (tdm_and_step_final),
   so the score is score.h's sum bit for bit whatever the order the lists
   were taken in and whichever device took each step. Between two steps the
   candidates may move to another device (host/drive/and_step.c): only
   their docids and columns travel. The plain-C reference of every kernel
   is in host/drive/and_step_ref.c.

   Layouts: candidates cand[0 .. n); column j at cols[j * stride ..
   j * stride + n). A step writes its survivors at out positions taken by
   an atomic counter, so their order varies from run to run: nothing reads
   an order (the final top k is ordered by score, then docid). */

#pragma OPENCL FP_CONTRACT OFF

/* score.h's float formula (as tdm_sr_score). */
float tdm_as_score(float qw, uint tf, uint dl, uint kind, float c0, float c1)
{
    float f = (float)tf;
    if (kind == 1u)
        return tdm_fmul(qw, f);
    float k = tdm_fadd(c0, tdm_fmul(c1, (float)dl));
    return TDM_SEARCH_DIV(tdm_fmul(qw, f), tdm_fadd(f, k));
}

/* A document's length; 0 for a docid past the last (decoded from a damaged
   index whose checksums were forged: nothing is read outside doclens, and
   the host refuses a result holding such a docid). */
uint tdm_as_doclen(__global const uint *doclens, uint ndocs, uint d)
{
    return d < ndocs ? doclens[d] : 0u;
}

/* The first list (docs, freqs: its m postings) becomes the candidates with
   score column 0. */
__kernel void tdm_and_step_lead(__global const uint *docs, __global const uint *freqs, uint m,
                                __global const uint *doclens, uint ndocs, float qw, uint kind,
                                float c0, float c1, __global uint *cand, __global float *cols)
{
    uint i = get_global_id(0);
    if (i >= m)
        return;
    uint d = docs[i];
    cand[i] = d;
    cols[i] = tdm_as_score(qw, freqs[i], tdm_as_doclen(doclens, ndocs, d), kind, c0, c1);
}

/* One step: each candidate i of cand[0 .. n) (columns 0 .. done - 1 in
   cols, stride `stride`) is searched in the next list (docs ascending, m
   postings, binary search: Griffin's CPU side); a candidate found keeps its
   columns and gets column `done` in out_cand / out_cols (stride ostride
   >= n), at a position counted by out_n[0] (zero before). */
__kernel void tdm_and_step_probe(__global const uint *cand, __global const float *cols, uint n,
                                 uint stride, uint done, __global const uint *docs,
                                 __global const uint *freqs, uint m,
                                 __global const uint *doclens, uint ndocs, float qw,
                                 uint kind, float c0, float c1, __global uint *out_cand,
                                 __global float *out_cols,
                                 uint ostride, __global uint *out_n)
{
    __local uint base, cnt;
    uint i = get_global_id(0), lid = get_local_id(0);
    if (lid == 0u)
        cnt = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint d = 0u, p = m, slot = 0u;
    if (i < n) {
        d = cand[i];
        uint lo = 0u, hi = m;
        while (lo < hi) {
            uint mid = lo + (hi - lo) / 2u;
            if (docs[mid] < d)
                lo = mid + 1u;
            else
                hi = mid;
        }
        p = lo < m && docs[lo] == d ? lo : m;
        if (p < m)
            slot = atomic_inc(&cnt); /* one global atomic a group, below */
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0u && cnt)
        base = atomic_add(out_n, cnt);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (p >= m)
        return;
    uint o = base + slot;
    out_cand[o] = d;
    for (uint j = 0u; j < done; j++)
        out_cols[(size_t)j * ostride + o] = cols[(size_t)j * stride + i];
    out_cols[(size_t)done * ostride + o] =
        tdm_as_score(qw, freqs[p], tdm_as_doclen(doclens, ndocs, d), kind, c0, c1);
}

/* The end: each candidate's score, its columns summed in the query's term
   order (sum_col[t] = the column of term t), from 0.0f, into hs[i] (the
   merge kernel's heap layout: one heap of n entries, hd = cand). */
__kernel void tdm_and_step_final(__global const float *cols, uint n, uint stride, uint nt,
                                 __global const uint *sum_col, __global float *hs)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
    for (uint t = 0u; t < nt; t++)
        acc = tdm_fadd(acc, cols[(size_t)sum_col[t] * stride + i]);
    hs[i] = acc;
}
