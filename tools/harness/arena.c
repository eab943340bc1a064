/* String arena (arena.h). */
#include "arena.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK 65536

const char *tdm_arena_strdup(tdm_arena *a, const char *s, size_t len)
{
    if (len + 1 > a->room) {
        size_t size = len + 1 > ARENA_BLOCK ? len + 1 : ARENA_BLOCK;
        char **b = realloc(a->blocks, (a->nblocks + 1) * sizeof *b);
        if (!b)
            return NULL;
        a->blocks = b;
        if (!(b[a->nblocks] = malloc(size)))
            return NULL;
        a->nblocks++;
        a->used = 0;
        a->room = size;
    }
    char *p = a->blocks[a->nblocks - 1] + a->used;
    if (len)
        memcpy(p, s, len);
    p[len] = 0;
    a->used += len + 1;
    a->room -= len + 1;
    return p;
}

void tdm_arena_free(tdm_arena *a)
{
    for (size_t i = 0; i < a->nblocks; i++)
        free(a->blocks[i]);
    free(a->blocks);
    memset(a, 0, sizeof *a);
}
