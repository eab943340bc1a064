/* The host path (search_host.c): a query of few postings answered on the
 * host, with no device work, where the planner says so (tdm_splan.host,
 * search_plan.c's rule: its lists hold at most the tuning row's
 * host_max_postings, TANDEM_HOST_MAX_POSTINGS). A launch, an upload and a
 * download cost a GPU about 70 us and PoCL 30-60 us each; decoding and
 * scoring a posting on the host costs a few ns.
 *
 * The answer is the oracle's (tools/harness/oracle.h, float mode) bit for
 * bit, and so the kernels': lists decoded a block at a time and checked as
 * the index reader's decoder checks them (search_host_dec.h), every posting
 * scored with score.h's device-exact float formula, a document's
 * contributions summed from 0.0f in the query's term order (ascending
 * lexicon id), the exact top k of keys ordered as the kernels' (score bits
 * << 32 | ~docid: score descending, then docid ascending;
 * search_host_topk.h). Measured on a 2-core EPYC VM (200k documents,
 * bp128): about 4 ns a posting for OR and the pruning algorithms at k = 10,
 * 4-6 ns for AND, 9-10 ns for OR at k = 1000. */
#ifndef TDM_DRIVE_SEARCH_HOST_H
#define TDM_DRIVE_SEARCH_HOST_H

#include <stdint.h>

#include "common/error.h"
#include "index/reader.h"
#include "plan/search_prepare.h"
#include "query/query.h"
#include "query/score.h"

/* Ranks the finished query q on r with scoring sp for public algorithm alg
 * (not AUTO): OR, WAND, BMW and MaxScore rank every document holding a term
 * (the pruning algorithms' exact answer is OR's; MaxScore, WAND and BMW
 * prune with MaxScore's evaluator where that is faster, and a one-term
 * query by its blocks' bounds, out->total then counting the documents
 * scored); AND the documents holding
 * every term of q; AND-then-OR AND's answer where AND matched k documents
 * or more, else OR's. out->keys (room for k >= 1) gets the best first,
 * out->n how many, out->total the documents the answering pass matched
 * (capped at UINT32_MAX); launches and bytes 0. Errors: the scorer's
 * (TDM_ERR_INVALID_ARG: BM25 on an impact index), TDM_ERR_CORRUPT for a
 * damaged list (the reader's decode checks), TDM_ERR_NOMEM. Thread-safe. */
int tdm_search_host(const tdm_ireader *r, const tdm_query *q, const tdm_score_params *sp,
                    int alg, uint32_t k, tdm_sout *out, tdm_err *err);

/* tdm_search_host's MaxScore at any size and k (tdm_search_host runs it
 * only where it was faster than OR, search_host.c), for tests; OR's where
 * the index's stored bounds do not bound the scoring, or q has one term. */
int tdm_search_host_maxscore(const tdm_ireader *r, const tdm_query *q,
                             const tdm_score_params *sp, uint32_t k, tdm_sout *out, tdm_err *err);

/* The prepared query it (it->pl.host) answered into it->so with its own
 * options (keys allocated here when it has none); its outcome in it->rc and
 * it->err. */
void tdm_search_host_item(const tdm_ireader *r, tdm_sbq *it);

#endif
