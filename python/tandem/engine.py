"""tandem.devices(), Engine and Searcher: the search half of the C API
(tdm_engine_*, tdm_index_*, tdm_search_*).

Threads: an Engine and a Searcher may be used from any number of threads at
once (the C handles are thread-safe and ctypes releases the GIL during each
call, so searches overlap). close() makes later calls raise ValueError at
once and waits for the calls in flight on that handle, up to a time limit
(TandemTimeoutError past it; the last of them then frees the handle)."""
from __future__ import annotations

import ctypes
import os
import threading
import time
import weakref
from typing import (Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, TypeVar,
                    Union)

import numpy as np
import numpy.typing as npt

from . import _lib
from ._build import _bytes
from ._types import Hits, Query, StrPath
from .errors import TandemTimeoutError, check, error

__all__ = ["Device", "devices", "Engine", "Searcher", "BatchResult", "CLOSE_TIMEOUT"]


class Device(NamedTuple):
    """An OpenCL device as tandem sees it (tdm_device_info): what
    `tandem devices` lists. index: its position in discovery order (in
    Engine.devices, the engine's own); type: "cpu", "gpu", "accelerator" or
    "other"; sizes in bytes; extensions: the OpenCL extension names."""
    index: int  # type: ignore[assignment]  # (a field named as tuple.index)
    platform_index: int
    type: str
    platform: str
    vendor: str
    name: str
    driver_version: str
    device_version: str
    opencl_c_version: str
    compute_units: int
    max_clock_mhz: int
    global_mem_bytes: int
    max_alloc_bytes: int
    local_mem_bytes: int
    max_work_group_size: int
    extensions: List[str]


_TYPES = {1: "cpu", 2: "gpu", 4: "accelerator", 8: "other"}
# auto: the index's own (impact on an impact index, else BM25; tandem.h TDM_SCORE_AUTO)
_SCORING = {"bm25": 0, "impact": 1, "auto": 2}


def _device(d: Any) -> Device:
    def s(b: bytes) -> str:
        return b.decode("utf-8", "replace")
    return Device(d.index, d.platform_index, _TYPES.get(d.type, "other"), s(d.platform),
                  s(d.vendor), s(d.name), s(d.driver_version), s(d.device_version),
                  s(d.opencl_c_version), d.compute_units, d.max_clock_mhz,
                  d.global_mem_bytes, d.max_alloc_bytes, d.local_mem_bytes,
                  d.max_work_group_size,
                  (d.extensions or b"").decode("utf-8", "replace").split())


def _policy(name: str) -> int:
    """The enum tdm_policy named `name` (tdm_policy_parse)."""
    if not _lib.HAVE_POLICY:
        raise error(_lib.ERR_UNSUPPORTED, "policy %r: this libtandem (%s) has no "
                    "scheduler policies" % (name, _lib.path))
    v = ctypes.c_int()
    check(_lib.policy_parse(_bytes(name, "policy"), ctypes.byref(v)))
    return v.value


def devices() -> List[Device]:
    """Every OpenCL device the ICD loader exposes, in discovery order (as
    `tandem devices` lists them), as Device tuples; [] without a platform."""
    arr = ctypes.POINTER(_lib.DeviceInfo)()
    n = ctypes.c_size_t()
    check(_lib.devices_discover(ctypes.byref(arr), ctypes.byref(n)))
    try:
        return [_device(arr[i]) for i in range(n.value)]
    finally:
        _lib.free(ctypes.cast(arr, ctypes.c_void_p))


#: Seconds close() waits for the calls in flight, by default.
CLOSE_TIMEOUT: float = 30.0


def _secs(timeout: Optional[float]) -> str:
    return "no limit" if timeout is None else "%.3g s" % timeout


_H = TypeVar("_H", bound="_Handle")


