"""Learned sparse end to end (issue 30): a JSON vector collection built with
tandem.build(format="jsonvector") is an impact index; query_toks-style dicts
score by impacts under the default scoring ("auto"), as scoring="impact";
BM25 is refused; free text is split on white space, terms as written."""
import json
import math

import pytest

import tandem

DOCS = [("athena", {"athena": 90, "goddess": 60, "wisdom": 70, "##ing": 5, "Greek": 7}),
        ("poseidon", {"poseidon": 90, "god": 60, "sea": 70, "greek": 40}),
        ("minerva", {"minerva": 90, "goddess": 60, "wisdom": 60, "##ing": 9})]


@pytest.fixture(scope="module")
def sparse(engine, tmp_path_factory):
    d = tmp_path_factory.mktemp("sparse")
    with open(d / "c.jsonl", "w") as f:
        for name, vec in DOCS:
            f.write(json.dumps({"id": name, "contents": "", "vector": vec}) + "\n")
    path = tandem.build([str(d / "c.jsonl")], str(d / "c.idx"), format="jsonvector",
                        progress=False)
    with engine.open(path) as s:
        yield s


def scores(hits):
    return [(n, round(x, 3)) for n, x in hits]


def test_dict_query_scores_impacts_by_default(sparse):
    q = {"goddess": 2.0, "##ing": 3, "wisdom": 0.5}
    want = [("minerva", 2 * 60 + 3 * 9 + 0.5 * 60), ("athena", 2 * 60 + 3 * 5 + 0.5 * 70)]
    assert scores(sparse.search(q)) == want
    assert scores(sparse.search(q, scoring="impact")) == want
    for algorithm in ("or", "wand", "bmw", "maxscore"):
        assert scores(sparse.search(q, algorithm=algorithm)) == want, algorithm
    batch = sparse.search_batch([q, {"sea": 1}])
    assert list(batch.qid) == [0, 0, 1]
    assert [math.isclose(s, w) for s, w in zip(batch.score, [177.0, 170.0, 70.0])] == [True] * 3


def test_bm25_refused_on_impacts(sparse):
    with pytest.raises(tandem.InvalidArgumentError, match="impact index"):
        sparse.search({"goddess": 1}, scoring="bm25")
    with pytest.raises(tandem.InvalidArgumentError, match="auto, bm25 or impact"):
        sparse.search({"goddess": 1}, scoring="nosuch")


def test_text_terms_as_written(sparse):
    # a run of one word repeated weighs its length; case is kept
    assert scores(sparse.search("##ing ##ing Greek")) == [("minerva", 18.0), ("athena", 17.0)]
    assert sparse.search("GODDESS") == []
