/*
 * tandem — a portable OpenCL engine for search-engine query processing.
 *
 * This is the one public header. Conventions, as in zstd / sqlite / libuv:
 *
 *  - Handles are opaque (tdm_engine, ...). Every create/open has a matching
 *    free/close that accepts NULL.
 *  - Functions that can fail return an int status: 0 (TDM_OK) on success, a
 *    negative TDM_ERR_* code on failure. tdm_strerror() names the code; the
 *    handle's last-error message (tdm_engine_errmsg) carries the detail, such
 *    as an OpenCL compiler log or a file offset.
 *  - Memory: every function says who owns what it returns. Strings returned as
 *    `const char *` are owned by the library and stay valid as stated.
 *  - Threads: every handle states what may be done with it concurrently.
 */
#ifndef TANDEM_H
#define TANDEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(TANDEM_SHARED_BUILD)
#define TDM_API __declspec(dllexport)
#elif defined(__GNUC__) && __GNUC__ >= 4
#define TDM_API __attribute__((visibility("default")))
#else
#define TDM_API
#endif

/* ---------------------------------------------------------------- version */

#define TDM_VERSION_MAJOR 0
#define TDM_VERSION_MINOR 1
#define TDM_VERSION_PATCH 0
#define TDM_VERSION_NUMBER \
    (TDM_VERSION_MAJOR * 10000 + TDM_VERSION_MINOR * 100 + TDM_VERSION_PATCH)
#define TDM_VERSION_STRING "0.1.0"

/* The library's version as "MAJOR.MINOR.PATCH" (static string; thread-safe). */
TDM_API const char *tdm_version(void);
/* The library's TDM_VERSION_NUMBER, to compare with the header's. Thread-safe. */
TDM_API unsigned tdm_version_number(void);

/* ---------------------------------------------------------------- status */

enum {
    TDM_OK = 0,
    TDM_ERR_INVALID_ARG = -1,   /* a NULL handle, a bad option value, ... */
    TDM_ERR_NOMEM = -2,         /* host memory exhausted */
    TDM_ERR_IO = -3,            /* a file could not be read or written */
    TDM_ERR_FORMAT = -4,        /* malformed input: bad magic, truncated, ... */
    TDM_ERR_CORRUPT = -5,       /* checksum mismatch or inconsistent data */
    TDM_ERR_VERSION = -6,       /* a format version this library cannot read */
    TDM_ERR_NO_DEVICE = -7,     /* no OpenCL device (or none matched the selection) */
    TDM_ERR_OPENCL = -8,        /* an OpenCL call failed */
    TDM_ERR_BUILD = -9,         /* kernels failed to compile; message holds the log */
    TDM_ERR_DEVICE_MEMORY = -10,/* the device ran out of memory */
    TDM_ERR_NOT_FOUND = -11,    /* a term, file or entry does not exist */
    TDM_ERR_UNSUPPORTED = -12,  /* a feature the device or build lacks */
    TDM_ERR_LIMIT = -13,        /* input exceeds a documented limit */
    TDM_ERR_INTERNAL = -14      /* a bug in tandem: please report it */
};

/* A short static description of a status code ("unknown status" for codes
 * this version does not know). Thread-safe. */
TDM_API const char *tdm_strerror(int status);

/* ---------------------------------------------------------------- devices */

enum tdm_device_type {
    TDM_DEVICE_CPU = 1,
    TDM_DEVICE_GPU = 2,
    TDM_DEVICE_ACCELERATOR = 4,
    TDM_DEVICE_OTHER = 8
};

/* What discovery reports about one OpenCL device. Plain data: copy freely. */
typedef struct tdm_device_info {
    int index;                 /* position in the discovery order (platforms, then devices) */
    int platform_index;        /* which platform it belongs to */
    int type;                  /* one of enum tdm_device_type */
    char platform[128];        /* platform name, e.g. "NVIDIA CUDA" */
    char vendor[128];          /* device vendor */
    char name[128];            /* device name */
    char driver_version[64];
    char device_version[64];   /* "OpenCL 3.0 CUDA", ... */
    char opencl_c_version[64]; /* "OpenCL C 1.2", ... */
    unsigned compute_units;
    unsigned max_clock_mhz;
    uint64_t global_mem_bytes;
    uint64_t max_alloc_bytes;
    uint64_t local_mem_bytes;
    size_t max_work_group_size;
    size_t preferred_wg_multiple; /* from a probe kernel; 0 if unknown */
    char extensions[2048];     /* space separated, truncated if longer */
} tdm_device_info;

/* Lists every OpenCL device that the ICD loader exposes, in discovery order.
 * On success *out is a malloc'd array of *count entries that the caller frees
 * with tdm_free(); *count may be 0 (no platform) with TDM_OK.
 * Thread-safe. */
TDM_API int tdm_devices_discover(tdm_device_info **out, size_t *count);

/* Frees memory that the library handed to the caller. Accepts NULL. */
TDM_API void tdm_free(void *p);

