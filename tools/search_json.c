/* One writer for a search result as JSON (search_json.h), shared by `tandem
 * search --json` and `tandem serve`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_json.h"

/* Length of the UTF-8 sequence at p (n bytes left), 0 if it is not one
 * (overlong forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    size_t len;
    unsigned min, cp;
    if (p[0] < 0x80)
        return 1;
    if ((p[0] & 0xe0) == 0xc0)
        len = 2, min = 0x80, cp = p[0] & 0x1f;
    else if ((p[0] & 0xf0) == 0xe0)
        len = 3, min = 0x800, cp = p[0] & 0x0f;
    else if ((p[0] & 0xf8) == 0xf0)
        len = 4, min = 0x10000, cp = p[0] & 0x07;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

json_t *tdm_cli_json_str(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    /* Not UTF-8 (a document name imported as raw bytes): each bad byte
     * becomes U+FFFD, three bytes. */
    size_t n = strlen(s);
    char *fixed = malloc(3 * n + 1);
    if (!fixed)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t l = utf8_len((const unsigned char *)s + i, n - i);
        if (l) {
            memcpy(fixed + o, s + i, l);
            o += l, i += l;
        } else {
            memcpy(fixed + o, "\xef\xbf\xbd", 3);
            o += 3, i++;
        }
    }
    j = json_stringn(fixed, o);
    free(fixed);
    return j;
}

static const char *variant_name(int v)
{
    return v == TDM_VARIANT_GROUP        ? "group"
           : v == TDM_VARIANT_COMPRESSED ? "compressed"
           : v == TDM_VARIANT_HOST       ? "host"
                                         : "item";
}

static const char *policy_name(int p)
{
    const char *n = tdm_policy_name(p);
    return n ? n : "none";
}

static json_int_t micros(double seconds)
{
    return (json_int_t)llround(seconds * 1e6);
}

/* {"rank", "docid", "name", "score"}, in that order. Set key by key, not
 * by json_pack, which parses its format and checks each key a hit: the
 * hits of k 1000 took 220 us to build that way, 140 this way (tandem
 * serve builds them a request). */
static json_t *hit_json(const tdm_search_result *r, size_t i)
{
    json_t *h = json_object();
    if (!h || json_object_set_new_nocheck(h, "rank", json_integer((json_int_t)(i + 1))) ||
        json_object_set_new_nocheck(h, "docid", json_integer((json_int_t)r->hits[i].docid)) ||
        json_object_set_new_nocheck(h, "name",
                                    tdm_cli_json_str(r->hits[i].name ? r->hits[i].name : "")) ||
        json_object_set_new_nocheck(h, "score", json_real((double)r->hits[i].score))) {
        json_decref(h); /* set_new frees its value, even on failure */
        return NULL;
    }
    return h;
}

static json_t *hits_json(const tdm_search_result *r)
{
    json_t *hits = json_array();
    for (size_t i = 0; hits && i < r->n; i++) {
        json_t *h = hit_json(r, i);
        if (!h || json_array_append_new(hits, h)) {
            json_decref(hits);
            return NULL;
        }
    }
    return hits;
}

json_t *tdm_cli_result_json(tdm_engine *e, const char *text, const tdm_search_result *r)
{
    tdm_device_info info;
    const char *dev = r->device >= 0 && tdm_engine_device_info_get(e, r->device, &info) == TDM_OK
                          ? info.name
                          : "none";
    const char *algo = tdm_algorithm_name(r->algorithm);
    /* "o?" writes NULL as null (a terms query has no text); "o" fails the
     * pack on NULL (out of memory), and json_pack frees what it was given. */
    return json_pack("{s:o?, s:i, s:o, s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:s, s:I, s:I, "
                     "s:I, s:i, s:s, s:s, s:f, s:f, s:I, s:o}",
                     "query", text ? tdm_cli_json_str(text) : json_null(),
                     "device", r->device, "device_name", tdm_cli_json_str(dev),
                     "algorithm", algo ? algo : "none", "seconds", r->seconds,
                     "took_us", micros(r->seconds), "queued_us", micros(r->queue_seconds),
                     "terms", (json_int_t)r->terms, "unknown_terms", (json_int_t)r->unknown,
                     "ranges", (json_int_t)r->ranges, "variant", variant_name(r->variant),
                     "launches", (json_int_t)r->launches,
                     "bytes_up", (json_int_t)r->bytes_up, "bytes_down", (json_int_t)r->bytes_down,
                     "batch", (int)r->batch, "policy", policy_name(r->policy),
                     "load_mode", r->load_mode == TDM_LOAD_BATCH ? "batch" : "single",
                     "queue_seconds", r->queue_seconds,
                     "predicted_seconds", r->predicted_seconds,
                     "handovers", (json_int_t)r->handovers, "hits", hits_json(r));
}

/* The text as jansson writes it, into one buffer that grows by doubling
 * and keeps room for the final '\n' and NUL: json_dumps would copy its
 * text once more and the newline take a realloc. */
typedef struct text_buf {
    char *p;
    size_t n, cap;
} text_buf;

static int text_put(const char *b, size_t n, void *ctx)
{
    text_buf *t = ctx;
    if (t->n + n + 2 > t->cap) {
        size_t cap = t->cap;
        while (cap < t->n + n + 2)
            cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p)
            return -1;
        t->p = p, t->cap = cap;
    }
    memcpy(t->p + t->n, b, n);
    t->n += n;
    return 0;
}

char *tdm_cli_json_dump(const json_t *v, size_t *len)
{
    text_buf t = {malloc(4096), 0, 4096};
    if (!t.p || json_dump_callback(v, text_put, &t, JSON_REAL_PRECISION(9) | JSON_ENCODE_ANY)) {
        free(t.p);
        return NULL;
    }
    t.p[t.n++] = '\n'; /* text_put kept room for it and the NUL */
    t.p[t.n] = '\0';
    *len = t.n;
    return t.p;
}
