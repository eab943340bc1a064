/* Small string helpers the C library lacks. Thread-safe (no state). */
#ifndef TDM_COMMON_STRUTIL_H
#define TDM_COMMON_STRUTIL_H

#include <stddef.h>

/* Copies at most len-1 bytes and always NUL-terminates (len > 0). Returns strlen(src). */
size_t tdm_strlcpy(char *dst, const char *src, size_t len);
/* Case-insensitive (ASCII) substring search; NULL if absent. */
const char *tdm_strcasestr(const char *hay, const char *needle);
/* Removes leading and trailing ASCII white space in place. */
void tdm_strtrim(char *s);
/* Appends printf-style text at buf+*pos, never past len; *pos advances. */
void tdm_bufprintf(char *buf, size_t len, size_t *pos, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
