"""tandem for PyTerrier: an index, an indexer and a retrieval transformer.

    import pyterrier as pt
    from tandem.pyterrier import TandemIndexer
    index = TandemIndexer("docs.idx").index(({"docno": d, "text": t} for d, t in docs))
    bm25 = index.retriever(k=1000)
    pt.Experiment([bm25], topics, qrels, eval_metrics=["map", "ndcg_cut.10"])

Needs python-terrier (`pip install python-terrier`); importing this module
without it raises ImportError saying so. Nothing here starts Java: tandem
does the indexing and retrieval, PyTerrier the DataFrames and evaluation."""
from __future__ import annotations

import json
import os
import tempfile
import threading
from typing import Any, Dict, Iterable, List, Mapping, Optional, TextIO, Union

try:
    import pandas as pd  # type: ignore[import-untyped,unused-ignore]
    import pyterrier as pt  # type: ignore[import-not-found,import-untyped,unused-ignore]
except ImportError as e:   # python-terrier is optional for the rest of tandem
    raise ImportError("tandem.pyterrier needs PyTerrier: pip install python-terrier "
                      "(%s)" % e) from e

from ._build import build
from ._types import Query
from .engine import Engine, Searcher

__all__ = ["TandemIndex", "TandemIndexer", "TandemRetrieve"]


_engine_lock = threading.Lock()
_engine: Optional[Engine] = None


def _shared_engine() -> Engine:
    """One engine per process (tandem.Engine's advice), opened on first use."""
    global _engine
    with _engine_lock:
        if _engine is None or _engine.closed:
            _engine = Engine()
        return _engine


class TandemIndex:
    """A tandem index file: where it lives (`path`) and how to search it.

    Searchers are opened on first use and shared by the retrievers made here."""

    def __init__(self, path: Union[str, "os.PathLike[str]"],
                 engine: Optional[Engine] = None) -> None:
        self.path: str = os.fspath(path)
        self._engine = engine
        self._searcher: Optional[Searcher] = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "TandemIndex(%r)" % self.path

    def exists(self) -> bool:
        """Whether the index file is there."""
        return os.path.isfile(self.path)

    def searcher(self) -> Searcher:
        """The tandem.Searcher of this index (opened once, then shared)."""
        with self._lock:
            if self._searcher is None or self._searcher.closed:
                engine = self._engine or _shared_engine()
                self._searcher = engine.open(self.path)
            return self._searcher

    @property
    def stats(self) -> Dict[str, Any]:
        """Collection facts (documents, terms, postings, codec, stemmer, ...)."""
        return self.searcher().stats

    def retriever(self, **options: Any) -> "TandemRetrieve":
        """A TandemRetrieve over this index; options as TandemRetrieve's."""
        return TandemRetrieve(self, **options)

    def close(self) -> None:
        """Closes the searcher (a later search opens it again)."""
        with self._lock:
            if self._searcher is not None:
                self._searcher.close()
                self._searcher = None


class TandemIndexer(pt.Indexer):  # type: ignore[misc,unused-ignore]
    """Builds a tandem index at `path` from an iterator of dicts:
    {"docno", "text"} (tokenized, stopped and stemmed by the index), or
    {"docno", "toks"} with toks a dict term -> weight (learned sparse, e.g.
    SPLADE quantized to integers): written as JSON vectors and built into an
    impact index (each weight rounded to an integer impact, 0 dropping the
    term; terms kept as written, WordPieces such as "##ing" whole), which
    TandemRetrieve scores by impacts by default.

    build_options go to tandem.build (stemmer, stopwords, codec, threads,
    memory_mb, k1, b, tmp_dir). overwrite=False refuses an existing path."""

    def __init__(self, path: Union[str, "os.PathLike[str]"], *, overwrite: bool = False,
                 **build_options: Any) -> None:
        self.path = os.fspath(path)
        self.overwrite = overwrite
        self.build_options = build_options

    # (pt.Indexer's is index(iter, **kwargs); PyTerrier calls it positionally
    # and takes no options here that tandem could honour)
    def index(self,  # type: ignore[override,unused-ignore]
              docs: Iterable[Mapping[str, Any]]) -> TandemIndex:
        """Writes the documents out and builds the index; returns it."""
        if os.path.exists(self.path) and not self.overwrite:
            raise FileExistsError("%s exists (TandemIndexer(..., overwrite=True) replaces it)"
                                  % self.path)
        tmp_dir = self.build_options.get("tmp_dir") or os.path.dirname(
            os.path.abspath(self.path))
        fd, tmp = tempfile.mkstemp(prefix=".tandem-docs-", suffix=".txt", dir=tmp_dir)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                kind = _write_docs(docs, f)
            opts = dict(self.build_options)
            opts.setdefault("progress", False)
            fmt = "lines"
            if kind == "toks":   # JSON vectors: an impact index, terms as written
                fmt = "jsonvector"
                opts["stemmer"] = "none"
                opts["stopwords"] = None
            build([tmp], self.path, format=fmt, allow_empty=True, **opts)
        finally:
            os.unlink(tmp)
        return TandemIndex(self.path)


