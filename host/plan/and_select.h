/* Ranked AND with block selection before decoding (cl/search_select.cl):
 * the shortest list decoded alone, the blocks of the others selected on the
 * device by its docids against the resident block table, only those decoded,
 * each list compacted into its segment and the term table's positions and
 * lengths rewritten on the device. A handful of launches whatever the list
 * lengths: the lead's decode, a fill and the selection, one jobs kernel and
 * one decode per codec of the other lists.
 *
 * Griffin's ratio picks per list how its blocks are found: per lead docid
 * (a binary search of the list's block lasts) when the list is more than
 * `ratio` times the lead's length, per block of the list (a binary search of
 * the lead) otherwise; the cheaper of the two when a block holds 128.
 *
 * Threads: a tdm_and_sel is read-only once built; the enqueue uses only the
 * buffers it is given. */
#ifndef TDM_QUERY_AND_SELECT_H
#define TDM_QUERY_AND_SELECT_H

#include <stdint.h>

#include "common/error.h"
#include "resident/decode_jobs.h"
#include "index/reader.h"
#include "resident/resident.h"
#include "query/query.h"
#include "plan/search_layout.h" /* the selection table, TDM_SEL_* */

#define TDM_SEL_RATIO 128u /* Griffin's starting point */

typedef struct tdm_and_sel {
    uint32_t nt, lead;     /* terms; the lead's term index (shortest list) */
    uint32_t *tab;         /* [nt * TDM_SEL_TW], cl/search_select.cl's table */
    uint32_t ntasks, nflags;
    tdm_decode_job lead_job; /* the lead's list whole, to output 0 */
    int lead_codec;
    uint32_t njobs[TDM_CODEC_COUNT]; /* job slots per codec: blocks of the other lists */
    uint64_t blocks_all;   /* blocks of the other lists (what a full decode decodes) */
} tdm_and_sel;

/* The table for q's lists on r (q finished, terms in the search term order)
 * with the given ratio (0: TDM_SEL_RATIO). TDM_ERR_NOMEM, or an error
 * naming a list the reader refuses. An empty query gives nt = 0. */
int tdm_and_sel_build(const tdm_ireader *r, const tdm_query *q, uint32_t ratio, tdm_and_sel *a,
                      tdm_err *err);
/* The same from the lists the caller already holds (lists[t]: q's term t,
 * from tdm_ireader_list): O(terms), nothing looked up again. */
int tdm_and_sel_build_lists(const tdm_ireader *r, const tdm_query *q, const tdm_ilist *lists,
                            uint32_t ratio, tdm_and_sel *a, tdm_err *err);
void tdm_and_sel_free(tdm_and_sel *a);

/* Device buffers of at least these sizes in bytes: the table, the flags,
 * each codec's job table (0: none needed). */
size_t tdm_and_sel_tab_bytes(const tdm_and_sel *a);
size_t tdm_and_sel_flag_bytes(const tdm_and_sel *a);
size_t tdm_and_sel_job_bytes(const tdm_and_sel *a, int codec);

/* Enqueues on q (NULL: the compute queue of res's device), in order, after
 * the wait list (its decodes with the scratch scr, which may be NULL): the
 * uploads of the table and the lead's job unless
 * `uploaded` (the caller wrote them to tab and lead_job; else a's arrays
 * must stay unchanged until *done), the lead's decode into docs/freqs at 0,
 * the selection, the jobs and the decodes of the selected blocks, and the
 * rewrite of words 0 and 1 of each term of the search term table `terms`
 * (TDM_SEARCH_TW words a term). Decode failures go to `status`
 * (decode_jobs.h). *done (NULL: none made; not NULL unless `uploaded`) gets
 * an event that completes after the last command; the commands go on q in
 * order, no event between them. *launches grows by the kernels enqueued,
 * *bytes_up by the bytes uploaded. Non-blocking. */
int tdm_and_sel_enqueue(const tdm_resident *res, cl_command_queue q, tdm_decode_scratch *scr,
                        const tdm_and_sel *a, int uploaded, cl_mem tab, cl_mem lead_job,
                        cl_mem flags, cl_mem const jobs[TDM_CODEC_COUNT], cl_mem docs,
                        cl_mem freqs, cl_mem terms, cl_mem status, cl_uint nwait,
                        const cl_event *wait, cl_event *done, uint32_t *launches,
                        uint64_t *bytes_up, tdm_err *err);

/* The plain-C reference: q's lists decoded on the host, the blocks of the
 * other lists holding a lead docid selected, and the compacted layout:
 * docs/freqs (room for every posting of q) get the lead's postings at 0 then
 * each other term's selected postings in term order; pos[t], len[t] each
 * term's segment. *selected = blocks selected. */
int tdm_and_sel_ref(const tdm_ireader *r, const tdm_query *q, const tdm_and_sel *a,
                    uint32_t *docs, uint32_t *freqs, uint32_t *pos, uint32_t *len,
                    uint64_t *selected, tdm_err *err);

#endif
