"""write_trec_run: results to a TREC run file, line for line as `tandem run`
writes them ("qid Q0 docname rank score tag", the score with six decimals)."""
from __future__ import annotations

import os
import secrets
from typing import (Any, Iterable, Iterator, List, Mapping, Optional, Sequence, TextIO,
                    Tuple, Union, cast)

from ._types import Hits, StrPath
from .engine import BatchResult, Searcher

__all__ = ["write_trec_run", "RunResults"]

#: What write_trec_run writes: {qid: hits}, a list of hits per query (with
#: qids), or a BatchResult (with searcher= and qids).
RunResults = Union[Mapping[Any, Hits], Sequence[Hits], BatchResult]

_TAG = "0123456789abcdefghijklmnopqrstuvwxyz"


def _trec_field(what: str, v: object) -> str:
    """v as a column of a run line: TREC's columns are split at white space
    and its lines at line ends, so neither may be in one, nor any other
    control character (as `tandem run` refuses such query ids)."""
    v = str(v)
    bad = [c for c in v if c <= " " or c == "\x7f"]
    if not v or bad:
        raise ValueError("write_trec_run: %s %r: must be non-empty, without white space or "
                         "control characters (a TREC run cannot carry them)" % (what, v))
    return v


def _create_temp(path: str) -> Tuple[str, int]:
    """A new file PATH.tmp.PID.TAG, TAG 12 random [0-9a-z], created
    exclusively (a link planted there is never followed): the C library's
    temporary names (tempfile.h), so that its sweep of a killed process's
    leftovers knows them; mkstemp's names and mode 0600 differ."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) \
        | getattr(os, "O_CLOEXEC", 0)
    for _ in range(8):
        tag = "".join(secrets.choice(_TAG) for _ in range(12))
        tmp = "%s.tmp.%d.%s" % (path, os.getpid(), tag)
        try:
            return tmp, os.open(tmp, flags, 0o644)
        except FileExistsError:
            continue
    raise FileExistsError("%s: no free temporary name next to it" % path)


def _lines(results: RunResults, qids: Optional[Iterable[Any]], searcher: Optional[Searcher],
           prefix: str, tag: str) -> Iterator[str]:
    if isinstance(results, BatchResult):
        if searcher is None:
            raise TypeError("write_trec_run: a BatchResult needs searcher= to name "
                            "its documents")
        names = searcher.docnames(results.docid)
        qidx = results.qid.tolist()
        scores = results.score.tolist()
        ids = list(qids) if qids is not None else None
        rank, last = 0, None
        for i, q in enumerate(qidx):
            rank = rank + 1 if q == last else 1
            last = q
            qid = ids[q] if ids is not None else str(q + 1)
            yield "%s Q0 %s%s %d %.6f %s\n" % (qid, prefix, names[i], rank, scores[i], tag)
        return
    items: Iterable[Tuple[Any, Hits]]
    if isinstance(results, Mapping):
        items = results.items()
    else:
        results = list(results)
        ids = list(qids) if qids is not None else [str(i + 1) for i in range(len(results))]
        if len(ids) != len(results):
            raise ValueError("write_trec_run: %d qids for %d results"
                             % (len(ids), len(results)))
        items = zip(ids, results)
    for qid, hits in items:
        for rank, (name, score) in enumerate(hits, 1):
            yield "%s Q0 %s%s %d %.6f %s\n" % (qid, prefix, name, rank, score, tag)


def write_trec_run(out: Union[StrPath, TextIO], results: RunResults,
                   qids: Optional[Iterable[Any]] = None, *, tag: str = "tandem",
                   searcher: Optional[Searcher] = None, docname_prefix: str = "") -> None:
    """Writes `results` as a TREC run to `out` (a path, written to a temporary
    file and renamed into place when complete, or an open text file).

    results: {qid: [(docname, score), ...]} as search() gives per query; or a
    list of such lists with `qids` (default "1", "2", ...); or a BatchResult
    from search_batch with searcher= (its docnames) and qids (the id of each
    position of the batch; default "1", "2", ...).

    tag: the run's name (the last column); docname_prefix: put before every
    document name. Every qid and the tag are checked before anything is
    written: TREC's columns cannot hold white space or control characters
    (ValueError)."""
    for what, v in (("tag", tag), ("docname_prefix", docname_prefix)):
        if not isinstance(v, str):
            raise ValueError("write_trec_run: %s %r: must be a str" % (what, v))
        if v or what == "tag":
            _trec_field(what, v)
    # Every qid checked before the first line is written anywhere.
    for q in (results.keys() if isinstance(results, Mapping) else qids or ()):
        _trec_field("qid", q)
    lines = _lines(results, qids, searcher, docname_prefix, tag)
    write = getattr(out, "write", None)   # an open text file (io.TextIOBase or alike)
    if write is not None:
        for line in lines:
            write(line)
        return
    path = os.fsdecode(os.fspath(cast(StrPath, out)))
    tmp, fd = _create_temp(path)
    try:
        with open(fd, "w") as f:
            for line in lines:
                f.write(line)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