def _clean(s: str) -> str:
    """Tabs and line breaks separate terms anyway; in the lines format they
    would end the name or the document."""
    return s.replace("\t", " ").replace("\r", " ").replace("\n", " ")


def _write_docs(docs: Iterable[Mapping[str, Any]], f: TextIO) -> Optional[str]:
    """Writes `docno<TAB>text` lines, or for toks JSON vector lines
    ({"id", "vector": {term: impact}}); returns "text" or "toks" (every
    document must be of the same kind), None for no document."""
    kind = None
    for n, d in enumerate(docs):
        docno = str(d["docno"])
        if not docno or docno != _clean(docno) or " " in docno:
            raise ValueError("document %d: docno %r must be non-empty, without white space"
                             % (n, docno))
        this = "toks" if "toks" in d else "text"
        if kind is None:
            kind = this
        elif this != kind:
            raise ValueError("document %d (%s): has %s where the first had %s; give every "
                             "document text or every one toks" % (n, docno, this, kind))
        if kind == "text":
            f.write("%s\t%s\n" % (docno, _clean(str(d["text"]))))
            continue
        vector = {}
        for term, w in d["toks"].items():
            term = str(term)
            if not term or "\0" in term or len(term.encode("utf-8")) > 1024:
                raise ValueError("document %s: term %r: a term is 1 to 1024 bytes, no NUL"
                                 % (docno, term))
            impact = int(round(float(w)))
            if impact < 0:
                raise ValueError("document %s: term %r has negative weight %r"
                                 % (docno, term, w))
            vector[term] = vector.get(term, 0) + impact
        f.write(json.dumps({"id": docno, "vector": vector}) + "\n")
    return kind


class TandemRetrieve(pt.Transformer):  # type: ignore[misc,unused-ignore]
    """Retrieval: a DataFrame of (qid, query) in, (qid, docno, score, rank)
    out (rank from 0, best first), with the input's other columns kept.

    A `query_toks` column (dicts term -> weight, learned sparse models) is
    used instead of `query` where present. The options are tandem.Searcher's
    search(): k, algorithm (auto, or, and, and_or, wand, bmw, maxscore),
    scoring (auto: impact on an impact index such as TandemIndexer builds
    from toks, else BM25; bm25; impact), k1, b, device, policy. All queries of a frame go
    to the engine as one batch (search_batch)."""

    def __init__(self, index: Union[TandemIndex, str, "os.PathLike[str]"], *, k: int = 1000,
                 algorithm: str = "auto", scoring: str = "auto", k1: float = 1.2,
                 b: float = 0.75, device: Optional[int] = None,
                 policy: Optional[str] = None) -> None:
        self.index = index if isinstance(index, TandemIndex) else TandemIndex(index)
        self.options: Dict[str, Any] = dict(k=k, algorithm=algorithm, scoring=scoring, k1=k1,
                                            b=b, device=device, policy=policy)

    def __repr__(self) -> str:
        return "TandemRetrieve(%r, %s)" % (self.index.path, ", ".join(
            "%s=%r" % kv for kv in self.options.items()))

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        """Ranks every topic; see the class."""
        if "qid" not in topics.columns:
            raise KeyError("TandemRetrieve: the input has no qid column")
        queries: List[Query]
        if "query_toks" in topics.columns:
            queries = [dict(q) for q in topics["query_toks"]]
        elif "query" in topics.columns:
            queries = [str(q) for q in topics["query"]]
        else:
            raise KeyError("TandemRetrieve: the input has neither query nor query_toks")
        s = self.index.searcher()
        res = s.search_batch(queries, **self.options)
        rows = res.qid
        out = pd.DataFrame({
            "qid": topics["qid"].astype(str).to_numpy()[rows],
            "docno": s.docnames(res.docid),
            "score": res.score.astype("float64"),
        })
        # Rows come query by query, best first: the rank is the position
        # within the query's run of rows.
        out["rank"] = out.groupby(rows, sort=False).cumcount().to_numpy() if len(out) \
            else pd.Series([], dtype="int64")
        keep = [c for c in topics.columns if c not in ("qid", "docno", "score", "rank")]
        if keep:
            extra = topics[keep].reset_index(drop=True).iloc[rows].reset_index(drop=True)
            out = pd.concat([out, extra], axis=1)
        return out
