/* libFuzzer target: `tandem serve`'s request parser (tools/serve_req.c), the
 * part of the server that reads what any client sends: every input, as a
 * /search and as a /search/batch body, is either refused with a 4xx and a
 * message or gives queries whose fields lie within the limits. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tdm_search_options d;
    tdm_search_options_init(&d);
    const tdm_serve_limits lim = {1u << 16, 1000, 8, 64};
    for (int batch = 0; batch < 2; batch++) {
        tdm_serve_request r;
        char err[512] = "";
        int st = tdm_serve_parse((const char *)data, size, batch, &d, &lim, &r, err, sizeof err);
        if (st) {
            assert((st == 400 || st == 413) && err[0] && !r.q && !r.root);
            continue;
        }
        assert(r.n >= 1 && r.n <= (batch ? lim.max_batch : 1));
        for (size_t i = 0; i < r.n; i++) {
            const tdm_serve_query *q = &r.q[i];
            assert(!q->text != !q->terms && q->nterms <= lim.max_terms);
            assert(q->o.k >= 1 && q->o.k <= lim.max_k);
            assert(q->o.k1 >= 0 && q->o.k1 <= TDM_BM25_K1_MAX && q->o.b >= 0 && q->o.b <= 1);
            for (size_t t = 0; t < q->nterms; t++)
                assert(q->terms[t].term && q->terms[t].weight >= TDM_WEIGHT_MIN &&
                       q->terms[t].weight <= TDM_WEIGHT_MAX);
        }
        tdm_serve_request_free(&r);
    }
    return 0;
}
