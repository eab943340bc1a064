"""A collection split into shards (`tandem shard`) opened as one index in one
process (Engine.open_shards: tdm_index_open_split, tdm_index_open_shards)
answers exactly as the unsharded index: every algorithm's hits and scores,
batches, stats and docnames, by PREFIX or by a list of files in any order;
shards of two splits, a missing shard and a plain index raise FormatError."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tandem
from conftest import QUERIES, run_cli

ALGORITHMS = ("auto", "or", "and", "and_or", "wand", "bmw", "maxscore")


@pytest.fixture(scope="module")
def split(cli, index, workdir):
    """The index as 3 shards (PREFIX) and as 2 (another split)."""
    prefix, other = str(workdir / "shard"), str(workdir / "other")
    run_cli(cli, "shard", index, "--shards", "3", "-o", prefix)
    run_cli(cli, "shard", index, "--shards", "2", "-o", other)
    return prefix, other


@pytest.fixture(scope="module")
def sharded(engine, split):
    with engine.open_shards(split[0]) as s:
        yield s


def test_same_hits_every_algorithm(searcher, sharded):
    for algorithm in ALGORITHMS:
        for k in (1, 10, 1000):
            for _, text in QUERIES:
                want = searcher.search(text, k=k, algorithm=algorithm)
                got = sharded.search(text, k=k, algorithm=algorithm)
                assert got == want, (algorithm, k, text)


def test_same_batches(searcher, sharded):
    texts = [t for _, t in QUERIES] + [{"river": 2.0, "boat": 1.0}, ["sail", "storm"]]
    for algorithm in ("and_or", "maxscore", "bmw"):
        want = searcher.search_batch(texts, k=20, algorithm=algorithm)
        got = sharded.search_batch(texts, k=20, algorithm=algorithm)
        for a, b in zip(want, got):
            assert np.array_equal(a, b), algorithm
        assert got.docnames(sharded) == want.docnames(searcher)


def test_index_facts(searcher, sharded, split):
    st, whole = sharded.stats, searcher.stats
    for f in ("documents", "terms", "postings", "total_doclen", "avg_doclen", "stemmer"):
        assert st[f] == whole[f], f
    assert sharded.normalize("Sailing") == "sail"
    assert sharded.docnames(range(400)) == searcher.docnames(range(400))
    assert sharded.path == split[0]


def test_files_in_any_order(engine, searcher, split):
    files = ["%s.%d" % (split[0], i) for i in (2, 0, 1)]
    with engine.open_shards(files) as s:
        assert s.search("stormy coastal waters", k=50) == \
            searcher.search("stormy coastal waters", k=50)


def test_bad_sets(engine, split, index, workdir):
    prefix, other = split
    with pytest.raises(tandem.FormatError, match="two splits"):
        engine.open_shards([prefix + ".0", other + ".1", prefix + ".2"])
    with pytest.raises(tandem.FormatError):
        engine.open_shards([prefix + ".0", prefix + ".2"])
    shutil.copy(index, str(workdir / "plain.0"))
    with pytest.raises(tandem.FormatError, match="not a shard"):
        engine.open_shards(str(workdir / "plain"))
    with pytest.raises(tandem.TandemError, match="nothing.0"):
        engine.open_shards(str(workdir / "nothing"))


def test_example(split, workdir):
    """python/examples/shards.py: in this process, and through tandem-mpi
    with 2 ranks where it was built (TANDEM_MPI, set by ctest)."""
    ex = os.path.join(os.path.dirname(__file__), "..", "examples", "shards.py")
    q = workdir / "shard_queries.txt"
    q.write_text("".join("%s:%s\n" % qt for qt in QUERIES))
    args = [sys.executable, ex, split[0], str(q)]
    mpi = os.environ.get("TANDEM_MPI")
    if mpi and os.access(mpi, os.X_OK) and shutil.which("mpirun"):
        args.append("2")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    p = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "400 documents" in p.stdout
    if len(args) == 5:
        assert "the same documents as in one process" in p.stdout
