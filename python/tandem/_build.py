"""tandem.build, tandem.import_ciff and tandem.import_pisa: tdm_index_build and
tdm_index_import with a progress bar on a terminal, and Ctrl-C (or any
KeyboardInterrupt) cancelling the build cleanly through the progress callback.

The C call runs in a helper thread while the calling thread waits on it, so
that a KeyboardInterrupt reaches Python at once (a thread blocked in a foreign
call would not see it until the call returned); the callback then returns
nonzero, the library stops, removes what it wrote (TDM_ERR_CANCELLED), and the
KeyboardInterrupt is raised again here."""
from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, TextIO, TypeVar, Union

from . import _lib
from ._types import StrPath
from .errors import error

__all__ = ["build", "import_ciff", "import_pisa", "BuildProgress", "ImportProgress",
           "Progress"]

#: What build()'s progress callable receives: a copy of
#: tdm_index_build_progress (phase 0 reading, 1 merging, 2 done; documents,
#: bytes_read, bytes_total, terms_done, terms_total, runs, seconds).
BuildProgress = _lib.BuildProgress
#: What import_ciff()'s and import_pisa()'s progress callable receives: a
#: copy of tdm_index_import_progress (lists_done, lists_total, seconds).
ImportProgress = _lib.ImportProgress

#: progress=: None (a bar when stderr is a terminal), True, False, or a callable.
Progress = Union[None, bool, Callable[[Any], object]]

_FORMATS = {"auto": 0, "lines": 1, "trec": 2, "smart": 3, "jsonl": 4, "jsonvector": 5}


def _bytes(s: Optional[StrPath], what: str) -> Optional[bytes]:
    """s as the bytes of a C string; a NUL inside would end it early (a term
    'flow\\0x' searched as 'flow'), so it is refused."""
    if s is None:
        return None
    if isinstance(s, os.PathLike):
        s = os.fspath(s)
    if isinstance(s, str):
        s = s.encode()
    elif not isinstance(s, bytes):
        raise TypeError("%s: expected a str or path, got %s" % (what, type(s).__name__))
    if b"\0" in s:
        raise error(_lib.ERR_INVALID_ARG, "%s %r holds a NUL character" % (what, s))
    return s


class _Bar:
    """A one-line progress bar on stderr (only when it is a terminal)."""

    def __init__(self, what: str, stream: Optional[TextIO] = None) -> None:
        self.what = what
        self.stream = stream or sys.stderr
        self.shown = False

    def show(self, text: str) -> None:
        self.stream.write("\r%s: %s\x1b[K" % (self.what, text))
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


def _mb(n: float) -> str:
    return "%.1f MB" % (n / 1e6)


def _build_text(p: Any) -> str:
    if p.phase == 0:
        rate = p.documents / p.seconds if p.seconds > 0 else 0.0
        text = "reading %d docs (%.0f/s), %s" % (p.documents, rate, _mb(p.bytes_read))
        if p.bytes_total:
            frac = min(1.0, p.bytes_read / p.bytes_total)
            eta = p.seconds * (1 - frac) / frac if frac > 0 else 0.0
            width = 24
            fill = int(frac * width)
            text = "[%s%s] %3.0f%% %s of %s, %d docs, ETA %.0fs" % (
                "#" * fill, "." * (width - fill), frac * 100, _mb(p.bytes_read),
                _mb(p.bytes_total), p.documents, eta)
        return text
    if p.phase == 1:
        return "merging %d runs: %d/%d lists" % (p.runs, p.terms_done, p.terms_total)
    return "done: %d docs in %.1fs" % (p.documents, p.seconds)


def _import_text(p: Any) -> str:
    return "%d/%d lists, %.1fs" % (p.lists_done, p.lists_total, p.seconds)


def _want_bar(progress: Progress) -> bool:
    if progress is None:
        try:
            return sys.stderr is not None and sys.stderr.isatty()
        except (AttributeError, ValueError):
            return False
    return progress is True


