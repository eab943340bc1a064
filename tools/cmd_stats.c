/* `tandem stats` and `tandem lookup`: what an index holds. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/error.h"
#include "index/format.h"
#include "index/reader.h"
#include "resident/resident.h"
#include "text/tokenize.h"
#include "tandem.h"

#define TDM_STR_(x) #x
#define TDM_STR(x) TDM_STR_(x)

/* Payload bytes of the arena by kind, and the list-length histogram. */
typedef struct walk {
    uint64_t doc_words, freq_words, hist_lists[33], hist_post[33];
} walk;

static int walk_lists(const tdm_ireader *r, walk *w, tdm_err *err)
{
    memset(w, 0, sizeof *w);
    for (uint64_t i = 0; i < tdm_ireader_info_get(r)->nterms; i++) {
        tdm_ilist l;
        int rc = tdm_ireader_list(r, i, &l, err);
        if (rc)
            return rc;
        w->doc_words += l.docs.nwords * 4;
        w->freq_words += l.freqs.nwords * 4;
        int bucket = 0;
        while (bucket < 32 && (2ull << bucket) <= l.df)
            bucket++;
        w->hist_lists[bucket]++;
        w->hist_post[bucket] += l.df;
    }
    return TDM_OK;
}

static void print_row(const char *name, uint64_t bytes, double np)
{
    printf("%-22s %14llu %12.3f\n", name, (unsigned long long)bytes, bytes / np);
}

static void print_stats(const tdm_ireader *r, const walk *w)
{
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    double np = in->npostings ? (double)in->npostings : 1;
    printf("index          %s (format %u, %llu bytes)\n", tdm_ireader_path(r), in->version,
           (unsigned long long)in->file_size);
    printf("documents      %llu\nterms          %llu\npostings       %llu\n",
           (unsigned long long)in->ndocs, (unsigned long long)in->nterms,
           (unsigned long long)in->npostings);
    printf("avg doc length %.2f (%llu tokens)\n", in->avg_doclen,
           (unsigned long long)in->total_doclen);
    printf("codec          %s\nstemmer        %s\nstopwords      %u\n", in->codec, in->stemmer,
           in->nstopwords);
    if (!in->impact)
        printf("bm25           k1=%g b=%g\n", in->k1, in->b);
    else if (in->quant == TDM_QUANT_LINEAR)
        printf("scoring        impact (quantized linear:%u, largest weight %.9g, scale %.9g)\n",
               in->quant_bits, in->quant_max, in->quant_scale);
    else if (in->quant == TDM_QUANT_SCALE)
        printf("scoring        impact (quantized scale:%.17g)\n", in->quant_scale);
    else
        printf("scoring        impact (integer weights as given)\n");
    if (in->shard)
        printf("shard          %u of %u of split %016llx: documents [%u, %u); documents,\n"
               "               average length and dfs are the whole index's (%llu postings)\n",
               in->shard_index, in->nshards, (unsigned long long)in->split_id, in->doc_lo,
               in->doc_hi, (unsigned long long)in->whole_npostings);
    printf("block entries  %llu\n", (unsigned long long)in->block_entries);
    printf("device memory  %llu bytes (resident: sections arena .. doclens)\n",
           (unsigned long long)tdm_resident_bytes_needed(r));
    printf("\n%-22s %14s %12s\n", "section", "bytes", "bytes/post");
    for (unsigned s = 0; s < TDM_SEC_COUNT; s++) {
        print_row(tdm_ireader_section_name(s), in->section_size[s], np);
        if (s != TDM_SEC_ARENA)
            continue;
        print_row("  arena: docids", w->doc_words, np);
        print_row("  arena: freqs", w->freq_words, np);
        print_row("  arena: params", in->section_size[s] - w->doc_words - w->freq_words, np);
    }
    /* Everything but the compressed docids and frequencies: descriptors,
     * block table, lexicon, documents, header, padding. */
    print_row("metadata", in->file_size - w->doc_words - w->freq_words, np);
    print_row("total", in->file_size, np);
    printf("\n%-22s %12s %14s\n", "list length (df)", "lists", "postings");
    for (int b = 0; b < 33; b++)
        if (w->hist_lists[b])
            printf("%10llu - %-9llu %12llu %14llu\n", 1ull << b, (2ull << b) - 1,
                   (unsigned long long)w->hist_lists[b], (unsigned long long)w->hist_post[b]);
}

int tdm_cmd_stats(int argc, char **argv)
{
    const char *path = NULL;
    int verify = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: tandem stats INDEX [--verify]\n"
                   "  documents, terms, postings, bytes per posting per section,\n"
                   "  list-length histogram; --verify checks every checksum and list\n");
            return 0;
        } else if (!strcmp(argv[i], "--verify")) {
            verify = 1;
        } else if (!path && argv[i][0] != '-') {
            path = argv[i];
        } else {
            return tdm_cli_usage("stats", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!path)
        return tdm_cli_usage("stats", "usage: tandem stats INDEX [--verify]");
    tdm_err err = {0};
    tdm_ireader *r = NULL;
    walk w;
    int rc = tdm_ireader_open(path, &r, &err);
    if (!rc)
        rc = walk_lists(r, &w, &err);
    if (!rc)
        print_stats(r, &w);
    if (!rc && verify) {
        rc = tdm_ireader_verify(r, &err);
        if (!rc)
            printf("\nverify         ok (checksums, every list decoded and checked)\n");
    }
    tdm_ireader_close(r);
    if (rc) {
        int code = tdm_cli_fail("stats", "%s: %s", tdm_strerror(rc), tdm_err_msg(&err));
        tdm_err_clear(&err);
        return code;
    }
    return 0;
}

