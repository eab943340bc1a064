/* A strict JSON object reader for JSON-lines collections, over the shared
 * reader of common/json.h. */
#include "json.h"

#include <string.h>

#include "common/json.h"

static int fail(tdm_json *j, const char *why)
{
    j->why = why;
    return 0;
}

/* The id: a string (no NUL: it becomes a C string; no other control
 * character: names are one line in run files and PISA exports) or a
 * number, verbatim. */
static int id_value(tdm_json *j, tdm_buf *out)
{
    int c = tdm_json_peek(j);
    size_t start = j->pos;
    if (c == '"') {
        if (!tdm_json_string(j))
            return 0;
        for (size_t k = 0; k < j->out.len; k++)
            if ((unsigned char)j->out.p[k] < 0x20) {
                j->pos = start;
                return fail(j, j->out.p[k] ? "control character in the id" : "\\u0000 in the id");
            }
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        if (!tdm_json_number_text(j))
            return 0;
    } else {
        return fail(j, "the id must be a string or a number");
    }
    return tdm_buf_append(out, j->out.p, j->out.len) ? fail(j, "out of memory") : 1;
}

static int text_value(tdm_json *j, tdm_buf *out)
{
    if (tdm_json_peek(j) != '"')
        return fail(j, "the contents must be a string");
    if (!tdm_json_string(j))
        return 0;
    return tdm_buf_append(out, j->out.p, j->out.len) ? fail(j, "out of memory") : 1;
}

static int member(tdm_json *j, tdm_buf *id, tdm_buf *text)
{
    if (!tdm_json_string(j) || !tdm_json_expect(j, ':'))
        return 0;
    if (j->out.len == 2 && memcmp(j->out.p, "id", 2) == 0) {
        id->len = 0;
        return id_value(j, id);
    }
    if (j->out.len == 8 && memcmp(j->out.p, "contents", 8) == 0) {
        text->len = 0;
        return text_value(j, text);
    }
    return tdm_json_skip(j);
}

static int object(tdm_json *j, tdm_buf *id, tdm_buf *text)
{
    if (!tdm_json_expect(j, '{'))
        return 0;
    if (tdm_json_peek(j) == '}') {
        j->pos++;
        return 1;
    }
    for (;;) {
        if (!member(j, id, text))
            return 0;
        int c = tdm_json_peek(j);
        if (c != ',' && c != '}')
            return fail(j, "expected ',' or '}'");
        j->pos++;
        if (c == '}')
            return 1;
    }
}

int tdm_json_doc(const char *s, size_t len, tdm_buf *id, tdm_buf *text,
                 const char **why, size_t *pos)
{
    tdm_json j;
    tdm_json_init(&j, s, len);
    j.lone_surrogates = 1;
    id->len = text->len = 0;
    int ok = tdm_buf_append(id, "", 0) || tdm_buf_append(text, "", 0) ? fail(&j, "out of memory")
                                                                      : object(&j, id, text);
    if (ok && tdm_json_peek(&j))
        ok = fail(&j, "trailing characters after the object");
    tdm_json_free(&j);
    *why = j.why;
    *pos = j.pos;
    return ok ? 0 : -1;
}
