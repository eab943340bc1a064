/* Synthetic collections: Zipf tokens (Hörmann & Derflinger's
 * rejection-inversion, as in Apache Commons' RejectionInversionZipfSampler),
 * log-normal lengths, names by frequency rank from a query log; or learned
 * sparse vectors of distinct Zipf-ranked terms with log-normal impacts. */
#include "collection_gen.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/buf.h"
#include "common/fsutil.h"
#include "common/rng.h"
#include "tandem.h"
#include "common/workers.h"

#define WORD_MAX 64 /* the tokenizer's TDM_TERM_MAX_BYTES */
#define TOKEN_MAX 1024 /* a JSON vector term's longest (host/build/vector.h) */
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- random numbers: common/rng.h's splitmix64, plus a spare normal */

typedef struct rng {
    tdm_rng s;
    double spare;       /* the second Box-Muller normal */
    int has_spare;
} rng;

/* Uniform in (0, 1): never 0, so logs are finite. */
static double rng_open01(rng *r) { return tdm_rng_open01(&r->s); }

static double rng_normal(rng *r)
{
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u = rng_open01(r), v = rng_open01(r);
    double m = sqrt(-2.0 * log(u));
    r->spare = m * sin(2.0 * M_PI * v);
    r->has_spare = 1;
    return m * cos(2.0 * M_PI * v);
}

/* ---- Zipf by rejection-inversion: ranks 1..n, P(k) ~ k^-s */

typedef struct zipf {
    double n, s;
    double h_x1, h_n, threshold;
} zipf;

/* log1p(x)/x and expm1(x)/x, exact near 0 (where s = 1 makes x vanish). */
static double helper1(double x)
{
    return fabs(x) > 1e-8 ? log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

static double helper2(double x)
{
    return fabs(x) > 1e-8 ? expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}

static double zipf_h(const zipf *z, double x) { return exp(-z->s * log(x)); }

static double zipf_hint(const zipf *z, double x)
{
    double lx = log(x);
    return helper2((1.0 - z->s) * lx) * lx;
}

static double zipf_hinv(const zipf *z, double x)
{
    double t = x * (1.0 - z->s);
    if (t < -1.0)
        t = -1.0; /* rounding guard */
    return exp(helper1(t) * x);
}

static void zipf_init(zipf *z, uint64_t n, double s)
{
    z->n = (double)n;
    z->s = s;
    z->h_x1 = zipf_hint(z, 1.5) - 1.0;
    z->h_n = zipf_hint(z, z->n + 0.5);
    z->threshold = 2.0 - zipf_hinv(z, zipf_hint(z, 2.5) - zipf_h(z, 2.0));
}

/* A rank in [1, n]. */
static uint64_t zipf_sample(const zipf *z, rng *r)
{
    for (;;) {
        double u = z->h_n + rng_open01(r) * (z->h_x1 - z->h_n);
        double x = zipf_hinv(z, u);
        double k = floor(x + 0.5);
        if (k < 1)
            k = 1;
        else if (k > z->n)
            k = z->n;
        if (k - x <= z->threshold || u >= zipf_hint(z, k + 0.5) - zipf_h(z, k))
            return (uint64_t)k;
    }
}

/* ---- a word counter: open addressing over an arena of word bytes */

typedef struct entry {
    uint64_t hash, count;
    uint64_t last;      /* the query line that counted it last (counter_add_line) */
    uint64_t off;       /* into words.p; 0 = empty slot (arena starts with a pad byte) */
    uint32_t len;
} entry;

typedef struct counter {
    entry *slot;
    size_t cap, n;
    char *p;            /* NUL-terminated words */
    size_t len, pcap;
} counter;

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static entry *counter_find(const counter *c, const char *w, size_t n, uint64_t h)
{
    for (size_t i = h & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
        entry *e = &c->slot[i];
        if (!e->off || (e->hash == h && e->len == n && !memcmp(c->p + e->off, w, n)))
            return e;
    }
}

static int counter_grow(counter *c)
{
    size_t cap = c->cap ? 2 * c->cap : 1024;
    entry *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    entry *old = c->slot;
    size_t oldcap = c->cap;
    c->slot = s;
    c->cap = cap;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].off)
            *counter_find(c, c->p + old[i].off, old[i].len, old[i].hash) = old[i];
    free(old);
    return 0;
}

