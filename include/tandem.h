/*
 * tandem — a portable OpenCL engine for search-engine query processing.
 *
 * This is the one public header. Conventions, as in zstd / sqlite / libuv:
 *
 *  - Handles are opaque (tdm_engine, ...). Every create/open has a matching
 *    free/close that accepts NULL.
 *  - Functions that can fail return an int status: 0 (TDM_OK) on success, a
 *    negative TDM_ERR_* code on failure. tdm_strerror() names the code.
 *  - Errors (libuv / errno style): every API function clears the calling
 *    thread's last error on entry, and every failure sets it to the status and
 *    a message with the detail (an OpenCL compiler log, a file and offset, the
 *    option at fault). tdm_last_error() and tdm_last_status() read it. It is
 *    thread-local, so it is right under threads and never stale: after a call
 *    that succeeds it is "" / TDM_OK. The exceptions, which leave it as it
 *    is: tdm_last_error, tdm_last_status, tdm_strerror, tdm_version,
 *    tdm_version_number and tdm_free.
 *  - Warnings (something went wrong but the call succeeded, such as a device
 *    skipped at open) never go through the last error: each handle that can
 *    have them says where they are (tdm_engine_warnings).
 *  - Options that can grow: an options struct starts with `size_t
 *    struct_size`. Fill it with its tdm_*_options_init() function, which sets
 *    struct_size and every default explicitly, then change what you need. A
 *    struct that was not initialised (struct_size 0) is TDM_ERR_INVALID_ARG;
 *    a library that is newer than the caller's header treats the fields the
 *    caller does not know as their defaults. Values out of range are
 *    TDM_ERR_INVALID_ARG naming the field, never silently replaced.
 *  - Names: tdm_<object>_<verb> (tdm_engine_open, tdm_index_verify,
 *    tdm_devices_discover); functions that fill caller memory from a handle
 *    end in _get (tdm_index_stats_get); options structs have
 *    tdm_<object>_options_init. The few library-wide functions have no
 *    object: tdm_version, tdm_strerror, tdm_last_error, tdm_free.
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
    TDM_ERR_INTERNAL = -14,     /* a bug in tandem: please report it */
    TDM_ERR_CANCELLED = -15,    /* a progress callback asked to stop */
    TDM_ERR_TIMEOUT = -16       /* a device did not answer within its time limit */
};

/* A short static description of a status code ("unknown status" for codes
 * this version does not know). Thread-safe. */
TDM_API const char *tdm_strerror(int status);

/* The calling thread's last error: the message of the last failed API call
 * on this thread, "" if the last call succeeded. Owned by the library; valid
 * until this thread's next API call (copy it to keep it). Thread-safe. */
TDM_API const char *tdm_last_error(void);

/* The status that goes with tdm_last_error(): TDM_OK or a TDM_ERR_* code. */
TDM_API int tdm_last_status(void);

/* ---------------------------------------------------------------- devices */

enum tdm_device_type {
    TDM_DEVICE_CPU = 1,
    TDM_DEVICE_GPU = 2,
    TDM_DEVICE_ACCELERATOR = 4,
    TDM_DEVICE_OTHER = 8
};

/* What discovery reports about one OpenCL device. Plain data: copy freely,
 * but `extensions` points into memory the library owns (see where the struct
 * comes from for how long it lives). */
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
    const char *extensions;    /* space separated, complete; never NULL */
} tdm_device_info;

/* Lists every OpenCL device that the ICD loader exposes, in discovery order.
 * On success *out is a malloc'd array of *count entries that the caller frees
 * with one tdm_free(*out), which also frees the entries' extension strings;
 * *count may be 0 (no platform) with TDM_OK. Thread-safe. */
TDM_API int tdm_devices_discover(tdm_device_info **out, size_t *count);

/* Frees memory that the library handed to the caller. Accepts NULL. */
TDM_API void tdm_free(void *p);

/* ---------------------------------------------------------------- engine */

/* An engine holds the selected OpenCL devices with, for each, a context, a
 * compute queue and a transfer queue and the compiled kernels, and its
 * settings, resolved once at open (options, then the environment, then the
 * defaults).
 * Threads: an engine may be used from any number of threads at once (kernels
 * are lent per call from a locked pool per device, and each call waits on
 * its own work, not on a drained queue); only tdm_engine_close must not run
 * concurrently with any other use. The getters below (device count, info,
 * cached, warnings) read state fixed at open.
 * Two engines share nothing, devices included: each has its own OpenCL
 * context, and device memory cannot be shared between contexts, so data
 * made resident through one engine is uploaded again for another. Open one
 * engine per process and share it between threads. */
typedef struct tdm_engine tdm_engine;

enum tdm_cache_mode {
    TDM_CACHE_DEFAULT = 0, /* TANDEM_CACHE from the environment, else TDM_CACHE_ON */
    TDM_CACHE_OFF = 1,
    TDM_CACHE_ON = 2,      /* on, except for PoCL, which caches by itself */
    TDM_CACHE_ALWAYS = 3   /* on for every platform, PoCL included */
};

/* Options for tdm_engine_open: call tdm_engine_options_init, then set what
 * you need. Every setting here is also read from a TANDEM_* environment
 * variable when the option is left at its init value ("unset"); an option
 * that is set wins over the environment. The environment is read once, by
 * tdm_engine_open; a variable with an invalid value makes the open fail with
 * TDM_ERR_INVALID_ARG naming the variable. */
