"""write_trec_run: results to a TREC run file, line for line as `tandem run`
writes them ("qid Q0 docname rank score tag", the score with six decimals)."""
import io
import os

from .engine import BatchResult


def _lines(results, qids, searcher, prefix, tag):
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
    if isinstance(results, dict):
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


def write_trec_run(out, results, qids=None, *, tag="tandem", searcher=None,
                   docname_prefix=""):
    """Writes `results` as a TREC run to `out` (a path, written to a temporary
    file and renamed into place when complete, or an open text file).

    results: {qid: [(docname, score), ...]} as search() gives per query; or a
    list of such lists with `qids` (default "1", "2", ...); or a BatchResult
    from search_batch with searcher= (its docnames) and qids (the id of each
    position of the batch; default "1", "2", ...)."""
    for what, v in (("tag", tag), ("docname_prefix", docname_prefix)):
        if not isinstance(v, str) or any(c in v for c in " \t\n") or (what == "tag" and not v):
            raise ValueError("write_trec_run: %s %r: must be %swithout white space"
                             % (what, v, "non-empty, " if what == "tag" else ""))
    lines = _lines(results, qids, searcher, docname_prefix, tag)
    if isinstance(out, io.TextIOBase) or hasattr(out, "write"):
        for line in lines:
            out.write(line)
        return
    path = os.fspath(out)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    try:
        with open(tmp, "w") as f:
            for line in lines:
                f.write(line)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