/* The entry of w, added with count 0 when new; NULL when memory runs out. */
static entry *counter_get(counter *c, const char *w, size_t n)
{
    if ((c->n + 1) * 2 > c->cap && counter_grow(c))
        return NULL;
    uint64_t h = hash_bytes(w, n);
    entry *e = counter_find(c, w, n, h);
    if (!e->off) {
        if (c->len + n + 2 > c->pcap) {
            size_t cap = c->pcap ? 2 * c->pcap : 65536;
            while (cap < c->len + n + 2)
                cap *= 2;
            char *p = realloc(c->p, cap);
            if (!p)
                return NULL;
            c->p = p;
            c->pcap = cap;
        }
        if (c->len == 0)
            c->p[c->len++] = 0; /* offset 0 marks an empty slot */
        memcpy(c->p + c->len, w, n);
        c->p[c->len + n] = 0;
        *e = (entry){.hash = h, .off = c->len, .len = (uint32_t)n};
        c->len += n + 1;
        c->n++;
    }
    return e;
}

static int counter_add(counter *c, const char *w, size_t n, uint64_t times)
{
    entry *e = counter_get(c, w, n);
    if (!e)
        return -1;
    e->count += times;
    return 0;
}

/* Counts w once for query line `line` (>= 1), however often the line repeats it. */
static int counter_add_line(counter *c, const char *w, size_t n, uint64_t line)
{
    entry *e = counter_get(c, w, n);
    if (!e)
        return -1;
    if (e->last != line) {
        e->last = line;
        e->count++;
    }
    return 0;
}

static int counter_has(const counter *c, const char *w, size_t n)
{
    return c->cap && counter_find(c, w, n, hash_bytes(w, n))->off != 0;
}

static void counter_free(counter *c)
{
    free(c->slot);
    free(c->p);
}

/* Adds every word of text[0..n) (the tokenizer's rule, no stemming). */
static int count_words(counter *c, const char *text, size_t n)
{
    char w[WORD_MAX];
    size_t len = 0, run = 0;
    for (size_t i = 0; i <= n; i++) {
        unsigned char ch = i < n ? (unsigned char)text[i] : ' ';
        int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
        if (alnum) {
            if (len < WORD_MAX)
                w[len++] = (char)(ch | (ch >= 'A' && ch <= 'Z' ? 0x20 : 0));
            run++;
            continue;
        }
        if (run && run <= WORD_MAX && counter_add(c, w, len, 1))
            return -1;
        len = run = 0;
    }
    return 0;
}

/* ---- query words by frequency */

typedef struct ranked {
    uint64_t count;
    const char *s;
    uint32_t len;
} ranked;

/* Count descending, ties in byte order: the same ranking on every platform. */
static int by_count(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->s, y->s);
}

/* Copies the ranked words out as one block: n pointers, then the strings. */
static int ranked_words(const counter *c, char ***words, size_t *n, uint64_t **counts)
{
    ranked *e = malloc((c->n ? c->n : 1) * sizeof *e);
    char **out = malloc(c->n * sizeof *out + c->len + 1);
    uint64_t *cnt = counts ? malloc((c->n ? c->n : 1) * sizeof *cnt) : NULL;
    if (!e || !out || (counts && !cnt)) {
        free(e);
        free(out);
        free(cnt);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < c->cap; i++)
        if (c->slot[i].off)
            e[k++] = (ranked){c->slot[i].count, c->p + c->slot[i].off, c->slot[i].len};
    qsort(e, k, sizeof *e, by_count);
    char *s = (char *)(out + k);
    for (size_t i = 0; i < k; i++) {
        memcpy(s, e[i].s, e[i].len + 1);
        out[i] = s;
        s += e[i].len + 1;
        if (cnt)
            cnt[i] = e[i].count;
    }
    free(e);
    *words = out;
    *n = k;
    if (counts)
        *counts = cnt;
    return 0;
}

