/* libFuzzer target: the PISA binary collection reader. The input is the five
 * files joined by the separator "\n=PISA=\n" in the order .docs, .freqs,
 * .sizes, .terms, .documents (fewer parts: the rest are absent). Whatever the
 * reader accepts must keep the collection contract that the index writer
 * relies on: names and terms without newlines (nor a '\r' left from CRLF
 * endings), terms strictly increasing, docids strictly increasing and below num_docs,
 * tf >= 1; every error names one of the files. Nothing may read out of
 * bounds or leak. */
#define _GNU_SOURCE   /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "index/format.h"
#include "import/pisa.h"
#include "tandem.h"

#define SEP "\n=PISA=\n"

static const char *const exts[] = {".docs", ".freqs", ".sizes", ".terms", ".documents"};

static void check_list(const tdm_coll_list *l, const char *prev, size_t prev_len, int first,
                       uint32_t ndocs)
{
    if (l->n == 0 || l->term_len == 0 || memchr(l->term, '\n', l->term_len) ||
        l->term[l->term_len - 1] == '\r' || memchr(l->term, 0, l->term_len))
        abort();
    if (!first && tdm_term_cmp(prev, prev_len, l->term, l->term_len) >= 0)
        abort();
    for (size_t k = 0; k < l->n; k++)
        if (l->docids[k] >= ndocs || l->freqs[k] == 0 || (k && l->docids[k] <= l->docids[k - 1]))
            abort();
}

static void write_parts(const char *base, const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    for (int k = 0; k < 5; k++) {
        char path[256];
        snprintf(path, sizeof path, "%s%s", base, exts[k]);
        unlink(path);
        if (!p)
            continue;
        const uint8_t *s = memmem(p, (size_t)(end - p), SEP, sizeof SEP - 1);
        size_t n = s ? (size_t)(s - p) : (size_t)(end - p);
        FILE *f = fopen(path, "wb");
        if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f))
            abort();
        p = s ? s + sizeof SEP - 1 : NULL;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char base[128];
    if (!base[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(base, sizeof base, "%s/fuzz_pisa.%ld", t ? t : "/tmp", (long)getpid());
        if (mkdir(base, 0700) && access(base, W_OK))
            abort();
        strcat(base, "/c");
    }
    write_parts(base, data, size);
    tdm_pisa *h = NULL;
    tdm_err err = {0};
    int rc = tdm_pisa_open(base, &h, &err);
    if (rc == TDM_OK) {
        tdm_coll_source src;
        tdm_pisa_source(h, &src);
        for (uint32_t d = 0; src.docnames && d < src.ndocs; d++) {
            const char *n = src.docnames[d];
            if (n && (strchr(n, '\n') || (n[0] && n[strlen(n) - 1] == '\r')))
                abort();
        }
        char prev[TDM_IDX_TERM_MAX];
        size_t prev_len = 0;
        tdm_coll_list l;
        for (uint64_t i = 0; i < src.nlists; i++) {
            if ((rc = src.list(src.self, i, &l, &err)) != TDM_OK)
                break;
            check_list(&l, prev, prev_len, i == 0, src.ndocs);
            if (l.term_len > sizeof prev)
                abort();
            memcpy(prev, l.term, l.term_len);
            prev_len = l.term_len;
        }
        tdm_pisa_close(h);
    }
    if (rc != TDM_OK && rc != TDM_ERR_NOMEM && !strstr(tdm_err_msg(&err), base))
        abort();   /* every error names the file */
    tdm_err_clear(&err);
    return 0;
}
