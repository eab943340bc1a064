/* BM25 scoring (bm25.h). */
#include "bm25.h"

#include <math.h>

double tdm_bm25(double k1, double b, uint64_t ndocs, uint32_t df, uint32_t tf, uint32_t dl,
                double avgdl)
{
    double idf = log(1.0 + ((double)ndocs - df + 0.5) / (df + 0.5));
    double norm = avgdl > 0 ? 1.0 - b + b * dl / avgdl : 1.0;
    return idf * tf * (k1 + 1.0) / (tf + k1 * norm);
}
