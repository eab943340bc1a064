/* Shared by the query-file readers (queryfile.c, qf_*.c). Internal. */
#ifndef TDM_HARNESS_QF_PRIV_H
#define TDM_HARNESS_QF_PRIV_H

#include "common/buf.h"
#include "common/error.h"
#include "text/linereader.h"
#include "harness/queryfile.h"

typedef struct tdm_qf_ctx {
    tdm_qfile *f;
    const char *path;
    tdm_linereader *lr;
    const tdm_qf_options *o;
    tdm_err *err;
} tdm_qf_ctx;

/* Appends a query (copies id, text and terms). text NULL with terms for a
 * weighted query. TDM_ERR_FORMAT for an empty id. */
int tdm_qf_add(tdm_qf_ctx *c, const char *id, size_t idlen, const char *text, size_t tlen,
               const tdm_qf_term *terms, size_t nterms, uint64_t line);
/* TDM_ERR_FORMAT if the line (its LF or CR LF end taken off) holds a CR:
 * CR-only line ends would make the whole file one line. */
int tdm_qf_bare_cr(tdm_qf_ctx *c, const char *line, size_t len, uint64_t ln);
/* "PATH: line N: ..." as TDM_ERR_FORMAT. */
int tdm_qf_fail(tdm_qf_ctx *c, uint64_t line, const char *fmt, ...) TDM_PRINTF(3, 4);

int tdm_qf_read_lines(tdm_qf_ctx *c);   /* colon, tab */
int tdm_qf_read_jsonl(tdm_qf_ctx *c);
int tdm_qf_read_trec(tdm_qf_ctx *c);
int tdm_qf_read_smart(tdm_qf_ctx *c);

#endif
