"""Searching through Python gives exactly what `tandem run` gives (bytes of
the TREC run), for text, term lists and weighted dicts, one query at a time
and as a batch."""
import json

import numpy as np
import pytest

import tandem
from conftest import QUERIES, run_cli


def test_devices_and_engine(engine):
    devs = tandem.devices()
    assert devs and all(isinstance(d, tandem.Device) for d in devs)
    assert all(d.type in ("cpu", "gpu", "accelerator", "other") for d in devs)
    assert [d.index for d in devs] == list(range(len(devs)))
    mine = engine.devices
    assert 1 <= len(mine) <= len(devs)
    assert {d.name for d in mine} <= {d.name for d in devs}
    assert isinstance(engine.warnings, str)
    assert tandem.library_version() == "0.1.0"


def test_stats_and_normalize(searcher):
    st = searcher.stats
    assert st["documents"] == 400 and st["stemmer"] == "english" and st["codec"] == "bp128"
    assert searcher.normalize("Sailing") == "sail"
    assert searcher.normalize("!!") is None
    assert searcher.docname(0) == "doc0" and searcher.docnames([399, 1]) == ["doc399", "doc1"]


def test_wait_ready(searcher):
    searcher.wait_ready()   # the uploads done (twice: done is done)
    searcher.wait_ready()
    assert searcher.search("deep water anchor storm", k=5)


def test_search_shape(searcher):
    hits = searcher.search("deep water anchor storm", k=5)
    assert isinstance(hits, list) and len(hits) == 5
    assert all(isinstance(n, str) and isinstance(s, float) for n, s in hits)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    # the two identical documents tie; the smaller docid first
    assert hits[0][0] == "doc7" and hits[1][0] == "doc8" and hits[0][1] == hits[1][1]
    assert searcher.search("nothinglikethis") == []
    assert searcher.search("") == []
    assert len(searcher.search("water", k=10000)) == searcher.stats["documents"] \
        or len(searcher.search("water", k=10000)) <= 400


def test_query_forms_agree(searcher):
    text = searcher.search("stormy coastal waters", k=20)
    terms = [searcher.normalize(w) for w in "stormy coastal waters".split()]
    assert searcher.search(terms, k=20) == text
    assert searcher.search(tuple(terms), k=20) == text
    assert searcher.search({t: 1.0 for t in terms}, k=20) == text
    # a term given twice counts twice: weights summed
    assert searcher.search([terms[0], terms[0], terms[1]], k=20) == \
        searcher.search({terms[0]: 2, terms[1]: 1}, k=20)
    # unknown terms are ignored
    assert searcher.search(terms + ["zzzunknown"], k=20) == text


@pytest.mark.parametrize("algorithm", ["auto", "or", "and", "and_or", "wand", "bmw", "maxscore"])
def test_algorithms_exact(searcher, algorithm):
    ref = searcher.search("river boats sailing", k=50, algorithm="or")
    got = searcher.search("river boats sailing", k=50, algorithm=algorithm)
    if algorithm == "and":
        names = {n for n, _ in ref}
        assert {n for n, _ in got} <= names
    else:
        assert got == ref


@pytest.fixture(params=["tdm_search_batch", "one call a query"])
def batch_path(request, monkeypatch):
    """search_batch through the C batch call, and through the fallback for a
    library without it."""
    from tandem import _lib
    if request.param == "tdm_search_batch" and not _lib.HAVE_BATCH:
        pytest.skip("skipped: this libtandem has no tdm_search_batch")
    if request.param != "tdm_search_batch":
        monkeypatch.setattr(_lib, "HAVE_BATCH", False)
    return request.param


def test_batch_equals_single(searcher, batch_path):
    qs = [q for _, q in QUERIES] + [["sail", "boat"], {"storm": 2.5, "deep": 0.5}, ""]
    r = searcher.search_batch(qs, k=7)
    assert isinstance(r, tandem.BatchResult)
    qid, docid, score = r
    assert qid.dtype == np.int64 and docid.dtype == np.uint32 and score.dtype == np.float32
    assert len(qid) == len(docid) == len(score)
    names = r.docnames(searcher)
    for i, q in enumerate(qs):
        rows = np.nonzero(qid == i)[0]
        single = searcher.search(q, k=7)
        assert [(names[j], float(score[j])) for j in rows] == single
    empty = searcher.search_batch([], k=3)
    assert len(empty.qid) == 0


def _queries_file(path, queries):
    with open(path, "w") as f:
        for qid, text in queries:
            f.write("%s\t%s\n" % (qid, text))
    return path


@pytest.mark.parametrize("opts", [
    dict(k=10), dict(k=1000), dict(k=25, algorithm="maxscore", k1=0.9, b=0.4),
    dict(k=5, algorithm="bmw", b=0.0)])