/* ---------------------------------------------------------------- engine */

/* An engine holds the selected OpenCL devices with a context, an in-order
 * queue and the compiled kernels for each.
 * Threads: one engine may be used by one thread at a time; distinct engines
 * are independent. */
typedef struct tdm_engine tdm_engine;

enum tdm_cache_mode {
    TDM_CACHE_DEFAULT = 0, /* TANDEM_CACHE from the environment, else on */
    TDM_CACHE_OFF = 1,
    TDM_CACHE_ON = 2,      /* on, except for PoCL, which caches by itself */
    TDM_CACHE_ALWAYS = 3   /* on for every platform, PoCL included */
};

/* Options for tdm_engine_open. Zero-initialise, then set what you need;
 * every zero/NULL field means "the default". */
typedef struct tdm_engine_options {
    /* Which devices to use; NULL means TANDEM_DEVICES from the environment,
     * and if that is unset, "all". Syntax: a comma-separated list of items,
     * each "all", "gpu", "cpu", "accelerator", a device index as listed by
     * `tandem devices`, or a case-insensitive substring of the platform or
     * device name ("nvidia", "pocl", "h200"). */
    const char *devices;
    /* Program-binary cache directory; NULL means TANDEM_CACHE_DIR, else
     * $XDG_CACHE_HOME/tandem, else $HOME/.cache/tandem. */
    const char *cache_dir;
    int cache_mode;              /* enum tdm_cache_mode */
    /* Extra options appended to every kernel build (e.g. "-cl-fast-relaxed-math");
     * NULL for none. */
    const char *build_options;
    /* Replace the embedded kernel source (for tests and experiments); NULL
     * means the kernels.cl compiled into the library. */
    const char *kernel_source;
} tdm_engine_options;

/* Opens an engine on the selected devices and compiles the kernels for each.
 * `opts` may be NULL. On success *out is a new engine that the caller closes
 * with tdm_engine_close. On failure *out is NULL, and tdm_engine_errmsg(NULL)
 * gives the reason on the calling thread (e.g. the compiler's log).
 * Thread-safe (each call makes its own engine). */
TDM_API int tdm_engine_open(const tdm_engine_options *opts, tdm_engine **out);

/* Releases the engine and all its OpenCL objects. Accepts NULL. */
TDM_API void tdm_engine_close(tdm_engine *engine);

/* The last error message of `engine`, "" if none. With NULL: the message of
 * the last failed tdm_engine_open on the calling thread. The string is owned
 * by the library and valid until the next call on the same handle (thread). */
TDM_API const char *tdm_engine_errmsg(const tdm_engine *engine);

/* Number of devices the engine uses (>= 1 for an open engine). */
TDM_API int tdm_engine_device_count(const tdm_engine *engine);

/* Copies the description of the engine's i-th device into *info. */
TDM_API int tdm_engine_device_info(const tdm_engine *engine, int i, tdm_device_info *info);

/* Whether the i-th device's kernels came from the on-disk binary cache
 * (1), were compiled from source (0), or i is out of range (negative status). */
TDM_API int tdm_engine_device_cached(const tdm_engine *engine, int i);

/* Runs a small kernel on every device of the engine and compares its output
 * with the plain-C reference. Returns TDM_OK when every device agrees; on a
 * mismatch TDM_ERR_INTERNAL with the device named in the engine's message.
 * If `report` is not NULL, one line per device is written to it, as
 * "<index> <name>: ok (<n> values)" ... (NUL-terminated, truncated to
 * report_len). */
TDM_API int tdm_engine_selfcheck(tdm_engine *engine, char *report, size_t report_len);

/* ---------------------------------------------------------------- index */

/* An index is a read-only, memory-mapped inverted index file built by
 * tdm_index_build (or `tandem build`/`tandem import`); docs/FORMAT.md
 * describes the file.
 * Threads: an open index is immutable, so any number of threads may call the
 * functions below on one index at once. The per-handle message is kept under
 * a lock; tdm_index_errmsg returns a copy owned by the calling thread. */
typedef struct tdm_index tdm_index;

/* Maps and validates `path` (header, section table, small-section checksums,
 * lexicon; the postings checksum only by tdm_index_verify). On success *out
 * is a new index that the caller closes with tdm_index_close. On failure *out
 * is NULL and tdm_index_errmsg(NULL) names the file and byte offset.
 * Thread-safe. */
TDM_API int tdm_index_open(const char *path, tdm_index **out);

/* Unmaps and frees. Accepts NULL. No other call may be running on it. */
TDM_API void tdm_index_close(tdm_index *index);

/* The last error message of `index` ("" if none), or with NULL the message of
 * the last failed tdm_index_open / tdm_index_build on the calling thread.
 * Owned by the library; valid until the calling thread's next call of this
 * function. */
TDM_API const char *tdm_index_errmsg(const tdm_index *index);

