/* On-disk program-binary cache.
 *
 * An entry is <dir>/<key>.clbin where key = XXH3-128 of (source, options,
 * platform, device, driver version, device version, library version). The
 * file holds a header (magic, format, the key again, payload size and its
 * XXH64) and the binary. Entries are written to a temporary file and renamed,
 * so readers never see half a file; anything that does not verify is rebuilt
 * from source and overwritten. Two writers of one entry at once (identical
 * devices, which share a key, opening concurrently) each write a temporary
 * file of their own (a random name: tdm_write_file_atomic) and the last
 * rename wins: a whole entry either way. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/fsutil.h"
#include "common/strutil.h"
#include "engine_testing.h"
#include "program.h"
#include "runtime/runtime.h"

#define CACHE_MAGIC "TDMCLBIN"
#define CACHE_FORMAT 1u

typedef struct entry_header {
    char magic[8];
    uint32_t format;
    uint32_t reserved;
    uint64_t key_lo, key_hi;
    uint64_t payload_size;
    uint64_t payload_hash;
} entry_header;

void tdm_cache_config(const tdm_settings *settings, const tdm_device_info *info,
                      tdm_cache_cfg *out)
{
    memset(out, 0, sizeof *out);
    int mode = settings->cache_mode;
    if (mode == TDM_CACHE_OFF || (mode == TDM_CACHE_ON && tdm_is_pocl(info)) ||
        !settings->cache_dir[0])
        return; /* off, PoCL's own cache, or nowhere to keep it */
    tdm_strlcpy(out->dir, settings->cache_dir, sizeof out->dir);
    out->enabled = 1;
}

static XXH128_hash_t cache_key(const tdm_device_info *info, const char *src, size_t len,
                               const char *options)
{
    XXH3_state_t *st = XXH3_createState();
    XXH128_hash_t h = {0, 0};
    if (!st)
        return h;
    XXH3_128bits_reset(st);
    const char *parts[] = {options, info->platform, info->name, info->driver_version,
                           info->device_version, TDM_VERSION_STRING};
    XXH3_128bits_update(st, src, len);
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        XXH3_128bits_update(st, parts[i], strlen(parts[i]) + 1); /* NUL separates */
    h = XXH3_128bits_digest(st);
    XXH3_freeState(st);
    return h;
}

static void entry_path(const tdm_cache_cfg *c, XXH128_hash_t key, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%016llx%016llx.clbin", c->dir, (unsigned long long)key.high64,
             (unsigned long long)key.low64);
}

/* Reads and verifies an entry; returns the malloc'd payload or NULL. */
static unsigned char *load_entry(const char *path, XXH128_hash_t key, size_t *size)
{
    size_t n = 0;
    unsigned char *file = tdm_read_file(path, &n);
    entry_header h;
    if (!file || n < sizeof h) {
        free(file);
        return NULL;
    }
    memcpy(&h, file, sizeof h);
    int ok = !memcmp(h.magic, CACHE_MAGIC, 8) && h.format == CACHE_FORMAT &&
             h.key_lo == key.low64 && h.key_hi == key.high64 &&
             h.payload_size == n - sizeof h &&
             XXH64(file + sizeof h, n - sizeof h, 0) == h.payload_hash;
    if (!ok) {
        free(file);
        return NULL;
    }
    memmove(file, file + sizeof h, n - sizeof h);
    *size = n - sizeof h;
    return file;
}

static void store_entry(const tdm_cache_cfg *c, const char *path, XXH128_hash_t key,
                        const unsigned char *bin, size_t size)
{
    if (tdm_mkdirs(c->dir) != 0)
        return;
    entry_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CACHE_MAGIC, 8);
    h.format = CACHE_FORMAT;
    h.key_lo = key.low64;
    h.key_hi = key.high64;
    h.payload_size = size;
    h.payload_hash = XXH64(bin, size, 0);
    const void *parts[2] = {&h, bin};
    size_t sizes[2] = {sizeof h, size};
    tdm_write_file_atomic(path, parts, sizes, 2); /* a failed store only costs a rebuild */
}

static unsigned char *program_binary(cl_program prog, size_t *size)
{
    size_t n = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, NULL) != CL_SUCCESS ||
        n == 0)
        return NULL;
    unsigned char *bin = malloc(n);
    if (bin && clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS) {
        free(bin);
        return NULL;
    }
    *size = n;
    return bin;
}

static cl_program from_binary(cl_context ctx, cl_device_id dev, const unsigned char *bin,
                              size_t size, const char *options)
{
    cl_int rc, status;
    cl_program prog = clCreateProgramWithBinary(ctx, 1, &dev, &size, &bin, &status, &rc);
    if (rc != CL_SUCCESS || status != CL_SUCCESS)
        return NULL;
    if (clBuildProgram(prog, 1, &dev, options, NULL, NULL) != CL_SUCCESS) {
        clReleaseProgram(prog);
        return NULL;
    }
    return prog;
}

int tdm_program_get(const tdm_cache_cfg *cache, cl_context ctx, cl_device_id dev,
                    const tdm_device_info *info, const char *source, size_t len,
                    const char *options, cl_program *out, int *from_cache, tdm_err *err)
{
    *from_cache = 0;
    char *broken = NULL;
    if (tdm_test_build_broken(dev)) {
        size_t n = strlen(options) + 32;
        if ((broken = malloc(n)) != NULL) {
            snprintf(broken, n, "%s -DTDM_TEST_BREAK_BUILD", options);
            int st = tdm_program_build(ctx, dev, source, len, broken, out, err);
            free(broken);
            return st;
        }
    }
    if (!cache->enabled)
        return tdm_program_build(ctx, dev, source, len, options, out, err);
    XXH128_hash_t key = cache_key(info, source, len, options);
    char path[1200];
    entry_path(cache, key, path, sizeof path);
    size_t size = 0;
    unsigned char *bin = load_entry(path, key, &size);
    if (bin) {
        *out = from_binary(ctx, dev, bin, size, options);
        free(bin);
        if (*out) {
            *from_cache = 1;
            return TDM_OK;
        }
    }
    int rc = tdm_program_build(ctx, dev, source, len, options, out, err);
    if (rc != TDM_OK)
        return rc;
    bin = program_binary(*out, &size);
    if (bin)
        store_entry(cache, path, key, bin, size);
    free(bin);
    return TDM_OK;
}