static int load_query_counter(const char *path, counter *c, tdm_err *err)
{
    size_t n;
    char *text = (char *)tdm_read_file(path, &n);
    if (!text) /* EINVAL: a directory, FIFO or device (tdm_read_file) */
        return tdm_err_set(err, errno == ENOENT ? TDM_ERR_NOT_FOUND : TDM_ERR_IO, "%s: %s",
                           path, errno == EINVAL ? "not a regular file" : strerror(errno));
    int rc = TDM_OK;
    for (size_t i = 0; i < n && rc == TDM_OK;) {
        char *nl = memchr(text + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - text) : n;
        char *colon = memchr(text + i, ':', end - i); /* "id:query" */
        size_t from = colon ? (size_t)(colon - text) + 1 : i;
        if (count_words(c, text + from, end - from))
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory counting words", path);
        i = end + 1;
    }
    free(text);
    return rc;
}

/* ---- query tokens (learned sparse logs), plain or gzip */

typedef struct tokenizer {
    counter *c;
    char tok[TOKEN_MAX], prev[TOKEN_MAX];
    size_t len, prev_len;   /* prev_len: the last token counted on this line, or SIZE_MAX */
    int too_long;
    uint64_t line;
} tokenizer;

/* Counts the token gathered so far; a run of one token repeated (a weight)
 * is compared to the previous token instead of hashed again. */
static int token_end(tokenizer *t)
{
    int rc = 0;
    if (t->len && !t->too_long &&
        !(t->len == t->prev_len && !memcmp(t->tok, t->prev, t->len))) {
        rc = counter_add_line(t->c, t->tok, t->len, t->line);
        memcpy(t->prev, t->tok, t->len);
        t->prev_len = t->len;
    }
    t->len = 0;
    t->too_long = 0;
    return rc;
}

enum { AT_START, IN_ID, IN_TOKENS, SKIP_LINE };

static int tokens_of(tokenizer *t, const char *p, size_t n, int *state)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == '\n') {
            if (token_end(t))
                return -1;
            *state = AT_START;
            t->line++;
            t->prev_len = SIZE_MAX;
            continue;
        }
        if (*state == AT_START)
            *state = ch == '{' ? SKIP_LINE : IN_ID;
        if (*state == SKIP_LINE)
            continue;
        if (*state == IN_ID) {
            if (ch == '\t' || ch == ':')
                *state = IN_TOKENS;
            continue;
        }
        if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f') {
            if (token_end(t))
                return -1;
        } else if (t->len < TOKEN_MAX && ch) {
            t->tok[t->len++] = (char)ch;
        } else {
            t->too_long = 1;    /* over TOKEN_MAX, or a NUL: no term can hold it */
        }
    }
    return 0;
}

static int load_query_tokens(const char *path, counter *c, tdm_err *err)
{
    gzFile f = gzopen(path, "rb");
    if (!f)
        return tdm_err_set(err, errno == ENOENT ? TDM_ERR_NOT_FOUND : TDM_ERR_IO, "%s: %s",
                           path, strerror(errno));
    size_t cap = (size_t)1 << 20;
    char *buf = malloc(cap);
    tokenizer *t = malloc(sizeof *t);
    int rc = buf && t ? TDM_OK : tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory", path);
    if (t)
        *t = (tokenizer){.c = c, .prev_len = SIZE_MAX, .line = 1};
    int state = AT_START, got = 0;
    while (rc == TDM_OK && (got = gzread(f, buf, (unsigned)cap)) > 0)
        if (tokens_of(t, buf, (size_t)got, &state))
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory counting tokens", path);
    int zerr = Z_OK;
    const char *msg = gzerror(f, &zerr);
    if (rc == TDM_OK && (got < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)))
        rc = tdm_err_set(err, TDM_ERR_IO, "%s: read: %s", path,
                         zerr == Z_ERRNO ? strerror(errno) : msg);
    if (rc == TDM_OK && token_end(t))
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory counting tokens", path);
    gzclose(f);
    free(buf);
    free(t);
    return rc;
}

