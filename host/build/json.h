/* The one JSON shape the builder reads: an object per line with a document
 * id and its text. A small strict parser, no dependency. */
#ifndef TDM_BUILD_JSON_H
#define TDM_BUILD_JSON_H

#include <stddef.h>

#include "common/buf.h"

/* Parses one JSON object from s[0..len). The value of key `id` (a string
 * without control characters such as \u0000 or \n, or a number taken
 * verbatim) goes to *id, the string value of key `contents` to *text
 * (escapes decoded to UTF-8); other keys are skipped, whatever their (valid
 * JSON) values. null, true, false, objects or arrays as id or contents are
 * errors. Both are reset first and left NUL-terminated.
 * Returns 0, or -1 with a reason and the byte position in *why / *pos. */
int tdm_json_doc(const char *s, size_t len, tdm_buf *id, tdm_buf *text,
                 const char **why, size_t *pos);

#endif