def _run_cancellable(call: Callable[[Any], int], make_callback: Any, progress: Progress,
                     bar_what: str, to_text: Callable[[Any], str]) -> int:
    """Runs call(c_callback) in a thread; returns its status, or raises
    KeyboardInterrupt after the library cancelled and cleaned up."""
    cancel = threading.Event()
    bar = _Bar(bar_what) if _want_bar(progress) else None
    user = progress if callable(progress) else None
    failed: List[BaseException] = []

    def on_progress(_user: Any, p: Any) -> int:
        try:
            p = p.contents
            if bar is not None:
                bar.show(to_text(p))
            if user is not None:
                user(type(p).from_buffer_copy(p))   # p lives only during the call
        except BaseException as e:  # a callback must not raise into C
            failed.append(e)
            return 1
        return 1 if cancel.is_set() else 0

    c_cb = make_callback(on_progress)
    result: Dict[str, Any] = {}

    finished = threading.Event()

    def worker() -> None:
        try:
            result["status"] = call(c_cb)
            raw = _lib.last_error()   # thread-local: read it on this thread
            result["message"] = raw.decode("utf-8", "replace") if raw else ""
        finally:
            finished.set()

    t = threading.Thread(target=worker, name="tandem-build", daemon=True)
    t.start()
    interrupted = None
    # Waits on an Event, not on join(): a join interrupted by KeyboardInterrupt
    # can take the thread for finished while it still runs.
    while not finished.is_set():
        try:
            finished.wait(0.1)
        except KeyboardInterrupt as e:  # stop the build, then wait for its cleanup
            interrupted = interrupted or e
            cancel.set()
    t.join()
    if bar is not None:
        bar.done()
    status: int = result.get("status", _lib.ERR_INTERNAL)
    if interrupted is not None and status in (_lib.ERR_CANCELLED, _lib.OK):
        raise interrupted
    if failed and status == _lib.ERR_CANCELLED:
        raise failed[0]
    if status != _lib.OK:
        raise error(status, result.get("message"))
    return status


_Out = TypeVar("_Out", bound=StrPath)


def build(inputs: Union[StrPath, Sequence[StrPath]], path: _Out, *,
          stemmer: Optional[str] = "english", codec: str = "bp128", threads: int = 0,
          format: str = "auto", stopwords: Optional[StrPath] = "lucene", memory_mb: int = 512,
          k1: float = 1.2, b: float = 0.75, tmp_dir: Optional[StrPath] = None,
          allow_empty: bool = False, progress: Progress = None) -> _Out:
    """Builds an index at `path` from `inputs` (a path or a list of paths; "-"
    for stdin; gzip read transparently) with tdm_index_build. The file
    appears when complete; on an error or KeyboardInterrupt nothing is left.

    progress: None shows a bar when stderr is a terminal, True always, False
    never; a callable gets each tdm_index_build_progress (phase, documents,
    bytes_read, bytes_total, terms_done, terms_total, runs, seconds).
    stopwords: "lucene" (Lucene's 33 English words, Anserini's default),
    "snowball", "none" (or None), or a stopword file's path.
    stemmer: a Snowball language ("english", "porter", "french", ...) or
    "none". codec: the lists' codec (bp128, vbyte128, pef, ...). k1, b: the
    BM25 parameters of the block-max bounds stored in the index.
    format: auto, lines, trec, smart, jsonl or jsonvector (Anserini's JSON
    vectors of learned sparse models: an impact index, terms as written,
    docs/LEARNED_SPARSE.md). memory_mb: the inverter's
    budget before it spills sorted runs to tmp_dir (default: next to
    `path`). allow_empty: an empty collection is an index, not an error.
    threads: 0 uses every core. Returns `path`."""
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]
    enc = [_bytes(x, "inputs") for x in inputs]
    arr = (_lib.c_char_p * max(1, len(enc)))(*enc)
    if format not in _FORMATS:
        raise error(_lib.ERR_INVALID_ARG, "format '%s': expected one of %s"
                    % (format, ", ".join(_FORMATS)))
    if not isinstance(threads, int) or threads < 0 or threads > 0xFFFFFFFF:
        raise error(_lib.ERR_INVALID_ARG, "threads %r: expected 0 (every core) or a "
                    "positive integer" % (threads,))
    if not isinstance(memory_mb, int) or memory_mb < 0:
        raise error(_lib.ERR_INVALID_ARG, "memory_mb %r: expected a positive integer"
                    % (memory_mb,))
    o = _lib.options(_lib.BuildOptions, _lib.build_options_init)
    o.format = _FORMATS[format]
    o.stemmer = _bytes(stemmer, "stemmer")
    o.stopwords = _bytes(stopwords, "stopwords")
    o.codec = _bytes(codec, "codec")
    o.memory_mb = memory_mb
    o.k1 = k1
    o.b = b
    o.tmp_dir = _bytes(tmp_dir, "tmp_dir")
    o.allow_empty = 1 if allow_empty else 0
    o.threads = threads
    out = _bytes(path, "path")

    def call(cb: Any) -> int:
        o.progress = cb
        return int(_lib.index_build(arr, len(enc), out, o))

    _run_cancellable(call, _lib.BUILD_PROGRESS_FN, progress, "tandem build", _build_text)
    return path


