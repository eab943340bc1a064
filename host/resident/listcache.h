/* The list cache of a resident index in CACHED mode (resident.h): an index
 * larger than the device memory allowed it keeps its small sections
 * resident and its posting payload (the ARENA) in a device cache arena of
 * a budgeted size.
 *
 *   residency table  list -> entry {cache offset, span} or none (host)
 *   device copy      `lists` of the resident: {cache offset, df, ext, span}
 *                    for a list in the cache, zeros for one that is not (a
 *                    decode job on it is then a bad job, never stale data)
 *
 * A caller that decodes lists first holds them (tdm_resident_acquire):
 * what is missing is uploaded on the cache's own queue (overlapping the
 * compute queue's work; not behind other calls' downloads), every list of the call is pinned, and the
 * call gets the event its kernels wait for. Pinned lists are never
 * evicted; tdm_resident_unhold unpins them once the commands that read
 * them are done (at once, or when an event completes).
 *
 * Placement: first fit in the arena; when no hole is large enough, the
 * least recently used unpinned lists are evicted (LRU by bytes) until one
 * is. Admission by benefit: a list costs its bytes at each miss, so its
 * benefit is (times used) x (bytes); a list brought in is admitted (placed
 * at the most recently used end) when its benefit is at least that of the
 * lists it displaced, else it is streamed: uploaded for its query and
 * placed at the least recently used end, so it goes first. A hit makes a
 * list most recently used.
 *
 * When other calls' pins leave no room the call waits for them; when its
 * own lists, placed one by one, leave no hole for the next (fragmentation),
 * it evicts everything unpinned and places them again, back to back. A
 * list larger than the cache, or a call whose lists together are, is
 * TDM_ERR_DEVICE_MEMORY naming the sizes.
 *
 * Threads: every function here is thread-safe (one lock per cache; the
 * completion callbacks take no lock). A thread must not acquire while it
 * holds a hold on the same cache (it could wait for itself).
 */
#ifndef TDM_RESIDENT_LISTCACHE_H
#define TDM_RESIDENT_LISTCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "decode_jobs.h"
#include "resident.h"

typedef struct tdm_listcache tdm_listcache;
typedef struct tdm_listcache_hold tdm_listcache_hold;

/* What a cache has done since it was made. A list counts once per acquire
 * that names it (repeats in one call are one). */
typedef struct tdm_listcache_stats {
    uint64_t capacity_bytes; /* the cache arena */
    uint64_t used_bytes;     /* lists in it now */
    uint64_t lists;          /* lists in it now */
    uint64_t hits, misses;   /* lists found in the cache / uploaded */
    uint64_t bytes_hit;      /* bytes of the lists found */
    uint64_t bytes_moved;    /* bytes uploaded (payloads; a list placed twice in one call counts twice) */
    uint64_t evictions, bytes_evicted;
    uint64_t streamed;       /* misses not admitted (benefit below what they displaced) */
    uint64_t waits;          /* acquires that waited for other calls' pins */
    uint64_t replaced;       /* acquires that evicted everything to defragment */
} tdm_listcache_stats;

/* Makes res's cache of `bytes` (rounded down to words) on res->dev: its
 * queue, the arena buffer, the device copy of the descriptors (zeroed
 * before it returns), res->arena, res->lists, res->arena_words (the
 * cache's words), res->spans = 1 and res->cache. res->dev, res->r and
 * res->nlists must be set; on failure res->cache may be set (released
 * with the resident). */
int tdm_listcache_create(tdm_resident *res, uint64_t bytes, tdm_err *err);

/* Waits for the callbacks of pending unholds and frees the cache (not the
 * buffers: tdm_resident_release does). No hold may be outstanding.
 * Accepts NULL. */
void tdm_listcache_free(tdm_listcache *c);

/* Holds lists[0..n) (repeats allowed) of res in the device cache: uploads
 * what is missing, pins every one. *ready gets the event the commands
 * reading them wait for (NULL when nothing is pending; the caller releases
 * it); *hold the handle to give to tdm_resident_unhold (NULL in FULL mode,
 * where this only checks the ids and returns). *moved (if not NULL) grows
 * by the bytes uploaded. TDM_ERR_INVALID_ARG for a list out of range,
 * TDM_ERR_DEVICE_MEMORY when a list, or the call's lists together, need
 * more than the cache holds. Blocks only to wait for room. */
int tdm_resident_acquire(const tdm_resident *res, const uint32_t *lists, size_t n,
                         cl_event *ready, tdm_listcache_hold **hold, uint64_t *moved,
                         tdm_err *err);

/* The same for the lists of every job of a decode batch. */
int tdm_resident_acquire_batch(const tdm_resident *res, const tdm_decode_batch *b,
                               cl_event *ready, tdm_listcache_hold **hold, uint64_t *moved,
                               tdm_err *err);

/* Gives a hold back. done NULL: the commands that read its lists are done
 * (or were never enqueued); the lists are unpinned now (after this hold's
 * own uploads complete). done an event: they are unpinned when it
 * completes; it must come after every command that reads them (and so
 * after *ready). Accepts NULL. Never blocks on `done`. */
void tdm_resident_unhold(const tdm_resident *res, tdm_listcache_hold *hold, cl_event done);

/* A snapshot of res's cache statistics; TDM_ERR_INVALID_ARG (and zeros)
 * in FULL mode. */
int tdm_resident_cache_stats(const tdm_resident *res, tdm_listcache_stats *out, tdm_err *err);

#endif