typedef struct tdm_engine_options {
    size_t struct_size;          /* sizeof(tdm_engine_options), from _init */
    /* Which devices to use. Unset (NULL): TANDEM_DEVICES, else "all".
     * Syntax: a comma-separated list of items, each "all", "gpu", "cpu",
     * "accelerator", a device index as listed by `tandem devices`, or a
     * case-insensitive substring of the platform or device name ("nvidia",
     * "pocl", "h200"). */
    const char *devices;
    /* Program-binary cache directory. Unset (NULL): TANDEM_CACHE_DIR, else
     * $XDG_CACHE_HOME/tandem, else $HOME/.cache/tandem. */
    const char *cache_dir;
    /* enum tdm_cache_mode. Unset (TDM_CACHE_DEFAULT): TANDEM_CACHE (0/off/no,
     * 1/on/yes, always), else TDM_CACHE_ON. */
    int cache_mode;
    /* Extra options appended to every kernel build (e.g. "-cl-fast-relaxed-math");
     * NULL for none. No environment variable. */
    const char *build_options;
    /* Replace the embedded kernel source (for tests and experiments); NULL
     * means the kernels.cl compiled into the library. No environment variable. */
    const char *kernel_source;
    /* Work-group size the kernels are built for: a power of two up to 4096,
     * lowered to a device's maximum. Unset (0): TANDEM_WG_SIZE, else 128 on
     * GPUs and 256 elsewhere. */
    size_t wg_size;
    /* NVIDIA warp shuffles through inline PTX: 1 where the device supports
     * them (compute capability 7+), 0 never. Unset (-1): TANDEM_NV_SHUFFLE
     * (0 or 1), else 1. */
    int nv_shuffle;
    /* Work-groups per compute unit launched by the grid-stride codec
     * kernels (each loops over its share). Unset (0): TANDEM_CODEC_GROUPS_PER_CU,
     * else 32. */
    size_t codec_groups_per_cu;
    /* ---- scheduling of searches over the devices' lanes (docs/SCHED.md) */
    /* The policy (enum tdm_policy) of a request that leaves its own at
     * TDM_POLICY_DEFAULT. Unset (TDM_POLICY_DEFAULT): TANDEM_POLICY (a name,
     * see tdm_policy_parse), else TDM_POLICY_HYBRID. */
    int policy;
    /* Batching window in microseconds: the longest a lane in batch mode
     * waits for more queries to fill its batch. Unset (-1):
     * TANDEM_BATCH_WINDOW_US, else 200; 0 never waits. At most 1,000,000. */
    long batch_window_us;
    /* Load (queries submitted and not yet answered) from which batch lanes
     * (GPUs; every lane of an engine without one) take batches. Unset
     * (0): TANDEM_LOAD_THRESHOLD, else 4. */
    unsigned load_threshold;
    /* A query's deadline in milliseconds after it arrives, for deadline
     * promotion; a request may set its own. Unset (0): TANDEM_DEADLINE_MS,
     * else 500. */
    double deadline_ms;
    /* Sample queries each lane runs at tdm_search_open to calibrate its cost
     * model when no model of the device is stored (and there are several
     * lanes). Unset (-1): TANDEM_CALIBRATE, else 16; 0 none. */
    int calibrate;
    /* ---- TESTING ONLY: the next two fields exist for tandem's own tests
     * of the scheduler (they stay here so that struct_size and the ABI do
     * not change). Leave them NULL: a set value makes lanes fail on purpose
     * or run as another kind of device, and their meaning may change in any
     * release. */
    /* Testing only: faults to inject into lanes, "<lane>:<kind>[@<n>]" items
     * separated by commas, kind build, oom or lost (docs/SCHED.md). Unset
     * (NULL): TANDEM_FAULT_INJECT, else none. */
    const char *fault_inject;
    /* Testing only: each lane's kind, "cpu" or "gpu" items separated by
     * commas, one per engine device, in place of the devices' own types.
     * Unset (NULL): TANDEM_LANE_KINDS, else the device types. */
    const char *lane_kinds;
    /* Device memory an index bound to the engine may take on each device,
     * in bytes: one that needs more keeps its small tables resident and its
     * posting lists in a list cache of the rest (docs/CACHE.md). Unset (0):
     * TANDEM_DEVICE_MEMORY (bytes, or with a K, M or G suffix: KiB, MiB,
     * GiB), else the device's memory. */
    uint64_t device_memory;
    /* Runs each lane of a search handle keeps going at once (the host work
     * of one query overlaps the device work of another), 1 .. 8
     * (docs/SCHED.md). Unset (0): TANDEM_LANE_SLOTS, else 2. */
    unsigned lane_slots;
    /* Griffin's intra-query migration of ranked AND (enum tdm_migrate;
     * docs/SCHED.md). Unset (0): TANDEM_MIGRATE ("auto", "force", "off"),
     * else auto. */
    int migrate;
    /* Time limit in milliseconds for each device's first kernel, run at
     * open after its build (a one-word kernel read back): a device that
     * misses it (a hung driver) is skipped with a warning naming it, and the
     * others are used. Unset (0): TANDEM_FIRST_KERNEL_MS, else 10,000. At
     * most 3,600,000. Not run with a kernel_source of the caller's. */
    unsigned first_kernel_ms;
    /* Whether a search handle partitions its index across the engine's
     * devices by docid range (enum tdm_partition, docs/PARTITION.md): each
     * device holds one shard, made in memory at tdm_search_open, and every
     * query runs on all of them at once, their top k merged exactly. Unset
     * (TDM_PARTITION_DEFAULT): TANDEM_PARTITION ("auto", "on", "off",
     * "split"), else auto: partitioned when every device of the engine is
     * a GPU (two or more), the index does not fit one device's memory
     * budget (device_memory) and a shard fits each; else each device holds
     * the whole index, or a list cache. A request whose policy excludes a
     * partition's device kind (gpu-only with a CPU partition, cpu-only with
     * a GPU one) is refused with TDM_ERR_INVALID_ARG. TDM_PARTITION_SPLIT
     * ("split"): the whole index on every device (lanes for batches and
     * short queries, as off) and a shard on each beside it (a partition
     * set for long single queries, each run on every partition at once,
     * chosen by its lists' postings); tdm_search_open fails with
     * TDM_ERR_DEVICE_MEMORY where the whole index and a shard do not fit a
     * device together. */
    int partition;
    /* Time limit in milliseconds for each run of a search on a lane (the
     * search-time watchdog, docs/SCHED.md "Faults"): a run that has not
     * finished by then is abandoned, its lane marked dead (the device named)
     * and its queries answered by another lane, or failed with
     * TDM_ERR_TIMEOUT naming the device when none is left. Unset (0):
     * TANDEM_RUN_TIMEOUT_MS ("auto", "off", or 1 to 3,600,000), else auto:
     * 100 times the run's predicted time, at least 10,000 (a lane's first
     * run of an algorithm, which may compile kernels, 60,000 more). -1: off.
     * A caller's thread that runs its own query (on an idle lane, or under
     * the direct policy) is watched too: past the limit the lane fails as
     * above, and that caller, stuck in the device, waits for it; if it
     * returns, the query runs again on a live lane (else TDM_ERR_TIMEOUT).
     * So are calibration's samples at tdm_search_open: a lane whose sample
     * passes the limit is dead, and the open goes on without it. */
    long run_timeout_ms;
} tdm_engine_options;

