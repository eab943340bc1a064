/* The body of the text parser fuzz targets (fuzz_parse_<format>.c define
 * FUZZ_FORMAT and include this): the input, as a file, through the parser
 * and the tokenizer. Whatever the parser accepts must keep its contract:
 * a non-empty NUL-terminated name without NUL or newline bytes, text of the
 * stated length, NUL-terminated; an error has a message naming the file.
 * Nothing may read out of bounds, hang or leak. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "build/parse.h"
#include "text/tokenize.h"
#include "tandem.h"

static int count_token(void *user, const char *term, size_t len)
{
    if (len == 0 || memchr(term, 0, len))
        abort();
    ++*(size_t *)user;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    static tdm_tokenizer *tok;
    if (fd < 0) {
        /* An in-memory file: no disk traffic per run. */
        fd = memfd_create("fuzz_parse", 0);
        if (fd < 0 || tdm_tokenizer_open("english", NULL, 0, &tok, NULL) != TDM_OK)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
        abort();
    tdm_parser *p = NULL;
    tdm_err err = {0};
    int rc = tdm_parser_open(path, FUZZ_FORMAT, &p, &err);
    if (rc == TDM_OK) {
        tdm_parser_allow_empty(p, size & 1);
        const char *name, *text;
        size_t len, tokens = 0;
        while ((rc = tdm_parser_next(p, &name, &text, &len, &err)) == 1) {
            size_t nl = strlen(name);
            if (nl == 0 || memchr(name, '\n', nl) || text[len] != '\0' || len > size + 1)
                abort();
            if (tdm_tokenize(tok, text, len, count_token, &tokens) != 0)
                abort();
        }
        if (rc > 0)
            abort();
        tdm_parser_close(p);
    }
    if (rc < 0 && rc != TDM_ERR_NOMEM && !strstr(tdm_err_msg(&err), path))
        abort();   /* every error names the file */
    tdm_err_clear(&err);
    return 0;
}
