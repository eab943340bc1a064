/* The growable byte buffer (capacity doubles from 256 bytes) and array growth. */
#include "buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int tdm_buf_reserve(tdm_buf *b, size_t n)
{
    if (n >= SIZE_MAX - b->len)
        return -1;
    size_t need = b->len + n + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

int tdm_buf_append(tdm_buf *b, const void *src, size_t n)
{
    if (tdm_buf_reserve(b, n))
        return -1;
    if (n)
        memcpy(b->p + b->len, src, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

void *tdm_buf_grow(tdm_buf *b, size_t n)
{
    if (tdm_buf_reserve(b, n))
        return NULL;
    char *q = b->p + b->len;
    memset(q, 0, n + 1);
    b->len += n;
    return q;
}

void tdm_buf_clear(tdm_buf *b)
{
    b->len = 0;
    if (b->p)
        b->p[0] = '\0';
}

void tdm_buf_free(tdm_buf *b)
{
    free(b->p);
    *b = (tdm_buf){0};
}

void *tdm_array_grow(void *a, size_t *cap, size_t need, size_t size)
{
    if (need == 0)
        need = 1;   /* so that success is never NULL */
    if (need <= *cap && a)
        return a;
    size_t c = *cap > SIZE_MAX / 2 ? need : *cap * 2;
    if (c < 16)
        c = 16;
    if (c < need)
        c = need;
    if (size && c > SIZE_MAX / size)
        return NULL;
    void *p = realloc(a, c * size);
    if (p)
        *cap = c;
    return p;
}