def _import(fmt: int, input: StrPath, path: _Out, codec: str, k1: float, b: float,
            stemmer: Optional[str], stopwords: Optional[StrPath], progress: Progress) -> _Out:
    o = _lib.options(_lib.ImportOptions, _lib.import_options_init)
    o.format = fmt
    o.codec = _bytes(codec, "codec")
    o.k1 = k1
    o.b = b
    if stemmer is not None or stopwords is not None:
        # A library from before the analyzer fields would not read them.
        f = _lib.ImportOptions.stopwords
        if o.struct_size < f.offset + f.size:
            raise error(_lib.ERR_UNSUPPORTED, "stemmer=/stopwords=: this libtandem (%s) "
                        "cannot set an imported index's analyzer" % _lib.path)
        o.stemmer = _bytes(stemmer, "stemmer")
        o.stopwords = _bytes(stopwords, "stopwords")
    src = _bytes(input, "input")
    out = _bytes(path, "path")

    def call(cb: Any) -> int:
        o.progress = cb
        return int(_lib.index_import(src, out, o))

    _run_cancellable(call, _lib.IMPORT_PROGRESS_FN, progress, "tandem import", _import_text)
    return path


_ANALYZER_DOC = """
    stemmer, stopwords: the analyzer the index records, which its searches
    then apply to query text (as `tandem import --stemmer/--stopwords`).
    None (the default) keeps what the input carries (a tandem export writes
    it into the CIFF description or the PISA side file BASE.analyzer); an
    input that carries none gives stemmer "unknown", and query text is then
    only lowercased and split. stemmer: a Snowball language ("english", ...)
    or "none"; stopwords: "lucene", "snowball", "none" or a stopword file's
    path, as build()'s. Returns `path`."""


def import_ciff(input: StrPath, path: _Out, *, codec: str = "bp128", k1: float = 1.2,
                b: float = 0.75, stemmer: Optional[str] = None,
                stopwords: Optional[StrPath] = None, progress: Progress = None) -> _Out:
    """Converts a CIFF file to an index at `path` (tdm_index_import); codec,
    k1 and b as build()'s, progress and cancellation too (the callable gets
    each ImportProgress: lists_done, lists_total, seconds).
    """
    return _import(1, input, path, codec, k1, b, stemmer, stopwords, progress)


def import_pisa(basename: StrPath, path: _Out, *, codec: str = "bp128", k1: float = 1.2,
                b: float = 0.75, stemmer: Optional[str] = None,
                stopwords: Optional[StrPath] = None, progress: Progress = None) -> _Out:
    """Converts a PISA binary collection (BASE.docs/.freqs/.sizes/.terms and
    optionally .documents and .analyzer) to an index at `path`; the other
    arguments as import_ciff's.
    """
    return _import(2, basename, path, codec, k1, b, stemmer, stopwords, progress)


import_ciff.__doc__ = (import_ciff.__doc__ or "").rstrip() + _ANALYZER_DOC
import_pisa.__doc__ = (import_pisa.__doc__ or "").rstrip() + _ANALYZER_DOC