int tdm_gen_query_tokens(const char *path, char ***words, size_t *n, uint64_t **counts,
                         tdm_err *err)
{
    counter c = {0};
    int rc = load_query_tokens(path, &c, err);
    if (rc == TDM_OK && ranked_words(&c, words, n, counts))
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory", path);
    counter_free(&c);
    return rc;
}

int tdm_gen_query_words(const char *path, char ***words, size_t *n, uint64_t **counts,
                        tdm_err *err)
{
    counter c = {0};
    int rc = load_query_counter(path, &c, err);
    if (rc == TDM_OK && ranked_words(&c, words, n, counts))
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory", path);
    counter_free(&c);
    return rc;
}

/* ---- names by rank */

typedef struct names {
    char *p;
    uint64_t *off;      /* name i is p[off[i] .. off[i+1]) */
    uint64_t n;
} names;

/* Letters of j + 676 in base 26 (so at least three), first digit first. */
static size_t synth_name(uint64_t j, char *out)
{
    char tmp[16];
    size_t n = 0;
    for (uint64_t v = j + 676; v; v /= 26)
        tmp[n++] = (char)('a' + v % 26);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

/* w as the inside of a JSON string into out (room for 6 x strlen(w)); its length. */
static size_t json_escape(const char *w, char *out)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)w; *p; p++) {
        if (*p == '"' || *p == '\\') {
            out[n++] = '\\';
            out[n++] = (char)*p;
        } else if (*p < 0x20) {
            memcpy(out + n, "\\u00", 4);
            out[n + 4] = hex[*p >> 4];
            out[n + 5] = hex[*p & 15];
            n += 6;
        } else {
            out[n++] = (char)*p;
        }
    }
    return n;
}

static int names_build(names *nm, uint64_t v, char **qw, size_t nq, const counter *qset,
                       int escape)
{
    size_t cap = 1 << 20, len = 0;
    nm->p = malloc(cap);
    nm->off = malloc((v + 1) * sizeof *nm->off);
    if (!nm->p || !nm->off)
        return -1;
    uint64_t j = 0;
    for (uint64_t k = 0; k < v; k++) {
        char buf[WORD_MAX + 1], esc[6 * TOKEN_MAX];
        const char *w = buf;
        size_t n;
        if (k < nq && escape) { /* a JSON vector's key */
            n = json_escape(qw[k], esc);
            w = esc;
        } else if (k < nq) {
            w = qw[k];
            n = strlen(w);
        } else {
            do /* skip synthetic names that a query word already has */
                n = synth_name(j++, buf);
            while (counter_has(qset, buf, n));
        }
        while (len + n > cap) {
            char *p = realloc(nm->p, cap *= 2);
            if (!p)
                return -1;
            nm->p = p;
        }
        nm->off[k] = len;
        memcpy(nm->p + len, w, n);
        len += n;
    }
    nm->off[v] = len;
    nm->n = v;
    return 0;
}

static int names_make(names *nm, const tdm_gen_options *o, uint64_t v, tdm_err *err)
{
    counter qset = {0};
    char **qw = NULL;
    size_t nq = 0;
    int rc = TDM_OK;
    int vec = o->format == TDM_GEN_VECTORS;
    if (o->vocab_from) {
        rc = vec ? load_query_tokens(o->vocab_from, &qset, err)
                 : load_query_counter(o->vocab_from, &qset, err);
        if (rc == TDM_OK && ranked_words(&qset, &qw, &nq, NULL))
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory", o->vocab_from);
    }
    if (rc == TDM_OK && names_build(nm, v, qw, nq, &qset, vec))
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for %llu term names",
                         (unsigned long long)v);
    free(qw);
    counter_free(&qset);
    return rc;
}

