/* Strings that live as long as the object that read them (qrels, runs,
 * query files): copied into large blocks, freed together. One thread. */
#ifndef TDM_HARNESS_ARENA_H
#define TDM_HARNESS_ARENA_H

#include <stddef.h>

typedef struct tdm_arena {
    char **blocks;
    size_t nblocks, used, room;
} tdm_arena;

/* A NUL-terminated copy of s[0..len); NULL when out of memory. */
const char *tdm_arena_strdup(tdm_arena *a, const char *s, size_t len);
void tdm_arena_free(tdm_arena *a);

#endif