class _Handle:
    """A C handle with a count of calls in flight, so that close() never
    frees it under a running call. Closing refuses new calls at once and
    waits only for those in flight, up to a time limit; past it the handle
    is freed by the last of them to return."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._ptr: Optional[int] = None
        self._busy = 0
        self._closing = False
        # frees the C handle; set when a close gave up waiting
        self._release: Optional[Callable[[], object]] = None
        self._cv = threading.Condition()

    def _enter(self) -> int:
        with self._cv:
            if self._ptr is None or self._closing:
                raise ValueError("%s is closed" % self._what)
            self._busy += 1
            return self._ptr

    def _leave(self) -> None:
        release = None
        with self._cv:
            self._busy -= 1
            if self._busy == 0:
                self._cv.notify_all()
                release, self._release = self._release, None
        if release is not None:
            release()

    def _take(self, timeout: Optional[float],
              release: Callable[[int], object]) -> Optional[int]:
        """Refuses new calls, then waits up to `timeout` seconds (None: no
        limit) for those in flight. Returns the pointer to free (None if it
        was closed already), or, when calls are still in flight at the
        limit, leaves release(ptr) to the last of them and raises
        TandemTimeoutError."""
        with self._cv:
            self._closing = True
            end = None if timeout is None else time.monotonic() + timeout
            while self._busy and self._ptr is not None:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._cv.wait(left)
            ptr, self._ptr = self._ptr, None
            if not self._busy or ptr is None:
                return ptr
            busy, held = self._busy, ptr
            self._release = lambda: release(held)
        raise TandemTimeoutError(
            "%s.close: %d call(s) still in flight after %s; new calls are refused, and "
            "the handle is freed when they return" % (self._what, busy, _secs(timeout)),
            _lib.ERR_TIMEOUT)

    @property
    def closed(self) -> bool:
        """Whether close() was called (or the open failed)."""
        return self._ptr is None or self._closing

    def close(self, timeout: Optional[float] = CLOSE_TIMEOUT) -> None:
        """Closes the handle (Engine.close, Searcher.close)."""
        raise NotImplementedError

    def __enter__(self: _H) -> _H:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class Engine(_Handle):
    """The OpenCL devices tandem searches on (tdm_engine_open).

    devices: as TANDEM_DEVICES ("all", "gpu", "cpu", "pocl", an index, a part
    of a name; comma-separated), None for TANDEM_DEVICES or else all.
    cache_dir: the kernel binary cache (None: TANDEM_CACHE_DIR or the default).
    policy: how searches are placed on the devices, "hybrid", "best",
    "cpu-only", "gpu-only" or "direct" (None: TANDEM_POLICY, else hybrid;
    docs/SCHED.md). Open one engine per process and share it between threads."""

    def __init__(self, devices: Optional[str] = None, *, cache_dir: Optional[StrPath] = None,
                 policy: Optional[str] = None) -> None:
        super().__init__("Engine")
        # closed with the engine
        self._searchers: weakref.WeakSet[Searcher] = weakref.WeakSet()
        o = _lib.options(_lib.EngineOptions, _lib.engine_options_init)
        o.devices = _bytes(devices, "devices")
        o.cache_dir = _bytes(cache_dir, "cache_dir")
        if policy is not None:
            o.policy = _policy(policy)
        ptr = ctypes.c_void_p()
        check(_lib.engine_open(o, ctypes.byref(ptr)))
        self._ptr = ptr.value

    @property
    def devices(self) -> List[Device]:
        """The engine's devices, as Device tuples (index: the engine's)."""
        p = self._enter()
        try:
            out = []
            for i in range(_lib.engine_device_count(p)):
                info = _lib.DeviceInfo()
                check(_lib.engine_device_info_get(p, i, ctypes.byref(info)))
                out.append(_device(info)._replace(index=i))
            return out
        finally:
            self._leave()

    @property
    def warnings(self) -> str:
        """Devices skipped at open (their driver failed), one line each; ""."""
        p = self._enter()
        try:
            return (_lib.engine_warnings(p) or b"").decode("utf-8", "replace")
        finally:
            self._leave()

    def open(self, index_path: StrPath) -> Searcher:
        """Opens the index at index_path and makes it searchable on this
        engine's devices: a Searcher (close it, or use it in a with block)."""
        return Searcher(self, index_path)

    def open_shards(self, shards: Union[StrPath, Sequence[StrPath]]) -> Searcher:
        """Opens a collection split into shards by `tandem shard INDEX
        --shards N -o PREFIX` as one index (tdm_index_open_split /
        tdm_index_open_shards): `shards` is PREFIX (the files PREFIX.0 ..
        PREFIX.<N-1>) or the list of the N shard files, in any order. The
        shards are spread over this engine's devices (shard i on device i %
        devices, several a device allowed), every query runs on all of them
        and their top k merge: the Searcher answers exactly as one on the
        unsharded index (hits, scores, stats, docnames). Shards of two
        splits, a missing one or a plain index raise FormatError naming the
        file. For more shards than one machine holds, see docs/MPI.md
        (tandem-mpi) and examples/mpi_shards.py."""
        return Searcher(self, shards, shards=True)

    def close(self, timeout: Optional[float] = CLOSE_TIMEOUT) -> None:
        """Closes the engine and every Searcher opened from it. Idempotent.
        New calls (opens, searches) fail with ValueError at once; the calls
        in flight are waited for, up to `timeout` seconds in all (None: no
        limit). Past it TandemTimeoutError says how many still run, and the
        handles are freed when the last of them returns."""
        end = None if timeout is None else time.monotonic() + timeout
        # past the limit, the last open in flight closes the searchers
        # without waiting (each left to its own calls) and then the engine
        ptr = self._take(timeout, lambda p: self._close_searchers(p, time.monotonic()))
        if ptr is None:
            return
        late = self._close_searchers(ptr, end)
        if late:
            raise TandemTimeoutError(
                "Engine.close: %d searcher(s) still have calls in flight after %s; new "
                "calls are refused, and the engine is freed when they return"
                % (late, _secs(timeout)),
                _lib.ERR_TIMEOUT)

    def _close_searchers(self, ptr: int, end: Optional[float] = None) -> int:
        """Closes the searchers registered by now (waiting until `end`),
        then frees the engine once every one of them is freed; returns how
        many are freed later, by their last call in flight."""
        with self._cv:   # no open is in flight: every searcher is registered
            searchers = list(self._searchers)
            self._searchers.clear()
        pending = [len(searchers) + 1]
        lock = threading.Lock()

        def one_freed() -> None:
            with lock:
                pending[0] -= 1
                last = pending[0] == 0
            if last:
                _lib.engine_close(ptr)

        late = 0
        for s in searchers:
            left = None if end is None else max(0.0, end - time.monotonic())
            late += s._close(left, one_freed)
        one_freed()
        return late


