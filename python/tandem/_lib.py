"""libtandem through ctypes: finding the shared library and declaring the C API
(include/tandem.h) that the package uses.

ctypes.CDLL releases the GIL around every foreign call, so searches and builds
run while other Python threads do; callbacks into Python take it back.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Any, Callable, List, Tuple, Type, TypeVar

c_size_t = ctypes.c_size_t
c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_int = ctypes.c_int
c_uint = ctypes.c_uint
c_uint32 = ctypes.c_uint32
c_uint64 = ctypes.c_uint64
c_double = ctypes.c_double
c_float = ctypes.c_float
P = ctypes.POINTER

# Status codes (tandem.h, enum { TDM_OK ... }).
OK = 0
ERR_INVALID_ARG = -1
ERR_NOMEM = -2
ERR_IO = -3
ERR_FORMAT = -4
ERR_CORRUPT = -5
ERR_VERSION = -6
ERR_NO_DEVICE = -7
ERR_OPENCL = -8
ERR_BUILD = -9
ERR_DEVICE_MEMORY = -10
ERR_NOT_FOUND = -11
ERR_UNSUPPORTED = -12
ERR_LIMIT = -13
ERR_INTERNAL = -14
ERR_CANCELLED = -15
ERR_TIMEOUT = -16

# Options structs are allocated with this much room past what Python knows, so
# that a newer library's *_options_init, which writes its own sizeof, never
# writes past the buffer; struct_size is then set to Python's size, which the
# library reads as "the fields past it are at their defaults".
_SLACK = 512


class DeviceInfo(ctypes.Structure):
    _fields_ = [("index", c_int), ("platform_index", c_int), ("type", c_int),
                ("platform", ctypes.c_char * 128), ("vendor", ctypes.c_char * 128),
                ("name", ctypes.c_char * 128), ("driver_version", ctypes.c_char * 64),
                ("device_version", ctypes.c_char * 64),
                ("opencl_c_version", ctypes.c_char * 64),
                ("compute_units", c_uint), ("max_clock_mhz", c_uint),
                ("global_mem_bytes", c_uint64), ("max_alloc_bytes", c_uint64),
                ("local_mem_bytes", c_uint64), ("max_work_group_size", c_size_t),
                ("preferred_wg_multiple", c_size_t), ("extensions", c_char_p)]


class EngineOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("devices", c_char_p), ("cache_dir", c_char_p),
                ("cache_mode", c_int), ("build_options", c_char_p),
                ("kernel_source", c_char_p), ("wg_size", c_size_t), ("nv_shuffle", c_int),
                ("codec_groups_per_cu", c_size_t),
                # scheduling (tandem.h; docs/SCHED.md), appended by sched
                ("policy", c_int), ("batch_window_us", ctypes.c_long),
                ("load_threshold", c_uint), ("deadline_ms", c_double), ("calibrate", c_int),
                ("fault_inject", c_char_p), ("lane_kinds", c_char_p),
                ("device_memory", c_uint64), ("lane_slots", c_uint),
                ("migrate", c_int), ("first_kernel_ms", c_uint),
                # docs/PARTITION.md: tdm_engine_options_init writes every field
                ("partition", c_int)]


class IndexStats(ctypes.Structure):
    _fields_ = [("format_version", c_uint32), ("documents", c_uint64), ("terms", c_uint64),
                ("postings", c_uint64), ("total_doclen", c_uint64), ("avg_doclen", c_double),
                ("k1", c_double), ("b", c_double), ("codec", ctypes.c_char * 32),
                ("stemmer", ctypes.c_char * 32), ("stopwords", c_uint32),
                ("file_bytes", c_uint64)]


class BuildProgress(ctypes.Structure):
    _fields_ = [("phase", c_int), ("documents", c_uint64), ("bytes_read", c_uint64),
                ("bytes_total", c_uint64), ("terms_done", c_uint64),
                ("terms_total", c_uint64), ("runs", c_uint32), ("seconds", c_double)]


BUILD_PROGRESS_FN = ctypes.CFUNCTYPE(c_int, c_void_p, P(BuildProgress))


class BuildOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("format", c_int), ("stemmer", c_char_p),
                ("stopwords", c_char_p), ("codec", c_char_p), ("memory_mb", c_size_t),
                ("k1", c_double), ("b", c_double), ("tmp_dir", c_char_p),
                ("progress", BUILD_PROGRESS_FN), ("progress_user", c_void_p),
                ("allow_empty", c_int), ("threads", c_uint)]


class ImportProgress(ctypes.Structure):
    _fields_ = [("lists_done", c_uint64), ("lists_total", c_uint64), ("seconds", c_double)]


IMPORT_PROGRESS_FN = ctypes.CFUNCTYPE(c_int, c_void_p, P(ImportProgress))


class ImportOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("format", c_int), ("codec", c_char_p),
                ("k1", c_double), ("b", c_double), ("progress", IMPORT_PROGRESS_FN),
                ("progress_user", c_void_p), ("empty_lists", c_uint64),
                # the analyzer to record (issue 27 item 7), appended
                ("stemmer", c_char_p), ("stopwords", c_char_p)]


class SearchOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("algorithm", c_int), ("k", c_uint32),
                ("scoring", c_int), ("k1", c_double), ("b", c_double), ("device", c_int),
                ("ranges", c_uint32), ("variant", c_int),
                ("policy", c_int), ("deadline_ms", c_double), ("migrate", c_int)]


class SearchTerm(ctypes.Structure):
    _fields_ = [("term", c_char_p), ("id", c_uint64), ("weight", c_double)]


class SearchHit(ctypes.Structure):
    _fields_ = [("docid", c_uint32), ("score", c_float), ("name", c_char_p)]


class SearchResult(ctypes.Structure):
    _fields_ = [("hits", P(SearchHit)), ("n", c_size_t), ("device", c_int),
                ("algorithm", c_int), ("ranges", c_uint32), ("variant", c_int),
                ("seconds", c_double), ("terms", c_uint32), ("unknown", c_uint32),
                ("launches", c_uint32), ("bytes_up", c_uint64), ("bytes_down", c_uint64),
                # from the batch API on (BATCH_API: appended at the end)
                ("status", c_int), ("error", c_char_p), ("batch", c_uint32),
                # the scheduler's account (appended by sched)
                ("policy", c_int), ("load_mode", c_int), ("queue_seconds", c_double),
                ("predicted_seconds", c_double), ("handovers", c_uint32),
                ("steps", c_uint32), ("migrations", c_uint32), ("first_device", c_int),
                ("carried_bytes", c_uint64)]


class SearchQuery(ctypes.Structure):
    _fields_ = [("text", c_char_p), ("terms", P(SearchTerm)), ("nterms", c_size_t)]


_S = TypeVar("_S", bound=ctypes.Structure)


def options(struct_type: Type[_S], init: Callable[[_S], None]) -> _S:
    """An options struct filled by its C init function, in a buffer _SLACK
    bytes larger than Python's idea of it (a newer library's init writes its
    own, larger sizeof). struct_size is then the smaller of the library's
    size and Python's: a newer library takes the fields Python does not know
    as their defaults, an older one reads no field it does not have (Python
    then leaves those at their init values)."""
    buf = ctypes.create_string_buffer(ctypes.sizeof(struct_type) + _SLACK)
    obj = struct_type.from_buffer(buf)
    obj._keepalive = buf
    init(obj)
    obj.struct_size = min(obj.struct_size, ctypes.sizeof(struct_type))
    return obj


def _candidates() -> List[str]:
    env = os.environ.get("TANDEM_LIBRARY")
    if env:
        return [env]
    out = []
    try:   # a wheel's bundled library (cmake/TandemPython.cmake)
        from . import _build_config
        out.append(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                _build_config.LIBRARY))
    except ImportError:   # the checkout: no bundled library
        pass
    found = ctypes.util.find_library("tandem")
    if found:
        out.append(found)
    out.append("libtandem.so.0")
    out += [os.path.join(d, "libtandem.so.0") for d in ("/usr/local/lib", "/usr/lib")]
    return out


def _load() -> Tuple[ctypes.CDLL, str]:
    errors: List[str] = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append("%s (%s)" % (path, e))
    raise ImportError("tandem: cannot load libtandem: tried " + "; ".join(errors) +
                      ". Install the package with `pip install ./python` (it bundles "
                      "libtandem), or build it (cmake --build build) and set "
                      "TANDEM_LIBRARY to build/libtandem.so")


lib, path = _load()


def _fn(name: str, restype: Any, *argtypes: Any) -> Any:
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = argtypes
    return f


version = _fn("tdm_version", c_char_p)
strerror = _fn("tdm_strerror", c_char_p, c_int)
last_error = _fn("tdm_last_error", c_char_p)
last_status = _fn("tdm_last_status", c_int)
free = _fn("tdm_free", None, c_void_p)
devices_discover = _fn("tdm_devices_discover", c_int, P(P(DeviceInfo)), P(c_size_t))

engine_options_init = _fn("tdm_engine_options_init", None, P(EngineOptions))
engine_open = _fn("tdm_engine_open", c_int, P(EngineOptions), P(c_void_p))
engine_close = _fn("tdm_engine_close", None, c_void_p)
engine_warnings = _fn("tdm_engine_warnings", c_char_p, c_void_p)
engine_device_count = _fn("tdm_engine_device_count", c_int, c_void_p)
engine_device_info_get = _fn("tdm_engine_device_info_get", c_int, c_void_p, c_int,
                             P(DeviceInfo))

index_open = _fn("tdm_index_open", c_int, c_char_p, P(c_void_p))
index_open_shards = _fn("tdm_index_open_shards", c_int, P(c_char_p), c_size_t, P(c_void_p))
index_open_split = _fn("tdm_index_open_split", c_int, c_char_p, P(c_void_p))
index_close = _fn("tdm_index_close", None, c_void_p)
index_stats_get = _fn("tdm_index_stats_get", c_int, c_void_p, P(IndexStats))
index_normalize = _fn("tdm_index_normalize", c_int, c_void_p, c_char_p, c_char_p, c_size_t)
index_docname = _fn("tdm_index_docname", c_char_p, c_void_p, c_uint32)

build_options_init = _fn("tdm_index_build_options_init", None, P(BuildOptions))
index_build = _fn("tdm_index_build", c_int, P(c_char_p), c_size_t, c_char_p,
                  P(BuildOptions))
import_options_init = _fn("tdm_index_import_options_init", None, P(ImportOptions))
index_import = _fn("tdm_index_import", c_int, c_char_p, c_char_p, P(ImportOptions))

algorithm_parse = _fn("tdm_algorithm_parse", c_int, c_char_p, P(c_int))
algorithm_name = _fn("tdm_algorithm_name", c_char_p, c_int)
search_options_init = _fn("tdm_search_options_init", None, P(SearchOptions))
search_open = _fn("tdm_search_open", c_int, c_void_p, c_void_p, P(c_void_p))
search_close = _fn("tdm_search_close", None, c_void_p)
search_text = _fn("tdm_search_text", c_int, c_void_p, c_char_p, P(SearchOptions),
                  P(P(SearchResult)))
search_terms = _fn("tdm_search_terms", c_int, c_void_p, P(SearchTerm), c_size_t,
                   P(SearchOptions), P(P(SearchResult)))
search_result_free = _fn("tdm_search_result_free", None, P(SearchResult))

# The scheduler's policies (tdm_policy_parse) arrived after the rest too.
HAVE_POLICY = hasattr(lib, "tdm_policy_parse")
if HAVE_POLICY:
    policy_parse = _fn("tdm_policy_parse", c_int, c_char_p, P(c_int))

# The wait for a handle's uploads arrived after the rest; without it
# Searcher.wait_ready returns at once (its queries wait for them anyway).
HAVE_WAIT_READY = hasattr(lib, "tdm_search_wait_ready")
if HAVE_WAIT_READY:
    search_wait_ready = _fn("tdm_search_wait_ready", c_int, c_void_p)

# The batch call (and the result's status/error/batch fields) arrived after
# the rest; without it search_batch runs the queries one call each.
HAVE_BATCH = hasattr(lib, "tdm_search_batch")
if HAVE_BATCH:
    search_batch = _fn("tdm_search_batch", c_int, c_void_p, P(SearchQuery), c_size_t,
                       P(SearchOptions), P(P(SearchResult)))