/* ---- the collection */

uint64_t tdm_gen_default_vocab(uint64_t ndocs, double mean_len)
{
    double t = (double)ndocs * (mean_len > 0 ? mean_len : 250.0);
    double v = 10.0 * pow(t, 0.6);
    /* Compared as doubles: a value above 2^64 must not reach the conversion. */
    return v < 1000 ? 1000 : v >= (double)TDM_GEN_MAX_VOCAB ? TDM_GEN_MAX_VOCAB : (uint64_t)v;
}

typedef struct gen {
    const tdm_gen_options *o;
    names nm;
    size_t name_max;    /* the longest name */
    zipf z;
    double mu, sigma;
    uint64_t v;         /* vocabulary */
    uint64_t terms_max; /* vectors: the most distinct terms a document, v / 2 or 1 */
} gen;

/* Each document draws from its own stream, seeded from (seed, docid): the
 * collection is the same for any number of threads. */
static void doc_rng(rng *r, uint64_t seed, uint64_t d)
{
    tdm_rng m = {d};
    *r = (rng){.s = {seed ^ tdm_rng_next(&m)}};
}

static uint64_t doc_length(const gen *g, rng *r)
{
    double x = exp(g->mu + g->sigma * rng_normal(r));
    return x < 1.0 ? 1 : x > 1e6 ? 1000000 : (uint64_t)llround(x);
}

/* ---- learned sparse vectors */

/* The impact of a posting of the term of 0-based rank k: log-normal with
 * median 20 + 3 ln(k + 1) (20 for the most frequent term, 51 for rank 30522:
 * rarer terms weigh more, as SPLADE's idf-like weights) and shape 0.7,
 * rounded, clamped to 1 .. TDM_GEN_IMPACT_MAX. An assumption stated in
 * docs/LEARNED_SPARSE.md: most impacts are small, a long tail reaches the cap. */
static unsigned impact_of(uint64_t k, rng *r)
{
    double x = (20.0 + 3.0 * log((double)k + 1.0)) * exp(0.7 * rng_normal(r));
    return x < 1.5 ? 1u : x >= TDM_GEN_IMPACT_MAX ? TDM_GEN_IMPACT_MAX : (unsigned)lround(x);
}

/* A document's set of term ranks (open addressing, rank + 1; 0 = empty). */
typedef struct rankset {
    uint64_t *slot;
    size_t cap;
} rankset;

static int rankset_clear(rankset *s, uint64_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    if (cap > s->cap) {
        free(s->slot);
        s->slot = malloc(cap * sizeof *s->slot);
        s->cap = s->slot ? cap : 0;
        if (!s->slot)
            return -1;
    }
    memset(s->slot, 0, s->cap * sizeof *s->slot);
    return 0;
}

/* 1 when k was not in the set (and is now), else 0. */
static int rankset_add(rankset *s, uint64_t k)
{
    size_t mask = s->cap - 1;
    for (size_t i = (size_t)((k + 1) * 0x9E3779B97F4A7C15ull >> 20) & mask;; i = (i + 1) & mask) {
        if (s->slot[i] == k + 1)
            return 0;
        if (!s->slot[i]) {
            s->slot[i] = k + 1;
            return 1;
        }
    }
}