class _HitRaw(ctypes.Structure):
    """tdm_search_hit with the name as a plain word, which numpy can view."""
    _fields_ = [("docid", ctypes.c_uint32), ("score", ctypes.c_float),
                ("name", ctypes.c_uint64)]


class BatchResult(NamedTuple):
    """search_batch's result: three numpy arrays of one row per hit, query by
    query, each query's hits best first: qid (int64, the query's position in
    the batch), docid (uint32), score (float32, the engine's exact score).
    Unpacks as (qid, docid, score); docnames() names the documents."""
    qid: npt.NDArray[np.int64]
    docid: npt.NDArray[np.uint32]
    score: npt.NDArray[np.float32]

    def docnames(self, searcher: Searcher) -> List[str]:
        """The document name of every row (a list of str)."""
        return searcher.docnames(self.docid)


def _open_index(path: Union[StrPath, Sequence[StrPath]], shards: bool) -> int:
    """tdm_index_open, or for shards tdm_index_open_split (a PREFIX) or
    tdm_index_open_shards (a list of files): the index handle."""
    ix = ctypes.c_void_p()
    if isinstance(path, (str, bytes, os.PathLike)):
        name = _bytes(path, "shards" if shards else "index_path")
        check((_lib.index_open_split if shards else _lib.index_open)(name, ctypes.byref(ix)))
    elif not shards:
        raise TypeError("index_path: expected a str or path, got %s" % type(path).__name__)
    else:
        names = [_bytes(p, "shards") for p in path]
        arr = (ctypes.c_char_p * max(1, len(names)))(*names)
        check(_lib.index_open_shards(arr, len(names), ctypes.byref(ix)))
    return int(ix.value or 0)