/* Why the tokenizer made no term of `word`: its words are runs of letters
 * and digits (any byte of a UTF-8 sequence counts as one), and it skips runs
 * longer than TDM_TERM_MAX_BYTES and the index's stopwords. */
static const char *why_no_term(const char *word)
{
    size_t run = 0, shortest = 0;
    for (const unsigned char *p = (const unsigned char *)word;; p++) {
        if (*p && (isalnum(*p) || *p >= 0x80)) {
            run++;
            continue;
        }
        if (run && (!shortest || run < shortest))
            shortest = run;
        run = 0;
        if (!*p)
            break;
    }
    if (!shortest)
        return "no letters or digits";
    if (shortest > TDM_TERM_MAX_BYTES)
        return "a word over " TDM_STR(TDM_TERM_MAX_BYTES) " bytes, which the tokenizer skips";
    return "a stopword of the index";
}

/* The runs of ASCII letters and digits in `word`: the tokenizer's words
 * (tokenize.h), of which lookup takes exactly one. */
static int count_words(const char *word)
{
    int n = 0, in = 0;
    for (const unsigned char *p = (const unsigned char *)word; *p; p++) {
        int an = *p < 0x80 && isalnum(*p);
        n += an && !in;
        in = an;
    }
    return n;
}

int tdm_cmd_lookup(int argc, char **argv)
{
    const char *path = NULL, *word = NULL, *v;
    long limit = 10;
    int exact = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: tandem lookup INDEX TERM [--limit N] [--exact]\n"
                   "  TERM goes through the tokenizer, stopwords and stemmer of the index\n"
                   "  (--exact: TERM is a term as stored, as 'tandem terms' prints it);\n"
                   "  prints df, cf and the first N postings (default 10, 0 for all)\n");
            return 0;
        } else if (!strcmp(argv[i], "--exact")) {
            exact = 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--limit"))) {
            uint64_t u;
            if (tdm_cli_uint("lookup", "--limit", v, 0, UINT32_MAX, &u))
                return TDM_CLI_EXIT_USAGE;
            limit = (long)u;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return tdm_cli_usage("lookup", "unknown or incomplete option '%s'", argv[i]);
        } else if (!path) {
            path = argv[i];
        } else if (!word) {
            word = argv[i];
        } else {
            return tdm_cli_usage("lookup", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!path || !word)
        return tdm_cli_usage("lookup", "usage: tandem lookup INDEX TERM [--limit N] [--exact]");
    /* Several words would be cut to the first without a word (Zurich with
     * an umlaut is z, rich: non-ASCII bytes separate words). */
    int nw = exact ? 1 : count_words(word);
    if (nw > 1)
        return tdm_cli_usage("lookup", "'%s' is %d words to the tokenizer (every byte but an "
                             "ASCII letter or digit separates words): look up one at a time",
                             word, nw);
    tdm_index *ix;
    if (tdm_index_open(path, &ix) != TDM_OK)
        return tdm_cli_fail("lookup", "%s", tdm_last_error());
    char term[256];
    int rc = TDM_OK;
    if (!exact)
        rc = tdm_index_normalize(ix, word, term, sizeof term);
    else if (strlen(word) < sizeof term)
        memcpy(term, word, strlen(word) + 1);
    else
        rc = TDM_ERR_LIMIT; /* longer than any stored term */
    if (rc == TDM_ERR_LIMIT && exact) {
        printf("term %s: not in the index\n", word);
        tdm_index_close(ix);
        return 1;
    }
    if (rc == TDM_ERR_NOT_FOUND) {
        printf("'%s' yields no term (%s)\n", word, why_no_term(word));
        tdm_index_close(ix);
        return 1;
    }
    uint32_t df = 0;
    uint64_t cf = 0;
    if (rc == TDM_OK)
        rc = tdm_index_term_get(ix, term, &df, &cf);
    if (rc == TDM_ERR_NOT_FOUND) {
        printf("term %s: not in the index\n", term);
        tdm_index_close(ix);
        return 1;
    }
    uint32_t *d = rc ? NULL : malloc(((size_t)df + 1) * 8);
    size_t n = 0;
    if (!rc)
        rc = d ? tdm_index_postings_get(ix, term, d, d + df, df, &n) : TDM_ERR_NOMEM;
    if (!rc) {
        printf("term %s\ndf %u\ncf %llu\n", term, df, (unsigned long long)cf);
        size_t show = limit <= 0 || (size_t)limit > n ? n : (size_t)limit;
        printf("%-10s %-6s %s\n", "docid", "tf", "name");
        for (size_t i = 0; i < show; i++)
            printf("%-10u %-6u %s\n", d[i], d[df + i], tdm_index_docname(ix, d[i]));
        if (show < n)
            printf("... %zu more\n", n - show);
    } else {
        tdm_cli_fail("lookup", "%s: %s", tdm_strerror(rc), tdm_last_error());
    }
    free(d);
    tdm_index_close(ix);
    return rc ? 1 : 0;
}
