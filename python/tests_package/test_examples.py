"""Every script of python/examples runs on the installed package and prints
what it says it does."""
import os
import subprocess
import sys

import pytest

EX = os.path.join(os.environ["TANDEM_SOURCE_DIR"], "python", "examples")


def example(name, *args):
    p = subprocess.run([sys.executable, os.path.join(EX, name), *map(str, args)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


@pytest.fixture(scope="module")
def files(tmp_path_factory, docs):
    d = tmp_path_factory.mktemp("ex")
    (d / "docs.txt").write_text("".join("%s\t%s\n" % (x["docno"], x["text"]) for x in docs))
    (d / "queries.txt").write_text("river boats\nstormy coast\nnothinglikethis\n")
    (d / "topics.tsv").write_text("1\triver boats\n2\tstormy coast\n")
    (d / "qrels.txt").write_text("".join("%s 0 %s 1\n" % (q, x["docno"]) for q, w in
                                         (("1", "river"), ("2", "storm"))
                                         for x in docs if w in x["text"].split()))
    return d


def test_index_search_batch(files):
    idx = files / "docs.idx"
    assert "300 documents" in example("index.py", files / "docs.txt", idx)
    lines = example("search.py", idx, "river boats", 3).splitlines()
    assert len(lines) == 3 and lines[0].startswith("1\td")
    out = example("batch.py", idx, files / "queries.txt").splitlines()
    assert out[0].startswith("river boats\t10 hits\td") and out[2] == "nothinglikethis\t0 hits\t-"


def test_run_and_evaluate(files):
    idx = files / "docs.idx"
    if not idx.exists():
        example("index.py", files / "docs.txt", idx)
    out = example("run_and_evaluate.py", idx, files / "topics.tsv", files / "qrels.txt",
                  files / "run.txt")
    assert "tandem BM25" in out and "ndcg_cut.10" in out
    assert (files / "run.txt").read_text().startswith("1 Q0 d")


def test_learned_sparse(tmp_path):
    out = example("learned_sparse.py", tmp_path / "ls.idx").splitlines()
    # athena: 1.5*6 + 2*7 + 0.5*4 = 25; minerva: 9 + 12 = 21
    assert out[1].split() == ["1", "athena", "25.0", "0"], out
    assert out[2].split()[1] == "minerva"