enum tdm_partition {
    TDM_PARTITION_DEFAULT = 0, /* TANDEM_PARTITION, else AUTO */
    TDM_PARTITION_AUTO = 1,    /* GPUs only, when the index does not fit one */
    TDM_PARTITION_ON = 2,      /* always, with two devices or more */
    TDM_PARTITION_OFF = 3,     /* never: the whole index on every device */
    TDM_PARTITION_SPLIT = 4    /* both: the whole index on every device and a
                                  shard each; long single queries split */
};

/* Sets o->struct_size and every option to its unset value as documented
 * above (NULL, TDM_CACHE_DEFAULT, 0, -1). Thread-safe. */
TDM_API void tdm_engine_options_init(tdm_engine_options *o);

/* Opens an engine on the selected devices and compiles the kernels for each.
 * `opts` may be NULL (every option unset). A device that fails to open is
 * skipped and reported by tdm_engine_warnings, so one broken driver does not
 * take the others down; when none opens the call fails. On success *out is a
 * new engine that the caller closes with tdm_engine_close; on failure *out
 * is NULL and tdm_last_error() gives the reason (e.g. the compiler's log).
 * Thread-safe (each call makes its own engine). */
TDM_API int tdm_engine_open(const tdm_engine_options *opts, tdm_engine **out);

/* Releases the engine and all its OpenCL objects. Accepts NULL. */
TDM_API void tdm_engine_close(tdm_engine *engine);

/* What went wrong but did not fail tdm_engine_open (devices that were
 * skipped, one line each, '\n' separated), "" if nothing; NULL engine gives
 * "". Owned by the engine, fixed at open, valid until close. */
TDM_API const char *tdm_engine_warnings(const tdm_engine *engine);

/* Number of devices the engine uses (>= 1 for an open engine). */
TDM_API int tdm_engine_device_count(const tdm_engine *engine);

/* Copies the description of the engine's i-th device into *info; its
 * extensions string is owned by the engine and valid until close. */
TDM_API int tdm_engine_device_info_get(const tdm_engine *engine, int i, tdm_device_info *info);

/* Whether the i-th device's kernels came from the on-disk binary cache
 * (1), were compiled from source (0), or i is out of range (negative status). */
TDM_API int tdm_engine_device_cached(const tdm_engine *engine, int i);

/* Runs a small kernel on every device of the engine and compares its output
 * with the plain-C reference. Returns TDM_OK when every device agrees; on a
 * mismatch TDM_ERR_INTERNAL with the device named in tdm_last_error().
 * If `report` is not NULL, one line per device is written to it, as
 * "<index> <name>: ok (<n> values)" ... (NUL-terminated, truncated to
 * report_len). */
TDM_API int tdm_engine_selfcheck(tdm_engine *engine, char *report, size_t report_len);

/* ---------------------------------------------------------------- index */

/* An index is a read-only, memory-mapped inverted index file built by
 * tdm_index_build (or `tandem build`/`tandem import`); docs/FORMAT.md
 * describes the file.
 * Threads: an open index is immutable, so any number of threads may call the
 * functions below on one index at once (errors go to each thread's own
 * last error). */
typedef struct tdm_index tdm_index;

/* Maps and validates `path` (header, section table, small-section checksums,
 * lexicon; the postings checksum only by tdm_index_verify). On success *out
 * is a new index that the caller closes with tdm_index_close. On failure *out
 * is NULL and tdm_last_error() names the file and byte offset.
 * Thread-safe. */
TDM_API int tdm_index_open(const char *path, tdm_index **out);

/* Unmaps and frees. Accepts NULL. No other call may be running on it. */
TDM_API void tdm_index_close(tdm_index *index);

/* A collection split by docid range into shards (`tandem shard`,
 * docs/PARTITION.md) opened as ONE index: the n files paths[0 .. n), in any
 * order, must be every shard of one split once (TDM_ERR_FORMAT naming the
 * file otherwise: a plain index, a shard of another split, one missing or
 * given twice). The index answers as the unsharded one: stats, terms
 * (the whole df and cf), postings, names; tdm_search_open on it spreads the
 * shards over the engine's devices (shard i on device i % devices, several
 * a device allowed; at most TDM_SCHED_MAX_LANES shards) and runs every
 * query on all of them at once, its answers the unsharded index's bit for
 * bit. Close it with tdm_index_close. Thread-safe. */
TDM_API int tdm_index_open_shards(const char *const *paths, size_t n, tdm_index **out);
/* The same for the files PREFIX.0 .. PREFIX.<N-1> that `tandem shard INDEX
 * --shards N -o PREFIX` wrote (N read from PREFIX.0). */