static char *put_uint(char *p, unsigned x)
{
    char tmp[10];
    size_t n = 0;
    do
        tmp[n++] = (char)('0' + x % 10);
    while (x /= 10);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* A rank for a vector's next term: Zipf, or uniform once the document has
 * drawn many repeats (a document of many terms over a small vocabulary). */
static uint64_t vector_rank(const gen *g, rng *r, uint64_t draws, uint64_t len)
{
    if (draws <= 8 * len + 64)
        return zipf_sample(&g->z, r) - 1;
    uint64_t k = (uint64_t)(rng_open01(r) * (double)g->v);
    return k < g->v ? k : g->v - 1;
}

/* Appends vector document d to b: distinct terms, each once with its impact;
 * returns its postings, or 0 on allocation failure. */
static uint64_t make_vector_doc(const gen *g, uint64_t d, tdm_buf *b, rankset *set)
{
    char head[80];
    int hn = snprintf(head, sizeof head, "{\"id\": \"doc%llu\", \"contents\": \"\", \"vector\": {",
                      (unsigned long long)d);
    rng r;
    doc_rng(&r, g->o->seed, d);
    uint64_t len = doc_length(g, &r);
    if (len > g->terms_max)
        len = g->terms_max;
    if (rankset_clear(set, len) || tdm_buf_reserve(b, (size_t)hn + len * (g->name_max + 10) + 4))
        return 0;
    char *p = b->p + b->len;
    memcpy(p, head, (size_t)hn);
    p += hn;
    uint64_t draws = 0;
    for (uint64_t t = 0; t < len;) {
        uint64_t k = vector_rank(g, &r, ++draws, len);
        if (!rankset_add(set, k))
            continue;
        size_t n = g->nm.off[k + 1] - g->nm.off[k];
        if (t++)
            *p++ = ',', *p++ = ' ';
        *p++ = '"';
        memcpy(p, g->nm.p + g->nm.off[k], n);
        p += n;
        *p++ = '"', *p++ = ':', *p++ = ' ';
        p = put_uint(p, impact_of(k, &r));
    }
    memcpy(p, "}}\n", 3);
    b->len = (size_t)(p + 3 - b->p);
    return len;
}

/* ---- text documents */

/* Appends document d to b; returns its token count, or 0 on allocation failure. */
static uint64_t make_doc(const gen *g, uint64_t d, tdm_buf *b)
{
    char head[64];
    int json = g->o->format == TDM_GEN_JSONL;
    int hn = snprintf(head, sizeof head, json ? "{\"id\": \"doc%llu\", \"contents\": \""
                                              : "doc%llu\t", (unsigned long long)d);
    rng r;
    doc_rng(&r, g->o->seed, d);
    uint64_t len = doc_length(g, &r);
    if (tdm_buf_reserve(b, (size_t)hn + len * (g->name_max + 1) + 4))
        return 0;
    char *p = b->p + b->len;
    memcpy(p, head, (size_t)hn);
    p += hn;
    for (uint64_t t = 0; t < len; t++) {
        uint64_t k = zipf_sample(&g->z, &r) - 1;
        size_t n = g->nm.off[k + 1] - g->nm.off[k];
        if (t)
            *p++ = ' ';
        memcpy(p, g->nm.p + g->nm.off[k], n);
        p += n;
    }
    if (json) {
        memcpy(p, "\"}\n", 3);
        p += 3;
    } else {
        *p++ = '\n';
    }
    b->len = (size_t)(p - b->p);
    return len;
}

/* ---- generating on threads, writing in order */

#define GEN_BLOCK 256   /* documents a work item */

typedef struct block {
    tdm_buf b;
    tdm_buf z;          /* b as a gzip member (options' gzip) */
    rankset set;        /* vectors: the document's terms */
    uint64_t tokens;
    int bad;            /* out of memory */
} block;

/* Consecutive blocks: generated by workers, then written by one thread
 * while the workers fill the other window. */
typedef struct window {
    const gen *g;
    block *blk;
    size_t n;
    uint64_t first;     /* docid of blk[0]'s first document */
    FILE *out;
    int werr;           /* errno of a failed write, else 0 */
} window;

/* b as one gzip member into z (zlib level 1: compressing must keep up with
 * generating); -1 when memory runs out. */
static int gzip_block(const tdm_buf *b, tdm_buf *z)
{
    z_stream s = {0};
    if (b->len > UINT32_MAX / 2 ||
        deflateInit2(&s, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    uLong bound = deflateBound(&s, (uLong)b->len);
    z->len = 0;
    int rc = -1;
    if (tdm_buf_reserve(z, bound) == 0) {
        s.next_in = (Bytef *)b->p;
        s.avail_in = (uInt)b->len;
        s.next_out = (Bytef *)z->p;
        s.avail_out = (uInt)bound;
        rc = deflate(&s, Z_FINISH) == Z_STREAM_END ? 0 : -1;
        z->len = (size_t)(bound - s.avail_out);
    }
    deflateEnd(&s);
    return rc;
}

static void gen_block(void *ctx, size_t i, unsigned worker)
{
    (void)worker;
    window *w = ctx;
    block *k = &w->blk[i];
    uint64_t d = w->first + (uint64_t)i * GEN_BLOCK, end = d + GEN_BLOCK;
    if (end > w->g->o->ndocs)
        end = w->g->o->ndocs;
    k->b.len = 0;
    k->tokens = 0;
    k->bad = 0;
    int vec = w->g->o->format == TDM_GEN_VECTORS;
    for (; d < end && !k->bad; d++) {
        uint64_t n = vec ? make_vector_doc(w->g, d, &k->b, &k->set) : make_doc(w->g, d, &k->b);
        k->bad = n == 0;
        k->tokens += n;
    }
    if (!k->bad && w->g->o->gzip)
        k->bad = gzip_block(&k->b, &k->z) != 0;
}

static void *write_window(void *arg)
{
    window *w = arg;
    for (size_t i = 0; i < w->n && !w->werr; i++) {
        const tdm_buf *b = w->g->o->gzip ? &w->blk[i].z : &w->blk[i].b;
        if (fwrite(b->p, 1, b->len, w->out) != b->len)
            w->werr = errno ? errno : EIO;
    }
    return NULL;
}

typedef struct pipeline {
    window win[2];
    pthread_t writer;
    int writing;        /* win[writer_win] is being written */
    size_t writer_win;
} pipeline;

/* Waits for the window being written; its write error, if any. */
static int join_writer(pipeline *p, const char *name, tdm_err *err)
{
    if (!p->writing)
        return TDM_OK;
    pthread_join(p->writer, NULL);
    p->writing = 0;
    int e = p->win[p->writer_win].werr;
    return e ? tdm_err_set(err, TDM_ERR_IO, "%s: write: %s", name, strerror(e)) : TDM_OK;
}

static int write_async(pipeline *p, size_t k, const char *name, tdm_err *err)
{
    p->writer_win = k;
    p->win[k].werr = 0;
    if (pthread_create(&p->writer, NULL, write_window, &p->win[k]) == 0) {
        p->writing = 1;
        return TDM_OK;
    }
    write_window(&p->win[k]);   /* no thread: write it here */
    int e = p->win[k].werr;
    return e ? tdm_err_set(err, TDM_ERR_IO, "%s: write: %s", name, strerror(e)) : TDM_OK;
}

static int generate(const gen *g, unsigned threads, FILE *out, const char *name, tdm_err *err)
{
    const tdm_gen_options *o = g->o;
    size_t per = 4 * (size_t)threads;   /* blocks a window */
    pipeline p = {0};
    int rc = TDM_OK;
    for (size_t k = 0; k < 2; k++) {
        p.win[k] = (window){.g = g, .blk = calloc(per, sizeof(block)), .out = out};
        if (!p.win[k].blk)
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    uint64_t tokens = 0, step = (uint64_t)per * GEN_BLOCK;
    for (uint64_t first = 0, k = 0; rc == TDM_OK && first < o->ndocs; first += step, k ^= 1) {
        window *w = &p.win[k];
        w->first = first;
        w->n = (size_t)((o->ndocs - first + GEN_BLOCK - 1) / GEN_BLOCK);
        if (w->n > per)
            w->n = per;
        tdm_par_for(threads, w->n, gen_block, w);
        rc = join_writer(&p, name, err);
        for (size_t i = 0; i < w->n && rc == TDM_OK; i++) {
            if (w->blk[i].bad)
                rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for document %llu",
                                 (unsigned long long)(first + i * GEN_BLOCK));
            tokens += w->blk[i].tokens;
        }
        if (rc == TDM_OK)
            rc = write_async(&p, k, name, err);
        uint64_t done = first + step < o->ndocs ? first + step : o->ndocs;
        if (rc == TDM_OK && o->progress)
            o->progress(o->progress_user, done, tokens);
    }
    int rc2 = join_writer(&p, name, err);
    if (rc == TDM_OK)
        rc = rc2;
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; p.win[k].blk && i < per; i++) {
            free(p.win[k].blk[i].b.p);
            free(p.win[k].blk[i].z.p);
            free(p.win[k].blk[i].set.slot);
        }
    free(p.win[0].blk);
    free(p.win[1].blk);
    return rc;
}

/* A double option: 0 (the default) or finite in (0, max]. */
static int bad_real(double x, double max)
{
    return !(x == 0 || (isfinite(x) && x > 0 && x <= max));
}

static int check_options(const tdm_gen_options *o, tdm_err *err)
{
    if (o->ndocs == 0)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "need at least one document");
    if (bad_real(o->zipf_s, TDM_GEN_MAX_ZIPF))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "zipf exponent %g: expected (0, %g]",
                           o->zipf_s, TDM_GEN_MAX_ZIPF);
    if (bad_real(o->mean_len, TDM_GEN_MAX_MEAN_LEN))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "mean length %g: expected (0, %g]",
                           o->mean_len, TDM_GEN_MAX_MEAN_LEN);
    if (bad_real(o->sigma, TDM_GEN_MAX_SIGMA))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "sigma %g: expected (0, %g]", o->sigma,
                           TDM_GEN_MAX_SIGMA);
    if (o->format != TDM_GEN_LINES && o->format != TDM_GEN_JSONL && o->format != TDM_GEN_VECTORS)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "unknown output format %d", o->format);
    if (o->vocab > TDM_GEN_MAX_VOCAB)
        return tdm_err_set(err, TDM_ERR_LIMIT, "vocabulary of %llu terms (at most 2^32)",
                           (unsigned long long)o->vocab);
    return TDM_OK;
}