/* Collection facts. Plain data: copy freely. */
typedef struct tdm_index_stats {
    uint32_t format_version;
    uint64_t documents;
    uint64_t terms;
    uint64_t postings;
    uint64_t total_doclen;     /* tokens in the collection after stopping */
    double avg_doclen;
    double k1, b;              /* BM25 parameters of the stored block bounds */
    char codec[32];            /* codec name the lists were encoded with */
    char stemmer[32];          /* "none" or a Snowball language */
    uint32_t stopwords;        /* number of stopwords used at build time */
    uint64_t file_bytes;
} tdm_index_stats;

TDM_API int tdm_index_stats_get(const tdm_index *index, tdm_index_stats *stats);

/* Looks up a term exactly as stored (already normalized). TDM_ERR_NOT_FOUND
 * if absent. df or cf may be NULL. */
TDM_API int tdm_index_term(const tdm_index *index, const char *term, uint32_t *df,
                           uint64_t *cf);

/* Runs `word` through the tokenizer, stopword list and stemmer the index was
 * built with and writes the first resulting term, NUL-terminated, to
 * term[cap]. TDM_ERR_NOT_FOUND if it yields no term (a stopword, say);
 * TDM_ERR_LIMIT if cap is too small (129 bytes always suffice). */
TDM_API int tdm_index_normalize(const tdm_index *index, const char *word, char *term,
                                size_t cap);

/* Decodes a term's postings into caller buffers: docids[cap] ascending and
 * freqs[cap] (tf >= 1); either may be NULL. *n gets the df. If cap < df,
 * nothing is written and TDM_ERR_LIMIT is returned with *n = df, so a caller
 * can size its buffers with a first call of cap = 0. */
TDM_API int tdm_index_postings(const tdm_index *index, const char *term, uint32_t *docids,
                               uint32_t *freqs, size_t cap, size_t *n);

/* The name of document `docid` (owned by the index, valid until close), or
 * NULL if out of range. */
TDM_API const char *tdm_index_docname(const tdm_index *index, uint32_t docid);
/* The length (tokens after stopping) of document `docid`, 0 if out of range. */
TDM_API uint32_t tdm_index_doclen(const tdm_index *index, uint32_t docid);

/* Full integrity check: every checksum, every list decoded and checked
 * against its df, cf, block metadata and BM25 bounds. O(index). */
TDM_API int tdm_index_verify(const tdm_index *index);

/* ---------------------------------------------------------------- building */

enum tdm_build_format {
    TDM_BUILD_AUTO = 0,   /* guessed from the first bytes of each input */
    TDM_BUILD_LINES = 1,  /* name<TAB>text, one document per line */
    TDM_BUILD_TREC = 2,   /* <DOC><DOCNO>name</DOCNO> text </DOC> */
    TDM_BUILD_SMART = 3,  /* .I name, .T and .W indexed, other fields ignored */
    TDM_BUILD_JSONL = 4   /* {"id": ..., "contents": "..."} one object a line */
};

/* Progress, reported to the callback at most every ~100 ms and once at the
 * end of each phase. */
typedef struct tdm_index_build_progress {
    int phase;                 /* 0 reading + inverting, 1 merging runs, 2 done */
    uint64_t documents;        /* documents read so far */
    uint64_t bytes_read;       /* input bytes consumed (compressed for gzip) */
    uint64_t bytes_total;      /* sum of input file sizes; 0 if unknown (stdin) */
    uint64_t terms_done, terms_total; /* merge phase: lists written / to write */
    uint32_t runs;             /* run files written so far */
    double seconds;            /* since the build started */
} tdm_index_build_progress;

/* Options for tdm_index_build; zero-initialise, zero/NULL means the default. */
typedef struct tdm_index_build_options {
    int format;                /* enum tdm_build_format */
    const char *stemmer;       /* NULL = "english"; "none"; any Snowball language */
    const char *stopwords;     /* path of a stopword file (words separated by
                                  white space, '#' comment lines); NULL = none */
    const char *codec;         /* NULL = "bp128"; any registered codec name */
    size_t memory_mb;          /* posting buffer budget; 0 = 512 */
    double k1, b;              /* BM25 of the stored bounds; 0 = 1.2 / 0.75 */
    const char *tmp_dir;       /* run files; NULL = the output's directory */
    void (*progress)(void *user, const tdm_index_build_progress *p); /* NULL = quiet */
    void *progress_user;
} tdm_index_build_options;

/* Builds an index at `out_path` from `ninputs` files (each a path, or "-"
 * for stdin; gzip files are read transparently). Documents get docids in
 * input order. The file appears atomically at the end. `opts` may be NULL.
 * On failure tdm_index_errmsg(NULL) names the input and position.
 * Thread-safe (each call is independent). */
TDM_API int tdm_index_build(const char *const *inputs, size_t ninputs, const char *out_path,
                            const tdm_index_build_options *opts);

#ifdef __cplusplus
}
#endif
#endif /* TANDEM_H */