TDM_API int tdm_index_open_split(const char *prefix, tdm_index **out);

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

/* How the weights of a learned sparse collection (SPLADE, uniCOIL, ...)
 * became the integer impacts an impact index stores (docs/LEARNED_SPARSE.md). */
enum tdm_quantize {
    TDM_QUANT_INTEGER = 0, /* integer weights taken as they are */
    TDM_QUANT_SCALE = 1,   /* impact = round(weight x scale), halves away from
                              zero, in double; 0 drops the posting */
    TDM_QUANT_LINEAR = 2   /* PISA's linear quantizer to `bits` bits over the
                              collection's largest weight M: in float,
                              impact = round(weight x s) + 1 with
                              s = (2^bits - 2) / M, so 1 .. 2^bits - 1 */
};
#define TDM_QUANT_BITS_MIN 2
#define TDM_QUANT_BITS_MAX 24

/* An index's kind: impact (its frequencies are impacts, searched with
 * TDM_SCORE_IMPACT) or not (term frequencies, BM25). Plain data. */
typedef struct tdm_index_impact {
    int impact;                /* 1: an impact index; 0: term frequencies */
    int quantize;              /* impact: enum tdm_quantize */
    unsigned bits;             /* TDM_QUANT_LINEAR's bits; else 0 */
    double scale;              /* the rule's scale (1 for TDM_QUANT_INTEGER) */
    double max_weight;         /* TDM_QUANT_LINEAR's M; else 0 */
} tdm_index_impact;

TDM_API int tdm_index_impact_get(const tdm_index *index, tdm_index_impact *impact);

/* Looks up a term exactly as stored (already normalized). TDM_ERR_NOT_FOUND
 * if absent. df or cf may be NULL. */
