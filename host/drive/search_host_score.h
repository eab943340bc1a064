/* A block's scores on the host path (search_host*.c): score.h's float
 * formula (tdm_score_f) for n postings in a loop without a branch, a call,
 * a gather or a load the stores may alias, so that the compiler divides
 * four at a time (SSE2 divps): the same correctly rounded IEEE quotients
 * as one at a time, bit for bit (host code is built with
 * -ffp-contract=off, score.h; test_search_host compares the two). The
 * document lengths are gathered first, in a loop of their own. */
#ifndef TDM_DRIVE_SEARCH_HOST_SCORE_H
#define TDM_DRIVE_SEARCH_HOST_SCORE_H

#include <stddef.h>
#include <stdint.h>

#include "query/score.h"

/* dl[i] = doclens[docs[i]] for i < n. */
static inline void tdm_hscore_dls(const uint32_t *doclens, const uint32_t *docs, uint32_t n,
                                  uint32_t *restrict dl)
{
    for (uint32_t i = 0; i < n; i++)
        dl[i] = doclens[docs[i]];
}

/* out[i] = tdm_score_f(sc, t, tf[i], dl[i]) for i < n (dl unread for
 * impact scores: NULL then). */
static inline void tdm_hscores(const tdm_scorer *sc, size_t t, const uint32_t *tf,
                               const uint32_t *dl, uint32_t n, float *restrict out)
{
    const float qw = sc->qw[t];
    if (sc->kind == TDM_SCORING_IMPACT) {
        for (uint32_t i = 0; i < n; i++)
            out[i] = qw * (float)tf[i];
        return;
    }
    const float c0 = sc->c0, c1 = sc->c1;
    for (uint32_t i = 0; i < n; i++) {
        float f = (float)tf[i];
        float k = c0 + c1 * (float)dl[i];
        out[i] = (qw * f) / (f + k);
    }
}

/* A block's n scores in term t: its documents' lengths gathered into dl
 * first (BM25 only: impact scores read none), then scored into out. */
static inline void tdm_hscore_block(const tdm_scorer *sc, size_t t, const uint32_t *doclens,
                                    const uint32_t *docs, const uint32_t *tf, uint32_t n,
                                    uint32_t *restrict dl, float *restrict out)
{
    if (sc->kind != TDM_SCORING_IMPACT)
        tdm_hscore_dls(doclens, docs, n, dl);
    tdm_hscores(sc, t, tf, dl, n, out);
}

#endif