def test_same_run_as_cli(searcher, index, cli, tmp_path, opts):
    qfile = _queries_file(str(tmp_path / "q.tsv"), QUERIES)
    args = ["-k", str(opts["k"])]
    for name in ("algorithm", "k1", "b"):
        if name in opts:
            args += ["--" + name, str(opts[name])]
    run_cli(cli, "run", index, "--queries", qfile, "-o", str(tmp_path / "cli.run"), *args)
    want = open(tmp_path / "cli.run").read()
    assert want  # the queries do match documents
    one = {qid: searcher.search(text, **opts) for qid, text in QUERIES}
    tandem.write_trec_run(str(tmp_path / "py.run"), one)
    assert open(tmp_path / "py.run").read() == want
    batch = searcher.search_batch([t for _, t in QUERIES], **opts)
    tandem.write_trec_run(str(tmp_path / "batch.run"), batch, [q for q, _ in QUERIES],
                          searcher=searcher)
    assert open(tmp_path / "batch.run").read() == want


def test_weighted_same_as_cli(searcher, index, cli, tmp_path):
    weighted = [("w1", {"storm": 3.0, "deep": 0.25}), ("w2", {"sail": 1.5, "boat": 1.5,
                                                              "river": 0.1}),
                ("w3", {"harbor": 2.0, "harbour": 2.0})]
    with open(tmp_path / "q.jsonl", "w") as f:
        for qid, terms in weighted:
            f.write(json.dumps({"id": qid, "terms": terms}) + "\n")
    for scoring in ("bm25", "impact"):
        run_cli(cli, "run", index, "--queries", str(tmp_path / "q.jsonl"), "-o",
                str(tmp_path / "cli.run"), "-k", "20", "--scoring", scoring, "--tag", "x")
        want = open(tmp_path / "cli.run").read()
        got = {qid: searcher.search(t, k=20, scoring=scoring) for qid, t in weighted}
        tandem.write_trec_run(str(tmp_path / "py.run"), got, tag="x")
        assert open(tmp_path / "py.run").read() == want, scoring


def test_write_trec_run_forms(searcher, tmp_path):
    import io
    hits = searcher.search("river", k=3)
    buf = io.StringIO()
    tandem.write_trec_run(buf, [hits], qids=["7"], tag="t", docname_prefix="P-")
    lines = buf.getvalue().splitlines()
    assert len(lines) == 3 and lines[0].startswith("7 Q0 P-") and lines[0].endswith(" 1 %.6f t"
                                                                                   % hits[0][1])
    with pytest.raises(ValueError):
        tandem.write_trec_run(buf, [hits], tag="two words")
    with pytest.raises(ValueError):
        tandem.write_trec_run(buf, [hits], qids=["1", "2"])
    with pytest.raises(TypeError):
        tandem.write_trec_run(buf, searcher.search_batch(["river"]))
    # An id a TREC run cannot carry (white space, a line end, a control
    # character) is refused before anything is written.
    for bad in ("a b", "a\nb", "a\x0bb", "a\x0cb", "a\rb", ""):
        buf = io.StringIO()
        with pytest.raises(ValueError):
            tandem.write_trec_run(buf, [hits, hits], qids=["ok", bad])
        with pytest.raises(ValueError):
            tandem.write_trec_run(buf, {"ok": hits, bad: hits})
        assert buf.getvalue() == ""


def test_write_trec_run_never_follows_a_link(searcher, tmp_path):
    """The run went to a predictable PATH.tmp.PID opened with open('w'): a link
    planted there made it overwrite the link's target."""
    import os
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "r.run"
    os.symlink(victim, "%s.tmp.%d" % (out, os.getpid()))
    tandem.write_trec_run(str(out), {"1": searcher.search("river", k=3)})
    assert victim.read_text() == "precious\n"
    assert out.read_text().startswith("1 Q0 ")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["r.run", "r.run.tmp.%d" % os.getpid(), "victim"]


@pytest.mark.parametrize("policy", ["hybrid", "best", "cpu-only", "direct"])
def test_policies_same_answers(searcher, index, policy):
    from tandem import _lib
    if not _lib.HAVE_POLICY:
        pytest.skip("skipped: this libtandem has no scheduler policies")
    if policy == "cpu-only" and not any(d.type == "cpu" for d in searcher.engine.devices):
        pytest.skip("skipped: no CPU device in this engine")
    want = [searcher.search(q, k=10) for _, q in QUERIES]
    assert [searcher.search(q, k=10, policy=policy) for _, q in QUERIES] == want
    with tandem.Engine(policy=policy) as e, e.open(index) as s:
        assert [s.search(q, k=10) for _, q in QUERIES] == want
        b = s.search_batch([q for _, q in QUERIES], k=10, policy=policy)
        names = b.docnames(s)
        assert [[(names[j], float(b.score[j])) for j in range(len(b.qid)) if b.qid[j] == i]
                for i in range(len(QUERIES))] == want
