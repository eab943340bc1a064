"""tandem.pyterrier with python-terrier from PyPI, without Java: indexing from
dicts (text and learned-sparse toks), retrieval equal to Searcher.search with
every option passed through, query_toks, and a pipeline evaluated by
pt.Experiment agreeing with `tandem eval`."""
import math
import subprocess
import sys

import pandas as pd
import pyterrier as pt
import pytest

import tandem
from conftest import run_cli
from tandem.pyterrier import TandemIndex, TandemIndexer, TandemRetrieve

TOPICS = pd.DataFrame({"qid": ["1", "2", "3", "4"],
                       "query": ["river boats", "stormy coast", "deep water anchor",
                                 "nothinglikethis"]})


def test_import_error_without_pyterrier():
    code = ("import sys; sys.modules['pyterrier'] = None\n"
            "try:\n import tandem.pyterrier\nexcept ImportError as e: print(e)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "pip install python-terrier" in p.stdout, p.stdout + p.stderr


@pytest.fixture(scope="module")
def ptindex(tmp_path_factory, docs):
    path = tmp_path_factory.mktemp("pt") / "pt.idx"
    ix = TandemIndexer(path, threads=1).index(iter(docs))
    assert isinstance(ix, TandemIndex) and ix.path == str(path) and ix.exists()
    assert repr(ix) == "TandemIndex(%r)" % str(path)
    return ix


def test_indexer_matches_build(ptindex, index, engine):
    assert ptindex.stats["documents"] == 300
    with open(ptindex.path, "rb") as a, open(index, "rb") as b:
        assert a.read() == b.read()   # the same index as tandem.build's
    with pytest.raises(FileExistsError):
        TandemIndexer(ptindex.path).index([{"docno": "x", "text": "y"}])


@pytest.mark.parametrize("opts", [{}, {"k": 5, "algorithm": "wand"},
                                  {"k": 7, "algorithm": "maxscore", "k1": 0.9, "b": 0.4},
                                  {"k": 3, "algorithm": "and", "device": 0}])
def test_retrieve_equals_search(ptindex, opts):
    res = ptindex.retriever(**opts).transform(TOPICS)
    assert list(res.columns[:4]) == ["qid", "docno", "score", "rank"]
    assert "query" in res.columns
    s = ptindex.searcher()
    for qid, q in zip(TOPICS["qid"], TOPICS["query"]):
        want = s.search(q, **opts) if opts else s.search(q, k=1000)
        got = res[res.qid == qid]
        assert list(zip(got.docno, got.score.astype("float32"))) == \
            [(d, pytest.approx(sc, rel=0, abs=0)) for d, sc in want]
        assert list(got["rank"]) == list(range(len(want)))


def test_bad_option_raises(ptindex):
    with pytest.raises(tandem.InvalidArgumentError):
        ptindex.retriever(algorithm="nosuch").transform(TOPICS)


def test_learned_sparse_toks(tmp_path):
    docs = [{"docno": "a", "toks": {"river": 3, "boat": 1}},
            {"docno": "b", "toks": {"boat": 5}},
            {"docno": "c", "toks": {"sand": 2, "river": 1.4}}]
    ix = TandemIndexer(tmp_path / "imp.idx").index(docs)
    topics = pd.DataFrame({"qid": ["q"], "query_toks": [{"river": 2.0, "boat": 1.0}]})
    # an impact index: scored by impacts by default, as scoring="impact" asks
    for opts in ({}, {"scoring": "impact"}):
        res = TandemRetrieve(ix, k=10, **opts).transform(topics)
        # impact score: sum of query weight x stored impact (1.4 stored as 1)
        assert list(res.docno) == ["a", "b", "c"]
        assert [math.isclose(x, y, rel_tol=1e-6) for x, y in zip(res.score, [7.0, 5.0, 2.0])] \
            == [True] * 3
    with pytest.raises(tandem.InvalidArgumentError):   # BM25 on impacts is refused
        TandemRetrieve(ix, scoring="bm25").transform(topics)
    # terms as written: WordPieces and case kept
    wp = TandemIndexer(tmp_path / "wp.idx").index([{"docno": "a", "toks": {"##ing": 2, "Cat": 1}},
                                                   {"docno": "b", "toks": {"cat": 4}}])
    res = TandemRetrieve(wp).transform(pd.DataFrame({"qid": ["q"],
                                                     "query_toks": [{"##ing": 3, "Cat": 1}]}))
    assert list(res.docno) == ["a"] and math.isclose(res.score[0], 7.0)
    with pytest.raises(ValueError, match="negative weight"):
        TandemIndexer(tmp_path / "neg.idx").index([{"docno": "a", "toks": {"x": -2}}])
    with pytest.raises(ValueError, match="every document text or every one toks"):
        TandemIndexer(tmp_path / "mix.idx").index([{"docno": "a", "toks": {"x": 1}},
                                                   {"docno": "b", "text": "x"}])


def test_pipeline_experiment_agrees_with_tandem_eval(ptindex, docs, cli, tmp_path):
    # Judgments made up from the documents: relevant where the query's first
    # word occurs (level 2 where it occurs twice), so that every measure moves.
    rows = []
    for qid, q in zip(TOPICS["qid"], TOPICS["query"]):
        w = q.split()[0]
        for d in docs:
            n = d["text"].split().count(w)
            rows.append((qid, d["docno"], min(n, 2)))
    qrels = pd.DataFrame(rows, columns=["qid", "docno", "label"])
    pipe = ptindex.retriever(k=100) % 50   # retrieve, then cut to 50 (PyTerrier's %)
    measures = ["map", "P.10", "ndcg_cut.10", "recall.20", "recip_rank"]
    exp = pt.Experiment([pipe], TOPICS, qrels, eval_metrics=measures, names=["tandem"])
    run = pipe.transform(TOPICS)
    assert run.groupby("qid").size().max() <= 50
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    pt.io.write_results(run, str(run_path), format="trec")
    with open(qrels_path, "w") as f:
        f.writelines("%s 0 %s %d.000000\n" % r for r in rows)   # decimal relevance
    args = [a for m in measures for a in ("-m", m)]
    out = run_cli(cli, "eval", *args, "-c", str(qrels_path), str(run_path))
    ours = {line.split("\t")[0]: line.split("\t")[2] for line in out.splitlines()}
    for m in measures:
        name = m.replace(".", "_")
        assert ours[name] == "%.4f" % exp[m].iloc[0], (m, ours, exp)