TDM_API int tdm_index_term_get(const tdm_index *index, const char *term, uint32_t *df,
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
TDM_API int tdm_index_postings_get(const tdm_index *index, const char *term,
                                   uint32_t *docids, uint32_t *freqs, size_t cap, size_t *n);

/* The name of document `docid` (owned by the index, valid until close), or
 * NULL if out of range (with TDM_ERR_NOT_FOUND in tdm_last_error). */
TDM_API const char *tdm_index_docname(const tdm_index *index, uint32_t docid);
/* The length (tokens after stopping) of document `docid` into *len, which
 * may be 0 for an empty document. TDM_ERR_NOT_FOUND if docid is out of
 * range (*len untouched). */
TDM_API int tdm_index_doclen_get(const tdm_index *index, uint32_t docid, uint32_t *len);

/* Full integrity check: every checksum, every list decoded and checked
 * against its df, cf, block metadata and BM25 bounds. O(index). */
TDM_API int tdm_index_verify(const tdm_index *index);

/* ---------------------------------------------------------------- building */

enum tdm_build_format {
    TDM_BUILD_AUTO = 0,   /* guessed from the first bytes of each input */
    TDM_BUILD_LINES = 1,  /* name<TAB>text, one document per line */
    TDM_BUILD_TREC = 2,   /* <DOC><DOCNO>name</DOCNO> text </DOC> */
    TDM_BUILD_SMART = 3,  /* .I name, .T and .W indexed, other fields ignored */
    TDM_BUILD_JSONL = 4,  /* {"id": ..., "contents": "..."} one object a line */
    TDM_BUILD_JSON_VECTOR = 5 /* Anserini's JSON vector collections (learned
                              sparse): {"id": ..., "contents": ...,
                              "vector": {"term": weight, ...}} a line; the
                              terms are taken as they are (no tokenizer, stemmer
                              or stopwords), the weights become impacts by
                              `quantize`, and the index is an impact index */
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

/* A progress callback of a long operation: returns 0 to go on, nonzero to
 * cancel it, which makes the operation return TDM_ERR_CANCELLED and leave
 * no output or temporary file behind. */
typedef int (*tdm_index_build_progress_fn)(void *user, const tdm_index_build_progress *p);

/* Options for tdm_index_build: call tdm_index_build_options_init, then set
 * what you need. Out-of-range values are TDM_ERR_INVALID_ARG. */
typedef struct tdm_index_build_options {
    size_t struct_size;        /* sizeof(tdm_index_build_options), from _init */
    int format;                /* enum tdm_build_format; init: TDM_BUILD_AUTO */
    const char *stemmer;       /* init: "english"; "none"; any Snowball language */
    const char *stopwords;     /* a list by name: "lucene" (Lucene's 33 English
                                  words, as Anserini), "snowball" (Snowball's
                                  English list), "none"; or the path of a
                                  stopword file (words separated by white space,
                                  '#' comment lines); NULL = none; init: "lucene" */
    const char *codec;         /* init: "bp128"; any registered codec name */
    size_t memory_mb;          /* posting buffer budget, >= 1; init: 512 */
    double k1;                 /* BM25 of the stored bounds, 0 .. TDM_BM25_K1_MAX; init: 1.2 */
    double b;                  /* in [0, 1]; init: 0.75 */
    const char *tmp_dir;       /* run files; init: NULL = the output's directory */
    tdm_index_build_progress_fn progress; /* init: NULL = quiet */
    void *progress_user;
    int allow_empty;           /* nonzero: inputs with no documents are no error
                                  (an empty collection builds an empty index);
                                  init: 0, an input without documents is
                                  TDM_ERR_FORMAT naming it */
    unsigned threads;          /* threads that tokenize, invert, merge and encode;
                                  init: 0 = every online processor. Any count
                                  builds the same file, byte for byte; all of
                                  their buffers count against memory_mb */
    int unnamed_lines;         /* nonzero: a line of a lines input without a TAB is
                                  a document of that text named by its ordinal;
                                  init: 0, such a line is TDM_ERR_FORMAT naming it
                                  (a qrels or query file given by mistake) */
    const char *quantize;      /* TDM_BUILD_JSON_VECTOR's rule (enum tdm_quantize):
                                  NULL or "integer": every weight an integer
                                  (1 .. 2^24; 0 drops the term), taken as it is;
                                  "scale:S" (S > 0): round(weight x S);
                                  "linear:B" (B in 2 .. 24): PISA's linear
                                  quantizer to B bits, over the collection's
                                  largest weight (a first pass reads the inputs
                                  for it: no stdin), or "linear:B:M" with M
                                  given. Recorded in the index. init: NULL */
} tdm_index_build_options;

/* Sets o->struct_size and every option to the default shown above. */
TDM_API void tdm_index_build_options_init(tdm_index_build_options *o);

/* Builds an index at `out_path` from `ninputs` files (each a path, or "-"
 * for stdin; gzip files are read transparently). A directory stands for
 * every regular file under it: recursively, in byte order of the paths,
 * names starting with '.' skipped, symbolic links followed (a file reached
 * twice read once); an empty directory, an unreadable entry, a loop of
 * links or `out_path` inside it is an error. Documents get docids in input
 * order. The file appears atomically at the end; on failure or
 * cancellation nothing is left behind. `opts` may be NULL (the defaults).
 * On failure tdm_last_error() names the input and position.
 * Thread-safe (each call is independent). */
TDM_API int tdm_index_build(const char *const *inputs, size_t ninputs, const char *out_path,
                            const tdm_index_build_options *opts);

/* ---------------------------------------------------------------- importing */

enum tdm_import_format {
    TDM_IMPORT_CIFF = 1,  /* a Common Index File Format (.ciff) file */
    TDM_IMPORT_PISA = 2   /* PISA's BASE.docs/.freqs/.sizes/.terms (+ .documents) */
};

typedef struct tdm_index_import_progress {
    uint64_t lists_done, lists_total; /* postings lists written / in the input */
    double seconds;                   /* since the import started */
} tdm_index_import_progress;

/* As tdm_index_build_progress_fn: nonzero cancels (TDM_ERR_CANCELLED). */
typedef int (*tdm_index_import_progress_fn)(void *user, const tdm_index_import_progress *p);

/* Options for tdm_index_import: call tdm_index_import_options_init first. */
typedef struct tdm_index_import_options {
    size_t struct_size;        /* sizeof(tdm_index_import_options), from _init */
    int format;                /* enum tdm_import_format; init: TDM_IMPORT_CIFF */
    const char *codec;         /* init: "bp128" */
    double k1;                 /* 0 .. TDM_BM25_K1_MAX; init: 1.2 */
    double b;                  /* in [0, 1]; init: 0.75 */
    tdm_index_import_progress_fn progress; /* at most every ~100 ms and at the end; init: NULL */
    void *progress_user;
    uint64_t empty_lists;      /* out: lists of the input skipped for having no postings */
    const char *stemmer;       /* the analyzer to record, over what the input carries
                                  (a tandem export's CIFF description or PISA
                                  BASE.analyzer file): a Snowball language or "none";
                                  init: NULL = the input's, else "unknown" */
    const char *stopwords;     /* "lucene", "snowball", "none" or a file, as in
                                  tdm_index_build_options; init: NULL = the input's */
    int impact;                /* nonzero: the input's frequencies are impacts (a
                                  learned sparse export, PISA's or Anserini's): the
                                  index is an impact index, searched by impacts and
                                  refusing BM25, its quantization recorded as
                                  TDM_QUANT_INTEGER (the impacts as they are; the
                                  rule that made them is not known); init: 0 */
} tdm_index_import_options;

TDM_API void tdm_index_import_options_init(tdm_index_import_options *o);

/* Converts `input` (a .ciff file, or the PISA basename) into an index at
 * `out_path`, which appears atomically at the end; on failure or
 * cancellation nothing is left behind. `opts` may be NULL (the defaults);
 * when it is not, opts->empty_lists is set. Thread-safe. */
TDM_API int tdm_index_import(const char *input, const char *out_path,
                             tdm_index_import_options *opts);

/* ---------------------------------------------------------------- search */

/* A search handle binds an open index to an engine: the engine's devices
 * hold what the index needs resident, and `tdm_search_*` calls rank queries
 * on them, exactly: every algorithm on every device returns the same top k
 * (same documents, same order, the same float scores bit for bit), ties
 * broken by the smaller docid.
 * Threads: any number of threads may search one handle at once (each call
 * uses its own device buffers and tokenizer); tdm_search_close must not run
 * concurrently with any other use. The engine and the index must outlive the
 * handle. */
typedef struct tdm_search tdm_search;

/* Ranking algorithms, all exact (the same top k as exhaustive evaluation). */
enum tdm_algorithm {
    TDM_ALGO_AUTO = 0,     /* the planner picks by query features (default) */
    TDM_ALGO_OR = 1,       /* ranked disjunction, exhaustive */
    TDM_ALGO_AND = 2,      /* ranked conjunction: documents holding every term */
    TDM_ALGO_AND_OR = 3,   /* AND, then OR only when AND matched fewer than k */
    TDM_ALGO_WAND = 4,     /* disjunction with WAND pruning */
    TDM_ALGO_BMW = 5,      /* disjunction with Block-Max WAND pruning */
    TDM_ALGO_MAXSCORE = 6  /* disjunction with MaxScore pruning */
};

/* "auto", "or", "and", "and_or", "wand", "bmw", "maxscore"; NULL if unknown. */
TDM_API const char *tdm_algorithm_name(int algorithm);
/* The algorithm named `name` (as above; also "and-or", "block-max-wand"),
 * case-insensitive, into *algorithm; TDM_ERR_INVALID_ARG naming it if
 * unknown. */
TDM_API int tdm_algorithm_parse(const char *name, int *algorithm);

enum tdm_scoring {
    TDM_SCORE_BM25 = 0,    /* BM25 (idf = ln(1 + (N - df + 0.5) / (df + 0.5))) */
    TDM_SCORE_IMPACT = 1,  /* stored frequencies are impacts: sum of weight x impact.
                              On an index that is not an impact index this is
                              asked for on purpose (a CIFF or PISA import of
                              impacts made before indexes recorded it) */
    TDM_SCORE_AUTO = 2     /* the index's own (init): impact on an impact index
                              (tdm_index_impact_get), else BM25. BM25 on an
                              impact index is refused (TDM_ERR_INVALID_ARG) */
};

/* How a device splits a query's work (the same results either way). */
enum tdm_search_variant {
    TDM_VARIANT_AUTO = 0,  /* the planner's choice: on a GPU COMPRESSED for
                              ranked AND (GROUP when its shortest list is
                              long), GROUP for OR and AND-then-OR, ITEM for
                              the rest; COMPRESSED on a CPU */
    TDM_VARIANT_ITEM = 1,  /* a work-item per docid range, document at a time
                              (every algorithm; all cores of a CPU on one query) */
    TDM_VARIANT_GROUP = 2, /* a work-group per docid range with dense score
                              accumulators in local memory (OR, AND; the pruning
                              algorithms run as ITEM) */
    TDM_VARIANT_COMPRESSED = 3, /* ITEM whose cursors read the compressed index,
                              decoding only the blocks they enter (no decode
                              launch): the planner's choice on a CPU; runs as
                              ITEM where it cannot apply (docs/SEARCH.md) */
    TDM_VARIANT_HOST = 4   /* in results only: answered on the host with no
                              device work (no launch, no bytes), the planner's
                              choice under AUTO for a query whose lists hold
                              few postings (TANDEM_HOST_MAX_POSTINGS,
                              docs/SEARCH.md); a request cannot ask for it */
};

#define TDM_SEARCH_K_MAX 10000
#define TDM_SEARCH_MAX_TERMS 1024
/* The bounds that keep every score a finite float (scores are float sums of
 * weight x term score): a query term's weight lies in [TDM_WEIGHT_MIN,
 * TDM_WEIGHT_MAX] and BM25's k1 in [0, TDM_BM25_K1_MAX], so that a score
 * stays below TDM_SEARCH_MAX_TERMS x TDM_WEIGHT_MAX x max(ln(1 + 2^32) x
 * (TDM_BM25_K1_MAX + 1), 2^32), about 5e21, far from float's 3.4e38; and a
 * weight's share of a score stays a normal float. Values outside are
 * TDM_ERR_INVALID_ARG. */
#define TDM_WEIGHT_MIN 1e-9
#define TDM_WEIGHT_MAX 1e9
#define TDM_BM25_K1_MAX 100.0

/* Per request: call tdm_search_options_init, then change what you need. */
typedef struct tdm_search_options {
    size_t struct_size;    /* sizeof(tdm_search_options), from _init */
    int algorithm;         /* enum tdm_algorithm; init TDM_ALGO_AUTO */
    uint32_t k;            /* results wanted, 1 .. TDM_SEARCH_K_MAX; init 10 */
    int scoring;           /* enum tdm_scoring; init TDM_SCORE_AUTO */
    double k1, b;          /* BM25: k1 in [0, TDM_BM25_K1_MAX], b in [0, 1];
                              init 1.2, 0.75.
                              Any values give exact results (block bounds are
                              recomputed when they differ from the index's) */
    int device;            /* engine device index, or -1 to let the planner
                              choose; init -1 */
    uint32_t ranges;       /* docid ranges the device splits the work into;
                              0 (init) lets the planner size them per device */
    int variant;           /* enum tdm_search_variant; init TDM_VARIANT_AUTO */
    int policy;            /* enum tdm_policy: which lane answers (docs/SCHED.md);
                              init TDM_POLICY_DEFAULT, the engine's policy */
    double deadline_ms;    /* deadline after arrival for deadline promotion;
                              init 0, the engine's (tdm_engine_options) */
    int migrate;           /* enum tdm_migrate for this request; init
                              TDM_MIGRATE_DEFAULT, the engine's */
} tdm_search_options;

TDM_API void tdm_search_options_init(tdm_search_options *o);

/* One query term given directly: `term` as stored in the index (already
 * normalized, see tdm_index_normalize), or NULL to name it by its lexicon
 * position `id`; weight in [TDM_WEIGHT_MIN, TDM_WEIGHT_MAX]. */
typedef struct tdm_search_term {
    const char *term;
    uint64_t id;
    double weight;
} tdm_search_term;

typedef struct tdm_search_hit {
    uint32_t docid;
    float score;           /* the device-exact float score */
    const char *name;      /* the document's name, owned by the index */
} tdm_search_hit;

/* What a search returns: hits best first; allocated by the library, freed
 * with tdm_search_result_free. */
typedef struct tdm_search_result {
    tdm_search_hit *hits;
    size_t n;              /* min(k, documents matched) */
    int device;            /* the engine device that answered (-1: none ran,
                              an empty query) */
    int algorithm;         /* what ran (never TDM_ALGO_AUTO; TDM_ALGO_AND_OR
                              when AND was followed by OR) */
    uint32_t ranges;       /* docid ranges the work was split into */
    int variant;           /* TDM_VARIANT_ITEM, _GROUP, _COMPRESSED, or _HOST:
                              answered on the host (device then names the
                              device it was planned for; launches and bytes 0) */
    double seconds;        /* wall time of the call */
    uint32_t terms;        /* distinct known terms of the query */
    uint32_t unknown;      /* terms given that the index does not hold */
    uint32_t launches;     /* kernel launches (of the whole batch for a
                              query of tdm_search_batch) */
    uint64_t bytes_up, bytes_down; /* host <-> device bytes moved (idem) */
    int status;            /* TDM_OK, or this query's error (tdm_search_batch) */
    const char *error;     /* NULL, or this query's error message, owned by
                              the result */
    uint32_t batch;        /* how many queries shared this query's launches
                              (1 for a lone query) */
    /* The scheduler's account (docs/SCHED.md); a query of tdm_search_batch
       gets policy, load_mode, queue_seconds and handovers of its part. */
    int policy;            /* enum tdm_policy that placed the query (never DEFAULT) */
    int load_mode;         /* enum tdm_load_mode of the lane when it ran the query */
    double queue_seconds;  /* from arrival until a lane started it */
    double predicted_seconds; /* the cost model's time for it on the lane that
                              answered (0: not predicted) */
    uint32_t handovers;    /* times a failing lane handed it to another lane */
    /* Ranked AND run step by step (Griffin's migration, docs/SCHED.md):
       steps > 0; `device` is the lane of the last step. */
    uint32_t steps;        /* lists intersected (0: not run step by step) */
    uint32_t migrations;   /* times the rest of the query moved to another lane */
    int first_device;      /* the lane of the first step (when steps > 0) */
    uint64_t carried_bytes;/* intermediate results moved between devices (down + up) */
    /* Partitions the query ran on at once, its top k merged
       (docs/PARTITION.md): a partitioned handle's every query, a split
       handle's long single queries; 0: it ran whole on one lane. */
    uint32_t partitions;
} tdm_search_result;

/* Makes `index` searchable on `engine` (uploads what stays resident to each
 * device). On success *out is a new handle the caller closes with
 * tdm_search_close. Thread-safe. */
TDM_API int tdm_search_open(tdm_engine *engine, const tdm_index *index, tdm_search **out);
/* Accepts NULL. */
TDM_API void tdm_search_close(tdm_search *s);
/* Blocks until the index is resident on every device of s: tdm_search_open
 * starts its uploads and returns, and a query that needs a device waits for
 * them, but one answered on the host does not, and meanwhile shares the
 * host with the copies (a CPU device's 3.7 GB at 10M documents took one
 * core for seconds). For timing, and for a service that wants its first
 * queries at full speed. TDM_OK, or the upload's error. Thread-safe. */
TDM_API int tdm_search_wait_ready(tdm_search *s);

/* Ranks `text`, put through the index's own tokenizer, stopwords and
 * stemmer (each word weight 1; a word given twice weighs twice). `opts` may
 * be NULL (the defaults). An empty query, or one of only unknown terms or
 * stopwords, gives TDM_OK with no hits. Errors: TDM_ERR_INVALID_ARG (k out
 * of range, a bad option), TDM_ERR_LIMIT (more than TDM_SEARCH_MAX_TERMS
 * terms), TDM_ERR_UNSUPPORTED (an index built with a stemmer this library
 * does not have; a device that cannot compute exact BM25), device errors.
 * On success *out is the result (free it); on failure *out is NULL.
 * Thread-safe. */
TDM_API int tdm_search_text(tdm_search *s, const char *text, const tdm_search_options *opts,
                            tdm_search_result **out);
/* The same for n terms given directly (a term given twice counts twice, its
 * weights summed; unknown terms are ignored). */
TDM_API int tdm_search_terms(tdm_search *s, const tdm_search_term *terms, size_t n,
                             const tdm_search_options *opts, tdm_search_result **out);
/* One query of a batch: `text` (tokenized as tdm_search_text), or, when text
 * is NULL, `nterms` terms given directly (as tdm_search_terms). */
typedef struct tdm_search_query {
    const char *text;
    const tdm_search_term *terms;
    size_t nterms;
} tdm_search_query;

/* Ranks n queries with one set of options in as few launches as the batch
 * needs (results exactly those of tdm_search_text/terms one by one). The
 * batch is placed on the lanes by the policy (opts->policy, else the
 * engine's): whole on one lane (best, a pinned device), or split by the
 * cost models' predicted finish over the lanes the policy allows (hybrid,
 * cpu-only, gpu-only), each lane's part one batch there; direct: the
 * planner's device in the caller's thread (docs/SCHED.md).
 * results[i] receives query i's result (free each with tdm_search_result_free).
 * A query that fails alone (too many terms, ...) gets a result with no hits,
 * status != TDM_OK and error set; it does not fail the others. Returns TDM_OK
 * when every query has a result; otherwise (bad options, NULL arrays, out of
 * memory, no device) an error with every results[i] NULL. Thread-safe. */
TDM_API int tdm_search_batch(tdm_search *s, const tdm_search_query *queries, size_t n,
                             const tdm_search_options *opts, tdm_search_result **results);
/* Accepts NULL. */
TDM_API void tdm_search_result_free(tdm_search_result *r);

/* The list cache of a handle's device (docs/CACHE.md): an index needing
 * more device memory than the engine's device_memory allows (or than the
 * device has) keeps its small tables resident and its posting lists in a
 * cache of the rest. Counts since tdm_search_open; a list counts once per
 * query that names it; hit rate = hits / (hits + misses). */
typedef struct tdm_list_cache_stats {
    int cached;                 /* 0: the whole index is resident (the rest is 0) */
    uint64_t capacity_bytes, used_bytes, lists; /* the cache, what it holds now */
    uint64_t hits, misses;      /* lists found in the cache / uploaded */
    uint64_t bytes_hit, bytes_moved; /* their bytes */
    uint64_t evictions, bytes_evicted;
    uint64_t streamed;          /* misses not admitted: benefit (uses x bytes)
                                   below that of the lists they displaced */
    uint64_t waits;             /* queries that waited for room others held */
} tdm_list_cache_stats;

/* Fills *out for engine device `device` of s. TDM_ERR_INVALID_ARG for a
 * NULL argument or a device out of range. Thread-safe. */
TDM_API int tdm_search_cache_stats(const tdm_search *s, int device, tdm_list_cache_stats *out);

/* ---------------------------------------------------------------- scheduling */

/* Every engine device is a lane with its own worker thread and queue;
 * tdm_search_text and tdm_search_terms place each query on a lane by the
 * request's policy (else the engine's) and the lanes' cost models, and
 * return when it is answered. Faults: a lane that fails hands its queries to
 * another lane; none is lost or answered twice. docs/SCHED.md has the
 * details, and the test switches (TANDEM_FAULT_INJECT, TANDEM_LANE_KINDS). */
enum tdm_policy {
    TDM_POLICY_DEFAULT = 0,  /* per request: the engine's policy */
    TDM_POLICY_CPU_ONLY = 1, /* CPU lanes only (earliest predicted finish among them) */
    TDM_POLICY_GPU_ONLY = 2, /* GPU lanes only (idem) */
    TDM_POLICY_BEST = 3,     /* the lane the cost model predicts fastest for the
                                query, whatever its queue */
    TDM_POLICY_HYBRID = 4,   /* earliest predicted finish over all lanes; queues
                                GPU-suited, CPU-suited and either; work stealing
                                and deadline promotion (Ding 2009) */
    TDM_POLICY_DIRECT = 5    /* no lane: the caller's thread on the planner's device */
};

/* Griffin's intra-query migration (Liu et al. 2018) of ranked AND
 * (TDM_ALGO_AND, 2+ terms): the lists are intersected shortest first, a
 * step at a time, and after each step the rest of the query may move to
 * the lane the cost model now prefers, carrying only the candidates and
 * their partial scores. AUTO: under the hybrid policy, by the model; FORCE:
 * under any lane policy, every step moves to another live lane (tests,
 * benchmarks); OFF: a ranked AND runs whole on one lane. */
enum tdm_migrate {
    TDM_MIGRATE_DEFAULT = 0, /* per request: the engine's (engine: AUTO) */
    TDM_MIGRATE_AUTO = 1,
    TDM_MIGRATE_FORCE = 2,
    TDM_MIGRATE_OFF = 3
};

/* "default", "cpu-only", "gpu-only", "best", "hybrid", "direct"; NULL if unknown. */
TDM_API const char *tdm_policy_name(int policy);
/* The policy named `name` (as above; also "cpu", "gpu", "best-device"),
 * case-insensitive, into *policy; TDM_ERR_INVALID_ARG naming it if unknown. */
TDM_API int tdm_policy_parse(const char *name, int *policy);

/* Load modes (Wu 2010): under light load a lane runs queries one by one;
 * from the load threshold on, batch lanes (GPUs; every lane of an engine
 * without one) take batches, waiting at most the batching window for one
 * to fill. */
enum tdm_load_mode { TDM_LOAD_SINGLE = 0, TDM_LOAD_BATCH = 1 };

#define TDM_SCHED_MAX_LANES 32

typedef struct tdm_lane_stats {
    int device;            /* engine device index */
    int gpu;               /* 1: a GPU lane, 0: a CPU lane */
    int alive;             /* 0 once the lane failed (its queries went elsewhere) */
    uint64_t queries;      /* answered by this lane */
    uint64_t batches;      /* runs of more than one query */
    uint64_t stolen;       /* queries it took from another lane's queue */
    uint64_t faults;       /* runs that failed (their queries handed over) */
    uint64_t queued;       /* waiting in its queue now */
    double busy_seconds;   /* time spent running queries */
    double pred_error;     /* mean |predicted - observed| / observed of its lone runs */
    uint64_t pred_n;       /* runs that mean is over */
    uint64_t model_n;      /* observations in its cost model (calibration and
                              stored ones included) */
    int slots;             /* runs it keeps going at once (lane_slots) */
    double active_seconds; /* wall time with at least one run going (busy_seconds sums
                              the slots' runs): utilization = active / wall */
} tdm_lane_stats;

/* A snapshot of a search handle's scheduler. Accounting: every query
 * submitted is answered, failed or in flight. */
typedef struct tdm_sched_stats {
    size_t struct_size;    /* sizeof(tdm_sched_stats), from _init */
    int policy;            /* the engine's policy */
    int load_mode;         /* enum tdm_load_mode now */
    uint64_t submitted, answered, failed, in_flight;
    uint64_t direct;       /* answered in the caller's own thread */
    uint64_t stolen;       /* taken by a lane from another lane's queue */
    uint64_t promoted;     /* run ahead of older work for their deadline */
    uint64_t handovers;    /* handed from a failing lane to another */
    uint64_t batches;      /* lane runs of more than one query */
    uint64_t batched;      /* queries answered in those */
    uint64_t mode_switches;/* load mode changes */
    double batch_window;   /* seconds, the batching window */
    double window_wait;    /* seconds lanes spent waiting in the window */
    unsigned load_threshold;
    double pred_error;     /* mean relative prediction error over every lane */
    uint64_t pred_n;
    int nlanes;
    tdm_lane_stats lanes[TDM_SCHED_MAX_LANES];
    uint64_t deadline_misses; /* answered after their deadline */
    uint64_t stepped;      /* ranked AND queries run step by step (Griffin) */
    uint64_t migrations;   /* moves of such a query's rest to another lane */
    uint64_t carried_bytes;/* their intermediate results moved (down + up) */
    /* Partitioned and split handles (docs/PARTITION.md). */
    uint64_t split;        /* single queries run on every partition at once */
    uint64_t split_fallbacks; /* of a split handle's, those a failing partition
                             sent back whole to the lanes (answered there) */
} tdm_sched_stats;

TDM_API void tdm_sched_stats_init(tdm_sched_stats *st);
/* Fills *st (initialised by tdm_sched_stats_init) with the handle's counters
 * now. Thread-safe. */
TDM_API int tdm_search_stats(tdm_search *s, tdm_sched_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* TANDEM_H */