class Searcher(_Handle):
    """An open index bound to an engine (tdm_index_open + tdm_search_open),
    made by Engine.open(index_path), or a split's shards opened as one
    (Engine.open_shards): search(), search_batch(), the index's stats,
    normalize() and docnames(). `engine` and `path` are those it was opened
    with (for shards: the PREFIX or the list of files). Close it (or use it
    in a with block)."""

    engine: Engine
    path: Union[StrPath, Sequence[StrPath]]

    def __init__(self, engine: Engine, index_path: Union[StrPath, Sequence[StrPath]],
                 shards: bool = False) -> None:
        super().__init__("Searcher")
        self._index: Optional[int] = None
        self.engine = engine
        self.path = index_path
        ep = engine._enter()
        try:
            ix = ctypes.c_void_p(_open_index(index_path, shards))
            sp = ctypes.c_void_p()
            rc = _lib.search_open(ep, ix.value, ctypes.byref(sp))
            if rc != _lib.OK:
                e = error(rc)
                _lib.index_close(ix.value)
                raise e
            self._index = ix.value
            self._ptr = sp.value
            with engine._cv:   # while the engine counts this open as busy
                engine._searchers.add(self)
        finally:
            engine._leave()

    def close(self, timeout: Optional[float] = CLOSE_TIMEOUT) -> None:
        """Closes the search handle and the index. Idempotent. New searches
        fail with ValueError at once; those in flight are waited for, up to
        `timeout` seconds (None: no limit). Past it TandemTimeoutError says
        how many still run, and the handle is freed when they return."""
        if self._close(timeout, lambda: None):
            raise TandemTimeoutError(
                "Searcher.close: calls still in flight after %s; new calls are refused, "
                "and the handle is freed when they return" % _secs(timeout), _lib.ERR_TIMEOUT)

    def _free(self, ptr: int) -> None:
        _lib.search_close(ptr)
        _lib.index_close(self._index)
        self._index = None

    def _close(self, timeout: Optional[float], freed: Callable[[], None]) -> int:
        """Closes as close() does, then calls freed() once the handle is
        freed; returns 1 when that is left to a call in flight, else 0."""
        with self._cv:
            if self._ptr is None and self._release is not None:
                prev = self._release   # an earlier close gave up waiting

                def both() -> None:
                    prev()
                    freed()
                self._release = both
                return 1
        def free_then_tell(p: int) -> None:
            self._free(p)
            freed()
        try:
            ptr = self._take(timeout, free_then_tell)
        except TandemTimeoutError:
            return 1
        if ptr is not None:
            self._free(ptr)
        freed()
        return 0

    def wait_ready(self) -> None:
        """Blocks until the index is resident on every device (the
        constructor starts its uploads and returns; a query that needs a
        device waits for them, one answered on the host does not): for
        timing, or a service's first queries at full speed."""
        p = self._enter()
        try:
            if _lib.HAVE_WAIT_READY:
                check(_lib.search_wait_ready(p))
        finally:
            self._leave()

    # ---- the index

    @property
    def stats(self) -> Dict[str, Any]:
        """Collection facts (tdm_index_stats) as a dict."""
        self._enter()
        try:
            st = _lib.IndexStats()
            check(_lib.index_stats_get(self._index, ctypes.byref(st)))
            d = {f[0]: getattr(st, f[0]) for f in _lib.IndexStats._fields_}
            d["codec"] = st.codec.decode()
            d["stemmer"] = st.stemmer.decode()
            return d
        finally:
            self._leave()

    def normalize(self, word: Union[str, bytes]) -> Optional[str]:
        """`word` through the index's tokenizer, stopwords and stemmer: the
        term as stored, or None when it yields none (a stopword, say)."""
        self._enter()
        try:
            buf = ctypes.create_string_buffer(256)
            rc = _lib.index_normalize(self._index, _bytes(word, "word"), buf, len(buf))
            if rc == _lib.ERR_NOT_FOUND:
                return None
            check(rc)
            return buf.value.decode("utf-8", "replace")
        finally:
            self._leave()

    def docname(self, docid: int) -> str:
        """The name of document `docid`; NotFoundError when out of range."""
        return self.docnames([docid])[0]

    def docnames(self, docids: npt.ArrayLike) -> List[str]:
        """The names of the documents `docids` (any iterable of ints, or a
        numpy array, such as BatchResult.docid)."""
        self._enter()
        try:
            out = []
            for d in np.asarray(docids, dtype=np.int64).ravel().tolist():
                name = _lib.index_docname(self._index, d) if 0 <= d < 2**32 else None
                if name is None:
                    raise error(_lib.ERR_NOT_FOUND, "docid %d: no such document" % d)
                out.append(name.decode("utf-8", "replace"))
            return out
        finally:
            self._leave()

    # ---- searching

    def _options(self, k: int, algorithm: str, scoring: str, k1: float, b: float,
                 device: Optional[int], policy: Optional[str]) -> Any:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError("k: expected an int, got %s" % type(k).__name__)
        if not 0 <= k <= 0xFFFFFFFF:
            raise error(_lib.ERR_INVALID_ARG, "k = %d: expected 1 .. 10000" % k)
        o = _lib.options(_lib.SearchOptions, _lib.search_options_init)
        o.k = int(k)
        algo = ctypes.c_int()
        check(_lib.algorithm_parse(_bytes(algorithm, "algorithm"), ctypes.byref(algo)))
        o.algorithm = algo.value
        if scoring not in _SCORING:
            raise error(_lib.ERR_INVALID_ARG, "scoring '%s': expected auto, bm25 or impact"
                        % (scoring,))
        o.scoring = _SCORING[scoring]
        o.k1 = float(k1)
        o.b = float(b)
        if device is not None:
            if isinstance(device, bool) or not isinstance(device, (int, np.integer)) \
                    or not 0 <= device < 2**31:
                raise error(_lib.ERR_INVALID_ARG, "device %r: expected an engine device "
                            "index or None" % (device,))
            o.device = int(device)
        if policy is not None:
            o.policy = _policy(policy)
        return o

    @staticmethod
    def _query(q: Query) -> Tuple[Optional[bytes], Any, int]:
        """(text bytes, None, 0) or (None, SearchTerm array, n) for a query
        given as text, a list of terms (weight 1 each) or {term: weight};
        a term may be a str (as stored in the index) or an int (its lexicon
        position)."""
        if isinstance(q, (str, bytes)):
            return _bytes(q, "query"), None, 0
        items: List[Tuple[Any, Any]]
        if isinstance(q, dict):
            items = list(q.items())
        elif isinstance(q, (list, tuple)):
            items = [(t, 1.0) for t in q]
        else:
            raise TypeError("query: expected str, a list of terms or a dict term -> "
                            "weight, got %s" % type(q).__name__)
        arr = (_lib.SearchTerm * max(1, len(items)))()
        for i, (t, w) in enumerate(items):
            if isinstance(t, (int, np.integer)) and not isinstance(t, bool):
                if not 0 <= t < 2**64:
                    raise error(_lib.ERR_INVALID_ARG, "term id %d out of range" % t)
                arr[i].term = None
                arr[i].id = int(t)
            elif isinstance(t, (str, bytes)):
                arr[i].term = _bytes(t, "term")
            else:
                raise TypeError("query term: expected str or int, got %s"
                                % type(t).__name__)
            try:
                arr[i].weight = float(w)
            except (TypeError, ValueError):
                raise TypeError("weight of term %r: expected a number, got %r" % (t, w))
        return None, arr, len(items)

    def _one(self, p: int, q: Query, o: Any) -> Any:
        """Runs one query; returns the C result pointer (caller frees)."""
        text, terms, n = self._query(q)
        r = ctypes.POINTER(_lib.SearchResult)()
        if text is not None:
            check(_lib.search_text(p, text, o, ctypes.byref(r)))
        else:
            check(_lib.search_terms(p, terms, n, o, ctypes.byref(r)))
        return r

    def search(self, query: Query, k: int = 10, algorithm: str = "auto",
               scoring: str = "auto", k1: float = 1.2, b: float = 0.75,
               device: Optional[int] = None, policy: Optional[str] = None) -> Hits:
        """The top k documents of `query` as a list of (docname, score), best
        first. query: text (through the index's tokenizer and stemmer; on an
        impact index split on white space, words as written), a list of terms
        as stored (weight 1 each), or a dict term -> weight (learned sparse
        models). scoring: auto (impact on an impact index, e.g. built from
        JSON vectors; BM25 elsewhere), bm25 (refused on an impact index) or
        impact (on purpose on any index). algorithm: auto, or,
        and, and_or, wand, bmw, maxscore (all exact). device: an engine
        device index, None for the planner's choice. policy: this request's
        placement policy (as Engine's), None for the engine's."""
        o = self._options(k, algorithm, scoring, k1, b, device, policy)
        p = self._enter()
        try:
            r = self._one(p, query, o)
            try:
                res = r.contents
                return [(res.hits[i].name.decode("utf-8", "replace"), float(res.hits[i].score))
                        for i in range(res.n)]
            finally:
                _lib.search_result_free(r)
        finally:
            self._leave()

    def search_batch(self, queries: Sequence[Query], k: int = 10, algorithm: str = "auto",
                     scoring: str = "auto", k1: float = 1.2, b: float = 0.75,
                     device: Optional[int] = None,
                     policy: Optional[str] = None) -> BatchResult:
        """Ranks every query of `queries` (a list; each as in search()) with
        one set of options, through tdm_search_batch (as few launches as the
        batch needs; the results are those of search() one by one). Returns a
        BatchResult of numpy arrays (qid, docid, score). A query that fails
        raises its error, naming its position."""
        o = self._options(k, algorithm, scoring, k1, b, device, policy)
        queries = list(queries)
        p = self._enter()
        try:
            results: List[Any] = []
            if _lib.HAVE_BATCH:
                results = self._batch_c(p, queries, o)
            else:
                try:
                    for i, q in enumerate(queries):
                        try:
                            results.append(self._one(p, q, o))
                        except Exception as e:
                            if hasattr(e, "status"):
                                raise error(e.status, "query %d: %s" % (i, e))
                            raise
                except BaseException:
                    for r in results:
                        _lib.search_result_free(r)
                    raise
            return self._arrays(results)
        finally:
            self._leave()

    def _batch_c(self, p: int, queries: List[Query], o: Any) -> List[Any]:
        n = len(queries)
        arr = (_lib.SearchQuery * max(1, n))()
        keep = []
        for i, q in enumerate(queries):
            text, terms, nt = self._query(q)
            arr[i].text = text
            if terms is not None:
                arr[i].terms = terms
                arr[i].nterms = nt
                keep.append(terms)
        out = (ctypes.POINTER(_lib.SearchResult) * max(1, n))()
        check(_lib.search_batch(p, arr, n, o, out))
        results = [out[i] for i in range(n)]
        for i, r in enumerate(results):
            if r.contents.status != _lib.OK:
                msg = (r.contents.error or b"").decode("utf-8", "replace")
                e = error(r.contents.status, "query %d: %s" % (i, msg))
                for x in results:
                    _lib.search_result_free(x)
                raise e
        return results

    @staticmethod
    def _arrays(results: List[Any]) -> BatchResult:
        """Frees the C results into a BatchResult."""
        try:
            counts = [r.contents.n for r in results]
            total = sum(counts)
            qid = np.repeat(np.arange(len(results), dtype=np.int64),
                            np.asarray(counts, dtype=np.int64))
            docid = np.empty(total, dtype=np.uint32)
            score = np.empty(total, dtype=np.float32)
            at = 0
            for r, n in zip(results, counts):
                if n:
                    raw = ctypes.cast(r.contents.hits, ctypes.POINTER(_HitRaw))
                    hits = np.ctypeslib.as_array(raw, shape=(n,))
                    docid[at:at + n] = hits["docid"]
                    score[at:at + n] = hits["score"]
                    at += n
            return BatchResult(qid, docid, score)
        finally:
            for r in results:
                _lib.search_result_free(r)
