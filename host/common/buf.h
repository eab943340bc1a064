/* The one growable byte buffer of the project: strings built piece by piece,
 * arrays of fixed-size records, encoded payloads. Its bytes are always
 * NUL-terminated once anything was reserved (p[len] == 0 after an append), so
 * text can be read as a C string; binary users ignore that byte.
 *
 * Zero-initialise (tdm_buf b = {0}), then append; tdm_buf_free releases.
 * The buffer owns p; pointers into it are invalidated by the next call that
 * grows it. Not thread-safe: one owner at a time. Functions that can fail
 * return 0, or -1 when memory runs out (the buffer is then unchanged). */
#ifndef TDM_COMMON_BUF_H
#define TDM_COMMON_BUF_H

#include <stddef.h>

typedef struct tdm_buf {
    char *p;
    size_t len, cap;
} tdm_buf;

/* Makes room for n more bytes (and the terminating NUL) without changing len. */
int tdm_buf_reserve(tdm_buf *b, size_t n);
/* Appends n bytes from src (src may be NULL when n is 0). */
int tdm_buf_append(tdm_buf *b, const void *src, size_t n);
/* Appends n zero bytes and returns them, or NULL when memory runs out. */
void *tdm_buf_grow(tdm_buf *b, size_t n);
/* Empties the buffer, keeping its memory. */
void tdm_buf_clear(tdm_buf *b);
/* Releases the memory; b is empty and reusable afterwards. */
void tdm_buf_free(tdm_buf *b);

/* For arrays of records (a pointer and a capacity kept by the caller):
 * returns `a` when it already has room for `need` elements of `size` bytes
 * (a not NULL and *cap >= need); else `a` reallocated to max(2 * *cap, 16,
 * need) elements, *cap updated; or NULL when memory runs out (a and *cap
 * left as they were). need 0 counts as 1, so success is never NULL.
 * Use: T *p = tdm_array_grow(x->v, &x->cap, x->n + 1, sizeof *p); if (!p)
 * fail; x->v = p; */
void *tdm_array_grow(void *a, size_t *cap, size_t need, size_t size);

#endif