int tdm_gen_collection(const tdm_gen_options *o, FILE *out, const char *name, tdm_err *err)
{
    int rc = check_options(o, err);
    if (rc != TDM_OK)
        return rc;
    gen g = {.o = o};
    int vec = o->format == TDM_GEN_VECTORS;
    double mean = o->mean_len > 0 ? o->mean_len : vec ? TDM_GEN_VECTOR_MEAN_TERMS : 250.0;
    g.sigma = o->sigma > 0 ? o->sigma : vec ? TDM_GEN_VECTOR_SIGMA : 0.8;
    g.mu = log(mean) - g.sigma * g.sigma / 2; /* so that E[length] = mean */
    uint64_t v = o->vocab ? o->vocab
                 : vec    ? TDM_GEN_VECTOR_VOCAB
                          : tdm_gen_default_vocab(o->ndocs, mean);
    g.v = v;
    g.terms_max = v / 2 ? v / 2 : 1; /* room to draw distinct terms */
    zipf_init(&g.z, v, o->zipf_s > 0 ? o->zipf_s : 1.0);
    rc = names_make(&g.nm, o, v, err);
    for (uint64_t k = 0; rc == TDM_OK && k < v; k++)
        if (g.nm.off[k + 1] - g.nm.off[k] > g.name_max)
            g.name_max = (size_t)(g.nm.off[k + 1] - g.nm.off[k]);
    unsigned threads = o->threads ? o->threads : tdm_ncpus();
    if (rc == TDM_OK)
        rc = generate(&g, threads, out, name, err);
    if (rc == TDM_OK && fflush(out) != 0)
        rc = tdm_err_set(err, TDM_ERR_IO, "%s: write: %s", name, strerror(errno));
    free(g.nm.p);
    free(g.nm.off);
    return rc;
}
