/* BM25 as the index computes its stored upper bounds (FORMAT.md), shared by
 * the writer, the reader's verification and the query engine's oracle.
 * Pure functions, thread-safe. */
#ifndef TDM_INDEX_BM25_H
#define TDM_INDEX_BM25_H

#include <stdint.h>

/* BM25 of one posting:
 * idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
 * score = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)).
 * avgdl <= 0 (an empty collection) takes every length norm as 1. */
double tdm_bm25(double k1, double b, uint64_t ndocs, uint32_t df, uint32_t tf, uint32_t dl,
                double avgdl);

#endif
